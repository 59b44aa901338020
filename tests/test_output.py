"""Writing rendered files (gen/output.py): the destination is as it was or complete, whatever
happens -- interrupts at random moments, SIGKILL, a folder where a file goes, a full disk, a
closed stdout."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import COMPLETE, STAGING, recover, write_files

ROOT = Path(__file__).resolve().parent.parent
NAMES = [f"f{i:03d}.txt" for i in range(200)]

WRITER = """
import sys
sys.path.insert(0, {root!r})
from threefish_gen.gen.output import write_files
print("ready", flush=True)
write_files({{n: "new " + n + "\\n" * 20000 for n in {names!r}}}, {dest!r})
"""


def _state(dest: Path) -> str:
    """'old', 'new', or 'mixed' over NAMES; staging folders are reported apart."""
    kinds = set()
    for n in NAMES:
        text = (dest / n).read_text()
        kinds.add("new" if text.startswith("new ") else "old")
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _old(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for n in NAMES:
        (dest / n).write_text("old\n")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_interrupt_at_random_moments_leaves_old_or_complete(tmp_path, sig):
    rng = random.Random(sig)
    seen = set()
    for trial in range(6):
        dest = tmp_path / f"d{trial}"
        _old(dest)
        p = subprocess.Popen([sys.executable, "-c", WRITER.format(root=str(ROOT), names=NAMES, dest=str(dest))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0, 0.25))
        p.send_signal(sig)
        p.communicate(timeout=60)
        staging = [d for d in dest.iterdir() if d.name.startswith(STAGING)]
        if sig != signal.SIGKILL:
            assert not staging, staging       # SIGINT/SIGTERM clean up after themselves
        recover(dest)                         # what the next render into dest does first
        assert not [d for d in dest.iterdir() if d.name.startswith(STAGING)]
        state = _state(dest)
        assert state in ("old", "new"), f"trial {trial}: {state}"
        seen.add(state)
    assert seen        # (which states occur depends on timing; the invariant is what counts)


def test_an_interrupt_just_after_the_staging_folder_is_made_leaves_no_staging(tmp_path, monkeypatch):
    """The window CI once hit: the signal lands after mkdir, before the name is kept."""
    dest = tmp_path / "d"
    _old(dest)
    real = os.mkdir

    def mkdir_then_interrupt(path, *a, **k):
        real(path, *a, **k)
        if Path(path).name.startswith(STAGING):
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "mkdir", mkdir_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_files({n: "new " + n for n in NAMES}, dest)
    monkeypatch.undo()
    assert not [d for d in dest.iterdir() if d.name.startswith(STAGING)]
    assert _state(dest) == "old"


def _staging(dest: Path, names, pid=999999999, token="0123456789ab", mark=True) -> Path:
    """A staging folder as a render killed while moving leaves it (the format of gen/output.py)."""
    stage = dest / f"{STAGING}{pid}-{token}"
    stage.mkdir()
    for n in names:
        (stage / n).write_text("new " + n)
    if mark:
        (stage / COMPLETE).write_text(f"threefish-gen staging 1\npid {pid}\ntoken {token}\n"
                                      + "".join(f"file {n}\n" for n in names) + "end\n")
    return stage


def test_a_complete_staging_left_by_a_kill_is_finished_by_the_next_run(tmp_path):
    dest = tmp_path / "d"
    _old(dest)
    stage = _staging(dest, NAMES[:5])
    write_files({"other.txt": "x"}, dest)
    assert all((dest / n).read_text().startswith("new ") for n in NAMES[:5])
    assert not stage.exists() and (dest / "other.txt").read_text() == "x"


def test_an_incomplete_staging_is_discarded(tmp_path):
    dest = tmp_path / "d"
    _old(dest)
    stage = _staging(dest, NAMES[:1], mark=False)
    recover(dest)
    assert not stage.exists() and _state(dest) == "old"


def test_a_folder_where_a_file_goes_changes_nothing(tmp_path):
    dest = tmp_path / "d"
    _old(dest)
    (dest / "x.h").mkdir()
    with pytest.raises(GenError, match="is a folder"):
        write_files({NAMES[0]: "new", "x.h": "new"}, dest)
    assert _state(dest) == "old" and not [d for d in dest.iterdir() if d.name.startswith(STAGING)]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("args", [["list"], ["render", "--size", "256", "--constants", "1.3"]])
def test_a_full_stdout_is_one_line_exit_2(tmp_path, args):
    if args[0] == "render":
        args = args + ["--out", str(tmp_path / "o")]
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "threefish_gen", *args], stdout=full, stderr=subprocess.PIPE,
                           text=True, cwd=ROOT)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == ["threefish-gen: error: No space left on device"]


def test_verify_workdir_that_is_a_file_is_one_line_exit_2(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "verify", "--set", "recommended", "--target", "c",
                        "--size", "256", "--constants", "1.3", "--workdir", str(f), "--report", str(tmp_path / "r.json")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("threefish-gen: error: ")


def test_identifiers_with_a_trailing_newline_are_refused(tmp_path):
    for args in (["--prefix", "x\n"], ["--target", "csharp", "--namespace", "My.Ns\n"],
                 ["--target", "csharp", "--class", "C\n"]):
        p = subprocess.run([sys.executable, "-m", "threefish_gen", "render", "--size", "256", "--constants", "1.3",
                            *args, "--out", str(tmp_path / "o")], capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 2 and "Traceback" not in p.stderr, (args, p.stderr)
        assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


# --------------------------------------------------------------------------- nested names

NESTED = {"crate/Cargo.toml": "toml\n", "crate/src/lib.rs": "lib\n", "crate/README.md": "readme\n"}


def test_a_complete_nested_staging_left_by_a_kill_is_finished_and_its_folders_made(tmp_path):
    """Killed while moving a crate: the next run makes the folders (crate/, crate/src/) and moves
    the files, the one already moved included."""
    dest = tmp_path / "d"
    dest.mkdir()
    stage = dest / f"{STAGING}999999999-0123456789ab"
    (stage / "crate" / "src").mkdir(parents=True)
    for n in ("crate/Cargo.toml", "crate/src/lib.rs"):
        (stage / n).write_text("new " + n)
    (stage / COMPLETE).write_text("threefish-gen staging 1\npid 999999999\ntoken 0123456789ab\n"
                                  + "".join(f"file {n}\n" for n in NESTED) + "end\n")   # README.md: moved
    recover(dest)
    assert not stage.exists()
    assert (dest / "crate/Cargo.toml").read_text() == "new crate/Cargo.toml"
    assert (dest / "crate/src/lib.rs").read_text() == "new crate/src/lib.rs"


def test_an_incomplete_nested_staging_is_discarded(tmp_path):
    dest = tmp_path / "d"
    dest.mkdir()
    stage = dest / f"{STAGING}999999999-0123456789ab"
    (stage / "crate" / "src").mkdir(parents=True)
    (stage / "crate/src/lib.rs").write_text("half")
    recover(dest)
    assert list(dest.iterdir()) == []


def test_an_interrupt_while_staging_a_nested_render_leaves_no_folder(tmp_path, monkeypatch):
    """The destination's folders are made only after the staging is complete: an interrupt while
    staging leaves neither a staging nor the crate folder."""
    dest = tmp_path / "d"
    dest.mkdir()
    real = os.open

    def interrupt_at_readme(path, flags, mode=0o777, *, dir_fd=None):
        if path == "README.md" and flags & os.O_CREAT:
            raise KeyboardInterrupt
        return real(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", interrupt_at_readme)
    with pytest.raises(KeyboardInterrupt):
        write_files(NESTED, dest)
    monkeypatch.undo()
    assert list(dest.iterdir()) == []


def test_a_folder_that_cannot_be_made_writes_nothing(tmp_path, monkeypatch):
    """mkdir of crate/src in the destination fails (after crate/ was made): crate/ is removed
    again, no file is moved, no staging is left."""
    dest = tmp_path / "d"
    dest.mkdir()
    real = os.mkdir

    def no_src(path, mode=0o777, *, dir_fd=None):
        if path == "src" and dir_fd is not None and STAGING not in os.readlink(f"/proc/self/fd/{dir_fd}"):
            raise OSError(28, "No space left on device")
        return real(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", no_src)
    with pytest.raises(GenError, match=r"^cannot make a folder in .*: No space left on device \(nothing was written\)$"):
        write_files({"top.txt": "x", **NESTED}, dest)
    monkeypatch.undo()
    assert list(dest.iterdir()) == []
