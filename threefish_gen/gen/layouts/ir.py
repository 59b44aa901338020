"""The layout IR: typed vector operations on named values of W lanes x 64 bits.

Every layout (``scalar``, ``lanes``, ``packed``) lowers a description program
(:class:`gen.threefish.Program`) into one :class:`VProgram` of these operations;
:mod:`gen.layouts.interp` runs it on Python integers, printers only format it.

Operands.  A *vector operand* is a vector value name (``str``), one element of a
vector array (:class:`~gen.dsl.Mem`, index possibly affine in the loop counter) or
a constant in every lane (:class:`~gen.dsl.Idx`, affine in the loop counter).  A
*scalar term* is a description value name (``str``), a word of a scalar array
(``Mem``) or a constant (``Idx``).  Memory offsets are in 64-bit words from the
start of the pass (a pass covers ``VProgram.blocks`` blocks of the caller's
arrays ``in``/``out``, and their tweaks, two words per block, in ``tweak``).

==============  ======================================  =====================================
op              meaning                                 fields
==============  ======================================  =====================================
``Load``        dst lane k = array[words[k]]            dst, array, words (None: lane unused)
``Store``       array[words[k]] = src lane k            src, array, words (None: lane dropped)
``Shuffle``     dst lane k = srcs[s] lane l             dst, srcs (1-2 names), lanes ((s, l)
                for (s, l) = lanes[k]                   or None per lane), kind (purpose)
``Broadcast``   every lane of dst = term                dst (name or vector array Mem), term
``Const``       dst lane k = values[k]                  dst, values
``Mov``         dst = a                                 dst (name or vector array Mem), a
``Add``         dst = a + b (mod 2^64, lane-wise)       dst, a (name), b (vector operand)
``Sub``         dst = a - b (mod 2^64, lane-wise)       dst, a, b
``Xor``         dst = a ^ b                             dst, a, b
``Rotl``        dst lane k = src lane k <<< counts[k]   dst, src, counts (uniform: all equal)
``Rotr``        dst lane k = src lane k >>> counts[k]   dst, src, counts
``Insert``      dst lane k = sum of terms[k]            dst, terms (scalar terms per lane:
                (mod 2^64)                              subkey words, constants)
``Scalar``      W = 1 ops on 64-bit words inside a      ops (Load/Store/Mov/Add/Sub/Xor/Rotl/
                vector program (key words, subkey       Rotr/Note of one word), names (the
                words): one description op's            values they define; other destinations
                                                        are expression temporaries)
``Block``       ops whose destinations outside          body
                ``VProgram.values`` are temporaries
                local to the block
``Loop``        body run count times (counter ``c``)    count, body
``Note``        comment for printers                    text
==============  ======================================  =====================================

A destination that is neither declared (``VProgram.values``/``arrays``) nor
inside a :class:`Block` is an *expression temporary*: it is read exactly once,
by the next operation that names it (printers may inline it there).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ..dsl import Idx, Mem

Operand = Union[str, Mem, Idx]


@dataclass(frozen=True)
class Load:
    """dst lane k = array[words[k]] (None: lane left undefined)"""

    dst: str
    array: str
    words: tuple


@dataclass(frozen=True)
class Store:
    """array[words[k]] = src lane k (None: lane not stored)"""

    src: str
    array: str
    words: tuple


@dataclass(frozen=True)
class Shuffle:
    """dst lane k = srcs[s] lane l for (s, l) = lanes[k]; kind names the purpose (transpose, load/store, permute)"""

    dst: str
    srcs: tuple
    lanes: tuple
    kind: str = "permute"

    def pattern(self) -> tuple:
        """Per output lane: (source name, lane), or None."""
        return tuple(None if x is None else (self.srcs[x[0]], x[1]) for x in self.lanes)


@dataclass(frozen=True)
class Broadcast:
    """every lane of dst = the scalar term"""

    dst: Union[str, Mem]
    term: Operand


@dataclass(frozen=True)
class Const:
    """dst lane k = values[k]"""

    dst: str
    values: tuple


@dataclass(frozen=True)
class Mov:
    """dst = a (a vector array element when dst is a Mem)"""

    dst: Union[str, Mem]
    a: Operand


@dataclass(frozen=True)
class _Binary:
    dst: str
    a: str
    b: Operand


class Add(_Binary):
    """dst = a + b (mod 2^64, lane-wise)"""

    name = "add"


class Sub(_Binary):
    """dst = a - b (mod 2^64, lane-wise)"""

    name = "sub"


class Xor(_Binary):
    """dst = a ^ b"""

    name = "xor"


@dataclass(frozen=True)
class _Rotate:
    dst: str
    src: str
    counts: tuple

    @property
    def uniform(self) -> bool:
        return len(set(self.counts)) == 1


class Rotl(_Rotate):
    """dst lane k = src lane k <<< counts[k]"""

    left = True

    @property
    def left_counts(self) -> tuple:
        """The same rotation as left rotations."""
        return self.counts


class Rotr(_Rotate):
    """dst lane k = src lane k >>> counts[k]"""

    left = False

    @property
    def left_counts(self) -> tuple:
        return tuple(64 - c for c in self.counts)


@dataclass(frozen=True)
class Insert:
    """dst lane k = the sum of the scalar terms terms[k] (mod 2^64)"""

    dst: str
    terms: tuple


@dataclass(frozen=True)
class Scalar:
    """W = 1 ops (one 64-bit word per value) inside a vector program: what one description op
    computes on words (gen/layouts/scalar.py ``words``); ``names``: the values they define
    (declared), any other destination an expression temporary read by the next op"""

    ops: tuple
    names: tuple


@dataclass(frozen=True)
class Block:
    """ops whose destinations outside the program's declared values are local temporaries"""

    body: tuple


@dataclass(frozen=True)
class Loop:
    """body run count times; Idx operands are affine in its counter"""

    count: int
    body: tuple


@dataclass(frozen=True)
class Note:
    """a comment for printers"""

    text: str


ARITH = (Add, Sub, Xor)
ROT = (Rotl, Rotr)

# The visitor method each op class is handed to (:func:`visit`).
VISIT = {Load: "load", Store: "store", Shuffle: "shuffle", Broadcast: "broadcast", Const: "const",
         Mov: "mov", Add: "arith", Sub: "arith", Xor: "arith", Rotl: "rotate", Rotr: "rotate",
         Insert: "insert", Scalar: "scalar", Block: "block", Loop: "loop", Note: "note"}


def visit(op, visitor, *args):
    """``visitor.<VISIT[class]>(op, *args)``: how printers walk the IR (one method per kind of
    op, the spelling asked of an ISA module, gen/isa/); a visitor lacking the method cannot print
    the op (GenError)."""
    fn = getattr(visitor, VISIT[type(op)], None)
    if fn is None:
        from ..errors import GenError
        raise GenError(f"{type(visitor).__name__}: cannot print {op!r}")
    return fn(op, *args)


def is_loop(op) -> bool:
    return isinstance(op, Loop)


def is_block(op) -> bool:
    return isinstance(op, Block)


def is_note(op) -> bool:
    """A note (a round or subkey comment: where two programs' rounds interleave)."""
    return isinstance(op, Note)


def is_mov(op) -> bool:
    """A move ``dst = a`` (a block's moves into the state: what its live values are)."""
    return isinstance(op, Mov)


def has_store(ops) -> bool:
    return any(isinstance(op, Store) for op in ops)


def shuffles(ops) -> list:
    return [op for op in ops if isinstance(op, Shuffle)]


def splat_rings(vp, isa) -> dict:
    """{vector ring: its word ring} of ``vp``'s prologue that a printer for ``isa`` reads by a
    broadcast load at each use instead of broadcasting them into vector arrays once per call
    (``isa.splat_load``: the load is one instruction there); {} where it is not."""
    if not isa.splat_load:
        return {}
    return {op.body[0].dst.array: op.body[0].term.array for op in vp.prologue if not broadcast_dst(op)[0]}


def broadcast_dst(op) -> tuple:
    """A prologue op's destination: (True, value name) for a Broadcast, (False, array name) for a
    Loop broadcasting into the elements of a vector array."""
    if isinstance(op, Broadcast):
        return True, op.dst
    return False, op.body[0].dst.array


def flat_blocks(ops) -> list:
    """The ops with blocks entered (each op once, in order; loops kept as they are)."""
    out = []
    for op in ops:
        out += flat_blocks(op.body) if isinstance(op, Block) else [op]
    return out


def inserts(ops) -> list:
    return [op for op in ops if isinstance(op, Insert)]


def is_insert(op) -> bool:
    return isinstance(op, Insert)


def is_shuffle(op, kind: str) -> bool:
    """``op`` is a Shuffle of that kind (purpose)."""
    return isinstance(op, Shuffle) and op.kind == kind


def store_of(ops, name: str):
    """The first Store of the value ``name`` among ``ops``."""
    return next(op for op in ops if isinstance(op, Store) and op.src == name)


def same_sources(op, shuffle: Shuffle) -> bool:
    """``op`` is a shuffle of the same sources as ``shuffle`` (e.g. the other half of a pair)."""
    return isinstance(op, Shuffle) and op.srcs == shuffle.srcs


def xor_into(op, nxt) -> bool:
    """``nxt`` xors ``op``'s result into itself in place (``b = rot(b); b ^= a``): printers may
    print the two as one statement."""
    return isinstance(nxt, Xor) and nxt.a == op.dst == nxt.dst


@dataclass
class VProgram:
    """One lowered description program.

    ``setup`` holds the description's once-per-call ops (scalar words: :class:`Scalar` ops, W = 1
    ops inside a vector layout, W = 1 ops of their own in layout scalar, gen/layouts/scalar.py),
    ``prologue`` the vector ops run once per call after it (broadcast key words),
    ``body`` the ops of one pass of ``blocks`` blocks."""

    layout: str
    lanes: int                    # W: 64-bit lanes per vector value
    blocks: int                   # blocks per pass
    nw: int                       # words per block
    setup: list = field(default_factory=list)
    prologue: list = field(default_factory=list)
    body: list = field(default_factory=list)
    values: list = field(default_factory=list)    # declared vector values of the body
    arrays: dict = field(default_factory=dict)    # declared vector arrays of the body: size
    scalars: list = field(default_factory=list)   # description values the body's Scalar ops define
    setup_values: list = field(default_factory=list)   # W = 1 (layout scalar): declared values of the setup
    setup_arrays: dict = field(default_factory=dict)   # W = 1: declared arrays of the setup: size


def walk(ops):
    """Every op, loops and blocks entered (not the Loop/Block items themselves)."""
    for item in ops:
        if isinstance(item, (Loop, Block)):
            yield from walk(item.body)
        else:
            yield item


def reads(op) -> list:
    """Vector value names an op reads (operands that are names)."""
    if isinstance(op, Shuffle):
        return list(op.srcs)
    if isinstance(op, Store):
        return [op.src]
    if isinstance(op, Mov):
        return [op.a] if isinstance(op.a, str) else []
    if isinstance(op, ARITH):
        return [op.a] + ([op.b] if isinstance(op.b, str) else [])
    if isinstance(op, ROT):
        return [op.src]
    return []


def arrays_read(op) -> list:
    """Arrays an op reads: a Load's, and the array of an element operand (``Mem``)."""
    if isinstance(op, Load):
        return [op.array]
    operands = [op.a] if isinstance(op, Mov) else [op.b] if isinstance(op, ARITH) else \
        [op.term] if isinstance(op, Broadcast) else []
    return [m.array for m in operands if isinstance(m, Mem)]


def array_written(op):
    """The array an op writes a word or element of (a Store, or a Mov or Broadcast into an
    element), or None."""
    if isinstance(op, Store):
        return op.array
    d = getattr(op, "dst", None)
    return d.array if isinstance(d, Mem) else None


def elements(op) -> list:
    """Every array word or element an op reads or writes, as ``Mem`` (a Load's and a Store's
    words, each used one; the element operands and destinations of the others)."""
    if isinstance(op, (Load, Store)):
        return [Mem(op.array, w) for w in op.words if w is not None]
    return [x for x in (getattr(op, "dst", None), getattr(op, "a", None), getattr(op, "b", None),
                        getattr(op, "term", None)) if isinstance(x, Mem)]


def array_sizes(ops) -> dict:
    """Words (elements) each array needs: the highest index ``ops`` read or write, plus one, over
    every count of the loops (arrays in the order of their first use)."""
    sizes: dict[str, int] = {}

    def go(items, count):
        for op in items:
            if isinstance(op, (Loop, Block)):
                go(op.body, op.count if isinstance(op, Loop) else count)
                continue
            for m in elements(op):
                top = max(m.index.at(c) for c in range(count))
                sizes[m.array] = max(sizes.get(m.array, 0), top + 1)
    go(ops, 1)
    return sizes


def counter_operands(op) -> bool:
    """An op has an operand affine in the loop counter (an element or constant that moves)."""
    for x in (getattr(op, "a", None), getattr(op, "b", None), getattr(op, "dst", None), getattr(op, "term", None)):
        if isinstance(x, Mem) and x.index.scale or isinstance(x, Idx) and x.scale:
            return True
    return False


def writes(op):
    """The vector value name an op defines, or None."""
    d = getattr(op, "dst", None)
    return d if isinstance(d, str) and not isinstance(op, Scalar) else None


def dead_code(body: list, live_out=()) -> list:
    """Drop ops of a straight-line block whose destination (a block temporary) nothing reads."""
    body = list(body)
    keep_names = set(live_out)
    while True:
        read = {n for op in body for n in reads(op)}
        dead = [i for i, op in enumerate(body)
                if (d := writes(op)) is not None and d not in read and d not in keep_names]
        if not dead:
            return body
        body = [op for i, op in enumerate(body) if i not in dead]


def dead_first_writes(body) -> set[int]:
    """``id`` of each straight-line op of ``body`` (its top level) that writes a value's first
    definition which a Mov overwrites before anything reads it (the table schedule's scratch
    vector starts as k0, then each subkey word is moved into it; the loop form's spare tweak
    value, defined before the loop and moved into first in it): printers that declare values
    with their first assignment leave these out.  Loop and block bodies are followed in order,
    once (a loop runs at least once); only top-level definitions can be found dead."""
    pending: dict[str, int] = {}
    seen: set[str] = set()
    dead: set[int] = set()

    def ops_of(items, top):
        for item in items:
            if isinstance(item, (Loop, Block)):
                yield from ops_of(item.body, False)
            else:
                yield item, top

    for op, top in ops_of(body, True):
        for r in reads(op):
            pending.pop(r, None)
        d = writes(op)
        if d is None:
            continue
        if d in pending and isinstance(op, Mov):
            dead.add(pending.pop(d))
        if d not in seen and top:
            pending[d] = id(op)
        seen.add(d)
    return dead
