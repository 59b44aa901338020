#!/usr/bin/env python3
"""Single-block latency of the c-simd ``packed`` layout against scalar C (and the peers).

Builds the ``make bench`` harness (gen/bench.py, bench/bench.c: core clock estimated from a
chain of dependent adds, cycles/byte, medians) with scalar C and packed rows for every size
and ISA the CPU runs, runs it ``--runs`` times in chained mode (single-block encrypt, each
block's input the previous output) and prints the median over the runs of the per-run
medians.  Used to decide whether packed enters the dispatcher (gen/catalog.py).

    python3 scripts/bench_packed.py [--runs 3] [--samples 11] [--sizes 256,512,1024]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gen import bench  # noqa: E402
from gen.catalog import RECOMMENDED_C, simd_variant  # noqa: E402
from gen.render import Variant  # noqa: E402
from gen.spec import get_spec  # noqa: E402
from gen.threefish import Options  # noqa: E402
from verify import simd  # noqa: E402

bench.OBJECT_COMMANDS.setdefault("c-simd", lambda v, src, obj, cc: simd.object_commands(v, src, obj, cc))
bench.REQUIRED_FEATURES.setdefault("c-simd", simd.required_features)


def entries(sizes, version, ccs):
    out = []
    for bits in sizes:
        spec = get_spec(version, bits)
        for cc in ccs:
            o = RECOMMENDED_C[bits]
            base = Variant("c", spec, o)
            out.append((f"scalar c {o.keys}/{o.unroll}/i{o.interleave} {cc}",
                        Variant("c", spec, o, prefix=base.prefix + cc + "_"), cc))
            for isa in simd.ISAS:
                v = simd_variant(spec, isa, "packed", Options("fly", "full", 1))
                out.append((f"packed {isa} {cc}", Variant(v.target, spec, v.options, v.prefix + cc + "_", v.extra), cc))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--samples", type=int, default=11)
    ap.add_argument("--sizes", default="256,512,1024")
    ap.add_argument("--version", default="1.3")
    ap.add_argument("--cc", default="gcc,clang")
    ap.add_argument("--workdir", default="build/bench-packed")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    ents = entries(sizes, a.version, a.cc.split(","))
    exe, notes = bench.build(ents, Path(a.workdir).resolve())
    runs: dict[tuple, list[float]] = {}
    cpu = clock = "?"
    for _ in range(a.runs):
        p = subprocess.run([str(exe), "--mode", "chained", "--samples", str(a.samples)],
                           capture_output=True, text=True, check=True)
        results, info = bench.parse(p.stdout, {n for n, _, _ in ents})
        cpu, clock = info.get("cpu", "?"), info.get("clock", "?")
        for r in results:
            runs.setdefault((r.bits, r.name), []).append(r.cpb)
    print(f"CPU: {cpu}; clock ~{clock} GHz; chained single-block encrypt, cycles/byte; "
          f"median of {a.runs} runs x {a.samples} samples")
    print("(x scalar: median over the runs of the row / the scalar row of the same compiler in the "
          "same run, robust to contention that slows a whole run)")
    for bits in sizes:
        rows = sorted(((statistics.median(v), n, v) for (b, n), v in runs.items() if b == bits))
        scal = {n.split()[-1]: v for m, n, v in rows if n.startswith("scalar c")}
        print(f"\nThreefish-{bits}")
        for m, n, v in rows:
            cc = n.split()[-1]
            rel = ""
            if cc in scal and not n.startswith("scalar") and len(scal[cc]) == len(v):
                rel = f"{statistics.median(x / y for x, y in zip(v, scal[cc])):5.2f}x scalar {cc}"
            print(f"  {n:<36} {m:7.2f} (min {min(v):6.2f})   {rel:<18} runs {' '.join(f'{x:.2f}' for x in v)}")
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
