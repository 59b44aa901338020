"""`check DIR` builds and runs the files it is given (issue 25, item 6): bounded and stoppable.

SIGTERM leaves no process and no temporary folder; a harness that spins is stopped by the CPU-time
limit (a TIMEOUT row); a core-dumping harness leaves no core file; an oversized input and an
#include that reaches outside the folder are one line and exit 2; the prove row of the user's
files has a time limit."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
C = "tf_threefish256_c.c"

pytestmark = pytest.mark.skipif(not (os.path.exists("/usr/bin/gcc") and sys.platform == "linux"),
                                reason="needs gcc on Linux")


def _env(tmp_path, **extra):
    tmp = tmp_path / "tmpdir"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp), **extra}


def cli(tmp_path, *args, **extra):
    return subprocess.run([sys.executable, "-m", "threefish_gen", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=_env(tmp_path, **extra), timeout=600)


def _folder(tmp_path, append: str = "") -> Path:
    out = tmp_path / "src"
    p = cli(tmp_path, "render", "--target", "c", "--size", "256", "--constants", "1.3", "--prefix", "tf_",
            "--out", str(out))
    assert p.returncode == 0, p.stderr
    if append:
        with open(out / C, "a") as f:
            f.write(append)
    return out


# runs before main: the harness never gets to the vectors
SPIN = "\n__attribute__((constructor)) static void tf_spin(void) { volatile int s = 1; while (s) { } }\n"
ABORT = "\n#include <stdlib.h>\n__attribute__((constructor)) static void tf_die(void) { abort(); }\n"


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(d / "cwd")
        except OSError:
            continue
        if text in cmd or text in cwd:
            found.append(f"{d.name}: {cmd[:200]}")
    return found


@pytest.mark.parametrize("sig, rc, line", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
                         ids=["SIGTERM", "SIGINT"])
def test_sigterm_leaves_no_process_and_no_temporary_folder(tmp_path, sig, rc, line):
    src = _folder(tmp_path, SPIN)
    env = _env(tmp_path)
    p = subprocess.Popen([sys.executable, "-m", "threefish_gen", "check", str(src), "--random", "2"],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tmp = tmp_path / "tmpdir"
    # wait until a harness spins (a process running from the temporary folder's build)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not [x for x in _processes_mentioning(str(tmp)) if "harness" in x]:
        assert p.poll() is None, p.communicate()
        time.sleep(0.5)
    assert [x for x in _processes_mentioning(str(tmp)) if "harness" in x], "no harness started"
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == rc, out[-2000:] + err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == f"threefish-gen: error: {line}", err
    time.sleep(0.5)
    assert _processes_mentioning(str(tmp_path)) == []
    assert list(tmp.iterdir()) == []                  # the check's temporary folder is gone


def test_a_spinning_harness_is_stopped_by_the_cpu_limit(tmp_path):
    src = _folder(tmp_path, SPIN)
    t0 = time.monotonic()
    p = cli(tmp_path, "check", str(src), "--random", "2", "--jobs", "1", THREEFISH_GEN_CPU_LIMIT="8")
    assert p.returncode == 3, p.stdout[-3000:] + p.stderr        # no FAIL, a limit hit
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith("TIMEOUT ")]
    assert len(rows) == 2 and all("harness run exceeded its 8 s CPU-time limit" in r for r in rows), p.stdout
    assert time.monotonic() - t0 < 300


def test_a_core_dumping_harness_leaves_no_core_file(tmp_path):
    src = _folder(tmp_path, ABORT)
    work = tmp_path / "work"
    p = cli(tmp_path, "check", str(src), "--random", "2", "--workdir", str(work))
    assert p.returncode == 1 and "verify: 0 passed" in p.stdout, p.stdout[-3000:] + p.stderr
    cores = [f for f in work.rglob("*") if f.name == "core" or f.name.startswith("core.")]
    assert cores == [] and not list(src.glob("core*")) and not list(tmp_path.glob("core*"))
    # the user's file is on disk once: every build's copy is a hard link to it
    copies = list(work.rglob(C))
    assert len(copies) == 3 and len({f.stat().st_ino for f in copies}) == 1, copies


def test_an_oversized_input_is_one_line_exit_2(tmp_path):
    src = _folder(tmp_path)
    with open(src / C, "r+b") as f:                   # sparse: 65 MB on paper, nothing on disk
        f.truncate(65 << 20)
    p = cli(tmp_path, "check", str(src))
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.strip().splitlines() == [
        f"threefish-gen: error: {src / C}: 68,157,440 bytes, over check's limit of 64 MB for one input file "
        "(threefish-gen writes at most a few MB): nothing was built"]
    assert "verify:" not in p.stdout


@pytest.mark.parametrize("include, why", [
    ('#include "/etc/passwd"', "an absolute path outside the folder"),
    ('#include "../outside.h"', "it climbs out of the checked folder"),
    ("#include </etc/passwd>", "an absolute path outside the folder"),
    ("#define P \"/etc/passwd\"\n#include P", "a computed name (a macro)"),
    ('#inc\\\nlude "../outside.h"', "it climbs out of the checked folder"),
    ('%:include "/etc/passwd"', "an absolute path outside the folder"),
    ('# /* hidden */ include "/etc/passwd"', "an absolute path outside the folder"),
])
def test_an_include_from_outside_the_folder_is_refused(tmp_path, include, why):
    src = _folder(tmp_path, "\n" + include + "\n")
    (tmp_path / "outside.h").write_text("#error secret text of a file outside the folder\n")
    p = cli(tmp_path, "check", str(src))
    assert p.returncode == 2, p.stdout[-2000:] + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and why in lines[0] and f"{src / C}:" in lines[0] and "refused" in lines[0], lines
    assert "secret" not in p.stdout + p.stderr and "root:" not in p.stdout + p.stderr
    assert "verify:" not in p.stdout                  # nothing was built


def test_system_and_folder_includes_are_accepted(tmp_path):
    from threefish_gen.verify import intake
    src = tmp_path / "d"
    (src / "sub").mkdir(parents=True)
    (src / "x.h").write_text("int x;\n")
    for text in ('#include <stdint.h>\n', '#include "x.h"\n', '#include "sub/../x.h"\n',
                 '#include "stddef.h"\n', '// #include "/etc/passwd"\n', '/* #include "/etc/passwd" */\n'):
        intake.scan_includes(src, src / "sub" / "a.c" if "sub/.." in text else src / "a.c", text)
    intake.scan_includes(src, src / "sub" / "a.c", '#include "../x.h"\n')      # inside the folder


def test_nasm_includes_are_refused_too(tmp_path):
    from threefish_gen.gen.errors import GenError
    from threefish_gen.verify import intake
    for text in ('%include "/etc/passwd"\n', 'data: incbin "/etc/shadow", 0, 16\n', "  %INCLUDE '../x.inc'\n",
                 "%include NAME\n"):
        with pytest.raises(GenError, match="refused"):
            intake.scan_includes(tmp_path, tmp_path / "a.asm", text)
    intake.scan_includes(tmp_path, tmp_path / "a.asm", '; %include "/etc/passwd"\nmov rax, rbx\n')


def test_the_prove_row_of_the_users_files_has_a_time_limit(tmp_path, monkeypatch):
    from threefish_gen.tools.check_dir import collect
    from threefish_gen.verify import prove as vprove
    from threefish_gen.verify import proc, sources
    src = _folder(tmp_path)
    (v, files, _, _, _), = collect(src)[0]     # one variant
    sources.use(v, files)
    try:
        monkeypatch.setattr(vprove, "PROVE_LIMIT", 0.2)    # the child Python alone takes longer
        with pytest.raises(proc.Timeout, match="prove exceeded its"):
            vprove.check(v, vprove.BUILD, tmp_path / "w")
        assert not _processes_mentioning(str(tmp_path / "w"))
    finally:
        sources.clear()


def test_stop_all_kills_running_groups_and_refuses_new_commands():
    from threefish_gen.verify import proc
    import threading
    got = []

    def worker():
        try:
            proc.run(["sh", "-c", "sleep 300 & sleep 300"], timeout=600)
        except BaseException as e:      # noqa: B902 -- Stopped is a BaseException
            got.append(e)

    t = threading.Thread(target=worker)
    t.start()
    time.sleep(1)
    try:
        proc.stop_all("test")
        t.join(30)
        assert not t.is_alive() and isinstance(got[0], proc.Stopped)
        with pytest.raises(proc.Stopped):
            proc.run(["true"])
    finally:
        proc.reset()
    assert proc.run(["true"])[0] == 0


@pytest.mark.parametrize("prlimit", [True, False], ids=["prlimit", "python-wrapper"])
def test_limits_are_set_and_address_space_left_to_sanitizers(tmp_path, monkeypatch, prlimit):
    from threefish_gen.verify import proc
    monkeypatch.delenv("THREEFISH_GEN_TIMEOUT_SCALE", raising=False)
    monkeypatch.delenv("THREEFISH_GEN_CPU_LIMIT", raising=False)
    if not prlimit:
        which = proc.shutil.which
        monkeypatch.setattr(proc.shutil, "which", lambda name: None if name == "prlimit" else which(name))
    assert proc.run(["definitely-not-a-command-xyz"])[0] != 0
    rc, out = proc.run(["sh", "-c", "ulimit -c; ulimit -f; ulimit -v; ulimit -t"], limits=proc.RUN_LIMITS,
                       timeout=100)
    core, fsize, vmem, cpu = out.split()
    assert (core, int(fsize) * 512, int(vmem) * 1024, cpu) == ("0", 256 << 20, 4 << 30, "100")
    assert not proc.address_space_ok(["qemu-aarch64", "x"]) and not proc.address_space_ok(["dotnet", "x.dll"])
    exe = tmp_path / "a"
    subprocess.run(["gcc", "-fsanitize=address", "-x", "c", "-", "-o", str(exe)], input="int main(void){return 0;}",
                   text=True, check=True)
    assert not proc.address_space_ok([str(exe)])
    assert proc.run([str(exe)], limits=proc.RUN_LIMITS)[0] == 0      # ASan starts: no AS limit for it


def test_a_file_size_limit_hit_is_a_limit_not_a_fail(tmp_path):
    from threefish_gen.verify import proc
    with pytest.raises(proc.Timeout, match="1 MiB file-size limit"):
        proc.run(["sh", "-c", "head -c 3000000 /dev/zero > big"], cwd=tmp_path,
                 limits=proc.Limits(threaded=False, file_size=proc.MiB))
    assert (tmp_path / "big").stat().st_size == proc.MiB


def test_output_is_capped(tmp_path, monkeypatch):
    from threefish_gen.verify import proc
    monkeypatch.setattr(proc, "OUTPUT_CAP", 1000)
    rc, out = proc.run(["sh", "-c", "head -c 50000 /dev/zero | tr '\\0' x"])
    assert rc == 0 and out.count("x") == 1000 and "[49000 more bytes of output dropped]" in out


@pytest.mark.parametrize("kind", ["bwrap", "unshare"])
def test_the_sandbox_has_no_network_and_bwrap_a_read_only_view(tmp_path, monkeypatch, kind):
    import shutil
    from threefish_gen.verify import proc
    if shutil.which(kind) is None or subprocess.run(
            [*getattr(proc, f"_{kind}_argv")([tmp_path]), "true"], capture_output=True).returncode:
        pytest.skip(f"{kind} cannot start here")
    monkeypatch.setattr(proc, "_SANDBOX", [kind])
    (tmp_path / "rw" / "src").mkdir(parents=True)
    (tmp_path / "ro").mkdir()
    rc, out = proc.run(["sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1; touch ../ro/x src/x; touch y; echo done"],
                       cwd=tmp_path / "rw", limits=proc.RUN_LIMITS, sandbox=[tmp_path / "rw"])
    assert [ln.strip() for ln in out.splitlines() if ln.strip() and "touch" not in ln] == ["lo", "done"], out
    assert (tmp_path / "rw" / "y").exists()
    assert (tmp_path / "ro" / "x").exists() == (kind == "unshare")
    assert (tmp_path / "rw" / "src" / "x").exists() == (kind == "unshare")      # the sources: read-only


def test_kill_descendants_reaches_a_process_in_a_session_of_its_own(tmp_path):
    """What SIGTERM/SIGHUP kill after the process groups: every process below this one, also one
    that left its group (bwrap --new-session does that to the harness)."""
    from threefish_gen.verify import proc
    pidfile = tmp_path / "pid"
    child = subprocess.Popen([sys.executable, "-c",
                              "import os, subprocess, sys, time\n"
                              "g = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
                              f"open({str(pidfile)!r}, 'w').write(str(g.pid))\n"
                              "time.sleep(300)\n"])
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    grandchild = int(pidfile.read_text())
    assert grandchild in proc._descendants(os.getpid()) and child.pid in proc._descendants(os.getpid())
    proc.kill_descendants()
    assert child.wait(timeout=10) == -9
    for _ in range(100):                      # the grandchild, re-parented, is reaped by init
        if grandchild not in proc._descendants(os.getpid()) and not Path(f"/proc/{grandchild}").exists():
            break
        time.sleep(0.1)
    state = Path(f"/proc/{grandchild}/stat").read_text().split()[2] if Path(f"/proc/{grandchild}").exists() else "gone"
    assert state in ("gone", "Z"), state
