"""verify's emulated rows (SIMDe) and its time limits, as a CPU without AVX-512 meets them.

The AVX-512 path is forced to the emulated build with THREEFISH_GEN_HIDE_CPU_FLAGS even on a CPU
that has AVX-512, so what an AVX2-only machine runs is tested on every machine.
"""
from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threefish_gen.gen.targets.c_simd import TARGET as SIMD  # noqa: E402
from threefish_gen.gen.render import render_variant  # noqa: E402
from threefish_gen.gen.spec import Spec, all_specs  # noqa: E402
from threefish_gen.gen.threefish import Options  # noqa: E402
from threefish_gen.verify import matrix, proc, runner, simd, sources  # noqa: E402
from threefish_gen.verify.cpu import HIDE_VAR, cpu_flags  # noqa: E402

GCC_ASAN = next(b for b in simd.SIMD_BUILDS if b.name == "gcc asan+ubsan")


def _avx512_variant(interleave: int = 2) -> object:
    return SIMD.simd(Spec("1.3", 256), "avx512", "lanes", Options("fly", "full", interleave))


def test_hiding_flags_takes_them_out_of_cpu_flags(monkeypatch):
    monkeypatch.setenv(HIDE_VAR, "avx512*,sse2")
    flags = cpu_flags()
    assert not any(f.startswith("avx512") for f in flags) and "sse2" not in flags
    monkeypatch.delenv(HIDE_VAR)
    assert "sse2" in cpu_flags()           # every x86-64 CPU has it


def test_emulated_avx512_under_gcc_sanitizers_passes(tmp_path, monkeypatch):
    """The build that failed on AVX2-only machines (SIMDe's signed lane arithmetic under UBSan),
    built and run exactly as verify does."""
    monkeypatch.setenv(HIDE_VAR, "avx512*")
    v = _avx512_variant()
    vec = runner.vector_file(v.spec, tmp_path / "vectors.txt", 20, 7)
    t0 = time.monotonic()
    row = simd.check_simd(v, GCC_ASAN, tmp_path, vec)
    assert row.status == "PASS (emulated)", row.detail
    assert row.checks > 1000
    assert "CPU lacks avx512f" in row.detail and "-fwrapv" in row.detail and "SIMDE_NO_INLINE" in row.detail
    assert time.monotonic() - t0 < 300     # was 233 s of compile alone, 16 min elsewhere


def test_emulated_sanitizer_build_still_catches_an_out_of_bounds_read(tmp_path, monkeypatch):
    """-O0 with SIMDe out of line must keep ASan meaningful for the generated code: plant a read
    before the input block and expect a sanitizer report, not a pass.  The interleave-1 kernel (124
    KB: the same loads and SIMDe calls as the 276 KB interleave-2 one the test above passes, whose
    ASan build took 16 CPU-seconds here too); the planted read is on the same line."""
    monkeypatch.setenv(HIDE_VAR, "avx512*")
    v = _avx512_variant(1)

    def planted(variant):
        files = render_variant(variant)
        c = f"{variant.stem}.c"
        assert f"load64(in + 24)" in files[c]
        files[c] = files[c].replace("load64(in + 24)", "load64(in - 40)", 1)
        return files

    monkeypatch.setattr(sources, "render_variant", planted)     # what the checkers build (verify/sources.py)
    vec = runner.vector_file(v.spec, tmp_path / "vectors.txt", 2, 7)
    row = simd.check_simd(v, GCC_ASAN, tmp_path, vec)
    assert row.status == "FAIL" and "AddressSanitizer" in row.detail, row.detail


GCC_O2 = next(b for b in simd.SIMD_BUILDS if b.name == "gcc -O2")


@dataclass(frozen=True, eq=False)
class WrongRotation(Spec):
    """A spec whose rotation table differs in one entry (the code under test gets this one)."""

    @property
    def rot(self):
        rows = [list(r) for r in super().rot]
        rows[3][1] = (rows[3][1] + 1) % 64
        return tuple(tuple(r) for r in rows)


def test_emulated_gcc_o2_row_builds_the_kernel_at_o2_with_simde_out_of_line(tmp_path, monkeypatch):
    """gcc -O2 on a CPU without AVX-512: the generated code at -O2, SIMDe's functions not inlined
    (inlining them cost about a minute of gcc per row), and the row says so."""
    monkeypatch.setenv(HIDE_VAR, "avx512*")
    cflags, libs, note = simd.emulated_flags(GCC_O2)
    assert "-O2" in cflags and "-DSIMDE_NO_INLINE" in cflags and "-O0" not in cflags
    assert "at -O2" in note and "SIMDE_NO_INLINE" in note
    clang = next(b for b in simd.SIMD_BUILDS if b.name == "clang -O2")
    assert "-DSIMDE_NO_INLINE" not in simd.emulated_flags(clang)[0]   # clang: faster inline
    v = SIMD.simd(Spec("1.3", 256), "avx512", "lanes", Options("fly", "full", 1))
    vec = runner.vector_file(v.spec, tmp_path / "vectors.txt", 20, 7)
    row = simd.check_simd(v, GCC_O2, tmp_path / "good", vec)
    assert row.status == "PASS (emulated)" and row.checks > 1000, row.detail
    assert "at -O2, SIMDe's functions out of line (SIMDE_NO_INLINE)" in row.detail


def test_emulated_gcc_o2_row_fails_a_wrong_rotation_constant(tmp_path, monkeypatch):
    """The out-of-line emulation still runs the kernel the optimizer made: one wrong rotation
    constant in the rendered source fails the row."""
    monkeypatch.setenv(HIDE_VAR, "avx512*")
    good = Spec("1.3", 256)
    bad = SIMD.simd(WrongRotation("1.3", 256), "avx512", "lanes", Options("fly", "full", 1))
    vec = runner.vector_file(good, tmp_path / "vectors.txt", 5, 7)
    row = simd.check_simd(bad, GCC_O2, tmp_path / "bad", vec)
    assert row.status == "FAIL" and "FAIL" in row.detail, row.detail


SIGNED = re.compile(r"\b(?:signed|short|long|int|int8_t|int16_t|int32_t|int64_t|intptr_t|ptrdiff_t|ssize_t)\b")


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.tag)
def test_generated_simd_code_has_no_signed_arithmetic(spec):
    """-fwrapv in the emulated rows hides nothing of ours only while the generated cipher code
    computes nothing in signed types: its casts to long long (the intrinsics' argument type) are
    conversions; the one other signed value is the byte loop counter of the big-endian store (the
wipe's pointer to memset names memset's prototype, whose int is a type, not arithmetic; the
    dispatcher's level cache and its two accessors' declarations: a CPU level the wipe compares
    with, never a cipher value).
    (The CPU detection after the cipher code -- the dispatcher's, cpu_supported's -- works on small
    ints: not checked.)"""
    for v in SIMD.recommended(spec):
        text = render_variant(v)[f"{v.stem}.c"].split("/* ---- runtime dispatch")[0].split("/* ---- CPU support")[0]
        text = text.replace("(long long)(", "(")
        # the wipe's memset pointer names memset's prototype (void *, int, size_t): a type, no arithmetic
        text = re.sub(r"_wipe_memset\)\(void \*, int, size_t\)", "_wipe_memset)(memset prototype)", text)
        for line in text.splitlines():
            if SIGNED.search(line):
                assert re.fullmatch(r"\s*int i;", line) or re.fullmatch(
                    r"static (?:int {p}level_cache = -1;|int {p}level\(void\);|inline int {p}level_unknown\(void\))"
                    .replace("{p}", re.escape(v.prefix)), line), line


def test_a_time_limit_kills_the_whole_process_group(tmp_path):
    """A command past its limit raises Timeout and leaves no child running (a gcc driver's cc1)."""
    pidfile = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {pidfile}; wait"
    with pytest.raises(proc.Timeout) as e:
        proc.run(["bash", "-c", script], tmp_path, timeout=1, what="test command")
    assert "1 s limit" in str(e.value)
    child = int(pidfile.read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{child}/status")
    state = status.read_text().split("State:")[1].split()[0] if status.exists() else "gone"
    assert state in ("gone", "Z", "X")          # killed (a zombie until its new parent reaps it)


def test_a_timeout_is_a_timeout_row_not_a_fail(tmp_path, monkeypatch):
    monkeypatch.setenv("THREEFISH_GEN_TIMEOUT_SCALE", "0.00001")   # every limit far below a compile
    v = SIMD.simd(Spec("1.3", 256), "sse2", "lanes")
    rep = matrix.run([v], random_count=2, seed=1, jobs=1, workdir=tmp_path / "w", report_path=None,
                     stream=open(tmp_path / "log.txt", "w"))
    statuses = {r.status for r in rep.rows}
    assert "FAIL" not in statuses and "TIMEOUT" in statuses
    assert rep.exit_status() == 3
    log = (tmp_path / "log.txt").read_text()
    assert "TIMEOUT" in log and "timed out" in log and re.search(r"\[1/6 ", log)   # 5 C builds + ct (memcheck)


def test_nothing_ran_is_not_success():
    rep = runner.Report(rows=[runner.Row("x", "b", "SKIPPED", "nasm not installed")])
    assert rep.exit_status() == 4 and rep.verdict()[1].startswith("NOTHING RAN")
    assert runner.Report().exit_status() == 4
    only_assembled = runner.Report(rows=[runner.Row("x", "b", "ASSEMBLED", "assembles")])
    assert only_assembled.exit_status() == 4


def test_the_verdict_line_and_the_exit_status_agree():
    """A FAIL is never followed by "nothing ran"; FAIL, TIMEOUT, nothing ran and PASS each have
    their own exit status and line."""
    import io
    R = runner.Row
    cases = [([R("x", "b", "FAIL", "wrong"), R("x", "c", "SKIPPED", "no nasm")], 1, "FAIL: 1 row(s) failed"),
             ([R("x", "b", "FAIL", "wrong"), R("x", "c", "TIMEOUT", "slow")], 1, "FAIL: 1 row(s) failed, 1 timed out"),
             ([R("x", "b", "TIMEOUT", "slow"), R("x", "c", "PASS")], 3, "TIMEOUT: 1 row(s)"),
             ([R("x", "b", "SKIPPED", "no nasm")], 4, "NOTHING RAN"),
             ([R("x", "b", "PASS"), R("x", "c", "SKIPPED", "no nasm")], 0, "PASS: every row that ran passed")]
    for rows, code, line in cases:
        rep = runner.Report(rows=rows)
        out = io.StringIO()
        matrix.print_matrix(rep, out)
        text = out.getvalue()
        assert rep.exit_status() == code and f"verify: {line}" in text, text
        assert f"(exit status {code})" in text.splitlines()[-1]
        assert ("NOTHING RAN" in text) == (code == 4) and ("nothing passed" not in text)


def test_hidden_avx512_is_hidden_from_the_dotnet_runtime_too(monkeypatch):
    from threefish_gen.verify import csharp
    monkeypatch.setenv(HIDE_VAR, "avx512*")
    env = csharp.dotnet_env()
    if "avx512f" in csharp.hidden_flags():
        assert env["DOTNET_EnableAVX512F"] == "0" and env["DOTNET_EnableAVX512"] == "0"
    monkeypatch.delenv(HIDE_VAR)
    env = csharp.dotnet_env()
    assert "DOTNET_EnableAVX512F" not in env and "DOTNET_EnableAVX512" not in env
