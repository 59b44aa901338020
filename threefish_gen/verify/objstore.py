"""Build steps made once per run and shared by every row that needs them, keyed by content.

A run's rows compile the same thing more than once: the gcc -O2 row and the constant-time row
(verify/ct.py) compile the same C file with the same gcc and -O2; every nasm row of a variant and
its constant-time row assemble the same .asm; the ABI thunk (verify/abi_check.py) is one file for
every x86-64 variant.  :func:`build` runs such a step once and hands every other row the same
output (an object file, or for a check such as ``-fsyntax-only`` only its exit status and
output).

The key is a hash of everything that decides the output: the tool's ``--version`` (verify/shard.py
``tool_version``), its arguments with the row's own paths replaced by the names of the files
(``src_dir`` -> ``<src>``), and the content of every input file the step reads (the source and
the headers beside it).  Two rows share a step only when those are identical, so a shared object
is the very object the row would have built.  A step that failed is shared as well (the same
exit status and output); a step that raised (proc.Timeout, proc.Stopped) raises the same
exception in every row that waits for it.

The store is per run (:func:`reset`, called by verify/matrix.py ``run`` with the run's workdir):
objects live under ``WORKDIR/objects`` and are dropped at the next run's start.  Without a store
(a checker called on its own, as the tests do) :func:`build` runs the step in the row's own
folder, as before.  Thread-safe: verify runs rows in a thread pool; the first row to need a key
builds it, the others wait for it.
"""
from __future__ import annotations

import hashlib
import shutil
import threading
from pathlib import Path
from typing import Callable

from .shard import tool_version

_LOCK = threading.Lock()
_ROOT: list = []            # [the run's objects folder] while a store is open
_ENTRIES: dict = {}         # key -> _Entry
STATS = {"built": 0, "shared": 0}


class _Entry:
    __slots__ = ("done", "result", "error")

    def __init__(self):
        self.done = threading.Event()
        self.result = None
        self.error: BaseException | None = None


def reset(root: Path | None) -> None:
    """Open a fresh store under ``root`` (None: no store; every step runs in its row's folder)."""
    with _LOCK:
        _ENTRIES.clear()
        _ROOT.clear()
        STATS.update(built=0, shared=0)
        if root is not None:
            root = Path(root)
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True, exist_ok=True)
            _ROOT.append(root)


def active() -> bool:
    return bool(_ROOT)


def _digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def key_of(argv: list[str], src_dir: Path, inputs: list[Path]) -> str:
    """The step's key: tool version, arguments (``src_dir`` written as ``<src>``) and the content
    of each input file (by its name)."""
    src = str(Path(src_dir))
    h = hashlib.sha256()
    h.update(tool_version(argv[0]).encode() + b"\0\1")
    for a in argv:
        h.update(a.replace(src, "<src>").encode() + b"\0")
    h.update(b"\1")
    for p in sorted(inputs, key=lambda p: Path(p).name):
        h.update(Path(p).name.encode() + b"\0" + _digest(p).encode() + b"\0")
    return h.hexdigest()


def build(argv: list[str], src_dir: Path, inputs: list[Path], run: Callable, workdir: Path,
          output: str | None = None) -> tuple[int, str, Path | None]:
    """Run ``argv`` (plus ``-o OUT`` where ``output`` names the file it makes, e.g. "x.o") once per
    content: (exit status, tool output, the output file or None).  ``run(cmd, cwd) -> (rc, out)``
    runs a command (verify/runner.py ``_run``); ``inputs``: every file the step reads."""
    if not _ROOT:                                   # no store: in the row's own folder
        out_path = Path(workdir) / output if output else None
        rc, text = run(argv + (["-o", str(out_path)] if out_path else []), workdir)
        return rc, text, out_path
    key = key_of(argv + ([f"-o <out>{Path(output).suffix}"] if output else []), src_dir, inputs)
    with _LOCK:
        root = _ROOT[0]
        entry = _ENTRIES.get(key)
        mine = entry is None
        if mine:
            entry = _ENTRIES[key] = _Entry()
            STATS["built"] += 1
        else:
            STATS["shared"] += 1
    if not mine:
        entry.done.wait()
        if entry.error is not None:
            raise entry.error
        return entry.result
    try:
        out_path = root / key[:2] / f"{key}{Path(output).suffix}" if output else None
        if out_path:
            out_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = out_path.with_name(out_path.stem + ".part" + out_path.suffix)
            rc, text = run(argv + ["-o", str(tmp)], workdir)
            if rc == 0:
                tmp.replace(out_path)
        else:
            rc, text = run(argv, workdir)
        entry.result = (rc, text, out_path if rc == 0 else None)
        return entry.result
    except BaseException as e:
        entry.error = e
        raise
    finally:
        entry.done.set()
