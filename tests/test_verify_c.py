"""verify/ for scalar C: the fast matrix (part of `make test`), and proof that the harness catches
the bugs it claims to catch (wrong constants, guard overwrite, clobbered input, broken in place)."""
import json
import shutil
import subprocess
from dataclasses import dataclass

import pytest

from threefish_gen.gen.targets import variants
from threefish_gen.gen.render import Variant, render_variant
from threefish_gen.gen.spec import Spec, get_spec
from threefish_gen.gen.threefish import Options
from threefish_gen.verify import ct, matrix, runner
from threefish_gen.verify.runner import HARNESS, vector_file

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@pytest.mark.parametrize("versions, sizes", [(("1.3",), (256,))], ids=["v13-256"])
def test_fast_verify_of_the_recommended_scalar_c(versions, sizes, tmp_path):
    """Recommended options, gcc and clang (-O2, ASan+UBSan), big-endian: no FAIL; the builds whose
    compiler exists PASS; the JSON report says the same as the matrix.  Version 1.3 at 256 bits:
    the other sizes and versions are make verify's own rows (the same variants, set all holds the
    recommended ones, with these builds and these assertions: every row PASS, checks counted), so a
    copy of them here ran the same builds twice in make verify (131 s + 36 s on Zen 4)."""
    chosen = [v for v in variants("recommended", "c") if v.spec.version in versions and v.spec.bits in sizes]
    assert len(variants("recommended", "c")) == 18       # 9 Threefish + 9 Skein (--primitive skein)
    assert len(chosen) == 2 * len(versions) * len(sizes)
    report_path = tmp_path / "report.json"
    rep = matrix.run(chosen, random_count=200, seed=2026, workdir=tmp_path / "w", report_path=report_path)
    # the Skein variants: their checker's builds; Threefish: the C builds + ct (memcheck)
    assert len(rep.rows) == len(chosen) * (len(runner.C_BUILDS) + len(runner.BIG_ENDIAN_BUILDS)) + len(chosen) // 2
    for row in rep.rows:
        emulated = row.build in {b.name for b in runner.BIG_ENDIAN_BUILDS}
        assert row.status in ("PASS (emulated)" if emulated else "PASS", "SKIPPED"), (row.variant, row.build, row.detail)
        if row.status == "SKIPPED":
            assert row.detail, "a SKIPPED row must say why"
        elif row.build != ct.BUILD.name:      # the ct column runs calls, not vector checks
            assert row.checks > 200
    gcc_rows = [r for r in rep.rows if r.build == "gcc -O2"]
    if shutil.which("gcc"):
        assert all(r.status == "PASS" for r in gcc_rows)
    data = json.loads(report_path.read_text())
    assert sorted((r["variant"], r["build"], r["status"]) for r in data["rows"]) == \
        sorted((r.variant, r.build, r.status) for r in rep.rows)


@dataclass(frozen=True, eq=False)
class WrongRotation(Spec):
    """A spec whose rotation table differs in one entry (the code under test gets this one)."""

    @property
    def rot(self):
        rows = [list(r) for r in super().rot]
        rows[3][1] = (rows[3][1] + 1) % 64
        return tuple(tuple(r) for r in rows)


@needs_gcc
def test_harness_catches_a_wrong_rotation_constant(tmp_path):
    good = get_spec("1.3", 512)
    bad = Variant("c", WrongRotation("1.3", 512), Options(), "tf_")
    vectors = vector_file(good, tmp_path / "v.txt", 5, seed=1)
    row = runner.check_c(bad, runner.C_BUILDS[0], tmp_path / "w", vectors)
    assert row.status == "FAIL" and "FAIL" in row.detail
    ok = runner.check_c(Variant("c", good, Options(), "tf_"), runner.C_BUILDS[0], tmp_path / "w2", vectors)
    assert ok.status == "PASS"


# Shims wrap a correct variant (prefix good_) as bad_*, each breaking one promise of the contract.
SHIM = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "good.h"
#define B {B}
void bad_encrypt(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out)
{{ {encrypt} }}
void bad_decrypt(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out)
{{ good_decrypt(key, tweak, in, out); }}
void bad_encrypt_blocks(const uint8_t *key, const uint8_t *tweaks, const uint8_t *in, uint8_t *out, size_t n)
{{ {encrypt_blocks} }}
void bad_decrypt_blocks(const uint8_t *key, const uint8_t *tweaks, const uint8_t *in, uint8_t *out, size_t n)
{{ good_decrypt_blocks(key, tweaks, in, out, n); }}
"""
SHIM_H = """#include <stddef.h>
#include <stdint.h>
void bad_encrypt(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *);
void bad_decrypt(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *);
void bad_encrypt_blocks(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *, size_t);
void bad_decrypt_blocks(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *, size_t);
"""
GOOD_ONE = "good_encrypt(key, tweak, in, out);"
GOOD_MANY = "good_encrypt_blocks(key, tweaks, in, out, n);"


@needs_gcc
@pytest.mark.parametrize("name, encrypt, encrypt_blocks, expect", [
    ("correct shim", GOOD_ONE, GOOD_MANY, None),
    ("writes one byte past the output", GOOD_ONE + " out[B] ^= 1;", GOOD_MANY, "guard"),
    ("writes one byte before a batch", GOOD_ONE, GOOD_MANY + " if (n) out[-1] ^= 1;", "guard"),
    ("changes its input", GOOD_ONE + " if (in != out) ((uint8_t *)in)[1] ^= 1;", GOOD_MANY, "input"),
    ("clobbers the output first (breaks in place)",
     "memset(out, 0, B); " + GOOD_ONE, GOOD_MANY, "in place"),
    ("ignores the per-block tweaks after the first",
     GOOD_ONE, "for (size_t i = 0; i < n; i++) good_encrypt(key, tweaks, in + i * B, out + i * B);", "n="),
])
def test_harness_catches_contract_violations(tmp_path, name, encrypt, encrypt_blocks, expect):
    spec = get_spec("1.2", 256)
    files = render_variant(Variant("c", spec, Options(), "good_"))
    stem = next(k for k in files if k.endswith(".c"))[:-2]
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.h").write_text(files[stem + ".h"])
    (src / "good.c").write_text(files[stem + ".c"].replace(f'#include "{stem}.h"', '#include "good.h"'))
    (src / "bad.h").write_text(SHIM_H)
    (src / "bad.c").write_text(SHIM.format(B=spec.block_bytes, encrypt=encrypt, encrypt_blocks=encrypt_blocks))
    vectors = vector_file(spec, tmp_path / "v.txt", 3, seed=7)
    exe = tmp_path / "h"
    b = subprocess.run(["gcc", "-O1", "-std=c99", f"-I{src}", '-DTF_HEADER="bad.h"', "-DTF_PREFIX=bad_",
                        f"-DTF_BYTES={spec.block_bytes}", str(HARNESS), str(src / "good.c"), str(src / "bad.c"),
                        "-o", str(exe)], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    r = subprocess.run([str(exe), str(vectors)], capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    if expect is None:
        assert r.returncode == 0 and " 0 failed" in out, out
    else:
        assert r.returncode == 1 and "FAIL" in out and expect in out, (name, out[-2000:])
