"""Bounds beside every bench row, and the dispatcher ratio.

Per row: the least c/B the variant could reach on this CPU's ports (ports.py, chosen by
vendor/family/model from /proc/cpuinfo) from what it executes (the target's tools'
``bound_work``, tools/target_tools.py: the described Program's operations, or the SIMD layout's
counts, bounds.py),
and ``x bound`` = measured / bound.  Bulk rows: the throughput bound of a pass of
encrypt_blocks.  Chained rows: one single-block call, the longer of its dependency chain and its
throughput bound.  Rows the model cannot say (peers, C#, lanes NASM, packed single blocks): '-'.
docs/bench.md, "Bounds", has the model, its sources and its assumptions."""
from __future__ import annotations

from threefish_gen.verify.cpu import cpu_identity

from ..target_tools import tools_for
from . import bounds, paired, ports


def this_model() -> ports.PortModel:
    return ports.model_for(*cpu_identity())


def row_bounds(entries, model: ports.PortModel, flags) -> dict:
    """{(row name, bits, mode): (bound c/B, what binds)} for (row name, variant, compiler)
    entries; modes without a bound are left out."""
    out: dict = {}
    for name, v, _ in entries:
        t = tools_for(v.target)
        nb = v.spec.block_bytes
        work = t.bound_work(v, flags)
        if work is not None:
            cycles, what = bounds.throughput_cycles(work, model)
            out[(name, v.spec.bits, "bulk")] = (cycles / (work.blocks * nb), what)
        chain = t.chain_bound(v, model)
        if chain is not None:
            out[(name, v.spec.bits, "chained")] = (chain[0] / nb, chain[1])
    return out


def annotate(results, table: dict) -> None:
    """Set bound, bound_by and x_bound of every result that has a bound."""
    for r in results:
        got = table.get((r.name, r.bits, r.mode))
        if got:
            r.bound, r.bound_by = round(got[0], 3), got[1]
            r.x_bound = round(r.cpb / got[0], 3)


def bound_text(r) -> tuple[str, str]:
    """('1.23', '1.10x') or ('-', '-') for a row."""
    b = getattr(r, "bound", None)
    if b is None:
        return "-", "-"
    return f"{b:.2f}", f"{r.x_bound:.2f}x"


DISPATCH_GOAL = 1.03     # issue 27: dispatcher <= 1.03x the best verified variant


def dispatcher_lines(results, dispatchers: set, goal: float = DISPATCH_GOAL) -> list[str]:
    """Per size and mode, for each dispatcher row (a name in ``dispatchers``):
    'Threefish-512 bulk     dispatcher / best variant = 1.02 (paired: min 0.99, spread 1%;
    goal <= 1.03: met) (best: NAME 1.35) [DISPATCHER ROW 1.38]'.
    best = the fastest generated C-ABI row (least median) of that size and mode that is not a
    dispatcher (rows that failed their check are never timed); the ratio is the median of the
    per-round ratios of the two rows' samples (paired.py), and where the spread of those ratios
    or of either row exceeds the goal's tolerance (3%) the verdict is 'noisy: N% (not judged)',
    never 'met'.  Lines only,
    nothing fails."""
    lines = []
    for bits, mode in sorted({(r.bits, r.mode) for r in results}, key=lambda k: (k[0], k[1] != "bulk")):
        rows = [r for r in results if r.bits == bits and r.mode == mode and r.kind == "variant"]
        disp = sorted((r for r in rows if r.name in dispatchers), key=lambda r: r.name)
        others = [r for r in rows if r.name not in dispatchers]
        if not disp or not others:
            continue
        best = min(others, key=lambda r: r.cpb)
        for d in disp:
            # a goal is never met from a noisy row: the rows' own spreads count, not only the ratio's
            got, how, judged = paired.judged_ratio(d, best, goal)
            lines.append(f"  Threefish-{bits:<5} {mode:<8} dispatcher / best variant = {got.median:.2f} "
                         f"({how}; goal <= {goal:.2f}: {judged}) "
                         f"(best: {best.name} {best.cpb:.2f}) [{d.name} {d.cpb:.2f}]")
    return lines


def dispatcher_names(entries) -> set:
    return {name for name, v, _ in entries if tools_for(v.target).is_dispatcher(v)}
