"""Taking rendered files into a project (issue 12): renders of different sizes and targets share a
folder without collisions, render never overwrites a file it did not write (unless --force), and
says what it wrote and replaced."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "threefish_gen", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT)


def render(out, *args):
    return cli("render", "--version", "1.3", "--prefix", "tf_", "--out", str(out), *args)


def test_two_sizes_two_targets_in_one_folder_do_not_collide(tmp_path):
    out = tmp_path / "src"
    written = []
    for args in (["--target", "c", "--size", "512"], ["--target", "c", "--size", "1024"],
                 ["--target", "nasm-x64", "--size", "512"], ["--target", "nasm-x64", "--size", "1024"]):
        p = render(out, *args)
        assert p.returncode == 0, p.stderr
        written += p.stdout.split()
    assert len(written) == 8 and len(set(written)) == 8           # nothing written twice
    assert sorted(f.name for f in out.iterdir()) == sorted(Path(w).name for w in written)
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
