"""verify/objstore.py: build steps made once per run and shared by the rows that need them."""
from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threefish_gen.gen.render import Variant  # noqa: E402
from threefish_gen.gen.spec import get_spec  # noqa: E402
from threefish_gen.gen.threefish import Options  # noqa: E402
from threefish_gen.verify import ct, objstore, runner, simd  # noqa: E402
from threefish_gen.verify.proc import Timeout  # noqa: E402


@pytest.fixture
def store(tmp_path):
    objstore.reset(tmp_path / "objects")
    yield tmp_path / "objects"
    objstore.reset(None)


def _src(tmp_path, name, text, header="int h;\n"):
    d = tmp_path / name
    d.mkdir(parents=True)
    (d / "x.c").write_text(text)
    (d / "x.h").write_text(header)
    return d


def _fake_run(calls, rc=0, delay=0.0):
    def run(cmd, cwd):
        calls.append(cmd)
        time.sleep(delay)
        if rc == 0 and "-o" in cmd:
            Path(cmd[cmd.index("-o") + 1]).write_text("object of " + " ".join(cmd))
        return rc, "" if rc == 0 else "x.c:1: error: no"
    return run


def test_the_key_is_the_content_not_the_row_folder(tmp_path):
    a = _src(tmp_path, "a/src", "int x;\n")
    b = _src(tmp_path, "b/src", "int x;\n")
    c = _src(tmp_path, "c/src", "int x = 1;\n")
    d = _src(tmp_path, "d/src", "int x;\n", header="int h2;\n")

    def key(src, *flags):
        return objstore.key_of(["gcc", *flags, f"-I{src}", "-c", str(src / "x.c")], src, [src / "x.c", src / "x.h"])

    assert key(a, "-O2") == key(b, "-O2")           # another row's folder, same text and flags
    assert key(a, "-O2") != key(c, "-O2")           # another text
    assert key(a, "-O2") != key(d, "-O2")           # another header beside it
    assert key(a, "-O2") != key(a, "-O1")           # other flags
    assert key(a, "-O2") != objstore.key_of(["clang", "-O2", f"-I{a}", "-c", str(a / "x.c")], a,
                                            [a / "x.c", a / "x.h"])   # another compiler (and its version)


def test_one_build_per_key_across_threads(tmp_path, store):
    calls: list = []
    run = _fake_run(calls, delay=0.2)
    srcs = [_src(tmp_path, f"r{i}/src", "int x;\n") for i in range(6)]
    results = [None] * 6

    def row(i):
        s = srcs[i]
        results[i] = objstore.build(["gcc", "-O2", f"-I{s}", "-c", str(s / "x.c")], s, [s / "x.c", s / "x.h"],
                                    run, s.parent, output="x.o")

    threads = [threading.Thread(target=row, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len({r[2] for r in results}) == 1 and all(r[0] == 0 for r in results)
    obj = results[0][2]
    assert obj.parent.parent == store and obj.read_text().startswith("object of gcc -O2")
    assert objstore.STATS == {"built": 1, "shared": 5}


def test_a_failed_step_is_the_same_failure_for_every_row(tmp_path, store):
    calls: list = []
    run = _fake_run(calls, rc=1)
    for i in range(2):
        s = _src(tmp_path, f"r{i}/src", "int x\n")
        rc, out, obj = objstore.build(["gcc", f"-I{s}", "-c", str(s / "x.c")], s, [s / "x.c"], run, s.parent,
                                      output="x.o")
        assert (rc, obj) == (1, None) and "error" in out
    assert len(calls) == 1


def test_an_exception_reaches_every_waiting_row(tmp_path, store):
    started = threading.Event()

    def run(cmd, cwd):
        started.set()
        time.sleep(0.2)
        raise Timeout("gcc (build)", 600)

    s = _src(tmp_path, "r/src", "int x;\n")
    argv = ["gcc", f"-I{s}", "-c", str(s / "x.c")]
    errors = []

    def row():
        try:
            objstore.build(argv, s, [s / "x.c"], run, s.parent, output="x.o")
        except Timeout as e:
            errors.append(e)

    t1 = threading.Thread(target=row)
    t1.start()
    started.wait()
    t2 = threading.Thread(target=row)
    t2.start()
    t1.join()
    t2.join()
    assert len(errors) == 2 and errors[0] is errors[1]


def test_without_a_store_the_step_runs_in_the_row_folder(tmp_path):
    objstore.reset(None)
    calls: list = []
    s = _src(tmp_path, "r/src", "int x;\n")
    for _ in range(2):
        rc, _, obj = objstore.build(["gcc", "-c", str(s / "x.c")], s, [s / "x.c"], _fake_run(calls), s.parent,
                                    output="x.o")
        assert rc == 0 and obj == s.parent / "x.o"
    assert len(calls) == 2


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("valgrind") is None, reason="gcc, valgrind")
def test_the_ct_row_links_the_object_of_the_gcc_o2_row(tmp_path, store):
    """Scalar C and native SIMD C: the constant-time row scans the object the gcc -O2 row runs
    (one compile for both), and both rows pass."""
    assert ct.OBJECT_CFLAGS == runner.C_BUILDS[0].cflags == simd.SIMD_BUILDS[0].cflags
    v = Variant("c", get_spec("1.3", 256), Options(), "tf_")
    vec = runner.vector_file(v.spec, tmp_path / "v.txt", 5, seed=1)
    row = runner.check_c(v, runner.C_BUILDS[0], tmp_path / "gcc", vec)
    assert row.status == "PASS", row.detail
    assert objstore.STATS == {"built": 2, "shared": 0}       # the C++ check and the object
    crow = ct.check(v, ct.BUILD, tmp_path / "ct", vec)
    assert crow.status == "PASS", crow.detail
    assert objstore.STATS == {"built": 2, "shared": 1}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc")
def test_a_changed_text_is_built_again_and_fails(tmp_path, store):
    """Sharing never hands a row another text's object: a wrong rotation constant in one render
    of the same name is compiled on its own and fails its row."""
    from test_verify_c import WrongRotation
    good = get_spec("1.3", 512)
    vec = runner.vector_file(good, tmp_path / "v.txt", 5, seed=1)
    ok = runner.check_c(Variant("c", good, Options(), "tf_"), runner.C_BUILDS[0], tmp_path / "w1", vec)
    bad = runner.check_c(Variant("c", WrongRotation("1.3", 512), Options(), "tf_"), runner.C_BUILDS[0],
                         tmp_path / "w2", vec)
    assert ok.status == "PASS" and bad.status == "FAIL" and "FAIL" in bad.detail, bad.detail
    assert objstore.STATS["shared"] == 0


@pytest.mark.skipif(shutil.which("nasm") is None or shutil.which("gcc") is None, reason="nasm, gcc")
def test_nasm_rows_share_the_assembled_objects(tmp_path, store):
    """The rows of one nasm-x64 variant: the file as rendered is assembled once (elf64 rows, ct),
    the renamed file once for both run rows, the ABI thunk once; every row still passes."""
    from threefish_gen.gen.targets import get as get_target
    from threefish_gen.verify import matrix
    v = get_target("nasm-x64").variant(get_spec("1.3", 256), Options("fly", "full", 1), "")
    vec = runner.vector_file(v.spec, tmp_path / "v.txt", 5, seed=1)
    rows = []
    for b in matrix.builds_of(v):
        if b.name in ("prove", "win64 under wine"):
            continue
        check = ct.check if b is ct.BUILD else matrix.checker_of(v).check
        rows.append(check(v, b, tmp_path / b.name.replace(" ", "-"), vec))
    assert all(r.status in ("PASS", "ASSEMBLED") for r in rows if not r.status == "SKIPPED"), \
        [(r.build, r.status, r.detail) for r in rows]
    assert {r.build for r in rows if r.status == "PASS"} >= {"nasm elf64 + gcc -O2", "nasm elf64 + asan+ubsan",
                                                             "win64 ABI via ms_abi"}
    # elf64 + gcc -O2 builds 3 (file, renamed file, thunk); asan+ubsan reuses all 3; ct the file;
    # win64 (assemble) builds the Win64 file; ms_abi reuses the thunk
    ran_ct = any(r.build == "ct (memcheck)" and r.status == "PASS" for r in rows)
    assert objstore.STATS == {"built": 4, "shared": 4 + ran_ct}, objstore.STATS
