"""`pip install .` offline with Debian's Python packages (docs/install.md), then the installed
command from a folder that is not the source tree (the venv and the working folder are outside the
checkout, and PYTHONPATH is cleared): one top-level package, every package and every data file of
the source tree in the wheel, and every command run from it -- render, list, kat, check, prove,
verify (one small variant), explore, regalloc, bench --quick, tune (a tiny budget), paths / --cmakedir
with the installed CMake module and backend.mk building a rendered backend."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"      # a copy: setuptools writes build/ and *.egg-info into the tree it builds
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "out", "__pycache__",
                                                             "*.egg-info", ".pytest_cache"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    wheels = tmp / "wheels"
    p = subprocess.run([str(venv / "bin" / "pip"), "wheel", "--no-build-isolation", "--no-index", "--no-deps",
                        "-w", str(wheels), str(src)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    wheel = next(wheels.glob("threefish_gen-*.whl"))
    p = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--no-deps", str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    work = tmp / "elsewhere"
    work.mkdir()
    assert ROOT not in work.parents and ROOT not in venv.parents
    return venv, wheel, work


ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def tfg(installed, *args, timeout=300, ok=(0,)):
    """The installed threefish-gen, run in the folder outside the checkout: its exit status is in
    ``ok`` and it never ends in a traceback."""
    venv, _, work = installed
    p = subprocess.run([str(venv / "bin" / "threefish-gen"), *map(str, args)], cwd=work, env=ENV,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode in ok and "Traceback" not in p.stderr, (args, p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return p.stdout


@pytest.fixture(scope="module")
def rendered(installed):
    """A Threefish-256 C render made by the installed command (the files the other commands read)."""
    tfg(installed, "render", "--target", "c", "--size", "256", "--constants", "1.3", "--out", "c256")
    return installed[2] / "c256"


def test_wheel_has_one_top_level_package_and_its_data(installed):
    _, wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"threefish_gen"}, tops
    for need in ("threefish_gen/templates/c/threefish.c.j2", "threefish_gen/templates/nasm/threefish.asm.j2",
                 "threefish_gen/templates/explore/report.html", "threefish_gen/verify/harness/harness.c",
                 "threefish_gen/verify/kat/threefish512_v1.3.kat", "threefish_gen/tools/bench/harness/peers_botan.cpp",
                 "threefish_gen/tools/bench/harness/bench.c", "threefish_gen/tools/bench/harness/dotnet/Bench.cs",
                 "threefish_gen/gen/asm/alloc/belady.py"):
        assert need in names, need
    # every file of the package in the source tree (modules, templates, harness, vectors, bench
    # sources, profiles, the CMake module, backend.mk) is in the wheel: packages are found, not listed
    tree = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "threefish_gen").rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    missing = [n for n in tree if n not in names]
    assert not missing, missing
    for d in {p.parent for p in (ROOT / "threefish_gen").rglob("*.py")}:
        assert (d / "__init__.py").is_file(), f"{d} has modules but no __init__.py: the wheel would lack it"
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Requires-Python: >=3.9" in text and "License :: OSI Approved :: MIT License" in text
    assert any(n.endswith(".dist-info/LICENSE") for n in names)


def test_installed_command_renders_from_any_folder(installed):
    venv, _, work = installed
    exe = str(venv / "bin" / "threefish-gen")
    p = subprocess.run([exe, "--version"], cwd=work, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("threefish-gen, version "), p.stdout + p.stderr
    p = subprocess.run([exe, "render", "--target", "c", "--size", "512", "--constants", "1.3", "--out", "src"],
                       cwd=work, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    c = next((work / "src").glob("*.c"))
    # the rendered file is the source tree's recommended 512 render (out/ is checked by test_out)
    assert c.read_text() == (ROOT / "out" / "c" / c.name).read_text()
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Werror", "-c", str(c), "-o", str(work / "x.o")], check=True)


def test_installed_bench_finds_its_sources(installed):
    venv, _, work = installed
    out = tfg(installed, "bench", "--quick", "--size", "256", "--target", "c", "--samples", "1", "--passes", "1")
    assert "Threefish-256" in out and (work / "build" / "bench.json").is_file()


def test_installed_list_kat_and_regalloc(installed):
    venv, _, work = installed
    assert "nasm-x64" in tfg(installed, "list")
    kat = next(venv.glob("lib/python3*/site-packages/threefish_gen/verify/kat/threefish256_v1.3.kat"))
    tfg(installed, "kat", kat)
    assert "belady" in tfg(installed, "regalloc", "--size", "256", "--strategy", "belady")


def test_installed_check_and_prove_read_a_render(installed, rendered):
    out = tfg(installed, "check", rendered, "--random", "5", "--jobs", "2")
    assert "PASS" in out, out[-2000:]
    c = next(rendered.glob("*.c"))
    tfg(installed, "prove", "--target", "c", "--size", "256", "--constants", "1.3", "--file", c)


def test_installed_verify_one_small_variant(installed):
    tfg(installed, "verify", "--target", "c", "--size", "256", "--constants", "1.3", "--random", "5", "--jobs", "2",
        "--report", "verify.json")


def test_installed_explore_and_tune(installed):
    _, _, work = installed
    tfg(installed, "explore", "--target", "nasm-x64", "--size", "256", "--strategy", "belady", "--out", "e.html")
    assert (work / "e.html").stat().st_size > 1000
    tfg(installed, "tune", "--target", "c", "--size", "256", "--budget", "20", "--out", "p.json")
    assert (work / "p.json").is_file()


def test_installed_paths_give_the_cmake_module_and_backend_mk(installed, rendered, tmp_path):
    """`threefish-gen --cmakedir` (as `pybind11 --cmakedir`) and `paths`: files of the installed
    package, and they work: find_package(ThreefishGen) renders with the installed command (not on
    PATH: the module finds the venv's), backend.mk builds and installs a rendered folder."""
    venv, _, work = installed
    cmakedir = Path(tfg(installed, "--cmakedir").strip())
    mk = Path(tfg(installed, "paths", "--backend-mk").strip())
    assert venv in cmakedir.parents and venv in mk.parents and mk.is_file()
    assert (cmakedir / "ThreefishGenConfig.cmake").is_file() and str(cmakedir) in tfg(installed, "paths")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "app.c").write_text('#include "tf_threefish256_c.h"\nint main(void) { return tf_cpu_supported() ? 0 : 1; }\n')
    (proj / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(p C)\n"
                                         "find_package(ThreefishGen REQUIRED)\n"
                                         "threefish_gen_add_library(tf TARGET c SIZE 256 CONSTANTS 1.3 PREFIX tf_)\n"
                                         "add_executable(app app.c)\ntarget_link_libraries(app PRIVATE tf)\n")
    b = tmp_path / "b"
    for cmd in (["cmake", "-S", proj, "-B", b, f"-DThreefishGen_DIR={cmakedir}"], ["cmake", "--build", b], [b / "app"]):
        p = subprocess.run(list(map(str, cmd)), cwd=work, env=ENV, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, (cmd, p.stdout[-2000:], p.stderr[-2000:])
    p = subprocess.run(["make", "-s", "-f", str(mk), "install", f"PREFIX={tmp_path / 'inst'}", "NAME=tf"], cwd=rendered,
                       env=ENV, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "inst" / "lib" / "libtf.a").is_file() and (tmp_path / "inst" / "lib" / "pkgconfig" / "tf.pc").is_file()
