"""SIMD C target (c-simd): layout semantics in Python, then real builds through the verify harness.

Results are compared with the reference model (gen/reference.py) and the KATs, never with output
of the code under test.  What the CPU or toolchain cannot run is skipped with the reason.
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gen import reference  # noqa: E402
from gen.targets.c_simd import TARGET as SIMD  # noqa: E402
from gen.dsl import MASK64, Idx, Loop, Mem, bytes_from_words, interpret, words_from_bytes  # noqa: E402
from gen.errors import GenError  # noqa: E402
from gen.layouts import lanes as lanes_layout  # noqa: E402
from gen.layouts import packed as packed_layout  # noqa: E402
from gen.printers.c_simd import ISAS, Width, shuffle, shuffle_candidates  # noqa: E402
from gen.render import render_variant  # noqa: E402
from gen.spec import Spec  # noqa: E402
from gen.threefish import Options, describe  # noqa: E402
from verify import runner, simd  # noqa: E402

simd_variant, dispatcher, simd_recommended = SIMD.simd, SIMD.dispatcher, SIMD.recommended


# --------------------------------------------------------------------------- layout, in Python

@pytest.mark.parametrize("lanes", [2, 4, 8])
def test_transpose_network_is_a_transpose(lanes):
    rows = [[(r, c) for c in range(lanes)] for r in range(lanes)]
    cols = lanes_layout.simulate_transpose(rows)
    assert cols == [[(r, c) for r in range(lanes)] for c in range(lanes)]
    assert lanes_layout.simulate_transpose(cols) == rows


def _run_lanes(vp, key, tweaks, data):
    """Interpret a lanes VProgram lane by lane (Gather/Scatter = per-lane word access)."""
    prog, L = vp.prog, vp.lanes
    nw = prog.spec.nw
    mem = {"key": words_from_bytes(key)}
    env = interpret(prog.setup, mem)
    tw, inw = words_from_bytes(tweaks), words_from_bytes(data)
    out = [0] * len(inw)
    venv, varr = {}, {}

    def val(a, lane):
        if isinstance(a, str):
            if a.startswith("b"):
                return env[a[1:]]
            return venv[a][lane]
        if isinstance(a, Mem):
            if a.array.startswith("b"):
                return mem[a.array[1:]][a.index.at(ctr)]
            return varr[a.array][a.index.at(ctr)][lane]
        return a.at(ctr) & MASK64

    def step(op):
        if isinstance(op, lanes_layout.Gather):
            src, stride = (inw, nw) if op.array == "in" else (tw, 2)
            for w, name in enumerate(op.dsts):
                venv[name] = [src[(op.block * L + l) * stride + w] for l in range(L)]
            return
        if isinstance(op, lanes_layout.Scatter):
            for w, name in enumerate(op.srcs):
                for l in range(L):
                    out[(op.block * L + l) * nw + w] = venv[name][l]
            return
        if op.kind == "note":
            return
        if op.kind == "store":
            arr = varr.setdefault(op.a.array, {})
            arr[op.a.index.at(ctr)] = list(venv[op.dst])
            return
        if op.kind in ("rotl", "rotr"):
            n = op.a if op.kind == "rotl" else 64 - op.a
            venv[op.dst] = [((x << n) | (x >> (64 - n))) & MASK64 for x in venv[op.dst]]
            return
        new = [val(op.a, l) for l in range(L)]
        cur = venv.get(op.dst)
        f = {"mov": lambda x, y: y, "add": lambda x, y: (x + y) & MASK64,
             "sub": lambda x, y: (x - y) & MASK64, "xor": lambda x, y: x ^ y}[op.kind]
        venv[op.dst] = [f(cur[l] if cur else 0, new[l]) for l in range(L)]

    ctr = 0
    for item in vp.body:
        if isinstance(item, Loop):
            for ctr in range(item.count):
                for op in item.body:
                    step(op)
            ctr = 0
        else:
            step(item)
    return bytes_from_words(out)


@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("lanes,options,direction", [
    (4, Options(), "encrypt"), (8, Options(), "decrypt"), (2, Options("table", "loop", 1), "encrypt"),
    (4, Options("fly", "loop", 2), "decrypt")])
def test_lanes_program_matches_reference(bits, lanes, options, direction):
    spec = Spec("1.3" if bits != 512 else "1.1", bits)
    prog = describe(spec, options, direction, options.interleave)
    vp = lanes_layout.vectorize(prog, lanes)
    rng = random.Random(bits * lanes)
    n = vp.blocks
    key = rng.randbytes(spec.block_bytes)
    tweaks = rng.randbytes(16 * n)
    data = rng.randbytes(spec.block_bytes * n)
    got = _run_lanes(vp, key, tweaks, data)
    fn = reference.encrypt if direction == "encrypt" else reference.decrypt
    nb = spec.block_bytes
    want = b"".join(fn(spec, key, tweaks[16 * i:16 * i + 16], data[nb * i:nb * (i + 1)]) for i in range(n))
    assert got == want


def _eval_shuffle(expr, vecs, isa, width):
    """Evaluate a printed shuffle expression with the candidate table's semantics."""
    for cost, fmt, sem in shuffle_candidates(isa, width):
        for a in vecs:
            for b in vecs:
                if fmt.format(a=a, b=b) == expr:
                    return [vecs[(a, b)[s]][k] for s, k in sem]
    return None


@pytest.mark.parametrize("isa_name", ["sse2", "avx", "avx2", "avx512"])
def test_transpose_shuffles_have_the_wanted_semantics(isa_name):
    isa = ISAS[isa_name]
    w = Width(isa.bits)
    L = w.lanes
    vecs = {"p": [("p", k) for k in range(L)], "q": [("q", k) for k in range(L)]}
    for bit in [1 << b for b in range(L.bit_length() - 1)]:
        for high in (False, True):
            pat = tuple(("p" if s == 0 else "q", k) for s, k in lanes_layout.combine_pattern(L, bit, high))
            expr = shuffle(isa, w, pat)
            got = _eval_shuffle(expr, vecs, isa, w)
            if got is None:
                assert "permutex2var" in expr
            else:
                assert got == list(pat), expr


def _run_packed(steps, prog, key, tweak, data, natural=False):
    """Interpret packed steps (layouts/packed.py) on lists of lanes: A and B halves of one block."""
    spec = prog.spec
    mem = {"key": words_from_bytes(key), "tweak": words_from_bytes(tweak)}
    env = interpret(prog.setup, {"key": mem["key"]})
    words, out = words_from_bytes(data), [0] * spec.nw
    half = spec.nw // 2
    A = B = None

    def rotl(x, n):
        return ((x << n) | (x >> (64 - n))) & MASK64

    def val(t):
        return t.at(0) & MASK64 if isinstance(t, Idx) else env[t]

    for st in steps:
        kind = st[0]
        if kind == "scalar":
            op = st[1]
            x = mem[op.a.array][op.a.index.base] if isinstance(op.a, Mem) else val(op.a)
            env[op.dst] = x if op.kind == "mov" else env[op.dst] ^ x
            continue
        if natural:     # map_program: A lane j = position 2j, B lane j = position 2j + 1
            if kind in ("load", "store"):
                st = (kind, tuple(range(0, spec.nw, 2)), tuple(range(1, spec.nw, 2)))
            elif kind in ("mix", "unmix"):
                st = (kind, st[1], tuple(spec.rot[st[1]][:half]))
            elif kind == "key":
                st = ("key", st[1], st[2][0::2], st[2][1::2])
        if kind == "load":
            A, B = [words[q] for q in st[1]], [words[q] for q in st[2]]
        elif kind == "store":
            for j, q in enumerate(st[1]):
                out[q] = A[j]
            for j, q in enumerate(st[2]):
                out[q] = B[j]
        elif kind == "mix":
            A = [(x + y) & MASK64 for x, y in zip(A, B)]
            B = [rotl(y, c) ^ x for x, y, c in zip(A, B, st[2])]
        elif kind == "unmix":
            B = [rotl(x ^ y, 64 - c) for x, y, c in zip(A, B, st[2])]
            A = [(x - y) & MASK64 for x, y in zip(A, B)]
        elif kind == "permute":
            A = [A[q] for q in st[1]] if st[1] else A
            B = [B[q] for q in st[2]] if st[2] else B
        elif kind == "key":
            A = [(x + st[1] * sum(map(val, ts))) & MASK64 for x, ts in zip(A, st[2])]
            B = [(x + st[1] * sum(map(val, ts))) & MASK64 for x, ts in zip(B, st[3])]
    return bytes_from_words(out)


@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
@pytest.mark.parametrize("natural", [True, False], ids=["map_program", "tracked"])
def test_packed_steps_match_reference(bits, direction, natural):
    spec = Spec("1.2" if bits == 512 else "1.3", bits)
    prog = describe(spec, Options("fly", "full", 1), direction, 1)
    steps = packed_layout.map_program(prog)
    if not natural:
        steps = packed_layout.track(steps, spec)
    rng = random.Random(bits)
    fn = reference.encrypt if direction == "encrypt" else reference.decrypt
    for _ in range(3):
        key, tweak, data = rng.randbytes(spec.block_bytes), rng.randbytes(16), rng.randbytes(spec.block_bytes)
        assert _run_packed(steps, prog, key, tweak, data, natural) == fn(spec, key, tweak, data)


@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_packed_wrong_lane_permutation_is_caught(bits):
    """Mutation check: swapping two lanes of any one round's permutation changes the result."""
    spec = Spec("1.3", bits)
    prog = describe(spec, Options("fly", "full", 1), "encrypt", 1)
    steps = packed_layout.track(packed_layout.map_program(prog), spec)
    rng = random.Random(5)
    key, tweak, data = rng.randbytes(spec.block_bytes), rng.randbytes(16), rng.randbytes(spec.block_bytes)
    want = reference.encrypt(spec, key, tweak, data)
    perms = [i for i, st in enumerate(steps) if st[0] == "permute"]
    assert len(perms) == spec.rounds
    for i in (perms[0], perms[len(perms) // 2], perms[-1]):
        st = steps[i]
        k = 1 if st[1] is not None else 2
        q = list(st[k])
        q[0], q[1] = q[1], q[0]
        bad = list(steps)
        bad[i] = st[:k] + (tuple(q),) + st[k + 1:]
        assert _run_packed(bad, prog, key, tweak, data) != want


def test_packed_moves_the_half_that_is_ready_first():
    """Tracked lanes: encryption permutes only A (ready after the add), decryption only B."""
    spec = Spec("1.3", 1024)
    for direction, moved in (("encrypt", 1), ("decrypt", 2)):
        steps = packed_layout.track(packed_layout.map_program(describe(spec, Options(), direction, 1)), spec)
        perms = [st for st in steps if st[0] == "permute"]
        assert all(st[3 - moved] is None and st[moved] is not None for st in perms)


# --------------------------------------------------------------------------- rendering and CLI

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "threefish_gen", *args], cwd=ROOT, capture_output=True, text=True)


def test_render_cli_emits_contract_and_is_deterministic(tmp_path):
    args = ["render", "--target", "c", "--isa", "avx2", "--layout", "lanes", "--size", "512",
            "--version", "1.3", "--prefix", "tfx_"]
    a, b = _cli(*args, "--out", str(tmp_path / "a")), _cli(*args, "--out", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["tfx.c", "tfx.h"]
    for name in ("tfx.c", "tfx.h"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    h = (tmp_path / "a" / "tfx.h").read_text()
    for fn in ("tfx_encrypt(", "tfx_decrypt(", "tfx_encrypt_blocks(", "tfx_decrypt_blocks("):
        assert fn in h
    c = (tmp_path / "a" / "tfx.c").read_text()
    assert "--isa avx2 --layout lanes" in c
    assert "_mm256_load_si256" not in c and "_mm256_store_si256" not in c  # never aligned access


@pytest.mark.parametrize("args,message", [
    (["--isa", "avx3"], "--isa"),
    (["--isa", "avx2", "--layout", "diagonal"], "--layout"),
    (["--isa", "avx2", "--layout", "hybrid", "--unroll", "loop"], "needs --unroll full"),
    (["--isa", "avx2", "--layout", "packed", "--keys", "table"], "layout packed needs --keys fly --unroll full"),
    (["--isa", "sse2", "--layout", "packed", "--unroll", "loop"], "layout packed needs --keys fly --unroll full"),
    (["--layout", "lanes"], "needs --isa"),
])
def test_render_bad_options_exit_2_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "o"
    p = _cli("render", "--target", "c", "--size", "512", "--version", "1.3", *args, "--out", str(out))
    assert p.returncode == 2
    assert message in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("threefish-gen: error: ")
    assert not out.exists() or not any(out.iterdir())


# --------------------------------------------------------------------------- builds

def _vectors(tmp_path, spec, count=12):
    return runner.vector_file(spec, tmp_path / f"{spec.tag}.txt", count, seed=7)


def _check(variant, build, tmp_path, vectors):
    wd = tmp_path / variant.stem / build.name.replace(" ", "-").replace("+", "_")
    wd.mkdir(parents=True, exist_ok=True)
    return simd.check_simd(variant, build, wd, vectors)


def _require(status_row, variant):
    row = status_row
    assert row.status != "FAIL", row.detail
    if row.status == "SKIPPED":
        pytest.skip(row.detail)
    lacking = SIMD.features(variant) - simd.cpu_flags()
    if lacking:
        assert row.status == "PASS (emulated)"
    return row


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_recommended_simd_variants_pass_the_harness(tmp_path, bits):
    spec = Spec("1.3", bits)
    vec = _vectors(tmp_path, spec)
    build = simd.SIMD_BUILDS[0]        # gcc -O2 (and the C++ syntax check)
    for v in simd_recommended(spec):
        row = _require(_check(v, build, tmp_path, vec), v)
        assert row.checks > 1000


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang not installed")
def test_sanitized_clang_build_of_the_dispatcher_runs_every_path(tmp_path):
    spec = Spec("1.2", 512)
    v = dispatcher(spec)
    row = _require(_check(v, simd.SIMD_BUILDS[3], tmp_path, _vectors(tmp_path, spec, 4)), v)
    paths = row.detail.split("paths ")[1].split(";")[0].split(", ")
    assert paths[0] == "scalar" and len(paths) == simd.cpu_level() + 1


@pytest.mark.skipif(not simd.simde_available(), reason="SIMDe (libsimde-dev) not installed")
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_forced_emulation_with_simde(tmp_path):
    """The path a CPU without AVX-512 takes (e.g. Zen 1 CI): built against SIMDe, run emulated."""
    spec = Spec("1.1", 256)
    v = simd_variant(spec, "avx512", "lanes", Options("fly", "full", 2))
    row = _check(v, simd.SIMD_BUILDS[4], tmp_path, _vectors(tmp_path, spec, 4))
    assert row.status == "PASS (emulated)", row.detail


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_dispatcher_picks_the_forced_path(tmp_path):
    spec = Spec("1.3", 512)
    v = dispatcher(spec)
    src = tmp_path / "src"
    src.mkdir()
    for name, text in render_variant(v).items():
        (src / name).write_text(text)
    main = tmp_path / "main.c"
    main.write_text(f'#include <stdio.h>\n#include <stddef.h>\nconst char *{v.prefix}dispatch_path(size_t n);\n'
                    f'int main(void) {{ printf("%s %s %s\\n", {v.prefix}dispatch_path(1), '
                    f'{v.prefix}dispatch_path(3), {v.prefix}dispatch_path(64)); return 0; }}\n')
    exe = tmp_path / "d"
    subprocess.run(["gcc", "-O1", str(main), str(src / f"{v.stem}.c"), "-o", str(exe)], check=True)
    level = simd.cpu_level()
    want_bulk = {4: "avx512", 3: "avx2"}
    for forced, lv in (("scalar", 0), ("sse2", 1), ("avx2", 3), ("avx512", 4)):
        env = dict(os.environ, THREEFISH_GEN_ISA=forced)
        out = subprocess.run([str(exe)], env=env, capture_output=True, text=True, check=True).stdout.split()
        eff = min(lv, level)
        assert out[0] == "scalar" and out[1] == "scalar"     # single blocks and n < L: scalar
        assert out[2] == want_bulk.get(eff, "avx2" if eff >= 3 else "scalar")


# --------------------------------------------------------------------------- layout packed (one block over the lanes)

PACKED_CASES = [   # (bits, version, isa, build index): every size, every vector shape, each rotation form
    (256, "1.3", "avx512", 0),    # 2x128, vprolvq
    (256, "1.1", "sse2", 3),      # 2x128, split shifts + blend (clang asan+ubsan)
    (512, "1.2", "avx2", 0),      # 2x256, vpsllvq/vpsrlvq
    (512, "1.3", "avx", 3),       # 4x128, split shifts, pshufb where whole bytes (clang asan+ubsan)
    (1024, "1.3", "avx512", 0),   # 2x512, vpermq index permutes
    (1024, "1.1", "avx2", 2),     # 4x256, two-step load/store shuffles (gcc asan+ubsan)
]


@pytest.mark.parametrize("bits,version,isa,build", PACKED_CASES)
def test_packed_variants_pass_the_harness(tmp_path, bits, version, isa, build):
    b = simd.SIMD_BUILDS[build]
    if b.missing():
        pytest.skip(b.missing())
    spec = Spec(version, bits)
    v = simd_variant(spec, isa, "packed", Options("fly", "full", 1))
    row = _require(_check(v, b, tmp_path, _vectors(tmp_path, spec, 6)), v)
    assert row.checks > 1000


@pytest.mark.skipif(not simd.simde_available(), reason="SIMDe (libsimde-dev) not installed")
def test_packed_builds_against_simde(tmp_path):
    spec = Spec("1.3", 512)
    v = simd_variant(spec, "avx512", "packed", Options("fly", "full", 1))
    row = _check(v, simd.SIMD_BUILDS[4], tmp_path, _vectors(tmp_path, spec, 4))
    assert row.status == "PASS (emulated)", row.detail


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_harness_catches_a_wrong_packed_lane_permutation(tmp_path, monkeypatch):
    """Mutation check on real code: one round's lane permutation with two lanes swapped must FAIL."""
    real = packed_layout.track

    def wrong(steps, spec):
        out = real(steps, spec)
        i = [k for k, st in enumerate(out) if st[0] == "permute"][5]
        k = 1 if out[i][1] is not None else 2       # A moves when encrypting, B when decrypting
        q = list(out[i][k])
        q[0], q[1] = q[1], q[0]
        out[i] = out[i][:k] + (tuple(q),) + out[i][k + 1:]
        return out

    monkeypatch.setattr(packed_layout, "track", wrong)
    spec = Spec("1.3", 512)
    v = simd_variant(spec, "avx2" if "avx2" in simd.cpu_flags() else "sse2", "packed", Options("fly", "full", 1))
    row = _check(v, simd.SIMD_BUILDS[0], tmp_path, _vectors(tmp_path, spec, 2))
    if row.status == "SKIPPED":
        pytest.skip(row.detail)
    assert row.status == "FAIL" and "build failed" not in row.detail, row.detail


def test_packed_render_is_deterministic_and_records_the_command(tmp_path):
    args = ["render", "--target", "c", "--isa", "avx2", "--layout", "packed", "--size", "1024",
            "--version", "1.2", "--prefix", "tfp_"]
    a, b = _cli(*args, "--out", str(tmp_path / "a")), _cli(*args, "--out", str(tmp_path / "b"))
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    for name in ("tfp.c", "tfp.h"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    c = (tmp_path / "a" / "tfp.c").read_text()
    assert "--isa avx2 --layout packed --prefix tfp_" in c
    assert "one block over 4 256-bit vectors" in c
    assert "_mm256_sllv_epi64" in c and "_mm256_load_si256" not in c
