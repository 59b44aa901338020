"""The description's term of every output word: gen/dsl.py's interpreter run on terms."""
from __future__ import annotations

from ..dsl import interpret
from ..spec import Spec
from ..threefish import Options, describe
from .terms import Term, cache, var


def key_vars(nw: int) -> list:
    return [var(f"key[{i}]") for i in range(nw)]


def block_vars(stem: str, count: int) -> list:
    return [var(f"{stem}[{i}]") for i in range(count)]


def expected(spec: Spec, options: Options, direction: str, key: list, tweak: list, data: list,
             steps: set | None = None) -> list[Term]:
    """Output words of one block whose key, tweak and input words are the given terms; with
    ``steps``, every value the description assigns on the way is added to it (its partial sums,
    which the flattened sums of the output terms do not contain: a program's divergence is
    looked for among the terms that are not one of them, gen/prove/engine.py)."""
    prog = _program(spec, options, direction)
    memory = {"key": list(key), "tweak": list(tweak), "in": list(data)}
    env = interpret(prog.setup, memory, _Recording(steps) if steps is not None else None)
    interpret(prog.body, memory, env)
    return memory["out"][:spec.nw]


class _Recording(dict):
    """An interpreter environment that keeps every term assigned to it."""

    def __init__(self, seen: set):
        super().__init__()
        self.seen = seen

    def __setitem__(self, name, t):
        if isinstance(t, Term):
            self.seen.add(t)
        super().__setitem__(name, t)


def _program(spec: Spec, options: Options, direction: str):
    """The description of one block, made once per proof (kept in the proof's scope,
    gen/prove/terms.py: nothing outlives or is shared between proofs)."""
    programs = cache("programs")
    key = (spec, options, direction)
    prog = programs.get(key)
    if prog is None:
        prog = programs[key] = describe(spec, options, direction, 1)
    return prog
