"""Machines: what the allocator knows about an instruction set (:class:`ISA`: register
classes in allocation order, which memory operand forms exist, how a rotate is lowered,
which immediates encode) and the x86 machines the nasm targets use (:func:`isa_for`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import GenError
from ..isa import x86
from .abi import ABIS, ABI
from .ir import COUNTER, POINTERS, Addr


@dataclass
class ISA:
    """What the allocator needs to know about a machine."""

    name: str
    regs: dict              # class -> registers in allocation order
    data_class: str         # class of the 64-bit words
    ptr_class: str          # class of pointers and the count
    slot_bytes: int         # stack slot size (16 for XMM: aligned m128 operands)
    scratch: dict           # class -> scratch registers the fixed strategies reserve when spilling
    mem_ops: dict           # (kind, class) -> set of memory kinds allowed as src: 'stack', 'ptr'
    rotate: str = "native"  # native rol/ror, or 'shift': tmp = x; x <<= n; tmp >>= 64-n; x |= tmp
    imm_ok: object = None   # fn(kind, cls, value) -> bool: immediate operand encodable
    arg_regs: dict = field(default_factory=dict)   # pointer value -> register at entry (else stack)
    lanes: int = 1          # blocks per pass (word-sliced vectors: lane b holds block b's word)
    layout: str = "scalar"  # 'packed': every data value is a whole 128-bit XMM (gen/asm/lower_packed.py)
    abi: ABI | None = None  # calling convention (argument registers, callee-saved registers)

    def cls(self, v: str) -> str:
        return self.ptr_class if v in POINTERS or v == COUNTER else self.data_class

    def mem_ok(self, kind: str, cls: str, a) -> bool:
        if not isinstance(a, Addr):
            return True
        return ("stack" if a.base is None else "ptr") in self.mem_ops.get((kind, cls), ())


GPR_MEM = {(k, "gpr"): {"stack", "ptr"} for k in ("mov", "add", "sub", "xor")}
PACKED_MEM = {("ldu", "xmm"): {"ptr"}, **{(k, "xmm"): {"stack"} for k in ("lolo", "hihi", "hilo", "lohi", "swap")}}
# vector word classes of nasm-x64: (class, registers, slot bytes, kinds with a stack-slot source,
# rotate lowering, blocks per pass)
X64_VECTORS = {"sse2": ("xmm", 16, 16, ("add", "sub", "xor", "or"), "shift", 1),
               "avx2": ("ymm", 16, 32, ("add", "sub", "xor", "or", *x86.LANE_MOVES["ymm"]), "shift", 4),
               "avx512": ("zmm", 32, 64, ("add", "sub", "xor", *x86.LANE_MOVES["zmm"]), "native", 8)}
# machine -> where the words may live (--isa); machines are named by architecture, the nasm
# targets' descriptors and printer map themselves onto them (nasm-x64 -> x86-64, nasm-x86 -> x86)
ISAS = {"x86-64": ("gpr", *X64_VECTORS), "x86": ("sse2",)}
LAYOUTS = ("scalar", "packed")
WHY_VECTORS = {"sse2": " (Win64 XMM6-15 are callee-saved)"}


def _imm32(kind, cls, v):
    return kind == "mov" or v < (1 << 31) or v >= (1 << 64) - (1 << 31)


def _gpr_imm32(kind, cls, v):
    return cls == "gpr" and _imm32(kind, cls, v)


def isa_for(machine: str, abi: str, rotate: str, words: str = "gpr", layout: str = "scalar") -> ISA:
    """The machine model of a variant: machine (x86-64, x86), ABI name, rotate lowering, --isa,
    --layout."""
    isa = _isa_for(machine, ABIS[abi], words)
    if layout == "packed":
        isa.layout = "packed"
        isa.mem_ops = {**isa.mem_ops, **PACKED_MEM}
    return isa


def _isa_for(machine: str, abi: ABI, words: str = "gpr") -> ISA:
    args = abi.arg_regs(POINTERS)
    if machine == "x86-64" and words in X64_VECTORS:
        # sse2: the nasm-x86 instruction stream in 64-bit mode (words in XMM low lanes);
        # avx2/avx512 lanes: lane b of the vector holds word i of a block (whole-vector loads, transposes)
        cls, n, slot, stack_kinds, rot, lanes = X64_VECTORS[words]
        if abi.callee_saved_vector:     # vector registers the frame would have to save (it saves none)
            raise GenError(f"--isa {words} is available with --abi sysv only{WHY_VECTORS.get(words, '')}")
        mem = {(k, cls): {"stack"} for k in stack_kinds}
        mem.update({("mov", cls): {"stack", "ptr"}, **GPR_MEM})
        return ISA("x86-64", {cls: [f"{cls}{i}" for i in range(n)], "gpr": list(abi.volatile)}, cls, "gpr",
                   slot, {cls: 1, "gpr": 1}, mem, rot, _gpr_imm32, args, lanes=lanes, abi=abi)
    if machine == "x86-64":
        return ISA("x86-64", {"gpr": list(abi.gprs)}, "gpr", "gpr", 8, {"gpr": 2}, dict(GPR_MEM),
                   "native", _imm32, args, abi=abi)
    mem = {("mov", "xmm"): {"stack", "ptr"}, ("mov", "gpr32"): {"stack"},
           ("add", "gpr32"): {"stack"}, ("sub", "gpr32"): {"stack"}}
    for k in ("add", "sub", "xor", "or"):
        mem[(k, "xmm")] = {"stack"}
    return ISA("x86", {"xmm": [f"xmm{i}" for i in range(8)], "gpr32": list(abi.gprs)},
               "xmm", "gpr32", 16, {"xmm": 1, "gpr32": 1}, mem, "shift",
               lambda kind, cls, v: cls == "gpr32", args, abi=abi)
