"""Skein: the reference model (gen/skein.py) against all 1,368 golden records and the 35 v1.3 tree
records, and Botan."""
import os
import re
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from threefish_gen.gen import reference, skein
from threefish_gen.gen.kat import KAT_DIR, parse
from threefish_gen.gen.output import write_files
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import all_specs, get_spec
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.threefish import Options
from threefish_gen.gen.printers.c_simd.driver import ISAS
from threefish_gen.verify import skein_c_abi as vskein
from threefish_gen.verify.cpu import cpu_flags


@pytest.mark.parametrize("version", ["1.1", "1.2", "1.3"])
def test_skein_golden(version):
    recs = parse(KAT_DIR / f"skein_v{version}_golden.kat",
                 ("version", "state_bits", "digest_bits", "msg_bits", "message", "digest"))
    assert len(recs) == 456
    bad = []
    for r in recs:
        assert r["version"] == version
        spec = get_spec(version, r["state_bits"])
        got = skein.skein(spec, r["message"], int(r["digest_bits"]), int(r["msg_bits"]),
                          key=r.get("mac_key", b""))
        if got != r["digest"]:
            bad.append(r["source"])
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"


def _botan(tmp_path, lines):
    """Botan 2's Skein-512 (independent of this project) on (outbits, pers, msg) lines."""
    src = Path(__file__).resolve().parent / "data" / "botan_skein.cpp"
    exe = tmp_path / "botan_skein"
    subprocess.run(["g++", "-std=c++17", "-O1", "-isystem", "/usr/include/botan-2", str(src), "-o", str(exe),
                    "-lbotan-2"], check=True, capture_output=True)
    text = "".join(f"{o} {p.hex() or '-'} {m.hex() or '-'}\n" for o, p, m in lines)
    out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout
    return [bytes.fromhex(x) for x in out.split()]


def test_skein512_personalization_and_output_lengths_match_botan(tmp_path):
    """Personalization (not in the golden KATs) and odd output lengths of the reference model
    against Botan's Skein-512 (v1.3)."""
    rng = random.Random(14)
    spec = get_spec("1.3", 512)
    cases = []
    for i in range(40):
        out_bytes = rng.choice([1, 7, 20, 32, 48, 63, 64])  # Botan: at most 512 bits
        pers = rng.randbytes(rng.choice([0, 1, 16, 40, 63]))  # Botan: < 64 bytes
        msg = rng.randbytes(rng.choice([0, 1, 63, 64, 65, 200]))
        cases.append((8 * out_bytes, pers, msg))
    got = _botan(tmp_path, cases)
    assert len(got) == len(cases)
    for (bits, pers, msg), want in zip(cases, got):
        assert skein.skein(spec, msg, bits, pers=pers) == want, (bits, pers.hex(), msg.hex())


def test_bit_length_golden_records_through_the_bit_api_of_the_model():
    """The golden records whose message is not whole bytes (204 of each version's 456) through
    hash_bits, with the file's low bits of the last byte left as they are (they must be
    ignored): the published digests; and a partial byte is Skein's padding (spec 3.5.2): the
    bits, then a 1 bit, then zeros, with BitPad on the last block."""
    for version in ("1.1", "1.2", "1.3"):
        recs = [r for r in parse(KAT_DIR / f"skein_v{version}_golden.kat",
                                 ("version", "state_bits", "digest_bits", "msg_bits", "message", "digest"))
                if int(r["msg_bits"]) % 8]
        assert len(recs) == 204
        for r in recs:
            spec = get_spec(version, r["state_bits"])
            got = skein.hash_bits(spec, r["message"], int(r["msg_bits"]), int(r["digest_bits"]) // 8,
                                  key=r.get("mac_key", b""))
            assert got == r["digest"], r["source"]
    spec = get_spec("1.3", 256)
    # 3 bits 101 of 0xb7, padded: 1011 0000
    g = skein.ubi(spec, skein.standard_iv(spec, 256), b"\xb0", skein.T_MSG, bitpad=True)
    assert skein.hash_bits(spec, b"\xb7", 3, 32) == skein.output(spec, g, 256)
    assert skein.hash_bits(spec, b"\xb7", 3, 32) != skein.hash_bytes(spec, b"\xb0", 32)


TREE_FIELDS = ("version", "state_bits", "digest_bits", "msg_bits", "leaf", "node", "max_levels", "message", "digest")


def _tree_golden():
    """The 35 published tree records (verify/kat/skein_v1.3_tree.kat) with their spec and Tree."""
    recs = parse(KAT_DIR / "skein_v1.3_tree.kat", TREE_FIELDS)
    return [(r, get_spec(r["version"], r["state_bits"]),
             skein.Tree(int(r["leaf"]), int(r["node"]), int(r["max_levels"]))) for r in recs]


def _tree_t_lines(version, bits):
    """The vector-file T lines of the published tree records of a version and size, written here
    from the kat file (v1.1 and v1.2: none)."""
    return {f"T {len(r['digest'])} {t.leaf} {t.fan} {t.height} {r['message'].hex()} {r['digest'].hex()}"
            for r, spec, t in _tree_golden() if (spec.version, spec.bits) == (version, bits)}


def _tree_mismatches(recs):
    return [r["source"] for r, spec, tree in recs
            if skein.hash_bytes(spec, r["message"], int(r["digest_bits"]) // 8, tree=tree) != r["digest"]]


def test_skein_golden_tree_records_through_the_model(monkeypatch):
    """The reference model's tree hashing (Tree, tree_message, hash_bytes(..., tree=)) gives the
    published digest of all 35 tree records of the official v1.3 KAT file (Skein-256: 11, -512: 12,
    -1024: 12; (Yl, Yf, Ym) = (2, 2, 2), (1, 2, 3), (2, 1, 255)).  And the records pin the tree
    mode: every digest changes with a flipped message byte, with Yl and Yf swapped (where they
    differ), with Ym changed or sequential hashing; a model with the tree level left out of the
    tweak misses all 35, one whose nodes all start at position 0 misses every record of more than
    one leaf (and only those)."""
    recs = _tree_golden()
    assert len(recs) == 35
    assert [sum(1 for _, s, _t in recs if s.bits == b) for b in (256, 512, 1024)] == [11, 12, 12]
    sets = [(t.leaf, t.fan, t.height) for _, _s, t in recs]
    assert {p: sets.count(p) for p in set(sets)} == {(2, 2, 2): 14, (1, 2, 3): 9, (2, 1, 255): 12}
    for r, spec, _t in recs:
        assert r["version"] == "1.3" and int(r["msg_bits"]) == 8 * len(r["message"])
        assert len(r["digest"]) * 8 == int(r["digest_bits"])
    assert max(len(r["message"]) for r, *_ in recs) == 16344 // 8
    assert not _tree_mismatches(recs)
    for r, spec, t in recs:
        outlen = int(r["digest_bits"]) // 8
        flipped = bytearray(r["message"])
        flipped[len(flipped) // 2] ^= 0x01
        assert skein.hash_bytes(spec, bytes(flipped), outlen, tree=t) != r["digest"], r["source"]
        assert skein.hash_bytes(spec, r["message"], outlen) != r["digest"], r["source"]
        assert skein.hash_bytes(spec, r["message"], outlen, tree=skein.Tree(t.leaf, t.fan, 3 if t.height == 2 else 2)) \
            != r["digest"], r["source"]
        if t.leaf != t.fan:
            assert skein.hash_bytes(spec, r["message"], outlen, tree=skein.Tree(t.fan, t.leaf, t.height)) \
                != r["digest"], r["source"]
    several = {r["source"] for r, spec, t in recs if len(r["message"]) > spec.block_bytes << t.leaf}
    assert [sum(1 for r, s, _t in recs if r["source"] in several and s.bits == b) for b in (256, 512, 1024)] \
        == [7, 7, 7]
    tweak, ubi = skein.tweak, skein.ubi
    with monkeypatch.context() as m:
        m.setattr(skein, "tweak", lambda pos, type_, first=False, final=False, bitpad=False, level=0:
                  tweak(pos, type_, first, final, bitpad, 0))
        assert len(_tree_mismatches(recs)) == 35
    with monkeypatch.context() as m:
        m.setattr(skein, "ubi", lambda spec, g, msg, type_, bitpad=False, level=0, start=0:
                  ubi(spec, g, msg, type_, bitpad, level, 0))
        assert set(_tree_mismatches(recs)) == several


BOUNCY_VERSION = "2.7.0"     # BouncyCastle.Cryptography, as the C# bench's peer (NuGet)
BOUNCY_CSPROJ = f"""<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
    <AssemblyName>bouncyskein</AssemblyName>
    <Nullable>enable</Nullable>
    <ImplicitUsings>disable</ImplicitUsings>
    <InvariantGlobalization>true</InvariantGlobalization>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="BouncyCastle.Cryptography" Version="[{BOUNCY_VERSION}]" />
  </ItemGroup>
</Project>
"""


def random_params(rng, nb, key_min=1):
    """A random Skein parameter set: each argument present or absent, of 1..2B+2 bytes (the
    key: key_min..2B+2), the public key, key identifier and nonce present at least once in
    three."""
    def one(lo, p=0.6):
        return rng.randbytes(rng.randrange(lo, 2 * nb + 3)) if rng.random() < p else b""
    return skein.Params(key=one(key_min), pers=one(1), pubkey=one(1, 0.7), keyid=one(1, 0.7), nonce=one(1, 0.7))


@pytest.mark.skipif(shutil.which("dotnet") is None and "dotnet" in os.environ.get("THREEFISH_GEN_ALLOW_SKIP", ""),
                    reason="dotnet not installed (allowed by THREEFISH_GEN_ALLOW_SKIP)")
def test_params_model_matches_bouncycastle(tmp_path):
    """Every UBI argument type of the reference model (hash_params: key, personalization, public
    key, key identifier, nonce) against BouncyCastle.Cryptography's SkeinDigest (Skein 1.3), on
    random parameter sets of every state size, output lengths and messages.  BouncyCastle's
    public Init takes only sets with a key of 16+ bytes and at most one other argument (see
    tests/data/bouncy_skein.cs): those run through it ("api"), and every set, those included,
    through BouncyCastle's engine with the arguments written into its fields ("fields"), the
    two agreeing where both run."""
    proj = tmp_path / "bouncy"
    proj.mkdir()
    (proj / "bouncyskein.csproj").write_text(BOUNCY_CSPROJ)
    (proj / "Program.cs").write_text((Path(__file__).resolve().parent / "data" / "bouncy_skein.cs").read_text())
    b = subprocess.run(["dotnet", "build", "-c", "Release", "-o", str(proj / "bin"), str(proj)],
                       capture_output=True, text=True, env=dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1",
                                                                DOTNET_NOLOGO="1"))
    if b.returncode and "nuget" in os.environ.get("THREEFISH_GEN_ALLOW_SKIP", "") and "NU1" in b.stdout:
        pytest.skip(f"BouncyCastle.Cryptography {BOUNCY_VERSION} not restorable (allowed by THREEFISH_GEN_ALLOW_SKIP)")
    assert b.returncode == 0, b.stdout[-2000:]
    rng = random.Random(28)
    cases = []
    for bits in (256, 512, 1024):
        nb = bits // 8
        for _ in range(40):
            p = random_params(rng, nb, key_min=16)
            if rng.random() < 0.25:          # the public API's kind of set: a key and one argument
                p = skein.Params(rng.randbytes(rng.randrange(16, 2 * nb + 3)),
                                 *rng.choice([(b"",) * 4] + [tuple(rng.randbytes(rng.randrange(1, 40)) if i == j
                                                                     else b"" for i in range(4)) for j in range(4)]))
            cases.append((bits, rng.choice((20, 32, nb, nb + 1, 2 * nb + 1)), p,
                          rng.randbytes(rng.choice((0, 1, nb, nb + 1, rng.randrange(4 * nb))))))
    assert sum(1 for *_, p, _m in cases if p.pubkey and p.keyid and p.nonce) >= 10
    h = vskein._hex
    text = "".join(f"{bits} {8 * o} {h(p.key)} {h(p.pers)} {h(p.pubkey)} {h(p.keyid)} {h(p.nonce)} {h(m)}\n"
                   for bits, o, p, m in cases)
    run = subprocess.run(["dotnet", str(proj / "bin" / "bouncyskein.dll")], input=text, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    got = [ln.split() for ln in run.stdout.splitlines()]
    assert len(got) == len(cases)
    paths = {path for _, path in got}
    assert paths == {"api", "fields"}
    for (bits, outlen, p, m), (want, _) in zip(cases, got):
        assert skein.hash_params(get_spec("1.3", bits), m, outlen, p).hex() == want, (bits, outlen, p)


# --------------------------------------------------------------------------- the C render

def _render_c(version, bits, out_dir, prefix="sk_"):
    t = get_target("c")
    spec = get_spec(version, bits)
    v = t.variant(spec, t.default_options_for(spec, {"primitive": "skein"}), prefix, primitive="skein")
    write_files(render_variant(v), out_dir)
    return v


@pytest.mark.parametrize("version", ["1.1", "1.2", "1.3"])
@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_c_skein_render_against_the_vectors(tmp_path, version, bits):
    """The C render of every size x version: built with gcc -Werror and run by the Skein harness
    on the golden records (published digests; the bit-length ones through update_bits,
    hash_bits and mac_bits; v1.3: the published tree records too) and on the reference model's
    digests for random messages in 8 chunkings, MAC keys 0..2B bytes, personalization, output
    lengths 1..2B+1, random bit lengths, sets of every UBI argument type (init_params), trees,
    hash_many batches and bad arguments."""
    v = _render_c(version, bits, tmp_path / "src")
    spec = v.spec
    vec = vskein.vector_file(spec, tmp_path / "vectors.txt", 50, 14)
    text = vec.read_text()
    assert text.count("\nT ") >= 30 and text.count("\nM ") == len(vskein.BATCH_SIZES)
    assert len(_tree_t_lines(version, bits)) == (0 if version != "1.3" else 11 if bits == 256 else 12)
    assert _tree_t_lines(version, bits) <= set(text.splitlines())      # the published tree digests
    golden = vskein.golden_records(spec)
    assert len(golden) == 152 and sum(1 for r in golden if int(r["msg_bits"]) % 8) == 68
    assert sum(1 for ln in text.splitlines() if ln.startswith("H ")) >= 84 + 3 * spec.block_bytes + 1
    b_lines = [ln.split() for ln in text.splitlines() if ln.startswith("B ")]
    assert sum(1 for b in b_lines if int(b[2]) % 8) >= 68 + 49
    assert sum(1 for b in b_lines if "-" not in b[5:8]) >= 2      # public key, key identifier and nonce
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-O1", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-I{tmp_path / 'src'}",
                    f"-DTF_HEADER=\"{v.stem}.h\"", f"-DTF_PREFIX={v.prefix}", f"-DTF_BYTES={spec.block_bytes}",
                    str(vskein.SKEIN_HARNESS), str(tmp_path / "src" / f"{v.stem}.c"), "-o", str(exe)],
                   check=True, capture_output=True)
    run = subprocess.run([str(exe), str(vec)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:]
    passed = int(run.stdout.split("harness:")[1].split()[0])
    assert passed > 5000 and " 0 failed" in run.stdout


def test_golden_records_reach_the_c_harness_unchanged():
    """The H lines of the golden records carry the published digests, not the model's."""
    spec = get_spec("1.3", 512)
    recs = vskein.golden_records(spec)
    assert len(recs) >= 50
    assert any(r["digest"].hex().startswith("bc5b4c50") for r in recs)   # Skein-512-512("")


@pytest.mark.slow
def test_published_tree_records_are_t_lines_of_the_vector_file(tmp_path, monkeypatch):
    """The vector file of Skein-512 v1.3 (every Skein checker's: C, c-simd, nasm, C#, Rust) holds
    the 12 published Skein-512 tree records of verify/kat/skein_v1.3_tree.kat as T lines with the
    published digests: written from the file itself, and still there when the model's tree
    hashing is made to give zeros (so the lines do not come from the model).  v1.1 has none."""
    want = {(len(r["digest"]), t.leaf, t.fan, t.height, r["message"].hex(), r["digest"].hex())
            for r, spec, t in _tree_golden() if spec.bits == 512}
    assert len(want) == 12 and {w[1:4] for w in want} == {(2, 2, 2), (1, 2, 3), (2, 1, 255)}
    assert max(len(w[4]) // 2 for w in want) == 8152 // 8
    hash_bytes = skein.hash_bytes
    monkeypatch.setattr(skein, "hash_bytes", lambda spec, msg, outlen, key=b"", pers=b"", tree=None:
                        bytes(outlen) if tree is not None else hash_bytes(spec, msg, outlen, key, pers))
    text = vskein.vector_file(get_spec("1.3", 512), tmp_path / "v.txt", 5, 1).read_text()
    t_lines = [ln.split() for ln in text.splitlines() if ln.startswith("T ")]
    got = {(int(o), int(l), int(f), int(h), m, d) for _, o, l, f, h, m, d in t_lines}
    assert want <= got
    model = [t for t in t_lines if t[6] == "00" * int(t[1])]       # the model's (zeroed) tree lines
    assert len(model) == len(t_lines) - 12 and len(model) >= 30
    assert not vskein.golden_tree_records(get_spec("1.1", 512))


def test_ubi_program_is_threefish_plus_feed_forward():
    """The fused UBI block (interpreted) equals Threefish (reference) XOR the block, for every
    spec and key/unroll option."""
    rng = random.Random(5)
    for spec in all_specs():
        for keys in ("fly", "table"):
            for unroll in ("full", "loop"):
                prog = skein.ubi_program(spec, Options(keys, unroll, 1))
                nb = spec.block_bytes
                h, blk = rng.randbytes(nb), rng.randbytes(nb)
                tw = skein.tweak(rng.randrange(1 << 96), 48, True, True)
                want = bytes(a ^ b for a, b in zip(reference.encrypt(spec, h, tw, blk), blk))
                assert skein.run_ubi_program(prog, h, tw, blk) == want


def test_tree_model_shapes():
    """Tree hashing: a message of one leaf or less is one leaf UBI at level 1, then the root
    test (one block left) ends the tree: the digest is the output stage of that leaf value."""
    spec = get_spec("1.3", 256)
    tree = skein.Tree(1, 1, 3)
    msg = bytes(range(40))
    g = skein.chain_start(spec, 256, tree=tree)
    leaf = skein.ubi(spec, g, msg, skein.T_MSG, level=1)
    assert skein.hash_bytes(spec, msg, 32, tree=tree) == skein.output(spec, leaf, 256)
    assert skein.hash_bytes(spec, msg, 32, tree=tree) != skein.hash_bytes(spec, msg, 32)


@pytest.mark.parametrize("args,msg", [
    (["--target", "nasm-x86", "--layout", "packed"], "--primitive skein for nasm-x86 takes --isa sse2"),
    (["--target", "csharp", "--layout", "lanes"], "--primitive skein for csharp takes --layout scalar"),
    (["--interleave", "2"], "--primitive skein takes --interleave 1"),
])
def test_cli_bad_skein_options_are_one_line_and_exit_2(tmp_path, args, msg):
    r = subprocess.run([sys.executable, "-m", "threefish_gen", "render", "--primitive", "skein", "--size", "512",
                        "--constants", "1.3", *args, "--out", str(tmp_path)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("version,bits", [("1.3", 256), ("1.3", 512), ("1.3", 1024), ("1.1", 512)])
def test_c_simd_skein_hash_many_lanes_against_the_vectors(tmp_path, version, bits):
    """--target c --isa auto --primitive skein: hash_many in AVX2 and AVX-512 lanes (each path
    this CPU has, forced with $THREEFISH_GEN_ISA) and scalar, on the same vectors (batches of
    0..17 messages of mixed lengths) -- and every other record through the scalar functions."""
    t = get_target("c-simd")
    spec = get_spec(version, bits)
    v = t.variant(spec, Options("fly", "full", 1), "sk_", isa="auto", primitive="skein")
    assert t.skein_isas(v) == ("avx2", "avx512", "neon")
    write_files(render_variant(v), tmp_path / "src")
    text = (tmp_path / "src" / f"{v.stem}.c").read_text()
    assert "sk_ubi_lanes_avx512" in text and "_mm512_" in text and "_mm256_" in text
    assert "sk_ubi_lanes_neon" in text      # compiled only for AArch64 (test_c_simd_skein_neon_lanes_under_qemu)
    vec = vskein.vector_file(spec, tmp_path / "vectors.txt", 20, 3)
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-O1", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-I{tmp_path / 'src'}",
                    f"-DTF_HEADER=\"{v.stem}.h\"", f"-DTF_PREFIX={v.prefix}", f"-DTF_BYTES={spec.block_bytes}",
                    str(vskein.SKEIN_HARNESS), str(tmp_path / "src" / f"{v.stem}.c"), "-o", str(exe)],
                   check=True, capture_output=True)
    flags = cpu_flags()
    levels = ["scalar"] + [i for i in ("avx2", "avx512") if all(f in flags for f in ISAS[i].features)]
    for level in levels:
        run = subprocess.run([str(exe), str(vec)], capture_output=True, text=True,
                             env=dict(os.environ, THREEFISH_GEN_ISA=level))
        assert run.returncode == 0 and " 0 failed" in run.stdout, (level, run.stdout[-2000:])


def batch_vectors(spec, path):
    """hash_many batches and trees whose leaves fill the lanes (every lane count up to 8, messages of
    mixed lengths; trees of 2-block leaves, 9 and 17 leaves) and one plain hash, from the model."""
    nb, rng = spec.block_bytes, random.Random(f"batches-{spec.tag}")
    lines = [vskein._h(spec, 32, b"abc")]
    for n in (2, 3, 5, 8, 9):
        msgs = [rng.randbytes(rng.choice((0, 1, nb, nb + 1, 3 * nb + 5))) for _ in range(n)]
        lines.append(f"M 32 {n} " + " ".join(f"{vskein._hex(m)} {skein.hash_bytes(spec, m, 32).hex()}" for m in msgs))
    for leaves in (9, 17):
        msg = rng.randbytes(leaves * 2 * nb + 3)
        dig = skein.hash_bytes(spec, msg, nb, tree=skein.Tree(1, 1, 255))
        lines.append(f"T {nb} 1 1 255 {vskein._hex(msg)} {dig.hex()}")
    path.write_text("\n".join(lines + ["E"]) + "\n")
    return path


@pytest.mark.parametrize("bits", [256, pytest.param(1024, marks=pytest.mark.matrix)])
def test_c_simd_skein_neon_lanes_under_qemu(tmp_path, bits):
    """The dispatcher's Skein file on AArch64 (gcc, under qemu-aarch64): hash_many and tree leaves
    in NEON lanes (2 messages per pass) and scalar, forced in turn with $THREEFISH_GEN_ISA, on
    batches and trees from the model; then the file with one rotation count of the NEON kernel
    changed (the user's bytes, check's way) must FAIL on the NEON path and only there."""
    from threefish_gen.verify import sources
    from threefish_gen.verify.runner import AARCH64_BUILDS
    t = get_target("c-simd")
    spec = get_spec("1.3", bits)
    v = t.variant(spec, Options("fly", "full", 1), "sk_", isa="auto", primitive="skein")
    b = AARCH64_BUILDS[0]
    if b.missing():
        pytest.skip(b.missing())
    vec = batch_vectors(spec, tmp_path / "vectors.txt")
    (tmp_path / "ok").mkdir()
    row = vskein.check_skein(v, b, tmp_path / "ok", vec)
    assert row.status == "PASS (emulated)" and "hash_many paths scalar, neon" in row.detail, row.detail
    files = render_variant(v)
    name = f"{v.stem}.c"
    kernel = files[name].index("static void sk_ubi_lanes_neon(")
    m = re.compile(r"vshlq_n_u64\(vx\d+, (\d+)\)").search(files[name], kernel)
    files[name] = files[name][:m.start(1)] + str(int(m.group(1)) - 1) + files[name][m.end(1):]
    (tmp_path / "changed").mkdir()
    with sources.given({v: (files, [])}):
        row = vskein.check_skein(v, b, tmp_path / "changed", vec)
    assert row.status == "FAIL" and row.detail.startswith("[neon]"), row.detail


def test_c_simd_skein_bad_isa_is_one_line_and_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "threefish_gen", "render", "--primitive", "skein", "--isa", "sse2",
                        "--size", "512", "--constants", "1.3", "--out", str(tmp_path)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 2 and "--primitive skein takes --isa avx2 | avx512 | neon | auto" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- C#

@pytest.mark.skipif(shutil.which("dotnet") is None and "dotnet" in os.environ.get("THREEFISH_GEN_ALLOW_SKIP", ""),
                    reason="dotnet not installed (allowed by THREEFISH_GEN_ALLOW_SKIP)")
@pytest.mark.parametrize("version,bits", [("1.3", 512), ("1.3", 256), ("1.3", 1024), ("1.1", 512)],
                         ids=["1.3-512", "1.3-256", "1.3-1024", "1.1-512"])
def test_csharp_skein_classes_against_the_vectors(tmp_path, version, bits):
    """--target csharp --primitive skein, every size of v1.3 and Skein-512 v1.1 (make test:
    Skein-512 v1.3; make verify the other three, tests/conftest.py MATRIX): run under the default
    JIT, AVX-512 off, no hardware intrinsics and TC=0 on the golden records and the reference
    model's vectors (Hash, Mac, personalization, output lengths, Incremental in 7 chunkings,
    HashMany (lanes: every unkeyed record as 9 copies too), HashTree and Incremental.Tree, bad
    arguments; the published v1.3 tree records among the T lines); then a vector file with one
    digest bit flipped per record must fail."""
    from threefish_gen.verify import matrix, skein_csharp
    t = get_target("csharp")
    v = t.variant(get_spec(version, bits), primitive="skein")
    assert v.prefix == f"Skein{bits}V{version.replace('.', '')}"
    rep = matrix.run([v], random_count=20, seed=11, jobs=2, workdir=tmp_path / "w", report_path=None)
    assert len(rep.rows) == len(skein_csharp.RUNS)
    bad = [(r.variant, r.build, r.detail) for r in rep.rows if r.status != "PASS"]
    assert not bad
    assert all(r.checks > 10000 for r in rep.rows)
    # HashMany and tree leaves: the Vector256 lanes with AVX-512 off (where the CPU has AVX2),
    # the scalar Ubi without hardware intrinsics (the harness fails a row whose ManyKernel differs)
    flags = set(open("/proc/cpuinfo").read().split())
    by_run = {}
    for r in rep.rows:
        by_run.setdefault(r.build, []).append(r.detail)
    assert all("HashMany/tree leaves: scalar" in d for d in by_run["no HWIntrinsic"])
    if "avx2" in flags:
        assert all("HashMany/tree leaves: vector256-lanes" in d for d in by_run["no AVX-512"])
    if "avx512f" not in flags:
        assert all("Vector512 kernel is only built" in d for d in by_run["dotnet default"])
    vec = tmp_path / "w" / "vectors" / f"skein-{bits}_v{version.replace('.', '')}.txt"
    if version == "1.3":                # the published tree records were among the rows' T lines
        assert len(_tree_t_lines("1.3", bits)) >= 11 and _tree_t_lines("1.3", bits) <= set(vec.read_text().splitlines())
    lines = []
    for ln in vec.read_text().splitlines():
        if ln.startswith("H "):
            p = ln.split()
            d = bytearray.fromhex(p[-1])
            d[-1] ^= 0x80
            p[-1] = d.hex()
            ln = " ".join(p)
        lines.append(ln)
    broken = tmp_path / "broken.txt"
    broken.write_text("\n".join(lines) + "\n")
    dll = tmp_path / "w" / "csharp-skein" / "proj" / "bin" / "skeinharness.dll"
    r = subprocess.run(["dotnet", str(dll), f"ThreefishGen.{v.prefix}", str(broken)], capture_output=True, text=True)
    assert r.returncode == 1 and "FAIL line" in r.stdout


def test_bench_skein_rows_build_run_and_agree(tmp_path):
    """`bench`'s Skein program (quick, one pass): every row is there, and before timing it checked
    hash_many (SIMD) and Botan's Skein-512 against the scalar hash on the timed messages (a
    CHECK FAIL line raises).  Speed is not asserted."""
    import io

    from threefish_gen.tools.bench import skein_rows
    out = io.StringIO()
    sec = skein_rows.run(tmp_path, quick=True, passes=1, stream=out)
    sizes = {r["bytes"] for r in sec["rows"]}
    assert sizes == {64, 1024, 65536, 1 << 20}
    names = {r["name"] for r in sec["rows"]}
    assert any("hash_many 8x best" in n for n in names) and any("tree" in n for n in names)
    if skein_rows.BOTAN_HEADER.exists():
        assert "skein-512-512 Botan" in names
    assert all(r["cpb"] > 0 for r in sec["rows"])
    assert not [x for x in sec["info"] if "FAIL" in x]
    # the paired rounds (x86-64): per ISA the CPU has, hash_many and tree against the Threefish
    # lanes row of that ISA, each with a verdict; the scalar goal from the rows' medians
    goals = {g["goal"]: g for g in sec["goals"]}
    assert "scalar Skein-512 64 KiB <= 1.05x Threefish-512 chained" in goals
    if skein_rows.paired_wanted():
        from threefish_gen.verify.runner import cpu_flags
        isas = [i for i, f in (("avx512", "avx512f"), ("avx2", "avx2")) if f in cpu_flags()]
        for isa in isas:
            hm = goals[f"hash_many 8 x 64 KiB <= 1.15x Threefish-512 lanes bulk ({isa})"]
            tree = goals[f"tree 1 MiB <= 1.2x Threefish-512 lanes bulk ({isa})"]
            assert hm["pairs"] == tree["pairs"] == 5 and hm["threefish"] == tree["threefish"]
            assert f"{isa} lanes fly/full/i1" in hm["threefish"] and 0 < hm["ratio"] and 0 < tree["ratio"]
        assert len(goals) == 1 + 2 * len(isas)
    assert all(re.fullmatch(r"met|NOT met \(by \d+%\)|noisy: .* \(not judged\)", g["verdict"])
               for g in goals.values())
    assert "Skein at the Threefish rate" in out.getvalue()


# --------------------------------------------------------------------------- nasm-x64

@pytest.mark.parametrize("version,bits", [("1.3", 256), ("1.3", 512), ("1.3", 1024), ("1.1", 1024)])
def test_nasm_x64_skein_ubi_loop_against_the_vectors(tmp_path, version, bits):
    """--target nasm-x64 --primitive skein: the UBI blocks loop in assembly (register-allocated
    from the same description), assembled with nasm and linked with the C driver and the Skein
    harness: every record of the vector file passes, and the .asm holds the rounds (rol)."""
    t = get_target("nasm-x64")
    spec = get_spec(version, bits)
    v = t.variant(spec, Options("fly", "full", 1), "sn_", abi="sysv", primitive="skein")
    files = render_variant(v)
    stem = v.stem                     # sn_skein<bits>_nasmx64: the prefix, primitive, size, target
    assert stem == f"sn_skein{spec.bits}_nasmx64" and sorted(files) == [f"{stem}.asm", f"{stem}.c", f"{stem}.h"]
    assert files[f"{stem}.asm"].count("rol ") >= spec.rounds * spec.nw // 2
    write_files(files, tmp_path / "src")
    obj = tmp_path / "ubi.o"
    subprocess.run(["nasm", "-f", "elf64", "-o", str(obj), str(tmp_path / "src" / f"{stem}.asm")], check=True)
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-O1", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-I{tmp_path / 'src'}",
                    f'-DTF_HEADER="{stem}.h"', "-DTF_PREFIX=sn_", f"-DTF_BYTES={spec.block_bytes}",
                    str(vskein.SKEIN_HARNESS), str(tmp_path / "src" / f"{stem}.c"), str(obj), "-o", str(exe)],
                   check=True, capture_output=True)
    vec = vskein.vector_file(spec, tmp_path / "vectors.txt", 20, 8)
    run = subprocess.run([str(exe), str(vec)], capture_output=True, text=True)
    assert run.returncode == 0 and " 0 failed" in run.stdout, run.stdout[-2000:]


def test_nasm_x64_skein_takes_gpr_only(tmp_path):
    r = subprocess.run([sys.executable, "-m", "threefish_gen", "render", "--target", "nasm-x64", "--primitive", "skein",
                        "--isa", "avx2", "--size", "512", "--constants", "1.3", "--out", str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "takes --isa gpr" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- nasm-x86

def x86_skein_render(spec):
    """The nasm-x86 Skein variant of the sets and its files, with what every size must show: the
    loop in 32-bit cdecl code (a frame-pointer frame realigned to 16 for the XMM spill slots),
    rotations as shift pairs, the XMM registers it used and eax/ecx/edx zeroed before it returns,
    the C driver's declaration plain (cdecl is the host's default)."""
    t = get_target("nasm-x86")
    v = t.skein(spec)
    assert v in t.variants("recommended", [spec]) and v in t.variants("all", [spec])
    files = render_variant(v)
    asm, c = files[f"{v.stem}.asm"], files[f"{v.stem}.c"]
    assert sorted(files) == sorted(f"{v.stem}.{x}" for x in ("asm", "c", "h"))
    assert "bits 32" in asm and "push ebp" in asm and "and esp, -16" in asm and "nasm -f elf32" in c
    assert asm.count("psllq xmm") >= spec.rounds * spec.nw // 2
    tail = asm.split(".done:")[1].split("    ret")[0]
    used = set(re.findall(r"xmm\d", asm.split(".done:")[0].split(".entry:")[1]))
    assert {f"pxor {r}, {r}" for r in used} <= {ln.split(";")[0].strip() for ln in tail.splitlines()}, tail
    assert all(f"xor {r}, {r}" in tail for r in ("eax", "ecx", "edx"))
    assert "__attribute__" not in c.split("ubi_asm(")[0].splitlines()[-1]
    return t, v, files


def few_vectors(spec, path):
    """A short vector file (hash, MAC, a partial last byte: six records of the model), for make
    test's nasm-x86 Skein builds; the full file costs 5 s of CPU to make."""
    nb = spec.block_bytes
    path.write_text("\n".join([vskein._h(spec, 32, bytes(range(n)), key=b"k" * (n % 3)) for n in (0, 1, nb, 2 * nb + 1)]
                               + [vskein._b(spec, 32, 8 * nb + 3, bytes(nb + 1)), "E"]) + "\n")
    return path


@pytest.mark.parametrize("version,bits,vectors", [("1.3", 256, "few"), ("1.3", 256, "all"), ("1.3", 512, "all"),
                                                  ("1.3", 1024, "all"), ("1.1", 1024, "all")])
def test_nasm_x86_skein_rows(tmp_path, version, bits, vectors):
    """--target nasm-x86 --primitive skein: the UBI blocks loop in 32-bit cdecl code, words in XMM
    registers (spilled to 16-aligned slots of a realigned frame), under the C driver built -m32:
    the checker's rows (the C builds as 32-bit programs, sanitizers included; every call through
    the cdecl ABI thunk) pass every record of the vector file, golden records of bit lengths
    included.  make test: Skein-256, a few records, gcc -m32 -O2 (its full vector file runs through
    check in tests/test_check_bytes.py); the matrix: every size, the full file, every build."""
    spec = get_spec(version, bits)
    t, v, _ = x86_skein_render(spec)
    builds = vskein.nasm_builds(t, v)
    assert [b.name for b in builds] == ["gcc -m32 -O2", "clang -m32 -O2", "gcc -m32 asan+ubsan",
                                        "clang -m32 asan+ubsan"]
    if vectors == "few":
        vec, builds = few_vectors(spec, tmp_path / "vectors.txt"), builds[:1]
    else:
        vec = vskein.vector_file(spec, tmp_path / "vectors.txt", 20, 8)
        golden_bits = [r for r in vskein.golden_records(spec) if int(r["msg_bits"]) % 8]
        assert golden_bits and sum(ln.startswith("B ") for ln in vec.read_text().splitlines()) > len(golden_bits)
    for b in builds:
        if b.missing():
            pytest.skip(b.missing())
        wd = tmp_path / b.name.replace(" ", "-").replace("+", "_")
        wd.mkdir()
        row = vskein.check_skein(v, b, wd, vec)
        assert row.status.startswith("PASS"), (b.name, row.detail)
        assert "cdecl" in row.detail and "callee-saved" in row.detail and row.checks > (100 if vectors == "few" else 1000)


@pytest.mark.parametrize("edit", ["rotation", "ebx-not-saved"])
def test_nasm_x86_skein_changed_copy_fails(tmp_path, edit):
    """A nasm-x86 Skein file with one rotation count changed, or ebx not saved (the cdecl ABI
    thunk names it), FAILs its checker's row (check DIR's way: the user's files), on a few
    records of the model."""
    from threefish_gen.verify import sources
    t = get_target("nasm-x86")
    spec = get_spec("1.3", 256)
    v = t.skein(spec)
    files = render_variant(v)
    name = f"{v.stem}.asm"
    if edit == "rotation":          # the first rotation count, one less
        m = re.search(r"psllq xmm\d, (\d+)", files[name])
        files[name] = files[name][:m.start(1)] + str(int(m.group(1)) - 1) + files[name][m.end(1):]
    else:
        for a, b in (("    push ebx\n", "    push eax\n"), ("    pop ebx\n", "    pop eax\n")):
            assert a in files[name]
            files[name] = files[name].replace(a, b, 1)
    assert files[name] != render_variant(v)[name]
    vec = few_vectors(spec, tmp_path / "vectors.txt")
    b = vskein.M32_BUILDS[1]
    if b.missing():
        pytest.skip(b.missing())
    with sources.given({v: (files, [])}):
        row = vskein.check_skein(v, b, tmp_path, vec)
    assert row.status == "FAIL", (b.name, row.detail)
    assert edit == "rotation" or "ebx corrupted" in row.detail, row.detail


@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_nasm_x64_skein_win64_rows(tmp_path, bits):
    """--abi win64: the UBI loop with the Win64 prologue (rsi, rdi pushed; n above the shadow space)
    and its unwind data; the checker's rows (the C builds: the loop assembled as elf64 and called
    the ms_abi way, through the Win64 ABI thunk; under wine: the mingw-w64 build, the unwind data
    checked) pass every record of the vector file, golden records of bit lengths included."""
    t = get_target("nasm-x64")
    spec = get_spec("1.3", bits)
    v = t.skein(spec, "win64")
    files = render_variant(v)
    asm, c = files[f"{v.stem}.asm"], files[f"{v.stem}.c"]
    assert "push rsi" in asm and "push rdi" in asm and "section .pdata" in asm and "UWOP_PUSH_NONVOL rsi" in asm
    assert ":function" not in asm and ".note.GNU-stack" not in asm
    assert "[rsp + " in asm.split("; if n == 0 return")[1].splitlines()[1]       # n: the 5th argument, on the stack
    assert "__attribute__((ms_abi))" in c and "!defined(_WIN32)" in c
    assert "ms_abi" not in render_variant(t.skein(spec))[f"{t.skein(spec).stem}.c"]
    vec = vskein.vector_file(spec, tmp_path / "vectors.txt", 20, 8)
    golden_bits = [r for r in vskein.golden_records(spec) if int(r["msg_bits"]) % 8]
    assert golden_bits and sum(ln.startswith("B ") for ln in vec.read_text().splitlines()) > len(golden_bits)
    builds = vskein.nasm_builds(t, v)
    assert [b.name for b in builds][-1] == "win64 under wine"
    for b in builds:
        if bits != 256 and "asan" in b.name:      # one size under the sanitizers
            continue
        wd = tmp_path / b.name.replace(" ", "-").replace("+", "_")
        wd.mkdir()
        row = vskein.check_skein(v, b, wd, vec)
        if b is vskein.WINE_BUILD and b.missing():
            assert row.status == "SKIPPED" and row.detail == b.missing()
            continue
        assert row.status == "PASS", (b.name, row.detail)
        assert "xmm6-15" in row.detail and row.checks > 1000
        if b is vskein.WINE_BUILD:
            assert "RtlVirtualUnwind" in row.detail


def test_nasm_x64_skein_sysv_rows_check_the_abi(tmp_path):
    """System V: the checker's rows call the UBI loop through the ABI thunk too (callee-saved
    registers, stack pointer, DF); the file as rendered passes, and with r12 not saved (pushed and
    popped as rax) it FAILs naming r12 (check DIR's way: the user's files)."""
    from threefish_gen.verify import sources
    t = get_target("nasm-x64")
    spec = get_spec("1.3", 256)
    v = t.skein(spec, "sysv")
    b = vskein.C_BUILDS[0]
    vec = few_vectors(spec, tmp_path / "vectors.txt")
    (tmp_path / "ok").mkdir()
    row = vskein.check_skein(v, b, tmp_path / "ok", vec)
    assert row.status == "PASS" and "System V UBI loop; callee-saved registers" in row.detail, row.detail
    files = render_variant(v)
    name = f"{v.stem}.asm"
    for a, c in (("    push r12\n", "    push rax\n"), ("    pop r12\n", "    pop rax\n")):
        assert a in files[name]
        files[name] = files[name].replace(a, c, 1)
    (tmp_path / "changed").mkdir()
    with sources.given({v: (files, [])}):
        row = vskein.check_skein(v, b, tmp_path / "changed", vec)
    assert row.status == "FAIL" and "r12 corrupted" in row.detail, row.detail


@pytest.mark.parametrize("edit", [(("rol r13, 14", "rol r13, 13"),),
                                  (("    push rsi\n", "    push rax\n"), ("    pop rsi\n", "    pop rax\n"))],
                         ids=["rotation", "rsi-not-saved"])
def test_nasm_x64_skein_win64_changed_copy_fails(tmp_path, edit):
    """A Win64 Skein file with one rotation count changed, or rsi not saved (the ABI thunk names
    it), FAILs its checker's rows (check DIR's way: the user's files), the ms_abi row and the wine
    row alike."""
    from threefish_gen.verify import sources
    t = get_target("nasm-x64")
    spec = get_spec("1.3", 256)
    v = t.skein(spec, "win64")
    files = render_variant(v)
    name = f"{v.stem}.asm"
    for a, b in edit:
        files[name] = files[name].replace(a, b, 1)
    assert files[name] != render_variant(v)[name]
    vec = vskein.vector_file(spec, tmp_path / "vectors.txt", 5, 1)
    with sources.given({v: (files, [])}):
        for b in (vskein.C_BUILDS[0], vskein.WINE_BUILD):
            wd = tmp_path / b.name.replace(" ", "-")
            wd.mkdir()
            row = vskein.check_skein(v, b, wd, vec)
            assert row.status == ("SKIPPED" if b.missing() else "FAIL"), (b.name, row.detail)
            assert b.missing() or len(edit) == 1 or "rsi corrupted" in row.detail, row.detail
