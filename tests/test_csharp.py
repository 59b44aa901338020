"""The C# target: rendering and (when dotnet is installed) the
generated classes built and run under every JIT ISA setting against the reference model."""
import random
import re
import shutil
import subprocess

import pytest

from threefish_gen.gen.targets import variants
from threefish_gen.gen.targets.csharp import TARGET as CSHARP
from threefish_gen.cli import main
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import SIZES, VERSIONS, get_spec
from threefish_gen.gen.threefish import Options

HAVE_DOTNET = shutil.which("dotnet") is not None


def csharp_variant(spec, layout, options, namespace="ThreefishGen", cls=None):
    return CSHARP.variant(spec, options, cls or "", layout=layout, namespace=namespace)


def _cli(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("size", SIZES)
def test_render_every_version_and_size(tmp_path, capsys, version, size):
    code, out, err = _cli(["render", "--target", "csharp", "--size", str(size), "--constants", version,
                           "--layout", "lanes", "--namespace", "My.Crypto", "--class", "Tf", "--out",
                           str(tmp_path)], capsys)
    assert code == 0, err
    text = (tmp_path / "Tf.cs").read_text()
    assert "namespace My.Crypto;" in text and "public static class Tf" in text
    header = text.splitlines()[2]       # the recorded command (gen/header.py writes the options in its order)
    assert f"--size {size} --constants {version} " in header and " --layout lanes " in header, header
    for name in ("Encrypt", "Decrypt", "EncryptBlocks", "DecryptBlocks"):
        assert re.search(rf"public static void {name}\(ReadOnlySpan<byte> key, ReadOnlySpan<byte> tweaks?, "
                         r"ReadOnlySpan<byte> input, Span<byte> output\)", text), name
    spec = get_spec(version, size)
    # every rotation of the spec appears as a literal count, in both kernels and the scalar path
    for row in spec.rot:
        for r in row:
            assert f"BitOperations.RotateLeft(" in text
            assert re.search(rf"Avx512F\.RotateLeft\(\w+, {r}\)", text), r
            assert re.search(rf"Avx2\.ShiftLeftLogical\(\w+, {r}\), Avx2\.ShiftRightLogical\(\w+, {64 - r}\)", text)


@pytest.mark.parametrize("args, msg", [
    (["--class", "int"], "not a valid C# identifier"),
    (["--namespace", "a..b"], "not a valid C# identifier"),
    (["--layout", "diagonal"], "--layout"),
    (["--layout", "packed", "--unroll", "loop"], "packed layout needs"),
    (["--prefix", "tf_"], "--prefix applies to C targets"),
    (["--keys", "bogus"], "--keys"),
])
def test_bad_input_rejected(tmp_path, capsys, args, msg):
    out_dir = tmp_path / "o"
    code, _, err = _cli(["render", "--target", "csharp", "--size", "512", "--constants", "1.3", *args,
                         "--out", str(out_dir)], capsys)
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_csharp_options_rejected_for_c(tmp_path, capsys):
    code, _, err = _cli(["render", "--target", "c", "--size", "512", "--constants", "1.3", "--namespace", "N",
                         "--out", str(tmp_path)], capsys)
    assert code == 2 and "csharp only" in err
    code, _, err = _cli(["render", "--target", "c", "--size", "512", "--constants", "1.3", "--layout", "packed",
                         "--out", str(tmp_path)], capsys)   # C's --layout goes with --isa
    assert code == 2 and "--isa" in err


def test_render_is_deterministic():
    v = csharp_variant(get_spec("1.2", 1024), "lanes", Options("table", "loop", 2))
    assert render_variant(v) == render_variant(v)


# The lane transposition plans and the lanes/packed layouts the kernels print are checked
# against the reference by interpretation in tests/test_layouts.py.


# ----------------------------------------------------------------------------- dotnet

needs_dotnet = pytest.mark.skipif(not HAVE_DOTNET, reason="dotnet (.NET 10 SDK) not installed")


@needs_dotnet
@pytest.mark.parametrize("versions, sizes", [(("1.3",), (256,)), (("1.3",), (512, 1024))], ids=["v13-256", "v13-512-1024"])
def test_verify_matrix(versions, sizes, tmp_path):
    """The recommended C# variants (one per version and size) and, for v1.3, the scalar and packed
    layouts, one project built once, run under every JIT setting: KATs, random vectors vs the
    reference, misaligned, in place, guards, batches n=0..33, argument checks, the expected kernel,
    and the disasm check.  make test runs v1.3 at 256 bits, make verify the other sizes
    (tests/conftest.py MATRIX).  Versions 1.1 and 1.2 are make verify's own rows: the same
    projects under the same JIT settings, each row failing on a kernel other than the expected one
    (verify/csharp.py), so a copy here ran them twice."""
    from threefish_gen.verify import csharp as vcs
    from threefish_gen.verify import matrix, runner
    assert len([v for v in variants("recommended", "csharp", [get_spec(v, b) for v in VERSIONS for b in SIZES])
                if v.get("primitive") is None]) == 3 * len(VERSIONS)
    specs = [get_spec(v, b) for v in versions for b in sizes]
    chosen = [v for v in variants("recommended", "csharp", specs) if v.get("primitive") is None]  # Skein: test_skein
    assert len(chosen) == len(specs)
    chosen += [csharp_variant(s, lay, Options()) for s in specs if s.version == "1.3" for lay in ("scalar", "packed")]
    rep = matrix.run(chosen, random_count=100, seed=random.randrange(1 << 30), jobs=2,
                     workdir=tmp_path, report_path=tmp_path / "r.json")
    fails = [(r.variant, r.build, r.detail) for r in rep.rows if r.status != "PASS"]
    assert not fails
    assert len(rep.rows) == len(chosen) * len(vcs.RUNS)
    flags = vcs.cpu_flags()
    for r in rep.rows:
        if r.build in ("dotnet default", "TC=0") and "lanes" in r.variant:
            want = "vector512-lanes" if "avx512f" in flags else "vector256-lanes" if "avx2" in flags else "scalar"
            assert want in r.detail
        if r.build == "no HWIntrinsic":
            assert "kernel scalar" in r.detail and "block kernel" not in r.detail
        if r.build == "dotnet default" and "packed" in r.variant and "avx2" in flags:
            assert "packed" in r.detail.split("block kernel")[-1] or ("1024" in r.variant and "avx512f" not in flags)
        if r.build != "jit disasm":
            assert r.checks > 1000


@pytest.fixture
def edited_project(csharp_edited_project):
    """The harness project test_csharp shares with tests/test_trust.py (tests/csharp_shared.py: Broken,
    the lanes fly/loop and table/loop classes, Planted; their tests share the xdist group
    csharp-edited, so one worker builds it): (spec, the project state, the harness dll, broken, good,
    planted)."""
    p = csharp_edited_project
    return p.spec, p.state, p.dll, p.broken, p.good, p.planted


@needs_dotnet
@pytest.mark.xdist_group("csharp-edited")
def test_harness_catches_a_wrong_rotation(edited_project, tmp_path):
    """A class with one rotation count changed must fail the harness (the checks can fail)."""
    from threefish_gen.verify import csharp as vcs
    from threefish_gen.verify.runner import vector_file
    spec, _, dll, broken, _, _ = edited_project
    assert vcs.class_name(broken) == "ThreefishGen.Broken"
    vec = vector_file(spec, tmp_path / "v.txt", 5, 1)
    p = subprocess.run(["dotnet", str(dll), "ThreefishGen.Broken", str(vec)],
                       capture_output=True, text=True, env=vcs.dotnet_env(), timeout=300)
    assert p.returncode == 1 and "FAIL" in p.stderr and " 0 failed" not in p.stdout


# --------------------------------------------------------------------------- jit disasm row (issue 31 item 3)

def _listing(cls, methods):
    """DOTNET_JitDisasm-shaped text: {method: [instruction lines]}."""
    out = []
    for name, body in methods.items():
        out.append(f"; Assembly listing for method ThreefishGen.{cls}:{name}(byref,byref,byref,byref) (FullOpts)")
        out += [f"       {ln}" for ln in body] + [f"; Total bytes of code {len(body)}", ""]
    return "\n".join(out)


def _good_methods(cls):
    rounds = ["rol      rax, 14", "add      rax, rcx", "ret      "]
    m = {d + k: list(rounds) for d in ("Encrypt", "Decrypt") for k in ("Block", "BlocksScalar")}
    for d in ("Encrypt", "Decrypt"):
        m[d] = [f"call     [ThreefishGen.{cls}:{d}Block(byref,byref,byref,byref)]", "nop      ",
                f"tail.jmp [ThreefishGen.{cls}:BurnOne()]"]
        m[d + "Blocks"] = [f"call     [ThreefishGen.{cls}:{d}BlocksScalar(byref,byref,byref,byref,int)]",
                           f"call     [ThreefishGen.{cls}:Burn()]", "ret      "]
    for b in ("Burn", "BurnOne"):
        m[b] = ["call     CORINFO_HELP_MEMZERO",
                "call     [System.Security.Cryptography.CryptographicOperations:ZeroMemory(System.Span`1[byte])]"]
    return m


def test_disasm_row_fails_a_kernel_call_and_a_missing_wipe():
    """The jit disasm row: the kernels (the methods doing the rounds) make no call but the JIT's
    frame helpers; the wipe lies outside them (Encrypt/Decrypt call BurnOne, *Blocks call Burn,
    both call ZeroMemory).  Each way to break that FAILs, including the wipe moved into a kernel."""
    from threefish_gen.verify import csharp as vcs
    v = csharp_variant(get_spec("1.3", 256), "scalar", Options("table", "loop", 1))
    cls = vcs.class_name(v).split(".")[-1]
    good = _good_methods(cls)
    problems, notes = vcs.disasm_findings(_listing(cls, good), v, set())
    assert problems == [] and any(n.startswith("wipe:") for n in notes)
    # another class's listing is not this one's
    assert vcs.disasm_findings(_listing("Other", good), v, set())[0]

    def broken(edit):
        m = {k: list(b) for k, b in good.items()}
        edit(m)
        return "; ".join(vcs.disasm_findings(_listing(cls, m), v, set())[0])

    assert "EncryptBlock: 1 call(s), e.g. call     [System.Numerics.BitOperations:RotateLeft" in broken(
        lambda m: m["EncryptBlock"].insert(1, "call     [System.Numerics.BitOperations:RotateLeft(ulong,int):ulong]"))
    assert "DecryptBlocksScalar: 1 call(s)" in broken(lambda m: m["DecryptBlocksScalar"].insert(
        2, "call     [System.Security.Cryptography.CryptographicOperations:ZeroMemory(System.Span`1[byte])]"))
    assert "Encrypt: no call to BurnOne" in broken(lambda m: m["Encrypt"].pop())
    assert "DecryptBlocks: no call to Burn" in broken(lambda m: m["DecryptBlocks"].pop(1))
    assert "Decrypt: no call to BurnOne" in broken(   # Burn is not BurnOne
        lambda m: m["Decrypt"].__setitem__(2, f"tail.jmp [ThreefishGen.{cls}:Burn()]"))
    assert "Burn: no call to CryptographicOperations:ZeroMemory" in broken(lambda m: m["Burn"].pop())
    assert "BurnOne: no listing" in broken(lambda m: m.pop("BurnOne"))
    nowipe = csharp_variant(get_spec("1.3", 256), "scalar", Options("table", "loop", 1))
    nowipe = CSHARP.variant(nowipe.spec, nowipe.options, "", layout="scalar", wipe=False)
    ncls = vcs.class_name(nowipe).split(".")[-1]
    assert "Encrypt: calls BurnOne (--no-wipe)" in "; ".join(
        vcs.disasm_findings(_listing(ncls, _good_methods(ncls)), nowipe, set())[0])


_ELEMENT_BYTES = {"ulong": 8, "Vector128<ulong>": 16, "Vector256<ulong>": 32, "Vector512<ulong>": 64}


def _stackalloc_bytes(text: str) -> dict[str, int]:
    """Bytes each private kernel method of a rendered class stackallocs (from the text: an
    independent count of what the printer's facts must cover)."""
    out = {}
    for m in re.finditer(r"private static (?:void|int) (\w+)\((.*?)\n    \}\n", text, re.S):
        out[m.group(1)] = sum(_ELEMENT_BYTES[t] * int(n)
                              for t, n in re.findall(r"stackalloc ([\w<>]+)\[(\d+)\]", m.group(2)))
    return out


def test_kernels_hold_no_wipe_call():
    """The stackalloc scratch of loop/table kernels (key table, subkey ring) is cleared by Burn and
    BurnOne after the kernel returns (their size counts it), not by a call inside the kernel.
    Every kernel's scratch counts with its element size: the lanes kernels stackalloc vectors
    (Vector512<ulong> 64 bytes an element, Vector256<ulong> 32), the scalar ones ulong.  A lanes
    class's scalar kernels are unrolled also under --unroll loop (issue 30: no scratch, locals),
    so the scalar loop scratch is checked in layout scalar."""
    for bits in (256, 1024):
        for layout, o in [("lanes", Options("table", "loop", 1)), ("lanes", Options("fly", "loop", 2)),
                          ("lanes", Options("fly", "loop", 1)), ("scalar", Options("fly", "loop", 1)),
                          ("scalar", Options("table", "loop", 2))]:
            (text,) = render_variant(csharp_variant(get_spec("1.3", bits), layout, o)).values()
            assert ("stackalloc ulong" in text) == (layout == "scalar"), (bits, layout, o)
            assert ("stackalloc Vector512<ulong>" in text) == (layout == "lanes"), (bits, layout, o)
            assert text.count("CryptographicOperations.ZeroMemory") == 2          # Burn, BurnOne only
            per = _stackalloc_bytes(text)
            kernels = ({"EncryptLanes512", "EncryptLanes256", "DecryptLanes512", "DecryptLanes256"} if layout == "lanes"
                       else {"EncryptBlock", "EncryptBlocksScalar", "DecryptBlock", "DecryptBlocksScalar"})
            assert kernels <= {k for k, n in per.items() if n}, (bits, layout, o, per)
            burn = int(re.search(r"BurnBytes = (\d+);", text).group(1))
            burn_one = int(re.search(r"BurnOneBytes = (\d+);", text).group(1))
            assert burn >= 2 * max(per.values()) + 1024, (bits, o, burn, per)
            one = max(per.get("EncryptBlock", 0), per.get("DecryptBlock", 0))
            # the single-block kernels never run as tier-0 code (AggressiveOptimization), so
            # BurnOne needs no 1 KiB for a tier-0 frame: twice their scratch plus 256 bytes
            assert burn_one >= 2 * one + 256, (bits, o, burn_one, per)
            for d in ("Encrypt", "Decrypt"):
                # ... and return 0: rax holds no key word when BurnOne's ZeroMemory runs (Span.Clear's
                # frame is a push rax, below what BurnOne clears)
                assert re.search(r"AggressiveOptimization\)\]  // wipe: BurnOne[^\n]*\n    private static int "
                                 + d + r"Block\(.*?\n        return 0;\n    \}\n", text, re.S), (bits, layout, o, d)


def test_threefish256_table_loop_lanes_burn_by_hand():
    """Threefish-256 --keys table --unroll loop, lanes: each direction's Lanes512 kernel holds one
    stackalloc Vector512<ulong>[76] (the key table: 19 subkeys x 4 words, one vector a word) =
    4864 bytes, its Lanes256 one stackalloc Vector256<ulong>[76] = 2432 bytes; the scalar kernels
    (unrolled, issue 30) hold the table in 76 ulong locals ks_0..ks_75 = 608 bytes.  Their other
    locals, Lanes512: k0..k4, t0..t2, tk, x0..x3, s0..s3, l0_0..l0_3, t0_0..t0_3 -- 25
    Vector512<ulong> (1600 bytes; counted before the fix too).  BurnBytes = 2 * (4864 + 1600) + 1024 = 13952 (was 4224: the vector tables counted 0);
    BurnOneBytes (the scalar Block kernels: 608 + 13 ulong locals) = 2 * 712 + 256 -> 1728 (was
    2 * 712 + 1024 -> 2496 while the single-block kernels could run as tier-0 code)."""
    (text,) = render_variant(csharp_variant(get_spec("1.3", 256), "lanes", Options("table", "loop", 1))).values()
    assert "stackalloc ulong" not in text and "ulong ks_70, ks_71, ks_72, ks_73, ks_74, ks_75;" in text
    assert text.count("stackalloc Vector512<ulong>[76]") == 2 and text.count("stackalloc Vector256<ulong>[76]") == 2
    assert "private const int BurnBytes = 13952;" in text
    assert "private const int BurnOneBytes = 1728;" in text


@needs_dotnet
@pytest.mark.xdist_group("csharp-edited")
def test_disasm_row_passes_loop_and_table_lanes_and_fails_a_planted_call(edited_project, tmp_path, monkeypatch):
    """The rows issue 31 reported (fly/loop and table/loop lanes) PASS the real jit disasm row; the
    same class with one real call planted in EncryptBlock FAILs it."""
    from threefish_gen.verify import csharp as vcs
    from threefish_gen.verify.runner import vector_file
    spec, state, _, _, good, planted = edited_project
    monkeypatch.setattr(vcs, "_STATE", state)        # the shared project, built (no row rebuilds it)
    vec = vector_file(spec, tmp_path / "v.txt", 5, 1)
    run = next(r for r in vcs.RUNS if r.disasm)
    for v in good + [planted]:
        (tmp_path / v.stem).mkdir()
    for v in good:
        row = vcs.check_csharp(v, run, tmp_path / v.stem, vec)
        assert row.status == "PASS", (v.label(), row.detail)
        assert "wipe: " in row.detail
    row = vcs.check_csharp(planted, run, tmp_path / planted.stem, vec)
    assert row.status == "FAIL" and "EncryptBlock: 1 call(s)" in row.detail and "PlantedCall()" in row.detail, row.detail


def _cs_methods(text: str) -> dict[str, list[str]]:
    """Bodies of the methods (and constructors) of a rendered C# class, by name (overloads and
    constructors joined under one name), from the header line to its closing brace."""
    out: dict[str, list[str]] = {}
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = re.match(r"\s+(?:public|private|internal)\s[^=;]*?\b(\w+)\(", ln)
        if not m or ln.rstrip().endswith(";") or "=>" in ln:
            continue
        depth, body = 0, []
        for b in lines[i:]:
            body.append(b)
            depth += b.count("{") - b.count("}")
            if depth == 0 and "{" in "".join(body):
                break
        out.setdefault(m.group(1), []).extend(body)
    return out


SKEIN_PUBLIC = ("Hash", "Mac", "HashBits", "MacBits", "HashWithParameters", "HashTree", "HashMany",
                "Incremental", "Append", "AppendBits", "GetHashAndReset")


def test_csharp_skein_wipe_in_the_text_and_not_with_no_wipe():
    """The C# Skein class wipes (issue 25): Ubi does not inline and calls no Burn; every public
    entry (the one-shot methods, Incremental's constructors, Append, AppendBits,
    GetHashAndReset) calls Burn; the stackalloc'd spans holding secrets are cleared with
    ZeroMemory; Incremental is IDisposable with pinned arrays.  --no-wipe: none of it (Dispose
    stays, empty).  The spans the template stackallocs are the table the bound adds up
    (gen/printers/csharp.py skein_stackalloc), and BurnBytes of Skein-512 by hand: Ubi's locals
    h_0..h_7, t_0, t_1, k0..k8, t0..t2, x0..x7 = 30 words = 240 bytes; the Vector512 lanes
    kernel's locals vk0..vk8, vt0..vt2, vm0..vm7, vx0..vx7 = 28 vectors of 64 bytes = 1792 (the
    larger); spans 64 (UbiAll last) + 32 (Start cfg) + 80 + 64 + 64 (Output s, blk, h) + 64 (Pend
    blk) + 1 (AppendBits last) + 80 + 1536 + 128 (HashManyLanes start, w = 24 blocks, tw) + 1536 +
    128 + 64 (LeavesLanes w, tw, cv) = 3841; 2 * 1792 + 3841 + 1024 = 8449 -> 8512.  The lanes
    kernels call no Burn; the lanes work areas are cleared."""
    from threefish_gen.gen.printers.csharp import skein_stackalloc
    for bits in (256, 512, 1024):
        spec = get_spec("1.3", bits)
        (wiped,) = render_variant(CSHARP.variant(spec, primitive="skein")).values()
        (kept,) = render_variant(CSHARP.variant(spec, primitive="skein", wipe=False)).values()
        for word in ("ZeroMemory", "Burn", "System.Security.Cryptography", "NoInlining", "pinned: true"):
            assert word in wiped and word not in kept, (bits, word)
        assert "class Incremental : IDisposable" in wiped and "class Incremental : IDisposable" in kept
        assert "--no-wipe" in kept.splitlines()[2] and "--no-wipe" not in wiped.splitlines()[2]
        for text, wipe in ((wiped, True), (kept, False)):
            methods = _cs_methods(text)
            assert set(SKEIN_PUBLIC) <= set(methods)
            for name in SKEIN_PUBLIC:
                assert ("Burn();" in "\n".join(methods[name])) == wipe, (bits, wipe, name)
            assert "Burn" not in "\n".join(methods["Ubi"])
            assert not any("Burn" in "\n".join(methods[k]) for k in ("UbiLanes512", "UbiLanes256"))
            spans = {(name, m.group(1)): m.group(2) for name, body in methods.items()
                     for m in re.finditer(r"Span<\w+> (\w+) = stackalloc (\w+\[\w+\])", "\n".join(body))
                     if name != "Burn"}
            nb = spec.block_bytes
            sizes = {k: {"byte[StateBytes]": nb}.get(v) or
                     {"byte": 1, "ulong": 8}[v.split("[")[0]] * int(v.split("[")[1].rstrip("]"))
                     for k, v in spans.items()}
            assert sizes == skein_stackalloc(spec), (bits, sizes)
            if wipe:
                for method, span in (("UbiAll", "last"), ("Output", "s"), ("Output", "h"), ("Pend", "blk"),
                                     ("AppendBitsCore", "last"), ("HashManyLanes", "w"), ("LeavesLanes", "w"),
                                     ("LeavesLanes", "cv")):
                    assert re.search(rf"ZeroMemory\((MemoryMarshal\.AsBytes\()?{span}\)", "\n".join(methods[method])), \
                        (method, span)
                dispose = "\n".join(methods["Dispose"])
                for field in ("_start", "_s", "_buf", "ClearLevels"):
                    assert field in dispose
        if bits == 512:
            assert "private const int BurnBytes = 8512;" in wiped


@pytest.mark.parametrize("bits,interleave", [(256, 3), (512, 1), (1024, 1)])
def test_lanes_loop_loops_the_vector_kernels_only(bits, interleave):
    """Layout lanes --unroll loop (issue 30): the Vector512/Vector256 kernels run the 8-round cycle
    loop (their key and subkey rings stackalloc'd vectors) and are smaller than the unrolled ones;
    every other method -- the scalar Encrypt/Decrypt kernels EncryptBlock/DecryptBlock, the scalar
    blocks kernel (tail and fallback), the public methods -- is the same text as with --unroll full,
    so the single-block speed is the unrolled class's.  Layout scalar --unroll loop still loops
    its scalar kernels."""
    spec = get_spec("1.3", bits)

    def methods(layout, unroll):
        v = CSHARP.variant(spec, Options("fly", unroll, interleave), layout=layout, **{"class": "X"})
        (text,) = render_variant(v).values()
        return _cs_methods(text)

    full, loop = methods("lanes", "full"), methods("lanes", "loop")
    assert set(full) == set(loop)
    kernels = {f"{d}Lanes{w}" for d in ("Encrypt", "Decrypt") for w in (256, 512)}
    assert {k for k in full if full[k] != loop[k]} == kernels
    for k in kernels:
        body = "\n".join(loop[k])
        # passes of 24 rounds; Threefish-1024's vector kernels: five passes of 16 (80 rounds)
        cycles = f"for (int c = 0; c < {5 if bits == 1024 else spec.rounds // 24}; c++)"
        assert re.search(r"stackalloc Vector(256|512)<ulong>\[\d+\]", body) and cycles in body, k
        assert len(body) < len("\n".join(full[k])), k
        assert "stackalloc" not in "\n".join(full[k]) and cycles not in "\n".join(full[k]), k
    for k in ("EncryptBlock", "DecryptBlock", "EncryptBlocksScalar", "DecryptBlocksScalar"):
        assert "stackalloc" not in "\n".join(loop[k]) and "for (int c" not in "\n".join(loop[k]), k
    scalar = methods("scalar", "loop")
    assert "stackalloc ulong" in "\n".join(scalar["EncryptBlock"])
