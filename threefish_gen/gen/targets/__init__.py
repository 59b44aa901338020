"""The target registry: every target the generator has, one descriptor module each.

Adding a target is adding a module here (its descriptor), its printer and templates, its
tests and docs (docs/architecture.md has the checklist); the CLI, catalog, verify and bench
loop over ``TARGETS``.
"""
from __future__ import annotations

from .. import header
from ..errors import GenError
from ..spec import all_specs
from . import c, c_simd, csharp, nasm_x64, nasm_x86, rust
from .base import SETS, Option, Pass, Recipe, Target

TARGETS: dict[str, Target] = {m.TARGET.name: m.TARGET for m in (c, c_simd, nasm_x64, nasm_x86, csharp, rust)}


def get(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise GenError(f"unknown target {name!r} (choose from {', '.join(TARGETS)})") from None


def names() -> tuple:
    return tuple(TARGETS)


def variants(which: str = "recommended", target: str = "c", specs=None):
    """The variants of a named set (recommended, all) of one target."""
    if which not in SETS:
        raise GenError(f"unknown set {which!r} (choose from {', '.join(SETS)})")
    return get(target).variants(which, list(specs) if specs is not None else all_specs())


def from_command(argv: list[str]):
    """The variant a file's recorded render command names (the words after ``render``;
    gen/header.py writes them): GenError (one line) if it names none."""
    return header.parse(argv, get)


def option_choices(name: str) -> tuple:
    """Every value any target allows for the target option ``name`` (for the CLI's choices)."""
    seen: dict = {}
    for t in TARGETS.values():
        opt = t.option(name)
        if opt is not None and opt.choices:
            seen.update(dict.fromkeys(opt.choices))
    return tuple(seen)


__all__ = ["TARGETS", "Target", "Option", "Pass", "Recipe", "SETS", "get", "from_command", "names", "variants", "option_choices"]
