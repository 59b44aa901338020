"""The reference model: Threefish computed by interpreting the description.

Every printer is checked against these functions (``verify/``), and these
functions are checked against every published vector (``tests/``).
"""
from __future__ import annotations

from functools import lru_cache

from .dsl import bytes_from_words, interpret, words_from_bytes
from .spec import Spec
from .threefish import Options, Program, describe


@lru_cache(maxsize=None)
def program(spec: Spec, options: Options = Options(), direction: str = "encrypt", blocks: int = 1) -> Program:
    return describe(spec, options, direction, blocks)


def run(prog: Program, key: bytes, tweaks: bytes, data: bytes) -> bytes:
    """Run a program on byte strings: key (B bytes), tweaks (16 per block), data (B per block)."""
    spec = prog.spec
    if len(key) != spec.block_bytes or len(tweaks) != 16 * prog.blocks \
            or len(data) != spec.block_bytes * prog.blocks:
        raise ValueError("bad key, tweak or block length")
    memory = {"key": words_from_bytes(key), "tweak": words_from_bytes(tweaks),
              "in": words_from_bytes(data), "out": [0] * (spec.nw * prog.blocks)}
    env = interpret(prog.setup, memory)
    interpret(prog.body, memory, env)
    return bytes_from_words(memory["out"])


def encrypt(spec: Spec, key: bytes, tweak: bytes, block: bytes, options: Options = Options()) -> bytes:
    return run(program(spec, options, "encrypt"), key, tweak, block)


def decrypt(spec: Spec, key: bytes, tweak: bytes, block: bytes, options: Options = Options()) -> bytes:
    return run(program(spec, options, "decrypt"), key, tweak, block)
