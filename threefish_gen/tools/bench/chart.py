"""``bench``'s charts, from the bench JSON, PNG and SVG each: cycles/byte of the fastest row of
every target beside the peer libraries, per block size, bulk and chained side by side
(``STEM.png``); and code size against speed (``STEM-size.png``, issue 30): every generated row
with machine-code bytes (x, log scale) against its bulk c/B (y), one panel per block size, the
code-size/speed frontier (the rows no other row beats on both) joined by a line.  Needs
matplotlib (Debian: python3-matplotlib); without it the bench says so in one line."""
from __future__ import annotations

import json
from pathlib import Path

from threefish_gen.gen import targets as registry

MODES = ("bulk", "chained")


def series(data: dict) -> dict[str, dict[tuple[int, str], float]]:
    """label -> {(bits, mode): cycles/byte}: the best row of each target, each peer as it is."""
    dotnet = [t.name for t in registry.TARGETS.values() if t.recipe.interface == "dotnet"]
    out: dict[str, dict] = {}

    def put(label, bits, mode, cpb):
        if cpb is None or mode not in MODES:
            return
        cell = out.setdefault(label, {})
        cell[(bits, mode)] = min(cpb, cell.get((bits, mode), cpb))

    for r in data.get("results", []):
        put(r["target"] if r["kind"] == "variant" else r["name"], r["bits"], r["mode"], r.get("cpb"))
    for r in data.get("dotnet", []):
        peer = r["name"].startswith("BouncyCastle")
        put(r["name"].split(".")[0] + " (C#)" if peer else (dotnet[0] if dotnet else "C#"), r.get("bits"),
            r.get("mode"), r.get("cpb"))
    return out


def size_points(data: dict) -> dict[int, list[tuple[str, str, int, float]]]:
    """bits -> [(row name, target, code bytes, bulk c/B)] of the rows that have code bytes."""
    out: dict[int, list] = {}
    for r in data.get("results", []):
        if r.get("mode") == "bulk" and r.get("code_bytes") and r.get("cpb") is not None:
            out.setdefault(r["bits"], []).append((r["name"], r.get("target", ""), r["code_bytes"], r["cpb"]))
    return {b: sorted(pts, key=lambda p: (p[2], p[3])) for b, pts in sorted(out.items())}


def frontier(points: list[tuple[str, str, int, float]]) -> list[tuple[str, str, int, float]]:
    """The points no other point beats on both code bytes and c/B (ties: the smaller code),
    by increasing code bytes."""
    out, best = [], float("inf")
    for p in sorted(points, key=lambda p: (p[2], p[3])):
        if p[3] < best:
            out.append(p)
            best = p[3]
    return out


def _short(name: str, target: str) -> str:
    """A point's label: the row name without its target (the legend says it)."""
    return name[len(target) + 1:] if target and name.startswith(target + " ") else name


def write_size_chart(data: dict, stem: Path, plt) -> list[Path]:
    """STEM-size.png and .svg: code bytes vs bulk c/B per row and size; [] without such rows."""
    pts = size_points(data)
    if not pts:
        return []
    targets = sorted({p[1] for ps in pts.values() for p in ps})
    colors = {t: f"C{i}" for i, t in enumerate(targets)}
    fig, axes = plt.subplots(1, len(pts), figsize=(6.5 * len(pts), 5.6), squeeze=False)
    for ax, (bits, ps) in zip(axes[0], pts.items()):
        for t in targets:
            mine = [p for p in ps if p[1] == t]
            if mine:
                ax.scatter([p[2] for p in mine], [p[3] for p in mine], color=colors[t], label=t, s=22, zorder=3)
        for name, t, x, y in ps:
            ax.annotate(_short(name, t), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
        front = frontier(ps)
        ax.plot([p[2] for p in front], [p[3] for p in front], "--", color="#555", lw=1, zorder=2,
                drawstyle="steps-post", label="frontier")
        ax.set_xscale("log")
        ax.margins(x=0.15, y=0.08)        # room for the labels of the outermost points
        ax.set_xlabel("machine code of the row's functions (bytes, log scale)")
        ax.set_ylabel("bulk cycles/byte (lower is faster)")
        ax.set_title(f"Threefish-{bits} bulk: code size vs speed")
        ax.legend(fontsize=7)
    fig.suptitle(f"threefish-gen bench on {data.get('cpu') or 'this CPU'}: code size and speed per row")
    fig.tight_layout()
    out = Path(str(stem) + "-size")
    paths = [out.with_suffix(".png"), out.with_suffix(".svg")]
    for p in paths:
        fig.savefig(p, dpi=120)
    plt.close(fig)
    return paths


def write_chart(json_path: Path, stem: Path) -> list[Path] | str:
    """Writes stem.png and stem.svg, and stem-size.png and stem-size.svg where rows have code
    bytes (:func:`write_size_chart`); returns their paths, or one line saying why not."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "bench: no chart: matplotlib is not installed (Debian: apt-get install python3-matplotlib)"
    data = json.loads(Path(json_path).read_text())
    ser = series(data)
    sizes = sorted({b for cells in ser.values() for b, _ in cells})
    if not ser or not sizes:
        return "bench: no chart: no timed rows"
    fig, axes = plt.subplots(1, len(MODES), figsize=(12, 4.8), sharey=False)
    width = 0.8 / len(ser)
    for ax, mode in zip(axes, MODES):
        for i, (label, cells) in enumerate(sorted(ser.items())):
            xs = [k + (i - (len(ser) - 1) / 2) * width for k, b in enumerate(sizes) if (b, mode) in cells]
            ys = [cells[(b, mode)] for b in sizes if (b, mode) in cells]
            bars = ax.bar(xs, ys, width, label=label)
            ax.bar_label(bars, fmt="%.1f", fontsize=7)
        ax.set_xticks(range(len(sizes)), [f"Threefish-{b}" for b in sizes])
        ax.set_ylabel("cycles/byte (lower is faster)")
        ax.set_title({"bulk": "bulk: encrypt_blocks over 4 KiB",
                      "chained": "chained: single blocks, each the previous output"}[mode])
    axes[0].legend(fontsize=8)
    fig.suptitle(f"threefish-gen bench on {data.get('cpu') or 'this CPU'}: fastest row per target, and the peers")
    fig.tight_layout()
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    for p in paths:
        fig.savefig(p, dpi=120)
    plt.close(fig)
    return paths + write_size_chart(data, stem, plt)
