"""What every ISA module shares: the ISA record, the lane reader semantics are written against,
and the search that turns a wanted lane pattern into the cheapest instruction(s) of an ISA.

Semantics.  An ISA module describes each instruction it spells by one function
``semantics(m, w, args)``: ``w`` is the number of 64-bit lanes of the call's vector width,
``args`` the evaluated arguments, ``m`` a *lane reader* that gives the meaning of the values:

=====================  ==============================================================
``m.vec(x)``           the tuple of lane values of a vector argument (lane 0 first)
``m.imm(x)``           the int of a constant argument; ``m.counts(v)``: of every lane
``m.const(v)``         a lane holding the constant v
``m.add/sub/xor/or_``  a lane op of two lanes (mod 2^64)
``m.shl/shr(t, k)``    a lane shifted by k (0 when k > 63); ``m.rotl(t, k)``: rotated
``m.bytes(v)``         the (lane, byte) sources of a vector, 8 per lane, byte 0 least
                       significant; ``m.words(bs)``: the lanes of such a byte list;
                       ``m.const_bytes(v)``: the byte values of a constant vector
``m.load(addr, n)``    n lanes read from memory; ``m.store(addr, v)``: written;
                       ``m.load_aligned``/``m.store_aligned``: the same at an address
                       the instruction needs aligned to the vector's size
``m.undef(i)``         an undefined lane (the upper lanes of a widening cast)
``m.unsupported(s)``   refuse (raises): the call is outside what the ISA models
=====================  ==============================================================

The prove readers (gen/prove/) evaluate the same functions with symbolic terms as lanes; the
printers evaluate the lane moves with :class:`Sources` (each lane a ``(source, lane)`` token) to
learn which lane pattern a shuffle instruction builds.  One function per instruction serves
both: what the printer picks and what the prover reads back cannot disagree.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..errors import GenError


@dataclass(frozen=True)
class Isa:
    """One vector ISA of the SIMD C target (a row of an ISA module's ``ISAS``)."""

    name: str
    level: int            # dispatcher order: higher = preferred when present
    bits: int             # widest integer vector
    target: str           # gcc/clang target attribute
    features: tuple       # /proc/cpuinfo flags needed
    simde: str            # SIMDe header emulating it
    pshufb: bool          # byte shuffles (SSSE3) available
    rol: bool             # vprolq / vprolvq (AVX-512F + VL)
    vl: bool = False
    family: object = None  # instruction family (Width, shuffles, rotations); None: x86
    splat_load: bool = True  # a broadcast from memory is one load (vpbroadcastq, embedded
    #                          {1toN}, vmovddup, ld1r): rings are read in the loop, not broadcast


class CExpr(str):
    """A C expression the SIMD printers spell, holding what it calls: ``sites``, one (vector bytes,
    vector operands, scalar operands) per vector intrinsic call in it, nested calls included (the
    wipe bounds of gen/printers/c.py read them; nothing parses them back from the text);
    ``holes``: how often it holds the shuffle placeholders {a} and {b} (:func:`fill`)."""

    sites: tuple = ()
    holes: tuple = (0, 0)

    def __new__(cls, text: str, sites=(), holes=(0, 0)):
        e = super().__new__(cls, text)
        e.sites, e.holes = tuple(sites), tuple(holes)
        return e

    def then(self, text: str) -> "CExpr":
        """The same calls followed by ``text`` (e.g. the ";" of a store statement)."""
        return CExpr(self + text, self.sites, self.holes)


class Scalar(str):
    """An operand of an intrinsic call that is not a vector: an immediate, a lane value, an
    address (ints are scalar operands too; any other operand is a vector)."""


class Hole(str):
    """A shuffle candidate's placeholder for a source vector: {a} or {b} (:func:`fill`)."""


A, B = Hole("{a}"), Hole("{b}")


def sites_of(x) -> tuple:
    """The intrinsic call sites an operand or expression holds (none for a name or a number)."""
    return x.sites if isinstance(x, CExpr) else ()


def intrinsic(name: str, nbytes: int, args) -> CExpr:
    """The C call ``name(args)`` of a vector intrinsic on ``nbytes``-byte vectors, with its
    site and those of the calls among its operands."""
    scalar = sum(1 for x in args if isinstance(x, (int, Scalar)))
    sites = [(nbytes, len(args) - scalar, scalar)]
    holes = [0, 0]
    for x in args:
        sites += sites_of(x)
        if isinstance(x, CExpr):
            holes = [h + k for h, k in zip(holes, x.holes)]
        elif isinstance(x, Hole):
            holes[x == B] += 1
    return CExpr(f"{name}(" + ", ".join(str(x) for x in args) + ")", sites, holes)


def fill(fmt: str, a: str, b: str) -> str:
    """A shuffle candidate's format with the sources a and b put in (str.format), its sites
    counted with those of a and b (once per placeholder)."""
    text = fmt.format(a=a, b=b)
    if not isinstance(fmt, CExpr):
        return text
    na, nb = fmt.holes
    return CExpr(text, fmt.sites + na * sites_of(a) + nb * sites_of(b))


class Plain:
    """What a lane reader does with arguments that arrive already read: a vector argument is its
    tuple of lanes, a constant argument its int (Sources, Ints; gen/prove/nasm.py's registers)."""

    @staticmethod
    def vec(x):
        return x

    @staticmethod
    def imm(x):
        return x


class Sources(Plain):
    """The lane reader of lane moves: a lane is a ``(source, lane)`` token, a byte a
    ``(token, byte)`` pair; a lane rebuilt from bytes that are not one whole source lane in
    order is None (no shuffle pattern asks for it)."""

    @staticmethod
    def const(v):
        return None

    @staticmethod
    def counts(v):
        return list(v)

    @staticmethod
    def bytes(v):
        return [(t, k) for t in v for k in range(8)]

    @staticmethod
    def words(bs):
        out = []
        for i in range(0, len(bs), 8):
            t = bs[i][0]
            out.append(t if t is not None and bs[i:i + 8] == [(t, k) for k in range(8)] else None)
        return tuple(out)

    @staticmethod
    def unsupported(text):
        raise GenError(text)


class Ints(Plain):
    """The lane reader of concrete values: a lane is an int (mod 2^64), a byte a (lane, byte
    index) pair (the machine-op interpreter, gen/asm/interp.py)."""

    @staticmethod
    def const(v):
        return v

    @staticmethod
    def bytes(v):
        return [(t, k) for t in v for k in range(8)]

    @staticmethod
    def words(bs):
        return tuple(sum(((t >> (8 * j)) & 0xFF) << (8 * i) for i, (t, j) in enumerate(bs[k:k + 8]))
                     for k in range(0, len(bs), 8))


def lane_sources(semantics, lanes: int, args: tuple) -> tuple:
    """The lane pattern a lane-move instruction builds: per output lane (0 = first source /
    1 = second, lane), from its semantics; args are 'a', 'b' or constant ints."""
    src = {"a": tuple((0, k) for k in range(lanes)), "b": tuple((1, k) for k in range(lanes))}
    return semantics(Sources, lanes, [src.get(x, x) for x in args])


def _match(sem, pattern, order):
    for lane, want in zip(sem, pattern):
        if lane is None:
            if want is not None:
                return False
            continue
        s, k = lane
        if want is not None and (order[s], k) != want:
            return False
    return True


@lru_cache(maxsize=None)
def candidates(fam, isa: Isa, width):
    """The lane shuffle candidates of an ISA of family ``fam`` at one width, cheapest first."""
    return sorted(fam.shuffle_candidates(isa, width), key=lambda c: c[0])


def shuffle(fam, isa: Isa, width, pattern: tuple) -> str:
    """C expression building a vector whose lane k is pattern[k] = (vector name, lane) (or None):
    the cheapest single candidate, else the family's index permute, else two candidates."""
    srcs = list(dict.fromkeys(p[0] for p in pattern if p is not None))
    if len(srcs) > 2 or not srcs:
        raise GenError(f"shuffle of {len(srcs)} sources")
    if all(p is None or p == (srcs[0], k) for k, p in enumerate(pattern)) and len(srcs) == 1:
        return srcs[0]
    orders = [(srcs[0], srcs[-1]), (srcs[-1], srcs[0])] if len(srcs) == 2 else [(srcs[0], srcs[0])]
    for cost, fmt, sem in candidates(fam, isa, width):
        for order in orders:
            if _match(sem, pattern, order):
                return fill(fmt, order[0], order[1])
    index = getattr(fam, "index_permute", None)
    if index is not None:
        e = index(isa, width, pattern, orders[0], len(srcs))
        if e is not None:
            return e
    two = _two_steps(fam, isa, width, tuple(pattern), tuple(srcs))
    if two is not None:
        return two
    raise GenError(f"no {isa.name} instruction for lane pattern {pattern}")


@lru_cache(maxsize=None)
def _two_steps(fam, isa: Isa, width, pattern: tuple, srcs: tuple) -> str | None:
    """The cheapest candidate applied to the result of another (e.g. unpack, then a lane
    permute), or None.  Only for patterns no single candidate (or index permute) builds."""
    cands = candidates(fam, isa, width)
    orders = [(srcs[0], srcs[-1]), (srcs[-1], srcs[0])] if len(srcs) == 2 else [(srcs[0], srcs[0])]
    best = None
    for c1, f1, s1 in cands:
        if any(x is None for x in s1):
            continue
        for order in orders:
            mid = tuple((order[s], k) for s, k in s1)     # lanes of the first result
            for c2, f2, s2 in cands:
                if best is not None and c1 + c2 >= best[0]:
                    break
                if all(x is not None and x[0] == 0 for x in s2) and all(
                        want is None or mid[k] == want for (_, k), want in zip(s2, pattern)):
                    inner = fill(f1, order[0], order[1])
                    best = (c1 + c2, fill(f2, inner, inner))   # s2 reads only its first source
    return None if best is None else best[1]
