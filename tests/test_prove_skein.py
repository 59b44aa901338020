"""threefish-gen prove --primitive skein: the generated UBI function (gen/prove/skein.py) of the C,
nasm-x64 and nasm-x86 renders, by induction over the carried chaining value; mutations are rejected."""
import re

import pytest

from test_prove import cli, committed_source, edit_line as _edit_nth, prove
from threefish_gen.gen import targets
from threefish_gen.gen.prove import why_not
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec


def skein(target, bits, which="recommended", abi="sysv"):
    """The Skein variants of the set (nasm-x64: those of one ABI)."""
    return [v for v in targets.variants(which, target, [get_spec("1.3", bits)])
            if v.primitive == "skein" and v.get("abi", abi) == abi]


@pytest.mark.parametrize("target", ["c", "nasm-x64", "nasm-x64 win64", "nasm-x86 cdecl"])
@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_ubi_proves_equivalent(target, bits):
    target, _, abi = target.partition(" ")
    v, = skein(target, bits, abi=abi or "sysv")
    rep = prove(v, committed_source(v))
    assert not rep.failed, "\n".join(rep.lines)
    suffix = "ubi" if target == "c" else "ubi_asm"
    assert len(rep.lines) == 1 and rep.lines[0].startswith(f"{v.prefix}{suffix}: equivalent (UBI"), rep.lines
    paths = 1 if target == "c" else 2      # nasm: the n == 0 test before the bottom-tested loop
    assert f"{paths} path(s), 1 loop(s) proved by induction" in rep.lines[0], rep.lines
    assert "1,368 golden records and the 35 published v1.3 tree records" in rep.note


@pytest.mark.parametrize("v", skein("c", 256, "all")[1:], ids=lambda v: v.stem)
def test_every_c_option_set_proves(v):
    """keys table (a subkey array in the loop body), unroll loop (an inner concrete loop)."""
    rep = prove(v, committed_source(v))
    assert not rep.failed and ": equivalent (UBI" in rep.lines[0], rep.lines


def test_cli_and_the_verify_row(tmp_path):
    from threefish_gen.verify import prove as vprove
    v, = skein("c", 512)
    row = vprove.check(v, vprove.BUILD, tmp_path)
    assert row.status == "PASS" and "not proved: the glue" in row.detail, row
    p = cli("prove", "--target", "c", "--primitive", "skein", "--size", "512", "--constants", "1.3")
    assert p.returncode == 0 and "_ubi: equivalent (UBI" in p.stdout and "not proved here: the glue" in p.stdout, \
        p.stdout + p.stderr


def _ubi_function(v):
    text = render_variant(v)[f"{v.stem}.c"]
    body = re.search(r"^static void \w+_ubi\(.*?^}$", text, re.S | re.M).group(0)
    return body.replace(v.prefix, "P_").replace(v.prefix.upper(), "P_")


def test_simd_skein_proves_its_scalar_ubi_and_every_lanes_kernel():
    """c-simd Skein: the scalar P_ubi (the --target c one) and each SIMD lanes kernel
    (hash_many and tree leaves: one block of 4 (AVX2), 8 (AVX-512) or 2 (NEON) messages)."""
    simd = skein("c-simd", 512, "all")
    assert {v.get("isa") for v in simd} == {"avx2", "avx512", "neon", "auto"}
    scalar = _ubi_function(skein("c", 512)[0])
    assert "for (; n > 0; n--, blk += 64)" in scalar
    assert all(_ubi_function(v) == scalar for v in simd)
    assert all(why_not(v) is None for v in simd + skein("c", 512, "all") + skein("nasm-x64", 512, "all"))
    lanes = {"avx2": ["avx2 4"], "avx512": ["avx512 8"], "neon": ["neon 2"], "auto": ["avx2 4", "avx512 8", "neon 2"]}
    for v in simd:
        rep = prove(v, render_variant(v)[f"{v.stem}.c"])
        assert not rep.failed, rep.lines
        assert f"{v.prefix}ubi: equivalent (UBI" in rep.lines[0], rep.lines
        got = sorted(re.findall(r"_ubi_lanes_(\w+): equivalent \(UBI lanes: .* each of (\d) lanes", "\n".join(rep.lines)))
        assert [f"{a} {b}" for a, b in got] == lanes[v.get("isa")], rep.lines


# ------------------------------------------------------------------------------ mutations


def _prove_file(tmp_path, target, text):
    f = tmp_path / ("edited.c" if target == "c" else "edited.asm")
    f.write_text(text)
    return cli("prove", "--target", target, "--primitive", "skein", "--size", "256", "--constants", "1.3",
               "--file", str(f))


C, = skein("c", 256)
ASM, = skein("nasm-x64", 256)
FF = f"x3 ^= {C.prefix}load64(blk + 24);"


@pytest.mark.parametrize("old, new, word", [
    ("x1 = (x1 << 14) | (x1 >> 50);", "x1 = (x1 << 15) | (x1 >> 49);", r"chaining value word h\[\d\]"),
    ("x0 += x1;", "x0 += x2;", r"chaining value word h\[\d\]"),                    # a swapped variable
    (FF, None, r"chaining value word h\[3\]"),                                         # no feed-forward xor
    ("t[0] += add;", "t[0] += 32;", r"tweak word t\[0\]"),                           # a wrong tweak increment
], ids=["rotation", "swapped", "feed-forward", "tweak"])
def test_c_rejects(tmp_path, old, new, word):
    text, line = _edit_nth(committed_source(C), old, new)
    p = _prove_file(tmp_path, "c", text)
    assert p.returncode == 1, p.stdout + p.stderr
    m = re.search(rf"{C.prefix}ubi: DIFFERS: loop at line \d+: {word} after one block differs .*"
                  rf"first divergence at line (\d+): (.*)", p.stdout)
    assert m, p.stdout
    if new is not None:
        assert int(m.group(1)) == line and m.group(2).strip() == new, p.stdout


def test_c_rejects_first_flag_kept(tmp_path):
    first = f"t[1] &= ~{C.prefix.upper()}FIRST;"
    text, _ = _edit_nth(committed_source(C), first, None)
    p = _prove_file(tmp_path, "c", text)
    assert p.returncode == 1 and re.search(r"_ubi: DIFFERS: .*tweak word t\[1\]", p.stdout), p.stdout


@pytest.mark.parametrize("old, new, nth, want", [
    ("rol r13, 14", "rol r13, 15", 1, r"chaining value word h\[\d\] after one block differs"),
    ("add r12, r13", "add r12, r14", 1, r"chaining value word h\[\d\] after one block differs"),   # swapped
    ("xor r12, qword [rbp]", None, 1, r"chaining value word h\[0\] after one block differs"),      # feed-forward
    ("add rcx, 0x10", "add rcx, 0x20", 1, r"the tweak pointer advances 0x20 bytes per block, not 16"),
], ids=["rotation", "swapped", "feed-forward", "tweak"])
def test_asm_rejects(tmp_path, old, new, nth, want):
    text, line = _edit_nth(committed_source(ASM), old, new, nth)
    p = _prove_file(tmp_path, "nasm-x64", text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{ASM.prefix}ubi_asm: DIFFERS: .*{want}", p.stdout), p.stdout
    if new is not None:
        assert f"line {line}: {new}" in p.stdout, p.stdout


def test_win64_asm_proves_and_rejects_a_changed_rotation(tmp_path):
    """prove --abi win64 reads the variant's ABI (n the 5th argument, on the stack above the
    shadow space): the committed file proves, one changed rotation count DIFFERS."""
    v, = skein("nasm-x64", 256, abi="win64")
    args = ("prove", "--target", "nasm-x64", "--primitive", "skein", "--abi", "win64", "--size", "256",
            "--constants", "1.3")
    p = cli(*args)
    assert p.returncode == 0 and f"{v.prefix}ubi_asm: equivalent (UBI" in p.stdout, p.stdout + p.stderr
    text, line = _edit_nth(committed_source(v), "rol r13, 14", "rol r13, 13", 1)
    f = tmp_path / "edited.asm"
    f.write_text(text)
    p = cli(*args, "--file", str(f))
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}ubi_asm: DIFFERS: .*chaining value word h\[\d\] after one block differs",
                     p.stdout), p.stdout
    assert f"line {line}: rol r13, 13" in p.stdout, p.stdout


def test_x86_asm_rejects_a_changed_rotation(tmp_path):
    """nasm-x86 (cdecl, words in XMM: a rotation is psllq/psrlq/por): the shift left of the first
    rotation one less DIFFERS, named at its line."""
    v, = skein("nasm-x86", 256, abi="cdecl")
    text, line = _edit_nth(committed_source(v), "psllq xmm7, 14", "psllq xmm7, 13", 1)
    f = tmp_path / "edited.asm"
    f.write_text(text)
    p = cli("prove", "--target", "nasm-x86", "--primitive", "skein", "--size", "256", "--constants", "1.3",
            "--file", str(f))
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}ubi_asm: DIFFERS: .*chaining value word h\[\d\] after one block differs",
                     p.stdout), p.stdout
    assert f"line {line}: psllq xmm7, 13" in p.stdout, p.stdout


def test_asm_rejects_a_dropped_spill_reload(tmp_path):
    """Skein-512 spills k7 (the last subkey's word 7 reads it back): without the reload, x7 gets
    the register's previous value."""
    v, = skein("nasm-x64", 512)
    text, line = _edit_nth(committed_source(v), "mov rdx, qword [rsp + 0]", None, 2)
    f = tmp_path / "edited.asm"
    f.write_text(text)
    p = cli("prove", "--target", "nasm-x64", "--primitive", "skein", "--size", "512", "--constants", "1.3",
            "--file", str(f))
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}ubi_asm: DIFFERS: loop at line \d+: chaining value word h\[7\] after one "
                     rf"block differs .* first divergence at line \d+", p.stdout), p.stdout


def test_unreadable_skein_file_is_one_line(tmp_path):
    p = _prove_file(tmp_path, "c", "void nothing(void)\n{\n}\n")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "no UBI function" in p.stderr, p.stderr


@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_the_description_of_one_block_is_the_reference_ubi(bits):
    """The terms the proof compares with, evaluated on numbers, are gen/skein.ubi's chaining value
    for a one-block message (tweak position += block length, First and Final set, First cleared)."""
    import random
    from threefish_gen.gen import skein as ref
    from threefish_gen.gen.prove.skein import FIRST, UbiContext
    from threefish_gen.gen.prove.terms import evaluate, scope, var
    v, = skein("c", bits)
    nw, nb = v.spec.nw, v.spec.block_bytes
    rng = random.Random(bits)
    h, msg = rng.randbytes(nb), rng.randbytes(nb)
    t = ref.tweak(0, ref.T_MSG, first=True, final=True)
    words = lambda b: [int.from_bytes(b[i:i + 8], "little") for i in range(0, len(b), 8)]    # noqa: E731
    env = {**{f"h[{j}]": w for j, w in enumerate(words(h))}, **{f"m[{i}]": w for i, w in enumerate(words(msg))},
           "t[0]": words(t)[0], "t[1]": words(t)[1], "add": nb}
    with scope():           # terms are made in a proof's scope (gen/prove/terms.py)
        ctx = UbiContext(v, True)
        want = ctx.next_state({name: var(name) for name in ctx.carried}, [var(f"m[{i}]") for i in range(nw)], None)
        got = b"".join(evaluate(want[f"h[{j}]"], env).to_bytes(8, "little") for j in range(nw))
        assert got == ref.ubi(v.spec, h, msg, ref.T_MSG)
        assert evaluate(want["t[0]"], env) == nb and evaluate(want["t[1]"], env) == words(t)[1] & ~FIRST


# ------------------------------------------------------------------------------ SIMD lanes kernels

LANES_V, = [v for v in skein("c-simd", 256, "all") if v.get("isa") == "avx2"]


@pytest.mark.parametrize("old, new, want", [
    ("vx1 = _mm256_or_si256(_mm256_slli_epi64(vx1, 14), _mm256_srli_epi64(vx1, 50));",
     "vx1 = _mm256_or_si256(_mm256_slli_epi64(vx1, 15), _mm256_srli_epi64(vx1, 49));", r"lane 0: h\[\d\] differs"),
    ("vx0 = _mm256_add_epi64(vx0, vx1);", "vx0 = _mm256_add_epi64(vx0, vx2);", r"lane 0: h\[\d\] differs"),
    ("vx3 = _mm256_xor_si256(vx3, vm3);", None, r"lane 0: h\[3\] differs"),               # feed-forward
    # out is word-sliced: out + 32 holds h[1] of the 4 lanes (words 4..7)
    ("_mm256_storeu_si256((__m256i *)(void *)(out + 32), vx1);", None, r"output words never stored: \[4, 5, 6, 7\]"),
    # the chaining values are word-sliced too: h[2] read from h[3]'s vector
    ("vk2 = _mm256_loadu_si256((const __m256i *)(const void *)(in + 64));",
     "vk2 = _mm256_loadu_si256((const __m256i *)(const void *)(in + 96));", r"lane 0: h\[\d\] differs"),
    # lane 1's message block read from lane 2's pointer
    ("const __m256i s0_1 = _mm256_loadu_si256((const __m256i *)(const void *)(m1 + 0));",
     "const __m256i s0_1 = _mm256_loadu_si256((const __m256i *)(const void *)(m2 + 0));", r"lane \d: h\[\d\] differs"),
    ("const __m256i s2_2 = _mm256_permute2x128_si256(s1_0, s1_2, 0x31);",
     "const __m256i s2_2 = _mm256_permute2x128_si256(s1_0, s1_2, 0x20);", r"lane \d: h\[\d\] differs"),
], ids=["rotation", "swapped", "feed-forward", "dropped-store", "sliced-load", "message-pointer", "lane-shuffle"])
def test_lanes_kernel_rejects(tmp_path, old, new, want):
    text = render_variant(LANES_V)[f"{LANES_V.stem}.c"]
    start = text.index("_ubi_lanes_avx2(")
    lines = text.splitlines()
    first = text[:start].count("\n")
    hits = [i for i, ln in enumerate(lines) if i > first and ln.strip() == old]
    i = hits[0]
    if new is None:
        del lines[i]
    else:
        lines[i] = lines[i].replace(old, new)
    f = tmp_path / "edited.c"
    f.write_text("\n".join(lines) + "\n")
    p = cli("prove", "--target", "c-simd", "--primitive", "skein", "--size", "256", "--constants", "1.3",
            "--isa", "avx2", "--file", str(f))
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{LANES_V.prefix}ubi_lanes_avx2: DIFFERS: {want}", p.stdout), p.stdout
    assert f"{LANES_V.prefix}ubi: equivalent" in p.stdout, p.stdout       # the scalar UBI is untouched
    # (swapped lanes and a load of another word diverge where the value is first used)
    if new is not None and not any(x in old for x in ("permute2x128", "(m1 + 0)", "(in + 64)")):
        assert f"line {i + 1}: {new}" in p.stdout, p.stdout


@pytest.mark.parametrize("sliced", [False, True], ids=["rows", "sliced"])
def test_the_lanes_description_is_the_reference_ubi(sliced):
    """LanesContext's terms, evaluated on numbers, are gen/skein.ubi's chaining value for each
    lane's own chaining value, one-block message and tweak (so the proof compares with Skein's
    reference model, not with a reading of the kernel): in the rows form (C#: chaining values
    then message blocks in ``in``, two tweak words per lane) and in the sliced form (SIMD C: word j
    of lane l at in[j*L + l] and tweak[j*L + l], the message block of lane l in m<l>)."""
    import random
    from threefish_gen.gen import skein as ref
    from threefish_gen.gen.prove.skein import LanesContext
    from threefish_gen.gen.prove.terms import evaluate, scope
    v = LANES_V
    nw, nb, L = v.spec.nw, v.spec.block_bytes, 4
    rng = random.Random(7)
    words = lambda b: [int.from_bytes(b[i:i + 8], "little") for i in range(0, len(b), 8)]    # noqa: E731
    hs, msgs = [rng.randbytes(nb) for _ in range(L)], [rng.randbytes(nb) for _ in range(L)]
    types = [ref.T_MSG, ref.T_CFG, ref.T_OUT, ref.T_MSG][:L]
    tws = b"".join(ref.tweak(nb, t, first=True, final=True) for t in types)
    if sliced:
        env = {f"in[{j * L + lane}]": words(hs[lane])[j] for lane in range(L) for j in range(nw)}
        env.update({f"m{lane}[{j}]": words(msgs[lane])[j] for lane in range(L) for j in range(nw)})
        env.update({f"tweak[{j * L + lane}]": words(tws)[2 * lane + j] for lane in range(L) for j in range(2)})
    else:
        env = {f"in[{i}]": w for i, w in enumerate(words(b"".join(hs) + b"".join(msgs)))}
        env.update({f"tweak[{i}]": w for i, w in enumerate(words(tws))})
    with scope():
        ctx = LanesContext(v, L, sliced=sliced)
        assert [ctx.out_word(1, j) for j in range(2)] == ([1, L + 1] if sliced else [nw, nw + 1])
        for lane in range(L):
            got = b"".join(evaluate(t, env).to_bytes(8, "little") for t in ctx.want(lane))
            assert got == ref.ubi(v.spec, hs[lane], msgs[lane], types[lane]), lane
