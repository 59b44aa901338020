"""``threefish-gen regalloc``: the allocation strategies side by side for one variant.

For each strategy: registers used, spills, reloads, memory operands used instead of
reloads, moves, instructions (static, per function), code bytes (.text of the object
nasm makes), whether the allocation checker (``gen/asm/check.py``) accepted it and, with
``--bench``, bulk ``encrypt_blocks`` cycles/byte measured with ``verify/harness/speed.c`` (core clock from a dependent add chain, median of samples,
the method of ``make bench``).
"""
from __future__ import annotations

from importlib.resources import files
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from threefish_gen.gen.asm import AllocationCheckError
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.render import Variant, render_variant, write_files
from threefish_gen.gen.targets import get as get_target
from threefish_gen.verify.objects import object_format

SPEED = Path(str(files("threefish_gen.verify") / "harness" / "speed.c"))


def _text_size(obj: Path, fmt: str) -> int:
    data = obj.read_bytes()
    if fmt == "win64":   # COFF: section table after the 20-byte header
        nsec, = struct.unpack_from("<H", data, 2)
        opt, = struct.unpack_from("<H", data, 16)
        for i in range(nsec):
            o = 20 + opt + 40 * i
            if data[o:o + 8].rstrip(b"\0") == b".text":
                return struct.unpack_from("<I", data, o + 16)[0]
        return 0
    from threefish_gen.verify.nasm import text_bytes
    return text_bytes(obj)


def assemble(variant: Variant, work: Path) -> tuple[Path, int]:
    """Render and assemble; (object path, .text bytes)."""
    from threefish_gen.verify.objects import object_commands
    if shutil.which("nasm") is None:
        raise GenError("nasm is not installed (Debian package nasm)")
    src = work / "src"
    write_files(render_variant(variant), src)
    obj = work / f"{variant.stem}.o"
    for cmd in object_commands(variant, src, obj):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            raise GenError(f"nasm failed on {variant.stem}: {(p.stdout + p.stderr).strip().splitlines()[0]}")
    return obj, _text_size(obj, object_format(variant))


def measure(variant: Variant, work: Path, obj: Path | None = None, blocks: int = 64) -> str:  # noqa: C901
    """Bulk encrypt_blocks cycles/byte as text ('5.21'), or why not ('n/a: ...')."""
    from threefish_gen.verify.nasm import runs_32bit_natively
    if object_format(variant) == "win64":
        return "n/a: Win64 code does not run here"
    from threefish_gen.verify.nasm import cpu_flags, required_features
    missing = required_features(variant) - cpu_flags()
    if missing:
        return "n/a: CPU lacks " + ", ".join(sorted(missing))
    m32 = get_target(variant.target).recipe.word_bits == 32
    if m32 and not runs_32bit_natively():
        return "n/a: no native 32-bit execution on this host"
    src = work / "src"
    if obj is None:
        obj, _ = assemble(variant, work)
    exe = work / "speed"
    cmd = ["gcc", "-O2", *(["-m32"] if m32 else []), f"-I{src}", f"-DTF_HEADER=\"{variant.stem}.h\"",
           f"-DTF_PREFIX={variant.prefix}", f"-DTF_BYTES={variant.spec.block_bytes}",
           str(SPEED), str(obj), "-o", str(exe)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return "n/a: build failed: " + (p.stdout + p.stderr).strip().splitlines()[0]
    p = subprocess.run([str(exe), str(blocks)], capture_output=True, text=True, timeout=300)
    if p.returncode:
        return "n/a: run failed"
    return p.stdout.split()[1]


def table(base: Variant, strategies, bench: bool = False) -> list[str]:
    cols = []
    with tempfile.TemporaryDirectory(prefix="tf-regalloc-") as tmp:
        for st in strategies:
            t = get_target(base.target)
            v = t.variant(base.spec, base.options, "", **{**dict(base.extra), "strategy": st})
            col = {"strategy": st}
            try:
                _, alloc = t.allocate(v, "encrypt")          # checked by gen/asm/check.py
            except AllocationCheckError:
                raise                                        # a wrong allocation is never a table cell
            except GenError as e:
                col["error"] = str(e)
                cols.append(col)
                continue
            s = alloc.stats
            col.update(registers=alloc.registers_used(), spills=s["spills"], reloads=s["reloads"],
                       memops=s["memops"], moves=s["moves"], instructions=s["instructions"], check="accepted")
            work = Path(tmp) / st
            work.mkdir()
            try:
                obj, nbytes = assemble(v, work)
                col["code bytes"] = nbytes
                if bench:
                    col["cycles/byte"] = measure(v, work, obj)
                    if col["cycles/byte"].startswith("n/a"):
                        col["why"], col["cycles/byte"] = col["cycles/byte"], "n/a"
            except GenError as e:
                col["code bytes"] = f"n/a ({e})"
            cols.append(col)
    rows = ["registers", "spills", "reloads", "memops", "moves", "instructions", "code bytes", "check"]
    if bench:
        rows.append("cycles/byte")
    labels = {"memops": "memory operands", "registers": "registers used", "check": "allocation check"}
    w = max(14, *(len(c["strategy"]) + 2 for c in cols))
    out = [f"{base.target} Threefish-{base.spec.bits} v{base.spec.version}, "
           f"{', '.join(f'{k} {v}' for k, v in base.extra if k != 'strategy')}, "
           f"keys {base.options.keys}: encrypt_blocks, static counts per function (the loop body "
           f"runs once per block)",
           f"{'':<18}" + "".join(f"{c['strategy']:>{w}}" for c in cols)]
    for r in rows:
        out.append(f"{labels.get(r, r):<18}" + "".join(
            f"{('fails' if 'error' in c else str(c.get(r, '-'))):>{w}}" for c in cols))
    for c in cols:
        if "error" in c:
            out.append(f"{c['strategy']}: {c['error']}")
        elif "why" in c:
            out.append(f"{c['strategy']}: cycles/byte {c['why']}")
    return out
