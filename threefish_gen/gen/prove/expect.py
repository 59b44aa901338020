"""The description's term of every output word: gen/dsl.py's interpreter run on terms."""
from __future__ import annotations

from functools import lru_cache

from ..dsl import interpret
from ..spec import Spec
from ..threefish import Options, describe
from .terms import Term, var


def key_vars(nw: int) -> list:
    return [var(f"key[{i}]") for i in range(nw)]


def block_vars(stem: str, count: int) -> list:
    return [var(f"{stem}[{i}]") for i in range(count)]


def expected(spec: Spec, options: Options, direction: str, key: list, tweak: list, data: list) -> list[Term]:
    """Output words of one block whose key, tweak and input words are the given terms."""
    prog = _program(spec, options, direction)
    memory = {"key": list(key), "tweak": list(tweak), "in": list(data)}
    env = interpret(prog.setup, memory)
    interpret(prog.body, memory, env)
    return memory["out"][:spec.nw]


@lru_cache(maxsize=None)
def _program(spec: Spec, options: Options, direction: str):
    return describe(spec, options, direction, 1)
