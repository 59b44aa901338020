"""How ``render`` puts files into a folder the user may already use: a file threefish-gen did not
write is never overwritten (unless --force), and every file written is listed, with what it
replaced."""
from __future__ import annotations

from pathlib import Path

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import foreign_files, write_files


def package(target, variants, files: dict[str, str], out_dir, package_dir):
    """``render --out DIR`` or ``--package DIR`` (the files plus the target's package project)."""
    if (out_dir is None) == (package_dir is None):
        raise GenError("render needs --out DIR or --package DIR (one of them)")
    if package_dir is None:
        return out_dir, files
    extra = target.package_files(variants)
    if extra is None:
        from threefish_gen.gen import targets as registry
        able = [t.name for t in registry.TARGETS.values() if t.package_files(t.variants("recommended", [variants[0].spec])[:1])]
        raise GenError(f"--package applies to --target {' or '.join(able)}, not --target {target.name}")
    return package_dir, {**files, **extra}


def place(files: dict[str, str], out_dir: str, force: bool = False) -> list[str]:
    """Write ``files`` into ``out_dir`` (atomically, gen/output.py); returns one line per file:
    its path, then ``(replaced)`` when a different file of that name was there, ``(unchanged)``
    when the same one was."""
    out = Path(out_dir)
    if not force:
        theirs = foreign_files(files, out)
        if theirs:
            raise GenError(f"{theirs[0]} exists and was not written by threefish-gen; not overwriting it "
                           f"(--force overwrites" + (f"; {len(theirs) - 1} more such file(s))" if len(theirs) > 1
                                                     else ")"))
    before = {}
    for name in files:
        try:
            before[name] = (out / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            before[name] = None
    lines = []
    for path in write_files(files, out):
        old = before.get(path.name)
        lines.append(str(path) + ("" if old is None else " (unchanged)" if old == files[path.name]
                                  else " (replaced)"))
    return lines
