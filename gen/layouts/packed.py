"""The ``packed`` layout: one block in two vectors, A = even words, B = odd words.

MIX j of a round works on words (2j, 2j+1), so with A lane j = word 2j and B lane j = word
2j+1 every MIX of a round is one lane-wise step: A += B; B <<<= (per-lane counts); B ^= A.
The word permutation of Threefish maps even positions to even positions and odd to odd (for
every size; checked below), so it becomes one single-source lane permutation of A and one of
B, both derived from ``spec.perm``.  Subkey injection adds, per position, the scalar terms the
description adds to the word that sits there.

``map_program`` walks a description program (keys=fly, unroll=full) and returns a list of
packed steps; printers turn them into instructions:

* ``("scalar", op)``         a scalar op (key and tweak words), printed as-is
* ``("load",)`` / ``("store",)``  the whole block in / out (positional order)
* ``("mix", rd)`` / ``("unmix", rd)``   all MIXes of one round, rotation row rd
* ``("permute", pa, pb)``    A lane j <- A lane pa[j], B lane j <- B lane pb[j] (None = identity)
* ``("key", sign, terms)``   terms[i] = operands added (sign +1) or subtracted to word i
"""
from __future__ import annotations

from ..dsl import Mem, Op
from ..errors import GenError

NAME = "packed"


def lane_perms(perm, inverse: bool = False):
    """(pa, pb): new A lane j = old A lane pa[j], new B lane j = old B lane pb[j]."""
    nw = len(perm)
    p = [perm.index(i) for i in range(nw)] if inverse else list(perm)
    if any(p[i] % 2 != i % 2 for i in range(nw)):  # pragma: no cover - true for Threefish
        raise GenError("word permutation mixes even and odd positions; packed layout unavailable")
    pa = tuple(p[2 * j] // 2 for j in range(nw // 2))
    pb = tuple(p[2 * j + 1] // 2 for j in range(nw // 2))
    ident = tuple(range(nw // 2))
    return (None if pa == ident else pa), (None if pb == ident else pb)


def pair_sources(p) -> list[tuple]:
    """Lanes held two per register (A0 = lanes 0, 1; A1 = lanes 2, 3; ...): for each new
    register q, ((r_lo, h_lo), (r_hi, h_hi)) -- the old register and half (0 low, 1 high)
    its low and high lane come from, for the lane permutation p (new lane j = old lane p[j])."""
    return [((p[2 * q] // 2, p[2 * q] % 2), (p[2 * q + 1] // 2, p[2 * q + 1] % 2)) for q in range(len(p) // 2)]


def map_program(prog) -> list[tuple]:
    spec, o = prog.spec, prog.options
    if o.unroll != "full" or o.keys != "fly" or prog.blocks != 1:
        raise GenError("the packed layout needs --keys fly --unroll full (one block)")
    nw, perm = spec.nw, spec.perm
    pos: dict[str, int] = {}          # value name -> word position it holds now
    steps: list[tuple] = []
    i, ops = 0, list(prog.body)
    while i < len(ops):
        op = ops[i]
        tag = op.tag[0] if op.tag else None
        if op.kind == "note":
            i += 1
            continue
        if op.kind == "mov" and isinstance(op.a, Mem) and op.a.array == "in":
            pos[op.dst] = op.a.index.base
            if not steps or steps[-1] != ("load",):
                steps.append(("load",))
            i += 1
            continue
        if op.kind == "store" and op.a.array == "out":
            if pos.get(op.dst) != op.a.index.base:  # pragma: no cover - positional by construction
                raise GenError("packed layout: store order does not match the lane positions")
            if not steps or steps[-1] != ("store",):
                steps.append(("store",))
            i += 1
            continue
        if tag in ("mix", "unmix"):
            rd = op.tag[1]
            j0 = i
            while i < len(ops) and ops[i].tag[:2] == (tag, rd) and ops[i].kind != "note":
                i += 1
            rnd = ops[j0:i]
            if tag == "unmix":      # the description renamed by the inverse permutation first
                steps.append(("permute", *lane_perms(perm, inverse=True)))
            for r in rnd:
                j = r.tag[2]
                if r.kind in ("add", "sub"):
                    pos[r.dst] = 2 * j
                elif r.kind in ("rotl", "rotr"):
                    pos[r.dst] = 2 * j + 1
            steps.append((tag, rd))
            if tag == "mix":
                steps.append(("permute", *lane_perms(perm)))
                at = {p: n for n, p in pos.items()}
                pos = {at[perm[k]]: k for k in range(nw)}
            continue
        if tag == "key":
            sign = None
            terms: list[list] = [[] for _ in range(nw)]
            while i < len(ops) and ops[i].tag[:1] == ("key",) and ops[i].kind != "note":
                r = ops[i]
                s = +1 if r.kind == "add" else -1
                if sign not in (None, s):  # pragma: no cover
                    raise GenError("packed layout: mixed signs in one subkey injection")
                sign = s
                terms[pos[r.dst]].append(r.a)
                i += 1
            steps.append(("key", sign, terms))
            continue
        if op.kind in ("mov", "xor") and not op.tag:
            steps.append(("scalar", op))   # tweak words
            i += 1
            continue
        raise GenError(f"packed layout cannot map {op.text()!r}")  # pragma: no cover
    return steps


# --------------------------------------------------------------------------- tracked lanes

def track(steps: list[tuple], spec) -> list[tuple]:
    """The steps of :func:`map_program` with lanes that follow the words instead of positions.

    ``map_program`` keeps A lane j = word 2j, B lane j = word 2j+1, so every round permutes
    A and B.  Only the pairing matters (A lane j and B lane j must hold the two words of one
    MIX), so here one vector stays where it is and the other is permuted to re-pair: after a
    MIX the one finished first (A: A += B is ready before B = rotl(B) ^ A), before an inverse
    MIX the one it reads first (B: B ^= A).  Rotation counts, subkey terms and the final store
    follow the tracked lane -> word position maps.  Returned steps:

    * ``("scalar", op)``                    as in map_program
    * ``("load", a, b)`` / ``("store", a, b)``  a[j] / b[j] = position of the word in A / B lane j
    * ``("mix", rd, counts)`` / ``("unmix", rd, counts)``  counts[j]: rotation of B lane j
    * ``("permute", qa, qb)``               new A lane j <- old A lane qa[j] (None = identity)
    * ``("key", sign, ta, tb)``             operands added to (subtracted from) each A / B lane
    """
    nw, half = spec.nw, spec.nw // 2
    a = [2 * j for j in range(half)]
    b = [2 * j + 1 for j in range(half)]
    out: list[tuple] = []
    for k, st in enumerate(steps):
        kind = st[0]
        if kind in ("load", "store"):
            out.append((kind, tuple(a), tuple(b)))
        elif kind == "scalar":
            out.append(st)
        elif kind == "key":
            terms = st[2]
            out.append(("key", st[1], [list(terms[p]) for p in a], [list(terms[p]) for p in b]))
        elif kind in ("mix", "unmix"):
            rd = st[1]
            if any(a[j] // 2 != b[j] // 2 or a[j] % 2 or b[j] % 2 != 1 for j in range(half)):
                raise GenError("packed layout: lanes lost their MIX pairing")  # pragma: no cover
            out.append((kind, rd, tuple(spec.rot[rd][b[j] // 2] for j in range(half))))
        elif kind == "permute":
            # Recover the word permutation the natural step applies: new position i <- old p[i].
            pa, pb = st[1] or tuple(range(half)), st[2] or tuple(range(half))
            p = [0] * nw
            for j in range(half):
                p[2 * j], p[2 * j + 1] = 2 * pa[j], 2 * pb[j] + 1
            where = {old: new for new, old in enumerate(p)}
            a = [where[x] for x in a]
            b = [where[x] for x in b]
            move_a = k + 1 >= len(steps) or steps[k + 1][0] != "unmix"
            if move_a:       # keep B, bring to A lane j the even partner of b[j]
                lane_of = {x: j for j, x in enumerate(a)}
                qa = tuple(lane_of[b[j] - 1] for j in range(half))
                a = [b[j] - 1 for j in range(half)]
                qb = None
            else:            # keep A, bring to B lane j the odd partner of a[j]
                lane_of = {x: j for j, x in enumerate(b)}
                qb = tuple(lane_of[a[j] + 1] for j in range(half))
                b = [a[j] + 1 for j in range(half)]
                qa = None
            ident = tuple(range(half))
            out.append(("permute", None if qa == ident else qa, None if qb == ident else qb))
        else:  # pragma: no cover
            raise GenError(f"packed layout: unknown step {kind!r}")
    return out


def split(lanes: tuple, width: int, name: str) -> list[tuple]:
    """A whole-half lane list (e.g. a permutation of A's lanes) cut into vectors of `width` lanes:
    per output vector, a tuple of (source vector name, source lane)."""
    return [tuple((f"{name}{q // width}", q % width) for q in lanes[g:g + width])
            for g in range(0, len(lanes), width)]
