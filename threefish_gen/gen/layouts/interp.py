"""The layout IR interpreter: runs a lowered program (gen/layouts/ir.py) on Python integers.

Memory is a dict of arrays of 64-bit words (``key``, ``tweak``, ``in``, ``out`` and the
program's scalar scratch arrays); vector values are lists of W lanes, a lane nothing
defined is ``None`` (loading it into memory is an error).  :func:`run` calls the program
once: setup and prologue, then one pass of the body per ``vp.blocks`` blocks, the caller's
arrays offset by the pass.  :func:`encrypt_bytes` is the byte-level wrapper the tests use
against gen/reference.py.
"""
from __future__ import annotations

from ..dsl import MASK64, Mem, bytes_from_words, words_from_bytes
from ..errors import GenError
from . import ir

CALLER = {"in": None, "out": None, "tweak": 2}     # words per block (None: nw)


def _rotl(x, n):
    return None if x is None else ((x << n) | (x >> (64 - n))) & MASK64 if n % 64 else x


class Machine:
    def __init__(self, vp: ir.VProgram, mem: dict):
        self.vp, self.mem = vp, mem
        self.env: dict[str, int] = {}           # scalar (description) values
        self.vec: dict[str, list] = {}          # vector values
        self.varr: dict[str, dict] = {}         # vector arrays: index -> lanes
        self.base = {"in": 0, "out": 0, "tweak": 0}

    # ---- scalars
    def word(self, array: str, i: int, store=None):
        arr = self.mem.setdefault(array, [])
        i += self.base.get(array, 0)
        if store is None:
            return arr[i]
        if len(arr) <= i:
            arr.extend([0] * (i + 1 - len(arr)))
        arr[i] = store

    def term(self, t, c: int) -> int:
        if isinstance(t, str):
            return self.env[t]
        if isinstance(t, Mem):
            return self.word(t.array, t.index.at(c))
        return t.at(c) & MASK64

    def scalar(self, ops, c: int) -> None:
        """The W = 1 ops of an ``ir.Scalar`` on 64-bit words (values in ``env``, arrays in memory)."""
        for op in ops:
            if isinstance(op, ir.Note):
                continue
            if isinstance(op, ir.Load):
                (w,) = op.words
                self.env[op.dst] = self.word(op.array, w)
            elif isinstance(op, ir.Store):
                (w,) = op.words
                self.word(op.array, w, self.env[op.src])
            elif isinstance(op, ir.Mov):
                v = self.term(op.a, c)
                if isinstance(op.dst, Mem):
                    self.word(op.dst.array, op.dst.index.at(c), v)
                else:
                    self.env[op.dst] = v
            elif isinstance(op, ir.ARITH):
                x, v = self.env[op.a], self.term(op.b, c)
                self.env[op.dst] = {ir.Add: lambda: (x + v) & MASK64, ir.Sub: lambda: (x - v) & MASK64,
                                    ir.Xor: lambda: x ^ v}[type(op)]()
            elif isinstance(op, ir.ROT):
                (n,) = op.left_counts
                self.env[op.dst] = _rotl(self.env[op.src], n)
            else:  # pragma: no cover
                raise GenError(f"layout interpreter: {op!r} is not a W = 1 op")

    # ---- vectors
    def operand(self, a, c: int) -> list:
        W = self.vp.lanes
        if isinstance(a, str):
            return self.vec[a]
        if isinstance(a, Mem):
            return self.varr[a.array][a.index.at(c)]
        return [a.at(c) & MASK64] * W

    def put(self, dst, lanes: list, c: int) -> None:
        if isinstance(dst, Mem):
            self.varr.setdefault(dst.array, {})[dst.index.at(c)] = list(lanes)
        else:
            self.vec[dst] = list(lanes)

    def op(self, op, c: int) -> None:
        W = self.vp.lanes
        if isinstance(op, ir.Loop):
            for i in range(op.count):
                for x in op.body:
                    self.op(x, i)
        elif isinstance(op, ir.Block):
            for x in op.body:
                self.op(x, c)
        elif isinstance(op, ir.Note):
            pass
        elif isinstance(op, ir.Scalar):
            self.scalar(op.ops, c)
        elif isinstance(op, ir.Load):
            self.put(op.dst, [None if w is None else self.word(op.array, w) for w in op.words], c)
        elif isinstance(op, ir.Store):
            v = self.vec[op.src]
            for k, w in enumerate(op.words):
                if w is not None:
                    if v[k] is None:
                        raise GenError(f"store of an undefined lane {k} of {op.src}")
                    self.word(op.array, w, v[k])
        elif isinstance(op, ir.Shuffle):
            src = [self.vec[s] for s in op.srcs]
            self.put(op.dst, [None if x is None else src[x[0]][x[1]] for x in op.lanes], c)
        elif isinstance(op, ir.Broadcast):
            self.put(op.dst, [self.term(op.term, c)] * W, c)
        elif isinstance(op, ir.Const):
            self.put(op.dst, [v & MASK64 for v in op.values], c)
        elif isinstance(op, ir.Mov):
            self.put(op.dst, self.operand(op.a, c), c)
        elif isinstance(op, ir.ARITH):
            a, b = self.vec[op.a], self.operand(op.b, c)
            f = {ir.Add: lambda x, y: (x + y) & MASK64, ir.Sub: lambda x, y: (x - y) & MASK64,
                 ir.Xor: lambda x, y: x ^ y}[type(op)]
            self.put(op.dst, [None if x is None or y is None else f(x, y) for x, y in zip(a, b)], c)
        elif isinstance(op, ir.ROT):
            right = isinstance(op, ir.Rotr)
            self.put(op.dst, [_rotl(x, 64 - n if right else n) for x, n in zip(self.vec[op.src], op.counts)], c)
        elif isinstance(op, ir.Insert):
            self.put(op.dst, [sum(self.term(t, c) for t in ts) & MASK64 for ts in op.terms], c)
        else:  # pragma: no cover
            raise GenError(f"layout interpreter: unknown op {op!r}")


def run(vp: ir.VProgram, mem: dict, nblocks: int) -> dict:
    """Run ``vp`` on ``mem`` (arrays of words: key, tweak, in, out) for ``nblocks`` blocks, a
    multiple of ``vp.blocks``.  ``mem['out']`` is created when missing.  Returns ``mem``."""
    if nblocks % vp.blocks:
        raise GenError(f"{nblocks} blocks: not a whole number of {vp.blocks}-block passes")
    mem.setdefault("out", [0] * (vp.nw * nblocks))
    m = Machine(vp, mem)
    for op in vp.setup + vp.prologue:
        m.op(op, 0)
    for p in range(nblocks // vp.blocks):
        first = p * vp.blocks
        m.base = {a: first * (w or vp.nw) for a, w in CALLER.items()}
        for op in vp.body:
            m.op(op, 0)
    return mem


def crypt_bytes(vp: ir.VProgram, key: bytes, tweaks: bytes, data: bytes) -> bytes:
    """Blocks ``data`` (with 16 bytes of tweak per block in ``tweaks``) through ``vp``."""
    n = len(data) // (8 * vp.nw)
    mem = {"key": words_from_bytes(key), "tweak": words_from_bytes(tweaks), "in": words_from_bytes(data)}
    return bytes_from_words(run(vp, mem, n)["out"])
