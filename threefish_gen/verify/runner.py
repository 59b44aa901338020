"""Stage 6 -- verify: the C harness, vectors and build helpers every checker uses.

For each variant and each toolchain configuration (a *build*), the variant is
rendered, compiled with the C harness (``verify/harness/harness.c``) and run
against a vector file made by the reference model:

* every known-answer record of the variant's version and size,
* ``random`` random vectors (reference encrypt; the harness also decrypts),
* ``encrypt_blocks`` batches of n = 0..33 blocks, each block with its own tweak,

and the harness checks misalignment 0..7, guard bytes, unchanged inputs and in
place operation.  ``check_c`` is the scalar C checker; the driver that runs every
checker over a set of variants is ``verify/matrix.py``.
"""
from __future__ import annotations

from importlib.resources import files
import os
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from threefish_gen.gen import reference
from threefish_gen.gen.kat import threefish_records
from threefish_gen.gen.render import Variant
from threefish_gen.gen.spec import Spec

from . import objstore
from .objects import c_object
from .cpu import cpu_flags  # noqa: F401  (re-exported for the checkers and tools/bench/run.py)
from .proc import RUN_LIMITS
from .proc import run as run_command
from .sources import write as write_source_files

HERE = Path(str(files(__package__)))   # package data: harness/, kat/
HARNESS = HERE / "harness" / "harness.c"
BATCH_SIZES = tuple(range(0, 34))

WARN = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]


@dataclass(frozen=True)
class Build:
    """One toolchain configuration a C variant is built and run under."""

    name: str          # e.g. "gcc -O2"
    cc: str            # compiler driver
    cflags: tuple
    cxx: str | None = None   # also compile the variant as C++ with this driver
    runner: tuple = ()       # cross builds: the emulator the harness runs under (qemu-user)
    arch: str | None = None  # cross builds: the architecture (its verify rows are "PASS (emulated)")
    needs: tuple = ()        # cross builds: files the toolchain needs (the target's C library)
    install: str = ""        # what to install when a tool or file is missing

    def missing(self) -> str | None:
        for tool in (self.cc, self.cxx, *self.runner[:1]):
            if tool and shutil.which(tool) is None:
                return f"{tool} not installed" + (f" ({self.install})" if self.install else "")
        for f in self.needs:
            if not Path(f).exists():
                return f"{f} missing" + (f" ({self.install})" if self.install else "")
        return None

    @property
    def thorough(self) -> bool:
        """Left out of `check`'s fast default: cross/emulated, sanitizer and SIMDe builds."""
        return bool(self.runner) or any(f.startswith(("-fsanitize", "-DTHREEFISH_GEN_SIMDE")) for f in self.cflags)

    def command(self, exe: Path, *args: str) -> list[str]:
        """The argv running a built harness (under the emulator for cross builds)."""
        return [*self.runner, str(exe), *args]


SANITIZE = ("-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer")
C_BUILDS = (
    Build("gcc -O2", "gcc", ("-O2", "-std=c99", *WARN), "g++"),
    Build("clang -O2", "clang", ("-O2", "-std=c99", *WARN), "clang++"),
    Build("gcc asan+ubsan", "gcc", ("-std=c99", *SANITIZE, *WARN)),
    Build("clang asan+ubsan", "clang", ("-std=c99", *SANITIZE, *WARN)),
)

# Cross builds run under qemu-user (Debian: scripts/bootstrap.sh installs them).  Statically linked
# where possible, so qemu needs no -L; the sanitizer runtimes are shared libraries only (-L sysroot).
_A64 = "gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user"
_S390X = "gcc-s390x-linux-gnu, libc6-dev-s390x-cross, qemu-user"
_A64_LIBC = ("/usr/aarch64-linux-gnu/lib/libc.a",)
AARCH64_BUILDS = (
    Build("aarch64 gcc -O2", "aarch64-linux-gnu-gcc", ("-O2", "-std=c99", "-static", *WARN),
          runner=("qemu-aarch64",), arch="aarch64", needs=_A64_LIBC, install=_A64),
    Build("aarch64 clang -O2", "clang", ("--target=aarch64-linux-gnu", "-O2", "-std=c99", "-static", *WARN),
          runner=("qemu-aarch64",), arch="aarch64", needs=_A64_LIBC + ("/usr/bin/aarch64-linux-gnu-ld",),
          install=_A64),
    Build("aarch64 gcc asan+ubsan", "aarch64-linux-gnu-gcc", ("-std=c99", *SANITIZE, *WARN),
          runner=("qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"), arch="aarch64",
          needs=("/usr/aarch64-linux-gnu/lib/libasan.so.8",), install=_A64),
)
BIG_ENDIAN_BUILDS = (
    Build("s390x gcc -O2", "s390x-linux-gnu-gcc", ("-O2", "-std=c99", "-static", *WARN),
          runner=("qemu-s390x",), arch="s390x", needs=("/usr/s390x-linux-gnu/lib/libc.a",), install=_S390X),
)


@dataclass
class Row:
    variant: str
    build: str
    status: str                 # PASS, PASS (emulated), FAIL, TIMEOUT, SKIPPED, ASSEMBLED or BUILT (not run),
    #                             COVERED (not run: verify/shapes.py)
    detail: str = ""
    seconds: float = 0.0
    checks: int = 0
    cached: bool = False        # reused from the result cache (verify/shard.py), not run this time


@dataclass
class Report:
    rows: list = field(default_factory=list)
    seed: int = 0
    random_vectors: int = 0
    cached: int = 0             # rows reused from the result cache

    @property
    def failed(self) -> bool:
        return any(r.status == "FAIL" for r in self.rows)

    @property
    def timed_out(self) -> bool:
        return any(r.status == "TIMEOUT" for r in self.rows)

    @property
    def passed(self) -> int:
        return sum(1 for r in self.rows if r.status.startswith("PASS"))

    def exit_status(self) -> int:
        """1: a FAIL; 3: no FAIL but some row timed out; 4: nothing ran (every row SKIPPED or only
        assembled); 0: every row that ran passed."""
        return self.verdict()[0]

    def verdict(self) -> tuple[int, str]:
        """(exit status, the one line that says it): FAIL, TIMEOUT, nothing ran and PASS are
        told apart, in that order of precedence."""
        failed = sum(1 for r in self.rows if r.status == "FAIL")
        timed_out = sum(1 for r in self.rows if r.status == "TIMEOUT")
        if failed:
            return 1, f"FAIL: {failed} row(s) failed" + (f", {timed_out} timed out" if timed_out else "") + \
                " (exit status 1)"
        if timed_out:
            return 3, (f"TIMEOUT: {timed_out} row(s) hit a time limit (THREEFISH_GEN_TIMEOUT_SCALE raises them), "
                       f"none failed (exit status 3)")
        if not self.passed:
            return 4, ("NOTHING RAN: no row built and ran anything (see the SKIPPED reasons above); "
                       "nothing was checked (exit status 4)")
        return 0, f"PASS: every row that ran passed ({self.passed}) (exit status 0)"


# --------------------------------------------------------------------------- vectors

def vector_file(spec: Spec, path: Path, count: int, seed: int) -> Path:
    """KATs + `count` random vectors + encrypt_blocks batches, from the reference model."""
    rng = random.Random(f"{seed}-{spec.tag}")
    nb = spec.block_bytes
    lines = [f"# Threefish-{spec.bits} v{spec.version}: known answers, {count} random vectors, "
             f"batches n=0..{BATCH_SIZES[-1]} (seed {seed})"]
    for r in threefish_records(spec.version, spec.bits):
        lines.append(f"V {r['key'].hex()} {r['tweak'].hex()} {r['plaintext'].hex()} {r['ciphertext'].hex()}")
    for _ in range(count):
        key, tweak, pt = rng.randbytes(nb), rng.randbytes(16), rng.randbytes(nb)
        ct = reference.encrypt(spec, key, tweak, pt)
        lines.append(f"V {key.hex()} {tweak.hex()} {pt.hex()} {ct.hex()}")
    for n in BATCH_SIZES:
        key = rng.randbytes(nb)
        tweaks = [rng.randbytes(16) for _ in range(n)]
        pts = [rng.randbytes(nb) for _ in range(n)]
        cts = [reference.encrypt(spec, key, t, p) for t, p in zip(tweaks, pts)]
        lines.append(f"B {n} {key.hex()} {b''.join(tweaks).hex()} {b''.join(pts).hex()} "
                     f"{b''.join(cts).hex()}".rstrip())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------------------- builds

COMPILE_LIMIT = 600      # seconds per compiler/assembler/linker command (times THREEFISH_GEN_TIMEOUT_SCALE)
RUN_LIMIT = 900          # seconds per harness run


def _run(cmd: list[str], cwd: Path, timeout: int = COMPILE_LIMIT) -> tuple[int, str]:
    """A build step; raises proc.Timeout (the runner reports TIMEOUT) past its limit.  valgrind
    (verify/ct.py) runs the code under test: it gets the harness's limits and sandbox."""
    if Path(cmd[0]).name == "valgrind":
        return run_command(cmd, cwd, timeout, what="valgrind run", limits=RUN_LIMITS,
                           sandbox=[Path(cwd).resolve()])
    return run_command(cmd, cwd, timeout, what=f"{Path(cmd[0]).name} (build)")


def _first_lines(text: str, n: int = 3) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[:n])


def run_harness(argv: list[str], workdir: Path, env: dict | None = None,
                timeout: int = RUN_LIMIT, leaks: bool = True) -> tuple[bool, str, int]:
    """Run a built harness: (passed, its output, number of checks it reports).  A sanitizer
    report fails the run even when the exit status does not.  Raises proc.Timeout past the
    limit.  ``leaks=False``: no LeakSanitizer (it cannot run under qemu-user's ptrace-like view).
    The harness runs the user's code: under proc.RUN_LIMITS and in the sandbox (no network; where
    bwrap works, nothing writable but ``workdir`` -- and for wine its prefix and /tmp)."""
    env = dict(os.environ if env is None else env,
               ASAN_OPTIONS=f"detect_leaks={int(leaks)}:abort_on_error=0:disable_coredump=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    writable = [Path(workdir).resolve()]
    if Path(argv[0]).name.startswith("wine"):
        # wine writes its prefix (made on first use: bind the folder that will hold it) and
        # meets its wineserver in /tmp/.wine-UID
        prefix = Path(env.get("WINEPREFIX") or Path.home() / ".wine")
        writable += [prefix if prefix.exists() else prefix.parent, Path("/tmp")]
    rc, out = run_command(argv, workdir, timeout, env, what="harness run", limits=RUN_LIMITS, sandbox=writable)
    checks = 0
    for ln in out.splitlines():
        if ln.startswith("harness:") and "passed" in ln:
            checks = int(ln.split()[1])
    return not (rc or "runtime error" in out or "AddressSanitizer" in out), out, checks


def link_harness(cc: str, cflags, variant: Variant, src_dir: Path, sources, exe: Path,
                 workdir: Path, libs=(), harness: Path = HARNESS) -> tuple[int, str]:
    """Compile and link the C harness for a variant (its header in src_dir) with its code
    (C sources or objects) and libraries: (exit status, compiler output)."""
    return _run([cc, *cflags, f"-I{src_dir}", f"-DTF_HEADER=\"{variant.stem}.h\"",
                 f"-DTF_PREFIX={variant.prefix}", f"-DTF_BYTES={variant.spec.block_bytes}",
                 str(harness), *map(str, sources), "-o", str(exe), *libs], workdir)


def compile_c(cc: str, cflags, variant: Variant, src_dir: Path, workdir: Path) -> tuple[int, str, Path | None]:
    """Compile a C variant's file (rendered in src_dir) to an object, once per run for the same
    compiler, flags and text (verify/objstore.py; the gcc -O2 row and the constant-time row share
    it): (exit status, compiler output, the object or None)."""
    return c_object(variant.stem, src_dir, workdir, _run, cc, cflags)


def build_harness(variant: Variant, build: Build, workdir: Path, cflags=None,
                  libs=(), harness: Path = HARNESS) -> tuple[Path | None, str]:
    """Render a C variant into workdir/src, check that it compiles as C++ (when the build says so),
    compile it (:func:`compile_c`) and link it with the C harness: (executable, "") or (None, why
    it failed)."""
    src_dir = workdir / "src"
    write_source_files(variant, src_dir)     # the user's files: hard links to one copy
    src = src_dir / f"{variant.stem}.c"
    exe = workdir / (harness.stem + "-" + build.name.replace(" ", "-").replace("+", "_"))
    if build.cxx:
        rc, out, _ = objstore.build([build.cxx, "-x", "c++", "-std=c++11", "-O0", "-fsyntax-only",
                                     "-Wall", "-Wextra", "-Wpedantic", "-Werror", str(src)], src_dir,
                                    [src, *sorted(src_dir.glob("*.h"))], _run, workdir)
        if rc:
            return None, "does not compile as C++: " + _first_lines(out)
    cflags = list(build.cflags if cflags is None else cflags)
    rc, out, obj = compile_c(build.cc, cflags, variant, src_dir, workdir)
    if rc:
        return None, "build failed: " + _first_lines(out)
    rc, out = link_harness(build.cc, cflags, variant, src_dir, [obj], exe, workdir, libs, harness)
    if rc:
        return None, "build failed: " + _first_lines(out)
    return exe, ""


def check_c(variant: Variant, build: Build, workdir: Path, vectors: Path) -> Row:
    label = variant.label()
    why = build.missing()
    if why:
        return Row(label, build.name, "SKIPPED", why)
    t0 = time.monotonic()
    exe, why = build_harness(variant, build, workdir)
    if exe is None:
        return Row(label, build.name, "FAIL", why, time.monotonic() - t0)
    ok, out, checks = run_harness(build.command(exe, str(vectors)), workdir, leaks=not build.runner)
    if not ok:
        return Row(label, build.name, "FAIL", _first_lines(out, 4), time.monotonic() - t0, checks)
    if build.runner:
        return Row(label, build.name, "PASS (emulated)", f"{checks} checks; {build.arch} under {build.runner[0]}",
                   time.monotonic() - t0, checks)
    return Row(label, build.name, "PASS", f"{checks} checks", time.monotonic() - t0, checks)
