"""threefish-gen prove --target c-simd: the SIMD C printer's output, vectors as tuples of lane terms
(gen/prove/c_simd.py): x86 intrinsics SSE2..AVX-512, NEON, layouts lanes/hybrid/packed, the
--isa auto dispatcher's paths; mutated files are rejected naming function, word and line."""
import re

import pytest

from test_prove import cli, edit_line, prove
from threefish_gen.gen import targets
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec

ALL = [v for v in targets.variants("all", "c-simd", [get_spec("1.3", 256)]) if v.primitive == "threefish"]


def _pick(isa, layout=None, stem_end=None):
    for v in ALL:
        if v.get("isa") == isa and v.get("layout") == layout and (stem_end is None or v.stem.endswith(stem_end)):
            return v
    raise LookupError((isa, layout, stem_end))


def _source(v):
    return next(text for name, text in render_variant(v).items() if name.endswith(".c"))


PICKS = [_pick("sse2", "lanes", "_fly_full"), _pick("sse2", "lanes", "_fly_loop"),
         _pick("avx", "lanes", "_fly_full"), _pick("avx2", "lanes", "_i2"),
         _pick("avx512", "lanes", "_table_loop"), _pick("neon", "lanes", "_i3"),
         _pick("sse2", "hybrid"), _pick("avx512", "hybrid"),
         _pick("sse2", "packed"), _pick("avx2", "packed"), _pick("avx512", "packed"), _pick("neon", "packed")]


@pytest.mark.parametrize("v", PICKS, ids=lambda v: v.stem)
def test_simd_variants_prove_equivalent(v):
    """lanes per ISA family (fly/table, full/loop, interleave 1..3), hybrid, packed: all four functions,
    the blocks functions with their vector loop(s) and the scalar tail proved by induction."""
    rep = prove(v, _source(v))
    assert not rep.failed, "\n".join(rep.lines)
    assert len(rep.lines) == 4 and all(": equivalent (" in line for line in rep.lines), rep.lines
    # vector loop, then the one-block tail; interleave > 1 and hybrid: the wide loop, the one-pass loop, the tail
    loops = 3 if v.get("layout") == "hybrid" or v.options.interleave > 1 else 2
    assert all(f"{loops} loop(s) proved by induction" in line for line in rep.lines if "_blocks:" in line), rep.lines


def test_dispatcher_proves_every_path():
    v = _pick("auto")
    rep = prove(v, _source(v))
    assert not rep.failed, "\n".join(rep.lines)
    paths = [line for line in rep.lines if "_encrypt_blocks [path " in line]
    for isa in ("scalar", "avx2_lanes", "avx512_lanes", "neon_lanes"):
        assert any(f"{isa}_encrypt_blocks]: equivalent" in line for line in paths), paths
    assert all(": equivalent (" in line for line in rep.lines)


def test_dispatcher_proves_its_single_block_paths():
    """Threefish-1024's dispatcher has a single-block CPU table (Intel's AVX-512 and Zen 4's AVX2
    packed kernels): encrypt/decrypt switch between them and the scalar kernel; every path is proved."""
    v = targets.get("c-simd").dispatcher(get_spec("1.3", 1024))
    rep = prove(v, _source(v))
    assert not rep.failed, "\n".join(rep.lines)
    for d in ("encrypt", "decrypt"):
        for path in ("avx512_packed", "avx2_packed", "scalar"):
            assert any(line.startswith(f"{v.prefix}{d} [path {v.prefix}{path}_{d}]: equivalent")
                       for line in rep.lines), rep.lines
    assert all(": equivalent (" in line for line in rep.lines)


LANES = _pick("sse2", "lanes", "_fly_full")


def _mutate(v, old, new, nth=1):
    """The render with the nth line whose stripped text is old replaced (new None: dropped)."""
    return edit_line(_source(v), old, new, nth)


def _differs(v, text, fn):
    rep = prove(v, text)
    assert rep.failed
    return next(line for line in rep.lines if line.startswith(f"{v.prefix}{fn}:"))


def test_rejects_one_changed_rotation_count():
    text, line = _mutate(LANES, "vx1 = _mm_or_si128(_mm_slli_epi64(vx1, 14), _mm_srli_epi64(vx1, 50));",
                         "vx1 = _mm_or_si128(_mm_slli_epi64(vx1, 15), _mm_srli_epi64(vx1, 49));")
    msg = _differs(LANES, text, "encrypt_blocks")
    assert re.search(rf"DIFFERS: output word \d+ \(block 0 of 2 per iteration\) .* line {line}: "
                     r"vx1 = _mm_or_si128\(_mm_slli_epi64\(vx1, 15\)", msg), msg


def test_rejects_one_swapped_operand():
    text, line = _mutate(LANES, "vx0 = _mm_add_epi64(vx0, vx1);", "vx0 = _mm_add_epi64(vx0, vx2);", nth=2)
    msg = _differs(LANES, text, "encrypt_blocks")
    assert re.search(rf"DIFFERS: output word \d+ .* line {line}: vx0 = _mm_add_epi64\(vx0, vx2\);", msg), msg


def test_rejects_one_dropped_store():
    text, _ = _mutate(LANES, "_mm_storeu_si128((__m128i *)(void *)(out + 32), s1_1);", None)
    msg = _differs(LANES, text, "encrypt_blocks")
    assert "DIFFERS: loop at line" in msg and "output words never stored: [4, 5]" in msg, msg


def test_rejects_an_aligned_load_of_the_callers_pointer():
    text, line = _mutate(LANES, "const __m128i s0_0 = _mm_loadu_si128((const __m128i *)(const void *)(in + 0));",
                         "const __m128i s0_0 = _mm_load_si128((const __m128i *)(const void *)(in + 0));")
    msg = _differs(LANES, text, "encrypt_blocks")
    assert f"line {line}: _mm_load_si128 on the caller's pointer" in msg, msg
    # the aligned store, a row of gen/isa/x86.py SEMANTICS like the load
    text, line = _mutate(LANES, "_mm_storeu_si128((__m128i *)(void *)(out + 32), s1_1);",
                         "_mm_store_si128((__m128i *)(void *)(out + 32), s1_1);")
    msg = _differs(LANES, text, "encrypt_blocks")
    assert f"line {line}: _mm_store_si128 on the caller's pointer" in msg, msg


def test_rejects_a_changed_avx512_rol_and_neon_shift():
    v = _pick("avx512", "lanes", "_fly_full")
    src = _source(v)
    old = re.search(r"vx1 = _mm512_rol_epi64\(vx1, (\d+)\);", src)
    text, line = _mutate(v, old.group(0), old.group(0).replace(f", {old.group(1)})", f", {int(old.group(1)) + 1})"))
    assert re.search(rf"DIFFERS: output word \d+ .* line {line}: vx1 = _mm512_rol_epi64",
                     _differs(v, text, "encrypt_blocks"))
    v = _pick("neon", "packed")
    src = _source(v)
    old = re.search(r"vshlq_n_u64\((\w+), (\d+)\)", src)
    line_text = next(ln.strip() for ln in src.splitlines() if old.group(0) in ln)
    k = int(old.group(2))
    text, line = _mutate(v, line_text, line_text.replace(old.group(0), f"vshlq_n_u64({old.group(1)}, {k + 1})", 1))
    rep = prove(v, text)
    assert rep.failed and any("DIFFERS: output word" in ln and f"line {line}:" in ln for ln in rep.lines), rep.lines


def test_rejects_a_changed_word_shuffle_in_packed():
    v = _pick("sse2", "packed")
    text, line = _mutate(v, "A0 = _mm_shuffle_epi32(oA0, 0x4e);", "A0 = _mm_shuffle_epi32(oA0, 0xb1);")
    msg = _differs(v, text, "encrypt")
    assert re.search(rf"DIFFERS: output word \d+ .* line {line}: A0 = _mm_shuffle_epi32\(oA0, 0xb1\);", msg), msg


def test_rejects_a_mutated_dispatcher_path_and_other_arguments(tmp_path):
    v = _pick("auto")
    src = _source(v)
    # the avx2 path's first vector rotation, changed: that path DIFFERS, the others stay equivalent
    start = src.index(f"{v.prefix}avx2_lanes_encrypt_blocks(")
    m = re.compile(r"_mm256_slli_epi64\((\w+), (\d+)\)").search(src, start)
    text = src[:m.start()] + f"_mm256_slli_epi64({m.group(1)}, {int(m.group(2)) + 1})" + src[m.end():]
    rep = prove(v, text)
    bad = [ln for ln in rep.lines if "DIFFERS" in ln]
    assert rep.failed and len(bad) == 1 and f"[path {v.prefix}avx2_lanes_encrypt_blocks]: DIFFERS" in bad[0], rep.lines
    # a case passing other arguments than the public function's is not read (exit 2, one line)
    call = f"{v.prefix}avx2_lanes_encrypt_blocks(key, tweaks, in, out, n);"
    f = tmp_path / "edited.c"
    f.write_text(src.replace(call, f"{v.prefix}avx2_lanes_encrypt_blocks(key, tweaks, out, out, n);", 1))
    p = cli("prove", "--target", "c-simd", "--size", "256", "--constants", "1.3", "--isa", "auto", "--file", str(f))
    assert p.returncode == 2 and "called with other arguments" in p.stderr and len(p.stderr.splitlines()) == 1, \
        p.stdout + p.stderr
    with pytest.raises(GenError):
        prove(v, src.replace("    default:\n        break;\n", "", 1))


def test_dispatcher_scalar_blocks_share_the_single_block_kernel_and_are_proved():
    """Threefish-512's dispatcher: its scalar blocks path is a loop over the single-block kernel
    (issue 30: the scalar kernel once per direction, not twice; 256 bits keeps its own,
    driver.SHARED_SCALAR_MIN_BYTES); prove inlines that kernel into the loop, so a wrong stride in
    the loop is caught on that path alone."""
    v = targets.get("c-simd").dispatcher(get_spec("1.3", 512))
    src = _source(v)
    head = f"static void {v.prefix}scalar_encrypt_blocks("
    assert src.count(head) == 1
    body = src[src.index(head):].split("\n}\n", 1)[0]
    assert re.search(rf"\n        {v.prefix}\w*encrypt_work\(key, tweaks, in, out\);\n", body) \
        and "/* round 0 */" not in body, body
    stride = "for (; n > 0; n--, tweaks += 16, in += 64, out += 64) {"
    i = src.index(stride, src.index(head))
    text = src[:i] + stride.replace("in += 64", "in += 32") + src[i + len(stride):]
    rep = prove(v, text)
    bad = [ln for ln in rep.lines if "DIFFERS" in ln]
    assert rep.failed and len(bad) == 1 and f"[path {v.prefix}scalar_encrypt_blocks]: DIFFERS" in bad[0], rep.lines


def test_refuses_a_shadowing_declaration():
    """The reader keeps one flat scope: an inner declaration of an outer name is not read (exit 2)."""
    v = LANES
    text, _ = _mutate(v, "const __m128i s0_0 = _mm_loadu_si128((const __m128i *)(const void *)(in + 0));",
                      "const __m128i vx0 = _mm_loadu_si128((const __m128i *)(const void *)(in + 0));")
    with pytest.raises(GenError, match="declared again in an inner scope"):
        prove(v, text)


def test_verify_prove_row_covers_c_simd(tmp_path):
    from threefish_gen.verify import prove as vprove
    from threefish_gen.verify import sources as vsources
    v = _pick("avx2", "packed")
    assert vprove.applies(v)
    good = vprove.check(v, vprove.BUILD, tmp_path)
    assert good.status == "PASS" and good.checks == 4, good
    files = render_variant(v)
    name = next(n for n in files if n.endswith(".c"))
    lines = files[name].splitlines()
    i = next(i for i, ln in enumerate(lines) if "_add_epi64(A0, B0)" in ln)
    lines[i] = lines[i].replace("_add_epi64(A0, B0)", "_add_epi64(A0, A0)")
    files[name] = "\n".join(lines) + "\n"
    vsources.use(v, files)
    try:
        bad = vprove.check(v, vprove.BUILD, tmp_path)
    finally:
        vsources.clear()
    assert bad.status == "FAIL" and f"line {i + 1}:" in bad.detail and "_add_epi64(A0, A0)" in bad.detail, bad
    skein = [v for v in targets.variants("all", "c-simd", [get_spec("1.3", 256)]) if v.primitive != "threefish"][0]
    row = vprove.check(skein, vprove.BUILD, tmp_path)       # Skein: scalar UBI + lanes kernels
    assert row.status == "PASS" and "not proved: the glue" in row.detail, row


def _fresh_variant():
    spec = get_spec("1.3", 1024)
    return next(v for v in targets.variants("all", "c-simd", [spec]) if v.primitive == "threefish"
                and v.get("isa") == "avx512" and v.get("layout") == "lanes" and v.options.unroll == "loop"
                and v.options.keys == "fly")


def test_fresh_ring_pointers_prove_and_their_misuse_is_caught():
    """Threefish-1024's x86 lanes loops read the rings through pointers an empty asm renews at every
    subkey (gen/printers/c_simd/printer.py FRESH_ISAS): the file proves equivalent; a FRESH macro
    that does something is refused, and a pointer to the other ring differs."""
    v = _fresh_variant()
    text = _source(v)
    assert f"{v.prefix}FRESH(krf);" in text and "const uint64_t *krf = kr;" in text
    rep = prove(v, text)
    assert not rep.failed and len(rep.lines) == 4, "\n".join(rep.lines)
    assert all(": equivalent (" in line for line in rep.lines), rep.lines
    busy = text.replace(f'#define {v.prefix}FRESH(p) __asm__("" : "+r"(p))', f"#define {v.prefix}FRESH(p) ((p) += 1)")
    assert busy != text
    with pytest.raises(Exception, match="FRESH is not the file's empty barrier"):
        prove(v, busy)
    wrong, _ = edit_line(text, "const uint64_t *krf = kr;", "const uint64_t *krf = kc;")
    rep = prove(v, wrong)
    assert rep.failed and any("DIFFERS" in line for line in rep.lines), rep.lines


def test_fresh_ring_pointers_only_in_the_1024_bit_x86_lanes_loops():
    """The barrier is printed where it was measured to help (Threefish-1024 AVX2/AVX-512 lanes
    loops); Threefish-256/512 loops, NEON and the unrolled kernels read the rings directly."""
    for bits in (256, 512, 1024):
        for v in targets.variants("all", "c-simd", [get_spec("1.3", bits)]):
            if v.primitive != "threefish" or v.get("isa") == "auto":
                continue
            want = (bits == 1024 and v.get("isa") in ("avx2", "avx512") and v.get("layout") in ("lanes", "hybrid")
                    and v.options.unroll == "loop" and v.options.keys == "fly")
            assert ("FRESH(krf)" in _source(v)) == want, v.stem
