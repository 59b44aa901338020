"""Running the tools verify drives (compilers, assemblers, harnesses, dotnet) under a time limit.

Every command runs in its own process group (session).  When it exceeds its limit the whole
group is killed -- the compiler driver *and* the cc1/ld/cc1plus it started -- and
:class:`Timeout` is raised; the runner turns that into a ``TIMEOUT`` row naming the limit,
never into a FAIL of the generated code.

``THREEFISH_GEN_TIMEOUT_SCALE`` (a positive number, default 1) multiplies every limit, for
slow or heavily loaded machines.
"""
from __future__ import annotations

import os
import signal
import subprocess


class Timeout(Exception):
    """A command ran past its limit (its process group has been killed)."""

    def __init__(self, what: str, limit: float):
        super().__init__(f"{what} exceeded its {limit:g} s limit (killed with its child processes)")
        self.what, self.limit = what, limit


def scale() -> float:
    try:
        s = float(os.environ.get("THREEFISH_GEN_TIMEOUT_SCALE", "1"))
    except ValueError:
        return 1.0
    return s if s > 0 else 1.0


def run(cmd: list[str], cwd=None, timeout: float = 600, env: dict | None = None,
        what: str | None = None) -> tuple[int, str]:
    """Run ``cmd``: (exit status, stdout + stderr).  Raises :class:`Timeout` past
    ``timeout`` seconds (times the scale), after killing the command's process group."""
    limit = timeout * scale()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        kill_group(p)
        raise Timeout(what or os.path.basename(cmd[0]), limit) from None
    except BaseException:          # KeyboardInterrupt and the like: leave nothing running
        kill_group(p)
        raise
    return p.returncode, out + err


def kill_group(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        p.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass
