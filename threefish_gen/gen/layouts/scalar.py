"""The scalar layout: one 64-bit word per machine value.

The description already names one value per word, so this mapping is the
identity: its layout IR program (gen/layouts/ir.py, W = 1) is the description's
ops kept as :class:`~gen.layouts.ir.Scalar` ops.  It exists so that every target
goes through the same stage and so that the report of what a variant costs
(operation counts) has one home.
"""
from __future__ import annotations

from ..dsl import Loop, count_ops, values
from ..threefish import Program
from . import ir

NAME = "scalar"
LANES = 1


def _ops(seq) -> list:
    return [ir.Loop(item.count, tuple(ir.Scalar(op) for op in item.body)) if isinstance(item, Loop)
            else ir.Scalar(item) for item in seq]


def lower(prog: Program) -> ir.VProgram:
    """The description program as a W = 1 layout IR program (one pass = prog.blocks blocks)."""
    vp = ir.VProgram(NAME, LANES, prog.blocks, prog.spec.nw, setup=_ops(prog.setup), body=_ops(prog.body))
    vp.scalars = values(prog.body)
    return vp


def op_counts(prog: Program) -> dict[str, float]:
    """Dynamic operations per block of the body (setup excluded)."""
    return {k: v / prog.blocks for k, v in sorted(count_ops(prog.body).items())}
