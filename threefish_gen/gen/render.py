"""Rendering a variant: its target's descriptor runs the target's passes (``gen/targets/``)."""
from __future__ import annotations

from .output import write_files
from .targets import get as get_target
from .variant import Variant


def render_variant(v: Variant) -> dict[str, str]:
    """{file name: text} of one variant."""
    return get_target(v.target).render(v)


__all__ = ["Variant", "render_variant", "write_files"]
