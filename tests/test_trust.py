"""Issue 11 (Trust): ``*_blocks`` with n = 0 touches no pointer, and every target wipes what it
spilled or tabled from the key, tweak or state before it returns.

Each test renders through the CLI, builds with the real toolchain and runs the result."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verify import nasm as vnasm

ROOT = Path(__file__).resolve().parent.parent
needs_nasm = pytest.mark.skipif(shutil.which("nasm") is None, reason="nasm not installed")


def render(out: Path, *args) -> tuple[Path, str]:
    """Render one variant with the CLI; (its folder, the header's stem = the symbol prefix)."""
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "render", *args, "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    (h,) = out.glob("*.h")
    return out, h.stem


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert p.returncode == 0, f"{cmd}: {p.stdout}{p.stderr}"
    return p.stdout


NULL_MAIN = """#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "{stem}.h"
{decls}
int main(void)
{{
    /* n = 0: no block, so no pointer may be read or written (all NULL here) */
    {call}encrypt_blocks(NULL, NULL, NULL, NULL, 0);
    {call}decrypt_blocks(NULL, NULL, NULL, NULL, 0);
    puts("n=0 ok");
    return 0;
}}
"""

MS_DECLS = """#define MS __attribute__((ms_abi))
MS void {p}encrypt_blocks(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *, size_t);
MS void {p}decrypt_blocks(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *, size_t);
"""


def build_objects(d: Path, stem: str, args: tuple, cflags: list[str]) -> list[str]:
    """The object files (or C sources) of a rendered variant, for gcc."""
    if "nasm-x86" in args:
        obj = d / "v.o"
        sh(["nasm", "-f", "elf32", "-o", str(obj), str(d / f"{stem}.asm")])
        return [str(obj)]
    if "nasm-x64" in args:
        obj = d / "v.o"
        asm = d / f"{stem}.asm"
        if "win64" in args:   # the Win64 code runs on Linux through ms_abi; unwind data is COFF-only
            text = asm.read_text().split("; Win64 unwind data")[0]
            asm.write_text(text + "\nsection .note.GNU-stack noalloc noexec nowrite progbits\n")
        sh(["nasm", "-f", "elf64", "-o", str(obj), str(asm)])
        return [str(obj)]
    return [str(d / f"{stem}.c")]


def run_exe(exe: Path, args: tuple, env=None) -> str:
    cmd = [str(exe)]
    if "nasm-x86" in args or "-m32" in args:
        how = vnasm.runner_32bit()
        if how is None:
            pytest.skip("no way to run 32-bit programs")
        cmd = how[0] + cmd
    return sh(cmd, env=env)


N0_CASES = [
    ("--target", "c", "--keys", "fly"),
    ("--target", "c", "--keys", "table"),
    ("--target", "c", "--interleave", "3"),
    ("--target", "c-simd", "--isa", "avx2", "--layout", "lanes"),
    ("--target", "c-simd", "--isa", "sse2", "--layout", "hybrid"),
    ("--target", "c-simd", "--isa", "avx2", "--layout", "packed"),
    ("--target", "c-simd", "--isa", "auto"),
    ("--target", "nasm-x64"),
    ("--target", "nasm-x64", "--abi", "win64"),
    ("--target", "nasm-x64", "--isa", "avx2"),
    ("--target", "nasm-x64", "--isa", "avx512"),
    ("--target", "nasm-x64", "--isa", "sse2", "--layout", "packed"),
    ("--target", "nasm-x86"),
    ("--target", "nasm-x86", "--isa", "sse2", "--layout", "packed"),
]


@pytest.mark.parametrize("bits", [256, 1024])
@pytest.mark.parametrize("args", N0_CASES, ids=lambda a: "-".join(a[1::2]).replace("--", ""))
def test_blocks_n0_touches_no_pointer(args, bits, tmp_path):
    """encrypt_blocks/decrypt_blocks(NULL, NULL, NULL, NULL, 0) return without a fault (the key
    used to be loaded before n was tested: a NULL key crashed every *_blocks)."""
    if any(a.startswith("nasm") for a in args) and shutil.which("nasm") is None:
        pytest.skip("nasm not installed")
    d, stem = render(tmp_path / "v", *args, "--size", str(bits), "--version", "1.3")
    cflags = ["-O2", "-std=c99", "-Wall", "-Werror"]
    if "nasm-x86" in args:
        cflags += ["-m32", "-static"]
    objs = build_objects(d, stem, args, cflags)
    prefix = re.search(r"void (\w+)encrypt_blocks\(", (d / f"{stem}.h").read_text()).group(1)
    decls, call = "", prefix
    if "win64" in args:
        decls, call = MS_DECLS.format(p="w_" + prefix), "w_" + prefix
        asm = Path(objs[0]).with_suffix("")   # re-assemble under another prefix: no clash with the header
        src = (d / f"{stem}.asm").read_text().replace(prefix, "w_" + prefix)
        (d / "w.asm").write_text(src)
        sh(["nasm", "-f", "elf64", "-o", str(asm) + "w.o", str(d / "w.asm")])
        objs = [str(asm) + "w.o"]
    (d / "main.c").write_text(NULL_MAIN.format(stem=stem, decls=decls, call=call))
    exe = d / "n0"
    sh(["gcc", *cflags, "-I", str(d), str(d / "main.c"), *objs, "-o", str(exe)])
    env = None
    if "auto" in args:   # every dispatcher path, forced: n = 0 goes through each
        for level in ("scalar", "sse2", "avx", "avx2", "avx512"):
            env = dict(os.environ, **{k: level for k in _dispatch_vars(d / f"{stem}.c")})
            assert run_exe(exe, args, env).strip() == "n=0 ok"
        return
    assert run_exe(exe, args, env).strip() == "n=0 ok"


def _dispatch_vars(c: Path) -> list[str]:
    return sorted(set(re.findall(r'getenv\("(\w+)"\)', c.read_text())))
