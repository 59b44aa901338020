"""Liveness over the lowered program: the straight-line code plus the one block loop; a
value live into the loop (key words, pointers, the counter) is live through the whole body."""
from __future__ import annotations

from .ir import DEFS, POINTERS, MOp


def loop_bounds(ops: list[MOp]) -> tuple[int, int]:
    """Positions of the ``top`` and ``bottom`` ops of the block loop."""
    top = next(i for i, o in enumerate(ops) if o.kind == "top")
    bottom = next(i for i, o in enumerate(ops) if o.kind == "bottom")
    return top, bottom


def carried(ops: list[MOp]) -> set[str]:
    """Values live into the block loop: read in the loop before (or without) being written."""
    top, bottom = loop_bounds(ops)
    written, live = set(), set()
    for o in ops[top:bottom]:
        for r in o.reads():
            if r not in written:
                live.add(r)
        w = o.writes()
        if w and o.kind in DEFS:
            written.add(w)
    return live


def intervals(ops: list[MOp]) -> dict[str, tuple[int, int]]:
    """Live interval [first def, last use] of every value; loop-carried values span the loop."""
    top, bottom = loop_bounds(ops)
    iv: dict[str, list[int]] = {}
    for v in POINTERS:
        iv[v] = [-1, -1]          # defined at entry (arguments)
    for i, o in enumerate(ops):
        for v in o.reads():
            iv.setdefault(v, [i, i])[1] = i
        w = o.writes()
        if w:
            iv.setdefault(w, [i, i])
            iv[w][1] = max(iv[w][1], i)
    for v in carried(ops):
        iv[v][1] = max(iv[v][1], bottom)
    return {v: (a, b) for v, (a, b) in iv.items() if b >= 0}


def next_uses(ops: list[MOp]) -> list[dict[str, int]]:
    """nxt[i][v]: position of v's next read after op i (carried values: the loop bottom,
    where they must be back in their home, when no read is left in the iteration)."""
    top, bottom = loop_bounds(ops)
    car = carried(ops)
    n = len(ops)
    nxt: list[dict[str, int]] = [dict() for _ in range(n)]
    cur: dict[str, int] = {}
    for i in range(n - 1, -1, -1):
        nxt[i] = dict(cur)
        if top <= i < bottom:
            for v in car:
                nxt[i].setdefault(v, bottom)
        w = ops[i].writes()
        if w and ops[i].kind in DEFS:
            cur.pop(w, None)
        for v in ops[i].reads():
            cur[v] = i
    return nxt
