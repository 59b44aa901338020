"""Running the tools verify drives (compilers, assemblers, harnesses, dotnet): bounded, and
stoppable as a whole.

``check DIR`` builds and runs the files it is given, so everything here assumes the code it
runs may be hostile or broken:

* **Time.**  Every command runs in its own process group (session).  Past its wall-clock limit
  the whole group is killed -- the compiler driver *and* the cc1/ld/cc1plus it started -- and
  :class:`Timeout` is raised; the runner turns that into a ``TIMEOUT`` row naming the limit,
  never into a FAIL of the generated code.
* **Resources.**  Every command starts under resource limits (set by a tiny wrapper that
  execs the command -- util-linux ``prlimit``, else :data:`_WRAPPER`; not ``preexec_fn``, which
  is unsafe in verify's thread pool): ``RLIMIT_CPU`` (CPU seconds: SIGXCPU, then SIGKILL 5 s later; reported as a TIMEOUT
  row), ``RLIMIT_FSIZE`` (largest file it may write), ``RLIMIT_CORE`` = 0 (no core files) and
  ``RLIMIT_AS`` (address space) -- except for programs that reserve huge address space by
  design, where an address-space limit breaks them without bounding anything real: ASan/TSan/
  MSan/HWASan executables (terabytes of shadow memory are reserved up front), qemu-user
  (reserves the guest address space), wine (reserves the Windows address layout), dotnet (the
  GC reserves 256 GB regions) and valgrind (maps its own large arenas).  Their output is read
  into memory up to :data:`OUTPUT_CAP` bytes per stream; the rest is drained and dropped.
* **Interrupts.**  Every live command is registered; :func:`stop_all` (called on SIGINT,
  SIGTERM and SIGHUP by :func:`interruptible`, and by verify's driver on any exception) kills
  every registered process group and makes later :func:`run` calls raise :class:`Stopped`, so a
  worker thread cannot start the next step of a build after the run was stopped.
* **Sandbox.**  ``sandbox=[DIR, ...]``: where ``bwrap`` works on this machine the command runs without
  network, in its own PID namespace (nothing it starts outlives it), with the whole file system
  read-only except those folders; else, where ``unshare`` can make a user namespace, without network
  only (its own network namespace); else unsandboxed.  Which one is found once per process
  (:func:`sandbox_kind`) and said once (verify prints it).

``THREEFISH_GEN_TIMEOUT_SCALE`` (a positive number, default 1) multiplies every time limit, for
slow or heavily loaded machines.  ``THREEFISH_GEN_CPU_LIMIT`` (seconds) lowers the CPU-time
limit of every command (default: the command's wall-clock limit; for builds, times the number of
CPUs, since a threaded build's CPU time is the sum over its threads).  ``THREEFISH_GEN_SANDBOX=none``
turns the sandbox off.
"""
from __future__ import annotations

import contextlib
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

GiB = 1 << 30
MiB = 1 << 20
OUTPUT_CAP = 16 * MiB        # bytes of each stream (stdout, stderr) kept in memory


class Timeout(Exception):
    """A command ran past its limit (its process group has been killed)."""

    def __init__(self, what: str, limit: float, kind: str = "time"):
        unit = {"time": " s limit", "cpu": " s CPU-time limit"}.get(kind)
        text = f"{limit:g}{unit}" if unit else kind
        super().__init__(f"{what} exceeded its {text} (killed with its child processes)")
        self.what, self.limit, self.kind = what, limit, kind


class Stopped(BaseException):
    """The run was stopped (SIGINT/SIGTERM/SIGHUP or an error elsewhere): no new command starts.
    A BaseException, so that no checker's ``except Exception`` turns it into a row."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one command (None: leave the inherited limit)."""

    cpu: float | None = None            # CPU seconds (default: the wall-clock limit, times the CPUs
    threaded: bool = True               # when threaded: RLIMIT_CPU counts every thread's time)
    address_space: int | None = 8 * GiB
    file_size: int | None = 1 * GiB
    core: int = 0


BUILD_LIMITS = Limits()                   # compilers, assemblers, linkers, dotnet build (MSBuild threads)
RUN_LIMITS = Limits(threaded=False, address_space=4 * GiB, file_size=256 * MiB)   # harness runs

# Sets the limits given on its command line (soft:hard pairs, "-" to leave one alone), then
# execs the command (argv after "--"): `python3 -I -S -c _WRAPPER ...`, where util-linux's prlimit
# (about 1 ms instead of 30) is not installed.
_WRAPPER = r"""
import os, resource as r, sys
a = sys.argv
for k, v in zip((r.RLIMIT_CPU, r.RLIMIT_AS, r.RLIMIT_FSIZE, r.RLIMIT_CORE), a[1:5]):
    if v != "-":
        r.setrlimit(k, tuple(int(x) for x in v.split(":")))
try:
    os.execvp(a[6], a[6:])
except OSError as e:
    sys.stderr.write("cannot run %s: %s\n" % (a[6], e.strerror))
    sys.exit(127)
"""
_NAMES = ("cpu", "as", "fsize", "core")
_RESOURCES = (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE)


def _limit_argv(values) -> list[str]:
    """The argv prefix setting the limits ``values`` (cpu, as, fsize, core; None: leave it);
    a hard limit is never raised above this process's (that would fail unprivileged)."""
    pairs = []
    for k, v in zip(_RESOURCES, values):
        if v is None:
            pairs.append(None)
            continue
        _, hard = resource.getrlimit(k)
        want = v + 5 if k == resource.RLIMIT_CPU else v      # CPU: SIGXCPU, then SIGKILL 5 s later
        hard = want if hard == resource.RLIM_INFINITY else min(hard, want)
        pairs.append(f"{min(v, hard)}:{hard}")
    if shutil.which("prlimit"):
        return ["prlimit", *(f"--{n}={p}" for n, p in zip(_NAMES, pairs) if p), "--"]
    return [sys.executable, "-I", "-S", "-c", _WRAPPER, *(p or "-" for p in pairs), "--"]


_RESERVES_ADDRESS_SPACE = ("qemu-", "wine", "dotnet", "valgrind")
_SANITIZER_MARKS = (b"__asan_init", b"__tsan_init", b"__msan_init", b"__hwasan_init")


def scale() -> float:
    try:
        s = float(os.environ.get("THREEFISH_GEN_TIMEOUT_SCALE", "1"))
    except ValueError:
        return 1.0
    return s if s > 0 else 1.0


def _cpu_cap() -> float | None:
    try:
        s = float(os.environ.get("THREEFISH_GEN_CPU_LIMIT", ""))
    except ValueError:
        return None
    return s if s > 0 else None


def _sanitized(exe: str) -> bool:
    """Whether ``exe`` is a sanitizer build that reserves shadow memory (ASan and the like)."""
    try:
        with open(exe, "rb") as f:
            data = f.read(64 * MiB)
    except OSError:
        return False
    return any(m in data for m in _SANITIZER_MARKS)


def address_space_ok(cmd: list[str]) -> bool:
    """False for the programs an RLIMIT_AS breaks (see the module docstring)."""
    name = Path(cmd[0]).name
    if name.startswith(_RESERVES_ADDRESS_SPACE):
        return False
    exe = cmd[0] if os.sep in cmd[0] else shutil.which(cmd[0])
    return not (exe and _sanitized(exe))


# --------------------------------------------------------------------------- the live set

_LOCK = threading.Lock()
_LIVE: set = set()
_STOPPED: list = []          # the reason, once stopped


def stop_all(reason: str = "stopped") -> None:
    """Kill every running command's process group; every later :func:`run` raises Stopped."""
    with _LOCK:
        if not _STOPPED:
            _STOPPED.append(reason)
        live = list(_LIVE)
    for p in live:
        _killpg(p)


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc's parent links; empty where there is no /proc)."""
    children: dict = {}
    for d in Path("/proc").glob("[0-9]*"):
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_descendants() -> None:
    """SIGKILL every process this one started, at any depth: on SIGINT/SIGTERM/SIGHUP, after the
    process groups, for what left them (bwrap --new-session puts the harness in a session of its own; a
    sandbox that was still starting when its group was killed)."""
    for pid in _descendants(os.getpid()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def reset() -> None:
    """Allow commands again (after a stopped run, in a process that goes on: the tests)."""
    with _LOCK:
        _STOPPED.clear()


@contextlib.contextmanager
def interruptible():
    """SIGTERM and SIGHUP stop every command and raise gen.output.Interrupted in the main thread
    (SIGINT: stop every command, then KeyboardInterrupt); any exception leaving the block stops every command,
    so the caller's temporary folder can be removed with nothing left writing into it."""
    from threefish_gen.gen.output import Interrupted
    main = threading.current_thread() is threading.main_thread()
    old = {}
    reset()                                 # a new run (an earlier one in this process may have stopped)

    def on_signal(signum, frame):
        for s in old:                       # a second signal must not interrupt the cleanup
            signal.signal(s, signal.SIG_IGN)
        # every command killed before the exception unwinds: a thread pool's exit waits for its
        # running tasks, which (a build under load) took over a minute when SIGINT only raised
        stop_all(signal.Signals(signum).name)
        raise KeyboardInterrupt() if signum == signal.SIGINT else Interrupted()

    if main:
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            old[s] = signal.signal(s, on_signal)
    try:
        yield
    except BaseException as e:
        stop_all("error")
        if isinstance(e, (KeyboardInterrupt, Interrupted)):     # SIGINT, SIGTERM, SIGHUP
            kill_descendants()
        raise
    finally:
        for s, h in old.items():
            signal.signal(s, h)


# --------------------------------------------------------------------------- the sandbox

_SANDBOX: list = []


def _bwrap_argv(rw: list) -> list[str]:
    """Writable: the folders in ``rw``, except a ``src`` folder in them (the sources the build
    links to the run's one copy of the user's files: the code under test must not change them)."""
    binds = [w for d in rw for w in ("--bind", str(d), str(d), "--ro-bind-try", str(d / "src"), str(d / "src"))]
    return ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *binds,
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session", "--"]


def _unshare_argv(rw: list) -> list[str]:
    # no --pid --fork: unshare would then report a child killed by a signal as its own exit 1
    # ("sigprocmask unblock failed", util-linux 2.38), hiding SIGXCPU; exec keeps the status
    return ["unshare", "--user", "--map-current-user", "--net", "--"]


def sandbox_kind() -> str:
    """'bwrap', 'unshare' or 'none': what works on this machine (tried once per process)."""
    with _LOCK:
        if _SANDBOX:
            return _SANDBOX[0]
    kind = "none"
    if os.environ.get("THREEFISH_GEN_SANDBOX", "") != "none":
        probe = [Path(os.environ.get("TMPDIR") or "/tmp")]
        for name, argv in (("bwrap", _bwrap_argv), ("unshare", _unshare_argv)):
            if shutil.which(name) is None:
                continue
            try:
                ok = subprocess.run([*argv(probe), "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, timeout=30).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
            if ok:
                kind = name
                break
    with _LOCK:
        if not _SANDBOX:
            _SANDBOX.append(kind)
        return _SANDBOX[0]


def sandbox_note() -> str:
    """One line saying how user code runs here."""
    return {"bwrap": "harnesses run under bwrap: no network, file system read-only but their build folder",
            "unshare": "harnesses run under unshare: no network (bwrap is not installed or cannot start "
                       "here, so the file system is not read-only to them)",
            "none": "harnesses run unsandboxed with your privileges (neither bwrap nor unshare can start "
                    "here, or THREEFISH_GEN_SANDBOX=none)"}[sandbox_kind()]


# --------------------------------------------------------------------------- running

def run(cmd: list[str], cwd=None, timeout: float = 600, env: dict | None = None,
        what: str | None = None, limits: Limits = BUILD_LIMITS, sandbox=None) -> tuple[int, str]:
    """Run ``cmd``: (exit status, stdout + stderr).  Raises :class:`Timeout` past ``timeout``
    seconds (times the scale) or its CPU-time limit, after killing the command's process group;
    :class:`Stopped` once :func:`stop_all` was called.  ``sandbox``: the folders the command may
    write (a list; see the module docstring), or None: no sandbox."""
    what = what or os.path.basename(cmd[0])
    limit = timeout * scale()
    cpu = limits.cpu if limits.cpu is not None else limit * ((os.cpu_count() or 1) if limits.threaded else 1)
    cpu = min(cpu, _cpu_cap() or cpu)
    aspace = limits.address_space if limits.address_space is not None and address_space_ok(cmd) else None
    wrapped = _limit_argv((max(1, int(cpu + 0.5)), aspace, limits.file_size, limits.core))
    if cwd is not None and not Path(cmd[0]).name.startswith("dotnet"):
        # temporary files (gcc's .s/.o, a harness's) go into the build folder: a killed compiler
        # cannot leave them in /tmp, and the sandbox leaves the build folder writable.  Not for
        # dotnet, whose build servers meet in TMPDIR.
        env = dict(os.environ if env is None else env, TMPDIR=str(Path(cwd).resolve()))
    box = sandbox_kind() if sandbox is not None else "none"
    inner = {"bwrap": _bwrap_argv, "unshare": _unshare_argv}[box]([Path(d) for d in sandbox]) if box != "none" else []
    with _LOCK:
        if _STOPPED:
            raise Stopped(_STOPPED[0])
        p = subprocess.Popen([*wrapped, *inner, *cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
        _LIVE.add(p)
    try:
        try:
            out, err = _communicate(p, time.monotonic() + limit)
        except subprocess.TimeoutExpired:
            kill_group(p)
            raise Timeout(what, limit) from None
        except BaseException:          # KeyboardInterrupt and the like: leave nothing running
            kill_group(p)
            raise
    finally:
        with _LOCK:
            _LIVE.discard(p)
    with _LOCK:
        if _STOPPED:
            raise Stopped(_STOPPED[0])
    text = out.decode("utf-8", "replace") + err.decode("utf-8", "replace")
    rc = p.returncode
    if box == "bwrap" and rc == 1 and text.startswith("bwrap: "):
        # bwrap worked when probed but not for this command (a folder to bind is missing, ...):
        # run it unsandboxed, and say so
        print(f"verify: warning: bwrap could not start {what} ({text.strip().splitlines()[0]}): "
              f"run without the sandbox", file=sys.stderr, flush=True)
        return run(cmd, cwd, timeout, env, what, limits, None)
    if rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or (rc and "CPU time limit exceeded" in text):
        raise Timeout(what, cpu, "cpu")
    if limits.file_size and (rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or
                             (rc and "File size limit exceeded" in text)):
        raise Timeout(what, 0, f"{limits.file_size // MiB} MiB file-size limit")
    return rc, text


def _communicate(p: subprocess.Popen, deadline: float) -> tuple[bytes, bytes]:
    """Like Popen.communicate, keeping at most OUTPUT_CAP bytes of each stream."""
    bufs = {p.stdout: bytearray(), p.stderr: bytearray()}
    dropped = {p.stdout: 0, p.stderr: 0}
    with selectors.DefaultSelector() as sel:
        for f in bufs:
            sel.register(f, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(p.args, 0)
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                b = bufs[key.fileobj]
                room = OUTPUT_CAP - len(b)
                b += chunk[:max(room, 0)]
                dropped[key.fileobj] += max(len(chunk) - max(room, 0), 0)
    for f in bufs:
        f.close()
    p.wait(timeout=max(deadline - time.monotonic(), 0.01))
    for f, n in dropped.items():
        if n:
            bufs[f] += f"\n[{n} more bytes of output dropped]\n".encode()
    return bytes(bufs[p.stdout]), bytes(bufs[p.stderr])


def _killpg(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(p: subprocess.Popen) -> None:
    _killpg(p)
    for f in (p.stdout, p.stderr):
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        p.wait(timeout=10)
