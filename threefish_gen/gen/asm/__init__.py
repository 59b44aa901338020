"""The assembly backend: lowering to machine ops on values, liveness, register allocation
(one module per strategy under ``alloc/``) and the allocation checker.

    description Program --schedule--> layout IR (W = 1 | lanes | packed)
        --lower / lower_lanes / lower_packed--> [MOp] --allocate--> Allocation [AOp] --check--> printer

``allocate`` is the one entry: it runs a strategy, applies the debug corruption hook
(``THREEFISH_GEN_CORRUPT_ALLOC``, docs/nasm.md) and then the allocation checker
(:mod:`gen.asm.check`), so every allocation that reaches a printer, the verifier, the bench or
the allocation report has been proved to read, at every use, the value the program names.

Strategies (``STRATEGIES``): ``named`` (qhasm style, one register per value, stack groups in
slots), ``linear-scan`` (Poletto/Sarkar, whole-life spills), ``belady`` (furthest next use
evicted: the optimal number of reloads for straight-line code).  Everywhere a spilled value is
only read, a memory operand is used instead of a reload when the ISA has that form (``add r64,
m64``; ``paddq xmm, m128`` from an aligned stack slot).  ``pinned`` values (``--pin k,t,x,p``
or value names) get one fixed register for their whole life under every strategy.
"""
from __future__ import annotations

from ..errors import GenError
from .alloc.belady import belady
from .alloc.common import GROUPS, select
from .alloc.linear_scan import linear_scan
from .alloc.named import named
from .check import AllocationCheckError, corrupt_from_env
from .check import check as check_allocation
from .ir import COUNTER, DEFS, POINTERS, Addr, Allocation, AOp, Imm, MOp, PtrMem, Reg, RingMem, Slot, natural
from .liveness import carried, cycle_bounds, cycle_carried, intervals, loop_bounds, next_uses
from .lowering import SCHEDULES, Lowering, lower, lower_lanes
from .lower_packed import lower_packed
from .machine import ISA, ISAS, LAYOUTS, isa_for

STRATEGIES = ("named", "linear-scan", "belady")


def assign(ops: list[MOp], isa: ISA, strategy: str = "belady", registers: int | None = None,
           pin: str = "", stack: str = "k,t", live: dict | None = None) -> Allocation:
    """Run one allocation strategy over lowered ops (no check: the pipeline's next pass, or
    :func:`allocate`, checks it).  ``registers`` limits the data class (the first N registers of
    its allocation order); ``pin`` names values or groups that keep one register for their whole
    life; ``stack`` (named only) the values kept in slots; ``live``: the liveness pass's
    intervals (computed here when absent)."""
    if strategy not in STRATEGIES:
        raise GenError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    regs_of = {c: list(rs) for c, rs in isa.regs.items()}
    if registers is not None:
        full = isa.regs[isa.data_class]
        if not 1 <= registers <= len(full):
            raise GenError(f"--registers must be 1..{len(full)} for {isa.name}, not {registers}")
        regs_of[isa.data_class] = list(full[:registers])
    names = list(live if live is not None else intervals(ops))
    pinned_vals = select(pin, names) if pin else set()
    if strategy == "named":
        em, assigned = named(ops, isa, regs_of, names, pinned_vals, stack)
    elif strategy == "linear-scan":
        em, assigned = linear_scan(ops, isa, regs_of, names, pinned_vals)
    else:
        em, assigned = belady(ops, isa, regs_of, names, pinned_vals)
    code = em.code
    used: dict[str, set] = {}
    for op in code:
        for x in (op.dst, op.src):
            r = x.reg if isinstance(x, (PtrMem, RingMem)) else x
            if isinstance(r, Reg) and op.cls:
                c = isa.ptr_class if isinstance(x, (PtrMem, RingMem)) else op.cls
                used.setdefault(c, set()).add(r.name)
    for c in used:
        used[c] = sorted(used[c], key=lambda r: isa.regs[c].index(r) if r in isa.regs[c] else 99)
    stats = dict(em.stats)
    stats["instructions"] = sum(1 for op in code if op.kind not in ("note", "top", "bottom", "ctop", "cbottom"))
    alloc = Allocation(strategy, code, {v: sorted(rs) for v, rs in em.homes.items()},
                       sorted(em.slots, key=lambda k: em.slots[k]), used, stats,
                       {v: assigned[v] for v in pinned_vals if v in assigned})
    corrupt_from_env(alloc)
    return alloc


def allocate(ops: list[MOp], isa: ISA, strategy: str = "belady", registers: int | None = None,
             pin: str = "", stack: str = "k,t") -> Allocation:
    """:func:`assign`, then the allocation checker: what every caller outside a pipeline uses."""
    alloc = assign(ops, isa, strategy, registers, pin, stack)
    check_allocation(ops, isa, alloc)
    return alloc


__all__ = ["STRATEGIES", "SCHEDULES", "GROUPS", "ISAS", "LAYOUTS", "COUNTER", "DEFS", "POINTERS", "Addr", "Allocation",
           "AllocationCheckError", "AOp", "Imm", "ISA", "Lowering", "MOp", "PtrMem", "Reg", "RingMem", "Slot", "allocate",
           "assign", "carried", "cycle_bounds", "cycle_carried", "check_allocation", "intervals", "isa_for",
           "loop_bounds", "lower", "lower_lanes", "lower_packed", "natural", "next_uses", "select"]
