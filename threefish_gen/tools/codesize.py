"""Code size of a variant (issue 30): the bytes of its rendered source and the machine-code bytes
of its functions in a built object.  ``make bench`` shows both beside c/B, ``explore`` beside
its pictures.

* **Source bytes**: the UTF-8 length of every file the generator renders for the variant (what
  ``threefish-gen`` writes and a user ships: ``.c`` + ``.h``, ``.asm`` + ``.h``, a crate's
  ``Cargo.toml``, ``src/lib.rs`` and ``README.md``, a C# ``.cs``).
* **Code bytes**: the sizes of the function symbols in the object's executable sections, read
  with ``readelf -sW`` (symbols) and ``readelf -SW`` (sections, for their flags and sizes).  One
  object holds one variant, so its functions are the variant's: the exported API (``encrypt``,
  ``encrypt_blocks``, ...) and the static ones the compiler kept out of line (kernels,
  ``*_work``, ``burn``, ``*.cold`` parts).  gcc and clang give every function symbol its size;
  nasm gives none (``global f`` without ``:function size``), so in a section whose function
  symbols all have size 0 each function runs from its label (a ``FUNC`` symbol or a non-local
  label: no ``.`` in the name, which leaves out nasm's local ``f.loop``) to the next function
  label or the section's end, alignment padding included: their sum is the section's size.
  Constants (``.rodata``) are not code and are not counted.  A non-ELF object (nasm ``-f win64``
  COFF) has no such symbols: its ``.text`` size stands for the whole.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from threefish_gen.gen.errors import GenError


def source_bytes(files: dict[str, str]) -> int:
    """Bytes of the rendered files (``render_variant``'s {name: text}), as written to disk."""
    return sum(len(text.encode("utf-8")) for text in files.values())


@dataclass
class CodeSize:
    total: int                                   # bytes of machine code: the sum of ``functions``
    functions: dict[str, int] = field(default_factory=dict)   # symbol name -> bytes
    how: str = "symbol sizes"    # 'symbol sizes' | 'label distances' (nasm) | '.text' (COFF)


def kib(n: int | None) -> str:
    """Bytes in KiB as the tables print them ('17.1'; '-' for None)."""
    return "-" if n is None else f"{n / 1024:.1f}"


def _readelf(args: list[str], obj: Path) -> str:
    if shutil.which("readelf") is None:
        raise GenError("readelf is not installed (Debian package binutils)")
    p = subprocess.run(["readelf", "-W", *args, str(obj)], capture_output=True, text=True)
    if p.returncode:
        raise GenError(f"readelf {' '.join(args)} failed on {obj.name}: {(p.stderr or p.stdout).strip()[:120]}")
    return p.stdout


_SECTION = re.compile(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+[0-9a-f]+\s+(.*)$")


def sections(obj: Path) -> dict[int, tuple[str, int, str]]:
    """{index: (name, size, flags)} of an ELF object (``readelf -SW``)."""
    out = {}
    for ln in _readelf(["-S"], obj).splitlines():
        m = _SECTION.match(ln)
        if m:
            rest = m.group(4).split()          # [flags] link info align
            out[int(m.group(1))] = (m.group(2), int(m.group(3), 16), rest[0] if len(rest) == 4 else "")
    return out


def symbols(obj: Path) -> list[tuple[int, int, str, int, str]]:
    """(value, size, type, section index, name) of the defined symbols (``readelf -sW``)."""
    out = []
    for ln in _readelf(["-s"], obj).splitlines():
        f = ln.split()
        if len(f) == 8 and f[0].endswith(":") and f[6].isdigit():
            out.append((int(f[1], 16), int(f[2], 0), f[3], int(f[6]), f[7]))
    return out


def _is_elf(obj: Path) -> bool:
    with open(obj, "rb") as fh:
        return fh.read(4) == b"\x7fELF"


def code_size(obj: Path) -> CodeSize:
    """Machine-code bytes of the functions in ``obj`` (module docstring: how they are counted)."""
    obj = Path(obj)
    if not _is_elf(obj):
        from .regalloc import _text_size
        n = _text_size(obj, "win64")
        return CodeSize(n, {".text": n}, ".text")
    secs = {i: s for i, s in sections(obj).items() if "X" in s[2]}
    funcs: dict[str, int] = {}
    how = "symbol sizes"
    syms = symbols(obj)
    for idx, (_, size, _) in sorted(secs.items()):
        here = [s for s in syms if s[3] == idx and (s[2] == "FUNC" or (s[2] == "NOTYPE" and s[4] and "." not in s[4]))]
        sized = [s for s in here if s[2] == "FUNC" and s[1] > 0]
        if sized:
            for _, n, _, _, name in sized:
                funcs[name] = funcs.get(name, 0) + n
            continue
        starts: dict[int, str] = {}
        for value, _, typ, _, name in sorted(here, key=lambda s: (s[0], s[2] != "FUNC")):
            starts.setdefault(value, name)         # a FUNC name before a label at the same address
        addrs = sorted(starts)
        for a, b in zip(addrs, addrs[1:] + [size]):
            funcs[starts[a]] = funcs.get(starts[a], 0) + (b - a)
        if addrs:
            how = "label distances"
    return CodeSize(sum(funcs.values()), funcs, how)
