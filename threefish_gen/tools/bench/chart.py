"""``bench``'s chart: cycles/byte of the fastest row of every target beside the peer libraries,
per block size, bulk and chained side by side (PNG and SVG, from the bench JSON).  Needs
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


def write_chart(json_path: Path, stem: Path) -> list[Path] | str:
    """Writes stem.png and stem.svg; returns their paths, or one line saying why not."""
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
    return paths
