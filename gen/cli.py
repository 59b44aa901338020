"""The ``threefish-gen`` command line (also ``python -m gen``).

Bad input is one line on stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from . import __version__
from .errors import GenError
from .render import TARGETS, Variant, render_variant, write_files
from .spec import SIZES, VERSIONS, all_specs, get_spec
from .threefish import KEYS, UNROLL, Options


def _specs(sizes: tuple, versions: tuple):
    sizes = sizes or SIZES
    versions = versions or VERSIONS
    return [get_spec(v, s) for v in versions for s in sizes]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="threefish-gen")
def cli():
    """Generate, verify and benchmark Threefish implementations from one description."""


@cli.command("list")
def list_cmd():
    """Targets, layouts, versions, sizes and options; the recommended variants."""
    from .catalog import RECOMMENDED_C, RECOMMENDED_CSHARP, RECOMMENDED_NASM, RECOMMENDED_SIMD
    click.echo("versions:   " + " ".join(VERSIONS) + "   (1.1 old rotations; 1.2 new rotations; "
               "1.3 new C240)")
    click.echo("sizes:      " + " ".join(map(str, SIZES)))
    click.echo("targets:")
    click.echo("  c         scalar C99 (uint64_t), layout scalar; needs any C99 compiler")
    _list_simd()
    click.echo("  nasm-x64  NASM x86-64, words in GPRs; --abi sysv|win64, --rotate rol|rorx (rorx: BMI2);")
    click.echo("            --strategy named|linear-scan|belady, --registers N, --pin k,t,x,p|names; any x86-64")
    click.echo("            --isa gpr (default) | sse2 (words in XMM, as nasm-x86; SSE2) |")
    click.echo("            avx2 (lanes: 4 blocks per pass in ymm; needs AVX2; sysv) |")
    click.echo("            avx512 (lanes: 8 blocks per pass in zmm, gather/scatter; needs AVX-512F; sysv)")
    click.echo("  nasm-x86  NASM 32-bit cdecl, words in SSE2 XMM registers (one per register); needs SSE2;")
    click.echo("            --layout packed: one block in XMM pairs (A = even, B = odd words; also nasm-x64 --isa sse2)")
    click.echo("            --strategy, --registers (XMM budget 1..8), --pin as for nasm-x64")
    click.echo("  csharp    C# static class (net10.0, Span API); --namespace N --class C; layouts:")
    click.echo("              scalar  ulong + BitOperations.RotateLeft; any .NET 10 runtime")
    click.echo("              lanes   scalar one-block + EncryptBlocks/DecryptBlocks over 8 blocks in Vector512")
    click.echo("                      (AVX-512F/VL/BW/DQ/CD) or 4 blocks in Vector256 (AVX2), picked at run time")
    click.echo("              packed  Encrypt/Decrypt: one block in two vectors (A = even, B = odd words):")
    click.echo("                      Vector128 (256; AVX-512VL vprolvq or AVX2), Vector256 (512; same),")
    click.echo("                      Vector512 (1024; AVX-512F); needs --keys fly --unroll full")
    click.echo("options:")
    click.echo(f"  --keys       {' | '.join(KEYS):<14} subkeys computed on the fly, or a precomputed table")
    click.echo(f"  --unroll     {' | '.join(UNROLL):<14} every round unrolled, or a loop over 8-round cycles")
    click.echo("  --interleave 1..4           blocks processed together by encrypt_blocks/decrypt_blocks")
    click.echo("recommended (rendered into out/ by 'make gen'):")
    for bits, o in RECOMMENDED_C.items():
        click.echo(f"  c {bits:>4}: {o.describe()}")
    for target, sets in RECOMMENDED_NASM.items():
        for extra in sets:
            click.echo(f"  {target} (every size): " + " ".join(f"--{k} {v}" for k, v in extra))
    for bits, (layout, o) in RECOMMENDED_CSHARP.items():
        click.echo(f"  csharp {bits:>4}: --layout {layout} {o.describe()}")
    for bits, paths in RECOMMENDED_SIMD.items():
        for isa, layout, o in paths:
            click.echo(f"  c {bits:>4}: --isa {isa} --layout {layout} {o.describe()}")
        click.echo(f"  c {bits:>4}: --isa auto (dispatcher over the paths above and scalar)")


def _list_simd():
    from .printers.c_simd import ISAS, packed_width
    from .render_simd import ENV_VAR, LAYOUTS
    click.echo("  c --isa ISA --layout LAYOUT   SIMD C (x86 intrinsics; target attributes, no -m flags needed;")
    click.echo("                                -DTHREEFISH_GEN_SIMDE builds against SIMDe, emulated)")
    for isa in ISAS.values():
        for layout in LAYOUTS:
            if layout == "packed":
                shapes = ", ".join(f"{nw * 64 // packed_width(isa, nw)}x{packed_width(isa, nw)} ({64 * nw})"
                                   for nw in (4, 8, 16))
                what = f"encrypt/decrypt: one block in {shapes}; *_blocks: lanes"
            else:
                what = (f"{isa.bits // 64} blocks word-sliced per {isa.bits}-bit vector" if layout == "lanes" else
                        f"{isa.bits // 64} vector blocks + --interleave scalar blocks per pass")
            click.echo(f"    --isa {isa.name:<6} --layout {layout:<6}  {what}; needs {'+'.join(isa.features)}")
    click.echo("                                (packed needs --keys fly --unroll full)")
    click.echo(f"    --isa auto                  dispatcher: scalar + recommended SIMD paths, chosen by cpuid/xgetbv;")
    click.echo(f"                                ${ENV_VAR}=scalar|sse2|avx|avx2|avx512 caps the path")


def _options(keys, unroll, interleave, rec: Options) -> Options:
    """The options given on the command line, the rest taken from ``rec``."""
    return Options(keys or rec.keys, unroll or rec.unroll, rec.interleave if interleave is None else interleave)


def _simd_variant(target, spec, isa, layout, keys, unroll, interleave, prefix) -> Variant:
    """--target c with --isa/--layout: the c-simd target (its own renderer and checker)."""
    from .catalog import RECOMMENDED_C
    if target not in ("c", "c-simd"):
        raise GenError(f"--isa/--layout apply to --target c, not {target!r}")
    if isa is None:
        raise GenError("--layout needs --isa (sse2, avx, avx2, avx512 or auto)")
    if isa == "auto" and layout is not None:
        raise GenError("--isa auto (the dispatcher) takes no --layout")
    o = _options(keys, unroll, interleave, RECOMMENDED_C[spec.bits] if isa == "auto" else Options())
    extra = (("isa", isa),) if isa == "auto" else (("isa", isa), ("layout", layout or "lanes"))
    v = Variant("c-simd", spec, o, prefix or "", extra)
    from .render_simd import check_variant
    check_variant(v)
    return v


@cli.command()
@click.option("--target", default="c", show_default=True, help=f"one of: {', '.join(TARGETS)}")
@click.option("--size", default=None, help="block size in bits: 256, 512, 1024")
@click.option("--version", "version", default=None, help="Skein version of the constants: 1.1, 1.2, 1.3")
@click.option("--keys", default=None, help="fly | table (default: the recommended variant's)")
@click.option("--unroll", default=None, help="full | loop (default: the recommended variant's)")
@click.option("--interleave", type=int, default=None, help="blocks per pass in *_blocks (default: recommended)")
@click.option("--prefix", default=None, help="symbol prefix (default names size, version and variant)")
@click.option("--layout", default=None, help="c: lanes | hybrid | packed (with --isa); csharp: scalar | lanes | packed; "
              "nasm-x86 and nasm-x64 --isa sse2: scalar | packed")
@click.option("--namespace", default=None, help="csharp: namespace of the class (default ThreefishGen)")
@click.option("--class", "cls", default=None, help="csharp: class name (default names size, version, layout)")
@click.option("--set", "which", type=click.Choice(["recommended"]), default=None,
              help="render every recommended variant (all sizes and versions) instead of one")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="output folder")
@click.option("--abi", default=None, help="nasm-x64: sysv | win64 (nasm-x86: cdecl)")
@click.option("--strategy", default=None, help="nasm targets: named | linear-scan | belady (default belady)")
@click.option("--registers", type=int, default=None, help="nasm targets: register budget of the data class")
@click.option("--pin", default=None, help="nasm targets: values kept in one register (groups k,t,x,p or names)")
@click.option("--rotate", default=None, help="nasm-x64: rol | rorx (BMI2)")
@click.option("--schedule", default=None, help="nasm targets: description (statement order) | interleave (the MIXes of a round)")
@click.option("--isa", default=None, help="c: sse2 | avx | avx2 | avx512 | auto (runtime dispatcher); nasm-x64: gpr | "
              "sse2 (words in XMM, as nasm-x86) | avx2 (4 blocks in ymm lanes) | avx512 (8 blocks in zmm lanes)")
def render(target, size, version, keys, unroll, interleave, prefix, layout, namespace, cls, which, out_dir,
           abi, strategy, registers, pin, rotate, schedule, isa):
    """Render one variant (or the recommended set) into a folder: a .c and a .h per variant (C
    targets), a .asm and a .h (nasm targets), or one .cs file (target csharp)."""
    from .catalog import RECOMMENDED_C, variants
    nasm_opts = dict(abi=abi, strategy=strategy, registers=registers, pin=pin, rotate=rotate,
                     schedule=schedule, isa=isa)
    if target.startswith("nasm-"):
        nasm_opts["layout"] = layout
    if target == "csharp":
        if any(x is not None for x in nasm_opts.values()):
            raise GenError("--abi/--strategy/--registers/--pin/--rotate/--schedule/--isa do not apply to csharp")
        chosen = _csharp_variants(size, version, keys, unroll, interleave, prefix, layout, namespace, cls, which)
    elif any(x is not None for x in (namespace, cls)):
        raise GenError("--namespace/--class apply to --target csharp only")
    elif which:
        if any(x is not None for x in (size, version, keys, unroll, interleave, prefix)):
            raise GenError("--set renders a fixed set; drop --size/--version/--keys/--unroll/--interleave/--prefix")
        if isa is not None or layout is not None:
            raise GenError("--set renders a fixed set; drop --isa/--layout")
        chosen = variants("recommended", target)
    else:
        if size is None or version is None:
            raise GenError("render needs --size and --version (or --set recommended)")
        spec = get_spec(version, size)
        if target.startswith("nasm-"):
            from .printers.nasm import variant_extra
            chosen = [Variant(target, spec, _options(keys, unroll, interleave, Options("fly", "full", 1)),
                              prefix or "", variant_extra(target, **nasm_opts))]
        else:
            if any(x is not None for k, x in nasm_opts.items() if k != "isa"):
                raise GenError("--abi/--strategy/--registers/--pin/--rotate/--schedule apply to the "
                               "nasm targets only")
            if isa is not None or layout is not None or target == "c-simd":
                chosen = [_simd_variant(target, spec, isa, layout, keys, unroll, interleave, prefix)]
            else:
                chosen = [Variant(target, spec, _options(keys, unroll, interleave, RECOMMENDED_C[spec.bits]),
                                  prefix or "")]
    files: dict[str, str] = {}
    for v in chosen:           # render everything first: nothing is written if any fails
        files.update(render_variant(v))
    for path in write_files(files, out_dir):
        click.echo(str(path))


def _csharp_variants(size, version, keys, unroll, interleave, prefix, layout, namespace, cls, which):
    from .catalog import CSHARP_NAMESPACE, RECOMMENDED_CSHARP, csharp_variant, variants
    from .printers.csharp import LAYOUTS
    if prefix is not None:
        raise GenError("--prefix applies to C targets; use --namespace/--class for csharp")
    if which:
        if any(x is not None for x in (size, version, keys, unroll, interleave, layout, cls)):
            raise GenError("--set renders a fixed set; drop --size/--version/--keys/--unroll/--interleave/"
                           "--layout/--class")
        chosen = variants("recommended", "csharp")
        if namespace:
            chosen = [csharp_variant(v.spec, v.get("layout"), v.options, namespace, v.prefix) for v in chosen]
        return chosen
    if size is None or version is None:
        raise GenError("render needs --size and --version (or --set recommended)")
    spec = get_spec(version, size)
    rec_layout, rec = RECOMMENDED_CSHARP[spec.bits]
    layout = layout or rec_layout
    if layout not in LAYOUTS:
        raise GenError(f"unknown csharp layout {layout!r} (choose from {', '.join(LAYOUTS)})")
    opts = _options(keys, unroll, interleave, rec)
    opts.check()
    return [csharp_variant(spec, layout, opts, namespace or CSHARP_NAMESPACE, cls)]


@cli.command()
@click.option("--set", "which", type=click.Choice(["recommended", "all"]), default="all", show_default=True,
              help="recommended variants only, or every option set")
@click.option("--size", "sizes", multiple=True, help="restrict to these sizes (repeatable)")
@click.option("--version", "versions", multiple=True, help="restrict to these versions (repeatable)")
@click.option("--random", "random_count", type=click.IntRange(0, 100000), default=1000, show_default=True,
              help="random vectors per size, checked against the reference model")
@click.option("--seed", type=int, default=None, help="seed for the random vectors (default: fresh)")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="parallel builds (default: CPUs)")
@click.option("--report", "report_path", default="build/verify-report.json", show_default=True,
              help="where to write the JSON report")
@click.option("--workdir", default="build/verify", show_default=True, help="scratch folder for builds")
@click.option("--target", "targets", multiple=True, help="restrict to these targets (repeatable; default: every target)")
def verify(which, sizes, versions, random_count, seed, jobs, report_path, workdir, targets):
    """Build every variant and run the harness (C: gcc and clang plus ASan/UBSan; nasm: assembled
    and linked with the C harness; C#: one project run under each JIT ISA setting)."""
    from verify import runner
    from .catalog import variants
    specs = _specs(sizes, versions)
    targets = targets or tuple(runner.CHECKERS)
    for t in targets:
        if t not in runner.CHECKERS:
            raise GenError(f"unknown target {t!r} (choose from {', '.join(runner.CHECKERS)})")
    chosen = list(dict.fromkeys(v for t in targets for v in variants(which, t, specs=specs)))
    rep = runner.run(chosen, random_count=random_count, seed=seed, jobs=jobs,
                     workdir=Path(workdir), report_path=Path(report_path))
    sys.exit(1 if rep.failed else 0)


@cli.command("kat")
@click.argument("files", nargs=-1, required=True, type=click.Path())
def kat_cmd(files):
    """Check Threefish known-answer files (verify/kat format) against the reference model."""
    from . import reference
    from .kat import THREEFISH_FIELDS, parse, threefish_spec
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
@click.option("--size", "sizes", multiple=True, help="restrict to these sizes (repeatable)")
@click.option("--version", "version", default="1.3", show_default=True,
              help="constants of this version (speed does not depend on it)")
@click.option("--quick", is_flag=True, help="short run (for tests): few, short samples")
@click.option("--samples", type=click.IntRange(1, 1001), default=None,
              help="samples per row and pass (default 21 / passes)")
@click.option("--filter", "filters", multiple=True, help="only rows whose name contains this (repeatable)")
@click.option("--target", "targets", multiple=True, type=click.Choice(["c", "c-simd", "nasm-x64", "nasm-x86", "csharp"]),
              help="only these targets (repeatable; default all; the scalar C reference row is always timed)")
@click.option("--json", "json_path", default="build/bench.json", show_default=True, help="JSON results")
@click.option("--md", "md_path", default="build/bench.md", show_default=True, help="markdown summary")
@click.option("--passes", type=click.IntRange(1, 21), default=None,
              help="runs of every row, spread over time (default 3; --quick 1); figures: median of passes")
def bench(sizes, version, quick, samples, filters, targets, json_path, md_path, passes):
    """Cycles/byte of every target (scalar C, SIMD C, NASM, C#) beside Botan and Crypto++."""
    from . import bench as benchmod
    sizes = tuple(int(get_spec(version, s).bits) for s in sizes) or SIZES
    targets = tuple(targets) or benchmod.TARGET_NAMES
    specs = [get_spec(version, b) for b in sizes]
    benchmod.run(benchmod.default_entries(sizes, version, targets, quick), quick=quick, samples=samples,
                 filters=filters, json_path=Path(json_path), md_path=Path(md_path),
                 csharp_specs=specs if "csharp" in targets else None,
                 notes=benchmod.target_notes(targets), sizes=sizes, passes=passes)


@cli.command()
@click.option("--target", default="nasm-x64", show_default=True, help="nasm-x64 | nasm-x86")
@click.option("--size", default="1024", show_default=True, help="block size in bits: 256, 512, 1024")
@click.option("--version", "version", default="1.3", show_default=True, help="Skein version: 1.1, 1.2, 1.3")
@click.option("--keys", default="fly", show_default=True, help="fly | table")
@click.option("--strategy", default="all", show_default=True,
              help="named | linear-scan | belady | all (comma-separated list also accepted)")
@click.option("--abi", default=None, help="nasm-x64: sysv | win64")
@click.option("--registers", type=int, default=None, help="register budget of the data class")
@click.option("--pin", default=None, help="values kept in one register: groups k,t,x,p or value names")
@click.option("--rotate", default=None, help="nasm-x64: rol | rorx")
@click.option("--schedule", default=None, help="description | interleave")
@click.option("--isa", default=None, help="nasm-x64: gpr | sse2 | avx2 | avx512")
@click.option("--layout", default=None, help="nasm-x86, nasm-x64 --isa sse2: scalar | packed")
@click.option("--bench", is_flag=True, help="also assemble and measure each (bulk cycles/byte)")
def regalloc(target, size, version, keys, strategy, abi, registers, pin, rotate, schedule, isa, layout, bench):
    """Register allocation report: the strategies side by side for one variant."""
    from . import asm as ra
    from .printers.nasm import variant_extra
    from .regalloc_report import table
    if not target.startswith("nasm-"):
        raise GenError(f"regalloc reports the nasm targets (nasm-x64, nasm-x86), not {target!r}")
    strategies = list(ra.STRATEGIES) if strategy == "all" else [s.strip() for s in strategy.split(",")]
    for st in strategies:
        if st not in ra.STRATEGIES:
            raise GenError(f"unknown strategy {st!r} (choose from {', '.join(ra.STRATEGIES)}, all)")
    spec = get_spec(version, size)
    base = Variant(target, spec, Options(keys, "full", 1), "",
                   variant_extra(target, abi=abi, strategy=strategies[0], registers=registers, pin=pin,
                                 rotate=rotate, schedule=schedule, isa=isa, layout=layout))
    if len(strategies) == 1:   # a single strategy: an impossible budget is an error (exit 2)
        from .printers.nasm import allocate
        allocate(base, "encrypt")
    for line in table(base, strategies, bench):
        click.echo(line)


def main(argv=None) -> None:
    try:
        rc = cli.main(args=argv, prog_name="threefish-gen", standalone_mode=False)
    except GenError as e:
        click.echo(f"threefish-gen: error: {e}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("threefish-gen: error: aborted", err=True)
        sys.exit(2)
    except click.ClickException as e:
        click.echo(f"threefish-gen: error: {e.format_message()}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("threefish-gen: error: interrupted", err=True)
        sys.exit(130)
    sys.exit(rc if isinstance(rc, int) else 0)


__all__ = ["cli", "main", "all_specs"]
