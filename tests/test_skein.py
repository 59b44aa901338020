"""All 1,368 Skein golden records (v1.1, v1.2, v1.3) through Skein built on the reference."""
import pytest

from threefish_gen.gen.kat import KAT_DIR, parse
from threefish_gen.gen.spec import get_spec
from skein import skein


@pytest.mark.parametrize("version", ["1.1", "1.2", "1.3"])
def test_skein_golden(version):
    recs = parse(KAT_DIR / f"skein_v{version}_golden.kat",
                 ("version", "state_bits", "digest_bits", "msg_bits", "message", "digest"))
    assert len(recs) == 456
    bad = []
    for r in recs:
        assert r["version"] == version
        spec = get_spec(version, r["state_bits"])
        got = skein(spec, r["message"], int(r["msg_bits"]), int(r["digest_bits"]), r.get("mac_key", b""))
        if got != r["digest"]:
            bad.append(r["source"])
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"
