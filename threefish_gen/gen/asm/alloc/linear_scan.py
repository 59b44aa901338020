"""The ``linear-scan`` strategy (Poletto/Sarkar): interval colouring; when registers run out
the interval that ends furthest away is spilled for its whole life (its uses become memory
operands or go through reserved scratch registers)."""
from __future__ import annotations

from .common import Emitter, check_pins, color, scratch_regs
from .fixed import fixed_emit


def linear_scan(ops, isa, regs_of: dict, names: list, pinned_vals: set) -> tuple[Emitter, dict]:
    assign, spilled = color(ops, isa, regs_of, set(names), False, pinned_vals)
    scratch = {}
    if spilled:
        scratch = scratch_regs(isa, regs_of)
        avail = {c: [r for r in rs if r not in scratch.get(c, ())] for c, rs in regs_of.items()}
        check_pins(ops, isa, avail, pinned_vals)
        assign, spilled = color(ops, isa, avail, set(names), False, pinned_vals)
    return fixed_emit(ops, isa, "linear-scan", assign, spilled, scratch), assign
