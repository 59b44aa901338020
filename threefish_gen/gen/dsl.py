"""Stage 2a -- the qhasm-like description language.

A *program* is a straight-line list of two-address operations on named 64-bit
values, optionally with one level of counted loop.  It is built by ordinary
Python (loops and functions are the macro language)::

    b = Builder()
    x0 = b.load("x0", Mem("in", 0))
    x1 = b.load("x1", Mem("in", 1))
    x0 += x1          # add   x0, x1
    x1.rotl(14)       # rotl  x1, 14
    x1 ^= x0          # xor   x1, x0

Operands are values (``Val``), memory words (``Mem``: array name + index) or
immediates (``int``).  Inside a loop, memory indices and immediates may be
*affine* in the loop counter (``Idx(base, scale)`` = base + scale * counter).

Operation kinds (``Op.kind``):

=========  ===========================  ========================================
kind       meaning                      operand ``a``
=========  ===========================  ========================================
``mov``    dst = a                      Val, Mem or Imm
``add``    dst = dst + a (mod 2^64)     Val, Mem or Imm
``sub``    dst = dst - a (mod 2^64)     Val, Mem or Imm
``xor``    dst = dst ^ a                Val, Mem or Imm
``rotl``   dst = dst <<< a              int 1..63
``rotr``   dst = dst >>> a              int 1..63
``store``  mem = dst                    Mem (``dst`` is the value stored)
``note``   comment for printers         text in ``a``
=========  ===========================  ========================================

Arrays ``key``, ``tweak`` and ``in`` are the function inputs (little-endian
64-bit words), ``out`` is the output, any other array name is local scratch.

The reference model is :func:`interpret`: it runs a program on Python
integers.  It must reproduce every published vector before any printer is
trusted (``tests/test_reference.py``).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Union

MASK64 = (1 << 64) - 1
INPUT_ARRAYS = ("key", "tweak", "in")
OUTPUT_ARRAYS = ("out",)


@dataclass(frozen=True)
class Idx:
    """An index or immediate affine in the loop counter: base + scale * counter."""

    base: int
    scale: int = 0

    def at(self, counter: int) -> int:
        return self.base + self.scale * counter

    def __str__(self) -> str:
        if self.scale == 0:
            return str(self.base)
        term = "c" if abs(self.scale) == 1 else f"{abs(self.scale)}*c"
        if self.base == 0:
            return term if self.scale > 0 else f"-{term}"
        return f"{self.base} {'+' if self.scale > 0 else '-'} {term}"


def as_idx(v: int | Idx) -> Idx:
    return v if isinstance(v, Idx) else Idx(int(v))


@dataclass(frozen=True)
class Mem:
    """One 64-bit word of an array."""

    array: str
    index: Idx

    def __init__(self, array: str, index: int | Idx):
        object.__setattr__(self, "array", array)
        object.__setattr__(self, "index", as_idx(index))

    def __str__(self) -> str:
        return f"{self.array}[{self.index}]"


Operand = Union[str, Mem, Idx, int]


@dataclass(frozen=True)
class Op:
    kind: str
    dst: str | None
    a: Operand = None
    tag: tuple = ()

    def text(self) -> str:
        """The qhasm-style statement this operation implements."""
        return statement(self.kind, self.dst, self.a)


_SYMBOLS = {"mov": "=", "add": "+=", "sub": "-=", "xor": "^=", "rotl": "<<<=", "rotr": ">>>="}


def statement(kind: str, dst, a) -> str:
    """The qhasm-style statement of an operation of ``kind`` on ``dst`` with operand ``a``
    (:meth:`Op.text`; the assembly lowering writes its machine ops' notes with it)."""
    if kind == "note":
        return f"# {a}"
    if kind == "store":
        return f"{a} = {dst}"
    if isinstance(a, Idx) and a.scale == 0:
        a = a.base
    if isinstance(a, int) and kind in ("mov", "add", "sub", "xor") and a > 9:
        a = hex(a)
    return f"{dst} {_SYMBOLS[kind]} {a}"


@dataclass
class Loop:
    """A counted loop: ``for c in range(count): body``; the body may use Idx(base, scale)."""

    count: int
    body: list = field(default_factory=list)


class Val:
    """A named 64-bit value; in-place operators record operations on the builder."""

    __slots__ = ("b", "name")

    def __init__(self, builder: "Builder", name: str):
        self.b = builder
        self.name = name

    def _operand(self, other) -> Operand:
        if isinstance(other, Val):
            return other.name
        if isinstance(other, (Mem, Idx)):
            return other
        if isinstance(other, int):
            return Idx(other & MASK64)
        raise TypeError(f"bad operand {other!r}")

    def __iadd__(self, other):
        self.b.emit(Op("add", self.name, self._operand(other)))
        return self

    def __isub__(self, other):
        self.b.emit(Op("sub", self.name, self._operand(other)))
        return self

    def __ixor__(self, other):
        self.b.emit(Op("xor", self.name, self._operand(other)))
        return self

    def rotl(self, n: int) -> "Val":
        assert 0 < n < 64, n
        self.b.emit(Op("rotl", self.name, n))
        return self

    def rotr(self, n: int) -> "Val":
        assert 0 < n < 64, n
        self.b.emit(Op("rotr", self.name, n))
        return self

    def __repr__(self) -> str:
        return f"Val({self.name})"


class Builder:
    """Records a program.  ``tag`` (a tuple) is attached to every op emitted while set."""

    def __init__(self):
        self.ops: list = []
        self._target = self.ops
        self.tag: tuple = ()

    def emit(self, op: Op) -> None:
        if self.tag and not op.tag:
            op = Op(op.kind, op.dst, op.a, self.tag)
        self._target.append(op)

    def val(self, name: str, init: Operand | "Val") -> Val:
        """A new value ``name = init``."""
        v = Val(self, name)
        self.emit(Op("mov", name, v._operand(init)))
        return v

    def store(self, mem: Mem, v: Val) -> None:
        self.emit(Op("store", v.name, mem))

    def note(self, text: str) -> None:
        self._target.append(Op("note", None, text))

    @contextmanager
    def loop(self, count: int):
        lp = Loop(count)
        self._target.append(lp)
        outer, self._target = self._target, lp.body
        try:
            yield lp
        finally:
            self._target = outer


# --------------------------------------------------------------------------- queries

def walk(ops):
    """Yield (op, loop) for every op; loop is the enclosing Loop or None."""
    for item in ops:
        if isinstance(item, Loop):
            for op in item.body:
                yield op, item
        else:
            yield item, None


def flat(ops):
    """Every op, loop bodies included (without the enclosing loop)."""
    for op, _ in walk(ops):
        yield op


def array_sizes(ops) -> dict[str, int]:
    """Number of words each array needs (max index + 1 over every use)."""
    sizes: dict[str, int] = {}
    for op, lp in walk(ops):
        if isinstance(op.a, Mem):
            idx = op.a.index
            counters = range(lp.count) if lp else (0,)
            top = max(idx.at(c) for c in counters)
            low = min(idx.at(c) for c in counters)
            assert low >= 0, f"negative index in {op.text()}"
            sizes[op.a.array] = max(sizes.get(op.a.array, 0), top + 1)
    return sizes


def values(ops) -> list[str]:
    """Names of all values defined, in order of first definition."""
    seen: dict[str, None] = {}
    for op, _ in walk(ops):
        if op.kind not in ("note", "store") and op.dst is not None:
            seen.setdefault(op.dst, None)
    return list(seen)


def count_ops(ops) -> dict[str, int]:
    """Dynamic operation counts (loops multiplied out)."""
    counts: dict[str, int] = {}
    for op, lp in walk(ops):
        if op.kind == "note":
            continue
        key = op.kind
        if isinstance(op.a, Mem) and op.kind != "store":
            key += "-mem"
        counts[key] = counts.get(key, 0) + (lp.count if lp else 1)
    return counts


# --------------------------------------------------------------------------- reference model

def interpret(ops, memory: dict[str, list[int]], env: dict[str, int] | None = None) -> dict[str, int]:
    """Run ``ops`` on Python integers.  ``memory`` maps array names to lists of words and is
    updated in place (local arrays are created on first store).  Returns the value environment."""
    env = {} if env is None else env

    def run(seq, counter: int):
        for item in seq:
            if isinstance(item, Loop):
                for c in range(item.count):
                    run(item.body, c)
                continue
            op = item
            kind = op.kind
            if kind == "note":
                continue
            a = op.a
            if kind == "store":
                arr = memory.setdefault(a.array, [])
                i = a.index.at(counter)
                if len(arr) <= i:
                    arr.extend([0] * (i + 1 - len(arr)))
                arr[i] = env[op.dst]
                continue
            if kind == "rotl":
                x = env[op.dst]
                env[op.dst] = ((x << a) | (x >> (64 - a))) & MASK64
                continue
            if kind == "rotr":
                x = env[op.dst]
                env[op.dst] = ((x >> a) | (x << (64 - a))) & MASK64
                continue
            if isinstance(a, str):
                v = env[a]
            elif isinstance(a, Mem):
                v = memory[a.array][a.index.at(counter)]
            else:
                v = a.at(counter) & MASK64
            if kind == "mov":
                env[op.dst] = v
            elif kind == "add":
                env[op.dst] = (env[op.dst] + v) & MASK64
            elif kind == "sub":
                env[op.dst] = (env[op.dst] - v) & MASK64
            elif kind == "xor":
                env[op.dst] = env[op.dst] ^ v
            else:  # pragma: no cover - the builder cannot produce other kinds
                raise ValueError(f"unknown op {kind}")

    try:
        run(ops, 0)
    finally:
        del run     # it refers to itself (its closure): no cycle left holding env for the collector
    return env


def words_from_bytes(data: bytes) -> list[int]:
    assert len(data) % 8 == 0
    return [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]


def bytes_from_words(words) -> bytes:
    return b"".join(w.to_bytes(8, "little") for w in words)
