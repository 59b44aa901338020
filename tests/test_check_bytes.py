"""`threefish-gen check DIR` tests the user's bytes in every row (issue 25 item 1).

One file of every kind the tool writes (target x primitive x ABI; one size, v1.3, the cheapest
variant of each) is rendered; in the user's copy one rotation count is changed.  Every row of
`check` that runs on the changed copy FAILs (no PASS row), and the clean copy passes.  --thorough
runs only where a kind's thorough rows have their own way to the code (the ct row, the Skein NASM
object, the sanitizer builds of the NASM harness, prove): C and both x86-64 NASM primitives.
That run happens in-process with the renderer replaced by a function that raises, so a row that
rendered instead of building the user's file would end the run with a traceback.  A C file with a
secret-dependent branch (results unchanged) FAILs the ct row and passes the others.

The kinds are checked in two groups, each one `check` run as a user makes it on a folder of many
kinds: group "a" (one file of every target, the Win64 form, the C Skein file, the C# Skein class,
the planted C file) in make test, group "b" (the other Skein files and the C# Threefish class) in
make verify (tests/conftest.py MATRIX)."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# kind -> render options (besides --size 256 --constants 1.3); every target x primitive x ABI
KINDS = {
    "c": ["--target", "c"],
    "c-skein": ["--target", "c", "--primitive", "skein"],
    "c-simd": ["--target", "c-simd", "--isa", "sse2"],
    "c-simd-skein": ["--target", "c-simd", "--isa", "avx2", "--primitive", "skein"],
    "nasm-x64": ["--target", "nasm-x64"],
    "nasm-x64-win64": ["--target", "nasm-x64", "--abi", "win64"],
    "nasm-x64-skein": ["--target", "nasm-x64", "--primitive", "skein"],
    "nasm-x64-win64-skein": ["--target", "nasm-x64", "--abi", "win64", "--primitive", "skein"],
    "nasm-x86": ["--target", "nasm-x86"],
    "nasm-x86-skein": ["--target", "nasm-x86", "--primitive", "skein"],
    "csharp": ["--target", "csharp"],
    "csharp-skein": ["--target", "csharp", "--primitive", "skein"],
}
GROUPS = {"a": ("c", "c-skein", "c-simd", "nasm-x64", "nasm-x64-win64", "nasm-x86", "csharp-skein"),
          "b": ("c-simd-skein", "nasm-x64-skein", "nasm-x64-win64-skein", "nasm-x86-skein", "csharp")}
assert sorted(GROUPS["a"] + GROUPS["b"]) == sorted(KINDS)
# the kinds whose changed copy is checked with --thorough (see the module docstring): the rows that
# had their own way to the code, which that run must have
THOROUGH = {"c": {"ct (memcheck)", "gcc asan+ubsan", "prove"},
            "nasm-x64": {"ct (memcheck)", "nasm elf64 + asan+ubsan", "prove"},
            "nasm-x64-skein": {"gcc asan+ubsan", "prove"}}

# one rotation count, as each printer writes it: NASM GPR rol, the x86 SSE2 shift pair, scalar C,
# SIMD C intrinsics, C#
ROTATIONS = [
    re.compile(r"^(\s+rol \w+, )(\d+)$", re.M),
    re.compile(r"^(\s+psllq xmm\d+, )(\d+)$", re.M),
    re.compile(r"(\(\w+ << )(\d+)(\) \| \(\w+ >> \d+\))"),
    re.compile(r"(_mm\d*_slli_epi64\(\w+, )(\d+)"),
    re.compile(r"(BitOperations\.RotateLeft\(\w+, )(\d+)"),
]
CODE_SUFFIXES = (".asm", ".cs", ".c")      # where the rounds are (a Skein NASM .c is the driver)


def cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "threefish_gen", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env)


def change_one_rotation(text: str) -> str | None:
    """The first rotation count of the file, one less; None when the file has none."""
    found = [m for r in ROTATIONS if (m := r.search(text))]
    if not found:
        return None
    m = min(found, key=lambda m: m.start())
    return text[:m.start(2)] + str(int(m.group(2)) - 1) + text[m.end(2):]


def change_rotation_in(folder: Path) -> str:
    """Change one rotation count in the folder's code file; the file's name."""
    for p in sorted(folder.iterdir(), key=lambda p: (CODE_SUFFIXES.index(p.suffix) if p.suffix in CODE_SUFFIXES
                                                     else 9, p.name)):
        if p.suffix in CODE_SUFFIXES:
            new = change_one_rotation(p.read_text())
            if new is not None:
                p.write_text(new)
                return p.name
    raise AssertionError(f"no rotation count found in {folder}")


def plant_branch(folder: Path) -> None:
    """A key-dependent branch in the C file's encrypt (its results unchanged)."""
    (c,) = folder.glob("*.c")
    text = c.read_text()
    m = re.search(r"^(\s+)k0 = \w*load64\(key\);\n", text, re.M)
    assert m, "no key load in the C file"
    text = text[:m.end()] + f"{m.group(1)}if (k0 & 1)\n{m.group(1)}    tf_planted++;\n" + text[m.end():]
    text = text.replace("#include <string.h>\n", "#include <string.h>\nvolatile int tf_planted;\n", 1)
    c.write_text(text)


def readable(folder: Path) -> str | None:
    """None when check can read the folder's header commands, else why not."""
    from threefish_gen.tools.check_dir import collect
    from threefish_gen.gen.errors import GenError
    try:
        collect(folder)
    except GenError as e:
        return str(e)
    return None


def labels(stdout: str, root: Path) -> dict[str, str]:
    """variant label -> kind (its subfolder), from check's 'check: FILES: LABEL' lines."""
    out = {}
    for ln in stdout.splitlines():
        if ln.startswith("check: ") and f"{root}/" in ln:
            files, label = ln[len("check: "):].rsplit(": ", 1)
            kind = Path(files.split(", ")[0]).relative_to(root).parts[0]
            assert out.setdefault(label, kind) == kind, f"two kinds with the label {label}"
    return out


def rows_by_kind(report: Path, stdout: str, root: Path) -> dict[str, list[dict]]:
    kind_of = labels(stdout, root)
    out: dict = {}
    for r in json.loads(report.read_text())["rows"]:
        out.setdefault(kind_of[r["variant"]], []).append(r)
    return out


@pytest.fixture(scope="module", params=sorted(GROUPS))
def group(request):
    return request.param


@pytest.fixture(scope="module")
def folders(tmp_path_factory, group):
    """The group's kinds: clean/<kind>, fast/<kind> (changed, plain check), thorough/<kind>
    (changed, --thorough) and, with the C file, thorough/planted (a C file with a key-dependent
    branch); kinds check cannot read yet are left out (test_check_reads_every_kind says which)."""
    base = tmp_path_factory.mktemp(f"check-bytes-{group}")
    unreadable = {}
    for kind, args in KINDS.items():
        if kind not in GROUPS[group]:
            continue
        clean = base / "clean" / kind
        p = cli("render", "--size", "256", "--constants", "1.3", "--out", str(clean), *args)
        assert p.returncode == 0, p.stderr
        why = readable(clean)
        if why:
            unreadable[kind] = why
            shutil.move(str(clean), str(base / f"unreadable-{kind}"))
            continue
        changed = base / ("thorough" if kind in THOROUGH else "fast") / kind
        shutil.copytree(clean, changed)
        change_rotation_in(changed)
    if "c" not in GROUPS[group]:
        return base, unreadable
    planted = base / "thorough" / "planted"
    # another option than the changed C file's (rows are told apart by their variant's label)
    p = cli("render", "--size", "256", "--constants", "1.3", "--interleave", "1", "--out", str(planted),
            *KINDS["c"])
    assert p.returncode == 0, p.stderr
    plant_branch(planted)
    return base, unreadable


def plain_check(folders, name: str):
    """`check` (the fast default) run as a user runs it on one of the folders; its rows by kind."""
    base, _ = folders
    report = base / f"{name}.json"
    p = cli("check", str(base / name), "--random", "5", "--seed", "1", "--report", str(report))
    return p, rows_by_kind(report, p.stdout, base / name)


@pytest.fixture(scope="module")
def clean_run(folders):
    return plain_check(folders, "clean")


@pytest.fixture(scope="module")
def fast_run(folders):
    return plain_check(folders, "fast")


@pytest.fixture(scope="module")
def thorough_run(folders):
    """check --thorough, in-process, with every way to render replaced by a function that raises
    while the rows run (collect's note that compares a file with its render comes before)."""
    from click.testing import CliRunner

    from threefish_gen.tools.check_dir import check_cmd
    from threefish_gen.gen.targets import base as targets_base
    from threefish_gen.verify import matrix
    base, _ = folders
    report = base / "thorough.json"
    real_run = matrix.run

    def rendered(*args, **kwargs):
        raise AssertionError("a check row rendered code instead of building the user's file")

    def guarded(*args, **kwargs):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(targets_base.Target, "render", rendered)
            m.setattr(targets_base, "run_passes", rendered)
            return real_run(*args, **kwargs)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(matrix, "run", guarded)
        res = CliRunner().invoke(check_cmd, [str(base / "thorough"), "--thorough", "--random", "5", "--seed", "1",
                                             "--report", str(report)])
    assert isinstance(res.exception, SystemExit), res.output + repr(res.exception)
    return res, rows_by_kind(report, res.output, base / "thorough")


def test_check_reads_every_kind(folders):
    _, unreadable = folders
    assert not unreadable


def test_clean_copies_pass(clean_run, folders, group):
    p, rows = clean_run
    _, unreadable = folders
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr
    assert p.stdout.rstrip().splitlines()[-1].startswith("verify: PASS: every row that ran passed"), p.stdout[-2000:]
    assert set(rows) == set(GROUPS[group]) - set(unreadable)
    for kind, rs in rows.items():
        assert any(r["status"] == "PASS" for r in rs), (kind, rs)
        assert all(r["status"] in ("PASS", "SKIPPED") for r in rs), (kind, rs)


def _every_row_that_runs_fails(kind, rs):
    ran = [r for r in rs if r["status"] != "SKIPPED"]
    assert ran, f"{kind}: no row ran: {rs}"
    assert all(r["status"] == "FAIL" for r in ran), (kind, [(r["build"], r["status"], r["detail"]) for r in ran])


def test_a_changed_rotation_fails_every_fast_row(fast_run, folders, group):
    p, rows = fast_run
    _, unreadable = folders
    assert p.returncode == 1, p.stdout[-4000:] + p.stderr
    last = p.stdout.rstrip().splitlines()[-1]
    assert last.startswith("verify: FAIL:") and last.endswith("(exit status 1)"), last
    assert "NOTHING RAN" not in p.stdout and "nothing passed" not in p.stdout
    assert set(rows) == set(GROUPS[group]) - set(THOROUGH) - set(unreadable)
    for kind, rs in rows.items():
        _every_row_that_runs_fails(kind, rs)


def test_a_changed_rotation_fails_every_thorough_row_and_no_row_renders(thorough_run, group):
    res, rows = thorough_run
    assert res.exit_code == 1, res.output[-4000:]
    mine = {k: v for k, v in THOROUGH.items() if k in GROUPS[group]}
    assert mine and set(rows) == set(mine) | ({"planted"} if "c" in GROUPS[group] else set())
    for kind, needed in mine.items():
        assert needed <= {r["build"] for r in rows[kind] if r["status"] != "SKIPPED"}, rows[kind]
        _every_row_that_runs_fails(kind, rows[kind])


@pytest.mark.parametrize("group", ["a"], indirect=True)     # the group with that file
def test_a_secret_dependent_branch_fails_the_ct_row(thorough_run, group):
    """The planted branch leaves every result right: the harness rows pass (the clean --thorough
    rows of a C file, in check), the ct row FAILs on the user's file."""
    assert "c" in GROUPS[group]
    _, rows = thorough_run
    by_build = {r["build"]: r for r in rows["planted"]}
    assert by_build["ct (memcheck)"]["status"] == "FAIL", by_build["ct (memcheck)"]
    assert "uninitialised" in by_build["ct (memcheck)"]["detail"]
    for build in ("gcc -O2", "clang -O2", "gcc asan+ubsan", "clang asan+ubsan"):
        assert by_build[build]["status"] == "PASS", by_build[build]


@pytest.mark.parametrize("group", ["a"], indirect=True)     # the group with that file
def test_win64_files_run_in_the_fast_default(clean_run, group):
    """A Win64 .asm is run by plain check (ms_abi always; under wine where it is installed), from the file."""
    assert "nasm-x64-win64" in GROUPS[group]
    _, rows = clean_run
    by_build = {r["build"]: r for r in rows["nasm-x64-win64"]}
    assert by_build["win64 ABI via ms_abi"]["status"] == "PASS", by_build
    assert by_build["win64 under wine"]["status"] in ("PASS", "SKIPPED"), by_build
    assert "nasm elf64 + gcc -O2" not in by_build       # the System V form is another file: not rendered


def test_a_missing_header_skips_the_rows_that_need_it(tmp_path):
    """check renders nothing in place of a file the folder lacks: the rows that need the .h are
    SKIPPED with the reason, nothing passes, exit status 4."""
    p = cli("render", "--size", "256", "--constants", "1.3", "--out", str(tmp_path / "src"), *KINDS["nasm-x64"])
    assert p.returncode == 0, p.stderr
    (h,) = (tmp_path / "src").glob("*.h")
    h.unlink()
    p = cli("check", str(tmp_path / "src"), "--random", "2")
    assert p.returncode == 4, p.stdout[-3000:] + p.stderr
    assert "no .h file of this command here" in p.stdout and "SKIPPED" in p.stdout
    assert p.stdout.rstrip().splitlines()[-1].startswith("verify: NOTHING RAN"), p.stdout[-2000:]


def test_no_checker_imports_the_renderer():
    """Structural: the checkers get the text they build from verify/sources.py only."""
    allowed = {"sources.py", "fuzz.py"}          # fuzz renders on purpose (it is no row of check)
    for path in sorted((ROOT / "threefish_gen" / "verify").glob("*.py")):
        if path.name in allowed:
            continue
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert "render_variant" not in names and "run_passes" not in names, path.name
        assert ".render(" not in path.read_text(), path.name
