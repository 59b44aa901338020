"""Lowering: the description's program (``gen/threefish.py``) to *machine ops on values*
(:class:`~gen.asm.ir.MOp`): the same two-address operations, memory operands resolved to
(pointer value, byte offset) or a stack array, the function's own values (the argument
pointers ``key``, ``tweak``, ``in``, ``out`` and the block count ``n``) and the block loop
(``guard``/``top``/``bottom``)."""
from __future__ import annotations

from ..dsl import Idx, Loop, Mem, Op
from ..errors import GenError
from ..threefish import Program
from .ir import Addr, Imm, MOp
from .machine import ISA

SCHEDULES = ("description", "interleave")


class Lowering:
    """Description ops -> machine ops on values (``emit``), appended to ``out``; shared by
    :func:`lower` and the packed layout's lowering (``gen/asm/lower_packed.py``)."""

    def __init__(self, isa: ISA):
        self.isa = isa
        self.out: list[MOp] = []
        self.tmp_count = 0

    @staticmethod
    def operand(a):
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            if a.index.scale:
                raise GenError("the nasm targets need --unroll full (no affine indices)")
            i = a.index.base
            base = a.array if a.array in ("key", "tweak", "in", "out") else None
            return Addr(base, a.array, i, 8 * i)
        if isinstance(a, Idx):
            if a.scale:
                raise GenError("the nasm targets need --unroll full (no affine immediates)")
            return Imm(a.base)
        raise AssertionError(a)

    def fresh(self) -> str:
        self.tmp_count += 1
        return f"r{self.tmp_count}"

    def emit(self, op: Op) -> None:
        isa, out, operand = self.isa, self.out, self.operand
        text = op.text()
        if op.kind == "note":
            out.append(MOp("note", text=str(op.a)))
            return
        if op.kind == "store":
            out.append(MOp("store", src=op.dst, addr=operand(op.a), text=text))
            return
        if op.kind in ("rotl", "rotr"):
            n = op.a if op.kind == "rotl" else 64 - op.a
            if isa.rotate == "native":
                out.append(MOp("rol", op.dst, n, text=text))
            else:
                t = self.fresh()
                out.extend([MOp("mov", t, op.dst, text=text), MOp("shl", op.dst, n, text=text),
                        MOp("shr", t, 64 - n, text=text), MOp("or", op.dst, t, text=text)])
            return
        src = operand(op.a)
        cls = isa.cls(op.dst)
        if isinstance(src, Imm) and not isa.imm_ok(op.kind, cls, src.value):
            src = Addr(None, "const", src.value)
        out.append(MOp(op.kind, op.dst, src, text=text))

    def loop_tail(self, prog: Program) -> None:
        """Advance the pointers by one pass, count ``n`` down, close the block loop."""
        lanes = self.isa.lanes
        nb = prog.spec.block_bytes * prog.blocks * lanes
        out = self.out
        out.append(MOp("note", text="next block"))
        out.append(MOp("add", "tweak", Imm(16 * prog.blocks * lanes), text=f"tweak += {16 * prog.blocks * lanes}"))
        out.append(MOp("add", "in", Imm(nb), text=f"in += {nb}"))
        out.append(MOp("add", "out", Imm(nb), text=f"out += {nb}"))
        out.append(MOp("sub", "n", Imm(1), text="n -= 1"))
        out.append(MOp("bottom", text="while n != 0"))


def lower(prog: Program, isa: ISA, schedule: str = "description") -> list[MOp]:
    """The machine ops of ``PREFIX{direction}_blocks(key, tweaks, in, out, n)``:
    setup once, then the body for each block, pointers advanced, ``n`` counted down."""
    low = Lowering(isa)
    out, emit = low.out, low.emit

    for item in prog.setup:
        if isinstance(item, Loop):
            raise GenError("the nasm targets need --unroll full")
        emit(item)
    pending: list[Op] = []     # the MIX operations of one round, by MIX index

    def flush_round() -> None:
        """Interleave the independent MIXes of a round (ILP for in-order issue and the
        decoders): first op of every MIX, then the second, then the third."""
        groups: dict = {}
        for op in pending:
            groups.setdefault(op.tag, []).append(op)
        for k in range(max((len(g) for g in groups.values()), default=0)):
            for g in groups.values():
                if k < len(g):
                    emit(g[k])
        pending.clear()
    out.append(MOp("guard", src="n", text="if n == 0 return"))
    out.append(MOp("top", text="for each block"))
    for item in prog.body:
        if isinstance(item, Loop):
            raise GenError("the nasm targets need --unroll full")
        if schedule == "interleave" and item.tag and item.tag[0] in ("mix", "unmix"):
            if pending and pending[0].tag[:2] != item.tag[:2]:
                flush_round()
            pending.append(item)
            continue
        flush_round()
        emit(item)
    flush_round()
    low.loop_tail(prog)
    return out
