"""Constant time as a verify column: the C-ABI variants run under valgrind memcheck
with key, tweak and plaintext marked undefined (client requests in a small harness); memcheck
reports every branch and every memory address that depends on them.  encrypt, decrypt and
*_blocks (several n, in place) are called, and their results compared with the reference
model's (so the row tests the code it scans).  PASS: no such report and right results; FAIL:
the first reports, or the first wrong result;
SKIPPED with the reason where valgrind cannot run the code (AVX-512, 32-bit, Win64)."""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from threefish_gen.gen import reference
from threefish_gen.gen.render import Variant, write_files
from threefish_gen.gen.targets import get as get_target

from .objects import shared_object
from .runner import C_BUILDS, Row, _first_lines, _run
from .sources import sources

MEMCHECK_H = Path("/usr/include/valgrind/memcheck.h")
# C variants: the flags of the gcc -O2 row (verify/runner.py C_BUILDS; c-simd's SIMD_BUILDS has the
# same), so the code scanned is the object that row runs, compiled once for both
OBJECT_CFLAGS = next(b for b in C_BUILDS if b.name == "gcc -O2").cflags


@dataclass(frozen=True)
class CtBuild:
    name: str = "ct (memcheck)"
    run: bool = True
    thorough: bool = True        # valgrind: left out of `check`'s fast default (--thorough runs it)
    # tools whose version decides the row (the result cache's key, verify/shard.py row_key)
    tools: ClassVar[tuple] = ("valgrind", "gcc")

    def missing(self) -> str | None:
        if shutil.which("valgrind") is None or not MEMCHECK_H.exists():
            return "valgrind not installed (Debian package valgrind)"
        if shutil.which("gcc") is None:
            return "gcc not installed"
        return None


BUILD = CtBuild()

CT_MAIN = r"""#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/memcheck.h>
#include "%(header)s"
#define NB %(nb)d
#define MAXN 9
static uint8_t key[NB], tweaks[16 * MAXN], in[NB * MAXN], out[NB * MAXN], seen[NB * MAXN];
static uint8_t plain[NB * MAXN];
/* the reference model's ciphertexts of in[] (block i under tweak i): the calls must compute them */
static const uint8_t expected[NB * MAXN] = { %(expected)s };
static int wrong;

static void secret(void)
{
    size_t i;
    for (i = 0; i < sizeof key; i++) key[i] = (uint8_t)(i * 7 + 1);
    for (i = 0; i < sizeof tweaks; i++) tweaks[i] = (uint8_t)(i * 13 + 5);
    for (i = 0; i < sizeof in; i++) in[i] = plain[i] = (uint8_t)(i * 29 + 3);
    /* from here on memcheck treats them as secret: a branch or an address that depends on
       them is reported ("depends on uninitialised value") */
    VALGRIND_MAKE_MEM_UNDEFINED(key, sizeof key);
    VALGRIND_MAKE_MEM_UNDEFINED(tweaks, sizeof tweaks);
    VALGRIND_MAKE_MEM_UNDEFINED(in, sizeof in);
}

/* compare a copy of the result (declared defined: the comparison is the harness's, not the code's) */
static void expect(const char *what, size_t n, const uint8_t *want)
{
    memcpy(seen, out, n * NB);
    VALGRIND_MAKE_MEM_DEFINED(seen, n * NB);
    if (memcmp(seen, want, n * NB)) {
        printf("ct: wrong result from %%s (n = %%u)\n", what, (unsigned)n);
        wrong++;
    }
}

int main(void)
{
    size_t n;
    secret();
    %(p)sencrypt(key, tweaks, in, out);
    expect("encrypt", 1, expected);
    %(p)sdecrypt(key, tweaks, out, out);
    expect("decrypt (in place)", 1, plain);
    for (n = 0; n <= MAXN; n++) {
        %(p)sencrypt_blocks(key, tweaks, in, out, n);
        expect("encrypt_blocks", n, expected);
        %(p)sdecrypt_blocks(key, tweaks, out, out, n);
        expect("decrypt_blocks (in place)", n, plain);
    }
    VALGRIND_MAKE_MEM_DEFINED(out, sizeof out);
    if (wrong)
        return 1;
    puts("ct: calls done, results right");
    return 0;
}
"""
MAXN = 9


def expected_bytes(spec) -> bytes:
    """The ciphertexts CT_MAIN expects: block i of in[] under tweak i, from the reference model."""
    nb = spec.block_bytes
    key = bytes((i * 7 + 1) & 0xFF for i in range(nb))
    tweaks = bytes((i * 13 + 5) & 0xFF for i in range(16 * MAXN))
    pt = bytes((i * 29 + 3) & 0xFF for i in range(nb * MAXN))
    return b"".join(reference.encrypt(spec, key, tweaks[16 * i:16 * i + 16], pt[nb * i:nb * i + nb])
                    for i in range(MAXN))


def why_not(variant: Variant) -> str | None:
    """Why valgrind cannot run this variant here, or None."""
    t = get_target(variant.target)
    if t.recipe.interface != "c-abi":
        return "not C-ABI code"
    if t.recipe.word_bits != 64:
        return "32-bit code: not run under valgrind here"
    if variant.get("abi", "sysv") != "sysv":
        return "Win64 code: not run under valgrind"
    isa = str(variant.get("isa", ""))
    if "avx512" in isa or any(f.startswith("avx512") for f in t.features(variant)):
        return "valgrind cannot run AVX-512 code"
    if isa == "neon":
        return "AArch64 code"
    return None


def check(variant: Variant, build: CtBuild, workdir: Path, vectors: Path = None) -> Row:
    label = variant.label()
    why = build.missing() or why_not(variant)
    if why:
        return Row(label, build.name, "SKIPPED", why)
    t0 = time.monotonic()
    src = workdir / "src"
    write_files(sources(variant), src)          # verify: the render; check: the user's files
    # the object the gcc -O2 row links (same gcc, flags and text: built once per run, verify/objstore.py)
    rc, out, obj = shared_object(variant, src, workdir, _run, "gcc", OBJECT_CFLAGS)
    if rc:
        return Row(label, build.name, "FAIL", "build failed: " + _first_lines(out), time.monotonic() - t0)
    main = src / "ct_main.c"
    main.write_text(CT_MAIN % dict(header=f"{variant.stem}.h", nb=variant.spec.block_bytes, p=variant.prefix,
                                   expected=", ".join(f"{b:#04x}" for b in expected_bytes(variant.spec))))
    exe = workdir / "ct"
    rc, out = _run(["gcc", "-O1", "-g", "-std=gnu99", f"-I{src}", str(main), str(obj), "-o", str(exe)], workdir)
    if rc:
        return Row(label, build.name, "FAIL", "link failed: " + _first_lines(out), time.monotonic() - t0)
    rc, out = _run(["valgrind", "--tool=memcheck", "--error-exitcode=99", "--track-origins=no",
                    "--leak-check=no", "-q", str(exe)], workdir)
    findings = [ln.split("== ", 1)[-1] for ln in out.splitlines()
                if "uninitialised" in ln or "Uninitialised" in ln]
    if rc == 99 or findings:
        return Row(label, build.name, "FAIL", "secret-dependent: " + "; ".join(findings[:3]), time.monotonic() - t0)
    if rc or "ct: calls done, results right" not in out:
        return Row(label, build.name, "FAIL", _first_lines(out, 4), time.monotonic() - t0)
    return Row(label, build.name, "PASS", "memcheck: no branch or address depends on key, tweak or plaintext; "
               "the calls' results match the reference model", time.monotonic() - t0)
