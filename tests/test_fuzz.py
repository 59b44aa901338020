"""Differential fuzzing (verify/fuzz.py): scalar C, the SIMD dispatcher and the NASM x64 object of
each size agree on libFuzzer's inputs (THREEFISH_GEN_FUZZ_SECONDS per size, default 10; `make fuzz` runs 60), and a
planted difference is found."""
from __future__ import annotations

import os
import re

import pytest

from threefish_gen.verify import fuzz

pytestmark = pytest.mark.skipif(fuzz.missing() is not None, reason=str(fuzz.missing()))
SECONDS = int(os.environ.get("THREEFISH_GEN_FUZZ_SECONDS", "10"))     # make fuzz: 60 s per size


@pytest.mark.parametrize("bits", fuzz.SIZES)
def test_fuzz_three_implementations_agree(bits, tmp_path):
    exe = fuzz.build(bits, tmp_path)
    ok, tail, execs = fuzz.run(exe, SECONDS, tmp_path / "corpus", tmp_path)
    assert ok, tail
    assert execs > 100, tail


def test_fuzz_finds_a_changed_rotation(monkeypatch, tmp_path):
    """One rotation count changed in the NASM object: the fuzzer traps within seconds.  Threefish-512,
    make test's size of the agreement run above (its dispatcher, 575 KB, builds in half the time of
    the 1.1 MB 256-bit one); the NASM change is caught the same way at every size."""
    real = fuzz.render_variant

    def broken(v):
        files = real(v)
        for name, text in files.items():
            if name.endswith(".asm"):
                new = re.sub(r"(\brol \w+, )(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) ^ 1}", text, count=1)
                assert new != text
                files[name] = new
        return files
    monkeypatch.setattr(fuzz, "render_variant", broken)
    exe = fuzz.build(512, tmp_path)
    ok, tail, _ = fuzz.run(exe, 20, tmp_path / "corpus", tmp_path)
    assert not ok and ("deadly signal" in tail or "ILL" in tail or "trap" in tail.lower()), tail
