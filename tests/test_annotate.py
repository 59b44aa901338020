"""--annotate none | brief | full (C, SIMD C, NASM): the levels change comments only (the
objects nasm and gcc make are identical), none has no instruction comments, brief has one
comment line per description statement and no padding before ';'."""
import re
import shutil
import subprocess

import pytest

from threefish_gen.gen import targets
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.threefish import Options

LEVELS = ("none", "brief", "full")
SPEC = get_spec("1.3", 256)

NASM_CASES = [("nasm-x64", {}), ("nasm-x64", {"isa": "avx2"}), ("nasm-x64", {"isa": "avx512"}),
              ("nasm-x64", {"abi": "win64"}), ("nasm-x86", {}), ("nasm-x86", {"layout": "packed"})]
C_CASES = [("c", {}, None), ("c-simd", {"isa": "avx2", "layout": "lanes"}, Options("fly", "full", 2)),
           ("c-simd", {"isa": "avx2", "layout": "hybrid"}, Options("fly", "full", 1)),
           ("c-simd", {"isa": "auto"}, Options("fly", "full", 2))]


def render(target, values, level, options=None):
    t = targets.get(target)
    v = t.variant(SPEC, options, "tfx_", annotate=level, **values)
    return v, render_variant(v)


def body(text: str, comment: str) -> list[str]:
    """Lines after the file's header comment block."""
    lines = text.split("\n")
    i = next(i for i, ln in enumerate(lines) if ln and not ln.startswith(comment))
    return lines[i:]


def test_default_level_is_not_in_the_variant_or_its_names():
    for target, values, options in C_CASES:
        t = targets.get(target)
        assert t.variant(SPEC, options, annotate="brief", **values) == t.variant(SPEC, options, **values)
        assert "annotate" not in t.variant(SPEC, options, **values).command()
    t = targets.get("nasm-x64")
    assert t.variant(SPEC, annotate="brief").stem == t.variant(SPEC).stem
    assert t.variant(SPEC, annotate="full").get("annotate") == "full"


def _assemble(tmp_path, target, files, name):
    asm = next(n for n in files if n.endswith(".asm"))
    src = tmp_path / f"{name}.asm"
    src.write_text(files[asm])
    fmt = "win64" if "_win64" in files[asm][:400] or "abi win64" in files[asm][:2000] else (
        "elf64" if target == "nasm-x64" else "elf32")
    obj = tmp_path / f"{name}.o"
    subprocess.run(["nasm", "-f", fmt, "-o", str(obj), str(src)], check=True)
    out = tmp_path / f"{name}.bin"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", str(obj), str(out)], check=True)
    return out.read_bytes()


@pytest.mark.skipif(not shutil.which("nasm") or not shutil.which("objcopy"), reason="needs nasm and objcopy")
@pytest.mark.parametrize("target,values", NASM_CASES)
def test_nasm_levels_assemble_to_the_same_code(tmp_path, target, values):
    texts = {lv: render(target, values, lv)[1] for lv in LEVELS}
    code = {lv: _assemble(tmp_path, target, texts[lv], lv) for lv in LEVELS}
    assert len(code["full"]) > 1000
    assert code["none"] == code["brief"] == code["full"]


def _instructions(text):
    """The instruction text of an .asm file: comments and spacing removed."""
    out = []
    for ln in text.split("\n"):
        ln = ln.split(";", 1)[0].strip()
        if ln:
            out.append(re.sub(r"\s+", " ", ln))
    return out


@pytest.mark.parametrize("target,values", NASM_CASES)
def test_nasm_levels(target, values):
    files = {lv: render(target, values, lv) for lv in LEVELS}
    asm = {lv: next(t for n, t in f.items() if n.endswith(".asm")) for lv, (_, f) in files.items()}
    assert _instructions(asm["none"]) == _instructions(asm["brief"]) == _instructions(asm["full"])
    v = files["full"][0]
    lines = {lv: body(asm[lv], ";") for lv in LEVELS}
    # none: no instruction carries a comment, no comment line inside the functions but separators
    assert not [ln for ln in lines["none"] if re.match(r"^[^;]*[^;\s]\s*;", ln)]
    assert "Register map" not in asm["none"] and "Register map" in asm["brief"]
    assert asm["none"].split("\n", 2)[1] == ";   " + files["none"][0].command()
    # brief: no padded runs of spaces before ';'
    assert not [ln for ln in lines["brief"] if re.search(r"\S {2,};", ln)]
    # full: the instructions the allocator made carry their statement in a padded column
    assert sum(1 for ln in lines["full"] if re.search(r"\S {2,}; ", ln)) > 300
    # brief: one comment line per description statement (runs of the same statement in each
    # function's op list), notes as they are
    want = 0
    parts = [False, True] if values.get("isa") in ("avx2", "avx512") else [False]
    allocs = [targets.get(v.target).allocate(v, d, tail=tail)[1] for d in ("encrypt", "decrypt") for tail in parts]
    for alloc in allocs:
        last = object()
        for op in alloc.code:
            if op.kind == "note":
                want += 1
                last = object()
            elif op.role not in ("spill", "reload", "move"):
                want += op.text != last
                last = op.text
    got = sum(1 for ln in lines["brief"] if ln.startswith("; ") and not ln.startswith(("; ----", "; Win64")))
    assert 0.9 * want <= got <= want, (got, want)
    # every statement comment of brief is a statement text (or a note) of the description
    texts = {op.text for alloc in allocs for op in alloc.code}
    stray = [ln for ln in lines["brief"] if ln.startswith("; ") and not ln.startswith("; ----")
             and ln[2:] not in texts and not ln.startswith("; Win64")]
    assert not stray, stray[:5]
    assert len(asm["brief"]) < 0.8 * len(asm["full"])


def _c_text(tmp_path, files, name):
    for n, t in files.items():
        (tmp_path / n).write_text(t)
    src = next(tmp_path / n for n in files if n.endswith(".c"))
    obj = tmp_path / f"{name}.o"
    subprocess.run(["gcc", "-O2", "-std=c99", f"-I{tmp_path}", "-c", str(src), "-o", str(obj)], check=True)
    out = tmp_path / f"{name}.bin"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", str(obj), str(out)], check=True)
    return out.read_bytes()


@pytest.mark.skipif(not shutil.which("gcc") or not shutil.which("objcopy"), reason="needs gcc and objcopy")
@pytest.mark.parametrize("target,values,options", C_CASES[:2] + C_CASES[3:])
def test_c_levels_compile_to_the_same_code(tmp_path, target, values, options):
    code = {}
    for lv in LEVELS:
        d = tmp_path / lv
        d.mkdir()
        code[lv] = _c_text(d, render(target, values, lv, options)[1], lv)
    assert len(code["full"]) > 1000
    assert code["none"] == code["brief"] == code["full"]


@pytest.mark.parametrize("target,values,options", C_CASES)
def test_c_levels(target, values, options):
    c = {lv: next(t for n, t in render(target, values, lv, options)[1].items() if n.endswith(".c"))
         for lv in LEVELS}
    # C statements are the description statements: brief and full are the same code and notes
    squeeze = [[re.sub(r" {2,}/\*", " /*", ln) for ln in c[lv].split("\n")[3:]] for lv in ("brief", "full")]
    assert squeeze[0] == squeeze[1]
    assert "/* round 0 */" in c["brief"]
    assert not re.search(r"^[ \t]+/\*.*\*/$", c["none"], re.M)
    assert not [ln for ln in c["brief"].split("\n") if re.search(r"\S {2,}/\*", ln)]
