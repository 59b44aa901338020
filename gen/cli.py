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
    from .catalog import RECOMMENDED_C
    click.echo("versions:   " + " ".join(VERSIONS) + "   (1.1 old rotations; 1.2 new rotations; "
               "1.3 new C240)")
    click.echo("sizes:      " + " ".join(map(str, SIZES)))
    click.echo("targets:")
    click.echo("  c         scalar C99 (uint64_t), layout scalar; needs any C99 compiler")
    click.echo("options:")
    click.echo(f"  --keys       {' | '.join(KEYS):<14} subkeys computed on the fly, or a precomputed table")
    click.echo(f"  --unroll     {' | '.join(UNROLL):<14} every round unrolled, or a loop over 8-round cycles")
    click.echo("  --interleave 1..4           blocks processed together by encrypt_blocks/decrypt_blocks")
    _list_simd()
    click.echo("recommended (rendered into out/ by 'make gen'):")
    for bits, o in RECOMMENDED_C.items():
        click.echo(f"  c {bits:>4}: {o.describe()}")
    from .catalog import RECOMMENDED_SIMD
    for bits, paths in RECOMMENDED_SIMD.items():
        for isa, layout, o in paths:
            click.echo(f"  c {bits:>4}: --isa {isa} --layout {layout} {o.describe()}")
        click.echo(f"  c {bits:>4}: --isa auto (dispatcher over the paths above and scalar)")


def _list_simd():
    from .printers.c_simd import ISAS
    from .render_simd import ENV_VAR, LAYOUTS
    click.echo("  c --isa ISA --layout LAYOUT   SIMD C (x86 intrinsics; target attributes, no -m flags needed;")
    click.echo("                                -DTHREEFISH_GEN_SIMDE builds against SIMDe, emulated)")
    for isa in ISAS.values():
        for layout in LAYOUTS:
            what = (f"{isa.bits // 64} blocks word-sliced per {isa.bits}-bit vector" if layout == "lanes" else
                    f"{isa.bits // 64} vector blocks + --interleave scalar blocks per pass")
            click.echo(f"    --isa {isa.name:<6} --layout {layout:<6}  {what}; needs {'+'.join(isa.features)}")
    click.echo(f"    --isa auto                  dispatcher: scalar + recommended SIMD paths, chosen by cpuid/xgetbv;")
    click.echo(f"                                ${ENV_VAR}=scalar|sse2|avx|avx2|avx512 caps the path")

def _variant(target, size, version, keys, unroll, interleave, prefix) -> Variant:
    spec = get_spec(version, size)
    return Variant(target, spec, Options(keys, unroll, interleave), prefix or "")


def _simd_variant(target, spec, isa, layout, keys, unroll, interleave, prefix) -> Variant:
    """--target c with --isa/--layout: the c-simd target (its own renderer and checker)."""
    from .catalog import RECOMMENDED_C
    if target not in ("c", "c-simd"):
        raise GenError(f"--isa/--layout apply to --target c, not {target!r}")
    if isa is None:
        raise GenError("--layout needs --isa (sse2, avx, avx2, avx512 or auto)")
    if isa == "auto" and layout is not None:
        raise GenError("--isa auto (the dispatcher) takes no --layout")
    rec = RECOMMENDED_C[spec.bits] if isa == "auto" else Options()
    o = Options(keys or rec.keys, unroll or rec.unroll, interleave if interleave is not None else rec.interleave)
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
@click.option("--isa", default=None, help="SIMD C: sse2 | avx | avx2 | avx512, or auto (runtime dispatcher)")
@click.option("--layout", default=None, help="SIMD C: lanes | hybrid (default lanes)")
@click.option("--set", "which", type=click.Choice(["recommended"]), default=None,
              help="render every recommended variant (all sizes and versions) instead of one")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="output folder")
def render(target, size, version, keys, unroll, interleave, prefix, isa, layout, which, out_dir):
    """Render one variant (or the recommended set) into a folder: a .c and a .h per variant."""
    from .catalog import RECOMMENDED_C, variants
    if which:
        if any(x is not None for x in (size, version, keys, unroll, interleave, prefix)):
            raise GenError("--set renders a fixed set; drop --size/--version/--keys/--unroll/--interleave/--prefix")
        if isa is not None or layout is not None:
            raise GenError("--set renders a fixed set; drop --isa/--layout")
        chosen = variants("recommended", target)
    else:
        if size is None or version is None:
            raise GenError("render needs --size and --version (or --set recommended)")
        spec = get_spec(version, size)
        rec = RECOMMENDED_C[spec.bits]
        if isa is not None or layout is not None or target == "c-simd":
            chosen = [_simd_variant(target, spec, isa, layout, keys, unroll, interleave, prefix)]
        else:
            chosen = [_variant(target, size, version, keys or rec.keys, unroll or rec.unroll,
                               interleave if interleave is not None else rec.interleave, prefix)]
    files: dict[str, str] = {}
    for v in chosen:           # render everything first: nothing is written if any fails
        files.update(render_variant(v))
    for path in write_files(files, out_dir):
        click.echo(str(path))


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
def verify(which, sizes, versions, random_count, seed, jobs, report_path, workdir):
    """Build every variant with gcc and clang (plus ASan/UBSan) and run the harness."""
    from verify import runner
    from .catalog import variants
    specs = _specs(sizes, versions)
    rep = runner.run(variants(which, specs=specs), random_count=random_count, seed=seed, jobs=jobs,
                     workdir=Path(workdir), report_path=Path(report_path))
    sys.exit(1 if rep.failed else 0)


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
