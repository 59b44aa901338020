"""How ``render`` puts files into a folder the user may already use: a file render did not write
there (by the folder's manifest), or one changed since, is never overwritten (unless --force),
and every file written is listed, with what it replaced."""
from __future__ import annotations

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import render_files


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
    """Write ``files`` into ``out_dir`` (atomically, under the folder's lock, gen/output.py);
    returns one line per file: its path, then ``(replaced)`` when a different file of that name
    was there, ``(unchanged)`` when the same one was.  An existing file is replaced only when
    the folder's manifest says render wrote it and it is unchanged since (or with ``force``)."""
    return [str(path) + (f" ({how})" if how else "") for path, how in render_files(files, out_dir, force)]
