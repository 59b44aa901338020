"""An interpreter of lowered machine ops (:class:`~gen.asm.ir.MOp`, before allocation): the
lowering checked without an assembler.

Every value is a vector of 64-bit lanes: one lane (scalar words), two (``--layout packed``:
XMM lanes, gen/isa/x86.py's ``PACKED_MOVES`` semantics) or ``isa.lanes`` (ymm/zmm lanes: a
caller-memory read of ``in``/``tweak`` and a store to ``out`` move ``isa.lanes`` consecutive
words, the transposes' lane moves run gen/isa/x86.py's ``LANE_MOVES`` semantics, a ``key`` read
and a constant are broadcast).  Pointer values are byte offsets into the caller's arrays; the block loop runs
``guard``/``top``/``bottom`` as the machine does, so the pointer advance is checked too; the
cycle loop of --unroll loop (``ctop``/``cbottom``) jumps back while its counter is not its bound, its
ring words read at their index + counter / 8.
"""
from __future__ import annotations

from ..errors import GenError
from ..isa import x86
from ..isa.common import Ints
from .ir import COUNTER, Addr, Imm, MOp
from .machine import ISA

M64 = (1 << 64) - 1


class _Run:
    def __init__(self, isa: ISA, nw: int, mem: dict):
        self.packed = isa.layout == "packed"
        self.width = 2 if self.packed else isa.lanes
        self.nw, self.mem = nw, mem
        self.slot = isa.slot_bytes        # a ring word's stride (the counter's unit)
        self.cls = isa.data_class
        self.env: dict = {}
        self.stack: dict = {}

    def const(self, v: int) -> list:
        if self.packed:
            return [v & M64, v >> 64 & M64]
        return [v & M64] * self.width

    def word(self, a: Addr, lane: int = 0) -> int:
        return self.mem[a.array][(self.env[a.base] + a.offset) // 8 + lane]

    def read(self, a, kind: str) -> list:
        if isinstance(a, str):
            return self.env[a]
        if isinstance(a, Imm):
            return self.const(a.value)
        if isinstance(a, int):
            return [a] * self.width
        if a.counter:
            return self.stack[(a.array, a.index + self.env[a.counter] // self.slot)]
        if a.base is None:
            return self.const(a.index) if a.array == "const" else self.stack[(a.array, a.index)]
        if self.packed:     # movq: one word, high lane zero; ldu (movdqu): two words
            return [self.word(a), self.word(a, 1) if kind == "ldu" else 0]
        if self.width == 1 or a.array == "key":
            return [self.word(a)] * self.width
        return [self.word(a, b) for b in range(self.width)]

    def store(self, a: Addr, v: list) -> None:
        if a.base is None:
            self.stack[(a.array, a.index)] = list(v)
            return
        at = (self.env[a.base] + a.offset) // 8
        arr = self.mem[a.array]
        if self.packed:
            arr[at:at + 2] = v
        else:
            for b, x in enumerate(v):
                arr[at + b] = x

    def op(self, o: MOp) -> None:
        k, env = o.kind, self.env
        if k == "store":
            self.store(o.addr, env[o.src])
            return
        if o.dst in ("key", "tweak", "in", "out", "n", COUNTER):      # pointers and the counts: scalars
            if k == "mov":
                env[o.dst] = o.src.value
                return
            env[o.dst] += {"add": 1, "sub": -1}[k] * o.src.value
            return
        if k in ("mov", "ldu", "swap"):        # written without being read (ir.DEFS)
            v = list(self.read(o.src, k))
            env[o.dst] = list(x86.packed_move("swap", Ints, None, v)) if k == "swap" else v
            return
        d, s = env[o.dst], self.read(o.src, k)
        if self.cls in x86.LANE_MOVES and k in x86.LANE_MOVES[self.cls]:
            env[o.dst] = list(x86.lane_move(self.cls, k, Ints, d, s))
        elif k in PACKED:
            env[o.dst] = PACKED[k](d, s, o.src)
        elif k in LANEWISE:
            env[o.dst] = [LANEWISE[k](x, y) & M64 for x, y in zip(d, s)]
        else:  # pragma: no cover
            raise GenError(f"machine-op interpreter: unknown kind {k!r}")


def _rol(x: int, n: int) -> int:
    return (x << n | x >> (64 - n)) & M64 if n % 64 else x


LANEWISE = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "xor": lambda a, b: a ^ b,
            "or": lambda a, b: a | b, "shl": lambda a, n: a << n, "shr": lambda a, n: a >> n, "rol": _rol}
# the packed XMM lane moves, from their x86 semantics (gen/isa/x86.py PACKED_MOVES)
PACKED = {k: (lambda d, s, n, k=k: list(x86.packed_move(k, Ints, d, s, n))) for k in x86.PACKED_MOVES if k != "swap"}


def run(ops: list, isa: ISA, nw: int, mem: dict, passes: int) -> dict:
    """Run lowered ``ops`` on ``mem`` (word arrays key, tweak, in, out) with the block count
    ``n = passes`` (one pass: ``isa.lanes`` blocks, or one for packed); returns ``mem``."""
    r = _Run(isa, nw, mem)
    r.env.update({p: 0 for p in ("key", "tweak", "in", "out")}, n=passes)
    top = next(i for i, o in enumerate(ops) if o.kind == "top")
    bottom = next(i for i, o in enumerate(ops) if o.kind == "bottom")
    ctop = next((i for i, o in enumerate(ops) if o.kind == "ctop"), None)
    i = 0
    while i < len(ops):
        o = ops[i]
        if o.kind == "guard" and r.env[o.src] == 0:
            i = bottom
        elif o.kind == "bottom" and r.env["n"] != 0:
            i = top
        elif o.kind == "cbottom" and r.env[o.dst] != o.src.value:
            i = ctop
        elif o.kind not in ("note", "guard", "top", "bottom", "ctop", "cbottom"):
            r.op(o)
        i += 1
    return mem
