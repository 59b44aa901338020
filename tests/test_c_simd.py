"""SIMD C target (c-simd): layout semantics in Python, then real builds through the verify harness.

Results are compared with the reference model (gen/reference.py) and the KATs, never with output
of the code under test.  What the CPU or toolchain cannot run is skipped with the reason.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threefish_gen.gen.targets.c_simd import TARGET as SIMD  # noqa: E402
from threefish_gen.gen.layouts import ir  # noqa: E402
from threefish_gen.gen.layouts import packed as packed_layout  # noqa: E402
from threefish_gen.gen.layouts import transpose  # noqa: E402
from threefish_gen.gen.printers.c_simd.printer import ISAS, Width, shuffle, shuffle_candidates  # noqa: E402
from threefish_gen.gen.render import render_variant  # noqa: E402
from threefish_gen.gen.spec import Spec  # noqa: E402
from threefish_gen.gen.threefish import Options  # noqa: E402
from threefish_gen.verify import runner, simd  # noqa: E402

simd_variant, dispatcher, simd_recommended = SIMD.simd, SIMD.dispatcher, SIMD.recommended


# --------------------------------------------------------------------------- layout, in Python

# The layouts themselves (lanes, packed) are checked against the reference by interpretation
# in tests/test_layouts.py; here: the printed shuffles have the semantics the IR asks for.

def _eval_shuffle(expr, vecs, isa, width):
    """Evaluate a printed shuffle expression with the candidate table's semantics."""
    for cost, fmt, sem in shuffle_candidates(isa, width):
        for a in vecs:
            for b in vecs:
                if fmt.format(a=a, b=b) == expr:
                    return [vecs[(a, b)[s]][k] for s, k in sem]
    return None


@pytest.mark.parametrize("isa_name", ["sse2", "avx", "avx2", "avx512"])
def test_transpose_shuffles_have_the_wanted_semantics(isa_name):
    isa = ISAS[isa_name]
    w = Width(isa.bits)
    L = w.lanes
    vecs = {"p": [("p", k) for k in range(L)], "q": [("q", k) for k in range(L)]}
    for bit in [1 << b for b in range(L.bit_length() - 1)]:
        for high in (False, True):
            pat = tuple(("p" if s == 0 else "q", k) for s, k in transpose.combine_pattern(L, bit, high))
            expr = shuffle(isa, w, pat)
            got = _eval_shuffle(expr, vecs, isa, w)
            if got is None:
                assert "permutex2var" in expr
            else:
                assert got == list(pat), expr


# --------------------------------------------------------------------------- rendering and CLI

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "threefish_gen", *args], cwd=ROOT, capture_output=True, text=True)


def test_render_cli_emits_contract_and_is_deterministic(tmp_path):
    args = ["render", "--target", "c", "--isa", "avx2", "--layout", "lanes", "--size", "512",
            "--constants", "1.3", "--prefix", "tfx_"]
    a, b = _cli(*args, "--out", str(tmp_path / "a")), _cli(*args, "--out", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [".threefish-gen-manifest", "tfx_threefish512_csimd.c",
                                                                  "tfx_threefish512_csimd.h"]
    for name in ("tfx_threefish512_csimd.c", "tfx_threefish512_csimd.h"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    h = (tmp_path / "a" / "tfx_threefish512_csimd.h").read_text()
    for fn in ("tfx_encrypt(", "tfx_decrypt(", "tfx_encrypt_blocks(", "tfx_decrypt_blocks("):
        assert fn in h
    c = (tmp_path / "a" / "tfx_threefish512_csimd.c").read_text()
    assert "--isa avx2 --layout lanes" in c
    assert "_mm256_load_si256" not in c and "_mm256_store_si256" not in c  # never aligned access


@pytest.mark.parametrize("args,message", [
    (["--isa", "avx3"], "--isa"),
    (["--isa", "avx2", "--layout", "diagonal"], "--layout"),
    (["--isa", "avx2", "--layout", "hybrid", "--unroll", "loop"], "needs --unroll full"),
    (["--isa", "avx2", "--layout", "packed", "--keys", "table"], "layout packed needs --keys fly --unroll full"),
    (["--isa", "sse2", "--layout", "packed", "--unroll", "loop"], "layout packed needs --keys fly --unroll full"),
    (["--layout", "lanes"], "needs --isa"),
])
def test_render_bad_options_exit_2_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "o"
    p = _cli("render", "--target", "c", "--size", "512", "--constants", "1.3", *args, "--out", str(out))
    assert p.returncode == 2
    assert message in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("threefish-gen: error: ")
    assert not out.exists() or not any(out.iterdir())


# --------------------------------------------------------------------------- builds

def _vectors(tmp_path, spec, count=12):
    return runner.vector_file(spec, tmp_path / f"{spec.tag}.txt", count, seed=7)


def _check(variant, build, tmp_path, vectors):
    wd = tmp_path / variant.stem / build.name.replace(" ", "-").replace("+", "_")
    wd.mkdir(parents=True, exist_ok=True)
    return simd.check_simd(variant, build, wd, vectors)


def _require(status_row, variant):
    row = status_row
    assert row.status != "FAIL", row.detail
    if row.status == "SKIPPED":
        pytest.skip(row.detail)
    lacking = SIMD.features(variant) - simd.cpu_flags()
    if lacking:
        assert row.status == "PASS (emulated)"
    return row


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_recommended_simd_variants_pass_the_harness(tmp_path, bits):
    spec = Spec("1.3", bits)
    vec = _vectors(tmp_path, spec)
    build = simd.SIMD_BUILDS[0]        # gcc -O2 (and the C++ syntax check)
    for v in simd_recommended(spec):
        if build not in simd.builds(v):   # the NEON variants: aarch64 only (tests/test_neon.py)
            continue
        row = _require(_check(v, build, tmp_path, vec), v)
        assert row.checks > 1000


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang not installed")
def test_sanitized_clang_build_of_the_dispatcher_runs_every_path(tmp_path):
    spec = Spec("1.2", 512)
    v = dispatcher(spec)
    row = _require(_check(v, simd.SIMD_BUILDS[3], tmp_path, _vectors(tmp_path, spec, 4)), v)
    paths = row.detail.split("paths ")[1].split(";")[0].split(", ")
    assert paths[0] == "scalar" and len(paths) == simd.cpu_level() + 1


@pytest.mark.skipif(not simd.simde_available(), reason="SIMDe (libsimde-dev) not installed")
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_forced_emulation_with_simde(tmp_path):
    """The path a CPU without AVX-512 takes (e.g. Zen 1 CI): built against SIMDe, run emulated."""
    spec = Spec("1.1", 256)
    v = simd_variant(spec, "avx512", "lanes", Options("fly", "full", 2))
    row = _check(v, simd.SIMD_BUILDS[4], tmp_path, _vectors(tmp_path, spec, 4))
    assert row.status == "PASS (emulated)", row.detail


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_dispatcher_picks_the_forced_path(tmp_path):
    spec = Spec("1.3", 512)
    v = dispatcher(spec)
    src = tmp_path / "src"
    src.mkdir()
    for name, text in render_variant(v).items():
        (src / name).write_text(text)
    main = tmp_path / "main.c"
    main.write_text(f'#include <stdio.h>\n#include <stddef.h>\nconst char *{v.prefix}dispatch_path(size_t n);\n'
                    f'int main(void) {{ printf("%s|%s|%s\\n", {v.prefix}dispatch_path(1), '
                    f'{v.prefix}dispatch_path(3), {v.prefix}dispatch_path(64)); return 0; }}\n')
    exe = tmp_path / "d"
    subprocess.run(["gcc", "-O1", str(main), str(src / f"{v.stem}.c"), "-o", str(exe)], check=True)
    level = simd.cpu_level()
    want_bulk = {4: "avx512", 3: "avx2"}
    for forced, lv in (("scalar", 0), ("sse2", 1), ("avx2", 3), ("avx512", 4)):
        env = dict(os.environ, THREEFISH_GEN_ISA=forced)
        out = subprocess.run([str(exe)], env=env, capture_output=True, text=True, check=True).stdout.strip()
        out = out.split("|")
        eff = min(lv, level)
        assert out[0] == "scalar" and out[1] == "scalar"     # single blocks and n < L: scalar
        # "<isa> <layout> <options> (<rule that chose it>)"; this CPU may match a CPU table row
        assert out[2].split()[0] == want_bulk.get(eff, "avx2" if eff >= 3 else "scalar")


def test_cpu_detection_is_printed_from_the_cpuid_table(monkeypatch):
    """The SIMD C cpu_level() and the NASM cpu_supported() test the cpuid bit gen/isa/x86.py's
    CPUID table names for a feature: a bit changed there changes the one test of each (the
    detection run on this CPU: test_sanitized_clang_build_of_the_dispatcher_runs_every_path)."""
    from threefish_gen.gen.isa import x86
    from threefish_gen.gen.printers.c_simd.printer import cpu_level_lines
    from threefish_gen.gen.printers.nasm_cpu import cpu_support
    before = cpu_level_lines(x86.ISAS.values(), "brief")
    assert "        if (b & (1u << 5))" in before                     # AVX2: leaf 7, EBX bit 5
    assert (7, 0, "ebx", 5, "avx2") in cpu_support({"avx2"})["checks"]
    monkeypatch.setitem(x86.CPUID, "avx2", (7, 0, "ecx", 13))
    after = cpu_level_lines(x86.ISAS.values(), "brief")
    assert [(a, b) for a, b in zip(before, after) if a != b] == [("        if (b & (1u << 5))",
                                                                  "        if (c & (1u << 13))")]
    assert (7, 0, "ecx", 13, "avx2") in cpu_support({"avx2"})["checks"]


# --------------------------------------------------------------------------- layout packed (one block over the lanes)

PACKED_CASES = [   # (bits, version, isa, build index): every size, every vector shape, each rotation form
    (256, "1.3", "avx512", 0),    # 2x128, vprolvq
    (256, "1.1", "sse2", 3),      # 2x128, split shifts + blend (clang asan+ubsan)
    (512, "1.2", "avx2", 0),      # 2x256, vpsllvq/vpsrlvq
    (512, "1.3", "avx", 3),       # 4x128, split shifts, pshufb where whole bytes (clang asan+ubsan)
    (1024, "1.3", "avx512", 0),   # 2x512, vpermq index permutes
    (1024, "1.1", "avx2", 2),     # 4x256, two-step load/store shuffles (gcc asan+ubsan)
]


@pytest.mark.parametrize("bits,version,isa,build", PACKED_CASES)
def test_packed_variants_pass_the_harness(tmp_path, bits, version, isa, build):
    b = simd.SIMD_BUILDS[build]
    if b.missing():
        pytest.skip(b.missing())
    spec = Spec(version, bits)
    v = simd_variant(spec, isa, "packed", Options("fly", "full", 1))
    row = _require(_check(v, b, tmp_path, _vectors(tmp_path, spec, 6)), v)
    assert row.checks > 1000


@pytest.mark.skipif(not simd.simde_available(), reason="SIMDe (libsimde-dev) not installed")
def test_packed_builds_against_simde(tmp_path):
    spec = Spec("1.3", 512)
    v = simd_variant(spec, "avx512", "packed", Options("fly", "full", 1))
    row = _check(v, simd.SIMD_BUILDS[4], tmp_path, _vectors(tmp_path, spec, 4))
    assert row.status == "PASS (emulated)", row.detail


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_harness_catches_a_wrong_packed_lane_permutation(tmp_path, monkeypatch):
    """Mutation check on real code: one round's lane permutation with two lanes swapped must FAIL."""
    real = packed_layout.lower

    def wrong(prog, lanes, natural=False):
        vp = real(prog, lanes, natural)
        i = [k for k, op in enumerate(vp.body) if isinstance(op, ir.Block)
             and any(isinstance(x, ir.Shuffle) and x.kind == "permute" for x in op.body)][5]
        body = list(vp.body[i].body)
        k = next(j for j, x in enumerate(body) if isinstance(x, ir.Shuffle))
        lanes_ = list(body[k].lanes)                 # A moves when encrypting, B when decrypting
        lanes_[0], lanes_[1] = lanes_[1], lanes_[0]
        body[k] = ir.Shuffle(body[k].dst, body[k].srcs, tuple(lanes_), body[k].kind)
        vp.body[i] = ir.Block(tuple(body))
        return vp

    monkeypatch.setattr(packed_layout, "lower", wrong)
    spec = Spec("1.3", 512)
    v = simd_variant(spec, "avx2" if "avx2" in simd.cpu_flags() else "sse2", "packed", Options("fly", "full", 1))
    row = _check(v, simd.SIMD_BUILDS[0], tmp_path, _vectors(tmp_path, spec, 2))
    if row.status == "SKIPPED":
        pytest.skip(row.detail)
    assert row.status == "FAIL" and "build failed" not in row.detail, row.detail


def test_packed_render_is_deterministic_and_records_the_command(tmp_path):
    args = ["render", "--target", "c", "--isa", "avx2", "--layout", "packed", "--size", "1024",
            "--constants", "1.2", "--prefix", "tfp_"]
    a, b = _cli(*args, "--out", str(tmp_path / "a")), _cli(*args, "--out", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    for name in ("tfp_threefish1024_csimd.c", "tfp_threefish1024_csimd.h"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    c = (tmp_path / "a" / "tfp_threefish1024_csimd.c").read_text()
    assert "--isa avx2 --layout packed --prefix tfp_" in c
    assert "one block over 4 256-bit vectors" in c
    assert "_mm256_sllv_epi64" in c and "_mm256_load_si256" not in c


def test_a_prefix_without_underscore_renders_and_runs(tmp_path):
    """--prefix need not end in "_": the dispatcher file (whose single-block wrapper has a
    `wiped_` twin) renders, compiles without a warning and encrypts the published vector
    (once, a traceback from the wipe template's name split)."""
    from threefish_gen.gen.kat import threefish_records
    rec = threefish_records("1.3", 256)[1]
    p = _cli("render", "--target", "c-simd", "--isa", "auto", "--size", "256", "--constants", "1.3",
             "--prefix", "P0", "--out", str(tmp_path))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    src = tmp_path / "P0_threefish256_csimd.c"
    assert "void P0wiped_encrypt(" in src.read_text()
    arr = lambda b: "{" + ",".join(str(x) for x in b) + "}"  # noqa: E731
    (tmp_path / "h.c").write_text(f"""#include <stdio.h>
#include "P0_threefish256_csimd.h"
int main(void) {{
    const uint8_t k[32] = {arr(rec["key"])}, t[16] = {arr(rec["tweak"])}, p[32] = {arr(rec["plaintext"])};
    uint8_t c[32];
    P0encrypt(k, t, p, c);
    for (int i = 0; i < 32; i++) printf("%02x", c[i]);
    return 0;
}}
""")
    b = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(tmp_path / "h"), str(tmp_path / "h.c"),
                        str(src)], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    assert subprocess.run([str(tmp_path / "h")], capture_output=True, text=True).stdout == rec["ciphertext"].hex()
