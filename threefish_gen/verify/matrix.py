"""verify's driver: every variant x build of a run through its target's checker, in parallel,
with progress; the matrix per target, the JSON report, the exit status.

The checkers are registered in the one explicit table ``CHECKERS`` below, keyed by the
checker of a variant (``Target.checker``: its recipe's, or for ``--primitive skein`` variants
skein-c / skein-simd / skein-dotnet / skein-nasm): c (scalar C harness), simde (C harness with a SIMDe
fallback), nasm (assembled, linked with the C harness), dotnet (one C# project), cargo (the Rust crate
built offline with cargo beside a Rust harness, verify/rust.py; cargo-skein: the Rust Skein crate, the
same checker with its Skein harness), skein-* (the Skein harnesses of
verify/skein_c_abi.py and verify/skein_csharp.py on Skein vector files).
"""
from __future__ import annotations

import json
import os
import random
import sys
import time
from contextlib import nullcontext
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Callable, NamedTuple

from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.variant import Variant

from . import csharp, ct, nasm, rust, simd
from . import prove as vprove
from . import skein_c_abi as skein_checker
from . import skein_csharp
from . import objstore, proc, shapes, sources, workers
from . import shard as vshard
from .proc import Timeout
from .junit import write_junit
from .sources import NotGiven
from .runner import AARCH64_BUILDS, BIG_ENDIAN_BUILDS, C_BUILDS, Report, Row, check_c, cpu_flags, vector_file



class Checker(NamedTuple):
    """A checker: ``check(variant, build, workdir, vectors) -> Row``, ``builds(target, variant) ->
    builds``, ``tools``, the programs whose ``--version`` decides its rows beside each build's
    own compiler and emulator (the result cache's key, verify/shard.py ``row_key``), declared
    by the checker's module, ``vectors``, the ``vector_file(spec, path, count, seed)`` its rows
    read (None: the Threefish one, runner.py), and ``prepare(variants of that checker,
    workdir)``, called once per run before the checks (None: nothing; C#: every variant goes
    into one project that is built once)."""
    check: Callable
    builds: Callable
    tools: tuple = ()
    vectors: Callable | None = None
    prepare: Callable | None = None


# recipe.checker -> its Checker
CHECKERS: dict = {
    "c": Checker(check_c, lambda target, v: C_BUILDS + BIG_ENDIAN_BUILDS),
    "simde": Checker(simd.check_simd, lambda target, v: simd.builds(v), simd.TOOLS),
    "nasm": Checker(nasm.check, lambda target, v: nasm.builds(target, v), nasm.TOOLS),
    "dotnet": Checker(csharp.check_csharp, lambda target, v: csharp.RUNS, csharp.TOOLS,
                      prepare=csharp.prepare),
    "skein-c": Checker(skein_checker.check_skein, lambda target, v: C_BUILDS + BIG_ENDIAN_BUILDS,
                       vectors=skein_checker.vector_file),
    # AArch64 builds (qemu) where the variant has a NEON hash_many kernel
    "skein-simd": Checker(skein_checker.check_skein, lambda target, v: C_BUILDS + (
        AARCH64_BUILDS if "neon" in target.skein_isas(v) else ()), vectors=skein_checker.vector_file),
    "skein-dotnet": Checker(skein_csharp.check, lambda target, v: skein_csharp.RUNS, skein_csharp.TOOLS,
                            vectors=skein_checker.vector_file, prepare=skein_csharp.prepare),
    "skein-nasm": Checker(skein_checker.check_skein, skein_checker.nasm_builds, skein_checker.ASM_TOOLS,
                          vectors=skein_checker.vector_file),
    "cargo": Checker(rust.check, lambda target, v: rust.runs(v), rust.TOOLS),
    "cargo-skein": Checker(rust.check, lambda target, v: rust.SKEIN_RUNS, rust.TOOLS,
                           vectors=skein_checker.vector_file),
}
# vector_file -> the prefix of its files' names (vectors/skein-TAG.txt beside vectors/TAG.txt)
VECTOR_NAMES: dict = {skein_checker.vector_file: "skein-"}


def kind_of(v: Variant) -> str:
    return get_target(v.target).checker(v)


def checker_of(v: Variant):
    return CHECKERS[kind_of(v)]


def vectors_of(v: Variant) -> Callable:
    """The vector_file function of the variant's checker."""
    return checker_of(v).vectors or vector_file


def builds_of(v: Variant):
    """The variant's builds; C-ABI Threefish code also gets the constant-time column (verify/ct.py)."""
    extra = (ct.BUILD,) if get_target(v.target).recipe.interface == "c-abi" and v.primitive == "threefish" else ()
    extra += (vprove.BUILD,) if vprove.applies(v) else ()
    return tuple(checker_of(v).builds(get_target(v.target), v)) + extra


POOL_FROM = 8      # variants in a run from which its Python work goes to worker processes


def run(variants: list[Variant], random_count: int = 1000, seed: int | None = None,
        jobs: int | None = None, workdir: Path = Path("build/verify"),
        report_path: Path | None = Path("build/verify-report.json"), stream=sys.stdout,
        thorough: bool = True, junit_path: Path | None = None, prove: bool = False,
        shard: tuple[int, int] | None = None, cache_dir: Path | None = None, by_shape: bool = False) -> Report:
    """``thorough=False`` (check's default): native builds only -- no sanitizer, emulated, cross or
    other-ABI rows (``build.thorough``), and a variant whose ISA the CPU lacks is SKIPPED instead of
    emulated.  ``prove``: also the translation-validation row (verify/prove.py; `verify --set all`
    and `check --thorough`: minutes for the nasm sets).  ``junit_path``: also write the rows as
    JUnit XML.  ``shard`` (K, N): only the rows of shard K of N (verify/shard.py); ``cache_dir``:
    reuse PASS rows whose key is unchanged (None: run everything).  ``by_shape``: an older
    version's per-shape rows whose code is the newest version's but for its integer literals are
    COVERED by the newest version's rows (verify/shapes.py) instead of run again."""
    # build steps the run's rows share (content-keyed, verify/objstore.py), open for this run only
    objstore.reset(Path(workdir).resolve() / "objects")
    # renders: once per variant in memory; with a result cache, kept between runs (verify/sources.py)
    sources.render_cache(Path(cache_dir) / "renders" if cache_dir else None)
    _DIGESTS.clear()
    jobs = jobs or os.cpu_count() or 1
    # the run's Python work (renders, shape digests, prove) in processes, beside the threads' builds
    # (verify/workers.py); a small run (a test's few variants) or check's given files: in process
    python_work = workers.pool(jobs, sources.render_dir()) \
        if jobs > 1 and len(variants) >= POOL_FROM and not sources.only_given() else nullcontext()
    try:
        with python_work:
            return _run_rows(variants, random_count, seed, jobs, workdir, report_path, stream, thorough, junit_path,
                             prove, shard, cache_dir, by_shape)
    finally:
        objstore.reset(None)
        sources.render_cache(None, in_run=False)
        _DIGESTS.clear()


def _run_rows(variants, random_count, seed, jobs, workdir, report_path, stream, thorough, junit_path, prove, shard,
              cache_dir, by_shape=False) -> Report:
    seed = random.SystemRandom().randrange(1 << 32) if seed is None else seed
    workdir = Path(workdir).resolve()
    report = Report(seed=seed, random_vectors=random_count)
    specs = sorted({(vectors_of(v), v.spec) for v in variants},
                   key=lambda s: (s[1].version, s[1].bits, s[0].__module__))
    tasks = [(v, b) for v in variants for b in builds_of(v)
             if (thorough or not getattr(b, "thorough", False)) and (prove or b is not vprove.BUILD)]
    proc.reset()                              # a new run: commands may start (after a stopped one)
    sources.stage(workdir / "input")          # the user's files (check DIR): one copy on disk
    # a variant none of whose rows is in this run (check's fast default) still gets a row: it is never silently left out
    left_out = [v for v in variants if not any(tv is v for tv, _ in tasks)]
    # an older version's per-shape rows that the newest version's rows cover (verify/shapes.py)
    digests = _prepare(list(dict.fromkeys(v for v, _ in tasks)))
    cover = shapes.covered_by(tasks, lambda v: digests.get(v) or sources.derived(v, "shape", shapes.shape_digest)) \
        if by_shape else {}
    covered = [(tasks[i], cover[i]) for i in sorted(cover)]
    tasks = [t for i, t in enumerate(tasks) if i not in cover]
    # the matrix, in the report's order: the rows that run, the covered rows, the left-out variants
    full = [(v.label(), b.name) for v, b in tasks] + [(v.label(), b.name) for (v, b), _ in covered] + \
        [(v.label(), "(none)") for v in left_out]
    costs = [vshard.cost(*r) for r in full[:len(tasks)]] + [0.0] * len(covered) + \
        [vshard.cost(*r) for r in full[len(tasks) + len(covered):]]
    positions = list(range(len(full)))
    if shard:
        split = vshard.partition(full, shard[1], costs)
        positions = [i for i in positions if split[i] == shard[0] - 1]
        n_run, n_cov = len(tasks), len(covered)
        tasks = [tasks[i] for i in positions if i < n_run]
        covered = [covered[i - n_run] for i in positions if n_run <= i < n_run + n_cov]
        left_out = [left_out[i - n_run - n_cov] for i in positions if i >= n_run + n_cov]
        variants = list(dict.fromkeys(v for v, _ in tasks))
    cache = vshard.Cache(cache_dir) if cache_dir else None
    for kind, checker in CHECKERS.items():
        mine = [v for v in variants if kind_of(v) == kind]
        if mine and checker.prepare:
            checker.prepare(mine, workdir)
    if shard:
        print(f"verify: shard {shard[0]}/{shard[1]}: {len(positions)} of the matrix's {len(full)} rows", file=stream)
    print(f"verify: {len(variants)} variant(s), {len(tasks)} build(s); "
          f"{random_count} random vectors per size (seed {seed}); {jobs} job(s)", file=stream)
    if covered:
        print(f"verify: {len(covered)} row(s) of older constants versions COVERED by the newest version's: "
              f"the same code but for its integer literals, a build that checks the code's shape "
              f"(verify/shapes.py; --every-version runs them)", file=stream)
    print(f"verify: {proc.sandbox_note()}; every build and run under CPU-time, memory, file-size and "
          f"no-core limits", file=stream)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        def vectors_for(fs):
            path = workdir / "vectors" / f"{VECTOR_NAMES.get(fs[0], '')}{fs[1].tag}.txt"
            if cache:       # the same function, spec, count, seed and package code: the file of an earlier run
                return cache.vector_file(fs[0], fs[1], path, random_count, seed)
            return fs[0](fs[1], path, random_count, seed)
        vec = dict(zip(specs, pool.map(vectors_for, specs)))

        def one(task):
            v, b = task
            wd = workdir / v.stem / b.name.replace(" ", "-").replace("+", "_")
            wd.mkdir(parents=True, exist_ok=True)
            t0 = time.monotonic()
            lacking = sorted(get_target(v.target).features(v) - cpu_flags()) if not thorough else []
            if lacking:
                return Row(v.label(), b.name, "SKIPPED", f"CPU lacks {', '.join(lacking)} (--thorough runs it "
                           f"emulated where SIMDe is installed)")
            try:
                vectors = vec[(vectors_of(v), v.spec)]
                key = _row_key(v, b, vectors) if cache else None
                hit = cache.get(key) if cache else None
                if hit is not None:
                    return Row(**{**hit, "variant": v.label(), "build": b.name, "cached": True,
                                  "detail": hit["detail"] + " (cached)"})
                check = ct.check if b is ct.BUILD else vprove.check if b is vprove.BUILD else checker_of(v).check
                row = check(v, b, wd, vectors)
                if cache:
                    cache.put(key, asdict(row))
                return row
            except NotGiven as e:       # check: a file the row needs is not in the folder (nothing rendered)
                return Row(v.label(), b.name, "SKIPPED", str(e), time.monotonic() - t0)
            except Timeout as e:
                return Row(v.label(), b.name, "TIMEOUT", f"{e} (not a failure of the code; "
                           f"THREEFISH_GEN_TIMEOUT_SCALE raises the limits)", time.monotonic() - t0)
            except Exception as e:      # a checker's own error fails its row, never the whole run
                return Row(v.label(), b.name, "FAIL", f"the checker stopped: {type(e).__name__}: {e}",
                           time.monotonic() - t0)

        rows: list = [None] * len(tasks)
        start = time.monotonic()
        futures = {pool.submit(one, t): i for i, t in enumerate(tasks)}
        try:
            for k, fut in enumerate(as_completed(futures), 1):
                row = rows[futures[fut]] = fut.result()
                elapsed = time.monotonic() - start
                left = elapsed / k * (len(tasks) - k)
                detail = row.detail if len(row.detail) <= 90 else row.detail[:87] + "..."
                print(f"  [{k}/{len(tasks)} {_clock(elapsed)} elapsed, ~{_clock(left)} left] "
                      f"{row.status:<15} {row.variant:<40} {row.build:<17} {detail} "
                      f"({row.seconds:.1f}s)", file=stream, flush=True)
        except BaseException:
            for fut in futures:
                fut.cancel()
            proc.stop_all("interrupted")     # the running builds too: the pool waits for them
            raise
        cached = sum(1 for r in rows if r.cached)
        report.rows = rows + [Row(v.label(), b.name, shapes.COVERED, f"not run: {rep.label()} [{b.name}] checks the "
                                  f"same code but for its constants' integer literals")
                              for (v, b), (rep, _) in covered] + \
            [Row(v.label(), "(none)", "SKIPPED", "every row of this variant is a --thorough row") for v in left_out]
    if report_path:
        Path(report_path).parent.mkdir(parents=True, exist_ok=True)
        extra = {"shard": f"{shard[0]}/{shard[1]}", "positions": positions} if shard else {}
        Path(report_path).write_text(json.dumps(
            {"seed": report.seed, "random_vectors": report.random_vectors,
             "matrix": vshard.matrix_id(full), "matrix_rows": len(full), "cached": cached, **extra,
             "rows": [asdict(r) for r in report.rows]}, indent=2) + "\n")
        print(f"verify: report written to {report_path}", file=stream)
    if junit_path:
        write_junit(report, Path(junit_path))
        print(f"verify: JUnit XML written to {junit_path}", file=stream)
    report.cached = cached
    if objstore.STATS["shared"]:
        print(f"verify: {objstore.STATS['shared']} build step(s) reused from another row of this run "
              f"({objstore.STATS['built']} run; {workdir / 'objects'})", file=stream)
    if cache:
        print(f"verify: {cached} of {len(tasks)} row(s) from the result cache ({cache_dir}; --no-cache runs "
              f"every row)", file=stream)
    print_matrix(report, stream)        # last: its last line is the verdict
    return report


def _prepare(variants: list) -> dict:
    """Before the rows: where the run keeps renders on disk, every variant rendered (and a nasm
    System V variant's Win64 form, which its rows build too), spread over the run's worker processes:
    {variant: its shape digest (verify/shapes.py)}; elsewhere {} (the rows render as they go)."""
    if not workers.active() or sources.render_dir() is None:
        return {}
    return dict(zip(variants, workers.map_(_render_kept, variants)))


def _render_kept(v: Variant) -> str:
    """(In a worker process) ``v``'s render and its Win64 form kept on disk; its shape digest."""
    win = _win64_form(v)
    if win is not None:
        sources.sources(win)
    return sources.derived(v, "shape", shapes.shape_digest)


def _win64_form(v: Variant):
    """The Win64 form of a nasm x86-64 System V variant, which its win64 rows build beside it, or
    None (a Win64 variant's elf64 rows are SKIPPED, run by its ms_abi row: its own text decides)."""
    if kind_of(v) != "nasm" or get_target(v.target).recipe.word_bits != 64 or v.get("abi", "sysv") != "sysv":
        return None
    return nasm.win64_form(v)


# digests of this run's texts (by variant) and vector files (by path), each computed once: a
# variant has up to ten rows, a vector file hundreds (cleared by run())
_DIGESTS: dict = {}


def _row_key(v: Variant, b, vectors: Path) -> str:
    """The result-cache key of a row (verify/shard.py): the texts the row builds (a nasm x86-64
    variant's win64 rows build its Win64 form too), the build, the tools, the vectors, the CPU."""
    kind = kind_of(v)
    texts = _DIGESTS.get(("texts", v))
    if texts is None:
        both = [sources.sources(v)]
        win = None if sources.only_given() else _win64_form(v)
        if win is not None:
            both.append(sources.sources(win))
        texts = _DIGESTS[("texts", v)] = vshard.texts_digest(both)
    digest = _DIGESTS.get(("vectors", vectors))
    if digest is None:
        digest = _DIGESTS[("vectors", vectors)] = vshard.file_digest(vectors)
    return vshard.row_key(kind, b, texts, digest, cpu_flags(), CHECKERS[kind].tools)


def merge_reports(paths: list[Path], report_path: Path | None, junit_path: Path | None = None,
                  stream=sys.stdout) -> int:
    """`verify --merge`: the shards' reports as one (verify/shard.py), its matrix and verdict; the
    exit status of verify (2 and one line where the reports are not the shards of one run)."""
    try:
        merged = vshard.merge([json.loads(Path(p).read_text()) for p in paths])
    except (OSError, ValueError) as e:
        print(f"verify: merge: cannot read a report: {e}", file=stream)
        return 2
    except vshard.MergeError as e:
        print(f"verify: {e}", file=stream)
        return 2
    report = Report(rows=[Row(**r) for r in merged["rows"]], seed=merged["seed"],
                    random_vectors=merged["random_vectors"], cached=merged["cached"])
    print(f"verify: merged {len(paths)} shard report(s): {len(report.rows)} rows (seed {report.seed}, "
          f"{report.random_vectors} random vectors; {report.cached} row(s) from the result cache)", file=stream)
    if report_path:
        Path(report_path).parent.mkdir(parents=True, exist_ok=True)
        Path(report_path).write_text(json.dumps(merged, indent=2) + "\n")
        print(f"verify: report written to {report_path}", file=stream)
    if junit_path:
        write_junit(report, Path(junit_path))
        print(f"verify: JUnit XML written to {junit_path}", file=stream)
    print_matrix(report, stream)
    return report.exit_status()


def _clock(seconds: float) -> str:
    m, sec = divmod(int(seconds + 0.5), 60)
    return f"{m}:{sec:02d}"


def print_matrix(report: Report, stream=sys.stdout) -> None:
    """One table per target (its builds as columns), the reasons for SKIPPED cells, the totals.
    Full details of every cell are in the JSON report."""
    by_target: dict[str, list[Row]] = {}
    for r in report.rows:
        by_target.setdefault(r.variant.split()[0], []).append(r)
    for target, rows in by_target.items():
        builds = list(dict.fromkeys(r.build for r in rows))
        variants = list(dict.fromkeys(r.variant for r in rows))
        cell = {(r.variant, r.build): r for r in rows}
        width = max([len(v) for v in variants] + [7])
        cols = [max(len(b), 15) for b in builds]
        print("", file=stream)
        print(f"{'variant':<{width}}  " + "  ".join(f"{b:<{w}}" for b, w in zip(builds, cols)), file=stream)
        for v in variants:
            print(f"{v:<{width}}  " + "  ".join(f"{cell[(v, b)].status if (v, b) in cell else '-':<{w}}"
                                               for b, w in zip(builds, cols)), file=stream)
    skipped = [r for r in report.rows if r.status.startswith("SKIPPED")]
    for build, detail in sorted({(r.build, r.detail) for r in skipped}):
        print(f"SKIPPED {build}: {detail}", file=stream)
    for r in report.rows:
        if r.status in ("FAIL", "TIMEOUT"):
            print(f"{r.status} {r.variant} [{r.build}]: {r.detail}", file=stream)
    n = {s: sum(1 for r in report.rows if r.status.split()[0] == s)
         for s in ("PASS", "FAIL", "TIMEOUT", "SKIPPED", "ASSEMBLED", "BUILT", shapes.COVERED)}
    emulated = sum(1 for r in report.rows if r.status == "PASS (emulated)")
    timeouts = f", {n['TIMEOUT']} timed out" if n["TIMEOUT"] else ""
    assembled = f", {n['ASSEMBLED']} only assembled (not run)" if n["ASSEMBLED"] else ""
    assembled += f", {n['BUILT']} only built (not run)" if n["BUILT"] else ""
    assembled += (f", {n[shapes.COVERED]} covered by the newest version's row (same code but for its "
                  f"constants; not run)") if n[shapes.COVERED] else ""
    print(f"verify: {n['PASS']} passed ({emulated} of them emulated), {n['FAIL']} failed{timeouts}, "
          f"{n['SKIPPED']} skipped{assembled}", file=stream)
    print(f"verify: {report.verdict()[1]}", file=stream)
