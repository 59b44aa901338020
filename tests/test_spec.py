"""The spec tables equal the ones published in verify/kat/constants.md, entry by entry."""
import re

from threefish_gen.gen.kat import KAT_DIR
from threefish_gen.gen.spec import C240, PERMUTATION, ROTATIONS, ROUNDS, VERSIONS, get_spec

DOC = (KAT_DIR / "constants.md").read_text()


def _rotation_tables(title: str) -> dict[int, tuple]:
    part = DOC.split(title, 1)[1].split("\n### ", 1)[0]
    tables = {}
    for nw, body in re.findall(r"Threefish-\d+ \(Nw = (\d+)\):\n\n(.*?)(?:\n\n|$)", part, re.S):
        rows = [ln for ln in body.splitlines() if re.match(r"\| \d+ \|", ln)]
        tables[int(nw)] = tuple(tuple(int(c) for c in ln.strip("| ").split(" | ")[1:]) for ln in rows)
    return tables


def test_rotation_constants_match_document():
    v11 = _rotation_tables("### Rotation constants R[d][j], v1.1")
    v12 = _rotation_tables("### Rotation constants R[d][j], v1.2")
    assert set(v11) == set(v12) == {4, 8, 16}
    for nw in (4, 8, 16):
        assert len(v11[nw]) == 8 and all(len(r) == nw // 2 for r in v11[nw])
        assert ROTATIONS["1.1"][nw] == v11[nw]
        assert ROTATIONS["1.2"][nw] == v12[nw]
        assert ROTATIONS["1.3"][nw] == v12[nw]


def test_permutation_matches_document():
    part = DOC.split("### Word permutation", 1)[1].split("\n### ", 1)[0]
    rows = dict(re.findall(r"\| (\d+) \| ([\d ]+) \|", part))
    assert {int(k): tuple(map(int, v.split())) for k, v in rows.items()} == PERMUTATION


def test_c240_and_rounds_match_document():
    part = DOC.split("### Key-schedule parity constant C240", 1)[1]
    found = dict(re.findall(r"\| (1\.\d) \| (0x[0-9A-F]+) \|", part))
    assert {v: int(c, 16) for v, c in found.items()} == C240
    assert "| rounds Nr (256/512/1024) | 72 / 72 / 80 |" in DOC
    assert ROUNDS == {4: 72, 8: 72, 16: 80}
    for v in VERSIONS:
        assert [get_spec(v, b).subkeys for b in (256, 512, 1024)] == [19, 19, 21]
