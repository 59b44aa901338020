"""``make bench``: cycles/byte of every target beside scalar C and the peer libraries.

Every C-ABI variant (scalar C, SIMD C, NASM x64) is rendered, built to an object with its
own prefix (per compiler; verify/objects.py says how, the descriptor's ``features`` which CPU
flags it needs: what this CPU lacks gets a SKIPPED line), and linked into one program with
``harness/bench.c`` (the timing harness; its header comment documents the method) and, where
installed, Botan 2 and Crypto++ (``harness/peers_*.cpp``).  Which variants each target
contributes, and under which row names, comes from tools/target_tools.py.  The C# classes are
measured by ``dotnet.py`` (a .NET program of its own) and shown in a section after the C-ABI
tables.

Method, in short: cycles come from the hardware cycle counter where the machine has one
(perf_event_open), else (these VMs) from the core clock estimated around every sample from a
chain of dependent adds (1 cycle each; cycles/byte = ns/byte x GHz); the header says which.
The rows of one size and mode are timed alternately, sample by sample (round k times every
row once: A B A B ...), 3 passes of 7 rounds; a row's figure is the median of its samples,
with the min and the spread (p75 - p25) / median; every ratio is the median of per-round
ratios (``paired.py``), and a row or ratio whose spread exceeds the goal it is judged against
is marked ``noisy: N%`` and never reported as meeting it.  Two modes: ``bulk``
(encrypt_blocks over 4 KiB, in L1) and ``chained`` (single-block encrypt, each block's input
the previous output: latency).

Every table has, per row, the ratio to scalar C (the recommended option set built with gcc,
always measured) and to the best peer of the same size and mode, and for SIMD C the
operation counts its layout reports; every generated row its bound on this CPU's port model and
``x bound`` (``row_bounds.py``) and its code size (``src KiB``: the rendered files; ``code KiB``:
the machine code of its functions in the object built here, ``tools/codesize.py``), and each size
and mode a ``dispatcher / best variant`` line.
Everything also goes to ``build/bench.json`` and a markdown summary ``build/bench.md``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.render import Variant, render_variant, write_files
from threefish_gen.gen.targets.c import RECOMMENDED as RECOMMENDED_C
from threefish_gen.verify.objects import object_commands

from ..codesize import kib
from ..target_tools import all_tools, tools_for
from . import paired
from . import rust_rows
from .row_bounds import annotate as bounds_annotate
from .row_bounds import bound_text, dispatcher_lines, dispatcher_names, row_bounds, this_model

# package data (pyproject: "threefish_gen.tools.bench" = ["harness/*", ...]), a folder on disk in any pip install
BENCH_DIR = Path(str(files("threefish_gen.tools.bench") / "harness"))


def required_features(v: Variant) -> set[str]:
    return registry.get(v.target).features(v)


@dataclass
class Result:
    name: str
    bits: int
    mode: str
    cpb: float
    cpb_min: float
    ghz: float
    kind: str  # "variant" or "peer"
    target: str = ""
    vs_c: float | None = None
    vs_peer: float | None = None
    ops: dict = field(default_factory=dict)
    bound: float | None = None      # c/B on this CPU's port model (row_bounds.py)
    bound_by: str = ""              # what binds: ports, 'front end' or 'latency'
    x_bound: float | None = None    # cpb / bound
    spread: float | None = None     # (p75 - p25) / median of the samples (paired.py)
    vs_c_spread: float | None = None   # spread of the per-round ratios behind vs_c
    vs_peer_spread: float | None = None
    samples: dict = field(default_factory=dict, repr=False)   # {(pass, round): cpb}
    src_bytes: int | None = None    # bytes of the variant's rendered files (tools/codesize.py)
    code_bytes: int | None = None   # machine-code bytes of its functions in the object bench built
    code_functions: dict = field(default_factory=dict)   # {symbol: bytes} behind code_bytes
    code_note: str = ""             # how code_bytes was counted, or why there is none


def json_row(r: Result) -> dict:
    """A result as bench.json stores it: samples as [[pass, round, cpb], ...]."""
    d = {k: v for k, v in r.__dict__.items() if k != "samples"}
    d["samples"] = [[p, k, c] for (p, k), c in sorted(r.samples.items())]
    return d


# --------------------------------------------------------------------------- rows

def _cname(o) -> str:
    return f"{o.keys}/{o.unroll}/i{o.interleave}"


def reference_name(bits: int) -> str:
    """The scalar C row every ratio is taken against: the recommended option set, gcc."""
    from threefish_gen.gen.spec import get_spec
    from threefish_gen.gen.targets.c import TARGET as C
    return tools_for(C.name).bench_name(C.variant(get_spec("1.3", bits), RECOMMENDED_C[bits]), "gcc")


def _with_cc(v: Variant, cc: str) -> Variant:
    base = Variant(v.target, v.spec, v.options, "", v.extra)
    return Variant(v.target, v.spec, v.options, base.prefix + cc + "_", v.extra)


def default_entries(sizes=(256, 512, 1024), version: str = "1.3", targets=None,
                    quick: bool = False) -> list[tuple[str, Variant, str]]:
    """(row name, variant, compiler) for every C-ABI target asked for, from the targets' tools'
    bench_variants (tools/target_tools.py); the reference scalar C row of each size is always there (every ratio needs
    it).  --quick keeps the recommended sets so that a cold run stays short."""
    from threefish_gen.gen.spec import get_spec
    asked = set(registry.names() if not targets else targets)
    entries: list[tuple[str, Variant, str]] = []
    seen: set = set()
    for bits in sizes:
        spec = get_spec(version, bits)
        for t in all_tools():
            for v, cc in t.bench_variants(spec, quick, asked):
                name = tools_for(v.target).bench_name(v, cc)
                if (name, bits) in seen:
                    continue
                seen.add((name, bits))
                # NASM objects and Rust crates keep their names (a Rust prefix is the crate's name)
                entries.append((name, v if cc in ("nasm", rust_rows.COMPILER) else _with_cc(v, cc), cc))
    return entries


def target_notes(targets=None) -> list[str]:
    """SKIPPED lines for whole targets (or parts) that this machine cannot time, with the reason."""
    asked = set(registry.names() if not targets else targets)
    return [n for t in all_tools() if (n := t.bench_note(asked))]


def op_counts(v: Variant) -> dict:
    """Operation counts per block the layout reports ({} where the target reports none)."""
    return tools_for(v.target).op_counts(v)


def ops_text(ops: dict) -> str:
    """'vec 134 (add 62 xor 36 rot 36) shuf 9 shift 0; 8 blk/pass' from an op_counts dict."""
    if not ops:
        return ""
    g = ops.get
    shuf = g("shuffle", 0) + g("shuffle (transpose)", 0)
    arith = {"add": g("add/sub", 0), "xor": g("xor", 0), "rot": g("rotate", 0), "shift": g("shifts", 0)}
    vec = sum(arith.values()) + shuf
    inner = " ".join(f"{k} {n:.4g}" for k, n in arith.items() if n)
    txt = f"vec {vec:.4g} ({inner} shuf {shuf:.4g})"
    if "blocks per pass" in ops:
        txt += f"; {ops['blocks per pass']:g} blk/pass"
    if ops.get("static"):
        txt += "; loop body"
    return txt


# --------------------------------------------------------------------------- build

def _run(cmd, cwd=None, timeout=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GenError(f"bench build timed out after {timeout:.0f} s: {' '.join(map(str, cmd))[:120]}") from None
    if p.returncode:
        raise GenError(f"bench build failed: {' '.join(map(str, cmd))[:120]}: "
                       f"{(p.stderr or p.stdout).strip().splitlines()[:1]}")
    return p.stdout


def _object(name: str, v: Variant, cc: str, workdir: Path, timeout: float | None = None) -> Path:
    """Render and build one variant; objects are cached by the hash of sources and commands
    (``timeout``: seconds each build command may take; GenError past it)."""
    return _built(v, cc, workdir, timeout)[0]


def _built(v: Variant, cc: str, workdir: Path, timeout: float | None = None) -> tuple[Path, dict[str, str]]:
    """(object, rendered files {name: text}) of one variant (:func:`_object`)."""
    src = workdir / "src" / v.stem
    files = render_variant(v)
    write_files(files, src)
    probe = object_commands(v, src, Path("OBJ"), cc)
    h = hashlib.sha256(repr(probe).encode())
    for fname in sorted(files):
        h.update(fname.encode() + b"\0" + files[fname].encode() + b"\0")
    obj = workdir / "obj" / f"{v.stem}-{h.hexdigest()[:16]}.o"
    if not obj.exists():
        obj.parent.mkdir(parents=True, exist_ok=True)
        tmp = obj.with_suffix(".tmp.o")
        for cmd in object_commands(v, src, tmp, cc):
            _run(cmd, timeout=timeout)
        os.replace(tmp, obj)
    return obj, files


# How the code bytes of each kind of row are counted, or why a row has none (docs/bench.md).
CODE_HOW = {"gcc": "gcc -O2 -std=c99", "clang": "clang -O2 -std=c99", "nasm": "nasm -f elf64"}
NO_CODE_RUST = ("Rust: all Rust rows are one static library (the shim crate, the rendered crates, Rust's "
                "std; cargo release profile), inlined across crates: no object of the row's own")


def sizes_of(v: Variant, cc: str, obj: Path | None, files: dict[str, str]) -> dict:
    """Result fields src_bytes, code_bytes, code_functions, code_note of one built row."""
    from ..codesize import code_size, source_bytes
    out = {"src_bytes": source_bytes(files), "code_bytes": None, "code_functions": {}, "code_note": ""}
    if obj is None:
        out["code_note"] = NO_CODE_RUST
        return out
    try:
        got = code_size(obj)
    except GenError as e:
        out["code_note"] = str(e)
        return out
    out.update(code_bytes=got.total, code_functions=got.functions,
               code_note=f"{got.how} of the object's functions ({CODE_HOW.get(cc, cc)})")
    return out


def build(entries: list[tuple[str, Variant, str]], workdir: Path,
          stream=sys.stderr) -> tuple[Path, list[str], dict, dict]:
    """Build (row name, variant, compiler) entries (in parallel, cached) and link the bench
    binary.  Returns (program, SKIPPED/FAIL notes, {(row name, bits): op counts},
    {(row name, bits): code size fields} (:func:`sizes_of`))."""
    workdir.mkdir(parents=True, exist_ok=True)
    lines, notes, ops, todo, sizes = [], [], {}, [], {}
    from threefish_gen.verify.runner import cpu_flags
    flags = cpu_flags()
    for name, v, cc in entries:
        need = required_features(v)
        if need - flags:
            ops_note = ops_text(op_counts(v))    # e.g. NEON on x86: its static op counts instead
            notes.append(f"SKIPPED {name} (Threefish-{v.spec.bits}): CPU lacks {', '.join(sorted(need - flags))}"
                         + (f"; not timed, static ops per block: {ops_note}" if ops_note else ""))
            continue
        if shutil.which(cc) is None:
            notes.append(f"SKIPPED {name} (Threefish-{v.spec.bits}): {cc} not installed")
            continue
        if cc == rust_rows.COMPILER and (why := rust_rows.missing()):
            notes.append(f"SKIPPED {name} (Threefish-{v.spec.bits}): {why}")
            continue
        todo.append((name, v, cc))
    rust = [e for e in todo if e[2] == rust_rows.COMPILER]
    todo = [e for e in todo if e[2] != rust_rows.COMPILER]
    print(f"bench: building {len(todo) + len(rust)} variants ...", file=stream, flush=True)

    def one(item):
        name, v, cc = item
        try:
            obj, files = _built(v, cc, workdir)
            return item, obj, sizes_of(v, cc, obj, files), None
        except GenError as e:
            return item, None, None, str(e)

    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        built = list(pool.map(one, todo))
    objs = []
    for (name, v, cc), obj, size, err in built:
        if err:
            notes.append(f"FAIL {name} (Threefish-{v.spec.bits}): {err}")
            continue
        objs.append(str(obj))
        ops[(name, v.spec.bits)] = op_counts(v)   # names repeat across sizes
        sizes[(name, v.spec.bits)] = size
        lines.append(bench_line(name, v))
    libs: list[str] = []
    if rust:       # one static library for all Rust rows (two would each carry Rust's std)
        try:
            lib, native = rust_rows.build([v for _, v, _ in rust], workdir / "cargo")
            objs.append(str(lib))
            libs = native
            for name, v, cc in rust:
                ops[(name, v.spec.bits)] = op_counts(v)
                sizes[(name, v.spec.bits)] = sizes_of(v, cc, None, render_variant(v))
                lines.append(bench_line(name, v, rust_rows.symbol_prefix(v)))
        except GenError as e:
            notes += [f"FAIL {name} (Threefish-{v.spec.bits}): {e}" for name, v, _ in rust]
    exe, link_notes = link(lines, objs, workdir, libs=libs)
    return exe, notes + link_notes, ops, sizes


def bench_line(name: str, v: Variant, prefix: str | None = None) -> str:
    """The variants.inc line (harness/bench.c) of one built variant (``prefix``: its functions'
    prefix where it is not the variant's, as for the Rust shim's)."""
    p = v.prefix if prefix is None else prefix
    return (f'BENCH_VARIANT("{name}", "{p}", {v.spec.block_bytes}, '
            f"{p}encrypt, {p}encrypt_blocks)")


def link(lines: list[str], objs: list[str], workdir: Path, peers: bool = True,
         libs: list[str] | None = None) -> tuple[Path, list[str]]:
    """Compile harness/bench.c over the variants.inc ``lines`` and link it with the objects (and,
    with ``peers``, the peer libraries that are installed; ``libs``: more linker arguments, the
    Rust static library's).  Returns (program, SKIPPED notes)."""
    extra = list(libs or [])
    notes: list[str] = []
    inc = workdir / "variants.inc"
    inc.write_text("\n".join(lines) + "\n")
    defs, peer_objs, libs = [], [], []
    if peers and Path("/usr/include/botan-2/botan/threefish_512.h").exists():
        defs.append("-DHAVE_BOTAN")
        peer_objs.append(_peer(workdir, "peers_botan.cpp", ["-isystem", "/usr/include/botan-2"]))
        libs.append("-lbotan-2")
    elif peers:
        notes.append("SKIPPED Botan peer: libbotan-2-dev not installed")
    if peers and (Path("/usr/include/crypto++/threefish.h").exists() or Path("/usr/include/cryptopp/threefish.h").exists()):
        defs.append("-DHAVE_CRYPTOPP")
        peer_objs.append(_peer(workdir, "peers_cryptopp.cpp", []))
        libs.append("-lcryptopp")
    elif peers:
        notes.append("SKIPPED Crypto++ peer: libcrypto++-dev not installed")
    bench_o = workdir / "bench.o"
    _run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", f'-DBENCH_VARIANTS="{inc}"', *defs,
          "-c", str(BENCH_DIR / "bench.c"), "-o", str(bench_o)])
    exe = workdir / "bench"
    _run(["g++" if peer_objs else "gcc", str(bench_o), *objs, *peer_objs, *libs, *extra, "-o", str(exe)])
    return exe, notes


def _peer(workdir: Path, src: str, extra: list[str]) -> str:
    obj = workdir / (Path(src).stem + ".o")
    _run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", *extra, "-c", str(BENCH_DIR / src), "-o", str(obj)])
    return str(obj)


def parse(output: str, variant_names: set[str], pass_no: int = 0) -> tuple[list[Result], dict]:
    """The records of one run of the timing program; SAMPLE records become each row's samples,
    keyed (pass_no, round)."""
    results, info = [], {"fail": [], "info": []}
    samples: dict = {}
    for line in output.splitlines():
        f = line.split("\t")
        if f[0] == "SAMPLE":
            samples.setdefault((f[1], int(f[2]), f[3]), {})[(pass_no, int(f[4]))] = float(f[5])
        elif f[0] == "ROW":
            r = Result(f[1], int(f[2]), f[3], float(f[4]), float(f[5]), float(f[6]),
                       "variant" if f[1] in variant_names else "peer")
            r.samples = samples.get((r.name, r.bits, r.mode), {})
            r.spread = round(paired.spread(r.samples.values()), 4) if r.samples else None
            results.append(r)
        elif f[0] in ("CPU", "CLOCK", "UNIT", "CLOCKSRC"):
            info[f[0].lower()] = f[1]
        elif f[0] in ("FAIL", "PEERFAIL"):
            info["fail"].append(" ".join(f[1:]))
        elif f[0] == "INFO":
            info["info"].append(" ".join(f[1:]))
    return results, info


def merge_passes(runs: list[tuple[list[Result], dict]]) -> tuple[list[Result], dict]:
    """One result per (row, size, mode): the median, min and spread of all its samples (the
    passes' samples together, keyed (pass, round)); where a run gave no samples, the median of
    the passes' medians and the least minimum."""
    import statistics
    info = dict(runs[0][1])
    info["fail"] = sorted({f for _, i in runs for f in i["fail"]})
    clocks = [float(i["clock"]) for _, i in runs if i.get("clock")]
    if clocks:
        info["clock"] = f"{statistics.median(clocks):.4f}"
    groups: dict = {}
    for results, _ in runs:
        for r in results:
            groups.setdefault((r.name, r.bits, r.mode), []).append(r)
    merged = []
    for rs in groups.values():
        m = Result(rs[0].name, rs[0].bits, rs[0].mode, statistics.median(r.cpb for r in rs),
                   min(r.cpb_min for r in rs), statistics.median(r.ghz for r in rs), rs[0].kind)
        m.samples = {k: c for r in rs for k, c in r.samples.items()}
        if m.samples:
            m.cpb, m.cpb_min = statistics.median(m.samples.values()), min(m.samples.values())
            m.spread = round(paired.spread(m.samples.values()), 4)
        merged.append(m)
    info["passes"] = len(runs)
    return merged, info


def measure(cmd: list[str], names: set[str], passes: int, label: str = "the C-ABI rows",
            stream=sys.stderr) -> tuple[list[Result], dict, int]:
    """Run the bench program ``cmd`` ``passes`` times; (merged results, info, exit status:
    0, or 3 when a variant failed its check: FAIL lines say which)."""
    runs, rc = [], 0
    for i in range(passes):
        if stream is not None:
            print(f"bench: timing {label} (pass {i + 1}/{passes}) ...", file=stream, flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 3):
            raise GenError(f"bench run failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[:200]}")
        rc = max(rc, p.returncode)
        runs.append(parse(p.stdout, names, i))
    results, info = merge_passes(runs)
    return results, info, rc


# --------------------------------------------------------------------------- ratios and tables

def annotate(results: list[Result], targets: dict, ops: dict, sizes: dict | None = None) -> None:
    """Fill target, op counts, code sizes (``sizes``: build's {(row, bits): fields}; peers get
    none) and the two ratios of every row."""
    for r in results:
        r.target = targets.get(r.name, "peer")
        r.ops = ops.get((r.name, r.bits), {}) if r.mode == "bulk" else {}   # chained: the scalar one-block code
        for k, val in (sizes or {}).get((r.name, r.bits), {}).items():
            setattr(r, k, val)
        if r.kind == "peer":
            r.code_note = "peer library: not built by the bench from a rendered file"
    for bits, mode in {(r.bits, r.mode) for r in results}:
        rows = [r for r in results if r.bits == bits and r.mode == mode]
        ref, best = _refs(rows)
        for r in rows:
            r.vs_c, r.vs_c_spread = _paired(r, ref)
            r.vs_peer, r.vs_peer_spread = _paired(r, best)


def ratio_of(a: Result, b: Result) -> paired.Stat | None:
    """a / b from the rows' paired samples (paired.py; the ratio of the medians where they were
    not timed together)."""
    return paired.ratio(a.samples, b.samples, a.cpb, b.cpb)


def _paired(r: Result, other: Result | None) -> tuple[float | None, float | None]:
    """(median of the per-round ratios r / other, their spread); (None, None) without other."""
    if other is None:
        return None, None
    if other is r:
        return 1.0, 0.0
    got = ratio_of(r, other)
    return (round(got.median, 3), round(got.spread, 4)) if got else (None, None)


def _refs(rows):
    """(scalar C reference row, best peer row) among rows of one size and mode."""
    ref = next((r for r in rows if r.name == reference_name(rows[0].bits)), None)
    peers = [r for r in rows if r.kind == "peer"]
    return ref, (min(peers, key=lambda r: r.cpb) if peers else None)


def _ratio(x) -> str:
    return f"{x:.2f}x" if x is not None else "-"


def _pct(x) -> str:
    return paired.pct(x) if x is not None else "-"


def noisy_mark(r: Result, limit: float = paired.NOISE_LIMIT) -> str:
    """'noisy: 18%' for a row whose spread exceeds ``limit`` (paired.NOISE_LIMIT: the tightest
    goal, dispatcher <= 1.03x), else ''."""
    return paired.noisy_text(r.spread, limit) if r.spread is not None else ""


def clock_text(info: dict) -> str:
    """The header's words for how cycles were obtained (the timing program's CLOCKSRC)."""
    src = info.get("clocksrc", "add-chain")
    if src == "perf-cycles":
        return "cycles: hardware counter (perf_event_open, user mode)"
    if src == "none":
        return "no cycle counter and no clock probe on this architecture: ns/B"
    return (f"cycles: add-chain clock estimate, {info.get('clock', '?')} GHz "
            "(no hardware cycle counter: perf cycles <not supported>)")


def table(results: list[Result], info: dict, stream=sys.stdout) -> None:
    unit = info.get("unit", "cpb")
    print(f"\nCPU: {info.get('cpu', '?')}; {clock_text(info)}; "
          f"unit: {'cycles/byte' if unit == 'cpb' else unit}; {info.get('passes', 1)} pass(es), rows alternated "
          f"sample by sample; ratios: median of per-round ratios; spread = (p75 - p25) / median, "
          f"'noisy' above {paired.NOISE_LIMIT:.0%}", file=stream)
    for bits in sorted({r.bits for r in results}):
        for mode in ("bulk", "chained"):
            rows = sorted((r for r in results if r.bits == bits and r.mode == mode), key=lambda r: r.cpb)
            if not rows:
                continue
            ref, best = _refs(rows)
            title = f"Threefish-{bits} {mode}"
            title += f" (scalar C: {ref.name} {ref.cpb:.2f}" if ref else " (no scalar C row"
            title += f"; best peer: {best.name} {best.cpb:.2f})" if best else "; no peer)"
            print(f"\n{title}", file=stream)
            print(f"  {'row':<46} {unit:>7} {'min':>7} {'spread':>6} {'':<11} {'vs C':>7} {'vs peer':>8} "
                  f"{'bound':>6} {'x bound':>7} {'src KiB':>7} {'code KiB':>8}  op counts per block", file=stream)
            for r in rows:
                b, xb = bound_text(r)
                print(f"  {r.name:<46} {r.cpb:7.2f} {r.cpb_min:7.2f} {_pct(r.spread):>6} {noisy_mark(r):<11} "
                      f"{_ratio(r.vs_c):>7} {_ratio(r.vs_peer):>8} {b:>6} {xb:>7} {kib(r.src_bytes):>7} "
                      f"{kib(r.code_bytes):>8}  {ops_text(r.ops)}".rstrip(), file=stream)
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
            print(f"  Threefish-{g.bits:<5} {g.name[:-4]:<40} {g.mode:<8} {c.cpb / g.cpb:5.2f}x", file=stream)
    if info.get("dispatch"):
        print("\ndispatcher / best variant (fastest verified generated C-ABI row; median of per-round ratios; "
              "goal <= 1.03 is judged only where the ratios' spread is at most 3%)", file=stream)
        for ln in info["dispatch"]:
            print(ln, file=stream)
    if info.get("rust_simd"):
        print("\nRust SIMD / SIMD C (same ISA and options; median of per-round ratios; goal <= 1.05 is judged "
              "only where the spread is at most 5%)", file=stream)
        for ln in info["rust_simd"]:
            print(ln, file=stream)
    g = goals(results)
    if g:
        print("\ngoals (docs/nasm.md; paired ratios and medians above; a noisy figure is not judged)", file=stream)
        for ln in g:
            print(ln, file=stream)
    for f in info["fail"]:
        print(f"FAIL {f}", file=stream)


# The NASM targets' speed goals (docs/nasm.md), shown (never asserted) beside the figures:
# (label, size, mode, row, bound c/B or None for "no slower than scalar C").
NASM_GOALS = [
    *[(f"nasm-x64 gpr no slower than scalar C ({b} bulk)", b, "bulk", "nasm-x64 gpr belady", None)
      for b in (256, 512, 1024)],
    ("nasm-x64 Threefish-1024 bulk <= 5.5 c/B", 1024, "bulk", "nasm-x64 gpr belady", 5.5),
    ("nasm-x86 Threefish-512 bulk <= 11.7 c/B (timed as the nasm-x64 sse2 stream)", 512, "bulk",
     "nasm-x64 sse2 belady (nasm-x86 stream)", 11.7),
]


def goals(results: list[Result]) -> list[str]:
    lines = []
    for label, bits, mode, name, bound in NASM_GOALS:
        # the row, or its --interleave forms ("... i2"): the fastest of them
        rows = [x for x in results if (x.name == name or re.fullmatch(re.escape(name) + r" i\d", x.name))
                and x.bits == bits and x.mode == mode]
        r = min(rows, key=lambda x: x.cpb, default=None)
        if r is None:
            continue
        if bound is None:
            x = r.vs_c if r.vs_c is not None else float("inf")
            got = f"{r.cpb:.2f} c/B = {_ratio(r.vs_c)} scalar C"
            ref = next((x for x in results if x.name == reference_name(bits) and x.mode == mode
                        and x.bits == bits), None)
            sp = paired.judged_spread(r.vs_c_spread, r.spread, ref.spread if ref else None)
            verdict = (paired.verdict(x, 1.0, sp, paired.NOISE_LIMIT) if sp > paired.NOISE_LIMIT
                       else "met" if x <= 1.0 else "within 3% (noise level here)" if x <= 1.03 else "NOT met")
        else:
            got = f"{r.cpb:.2f} c/B"
            verdict = paired.verdict(r.cpb, bound, r.spread or 0.0, paired.NOISE_LIMIT)
        lines.append(f"  {label:<78} {got:<28} {verdict}")
    return lines


def csharp_annotate(cs_rows: list[dict], results: list[Result]) -> None:
    """Ratio of every C# row to the scalar C reference and the best C-ABI peer (same size, mode)."""
    for r in cs_rows:
        if r.get("cpb") is None:
            continue
        rows = [x for x in results if x.bits == r["bits"] and x.mode == r["mode"]]
        ref, best = _refs(rows) if rows else (None, None)
        r["vs_c"] = round(r["cpb"] / ref.cpb, 3) if ref else None
        r["vs_peer"] = round(r["cpb"] / best.cpb, 3) if best else None


def csharp_table(cs_rows: list[dict], stream=sys.stdout) -> None:
    print("\nC# (.NET; tools/bench/dotnet.py: its own program, Stopwatch + the same add-chain clock "
          "estimate; medians of --samples (default 9), the classes of one size and mode alternated sample by "
          "sample; ratios to the scalar C reference and best C-ABI peer above; '/ LanesNNN' = the compact "
          "candidate's paired ns/B ratio to the recommended class)", file=stream)
    for bits in sorted({r["bits"] for r in cs_rows if r.get("cpb") is not None}):
        for mode in ("bulk", "chained"):
            rows = sorted((r for r in cs_rows if r.get("cpb") is not None and r["bits"] == bits
                           and r["mode"] == mode), key=lambda r: r["cpb"])
            if not rows:
                continue
            print(f"\nC# Threefish-{bits} {mode}", file=stream)
            print(f"  {'row':<52} {'cpb':>7} {'vs C':>7} {'vs peer':>8} {'bound':>6} {'x bound':>7} "
                  f"{'src KiB':>7} {'code KiB':>8}", file=stream)
            for r in rows:
                extra = ""
                vr = r.get("vs_recommended")
                if vr:
                    extra = (f"  / {vr['against'].split(' ')[1]} = {vr['ratio']:.3f} ("
                             + ("paired" if vr["paired"] else "medians") + f": min {vr['min']:.3f}, spread "
                             f"{paired.pct(vr['spread'])}" + (f"; {paired.noisy_text(vr['judged_spread'])}"
                                                              if vr["noisy"] else "") + ")")
                if "agrees_with_reference" in r:
                    extra = "  output " + ("matches" if r["agrees_with_reference"] else "DIFFERS FROM") + \
                        " the generated v1.3 class"
                print(f"  {r['name']:<52} {r['cpb']:7.2f} {_ratio(r.get('vs_c')):>7} "
                      f"{_ratio(r.get('vs_peer')):>8} {'-':>6} {'-':>7} {kib(r.get('src_bytes')):>7} "
                      f"{kib(r.get('code_bytes')):>8}{extra}", file=stream)
    for r in cs_rows:
        if r.get("cpb") is None:
            print(f"SKIPPED {r['name']}: {r.get('skipped')}", file=stream)


METHOD = ("cycles from the hardware cycle counter (perf_event_open) where it works, else the core clock "
          "estimated around each sample from a chain of dependent adds (1 cycle each; TSC != core clock; "
          "cycles/byte = ns/byte x GHz); the rows of one size and mode alternate sample by sample "
          "(round k times each row once: A B A B ...), passes (default 3) of 7 rounds; "
          "c/B = median of a row's samples, min = least sample, spread = (p75 - p25) / median; "
          "ratios = median of the per-round ratios of two rows' samples; a row or ratio whose spread "
          "exceeds the tolerance of the goal it is judged against (3% by default) is marked 'noisy: N%' "
          "and never reported as meeting it. bulk = encrypt_blocks over 4 KiB (L1); chained = single-block "
          "encrypt, each block's input the previous output. vs C = ratio to the recommended scalar C "
          "option set built with gcc; vs peer = ratio to the fastest peer library row.")


def markdown(results: list[Result], info: dict, cs_rows: list[dict], notes: list[str]) -> str:
    out = ["# threefish-gen benchmark", "",
           f"CPU: {info.get('cpu', '?')}; {clock_text(info)}.", "",
           "Method: " + METHOD, "", f"Bounds: {info.get('model', '?')} (docs/bench.md, \"Bounds\"); "
           "bulk: throughput of encrypt_blocks; chained: one call, its dependency chain or its throughput.", ""]
    for bits in sorted({r.bits for r in results}):
        for mode in ("bulk", "chained"):
            rows = sorted((r for r in results if r.bits == bits and r.mode == mode), key=lambda r: r.cpb)
            if not rows:
                continue
            out += [f"## Threefish-{bits} {mode}", "",
                    "| row | c/B (median) | min | spread | vs scalar C | vs best peer | bound | x bound | "
                    "src KiB | code KiB | op counts per block |",
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
            out += [f"| {r.name} | {r.cpb:.2f} | {r.cpb_min:.2f} | {_pct(r.spread)}"
                    + (f" **{noisy_mark(r)}**" if noisy_mark(r) else "")
                    + f" | {_ratio(r.vs_c)} | {_ratio(r.vs_peer)} | "
                    f"{' | '.join(bound_text(r))} | {kib(r.src_bytes)} | {kib(r.code_bytes)} | {ops_text(r.ops)} |"
                    for r in rows]
            out.append("")
    if info.get("dispatch"):
        out += ["## Dispatcher / best variant", "", "```"] + info["dispatch"] + ["```", ""]
    if info.get("rust_simd"):
        out += ["## Rust SIMD / SIMD C", "", "```"] + info["rust_simd"] + ["```", ""]
    g = goals(results)
    if g:
        out += ["## Goals (NASM)", "", "```"] + g + ["```", ""]
    got = [r for r in cs_rows if r.get("cpb") is not None]
    if got:
        out += ["## C#", "", "| row | size | mode | c/B (median) | vs scalar C | vs best peer | bound | x bound | "
                "src KiB | code KiB |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
        out += [f"| {r['name']} | {r['bits']} | {r['mode']} | {r['cpb']:.2f} | {_ratio(r.get('vs_c'))} | "
                f"{_ratio(r.get('vs_peer'))} | - | - | {kib(r.get('src_bytes'))} | {kib(r.get('code_bytes'))} |"
                for r in sorted(got, key=lambda r: (r["bits"], r["mode"], r["cpb"]))]
        out.append("")
    skipped = notes + info.get("fail", []) + [f"SKIPPED {r['name']}: {r.get('skipped')}"
                                              for r in cs_rows if r.get("cpb") is None]
    if skipped:
        out += ["## Skipped / failed", ""] + [f"- {n}" for n in skipped] + [""]
    return "\n".join(out)


# --------------------------------------------------------------------------- driver

def _matches(name: str, filters) -> bool:
    return not filters or any(f in name for f in filters)


def run(entries: list[tuple[str, Variant, str]], quick: bool = False, samples: int | None = None,
        filters: tuple = (), workdir: Path = Path("build/bench"), json_path: Path | None = None,
        md_path: Path | None = None, csharp_specs=None, notes: list[str] | None = None,
        sizes=None, passes: int | None = None, stream=sys.stdout) -> list[Result]:
    """Build and time the entries (rows not matching any filter are dropped before building,
    except the scalar C reference rows); then the C# rows when csharp_specs is given.
    The program runs ``passes`` times (default 3, --quick 1) with 21/passes samples each: a burst
    of load from other processes then spoils one pass of a row, not all its samples."""
    entries = [e for e in entries if _matches(e[0], filters) or
               e[0] == reference_name(e[1].spec.bits)]
    exe, build_notes, ops, code = build(entries, Path(workdir).resolve())
    notes = list(notes or []) + build_notes
    passes = passes or (1 if quick else 3)
    cmd = [str(exe)]
    if quick:
        cmd.append("--quick")
    if samples or passes > 1:
        cmd += ["--samples", str(samples or max(1, 21 // passes))]
    names = {name for name, _, _ in entries}
    results, info, rc = measure(cmd, names, passes)
    if sizes:
        results = [r for r in results if r.bits in set(sizes)]
    annotate(results, {name: v.target for name, v, _ in entries}, ops, code)
    from threefish_gen.verify.runner import cpu_flags
    model = this_model()
    bounds_annotate(results, row_bounds(entries, model, cpu_flags()))
    info["model"] = f"port model {model.key}: {model.name}"
    info["dispatch"] = dispatcher_lines(results, dispatcher_names(entries))
    info["rust_simd"] = rust_rows.simd_lines(results, entries)
    print(f"bounds: {info['model']}", file=stream)
    print("method: " + METHOD, file=stream)
    table(results, info, stream)
    cs_rows: list[dict] = []
    if csharp_specs:
        from .dotnet import bench_rows
        cs_rows = bench_rows(list(csharp_specs), workdir=Path(workdir) / "dotnet", bouncy=not quick,
                             samples=samples, filters=filters)
        cs_rows = [r for r in cs_rows if r.get("cpb") is None or _matches(r["name"], filters)]
        if quick:
            notes.append("SKIPPED BouncyCastle (C#): --quick does not restore NuGet packages")
        csharp_annotate(cs_rows, results)
        csharp_table(cs_rows, stream)
    print("", file=stream)
    for n in notes:
        print(n, file=stream)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps({
            "cpu": info.get("cpu"), "clock_ghz": info.get("clock"), "clock_source": info.get("clocksrc"),
            "method": METHOD, "noise_limit": paired.NOISE_LIMIT,
            "port_model": info.get("model"), "dispatcher_vs_best": info.get("dispatch", []),
            "reference": {str(b): reference_name(b) for b in sorted({r.bits for r in results})},
            "results": [json_row(r) for r in results], "dotnet": cs_rows,
            "notes": notes, "fail": info["fail"]}, indent=2) + "\n")
    if md_path:
        Path(md_path).parent.mkdir(parents=True, exist_ok=True)
        Path(md_path).write_text(markdown(results, info, cs_rows, notes))
    if rc == 3 or any(n.startswith("FAIL") for n in notes):
        raise GenError("bench: a generated variant failed to build or failed its check (see FAIL lines)")
    return results
