"""Target rust with SIMD paths (--isa avx2 | avx512 | neon | auto): the lanes kernels printed in
core::arch, their unsafe code and the cargo checker's SIMD rows (verify/rust.py SIMD_RUNS) on
real builds -- the AVX2 path run on this CPU against the vector files, the scalar path forced in
the same build, the AVX-512 path only built where the CPU lacks it (status BUILT, never PASS),
the NEON path cross-built for AArch64 and run under qemu-aarch64 (where a rustc with the AArch64
std is found: verify/rust.py aarch64_rustc; else those tests are skipped with the reason).

make test keeps the render checks and one size (256) of the cargo rows: the run-time detected
path passing the vectors, and a kernel broken in its AVX2 path failing that row while the forced
scalar row of the same build passes it (only the SIMD path can see the break).  The other sizes
and rows are matrix cases (tests/conftest.py MATRIX)."""
import re

import pytest

from test_rust import cli, expected_checks, need_cargo, variant, vectors
from threefish_gen.gen.dsl import count_ops
from threefish_gen.gen.isa import ISAS
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.threefish import Options, describe
from threefish_gen.verify import rust as rust_checker
from threefish_gen.verify import sources
from threefish_gen.verify.cpu import cpu_flags
from threefish_gen.verify.runner import Report, Row

SIMD_RUNS = {r.name: r for r in rust_checker.SIMD_RUNS}


def lib_of(v) -> str:
    files = render_variant(v)
    return files[f"{v.stem}/src/lib.rs"]


def function(lib: str, name: str) -> str:
    """The text of ``fn name`` (up to the closing brace at its indentation)."""
    m = re.search(rf"\n( *)(?:pub(?:\(super\))? )?(?:unsafe )?fn {name}\(.*?\n\1}}\n", lib, re.S)
    assert m, name
    return m.group(0)


def best_path(isas, valgrind: bool = False) -> str:
    """The path a std build must take on this CPU: the highest of the crate's whose features
    /proc/cpuinfo lists (independent of the crate's own detection); under valgrind, which shows
    its guest no AVX-512 (valgrind 3.19-3.22), the highest but AVX-512."""
    have = [i for i in ("avx512", "avx2") if i in isas and set(ISAS[i].features) <= cpu_flags()
            and not (valgrind and i == "avx512")]
    return have[0] if have else "scalar"


def test_scalar_crate_is_unchanged_and_simd_crate_confines_unsafe():
    """--isa scalar (the default) renders the crate of before: forbid(unsafe_code), no simd
    feature.  A SIMD crate forbids unsafe code unless feature simd on x86-64, denies unsafe
    operations outside unsafe blocks and undocumented unsafe blocks (clippy), and every unsafe
    block is one line after a SAFETY comment, around one unaligned load or store or one call
    of a #[target_feature] function."""
    scalar = render_variant(variant(512))
    assert variant(512) == variant(512, isa="scalar") and "isa" not in dict(variant(512).extra)
    lib = scalar[f"{variant(512).stem}/src/lib.rs"]
    assert "#![forbid(unsafe_code)]" in lib and "unsafe" not in lib.replace("#![forbid(unsafe_code)]", "")
    assert "simd" not in scalar[f"{variant(512).stem}/Cargo.toml"]
    v = variant(512, Options("fly", "loop", 1), isa="auto")
    files = render_variant(v)
    lib = files[f"{v.stem}/src/lib.rs"]
    toml = files[f"{v.stem}/Cargo.toml"]
    assert 'default = ["simd"]' in toml and 'rust-version = "1.89"' in toml
    simd_cfg = ('all(feature = "simd", any(target_arch = "x86_64", all(target_arch = "aarch64", '
                'target_endian = "little")))')
    assert f'#![cfg_attr(not({simd_cfg}), forbid(unsafe_code))]' in lib
    assert f"#![cfg_attr({simd_cfg}, deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks))]" in lib
    assert lib.count(f"        #[cfg({simd_cfg})]\n        let (blocks, tweaks) = {{") == 2
    assert '#[cfg(all(feature = "simd", target_arch = "x86_64"))]\nmod simd {' in lib
    assert '#[cfg(all(feature = "simd", target_arch = "aarch64", target_endian = "little"))]\nmod simd {' in lib
    lines = lib.splitlines()
    blocks = [i for i, ln in enumerate(lines) if "unsafe {" in ln]
    # the x86 row helpers the kernels call (tweaks: 128-bit loads; AVX2 rows 256, AVX-512 rows 512),
    # the NEON module's (ld128, st128), and the three paths' calls in each direction's dispatch
    assert len(blocks) == 5 + 2 + 3 * 2
    wrapped = set()
    for i in blocks:
        assert lines[i - 1].strip().startswith("// SAFETY:") or lines[i - 2].strip().startswith("// SAFETY:"), lines[i]
        inner = re.fullmatch(r"\s*unsafe \{ (\w+)\(.*\) \}", lines[i])
        assert inner, lines[i]
        wrapped.add(inner.group(1))
    assert wrapped == {"_mm_loadu_si128", "_mm256_loadu_si256", "_mm256_storeu_si256", "_mm512_loadu_si512",
                       "_mm512_storeu_si512", "encrypt_avx512", "decrypt_avx512", "encrypt_avx2", "decrypt_avx2",
                       "vreinterpretq_u64_u8", "vst1q_u8", "encrypt_neon", "decrypt_neon"}, wrapped
    assert "unsafe { vreinterpretq_u64_u8(vld1q_u8(s.as_ptr())) }" in lib
    for isa, feature in (("avx2", "avx2"), ("avx512", "avx512f,avx512vl"), ("neon", "neon")):
        f = function(lib, f"encrypt_{isa}")
        assert f'#[target_feature(enable = "{feature}")]\n    unsafe fn encrypt_{isa}' in lib
        assert "unsafe {" not in f and "as_ptr" not in f        # the kernels touch no pointer


@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("isa", ["avx2", "avx512", "neon"])
def test_lanes_kernel_is_the_description_op_for_op(bits, isa):
    """--unroll full: the AVX2 / AVX-512 / NEON encrypt kernel has one vector add, xor and rotation
    per description add, xor and rotation of one block's body (the lanes layout is one vector op per
    word op), counted from the description, not from the printer's own IR."""
    v = variant(bits, Options("fly", "full", 1), isa=isa)
    f = function(lib_of(v), f"encrypt_{isa}")
    want = count_ops(describe(v.spec, v.options, "encrypt", 1).body)
    if isa == "neon":         # a shift-and-insert pair, a 32-bit swap or a byte table lookup per rotation
        assert f.count("vaddq_u64(") == want["add"] and f.count("veorq_u64(") == want["xor"]
        rot = f.count("vsriq_n_u64(") + f.count("vrev64q_u32(") + f.count("vqtbl1q_u8(")
        assert rot == want["rotl"] + want.get("rotr", 0) and f.count("vshlq_n_u64(") == f.count("vsriq_n_u64(")
        assert "_mm" not in f
        return
    p = {"avx2": "_mm256_", "avx512": "_mm512_"}[isa]
    assert f.count(f"{p}add_epi64(") == want["add"]
    assert f.count(f"{p}xor_si{256 if isa == 'avx2' else 512}(") == want["xor"]
    if isa == "avx512":
        assert f.count("_mm512_rol_epi64(") == want["rotl"] + want.get("rotr", 0)
    else:       # AVX2: a shift pair, a 32-bit swap or a byte shuffle per rotation
        rot = f.count("_mm256_slli_epi64(") + f.count("_mm256_shuffle_epi32(") + f.count("_mm256_shuffle_epi8(")
        assert rot == want["rotl"] + want.get("rotr", 0)
        assert f.count("_mm256_slli_epi64(") == f.count("_mm256_srli_epi64(")


def test_simd_options_and_bad_input(tmp_path):
    """auto: each path with the options of the SIMD C dispatcher's path of its ISA (c-simd's
    RECOMMENDED: at 512 every path the loop over 24-round passes, AVX-512 with two lane groups per
    pass) and the scalar methods of the variant's options; bad combinations are
    one line and exit 2."""
    from threefish_gen.gen.targets import c_simd, rust
    for bits in (256, 512, 1024):
        want = {i: o for i, lay, o in c_simd.RECOMMENDED[bits] + c_simd.RECOMMENDED_NEON[bits] if lay == "lanes"}
        assert rust.simd_paths(variant(bits, isa="auto")) == [(i, want[i]) for i in ("avx512", "avx2", "neon")]
    v = variant(512, isa="auto")
    lib = lib_of(v)
    assert "for c in 0..3 {" in function(lib, "encrypt_avx2") and "for c in 0..3" not in function(
        lib, "encrypt_block_with_tweak")
    assert "for c in 0..3 {" in function(lib, "encrypt_neon")
    avx512 = function(lib, "encrypt_avx512")
    assert "for c in 0..3 {" in avx512 and "as_chunks_mut::<16>()" in avx512 and "as_chunks_mut::<8>()" in avx512
    assert v.stem == "tf512_v13_rust_auto_fly_full"
    assert variant(512, isa="neon").stem == "tf512_v13_rust_neon_fly_full"
    for args, needle in ((["--isa", "avx2", "--primitive", "skein"], "takes no --isa"),
                         (["--isa", "neon", "--primitive", "skein"], "takes no --isa"),
                         (["--isa", "sse2"], "not available for rust")):
        p = cli("render", "--target", "rust", "--size", "512", "--constants", "1.3", *args, "--out", str(tmp_path))
        assert p.returncode != 0 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_bench_pairs_each_x86_path_of_auto_with_the_simd_c_row_of_its_options():
    """bench --target rust (not --quick): per size and x86 ISA, the one-path crate of --isa auto's
    options for that path beside the SIMD C lanes row of the same ISA and options (the paired
    "Rust SIMD / SIMD C" ratio of issue 29's goal): the AVX-512 row is the kernel the dispatcher
    of both targets takes (256 bits: four lane groups per pass), not a one-lane-group loop."""
    from threefish_gen.tools.bench import rust_rows
    from threefish_gen.tools.bench.run import default_entries
    pairs = rust_rows.simd_pairs(default_entries(sizes=(256, 1024), targets=["rust"]))
    assert pairs == [("rust avx2 fly/loop/i2 cargo", "c-simd avx2 lanes fly/loop/i2 gcc"),
                     ("rust avx512 fly/loop/i4 cargo", "c-simd avx512 lanes fly/loop/i4 gcc"),
                     ("rust avx2 fly/loop/i1 cargo", "c-simd avx2 lanes fly/loop/i1 gcc"),
                     ("rust avx512 fly/loop/i1 cargo", "c-simd avx512 lanes fly/loop/i1 gcc")], pairs


def test_only_built_rows_are_never_passed():
    """A BUILT row (the AVX-512 path compiled on a CPU that cannot run it) is not a pass: a report
    of nothing else says nothing ran."""
    report = Report(rows=[Row("rust avx512 512", "cargo std avx512", "BUILT", "only built")])
    assert report.passed == 0 and report.verdict()[0] == 4


def _row(tmp_path, v, run, edit=None):
    files = render_variant(v)
    if edit:
        name = f"{v.stem}/src/lib.rs"
        files[name] = edit(files[name])
    vec, records = vectors(tmp_path, v.spec.bits, count=5)
    with sources.given({v: (files, ())}):
        return rust_checker.check(v, SIMD_RUNS[run], tmp_path / "wd", vec), records


def _break_avx2(t: str) -> str:
    """The AVX2 encrypt kernel with its first rotation by one bit more (the scalar code intact)."""
    f = function(t, "encrypt_avx2")
    m = re.search(r"_mm256_slli_epi64\((\w+), (\d+)\), _mm256_srli_epi64\(\1, (\d+)\)", f)
    a, b = int(m.group(2)), int(m.group(3))
    wrong = f.replace(m.group(0), f"_mm256_slli_epi64({m.group(1)}, {a + 1}), _mm256_srli_epi64({m.group(1)}, {b - 1})", 1)
    return t.replace(f, wrong)


@pytest.mark.toolchain
def test_avx2_row_runs_the_simd_path_and_catches_a_broken_kernel(tmp_path):
    """256, --isa auto: the std build takes the path this CPU has (AVX2 here) and passes every
    record at every misalignment and the batches n = 0..33; with the AVX2 kernel broken that row
    fails on the batches while the same build forced to scalar ($THREEFISH_GEN_ISA=scalar) passes."""
    need_cargo()
    v = variant(256, isa="auto")
    row, records = _row(tmp_path / "ok", v, "cargo zeroize+std")
    best = best_path(("avx2", "avx512"))
    assert row.status == "PASS" and row.checks == expected_checks(records) + 1, row.detail
    assert f"path {best}" in row.detail, row.detail
    if best != "avx2":
        pytest.skip("this CPU does not take the AVX2 path: the broken-kernel half needs it")
    bad, _ = _row(tmp_path / "bad", v, "cargo zeroize+std", _break_avx2)
    assert bad.status == "FAIL" and "_blocks_with_tweaks" in bad.detail, bad.detail
    forced, _ = _row(tmp_path / "forced", v, "cargo std forced scalar", _break_avx2)
    assert forced.status == "PASS" and "path scalar" in forced.detail, forced.detail


CRATES = [
    (256, Options("fly", "full", 2), "auto"),
    (512, Options("fly", "loop", 1), "avx2"),
    (1024, Options("fly", "full", 1), "auto"),
    (512, Options("table", "loop", 2), "avx512"),
]
# every row of every crate above; make test keeps the AVX-512 row of the 256-bit crate (BUILT on a
# CPU without AVX-512, PASS on one with it), the others are matrix cases
ROW_CASES = [(bits, o, isa, r.name) for bits, o, isa in CRATES
             for r in rust_checker.runs(variant(bits, o, isa=isa))]


def _row_id(case) -> str:
    bits, o, isa, run = case
    return f"{bits}-{isa}-{o.keys}-{o.unroll}-i{o.interleave}-{run.replace(' ', '-').replace('+', '_')}"


@pytest.mark.toolchain
@pytest.mark.parametrize("case", ROW_CASES, ids=_row_id)
def test_simd_row(tmp_path, case):
    """Every SIMD row of a crate: PASS with the path each must take, or BUILT (the AVX-512 path on
    a CPU without AVX-512: compiled, not run, never reported as passed)."""
    need_cargo()
    bits, o, isa, name = case
    v = variant(bits, o, isa=isa)
    isas = rust_checker.simd_isas(v)
    run = next(r for r in rust_checker.runs(v) if r.name == name)
    vec, records = vectors(tmp_path, bits, count=5)
    row = rust_checker.check(v, run, tmp_path / "wd", vec)
    if run.target and rust_checker.aarch64_missing():
        assert row.status == "SKIPPED", row.detail
        pytest.skip(row.detail)
    if run.needs and not run.target and not set(ISAS[run.needs].features) <= cpu_flags():
        assert row.status == "BUILT" and "not run" in row.detail, row.detail
        return
    assert row.status == "PASS", row.detail
    if run.expect is not None:
        want = best_path(isas, run.valgrind) if run.expect == rust_checker.CPU else run.expect
        assert f"path {want}" in row.detail, row.detail


def _break_neon(t: str) -> str:
    """The NEON encrypt kernel with its first shift-and-insert rotation by one bit more."""
    f = function(t, "encrypt_neon")
    m = re.search(r"vsriq_n_u64\(vshlq_n_u64\((\w+), (\d+)\), \1, (\d+)\)", f)
    a, b = int(m.group(2)), int(m.group(3))
    wrong = f.replace(m.group(0), f"vsriq_n_u64(vshlq_n_u64({m.group(1)}, {a + 1}), {m.group(1)}, {b - 1})", 1)
    return t.replace(f, wrong)


@pytest.mark.toolchain
def test_neon_row_runs_under_qemu_and_catches_a_broken_kernel(tmp_path):
    """256, --isa neon: the harness cross-built for AArch64 and run under qemu-aarch64 takes the
    NEON path and passes every record at every misalignment and the batches n = 0..33; with the
    NEON kernel's first rotation broken the row fails (on x86-64 the same crate builds scalar, the
    release row passes it: only the NEON path can see the break)."""
    need_cargo()
    why = rust_checker.aarch64_missing()
    if why:
        pytest.skip(why)
    v = variant(256, Options("fly", "loop", 1), isa="neon")
    run = "cargo aarch64 neon (qemu)"
    row, records = _row(tmp_path / "ok", v, run)
    assert row.status == "PASS" and row.checks == expected_checks(records) + 1, row.detail
    assert "path neon" in row.detail and "qemu-aarch64" in row.detail, row.detail
    bad, _ = _row(tmp_path / "bad", v, run, _break_neon)
    assert bad.status == "FAIL" and "_blocks_with_tweaks" in bad.detail, bad.detail
    x86, _ = _row(tmp_path / "x86", v, "cargo release", _break_neon)
    assert x86.status == "PASS" and "path scalar" in x86.detail, x86.detail


def test_neon_row_without_an_aarch64_std_is_skipped_with_the_reason(tmp_path, monkeypatch):
    """No rustc with the AArch64 std (none named, none found): the NEON row is SKIPPED with the
    reason and the ways to get one, before anything is built; a crate without the NEON path has
    no such row."""
    monkeypatch.setattr(rust_checker, "aarch64_rustc", lambda: None)
    run = SIMD_RUNS["cargo aarch64 neon (qemu)"]
    assert run in rust_checker.runs(variant(256, isa="auto")) and run in rust_checker.runs(variant(256, isa="neon"))
    assert run not in rust_checker.runs(variant(256, isa="avx2"))
    row = rust_checker.check(variant(256, isa="neon"), run, tmp_path / "wd", tmp_path / "none.txt")
    assert row.status == "SKIPPED" and "no rustc with the aarch64-unknown-linux-gnu std" in row.detail, row
    assert "rustup target add" in row.detail and "THREEFISH_GEN_RUSTC_AARCH64" in row.detail
    assert not (tmp_path / "wd").exists()
