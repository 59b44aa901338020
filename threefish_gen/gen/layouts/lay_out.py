"""A description program in a layout named by the caller (the targets' layout passes)."""
from __future__ import annotations

from . import ir, lanes, packed, scalar

NAMES = ("scalar", "lanes", "packed")


def lay_out(prog, layout: str, width: int = 1) -> ir.VProgram:
    """``prog`` (a description Program) in ``layout`` for vectors of ``width`` lanes (layout
    scalar: W = 1, ``width`` 1): the layout IR program (gen/layouts/ir.py) a printer reads."""
    if layout == "scalar":
        if width != 1:
            raise ValueError(f"layout scalar has one lane, not {width}")
        return scalar.lower(prog)
    if layout == "lanes":
        return lanes.lower(prog, width)
    if layout == "packed":
        return packed.lower(prog, width)
    raise ValueError(f"unknown layout {layout!r} (one of {', '.join(NAMES)})")
