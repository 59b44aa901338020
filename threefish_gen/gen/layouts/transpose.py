"""Lane transposition planners for the ``lanes`` layout: L independent blocks word-sliced across the L lanes of a vector.

Two plans, one module (every consumer takes its transposes from here):

* :func:`network` / :func:`network_ops`: the in-register L x L transpose of L rows (one row
  = up to L consecutive words of one block), log2(L) stages of one-bit lane exchanges; the
  SIMD C lanes layout loads one row per block and runs it (its own inverse for stores);
* :func:`load_plan` / :func:`store_plan` (below): whole stream-order vectors to word-sliced
  vectors as bit-exchange stages of two-source permutes (the C# AVX-512 kernel).

Word i of the description becomes one vector whose lane b holds word i of block b, so
every description operation becomes one lane-wise vector operation (the permutation is
still free renaming, rotation counts stay per-word constants).  Key words are broadcast,
tweak words are gathered per lane.

What this mapping adds is the change of layout at the edges: L consecutive blocks in
memory are L*Nw words in *stream order* (word p = b*Nw + i), loaded as L*Nw/L vectors of L
consecutive words; the state needs vector i = (word i of blocks 0..L-1).  That is a bit
permutation of the word index p, computed here as a sequence of *stages*; each stage
exchanges one bit of the vector index with one bit of the lane index, which is one
two-source permute per output vector (AVX-512 ``vpermt2q``: any 8 of 16 lanes).  The
last stage also puts the lanes in order.  The plan is checked by simulation on word
labels before it is returned; storing runs the same planner the other way.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import GenError

NAME = "lanes"   # the layout this planner serves


# --------------------------------------------------------------------------- L x L network

def network(lanes: int) -> list[tuple[int, int, int]]:
    """Steps (bit, i, j) of an in-register L x L transpose of 64-bit lanes.

    Vectors i and j = i | bit exchange their off-diagonal bit-sized blocks:
    new_i[k] = i[k] if k & bit == 0 else j[k ^ bit]   ("low" combine),
    new_j[k] = i[k ^ bit] if k & bit == 0 else j[k]   ("high" combine).
    After every bit, vector r holds column r.  The network is its own inverse."""
    if lanes & (lanes - 1):
        raise GenError(f"lanes must be a power of two, not {lanes}")
    steps = []
    bit = 1
    while bit < lanes:
        for i in range(lanes):
            if not i & bit:
                steps.append((bit, i, i | bit))
        bit <<= 1
    return steps


def combine_pattern(lanes: int, bit: int, high: bool) -> tuple:
    """Source of each output lane of one network combine: (0 = first vector / 1 = second, lane)."""
    pat = []
    for k in range(lanes):
        if not high:
            pat.append((0, k) if not k & bit else (1, k ^ bit))
        else:
            pat.append((0, k ^ bit) if not k & bit else (1, k))
    return tuple(pat)


def network_ops(rows: list[str], lanes: int, name, in_order: bool = False) -> tuple[list, list[str]]:
    """The network on vector values ``rows`` as layout IR shuffles: (ops, result names).
    ``name(stage, vector)`` names each intermediate (stage 1..log2 L); ``in_order`` emits each
    stage's shuffles by output vector (else pair by pair)."""
    from .ir import Shuffle
    cur, ops = list(rows), []
    stage = 0
    bit = 1
    while bit < lanes:
        nxt = list(cur)
        made = []
        for b2, i, j in network(lanes):
            if b2 != bit:
                continue
            for dst, high in ((i, False), (j, True)):
                n = name(stage + 1, dst)
                made.append((dst, Shuffle(n, (cur[i], cur[j]), combine_pattern(lanes, bit, high), "transpose")))
                nxt[dst] = n
        ops += [op for _, op in (sorted(made, key=lambda m: m[0]) if in_order else made)]
        cur = nxt
        stage += 1
        bit <<= 1
    return ops, cur


# --------------------------------------------------------------------------- stream <-> sliced plan


@dataclass(frozen=True)
class Permute2:
    """dst = lanes of concat(lo, hi) picked by idx (0..L-1 from lo, L..2L-1 from hi)."""

    stage: int
    dst: int
    lo: int
    hi: int
    idx: tuple


def _log2(n: int) -> int:
    assert n > 0 and n & (n - 1) == 0, n
    return n.bit_length() - 1


def _plan(nw: int, lanes: int, load: bool) -> tuple[list[Permute2], int]:
    """Stages taking stream layout to word-sliced layout (load) or back (store).

    Returns (ops, stages).  Vector j of the source holds, in lane e, word label
    src(j, e); the result vector j' holds dst(j', e')."""
    lb, wb = _log2(lanes), _log2(nw)
    nv = nw  # vectors in either layout: L*Nw words / L lanes
    # A layout is (vector-index bits, lane bits) -> which bit of the label p = b*Nw + i.
    stream = (list(range(lb, lb + wb)), list(range(lb)))           # p = j*L + e
    sliced = (list(range(wb)), list(range(wb, wb + lb)))          # p = e*Nw + j
    src, dst = (stream, sliced) if load else (sliced, stream)

    def label(layout, j: int, e: int) -> int:
        vb, eb = layout
        p = 0
        for k, bit in enumerate(vb):
            p |= ((j >> k) & 1) << bit
        for k, bit in enumerate(eb):
            p |= ((e >> k) & 1) << bit
        return p

    vecs = [[label(src, j, e) for e in range(lanes)] for j in range(nv)]
    vb, eb = list(src[0]), list(src[1])
    into = [bit for bit in dst[1] if bit in vb]        # bits that must move into the lanes
    out_ = [bit for bit in eb if bit not in dst[1]]    # lane bits that must leave them
    assert len(into) == len(out_)
    ops: list[Permute2] = []
    for stage, (bi, bo) in enumerate(zip(into, out_)):
        a, e = vb.index(bi), eb.index(bo)
        new, srcs = [], []
        for j in range(nv):
            lo, hi = j & ~(1 << a), j | (1 << a)
            row = []
            for pos in range(lanes):
                x, y = (pos >> e) & 1, (j >> a) & 1
                sj = (j & ~(1 << a)) | (x << a)
                sp = (pos & ~(1 << e)) | (y << e)
                row.append(vecs[sj][sp])
            new.append(row)
            srcs.append((lo, hi))
        vb[a], eb[e] = eb[e], vb[a]
        last = stage == len(into) - 1
        for j, row in enumerate(new):
            lo, hi = srcs[j]
            if last:   # name and order the result as the destination layout wants
                want_j = _find(dst, nv, lanes, label, row)
                row = [label(dst, want_j, e2) for e2 in range(lanes)]
                j_out = want_j
            else:
                j_out = j
            pool = vecs[lo] + vecs[hi]
            ops.append(Permute2(stage, j_out, lo, hi, tuple(pool.index(p) for p in row)))
            new[j] = row
        if last:
            order = {op.dst: op for op in ops if op.stage == stage}
            new = [[(vecs[order[j].lo] + vecs[order[j].hi])[i] for i in order[j].idx] for j in range(nv)]
        vecs = new
    for j in range(nv):   # the simulation must end in the destination layout exactly
        assert vecs[j] == [label(dst, j, e) for e in range(lanes)], (nw, lanes, load, j)
    return ops, len(into)


def _find(layout, nv, lanes, label, row) -> int:
    for j in range(nv):
        if set(row) == {label(layout, j, e) for e in range(lanes)}:
            return j
    raise AssertionError("lane plan does not reach the destination layout")  # pragma: no cover


def load_plan(nw: int, lanes: int) -> tuple[list[Permute2], int]:
    """Stream order -> word-sliced vectors (vector i = word i of every block)."""
    return _plan(nw, lanes, True)


def store_plan(nw: int, lanes: int) -> tuple[list[Permute2], int]:
    """Word-sliced vectors -> stream order."""
    return _plan(nw, lanes, False)


# --------------------------------------------------------------------------- bit-exchange networks
#
# A layout of V = 2^v vectors of L = 2^l lanes holding the words labelled p (0 .. V*L-1) is named by
# which bit of p each lane-index bit holds (``lanes``: lane bit i holds bit lanes[i] of p) and
# which bits the vector index holds (``vecs``).  A *two-source lane move* (an instruction taking
# two vectors a, b to one; a pair of them, ``lo`` and ``hi``, taking a, b to two) is a *bit
# move* when the pair permutes the l + 1 bits (the lane bits and the bit telling a from b):
# unpacklo/unpackhi, vperm2i128 0x20/0x31, vshufi64x2 0x88/0xdd all are.  :func:`bit_network`
# finds the fewest stages of such moves (each applied to every pair of vectors that differ in one
# vector bit) taking one layout to another; the moves come from the caller (an ISA module's
# instructions, as lane patterns), so the planner knows no instruction.


@dataclass(frozen=True)
class BitMove:
    """A pair of two-source lane patterns (per output lane: (0 = a / 1 = b, lane)) and the
    permutation of the l + 1 bits it makes: ``src_bit[i]`` is the input bit (0..l-1: lane bits,
    l: a/b) output bit i (0..l-1: lane bits, l: lo/hi) comes from."""

    name: tuple
    lo: tuple
    hi: tuple
    src_bit: tuple


def bit_move(name, lo: tuple, hi: tuple):
    """The :class:`BitMove` of a lo/hi pair of lane patterns, or None when the pair does not
    permute the bits (or leaves a lane undefined)."""
    n = len(lo)
    lb = _log2(n)

    def source(c):          # output (hi?, lane) -> input index lane | (b?) << lb
        o, k = c >> lb, c & (n - 1)
        x = (hi if o else lo)[k]
        return None if x is None else x[1] | x[0] << lb
    if source(0) != 0:
        return None
    src_bit = []
    for i in range(lb + 1):
        s = source(1 << i)
        if s is None or s & (s - 1) or s == 0:
            return None
        src_bit.append(s.bit_length() - 1)
    if sorted(src_bit) != list(range(lb + 1)):
        return None
    for c in range(2 * n):
        want = sum(1 << src_bit[i] for i in range(lb + 1) if c >> i & 1)
        if source(c) != want:
            return None
    return BitMove(name, tuple(lo), tuple(hi), tuple(src_bit))


def _apply(move: BitMove, lanes: tuple, y) -> tuple:
    """(new lane labels, label the pair bit y's vector position gets) of one stage."""
    lb = len(lanes)
    inputs = list(lanes) + [y]
    return tuple(inputs[move.src_bit[i]] for i in range(lb)), inputs[move.src_bit[lb]]


def bit_network(src_lanes: tuple, dst_lanes: tuple, labels: int, moves: list) -> list | None:
    """The fewest stages (move, pair label) taking lane labels ``src_lanes`` to ``dst_lanes``
    (vector labels: the other ones of ``labels`` bits), breadth first; None if none in 4."""
    from collections import deque
    start, goal = tuple(src_lanes), tuple(dst_lanes)
    seen = {start: []}
    todo = deque([start])
    while todo:
        cur = todo.popleft()
        if cur == goal:
            return seen[cur]
        if len(seen[cur]) >= 4:
            continue
        for y in (b for b in range(labels) if b not in cur):
            for m in moves:
                nxt, _ = _apply(m, cur, y)
                if nxt not in seen:
                    seen[nxt] = seen[cur] + [(m, y)]
                    todo.append(nxt)
    return None


def network_between(srcs: list, src_layout: tuple, dsts: list, dst_layout: tuple, stages: list, name) -> list:
    """The layout IR shuffles of ``stages`` (:func:`bit_network`) from the vectors ``srcs`` in
    ``src_layout`` = (vector bits, lane bits) to the vectors named ``dsts`` in ``dst_layout``;
    ``name(stage, k)`` names the intermediates.  Checked by simulation on word labels."""
    from .ir import Shuffle
    vbits, lanes = src_layout
    cur = {}                # vector key (sorted (label, bit) pairs) -> value name
    for j, s in enumerate(srcs):
        cur[tuple(sorted((b, j >> i & 1) for i, b in enumerate(vbits)))] = s
    lanes = tuple(lanes)
    ops = []
    dvbits, dlanes = dst_layout
    final = {tuple(sorted((b, i >> k & 1) for k, b in enumerate(dvbits))): d for i, d in enumerate(dsts)}
    count = 0
    for st, (m, y) in enumerate(stages):
        new_lanes, out_label = _apply(m, lanes, y)
        nxt = {}
        for key in sorted(cur):
            kd = dict(key)
            if kd[y]:
                continue
            a = cur[key]
            b = cur[tuple(sorted({**kd, y: 1}.items()))]
            for o, pat in ((0, m.lo), (1, m.hi)):
                nk = dict(kd)
                del nk[y]
                nk[out_label] = o
                nk = tuple(sorted(nk.items()))
                if st == len(stages) - 1:
                    dst = final[nk]
                else:
                    dst = name(st + 1, count)
                    count += 1
                ops.append(Shuffle(dst, (a, b), pat, "transpose"))
                nxt[nk] = dst
        cur, lanes = nxt, new_lanes
    if tuple(lanes) != tuple(dlanes):
        raise GenError(f"transpose network ends in lanes {lanes}, not {dlanes}")
    _check_network(ops, srcs, src_layout, dsts, dst_layout)
    return ops


def _check_network(ops, srcs, src_layout, dsts, dst_layout) -> None:
    def labels(layout, j, nl):
        vb, lb = layout
        return [sum((j >> i & 1) << b for i, b in enumerate(vb)) + sum((e >> i & 1) << b for i, b in enumerate(lb))
                for e in range(nl)]
    nl = 1 << len(src_layout[1])
    env = {s: labels(src_layout, j, nl) for j, s in enumerate(srcs)}
    for op in ops:
        env[op.dst] = [env[op.srcs[s]][k] for s, k in op.lanes]
    for i, d in enumerate(dsts):
        if env.get(d) != labels(dst_layout, i, nl):
            raise GenError(f"transpose network: {d} holds words {env.get(d)}")  # pragma: no cover
