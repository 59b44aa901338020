"""Code for a fixed assignment (the ``named`` and ``linear-scan`` strategies): every value in
``assign`` lives in its one register for its whole life, every value in ``stack`` in its stack
slot; slot values are used as memory operands where the ISA has the form, else they go
through the reserved scratch registers."""
from __future__ import annotations

from ...errors import GenError
from ..ir import DEFS, Addr, AOp, PtrMem, Reg, RingMem, Slot, ring_sizes
from ..machine import ISA
from .common import Emitter, entry


def fixed_emit(ops, isa: ISA, strategy: str, assign: dict, stack: set, scratch: dict) -> Emitter:
    em = Emitter(isa, strategy)
    em.rings = ring_sizes(ops)
    for v, r in assign.items():
        em.home(v, r)
    entry(em, assign, lambda v, r: em.spill(v, r, f"{v} to its stack slot") if v in stack else None)

    def loc(v: str):
        return Reg(assign[v]) if v in assign else em.vslot(v)

    for i, o in enumerate(ops):
        if o.kind == "note":
            em.code.append(AOp("note", "", text=o.text))
            continue
        if o.kind in ("top", "bottom", "ctop"):
            em.code.append(AOp(o.kind, "", text=o.text, mop=i))
            continue
        if o.kind == "cbottom":
            em.code.append(AOp(o.kind, isa.ptr_class, loc(o.dst), o.src, o.text, mop=i))
            continue
        free = {c: list(rs) for c, rs in scratch.items()}

        def take(cls: str) -> str:
            if not free.get(cls):
                raise GenError(f"{strategy}: no scratch {cls} register for '{o.text}' "
                               f"(raise --registers or pin fewer values)")
            return free[cls].pop(0)

        def in_reg(v: str, cls: str):
            """v's register, or a scratch register it is reloaded into."""
            s = loc(v)
            if isinstance(s, Slot):
                r = take(cls)
                em.emit(AOp("mov", cls, Reg(r), s, f"reload {v} for '{o.text}'", "reload"))
                s = Reg(r)
            return s

        def mem(a: Addr):
            if a.counter:
                return RingMem(in_reg(a.counter, isa.ptr_class), a.array, a.index)
            if a.base is None:
                return em.array_slot(a)
            return PtrMem(in_reg(a.base, isa.ptr_class), a.offset, a.array)

        if o.kind == "guard":
            em.emit(AOp("guard", isa.ptr_class, None, loc("n"), o.text, mop=i))
            continue
        if o.kind == "store":
            cls = isa.cls(o.src)
            s = in_reg(o.src, cls)
            a = mem(o.addr)
            em.emit(AOp("mov", cls, a, s, o.text, mop=i))
            continue
        cls = isa.cls(o.dst)
        src = o.src
        if isinstance(src, str):
            s = loc(src)
            if isinstance(s, Slot) and not isa.mem_ok(o.kind, cls, Addr(None, "", 0)):
                s = in_reg(src, cls)
            elif isinstance(s, Slot):
                em.stats["memops"] += 1
            src_op = s
        elif isinstance(src, Addr):
            m = mem(src)
            if not isa.mem_ok(o.kind, cls, src):
                r = take(cls)
                em.emit(AOp("mov", cls, Reg(r), m, f"load {src} for '{o.text}'", "load", mop=i))
                src_op = Reg(r)
            else:
                src_op = m
        else:
            src_op = src     # Imm or a shift count
        d = loc(o.dst)
        if isinstance(d, Slot):
            r = take(cls)
            if o.kind not in DEFS:
                em.emit(AOp("mov", cls, Reg(r), d, f"reload {o.dst} for '{o.text}'", "reload"))
            em.emit(AOp(o.kind, cls, Reg(r), src_op, o.text, mop=i))
            em.emit(AOp("mov", cls, d, Reg(r), f"spill {o.dst}", "spill"))
        else:
            if o.kind == "mov" and src_op == d:
                continue
            em.emit(AOp(o.kind, cls, d, src_op, o.text, "move" if o.kind == "mov" and isinstance(src_op, Reg) else "",
                        mop=i))
    return em
