"""Skein: the reference model (gen/skein.py) against all 1,368 golden records, and Botan."""
import random
import subprocess
from pathlib import Path

import pytest

from gen import skein
from gen.kat import KAT_DIR, parse
from gen.spec import get_spec


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
