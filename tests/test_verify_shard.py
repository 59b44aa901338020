"""verify --shard / --merge and the result cache (verify/shard.py): the shards partition the
matrix and balance, the merged report is the unsharded one, merge refuses what is not one run,
the cache reuses exactly the unchanged PASS rows.  The checkers are replaced by a fake (no build):
what is tested is the driver.  The CI files' commands run for real on a tiny slice
(test_ci_files_run_their_commands)."""
from __future__ import annotations

import dataclasses
import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from threefish_gen.cli import _specs
from threefish_gen.gen import targets as registry
from threefish_gen.verify import matrix, shard, sources
from threefish_gen.verify.runner import Row

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = list(registry.variants("all", "c", specs=_specs((256,), ("1.3",))))


def rows_of(variants):
    return [(v.label(), b.name) for v in variants for b in matrix.builds_of(v) if b is not matrix.vprove.BUILD]


@pytest.fixture
def fake(monkeypatch):
    """Every checker replaced by one that passes (or fails the rows named in ``fail``) and records
    the rows it ran."""
    ran: list = []
    fail: set = set()

    def check(v, b, wd, vectors):
        ran.append((v.label(), b.name))
        if (v.label(), b.name) in fail:
            return Row(v.label(), b.name, "FAIL", "fake failure", 0.0, 1)
        return Row(v.label(), b.name, "PASS", "1 checks", 0.0, 1)

    def vectors(spec, path, count, seed, what="threefish"):     # the reference model's files take seconds
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{what} {spec.tag} {count} {seed}\n")
        return path

    def skein_vectors(spec, path, count, seed):
        return vectors(spec, path, count, seed, "skein")

    monkeypatch.setattr(matrix, "vector_file", vectors)
    monkeypatch.setitem(matrix.VECTOR_NAMES, skein_vectors, "skein-")
    for kind, checker in list(matrix.CHECKERS.items()):
        monkeypatch.setitem(matrix.CHECKERS, kind, checker._replace(
            check=check, vectors=checker.vectors and skein_vectors))
    monkeypatch.setattr(matrix.ct, "check", check)
    check.ran, check.fail = ran, fail
    return check


def run(tmp_path, name, **kw):
    kw.setdefault("seed", 5)
    rep = matrix.run(VARIANTS, random_count=2, jobs=1, workdir=tmp_path / "w",
                     report_path=tmp_path / f"{name}.json", stream=io.StringIO(), **kw)
    return rep, json.loads((tmp_path / f"{name}.json").read_text())


def test_shards_partition_the_matrix_and_balance():
    rows = rows_of(VARIANTS)
    n = 4
    split = shard.partition(rows, n)
    assert split == shard.partition(list(rows), n)          # a pure function: every runner agrees
    assert sorted(set(split)) == list(range(n))             # every row in exactly one shard, none empty
    costs = [shard.cost(*r) for r in rows]
    load = [sum(c for c, s in zip(costs, split) if s == k) for k in range(n)]
    # the LPT bound: no shard past an even share plus the costliest row; the goal (<= 1/3)
    assert max(load) <= sum(costs) / n + max(costs)
    assert max(load) <= sum(costs) / 3
    with pytest.raises(ValueError):
        shard.parse_shard("5/4")
    assert shard.parse_shard("2/4") == (2, 4)


def test_merged_shards_equal_the_unsharded_report(tmp_path, fake):
    whole, whole_json = run(tmp_path, "whole")
    paths = []
    for k in range(1, 5):
        run(tmp_path, f"s{k}", shard=(k, 4))
        paths.append(tmp_path / f"s{k}.json")
    assert sorted(fake.ran[len(whole.rows):]) == sorted(fake.ran[:len(whole.rows)])   # each row once more
    out = io.StringIO()
    assert matrix.merge_reports(paths, tmp_path / "merged.json", tmp_path / "merged.xml", out) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["rows"] == whole_json["rows"]
    assert (merged["seed"], merged["matrix"]) == (whole_json["seed"], whole_json["matrix"])
    assert out.getvalue().rstrip().endswith("(exit status 0)")
    assert (tmp_path / "merged.xml").read_text().count("<testcase") == len(whole.rows)
    # a FAIL in one shard fails the merged verdict
    data = json.loads(paths[2].read_text())
    data["rows"][0]["status"] = "FAIL"
    paths[2].write_text(json.dumps(data))
    assert matrix.merge_reports(paths, None, None, io.StringIO()) == 1


def test_merge_refuses_what_is_not_one_run(tmp_path, fake):
    for k in range(1, 5):
        run(tmp_path, f"s{k}", shard=(k, 4))
    run(tmp_path, "other", shard=(4, 4), seed=6)
    p = [tmp_path / f"s{k}.json" for k in range(1, 5)]

    def refused(paths, words):
        out = io.StringIO()
        assert matrix.merge_reports(paths, None, None, out) == 2
        line = out.getvalue().strip()
        assert "\n" not in line and words in line, line

    refused(p[:3], "4/4 missing")
    refused(p + [p[1]], "2/4 given more than once")
    refused(p[:3] + [tmp_path / "other.json"], "different runs (seed")
    run(tmp_path, "unsharded")
    refused([tmp_path / "unsharded.json"], "without a shard")


def test_shard_options_are_checked(tmp_path):
    from click.testing import CliRunner
    from threefish_gen.cli import cli
    for args, words in ((["--shard", "2/4"], "--shard needs --seed"), (["--shard", "5/4", "--seed", "1"], "K must be"),
                        ([str(tmp_path / "x.json")], "go with --merge")):
        (tmp_path / "x.json").write_text("{}")
        r = CliRunner().invoke(cli, ["verify", *args])
        assert r.exit_code == 2 and words in r.output, r.output


def test_cache_reuses_unchanged_rows_only(tmp_path, fake, monkeypatch):
    cache = tmp_path / "cache"
    first, _ = run(tmp_path, "a", cache_dir=cache)
    n = len(first.rows)
    assert len(fake.ran) == n and first.cached == 0
    fake.ran.clear()
    second, js = run(tmp_path, "b", cache_dir=cache)
    assert fake.ran == [] and second.cached == n == js["cached"]
    assert [(r.variant, r.build, r.status) for r in second.rows] == [(r.variant, r.build, r.status) for r in first.rows]
    # another seed: other vectors, nothing reused
    fake.ran.clear()
    run(tmp_path, "c", cache_dir=cache, seed=6)
    assert len(fake.ran) == n
    # --no-cache: every row runs
    fake.ran.clear()
    run(tmp_path, "d", cache_dir=None)
    assert len(fake.ran) == n
    # one variant's text changes: exactly its rows run again
    target = VARIANTS[3]
    real = sources.sources
    monkeypatch.setattr(sources, "sources", lambda v, partial=False: (
        {k: t + "\n/* edited */\n" for k, t in real(v, partial).items()} if v == target else real(v, partial)))
    fake.ran.clear()
    run(tmp_path, "e", cache_dir=cache)
    assert sorted(fake.ran) == sorted(r for r in rows_of(VARIANTS) if r[0] == target.label())
    monkeypatch.setattr(sources, "sources", real)
    # one build's flags change: exactly that build's rows run again
    builds = matrix.CHECKERS["c"].builds

    def changed(t, v):
        return tuple(dataclasses.replace(b, cflags=b.cflags + ("-DEDITED",)) if b.name == "clang -O2" else b
                     for b in builds(t, v))
    monkeypatch.setitem(matrix.CHECKERS, "c", matrix.CHECKERS["c"]._replace(builds=changed))
    fake.ran.clear()
    run(tmp_path, "f", cache_dir=cache)
    assert fake.ran and sorted(fake.ran) == sorted(
        (v.label(), "clang -O2") for v in VARIANTS if matrix.kind_of(v) == "c")


def test_renders_and_vector_files_are_kept_between_runs(tmp_path, fake, monkeypatch):
    """With a result cache an unchanged re-run renders nothing and makes no vector file (both are
    kept under the cache, keyed by the package's code, verify/shard.py code_version); within a run
    a variant is rendered once for all its rows; another seed makes the vector files again, a
    THREEFISH_GEN_* variable or a change to the package renders again -- and a render that comes
    out the same text still reuses the rows."""
    made: list = []
    make = matrix.vector_file               # the fake's

    def counting(spec, path, count, seed):
        made.append((spec.tag, seed))
        return make(spec, path, count, seed)
    monkeypatch.setattr(matrix, "vector_file", counting)
    rendered: list = []
    real = sources.render_variant
    monkeypatch.setattr(sources, "render_variant", lambda v: rendered.append(v) or real(v))
    cache = tmp_path / "cache"
    first, _ = run(tmp_path, "a", cache_dir=cache)
    n = len(first.rows)
    assert made == [("256_v13", 5)] and sorted(map(repr, rendered)) == sorted(map(repr, VARIANTS))
    vector_text = (tmp_path / "w" / "vectors" / "256_v13.txt").read_text()
    (tmp_path / "w" / "vectors" / "256_v13.txt").unlink()
    made.clear(), rendered.clear()
    second, _ = run(tmp_path, "b", cache_dir=cache)
    assert made == [] and rendered == [] and second.cached == n
    assert (tmp_path / "w" / "vectors" / "256_v13.txt").read_text() == vector_text
    # another seed: new vectors (and rows), the renders kept
    third, _ = run(tmp_path, "c", cache_dir=cache, seed=6)
    assert made == [("256_v13", 6)] and rendered == [] and third.cached == 0
    # the package's code changed (a printer edited, say) or a generator switch set: everything is
    # made again; the texts came out the same, so the rows are still reused
    made.clear()
    monkeypatch.setattr(shard, "_package_files", lambda: "edited")
    fourth, _ = run(tmp_path, "d", cache_dir=cache)
    assert made == [("256_v13", 5)] and len(rendered) == len(VARIANTS) and fourth.cached == n
    made.clear(), rendered.clear()
    monkeypatch.setenv("THREEFISH_GEN_CORRUPT_ALLOC", "")
    run(tmp_path, "e", cache_dir=cache)
    assert made and len(rendered) == len(VARIANTS)
    # without a cache: the vectors made every run (and nothing rendered: no key, and the fake
    # checkers build nothing)
    made.clear(), rendered.clear()
    run(tmp_path, "f", cache_dir=None)
    assert made == [("256_v13", 5)] and rendered == []


def test_code_version_covers_every_package_file(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "kat").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "kat" / "t.kat").write_text("00\n")
    monkeypatch.setattr(shard, "PACKAGE", pkg)
    files = shard._package_files.__wrapped__
    k0 = files()
    (pkg / "kat" / "t.kat").write_text("01\n")
    k1 = files()
    (pkg / "b.tmpl").write_text("")
    k2 = files()
    assert len({k0, k1, k2}) == 3


def test_failures_are_never_cached(tmp_path, fake):
    cache = tmp_path / "cache"
    bad = rows_of(VARIANTS)[1]
    fake.fail.add(bad)
    run(tmp_path, "a", cache_dir=cache)
    fake.ran.clear()
    rep, _ = run(tmp_path, "b", cache_dir=cache)
    assert fake.ran == [bad] and rep.exit_status() == 1



def test_a_checker_that_raises_fails_its_row_and_the_run_goes_on(tmp_path, fake):
    """An error inside one row (a checker's bug, a render the checker did not expect) is that row's
    FAIL with the error named; every other row still runs and the run ends with its verdict."""
    bad = rows_of(VARIANTS)[2]
    real = matrix.CHECKERS["c"].check

    def raising(v, b, wd, vectors):
        if (v.label(), b.name) == bad:
            raise ValueError("planted checker error")
        return real(v, b, wd, vectors)
    matrix.CHECKERS["c"] = matrix.CHECKERS["c"]._replace(check=raising)     # restored by the fake's monkeypatch
    rep, js = run(tmp_path, "a")
    by_row = {(r.variant, r.build): r for r in rep.rows}
    assert by_row[bad].status == "FAIL" and "planted checker error" in by_row[bad].detail
    assert len(fake.ran) == len(rows_of(VARIANTS)) - 1
    assert rep.exit_status() == 1 and sum(r["status"] == "FAIL" for r in js["rows"]) == 1


def test_the_tools_a_checker_or_build_declares_key_its_rows(tmp_path, monkeypatch):
    """A row's cache key names the tools its checker's module declares (``Checker.tools`` in
    verify/matrix.py: a new checker adds no line to verify/shard.py) and those a build declares
    (verify/ct.py): another version of one of them is another key."""
    from threefish_gen.verify import ct, rust
    vectors = tmp_path / "v.txt"
    vectors.write_text("x\n")
    for kind, build, tool in (("cargo", rust.RUNS[0], "rustc"), ("nasm", ct.BUILD, "wine"), ("c", ct.BUILD, "valgrind"),
                              ("cargo", rust.RUNS[0], "@cargo-registry"), ("simde", ct.BUILD, "@simde-headers")):
        assert tool in shard.tools_of(build, matrix.CHECKERS[kind].tools)
        before = shard.row_key(kind, build, [], vectors, set(), matrix.CHECKERS[kind].tools)
        monkeypatch.setitem(shard._VERSIONS, tool, "another version")
        assert shard.row_key(kind, build, [], vectors, set(), matrix.CHECKERS[kind].tools) != before, (kind, tool)


def test_a_folder_a_checker_reads_keys_its_rows(tmp_path, monkeypatch):
    """The SIMDe headers and the crate registry are keyed by their files' content: one byte of
    one header is another digest (so another key for the rows that list it)."""
    root = tmp_path / "simde"
    (root / "x86").mkdir(parents=True)
    (root / "x86" / "avx512.h").write_text("#define X 1\n")
    (root / "simde-common.h").write_text("#define V 0\n")
    d0 = shard.tree_digest(root)
    assert shard.tree_digest(root) == d0 and shard.tree_digest(tmp_path / "none") == "absent"
    (root / "x86" / "avx512.h").write_text("#define X 2\n")
    d1 = shard.tree_digest(root)
    (root / "x86" / "new.h").write_text("")
    assert len({d0, d1, shard.tree_digest(root)}) == 3
    monkeypatch.setitem(shard.TREES, "@simde-headers", root)
    monkeypatch.delitem(shard._VERSIONS, "@simde-headers", raising=False)
    assert shard.tool_version("@simde-headers") == f"{root}: {shard.tree_digest(root)}"


@pytest.mark.parametrize("isa", ["sse2", "avx2", "avx512"])
def test_cache_key_of_a_system_v_only_nasm_variant(isa, tmp_path):
    """The cache key of every row of a nasm-x64 variant that has no Win64 form (--isa sse2, avx2,
    avx512: System V only) is made without asking for that form (which render refuses): the full
    matrix once stopped there with a one-line error after 2,151 rows."""
    from threefish_gen.verify import nasm
    vs = [x for x in registry.variants("all", "nasm-x64", specs=_specs((256,), ("1.3",)))
          if x.get("isa") == isa and x.get("layout", "scalar") == "scalar"]
    assert vs                         # sse2: the unrolled and the --unroll loop variant
    vectors = tmp_path / "v.txt"
    vectors.write_text("x\n")
    for v in vs:
        assert nasm.win64_form(v) is None
        keys = {matrix._row_key(v, b, vectors) for b in matrix.builds_of(v)}
        assert len(keys) == len(matrix.builds_of(v))
    gpr = next(x for x in registry.variants("all", "nasm-x64", specs=_specs((256,), ("1.3",)))
               if x.get("isa", "gpr") == "gpr" and x.get("abi") == "sysv")
    assert nasm.win64_form(gpr).get("abi") == "win64"


# ----------------------------------------------------------------------------------- CI files

GITHUB = ROOT / ".github" / "workflows" / "verify.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-verify.yml"
# one variant (the Threefish C file: its 8 rows, prove and ct among them); the Skein rows' report
# and cache paths are the same code (the shard/merge unit tests above run on every target's rows)
SLICE = "--target c --size 256 --constants 1.3 --primitive threefish --random 20 --jobs 1"


def _load(path):
    try:
        import yaml
    except ImportError:
        pytest.skip("PyYAML not installed")
    return yaml.safe_load(path.read_text())


def _commands(path) -> list[str]:
    """The `threefish_gen verify` commands of a CI file's run steps / scripts, as written."""
    data = _load(path)
    found = []
    for job in data.get("jobs", data).values():
        if not isinstance(job, dict):
            continue
        lines = [s.get("run", "") for s in job.get("steps", [])] + list(job.get("script", []))
        found += [ln.strip() for text in lines for ln in text.splitlines() if "threefish_gen verify" in ln]
    return found


def test_ci_files_are_valid():
    gh = _load(GITHUB)
    jobs = gh["jobs"]
    assert jobs["shard"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert "shard" in jobs["merge"]["needs"]
    steps = " ".join(str(s.get("run", "")) + str(s.get("uses", "")) for s in jobs["shard"]["steps"])
    assert "--shard ${{ matrix.shard }}/4" in steps and "actions/upload-artifact" in steps
    merge = " ".join(str(s.get("run", "")) + str(s.get("uses", "")) for s in jobs["merge"]["steps"])
    assert "--merge" in merge and "actions/download-artifact" in merge
    gl = _load(GITLAB)
    assert gl["verify-shard"]["parallel"] == 4 and "$CI_NODE_INDEX/$CI_NODE_TOTAL" in " ".join(gl["verify-shard"]["script"])
    assert gl["verify-merge"]["needs"] == ["verify-shard"] and "--merge" in " ".join(gl["verify-merge"]["script"])
    assert "gitlab-verify.yml" in (ROOT / "docs" / "integrations.md").read_text()


def test_ci_files_run_their_commands(tmp_path):
    """The shard and merge commands of both files, as written, on a tiny slice: the CI variables
    filled in, VERIFY_ARGS (the set and vector count) replaced by the slice.  One result cache for
    both: the second file's shards (same seed, same rows) come from it, which checks the cache on
    real rows too."""
    for path in (GITHUB, GITLAB):
        shard_cmd, merge_cmd = _commands(path)
        out = tmp_path / path.stem
        (out / "build").mkdir(parents=True)
        (out / "build" / ".python").write_text(sys.executable + "\n")     # what `make setup` records
        for k in range(1, 5):
            cmd = shard_cmd.replace("${{ matrix.shard }}", str(k)) + f" --workdir {shlex.quote(str(out / 'w'))}" \
                f" --cache-dir {shlex.quote(str(tmp_path / 'cache'))}"
            assert _sh(cmd, out, CI_NODE_INDEX=str(k), CI_NODE_TOTAL="4") == 0, cmd
            assert (out / "reports" / f"verify-shard-{k}.xml").exists()
        assert _sh(merge_cmd, out) == 0, merge_cmd
        merged = json.loads((out / "verify-report.json").read_text())
        assert len(merged["rows"]) == merged["matrix_rows"] and merged["seed"] == 1234
        assert (out / "verify-junit.xml").exists()
        if path == GITLAB:
            passed = sum(r["status"].startswith("PASS") for r in merged["rows"])
            assert passed and merged["cached"] == passed == sum(r["cached"] for r in merged["rows"])


def _sh(cmd: str, cwd: Path, **env) -> int:
    env = dict(os.environ, VERIFY_ARGS=SLICE, VERIFY_SEED="1234", PYTHONPATH=str(ROOT), **env)
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env).returncode


def test_the_wine_prefix_is_made_once_by_concurrent_rows(tmp_path, monkeypatch):
    """Rows that run wine at the same time on a machine without a prefix: one makes it (wineboot)
    while the others wait for the lock, then all use it; a later process (the marker is there)
    makes nothing.  Two wine processes that both made it once failed a row ("could not load
    kernel32.dll")."""
    import threading
    import time

    from threefish_gen.verify import nasm
    prefix = tmp_path / "cache" / "wine"
    monkeypatch.setenv("THREEFISH_GEN_WINEPREFIX", str(prefix))
    monkeypatch.setattr(nasm, "_WINE_PREFIXES", set())
    made = []

    def wineboot(argv, workdir, env=None, **kw):
        assert argv[1:] == ["wineboot", "--init"] and env["WINEPREFIX"] == str(prefix)
        made.append(1)
        time.sleep(0.3)                      # the others arrive while it runs
        (prefix / "drive_c").mkdir(parents=True)
        return True, "", 0
    monkeypatch.setattr(nasm, "run_harness", wineboot)
    monkeypatch.setattr(nasm, "wine", lambda: "wine64")
    results = []
    threads = [threading.Thread(target=lambda: results.append(nasm.wine_env(tmp_path))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == [1] and [why for _, why in results] == [""] * 4
    assert all(env["WINEPREFIX"] == str(prefix) for env, _ in results)
    monkeypatch.setattr(nasm, "_WINE_PREFIXES", set())        # another process: the marker says ready
    assert nasm.wine_env(tmp_path)[1] == "" and made == [1]
    # a prefix wine could not make: the row says why, and the next row tries again
    other = tmp_path / "other" / "wine"
    monkeypatch.setenv("THREEFISH_GEN_WINEPREFIX", str(other))
    monkeypatch.setattr(nasm, "run_harness", lambda argv, wd, env=None, **kw: (False, "wine: broken", 0))
    _, why = nasm.wine_env(tmp_path)
    assert "could not make its prefix" in why and "wine: broken" in why
    assert other not in nasm._WINE_PREFIXES


# --------------------------------------------------------------------------- rows once per code shape

def test_shape_digest_masks_only_numbers_and_version_tags():
    from threefish_gen.verify import shapes
    a = {"tf256_v13_c.c": "/* v1.3 */ x1 = (x1 << 14) | (x1 >> 50); k4 = UINT64_C(0x1bd11bdaa9fc1a22); TF256_V13_X"}
    b = {"tf256_v11_c.c": "/* v1.1 */ x1 = (x1 << 5) | (x1 >> 59); k4 = UINT64_C(0x5555555555555555); TF256_V11_X"}
    assert shapes.shape_digest(a) == shapes.shape_digest(b)
    for other in ("x1 = _mm_shuffle_epi8(x1, r8);", "x1 = (x1 << 5) & (x1 >> 59);"):      # another instruction
        assert shapes.shape_digest(a) != shapes.shape_digest({"tf256_v11_c.c": other})
    # a literal's type is shape: 14u32 and 14u64 differ, 14u32 and 5u32 do not
    assert shapes.shape_digest({"a.rs": "x.rotate_left(14u32)"}) == shapes.shape_digest({"a.rs": "x.rotate_left(5u32)"})
    assert shapes.shape_digest({"a.rs": "x.rotate_left(14u32)"}) != shapes.shape_digest({"a.rs": "x.rotate_left(14u64)"})
    # a number inside a name is part of the name
    assert shapes.shape_digest({"a.c": "x13 = x1;"}) != shapes.shape_digest({"a.c": "x12 = x1;"})
    assert shapes.rotations_in_range()


def test_covered_rows_are_the_per_shape_rows_of_same_shaped_older_versions():
    """On real renders: scalar C's older versions are the newest's code but for their numbers
    (their sanitizer and ct rows are covered, their functional rows and prove are not); the v1.1
    SSE2 lanes kernel, whose rotates by multiples of 8 are byte shuffles, is not."""
    from threefish_gen.gen.render import render_variant
    from threefish_gen.verify import shapes
    specs = _specs((256,), ())
    c = [v for v in registry.variants("all", "c", specs=specs) if v.label().endswith("fly/full/i1") and v.primitive == "threefish"]
    simd = [v for v in registry.variants("all", "c-simd", specs=specs)
            if v.label().startswith("c-simd sse2 lanes") and v.label().endswith("fly/full/i1")]
    assert len(c) == len(simd) == 3
    tasks = [(v, b) for v in c + simd for b in matrix.builds_of(v)]
    cov = shapes.covered_by(tasks, lambda v: shapes.shape_digest(render_variant(v)))
    got = sorted((tasks[i][0].label(), tasks[i][1].name, rep.label()) for i, (rep, b) in cov.items())
    # v1.2 has v1.3's rotation counts (v1.3 changed only the parity constant): the SSE2 kernels of
    # v1.2 and v1.3 are one shape; v1.1 rotates by other counts, some by a multiple of 8
    want = sorted((v.label(), b.name, vs[-1].label()) for vs in (c, simd) for v in vs[:2] for b in matrix.builds_of(v)
                  if shapes.per_shape(b.name) and (vs is c or v.spec.version == "1.2"))
    assert {b for _, b, _ in want} == {"gcc asan+ubsan", "clang asan+ubsan", "ct (memcheck)", "clang simde"}
    assert got == want
    assert [v.spec.version for v in c] == [v.spec.version for v in simd] == ["1.1", "1.2", "1.3"]


SHAPED = list(registry.variants("all", "c", specs=_specs((256,), ())))


def test_covered_rows_do_not_run_and_the_newest_rows_verdict_is_the_runs(tmp_path, fake):
    def go(name, **kw):
        rep = matrix.run(SHAPED, random_count=2, jobs=1, workdir=tmp_path / "w", seed=5,
                         report_path=tmp_path / f"{name}.json", stream=io.StringIO(), **kw)
        return rep, json.loads((tmp_path / f"{name}.json").read_text())

    rep, js = go("shape", by_shape=True)
    covered = [r for r in rep.rows if r.status == "COVERED"]
    assert covered and not any(" v1.3 " in r.variant for r in covered)
    assert not {(r.variant, r.build) for r in covered} & set(fake.ran)          # not run
    assert len(rep.rows) == len(js["rows"]) == js["matrix_rows"] == len(rows_of(SHAPED))   # every row reported
    assert rep.exit_status() == 0
    every, _ = go("every")
    assert not any(r.status == "COVERED" for r in every.rows) and len(every.rows) == len(rep.rows)
    # the newest version's row is the covered rows' verdict: its FAIL fails the run
    newest = next(r.detail.split(": ", 1)[1].split(" [")[0] for r in covered)
    fake.fail.add((newest, covered[0].build))
    assert go("failed", by_shape=True)[0].exit_status() == 1
    fake.fail.clear()
    # shards of a run with covered rows merge into the unsharded report
    paths = []
    for k in range(1, 5):
        go(f"s{k}", by_shape=True, shard=(k, 4))
        paths.append(tmp_path / f"s{k}.json")
    assert matrix.merge_reports(paths, tmp_path / "merged.json", None, io.StringIO()) == 0
    assert json.loads((tmp_path / "merged.json").read_text())["rows"] == js["rows"]


def test_shape_digests_are_kept_with_the_renders(tmp_path, fake, monkeypatch):
    """The shapes are computed once per variant and kept beside its render: an unchanged re-run
    with covered rows neither renders nor computes a shape; the same rows are covered."""
    rendered: list = []
    real = sources.render_variant
    monkeypatch.setattr(sources, "render_variant", lambda v: rendered.append(v) or real(v))
    from threefish_gen.verify import shapes
    shaped: list = []
    digest = shapes.shape_digest
    monkeypatch.setattr(shapes, "shape_digest", lambda files: shaped.append(1) or digest(files))
    cache = tmp_path / "cache"
    kw = dict(random_count=2, jobs=1, workdir=tmp_path / "w", seed=5, stream=io.StringIO(), by_shape=True,
              cache_dir=cache)
    first = matrix.run(SHAPED, report_path=tmp_path / "a.json", **kw)
    assert len(shaped) == len(SHAPED) and sorted(map(repr, rendered)) == sorted(map(repr, SHAPED))
    rendered.clear(), shaped.clear()
    second = matrix.run(SHAPED, report_path=tmp_path / "b.json", **kw)
    assert rendered == [] and shaped == []
    assert [r.status for r in second.rows] == [r.status for r in first.rows]
    assert second.cached == sum(1 for r in first.rows if r.status == "PASS")


def test_the_cost_table_names_every_build_of_the_matrix():
    """Every build of `make verify`'s matrix has its measured weight (verify/shard.py MEASURED): a
    new build falls back to a guessed pattern weight until the table is fitted again."""
    builds = {b.name for t in registry.names() for v in registry.variants("all", t, specs=_specs((), ()))
              for b in matrix.builds_of(v)}
    assert builds - set(shard.MEASURED) == set()
    assert shard.cost("c-simd auto 1024 v1.3 fly/full/i1", "gcc -O2") == pytest.approx(1.9 * 1.66)
    assert shard.cost("c 256 v1.3 fly/full/i1", "prove") == pytest.approx(0.26 * 0.77)
