"""The text a checker builds for a variant: its render, or -- for `threefish-gen check DIR` --
the files the user already has (``use``), keyed by the names the render would give them."""
from __future__ import annotations

from threefish_gen.gen.render import Variant, render_variant

_GIVEN: dict = {}


def use(variant: Variant, files: dict[str, str]) -> None:
    """Build ``files`` (rendered name -> text) instead of rendering ``variant``."""
    _GIVEN[variant] = dict(files)


def given(variant: Variant) -> bool:
    """Whether ``variant``'s text is the user's (check DIR), not this threefish-gen's render."""
    return variant in _GIVEN


def clear() -> None:
    _GIVEN.clear()


def sources(variant: Variant) -> dict[str, str]:
    return dict(_GIVEN[variant]) if variant in _GIVEN else render_variant(variant)
