"""The reference model (interpreter of the description) against every published vector,
for every option set of the description."""
import pytest

from threefish_gen.gen import reference
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.kat import threefish_records
from threefish_gen.gen.spec import all_specs
from threefish_gen.gen.threefish import KEYS, UNROLL, Options, describe

SPECS = all_specs()
OPTION_SETS = [Options(k, u) for k in KEYS for u in UNROLL]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: f"{o.keys}-{o.unroll}")
def test_threefish_vectors(spec, options):
    recs = threefish_records(spec.version, spec.bits)
    assert len(recs) >= 9
    for r in recs:
        assert reference.encrypt(spec, r["key"], r["tweak"], r["plaintext"], options) == r["ciphertext"]
        assert reference.decrypt(spec, r["key"], r["tweak"], r["ciphertext"], options) == r["plaintext"]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
@pytest.mark.parametrize("blocks", [2, 3])
@pytest.mark.parametrize("unroll", UNROLL)
def test_interleaved_blocks_match_single_blocks(spec, blocks, unroll):
    """B blocks interleaved in one program, each with its own tweak, equal B separate calls."""
    recs = threefish_records(spec.version, spec.bits)
    key = recs[1]["key"]
    tweaks = [r["tweak"] for r in recs[:blocks]]
    pts = [r["plaintext"] for r in recs[:blocks]]
    opts = Options("fly", unroll, blocks)
    for direction, fn in (("encrypt", reference.encrypt), ("decrypt", reference.decrypt)):
        prog = describe(spec, opts, direction, blocks)
        got = reference.run(prog, key, b"".join(tweaks), b"".join(pts))
        want = b"".join(fn(spec, key, t, p) for t, p in zip(tweaks, pts))
        assert got == want


@pytest.mark.parametrize("spec", [s for s in SPECS if s.version == "1.3"], ids=lambda s: s.tag)
@pytest.mark.parametrize("cycles", [1, 2, 3])
@pytest.mark.parametrize("keys", KEYS)
def test_loop_passes_of_one_two_and_three_cycles_match_the_vectors(spec, cycles, keys):
    """--unroll loop with passes of one cycle (tweak words rotated each pass: NASM's words in
    XMM), two (rotated the other way; Threefish-256/512's ninth cycle after the loop, with the
    tweak words rotated) and three (no rotation; Threefish-1024's tenth cycle after the loop),
    encrypt and decrypt of one and two interleaved blocks: the published vectors; other pass
    lengths refused."""
    recs = threefish_records(spec.version, spec.bits)
    key = recs[1]["key"]
    for blocks in (1, 2):
        tweaks, pts = [r["tweak"] for r in recs[:blocks]], [r["plaintext"] for r in recs[:blocks]]
        cts = [reference.encrypt(spec, key, t, p) for t, p in zip(tweaks, pts)]
        opts = Options(keys, "loop", blocks)
        enc = describe(spec, opts, "encrypt", blocks, cycles)
        dec = describe(spec, opts, "decrypt", blocks, cycles)
        assert reference.run(enc, key, b"".join(tweaks), b"".join(pts)) == b"".join(cts)
        assert reference.run(dec, key, b"".join(tweaks), b"".join(cts)) == b"".join(pts)
    with pytest.raises(GenError):
        describe(spec, Options(keys, "loop"), "encrypt", 1, 4)


def test_versions_differ_on_the_same_input():
    """Each version's constants matter: the zero vector differs between all three."""
    outs = {}
    for spec in SPECS:
        if spec.bits == 512:
            outs[spec.version] = reference.encrypt(spec, bytes(64), bytes(16), bytes(64))
    assert len(set(outs.values())) == 3


def test_pass_lengths_per_kernel_kind():
    """Scalar kernels loop in passes of three cycles (Threefish-1024: its tenth cycle after the
    loop); vector kernels of Threefish-1024 in five passes of two, with no round after the loop
    (Threefish-256/512: three).  Each program encrypts the published vector."""
    from threefish_gen.gen.threefish import loop_cycles
    for spec in (s for s in SPECS if s.version == "1.3"):
        assert loop_cycles(spec) == 3
        assert loop_cycles(spec, vector=True) == (2 if spec.bits == 1024 else 3)
        rec = threefish_records("1.3", spec.bits)[1]
        for vector in (False, True):
            prog = describe(spec, Options("fly", "loop", 1), "encrypt", 1, loop_cycles(spec, vector))
            assert reference.run(prog, rec["key"], rec["tweak"], rec["plaintext"]) == rec["ciphertext"]
            # the notes name the rounds: "round 79" only where a round follows the loop unrolled
            unrolled_tail = "round 79" in "\n".join(map(str, prog.body))
            assert unrolled_tail == (spec.bits == 1024 and not vector), (spec.bits, vector)
