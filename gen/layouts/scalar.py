"""The scalar layout: one 64-bit word per machine value.

The description already names one value per word, so this mapping is the
identity; it exists so that every target goes through the same stage and so
that the report of what a variant costs (operation counts) has one home.
"""
from __future__ import annotations

from ..dsl import count_ops
from ..threefish import Program

NAME = "scalar"
LANES = 1


def op_counts(prog: Program) -> dict[str, float]:
    """Dynamic operations per block of the body (setup excluded)."""
    return {k: v / prog.blocks for k, v in sorted(count_ops(prog.body).items())}
