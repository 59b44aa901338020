"""Calling conventions as named data (the model: PeachPy's ``x86_64/abi.py``): where the
arguments arrive, which registers a function must preserve and which a call may clobber, the
red zone, the shadow space the caller reserves, the stack alignment at a call, how a frame is
addressed and unwound, and the stack use of the glue the nasm printer writes around the
allocated functions (the *_blocks dispatch, the single-block wrapper).  The allocator reads the
argument registers (``arg_regs``), the printer's frame the callee-saved registers it pushes and
the stack argument addresses and builds every prologue, epilogue, argument move and unwind
directive from this table, and the allocation checker the registers a frame must save.  No
template compares an ABI's name (tests/test_templates.py); the descriptors (which ABI a target
or a primitive takes) and verify (which harness builds run a variant) still select by name."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ABI:
    name: str
    title: str                     # the convention's name in the notes of a rendered file
    word: int                      # bytes per general-purpose register / stack argument
    int_args: tuple                # integer/pointer argument registers, in order (rest: stack)
    callee_saved: tuple            # general-purpose registers a function must preserve (pushed)
    callee_saved_vector: tuple = ()  # vector registers a function must preserve (never pushed here)
    volatile: tuple = ()           # general-purpose registers a call may clobber (caller-saved)
    # the general-purpose registers the allocator may use, in its order: caller-saved first (a
    # function that needs no more pushes nothing), then callee-saved (the frame pointer left out)
    gprs: tuple = ()
    red_zone: int = 0              # bytes below the stack pointer a leaf function may use
    shadow_space: int = 0          # bytes the caller reserves above the return address
    stack_align: int = 16          # stack pointer alignment at a call instruction
    stack_pointer: str = "rsp"
    # the register a frame is addressed from ("": the stack pointer).  cdecl's stack arrives
    # 4-aligned: the prologue saves the caller's stack pointer there and realigns the stack
    frame_pointer: str = ""
    unwind: bool = False           # table-based unwinding (Win64 .pdata/.xdata): every prolog described
    # the *_blocks dispatch of a split variant: the callee-saved registers it keeps its arguments
    # in (one each, key, tweaks, in, out, n) across the call of the group function, and its stack
    # allocation (the shadow space and the 5th argument of that call, the stack aligned at it)
    dispatch_pushes: tuple = ()
    dispatch_frame: int = 0
    # the single-block wrapper's stack allocation where n = 1 goes on the stack above a shadow
    # space (Win64: 32 + the 5th argument, rsp 16-aligned at the call; 56 where 40 would do)
    wrapper_frame: int = 0
    object_format: str = ""        # nasm -f
    # the GCC/Clang function attribute that gives a C declaration this convention where the host's
    # default is another one (a Win64 function called from Linux C: the ms_abi test builds)
    c_attribute: str = ""

    @property
    def elf(self) -> bool:
        """ELF objects: typed function symbols, CET markers and notes (Win64 has no IBT)."""
        return self.object_format.startswith("elf")

    def arg_regs(self, names) -> dict:
        """Argument name -> register for the leading arguments that arrive in registers."""
        return dict(zip(names, self.int_args))

    def stack_arg(self, index: int, frame_bytes: int) -> int:
        """Offset from the stack pointer after the prologue (``frame_bytes``: pushes and
        frame below the return address) of stack argument ``index`` (0 = first argument)."""
        return frame_bytes + self.word + self.shadow_space + self.word * (index - len(self.int_args))

    def pushes(self, regs) -> list:
        """The callee-saved registers among ``regs``, in push order."""
        return [r for r in self.callee_saved if r in regs]

    def must_save(self) -> tuple:
        return self.callee_saved + self.callee_saved_vector


SYSV = ABI("sysv", "System V", 8, ("rdi", "rsi", "rdx", "rcx", "r8", "r9"),
           ("rbx", "rbp", "r12", "r13", "r14", "r15"),
           volatile=("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"),
           gprs=("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "rbx", "rbp", "r12", "r13", "r14", "r15"),
           red_zone=128,
           dispatch_pushes=("rbx", "rbp", "r12", "r13", "r14"), object_format="elf64")
WIN64 = ABI("win64", "Win64", 8, ("rcx", "rdx", "r8", "r9"),
            ("rbx", "rbp", "rdi", "rsi", "r12", "r13", "r14", "r15"),
            tuple(f"xmm{i}" for i in range(6, 16)),
            volatile=("rax", "rcx", "rdx", "r8", "r9", "r10", "r11"),
            gprs=("rax", "rcx", "rdx", "r8", "r9", "r10", "r11", "rsi", "rdi", "rbx", "rbp", "r12", "r13", "r14", "r15"),
            shadow_space=32, unwind=True,
            dispatch_pushes=("rbx", "rsi", "rdi", "r12", "r13"), dispatch_frame=48, wrapper_frame=56,
            object_format="win64", c_attribute="ms_abi")
CDECL = ABI("cdecl", "32-bit cdecl", 4, (), ("ebx", "esi", "edi", "ebp"), volatile=("eax", "ecx", "edx"),
            gprs=("eax", "ecx", "edx", "ebx", "esi", "edi"), stack_align=4, stack_pointer="esp", frame_pointer="ebp",
            object_format="elf32")
ABIS = {a.name: a for a in (SYSV, WIN64, CDECL)}
