"""``threefish-gen check DIR``: verify the files a user already has.

Every file threefish-gen writes starts with a header comment that records the render command that
made it (``threefish-gen render --target ... --prefix ...``).  check reads those commands from the
files in DIR, groups the files of one command (a .c and its .h, an .asm and its .h, a .cs), and
runs them -- the user's text, not a fresh render -- through verify's checkers with the same
harness and vectors (known answers, random vectors from the reference model, batches).  It also
says whether each file still equals what its command renders (edited, or made by another version);
that comparison is the only render check makes.  The rows run inside ``sources.given``: a checker
that asks for a variant or a file the folder lacks gets ``NotGiven`` (a SKIPPED row), never a
render (verify/sources.py; tests/test_check_bytes.py runs check with the renderer raising).

Fast by default: native builds only (gcc and clang -O2, nasm elf64 and elf32, dotnet default JIT,
a Win64 file through the ABI thunk and under wine); a variant whose ISA this CPU lacks is
SKIPPED.  ``--thorough`` adds the sanitizer, emulated (SIMDe, qemu), cross, ct and prove rows.
"""
from __future__ import annotations

import shlex
import sys
import tempfile
from pathlib import Path

import click

from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import MARKER
from threefish_gen.gen.render import Variant, render_variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.threefish import Options

COMMAND = "threefish-gen render "
HEAD_BYTES = 4096


def header_command(path: Path) -> list[str] | None:
    """The render command recorded in a file's header comment (argv after ``render``), or None
    for a file threefish-gen did not write."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if MARKER not in head:
        return None
    for line in head.splitlines():
        at = line.find(COMMAND)
        if at >= 0:
            return shlex.split(line[at + len(COMMAND):])
    return None


def variant_of(argv: list[str]) -> Variant:
    """The variant a recorded render command names (every option is spelled out in it)."""
    opts: dict[str, str] = {}
    it = iter(argv)
    for word in it:
        if not word.startswith("--"):
            raise GenError(f"unexpected {word!r} in the recorded command")
        value = next(it, None)
        if value is None:
            raise GenError(f"{word} has no value in the recorded command")
        opts[word[2:]] = value
    try:
        t = registry.get(opts.pop("target"))
        version = opts.pop("constants") if "constants" in opts else opts.pop("version")   # older files
        spec = get_spec(version, int(opts.pop("size")))
        o = Options(opts.pop("keys"), opts.pop("unroll"), int(opts.pop("interleave")))
    except KeyError as e:
        raise GenError(f"the recorded command has no --{e.args[0]}") from None
    except ValueError as e:
        raise GenError(f"the recorded command has a bad number: {e}") from None
    prefix = opts.pop("prefix", "")
    return t.variant(spec, o, prefix, **opts)


def collect(folder: Path) -> tuple[list[tuple[Variant, dict, list[str], list[str]]], list[Path]]:
    """(variant, {rendered name: user's text}, its files, notes) per recorded command in ``folder`` (and its
    subfolders), and the files that are not threefish-gen's."""
    groups: dict[tuple, list[Path]] = {}
    others = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        argv = header_command(p)
        if argv is None:
            others.append(p)
            continue
        groups.setdefault((str(p.parent), tuple(argv)), []).append(p)
    found = []
    for (_, argv), paths in groups.items():
        try:
            v = variant_of(list(argv))
        except GenError as e:
            raise GenError(f"{paths[0]}: its header command cannot be read: {e}") from None
        rendered = render_variant(v)      # for the notes only: the rows build the user's files, never this
        mine: dict[str, str] = {}
        missing = []
        notes = []
        for name, text in rendered.items():
            exact = [p for p in paths if p.name == name]
            same_kind = exact or [p for p in paths if p.suffix == Path(name).suffix]
            if not same_kind:
                missing.append(name)
                notes.append(f"no {Path(name).suffix} file of this command here: the rows that need {name} are "
                             f"SKIPPED (check builds only the files it is given)")
                continue
            p = same_kind[0]
            mine[name] = p.read_bytes().decode("utf-8", errors="replace")
            if mine[name] != text:
                notes.append(f"{p.name} differs from what its header command renders with this threefish-gen "
                             f"(edited, or another version): checking the file as it is")
        found.append((v, mine, [str(p) for p in paths], notes, tuple(missing)))
    return found, others


@click.command("check")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--thorough", is_flag=True, help="also the sanitizer, emulated, cross and Win64 rows (slow)")
@click.option("--random", "random_count", type=click.IntRange(0, 100000), default=100, show_default=True,
              help="random vectors per size, checked against the reference model")
@click.option("--seed", type=int, default=None, help="seed for the random vectors (default: fresh)")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="parallel builds (default: CPUs)")
@click.option("--junit", "junit_path", default=None, type=click.Path(dir_okay=False),
              help="also write the results as JUnit XML")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              help="also write the JSON report")
@click.option("--workdir", default=None, type=click.Path(file_okay=False),
              help="scratch folder for builds (default: a temporary folder, removed)")
def check_cmd(folder, thorough, random_count, seed, jobs, junit_path, report_path, workdir):
    """Verify the threefish-gen files in FOLDER as they are (options read from their header comments).

    Every row builds, runs, scans or proves exactly the files in FOLDER (nothing is rendered in
    their place).  Exit status: 0 every row that ran passed; 1 a FAIL; 2 bad input (e.g. no
    threefish-gen file in FOLDER); 3 no FAIL but a build or run hit its time limit; 4 nothing ran
    (every row SKIPPED)."""
    from threefish_gen.verify import matrix, sources
    found, others = collect(Path(folder))
    if not found:
        raise GenError(f"no file written by threefish-gen in {folder} (none has the 'Generated by threefish-gen' "
                       f"header comment)")
    for v, files, paths, notes, missing in found:
        click.echo(f"check: {', '.join(paths)}: {v.label()}")
        for n in notes:
            click.echo(f"  note: {n}")
    if others:
        click.echo(f"check: {len(others)} other file(s) in {folder} (not written by threefish-gen) left alone")
    # every row builds, runs, scans or proves the user's files: inside sources.given nothing is rendered
    with tempfile.TemporaryDirectory(prefix="threefish-gen-check-") as tmp, \
            sources.given({v: (files, missing) for v, files, _, _, missing in found}):
        rep = matrix.run([v for v, *_ in found], random_count=random_count, seed=seed, jobs=jobs,
                         workdir=Path(workdir or tmp), report_path=Path(report_path) if report_path else None,
                         thorough=thorough, junit_path=Path(junit_path) if junit_path else None, prove=thorough)
    sys.exit(rep.exit_status())
