"""verify for the SIMD C target ``c-simd``: the scalar C harness, per ISA.

Every variant is built with gcc and clang (plus ASan/UBSan) like scalar C.  A
variant whose ISA the CPU lacks is built against SIMDe (``libsimde-dev``,
``-DTHREEFISH_GEN_SIMDE``) and reported ``PASS (emulated)``; without SIMDe it
is SKIPPED with the reason.  The build ``clang simde`` always emulates, so the
portable path is exercised on every machine.  The dispatcher is run once per
level the CPU has, forced with ``THREEFISH_GEN_ISA``.

Cross builds (verify/runner.py: a Build with an emulator): variants of the NEON family are built
for aarch64 only and run under qemu-aarch64; the dispatcher is built for x86, aarch64 (its NEON
path) and big-endian s390x (portable scalar C) as well.  They are reported ``PASS (emulated)``.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from threefish_gen.gen.printers.c_simd.driver import ENV_VAR, NEON_ISAS
from threefish_gen.gen.printers.c_simd.printer import ISAS
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.variant import Variant

from .runner import (AARCH64_BUILDS, BIG_ENDIAN_BUILDS, SANITIZE, WARN, Build, Row, _first_lines, build_harness,
                     cpu_flags, run_harness)

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
# the result cache's key (verify/shard.py row_key): the SIMDe headers' content (an upgrade of the
# emulation changes every emulated row); the compilers and emulators are the builds' own
TOOLS = ("@simde-headers",)
# Every emulated build: SIMDe's portable fallback computes 64-bit lanes in *signed* types
# (e.g. simde_mm512_sub_epi64: a_.i64 - b_.i64), undefined behaviour in C when it wraps --
# and Threefish's adds and subtracts wrap all the time.  -fwrapv defines that arithmetic as
# the two's complement the real instructions compute, so UBSan has nothing to report in the
# emulation library; the generated code itself has no signed arithmetic (its only casts to
# long long are conversions, not arithmetic) and is checked with the full sanitizer set in
# the native rows of the same text.
SIMDE_EMULATED = ("-fwrapv", "-Wno-psabi")   # -Wno-psabi: SIMDe passes vectors by value
# Emulated *sanitizer* builds: gcc -O1 ASan over SIMDe's always-inline AVX-512 functions took
# 233 s per build here (16 min on a slower machine, 1.8-2.3 GB); with SIMDe's functions kept
# out of line and -O0 it takes 12 s (clang 3 s) and the sanitizers still see every load and
# store the generated code makes (SIMDe's loads/stores are instrumented memcpy calls).
SIMDE_SANITIZE = ("-O0", "-DSIMDE_NO_INLINE")
# Emulated *optimized* gcc builds (gcc -O2 on a CPU without the variant's ISA): gcc inlining
# SIMDe's always-inline AVX-512 layers into a fully unrolled kernel and optimizing the result took
# 80 s of CPU for one file here (the row 47 s on average over the AVX-512 variants of --set all,
# 81 s the slowest); with SIMDe's functions out of line 19 s.  The generated code is still
# compiled at -O2 -- what the row checks is that gcc's optimizer keeps it right -- and calls the
# emulation instead of inlining it.  clang is left inline: out of line made its compile slower
# (9.3 -> 14.6 s of CPU for the same file).
SIMDE_OUT_OF_LINE = ("-DSIMDE_NO_INLINE",)
SIMDE_OUT_OF_LINE_CC = ("gcc",)               # the optimized builds of these compilers
SIMDE_LIBS = ("-lm",)                         # out-of-line SIMDe functions reference libm


# Dispatcher levels a cross build can force, by its architecture (x86: _levels below).
CROSS_LEVELS = {"aarch64": ["scalar", *sorted(NEON_ISAS, key=lambda n: NEON_ISAS[n].level)], "s390x": ["scalar"]}


def builds(variant: Variant) -> tuple:
    """The builds of a variant, keyed by its ISA: NEON -> aarch64 cross builds; the dispatcher ->
    native, aarch64 and big-endian; x86 ISAs -> native (SIMDe where the CPU lacks the ISA)."""
    isa = variant.get("isa")
    if isa in NEON_ISAS:
        return AARCH64_BUILDS
    if isa == "auto":
        return SIMD_BUILDS + AARCH64_BUILDS + BIG_ENDIAN_BUILDS
    return SIMD_BUILDS


def _run_paths(argv: list[str], names: list, label: str, build: Build, workdir: Path, t0: float,
               leaks: bool = True) -> tuple[Row | None, int]:
    """Run a built harness once per dispatcher path forced with THREEFISH_GEN_ISA (``names``;
    [None]: once, unforced): (the FAIL row of the first path that fails, or None; checks run)."""
    checks = 0
    for name in names:
        env = dict(os.environ)
        env.pop(ENV_VAR, None)
        if name is not None:
            env[ENV_VAR] = name
        ok, out, n = run_harness(argv, workdir, env, timeout=1800, leaks=leaks)
        checks += n
        if not ok:
            where = f"[{ENV_VAR}={name}] " if name else ""
            return Row(label, build.name, "FAIL", where + _first_lines(out, 4), time.monotonic() - t0, checks), checks
    return None, checks


def check_cross(variant: Variant, build: Build, workdir: Path, vectors: Path) -> Row:
    """A cross build run under its emulator; the dispatcher once per level that architecture has."""
    label, t0 = variant.label(), time.monotonic()
    exe, why = build_harness(variant, build, workdir)
    if exe is None:
        return Row(label, build.name, "FAIL", why, time.monotonic() - t0)
    names = CROSS_LEVELS[build.arch] if variant.get("isa") == "auto" else [None]
    failed, checks = _run_paths(build.command(exe, str(vectors)), names, label, build, workdir, t0, leaks=False)
    if failed:
        return failed
    detail = f"{checks} checks; {build.arch} under {build.runner[0]}"
    if names != [None]:
        detail += f"; paths {', '.join(names)}"
    return Row(label, build.name, "PASS (emulated)", detail, time.monotonic() - t0, checks)


def cpu_level() -> int:
    flags = cpu_flags()
    level = 0
    for isa in sorted(ISAS.values(), key=lambda i: i.level):
        if set(isa.features) <= flags:
            level = isa.level
    return level


def simde_available() -> bool:
    return SIMDE_HEADER.exists()


def emulated_flags(build: Build) -> tuple[list[str], list[str], str]:
    """(cflags, libraries, note for the row) of a build run against SIMDe."""
    cflags = [f for f in build.cflags if f != SIMDE_DEFINE] + [SIMDE_DEFINE, *SIMDE_EMULATED]
    note = "SIMDe with -fwrapv (its portable code wraps signed lanes)"
    if any(f.startswith("-fsanitize=") for f in cflags):
        cflags = [f for f in cflags if not (f.startswith("-O") and len(f) == 3)] + list(SIMDE_SANITIZE)
        note += "; sanitizer build at -O0 with SIMDe out of line (SIMDE_NO_INLINE)"
    elif Path(build.cc).name in SIMDE_OUT_OF_LINE_CC:
        level = next((f for f in cflags if f.startswith("-O")), "-O0")
        cflags += list(SIMDE_OUT_OF_LINE)
        note += f"; the generated code at {level}, SIMDe's functions out of line (SIMDE_NO_INLINE)"
    return cflags, list(SIMDE_LIBS), note


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
    if build.runner:
        return check_cross(variant, build, workdir, vectors)
    if SIMDE_DEFINE in build.cflags and variant.get("isa") == "auto":
        return Row(label, build.name, "SKIPPED",
                   "dispatcher: its paths are emulated through the standalone variants' rows")
    need = get_target(variant.target).features(variant)
    lacking = sorted(need - cpu_flags())
    emulated = SIMDE_DEFINE in build.cflags or bool(lacking)
    if emulated and not simde_available():
        reason = (f"CPU lacks {', '.join(lacking)} and " if lacking else "") + \
            "SIMDe (libsimde-dev) is not installed"
        return Row(label, build.name, "SKIPPED", reason)
    t0 = time.monotonic()
    cflags, libs, how = emulated_flags(build) if emulated else (list(build.cflags), [], "")
    exe, why = build_harness(variant, build, workdir, cflags, libs)
    if exe is None:
        return Row(label, build.name, "FAIL", why, time.monotonic() - t0)
    done = [n for n, _ in _levels(variant, emulated)] if variant.get("isa") == "auto" else [None]
    failed, checks = _run_paths([str(exe), str(vectors)], done, label, build, workdir, t0)
    if failed:
        return failed
    status = "PASS (emulated)" if emulated else "PASS"
    detail = f"{checks} checks"
    if done != [None]:
        detail += f"; paths {', '.join(done)}"
    if lacking:
        detail += f"; CPU lacks {', '.join(lacking)}"
    if how:
        detail += f"; {how}"
    return Row(label, build.name, status, detail, time.monotonic() - t0, checks)
