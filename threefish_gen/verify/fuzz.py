"""Differential fuzzing: a libFuzzer harness (threefish_gen/verify/fuzz/fuzz.c, clang
-fsanitize=fuzzer,address,undefined) links the scalar C, the SIMD C dispatcher and the NASM x64
(System V) object of one size and compares them on random key, tweak, data, n (0..40), in place
and misaligned.  The corpus is kept under build/fuzz/corpus-<bits>.

    python3 -m verify.fuzz --seconds 60 [--size 512 ...]     (make fuzz SECONDS=60)
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from threefish_gen.gen.render import render_variant, write_files
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.targets import TARGETS

from .objects import object_commands
from .proc import run as run_command

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SOURCE = HERE / "fuzz" / "fuzz.c"
SIZES = (256, 512, 1024)
# the three implementations compared, picked by their recipes (checker, word size): scalar C, the
# SIMD C run-time dispatcher (--isa auto), the 64-bit NASM code; (checker, word bits, options, prefix)
PARTS = (("c", 64, {}, "fz_c_"), ("simde", 64, {"isa": "auto"}, "fz_simd_"), ("nasm", 64, {}, "fz_nasm_"))


def _target(checker: str, word_bits: int):
    return next(t for t in TARGETS.values() if t.recipe.checker == checker and t.recipe.word_bits == word_bits)


def missing() -> str | None:
    for tool, pkg in (("clang", "clang"), ("nasm", "nasm")):
        if shutil.which(tool) is None:
            return f"{tool} not installed (Debian package {pkg})"
    return None


def build(bits: int, workdir: Path, version: str = "1.3") -> Path:
    """Render the three implementations and link the fuzzer; returns the executable."""
    spec = get_spec(version, bits)
    src = workdir / "src"
    heads = []
    for checker, word_bits, extra, prefix in PARTS:
        t = _target(checker, word_bits)
        v = t.variant(spec, None, prefix, **extra)
        write_files(render_variant(v), src)
        heads.append((v, t))
    objs = []
    for v, t in heads:
        obj = workdir / f"{v.stem}.o"
        cmds = object_commands(v, src, obj, cc="clang")
        if t.recipe.language == "c":     # C parts are compiled with the sanitizers too
            cmds = [[*c[:1], "-g", "-fsanitize=address,undefined", *c[1:]] for c in cmds]
        for cmd in cmds:
            rc, out = run_command(cmd, workdir, 600, what="fuzz build")
            if rc:
                raise RuntimeError(f"fuzz build failed: {' '.join(cmd)}\n{out[-2000:]}")
        objs.append(str(obj))
    exe = workdir / f"fuzz-{bits}"
    (c, _), (s, _), (n, _) = heads
    cmd = ["clang", "-O1", "-g", "-fsanitize=fuzzer,address,undefined", f"-I{src}",
           f'-DFZ_C_HEADER="{c.stem}.h"', f'-DFZ_SIMD_HEADER="{s.stem}.h"', f'-DFZ_NASM_HEADER="{n.stem}.h"',
           f"-DFZ_C={c.prefix}", f"-DFZ_SIMD={s.prefix}", f"-DFZ_NASM={n.prefix}", f"-DFZ_BYTES={spec.block_bytes}",
           str(SOURCE), *objs, "-o", str(exe)]
    rc, out = run_command(cmd, workdir, 600, what="fuzz link")
    if rc:
        raise RuntimeError(f"fuzz link failed:\n{out[-2000:]}")
    return exe


def run(exe: Path, seconds: int, corpus: Path, workdir: Path) -> tuple[bool, str, int]:
    """Run the fuzzer for ``seconds``: (no difference found, its output's tail, executions)."""
    corpus.mkdir(parents=True, exist_ok=True)
    rc, out = run_command([str(exe), f"-max_total_time={seconds}", "-max_len=8192", "-print_final_stats=1",
                           f"-artifact_prefix={workdir}/", str(corpus)], workdir, seconds + 300, what="fuzz run")
    execs = 0
    for ln in out.splitlines():
        if ln.startswith("stat::number_of_executed_units:"):
            execs = int(ln.split(":")[-1])
    return rc == 0, "\n".join(out.splitlines()[-15:]), execs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m threefish_gen.verify.fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--size", type=int, action="append", choices=SIZES)
    ap.add_argument("--workdir", type=Path, default=ROOT / "build" / "fuzz")
    a = ap.parse_args(argv)
    why = missing()
    if why:
        print(f"fuzz: {why}", file=sys.stderr)
        return 2
    status = 0
    for bits in a.size or SIZES:
        wd = a.workdir / str(bits)
        wd.mkdir(parents=True, exist_ok=True)
        exe = build(bits, wd)
        ok, tail, execs = run(exe, a.seconds, a.workdir / f"corpus-{bits}", wd)
        print(f"fuzz {bits}: {'no difference' if ok else 'DIFFERENCE or crash'} in {execs} executions "
              f"({a.seconds} s)")
        if not ok:
            print(tail)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
