"""threefish-gen prove --target csharp: the C# printer's output read as text (gen/prove/csharp.py on the
SIMD C reader's machinery): every csharp variant of `--set all` (Skein v1.3, all sizes, Threefish
and Skein) proves equivalent on every path (byte order x the IsSupported flags it reads); edited
files are rejected naming the function, the output word and the line (exit 1), unreadable text is
one line (exit 2)."""
import re

import pytest

from test_prove import cli, committed_source, edit_line, prove
from threefish_gen.gen import targets
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.prove import csharp as cs_reader, why_not
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec

ALL = targets.variants("all", "csharp", [get_spec("1.3", bits) for bits in (256, 512, 1024)])
THREEFISH = [v for v in ALL if v.primitive == "threefish"]
SKEIN = [v for v in ALL if v.primitive == "skein"]


def _source(v):
    return next(text for name, text in render_variant(v).items() if name.endswith(".cs"))


def _pick(bits, layout, stem_end=""):
    return next(v for v in THREEFISH if v.spec.bits == bits and v.get("layout") == layout and v.prefix.endswith(stem_end))


def test_the_set_is_what_the_descriptor_lists():
    assert len(THREEFISH) == 21 and len(SKEIN) == 3
    assert {v.get("layout") for v in THREEFISH} == {"lanes", "scalar", "packed"}
    assert all(why_not(v) is None for v in ALL)


@pytest.mark.parametrize("v", THREEFISH, ids=lambda v: v.stem)
def test_every_threefish_variant_proves_equivalent(v):
    """scalar, lanes (keys fly/table, unroll full/loop, interleave 1/2) and packed: each public
    method on each path; the blocks methods' loops (scalar, Vector256, Vector512 kernels) by
    induction."""
    rep = prove(v, _source(v))
    assert not rep.failed, "\n".join(rep.lines)
    assert all(": equivalent (" in line for line in rep.lines), rep.lines
    by_method = {}
    for line in rep.lines:
        m = re.match(rf"{v.prefix}\.(\w+) \[(.*?)\]: equivalent", line)
        assert m, line
        by_method.setdefault(m.group(1), []).append(m.group(2))
    assert set(by_method) == {"Encrypt", "Decrypt", "EncryptBlocks", "DecryptBlocks"}
    layout = v.get("layout")
    for name, labels in by_method.items():
        assert labels[0].startswith("little-endian") and labels[-1] == "big-endian", labels
        if name.endswith("Blocks") and layout == "lanes":
            # both kernels, one, the other, none (the scalar loop): four little-endian paths
            assert len(labels) == 5 and "little-endian, Avx2, Avx512F" in labels, labels
        elif not name.endswith("Blocks") and layout == "packed":
            # the packed kernel (its rotations with and without the AVX-512 form, where it has
            # one), and the scalar block without it
            assert len(labels) in (3, 4) and any("no " in lb for lb in labels), labels
        else:
            assert labels == ["little-endian", "big-endian"], labels
    blocks = [line for line in rep.lines if ".EncryptBlocks [little-endian, Avx2, Avx512F]" in line]
    if layout == "lanes":
        loops = 6 if v.options.interleave > 1 else 3     # interleaved loop + one-group/one-block tail per kernel
        assert f"{loops} loop(s) proved by induction" in blocks[0], blocks


@pytest.mark.parametrize("v", SKEIN, ids=lambda v: v.stem)
def test_skein_ubi_proves_equivalent(v):
    rep = prove(v, committed_source(v))
    assert not rep.failed, "\n".join(rep.lines)
    assert [line.split(":")[0] for line in rep.lines] == [
        f"{v.prefix}.Ubi [little-endian]", f"{v.prefix}.Ubi [big-endian]",
        f"{v.prefix}.UbiLanes512 [little-endian]", f"{v.prefix}.UbiLanes256 [little-endian]"]
    assert all("equivalent (UBI: s = h, t;" in line and "1 path(s), 1 loop(s) proved by induction" in line
               for line in rep.lines[:2]), rep.lines
    # HashMany and tree leaves: one block of 8 / 4 messages, every lane's every output word
    for line, lanes in zip(rep.lines[2:], (8, 4)):
        assert f"equivalent (UBI lanes: out_l = E(h_l, t_l, m_l) ^ m_l for each of {lanes} lanes; 1 path(s)" in line, line
    assert "1,368 golden records and the 35 published v1.3 tree records" in rep.note


def test_cli_proves_a_fresh_render_and_a_committed_file():
    p = cli("prove", "--target", "csharp", "--size", "512", "--constants", "1.3")
    assert p.returncode == 0 and p.stdout.count(": equivalent (") == 14, p.stdout + p.stderr
    assert "proved equivalent" in p.stdout
    p = cli("prove", "--target", "csharp", "--primitive", "skein", "--size", "256", "--constants", "1.3",
            "--file", "out/csharp/Skein256V13.cs")
    assert p.returncode == 0 and p.stdout.count(".Ubi [") == 2 and "not proved here: the glue" in p.stdout, \
        p.stdout + p.stderr


# ------------------------------------------------------------------ rejections: edit the text

V = _pick(256, "lanes", "_fly_full_i1")           # Vector512 and Vector256 kernels, scalar tail


def _edit(v, old, new, nth=1, text=None):
    """The render (or text) with the nth line whose stripped text is old replaced (new None: dropped)."""
    return edit_line(text or _source(v), old, new, nth)


def _bad(rep):
    return [ln for ln in rep.lines if ": DIFFERS: " in ln]


def _prove_file(tmp_path, v, text, *extra):
    f = tmp_path / "Edited.cs"
    f.write_text(text)
    layout = () if v.primitive == "skein" else ("--layout", v.get("layout"))
    return cli("prove", "--target", "csharp", "--size", str(v.spec.bits), "--constants", v.spec.version,
               *layout, "--keys", v.options.keys, "--unroll", v.options.unroll, "--interleave", str(v.options.interleave),
               *extra, "--file", str(f))


def _lines(rep, method):
    return [ln for ln in rep.lines if ln.startswith(f"{V.prefix}.{method} [")]


def test_rejects_one_changed_rotation_count_in_a_vector_kernel(tmp_path):
    text, line = _edit(V, "x1 = Avx512F.RotateLeft(x1, 14);", "x1 = Avx512F.RotateLeft(x1, 15);")
    p = _prove_file(tmp_path, V, text)
    assert p.returncode == 1, p.stdout + p.stderr
    bad = [ln for ln in p.stdout.splitlines() if ": DIFFERS: " in ln]
    # exactly the paths that run the Vector512 kernel
    assert len(bad) == 2 and all("EncryptBlocks [little-endian" in ln and "Avx512F]" in ln for ln in bad), bad
    assert re.search(rf"{V.prefix}\.EncryptBlocks \[little-endian, Avx2, Avx512F\]: DIFFERS: output word \d+ "
                     rf"\(block \d of 8 per iteration\) .* line {line}: x1 = Avx512F\.RotateLeft\(x1, 15\);", p.stdout)
    assert f"{V.prefix}.EncryptBlocks [little-endian, Avx2, no Avx512F]: equivalent" in p.stdout


def test_rejects_one_changed_rotation_count_in_the_scalar_code():
    text, line = _edit(V, "x1 = BitOperations.RotateLeft(x1, 14);", "x1 = BitOperations.RotateLeft(x1, 15);")
    rep = prove(V, text)
    enc = _lines(rep, "Encrypt")
    assert rep.failed and len(enc) == 2 and all(re.search(
        rf"DIFFERS: output word \d+ differs from the description; first divergence at line {line}: "
        r"x1 = BitOperations\.RotateLeft\(x1, 15\);", ln) for ln in enc), enc
    assert all(": equivalent" in ln for ln in _lines(rep, "EncryptBlocks") + _lines(rep, "Decrypt")), rep.lines


def test_rejects_one_swapped_operand():
    src = _source(V)
    first = src.count("x0 += x1;", 0, src.index("private static void EncryptBlocksScalar(")) + 1
    text, line = _edit(V, "x0 += x1;", "x0 += x3;", nth=first, text=src)     # in the scalar blocks loop
    rep = prove(V, text)
    bad = _bad(rep)
    # every path of EncryptBlocks runs the scalar loop (for some n); nothing else reads that line
    assert len(bad) == 5 and all(".EncryptBlocks [" in ln for ln in bad), rep.lines
    assert all(re.search(rf"DIFFERS: output word \d+ differs from the description; first divergence at line {line}: "
                         r"x0 \+= x3;", ln) for ln in bad), bad


def test_rejects_one_dropped_statement_and_one_dropped_load():
    text, line = _edit(V, "x1 ^= x0;", None, nth=1)         # the first mix of the single-block Encrypt
    rep = prove(V, text)
    enc = _lines(rep, "Encrypt")
    assert all(re.search(r"DIFFERS: output word \d+ differs from the description; first divergence at line \d+:", ln)
               for ln in enc) and len(enc) == 2, enc
    text, line = _edit(V, "s2 = Vector512.LoadUnsafe(ref src, 128).AsUInt64();", None)
    rep = prove(V, text)
    bad = _bad(rep)
    assert bad and all(re.search(r"EncryptBlocks \[little-endian, .*Avx512F\]: DIFFERS: line \d+: "
                                 r"EncryptLanes512#1\.s2 is read before it is set", ln) for ln in bad), bad


def test_rejects_a_broken_lane_shuffle_index():
    old = "l0_1 = Avx512F.PermuteVar8x64x2(s0, Vector512.Create(1UL, 9UL, 3UL, 11UL, 5UL, 13UL, 7UL, 15UL), s1);"
    text, line = _edit(V, old, old.replace("7UL, 15UL)", "15UL, 7UL)"))
    rep = prove(V, text)
    bad = _bad(rep)
    # the permute makes no new term: the word that moved wrongly is named with the lines that moved it
    assert bad and all(re.search(rf"EncryptBlocks \[.*Avx512F\]: DIFFERS: output word \d+ \(block \d of 8 per "
                                 rf"iteration\) .*first divergence at line \d+: s\d = Vector512\.LoadUnsafe.*"
                                 rf"moved by line\(s\) (\d+, )*{line}\b", ln) for ln in bad), bad


def test_rejects_one_dropped_store():
    text, _ = _edit(V, "s1.AsByte().StoreUnsafe(ref dst, 64);", None)
    rep = prove(V, text)
    bad = _bad(rep)
    assert bad and all(re.search(r"EncryptBlocks \[.*Avx512F\]: DIFFERS: loop at line \d+: output words never "
                                 r"stored: \[8, 9, 10, 11, 12, 13, 14, 15\]", ln) for ln in bad), bad


def test_big_endian_path_needs_the_byte_swap():
    """A store that drops the big-endian branch's ReverseEndianness: only the big-endian path differs."""
    old = ("Unsafe.WriteUnaligned(ref Unsafe.Add(ref dst, 8), BitConverter.IsLittleEndian ? x1 : "
           "BinaryPrimitives.ReverseEndianness(x1));")
    text, line = _edit(V, old, old.replace("BinaryPrimitives.ReverseEndianness(x1)", "x1"))
    rep = prove(V, text)
    enc = _lines(rep, "Encrypt")
    assert enc[0].endswith(")") and ": equivalent" in enc[0], enc
    assert re.search(rf"Encrypt \[big-endian\]: DIFFERS: output word 1 differs .* line {line}: ", enc[1]), enc


def test_each_isa_form_of_a_packed_rotation_is_proved():
    """Packed: ``Avx512F.VL.IsSupported ? RotateLeftVariable : Or(shifts)``; a wrong shift count
    in the AVX2 form fails only the path without AVX-512VL."""
    v = _pick(256, "packed")
    old = ("B = Avx512F.VL.IsSupported ? Avx512F.VL.RotateLeftVariable(B, Vector128.Create(14UL, 16UL)) "
           ": Avx2.Or(Avx2.ShiftLeftLogicalVariable(B, Vector128.Create(14UL, 16UL)), "
           "Avx2.ShiftRightLogicalVariable(B, Vector128.Create(50UL, 48UL)));")
    src = _source(v)
    joined = src.replace("Vector128.Create(14UL, 16UL))\n                : Avx2.Or(", "Vector128.Create(14UL, 16UL)) : Avx2.Or(")
    text, line = _edit(v, old, old.replace("(50UL, 48UL)", "(50UL, 47UL)"), text=joined)
    rep = prove(v, text)
    bad = _bad(rep)
    assert bad and all(".Encrypt [little-endian, Avx2, no Avx512F.VL]: DIFFERS: output word" in ln and
                       f"line {line}:" in ln for ln in bad), rep.lines


def test_skein_rejections(tmp_path):
    v = SKEIN[0]
    src = committed_source(v)
    text, line = _edit(v, "x1 = BitOperations.RotateLeft(x1, 14);", "x1 = BitOperations.RotateLeft(x1, 15);", text=src)
    p = _prove_file(tmp_path, v, text, "--primitive", "skein")
    assert p.returncode == 1 and p.stdout.count(": DIFFERS: ") == 2, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}\.Ubi \[little-endian\]: DIFFERS: loop at line \d+: chaining value word h\[0\] "
                     rf"after one block differs from the description; first divergence at line {line}: "
                     r"x1 = BitOperations\.RotateLeft\(x1, 15\);", p.stdout), p.stdout
    text, _ = _edit(v, "t_1 &= ~First;", None, text=src)
    bad = _bad(prove(v, text))
    assert len(bad) == 2 and all("tweak word t[1] after one block differs from the description" in ln and
                                 "the body does not update it" in ln for ln in bad), bad
    text, _ = _edit(v, "s[2] = h_2;", None, text=src)
    rep = prove(v, text)
    bad = _bad(rep)
    assert len(bad) == 2 and all("returns a chaining value word h[2] that is not the state after its blocks" in ln
                                 for ln in bad), rep.lines
    # the Vector256 lanes kernel (HashMany, tree leaves): a rotation and a dropped store
    start = src.index("void UbiLanes256(")
    head, tail = src[:start], src[start:]
    rot = "vx1 = Avx2.Or(Avx2.ShiftLeftLogical(vx1, 14), Avx2.ShiftRightLogical(vx1, 50));"
    assert rot in tail
    text, line = _edit(v, rot, rot.replace("14), ", "15), ").replace(", 50)", ", 49)"), text=tail)
    rep = prove(v, head + text)
    bad = _bad(rep)
    assert len(bad) == 1 and bad[0].startswith(f"{v.prefix}.UbiLanes256 [little-endian]: DIFFERS: lane 0: h[")
    assert f"first divergence at line {head.count(chr(10)) + line}:" in bad[0], bad
    store = "s2_1.AsByte().StoreUnsafe(ref dst, 32);"
    text, _ = _edit(v, store, None, text=tail)
    bad = _bad(prove(v, head + text))
    assert len(bad) == 1 and "UbiLanes256 [little-endian]: DIFFERS: output words never stored: [4, 5, 6, 7]" in bad[0], bad


def test_checks_and_the_wipe_are_calls_without_effect_only_when_they_write_nothing():
    prog = cs_reader.Program(_source(V))
    assert prog.pure("CheckOne") == ("pure", None) and prog.pure("Burn") == ("pure", None)
    assert prog.pure("CheckBlocks") == ("pure", (2, 32))      # n = input.Length / BlockBytes
    assert prog.pure("EncryptBlock") is None
    # a check that writes through a reference is read as code: writing the input is a difference
    src = _source(V)
    text = src.replace("        if (key.Length != BlockBytes)\n",
                       "        Unsafe.WriteUnaligned(ref MemoryMarshal.GetReference(input), 0UL);\n"
                       "        if (key.Length != BlockBytes)\n", 1)
    assert text != src
    rep = prove(V, text)
    enc = _lines(rep, "Encrypt")
    assert enc and all("DIFFERS: writes into the input array in" in ln for ln in enc), rep.lines


def test_unreadable_csharp_is_one_line_and_exit_2(tmp_path):
    text = _source(V).replace("x0 += x1;", "x0 += Frob(x1, 3);", 1)
    p = _prove_file(tmp_path, V, text)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "cannot read" in p.stderr and "Frob" in p.stderr, p.stderr
    p = _prove_file(tmp_path, V, "public static class C\n{\n    public static void Encrypt(ReadOnlySpan<byte> key)\n"
                                 "    {\n        while (true) { }\n    }\n}\n")
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    with pytest.raises(GenError, match="no exported encrypt/decrypt"):
        prove(V, "public static class C\n{\n}\n")


# ------------------------------------------------------------------ the prove row of verify

def test_verify_prove_row_passes_csharp_and_fails_an_edit(tmp_path):
    from threefish_gen.verify import prove as vprove
    from threefish_gen.verify import sources as vsources
    from threefish_gen.verify.matrix import builds_of
    v = _pick(512, "packed")
    assert vprove.BUILD in builds_of(v)
    good = vprove.check(v, vprove.BUILD, tmp_path)
    assert good.status == "PASS" and good.checks >= 8, good
    files = render_variant(v)
    name = next(n for n in files if n.endswith(".cs"))
    files[name], line = _edit(v, "x0 += x1;", "x0 += x2;", text=files[name])
    vsources.use(v, files)
    try:
        bad = vprove.check(v, vprove.BUILD, tmp_path)
    finally:
        vsources.clear()
    assert bad.status == "FAIL" and f"line {line}: x0 += x2;" in bad.detail and ".Encrypt [" in bad.detail, bad
    row = vprove.check(SKEIN[1], vprove.BUILD, tmp_path)
    assert row.status == "PASS" and "not proved: the glue" in row.detail, row


def test_rejects_a_wrong_half_and_two_swapped_lanes_of_a_create():
    """The portable calls read through gen/isa/dotnet.py ``API``: a tweak row built with two lanes
    swapped (``Vector512.Create`` of one word per lane) names its line; the Skein lanes kernel
    storing the upper half (``GetUpper``: the zero lanes of its half rows) instead of the lower one
    differs in that kernel only (its first divergence is the line that made those zeros)."""
    src = _source(V)
    old = next(ln.strip() for ln in src.splitlines() if ln.strip().startswith("t0 = Vector512.Create("))
    first, second = "ref tweaks, 0))", "ref tweaks, 16))"
    assert first in old and second in old
    text, line = _edit(V, old, old.replace(first, "@").replace(second, first).replace("@", second), text=src)
    bad = _bad(prove(V, text))
    assert bad and all(re.search(rf"EncryptBlocks \[little-endian, .*Avx512F\]: DIFFERS: output word \d+ .*first "
                                 rf"divergence at line {line}: t0 = Vector512\.Create\(", ln) for ln in bad), bad
    v = next(v for v in SKEIN if v.spec.bits == 256)
    text, line = _edit(v, "s3_0.GetLower().AsByte().StoreUnsafe(ref dst, 0);",
                       "s3_0.GetUpper().AsByte().StoreUnsafe(ref dst, 0);", text=committed_source(v))
    rep = prove(v, text)
    bad = _bad(rep)
    assert len(bad) == 1 and bad[0].startswith(f"{v.prefix}.UbiLanes512 [little-endian]: DIFFERS: lane 0: h[0] "), \
        rep.lines
    assert re.search(r"first divergence at line \d+: var s0_0 = Vector512\.Create\(Vector256\.LoadUnsafe\(ref src, 0\)"
                     r"\.AsUInt64\(\), Vector256\.Create\(0UL\)\);", bad[0]), bad
