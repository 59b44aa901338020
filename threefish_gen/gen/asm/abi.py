"""Calling conventions as named data (the model: PeachPy's ``x86_64/abi.py``): where the
arguments arrive, which registers a function must preserve, the red zone, the shadow space
the caller reserves and the stack alignment at a call.  The allocator reads the argument
registers (``arg_regs``), the printer's frame the callee-saved registers it pushes and the
stack argument addresses, and the allocation checker the registers a frame must save."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ABI:
    name: str
    word: int                      # bytes per general-purpose register / stack argument
    int_args: tuple                # integer/pointer argument registers, in order (rest: stack)
    callee_saved: tuple            # general-purpose registers a function must preserve (pushed)
    callee_saved_vector: tuple = ()  # vector registers a function must preserve (never pushed here)
    red_zone: int = 0              # bytes below the stack pointer a leaf function may use
    shadow_space: int = 0          # bytes the caller reserves above the return address
    stack_align: int = 16          # stack pointer alignment at a call instruction
    object_format: str = ""        # nasm -f

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


SYSV = ABI("sysv", 8, ("rdi", "rsi", "rdx", "rcx", "r8", "r9"),
           ("rbx", "rbp", "r12", "r13", "r14", "r15"), red_zone=128, object_format="elf64")
WIN64 = ABI("win64", 8, ("rcx", "rdx", "r8", "r9"),
            ("rbx", "rbp", "rdi", "rsi", "r12", "r13", "r14", "r15"),
            tuple(f"xmm{i}" for i in range(6, 16)), shadow_space=32, object_format="win64")
CDECL = ABI("cdecl", 4, (), ("ebx", "esi", "edi", "ebp"), stack_align=4, object_format="elf32")
ABIS = {a.name: a for a in (SYSV, WIN64, CDECL)}
