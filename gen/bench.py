"""``make bench``: cycles/byte of every rendered C-ABI variant beside peer libraries.

Every variant is rendered, compiled to an object with its own prefix (per compiler),
and linked with ``bench/bench.c`` (the timing harness; its header comment documents
the method) and, where installed, Botan 2 and Crypto++ (``bench/peers_*.cpp``).
Method, in short: these VMs have no cycle counters and the TSC is not the core
clock, so the core clock is estimated around every sample from a chain of
dependent adds (1 cycle each); cycles/byte = ns/byte x GHz; medians of 21 samples.
Two modes: ``bulk`` (encrypt_blocks over 4 KiB, in L1) and ``chained`` (single-block
encrypt, each block's input the previous output: latency).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import GenError
from .render import Variant, render_variant, write_files

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench"

# Target name -> fn(variant, src_dir, obj_path, cc) -> list of commands producing obj_path.
OBJECT_COMMANDS: dict = {}
# Target name -> fn(variant) -> set of /proc/cpuinfo flags the variant needs.
REQUIRED_FEATURES: dict = {}


def _c_object(variant: Variant, src_dir: Path, obj: Path, cc: str) -> list[list[str]]:
    return [[cc, "-O2", "-std=c99", "-c", str(src_dir / f"{variant.stem}.c"), "-o", str(obj)]]


OBJECT_COMMANDS["c"] = _c_object


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@dataclass
class Result:
    name: str
    bits: int
    mode: str
    cpb: float
    cpb_min: float
    ghz: float
    kind: str  # "variant" or "peer"


def _run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode:
        raise GenError(f"bench build failed: {' '.join(map(str, cmd))[:120]}: "
                       f"{(p.stderr or p.stdout).strip().splitlines()[:1]}")
    return p.stdout


def build(entries: list[tuple[str, Variant, str]], workdir: Path) -> tuple[Path, list[str]]:
    """Compile (row name, variant, compiler) entries and link the bench binary."""
    workdir.mkdir(parents=True, exist_ok=True)
    objs, lines, notes = [], [], []
    flags = cpu_flags()
    for name, v, cc in entries:
        need = REQUIRED_FEATURES.get(v.target, lambda _v: set())(v)
        if need - flags:
            notes.append(f"SKIPPED {name}: CPU lacks {', '.join(sorted(need - flags))}")
            continue
        if shutil.which(cc) is None:
            notes.append(f"SKIPPED {name}: {cc} not installed")
            continue
        src = workdir / "src" / v.stem
        write_files(render_variant(v), src)
        obj = workdir / f"{v.stem}.o"
        for cmd in OBJECT_COMMANDS[v.target](v, src, obj, cc):
            _run(cmd)
        objs.append(str(obj))
        lines.append(f'BENCH_VARIANT("{name}", "{v.prefix}", {v.spec.block_bytes}, '
                     f"{v.prefix}encrypt, {v.prefix}encrypt_blocks)")
    inc = workdir / "variants.inc"
    inc.write_text("\n".join(lines) + "\n")
    defs, peer_objs, libs = [], [], []
    if Path("/usr/include/botan-2/botan/threefish_512.h").exists():
        defs.append("-DHAVE_BOTAN")
        peer_objs.append(_peer(workdir, "peers_botan.cpp", ["-isystem", "/usr/include/botan-2"]))
        libs.append("-lbotan-2")
    else:
        notes.append("SKIPPED Botan peer: libbotan-2-dev not installed")
    if Path("/usr/include/crypto++/threefish.h").exists() or Path("/usr/include/cryptopp/threefish.h").exists():
        defs.append("-DHAVE_CRYPTOPP")
        peer_objs.append(_peer(workdir, "peers_cryptopp.cpp", []))
        libs.append("-lcryptopp")
    else:
        notes.append("SKIPPED Crypto++ peer: libcrypto++-dev not installed")
    bench_o = workdir / "bench.o"
    _run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", f'-DBENCH_VARIANTS="{inc}"', *defs,
          "-c", str(BENCH_DIR / "bench.c"), "-o", str(bench_o)])
    exe = workdir / "bench"
    _run(["g++" if peer_objs else "gcc", str(bench_o), *objs, *peer_objs, *libs, "-o", str(exe)])
    return exe, notes


def _peer(workdir: Path, src: str, extra: list[str]) -> str:
    obj = workdir / (Path(src).stem + ".o")
    _run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", *extra, "-c", str(BENCH_DIR / src), "-o", str(obj)])
    return str(obj)


def parse(output: str, variant_names: set[str]) -> tuple[list[Result], dict]:
    results, info = [], {"fail": [], "info": []}
    for line in output.splitlines():
        f = line.split("\t")
        if f[0] == "ROW":
            results.append(Result(f[1], int(f[2]), f[3], float(f[4]), float(f[5]), float(f[6]),
                                  "variant" if f[1] in variant_names else "peer"))
        elif f[0] in ("CPU", "CLOCK", "UNIT"):
            info[f[0].lower()] = f[1]
        elif f[0] in ("FAIL", "PEERFAIL"):
            info["fail"].append(" ".join(f[1:]))
        elif f[0] == "INFO":
            info["info"].append(" ".join(f[1:]))
    return results, info


def table(results: list[Result], info: dict, stream=sys.stdout) -> None:
    unit = info.get("unit", "cpb")
    print(f"\nCPU: {info.get('cpu', '?')}; estimated core clock {info.get('clock', '?')} GHz; "
          f"unit: {'cycles/byte' if unit == 'cpb' else unit}; median of samples", file=stream)
    for bits in sorted({r.bits for r in results}):
        for mode in ("bulk", "chained"):
            rows = sorted((r for r in results if r.bits == bits and r.mode == mode), key=lambda r: r.cpb)
            if not rows:
                continue
            peers = [r for r in rows if r.kind == "peer"]
            best_peer = min(peers, key=lambda r: r.cpb) if peers else None
            title = f"Threefish-{bits} {mode}" + (f" (best peer: {best_peer.name} {best_peer.cpb:.2f})"
                                                  if best_peer else " (no peer)")
            print(f"\n{title}", file=stream)
            print(f"  {'row':<44} {unit:>7} {'min':>7}  {'vs best peer':>12}", file=stream)
            for r in rows:
                ratio = f"{r.cpb / best_peer.cpb:.2f}x" if best_peer else "-"
                print(f"  {r.name:<44} {r.cpb:7.2f} {r.cpb_min:7.2f}  {ratio:>12}", file=stream)
    # clang vs gcc for the same variant
    pairs = []
    for r in results:
        if r.kind == "variant" and r.name.endswith(" gcc"):
            twin = next((c for c in results if c.name == r.name[:-4] + " clang"
                         and c.mode == r.mode and c.bits == r.bits), None)
            if twin:
                pairs.append((r, twin))
    if pairs:
        print("\nclang / gcc (same C source)", file=stream)
        for g, c in pairs:
            print(f"  Threefish-{g.bits:<5} {g.name[:-4]:<32} {g.mode:<8} {c.cpb / g.cpb:5.2f}x", file=stream)
    for f in info["fail"]:
        print(f"FAIL {f}", file=stream)


def run(entries: list[tuple[str, Variant, str]], quick: bool = False, samples: int | None = None,
        filters: tuple = (), workdir: Path = Path("build/bench"), json_path: Path | None = None,
        stream=sys.stdout) -> list[Result]:
    exe, notes = build(entries, Path(workdir).resolve())
    cmd = [str(exe)]
    if quick:
        cmd.append("--quick")
    if samples:
        cmd += ["--samples", str(samples)]
    for f in filters:
        cmd += ["--filter", f]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0,):
        raise GenError(f"bench run failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[:200]}")
    results, info = parse(p.stdout, {name for name, _, _ in entries})
    print("method: core clock estimated around each sample from a chain of dependent adds "
          "(1 cycle each; no perf counters here, TSC != core clock); cycles/byte = ns/byte x GHz; "
          "medians. bulk = encrypt_blocks over 4 KiB (L1); chained = single-block encrypt, "
          "each block's input the previous output.", file=stream)
    table(results, info, stream)
    for n in notes:
        print(n, file=stream)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps({"cpu": info.get("cpu"), "clock_ghz": info.get("clock"),
                                               "results": [r.__dict__ for r in results],
                                               "notes": notes, "fail": info["fail"]}, indent=2) + "\n")
    return results


def default_entries(sizes=(256, 512, 1024), version: str = "1.3") -> list[tuple[str, Variant, str]]:
    """Every scalar C option set of one version (the constants do not change speed), per compiler."""
    from .catalog import c_option_sets
    from .spec import get_spec
    entries = []
    for bits in sizes:
        spec = get_spec(version, bits)
        for o in c_option_sets(spec):
            for cc in ("gcc", "clang"):
                base = Variant("c", spec, o)
                v = Variant("c", spec, o, prefix=base.prefix + cc + "_")
                entries.append((f"c {o.keys}/{o.unroll}/i{o.interleave} {cc}", v, cc))
    return entries


