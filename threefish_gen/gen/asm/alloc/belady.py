"""The ``belady`` strategy: walk the program keeping values in registers; when a register is
needed and none is free, evict the value whose next use is furthest away (stored only if its
stack copy is stale).  For straight-line code this is the optimal number of reloads
(Belady's MIN).  Loop-carried values of a class stay in registers across the block loop when
they fit beside the block's peak pressure, else they live in their stack slots at the loop
header (reloaded on demand, used as memory operands)."""
from __future__ import annotations

from ...errors import GenError
from ..ir import COUNTER, DEFS, Addr, AOp, PtrMem, Reg, RingMem, natural, ring_sizes
from ..liveness import carried, cycle_bounds, cycle_carried, intervals, loop_bounds, next_uses
from ..machine import ISA
from .common import Emitter, check_pins, color, entry


class Belady:
    def __init__(self, ops, isa: ISA, pool: dict, pinned: dict):
        self.ops, self.isa, self.pool, self.pinned = ops, isa, pool, pinned
        self.em = Emitter(isa, "belady")
        self.nxt = next_uses(ops)
        self.top, self.bottom = loop_bounds(ops)
        self.car = carried(ops)
        self.where: dict[str, str] = {}      # value -> register (unpinned values in registers)
        self.owner: dict[str, str] = {}      # register -> value
        self.dirty: set[str] = set()         # register copy newer than the stack copy
        self.header: dict[str, str] = {}     # carried value -> its register at the loop header
        self.busy: set[str] = set()          # registers the current instruction uses
        self.written_in_loop = {o.writes() for o in ops[self.top:self.bottom] if o.writes()}
        self.keep_class = self._keep_classes()
        # the cycle loop of --unroll loop: its bounds, values live at its head, its header state
        self.cycle = cycle_bounds(ops)
        self.car_c, self.exposed_c = cycle_carried(ops)
        self.header_c: dict[str, str] = {}
        self.stored_c: set[str] = set()      # values the cycle header stores to their slots
        self.em.rings = ring_sizes(ops)
        for v, r in pinned.items():
            self.em.home(v, r)

    def carried_anywhere(self, v: str) -> bool:
        return v in self.car or v in self.car_c

    def _keep_classes(self) -> dict:
        """A class keeps its carried values in registers across the loop only if they fit beside
        the values each block needs at its peak; otherwise they live in their stack slots at the
        loop header -- restoring evicted header registers every block costs more than it saves
        under pressure."""
        iv, isa, car, pinned = intervals(self.ops), self.isa, self.car, self.pinned
        top, bottom = self.top, self.bottom
        # per class, how many of its values (neither carried nor pinned) are live at each op of
        # the loop body: +1 where an interval enters [top, bottom), -1 after it ends (one sweep)
        delta = {c: [0] * (bottom - top + 1) for c in self.pool}
        for v, (a, b) in iv.items():
            c = isa.cls(v)
            lo, hi = max(a, top), min(b, bottom - 1)
            if c in delta and lo <= hi and v not in car and v not in pinned:
                delta[c][lo - top] += 1
                delta[c][hi - top + 1] -= 1
        keep = {}
        for c, rs in self.pool.items():
            peak = live = 0
            for d in delta[c][:-1]:
                live += d
                peak = max(peak, live)
            ncar = sum(1 for v in car if isa.cls(v) == c and v not in pinned)
            keep[c] = ncar + peak <= len(rs)
        return keep

    # ---- register state

    def regof(self, v):
        return self.pinned[v] if v in self.pinned else self.where.get(v)

    def bind(self, v: str, r: str) -> None:
        self.where[v], self.owner[r] = r, v
        self.em.home(v, r)

    def drop(self, v):
        r = self.where.pop(v)
        del self.owner[r]
        self.dirty.discard(v)

    def hold(self, r: str) -> str:
        self.busy.add(r)
        return r

    def spill(self, v: str, r: str, why: str) -> None:
        self.em.spill(v, r, why)

    def get_reg(self, cls: str, i: int) -> str:
        """A free register of cls, or the one whose value is next used furthest away."""
        pool, owner, busy, nxt = self.pool, self.owner, self.busy, self.nxt
        for r in pool[cls]:
            if r not in owner and r not in busy:
                return r
        cands = [r for r in pool[cls] if r not in busy]
        if not cands:
            isa = self.isa
            live = sorted({owner.get(r, r) for r in busy} | {v for v in self.where if isa.cls(v) == cls}
                          | {v for v in self.pinned if isa.cls(v) == cls}, key=natural)
            raise GenError(f"belady: no {cls} register left for '{self.ops[i].text}': live there "
                           f"{', '.join(live)} ({len(pool[cls])} {cls} registers)")

        def score(r):      # furthest next use; among equals prefer clean (no store needed)
            v = owner[r]
            return (nxt[i - 1].get(v, 1 << 30) if i else 1 << 30, v not in self.dirty, r)
        r = max(cands, key=score)
        v = owner[r]
        if v in self.dirty and (nxt[i - 1].get(v) is not None or self.carried_anywhere(v)):
            self.spill(v, r, f"spill {v}")
        self.drop(v)
        return r

    def load(self, v: str, i: int, why: str) -> str:
        r = self.regof(v)
        if r:
            return r
        cls = self.isa.cls(v)
        r = self.get_reg(cls, i)
        self.em.emit(AOp("mov", cls, Reg(r), self.em.vslot(v), f"reload {v} for '{why}'", "reload"))
        self.bind(v, r)
        return r

    def free_dead(self, i: int):
        for v in list(self.where):
            if self.nxt[i].get(v) is None:
                self.drop(v)

    def flush(self):
        for v in sorted(self.where):
            if v in self.dirty and v in self.car:
                self.spill(v, self.where[v], f"{v} back to its stack slot")
                self.dirty.discard(v)

    # ---- the function

    def entry(self) -> None:
        """Pointer arguments: pinned ones to their registers, the others stay in their argument
        registers where the pool has them (else their stack slots)."""
        isa = self.isa

        def place(v: str, r: str) -> None:
            if r in self.pool[isa.ptr_class] and r not in self.pinned.values():
                self.bind(v, r)
                self.dirty.add(v)
            else:
                self.spill(v, r, f"{v} to its stack slot")

        def clear(moves) -> None:
            """pinned registers that receive arguments must not hold live unpinned arguments first"""
            for _, d, _ in moves:
                if d in self.owner:
                    u = self.owner[d]
                    self.drop(u)
                    self.spill(u, d, f"{u} to its stack slot")

        entry(self.em, self.pinned, place, clear)

    def at_top(self, i: int, o) -> None:
        """Loop header state: carried values in registers stay there (their stack copies are
        written once here); the loop bottom puts them back where they were."""
        self.flush()
        for v in list(self.where):
            if v not in self.car or not self.keep_class.get(self.isa.cls(v)):
                self.drop(v)
        self.header = dict(self.where)
        for v in self.header:
            if v in self.written_in_loop:
                self.dirty.add(v)      # its stack copy goes stale on later iterations
        self.em.code.append(AOp("top", "", text=o.text, mop=i))

    def at_bottom(self, i: int, o) -> None:
        where, em = self.where, self.em
        for v in sorted(where, key=natural):
            # (a value the cycle header stored, back at the block loop's header in its register:
            # its slot too, so that every copy at the header holds it)
            if v in self.car and v in self.dirty and (self.header.get(v) != where[v] or v in self.stored_c):
                self.spill(v, where[v], f"{v} back to its stack slot")
                self.dirty.discard(v)
        for v, r in sorted(self.header.items(), key=lambda t: natural(t[0])):
            if where.get(v) != r:
                em.emit(AOp("mov", self.isa.cls(v), Reg(r), em.vslot(v),
                            f"{v} back into {r} for the next block", "reload"))
        em.code.append(AOp("bottom", "", text=o.text, mop=i))

    # ---- the cycle loop (--unroll loop)

    def at_ctop(self, i: int, o) -> None:
        """Cycle loop header: the values it reads first (the counter first, then by first read)
        stay in registers as far as they fit beside its other values at their peak; every other
        value live there goes to its stack slot (stored if its slot is stale)."""
        ctop, cbottom = self.cycle
        isa, pinned = self.isa, self.pinned
        iv = intervals(self.ops)
        first = {}
        for j in range(ctop, cbottom):
            for v in self.ops[j].reads():
                first.setdefault(v, j)
        keep = set()
        for c, rs in self.pool.items():
            peak = 0
            for j in range(ctop, cbottom):
                peak = max(peak, sum(1 for v, (a, b) in iv.items() if isa.cls(v) == c and a <= j <= b
                                     and v not in self.car_c and v not in pinned))
            cands = sorted((v for v in self.where if v in self.exposed_c and isa.cls(v) == c),
                           key=lambda v: (v != COUNTER, first.get(v, cbottom), natural(v)))
            keep |= set(cands[:max(len(rs) - peak, 0)])
        for v in sorted(self.where, key=natural):
            if v in keep:
                continue
            if v in self.dirty and v in self.car_c:
                self.spill(v, self.where[v], f"{v} to its stack slot for the cycle loop")
                self.stored_c.add(v)
            self.drop(v)
        self.header_c = dict(self.where)
        written = {x.writes() for x in self.ops[ctop:cbottom] if x.writes()}
        for v in self.header_c:
            if v in written:
                self.dirty.add(v)      # its stack copy goes stale on later iterations
        self.em.code.append(AOp("ctop", "", text=o.text, mop=i))

    def at_cbottom(self, i: int, o) -> None:
        """Back to the header state for the next cycle (the exit path continues from it too)."""
        where, em = self.where, self.em
        for v in sorted(where, key=natural):
            if v in self.car_c and v in self.dirty and self.header_c.get(v) != where[v]:
                self.spill(v, where[v], f"{v} back to its stack slot")
                self.dirty.discard(v)
        for v, r in sorted(self.header_c.items(), key=lambda t: natural(t[0])):
            if where.get(v) == r:
                continue
            u = self.owner.get(r)
            if u is not None:
                if u in self.dirty and self.nxt[i].get(u) is not None:
                    self.spill(u, r, f"{u} to its stack slot")
                self.drop(u)
            if v in where:
                self.drop(v)
            em.emit(AOp("mov", self.isa.cls(v), Reg(r), em.vslot(v), f"{v} back into {r} for the next cycle",
                        "reload"))
            self.bind(v, r)
        r = self.regof(o.dst)
        em.code.append(AOp("cbottom", self.isa.ptr_class, Reg(r) if r else em.vslot(o.dst), o.src, o.text, mop=i))

    def mem(self, a: Addr, i: int, why: str):
        if a.counter:
            return RingMem(Reg(self.hold(self.load(a.counter, i, why))), a.array, a.index)
        if a.base is None:
            return self.em.array_slot(a)
        return PtrMem(Reg(self.hold(self.load(a.base, i, why))), a.offset, a.array)

    def source(self, i: int, o, cls: str):
        """The source operand of op i: a register, a memory operand or an immediate."""
        src, isa, em = o.src, self.isa, self.em
        if isinstance(src, str):
            r = self.regof(src)
            if r:
                return Reg(self.hold(r))
            if isa.mem_ok(o.kind, cls, Addr(None, "", 0)):
                em.stats["memops"] += 1
                return em.vslot(src)
            return Reg(self.hold(self.load(src, i, o.text)))
        if isinstance(src, Addr):
            m = self.mem(src, i, o.text)
            if not isa.mem_ok(o.kind, cls, src) and o.kind != "mov":
                t = self.hold(self.get_reg(cls, i))
                em.emit(AOp("mov", cls, Reg(t), m, f"load {src} for '{o.text}'", "load", mop=i))
                return Reg(t)
            return m
        return src

    def instruction(self, i: int, o) -> None:
        isa, em = self.isa, self.em
        self.busy = set()
        if o.kind == "guard":
            r = self.regof("n")
            em.emit(AOp("guard", isa.ptr_class, None, Reg(r) if r else em.vslot("n"), o.text, mop=i))
            self.free_dead(i)
            return
        if o.kind == "store":
            a = self.mem(o.addr, i, o.text)
            s = Reg(self.hold(self.load(o.src, i, o.text)))
            em.emit(AOp("mov", isa.cls(o.src), a, s, o.text, mop=i))
            self.free_dead(i)
            return
        cls = isa.cls(o.dst)
        src_op = self.source(i, o, cls)
        d, src = o.dst, o.src
        if o.kind in DEFS:
            rd = self.regof(d)
            if rd is None:
                # a value copy whose source dies here takes over the source's register (not in the
                # cycle loop: its tweak words rotate through copies, each spilled where it stands,
                # and the checker follows a copy from its instruction)
                if (o.kind == "mov" and isinstance(src, str) and src in self.where
                        and self.nxt[i].get(src) is None and src not in self.car
                        and not (self.cycle and self.cycle[0] < i < self.cycle[1])):
                    r = self.where[src]
                    self.drop(src)
                    self.bind(d, r)
                    self.dirty.add(d)
                    self.free_dead(i)
                    return
                rd = self.get_reg(cls, i)
                self.bind(d, rd)
            em.emit(AOp(o.kind, cls, Reg(rd), src_op, o.text,
                        "move" if o.kind == "mov" and isinstance(src_op, Reg) else "", mop=i))
        else:
            rd = self.load(d, i, o.text)
            em.emit(AOp(o.kind, cls, Reg(rd), src_op, o.text, mop=i))
        if d not in self.pinned:
            self.dirty.add(d)
        self.free_dead(i)

    def run(self) -> Emitter:
        self.entry()
        for i, o in enumerate(self.ops):
            if o.kind == "note":
                self.em.code.append(AOp("note", "", text=o.text))
            elif o.kind == "top":
                self.at_top(i, o)
            elif o.kind == "bottom":
                self.at_bottom(i, o)
            elif o.kind == "ctop":
                self.at_ctop(i, o)
            elif o.kind == "cbottom":
                self.at_cbottom(i, o)
            else:
                self.instruction(i, o)
        return self.em


def belady(ops, isa: ISA, regs_of: dict, names: list, pinned_vals: set) -> tuple[Emitter, dict]:
    """Pinned values get one register each (interval colouring), the rest of each class is the
    pool the walk allocates from."""
    pinned: dict[str, str] = {}
    if pinned_vals:
        check_pins(ops, isa, regs_of, pinned_vals)
        pinned, _ = color(ops, isa, regs_of, pinned_vals, True, pinned_vals)
    pool = {c: [r for r in rs if r not in pinned.values()] for c, rs in regs_of.items()}
    for c in pool:
        if not pool[c] and any(isa.cls(v) == c and v not in pinned for v in names):
            raise GenError(f"no {c} register left for unpinned values after pinning "
                           f"{', '.join(sorted(pinned_vals))}")
    return Belady(ops, isa, pool, pinned).run(), pinned
