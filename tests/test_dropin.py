"""Taking rendered files into a project (issue 12): renders of different sizes and targets share a
folder without collisions, render never overwrites a file it did not write (unless --force), and
says what it wrote and replaced."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}     # run from the user's folder, not the source tree
    return subprocess.run([sys.executable, "-m", "threefish_gen", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env)


def render(out, *args):
    return cli("render", "--constants", "1.3", "--prefix", "tf_", "--out", str(out), *args)


def test_two_sizes_two_targets_in_one_folder_do_not_collide(tmp_path):
    out = tmp_path / "src"
    written = []
    for args in (["--target", "c", "--size", "512"], ["--target", "c", "--size", "1024"],
                 ["--target", "nasm-x64", "--size", "512"], ["--target", "nasm-x64", "--size", "1024"]):
        p = render(out, *args)
        assert p.returncode == 0, p.stderr
        written += p.stdout.split()
    assert len(written) == 8 and len(set(written)) == 8           # nothing written twice
    assert sorted(f.name for f in out.iterdir()) == sorted([".threefish-gen-manifest"] + [Path(w).name for w in written])
    # each header is its own size's (the README case: the 1024 NASM header replaced the 512 C one)
    assert "Threefish-512" in (out / "tf_threefish512_c.h").read_text()
    assert "Threefish-1024" in (out / "tf_threefish1024_nasmx64.h").read_text()
    guards = {(out / f"tf_threefish{s}_{t}.h").read_text().split("#ifndef ")[1].split()[0]
              for s in (512, 1024) for t in ("c", "nasmx64")}
    assert len(guards) == 4


def test_render_refuses_a_file_it_did_not_write_and_lists_what_it_replaced(tmp_path):
    out = tmp_path / "src"
    out.mkdir()
    mine = out / "tf_threefish256_c.h"
    mine.write_text("/* my own header */\n")
    p = render(out, "--size", "256")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [
        f"threefish-gen: error: {mine} exists and was not written by threefish-gen; not overwriting it "
        "(--force overwrites)"]
    assert mine.read_text() == "/* my own header */\n" and not (out / "tf_threefish256_c.c").exists()
    p = render(out, "--size", "256", "--force")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"{out}/tf_threefish256_c.c", f"{out}/tf_threefish256_c.h (replaced)"]
    p = render(out, "--size", "256")                     # its own files: rewritten, said so
    assert p.stdout.splitlines() == [f"{out}/tf_threefish256_c.c (unchanged)", f"{out}/tf_threefish256_c.h (unchanged)"]
    p = render(out, "--size", "256", "--keys", "table")
    assert p.returncode == 0 and p.stdout.splitlines() == [f"{out}/tf_threefish256_c.c (replaced)",
                                                           f"{out}/tf_threefish256_c.h (replaced)"]


# --------------------------------------------------------------------------- check DIR

def _folder(tmp_path):
    out = tmp_path / "src"
    for args in (["--target", "c", "--size", "512"], ["--target", "c", "--size", "1024"],
                 ["--target", "nasm-x64", "--size", "512"], ["--target", "nasm-x64", "--size", "1024"]):
        assert render(out, *args).returncode == 0
    (out / "main.c").write_text("int main(void) { return 0; }\n")
    return out


def test_check_verifies_the_users_files_fast_and_writes_junit(tmp_path):
    import time
    import xml.etree.ElementTree as ET
    out = _folder(tmp_path)
    t0 = time.monotonic()
    p = cli("check", str(out), "--junit", str(tmp_path / "r.xml"), cwd=tmp_path)
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    assert took < 120, took                      # issue 12: under 2 minutes on 2 cores
    assert "check: 1 other file(s)" in p.stdout and "verify: 6 passed" in p.stdout, p.stdout
    root = ET.parse(tmp_path / "r.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 6 and not root.findall(".//failure")
    assert {c.get("name") for c in cases} >= {"c 512 v1.3 fly/full/i1", "c 1024 v1.3 fly/full/i1"}
    assert not (tmp_path / "build").exists()     # scratch in a temporary folder, not the user's project


def test_check_catches_an_edited_file(tmp_path):
    out = tmp_path / "src"
    assert render(out, "--target", "c", "--size", "512").returncode == 0
    c = out / "tf_threefish512_c.c"
    text = c.read_text()
    assert "UINT64_C(0x1bd11bdaa9fc1a22)" in text
    c.write_text(text.replace("UINT64_C(0x1bd11bdaa9fc1a22)", "UINT64_C(0x1bd11bdaa9fc1a23)"))  # a wrong C240
    p = cli("check", str(out), "--junit", str(tmp_path / "r.xml"), "--random", "5", cwd=tmp_path)
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr
    assert "tf_threefish512_c.c differs from what its header command renders" in p.stdout
    assert "verify: 0 passed" in p.stdout and "2 failed" in p.stdout
    assert (tmp_path / "r.xml").read_text().count("<failure") == 2


def test_check_bad_input_is_one_line_exit_2(tmp_path):
    (tmp_path / "x.c").write_text("int x;\n")
    p = cli("check", str(tmp_path))
    assert p.returncode == 2 and p.stderr.strip().splitlines() == [
        f"threefish-gen: error: no file written by threefish-gen in {tmp_path} (none has the "
        "'Generated by threefish-gen' header comment)"]
    p = cli("check", str(tmp_path / "nope"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


# --------------------------------------------------------------------------- CLI

def test_constants_option_and_the_deprecated_version_alias(tmp_path):
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.startswith("threefish-gen, version "), p.stdout
    a = cli("render", "--size", "256", "--constants", "1.1", "--out", str(tmp_path / "a"))
    b = cli("render", "--size", "256", "--version", "1.1", "--out", str(tmp_path / "b"))
    assert a.returncode == b.returncode == 0 and a.stderr == ""
    assert b.stderr.strip() == ("threefish-gen: note: --version VERSION is deprecated here; use --constants VERSION "
                                "(threefish-gen --version prints the program's version)")
    fa, fb = (sorted(f for f in (tmp_path / d).iterdir() if not f.name.startswith(".")) for d in "ab")
    assert [f.read_text() for f in fa] == [f.read_text() for f in fb]
    assert "--constants 1.1" in fa[0].read_text() and "v1.1 constants" in fa[0].read_text()
    p = cli("render", "--size", "256", "--constants", "1.2", "--version", "1.1", "--out", str(tmp_path / "c"))
    assert p.returncode == 2 and p.stderr.strip() == "threefish-gen: error: --constants 1.2 and --version 1.1 disagree"


def test_choices_are_case_insensitive_and_errors_name_the_option(tmp_path):
    p = cli("render", "--target", "C-SIMD", "--isa", "AVX2", "--size", "512", "--constants", "1.3",
            "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert "--target c-simd" in next((tmp_path / "o").glob("*.c")).read_text()
    for args, line in [
        (["--target", "csharp", "--class", "1bad"], "--class '1bad' is not a valid C# identifier"),
        (["--target", "csharp", "--namespace", "a..b"], "--namespace 'a..b' is not a valid C# identifier"),
        (["--prefix", "1bad"], "--prefix '1bad' is not a C identifier prefix (letters, digits, _; not starting "
                               "with a digit)"),
        (["--interleave", "9"], "--interleave must be 1..4, not 9"),
        (["--target", "nasm-x64", "--isa", "neon"], "--isa 'neon' is not available for nasm-x64 (choose from gpr, "
                                                     "sse2, avx2, avx512)"),
    ]:
        p = cli("render", "--size", "512", "--constants", "1.3", *args, "--out", str(tmp_path / "x"))
        assert p.returncode == 2 and p.stderr.strip() == f"threefish-gen: error: {line}", (args, p.stderr)


# --------------------------------------------------------------------------- C headers, NASM CET

def _cpu_flags():
    return set(" ".join(ln.split(":", 1)[1] for ln in Path("/proc/cpuinfo").read_text().splitlines()
                        if ln.startswith("flags")).split())


C_RENDERS = [("c", []), ("c-simd", ["--isa", "auto"]), ("c-simd", ["--isa", "avx2"]), ("c-simd", ["--isa", "avx512"]),
             ("c-simd", ["--isa", "avx2", "--layout", "packed"])]


@pytest.mark.parametrize("target, args", C_RENDERS)
def test_c_files_are_clean_as_cpp_and_declare_every_symbol(tmp_path, target, args):
    out = tmp_path / "s"
    p = render(out, "--target", target, "--size", "512", *args)
    assert p.returncode == 0, p.stderr
    c = next(out.glob("*.c"))
    h = c.with_suffix(".h")
    for cxx in (["g++", "-Wcast-align=strict"], ["clang++", "-Wcast-align"]):
        r = subprocess.run([*cxx, "-x", "c++", "-std=c++11", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                            "-c", str(c), "-o", str(tmp_path / "x.o")], capture_output=True, text=True)
        assert r.returncode == 0, (cxx, r.stderr[:2000])
    # every global symbol the object defines is declared in the header
    r = subprocess.run(["nm", "-g", "--defined-only", str(tmp_path / "x.o")], capture_output=True, text=True,
                       check=True)
    defined = {ln.split()[-1] for ln in r.stdout.splitlines() if ln.split()[1] in "TDRB"}
    header = h.read_text()
    assert defined and all(f" {s}(" in header or f"*{s}(" in header for s in defined), (defined, header)
    assert "tf_cpu_supported" in defined and '#define TF_VERSION "' in header and "#define TF_API_VERSION 1" in header
    assert ("tf_dispatch_path" in defined) == (args == ["--isa", "auto"])
    # cpu_supported agrees with /proc/cpuinfo
    main = tmp_path / "main.c"
    main.write_text(f'#include <stdio.h>\n#include "{h.name}"\nint main(void) {{ printf("%d %s %s\\n", '
                    'tf_cpu_supported(), TF_VERSION, TF_CONSTANTS); return 0; }\n')
    exe = tmp_path / "m"
    subprocess.run(["gcc", "-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{out}", str(main), str(c), "-o",
                    str(exe)], check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    need = {"avx2": {"avx2"}, "avx512": {"avx512f", "avx512vl"}}.get(args[1] if args else "", set())
    assert got[0] == str(int(need <= _cpu_flags())) and got[2] == "1.3"


NASM_RENDERS = [["--isa", "gpr"], ["--isa", "avx2"], ["--isa", "avx512"], ["--rotate", "rorx"]]


def test_nasm_objects_keep_cet_and_say_what_cpu_they_need(tmp_path):
    out = tmp_path / "s"
    objs, prefixes = [], []
    for i, args in enumerate(NASM_RENDERS):
        pre = f"n{i}_"
        p = cli("render", "--target", "nasm-x64", "--size", "512", "--constants", "1.3", "--prefix", pre, *args,
                "--out", str(out))
        assert p.returncode == 0, p.stderr
        asm = out / f"{pre}threefish512_nasmx64.asm"
        text = asm.read_text()
        for sym in ("encrypt", "decrypt", "encrypt_blocks", "decrypt_blocks", "cpu_supported"):
            assert f"\n{pre}{sym}:" in text.replace(" ;", "\n;")
            after = text.split(f"\n{pre}{sym}:", 1)[1].lstrip(" ;").split("\n", 2)
            assert "endbr64" in after[1], (sym, after[:2])       # first instruction of every exported entry
        obj = tmp_path / f"{pre}.o"
        subprocess.run(["nasm", "-f", "elf64", "-o", str(obj), str(asm)], check=True)
        objs.append(obj)
        prefixes.append(pre)
    main = tmp_path / "main.c"
    main.write_text("#include <stdio.h>\n" + "".join(f'#include "{p}threefish512_nasmx64.h"\n' for p in prefixes)
                    + "int main(void) {\n" + "".join(f'    printf("%d\\n", {p}cpu_supported());\n' for p in prefixes)
                    + "    return 0;\n}\n")
    mo = tmp_path / "main.o"
    subprocess.run(["gcc", "-O2", "-fcf-protection=full", "-Wall", "-Wextra", "-Werror", f"-I{out}", "-c", str(main),
                    "-o", str(mo)], check=True)
    # Debian's crt1.o/crti.o carry no CET note, so a whole program loses it whatever we link; a relocatable
    # link of the program's object with ours is the AND of exactly these inputs
    both = tmp_path / "both.o"
    subprocess.run(["ld", "-r", str(mo), *map(str, objs), "-o", str(both)], check=True)
    notes = subprocess.run(["readelf", "-n", str(both)], capture_output=True, text=True, check=True).stdout
    assert "x86 feature: IBT, SHSTK" in notes, notes
    # control: the same object without its note turns both off
    bare = tmp_path / "bare.asm"
    bare.write_text((out / "n0_threefish512_nasmx64.asm").read_text().split("section .note.gnu.property")[0])
    subprocess.run(["nasm", "-f", "elf64", "-o", str(tmp_path / "bare.o"), str(bare)], check=True)
    subprocess.run(["ld", "-r", str(mo), str(tmp_path / "bare.o"), "-o", str(tmp_path / "b2.o")], check=True)
    assert "IBT" not in subprocess.run(["readelf", "-n", str(tmp_path / "b2.o")], capture_output=True,
                                       text=True).stdout
    exe = tmp_path / "m"
    subprocess.run(["gcc", "-fcf-protection=full", str(mo), *map(str, objs), "-o", str(exe)], check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    flags = _cpu_flags()
    assert got == ["1", str(int("avx2" in flags)), str(int("avx512f" in flags)), str(int("bmi2" in flags))]
    # older CPUs, emulated (qemu-user's TCG has no AVX-512): the checks say 0 where code would SIGILL
    for cpu, want in (("Nehalem", ["1", "0", "0", "0"]), ("Haswell", ["1", "1", "0", "1"])):
        r = subprocess.run(["qemu-x86_64", "-cpu", cpu, str(exe)], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.split() == want, (cpu, r.stdout, r.stderr[-500:])


def test_nasm_x86_object_keeps_cet(tmp_path):
    p = cli("render", "--target", "nasm-x86", "--size", "256", "--constants", "1.3", "--prefix", "x_",
            "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    asm = tmp_path / "x_threefish256_nasmx86.asm"
    assert "endbr32" in asm.read_text()
    subprocess.run(["nasm", "-f", "elf32", "-o", str(tmp_path / "x.o"), str(asm)], check=True)
    subprocess.run(["gcc", "-m32", "-fcf-protection=full", "-c", "-x", "c", "-", "-o", str(tmp_path / "m.o")],
                   input="int f(void) { return 0; }\n", text=True, check=True)
    subprocess.run(["ld", "-m", "elf_i386", "-r", str(tmp_path / "m.o"), str(tmp_path / "x.o"), "-o",
                    str(tmp_path / "a.o")], check=True)
    assert "x86 feature: IBT, SHSTK" in subprocess.run(["readelf", "-n", str(tmp_path / "a.o")],
                                                       capture_output=True, text=True).stdout
