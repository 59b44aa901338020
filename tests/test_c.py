"""Scalar C target: properties of the printed C that the speed of both compilers depends on."""
import re
import shutil
import subprocess

import pytest

from threefish_gen.gen.dsl import Idx, Loop
from threefish_gen.gen.render import Variant, render_variant, write_files
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.threefish import Options, describe


@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("direction", ["encrypt", "decrypt"])
@pytest.mark.parametrize("blocks", [1, 2])
def test_fly_loop_body_adds_no_counter_term(bits, direction, blocks):
    """In the loop form every subkey word comes from a ring; no operand is affine in the
    loop counter (clang 14 turns such a state word into partial sum + counter terms and
    rebuilds it at every use)."""
    prog = describe(get_spec("1.3", bits), Options("fly", "loop", blocks), direction, blocks)
    loops = [item for item in prog.body if isinstance(item, Loop)]
    assert loops
    for lp in loops:
        for op in lp.body:
            assert not (isinstance(op.a, Idx) and op.a.scale), op.text()


def _function(asm: str, name: str) -> str:
    m = re.search(rf"^[0-9a-f]+ <{name}>:\n(.*?)(?:\n\n|\Z)", asm, re.S | re.M)
    assert m, name
    return m.group(1)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump not installed")
@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("bits,interleave", [(256, 1), (256, 2), (512, 1), (1024, 1)])
def test_blocks_loop_stays_scalar(tmp_path, cc, bits, interleave):
    """encrypt_blocks of the fly/full variants uses no vector registers at -O2 (clang would
    otherwise vectorize the blocks loop: two blocks per SSE register, 1.3-1.55x slower)."""
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} not installed")
    v = Variant("c", get_spec("1.3", bits), Options("fly", "full", interleave), prefix="t_")
    write_files(render_variant(v), tmp_path)
    obj = tmp_path / "t.o"
    subprocess.run([cc, "-O2", "-std=c99", "-c", str(tmp_path / f"{v.stem}.c"), "-o", str(obj)], check=True)
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)], check=True,
                         capture_output=True, text=True).stdout
    for fn in ("t_encrypt_blocks", "t_decrypt_blocks"):
        body = _function(asm, fn + "_work")   # the public function: the work, then the wipe
        one = fn.replace("_blocks", "_work")
        if f"<{one}>" in body:         # 1024 bits: each block through the single-block kernel (issue 30)
            assert body.count("\n") < 60, body
            body += _function(asm, one)
        assert body.count("\n") > 100
        assert "%xmm" not in body, f"{cc} vectorized {fn}"
