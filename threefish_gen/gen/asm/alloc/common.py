"""Shared by the strategies: the instruction emitter (stack slots, homes, statistics), the
parallel move of the entry, interval colouring, scratch registers and the selection of
values by group (``--pin k,t``)."""
from __future__ import annotations

import re

from ...errors import GenError
from ..ir import POINTERS, AOp, Reg, Slot, natural
from ..liveness import intervals
from ..machine import ISA

GROUPS = {"k": "key words k0..kN", "t": "tweak words t0, t1, t2",
          "x": "state words x0..", "p": "pointers key/tweak/in/out and the count n"}


class Emitter:
    """Collects the allocated code of one function."""

    def __init__(self, isa: ISA, strategy: str):
        self.isa = isa
        self.code: list[AOp] = []
        self.slots: dict = {}
        self.homes: dict[str, set] = {}
        self.stats = dict(spills=0, reloads=0, moves=0, memops=0)
        self.rings: dict = {}     # frame rings of the cycle loop (ir.ring_sizes): their slots in index order

    def slot(self, key: tuple) -> Slot:
        self.slots.setdefault(key, len(self.slots))
        return Slot(key)

    def array_slot(self, a) -> Slot:
        """The stack slot of a frame array word (Addr with no base): subkeys, constants (a ring's
        words all get their slots at its first word, in index order)."""
        if a.array in self.rings:
            for j in range(self.rings[a.array]):
                self.slot(("a", a.array, j))
        return self.slot(("const", a.index) if a.array == "const" else ("a", a.array, a.index))

    def vslot(self, v: str) -> Slot:
        if v in POINTERS and v not in self.isa.arg_regs:
            return self.slot(("arg", v))
        return self.slot(("v", v))

    def spill(self, v: str, r: str, why: str) -> None:
        self.emit(AOp("mov", self.isa.cls(v), self.vslot(v), Reg(r), why, "spill"))

    def emit(self, op: AOp) -> None:
        if op.role in ("spill", "reload", "move", "memop"):
            self.stats[op.role + "s"] += 1
        self.code.append(op)

    def home(self, v: str, r: str) -> None:
        self.homes.setdefault(v, set()).add(r)


def entry(em: Emitter, fixed: dict, place, clear=None) -> None:
    """Pointer arguments from their ABI registers (or the stack) to their first homes: those
    with a fixed register (``fixed``: value -> register) all at once (``clear(moves)`` first
    makes the destinations free), stack arguments reloaded after; ``place(v, reg)`` decides
    for the others (keep in the argument register, or spill)."""
    isa = em.isa
    moves = []
    for v in POINTERS:
        src = isa.arg_regs.get(v)
        if v in fixed:
            if src:
                moves.append((src, fixed[v], v))
        elif src:
            place(v, src)
    if clear:
        clear(moves)
    parallel_move(em, isa.ptr_class, moves)
    for v in POINTERS:
        if v in fixed and not isa.arg_regs.get(v):
            em.emit(AOp("mov", isa.ptr_class, Reg(fixed[v]), em.vslot(v), f"{v} from the stack", "reload"))


def parallel_move(em: Emitter, cls: str, moves: list[tuple[str, str, str]]) -> None:
    """Registers src -> dst all at once (value names for comments); cycles via xchg."""
    moves = [(s, d, v) for s, d, v in moves if s != d]
    while moves:
        srcs = {s for s, _, _ in moves}
        ready = [m for m in moves if m[1] not in srcs]
        if ready:
            s, d, v = ready[0]
            em.emit(AOp("mov", cls, Reg(d), Reg(s), f"{v}: {s} -> {d}", "move"))
            moves.remove(ready[0])
            continue
        s, d, v = moves[0]
        em.emit(AOp("xchg", cls, Reg(d), Reg(s), f"{v}: {s} <-> {d}", "move"))
        moves = [(d if ms == s else (s if ms == d else ms), md, mv) for ms, md, mv in moves[1:]]
        moves = [m for m in moves if m[0] != m[1]]


# --------------------------------------------------------------------------- fixed assignments

def color(ops, isa: ISA, regs_of: dict, values: set[str], fail_named: bool, pinned=frozenset()):
    """Interval colouring of ``values`` (one register per value for its whole life), pinned


    interval that ends furthest away is spilled (linear scan)."""
    iv = intervals(ops)
    order = sorted((v for v in values if v in iv), key=lambda v: (v not in pinned, iv[v][0], v))
    assign: dict[str, str] = {}
    spilled: set[str] = set()

    def overlap(a: str, b: str) -> bool:
        (s1, e1), (s2, e2) = iv[a], iv[b]
        return s1 < e2 and s2 < e1 or s1 == s2

    for v in order:
        cls = isa.cls(v)
        taken = {assign[a] for a in assign if overlap(a, v)}
        free = [r for r in regs_of[cls] if r not in taken]
        if free:
            pref = isa.arg_regs.get(v)
            assign[v] = pref if pref in free else free[0]
            continue
        if fail_named:
            start = max(iv[v][0], 0)
            live = sorted((a for a in values if a in iv and isa.cls(a) == cls
                           and iv[a][0] <= start <= iv[a][1]), key=natural)
            raise GenError(f"cannot allocate {v}: {len(live)} {cls} values live at {where(ops, iv[v][0])} "
                           f"({', '.join(live)}) but only {len(regs_of[cls])} {cls} registers")
        cands = [a for a in assign if a not in pinned and isa.cls(a) == cls and overlap(a, v)]
        far = max(cands, key=lambda a: (iv[a][1], a), default=None)
        if far is not None and iv[far][1] > iv[v][1]:
            r = assign.pop(far)
            spilled.add(far)
            if not any(assign[a] == r and overlap(a, v) for a in assign):
                assign[v] = r
                continue
        spilled.add(v)
    return assign, spilled


def where(ops, i: int) -> str:
    if i < 0:
        return "function entry"
    o = ops[i]
    return f"op {i} '{o.text or o.kind}'"


def scratch_regs(isa: ISA, regs_of: dict) -> dict:
    sc = {}
    for c, n in isa.scratch.items():
        rs = regs_of[c]
        if len(rs) <= n:
            raise GenError(f"--registers {len(rs)} leaves no {c} register beside the {n} scratch")
        sc[c] = rs[-n:]
    return sc


def check_pins(ops, isa: ISA, regs_of: dict, pinned_vals: set) -> None:
    """Pinned values alone must fit (else: one-line error naming them)."""
    if pinned_vals:
        color(ops, isa, regs_of, pinned_vals, True, pinned_vals)


def group_of(v: str) -> str:
    if v in POINTERS:
        return "p"
    m = re.match(r"^([a-z]+?)[a-d]?(\d+|k)$", v)
    if m and m.group(1) in ("k", "t", "x"):
        return m.group(1)
    if re.match(r"^t[a-d]?(k|s|\d+h)$", v):    # tk (table temporary), ts (the loop form's spare tweak word),
                                                # t1h (packed: t1 in the high lane)
        return "t"
    return "?"


def select(spec_text: str, names) -> set[str]:
    """Values named by a list like 'k,t' (groups) or 'x0,x1,in' (values)."""
    chosen: set[str] = set()
    names = list(names)
    for part in [p.strip() for p in spec_text.split(",") if p.strip()]:
        if part in GROUPS:
            chosen |= {v for v in names if group_of(v) == part}
        elif part in names:
            chosen.add(part)
        else:
            raise GenError(f"--pin: unknown value or group {part!r} (groups: {', '.join(GROUPS)}; "
                           f"or value names like x0, k3, in)")
    return chosen
