"""``threefish-gen tune``: time the candidate variants of each target on this machine and write a
profile (docs/tune.md); ``render --profile`` / ``render --set tuned`` use one.

Candidates come from the targets' tools (tools/target_tools.py ``tune_candidates``: their option schemas,
the likeliest winners first), less what this CPU cannot run.  They are measured with the bench's
method (tools/bench/run.py: each variant built to an object, linked into harness/bench.c, cycles/byte by
its add-chain clock estimate), modes bulk and chained, under a time budget that includes the
builds:

1. build in the candidates' order (a shipped profile's winners for this CPU first), two at a
   time, while the rest of the budget still covers the build and the timing of what is built;
2. a cheap measurement of every built candidate (bench --quick: 5 samples of 0.5 ms);
3. prune: per target, size and mode only candidates within PRUNE_RATIO of the best cheap
   figure get the full measurement (passes x samples chosen to fit what is left of the budget);
4. choose: the full measurement times all kept candidates of a mode in one program, alternated
   sample by sample (bench's paired method, tools/bench/paired.py), and ranks each group by the
   median of its per-round ratios to the group's fastest; the winner is first.  A runner-up
   within the spread of its paired ratio to the winner is marked a toss-up (``toss_up``).

Both the cheap pass and the prune compare candidates by paired ratios too, where they were
timed together.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import click

from threefish_gen.gen import cpu_rules
from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import write_files
from threefish_gen.gen.spec import SIZES, get_spec
from threefish_gen.gen.variant import Variant
from threefish_gen.verify.cpu import cpu_flags, cpu_id

from .bench import paired
from .bench import run as bench
from .target_tools import all_tools, tools_for
from threefish_gen.cli_options import constants_option

PRUNE_RATIO = 1.25
FLAGS = ("sse2", "ssse3", "avx", "avx2", "bmi2", "avx512f", "avx512vl", "avx512bw", "avx512dq")
SAFETY_S = 4.0            # left free at the end of the budget (exit, writing the profile)
LINK_S = 3.0              # bench.c compile + link, before a first one was timed
FIRST_BUILD_S = 3.0       # one build (render + compile) before one was timed
CHEAP_ROW_S = 0.1         # one row, both modes, bench --quick (a 900 s run measured 9.1 s for its cheap pass)
RUN_S = 0.35              # one bench invocation's start and clock warm-up (--quick: less)
FULL_PLANS = ((3, 7), (2, 7), (1, 7), (1, 3))   # (passes, samples): the first that fits the budget
MAX_FILTERS = 1000        # bench.c takes at most 1024 --filter arguments
MODES = ("bulk", "chained")
METHOD = ("bench's method (threefish_gen/tools/bench/run.py, harness/bench.c): " + bench.METHOD
          + f" Cheap pass: bench --quick (5 samples of 0.5 ms) of every built candidate; only "
          f"candidates within {PRUNE_RATIO}x of their group's best cheap figure (paired ratio) get the full "
          "measurement. Full measurement: every kept candidate of a mode in one program, alternated sample "
          "by sample; a group's candidates ranked by their paired ratio to its fastest.")


@dataclass
class Cand:
    """One candidate: a variant and its compiler; ``row``: its bench row name (unique)."""

    tag: int
    variant: Variant
    cc: str
    obj: str | None = None
    error: str | None = None

    @property
    def target(self) -> str:
        return self.variant.target

    @property
    def bits(self) -> int:
        return self.variant.spec.bits

    @property
    def name(self) -> str:
        o, v = self.variant.options, self.variant
        extra = "".join(f" {val}" for k, val in v.extra if k not in ("abi",))
        return f"{v.target}{extra} {o.keys}/{o.unroll}/i{o.interleave} {self.cc}"

    @property
    def row(self) -> str:
        return f"[t{self.tag}] {self.name}"

    def options(self) -> dict:
        o = self.variant.options
        return {"keys": o.keys, "unroll": o.unroll, "interleave": o.interleave, **dict(self.variant.extra)}


def _key(target: str, bits: int, options: dict, cc: str) -> tuple:
    return (target, bits, json.dumps(options, sort_keys=True), cc)


def candidates(targets, specs, flags, first=()) -> list[Cand]:
    """Every target's candidates this CPU can run (and whose compiler is installed), round robin
    over (target, size) so that each gets its likeliest winners built early; ``first``: keys
    (:func:`_key`) moved to the front (a shipped profile's winners)."""
    import shutil
    lists = []
    for spec in specs:
        for name in targets:
            t = registry.get(name)
            lists.append([(v, cc) for v, cc in tools_for(name).tune_candidates(spec)
                          if not t.features(v) - flags and shutil.which(cc)])
    order = [x for i in range(max(map(len, lists), default=0)) for lst in lists if i < len(lst) for x in [lst[i]]]
    out = []
    for v, cc in order:
        c = Cand(0, v if cc == "nasm" else bench._with_cc(v, cc), cc)
        out.append(c)
    firsts = [c for c in out if _key(c.target, c.bits, c.options(), c.cc) in set(first)]
    out = firsts + [c for c in out if c not in firsts]
    for i, c in enumerate(out):
        c.tag = i
    return out


def prune(cheap: dict, ratio: float = PRUNE_RATIO, samples: dict | None = None) -> tuple[list, list]:
    """(kept, pruned) names of one group from their cheap figures {name: c/B}: kept are within
    ``ratio`` x the best, fastest first; the rest, fastest first.  With ``samples`` ({name:
    {(pass, round): c/B}}, an alternated run), a candidate's figure against the best is the
    median of its per-round ratios to the best's samples (paired.py) rather than the ratio of
    the medians."""
    if not cheap:
        return [], []
    best = min(cheap, key=lambda n: (cheap[n], n))

    def x(n):
        if n == best:
            return 1.0
        got = paired.ratio((samples or {}).get(n, {}), (samples or {}).get(best, {}), cheap[n], cheap[best])
        return got.median
    rel = {n: x(n) for n in cheap}
    order = sorted(cheap, key=lambda n: (rel[n], cheap[n], n))
    return [n for n in order if rel[n] <= ratio], [n for n in order if rel[n] > ratio]


def choose(timed: dict) -> list:
    """[(row, paired ratio to the winner or None)] of one group's fully measured results
    ({row: bench Result}), fastest first: ranked by the median of the per-round ratios to the
    group's fastest row (paired.rank), so a burst of load that hit one round hits every
    candidate's sample of that round alike."""
    return paired.rank({n: r.samples for n, r in timed.items()}, {n: r.cpb for n, r in timed.items()})


def toss_up(vs_winner: paired.Stat | None) -> bool:
    """Whether the runner-up cannot be told from the winner: its paired ratio to the winner is
    within that ratio's spread of 1 (or was not paired at all)."""
    return vs_winner is None or not vs_winner.paired or vs_winner.median - 1.0 <= vs_winner.spread


def full_cost(rows: int, runs: int, passes: int, samples: int) -> float:
    """Seconds the full measurement of ``rows`` row-modes in ``runs`` bench invocations takes
    (per row-mode: ~20 ms warm-up, samples of ~3 ms plus clock probes)."""
    return passes * (runs * RUN_S + rows * (0.03 + samples * 0.0045))


def plan_full(groups: dict, left: float) -> tuple[int, int, dict]:
    """(passes, samples, {group: kept names}) for the full measurement to fit ``left`` seconds:
    the first plan of FULL_PLANS that fits; else one pass of 3 samples over each group's fastest
    cheap candidates, as many as fit (at least the best; then none past the budget)."""
    def cost(gs, p, s):
        rows = sum(len(v) for v in gs.values())
        runs = sum(-(-len(v) // MAX_FILTERS) for v in gs.values() if v)
        return full_cost(rows, runs, p, s)
    for p, s in FULL_PLANS:
        if cost(groups, p, s) <= left:
            return p, s, groups
    k = max((len(v) for v in groups.values()), default=0)
    while k > 1 and cost({g: v[:k] for g, v in groups.items()}, 1, 3) > left:
        k -= 1
    return 1, 3, {g: v[:k] for g, v in groups.items()}


def process_age() -> float:
    """Seconds since this process started (/proc; 0 where unknown)."""
    try:
        start = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        up = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, up - start / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


class Progress:
    """One line per event on stderr: k/N built, elapsed/budget."""

    def __init__(self, total: int, budget: float, stream=sys.stderr):
        # the budget counts from the process's start (interpreter start and imports included)
        self.total, self.budget, self.stream = total, budget, stream
        self.t0 = time.monotonic() - process_age()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.budget - self.elapsed()

    def say(self, what: str, k: int | None = None) -> None:
        count = f"{k}/{self.total} " if k is not None else ""
        print(f"tune: {count}{what}  [{self.elapsed():5.1f}s/{self.budget:.0f}s]", file=self.stream, flush=True)


def build_within(cands: list[Cand], workdir: Path, prog: Progress, jobs: int) -> list[Cand]:
    """Build candidates in order, ``jobs`` at a time, while the budget still covers the build and
    the timing of everything built; returns the candidates that were attempted."""
    est: dict = {}           # target -> seconds of its builds so far
    started: list[Cand] = []
    inflight: dict = {}
    done_n = 0

    def reserve(n: int) -> float:
        return SAFETY_S + LINK_S + RUN_S + n * CHEAP_ROW_S + full_cost(min(n, 40), 4, *FULL_PLANS[1])

    def guess(c: Cand) -> float:
        got = est.get(c.target)
        return 1.5 * statistics.mean(got) if got else FIRST_BUILD_S

    def one(c: Cand, timeout: float):
        t = time.monotonic()
        try:
            c.obj = str(bench._object(c.row, c.variant, c.cc, workdir, timeout=max(1.0, timeout)))
        except GenError as e:
            c.error = str(e)
        return c, time.monotonic() - t

    pending = list(cands)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while True:
            while pending and len(inflight) < jobs:
                c = pending[0]
                room = prog.left() - reserve(len(started) + 1)
                if guess(c) > room:
                    pending = []            # the rest does not fit: stop building
                    break
                pending.pop(0)
                started.append(c)
                inflight[pool.submit(one, c, room)] = c
            if not inflight:
                break
            finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for f in finished:
                c, took = f.result()
                del inflight[f]
                done_n += 1
                est.setdefault(c.target, []).append(took)
                prog.say(f"built {c.name} (Threefish-{c.bits})" + (f": FAILED {c.error[:80]}" if c.error else ""),
                         done_n)
    return started


def _entry(c: Cand, r=None, cheap: float | None = None, vs_winner: paired.Stat | None = None) -> dict:
    e = {"name": c.name, "options": c.options(), "compiler": c.cc}
    if r is not None:
        e.update(cpb=round(r.cpb, 3), cpb_min=round(r.cpb_min, 3))
        if r.spread is not None:
            e["spread"] = round(r.spread, 4)
    if vs_winner is not None:
        e["vs_winner"] = round(vs_winner.median, 4)
        e["vs_winner_spread"] = round(vs_winner.spread, 4)
        e["vs_winner_paired"] = vs_winner.paired
    if cheap is not None:
        e["cheap_cpb"] = round(cheap, 3)
    return e


def cpu_record() -> dict:
    got = cpu_id()
    flags = cpu_flags()
    return {"vendor": got.get("vendor", "?"), "family": got.get("family", -1), "model": got.get("model", -1),
            "model_name": got.get("model_name", "?"), "flags": [f for f in FLAGS if f in flags]}


def shipped_first(cpu: dict) -> list:
    """Keys of the winners of the shipped profile(s) matching this CPU (built first)."""
    out = []
    for _, p in cpu_rules.shipped():
        if cpu_rules.matches(p, cpu["vendor"], cpu["family"], cpu["model"]):
            for target, sizes in p["results"].items():
                for bits, modes in sizes.items():
                    for got in modes.values():
                        for k in ("winner", "runner_up"):
                            w = (got or {}).get(k)
                            if w:
                                out.append(_key(target, int(bits), w["options"], w["compiler"]))
    return out


def tune(targets, sizes, version: str, budget: float, workdir: Path, jobs: int | None = None,
         stream=sys.stderr) -> dict:
    """Measure and return the profile (a dict; see docs/tune.md)."""
    prog = Progress(0, budget, stream)
    cpu = cpu_record()
    specs = [get_spec(version, b) for b in sizes]
    cands = candidates(targets, specs, cpu_flags(), shipped_first(cpu))
    prog.total = len(cands)
    if not cands:
        raise GenError("tune: no candidate this CPU can run for " + ", ".join(targets))
    prog.say(f"{len(cands)} candidates ({', '.join(targets)}; Threefish-{'/'.join(map(str, sizes))})")
    workdir.mkdir(parents=True, exist_ok=True)
    tried = build_within(cands, workdir, prog, jobs or max(1, os.cpu_count() or 1))
    built = [c for c in tried if c.obj]
    if not built:
        raise GenError("tune: nothing was built within the budget (raise --budget)")
    t = time.monotonic()
    exe, _ = bench.link([bench.bench_line(c.row, c.variant) for c in built], [c.obj for c in built], workdir,
                        peers=False)
    by_row = {c.row: c for c in built}
    prog.say(f"linked {len(built)} candidates ({time.monotonic() - t:.1f}s); cheap measurement ...")
    t = time.monotonic()
    cheap_res, info, _ = bench.measure([str(exe), "--quick"], set(by_row), 1, stream=None)
    clocksrc = info.get("clocksrc", "add-chain")
    for f in info["fail"]:              # a candidate failed bench's check: never a winner
        row = next((r for r in by_row if f.startswith(r)), None)
        if row:
            by_row[row].error = "failed bench's check: " + f
    cheap = {(r.name, r.mode): r.cpb for r in cheap_res if r.name in by_row and not by_row[r.name].error}
    cheap_samples = {(r.name, r.mode): r.samples for r in cheap_res}
    groups: dict = {}
    pruned: dict = {}
    for c in built:
        for mode in MODES:
            g = (c.target, c.bits, mode)
            groups.setdefault(g, {})
            if (c.row, mode) in cheap:
                groups[g][c.row] = cheap[(c.row, mode)]
    kept = {}
    for g, figs in groups.items():
        kept[g], pruned[g] = prune(figs, samples={n: cheap_samples.get((n, g[2]), {}) for n in figs})
    left = prog.left() - SAFETY_S
    passes, samples, kept = plan_full(kept, left)
    nfull = sum(map(len, kept.values()))
    prog.say(f"cheap pass {time.monotonic() - t:.1f}s; full measurement of {nfull} row-modes "
             f"({passes} pass(es) x {samples} samples; {sum(map(len, pruned.values()))} pruned)")
    full: dict = {}
    for mode in MODES:      # one program per mode: its rows alternate sample by sample (paired)
        rows = [r for g, names in kept.items() if g[2] == mode for r in names]
        for i in range(0, len(rows), MAX_FILTERS):
            chunk = rows[i:i + MAX_FILTERS]
            cmd = [str(exe), "--samples", str(samples), "--mode", mode] + [a for r in chunk
                                                                             for a in ("--filter", r.split("]")[0] + "]")]
            res, _, _ = bench.measure(cmd, set(chunk), passes, stream=None)
            full.update({(r.name, r.mode): r for r in res if r.name in by_row})
            prog.say(f"measured {len(chunk)} {mode} rows")
    results: dict = {}
    for (target, bits, mode), figs in sorted(groups.items()):
        timed = {r: full[(r, mode)] for r in kept[(target, bits, mode)] if (r, mode) in full}
        ranked = choose(timed)
        entries = [_entry(by_row[n], timed[n], figs.get(n), vs) for n, vs in ranked]
        not_full = [n for n in figs if n not in timed]
        group = {"winner": entries[0] if entries else None, "runner_up": entries[1] if len(entries) > 1 else None,
                 "measured": len(entries),
                 "pruned": [_entry(by_row[n], cheap=figs[n]) for n in not_full]}
        if len(ranked) > 1:
            group["toss_up"] = toss_up(ranked[1][1])
        results.setdefault(target, {}).setdefault(str(bits), {})[mode] = group
    for target, sizes_ in results.items():
        for bits, modes in sizes_.items():
            for group in modes.values():
                mine = [c for c in cands if c.target == target and str(c.bits) == bits]
                group["failed"] = [{"name": c.name, "error": c.error[:200]} for c in mine if c.error]
                group["not_built"] = len([c for c in mine if c not in tried])
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    return {
        "format": cpu_rules.FORMAT,
        "name": f"{cpu['vendor']}-{cpu['family']:#x}-{cpu['model']:#x}",
        "source": f"threefish-gen tune on {cpu['model_name']}",
        "cpu": cpu,
        "match": {"vendor": cpu["vendor"], "family": cpu["family"], "models": [[cpu["model"], cpu["model"]]]},
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "method": METHOD,
        "budget_s": budget,
        "elapsed_s": round(prog.elapsed(), 1),
        "load": " ".join(f"{x:.2f}" for x in load),
        "constants": version,
        "prune_ratio": PRUNE_RATIO,
        "clock_source": clocksrc,
        "full": {"passes": passes, "samples": samples},
        "candidates": {"total": len(cands), "built": len(built), "not_built": len(cands) - len(tried)},
        "results": results,
    }


# --------------------------------------------------------------------------- render --profile

def read_profile(path: str) -> dict:
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise GenError(f"--profile {path}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
    return cpu_rules.load_profile(text, f"--profile {path}")


def this_cpu_profile() -> tuple[str, dict]:
    """(file, profile) of the shipped profile matching this CPU; GenError when none does."""
    got = cpu_id()
    for name, p in cpu_rules.shipped():
        if got and cpu_rules.matches(p, got.get("vendor"), got.get("family"), got.get("model")):
            return f"threefish_gen/profiles/{name}", p
    fam, mod = got.get("family", -1), got.get("model", -1)
    raise GenError(f"no shipped profile matches this CPU ({got.get('vendor', '?')} family {fam:#x} model {mod:#x}); "
                   "give --profile FILE (threefish-gen tune --out FILE writes one)")


def winner_values(p: dict, where: str, target: str, bits: int) -> dict:
    w = cpu_rules.winner(p, target, bits)
    if w is None:
        have = ", ".join(f"{t} {b}" for t, s in p["results"].items() for b in s) or "nothing"
        raise GenError(f"{where} has no bulk winner for --target {target} --size {bits} (it has: {have})")
    return w


def record_line(where: str, p: dict, w: dict) -> str:
    cpu = p.get("cpu", {})
    fig = f", {w['cpb']} c/B" if "cpb" in w else ""
    return (f"tuned: {where} ({p.get('name', '?')}: {cpu.get('model_name', '?')}, {p.get('date', '?')}): "
            f"bulk winner {w.get('name', '?')}{fig} ({w.get('compiler', '?')})")


def stamp(files: dict, line: str) -> dict:
    """Each file with ``line`` added to its header, under the generator's command line."""
    out = {}
    for name, text in files.items():
        lines = text.split("\n")
        at = next((i for i, ln in enumerate(lines[:12]) if "threefish-gen render " in ln), None)
        if at is not None:
            lead = lines[at][:lines[at].index("threefish-gen render ")]
            lines.insert(at + 1, lead + line)
        out[name] = "\n".join(lines)
    return out


class Tuned:
    """What ``render --profile P`` / ``render --set tuned [--profile P]`` read: the profile (given,
    or the shipped one matching this CPU) and, for --set tuned, the targets to render (the given
    --target, else every target the profile has winners for)."""

    def __init__(self, path: str | None, which: str | None, target: str | None):
        if path:
            self.where, self.p = path, read_profile(path)
        else:
            self.where, self.p = this_cpu_profile()
        self.target = target
        self.record = ""

    def fill(self, target: str, bits: int, keys, unroll, interleave, values: dict):
        """The command line's options with the winner's where none was given."""
        w = winner_values(self.p, self.where, target, bits)
        self.record = record_line(self.where, self.p, w)
        o, extra = cpu_rules.split_options(w["options"])
        values = dict(values)
        for k, val in extra.items():
            if k in values and values[k] is None:
                values[k] = val
            elif k not in values:
                raise GenError(f"{self.where}: winner option {k!r} is not an option of render")
        return keys or o.keys, unroll or o.unroll, o.interleave if interleave is None else interleave, values

    def render_set(self, values: dict, only_bits: int | None = None, only_version: str | None = None) -> tuple[list, dict]:
        """Every version of each (target, size) winner: (variants, files with the record); ``only_bits`` /
        ``only_version``: that size / version only."""
        from threefish_gen.gen.render import render_variant
        from threefish_gen.gen.spec import VERSIONS
        targets = [self.target] if self.target else [t for t in self.p["results"] if t in registry.TARGETS]
        given = {k: v for k, v in values.items() if v is not None}
        chosen, files = [], {}
        for name in targets:
            t = registry.get(name)
            for bits in sorted(self.p["results"].get(name, {}), key=int):
                if only_bits is not None and int(bits) != only_bits:
                    continue
                w = cpu_rules.winner(self.p, name, int(bits))
                if w is None:
                    continue
                o, extra = cpu_rules.split_options(w["options"])
                line = record_line(self.where, self.p, w)
                for ver in VERSIONS:
                    if only_version is not None and ver != only_version:
                        continue
                    v = t.variant(get_spec(ver, int(bits)), o, "", **{**extra, **given})
                    chosen.append(v)
                    files.update(stamp(render_variant(v), line))
        if not chosen:
            raise GenError(f"{self.where} has no bulk winner for " + (f"--target {self.target}" if self.target
                                                                       else "any target"))
        return chosen, files


# --------------------------------------------------------------------------- command

def _tunable() -> tuple:
    return tuple(t.name for t in all_tools() if t.tunable())


@click.command("tune")
@click.option("--target", "targets", multiple=True, type=click.Choice(_tunable(), case_sensitive=False),
              help="tune these targets (repeatable; default: all that tune can time)")
@click.option("--size", "sizes", multiple=True, type=click.Choice([str(s) for s in SIZES]),
              help="block sizes (repeatable; default all)")
@constants_option(default="1.3", help="constants of this version (speed does not depend on it)")
@click.option("--budget", type=click.FloatRange(5, 86400), default=300, show_default=True,
              help="seconds in all, builds included")
@click.option("--workdir", default="build/tune", show_default=True, help="scratch folder (objects are cached)")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="the profile (JSON)")
def tune_cmd(targets, sizes, version, budget, workdir, out_path):
    """Time the candidate variants of each target on this machine (bulk and chained) within a time
    budget, pruning what a cheap measurement rules out, and write a profile: per target, size and
    mode the winner and runner-up with their options (render --profile / --set tuned use it)."""
    p = tune(tuple(targets) or _tunable(), tuple(int(s) for s in sizes) or SIZES, version, budget,
             Path(workdir).resolve())
    out = Path(out_path)
    write_files({out.name: json.dumps(p, indent=1) + "\n"}, out.parent)     # whole or not at all
    for target, sizes_ in p["results"].items():
        for bits, modes in sizes_.items():
            for mode, g in modes.items():
                w = g["winner"]
                fig = f"{w['name']} {w['cpb']:.2f} c/B" if w else "none measured"
                failed = f", {len(g['failed'])} failed to build" if g.get("failed") else ""
                click.echo(f"{target} {bits} {mode}: {fig} ({g['measured']} measured, {len(g['pruned'])} pruned, "
                           f"{g['not_built']} not built{failed})")
    click.echo(f"tune: profile written to {out} ({p['elapsed_s']} s of {budget:g})")
