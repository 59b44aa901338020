"""Skein rows of ``make bench``: Skein-512-512 of the generated C on 64 B, 1 KiB and
64 KiB messages -- single message (scalar C ``hash``) and 8 messages at once (``hash_many``, SIMD C
dispatcher: scalar, AVX2, best path), and tree hashing of one 1 MiB message (leaves in the lanes) -- beside Botan 2's Skein-512 and the generated scalar
Threefish-512 chained (the latency bound of sequential Skein).  Timing program:
``harness/skein_bench.c`` (same clock method as harness/bench.c); peer: ``harness/peers_botan_skein.cpp``.
With the Rust target asked for, the rendered Rust Skein-512 crate's ``Skein512::hash`` too (through
tools/bench/rust_rows.py's static library), checked equal to the scalar C hash on every message
size and alternated with it sample by sample (skein_bench.c's ``row_pair``): the goal line per
size, "rust scalar Skein / C scalar Skein = r (paired: min, spread; goal <= 1.05: verdict)"
(issue 29), is the median of the per-round ratios (paired.py), both crates of the same options
(:func:`rust_variant`, :func:`variants`).

Paired rounds (issue 27, "Skein at the Threefish rate"; x86-64 only): hash_many of 8 x 64 KiB
and tree hashing of 1 MiB on one ISA, alternated round by round with the Threefish-512 c-simd
lanes fly/full/i1 bulk row of the same ISA (avx512, avx2); :func:`rate_lines` takes their
ratios per round (paired.py) and judges them against the goals (hash_many <= 1.15x, tree <=
1.2x the Threefish lanes rate; scalar Skein on 64 KiB <= 1.05x Threefish-512 chained, from
medians: those rows are not alternated).
"""
from __future__ import annotations

import platform
import statistics
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.render import render_variant, write_files
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.threefish import Options

from . import paired, rust_rows
from .run import BENCH_DIR, _run

BOTAN_HEADER = Path("/usr/include/botan-2/botan/hash.h")


def variants(version: str = "1.3"):
    """(scalar Skein-512, SIMD dispatcher Skein-512, scalar Threefish-512) with fixed prefixes."""
    spec = get_spec(version, 512)
    c = registry.get("c")
    simd = _simd_target()
    sk = c.variant(spec, c.default_options_for(spec, {"primitive": "skein"}), "bsk_", primitive="skein")
    skm = simd.variant(spec, Options("fly", "full", 1), "bskm_", isa="auto", primitive="skein")
    tf = c.variant(spec, c.default_options(spec), "btf_")
    return sk, skm, tf


# The Threefish-512 lanes rows the paired rounds time (harness/skein_bench.c, HAVE_PAIRED): (ISA, prefix).
PAIRED_TF = (("avx512", "bpa_"), ("avx2", "bpb_"))
# Goals (issue 27): (label, Skein row, its bytes, Threefish row, its bytes, goal); {isa} filled per ISA.
GOALS = [
    ("hash_many 8 x 64 KiB <= 1.15x Threefish-512 lanes bulk ({isa})", "skein-512-512 c-simd hash_many 8x {isa}",
     8 * 65536, "threefish-512 c-simd {isa} lanes fly/full/i1 bulk", 4096, 1.15),
    ("tree 1 MiB <= 1.2x Threefish-512 lanes bulk ({isa})", "skein-512-512 c-simd tree (Yl 4, Yf 8, Ym 255) {isa}",
     1 << 20, "threefish-512 c-simd {isa} lanes fly/full/i1 bulk", 4096, 1.2),
]
SCALAR_GOAL = ("scalar Skein-512 64 KiB <= 1.05x Threefish-512 chained", "skein-512-512 c scalar (hash)", 65536,
               "threefish-512 c chained (encrypt, input = previous output)", 65536, 1.05)


def _simd_target():
    """SIMD C: the target of the C language with an --isa option."""
    c = registry.get("c")
    return next(t for t in registry.TARGETS.values()
                if t.recipe.language == c.recipe.language and t.option("isa") is not None)


def paired_variants(version: str = "1.3"):
    """The Threefish-512 c-simd lanes fly/full/i1 variants of the paired rounds (avx512, avx2)."""
    spec = get_spec(version, 512)
    simd = _simd_target()
    return [simd.variant(spec, Options("fly", "full", 1), prefix, isa=isa, layout="lanes")
            for isa, prefix in PAIRED_TF]


def paired_wanted() -> bool:
    """Whether the paired rounds are built: an x86-64 machine (they pick the ISA by cpuid)."""
    return platform.machine() in ("x86_64", "AMD64")


def rust_variant(version: str = "1.3"):
    """The Rust Skein-512 crate of the Rust rows (the target's default Skein options)."""
    spec, t = get_spec(version, 512), rust_rows.TARGET
    return t.variant(spec, t.default_options_for(spec, {"primitive": "skein"}), primitive="skein")


def build(workdir: Path, version: str = "1.3", rust: bool = False) -> tuple[Path, list[str]]:
    workdir.mkdir(parents=True, exist_ok=True)
    src = workdir / "src"
    notes: list[str] = []
    vs = variants(version)
    objs = []
    for v in vs:
        write_files(render_variant(v), src)
        obj = workdir / f"{v.stem}.o"
        _run(["gcc", "-O2", "-std=c99", f"-I{src}", "-c", str(src / f"{v.stem}.c"), "-o", str(obj)])
        objs.append(str(obj))
    sk, skm, tf = vs
    defs, peer, libs = [], [], []
    if paired_wanted():
        tfa, tfb = paired_variants(version)
        for v in (tfa, tfb):
            write_files(render_variant(v), src)
            obj = workdir / f"{v.stem}.o"
            _run(["gcc", "-O2", "-std=c99", f"-I{src}", "-c", str(src / f"{v.stem}.c"), "-o", str(obj)])
            objs.append(str(obj))
        defs += ["-DHAVE_PAIRED", f'-DTFA_HEADER="{tfa.stem}.h"', f"-DTFA_PREFIX={tfa.prefix}",
                 f'-DTFB_HEADER="{tfb.stem}.h"', f"-DTFB_PREFIX={tfb.prefix}"]
    else:
        notes.append(f"SKIPPED paired Skein / Threefish rounds: not an x86-64 machine ({platform.machine()})")
    if BOTAN_HEADER.exists():
        defs.append("-DHAVE_BOTAN")
        po = workdir / "peers_botan_skein.o"
        _run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-isystem", "/usr/include/botan-2", "-c",
              str(BENCH_DIR / "peers_botan_skein.cpp"), "-o", str(po)])
        peer, libs = [str(po)], ["-lbotan-2"]
    else:
        notes.append("SKIPPED Botan Skein-512 peer: libbotan-2-dev not installed")
    rust_link: list[str] = []
    if rust and (why := rust_rows.missing()):
        notes.append(f"SKIPPED Rust Skein-512 row: {why}")
    elif rust:
        rv = rust_variant(version)
        if rv.options != sk.options:        # the goal line compares the same options
            raise GenError(f"skein bench: the Rust Skein crate's options {rv.options} differ from the C's {sk.options}")
        lib, native = rust_rows.build([rv], workdir / "cargo")
        defs.append("-DHAVE_RUST_SKEIN")
        rust_link = [str(lib), *native]
    bo = workdir / "skein_bench.o"
    _run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", f"-I{src}", f"-I{BENCH_DIR}",
          f'-DSK_HEADER="{sk.stem}.h"', f"-DSK_PREFIX={sk.prefix}", f'-DSKM_HEADER="{skm.stem}.h"',
          f"-DSKM_PREFIX={skm.prefix}", f'-DTF_HEADER="{tf.stem}.h"', f"-DTF_PREFIX={tf.prefix}", *defs,
          "-c", str(BENCH_DIR / "skein_bench.c"), "-o", str(bo)])
    exe = workdir / "skein_bench"
    _run(["g++" if peer else "gcc", str(bo), *objs, *peer, *libs, *rust_link, "-o", str(exe)])
    return exe, notes


C_ROW = "skein-512-512 c scalar (hash)"
RUST_ROW = "skein-512-512 rust scalar (hash)"
GOAL = 1.05          # issue 29: the Rust scalar Skein within 1.05x of the C of the same options


def parse(out: str, run: int = 0, pairs: dict | None = None) -> tuple[list[dict], list[str]]:
    """ROW lines as dicts; a row's ``samples`` {(run, round): cpb} (the keys of paired.py: the
    samples of one round of alternated rows are pairs); PAIR lines go into ``pairs`` ({(name,
    bytes): {(run, round): cpb}}) when given."""
    rows, info, samples = [], [], {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "PAIR" and pairs is not None:
            pairs.setdefault((f[1], int(f[2])), {})[(run, int(f[3]))] = float(f[4])
        elif f[0] == "SAMPLE":
            samples.setdefault((f[1], int(f[2])), {})[(run, int(f[3]))] = float(f[4])
        elif f[0] == "ROW":
            rows.append(dict(name=f[1], bytes=int(f[2]), cpb=float(f[3]), min=float(f[4]), ghz=float(f[5]),
                             samples=samples.get((f[1], int(f[2])), {})))
        elif f[0] in ("INFO", "CHECK") and f[1:] != ["done"]:
            info.append(" ".join(f))
    return rows, info


def merge(runs: list[list[dict]]) -> list[dict]:
    groups: dict = {}
    for rows in runs:
        for r in rows:
            groups.setdefault((r["name"], r["bytes"]), []).append(r)
    out = []
    for k, rs in groups.items():
        every = {key: x for r in rs for key, x in r.get("samples", {}).items()}
        out.append(dict(name=k[0], bytes=k[1], cpb=statistics.median(r["cpb"] for r in rs),
                        min=min(r["min"] for r in rs),
                        spread=round(paired.spread(every.values()), 4) if every else None, samples=every))
    return out


def _side(row: dict, paired_samples: bool = True) -> SimpleNamespace:
    """One side of a judged ratio (paired.judged_ratio) from a merged row: its samples (none
    where the two rows were not alternated, so the ratio is of medians), median and spread."""
    return SimpleNamespace(samples=row.get("samples", {}) if paired_samples else {}, cpb=row["cpb"],
                           spread=row.get("spread"))


def rust_goal_lines(rows: list[dict], goal: float = GOAL) -> list[dict]:
    """Per message size with both rows: the Rust scalar hash / the C scalar hash, the median of the
    per-round ratios of their alternated samples (paired.py), judged against ``goal`` at its
    tolerance from the largest of the ratio's and the rows' spreads (a noisy figure is not
    judged).  [{bytes, ratio, min, spread, paired, verdict, rust, c, line}]."""
    out = []
    for n in sorted({r["bytes"] for r in rows}):
        rust = next((r for r in rows if r["bytes"] == n and r["name"] == RUST_ROW), None)
        c = next((r for r in rows if r["bytes"] == n and r["name"] == C_ROW), None)
        if rust is None or c is None:
            continue
        got, how, judged = paired.judged_ratio(_side(rust), _side(c), goal)
        line = (f"  {n:>8} B  rust scalar Skein / C scalar Skein = {got.median:.3f} ({how}; goal <= {goal:.2f}: "
                f"{judged}) [{rust['cpb']:.2f} / {c['cpb']:.2f} c/B]")
        out.append(dict(bytes=n, ratio=round(got.median, 4), min=round(got.min, 4), spread=round(got.spread, 4),
                        paired=got.paired, verdict=judged, rust=rust["cpb"], c=c["cpb"], line=line))
    return out


def _stat_row(name: str, nbytes: int, samples: dict) -> SimpleNamespace:
    v = list(samples.values())
    return SimpleNamespace(name=name, bytes=nbytes, samples=samples, cpb=statistics.median(v), min=min(v),
                           spread=paired.spread(v))


def rate_lines(pairs: dict, rows: list[dict]) -> tuple[list[str], list[dict]]:
    """The goal lines of the paired rounds (and the scalar goal from the rows' medians): (text
    lines, JSON records).  Each ratio is the median of the per-round ratios; a goal is judged
    at its own tolerance (goal - 1) from the largest spread of the two rows and their ratio."""
    lines, recs = [], []
    for label, sk, skb, tf, tfb, goal in GOALS:
        for isa, _ in PAIRED_TF:
            a, b = pairs.get((sk.format(isa=isa), skb)), pairs.get((tf.format(isa=isa), tfb))
            if not a or not b:
                continue
            ra, rb = _stat_row(sk.format(isa=isa), skb, a), _stat_row(tf.format(isa=isa), tfb, b)
            got, how, verdict = paired.judged_ratio(ra, rb, goal)
            lines.append(f"  {label.format(isa=isa):<62} {ra.cpb:5.2f} / {rb.cpb:5.2f} c/B = {got.median:.3f}x "
                         f"({how}; rows {paired.pct(ra.spread)}, {paired.pct(rb.spread)})  {verdict}")
            recs.append(dict(goal=label.format(isa=isa), skein=ra.name, threefish=rb.name, skein_cpb=ra.cpb,
                             threefish_cpb=rb.cpb, ratio=round(got.median, 4), ratio_min=round(got.min, 4),
                             ratio_spread=round(got.spread, 4), pairs=got.n, limit=goal, verdict=verdict))
    label, sk, skb, tf, tfb, goal = SCALAR_GOAL
    a = next((r for r in rows if r["name"] == sk and r["bytes"] == skb), None)
    b = next((r for r in rows if r["name"] == tf and r["bytes"] == tfb), None)
    if a and b:
        got, how, verdict = paired.judged_ratio(_side(a, False), _side(b, False), goal)
        lines.append(f"  {label:<62} {a['cpb']:5.2f} / {b['cpb']:5.2f} c/B = {got.median:.3f}x ({how})  {verdict}")
        recs.append(dict(goal=label, skein=sk, threefish=tf, skein_cpb=a["cpb"], threefish_cpb=b["cpb"],
                         ratio=round(got.median, 4), ratio_spread=round(got.spread, 4), pairs=0, limit=goal,
                         verdict=verdict))
    return lines, recs


def run(workdir: Path, quick: bool = False, passes: int | None = None, stream=sys.stdout,
        rust: bool = False) -> dict:
    """Build, time (``passes`` runs, medians), print the Skein table; returns the JSON section
    (``rust``: with the Rust crate's row)."""
    exe, notes = build(Path(workdir).resolve(), rust=rust)
    runs, info, pairs = [], [], {}
    for i in range(passes or (1 if quick else 3)):
        print(f"bench: timing the Skein rows (pass {i + 1}) ...", file=sys.stderr, flush=True)
        p = subprocess.run([str(exe)] + (["--quick"] if quick else []), capture_output=True, text=True)
        if p.returncode:
            raise GenError(f"skein bench failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[:200]}")
        rows, info = parse(p.stdout, i, pairs)
        runs.append(rows)
    rows = merge(runs)
    fails = [x for x in info if x.startswith("CHECK FAIL")]
    print("\nSkein-512-512 (cycles/byte: median, min, spread = (p75 - p25) / median; hash_many rows: per byte "
          "of all 8 messages; ratios to Botan's Skein-512 of the same message size, of medians: these rows "
          "are timed one after the other, not alternated)", file=stream)
    for n in sorted({r["bytes"] for r in rows}):
        group = sorted((r for r in rows if r["bytes"] == n), key=lambda r: r["cpb"])
        botan = next((r for r in group if "Botan" in r["name"]), None)
        print(f"  {n} B messages", file=stream)
        for r in group:
            ratio = f"{r['cpb'] / botan['cpb']:.2f}x Botan" if botan else ""
            r["vs_botan"] = round(r["cpb"] / botan["cpb"], 3) if botan else None
            sp = r.get("spread")
            mark = paired.noisy_text(sp) if sp is not None else ""
            print(f"    {r['name']:<72} {r['cpb']:8.2f} {r['min']:8.2f} {paired.pct(sp) if sp is not None else '-':>6} "
                  f"{mark:<11} {ratio}".rstrip(), file=stream)
    goals, recs = rate_lines(pairs, rows)
    if goals:
        print("\nSkein at the Threefish rate (issue 27; paired: the Skein row and the Threefish-512 c-simd "
              "lanes fly/full/i1 bulk row of the same ISA alternated round by round, ratio = median of the "
              "per-round ratios; judged at the goal's tolerance from the largest spread)", file=stream)
        for line in goals:
            print(line, file=stream)
    rust_goals = rust_goal_lines(rows)
    if rust_goals:
        print(f"\nRust scalar Skein / C scalar Skein (issue 29, same options: {rust_variant().options}; "
              "the two rows alternated sample by sample, ratio = median of the per-round ratios)", file=stream)
        for g in rust_goals:
            print(g["line"], file=stream)
    for line in info + notes:
        print(line, file=stream)
    if fails:
        raise GenError("skein bench: " + "; ".join(fails))
    for r in rows:          # the JSON keeps the figures, not the samples (keys are tuples)
        r.pop("samples", None)
    return {"rows": rows, "info": info, "notes": notes, "goals": recs, "goal_lines": goals, "rust_goal": rust_goals,
            "paired": [dict(name=k[0], bytes=k[1], samples=[[p, r, c] for (p, r), c in sorted(v.items())])
                       for k, v in sorted(pairs.items())]}


def wanted(sizes, targets, filters) -> bool:
    """Whether `bench` times the Skein rows: Skein-512 with scalar C or Rust asked for, and no
    --filter or one that matches the Skein rows' names."""
    return 512 in sizes and ("c" in targets or rust_rows.TARGET.name in targets) and \
        (not filters or any(f in "skein-512-512" for f in filters))


def rust_wanted(targets) -> bool:
    """Whether the Skein rows include the Rust crate's (the Rust target asked for)."""
    return rust_rows.TARGET.name in targets


def run_into(json_path: Path | None, md_path: Path | None, workdir: Path = Path("build/bench/skein"),
             quick: bool = False, passes: int | None = None, rust: bool = False) -> dict:
    """Run the Skein rows and add them to bench's JSON ("skein") and markdown (a section)."""
    import json
    sec = run(workdir, quick=quick, passes=passes, rust=rust)
    if json_path and Path(json_path).exists():
        data = json.loads(Path(json_path).read_text())
        data["skein"] = sec
        Path(json_path).write_text(json.dumps(data, indent=2) + "\n")
    if md_path and Path(md_path).exists():
        md = ["", "## Skein-512-512", "", "| row | message bytes | c/B (median) | min | spread | vs Botan |",
              "|---|---:|---:|---:|---:|---:|"]
        md += [f"| {r['name']} | {r['bytes']} | {r['cpb']:.2f} | {r['min']:.2f} | "
               + (paired.pct(r["spread"]) + (f" **{paired.noisy_text(r['spread'])}**"
                                             if paired.noisy_text(r["spread"]) else "")
                  if r.get("spread") is not None else "-") + " | "
               + (f"{r['vs_botan']:.2f}x" if r.get("vs_botan") is not None else "-") + " |"
               for r in sorted(sec["rows"], key=lambda r: (r["bytes"], r["cpb"]))]
        if sec.get("goal_lines"):
            md += ["", "Skein at the Threefish rate (paired rounds, issue 27):", "", "```"] + sec["goal_lines"] + ["```"]
        if sec.get("rust_goal"):
            md += ["", "Rust scalar Skein / C scalar Skein (issue 29; alternated sample by sample, paired ratios):",
                   "", "```"] + [g["line"] for g in sec["rust_goal"]] + ["```"]
        md += [""] + [f"- {x}" for x in sec["info"] + sec["notes"]]
        Path(md_path).write_text(Path(md_path).read_text() + "\n".join(md) + "\n")
    return sec
