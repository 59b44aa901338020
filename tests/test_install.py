"""`pip install .` offline with Debian's Python packages (docs/install.md), then the installed
command from a folder that is not the source tree: one top-level package, the templates, harness,
vectors and bench sources as package data, render and bench work."""
from __future__ import annotations

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
    return venv, wheel, work


def test_wheel_has_one_top_level_package_and_its_data(installed):
    _, wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"threefish_gen"}, tops
    for need in ("threefish_gen/templates/c/threefish.c.j2", "threefish_gen/templates/nasm/threefish.asm.j2",
                 "threefish_gen/templates/explore/report.html", "threefish_gen/verify/harness/harness.c",
                 "threefish_gen/verify/kat/threefish512_v1.3.kat", "threefish_gen/bench/peers_botan.cpp",
                 "threefish_gen/bench/bench.c", "threefish_gen/bench/csharp/Bench.cs",
                 "threefish_gen/gen/asm/alloc/belady.py"):
        assert need in names, need
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
    p = subprocess.run([str(venv / "bin" / "threefish-gen"), "bench", "--quick", "--size", "256", "--target", "c",
                        "--samples", "1", "--passes", "1"], cwd=work, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "Threefish-256" in p.stdout and (work / "build" / "bench.json").is_file()
