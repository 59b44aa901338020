"""nasm-x64 --interleave N (issue 13): N independent blocks per pass of the GPR loop of
*_blocks (``*_blocks_interleave``), the n mod N blocks left in the one-block code.  Checked on the
reference model's vectors (n = 0..5: every tail, in place, every misalignment), by the allocation
checker at every size and strategy, by the prover, and by the stack scan of the wipe."""
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from threefish_gen.gen.asm import STRATEGIES
from threefish_gen.gen.asm.check import AllocationCheckError, check, corrupt
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import write_files
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.threefish import Options
from threefish_gen.verify import nasm as vnasm
from threefish_gen.verify import runner

PY = sys.executable
needs_nasm = pytest.mark.skipif(shutil.which("nasm") is None, reason="nasm not installed")
X64 = get_target("nasm-x64")


def variant(bits, il=2, **kw):
    kw.setdefault("abi", "sysv")
    kw.setdefault("strategy", "belady")
    return X64.variant(get_spec("1.3", bits), Options("fly", "full", il), "", **kw)


def cli(*args):
    return subprocess.run([PY, "-m", "threefish_gen", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture(scope="module")
def tails(tmp_path_factory):
    """Vector files: the known answers, 2 random blocks, and encrypt_blocks batches of n = 0..5
    blocks, each a distinct tweak per block (reference model, gen/reference.py)."""
    d = tmp_path_factory.mktemp("tails")
    mp = pytest.MonkeyPatch()
    mp.setattr(runner, "BATCH_SIZES", list(range(6)))
    try:
        return {b: runner.vector_file(get_spec("1.3", b), d / f"{b}.txt", 2, 13) for b in (256, 512, 1024)}
    finally:
        mp.undo()


def test_tail_vectors_hold_the_batches(tails):
    text = tails[512].read_text()
    assert [int(ln.split()[1]) for ln in text.splitlines() if ln.startswith("B ")] == [0, 1, 2, 3, 4, 5]


@needs_nasm
@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("il", [2, 4])
def test_interleaved_blocks_match_the_reference_for_every_tail(bits, il, tails, tmp_path):
    """encrypt_blocks/decrypt_blocks for n = 0..5 (groups of il and every n mod il tail), in
    place and at every misalignment 0..7 of key, tweaks, input and output (verify/harness)."""
    v = variant(bits, il)
    asm = render_variant(v)[f"{v.stem}.asm"]
    assert f"{v.prefix}encrypt_blocks_interleave:" in asm and f"shr r8, {il.bit_length() - 1}" in asm
    row = vnasm.check(v, vnasm.X64_BUILDS[0], tmp_path, tails[bits])
    assert row.status == "PASS", row.detail
    # per batch and direction: 8 misalignments x (result, guards, inputs unchanged, in place for n > 0)
    assert row.checks >= 2 * 8 * (3 + 5 * 4)


@needs_nasm
@pytest.mark.parametrize("bits", [256, 1024])
def test_interleaved_win64_through_ms_abi(bits, tails, tmp_path):
    """The Win64 dispatch (n from the stack, passed on in its own 5th-argument slot), run through
    gcc's ms_abi thunk: callee-saved registers, xmm6-15, stack pointer and DF checked."""
    v = variant(bits)
    row = vnasm.check(v, vnasm.WIN64_BUILDS[1], tmp_path, tails[bits])
    if row.status == "SKIPPED":
        pytest.skip(row.detail)
    assert row.status == "PASS", row.detail


@needs_nasm
def test_win64_interleaved_unwind_tables(tmp_path):
    """Every function of the Win64 file has its RUNTIME_FUNCTION: the single-block wrappers,
    the dispatches (5 pushes + 48 bytes), the interleaved and one-block functions."""
    if shutil.which("objdump") is None or "pe-x86-64" not in subprocess.run(
            ["objdump", "-i"], capture_output=True, text=True).stdout:
        pytest.skip("objdump cannot read pe-x86-64 objects")
    v = variant(512, abi="win64")
    write_files(render_variant(v), tmp_path)
    obj = tmp_path / "t.obj"
    subprocess.run(["nasm", "-f", "win64", "-o", str(obj), str(tmp_path / f"{v.stem}.asm")], check=True)
    dump = subprocess.run(["objdump", "-x", str(obj)], capture_output=True, text=True).stdout
    assert dump.count("Nbr codes") == 8
    assert "alloc small area: rsp = rsp - 0x30" in dump
    assert all(f"push {r}" in dump for r in ("rbx", "rsi", "rdi", "r12", "r13"))


@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_allocation_checker_passes_for_interleave_2(bits, strategy):
    """Both blocks' words, key and tweak words: more than the 14 usable GPRs from 512 bits on;
    belady and linear-scan spill, named fails by design (one line) where the words do not fit.
    The checker passes every allocation and rejects a broken copy."""
    v = variant(bits, strategy=strategy)
    for direction in ("encrypt", "decrypt"):
        try:
            isa, alloc = X64.allocate(v, direction)            # checked (gen/asm/check.py)
        except GenError as e:
            assert strategy == "named" and re.search(r"cannot allocate .* live at", str(e)), e
            continue
        _, tail = X64.allocate(v, direction, tail=True)
        assert alloc.stats["instructions"] > 1.8 * tail.stats["instructions"]
        if bits >= 512 and strategy != "named":
            assert alloc.stats["spills"] > 0 and alloc.slots
        _, ops = X64.lowered(v, direction)
        assert sum(1 for o in ops if o.kind == "store" and o.addr.array == "out") == 2 * v.spec.nw
        corrupt(alloc, "swap:1")           # x0 += x1 becomes x1 += x0: the checker must see it
        with pytest.raises(AllocationCheckError):
            check(ops, isa, alloc)


def _edit_in(text, start, pattern, repl):
    lines = text.splitlines()
    i0 = next(i for i, ln in enumerate(lines) if ln.startswith(start))
    for i in range(i0, len(lines)):
        if re.fullmatch(pattern, lines[i]):
            lines[i] = re.sub(pattern, repl, lines[i])
            return "\n".join(lines) + "\n", i + 1
    raise AssertionError(pattern)


def test_prove_interleaved_and_reject_a_changed_rotation(tmp_path):
    v = variant(512)
    text = render_variant(v)[f"{v.stem}.asm"]
    f = tmp_path / "i2.asm"
    f.write_text(text)
    base = ("prove", "--target", "nasm-x64", "--size", "512", "--constants", "1.3", "--interleave", "2",
            "--abi", "sysv", "--file")
    p = cli(*base, str(f))
    assert p.returncode == 0, p.stdout + p.stderr
    blocks = [ln for ln in p.stdout.splitlines() if "_blocks:" in ln]
    assert len(blocks) == 2 and all("equivalent (4 path(s), 2 loop(s)" in ln for ln in blocks), p.stdout
    # one rotation count changed inside the interleaved loop: encrypt_blocks differs, the single-block
    # functions (the one-block code) stay equivalent
    bad, line = _edit_in(text, f"{v.prefix}encrypt_blocks_interleave:", r"    rol (\w+), 46", r"    rol \1, 47")
    f.write_text(bad)
    p = cli(*base, str(f))
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt_blocks: DIFFERS: output word \d+ \(block \d of 2 per iteration\)"
                     rf".* line {line}: rol \w+, 47", p.stdout), p.stdout
    assert f"{v.prefix}encrypt: equivalent" in p.stdout


@needs_nasm
def test_wipe_clears_the_interleaved_spills(tmp_path):
    """Interleave 2 of Threefish-512 spills key and state words: the stack scan of
    tests/test_trust.py finds none after the calls (3 blocks: one pair and one tail block)."""
    from test_trust import assert_no_words, assert_words, scan_stack
    args = ("--target", "nasm-x64", "--interleave", "2")
    assert_words(scan_stack(tmp_path / "nowipe", (*args, "--no-wipe"), 512))
    assert_no_words(scan_stack(tmp_path / "wipe", args, 512))


@pytest.mark.parametrize("args,pattern", [
    (("--target", "nasm-x64", "--interleave", "0"), r"--interleave must be 1\.\.4, not 0"),
    (("--target", "nasm-x64", "--interleave", "5"), r"--interleave must be 1\.\.4, not 5"),
    (("--target", "nasm-x64", "--interleave", "3"), r"takes --interleave 1 \| 2 \| 4, not 3 .*powers of two"),
    (("--target", "nasm-x64", "--interleave", "2", "--isa", "avx2"), r"--interleave 2 needs --isa gpr"),
    (("--target", "nasm-x64", "--interleave", "2", "--primitive", "skein"), r"skein takes --interleave 1"),
    (("--target", "nasm-x86", "--interleave", "2"), r"nasm-x86 takes --interleave 1, not 2 \(.*XMM"),
])
def test_bad_interleave_is_one_line_exit_2(args, pattern, tmp_path):
    p = cli("render", *args, "--size", "512", "--constants", "1.3", "--out", str(tmp_path))
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(pattern, lines[0]) and "Traceback" not in p.stderr, p.stderr
