"""verify for the SIMD C target ``c-simd``: the scalar C harness, per ISA.

Every variant is built with gcc and clang (plus ASan/UBSan) like scalar C.  A
variant whose ISA the CPU lacks is built against SIMDe (``libsimde-dev``,
``-DTHREEFISH_GEN_SIMDE``) and reported ``PASS (emulated)``; without SIMDe it
is SKIPPED with the reason.  The build ``clang simde`` always emulates, so the
portable path is exercised on every machine.  The dispatcher is run once per
level the CPU has, forced with ``THREEFISH_GEN_ISA``.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from gen.render import Variant
from gen.render_simd import ENV_VAR, required_features as _required
from gen.printers.c_simd import ISAS

from . import runner
from .runner import SANITIZE, WARN, Build, Row, _first_lines, build_harness, cpu_flags, run_harness

SIMDE_DEFINE = "-DTHREEFISH_GEN_SIMDE"
SIMD_BUILDS = (
    Build("gcc -O2", "gcc", ("-O2", "-std=c99", *WARN), "g++"),
    Build("clang -O2", "clang", ("-O2", "-std=c99", *WARN), "clang++"),
    Build("gcc asan+ubsan", "gcc", ("-std=c99", *SANITIZE, *WARN)),
    Build("clang asan+ubsan", "clang", ("-std=c99", *SANITIZE, *WARN)),
    # Always emulated (clang: SIMDe's inline layers compile 4x faster than with gcc).
    Build("clang simde", "clang", ("-O1", "-std=c99", *WARN, SIMDE_DEFINE)),
)
SIMDE_HEADER = Path("/usr/include/simde/x86/avx512.h")


def required_features(variant: Variant) -> set[str]:
    """cpuinfo flags the variant needs to run natively (for bench: skip what cannot run)."""
    return _required(variant)


def op_counts(variant: Variant) -> dict[str, float]:
    """Vector ops / shuffles / shifts per block the layout reports (bench prints them)."""
    from gen.render_simd import op_counts as _counts
    return _counts(variant)


def cpu_level() -> int:
    flags = cpu_flags()
    level = 0
    for isa in sorted(ISAS.values(), key=lambda i: i.level):
        if set(isa.features) <= flags:
            level = isa.level
    return level


def simde_available() -> bool:
    return SIMDE_HEADER.exists()


def object_commands(variant: Variant, src_dir, obj_path, cc: str = "gcc") -> list[list[str]]:
    """Compile the rendered files into one object (no -m flags: code carries target attributes)."""
    src = Path(src_dir) / f"{variant.stem}.c"
    return [[cc, "-O2", "-std=c99", f"-I{src_dir}", "-c", str(src), "-o", str(obj_path)]]


def _levels(variant: Variant, emulated: bool) -> list[tuple[str, int]]:
    """Dispatcher paths to force: (name, level) for each level the run can execute."""
    top = max(i.level for i in ISAS.values()) if emulated else cpu_level()
    names = ["scalar"] + [i.name for i in sorted(ISAS.values(), key=lambda i: i.level)]
    return [(n, lv) for lv, n in enumerate(names) if lv <= top]


def check_simd(variant: Variant, build: Build, workdir: Path, vectors: Path) -> Row:
    label = variant.label()
    why = build.missing()
    if why:
        return Row(label, build.name, "SKIPPED", why)
    if SIMDE_DEFINE in build.cflags and variant.get("isa") == "auto":
        return Row(label, build.name, "SKIPPED",
                   "dispatcher: its paths are emulated through the standalone variants' rows")
    need = required_features(variant)
    lacking = sorted(need - cpu_flags())
    emulated = SIMDE_DEFINE in build.cflags or bool(lacking)
    if emulated and not simde_available():
        reason = (f"CPU lacks {', '.join(lacking)} and " if lacking else "") + \
            "SIMDe (libsimde-dev) is not installed"
        return Row(label, build.name, "SKIPPED", reason)
    t0 = time.monotonic()
    cflags = list(build.cflags)
    if emulated and SIMDE_DEFINE not in cflags:
        cflags.append(SIMDE_DEFINE)
    if emulated:
        cflags.append("-Wno-psabi")   # SIMDe passes emulated vectors by value: ABI notes, not bugs
    exe, why = build_harness(variant, build, workdir, cflags)
    if exe is None:
        return Row(label, build.name, "FAIL", why, time.monotonic() - t0)
    runs = _levels(variant, emulated) if variant.get("isa") == "auto" else [(None, None)]
    checks, done = 0, []
    for name, _ in runs:
        env = dict(os.environ)
        env.pop(ENV_VAR, None)
        if name is not None:
            env[ENV_VAR] = name
        ok, out, n = run_harness([str(exe), str(vectors)], workdir, env, timeout=1800)
        checks += n
        if not ok:
            where = f"[{ENV_VAR}={name}] " if name else ""
            return Row(label, build.name, "FAIL", where + _first_lines(out, 4), time.monotonic() - t0, checks)
        done.append(name)
    status = "PASS (emulated)" if emulated else "PASS"
    detail = f"{checks} checks"
    if done != [None]:
        detail += f"; paths {', '.join(done)}"
    if lacking:
        detail += f"; CPU lacks {', '.join(lacking)}"
    return Row(label, build.name, status, detail, time.monotonic() - t0, checks)


def register(checkers: dict) -> None:
    checkers["c-simd"] = (check_simd, SIMD_BUILDS)


register(runner.CHECKERS)
