"""nasm-x64 / nasm-x86 targets and the register allocator.

The generated assembly is checked by assembling it with nasm and running the C harness on
vectors from the reference model (known answers + random vectors + batches); targets whose
toolchain or CPU support is missing are SKIPPED with the reason.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gen import regalloc as ra
from gen.errors import GenError
from gen.printers import nasm as nasmp
from gen.render import Variant, render_variant
from gen.spec import get_spec
from gen.threefish import Options
from verify import nasm as vnasm
from verify import runner

ROOT = Path(__file__).resolve().parent.parent
needs_nasm = pytest.mark.skipif(shutil.which("nasm") is None, reason="nasm not installed")


def variant(target, bits, version="1.3", keys_table=False, **kw):
    return Variant(target, get_spec(version, bits), Options("table" if keys_table else "fly", "full", 1), "",
                   nasmp.variant_extra(target, **kw))


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    d = tmp_path_factory.mktemp("vec")
    return {(v, b): runner.vector_file(get_spec(v, b), d / f"{v}-{b}.txt", 20, 7)
            for v in ("1.1", "1.3") for b in (256, 512, 1024)}


def run_check(v, build, tmp_path, vectors):
    row = vnasm.check(v, build, tmp_path, vectors[(v.spec.version, v.spec.bits)])
    if row.status == "SKIPPED":
        pytest.skip(row.detail)
    assert row.status.startswith("PASS"), row.detail
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
@pytest.mark.parametrize("kw", [dict(rotate="rorx"), dict(registers=6), dict(pin="x"), dict(schedule="interleave"),
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


def test_belady_spills_less_than_linear_scan():
    """1024 bits: 16 words + pointers > 15 GPRs; Belady's MIN reloads less than linear scan."""
    st = {}
    for s in ("belady", "linear-scan"):
        _, alloc = nasmp.allocate(variant("nasm-x64", 1024, strategy=s), "encrypt")
        st[s] = alloc.stats
    assert st["belady"]["reloads"] < st["linear-scan"]["reloads"]
    assert st["belady"]["spills"] < st["linear-scan"]["spills"]
    assert st["belady"]["spills"] > 0          # the pressure is real


@pytest.mark.parametrize("kw,pattern", [
    (dict(strategy="belady", registers=1), r"no gpr register left for 'k0 = key\[0\]': live there key"),
    (dict(strategy="belady", pin="x"), r"16 gpr values live .*\(k0, .*x15\)|x1[0-5].*only 15"),
    (dict(strategy="named"), r"cannot allocate x9: .*\(in, n, out, tweak, x0, .*x9\)"),
    (dict(strategy="linear-scan", registers=2), r"leaves no gpr register"),
])
def test_impossible_allocation_is_one_line_error(kw, pattern):
    with pytest.raises(GenError, match=pattern) as e:
        nasmp.allocate(variant("nasm-x64", 1024, **kw), "encrypt")
    assert "\n" not in str(e.value)


def test_cli_regalloc_exit_2_on_impossible_budget():
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "regalloc", "--size", "1024", "--strategy", "named"],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.startswith("threefish-gen: error: cannot allocate") and "Traceback" not in p.stderr


@needs_nasm
def test_cli_regalloc_table():
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "regalloc", "--target", "nasm-x64", "--size", "1024",
                        "--strategy", "all"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[1].split() == ["named", "linear-scan", "belady"]
    spills = dict(zip(["named", "linear-scan", "belady"], lines[3].split()[1:]))
    assert spills["named"] == "fails" and int(spills["belady"]) < int(spills["linear-scan"])
    code = [ln for ln in lines if ln.startswith("code bytes")][0].split()[2:]
    assert all(int(x) > 1000 for x in code[1:])


def test_output_deterministic_and_annotated():
    v = variant("nasm-x64", 512, strategy="belady")
    a, b = render_variant(v), render_variant(v)
    assert a == b
    asm = a[f"{v.stem}.asm"]
    assert v.command() in asm and "Register map" in asm and "spills" in asm
    body = asm.split(".entry:")[1].split(".done:")[0]
    ins = [ln for ln in body.splitlines() if ln.startswith("    ") and not ln.strip().startswith(";")]
    assert ins and all(";" in ln for ln in ins if not ln.strip().startswith(("push", "pop", "sub rsp",
                                                                                "add rsp", "ret")))
    assert "x0 += x1" in asm and "x1 <<<= " in asm and "x1 ^= x0" in asm


def test_bad_options():
    with pytest.raises(GenError, match="abi"):
        variant("nasm-x64", 512, abi="cdecl")
    with pytest.raises(GenError, match="strategy"):
        variant("nasm-x64", 512, strategy="greedy")
    with pytest.raises(GenError, match="unroll full"):
        render_variant(Variant("nasm-x64", get_spec("1.3", 512), Options("fly", "loop", 1), "",
                               nasmp.variant_extra("nasm-x64")))
    with pytest.raises(GenError, match="unknown value or group"):
        nasmp.allocate(variant("nasm-x64", 512, pin="zz"), "encrypt")


def test_liveness_loop_carried():
    v = variant("nasm-x64", 256)
    isa = nasmp.isa_for("nasm-x64", "sysv", "rol")
    from gen.threefish import describe
    ops = ra.lower(describe(v.spec, v.options, "encrypt", 1), isa)
    car = ra.carried(ops)
    assert {"in", "out", "tweak", "n", "k0", "k4"} <= car
    assert not any(x.startswith("x") for x in car)      # state words live within one block
    iv = ra.intervals(ops)
    top, bottom = ra._loop_bounds(ops)
    assert iv["k0"][1] == bottom and iv["x0"][0] > top


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
def test_win64_unwind_tables(tmp_path):
    """Win64 output carries .pdata/.xdata describing each prolog (pushes, stack allocation)."""
    if shutil.which("objdump") is None or "pe-x86-64" not in subprocess.run(
            ["objdump", "-i"], capture_output=True, text=True).stdout:
        pytest.skip("objdump cannot read pe-x86-64 objects")
    v = variant("nasm-x64", 1024, abi="win64")
    from verify.runner import write_files
    write_files(render_variant(v), tmp_path)
    obj = tmp_path / "t.obj"
    subprocess.run(["nasm", "-f", "win64", "-o", str(obj), str(tmp_path / f"{v.stem}.asm")], check=True)
    dump = subprocess.run(["objdump", "-x", str(obj)], capture_output=True, text=True).stdout
    assert dump.count("Nbr codes") == 4          # encrypt, encrypt_blocks, decrypt, decrypt_blocks
    isa, alloc = nasmp.allocate(v, "encrypt")
    pushes = nasmp.Frame("nasm-x64", "win64", alloc, isa).pushes
    assert pushes and all(f"push {r}" in dump for r in pushes)
    assert "alloc small area: rsp = rsp - 0x38" in dump


# --------------------------------------------------------------------------- packed layout (two words per XMM)

def _run_packed_ops(ops, memory):
    """Execute the packed lowering's machine ops on 128-bit Python integers (lane semantics of
    the printer's table), before allocation: the layout mapping checked without nasm."""
    m64 = (1 << 64) - 1

    def mk(lo, hi):
        return (lo & m64) | (hi & m64) << 64

    env, stack = {}, {}

    def read(a, wide):
        if isinstance(a, str):
            return env[a]
        if isinstance(a, ra.Addr):
            if a.base is None:
                return a.index if a.array == "const" else stack[(a.array, a.index)]
            w = memory[a.base][a.offset // 8:a.offset // 8 + 2]
            return mk(w[0], w[1]) if wide else w[0]
        return a.value if isinstance(a, ra.Imm) else a

    lane_ops = {"lolo": lambda d, s: mk(d, s), "hihi": lambda d, s: mk(d >> 64, s >> 64),
                "hilo": lambda d, s: mk(d >> 64, s), "lohi": lambda d, s: mk(d, s >> 64),
                "movsd": lambda d, s: mk(s, d >> 64)}
    arith = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "xor": lambda a, b: a ^ b,
             "or": lambda a, b: a | b, "shl": lambda a, n: a << n, "shr": lambda a, n: a >> n}
    for o in ops:
        if o.kind in ("note", "guard", "top", "bottom") or o.dst in ra.POINTERS:
            continue
        if o.kind == "store":
            v = env[o.src]
            if o.addr.base is None:
                stack[(o.addr.array, o.addr.index)] = v
            else:
                memory[o.addr.base][o.addr.offset // 8:o.addr.offset // 8 + 2] = [v & m64, v >> 64]
        elif o.kind in ("mov", "ldu"):
            env[o.dst] = read(o.src, o.kind == "ldu" or not isinstance(o.src, ra.Addr) or o.src.base is None)
        elif o.kind == "swap":
            s = read(o.src, True)
            env[o.dst] = mk(s >> 64, s)
        elif o.kind == "bshl":
            env[o.dst] = (env[o.dst] << 8 * o.src) & ((1 << 128) - 1)
        elif o.kind in lane_ops:
            env[o.dst] = lane_ops[o.kind](env[o.dst], read(o.src, True))
        else:
            d, s = env[o.dst], read(o.src, True)
            s_lo, s_hi = (s, s) if isinstance(o.src, int) else (s & m64, s >> 64)
            env[o.dst] = mk(arith[o.kind](d & m64, s_lo), arith[o.kind](d >> 64, s_hi))
    return memory


@pytest.mark.parametrize("version", ["1.1", "1.2", "1.3"])
@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_packed_lowering_matches_reference(bits, version):
    """The packed machine ops (load/unpack, lane shuffles from spec.perm, per-lane rotates, key
    pairs + tweak words) compute Threefish: run on Python integers against the reference."""
    import random
    from gen import reference
    from gen.dsl import bytes_from_words, words_from_bytes
    from gen.lower_packed import lower_packed
    from gen.threefish import describe
    spec = get_spec(version, bits)
    isa = nasmp.isa_for("nasm-x86", "cdecl", "shift", "sse2", "packed")
    rnd = random.Random(bits)
    key, tw, block = ([rnd.getrandbits(64) for _ in range(n)] for n in (spec.nw, 2, spec.nw))
    for d in ("encrypt", "decrypt"):
        ops = lower_packed(describe(spec, Options(), d, 1), isa)
        out = _run_packed_ops(ops, {"key": key, "tweak": tw, "in": block, "out": [0] * spec.nw})["out"]
        want = getattr(reference, d)(spec, bytes_from_words(key), bytes_from_words(tw), bytes_from_words(block))
        assert out == words_from_bytes(want), (bits, version, d)


def test_packed_permutation_is_derived_not_typed():
    """512: A = A[1 2 3 0] and B = B[0 3 2 1] become two-source shuffles, 256: one pshufd on B."""
    from gen.layouts.packed import lane_perms, pair_sources
    pa, pb = lane_perms(get_spec("1.3", 512).perm)
    assert pair_sources(pa) == [((0, 1), (1, 0)), ((1, 1), (0, 0))]
    assert pair_sources(pb) == [((0, 0), (1, 1)), ((1, 0), (0, 1))]
    asm = render_variant(variant("nasm-x86", 256, layout="packed"))
    asm = next(t for n, t in asm.items() if n.endswith(".asm"))
    body = asm.split("encrypt_blocks:\n.entry:")[1].split(".done:")[0]
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
        _, alloc = nasmp.allocate(v, "encrypt")
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
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "render", *args, *base, "--version", "1.3", "--out", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    import re
    assert len(p.stderr.strip().splitlines()) == 1 and re.search(pattern, p.stderr), p.stderr
    assert p.stderr.startswith("threefish-gen: error: ")
