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

check compiles the files it is given and runs their code, with your privileges, under limits
(verify/proc.py: CPU time, address space, file size, no core files; harnesses without network and,
under bwrap, with a read-only file system but their build folder), after verify/intake.py has
refused files over 64 MB and includes from outside the folder.

Fast by default: native builds only (gcc and clang -O2, nasm elf64 and elf32, dotnet default JIT,
a Win64 file through the ABI thunk and under wine); a variant whose ISA this CPU lacks is
SKIPPED.  ``--thorough`` adds the sanitizer, emulated (SIMDe, qemu), cross, ct and prove rows.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from threefish_gen.gen import header
from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import MARKER
from threefish_gen.gen.render import Variant, render_variant
from threefish_gen.verify import intake

HEAD_BYTES = 4096


def header_command(path: Path) -> list[str] | None:
    """The render command recorded in a file's header comment (argv after ``render``), or None
    for a file threefish-gen did not write (gen/header.py writes and reads it)."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if MARKER not in head:
        return None
    try:
        return header.find(head)
    except GenError as e:
        raise GenError(f"{path}: its header command cannot be read: {e}") from None


def variant_of(argv: list[str]) -> Variant:
    """The variant a recorded render command names (gen/header.py parse)."""
    return registry.from_command(argv)


def render_root(folder: Path, path: Path, names) -> Path:
    """The folder a render of ``names`` (the variant's rendered names, some nested: a Rust crate's
    ``STEM/src/lib.rs``) would have written ``path`` into: ``path`` less the longest tail of its
    components (below ``folder``) that ends one of the names, at least its file name.  So a crate's
    Cargo.toml and src/lib.rs group together whether ``folder`` is the render's --out, the crate
    folder itself, or a renamed copy of it."""
    parts = path.relative_to(folder).parts
    best = 1
    for name in names:
        want = name.split("/")
        k = 0
        while k < min(len(want), len(parts)) and want[-1 - k] == parts[-1 - k]:
            k += 1
        best = max(best, k)
    return path.parents[best - 1]


def collect(folder: Path) -> tuple[list[tuple[Variant, dict, list[str], list[str], tuple]], list[Path]]:
    """(variant, {rendered name: user's text}, its files, notes, names of its files missing here) per
    recorded command in ``folder`` (and its subfolders), and the files that are not threefish-gen's.
    The files of one command are grouped by the folder the render wrote them into
    (``render_root``): a crate's files in ``STEM/`` and ``STEM/src/`` are one group."""
    groups: dict[tuple, list[Path]] = {}
    rendered_of: dict[Variant, dict[str, str]] = {}
    others = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        argv = header_command(p)
        if argv is None:
            others.append(p)
            continue
        try:
            v = variant_of(argv)
        except GenError as e:
            raise GenError(f"{p}: its header command cannot be read: {e}") from None
        if v not in rendered_of:
            rendered_of[v] = render_variant(v)   # for the names and notes only: the rows build the user's files
        groups.setdefault((v, str(render_root(folder, p, rendered_of[v]))), []).append(p)
    first: dict[Variant, Path] = {}
    for (v, _), paths in groups.items():
        if v in first:
            raise GenError(f"{first[v]} and {paths[0]} are the same variant ({v.label()}) in two folders: check "
                           f"builds one copy of a variant per run; check the folders one at a time")
        first[v] = paths[0]
    found = []
    for (v, root), paths in groups.items():
        rendered = rendered_of[v]
        chosen = pick_files(v, rendered, paths, Path(root))
        mine: dict[str, str] = {}
        missing = []
        notes = []
        for name, text in rendered.items():
            p = chosen.get(name)
            if p is None:
                missing.append(name)
                notes.append(f"no {Path(name).suffix} file of this command here: the rows that need {name} are "
                             f"SKIPPED (check builds only the files it is given)")
                continue
            mine[name] = intake.read_input(p)              # size-capped, read once
            intake.scan_includes(folder, p, mine[name])     # nothing from outside the folder
            if mine[name] != text:
                notes.append(f"{p.name} differs from what its header command renders with this threefish-gen "
                             f"(edited, or another version): checking the file as it is")
        intake.check_c_dependencies(mine, chosen)
        found.append((v, mine, [str(p) for p in paths], notes, tuple(missing)))
    return found, others


def pick_files(v: Variant, rendered: dict[str, str], paths: list[Path], root: Path | None = None) -> dict[str, Path]:
    """{rendered name: the user's file} for the files of one variant in one folder (``root``, where
    render put them; default: each file's own folder): the file whose path below ``root`` ends that
    name (``src/lib.rs`` for ``STEM/src/lib.rs``), else the one file of its kind (suffix).  Two files
    that could be the same rendered file (a copy: same header, same kind) are refused with one line:
    check would build only one of them."""
    def tail(p: Path) -> list[str]:
        return list(p.relative_to(root).parts) if root is not None else [p.name]

    chosen = {name: p for name in rendered for p in paths if name.split("/")[-len(tail(p)):] == tail(p)}
    for name in rendered:
        if name in chosen:
            continue
        kind = [p for p in paths if p.suffix == Path(name).suffix and p not in chosen.values()]
        if len(kind) > 1:
            raise GenError(f"{kind[0]} and {kind[1]} record the same render command ({v.label()}): check builds "
                           f"one {Path(name).suffix} file per variant; check them one at a time (each in a folder "
                           f"of its own)")
        if kind:
            chosen[name] = kind[0]
    left = [p for p in paths if p not in chosen.values()]
    if left:
        same = [p for p in chosen.values() if p.suffix == left[0].suffix]
        twin = f"{same[0]} and {left[0]}" if same else f"{left[0]}"
        raise GenError(f"{twin} record the same render command ({v.label()}), which renders no second "
                       f"{left[0].suffix or 'such'} file: check builds one per variant; check them one at a time "
                       f"(each in a folder of its own)")
    return chosen


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

    This compiles the files and runs their code (in a test harness, as you): check only folders
    you would build yourself.  Every row builds, runs, scans or proves exactly the files in FOLDER
    (nothing is rendered in their place).  Every build and run has CPU-time, memory, file-size and
    no-core limits; harnesses run without network (bwrap or unshare, where they work here); files
    over 64 MB and #includes from outside FOLDER and the system headers are refused.

    Exit status: 0 every row that ran passed; 1 a FAIL; 2 bad input (e.g. no threefish-gen file in
    FOLDER, a file over 64 MB, an #include from outside); 3 no FAIL but a build or run hit its time
    or resource limit; 4 nothing ran (every row SKIPPED); 143/130 stopped by SIGTERM/SIGINT (every
    build killed, the temporary folder removed)."""
    from threefish_gen.verify import matrix, proc, sources
    with proc.interruptible():       # the include scan runs the preprocessor: stoppable too
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
    # SIGTERM/SIGHUP/SIGINT: every build and harness is killed (their process groups), then the
    # temporary folder is removed (exit 143 / 130).  Every row builds, runs, scans or proves the
    # user's files: inside sources.given nothing is rendered.
    with proc.interruptible(), tempfile.TemporaryDirectory(prefix="threefish-gen-check-") as tmp, \
            sources.given({v: (files, missing) for v, files, _, _, missing in found}):
        rep = matrix.run([v for v, *_ in found], random_count=random_count, seed=seed, jobs=jobs,
                         workdir=Path(workdir or tmp), report_path=Path(report_path) if report_path else None,
                         thorough=thorough, junit_path=Path(junit_path) if junit_path else None, prove=thorough)
    sys.exit(rep.exit_status())
