"""The bench's paired method (issue 27: a bench that noise cannot fool), on fake samples: the
records of an alternated run (A B A B ...) become per-row samples keyed (pass, round), ratios are
taken per pair, every row shows its spread, a row or ratio whose spread exceeds the goal's
tolerance is marked noisy and never reported as meeting it, and tune ranks by paired ratios.
Nothing is timed."""
from __future__ import annotations

import io
import statistics

import pytest

from threefish_gen.tools import tune
from threefish_gen.tools.bench import paired
from threefish_gen.tools.bench.row_bounds import dispatcher_lines
from threefish_gen.tools.bench.run import (Result, annotate, goals, markdown, merge_passes, parse,
                                           reference_name, table)

REF = reference_name(256)          # the scalar C row every ratio of Threefish-256 is taken against

# A load pattern: common-mode slow-downs that hit every row of a round alike (up to +60%).
LOAD = [1.00, 1.02, 1.60, 1.01, 1.00, 1.35, 1.03, 1.00, 1.50, 1.01, 1.00]
# Per-round jitter of a quiet row: within +-1%.
QUIET = [1.000, 1.004, 0.998, 1.006, 0.995, 1.002, 1.000, 0.997, 1.008, 1.001, 0.999]


def harness_output(rows: dict[str, list[float]], bits: int = 256, mode: str = "bulk") -> str:
    """What harness/bench.c prints for rows timed alternately: SAMPLE records round by round
    (A B A B ...), then ROW records (median, min)."""
    out = ["UNIT\tcpb", "CPU\tFake CPU", "CLOCKSRC\tadd-chain"]
    n = len(next(iter(rows.values())))
    for k in range(n):
        for name, xs in rows.items():
            out.append(f"SAMPLE\t{name}\t{bits}\t{mode}\t{k}\t{xs[k]:.4f}\t3.000")
    for name, xs in rows.items():
        out.append(f"ROW\t{name}\t{bits}\t{mode}\t{statistics.median(xs):.3f}\t{min(xs):.3f}\t3.000")
    out.append("CLOCK\t3.0000")
    return "\n".join(out) + "\n"


def test_quantiles_and_spread():
    assert paired.quantile([1, 2, 3, 4, 5], 0.25) == 2 and paired.quantile([1, 2, 3, 4, 5], 0.75) == 4
    assert paired.quantile([1.0, 2.0], 0.5) == 1.5
    assert paired.spread([10, 10, 10]) == 0 and paired.spread([5.0]) == 0
    assert paired.spread([9, 10, 11, 12, 100]) == pytest.approx((12 - 10) / 11)    # one outlier barely counts
    assert paired.pct(0.034) == "3.4%" and paired.pct(0.18) == "18%"
    assert paired.noisy_text(0.18) == "noisy: 18%" and paired.noisy_text(0.02) == ""


def test_samples_are_keyed_by_pass_and_round_and_pairs_follow_the_rounds():
    a = [2.0 * x for x in LOAD]
    b = [1.0 * x for x in LOAD]
    res, info = parse(harness_output({"A": a, "B": b}), {"A", "B"}, pass_no=1)
    assert info["clocksrc"] == "add-chain"
    ra, rb = res
    assert set(ra.samples) == {(1, k) for k in range(len(LOAD))}
    assert ra.samples[(1, 2)] == pytest.approx(2 * 1.60, abs=1e-4)
    # the pairs are the rounds: A's sample k over B's sample k
    assert paired.pair_ratios(ra.samples, rb.samples) == pytest.approx([2.0] * len(LOAD), rel=1e-3)
    # two passes: keys (0, k) and (1, k) side by side; the median and min of all samples
    res0, info0 = parse(harness_output({"A": a, "B": b}), {"A", "B"}, pass_no=0)
    merged, _ = merge_passes([(res0, info0), (res, info)])
    m = next(r for r in merged if r.name == "A")
    assert len(m.samples) == 2 * len(LOAD) and m.cpb == pytest.approx(statistics.median(a), abs=1e-3)
    assert m.cpb_min == pytest.approx(min(a), abs=1e-3)


def test_paired_ratio_cancels_load_that_hits_both_rows_of_a_round():
    """Two rows 1.5x apart under a load that moves both by up to 60%: each row's spread is
    large, the ratio of their medians depends on which rounds were loaded, the per-round
    ratios are all 1.5 and their spread ~0."""
    a = {(0, k): 1.5 * x * q for k, (x, q) in enumerate(zip(LOAD, QUIET))}
    b = {(0, k): 1.0 * x for k, x in enumerate(LOAD)}
    assert paired.spread(a.values()) > 0.03 and paired.spread(b.values()) > 0.03
    got = paired.ratio(a, b)
    assert got.paired and got.n == len(LOAD)
    assert got.median == pytest.approx(1.5, rel=0.005) and got.spread < 0.01
    assert got.min == pytest.approx(1.5 * min(QUIET), rel=1e-6)
    # not timed together (no common keys): the ratio of the medians, said so
    apart = paired.ratio({(1, k): v for (_, k), v in a.items()}, b, 3.0, 2.0)
    assert not apart.paired and apart.median == 1.5


def _rows(spec: dict[str, list[float]], bits=256, mode="bulk", kinds=None) -> list[Result]:
    res, info = parse(harness_output(spec, bits, mode), set(spec) - set(kinds or ()))
    merged, _ = merge_passes([(res, info)])
    return merged


def test_table_marks_the_noisy_row_and_not_the_quiet_one():
    quiet = [4.0 * q for q in QUIET]                                    # spread < 1%
    noisy = [1.0 * x for x in LOAD]                                     # spread ~ 19%
    rows = _rows({REF: quiet, "c-simd noisy gcc": noisy})
    annotate(rows, {REF: "c", "c-simd noisy gcc": "c-simd"}, {})
    by = {r.name: r for r in rows}
    assert by[REF].spread < 0.01 and by["c-simd noisy gcc"].spread > 0.15
    buf = io.StringIO()
    table(rows, {"fail": [], "cpu": "Fake", "clock": "3.0", "clocksrc": "add-chain", "passes": 1}, buf)
    out = buf.getvalue()
    lines = {ln.split()[0] + " " + ln.split()[1]: ln for ln in out.splitlines() if ln.startswith("  c")}
    assert "noisy:" in lines["c-simd noisy"] and f"noisy: {paired.pct(by['c-simd noisy gcc'].spread)}" in out
    ref_line = next(ln for ln in out.splitlines() if ln.startswith("  " + REF))
    assert "noisy" not in ref_line
    assert "cycles: add-chain clock estimate, 3.0 GHz" in out          # the header says which clock
    md = markdown(rows, {"fail": [], "clocksrc": "add-chain"}, [], [])
    assert "| spread |" in md and "**noisy: " in md
    # ratios come from the pairs: the noisy row runs 0.25x the reference in every round
    assert by["c-simd noisy gcc"].vs_c == pytest.approx(
        statistics.median(n / q for n, q in zip(noisy, quiet)), rel=1e-3)


def test_dispatcher_line_is_judged_only_from_quiet_rows():
    """dispatcher / best = 1.01 in every round.  Quiet rows: 'met'.  The same ratio from rows a
    load moved by 35%: 'noisy: N% (not judged)', never 'met'; 1.10 from quiet rows: NOT met."""
    def line(disp, best):
        rows = _rows({"c-simd auto (dispatcher) gcc": disp, "c-simd avx2 lanes gcc": best})
        return dispatcher_lines(rows, {"c-simd auto (dispatcher) gcc"})[0]
    quiet = [1.0 * q for q in QUIET]
    got = line([1.01 * x for x in quiet], quiet)
    assert "dispatcher / best variant = 1.01 (paired: min 1.01, spread 0.0%; goal <= 1.03: met)" in got
    loaded = [x * q for x, q in zip(LOAD, QUIET)]
    got = line([1.01 * x for x in loaded], loaded)
    assert "= 1.01 (paired" in got and "goal <= 1.03: noisy: " in got and "(not judged)" in got
    assert ": met" not in got
    got = line([1.10 * x for x in quiet], quiet)
    assert "goal <= 1.03: NOT met (by 7%)" in got


def test_a_goal_is_never_met_from_a_noisy_row():
    assert paired.verdict(1.00, 1.03, 0.18, 0.03) == "noisy: 18% (not judged)"
    assert paired.verdict(1.00, 1.03, 0.02, 0.03) == "met"
    assert paired.verdict(1.10, 1.03, 0.02, 0.03) == "NOT met (by 7%)"
    assert paired.judged_spread(0.01, None, 0.2) == 0.2
    # NASM's goals (docs/nasm.md) beside the figures: noisy rows are not judged
    ref = reference_name(1024)
    quiet = [6.0 * q for q in QUIET]
    for nasm, want in (([5.0 * q for q in QUIET], "met"), ([5.0 * x for x in LOAD], "noisy: ")):
        rows = _rows({ref: quiet, "nasm-x64 gpr belady": nasm}, bits=1024)
        annotate(rows, {ref: "c", "nasm-x64 gpr belady": "nasm-x64"}, {})
        got = [ln for ln in goals(rows) if "1024 bulk <= 5.5" in ln][0]
        assert want in got and (want == "met" or " met" not in got.replace("not judged", ""))


def test_tune_ranks_by_paired_ratios_and_marks_a_toss_up():
    """The round with the load hits the candidates' samples of that round alike: ranked by
    per-round ratios, B (0.97x A in every round) wins although its median sample is A's."""
    a = {(0, k): 2.0 * x for k, x in enumerate(LOAD)}
    b = {(0, k): 2.0 * 0.97 * x * q for k, (x, q) in enumerate(zip(LOAD, QUIET))}
    c = {(0, k): 2.0 * 1.20 * x for k, x in enumerate(LOAD)}
    ranked = paired.rank({"A": a, "B": b, "C": c})
    assert [n for n, _ in ranked] == ["B", "A", "C"]
    assert ranked[0][1] is None and ranked[1][1].median == pytest.approx(1 / 0.97, rel=0.01)
    assert all(vs.median >= 1.0 for _, vs in ranked[1:])
    # a runner-up within its ratio's spread of 1 cannot be told apart
    assert tune.toss_up(paired.Stat(1.01, 0.98, 1.04, 0.03, 9))
    assert not tune.toss_up(paired.Stat(1.10, 1.08, 1.12, 0.01, 9))
    # prune with samples: the paired ratio to the group's best decides, not the medians
    cheap = {"A": 2.0, "B": 2.0 * 0.97, "C": 2.0 * 1.3}
    kept, pruned = tune.prune(cheap, 1.25, samples={"A": a, "B": b, "C": {k: v * 1.3 / 1.2 for k, v in c.items()}})
    assert kept == ["B", "A"] and pruned == ["C"]


def test_tune_choose_uses_the_results_samples():
    def res(name, xs):
        r = Result(name, 512, "bulk", statistics.median(xs), min(xs), 3.0, "variant")
        r.samples = {(0, k): x for k, x in enumerate(xs)}
        r.spread = paired.spread(xs)
        return r
    timed = {"[t0] x": res("[t0] x", [1.0 * x for x in LOAD]), "[t1] y": res("[t1] y", [0.95 * x for x in LOAD])}
    ranked = tune.choose(timed)
    assert ranked[0] == ("[t1] y", None) and ranked[1][1].median == pytest.approx(1 / 0.95)


def _dotnet_output(rows: dict[str, list[float]], bits: int = 256, mode: str = "bulk", ghz: float = 3.0) -> str:
    """What tools/bench/harness/dotnet/Bench.cs prints for classes timed alternately: per class a
    ROW line (median ns/B, GHz, kernel), then its SAMPLE lines (round, c/B, ns/B)."""
    out = []
    for name, ns in rows.items():
        out.append(f"ROW TfBench.{name} {bits} {mode} {statistics.median(ns):.4f} {ghz:.3f} vector256-lanes")
        out += [f"SAMPLE TfBench.{name} {bits} {mode} {k} {x * ghz:.4f} {x:.5f}" for k, x in enumerate(ns)]
    return "\n".join(out) + "\n"


def test_csharp_compact_candidate_gets_its_paired_ratio_to_the_recommended_class():
    """The C# bench (tools/bench/dotnet.py) times the compact candidate (the other --unroll) beside
    the recommended lanes class, round by round: its ratio is the median of per-round ns/B ratios
    (1.02 exactly here, whatever the common load), quiet; a candidate whose per-round ratio jumps
    around is marked noisy."""
    from threefish_gen.tools.bench import dotnet
    base = [0.8 * x * q for x, q in zip(LOAD, QUIET)]
    loop = [1.02 * b for b in base]
    rows = dotnet._parse(_dotnet_output({"Lanes256V13": base, "LanesLoop256V13": loop}), "C#")
    dotnet.compact_ratios(rows)
    by = {r["name"]: r for r in rows}
    got = by["C# LanesLoop256V13 [vector256-lanes]"]["vs_recommended"]
    assert got["ratio"] == pytest.approx(1.02, abs=1e-3) and got["paired"] and got["spread"] < 0.001
    assert got["against"] == "C# Lanes256V13 [vector256-lanes]"
    assert "vs_recommended" not in by["C# Lanes256V13 [vector256-lanes]"]
    # the rows' own spread (the load) is in the judged spread: noisy, not judged
    assert got["noisy"] and got["judged_spread"] > 0.03
    quiet = [0.8 * q for q in QUIET]
    jumpy = [0.8 * q * f for q, f in zip(QUIET, [1.0, 1.2, 0.9, 1.1, 1.0, 0.85, 1.15, 1.0, 0.9, 1.2, 1.0])]
    rows = dotnet._parse(_dotnet_output({"Lanes512V13": quiet, "LanesFull512V13": [1.01 * q for q in quiet],
                                         "LanesLoop512V13": jumpy}, bits=512), "C#")
    dotnet.compact_ratios(rows)
    by = {r["name"]: r for r in rows}
    full = by["C# LanesFull512V13 [vector256-lanes]"]["vs_recommended"]
    assert full["ratio"] == pytest.approx(1.01, abs=1e-3) and not full["noisy"]
    assert by["C# LanesLoop512V13 [vector256-lanes]"]["vs_recommended"]["noisy"]
