"""The reference model (interpreter of the description) against every published vector,
for every option set of the description."""
import pytest

from threefish_gen.gen import reference
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


def test_versions_differ_on_the_same_input():
    """Each version's constants matter: the zero vector differs between all three."""
    outs = {}
    for spec in SPECS:
        if spec.bits == 512:
            outs[spec.version] = reference.encrypt(spec, bytes(64), bytes(16), bytes(64))
    assert len(set(outs.values())) == 3
