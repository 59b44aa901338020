"""The scalar layout: one 64-bit word per machine value, the W = 1 case of the layout IR.

The description already names one value per word, so this mapping is one to one: every
description op becomes the same op of the layout IR (gen/layouts/ir.py) on vectors of one
lane, and the scalar printers (C, ...) read that IR as the vector printers read theirs.

* ``mov x, a`` is ``Mov(x, a)``; ``add``/``sub``/``xor x, a`` the two-address
  ``Add(x, x, a)``, ...; ``rotl``/``rotr x, n`` ``Rotl(x, x, (n,))``, ...; a note a ``Note``.
* The caller's memory (the arrays a program reads before it writes them, such as ``key``,
  ``tweak``, ``in`` or Skein's chaining value ``h``, and ``out``) is read by ``Load`` and
  written by ``Store`` of one word.  An arithmetic op on a word of it, ``xor x, in[3]``,
  loads the word into an expression temporary (read once, by the next op: printers inline
  it there).
* Arrays the program writes before it reads them (the subkey table ``ks``, the key rings
  ``kr``/``kc``) are arrays of one-lane vectors: a store is ``Mov(Mem, x)``, a read the
  ``Mem`` operand itself.

Declared names: ``VProgram.values``/``arrays`` are the body's values and local arrays (each
array with its size), ``setup_values``/``setup_arrays`` the setup's, in the order of their
first definition (use), the order the printers declare them in.
"""
from __future__ import annotations

from ..dsl import INPUT_ARRAYS, OUTPUT_ARRAYS, Loop, Mem, Op, array_sizes, count_ops, flat, values
from ..errors import GenError
from ..threefish import Program
from . import ir

NAME = "scalar"
LANES = 1

# The caller's arrays of a single op lowered alone (:func:`op`): the description's inputs and output.
CALLER = INPUT_ARRAYS + OUTPUT_ARRAYS

_ARITH = {"add": ir.Add, "sub": ir.Sub, "xor": ir.Xor}


def _word(m: Mem) -> int:
    """The one word offset of a caller-memory access (constant: never affine in a loop counter)."""
    if m.index.scale:
        raise GenError(f"scalar layout: {m.array} indexed by a loop counter ({m})")
    return m.index.base


def _temp(m: Mem) -> str:
    """The expression temporary a word of caller memory is loaded into for one arithmetic op."""
    return f"{m.array}@{m.index.base}"


def op(o: Op, caller=CALLER) -> list:
    """The W = 1 layout IR ops of one description op (``caller``: the names of the caller's arrays)."""
    k, a = o.kind, o.a
    if k == "note":
        return [ir.Note(a)]
    if k == "store":
        return [ir.Store(o.dst, a.array, (_word(a),))] if a.array in caller else [ir.Mov(a, o.dst)]
    if k in ("rotl", "rotr"):
        return [(ir.Rotl if k == "rotl" else ir.Rotr)(o.dst, o.dst, (a,))]
    if isinstance(a, Mem) and a.array in caller:
        if k == "mov":
            return [ir.Load(o.dst, a.array, (_word(a),))]
        t = _temp(a)
        return [ir.Load(t, a.array, (_word(a),)), _ARITH[k](o.dst, o.dst, t)]
    if k == "mov":
        return [ir.Mov(o.dst, a)]
    return [_ARITH[k](o.dst, o.dst, a)]


def words(o: Op) -> ir.Scalar:
    """A description op a vector layout computes on 64-bit words (a key word of the setup, a
    subkey word of the packed body): its W = 1 ops, as an ``ir.Scalar`` with the value they
    define (declared; any other destination is an expression temporary)."""
    return ir.Scalar(tuple(op(o)), tuple(values([o])))


def ops(seq, caller=CALLER) -> list:
    """The W = 1 layout IR ops of a description op list (loops kept as loops)."""
    out: list = []
    for item in seq:
        if isinstance(item, Loop):
            out.append(ir.Loop(item.count, tuple(x for o in item.body for x in op(o, caller))))
        else:
            out += op(item, caller)
    return out


def caller_arrays(seq) -> set[str]:
    """The caller's arrays of a description op list: ``out`` and the arrays read before any
    store writes them (the others are the program's own)."""
    stored, caller = set(), set(OUTPUT_ARRAYS)
    for o in flat(seq):
        if isinstance(o.a, Mem):
            if o.kind == "store":
                stored.add(o.a.array)
            elif o.a.array not in stored:
                caller.add(o.a.array)
    return caller


def _local_arrays(seq, caller) -> dict[str, int]:
    """The program's own arrays that ``seq`` writes: size (words), in the order of first use."""
    written = {o.a.array for o in flat(seq) if o.kind == "store"}
    return {a: n for a, n in array_sizes(seq).items() if a in written and a not in caller}


def lower(prog: Program, fuse: bool = False) -> ir.VProgram:
    """The description program as a W = 1 layout IR program (one pass = prog.blocks blocks).
    ``fuse``: setup and body as one body (a Skein UBI block, where both run per block)."""
    setup, body = ([], prog.setup + prog.body) if fuse else (prog.setup, prog.body)
    caller = caller_arrays(setup + body)
    vp = ir.VProgram(NAME, LANES, prog.blocks, prog.spec.nw, setup=ops(setup, caller), body=ops(body, caller))
    vp.values, vp.arrays = values(body), _local_arrays(body, caller)
    vp.setup_values, vp.setup_arrays = values(setup), _local_arrays(setup, caller)
    return vp


def op_counts(prog: Program) -> dict[str, float]:
    """Dynamic operations per block of the body (setup excluded)."""
    return {k: v / prog.blocks for k, v in sorted(count_ops(prog.body).items())}
