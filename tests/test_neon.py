"""AArch64 NEON (``--isa neon``) and the dispatcher on other architectures: built with the cross
compilers, run through the verify harness under qemu-user (vectors from the reference model + KATs,
in place, misalignment 0..7, guards, *_blocks n = 0..33 with a tweak per block); the scalar C and the
dispatcher on big-endian s390x; the x86 SIMD output unchanged.  Rows the machine cannot build or
run (no cross compiler / qemu: scripts/bootstrap.sh installs them) are skipped with the reason."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threefish_gen.gen.isa.neon import Neon, NeonWidth, rotl_lanes, rotl_uniform, shuffle_candidates  # noqa: E402
from threefish_gen.gen.isa import shuffle  # noqa: E402
from threefish_gen.gen.render import render_variant  # noqa: E402
from threefish_gen.gen.printers.c_simd.driver import ISAS  # noqa: E402
from threefish_gen.gen.spec import Spec, all_specs  # noqa: E402
from threefish_gen.gen.targets import get as get_target  # noqa: E402
from threefish_gen.gen.targets.c_simd import TARGET as SIMD  # noqa: E402
from threefish_gen.gen.threefish import Options  # noqa: E402
from threefish_gen.verify import matrix, runner, simd  # noqa: E402

NEON = ISAS["neon"]
A64_GCC, A64_CLANG, A64_ASAN = runner.AARCH64_BUILDS
S390X = runner.BIG_ENDIAN_BUILDS[0]


def _need(build):
    why = build.missing()
    if why:
        pytest.skip(f"{build.name}: {why}")


def _run(variant, build, tmp_path, count=12):
    _need(build)
    vec = runner.vector_file(variant.spec, tmp_path / f"{variant.spec.tag}.txt", count, seed=11)
    wd = tmp_path / variant.stem / build.name.replace(" ", "-").replace("+", "_")
    wd.mkdir(parents=True, exist_ok=True)
    checker = matrix.checker_of(variant).check
    row = checker(variant, build, wd, vec)
    assert row.status == "PASS (emulated)", (variant.label(), build.name, row.detail)
    assert row.checks > 1000
    return row


# --------------------------------------------------------------------------- printer, in Python

def test_neon_shuffles_cover_every_two_lane_pattern_of_two_sources():
    """Every pattern of two lanes from two vectors is one NEON instruction, with its semantics."""
    w = NeonWidth()
    sem_of = {fmt: sem for _, fmt, sem in shuffle_candidates(NEON, w)}
    for p0 in (("a", 0), ("a", 1), ("b", 0), ("b", 1)):
        for p1 in (("a", 0), ("a", 1), ("b", 0), ("b", 1)):
            expr = shuffle(NEON, w, (p0, p1))
            if expr in ("a", "b"):
                assert (p0, p1) == ((expr, 0), (expr, 1))
                continue
            hit = [(fmt, x, y) for fmt in sem_of for x in "ab" for y in "ab" if fmt.format(a=x, b=y) == expr]
            assert hit, expr
            fmt, x, y = hit[0]
            assert tuple(((x, y)[s], k) for s, k in sem_of[fmt]) == (p0, p1), expr


def _tbl_bytes(table: str) -> list[int]:
    words = [int(t.split("UINT64_C(")[1].split(")")[0], 16) for t in table.split("vcreate_u64")[1:]]
    return [(w >> (8 * i)) & 0xFF for w in words for i in range(8)]


@pytest.mark.parametrize("n", [8, 16, 24, 40, 48, 56])
def test_byte_rotation_table_rotates_each_lane(n):
    consts = {}
    expr, kind = rotl_uniform(NEON, NeonWidth(), "x", n, consts)
    assert kind == "shuffle" and "vqtbl1q_u8" in expr
    idx = _tbl_bytes(consts[f"rot{n}"])
    x = [0x0123456789ABCDEF, 0xF0E1D2C3B4A59687]
    data = [(x[i // 8] >> (8 * (i % 8))) & 0xFF for i in range(16)]
    out = [data[j] for j in idx]
    got = [sum(out[8 * w + i] << (8 * i) for i in range(8)) for w in range(2)]
    rot = [((v << n) | (v >> (64 - n))) & (2**64 - 1) for v in x]
    assert got == rot


def test_rotation_forms_and_costs():
    consts = {}
    assert rotl_uniform(NEON, NeonWidth(), "x", 13, consts) == ("vsriq_n_u64(vshlq_n_u64(x, 13), x, 51)", "shifts")
    assert "vrev64q_u32" in rotl_uniform(NEON, NeonWidth(), "x", 32, consts)[0]
    assert rotl_lanes(NEON, NeonWidth(), "x", (16, 40), consts)[1:] == ("shuffle", 1)
    assert rotl_lanes(NEON, NeonWidth(), "x", (13, 40), consts)[1:] == ("shifts", 3)
    assert Neon.shift_ops == 2


# --------------------------------------------------------------------------- x86 output unchanged

@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_x86_paths_of_the_dispatcher_are_the_standalone_x86_code(bits):
    """The dispatcher (what out/c-simd ships) gained a NEON path and architecture guards; its x86
    paths must still be, statement for statement, the code of the standalone x86 variants (two
    renders through different drivers), and the recommended set renders NEON files of its own."""
    import re
    spec = Spec("1.3", bits)
    d = SIMD.dispatcher(spec)
    text = render_variant(d)[f"{d.stem}.c"]
    x86 = [v for v in SIMD.paths(spec) if v.get("isa") != "neon"]
    assert len(x86) >= 2
    for v in x86:
        t = render_variant(v)[f"{v.stem}.c"]
        for fn in ("encrypt_blocks", "decrypt_blocks"):
            # the work function (the public one calls it, then wipes its stack: templates/c/wipe.j2)
            m = re.search(r"\nstatic \w+ void " + re.escape(v.prefix + fn) + r"_work\(.*?\n\{\n(.*?)\n\}\n", t, re.S)
            assert m, (v.label(), fn)
            body = m.group(1).replace(v.prefix, d.prefix)
            if f"{d.prefix}single_path(" in text:
                # a dispatcher with a single-block CPU table (gen/cpu_rules.py, chained winners):
                # its scalar one-block kernel is PREFIXscalar_encrypt, which the blocks tails call
                for one in ("encrypt", "decrypt"):
                    body = body.replace(f"{d.prefix}{one}(", f"{d.prefix}scalar_{one}(")
            elif f"{d.prefix}wiped_encrypt(" in text:
                # the 256/512 dispatchers' tails call the single-block work-and-wipe function
                # directly (the public one first asks for the level: templates/c_simd)
                for one in ("encrypt", "decrypt"):
                    body = body.replace(f"{d.prefix}{one}(", f"{d.prefix}wiped_{one}(")
            assert body in text, (v.label(), fn)
    neon = [v for v in SIMD.recommended(spec) if v.get("isa") == "neon"]
    assert len(neon) == 1


def test_dispatcher_has_no_x86_code_outside_x86_guards():
    text = render_variant(SIMD.dispatcher(Spec("1.3", 512)))["tf512_v13_csimd_auto_fly_full.c"]
    guarded = text.split("#elif defined(THREEFISH_GEN_X86)\n#include <immintrin.h>")
    assert len(guarded) == 2 and "immintrin.h" not in guarded[0]
    assert text.count("#include <cpuid.h>") == 1
    before_cpuid = text.split("#include <cpuid.h>")[0]
    assert before_cpuid.rstrip().endswith("#elif (defined(__x86_64__) || defined(__i386__)) && "
                                          "(defined(__GNUC__) || defined(__clang__))")


@pytest.mark.parametrize("cc,flags", [("gcc", ["-m32"]), ("aarch64-linux-gnu-gcc", []),
                                      ("s390x-linux-gnu-gcc", [])])
@pytest.mark.parametrize("bits", [256, 1024])    # i386 at 256 (every x86 path of the 1.1 MB file): make verify
def test_dispatcher_compiles_on_i386_aarch64_and_s390x(tmp_path, cc, flags, bits):
    b = runner.Build(cc, cc, ())
    _need(b)
    v = SIMD.dispatcher(Spec("1.1", bits))
    for name, text in render_variant(v).items():
        (tmp_path / name).write_text(text)
    p = subprocess.run([cc, *flags, "-O1", "-std=c99", *runner.WARN, "-c", str(tmp_path / f"{v.stem}.c"),
                        "-o", str(tmp_path / "o.o")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[:2000]


# --------------------------------------------------------------------------- under qemu

@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.tag)
def test_neon_lanes_and_dispatcher_pass_under_qemu_aarch64(tmp_path, spec):
    """The done-when of the issue: every version x size, neon lanes and the dispatcher, gcc -O2."""
    for v in (SIMD.simd(spec, "neon", "lanes", Options("fly", "full", 1)), SIMD.dispatcher(spec)):
        row = _run(v, A64_GCC, tmp_path)
        if v.get("isa") == "auto":
            assert row.detail.endswith("paths scalar, neon")


@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_neon_packed_interleaved_and_hybrid_pass(tmp_path, bits):
    spec = Spec("1.3", bits)
    for v in (SIMD.simd(spec, "neon", "packed", Options("fly", "full", 1)),
              SIMD.simd(spec, "neon", "lanes", Options("fly", "full", 3)),
              SIMD.simd(spec, "neon", "hybrid", Options("fly", "full", 1))):
        _run(v, A64_GCC, tmp_path)


def test_every_neon_layout_has_its_aarch64_clang_row():
    """Issue 31: neon packed had no clang row in make test, and its clang build failed
    (-Wunused-function on store64).  verify's matrix gives every NEON layout of --set all the
    aarch64 gcc, clang and sanitizer builds (checked without any toolchain installed)."""
    layouts = {v.get("layout") for v in SIMD.variants("all", [Spec("1.3", 256)]) if v.get("isa") == "neon"}
    assert layouts == {"lanes", "hybrid", "packed"}
    for v in SIMD.variants("all", all_specs()):
        if v.get("isa") == "neon":
            assert set(runner.AARCH64_BUILDS) <= set(matrix.builds_of(v)), v.label()


@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_neon_packed_under_clang(tmp_path, bits):
    """The aarch64 clang -O2 row (-Wall -Wextra -Wpedantic -Werror) of neon packed, every size:
    builds (no unused word helper) and passes under qemu."""
    _run(SIMD.simd(Spec("1.3", bits), "neon", "packed", Options("fly", "full", 1)), A64_CLANG, tmp_path)


def test_word_helpers_are_defined_only_where_called():
    """load64/store64 are defined from what the functions' scalar statements call (CPrinter.used),
    not by default: packed NEON stores only vectors (no store64); lanes' scalar single block
    stores words."""
    spec = Spec("1.3", 512)
    for layout, store in (("packed", False), ("lanes", True), ("hybrid", True)):
        v = SIMD.simd(spec, "neon", layout, Options("fly", "full", 1))
        text = render_variant(v)[f"{v.stem}.c"]
        assert (f"{v.prefix}store64(uint8_t" in text) == store, layout
        assert (f"{v.prefix}store64(" in text.replace(f"{v.prefix}store64(uint8_t", "")) == store, layout
        assert f"{v.prefix}load64(const uint8_t" in text


def test_neon_under_clang_and_sanitizers(tmp_path):
    spec = Spec("1.2", 512)
    _run(SIMD.simd(spec, "neon", "lanes", Options("fly", "full", 2)), A64_CLANG, tmp_path)
    _run(SIMD.simd(spec, "neon", "packed", Options("fly", "full", 1)), A64_ASAN, tmp_path)


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.tag)
def test_scalar_c_and_dispatcher_pass_on_big_endian_s390x(tmp_path, spec):
    c = get_target("c").variants("recommended", [spec])[0]
    assert c.target == "c"
    _run(c, S390X, tmp_path)
    row = _run(SIMD.dispatcher(spec), S390X, tmp_path)
    assert row.detail.endswith("paths scalar")


def test_builds_are_keyed_by_isa():
    spec = Spec("1.3", 256)
    assert simd.builds(SIMD.simd(spec, "neon")) == runner.AARCH64_BUILDS
    assert simd.builds(SIMD.simd(spec, "avx2")) == simd.SIMD_BUILDS
    auto = simd.builds(SIMD.dispatcher(spec))
    assert set(runner.AARCH64_BUILDS + runner.BIG_ENDIAN_BUILDS) <= set(auto)


def test_missing_cross_toolchain_is_skipped_with_the_reason(tmp_path):
    b = runner.Build("aarch64 nothing", "aarch64-no-such-gcc", (), runner=("qemu-aarch64",), arch="aarch64",
                     install="gcc-aarch64-linux-gnu")
    row = simd.check_simd(SIMD.simd(Spec("1.3", 256), "neon"), b, tmp_path, tmp_path / "v.txt")
    assert row.status == "SKIPPED" and "aarch64-no-such-gcc not installed (gcc-aarch64-linux-gnu)" in row.detail


def test_harness_catches_a_broken_neon_rotation(tmp_path, monkeypatch):
    """A wrong shift-right-and-insert count must FAIL under qemu (the rows above are not vacuous)."""
    _need(A64_GCC)
    from threefish_gen.gen.isa import neon

    def bad(isa, width, x, n, consts):
        if n % 8:
            return f"vsriq_n_u64(vshlq_n_u64({x}, {n}), {x}, {63 - n})", "shifts"
        return good(isa, width, x, n, consts)
    good = neon.rotl_uniform
    monkeypatch.setattr(neon.Neon, "rotl_uniform", staticmethod(bad))
    v = SIMD.simd(Spec("1.3", 256), "neon")
    vec = runner.vector_file(v.spec, tmp_path / "v.txt", 4, seed=1)
    row = simd.check_simd(v, A64_GCC, tmp_path, vec)
    assert row.status == "FAIL"
