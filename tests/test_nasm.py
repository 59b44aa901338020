"""nasm-x64 / nasm-x86 targets: the printer, options and the generated code run on vectors
(the allocator, its checker and the packed lowering: tests/test_asm.py).

The generated assembly is checked by assembling it with nasm and running the C harness on
vectors from the reference model (known answers + random vectors + batches); targets whose
toolchain or CPU support is missing are SKIPPED with the reason.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.printers import nasm as nasmp
from threefish_gen.gen.render import Variant, render_variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.threefish import Options
from threefish_gen.verify import nasm as vnasm
from threefish_gen.verify import runner

ROOT = Path(__file__).resolve().parent.parent
needs_nasm = pytest.mark.skipif(shutil.which("nasm") is None, reason="nasm not installed")


def variant(target, bits, version="1.3", keys_table=False, **kw):
    return get_target(target).variant(get_spec(version, bits), Options("table" if keys_table else "fly", "full", 1),
                                      "", **kw)


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    d = tmp_path_factory.mktemp("vec")
    return {(v, b): runner.vector_file(get_spec(v, b), d / f"{v}-{b}.txt", 20, 7)
            for v in ("1.1", "1.3") for b in (256, 512, 1024)}


def run_check(v, build, tmp_path, vectors):
    row = vnasm.check(v, build, tmp_path, vectors[(v.spec.version, v.spec.bits)])
    if row.status == "SKIPPED":
        pytest.skip(row.detail)
    assert row.status.startswith("PASS") or (not build.run and row.status == "ASSEMBLED"), row.detail
    if build.run:
        assert row.checks > 1000
    return row


@needs_nasm
@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("strategy", ["belady", "linear-scan", "named"])
def test_x64_sysv_harness(bits, strategy, tmp_path, vectors):
    v = variant("nasm-x64", bits, strategy=strategy)
    if strategy == "named" and bits == 1024:
        with pytest.raises(GenError, match=r"cannot allocate .*x\d+.* live at"):
            render_variant(v)
        return
    run_check(v, vnasm.X64_BUILDS[0], tmp_path, vectors)


@needs_nasm
@pytest.mark.parametrize("version", ["1.1", "1.3"])
def test_x64_sanitized_harness_and_win64(version, tmp_path, vectors):
    v = variant("nasm-x64", 512, version)
    run_check(v, vnasm.X64_BUILDS[1], tmp_path / "asan", vectors)
    run_check(v, vnasm.WIN64_BUILDS[0], tmp_path / "win64", vectors)
    run_check(v, vnasm.WIN64_BUILDS[1], tmp_path / "ms_abi", vectors)   # Win64 code, run via ms_abi


@needs_nasm
@pytest.mark.parametrize("kw", [dict(rotate="rorx"), dict(rotate="shld"), dict(rotate="mix"), dict(registers=6), dict(pin="x"), dict(schedule="interleave"),
                                dict(keys_table=True), dict(pin="k,in,out", strategy="linear-scan"),
                                dict(isa="sse2"), dict(isa="sse2", registers=8),
                                dict(strategy="linear-scan", registers=9)])
def test_x64_options(kw, tmp_path, vectors):
    v = variant("nasm-x64", 256, "1.1", **kw)
    if kw.get("rotate") == "rorx" and "bmi2" not in vnasm.cpu_flags():
        pytest.skip("CPU lacks BMI2")
    run_check(v, vnasm.X64_BUILDS[0], tmp_path, vectors)


@needs_nasm
@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("strategy", ["belady", "linear-scan"])
def test_x86_harness(bits, strategy, tmp_path, vectors):
    run_check(variant("nasm-x86", bits, strategy=strategy), vnasm.X86_BUILDS[0], tmp_path, vectors)


@pytest.mark.parametrize("rotate, counts", [("shld", {"shld": 576}), ("mix", {"rol": 288, "shld": 288})])
def test_rotate_shld_and_mix_spell_the_rotates_and_prove(rotate, counts):
    """--rotate shld: every GPR rotate of Threefish-512's four functions is shld r, r, n (the same
    register twice: a rotate); mix: rol and shld by turns, half each.  The prover reads shld and
    finds both equivalent to the description; shld with another register as its source is refused."""
    from threefish_gen.gen.prove import prove_text
    v = variant("nasm-x64", 512, "1.3", rotate=rotate)
    asm = render_variant(v)[f"{v.stem}.asm"]
    got = {k: len(re.findall(rf"^\s+{k} \w+, \w+, \d+\s*(;|$)" if k == "shld" else rf"^\s+{k} \w+, \d+\s*(;|$)",
                             asm, re.M)) for k in ("rol", "shld")}
    assert {k: n for k, n in got.items() if n} == counts
    assert all(m.group(1) == m.group(2) for m in re.finditer(r"^\s+shld (\w+), (\w+), \d+", asm, re.M))
    rep = prove_text(v, "nasm", 64, asm)
    assert not rep.failed, rep.lines
    m = re.search(r"^(\s+shld )(\w+), \w+,", asm, re.M)
    other = "rax" if m.group(2) != "rax" else "rbx"
    bad = asm[:m.start()] + f"{m.group(1)}{m.group(2)}, {other}," + asm[m.end():]
    with pytest.raises(GenError, match="shld of two different registers"):
        prove_text(v, "nasm", 64, bad)


def test_output_deterministic_and_annotated():
    v = variant("nasm-x64", 512, strategy="belady", annotate="full")   # full: every instruction commented
    a, b = render_variant(v), render_variant(v)
    assert a == b
    asm = a[f"{v.stem}.asm"]
    assert v.command() in asm and "Register map" in asm and "spills" in asm
    body = asm.split(".entry:")[1].split(".done:")[0]
    ins = [ln for ln in body.splitlines() if ln.startswith("    ") and not ln.strip().startswith(";")]
    assert ins and all(";" in ln for ln in ins if not ln.strip().startswith(("push", "pop", "sub rsp",
                                                                                "add rsp", "ret")))
    assert "x0 += x1" in asm and "x1 <<<= " in asm and "x1 ^= x0" in asm


@pytest.mark.parametrize("name", ["nasm-x86", "nasm-x64"])
def test_set_all_leaves_out_exactly_what_the_allocator_cannot_fit(name):
    """--set all of the NASM targets is data (no allocator run to enumerate it): the candidates it
    leaves out (the descriptors' `unallocatable`) are exactly those whose encrypt function the
    allocator cannot fit, over every size and version (nasm-x64: in make verify only)."""
    from threefish_gen.gen.spec import all_specs

    def fits(t, v):
        try:
            t.allocate(v, "encrypt")
        except GenError:
            return False
        return True

    t = get_target(name)
    cands = t.candidates("all", all_specs())
    # the Threefish variants of the set (nasm-x64 adds its Skein variants after them)
    kept = [v for v in t.variants("all", all_specs()) if v.get("primitive", "threefish") == "threefish"]
    assert [v for v in cands if fits(t, v)] == kept, name
    assert len(kept) < len(cands), name      # the check is not vacuous: something is left out


def test_bad_options():
    with pytest.raises(GenError, match="abi"):
        variant("nasm-x64", 512, abi="cdecl")
    with pytest.raises(GenError, match="strategy"):
        variant("nasm-x64", 512, strategy="greedy")
    loop = Options("fly", "loop", 1)
    with pytest.raises(GenError, match=r"--unroll loop for nasm-x64 needs --layout scalar \(one block's words in "
                                       r"registers, or lanes: --isa avx2/avx512\)"):
        get_target("nasm-x64").variant(get_spec("1.3", 512), loop, isa="sse2", layout="packed")
    for isa in ("avx2", "avx512"):       # the lanes loop (issue 30)
        assert get_target("nasm-x64").variant(get_spec("1.3", 512), loop, isa=isa).options.unroll == "loop"
    with pytest.raises(GenError, match="--unroll loop for nasm-x64 needs .* --keys fly"):
        get_target("nasm-x64").variant(get_spec("1.3", 512), Options("table", "loop", 1))
    with pytest.raises(GenError, match=r"--unroll loop for nasm-x86 needs --layout scalar \(one block's words in "
                                       r"registers\), --keys fly"):
        get_target("nasm-x86").variant(get_spec("1.3", 512), loop, layout="packed")
    with pytest.raises(GenError, match="unknown value or group"):
        get_target("nasm-x64").allocate(variant("nasm-x64", 512, pin="zz"), "encrypt")


@needs_nasm
@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("strategy", ["belady", "linear-scan"])
@pytest.mark.parametrize("isa,flag", [("avx2", "avx2"), ("avx512", "avx512f")])
def test_x64_lanes(bits, strategy, isa, flag, tmp_path, vectors):
    """4 (ymm) or 8 (zmm) blocks per pass in lanes, n mod lanes and single blocks scalar: the
    harness batches n = 0..33 cover both paths.  SKIPPED where the CPU lacks the extension."""
    v = variant("nasm-x64", bits, isa=isa, strategy=strategy)
    if flag not in vnasm.cpu_flags():
        pytest.skip(f"CPU lacks {flag} (no emulation for assembly here)")
    run_check(v, vnasm.X64_BUILDS[0], tmp_path, vectors)


@needs_nasm
@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("isa,flag", [("avx2", "avx2"), ("avx512", "avx512f")])
def test_x64_lanes_loop(bits, isa, flag, tmp_path, vectors):
    """--unroll loop with lanes (issue 30): the lanes kernel one 8-round cycle in a counter loop
    over its key and counter rings (vector slots), the GPR single-block/tail function unrolled;
    the harness batches n = 0..33 cover both.  SKIPPED where the CPU lacks the extension."""
    v = get_target("nasm-x64").variant(get_spec("1.3", bits), Options("fly", "loop", 1), "", isa=isa)
    text = render_variant(v)[f"{v.stem}.asm"]
    for d in ("encrypt", "decrypt"):
        lanes = re.split(r"\n\w+:\n", text.split(f"\n{v.prefix}{d}_blocks_lanes:\n", 1)[1], 1)[0]
        scalar = re.split(r"\n\w+:\n", text.split(f"\n{v.prefix}{d}_blocks_scalar:\n", 1)[1], 1)[0]
        assert lanes.count("cycles of 8 rounds") == 1 and "cycles of 8 rounds" not in scalar, d
    if flag not in vnasm.cpu_flags():
        pytest.skip(f"CPU lacks {flag} (no emulation for assembly here)")
    run_check(v, vnasm.X64_BUILDS[0], tmp_path, vectors)


@needs_nasm
def test_win64_unwind_tables(tmp_path):
    """Win64 output carries .pdata/.xdata describing each prolog (pushes, stack allocation)."""
    if shutil.which("objdump") is None or "pe-x86-64" not in subprocess.run(
            ["objdump", "-i"], capture_output=True, text=True).stdout:
        pytest.skip("objdump cannot read pe-x86-64 objects")
    v = variant("nasm-x64", 1024, abi="win64")
    from threefish_gen.gen.output import write_files
    write_files(render_variant(v), tmp_path)
    obj = tmp_path / "t.obj"
    subprocess.run(["nasm", "-f", "win64", "-o", str(obj), str(tmp_path / f"{v.stem}.asm")], check=True)
    dump = subprocess.run(["objdump", "-x", str(obj)], capture_output=True, text=True).stdout
    assert dump.count("Nbr codes") == 4          # encrypt, encrypt_blocks, decrypt, decrypt_blocks
    isa, alloc = get_target(v.target).allocate(v, "encrypt")
    pushes = nasmp.Frame("win64", alloc, isa).pushes
    assert pushes and all(f"push {r}" in dump for r in pushes)
    assert "alloc small area: rsp = rsp - 0x38" in dump


# --------------------------------------------------------------------------- packed layout (two words per XMM)

def test_packed_permutation_is_derived_not_typed():
    """512: A = A[1 2 3 0] and B = B[0 3 2 1] (the layout IR's natural shuffles) become
    two-source shuffles of the old registers, 256: one pshufd on B."""
    from threefish_gen.gen import asm as ra
    from threefish_gen.gen.layouts import ir, packed
    from threefish_gen.gen.threefish import describe
    prog = describe(get_spec("1.3", 512), Options(), "encrypt", 1)
    vp = packed.lower(prog, 2, natural=True)
    perm = [op.pattern() for op in ir.walk(vp.body) if isinstance(op, ir.Shuffle) and op.kind == "permute"][:4]
    assert perm == [(("oA0", 1), ("oA1", 0)), (("oA1", 1), ("oA0", 0)),
                    (("oB0", 0), ("oB1", 1)), (("oB1", 0), ("oB0", 1))]
    ops = ra.lower_packed(prog, ra.isa_for("x86", "cdecl", "shift", "sse2", "packed"))
    first = [(o.kind, o.dst, o.src) for o in ops if o.text.startswith(("A = A[", "B = B["))][:8]
    assert first == [("mov", "A0.1", "A0"), ("hilo", "A0.1", "A1"), ("mov", "A1.1", "A1"), ("hilo", "A1.1", "A0"),
                     ("mov", "B0.1", "B0"), ("lohi", "B0.1", "B1"), ("mov", "B1.1", "B1"), ("lohi", "B1.1", "B0")]
    asm = render_variant(variant("nasm-x86", 256, layout="packed"))
    asm = next(t for n, t in asm.items() if n.endswith(".asm"))
    body = asm.split("encrypt_blocks:\n    endbr32\n.entry:")[1].split(".done:")[0]   # endbr32: CET entry
    assert body.count("pshufd") == 72 and "shufpd" not in body      # one lane swap of B per round
    rot = get_spec("1.3", 256).rot
    distinct = sum(rot[d % 8][0] != rot[d % 8][1] for d in range(72))
    assert 0 < distinct < 72 and body.count("movsd") == distinct       # equal counts: 4-instruction rotate
    assert "movdqu" in body and "movq xmm" in body and "paddq" in body


@needs_nasm
@pytest.mark.parametrize("bits,version", [(256, "1.1"), (256, "1.3"), (512, "1.1"), (512, "1.3")])
def test_x86_packed_harness(bits, version, tmp_path, vectors):
    run_check(variant("nasm-x86", bits, version, layout="packed"), vnasm.X86_BUILDS[0], tmp_path, vectors)


@needs_nasm
@pytest.mark.parametrize("bits,strategy", [(1024, "belady"), (512, "named"), (256, "linear-scan")])
def test_x64_sse2_packed_harness(bits, strategy, tmp_path, vectors):
    """The same instruction stream in 64-bit mode (native): 1024 spills through the allocator."""
    v = variant("nasm-x64", bits, "1.3", isa="sse2", layout="packed", strategy=strategy)
    run_check(v, vnasm.X64_BUILDS[0], tmp_path, vectors)
    if bits == 1024:
        _, alloc = get_target(v.target).allocate(v, "encrypt")
        assert alloc.stats["spills"] > 0


@pytest.mark.parametrize("args,pattern", [
    (["--target", "nasm-x64", "--layout", "packed"], "--layout packed needs the words in XMM"),
    (["--target", "nasm-x86", "--layout", "packed", "--keys", "table"], "--layout packed needs --keys fly"),
    (["--target", "nasm-x86", "--layout", "packed", "--schedule", "interleave"], "does not apply to --layout packed"),
    (["--target", "nasm-x86", "--layout", "diagonal"], "Invalid value for '--layout'"),
    (["--target", "nasm-x86", "--layout", "packed", "--size", "1024", "--strategy", "named"],
     r"cannot allocate v\d+: 8 xmm values live"),
])
def test_cli_packed_bad_combination_exit_2(args, pattern, tmp_path):
    base = ["--size", "512"] if "--size" not in args else []
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "render", *args, *base, "--constants", "1.3", "--out", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    import re
    assert len(p.stderr.strip().splitlines()) == 1 and re.search(pattern, p.stderr), p.stderr
    assert p.stderr.startswith("threefish-gen: error: ")


@needs_nasm
@pytest.mark.parametrize("bits,abi", [(256, "sysv"), (512, "sysv"), (1024, "sysv"), (512, "win64")])
def test_x64_loop_harness(bits, abi, tmp_path, vectors):
    """--unroll loop (words in GPRs): the loop over 24-round passes reading the key and counter
    rings by its counter passes the harness (System V natively; Win64 through gcc's ms_abi), and
    its file is less than two thirds of the fully unrolled one (a pass is 24 of the 72 or 80
    rounds)."""
    v = get_target("nasm-x64").variant(get_spec("1.3", bits), Options("fly", "loop", 1), "", abi=abi)
    run_check(v, vnasm.X64_BUILDS[0] if abi == "sysv" else vnasm.WIN64_BUILDS[1], tmp_path, vectors)
    loop = render_variant(v)[f"{v.stem}.asm"]
    full = render_variant(variant("nasm-x64", bits, abi=abi))
    assert loop.count("jne .cycle") == 2          # encrypt_blocks, decrypt_blocks (the one-block functions call them)
    assert 3 * len(loop) < 2 * len(next(t for n, t in full.items() if n.endswith(".asm")))


@needs_nasm
@pytest.mark.parametrize("target,bits,kw", [("nasm-x86", 256, {}), ("nasm-x86", 1024, {}),
                                            ("nasm-x64", 512, dict(isa="sse2"))])
def test_xmm_loop_harness(target, bits, kw, tmp_path, vectors):
    """--unroll loop with the words in XMM (nasm-x86 cdecl, 32-bit: its rings in 16-byte slots read
    by a counter that is negative in decrypt; nasm-x64 --isa sse2, the same stream in 64-bit mode)
    passes the harness."""
    v = get_target(target).variant(get_spec("1.3", bits), Options("fly", "loop", 1), "", **kw)
    run_check(v, (vnasm.X86_BUILDS if target == "nasm-x86" else vnasm.X64_BUILDS)[0], tmp_path, vectors)
    assert render_variant(v)[f"{v.stem}.asm"].count("jne .cycle") == 2
