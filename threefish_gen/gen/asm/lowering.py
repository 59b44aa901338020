"""Lowering: the layout IR (gen/layouts/ir.py) to *machine ops on values*
(:class:`~gen.asm.ir.MOp`): the same two-address operations, memory operands resolved to
(pointer value, byte offset) or a stack array, the function's own values (the argument
pointers ``key``, ``tweak``, ``in``, ``out`` and the block count ``n``) and the block loop
(``guard``/``top``/``bottom``).  The scalar forms lower the W = 1 layout IR
(:func:`lower`: gen/layouts/scalar.py, after the description passes of gen/asm/schedule.py),
the lanes form the lanes layout IR (:func:`lower_lanes`, gen/layouts/lanes.py), each vector op
the op it is in lane 0 (the other lanes are the machine's); the packed form lives in
gen/asm/lower_packed.py (gen/layouts/packed.py).  :class:`Lowering` is an IR visitor
(``ir.visit``): one method per kind of op."""
from __future__ import annotations

from ..dsl import Idx, Mem, statement
from ..errors import GenError
from ..isa import x86
from ..layouts import ir, lanes, scalar, transpose
from ..threefish import Program
from .ir import COUNTER, Addr, Imm, MOp
from .machine import ISA
from .schedule import SCHEDULES, prepare, scheduled

__all__ = ["SCHEDULES", "Lowering", "lower", "lower_lanes", "lane_bit_moves"]


class Lowering:
    """Layout IR ops -> machine ops on values (an IR visitor: :meth:`run`), appended to ``out``;
    shared by :func:`lower`, :func:`lower_lanes` and the packed layout's lowering
    (``gen/asm/lower_packed.py``).  A vector op is lowered as the op it is in lane 0: a Load or
    Store of ``isa.lanes`` consecutive words (checked) as the access of its first word, a
    transpose's Shuffle as a copy and a two-address lane move (gen/isa/x86.py LANE_MOVES)."""

    def __init__(self, isa: ISA, nw: int = 0):
        self.isa, self.nw = isa, nw
        self.out: list[MOp] = []
        self.tmp_count = 0
        self.cycles = 0           # inside the cycle loop (--unroll loop): its trip count
        self.names = None         # the declared values (None: all): any other Load is an expression temporary
        self.pending: dict[str, Mem] = {}

    def run(self, ops, names=None) -> None:
        """Lower ``ops``; ``names``: the values they declare (a Load into any other name is an
        expression temporary, a memory operand of the next op), None: every name."""
        self.names = None if names is None else set(names)
        for op in ops:
            ir.visit(op, self)

    def scalar(self, op) -> None:
        """The W = 1 ops of one description op inside a vector program (``ir.Scalar``)."""
        names = self.names
        self.run(op.ops, op.names)
        self.names = names

    def operand(self, a):
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            if a.index.scale:
                if not self.cycles or a.array in ("key", "tweak", "in", "out"):
                    raise GenError("the nasm targets need --unroll full (no affine indices)")
                # the counter is slot*scale*c (0, slot*scale, ..; slot: the bytes of a stack slot,
                # 8 for a GPR word, 16 for an XMM one): word base + scale*c is word base
                # + counter/slot
                i = a.index.base
                return Addr(None, a.array, i, 8 * i, COUNTER)
            i = a.index.base
            base = a.array if a.array in ("key", "tweak", "in", "out") else None
            return Addr(base, a.array, i, 8 * i)
        if isinstance(a, Idx):
            if a.scale:
                raise GenError("the nasm targets need --unroll full (no affine immediates)")
            return Imm(a.base)
        raise AssertionError(a)

    def term(self, a):
        """An operand: a pending expression temporary is its memory word."""
        return self.pending.pop(a) if isinstance(a, str) and a in self.pending else a

    def word(self, op) -> Mem:
        """The first word of a Load or Store of a whole vector (lane b: the word after lane b - 1's,
        checked)."""
        w = op.words
        if any(x != w[0] + b for b, x in enumerate(w)):
            raise GenError(f"nasm lanes: {op.array} words {w} are not one vector of consecutive words")
        return Mem(op.array, Idx(w[0]))

    def shuffle(self, op) -> None:
        """A two-source lane move of a transpose: a copy of the first source, then the
        two-address move (gen/isa/x86.py LANE_MOVES) of the second into it."""
        cls = self.isa.data_class
        for kind in x86.LANE_MOVES.get(cls, ()):
            pat = x86.lane_move_pattern(cls, kind)
            for a, b, flip in ((op.srcs[0], op.srcs[-1], False), (op.srcs[-1], op.srcs[0], True)):
                want = tuple(None if x is None else (x[0] ^ flip, x[1]) for x in op.lanes)
                if all(w is None or w == p for w, p in zip(want, pat)):
                    text = f"{op.dst} = {kind}({a}, {b})"
                    self.out.append(MOp("mov", op.dst, a, text=text))
                    self.out.append(MOp(kind, op.dst, b, text=text))
                    return
        raise GenError(f"nasm lanes: no {cls} lane move builds {op.lanes}")

    def loop(self, loop) -> None:
        """The 8-round cycle loop of --unroll loop: the body once, its ring words indexed by the
        counter (a public round counter), the counter stepped to 0 and the jump back."""
        scales = {m.index.scale for o in loop.body for m in ir.elements(o) if m.index.scale}
        if len(scales) != 1:
            raise GenError(f"nasm --unroll loop: the cycle loop indexes by {len(scales)} strides, not one")
        step = self.isa.slot_bytes * scales.pop()
        self.out.append(MOp("mov", COUNTER, Imm(0), text=f"{COUNTER} = 0"))
        self.out.append(MOp("ctop", text=f"for each of {loop.count} cycles of 8 rounds"))
        self.cycles = loop.count
        for op in loop.body:
            ir.visit(op, self)
        self.cycles = 0
        self.out.append(MOp("add", COUNTER, Imm(step), text=f"{COUNTER} += {step}"))
        self.out.append(MOp("cbottom", COUNTER, Imm(step * loop.count), text=f"while {COUNTER} != {step * loop.count}"))

    def fresh(self) -> str:
        self.tmp_count += 1
        return f"r{self.tmp_count}"

    def note(self, op) -> None:
        self.out.append(MOp("note", text=str(op.text)))

    def store(self, op) -> None:
        m = self.word(op)
        self.out.append(MOp("store", src=op.src, addr=self.operand(m), text=statement("store", op.src, m)))

    def load(self, op) -> None:
        m = self.word(op)
        if self.names is not None and op.dst not in self.names:
            self.pending[op.dst] = m
            return
        self._op("mov", op.dst, m)

    def broadcast(self, op) -> None:
        """A key word in every lane (the lanes setup): a load of it."""
        if not (isinstance(op.term, Mem) and op.term.array == "key") or not isinstance(op.dst, str):
            raise GenError(f"nasm lanes: cannot lower {op!r}")
        self._op("mov", op.dst, op.term)

    def mov(self, op) -> None:
        if isinstance(op.dst, Mem):          # an element of a stack array
            self.out.append(MOp("store", src=op.a, addr=self.operand(op.dst), text=statement("store", op.a, op.dst)))
            return
        self._op("mov", op.dst, self.term(op.a))

    def arith(self, op) -> None:
        if op.a != op.dst:
            raise GenError(f"nasm: cannot lower {op!r} (not two-address)")
        self._op(op.name, op.dst, self.term(op.b))

    def rotate(self, op) -> None:
        if not op.uniform or op.src != op.dst:
            raise GenError(f"nasm: cannot lower {op!r}")
        c = op.counts[0]
        text = statement("rotl" if op.left else "rotr", op.dst, c)
        n = op.left_counts[0]
        if self.isa.rotate == "native":
            self.out.append(MOp("rol", op.dst, n, text=text))
        else:
            t = self.fresh()
            self.out.extend([MOp("mov", t, op.dst, text=text), MOp("shl", op.dst, n, text=text),
                             MOp("shr", t, 64 - n, text=text), MOp("or", op.dst, t, text=text)])

    def _op(self, kind: str, dst: str, a) -> None:
        src = self.operand(a)
        if isinstance(src, Imm) and not self.isa.imm_ok(kind, self.isa.cls(dst), src.value):
            src = Addr(None, "const", src.value)
        self.out.append(MOp(kind, dst, src, text=statement(kind, dst, a)))

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


def _straight(ops) -> list:
    if any(map(ir.is_loop, ops)):
        raise GenError("the nasm targets need --unroll full")
    return list(ops)


def lower(prog: Program, isa: ISA, schedule: str = "description", share_sums: bool = True) -> list[MOp]:
    """The machine ops of ``PREFIX{direction}_blocks(key, tweaks, in, out, n)``:
    setup once, then the body for each block, pointers advanced, ``n`` counted down; the program
    scheduled and its subkey injections fused first (gen/asm/schedule.py ``prepare``;
    ``share_sums``: sums kept for the next injection), then lowered to the W = 1 layout IR
    (gen/layouts/scalar.py).  --unroll loop: the body's cycle loop becomes the counter loop
    ``ctop``..``cbottom``."""
    vp = scalar.lower(prepare(prog, schedule, share_sums))
    return _lower(isa, prog, vp.setup, vp.body, vp.setup_values + vp.values)


def _lower(isa: ISA, prog: Program, setup: list, body: list, names=None) -> list[MOp]:
    low = Lowering(isa, prog.spec.nw)
    # n is tested before any load: n = 0 touches no pointer (key, tweaks, in, out may be NULL)
    low.out.append(MOp("guard", src="n", text="if n == 0 return"))
    low.run(setup, names)
    low.out.append(MOp("top", text="for each block"))
    low.run(body, names)
    low.loop_tail(prog)
    return low.out


# --------------------------------------------------------------------------- lanes (ymm, zmm)

def lower_lanes(prog: Program, isa: ISA, schedule: str = "description") -> list[MOp]:
    """The lanes form (``isa.lanes`` blocks per pass, one block per lane) from the layout IR of
    ``gen.layouts.lanes.lower_stream(prog, isa.lanes, moves=...)`` (the description scheduled
    first, gen/asm/schedule.py): the blocks and their tweaks loaded as whole vectors and
    transposed in registers by the two-source lane moves of the vector class (gen/isa/x86.py
    LANE_PAIRS, :func:`lane_bit_moves`), the state transposed back and stored as whole vectors;
    every other IR op is one op on vector values, lowered as the op it is in lane 0 (key words
    and constants are broadcast)."""
    vp = lanes.lower_stream(scheduled(prog, schedule), isa.lanes, moves=lane_bit_moves(isa.data_class))
    # --unroll loop: the body's cycle loop becomes the counter loop (Lowering.loop), its key and
    # counter rings one vector slot per word (the setup fills them; it has no loop)
    return _lower(isa, prog, _straight(vp.setup), list(vp.body))


def lane_bit_moves(cls: str) -> list:
    """The transposes' stages of a vector class: gen/isa/x86.py's LANE_PAIRS as bit moves."""
    return [transpose.bit_move(pair, x86.lane_move_pattern(cls, pair[0]), x86.lane_move_pattern(cls, pair[1]))
            for pair in x86.LANE_PAIRS[cls]]
