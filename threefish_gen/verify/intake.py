"""What `check DIR` accepts from the folder before it builds anything.

* **Size.**  A file threefish-gen wrote is at most a few MB (the largest, c-simd Threefish-512
  fully unrolled, is 1.2 MB); a file over :data:`MAX_INPUT` (64 MB) is refused with one line
  (exit 2) before it is read.  Each accepted file is read once, into memory.
* **Includes.**  The user's code may ``#include`` only files inside the checked folder and the
  system headers: an ``#include`` (``#include_next``, ``#import``, ``#embed``; NASM ``%include``,
  ``incbin``, ``%pathsearch``, ``%depend``) with an absolute path outside the system include
  folders, a path that climbs out of the folder (``..``) or a computed name (a macro) is refused
  with one line naming it, so no build reads -- and no compiler error quotes -- a file from
  elsewhere on the machine.  The scan works on the text as the compiler sees it (backslash-
  newlines joined, trigraph and digraph spellings of ``#``, comments dropped); for C, the
  compiler's own dependency list (``cc -MM -MG``, run under the build limits on a copy laid out
  as the builds are) is then checked too, which catches what a text scan cannot (a computed
  include that expands to a string, for one).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from threefish_gen.gen.errors import GenError

MAX_INPUT = 64 << 20

C_SUFFIXES = (".c", ".h")
ASM_SUFFIXES = (".asm", ".inc", ".nasm", ".s", ".S")

_C_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(include_next|include|import|embed)\b[ \t]*(.*)$")
_ASM_DIRECTIVE = re.compile(r"^[ \t]*(?:[A-Za-z_.$?@][\w.$#@~?]*:?[ \t]+)?"
                            r"(%include|%pathsearch|%depend|incbin)\b[ \t]*(.*)$", re.IGNORECASE)


def read_input(path: Path) -> str:
    """The text of one of the user's files, read once; GenError past MAX_INPUT."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = f.read(MAX_INPUT + 1) if size <= MAX_INPUT else b""
    except OSError as e:
        raise GenError(f"{path}: cannot read it: {e.strerror or e}") from None
    if size > MAX_INPUT or len(data) > MAX_INPUT:
        raise GenError(f"{path}: {max(size, len(data)):,} bytes, over check's limit of {MAX_INPUT >> 20} MB for one "
                       f"input file (threefish-gen writes at most a few MB): nothing was built")
    return data.decode("utf-8", "replace")


def _c_logical_lines(text: str):
    """(line number, logical line) with splices joined, trigraph/digraph #, comments dropped."""
    text = text.replace("??=", "#").replace("??/\n", "").replace("%:", "#").replace("\\\r\n", "").replace("\\\n", "")
    text = re.sub(r"/\*.*?\*/", lambda m: " " + "\n" * m.group(0).count("\n"), text, flags=re.S)
    for n, line in enumerate(text.splitlines(), 1):
        yield n, line.split("//")[0]


def _system_dirs() -> list[Path]:
    dirs = []
    for cc in ("gcc", "clang"):
        if shutil.which(cc) is None:
            continue
        try:
            err = subprocess.run([cc, "-xc", "-E", "-v", "-"], input="", capture_output=True, text=True,
                                 timeout=60).stderr
        except (OSError, subprocess.SubprocessError):
            continue
        inside = False
        for ln in err.splitlines():
            if ln.startswith("#include <...> search starts here"):
                inside = True
            elif ln.startswith("End of search list"):
                inside = False
            elif inside and ln.strip():
                dirs.append(Path(ln.split(" (")[0].strip()).resolve())
    return dirs or [Path("/usr/include"), Path("/usr/local/include")]


_SYSTEM: list = []


def system_dirs() -> list[Path]:
    if not _SYSTEM:
        _SYSTEM.extend(_system_dirs())
    return _SYSTEM


def _inside(p: Path, roots) -> bool:
    return any(p == r or r in p.parents for r in roots)


def _refuse(path: Path, n: int, directive: str, operand: str, why: str) -> GenError:
    return GenError(f"{path}:{n}: {directive} {operand.strip()} refused: {why} (check builds only the checked "
                    f"folder's files and the system headers)")


def _check_name(folder: Path, path: Path, n: int, directive: str, operand: str, quoted: bool) -> None:
    name = operand.strip()[1:-1]
    target = Path(name)
    if target.is_absolute():
        real = target.resolve()
        if not (_inside(real, [folder]) or _inside(real, system_dirs())):
            raise _refuse(path, n, directive, operand, "an absolute path outside the folder and the system "
                                                     "include folders")
        return
    if ".." in target.parts:
        base = path.parent if quoted else folder
        real = (base / target).resolve()
        if not _inside(real, [folder]):
            raise _refuse(path, n, directive, operand, "it climbs out of the checked folder")


def scan_includes(folder: Path, path: Path, text: str) -> None:
    """GenError (one line) at the first include of ``path`` that reaches outside ``folder``."""
    folder = folder.resolve()
    if path.suffix in C_SUFFIXES:
        for n, line in _c_logical_lines(text):
            m = _C_DIRECTIVE.match(line)
            if not m:
                continue
            directive, operand = "#" + m.group(1), m.group(2).strip()
            if re.fullmatch(r'"[^"]*"', operand) or re.fullmatch(r"<[^>]*>", operand):
                _check_name(folder, path, n, directive, operand, operand.startswith('"'))
            else:
                raise _refuse(path, n, directive, operand or "(nothing)", "a computed name (a macro)")
    elif path.suffix in ASM_SUFFIXES:
        for n, line in enumerate(text.splitlines(), 1):
            m = _ASM_DIRECTIVE.match(line.split(";")[0])
            if not m:
                continue
            directive, operand = m.group(1).lower(), m.group(2).split(",")[0].strip()
            if re.fullmatch(r'"[^"]*"|\'[^\']*\'|<[^>]*>', operand):
                _check_name(folder, path, n, directive, operand, True)
            else:
                raise _refuse(path, n, directive, operand or "(nothing)", "a computed name (a macro)")


def check_c_dependencies(files: dict[str, str], shown: dict[str, Path]) -> None:
    """Lay ``files`` (rendered name -> text) out as a build does and ask the compiler which files
    they include (``-MM -MG``: system headers left out); GenError when one lies outside.
    ``shown``: rendered name -> the user's path, for the message."""
    cc = shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return                                   # nothing builds C here either
    from .proc import Timeout, run
    with tempfile.TemporaryDirectory(prefix="threefish-gen-includes-") as tmp:
        src = Path(tmp, "src")
        src.mkdir()
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)     # a rendered name may be nested
            (src / name).write_text(text, encoding="utf-8")
        for name in files:
            if not name.endswith(C_SUFFIXES):
                continue
            try:
                rc, out = run([cc, "-MM", "-MG", "-std=gnu99", f"-I{src}", "-x", "c", str(src / name)], src,
                              timeout=120, what="include scan")
            except Timeout as e:
                raise GenError(f"{shown.get(name, name)}: its includes cannot be listed: {e}") from None
            if rc:
                continue                         # a syntax error: the build says so
            deps = out.split(":", 1)[-1].replace("\\\n", " ").split()
            for d in deps:
                real = (src / d).resolve()
                if not _inside(real, [src.resolve()]) and not _inside(real, system_dirs()):
                    raise GenError(f"{shown.get(name, name)}: includes {d}, outside the checked folder and the "
                                   f"system headers: refused (check builds only the checked folder's files and "
                                   f"the system headers)")
