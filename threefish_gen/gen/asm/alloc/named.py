"""The ``named`` strategy (qhasm style): every register value keeps one register for its
whole life; values of the *stack groups* (default: key and tweak words) live in stack slots
and are used as memory operands.  Nothing is spilled: if the register values do not fit,
allocation fails with the values live there."""
from __future__ import annotations

from .common import Emitter, color, scratch_regs, select
from .fixed import fixed_emit


def named(ops, isa, regs_of: dict, names: list, pinned_vals: set, stack: str) -> tuple[Emitter, dict]:
    on_stack = select(stack, names) - pinned_vals if stack else set()
    scratch = scratch_regs(isa, regs_of) if on_stack else {}
    avail = {c: [r for r in rs if r not in scratch.get(c, ())] for c, rs in regs_of.items()}
    assign, _ = color(ops, isa, avail, set(names) - on_stack, True, pinned_vals)
    return fixed_emit(ops, isa, "named", assign, on_stack, scratch), assign
