"""Processes for a run's pure-Python work: rendering (with the shape digest) and `prove`.

verify's rows run on threads (verify/matrix.py): a row that builds waits on a compiler, an
assembler or a program, so the threads keep every core busy.  Rendering and the prover are
Python, and Python threads share one core: on 2 cores, two prove rows at once, or a prove row
beside the renders, ran at the speed of one.  Within a run (:func:`pool`) that work goes to a
pool of ``jobs`` processes instead, so it uses the cores the threads leave idle.

Only this threefish-gen's own renders go there.  `check DIR`'s user files are proved in a
bounded child of their own (verify/prove.py), and nothing here touches them.

The processes come from a fork server (no thread of the run is copied into them), ignore
Ctrl-C (the run's thread stops them: one line, no traceback from a worker) and keep renders
where the run keeps them (verify/sources.py render_cache).
"""
from __future__ import annotations

import multiprocessing
import pickle
import signal
import threading
from contextlib import contextmanager
from pathlib import Path

_POOL: list = [None]
_LOCK = threading.Lock()
# the modules whose functions run in the workers (matrix._render_kept, prove._prove) and with them
# the renderer and the prover: imported once in the fork server, not in every worker
_PRELOAD = ["threefish_gen.verify.matrix", "threefish_gen.verify.prove"]


def _init(render_dir: str | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from . import sources
    sources.render_cache(Path(render_dir) if render_dir else None)


@contextmanager
def pool(jobs: int, render_dir: Path | None):
    """A run's worker processes (``jobs`` of them), for :func:`call` while the block runs."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    p = ctx.Pool(max(1, jobs), initializer=_init, initargs=(str(render_dir) if render_dir else None,))
    with _LOCK:
        _POOL[0] = p
    try:
        yield p
    finally:
        with _LOCK:
            _POOL[0] = None
        p.terminate()       # an interrupted run: the workers stop now, not after their prove
        p.join()


def active() -> bool:
    return _POOL[0] is not None


def call(fn, *args):
    """``fn(*args)`` in a worker process where a pool is open, else here; its exception is raised
    here either way."""
    p = _POOL[0]
    if p is None:
        return fn(*args)
    try:
        pickle.dumps(args)
    except (pickle.PicklingError, AttributeError, TypeError):     # e.g. a test's local class
        return fn(*args)
    return p.apply_async(fn, args).get()


def map_(fn, items: list) -> list:
    """``[fn(x) for x in items]``, spread over the workers where a pool is open."""
    p = _POOL[0]
    if p is None or len(items) < 2:
        return [fn(x) for x in items]
    return p.map(fn, items, chunksize=1)
