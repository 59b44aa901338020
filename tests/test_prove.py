"""threefish-gen prove: translation validation of the emitted text (gen/prove/)."""
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from threefish_gen.gen import targets
from threefish_gen.gen.prove import prove_text
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import all_specs, get_spec

PY = sys.executable
OUT = ROOT / "out"


def cli(*args):
    return subprocess.run([PY, "-m", "threefish_gen", *args], cwd=ROOT, capture_output=True, text=True)


def recommended(target):
    """The recommended Threefish variants (Skein: tests/test_prove_skein.py)."""
    return [(target, v) for v in targets.variants("recommended", target, all_specs()) if v.primitive == "threefish"]


def committed_source(v):
    """The committed render of a recommended variant (tests/test_out.py keeps it fresh); a
    variant out/ does not ship (e.g. nasm-x64 Threefish-256 --interleave 1): rendered here."""
    folder = {"nasm": "nasm", "c": "c", "c#": "csharp"}[targets.get(v.target).recipe.language]
    suffix = {"nasm": ".asm", "c": ".c", "c#": ".cs"}[targets.get(v.target).recipe.language]
    name = v.prefix if folder == "csharp" else v.stem        # C#: one file per class
    path = OUT / folder / f"{name}{suffix}"
    return path.read_text() if path.exists() else render_variant(v)[f"{name}{suffix}"]


def edit_line(text, old, new, nth=1):
    """Replace the nth line equal (stripped) to old (new None: drop it); returns (text, 1-based line number)."""
    lines = text.splitlines()
    hits = [i for i, ln in enumerate(lines) if ln.strip() == old]
    i = hits[nth - 1]
    if new is None:
        del lines[i]
    else:
        lines[i] = lines[i].replace(old, new)
    return "\n".join(lines) + "\n", i + 1


def prove(v, text):
    t = targets.get(v.target)
    return prove_text(v, t.recipe.language, t.recipe.word_bits, text)


def gpr_sysv(v):
    return v.get("isa", "gpr") == "gpr" and v.get("abi") == "sysv"


# v1.3 only: the other versions differ in constants, not in the code's shape, and `make verify`
# proves every variant of every version (its prove row)
NASM = [(t, v) for t, v in recommended("nasm-x64") + recommended("nasm-x86") if v.spec.version == "1.3"]


@pytest.mark.parametrize("target,v", NASM, ids=lambda x: x.stem if hasattr(x, "stem") else x)
def test_recommended_nasm_proves_equivalent(target, v):
    """GPR (System V, Win64), AVX2 and AVX-512 lanes, x86 cdecl (words in xmm)."""
    rep = prove(v, committed_source(v))
    assert not rep.failed, "\n".join(rep.lines)
    assert len(rep.lines) == 4 and all(": equivalent (" in line for line in rep.lines)
    split = v.get("isa") in ("avx2", "avx512") or v.options.interleave > 1
    blocks = [line for line in rep.lines if "_blocks:" in line]
    # *_blocks: the n = 0 path and the loop path; with lanes (or --interleave) also the one-block tail (2 loops)
    assert all(("4 path(s), 2 loop(s)" if split else "2 path(s), 1 loop(s)") in line for line in blocks), blocks


def test_cli_proves_a_fresh_render():
    p = cli("prove", "--target", "nasm-x64", "--size", "512", "--constants", "1.3", "--abi", "sysv")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count(": equivalent (") == 4
    assert "proved equivalent" in p.stdout


# ------------------------------------------------------------------ rejections: edit the text

def _variant(bits=1024, abi="sysv", **extra):
    t = targets.get("nasm-x64")
    return t.variant(get_spec("1.3", bits), None, abi=abi, strategy="belady", **extra)


def _edit(text, pattern, repl, after=r"^\.loop:"):
    """Replace the first match of pattern (a whole line) after the line matching ``after``."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if re.search(after, ln))
    for i in range(start, len(lines)):
        if re.fullmatch(pattern, lines[i]):
            new = re.sub(pattern, repl, lines[i]) if repl is not None else None
            changed = i + 1
            if new is None:
                del lines[i]
            else:
                lines[i] = new
            return "\n".join(lines) + "\n", changed
    raise AssertionError(f"no line matches {pattern}")


def _prove_file(tmp_path, v, text):
    f = tmp_path / "edited.asm"
    f.write_text(text)
    return cli("prove", "--target", "nasm-x64", "--size", str(v.spec.bits), "--constants", "1.3",
               "--interleave", str(v.options.interleave), "--abi", v.get("abi"), "--file", str(f))


def test_rejects_one_changed_rotation_count(tmp_path):
    v = _variant(256)
    text, line = _edit(committed_source(v), r"    rol r(\w+), 14", r"    rol r\1, 15")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt: DIFFERS: output word \d+ .* line {line}: rol r\w+, 15", p.stdout), p.stdout
    assert f"{v.prefix}decrypt: equivalent" in p.stdout       # decrypt is untouched


def test_rejects_one_swapped_register(tmp_path):
    v = _variant(256)
    # x0 += x1 becomes x0 += x2 in the first round of encrypt
    text, line = _edit(committed_source(v), r"    add r8, r9", "    add r8, r10")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt_blocks: DIFFERS: .* line {line}: add r8, r10", p.stdout), p.stdout


def test_rejects_one_dropped_spill_reload(tmp_path):
    v = _variant(1024)
    src = committed_source(v)
    # the first reload of a spilled word after the first rotate of the encrypt loop
    text, line = _edit(src, r"    mov r\w+, qword \[rsp \+ \d+\]", None, after=r"^\s+rol ")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"{v.prefix}encrypt: DIFFERS" in p.stdout and f"{v.prefix}encrypt_blocks: DIFFERS" in p.stdout
    assert f"{v.prefix}decrypt: equivalent" in p.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    f = tmp_path / "x.asm"
    f.write_text("bits 64\nsection .text\nglobal foo_encrypt\nfoo_encrypt:\n    frobnicate rax\n")
    p = cli("prove", "--target", "nasm-x64", "--size", "256", "--constants", "1.3", "--file", str(f))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    p = cli("prove", "--target", "nasm-x64", "--size", "256", "--constants", "1.3", "--file", str(tmp_path / "none"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr


def test_rejects_lanes_reading_the_wrong_tweaks(tmp_path):
    """The AVX2 tweaks' transpose taking t0 from the odd words (vpunpcklqdq -> vpunpckhqdq: every
    lane gets its block's t1 as t0)."""
    v = _variant(512, isa="avx2")
    text, line = _edit(committed_source(v), r"    vpunpcklqdq (ymm\d+, ymm\d+, ymm\d+)", r"    vpunpckhqdq \1",
                       after=r"^; t0 = unpcklo\(tw0, tw1\)$")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt_blocks: DIFFERS: output word \d+ \(block \d of 4 per iteration\)",
                     p.stdout), p.stdout
    assert f"{v.prefix}encrypt: equivalent" in p.stdout      # the single block runs the scalar code


def test_rejects_a_tail_that_starts_at_the_wrong_block(tmp_path):
    """The scalar tail after the AVX-512 groups of 8 starting one tweak too far (shl 4 -> shl 5)."""
    v = _variant(256, isa="avx512")
    text, line = _edit(committed_source(v), r"    shl rsi, 4", "    shl rsi, 5", after=r"^\.tail:")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt_blocks: DIFFERS: loop at line \d+: enters with in, tweak and out at "
                     "different blocks", p.stdout), p.stdout


def test_rejects_a_loop_that_skips_a_block(tmp_path):
    """The GPR loop advancing out by two blocks."""
    v = _variant(512)
    text, line = _edit(committed_source(v), r"    add (\w+), 0x40", r"    add \1, 0x80", after=r"; out \+= 64")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"{v.prefix}encrypt_blocks: DIFFERS: loop at line" in p.stdout, p.stdout


def test_rejects_x86_with_a_changed_rotation(tmp_path):
    t = targets.get("nasm-x86")
    v = t.variant(get_spec("1.3", 256), None, abi="cdecl", strategy="belady")
    text, line = _edit(committed_source(v), r"    psllq (xmm\d+), 14", r"    psllq \1, 13")
    f = tmp_path / "x86.asm"
    f.write_text(text)
    p = cli("prove", "--target", "nasm-x86", "--size", "256", "--constants", "1.3", "--file", str(f))
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt: DIFFERS: .* line {line}: psllq xmm\d+, 13", p.stdout), p.stdout


# ------------------------------------------------------------------ --unroll loop: the cycle loop is run

def test_loop_proves_equivalent_and_follows_its_back_branch(tmp_path):
    """--unroll loop: the prover runs the cycle loop by its (concrete) counter inside the block
    loop's induction and finds all four functions equivalent; a bound one cycle short (cmp with
    0x80 instead of 0x90: 8 cycles of 9) and a jump back that is gone (one cycle) are both found:
    it follows the branch in the text."""
    from threefish_gen.gen.threefish import Options
    v = targets.get("nasm-x64").variant(get_spec("1.3", 512), Options("fly", "loop", 1), abi="sysv")
    src = render_variant(v)[f"{v.stem}.asm"]

    def prove_loop(text):
        f = tmp_path / "edited.asm"
        f.write_text(text)
        return cli("prove", "--target", "nasm-x64", "--size", "512", "--constants", "1.3", "--unroll", "loop",
                   "--interleave", "1", "--abi", "sysv", "--file", str(f))
    p = prove_loop(src)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count(": equivalent (") == 4
    for pattern, repl in ((r"    cmp (r\w+), 0x90", r"    cmp \1, 0x80"), (r"    jne \.cycle", None)):
        text, line = _edit(src, pattern, repl, after=r"^\.cycle:")
        p = prove_loop(text)
        assert p.returncode == 1, p.stdout + p.stderr
        assert f"{v.prefix}encrypt: DIFFERS" in p.stdout and f"{v.prefix}decrypt: equivalent" in p.stdout


def test_x86_loop_proves_equivalent():
    """nasm-x86 --unroll loop: the decrypt counter counts down below zero, so its ring operands
    [esp + edx + disp] and its cmp are 32-bit wrapping arithmetic (an address mod 2^32, ZF of the
    32-bit difference); the prover reads them so and finds every function equivalent."""
    p = cli("prove", "--target", "nasm-x86", "--size", "256", "--constants", "1.3", "--unroll", "loop",
            "--interleave", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count(": equivalent (") == 4


def test_sums_made_by_merge_are_the_terms_of_the_sorting_normal_form():
    """add and mul build a sum's pairs by merging the operands' sorted pairs (gen/prove/terms.py
    _merge, _lin_sorted) where no shr or and term is in them: each result must be the very term
    (``is``: same id, same hash-cons entry) that the general path (a dict of coefficients, the
    rotate fusions, a sort by term id) makes of the same operands, and its value the sum's.  Random
    chains of adds, subs and multiplies (0, -1, 2^63, shifts) over words, rotates, xors, shr and
    and terms, so that both paths, cancellations and fusions all happen."""
    import random

    from threefish_gen.gen.prove import terms as T
    rnd = random.Random(5)
    with T.scope():
        xs = [T.var(f"x{i}") for i in range(6)]
        pool = xs + [T.rotl(xs[0], 7), T.xor(xs[1], xs[2]), T.shr(xs[3], 5), T.and_(xs[4], 0xff00), T.const(3)]
        env = {f"x{i}": rnd.getrandbits(64) for i in range(6)}
        merged = 0
        for _ in range(4000):
            a, b = rnd.choice(pool), rnd.choice(pool)
            if rnd.random() < 0.7:
                if rnd.random() < 0.3:
                    b = T.neg(b)
                plain = T._plain(a.scope, a) and T._plain(b.scope, b)
                r = T.add(a, b)
                ca, ka = T._lin_parts(a)
                for t, k in T._lin_parts(b)[0].items():
                    ca[t] = ca.get(t, 0) + k
                ref = T._lin(ca, ka + T._lin_parts(b)[1])
                want = (T.evaluate(a, env) + T.evaluate(b, env)) & T.MASK
            else:
                k = rnd.choice([0, 1, -1, 3, 1 << 63, 1 << 59, 1 << 5, rnd.getrandbits(64)])
                plain = T._plain(a.scope, a)
                r = T.mul(a, k)
                ca, c = T._lin_parts(a)
                ref = T._lin({t: v * k for t, v in ca.items()}, c * k)
                want = T.evaluate(a, env) * k & T.MASK
            assert r is ref, (T.show(r), T.show(ref))
            assert T.evaluate(r, env) == want
            if r.op == "lin":
                ids = [t.id for t, _ in r.args[0]]
                assert ids == sorted(set(ids)) and all(0 < k <= T.MASK for _, k in r.args[0])
            merged += plain
            if r.op != "const" and len(pool) < 400:
                pool.append(r)
        assert merged > 400 and 4000 - merged > 400     # both paths ran, many times
