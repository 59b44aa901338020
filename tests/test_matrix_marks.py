"""The split between make test and make verify (tests/conftest.py MATRIX): every check keeps a
representative case in make test, and every MATRIX entry still marks something."""
import re
import subprocess
import sys
from pathlib import Path

from conftest import MATRIX

ROOT = Path(__file__).resolve().parent.parent


def collected(*args: str) -> set[str]:
    """Node ids pytest collects from tests/ (run in a subprocess: a collection of its own)."""
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", *args, "tests"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 5), p.stdout[-3000:] + p.stderr[-3000:]
    return {ln.strip() for ln in p.stdout.splitlines() if "::" in ln}


def function(node: str) -> str:
    """file::function of a node id (its parameters dropped)."""
    return re.sub(r"\[.*\]$", "", node)


def test_every_matrix_check_keeps_a_case_in_make_test_and_every_entry_marks_one():
    matrix = collected("-m", "matrix")
    rest = collected("-m", "not matrix")
    assert matrix and rest and not matrix & rest
    kept = {function(n) for n in rest}
    lost = sorted({function(n) for n in matrix} - kept)
    assert not lost, f"checks make test no longer runs in any case (only make verify): {lost}"
    marked = {Path(n.split("::")[0]).stem for n in matrix}
    assert set(MATRIX) == marked, f"MATRIX entries that mark nothing: {sorted(set(MATRIX) - marked)}"
