"""The ``threefish-gen`` command line (also ``python -m threefish_gen``).

Every enumerated option is a ``click.Choice`` built from the target descriptors
(gen/targets/), so completion, validation and errors agree everywhere.  Bad input is one line
on stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from threefish_gen.gen import __version__
from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import Interrupted
from threefish_gen.verify.proc import Stopped
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import SIZES, VERSIONS, all_specs, get_spec
from threefish_gen.gen.threefish import KEYS, UNROLL, Options

from .cli_options import constants_option
from .tools.check_dir import check_cmd
from .tools.tune import tune_cmd


def _specs(sizes: tuple, versions: tuple):
    sizes = sizes or SIZES
    versions = versions or VERSIONS
    return [get_spec(v, s) for v in versions for s in sizes]


def _choice(values) -> click.Choice:
    return click.Choice([str(v) for v in values], case_sensitive=False)


TARGET_CHOICE = _choice(registry.names())
SIZE_CHOICE = _choice(SIZES)


def target_options(only=None):
    """One click option per target option any descriptor declares (choices: the union of every
    target's values; the chosen target then checks its own).  ``only``: restrict to these names."""
    seen: dict = {}
    for t in registry.TARGETS.values():
        for opt in t.schema:
            if only is not None and opt.name not in only:
                continue
            ent = seen.setdefault(opt.name, {"opt": opt, "targets": []})
            ent["targets"].append(t.name)
    decorators = []
    for name, ent in seen.items():
        opt = ent["opt"]
        param = "cls" if name == "class" else name
        helptext = f"{', '.join(ent['targets'])}: {opt.help}"
        if opt.kind is bool:
            decorators.append(click.option(f"--{name}/--no-{name}", param, default=None, help=helptext))
        elif opt.kind is int:
            decorators.append(click.option(f"--{name}", param, type=int, default=None, help=helptext))
        elif opt.choices:
            decorators.append(click.option(f"--{name}", param, type=_choice(registry.option_choices(name)),
                                           default=None, help=helptext))
        else:
            decorators.append(click.option(f"--{name}", param, default=None, help=helptext))

    def apply(f):
        for d in reversed(decorators):
            f = d(f)
        return f
    return apply


def share_paths() -> dict[str, Path]:
    """Where the installed package keeps the files other build systems read (package data)."""
    from importlib.resources import files
    share = Path(str(files("threefish_gen") / "share"))
    return {"cmakedir": share / "cmake", "backend.mk": share / "backend.mk"}


def _print_path(which: str):
    def callback(ctx, _param, value):
        if value and not ctx.resilient_parsing:
            click.echo(share_paths()[which])
            ctx.exit()
    return callback


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="threefish-gen")
@click.option("--cmakedir", is_flag=True, expose_value=False, is_eager=True, callback=_print_path("cmakedir"),
              help="print the folder of ThreefishGenConfig.cmake (cmake -DThreefishGen_DIR=...) and exit")
def cli():
    """Generate, verify and benchmark Threefish implementations from one description."""


@cli.command("list")
@click.option("--passes", is_flag=True, help="the passes of each target's compile (recommended Threefish-512)")
def list_cmd(passes):
    """Targets, layouts, versions, sizes and options; the recommended variants."""
    if passes:
        spec = get_spec("1.3", 512)
        for t in registry.TARGETS.values():
            v = t.variants("recommended", [spec])[0]
            click.echo(f"{t.name} ({v.label()}):")
            for p in t.passes(v):
                click.echo(f"  {p.name}: {p.reads} -> {p.makes}")
        return
    click.echo("versions:   " + " ".join(VERSIONS) + "   (1.1 old rotations; 1.2 new rotations; "
               "1.3 new C240)")
    click.echo("sizes:      " + " ".join(map(str, SIZES)))
    click.echo("targets:")
    for t in registry.TARGETS.values():
        for line in t.list_lines():
            click.echo(line)
    click.echo("options:")
    click.echo(f"  --keys       {' | '.join(KEYS):<14} subkeys computed on the fly, or a precomputed table")
    click.echo(f"  --unroll     {' | '.join(UNROLL):<14} every round unrolled, or a loop over 24-round passes "
               "(Threefish-1024 vector kernels: 16)")
    click.echo("  --interleave 1..4           blocks processed together by encrypt_blocks/decrypt_blocks")
    click.echo("recommended (every constants version; 'make gen' renders the v1.3 ones into out/):")
    for t in registry.TARGETS.values():
        for line in t.recommended_lines():
            click.echo(line)


def resolve_target(name: str, values: dict) -> registry.Target:
    """The descriptor a render goes to: ``--target c`` with ``--isa``/``--layout`` is SIMD C."""
    t = registry.get(name)
    if t.option("isa") is None and (values.get("isa") is not None or values.get("layout") is not None):
        simd = [x for x in registry.TARGETS.values()
                if x.recipe.language == t.recipe.language and x.option("isa") is not None]
        if simd:
            return simd[0]
    return t


def one_variant(t, size, version, keys, unroll, interleave, prefix, given: dict, cmd: str):
    """The one variant the command-line options name (render, prove)."""
    if size is None or version is None:
        raise GenError(f"{cmd} needs --size and --constants (or --set recommended)")
    spec = get_spec(version, size)
    if t.option("isa") is not None and t.option("isa").default is None and given.get("isa") is None \
            and given.get("layout") is None:
        raise GenError(f"--target {t.name} needs --isa ({' | '.join(t.option('isa').choices)})")
    if prefix is not None and t.recipe.language == "c#":
        raise GenError("--prefix applies to C targets; use --namespace/--class for csharp")
    rec = t.default_options_for(spec, given)
    o = Options(keys or rec.keys, unroll or rec.unroll, rec.interleave if interleave is None else interleave)
    return t.variant(spec, o, prefix or "", **given)


@cli.command()
@click.option("--target", default="c", show_default=True, type=TARGET_CHOICE, help="the target")
@click.option("--size", default=None, type=SIZE_CHOICE, help="block size in bits")
@constants_option(help="Skein version of the constants: 1.1 (old rotations), 1.2, 1.3 (new C240)")
@click.option("--keys", default=None, type=_choice(KEYS), help="subkeys on the fly or from a table "
              "(default: the recommended variant's)")
@click.option("--unroll", default=None, type=_choice(UNROLL),
              help="every round, or a loop over 24-round passes (Threefish-1024 vector kernels: 16) "
                   "(default: the recommended variant's)")
@click.option("--interleave", type=int, default=None, help="blocks per pass in *_blocks, 1..4 (default: recommended)")
@click.option("--prefix", default=None, help="symbol prefix (default names size, version and variant)")
@click.option("--set", "which", type=click.Choice(["recommended", "tuned"]), default=None,
              help="render every recommended variant (all sizes and versions; --size / --constants: that part) instead of one; tuned: the "
              "bulk winners of --profile (default: the shipped profile of this CPU), every version")
@click.option("--profile", "profile", default=None, type=click.Path(dir_okay=False),
              help="a tune profile: its bulk winner's options replace the defaults (not options given here)")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False), help="output folder")
@click.option("--package", "package_dir", default=None, type=click.Path(file_okay=False),
              help="output folder that also gets a package project (csharp: a packable class library)")
@click.option("--force", is_flag=True,
              help="overwrite files in --out that render did not write there, or that changed since")
@target_options()
def render(target, size, version, keys, unroll, interleave, prefix, which, profile, out_dir, package_dir, force,
           **values):
    """Render one variant (or the recommended set) into a folder: a .c and a .h per variant (C
    targets), a .asm and a .h (nasm targets), or one .cs file (target csharp)."""
    if "cls" in values:
        values["class"] = values.pop("cls")
    from .tools import tune as tunemod
    if which == "tuned" or profile:
        explicit = click.get_current_context().get_parameter_source("target") == click.core.ParameterSource.COMMANDLINE
        tuned = tunemod.Tuned(profile, which, target if explicit else None)
        if which != "tuned":
            if which or size is None:
                raise GenError("--profile applies to one variant (give --size) or to --set tuned")
            keys, unroll, interleave, values = tuned.fill(resolve_target(target, values).name, int(size), keys,
                                                          unroll, interleave, values)
    t = resolve_target(target, values)
    given = {k: v for k, v in values.items() if v is not None}
    for k in given:
        if t.option(k) is None:
            owners = [x.name for x in registry.TARGETS.values() if x.option(k) is not None]
            raise GenError(f"--{k} applies to {' and '.join(owners)}" + (" only" if len(owners) == 1 else "")
                           + f", not --target {t.name}")
    if which:
        if any(x is not None for x in (keys, unroll, interleave, prefix, given.get("isa"),
                                       given.get("layout"), given.get("class"))):
            raise GenError("--set renders a fixed set (--size and --constants pick a part of it); drop --keys/"
                           "--unroll/--interleave/--prefix/--isa/--layout/--class")
        if which == "tuned":
            chosen, files = tuned.render_set(given, size and int(size), version)  # given options applied there
            t, given = registry.get(chosen[0].target), {}
        else:
            chosen = t.variants("recommended", all_specs())
        if "primitive" in given:     # --primitive picks that primitive's part of the set
            prim = given.pop("primitive")
            chosen = [v for v in chosen if v.get("primitive", "threefish") == prim]
        if which != "tuned" and (size is not None or version is not None):   # --size / --constants: that
            # part of the set (the tuned set is rendered for them alone, tune.Tuned.render_set)
            keep = [v for v in chosen if (size is None or v.spec.bits == int(size))
                    and (version is None or v.spec.version == version)]
            if not keep:
                raise GenError(f"the {which} set of --target {t.name} has no variant of that "
                               + " and ".join(x for x in (size and f"--size {size}",
                                                          version and f"--constants {version}") if x))
            chosen = keep
        if given:            # e.g. --namespace for the C# set
            chosen = [t.variant(v.spec, v.options, v.prefix, **{**dict(v.extra), **given}) for v in chosen]
    else:
        chosen = [one_variant(t, size, version, keys, unroll, interleave, prefix, given, "render")]
    files: dict[str, str] = files if which == "tuned" else {}
    owner: dict = {}
    for v in ([] if which == "tuned" else chosen):     # render everything first: nothing is written if any fails
        for name, text in render_variant(v).items():
            if name in files and files[name] != text:    # two variants, one path, different text
                raise GenError(f"{owner[name].label()} and {v.label()} both write {name} (with different "
                               f"contents): render them into separate folders")
            files[name], owner[name] = text, v
    if profile and not which:
        files = tunemod.stamp(files, tuned.record)
    from .tools.placing import package, place
    out_dir, files = package(t, chosen, files, out_dir, package_dir)
    for line in place(files, out_dir, force):
        click.echo(line)


@cli.command()
@click.option("--target", required=True, type=TARGET_CHOICE, help="the target")
@click.option("--size", default=None, type=SIZE_CHOICE, help="block size in bits")
@constants_option(help="Skein version of the constants: 1.1, 1.2, 1.3")
@click.option("--keys", default=None, type=_choice(KEYS), help="subkey schedule (default: recommended)")
@click.option("--unroll", default=None, type=_choice(UNROLL), help="unroll (default: recommended)")
@click.option("--interleave", type=int, default=None, help="blocks per pass (default: recommended)")
@click.option("--prefix", default=None, help="symbol prefix the file was rendered with")
@click.option("--set", "which", type=_choice(registry.SETS), default=None,
              help="prove every variant of a set (fresh renders) instead of one")
@click.option("--file", "file", default=None, type=click.Path(),
              help="the emitted file to prove (default: a fresh render of the variant); rust: the crate "
              "folder or its src/lib.rs")
@click.option("--time-limit", type=click.FloatRange(min=0), default=None,
              help="seconds one file's proof may run (default 1200; 0: no limit); past it: exit 2")
@click.option("--memory-limit", type=click.IntRange(min=0), default=None,
              help="MiB of address space the proof may use (default 8192; 0: no limit); past it: exit 2")
@target_options()
def prove(target, size, version, keys, unroll, interleave, prefix, which, file, time_limit, memory_limit,
          **values):
    """Prove, by symbolic execution of the emitted text, that every output word of every function
    equals the description's (exit 0); name the function, word and first differing line (exit 1).
    What the prover cannot read or bound (deep nesting, huge constants, long loops, the time and
    memory limits) is one line and exit 2."""
    from .tools import prove_files as provemod
    t = resolve_target(target, values)
    given = {k: v for k, v in values.items() if v is not None}
    chosen = (t.variants(which, all_specs()) if which else
              [one_variant(t, size, version, keys, unroll, interleave, prefix, given, "prove")])
    limits = {k: v for k, v in (("time_limit", time_limit), ("memory_limit", memory_limit)) if v is not None}
    sys.exit(provemod.run(t, chosen, file, **limits))


@cli.command()
@click.option("--set", "which", type=_choice(registry.SETS), default="recommended", show_default=True,
              help="recommended variants only, or every option set")
@click.option("--size", "sizes", multiple=True, type=SIZE_CHOICE, help="restrict to these sizes (repeatable)")
@constants_option("versions", multiple=True, help="restrict to these constants versions (repeatable)")
@click.option("--random", "random_count", type=click.IntRange(0, 100000), default=1000, show_default=True,
              help="random vectors per size, checked against the reference model")
@click.option("--seed", type=int, default=None, help="seed for the random vectors (default: fresh)")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="parallel builds (default: CPUs)")
@click.option("--report", "report_path", default="build/verify-report.json", show_default=True,
              help="where to write the JSON report")
@click.option("--workdir", default="build/verify", show_default=True, help="scratch folder for builds")
@click.option("--target", "targets", multiple=True, type=TARGET_CHOICE,
              help="restrict to these targets (repeatable; default: every target)")
@click.option("--junit", "junit_path", default=None, type=click.Path(dir_okay=False),
              help="also write the results as JUnit XML (for CI systems)")
@click.option("--shard", "shard", default=None, metavar="K/N",
              help="run only shard K of N (a deterministic split balanced by measured row costs)")
@click.option("--merge", "merge", is_flag=True,
              help="build nothing: combine the JSON reports of the shards of one run (REPORT...) into one "
                   "verdict, matrix and report (--report, --junit)")
@click.option("--cache-dir", default="build/verify-cache", show_default=True,
              help="result cache: PASS rows whose inputs are unchanged are reused")
@click.option("--no-cache", is_flag=True, help="run every row (the cache is neither read nor written)")
@click.option("--primitive", "primitives", multiple=True, type=click.Choice(["threefish", "skein"]),
              help="restrict to the variants of this primitive (repeatable; default: both)")
@click.option("--every-version", is_flag=True,
              help="run the sanitizer, constant-time, SIMDe, Win64, clippy and JIT rows for every constants "
                   "version too (default: once per code shape; an older version's row whose code is the "
                   "newest version's but for its integer literals is COVERED)")
@click.argument("reports", nargs=-1, type=click.Path(exists=True, dir_okay=False))
def verify(which, sizes, versions, random_count, seed, jobs, report_path, workdir, targets, junit_path,
           shard, merge, cache_dir, no_cache, primitives, every_version, reports):
    """Build every variant and run the harness (C: gcc and clang plus ASan/UBSan; nasm: assembled
    and linked with the C harness; C#: one project run under each JIT ISA setting).

    Exit status: 0 all ran rows passed; 1 a FAIL; 3 no FAIL but a build or run exceeded its time
    limit (TIMEOUT rows; THREEFISH_GEN_TIMEOUT_SCALE raises the limits); 4 nothing ran (every row
    SKIPPED).

    Spread over machines: `verify --shard K/N --seed S` on N runners (one seed for all), then
    `verify --merge REPORT...`.  The result cache reuses PASS rows only when the vectors are the
    same, so only runs given the same --seed (and --random) reuse rows; docs/integrations.md."""
    from threefish_gen.verify import matrix
    from threefish_gen.verify import shard as vshard
    if merge or reports:
        if not (merge and reports):
            raise click.UsageError("REPORT arguments go with --merge (verify --merge REPORT...)")
        sys.exit(matrix.merge_reports([Path(r) for r in reports], Path(report_path),
                                      Path(junit_path) if junit_path else None))
    try:
        part = vshard.parse_shard(shard) if shard else None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--shard") from None
    if part and seed is None:
        raise click.UsageError("--shard needs --seed: every shard of one run must check the same vectors")
    specs = _specs(tuple(int(s) for s in sizes), versions)
    targets = targets or registry.names()
    chosen = list(dict.fromkeys(v for t in targets for v in registry.variants(which, t, specs=specs)
                                if not primitives or v.primitive in primitives))
    from threefish_gen.verify import proc
    with proc.interruptible():       # SIGTERM/SIGHUP/SIGINT: every build and harness is killed
        rep = matrix.run(chosen, random_count=random_count, seed=seed, jobs=jobs,
                         workdir=Path(workdir), report_path=Path(report_path),
                         junit_path=Path(junit_path) if junit_path else None, prove=which == "all",
                         shard=part, cache_dir=None if no_cache else Path(cache_dir),
                         by_shape=not every_version)
    sys.exit(rep.exit_status())


@cli.command("kat")
@click.argument("files", nargs=-1, required=True, type=click.Path())
def kat_cmd(files):
    """Check Threefish known-answer files (verify/kat format) against the reference model."""
    from threefish_gen.gen import reference
    from threefish_gen.gen.kat import THREEFISH_FIELDS, parse, threefish_spec
    bad = 0
    for f in files:
        recs = parse(f, THREEFISH_FIELDS)
        for n, r in enumerate(recs, 1):
            spec = threefish_spec(f, n, r)
            ok = (reference.encrypt(spec, r["key"], r["tweak"], r["plaintext"]) == r["ciphertext"]
                  and reference.decrypt(spec, r["key"], r["tweak"], r["ciphertext"]) == r["plaintext"])
            bad += not ok
            if not ok:
                click.echo(f"FAIL {f} record {n} (Threefish-{spec.bits} v{spec.version})")
        click.echo(f"{f}: {len(recs)} records checked")
    click.echo(f"kat: {bad} failed")
    sys.exit(1 if bad else 0)


@cli.command()
@click.option("--size", "sizes", multiple=True, type=SIZE_CHOICE, help="restrict to these sizes (repeatable)")
@constants_option(default="1.3", help="constants of this version (speed does not depend on it)")
@click.option("--quick", is_flag=True, help="short run (for tests): few, short samples")
@click.option("--samples", type=click.IntRange(1, 1001), default=None,
              help="samples per row and pass (default 21 / passes)")
@click.option("--filter", "filters", multiple=True, help="only rows whose name contains this (repeatable)")
@click.option("--target", "targets", multiple=True, type=TARGET_CHOICE,
              help="only these targets (repeatable; default all; the scalar C reference row is always timed)")
@click.option("--json", "json_path", default="build/bench.json", show_default=True, help="JSON results")
@click.option("--md", "md_path", default="build/bench.md", show_default=True, help="markdown summary")
@click.option("--chart", "chart_stem", default="build/bench-chart", show_default=True,
              help="chart of c/B per target and size beside the peers: STEM.png and STEM.svg; code bytes "
                   "vs bulk c/B per row: STEM-size.png and STEM-size.svg (matplotlib)")
@click.option("--passes", type=click.IntRange(1, 21), default=None,
              help="runs of every row, spread over time (default 3; --quick 1); figures: median of passes")
def bench(sizes, version, quick, samples, filters, targets, json_path, md_path, passes, chart_stem):
    """Cycles/byte of every target (scalar C, SIMD C, NASM, C#, Rust) beside Botan and Crypto++."""
    from .tools.bench import run as benchmod
    sizes = tuple(int(get_spec(version, s).bits) for s in sizes) or SIZES
    targets = tuple(targets) or registry.names()
    specs = [get_spec(version, b) for b in sizes]
    dotnet = any(registry.get(t).recipe.interface == "dotnet" for t in targets)
    benchmod.run(benchmod.default_entries(sizes, version, targets, quick), quick=quick, samples=samples,
                 filters=filters, json_path=Path(json_path), md_path=Path(md_path),
                 csharp_specs=specs if dotnet else None,
                 notes=benchmod.target_notes(targets), sizes=sizes, passes=passes)
    from .tools.bench import skein_rows
    if skein_rows.wanted(sizes, targets, filters):
        skein_rows.run_into(Path(json_path), Path(md_path), quick=quick, passes=passes,
                            rust=skein_rows.rust_wanted(targets))
    from .tools.bench.chart import write_chart
    made = write_chart(Path(json_path), Path(chart_stem))
    click.echo(made if isinstance(made, str) else "bench: chart written to " + ", ".join(map(str, made)))


ASM_TARGETS = tuple(t.name for t in registry.TARGETS.values() if t.recipe.language == "nasm")


@cli.command()
@click.option("--target", default=ASM_TARGETS[0], show_default=True, type=_choice(ASM_TARGETS),
              help="an assembly target")
@click.option("--size", default="1024", show_default=True, type=SIZE_CHOICE, help="block size in bits")
@constants_option(default="1.3")
@click.option("--keys", default="fly", show_default=True, type=_choice(KEYS), help="subkey schedule")
@click.option("--strategy", default="all", show_default=True,
              help="named | linear-scan | belady | all (comma-separated list also accepted)")
@target_options(only=("abi", "registers", "pin", "rotate", "schedule", "isa", "layout"))
@click.option("--bench", is_flag=True, help="also assemble and measure each (bulk cycles/byte)")
def regalloc(target, size, version, keys, strategy, bench, **values):
    """Register allocation report: the strategies side by side for one variant."""
    from threefish_gen.gen import asm as ra

    from .tools.regalloc import table
    strategies = list(ra.STRATEGIES) if strategy == "all" else [s.strip() for s in strategy.split(",")]
    for st in strategies:
        if st not in ra.STRATEGIES:
            raise GenError(f"unknown strategy {st!r} (choose from {', '.join(ra.STRATEGIES)}, all)")
    t = registry.get(target)
    base = t.variant(get_spec(version, size), Options(keys, "full", 1), "", strategy=strategies[0],
                     **{k: v for k, v in values.items() if v is not None})
    if len(strategies) == 1:   # a single strategy: an impossible budget is an error (exit 2)
        t.allocate(base, "encrypt")
    for line in table(base, strategies, bench):
        click.echo(line)


@cli.command()
@click.option("--target", default=ASM_TARGETS[0], show_default=True, type=TARGET_CHOICE,
              help="the target (assembly targets: allocation pictures; SIMD targets: layout pictures)")
@click.option("--size", default="1024", show_default=True, type=SIZE_CHOICE, help="block size in bits")
@constants_option(default="1.3")
@click.option("--keys", default="fly", show_default=True, type=_choice(KEYS), help="subkey schedule")
@click.option("--interleave", type=int, default=None, help="blocks per pass in *_blocks (SIMD targets)")
@click.option("--strategy", default="all", show_default=True,
              help="named | linear-scan | belady | all (comma-separated list also accepted)")
@target_options(only=("abi", "registers", "pin", "rotate", "schedule", "isa", "layout"))
@click.option("--bench", is_flag=True, help="also assemble and measure each strategy (bulk cycles/byte)")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="the HTML report")
def explore(target, size, version, keys, interleave, strategy, bench, out_path, **values):
    """Register allocation and layout choices as pictures: one self-contained HTML report."""
    from threefish_gen.gen import asm as ra

    from .tools.explore import write
    strategies = list(ra.STRATEGIES) if strategy == "all" else [s.strip() for s in strategy.split(",")]
    for st in strategies:
        if st not in ra.STRATEGIES:
            raise GenError(f"unknown strategy {st!r} (choose from {', '.join(ra.STRATEGIES)}, all)")
    if interleave is not None and not 1 <= interleave <= 4:
        raise GenError(f"--interleave must be 1..4, not {interleave}")
    t = resolve_target(target, values)
    opts = {k: v for k, v in values.items() if v is not None}
    if t.recipe.language == "nasm":
        opts["strategy"] = strategies[0]
    base = t.variant(get_spec(version, size), Options(keys, "full", interleave or 1), "", **opts)
    click.echo(write(base, strategies, Path(out_path), bench))


@cli.command()
@click.option("--cmakedir", "which", flag_value="cmakedir", help="only the CMake module's folder")
@click.option("--backend-mk", "which", flag_value="backend.mk", help="only backend.mk (make -f it in a rendered folder)")
def paths(which):
    """Where the installed tool keeps the files other build systems use: the CMake module
    (find_package(ThreefishGen) with -DThreefishGen_DIR=<cmakedir>; docs/integrations.md) and
    backend.mk (builds and installs a rendered folder as a library with a pkg-config file)."""
    found = share_paths()
    for name, path in found.items():
        if not path.exists():
            raise GenError(f"{path} is missing: this threefish-gen was installed without its package data")
    if which:
        click.echo(found[which])
    else:
        for name, path in found.items():
            click.echo(f"{name:<11} {path}")


cli.add_command(check_cmd)     # tools/check_dir.py: `check DIR`
cli.add_command(tune_cmd)      # tools/tune.py: `tune --out PROFILE.json`


def _quiet_stdout() -> None:
    """After a failed write to stdout, make the interpreter's final flush quiet too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv=None) -> None:
    try:
        rc = cli.main(args=argv, prog_name="threefish-gen", standalone_mode=False)
        sys.stdout.flush()      # a full or closed stdout fails here, inside the handlers below
    except GenError as e:
        click.echo(f"threefish-gen: error: {e}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:      # click's form of Ctrl-C
        click.echo("threefish-gen: error: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        click.echo(f"threefish-gen: error: {e.format_message()}", err=True)
        sys.exit(2)
    except (KeyboardInterrupt, Stopped):
        click.echo("threefish-gen: error: interrupted", err=True)
        sys.exit(130)
    except Interrupted:
        click.echo("threefish-gen: error: terminated", err=True)
        sys.exit(143)
    except OSError as e:        # e.g. stdout closed or full (render > /dev/full), a folder verify needs
        _quiet_stdout()
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        click.echo(f"threefish-gen: error: {e.strerror or e}{where}", err=True)
        sys.exit(2)
    sys.exit(rc if isinstance(rc, int) else 0)


__all__ = ["cli", "main", "all_specs"]
