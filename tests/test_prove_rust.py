"""threefish-gen prove --target rust: the Rust crate's lib.rs read as a small language (gen/prove/rust.py)."""
import re

import pytest

from test_prove import cli, edit_line, prove
from threefish_gen.gen import targets
from threefish_gen.gen.prove import rust as rust_reader
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.targets import rust as rust_target
from threefish_gen.gen.threefish import Options

RUST = targets.get("rust")
# --set all of v1.3 (the other versions differ in constants, not in the code's shape; verify's
# prove row proves every version): every option set's scalar crate, then the recommended --isa auto
# crate; 512 and 1024 are the long matrix (tests/conftest.py MATRIX)
ALL = [v for bits in (256, 512, 1024) for v in targets.variants("all", "rust", [get_spec("1.3", bits)])
       if v.primitive == "threefish"]


def _source(v):
    return next(text for name, text in render_variant(v).items() if name.endswith("src/lib.rs"))


def _lines(rep):
    """method name (Threefish256::encrypt_block_with_tweak) -> its line"""
    return {line.split(": ")[0].split(" [")[0]: line for line in rep.lines}


@pytest.mark.parametrize("v", ALL, ids=lambda v: v.stem)
def test_every_threefish_variant_of_set_all_proves_equivalent(v):
    """keys fly/table, unroll full/loop, interleave 1/2, and the recommended --isa auto crate: its
    blocks methods once per arm of the SIMD dispatchers (the AVX-512 and AVX2 lanes paths of the
    x86-64 module and the NEON path of the AArch64 module inlined, the scalar arm) and once as built
    without feature simd."""
    rep = prove(v, _source(v))
    assert not rep.failed, "\n".join(rep.lines)
    assert all(": equivalent (" in line for line in rep.lines), rep.lines
    loops = 2 if v.options.interleave > 1 else 1        # the chunks loop, then its remainder
    got = {name: line for name, line in _lines(rep).items()}
    simd = v.get("isa") is not None
    blocks = [line for line in rep.lines if "_blocks_with_tweaks" in line]
    if not simd:
        assert len(rep.lines) == 4 and not rep.note, rep.lines
        assert all(f"1 path(s), {loops} loop(s)" in line for line in blocks), blocks
        return
    assert rep.note == rust_reader.SIMD_NOTE and len(rep.lines) == 2 + 2 * 5, rep.lines
    for d in ("encrypt", "decrypt"):
        jobs = {line.split("[")[1].split("]")[0]: line for line in blocks if f"::{d}_" in line}
        assert sorted(jobs) == ["path avx2", "path avx512", "path neon", "path scalar", "without feature simd"], jobs
        passes = {isa: len({1, o.interleave}) for isa, o in rust_target.simd_paths(v)}
        for label, line in jobs.items():          # a lanes path: fewer blocks than a pass, or its pass loops first
            isa = label.removeprefix("path ")
            want = f"2 path(s), {loops + passes[isa]} loop(s)" if isa in passes else f"1 path(s), {loops} loop(s)"
            assert want in line, line
    assert len(got) == 4


V = RUST.variant(get_spec("1.3", 256), Options("fly", "full", 2))
LOOP = RUST.variant(get_spec("1.3", 256), Options("fly", "loop", 1))
TABLE = RUST.variant(get_spec("1.3", 512), Options("table", "loop", 1))


def _differs(v, text, method):
    rep = prove(v, text)
    assert rep.failed, rep.lines
    return _lines(rep)[method]


def test_rejects_one_changed_rotation_count():
    text, line = edit_line(_source(V), "x1 = x1.rotate_left(14);", "x1 = x1.rotate_left(15);")
    rep = prove(V, text)
    got = _lines(rep)
    assert re.search(rf"DIFFERS: output word \d+ .* line {line}: x1 = x1.rotate_left\(15\);",
                     got["Threefish256::encrypt_block_with_tweak"]), rep.lines
    assert "equivalent" in got["Threefish256::decrypt_block_with_tweak"]        # decrypt is untouched


def test_rejects_one_dropped_statement():
    text, _ = edit_line(_source(V), "x1 ^= x0;", None)
    line = _differs(V, text, "Threefish256::encrypt_block_with_tweak")
    assert "DIFFERS: output word" in line, line
    # the interleaved loop of the blocks method: the second block's mix dropped
    text, _ = edit_line(_source(V), "xb1 ^= xb0;", None)
    line = _differs(V, text, "Threefish256::encrypt_blocks_with_tweaks")
    assert "DIFFERS: output word" in line and "(block 1 of 2 per iteration)" in line, line


def test_rejects_a_wrong_subkey_index():
    """A key word read from the wrong field word; a subkey ring (--unroll loop) and a subkey
    table (--keys table) indexed one word off."""
    text, line = edit_line(_source(V), "let k2 = self.k[2];", "let k2 = self.k[3];")
    assert "DIFFERS" in _differs(V, text, "Threefish256::encrypt_block_with_tweak")
    text, line = edit_line(_source(LOOP), "x3 = x3.wrapping_add(kc[6 * c]);", "x3 = x3.wrapping_add(kc[1 + 6 * c]);")
    assert f"line {line}: x3 = x3.wrapping_add(kc[1 + 6 * c]);" in \
        _differs(LOOP, text, "Threefish256::encrypt_block_with_tweak")
    text, line = edit_line(_source(TABLE), "x1 = x1.wrapping_add(ks[1 + 48 * c]);",
                           "x1 = x1.wrapping_add(ks[2 + 48 * c]);")
    assert f"line {line}: x1 = x1.wrapping_add(ks[2 + 48 * c]);" in \
        _differs(TABLE, text, "Threefish512::encrypt_block_with_tweak")


def test_panics_and_blocks_stored_elsewhere_differ():
    """An index past a block (load64 panics), a try_into of the wrong length (unwrap panics), a
    word stored into the other block of the pair."""
    src = _source(V)
    text, line = edit_line(src, "let t1 = load64(tweak, 1);", "let t1 = load64(tweak, 2);")
    assert f"line {line}: word 2 of 16 bytes (panics)" in _differs(V, text, "Threefish256::encrypt_block_with_tweak")
    old = "let blk: &mut [[u8; BLOCK_BYTES]; 2] = blk.try_into().unwrap();"
    text, line = edit_line(src, old, old.replace("; 2]", "; 3]"))
    assert f"line {line}: try_into a [_; 3] of a slice of 2" in _differs(V, text, "Threefish256::encrypt_blocks_with_tweaks")
    text, _ = edit_line(src, "store64(&mut blk[1], 0, xb0);", "store64(&mut blk[0], 0, xb0);")
    assert "output words never stored: [4]" in _differs(V, text, "Threefish256::encrypt_blocks_with_tweaks")


def test_reads_only_what_it_models():
    """Text outside the language is a reading error, never a verdict: a plain + on words (it
    panics on overflow in a debug build), another iterator adaptor, a helper that is not the
    template's."""
    src = _source(V)
    for old, new in (("x0 = x0.wrapping_add(x1);", "x0 = x0 + x1;"),
                     ("for (block, tweak) in groups.into_remainder().iter_mut().zip(tweak_groups.remainder()) {",
                      "for (block, tweak) in groups.into_remainder().iter_mut().rev().zip(tweak_groups.remainder()) {"),
                     ("u64::from_le_bytes(w)", "u64::from_be_bytes(w)")):
        text, _ = edit_line(src, old, new)
        with pytest.raises(Exception, match="cannot read"):
            prove(V, text)


def test_cli_proves_a_rendered_crate_folder(tmp_path):
    """prove --file CRATE (the crate folder; its src/lib.rs is read); an edited crate DIFFERS (exit 1)."""
    out = tmp_path / "out"
    p = cli("render", "--target", "rust", "--size", "256", "--constants", "1.3", "--out", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    crate = next(out.iterdir()) if len(list(out.iterdir())) == 1 else next(d for d in out.iterdir() if d.is_dir())
    args = ("prove", "--target", "rust", "--size", "256", "--constants", "1.3", "--file", str(crate))
    p = cli(*args)
    assert p.returncode == 0 and p.stdout.count(": equivalent (") == 4, p.stdout + p.stderr
    assert f"{crate / 'src' / 'lib.rs'}: proved equivalent" in p.stdout
    lib = crate / "src" / "lib.rs"
    text, line = edit_line(lib.read_text(), "x3 = x3.rotate_left(16);", "x3 = x3.rotate_left(17);")
    lib.write_text(text)
    p = cli(*args)
    assert p.returncode == 1 and f"line {line}: x3 = x3.rotate_left(17);" in p.stdout, p.stdout + p.stderr
    p = cli(*args[:-1], str(out))             # the --out folder holds the crate: no src/lib.rs of its own
    assert p.returncode == 2 and "without src/lib.rs" in p.stderr and p.stderr.count("\n") == 1, p.stderr


# Skein: the --set all crate of each size (fly/full), and the table/loop schedule of one
SKEIN = [v for v in targets.variants("all", "rust", [get_spec("1.3", bits) for bits in (256, 512, 1024)])
         if v.primitive == "skein"] + [RUST.variant(get_spec("1.3", 512), Options("table", "loop", 1), primitive="skein")]


@pytest.mark.parametrize("v", SKEIN, ids=lambda v: v.stem)
def test_skein_ubi_proves_equivalent(v):
    """fn ubi (its loop over blocks.chunks_exact(NB), ubi_block inlined) against the C contract of
    gen/prove/skein.py: per block t[0] += add, h = E(h, t, m) ^ m, First cleared; the glue is the note."""
    rep = prove(v, _source(v))
    assert not rep.failed and len(rep.lines) == 1, rep.lines
    assert rep.lines[0].startswith("ubi: equivalent (UBI: h = E(h, t, m_i) ^ m_i") and "1 loop(s)" in rep.lines[0]
    assert rep.note.startswith("the glue")


def test_skein_ubi_rejects_edits():
    v = SKEIN[1]                    # Skein-512, fly/full
    src = _source(v)
    for old, new, want in (("x1 = x1.rotate_left(46);", "x1 = x1.rotate_left(47);", "line {line}: x1 = x1.rotate_left(47);"),
                           ("x0 ^= load64(blk, 0);", "x0 ^= load64(blk, 1);", "line {line}: x0 ^= load64(blk, 1);"),
                           ("t[1] &= !FIRST;", None, "tweak word t[1] after one block differs"),
                           ("h[1] = x1;", "h[1] = x2;", "chaining value word h[1] after one block differs"),
                           ("let t0 = core::hint::black_box(t[0]);", "let t0 = core::hint::black_box(t[1]);",
                            "chaining value word h[0] after one block differs")):
        text, line = edit_line(src, old, new)
        rep = prove(v, text)
        assert rep.failed and want.format(line=line) in rep.lines[0], (old, rep.lines)


SIMD = RUST.variant(get_spec("1.3", 256), Options("fly", "loop", 1), isa="avx2")


def test_simd_paths_reject_edits():
    """Edits in the AVX2 lanes path and in the dispatcher: each DIFFERS in its own job, the
    others stay equivalent.  encrypt: a rotation's shift pair 14 -> 15 and 50 -> 49; decrypt: a
    row stored into the wrong block; the encrypt dispatcher's scalar arm returns 1 (block 0 would be
    left undone)."""
    src = _source(SIMD)
    rot = "vx1 = _mm256_or_si256(_mm256_slli_epi64(vx1, 14), _mm256_srli_epi64(vx1, 50));"
    text, _ = edit_line(src, rot, rot.replace("14)", "15)").replace("50)", "49)"))
    dec = src.index("unsafe fn decrypt_avx2")
    text, _ = edit_line(text, "st256(&mut blk[1], 0, s2_1);", "st256(&mut blk[2], 0, s2_1);",
                        nth=src[:dec].count("st256(&mut blk[1], 0, s2_1);") + 1)
    text, _ = edit_line(text, "_ => 0,", "_ => 1,")            # the first dispatcher: encrypt's
    got = {line.split(": ")[0]: line for line in prove(SIMD, text).lines}
    ty = "Threefish256::"
    assert "DIFFERS: output word" in got[f"{ty}encrypt_blocks_with_tweaks [path avx2]"], got
    assert "output words never stored" in got[f"{ty}decrypt_blocks_with_tweaks [path avx2]"], got
    assert "DIFFERS" in got[f"{ty}encrypt_blocks_with_tweaks [path scalar]"], got
    for job in ("encrypt_blocks_with_tweaks [without feature simd]", "decrypt_blocks_with_tweaks [path scalar]",
                "encrypt_block_with_tweak", "decrypt_block_with_tweak"):
        assert ": equivalent (" in got[ty + job], got[ty + job]
    # encrypt: a broadcast key word; decrypt: a lane shuffle's immediate (its block gather)
    text, _ = edit_line(src, "let bk3 = _mm256_set1_epi64x(tf.k[2] as i64);", "let bk3 = _mm256_set1_epi64x(tf.k[1] as i64);")
    shuf = "let s2_0 = _mm256_permute2x128_si256(s1_0, s1_2, 0x20);"
    text, _ = edit_line(text, shuf, shuf.replace("0x20", "0x21"), nth=src[:dec].count(shuf) + 2)
    got = {line.split(": ")[0]: line for line in prove(SIMD, text).lines}
    assert all("DIFFERS" in got[f"{ty}{d}_blocks_with_tweaks [path avx2]"] for d in ("encrypt", "decrypt")), got
    # a row helper that is not a bounds-checked unaligned load is a reading error
    text, _ = edit_line(src, "let s = &b[8 * i..8 * i + 32];", "let s = &b[8 * i..8 * i + 16];")
    with pytest.raises(Exception, match="the row helper ld256"):
        prove(SIMD, text)


NEON = RUST.variant(get_spec("1.3", 256), Options("fly", "loop", 1), isa="neon")


def test_neon_path_rejects_edits():
    """Edits in the NEON lanes path (--isa neon: the AArch64 module alone): each DIFFERS in its
    own job, the others stay equivalent.  encrypt: a rotation's shift-and-insert 14 -> 15 and
    50 -> 49; decrypt: a row stored into the wrong block.  Then a broadcast key word and a zip
    of the wrong half; a row helper that is not the template's NEON load is a reading error."""
    src = _source(NEON)
    assert "use core::arch::aarch64::*;" in src and "_mm" not in src
    rot = "vx1 = vsriq_n_u64(vshlq_n_u64(vx1, 14), vx1, 50);"
    text, _ = edit_line(src, rot, rot.replace("14)", "15)").replace("50)", "49)"))
    dec = src.index("unsafe fn decrypt_neon")
    store = "st128(&mut blk[1], 0, s1_1);"
    text, _ = edit_line(text, store, "st128(&mut blk[0], 0, s1_1);", nth=src[:dec].count(store) + 1)
    got = {line.split(": ")[0]: line for line in prove(NEON, text).lines}
    ty = "Threefish256::"
    assert "DIFFERS: output word" in got[f"{ty}encrypt_blocks_with_tweaks [path neon]"], got
    assert "DIFFERS" in got[f"{ty}decrypt_blocks_with_tweaks [path neon]"], got
    for job in ("encrypt_blocks_with_tweaks [without feature simd]", "encrypt_blocks_with_tweaks [path scalar]",
                "decrypt_blocks_with_tweaks [path scalar]", "encrypt_block_with_tweak", "decrypt_block_with_tweak"):
        assert ": equivalent (" in got[ty + job], got[ty + job]
    text, _ = edit_line(src, "let bk3 = vdupq_n_u64(tf.k[2]);", "let bk3 = vdupq_n_u64(tf.k[1]);")
    zip_ = "let s1_1 = vzip2q_u64(s0_0, s0_1);"
    text, _ = edit_line(text, zip_, zip_.replace("vzip2q", "vzip1q"), nth=src[:dec].count(zip_) + 1)
    got = {line.split(": ")[0]: line for line in prove(NEON, text).lines}
    assert all("DIFFERS" in got[f"{ty}{d}_blocks_with_tweaks [path neon]"] for d in ("encrypt", "decrypt")), got
    text, _ = edit_line(src, "let s = &b[8 * i..8 * i + 16];", "let s = &b[8 * i + 8..8 * i + 24];")
    with pytest.raises(Exception, match="the row helper ld128"):
        prove(NEON, text)
    # an x86 intrinsic in the AArch64 module is a reading error, not a verdict
    text, _ = edit_line(src, rot, "vx1 = _mm_add_epi64(vx1, vx1);")
    with pytest.raises(Exception, match="another architecture"):
        prove(NEON, text)


def test_verify_prove_row(tmp_path):
    from threefish_gen.verify import prove as vprove
    from threefish_gen.verify import sources as vsources
    from threefish_gen.verify.matrix import builds_of
    assert vprove.BUILD in builds_of(V)
    row = vprove.check(V, vprove.BUILD, tmp_path)
    assert row.status == "PASS" and row.checks == 4 and "not proved" not in row.detail, row
    # check's row: the user's crate (an edited lib.rs), proved in a child process
    files = render_variant(V)
    lib = next(n for n in files if n.endswith("src/lib.rs"))
    files[lib], line = edit_line(files[lib], "x1 = x1.rotate_left(14);", "x1 = x1.rotate_left(15);")
    vsources.use(V, files)
    try:
        bad = vprove.check(V, vprove.BUILD, tmp_path)
    finally:
        vsources.clear()
    assert bad.status == "FAIL" and f"line {line}: x1 = x1.rotate_left(15);" in bad.detail, bad
    row = vprove.check(SIMD, vprove.BUILD, tmp_path)
    assert row.status == "PASS" and row.checks == 8 and "not proved: the CPU test that picks a SIMD path" in row.detail, row
    row = vprove.check(SKEIN[0], vprove.BUILD, tmp_path)
    assert row.status == "PASS" and row.checks == 1 and "not proved: the glue" in row.detail, row
