"""The matrix tests' result cache (tests/result_cache.py, `make test-matrix --result-cache`):
a passed matrix test is not run again while nothing it could depend on changed, and says so
("cached", never "passed"); an edited file, a new file, another tool version or environment runs
it again; a failure is never cached; --no-result-cache and THREEFISH_GEN_NO_TEST_CACHE run all.

The end-to-end cases run pytest on a small project of their own (a git repository in tmp_path
whose conftest marks its tests ``matrix`` and loads the plugin), so what they assert is what
pytest printed and which tests wrote to a log, not the plugin's own bookkeeping."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import result_cache as rc

HERE = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
pytest_plugins = ["result_cache"]
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "matrix" in item.name:
            item.add_marker("matrix")
"""

TESTS = """
import os
from pathlib import Path

def log(name):
    with open(os.environ["RESULT_CACHE_TEST_LOG"], "a") as f:
        f.write(name + "\\n")

def test_reads_the_harness_matrix():
    log("harness")
    assert Path(__file__).with_name("harness.c").read_text().startswith("int")

def test_reads_the_vectors_matrix():
    log("vectors")
    assert "FAIL" not in Path(__file__).with_name("vectors.txt").read_text()

def test_outside_the_long_lists():
    log("plain")
"""


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "conftest.py").write_text(CONFTEST)
    (root / "test_m.py").write_text(TESTS)
    (root / "harness.c").write_text("int main(void) { return 0; }\n")
    (root / "vectors.txt").write_text("00 11 22\n")
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    matrix: the long matrix\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    return root


def run(root: Path, *args, env=None):
    log = root.parent / "ran.log"
    log.unlink(missing_ok=True)
    env = {**{k: v for k, v in os.environ.items() if k != rc.NO_CACHE_ENV and not k.startswith("PYTEST_")},
           "RESULT_CACHE_TEST_LOG": str(log), **(env or {})}
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v",
                        f"--result-cache={root.parent / 'cache'}", *args],
                       cwd=root, capture_output=True, text=True, env=env)
    ran = sorted(log.read_text().split()) if log.exists() else []
    return p, ran


def summary(p) -> str:
    return p.stdout.strip().splitlines()[-1]


def test_hit_when_unchanged_miss_when_an_input_changes_and_failures_rerun(project):
    (project / "vectors.txt").write_text("FAIL\n")
    p, ran = run(project)
    assert p.returncode == 1 and ran == ["harness", "plain", "vectors"], p.stdout
    assert re.search(r"1 failed, 2 passed", summary(p)), summary(p)

    # unchanged: the passed matrix test is cached, the failed one runs (and fails) again, the
    # test outside the matrix always runs; the exit status still says a test failed
    p, ran = run(project)
    assert p.returncode == 1 and ran == ["plain", "vectors"], p.stdout
    assert re.search(r"1 failed, 1 passed, .*1 cached", summary(p)), summary(p)
    assert re.search(r"test_m.py::test_reads_the_harness_matrix CACHED", p.stdout), p.stdout
    assert "result cache: 1 matrix test(s) not run" in p.stdout
    assert "test_reads_the_harness_matrix PASSED" not in p.stdout

    # a vector file fixed: that test runs and passes; then both are cached, exit 0
    (project / "vectors.txt").write_text("00 11 23\n")
    p, ran = run(project)
    assert p.returncode == 0 and ran == ["harness", "plain", "vectors"], p.stdout
    p, ran = run(project)
    assert p.returncode == 0 and ran == ["plain"], p.stdout
    assert re.search(r"1 passed, 2 cached", summary(p)), summary(p)

    # one byte of a harness (not staged: the file on disk counts): all run again
    (project / "harness.c").write_text("int main(void) { return 1; }\n")
    assert run(project)[1] == ["harness", "plain", "vectors"]
    # a compiler flag or tool setting given in the environment (the new files and tool versions:
    # test_the_key_covers_tool_versions_and_the_tree)
    assert run(project, env={"CFLAGS": "-O3"})[1] == ["harness", "plain", "vectors"]
    # --no-result-cache and the environment variable run everything (and the results are still right)
    p, ran = run(project, "--no-result-cache", env={"CFLAGS": "-O3"})
    assert p.returncode == 0 and ran == ["harness", "plain", "vectors"] and "cached" not in summary(p)
    assert run(project, env={"CFLAGS": "-O3", rc.NO_CACHE_ENV: "1"})[1] == ["harness", "plain", "vectors"]


def test_cached_under_xdist(project):
    """With pytest-xdist (make test-matrix runs -n auto) the workers record and skip, and the
    controller counts the cached tests."""
    pytest.importorskip("xdist")
    p, ran = run(project, "-n", "2")
    assert p.returncode == 0 and ran == ["harness", "plain", "vectors"], p.stdout
    p, ran = run(project, "-n", "2")
    assert p.returncode == 0 and ran == ["plain"], p.stdout
    assert re.search(r"1 passed, 2 cached", summary(p)), summary(p)


def test_the_key_covers_tool_versions_and_the_tree(tmp_path, monkeypatch):
    """environment_key itself: a different version of a tool on PATH, another file content, a
    deleted file each give another key; the same inputs the same key."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.c").write_text("int a;\n")
    (root / "b.c").write_text("int b;\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    k0 = rc.environment_key(root, tools=("gcc",))
    assert rc.environment_key(root, tools=("gcc",)) == k0
    # a "gcc" of another version first on PATH
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    fake = bin_ / "gcc"
    fake.write_text("#!/bin/sh\necho 'gcc (fake) 99.1'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    k1 = rc.environment_key(root, tools=("gcc",))
    fake.write_text("#!/bin/sh\necho 'gcc (fake) 99.2'\n")
    k2 = rc.environment_key(root, tools=("gcc",))
    assert len({k0, k1, k2}) == 3
    monkeypatch.setenv("PATH", os.environ["PATH"].split(":", 1)[1])
    assert rc.environment_key(root, tools=("gcc",)) == k0
    (root / "a.c").write_text("int a ;\n")
    k3 = rc.environment_key(root, tools=("gcc",))
    (root / "b.c").unlink()
    k4 = rc.environment_key(root, tools=("gcc",))
    (root / "new.h").write_text("#define X 1\n")      # untracked, not ignored
    k6 = rc.environment_key(root, tools=("gcc",))
    assert len({k0, k3, k4, k6}) == 4
    # an ignored file (a build output) does not count
    (root / ".gitignore").write_text("/build/\n")
    k5 = rc.environment_key(root, tools=("gcc",))
    (root / "build").mkdir()
    (root / "build" / "x.o").write_bytes(b"\0")
    assert rc.environment_key(root, tools=("gcc",)) == k5
