"""out/ holds exactly what `make gen` renders now: a stale or hand-edited file fails here."""
import re

import pytest

from conftest import ROOT
from threefish_gen.gen.targets import variants
from threefish_gen.gen.render import render_variant


def makefile_value(name):
    """The value of the Makefile's ``NAME = value`` line."""
    m = re.search(rf"^{name}\s*=\s*(.+?)\s*$", (ROOT / "Makefile").read_text(), re.M)
    assert m, f"Makefile has no {name} line"
    return m.group(1)


def out_targets():
    """(target, folder, keep) triples, read from the Makefile's OUT_TARGETS (what `make gen`
    renders): keep = the part of a file name that ships ('' = every file of the set)."""
    return [tuple((item + "::").split(":")[:3]) for item in makefile_value("OUT_TARGETS").split()]


def out_constants():
    """The Makefile's OUT_CONSTANTS: the constants version make gen ships."""
    return makefile_value("OUT_CONSTANTS")


def test_out_ships_the_final_constants_only():
    """out/ holds the v1.3 files (the final Skein constants), no v1.1/v1.2 file (issue 30: size)."""
    assert out_constants() == "1.3"
    names = [p.name for p in (ROOT / "out").rglob("*") if p.is_file() or p.parent == ROOT / "out" / "rust"]
    assert names and not [n for n in names if re.search(r"_v1[12]_|V1[12]\b|V1[12]\.|V1[12]Lanes", n)]
    assert sum(1 for n in names if re.search(r"_v13_|V13", n)) >= 30


def test_out_folders_are_exactly_the_rendered_targets():
    folders = {d for _, d, _ in out_targets()}
    assert {"c", "c-simd", "nasm", "csharp", "rust"} <= folders
    assert sorted(p.name for p in (ROOT / "out").iterdir()) == sorted(folders)


@pytest.mark.parametrize("folder", sorted({d for _, d, _ in out_targets()}))
def test_out_is_fresh(folder):
    want: dict[str, str] = {}
    shipped = out_constants()
    for target, d, keep in out_targets():
        if d == folder:
            for v in variants("recommended", target):
                if v.spec.version != shipped:
                    continue
                want.update((n, t) for n, t in render_variant(v).items() if keep in n)
    root = ROOT / "out" / folder      # rust: crate folders (STEM/Cargo.toml, STEM/src/lib.rs, ...)
    have = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}
    assert sorted(have) == sorted(want), f"out/{folder} differs in its file list: run `make gen`"
    stale = sorted(n for n in want if have[n] != want[n])
    assert not stale, f"out/{folder} is stale ({len(stale)} files, e.g. {stale[0]}): run `make gen`"
    for name, text in want.items():
        if not name.endswith(".h"):
            assert "threefish-gen render" in text[:2000], f"{name}: header does not record the command"


def _asm_functions(path):
    """(label, code) of each top-level label of an .asm file: comments, spacing and the file's
    own symbol prefix removed, so the same code in two files compares equal."""
    text = re.sub(r";[^\n]*", "", path.read_text()).replace(path.stem + "_", "P_")
    parts = re.split(r"^([A-Za-z_]\w*):", text, flags=re.M)
    return [(name, re.sub(r"[ \t]+", " ", body.split(".end:")[0])) for name, body in zip(parts[1::2], parts[2::2])]


def _c_functions(path):
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S).replace(path.stem + "_", "P_")
    return [(m.group(1), re.sub(r"\s+", " ", m.group(2)))
            for m in re.finditer(r"^\w[^\n;]*?(\w+)\((?:[^()]|\n)*?\)\n\{\n(.*?)^\}$", text, re.M | re.S)]


def shipped_functions():
    """Every function of 100 lines or more in out/: code -> ['folder/file:label', ...]."""
    seen: dict[str, list[str]] = {}
    for p in sorted((ROOT / "out").rglob("*")):
        parse = {".c": _c_functions, ".asm": _asm_functions}.get(p.suffix)
        for name, code in parse(p) if parse else ():
            if code.count("\n") >= 100 or code.count(";") >= 100:
                seen.setdefault(code, []).append(f"{p.parent.name}/{p.name}:{name}")
    return seen


def test_no_path_is_shipped_twice():
    """No SIMD kernel is in two files of out/ (same code once the symbol prefix is taken out).
    The repeats left are scalar fallbacks, so that each file stands alone: the c-simd dispatcher
    holds scalar C for CPUs without AVX2 and single blocks (the same code as out/c), and each
    nasm-x64 lanes file (avx2, avx512) the System V scalar GPR code for its tail blocks (the same
    as the scalar sysv file).  So every repeated function must also be in a scalar file, once."""
    seen = shipped_functions()
    assert sum(len(w) for w in seen.values()) > 100     # one constants version: 116 functions (2026-11-27)
    assert any(w[0].startswith("c-simd/") for w in seen.values())
    scalar_file = re.compile(r"^(c/.*|nasm/.*_nasmx64_sysv_belady_fly_full(_i\d)?\.asm):")
    twice = [where for where in seen.values()
             if len(where) > 1 and sum(bool(scalar_file.match(w)) for w in where) != 1]
    assert not twice, f"shipped more than once: {twice[:3]}"
    # the SIMD kernels (vector code) are each in one file
    vector = [w for code, w in seen.items() if re.search(r"_mm(256|512)_|ymm|zmm", code)]
    assert len(vector) >= 34 and all(len(w) == 1 for w in vector)   # 34 on 2026-11-27 (compact AVX-512)
