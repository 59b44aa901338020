"""The text a checker builds for a variant: its render, or -- for `threefish-gen check DIR` --
the files the user already has (``use``), keyed by the names the render would give them.

``write`` puts a variant's files into a build folder: for the user's files, hard links to one
copy written once per run (``stage``), so a large input is not copied once per build."""
from __future__ import annotations

import os
import threading
from pathlib import Path

from threefish_gen.gen.output import write_files
from threefish_gen.gen.render import Variant, render_variant

_GIVEN: dict = {}
_STAGED: dict = {}          # variant -> the folder holding its files, written once
_LOCK = threading.Lock()


def use(variant: Variant, files: dict[str, str]) -> None:
    """Build ``files`` (rendered name -> text) instead of rendering ``variant``."""
    _GIVEN[variant] = dict(files)


def given(variant: Variant) -> bool:
    """Whether ``variant``'s text is the user's (check DIR), not this threefish-gen's render."""
    return variant in _GIVEN


def clear() -> None:
    _GIVEN.clear()
    _STAGED.clear()


def stage(root: Path) -> None:
    """Write every given variant's files once, read-only, under ``root`` (a run's scratch)."""
    with _LOCK:
        _STAGED.clear()
        for i, (v, files) in enumerate(_GIVEN.items()):
            d = Path(root) / f"{i}-{v.stem}"
            write_files(files, d)
            for name in files:
                os.chmod(d / name, 0o444)
            _STAGED[v] = d


def write(variant: Variant, dest: Path) -> None:
    """Put ``variant``'s files into ``dest``: hard links to the staged copy where there is one
    (falling back to a copy where the file system refuses links), else the render written."""
    staged = _STAGED.get(variant)
    if staged is None:
        write_files(sources(variant), dest)
        return
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in _GIVEN[variant].items():
        target = dest / name
        if target.exists() or target.is_symlink():
            target.unlink()
        try:
            os.link(staged / name, target)
        except OSError:
            write_files({name: text}, dest)


def sources(variant: Variant) -> dict[str, str]:
    return dict(_GIVEN[variant]) if variant in _GIVEN else render_variant(variant)
