"""A result cache for the tests' long matrices (`make test-matrix`, part of `make verify`).

Enabled by ``--result-cache DIR`` (the Makefile passes it; ``make verify NO_CACHE=1`` or
``THREEFISH_GEN_NO_TEST_CACHE=1`` runs every test).  It applies to the tests marked ``matrix``
only.  A test whose every phase (setup, call, teardown) passed is recorded under its key; a later
run whose key for that test is the same does not run it and reports it as ``cached`` (its own
status and a "N cached" count in the summary, never as a fresh pass).  A failed, errored or
skipped test is never recorded, so it runs again every time.

The key of a test (:func:`environment_key` + the test's node id) is deliberately coarse, so that
it is complete without having to know what a test reads:

* the content of every file of the work tree that git tracks or could track (``git ls-files
  --cached --others --exclude-standard``: the files as they are on disk, edits not yet staged
  and new files included) -- the code, the tests, the harnesses, the vector files, the
  templates, the Makefile;
* the ``--version`` of every toolchain tests/conftest.py ``TOOLCHAINS`` names and of the other
  programs the tests run (``TOOLS`` below), with the path each resolves to on ``PATH``;
* the Debian package database (``/var/lib/dpkg/status``: any installed, removed or upgraded
  package -- headers such as SIMDe and Botan, libraries, compilers -- changes it), the CPU's
  flags, the Python version and its installed distributions, and the environment variables
  that steer the tools (``THREEFISH_GEN_*``, ``PATH``, ``CC``...).

Any change to one of these runs every matrix test again; nothing finer is claimed.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import pytest

# programs the tests run beside the toolchains conftest.py checks for
TOOLS = ("gcc", "clang", "nasm", "ld", "objdump", "cmake", "pkg-config", "qemu-i386", "qemu-x86_64",
         "qemu-aarch64", "qemu-s390x", "aarch64-linux-gnu-gcc", "s390x-linux-gnu-gcc", "x86_64-w64-mingw32-gcc",
         "wine64", "wine", "dotnet", "cargo", "rustc", "cargo-clippy", "valgrind", "chromium", "bwrap", "gcc-12",
         "clang-14", "i686-linux-gnu-gcc", "/usr/lib/wine/wine64")
ENV_PREFIXES = ("THREEFISH_GEN_", "PYTHON", "SIMDE", "DOTNET_", "CARGO", "RUST", "WINE")
ENV_NAMES = ("PATH", "CC", "CXX", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LD_LIBRARY_PATH", "LANG", "LC_ALL", "TZ")
NO_CACHE_ENV = "THREEFISH_GEN_NO_TEST_CACHE"


def tree_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, check=True).stdout
    return sorted(set(p for p in out.decode().split("\0") if p))


def tree_hash(root: Path) -> str:
    """The content of the work tree's files as they are on disk (a deleted tracked file counts
    as deleted)."""
    h = hashlib.sha256()
    for rel in tree_files(root):
        p = root / rel
        try:
            data = p.read_bytes() if not p.is_symlink() else b"link:" + os.readlink(p).encode()
        except IsADirectoryError:         # a submodule or nested repository: its HEAD
            data = b"dir:" + subprocess.run(["git", "rev-parse", "HEAD"], cwd=p, capture_output=True).stdout
        except FileNotFoundError:
            data = b"<deleted>"
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _version(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        return f"{tool}: absent"
    try:
        p = subprocess.run([path, "--version"], capture_output=True, timeout=60,
                           env={**os.environ, "DOTNET_CLI_TELEMETRY_OPTOUT": "1"})
        text = (p.stdout + p.stderr)[:4000].decode(errors="replace")
    except (OSError, subprocess.SubprocessError) as e:
        text = f"error: {type(e).__name__}"
    return f"{tool}: {os.path.realpath(path)}\n{text}"


def environment_key(root: Path, tools=TOOLS) -> str:
    """Everything outside the test's own name that can decide a matrix test (module doc)."""
    h = hashlib.sha256()

    def part(name: str, value) -> None:
        h.update(name.encode() + b"\0" + (value if isinstance(value, bytes) else str(value).encode()) + b"\0\1")

    part("tree", tree_hash(root))
    with ThreadPoolExecutor(max_workers=8) as pool:
        for v in pool.map(_version, sorted(set(tools))):
            part("tool", v)
    for f in ("/var/lib/dpkg/status", "/proc/cpuinfo"):
        try:
            data = Path(f).read_bytes()
        except OSError:
            data = b"<absent>"
        if f == "/proc/cpuinfo":        # the flags decide native or emulated runs; MHz lines change by the second
            data = b"\n".join(sorted({ln for ln in data.splitlines() if ln.startswith((b"flags", b"model name"))}))
        part(f, hashlib.sha256(data).hexdigest())
    part("python", f"{sys.executable} {sys.version} {platform.platform()}")
    part("dists", sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()))
    part("env", sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES))
    return h.hexdigest()


def test_key(env_key: str, nodeid: str) -> str:
    return hashlib.sha256(f"{env_key}\0{nodeid}".encode()).hexdigest()


class ResultCache:
    """The plugin: one small JSON file per passed test under ``root``."""

    def __init__(self, root: Path, project: Path):
        self.root = Path(root)
        self.project = project
        self._env: str | None = None
        self.cached = 0

    def env(self) -> str:
        if self._env is None:
            self._env = environment_key(self.project)
        return self._env

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    # -- collection (every process that collects: the controller without xdist, each worker with it)
    @pytest.hookimpl(trylast=True)      # after conftest.py has added the matrix markers
    def pytest_collection_modifyitems(self, config, items):
        for item in items:
            if item.get_closest_marker("matrix") is None:
                continue
            key = test_key(self.env(), item.nodeid)
            item.stash[KEY] = key
            if self._path(key).exists():
                item.add_marker(pytest.mark.skip(reason=f"{CACHED_PREFIX} passed before with every input "
                                                        f"unchanged (key {key[:12]}; --no-result-cache runs it)"))

    # -- recording: in the process that ran the test
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        key = item.stash.get(KEY, None)
        if key is None:
            return
        phases = item.stash.setdefault(PHASES, {})
        phases[rep.when] = rep.passed
        if rep.when == "teardown" and all(phases.get(w) for w in ("setup", "call", "teardown")):
            p = self._path(key)
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"nodeid": item.nodeid, "duration": getattr(rep, "duration", None)}) + "\n")
            tmp.replace(p)


KEY = pytest.StashKey[str]()
PHASES = pytest.StashKey[dict]()
CACHED_PREFIX = "cached:"


def is_cached(report) -> bool:
    if not report.skipped or not isinstance(report.longrepr, tuple) or len(report.longrepr) != 3:
        return False
    reason = str(report.longrepr[2])
    return reason.startswith(CACHED_PREFIX) or reason.startswith("Skipped: " + CACHED_PREFIX)


def pytest_addoption(parser):
    group = parser.getgroup("result-cache", "the matrix tests' result cache (tests/result_cache.py)")
    group.addoption("--result-cache", metavar="DIR", default=None,
                    help="do not run a matrix test that passed before with every input unchanged")
    group.addoption("--no-result-cache", action="store_true", help="run every test (overrides --result-cache)")


def pytest_configure(config):
    root = config.getoption("--result-cache", None)
    if root and not config.getoption("--no-result-cache") and not os.environ.get(NO_CACHE_ENV):
        project = Path(config.rootpath)
        config.pluginmanager.register(ResultCache(Path(root) if Path(root).is_absolute() else project / root,
                                                  project), "threefish-result-cache")


def pytest_report_teststatus(report, config):
    # the controller's view (with xdist the reports come from the workers): a cached test is
    # its own category, "N cached" in the summary line, never "passed" nor "skipped"
    if report.when in ("setup", "call") and is_cached(report):
        return "cached", "c", ("CACHED", {"cyan": True})
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    n = len(terminalreporter.stats.get("cached", []))
    if n:
        terminalreporter.write_line(f"result cache: {n} matrix test(s) not run: they passed before with every "
                                    f"input unchanged (tests/result_cache.py; --no-result-cache runs them)")
