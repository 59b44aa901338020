"""Statistics of the bench's alternated samples (issue 27: a bench that noise cannot fool).

The timing program (harness/bench.c) takes the samples of all rows of one block size and mode in
rounds: round k times every row once, in the same order (A B A B ... for two rows), so sample k
of row A and sample k of row B ran within one round of each other and saw the same load.  Each
sample is reported as ``SAMPLE name bits mode round cpb``; a pass of the program is one set of
rounds, so a sample's key is ``(pass, round)``.

* A row's figures: ``median`` and ``min`` over all its samples, and its **spread**
  ``(p75 - p25) / median`` (the interquartile range relative to the median; one burst of load
  moves one sample and hardly moves the quartiles).
* A **ratio** of two rows is taken per pair (the two samples with the same key), then the
  median (and min, max, spread) of those per-pair ratios: load that hits both rows of a round
  alike cancels in the pair.
* A row or ratio whose spread exceeds the tolerance of the goal it is judged against (3% for
  ``dispatcher <= 1.03x``) is **noisy**: it is shown as ``noisy: 18%`` and no goal is reported
  met from it.  A goal's verdict takes the largest spread of the rows it compares and of
  their paired ratio (:func:`judged_spread`): pairing makes the ratio more exact, it does not
  turn a noisy row into a quiet one.

Pure functions, no timing; docs/bench.md, "Noise", says how they are used.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

# The tolerance a row is judged against when no goal names it: the tightest goal of issue 27
# (dispatcher <= 1.03x the best variant).
NOISE_LIMIT = 0.03
# A ratio from fewer pairs than this falls back to the ratio of the medians (``paired`` False).
MIN_PAIRS = 3

Samples = dict   # {(pass, round): cpb}


def quantile(xs, q: float) -> float:
    """The q-quantile of xs (linear interpolation between order statistics, numpy's default)."""
    v = sorted(xs)
    if not v:
        raise ValueError("quantile of no samples")
    pos = (len(v) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def spread(xs) -> float:
    """(p75 - p25) / median of xs; 0 for fewer than two values."""
    v = list(xs)
    if len(v) < 2:
        return 0.0
    med = statistics.median(v)
    return (quantile(v, 0.75) - quantile(v, 0.25)) / med if med else 0.0


@dataclass(frozen=True)
class Stat:
    """Median, min, max and spread of a set of values (a row's samples or per-pair ratios)."""

    median: float
    min: float
    max: float
    spread: float
    n: int
    paired: bool = True      # ratios: from per-pair ratios (False: the ratio of two medians)

    def noisy(self, limit: float = NOISE_LIMIT) -> bool:
        return self.spread > limit


def stat(xs, paired: bool = True) -> Stat:
    v = list(xs)
    return Stat(statistics.median(v), min(v), max(v), spread(v), len(v), paired)


def pair_ratios(a: Samples, b: Samples) -> list[float]:
    """a[k] / b[k] for every key both have, in key order (the pairs of an alternated run)."""
    return [a[k] / b[k] for k in sorted(set(a) & set(b)) if b[k]]


def ratio(a: Samples, b: Samples, a_median: float | None = None, b_median: float | None = None) -> Stat | None:
    """The ratio a / b from paired samples; with fewer than MIN_PAIRS pairs (rows timed in
    different runs) the ratio of the medians given, marked ``paired=False`` with the larger
    spread of the two rows; None when neither is possible."""
    rs = pair_ratios(a, b)
    if len(rs) >= MIN_PAIRS:
        return stat(rs)
    if a_median and b_median:
        x = a_median / b_median
        sp = max(spread(a.values()) if a else 0.0, spread(b.values()) if b else 0.0)
        return Stat(x, x, x, sp, 0, False)
    return None


def judged_ratio(a, b, goal: float) -> tuple[Stat, str, str]:
    """The ratio of two bench rows (``samples``, ``cpb``, ``spread``) against a goal: (its Stat,
    how it was taken, the verdict, judged at the goal's tolerance from the largest of the ratio's
    and the rows' own spreads: a goal is never met from a noisy row)."""
    got = ratio(getattr(a, "samples", {}) or {}, getattr(b, "samples", {}) or {}, a.cpb, b.cpb)
    how = (f"paired: min {got.min:.2f}, spread {pct(got.spread)}" if got.paired
           else f"medians (not timed together), spread {pct(got.spread)}")
    return got, how, verdict(got.median, goal, judged_spread(got.spread, a.spread, b.spread), goal - 1)


def judged_spread(*spreads) -> float:
    """The spread a verdict is judged by: the largest of the given ones (None: not known).  A goal
    compares rows; it is judged only when none of them, nor the paired ratio, is noisy."""
    return max((x for x in spreads if x is not None), default=0.0)


def pct(x: float) -> str:
    """A spread as a percentage: '3.4%' below 10%, '18%' above."""
    v = x * 100
    return f"{v:.1f}%" if v < 9.95 else f"{v:.0f}%"


def noisy_text(spread_: float, limit: float = NOISE_LIMIT) -> str:
    """'noisy: 18%' when spread_ exceeds limit, else ''."""
    return f"noisy: {pct(spread_)}" if spread_ > limit else ""


def verdict(value: float, goal: float, spread_: float, limit: float) -> str:
    """'met', 'NOT met (by 4%)' or, when the figure's spread exceeds the goal's tolerance
    ``limit``, 'noisy: 18% (not judged)': a goal is never reported met from a noisy figure."""
    if spread_ > limit:
        return f"{noisy_text(spread_, limit)} (not judged)"
    if value <= goal:
        return "met"
    return f"NOT met (by {(value / goal - 1) * 100:.0f}%)"


def rank(rows: dict[str, Samples], medians: dict[str, float] | None = None) -> list[tuple[str, Stat | None]]:
    """Candidates fastest first by paired ratios: [(name, its ratio to the first)], the first's
    ratio None.  ``tune``'s choice.  The winner starts as the least median sample and is
    replaced while some candidate's median per-round ratio to it is below 1 (at most once per
    candidate: medians of ratios need not be transitive); the others follow by their ratio to
    the winner."""
    if not rows:
        return []
    med = dict(medians or {})
    for n, s in rows.items():
        if n not in med and s:
            med[n] = statistics.median(s.values())
    win = min(rows, key=lambda n: (med.get(n, math.inf), n))
    to_win: dict = {}
    for _ in range(len(rows)):
        to_win = {n: ratio(rows[n], rows[win], med.get(n), med.get(win)) for n in rows if n != win}
        beat = [n for n, r in to_win.items() if r is not None and r.median < 1.0]
        if not beat:
            break
        win = min(beat, key=lambda n: (to_win[n].median, n))
    to_win = {n: ratio(rows[n], rows[win], med.get(n), med.get(win)) for n in rows if n != win}
    order = sorted(to_win, key=lambda n: ((to_win[n].median if to_win[n] else math.inf), n))
    return [(win, None)] + [(n, to_win[n]) for n in order]
