"""The text a checker builds for a variant: its render (``verify``), or -- for `threefish-gen check
DIR` -- exactly the files the user has (``given``), keyed by the names the render would give them.

Every checker gets the text it builds, assembles, runs or proves from :func:`sources`; no
checker imports the renderer.  Inside :func:`given` (check's rows) nothing is rendered: a variant
that was not given, or a file of it that is missing, raises :class:`NotGiven`, which the runner
reports as a SKIPPED row with the reason -- never a fresh render standing in for the user's file.

``write`` puts a variant's files into a build folder: for the user's files, hard links to one
copy written once per run (``stage``), so a large input is not copied once per build.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import write_files
from threefish_gen.gen.render import Variant, render_variant

_GIVEN: dict = {}
_MISSING: dict = {}
_ONLY_GIVEN: list = []
_STAGED: dict = {}          # variant -> the folder holding its files, written once
_LOCK = threading.Lock()


class NotGiven(GenError):
    """check: the row needs a file the folder does not have (nothing is rendered in its place)."""


def use(variant: Variant, files: dict[str, str], missing: tuple = ()) -> None:
    """Build ``files`` (rendered name -> text) instead of rendering ``variant``; ``missing``: the
    names of the variant's files that are not there (rows that need them are SKIPPED)."""
    _GIVEN[variant] = dict(files)
    _MISSING[variant] = tuple(missing)


def clear() -> None:
    _GIVEN.clear()
    _MISSING.clear()
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
    files = sources(variant)           # NotGiven where a file of it is missing (a SKIPPED row)
    staged = _STAGED.get(variant)
    if staged is None:
        write_files(files, dest)
        return
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        target = dest / name                # name: a rendered name (a crate's is STEM/src/lib.rs)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() or target.is_symlink():
            target.unlink()
        try:
            os.link(staged / name, target)
        except OSError:
            write_files({name: text}, dest)


@contextmanager
def given(files: dict):
    """check: within this block the checkers see only ``files`` ({variant: ({name: text},
    missing names)}); :func:`sources` renders nothing."""
    clear()
    for v, (text, missing) in files.items():
        use(v, text, missing)
    _ONLY_GIVEN.append(True)
    try:
        yield
    finally:
        _ONLY_GIVEN.pop()
        clear()


def only_given() -> bool:
    """True inside :func:`given` (check): rows build the user's files, nothing else."""
    return bool(_ONLY_GIVEN)


def is_given(variant: Variant) -> bool:
    """Whether ``variant``'s text is the user's (check DIR), not this threefish-gen's render."""
    return variant in _GIVEN


def sources(variant: Variant, partial: bool = False) -> dict[str, str]:
    """The files of ``variant``.  Inside :func:`given`: the user's, or :class:`NotGiven` (a variant
    not in the folder, or -- unless ``partial`` -- one of its files missing)."""
    if variant in _GIVEN:
        if _MISSING.get(variant) and not partial:
            raise NotGiven(f"the folder has no {', '.join(_MISSING[variant])} of this render command (check builds "
                           f"only the files it is given)")
        return dict(_GIVEN[variant])
    if only_given():
        raise NotGiven(f"no file of {variant.label()} in the folder (check builds only the files it is given)")
    return dict(_rendered(variant))


# Renders of this run (verify/matrix.py sets them up with render_cache): the last few variants'
# texts in memory (a variant's rows run one after another, each asks for the same text: rendered
# once, not once a row), and where verify has a result cache, the texts on disk keyed by
# shard.code_version() (every file of the package, the Python, the THREEFISH_GEN_* variables that
# reach the generator) and the variant, so an unchanged re-run renders nothing.
# Outside a run (verify/matrix.py run) every call renders afresh.
_MEMO: dict = {}
_MEMO_SIZE = 16
_RENDER_DIR: list = [None]
_IN_RUN: list = [False]


def render_cache(folder: Path | None, in_run: bool = True) -> None:
    """A run starts (``in_run``) or ends: the texts in memory are forgotten either way;
    ``folder``: where renders are kept between runs (None: nowhere)."""
    with _LOCK:
        _MEMO.clear()
        _RENDER_DIR[0] = folder if in_run else None
        _IN_RUN[0] = in_run


def render_dir() -> Path | None:
    """Where this run keeps renders between runs (None: nowhere, or outside a run)."""
    return _RENDER_DIR[0]


def _render_path(variant: Variant) -> Path | None:
    folder = _RENDER_DIR[0]
    if folder is None:
        return None
    import hashlib
    from .shard import code_version
    key = hashlib.sha256(f"{code_version()}\0{variant!r}".encode()).hexdigest()
    return Path(folder) / key[:2] / f"{key}.json"


def derived(variant: Variant, tag: str, compute) -> str:
    """``compute(files)`` of ``variant``'s render, a short string (verify/shapes.py: the shape
    digest), kept beside the render on disk under the same key, so an unchanged re-run neither
    renders nor reads the texts for it.  Not for check's given files (computed every time)."""
    path = None if variant in _GIVEN or not _IN_RUN[0] else _render_path(variant)
    if path is not None:
        try:
            return path.with_suffix(f".{tag}").read_text()
        except OSError:
            pass
    value = compute(sources(variant))
    if path is not None:
        from .shard import write_kept
        write_kept(path.with_suffix(f".{tag}"), value)
    return value


def _rendered(variant: Variant) -> dict[str, str]:
    if not _IN_RUN[0]:
        return render_variant(variant)
    with _LOCK:
        if variant in _MEMO:
            return _MEMO[variant]
    path = _render_path(variant)
    files = None
    if path is not None:
        import json
        try:
            files = json.loads(path.read_text())
        except (OSError, ValueError):
            files = None
    if files is None:
        files = render_variant(variant)
        if path is not None:
            import json
            from .shard import write_kept
            write_kept(path, json.dumps(files))
    with _LOCK:
        _MEMO[variant] = files
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
    return files
