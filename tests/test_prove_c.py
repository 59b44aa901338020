"""threefish-gen prove --target c: the C printer's output read as a small language (gen/prove/c.py)."""
import re

import pytest

from test_prove import cli, committed_source, edit_line as _edit_nth, prove
from threefish_gen.gen import targets
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec

SMALL = [v for v in targets.variants("all", "c", [get_spec("1.3", 256)]) if v.primitive == "threefish"]


def _source(v):
    return next(text for name, text in render_variant(v).items() if name.endswith(".c"))


@pytest.mark.parametrize("v", SMALL, ids=lambda v: v.stem)
def test_every_c_variant_of_a_small_set_proves_equivalent(v):
    """keys fly/table, unroll full/loop, interleave 1/2, wipe wrappers: all four functions."""
    rep = prove(v, _source(v))
    assert not rep.failed, "\n".join(rep.lines)
    assert len(rep.lines) == 4 and all(": equivalent (" in line for line in rep.lines), rep.lines
    loops = 2 if v.stem.endswith("_i2") else 1      # the interleaved loop, then the one-block tail
    assert all(f"2 path(s), {loops} loop(s)" in line for line in rep.lines if "_blocks:" in line), rep.lines


def test_no_wipe_variant_proves_equivalent():
    p = cli("prove", "--target", "c", "--size", "512", "--constants", "1.3", "--keys", "table", "--no-wipe")
    assert p.returncode == 0 and p.stdout.count(": equivalent (") == 4, p.stdout + p.stderr


V = targets.variants("recommended", "c", [get_spec("1.3", 256)])[0]     # fly, full, interleave 2


def _prove_file(tmp_path, text):
    f = tmp_path / "edited.c"
    f.write_text(text)
    return cli("prove", "--target", "c", "--size", "256", "--constants", "1.3", "--interleave", "2", "--file", str(f))


def test_committed_render_proves(tmp_path):
    p = _prove_file(tmp_path, committed_source(V))
    assert p.returncode == 0 and p.stdout.count(": equivalent (") == 4, p.stdout + p.stderr


def test_rejects_one_changed_rotation_constant(tmp_path):
    text, line = _edit_nth(committed_source(V), "x1 = (x1 << 14) | (x1 >> 50);", "x1 = (x1 << 15) | (x1 >> 49);")
    p = _prove_file(tmp_path, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{V.prefix}encrypt: DIFFERS: output word \d+ .* line {line}: x1 = \(x1 << 15\)", p.stdout), p.stdout
    assert f"{V.prefix}decrypt: equivalent" in p.stdout


def test_rejects_one_swapped_variable(tmp_path):
    text, line = _edit_nth(committed_source(V), "x0 += x1;", "x0 += x2;")
    p = _prove_file(tmp_path, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{V.prefix}encrypt: DIFFERS: output word \d+ .* line {line}: x0 \+= x2;", p.stdout), p.stdout


def test_rejects_one_dropped_key_injection(tmp_path):
    text, _ = _edit_nth(committed_source(V), "x1 += t0;", None)
    p = _prove_file(tmp_path, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{V.prefix}encrypt: DIFFERS: output word \d+ differs", p.stdout), p.stdout
    assert f"{V.prefix}encrypt_blocks: equivalent" in p.stdout


def test_unreadable_c_is_one_line_and_exit_2(tmp_path):
    text = committed_source(V).replace("x0 += x1;", "x0 += frob(x1, 3) ? 1 : 2;", 1)
    p = _prove_file(tmp_path, text)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    p = _prove_file(tmp_path, "void foo_encrypt(const uint8_t *key)\n{\n    while (1) { }\n}\n")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr


# ------------------------------------------------------------------ the prove row of verify

def test_verify_prove_row_pass_and_fail(tmp_path):
    from threefish_gen.verify import prove as vprove
    from threefish_gen.verify import sources as vsources
    from threefish_gen.verify.matrix import builds_of
    assert vprove.BUILD in builds_of(V) and vprove.BUILD.thorough
    good = vprove.check(V, vprove.BUILD, tmp_path)
    assert good.status == "PASS" and good.checks == 4, good
    files = render_variant(V)
    name = next(n for n in files if n.endswith(".c"))
    files[name], line = _edit_nth(files[name], "x0 += x1;", "x0 += x2;")
    vsources.use(V, files)
    try:
        bad = vprove.check(V, vprove.BUILD, tmp_path)
    finally:
        vsources.clear()
    assert bad.status == "FAIL" and f"line {line}: x0 += x2;" in bad.detail, bad
    skein = [v for v in targets.variants("all", "c-simd", [get_spec("1.3", 256)]) if v.primitive != "threefish"][0]
    row = vprove.check(skein, vprove.BUILD, tmp_path)       # scalar UBI and the SIMD lanes kernels
    assert row.status == "PASS", row
    skein = [v for v in targets.variants("all", "csharp", [get_spec("1.3", 256)]) if v.primitive != "threefish"][0]
    row = vprove.check(skein, vprove.BUILD, tmp_path)       # C# Skein: its Ubi (tests/test_prove_csharp.py)
    assert row.status == "PASS" and "not proved: the glue" in row.detail, row


def test_shared_blocks_kernel_is_inlined_and_proved():
    """Threefish-1024 fly at interleave 1: encrypt_blocks runs each block through encrypt's kernel
    (issue 30: the kernel emitted once, gen/targets/c.py SHARED_MIN_BYTES); prove inlines it, so a
    changed statement of the kernel fails encrypt and encrypt_blocks alike.  512 keeps its own loop."""
    v = targets.variants("recommended", "c", [get_spec("1.3", 1024)])[0]
    src = _source(v)
    head = f"{v.prefix}encrypt_blocks_work("
    body = src[src.index(head):].split("\n}\n", 1)[0]
    assert f"\n        {v.prefix}encrypt_work(key, tweaks, in, out);\n" in body and "x0 += x1;" not in body, body
    rep = prove(v, src)
    assert not rep.failed and all("1 loop(s)" in line for line in rep.lines if "_blocks:" in line), rep.lines
    text, line = _edit_nth(src, "x0 += x1;", "x0 += x2;")
    rep = prove(v, text)
    bad = [ln for ln in rep.lines if "DIFFERS" in ln]
    assert [ln.split(":")[0] for ln in bad] == [f"{v.prefix}encrypt", f"{v.prefix}encrypt_blocks"], rep.lines
    assert all(f"line {line}: x0 += x2;" in ln for ln in bad), bad
    v512 = targets.variants("recommended", "c", [get_spec("1.3", 512)])[0]
    src = _source(v512)
    body = src[src.index(f"{v512.prefix}encrypt_blocks_work("):].split("\n}\n", 1)[0]
    assert "x0 += x1;" in body and f"{v512.prefix}encrypt_work(" not in body
