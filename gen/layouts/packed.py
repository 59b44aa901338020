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
