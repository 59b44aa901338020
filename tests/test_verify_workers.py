"""verify's worker processes (verify/workers.py): renders, shape digests and prove rows of a run
run there, beside the threads' builds, with the same results as in process."""
from __future__ import annotations

import io
import os

from test_prove import edit_line
from test_verify_shard import fake  # noqa: F401  (the fixture: checkers that build nothing)
from threefish_gen.cli import _specs
from threefish_gen.gen import targets as registry
from threefish_gen.gen.render import render_variant
from threefish_gen.verify import matrix, sources, workers
from threefish_gen.verify import prove as vprove

C256 = [v for v in registry.variants("all", "c", specs=_specs((256,), ("1.3",))) if v.primitive == "threefish"]


def test_prove_rows_run_in_a_worker_and_fail_there_too(tmp_path, monkeypatch):
    """Inside a pool a prove row's verdict comes from another process: PASS for the render, FAIL
    naming the line for an edited text; the workers are gone after the block."""
    v = C256[0]
    files = render_variant(v)
    name = next(n for n in files if n.endswith(".c"))
    with workers.pool(2, None) as p:
        pids = {pid for pid in p.map(_pid, range(4))}
        assert workers.active() and os.getpid() not in pids
        assert workers.call(_pid, 0) in pids
        good = vprove.check(v, vprove.BUILD, tmp_path)
        assert good.status == "PASS" and good.checks == 4, good
        edited, line = edit_line(files[name], "x0 += x1;", "x0 += x2;")
        monkeypatch.setattr(vprove, "sources", lambda variant, partial=False: {**files, name: edited})
        bad = vprove.check(v, vprove.BUILD, tmp_path)
        assert bad.status == "FAIL" and f"line {line}: x0 += x2;" in bad.detail, bad
    assert not workers.active() and workers.call(_pid, 0) == os.getpid()
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or "zombie" in open(f"/proc/{pid}/status").read().lower()


def _pid(_):
    return os.getpid()


def test_a_run_renders_in_its_workers_and_covers_the_same_rows(tmp_path, fake, monkeypatch):  # noqa: F811
    """A run of two constants versions with a result cache and two jobs: every variant is rendered
    by the workers (none in the run's own process), kept under the cache, and the COVERED rows are
    those of a one-job run, which renders in process."""
    variants = list(registry.variants("all", "c", specs=_specs((256,), ("1.1", "1.3"))))
    assert len(variants) >= matrix.POOL_FROM
    here: list = []
    real = sources.render_variant
    monkeypatch.setattr(sources, "render_variant", lambda v: here.append(v) or real(v))

    def run(jobs, cache):
        return matrix.run(variants, random_count=2, seed=5, jobs=jobs, workdir=tmp_path / f"w{jobs}",
                          report_path=None, stream=io.StringIO(), cache_dir=cache, by_shape=True)
    two = run(2, tmp_path / "cache2")
    assert here == []
    kept = list((tmp_path / "cache2" / "renders").rglob("*.json"))
    assert len(kept) == len(variants)
    one = run(1, tmp_path / "cache1")
    assert len(here) == len(variants)
    covered = sorted((r.variant, r.build, r.detail) for r in two.rows if r.status == "COVERED")
    assert covered and covered == sorted((r.variant, r.build, r.detail) for r in one.rows if r.status == "COVERED")
