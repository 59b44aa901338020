"""Writing rendered files: the destination ends up as it was or complete, never half-written.

``write_files`` writes every file into a staging folder beside the destination
(``DEST/.threefish-gen-staging-PID-RANDOM/``), marks the staging complete (a ``READY`` file,
written last), then moves the files into place with SIGINT/SIGTERM held back, and removes the
staging folder.  A run killed before ``READY`` leaves only a staging folder, which the next run
in that destination removes (the destination is as it was); a run killed (even by SIGKILL)
while moving leaves a complete staging folder, which the next run finishes moving before
anything else (the destination becomes complete).  Disk full, unwritable destinations and a
destination name that is a folder are one GenError each, with the staging removed.
"""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from .errors import GenError

STAGING = ".threefish-gen-staging-"
READY = "READY"
_HELD = (signal.SIGINT, signal.SIGTERM)


class Interrupted(Exception):
    """SIGTERM while staging (SIGINT is Python's KeyboardInterrupt)."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path) -> None:
    """Finish or discard what killed runs left in ``out``: complete staging is moved in, the rest
    removed.  Staging of a live process (another render running now) is left alone."""
    try:
        entries = list(out.iterdir())
    except OSError:
        return
    for d in entries:
        if not (d.name.startswith(STAGING) and d.is_dir()):
            continue
        try:
            pid = int(d.name[len(STAGING):].split("-")[0])
        except ValueError:
            pid = -1
        if pid != os.getpid() and pid > 0 and _pid_alive(pid):
            continue
        if (d / READY).exists():
            names = (d / READY).read_text(encoding="utf-8").splitlines()
            for name in names:
                if (d / name).exists():
                    os.replace(d / name, out / name)
        shutil.rmtree(d, ignore_errors=True)


def write_files(files: dict[str, str], out_dir: str | Path) -> list[Path]:
    """Write every file or none (see the module docstring); returns the paths written."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GenError(f"cannot create output folder {out}: {e.strerror or e}") from None
    if not out.is_dir():
        raise GenError(f"output folder {out} is not a folder")
    if not os.access(out, os.W_OK | os.X_OK):
        raise GenError(f"output folder {out} is not writable")
    for name in files:
        if "/" in name or name in ("", ".", "..") or name.startswith(STAGING):
            raise GenError(f"bad output file name {name!r}")
        if (out / name).is_dir():
            raise GenError(f"cannot write {out / name}: it is a folder")
    recover(out)
    main = threading.current_thread() is threading.main_thread()
    old_term = None
    if main:
        def on_term(signum, frame):
            raise Interrupted()
        old_term = signal.signal(signal.SIGTERM, on_term)
    stage = None
    try:
        try:
            stage = Path(tempfile.mkdtemp(prefix=f"{STAGING}{os.getpid()}-", dir=out))
            umask = os.umask(0)
            os.umask(umask)
            for name, text in files.items():
                with open(stage / name, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(text)
                os.chmod(stage / name, 0o666 & ~umask)
            with open(stage / READY, "w", encoding="utf-8") as fh:
                fh.write("\n".join(files) + "\n")
        except OSError as e:
            raise GenError(f"cannot write into {out}: {e.strerror or e}") from None
        # the moves: signals held back, so an interrupt lands before or after all of them
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD) if main else None
        try:
            for name in files:
                os.replace(stage / name, out / name)
        except OSError as e:
            stage = None        # complete staging stays: the next run in this folder finishes the moves
            raise GenError(f"cannot move the files into {out}: {e.strerror or e} (the next render "
                           f"into {out} completes them)") from None
        finally:
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)
                stage = None
            if held is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        if main:
            signal.signal(signal.SIGTERM, old_term)
    return [out / name for name in files]
