"""Liveness over the lowered program: the straight-line code plus the one block loop (and,
--unroll loop, the cycle loop inside it); a value live into a loop (key words, pointers, the
counter) is live through its whole body."""
from __future__ import annotations

from .ir import DEFS, POINTERS, MOp


def loop_bounds(ops: list[MOp]) -> tuple[int, int]:
    """Positions of the ``top`` and ``bottom`` ops of the block loop."""
    top = next(i for i, o in enumerate(ops) if o.kind == "top")
    bottom = next(i for i, o in enumerate(ops) if o.kind == "bottom")
    return top, bottom


def cycle_bounds(ops: list[MOp]):
    """Positions of ``ctop`` and ``cbottom`` of the cycle loop (--unroll loop), or None."""
    top = next((i for i, o in enumerate(ops) if o.kind == "ctop"), None)
    if top is None:
        return None
    return top, next(i for i, o in enumerate(ops) if o.kind == "cbottom")


def _exposed(ops: list[MOp], start: int, end: int) -> tuple[set, set]:
    """(values read in ops[start:end] before any write, values written there without a read)."""
    written, live = set(), set()
    for o in ops[start:end]:
        for r in o.reads():
            if r not in written:
                live.add(r)
        w = o.writes()
        if w and o.kind in DEFS:
            written.add(w)
    return live, written


def cycle_carried(ops: list[MOp]) -> tuple[set, set]:
    """(values live at the cycle loop's head, those of them read in the loop before any write):
    read in the loop before being written, or live after the loop (read after it before a write,
    or carried around the block loop and not written after it) and not written in the loop."""
    cb = cycle_bounds(ops)
    if cb is None:
        return set(), set()
    ctop, cbottom = cb
    top, bottom = loop_bounds(ops)
    exposed, written = _exposed(ops, ctop, cbottom)
    after, after_written = _exposed(ops, cbottom + 1, bottom)
    out = after | (carried(ops) - after_written)
    return exposed | (out - written), exposed


def carried(ops: list[MOp]) -> set[str]:
    """Values live into the block loop: read in the loop before (or without) being written."""
    top, bottom = loop_bounds(ops)
    return _exposed(ops, top, bottom)[0]


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
    cb = cycle_bounds(ops)
    if cb:
        for v in cycle_carried(ops)[0]:
            if v in iv:
                iv[v][1] = max(iv[v][1], cb[1])
    return {v: (a, b) for v, (a, b) in iv.items() if b >= 0}


def next_uses(ops: list[MOp]) -> list[dict[str, int]]:
    """nxt[i][v]: position of v's next read after op i (carried values: the loop bottom,
    where they must be back in their home, when no read is left in the iteration; a value the
    cycle loop reads before writing: at most its bottom, the next iteration reads it again)."""
    top, bottom = loop_bounds(ops)
    car = carried(ops)
    cb = cycle_bounds(ops)
    exposed = cycle_carried(ops)[1] if cb else set()
    n = len(ops)
    nxt: list[dict[str, int]] = [dict() for _ in range(n)]
    cur: dict[str, int] = {}
    for i in range(n - 1, -1, -1):
        nxt[i] = dict(cur)
        if top <= i < bottom:
            for v in car:
                nxt[i].setdefault(v, bottom)
        if cb and cb[0] <= i < cb[1]:
            for v in exposed:
                nxt[i][v] = min(nxt[i].get(v, cb[1]), cb[1])
        w = ops[i].writes()
        if w and ops[i].kind in DEFS:
            cur.pop(w, None)
        for v in ops[i].reads():
            cur[v] = i
    return nxt
