"""out/ holds exactly what `make gen` renders now: a stale or hand-edited file fails here."""
import re

import pytest

from conftest import ROOT
from gen.targets import variants
from gen.render import render_variant


def out_targets():
    """(target, folder) pairs, read from the Makefile's OUT_TARGETS (what `make gen` renders)."""
    m = re.search(r"^OUT_TARGETS\s*=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert m, "Makefile has no OUT_TARGETS line"
    return [tuple(item.split(":")) for item in m.group(1).split()]


def test_out_folders_are_exactly_the_rendered_targets():
    folders = {d for _, d in out_targets()}
    assert {"c", "c-simd", "nasm", "csharp"} <= folders
    assert sorted(p.name for p in (ROOT / "out").iterdir()) == sorted(folders)


@pytest.mark.parametrize("folder", sorted({d for _, d in out_targets()}))
def test_out_is_fresh(folder):
    want: dict[str, str] = {}
    for target, d in out_targets():
        if d == folder:
            for v in variants("recommended", target):
                want.update(render_variant(v))
    have = {p.name: p.read_text() for p in (ROOT / "out" / folder).iterdir()}
    assert sorted(have) == sorted(want), f"out/{folder} differs in its file list: run `make gen`"
    stale = sorted(n for n in want if have[n] != want[n])
    assert not stale, f"out/{folder} is stale ({len(stale)} files, e.g. {stale[0]}): run `make gen`"
    for name, text in want.items():
        if not name.endswith(".h"):
            assert "threefish-gen render" in text[:2000], f"{name}: header does not record the command"
