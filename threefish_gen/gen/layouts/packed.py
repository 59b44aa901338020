"""The ``packed`` layout: one block in two vectors, A = even words, B = odd words.

MIX j of a round works on words (2j, 2j+1), so with A lane j = word 2j and B lane j = word
2j+1 every MIX of a round is one lane-wise step: A += B; B <<<= (per-lane counts); B ^= A.
The word permutation of Threefish maps even positions to even positions and odd to odd (for
every size; checked below), so it becomes one single-source lane permutation of A and one of
B, both derived from ``spec.perm``.  Subkey injection adds, per position, the scalar terms the
description adds to the word that sits there.

``_steps`` walks a description program (keys=fly, unroll=full) into packed steps
(positional lanes), private to this module; :func:`lower` turns them into the layout IR
(gen/layouts/ir.py) that the SIMD C and C# printers format and the NASM packed lowering
(gen/asm/lower_packed.py) lowers to machine ops.  The steps:

* ``("scalar", op)``         a scalar op (key and tweak words), printed as-is
* ``("load",)`` / ``("store",)``  the whole block in / out (positional order)
* ``("mix", rd)`` / ``("unmix", rd)``   all MIXes of one round, rotation row rd
* ``("permute", pa, pb)``    A lane j <- A lane pa[j], B lane j <- B lane pb[j] (None = identity)
* ``("key", sign, terms)``   terms[i] = operands added (sign +1) or subtracted to word i
"""
from __future__ import annotations

from ..dsl import Mem
from ..errors import GenError
from . import ir, scalar

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


def _steps(prog) -> list[tuple]:
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


# --------------------------------------------------------------------------- layout IR

def lower(prog, lanes: int, natural: bool = False) -> ir.VProgram:
    """The packed layout of ``prog`` as a layout IR program on vectors of ``lanes`` lanes.

    Each half (A = even words, B = odd words of the MIX pairs) is nw/2/lanes vectors
    ``A0, A1, ..`` / ``B0, B1, ..``.  By default lanes follow the words instead of positions
    (*tracked*): :func:`_steps` keeps A lane j = word 2j, B lane j = word 2j+1, so every
    round permutes A and B; only the pairing matters (A lane j and B lane j must hold the two
    words of one MIX), so one vector stays where it is and the other is permuted to re-pair:
    after a MIX the one finished first (A: A += B is ready before B = rotl(B) ^ A), before an
    inverse MIX the one it reads first (B: B ^= A).  Rotation counts, subkey terms and the
    final store follow the tracked lane -> word position maps.  Loads and stores go through
    2 * nw/2/lanes row temporaries ``r0, r1, ..`` (one block scope each way).

    ``natural=True`` is the positional form: A lane j = word 2j, B lane j = word 2j+1 always,
    both halves are permuted by :func:`lane_perms` every round, the block is loaded into and
    stored from the declared row values ``V0, V1, ..`` (2 * nw/2/lanes of them).  With one
    vector per half they are ``A``, ``B``; with several, ``A0, A1, ..`` (lanes 0..L-1,
    L..2L-1, ..), the rows loaded two at a time (rows 2g, 2g+1 hold the words of A{g} and
    B{g}), and a permutation copies the old vectors of the half (``oA0, ..``) in a block
    first."""
    spec = prog.spec
    nw, half, L = spec.nw, spec.nw // 2, lanes
    G = half // L
    if G < 1 or half % L:
        raise GenError(f"packed layout: {half} words per half do not fill vectors of {L} lanes")
    steps = _steps(prog)
    vp = ir.VProgram(NAME, L, 1, nw)
    vp.setup = [scalar.words(op) for op in prog.setup]
    names = {h: ([h] if natural and G == 1 else [f"{h}{g}" for g in range(G)]) for h in "AB"}
    vp.values = names["A"] + names["B"] + ([f"V{r}" for r in range(2 * G)] if natural else [])
    vp.scalars = list(dict.fromkeys(st[1].dst for st in steps if st[0] == "scalar"))
    pos = {"A": [2 * j for j in range(half)], "B": [2 * j + 1 for j in range(half)]}
    body: list = []
    tmp = iter(f"_t{n}" for n in range(1 << 30))

    def shuffle(dst, pattern, kind):
        """A Shuffle from a (name, lane) per output lane pattern."""
        srcs = tuple(dict.fromkeys(n for n, _ in pattern))
        return ir.Shuffle(dst, srcs, tuple((srcs.index(n), k) for n, k in pattern), kind)

    def vec(h, j):      # (vector, lane) of whole-half lane j
        return names[h][j // L], j % L

    for k, st in enumerate(steps):
        kind = st[0]
        if kind == "scalar":
            body.append(scalar.words(st[1]))
        elif kind == "load":
            rows = [f"V{r}" if natural else f"r{r}" for r in range(2 * G)]

            def load_rows(rs):
                return [ir.Load(rows[r], "in", tuple(range(r * L, (r + 1) * L))) for r in rs]

            def split(h, g):
                return shuffle(names[h][g], tuple((rows[q // L], q % L) for q in pos[h][g * L:(g + 1) * L]),
                               "load/store")
            if natural:     # rows 2g, 2g+1 hold the words of A{g} and B{g}
                ops = [x for g in range(G) for x in load_rows((2 * g, 2 * g + 1)) + [split("A", g), split("B", g)]]
            else:
                ops = load_rows(range(2 * G)) + [split(h, g) for h in "AB" for g in range(G)]
            if natural:
                body += [ir.Note("load: A = even words, B = odd words")] + ops
            else:
                body += [ir.Note("load: A lanes = even words, B lanes = odd words"), ir.Block(tuple(ops))]
        elif kind == "store":
            lane = {q: vec(h, j) for h in "AB" for j, q in enumerate(pos[h])}
            if natural:
                body.append(ir.Note("store: interleave A and B back into word order"))
                body += [shuffle(f"V{r}", tuple(lane[r * L + i] for i in range(L)), "load/store") for r in range(2 * G)]
                body += [ir.Store(f"V{r}", "out", tuple(range(r * L, (r + 1) * L))) for r in range(2 * G)]
                continue
            body.append(ir.Note("store"))
            for r in range(2 * G):
                t = next(tmp)
                body.append(shuffle(t, tuple(lane[r * L + i] for i in range(L)), "load/store"))
                body.append(ir.Store(t, "out", tuple(range(r * L, (r + 1) * L))))
        elif kind in ("mix", "unmix"):
            rd = st[1]
            if any(a // 2 != b // 2 or a % 2 or b % 2 != 1 for a, b in zip(pos["A"], pos["B"])):
                raise GenError("packed layout: lanes lost their MIX pairing")  # pragma: no cover
            counts = tuple(spec.rot[rd][b // 2] for b in pos["B"])
            body.append(ir.Note(f"{'round' if kind == 'mix' else 'inverse round'}, rotation row {rd}"))
            for g in range(G):
                a, b, cs = names["A"][g], names["B"][g], counts[g * L:(g + 1) * L]
                if kind == "mix":
                    body += [ir.Add(a, a, b), ir.Rotl(b, b, cs), ir.Xor(b, b, a)]
                else:
                    body += [ir.Xor(b, b, a), ir.Rotr(b, b, cs), ir.Sub(a, a, b)]
        elif kind == "permute":
            body += _permute(st, k, steps, pos, names, L, natural, shuffle)
        elif kind == "key":
            sign, terms = st[1], st[2]
            for h in "AB":
                for g, name in enumerate(names[h]):
                    t = next(tmp)
                    body.append(ir.Insert(t, tuple(tuple(terms[p]) for p in pos[h][g * L:(g + 1) * L])))
                    body.append((ir.Add if sign > 0 else ir.Sub)(name, name, t))
        else:  # pragma: no cover
            raise GenError(f"packed layout: unknown step {kind!r}")
    vp.body = body
    return vp


def _permute(st, k, steps, pos, names, L, natural, shuffle) -> list:
    """IR of one natural permute step (new A lane j <- old A lane pa[j], B likewise)."""
    half = len(pos["A"])
    ident = tuple(range(half))
    pa, pb = st[1] or ident, st[2] or ident
    if natural:
        out = []
        for h, p in (("A", st[1]), ("B", st[2])):
            if p is None:
                continue
            if len(names[h]) == 1:
                out.append(shuffle(names[h][0], tuple((names[h][0], x) for x in p), "permute"))
                continue
            ops = [ir.Mov(f"o{n}", n) for n in names[h]]
            ops += [shuffle(name, tuple((f"o{names[h][x // L]}", x % L) for x in p[g * L:(g + 1) * L]), "permute")
                    for g, name in enumerate(names[h])]
            out.append(ir.Block(tuple(ops)))
        return out
    # Tracked: recover the word permutation (new position i <- old p[i]), follow it, re-pair.
    p = [0] * (2 * half)
    for j in range(half):
        p[2 * j], p[2 * j + 1] = 2 * pa[j], 2 * pb[j] + 1
    where = {old: new for new, old in enumerate(p)}
    a = [where[x] for x in pos["A"]]
    b = [where[x] for x in pos["B"]]
    move_a = k + 1 >= len(steps) or steps[k + 1][0] != "unmix"
    if move_a:       # keep B, bring to A lane j the even partner of b[j]
        lane_of = {x: j for j, x in enumerate(a)}
        q, h = tuple(lane_of[b[j] - 1] for j in range(half)), "A"
        a = [x - 1 for x in b]
    else:            # keep A, bring to B lane j the odd partner of a[j]
        lane_of = {x: j for j, x in enumerate(b)}
        q, h = tuple(lane_of[a[j] + 1] for j in range(half)), "B"
        b = [x + 1 for x in a]
    pos["A"], pos["B"] = a, b
    if q == ident:
        return []
    ops = [ir.Mov(f"o{n}", n) for n in names[h]]
    for g, name in enumerate(names[h]):
        ops.append(shuffle(name, tuple((f"o{names[h][x // L]}", x % L) for x in q[g * L:(g + 1) * L]), "permute"))
    return [ir.Block(tuple(ops))]


def lane_map(prog) -> list[tuple[str, list, list]]:
    """Which word sits in which lane of A and B after each round, in the positional (natural)
    form: [(label, A lane -> word, B lane -> word)], the load first (for reports)."""
    half = prog.spec.nw // 2
    a, b = [2 * j for j in range(half)], [2 * j + 1 for j in range(half)]
    rows, rnd = [("load", list(a), list(b))], None
    for s in _steps(prog):
        if s[0] in ("mix", "unmix"):
            rnd = s[1]
        elif s[0] == "permute":
            pa, pb = s[1], s[2]
            a = [a[p] for p in pa] if pa else a
            b = [b[p] for p in pb] if pb else b
            rows.append((f"after round {rnd}", list(a), list(b)))
    return rows

