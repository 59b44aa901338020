"""``threefish-gen explore``: register allocation and layout choices as pictures.

One self-contained HTML file (inline SVG and CSS, a few lines of vanilla JS for hovering, no
network).  It reads the pass outputs of ``gen/asm`` -- the lowered MOps, the live intervals of
:func:`gen.asm.liveness.intervals` and the :class:`~gen.asm.ir.Allocation` that
:func:`gen.asm.allocate` returns (checked) -- and, for SIMD layouts, the layout IR of
``gen/layouts``.  Nothing here recomputes liveness or allocation.

Per strategy: a register-pressure chart (live values per register class against the budget,
spill and reload marks, the block loop's boundary), a register timeline (which value sits in
which register, coloured by family k/t/x/pointers/temporaries), the counts, and the description
statement / emitted instruction / allocation side by side, one anchored row per instruction.

Code size (issue 30, tools/codesize.py, as ``make bench`` counts it): source bytes of the rendered
files and machine-code bytes of the variant's functions -- per strategy in the counts of an
assembly page (the object nasm makes), and for other targets in a section of their own: the page's
variant and its ``--unroll loop`` form, each C file compiled once with gcc -O2.
"""
from __future__ import annotations

from importlib.resources import files
import html
import shutil
import subprocess
import tempfile
from pathlib import Path

from threefish_gen.gen import asm as ra
from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.layouts import ir as lir
from threefish_gen.gen.layouts import lanes as llanes
from threefish_gen.gen.layouts import packed as lpacked
from threefish_gen.gen.printers.c_simd import printer as csimd
from threefish_gen.gen.printers import nasm as nasmp
from threefish_gen.gen.render import Variant
from threefish_gen.gen.threefish import Options, describe

from .codesize import CodeSize, code_size, source_bytes

TEMPLATE = files("threefish_gen") / "templates" / "explore" / "report.html"
W, H, PAD = 1000.0, 180.0, 30.0
FAMILY = {"k": "#1f77b4", "t": "#2ca02c", "x": "#d62728", "p": "#9467bd", "tmp": "#8c8c8c"}
KINDS = {lir.Add: "add", lir.Sub: "add", lir.Xor: "xor", lir.Rotl: "shift/rotate", lir.Rotr: "shift/rotate",
         lir.Shuffle: "shuffle", lir.Broadcast: "shuffle", lir.Insert: "shuffle",
         lir.Load: "load/store", lir.Store: "load/store"}


def is_asm(target: str) -> bool:
    return registry.get(target).recipe.language == "nasm"


def family(v: str) -> str:
    if v in ra.POINTERS:
        return "p"
    return v[0] if v[:1] in ("k", "t", "x") and v[1:2].isdigit() else "tmp"


# ------------------------------------------------------------------ reading the pass outputs

def lowered(variant: Variant):
    """(isa, MOps) of encrypt, through the passes the nasm printer uses."""
    t = registry.get(variant.target)
    isa, ops = t.lowered(variant, "encrypt")
    return t.options(variant), isa, ops


def positions(alloc) -> list[int]:
    """MOp position of every AOp: its own ``mop``, else the last one before it."""
    out, cur = [], 0
    for a in alloc.code:
        if a.mop is not None:
            cur = a.mop
        out.append(cur)
    return out


def value_classes(ops, isa, alloc) -> dict[str, str]:
    cls = {v: isa.ptr_class for v in ra.POINTERS}
    for a in alloc.code:
        if a.mop is not None and a.cls and ops[a.mop].writes():
            cls.setdefault(ops[a.mop].writes(), a.cls)
    return cls


def pressure(ops, ivs, cls_of, data_class) -> dict[str, list[int]]:
    """Live values per class at every MOp position (from the liveness pass's intervals)."""
    n = len(ops)
    out: dict[str, list[int]] = {}
    for v, (a, b) in ivs.items():
        c = cls_of.get(v, data_class)
        row = out.setdefault(c, [0] * (n + 1))
        row[max(a, 0)] += 1
        row[b + 1] -= 1
    for c, row in out.items():
        acc = 0
        for i in range(n + 1):
            acc += row[i]
            row[i] = acc
        out[c] = row[:n]
    return out


def occupancy(ops, alloc, pos) -> list[tuple[str, str, int, int]]:
    """(register, value, from, to) segments read off the allocated code."""
    holds: dict[str, tuple[str, int]] = {}
    segs = []
    for a, p in zip(alloc.code, pos):
        if not isinstance(a.dst, ra.Reg):
            continue
        if a.role == "reload" and isinstance(a.src, ra.Slot):
            v = str(a.src.key[-1])
        elif a.mop is not None and ops[a.mop].writes():
            v = ops[a.mop].writes()
        elif a.role == "move" and isinstance(a.src, ra.Reg):
            v = holds.get(a.src.name, ("?", 0))[0]
        else:
            continue
        r = a.dst.name
        if r in holds and holds[r][0] != v:
            segs.append((r, holds[r][0], holds[r][1], p))
        if r not in holds or holds[r][0] != v:
            holds[r] = (v, p)
    end = len(ops)
    segs += [(r, v, p, end) for r, (v, p) in holds.items()]
    return segs


# ------------------------------------------------------------------ pictures

def _x(i: int, n: int) -> float:
    return PAD + (W - 2 * PAD) * i / max(n, 1)


def pressure_svg(st, curves, budgets, marks, loop, n) -> str:
    top = max([1] + [max(c) for c in curves.values()] + list(budgets.values()))
    total = [sum(c[i] for c in curves.values()) for i in range(n)]

    def y(v):
        return H - PAD - (H - 2 * PAD) * v / top
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c"]
    parts = [f'<svg class="pressure" data-strategy="{st}" data-max-live="{max(total) if total else 0}" '
             f'viewBox="0 0 {W:g} {H:g}" width="100%" role="img">',
             f'<rect x="{_x(loop[0], n):.1f}" y="{PAD}" width="{_x(loop[1], n) - _x(loop[0], n):.1f}" '
             f'height="{H - 2 * PAD}" class="loop"><title>block loop: positions {loop[0]}..{loop[1]}</title></rect>']
    for k, (c, row) in enumerate(sorted(curves.items())):
        col = colors[k % 3]
        pts = " ".join(f"{_x(i, n):.1f},{y(v):.1f}" for i, v in enumerate(row))
        parts.append(f'<polyline class="curve" data-class="{c}" data-max="{max(row)}" points="{pts}" '
                     f'stroke="{col}"/>')
        if c in budgets:
            parts.append(f'<line class="budget" x1="{PAD}" x2="{W - PAD}" y1="{y(budgets[c]):.1f}" '
                         f'y2="{y(budgets[c]):.1f}" stroke="{col}"><title>{c} budget {budgets[c]}</title></line>')
            parts.append(f'<text x="{W - PAD - 2}" y="{y(budgets[c]) - 3:.1f}" class="lbl" text-anchor="end">{c} budget '
                         f'{budgets[c]}</text>')
        parts.append(f'<text x="{PAD + 4 + 90 * k}" y="{PAD - 8}" class="lbl" fill="{col}">{c}: max {max(row)} live</text>')
    for role, p, text, idx in marks:
        ya, yb = (H - PAD, H - PAD + 8) if role == "spill" else (H - PAD + 9, H - PAD + 17)
        parts.append(f'<a href="#{st}-{idx}"><line class="mark {role}" x1="{_x(p, n):.1f}" x2="{_x(p, n):.1f}" '
                     f'y1="{ya}" y2="{yb}"><title>{html.escape(text)} (position {p})</title></line></a>')
    parts.append(f'<text x="2" y="{PAD + 4}" class="lbl">{top}</text><text x="2" y="{H - PAD}" class="lbl">0</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def timeline_svg(st, segs, regs, n) -> str:
    rh = 12
    h = rh * len(regs) + 10
    idx = {r: i for i, r in enumerate(regs)}
    parts = [f'<svg class="timeline" viewBox="0 0 {W:g} {h}" width="100%">']
    for r, i in idx.items():
        parts.append(f'<text x="2" y="{i * rh + 10}" class="lbl">{r}</text>')
    for r, v, a, b in segs:
        if r not in idx:
            continue
        x0, x1 = _x(a, n), _x(b, n)
        parts.append(f'<rect x="{x0:.1f}" y="{idx[r] * rh + 1}" width="{max(x1 - x0, 0.5):.1f}" height="{rh - 2}" '
                     f'fill="{FAMILY[family(v)]}"><title>{r}: {html.escape(v)} ({a}..{b})</title></rect>')
    parts.append("</svg>")
    return "\n".join(parts)


# ------------------------------------------------------------------ one strategy

def strategy_section(base: Variant, st: str, bench: bool, work: Path) -> dict:
    v = registry.get(base.target).variant(base.spec, base.options, "", **{**dict(base.extra), "strategy": st})
    no, isa, ops = lowered(v)
    try:
        alloc = ra.allocate(ops, isa, st, no.registers, no.pin)
    except ra.AllocationCheckError:
        raise                       # a wrong allocation is never drawn
    except GenError as e:
        return {"strategy": st, "error": str(e).splitlines()[0]}
    ivs = ra.intervals(ops)
    cls_of = value_classes(ops, isa, alloc)
    curves = pressure(ops, ivs, cls_of, isa.data_class)
    budgets = {c: len(isa.regs[c]) for c in curves if c in isa.regs}
    if no.registers is not None:
        budgets[isa.data_class] = no.registers
    pos = positions(alloc)
    marks = [(a.role, p, a.text, i) for i, (a, p) in enumerate(zip(alloc.code, pos)) if a.role in ("spill", "reload")]
    regs = [r for c in sorted(alloc.used) for r in alloc.used[c]]
    frame = nasmp.Frame(no.abi, alloc, isa)
    rows = []
    for i, (a, p) in enumerate(zip(alloc.code, pos)):
        if a.kind in ("note", "top", "bottom"):
            ins = {"note": "", "top": ".loop:", "bottom": "jnz .loop"}[a.kind]
        else:
            try:
                ins = nasmp.instruction(a, frame, no.rotate)
            except (KeyError, GenError):
                ins = a.kind
        desc = ops[a.mop].text if a.mop is not None else (a.text if a.kind == "note" else "")
        if a.role:
            what = f"{a.role}: {a.text}"
        elif a.mop is not None and ops[a.mop].writes() and isinstance(a.dst, ra.Reg):
            what = f"{ops[a.mop].writes()} in {a.dst.name}"
        else:
            what = ""
        rows.append((i, p, desc, ins, what, a.role))
    s = alloc.stats
    counts = {"registers used": alloc.registers_used(), "spills": s["spills"], "reloads": s["reloads"],
              "memory operands": s["memops"], "moves": s["moves"], "instructions": s["instructions"]}
    if shutil.which("nasm"):
        from .regalloc import assemble, measure
        w = work / st
        w.mkdir(parents=True, exist_ok=True)
        try:
            obj, _ = assemble(v, w)
            counts["source bytes"] = sum(f.stat().st_size for f in (w / "src").rglob("*") if f.is_file())
            got = code_size(obj)
            counts["code bytes"] = got.total
            counts["code bytes per function"] = _per_function(got, v.prefix)
            if bench:
                counts["cycles/byte (bulk, 64 blocks)"] = measure(v, w, obj)
                counts["cycles/byte (1 block per call)"] = measure(v, w, obj, blocks=1)
        except GenError as e:
            counts["code bytes"] = f"n/a ({e})"
    else:
        from threefish_gen.gen.render import render_variant
        counts["source bytes"] = source_bytes(render_variant(v))
        counts["code bytes"] = "n/a (nasm not installed)"
    loop = ra.loop_bounds(ops)
    return {"strategy": st, "counts": counts, "rows": rows,
            "pressure": pressure_svg(st, curves, budgets, marks, loop, len(ops)),
            "timeline": timeline_svg(st, occupancy(ops, alloc, pos), regs, len(ops))}


# ------------------------------------------------------------------ SIMD layouts

def layout_counts(spec, options) -> list[tuple[str, str, dict]]:
    """Ops per block by kind, for each ISA and layout, from the layout IR."""
    prog = describe(spec, options, "encrypt", 1)
    out = []
    for name, isa in csimd.ISAS.items():
        shapes = [("lanes", llanes.lower(prog, isa.bits // 64))]
        try:
            shapes.append(("packed", lpacked.lower(describe(spec, Options("fly", "full", 1), "encrypt", 1),
                                                   csimd.packed_width(isa, spec.nw) // 64)))
        except GenError:
            pass
        for layout, vp in shapes:
            got: dict = {}
            for op in lir.walk(vp.body):
                k = KINDS.get(type(op), "other")
                got[k] = got.get(k, 0) + 1
            out.append((name, layout, {k: n / vp.blocks for k, n in got.items()}))
    return out


def lane_map(spec) -> list[tuple[str, list, list]]:
    """Which word sits in which lane of A and B, per round (gen/layouts/packed.py)."""
    return lpacked.lane_map(describe(spec, Options("fly", "full", 1), "encrypt", 1))


def _per_function(got: CodeSize, prefix: str) -> str:
    """'encrypt 64, encrypt_blocks 4482, ...' (the variant's prefix left off)."""
    return ", ".join(f"{n[len(prefix):] if n.startswith(prefix) else n} {b}" for n, b in got.functions.items())


# Why a target's variants have no machine-code figure on the page (docs/bench.md, "Code size"),
# by the descriptor's recipe.interface; others: built by their own toolchain (a Rust crate, by cargo).
NO_OBJECT = {"dotnet": "compiled by the JIT at run time: no object file"}


def size_rows(base: Variant, work: Path) -> list[dict]:
    """Source and machine-code bytes of the page's variant and, where the target has it, the same
    variant with ``--unroll loop`` (the compact form, issue 30): {label, variant, source bytes,
    code bytes ('-' and why where none), how, per function}.  C variants are compiled once with
    gcc -O2 -std=c99 (verify/objects.py, the bench's command), the object's function symbols
    counted by tools/codesize.py."""
    from threefish_gen.gen.render import render_variant, write_files
    from threefish_gen.verify.objects import object_commands
    t = registry.get(base.target)
    twins = [("this page's variant", base)]
    if base.options.unroll != "loop":
        try:
            loop = t.variant(base.spec, Options(base.options.keys, "loop", base.options.interleave), "",
                             **dict(base.extra))
            twins.append(("the same with --unroll loop", loop))
        except GenError:
            pass
    rows = []
    for label, v in twins:
        o = v.options
        row = {"label": label, "variant": f"{o.keys}/{o.unroll}/i{o.interleave}", "how": "", "per function": ""}
        try:
            files = render_variant(v)
        except GenError:
            if v is base:
                raise
            continue                      # no loop form of this variant
        row["source bytes"] = source_bytes(files)
        row["code bytes"] = "-"
        if t.recipe.language != "c":
            row["how"] = f"{t.name}: " + NO_OBJECT.get(
                t.recipe.interface, "built by its own toolchain with the user's code: no object of the variant alone here")
        elif shutil.which("gcc") is None:
            row["how"] = "gcc not installed"
        else:
            w = work / f"size-{len(rows)}"
            write_files(files, w)
            obj = w / f"{v.stem}.o"
            cmds = object_commands(v, w, obj, "gcc")
            row["how"] = " ".join(cmds[0][:3]) + " (function symbols of the object)"
            try:
                for cmd in cmds:
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
                    if p.returncode:
                        first = ((p.stderr or p.stdout).strip().splitlines() or [f"exit {p.returncode}"])[0]
                        raise GenError("gcc failed: " + first.split("error: ", 1)[-1])
                got = code_size(obj)
                row["code bytes"] = got.total
                row["per function"] = _per_function(got, v.prefix)
            except (GenError, subprocess.TimeoutExpired) as e:
                row["how"] = str(e)[:200]
        rows.append(row)
    return rows


def size_section(rows: list[dict]) -> str:
    out = ['<section id="size"><h2>Code size (source bytes of the rendered files; machine-code bytes of the '
           "variant's functions)</h2>",
           "<table class=size><tr><th>variant</th><th>options</th><th>source bytes</th><th>code bytes</th>"
           "<th>how</th><th>per function</th></tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(r.get(k, '-')))}</td>" for k in (
            "label", "variant", "source bytes", "code bytes", "how", "per function")) + "</tr>")
    out.append("</table></section>")
    return "\n".join(out)


def simd_section(spec, options) -> str:
    counts = layout_counts(spec, options)
    kinds = sorted({k for _, _, c in counts for k in c})
    out = ['<section id="simd"><h2>SIMD layouts: vector operations per block (encrypt)</h2>',
           "<table><tr><th>ISA</th><th>layout</th>" + "".join(f"<th>{k}</th>" for k in kinds) + "</tr>"]
    for isa, layout, c in counts:
        out.append(f"<tr><td>{isa}</td><td>{layout}</td>" + "".join(f"<td>{c.get(k, 0):g}</td>" for k in kinds)
                   + "</tr>")
    out.append("</table><h3>Packed layout: which word sits in which lane, per round (A: the even words of the MIX "
               "pairs, B: the odd ones; lane permutations of the positional packed form applied to both halves, "
               "as the positional form does; the default tracked form re-pairs by permuting one half only)</h3>"
               "<table class=\"lanes\"><tr><th>step</th><th>A lanes</th><th>B lanes</th></tr>")
    for label, a, b in lane_map(spec):
        out.append(f"<tr><td>{label}</td><td>{' '.join(f'<span class=lane>w{w}</span>' for w in a)}</td>"
                   f"<td>{' '.join(f'<span class=lane>w{w}</span>' for w in b)}</td></tr>")
    out.append("</table></section>")
    return "\n".join(out)


# ------------------------------------------------------------------ the report

def _strategy_html(sec: dict) -> str:
    st = sec["strategy"]
    if "error" in sec:
        return (f'<section class="strategy failed" id="{st}"><h2>{st}</h2>'
                f'<p class="fail">fails: {html.escape(sec["error"])}</p></section>')
    rows = "\n".join(
        f'<tr id="{st}-{i}" class="{role}"><td><a href="#{st}-{i}">{p}</a></td><td>{html.escape(d)}</td>'
        f'<td><code>{html.escape(ins)}</code></td><td>{html.escape(w)}</td></tr>'
        for i, p, d, ins, w, role in sec["rows"])
    return (f'<section class="strategy" id="{st}"><h2>{st}</h2>'
            f'<h3>Register pressure (live values per class; dashed: budget; marks: '
            f'<span class="spill">spills</span> / <span class="reload">reloads</span>; shaded: block loop)</h3>'
            f'{sec["pressure"]}<h3>Register timeline</h3>{sec["timeline"]}'
            f'<details><summary>description / instruction / allocation ({len(sec["rows"])} rows)</summary>'
            f'<table class="listing"><tr><th>pos</th><th>description</th><th>instruction</th><th>allocation</th>'
            f'</tr>{rows}</table></details></section>')


def report(base: Variant, strategies, bench: bool = False) -> str:
    title = (f"{base.target} Threefish-{base.spec.bits} v{base.spec.version}"
             + "".join(f", {k} {v}" for k, v in base.extra if k != "strategy"))
    body, secs = [], []
    layout_packed = dict(base.extra).get("layout") == "packed"
    if is_asm(base.target):
        with tempfile.TemporaryDirectory(prefix="tf-explore-") as tmp:
            secs = [strategy_section(base, st, bench, Path(tmp)) for st in strategies]
        if all("error" in s for s in secs):      # nothing to draw: the choice itself is bad input
            raise GenError(secs[0]["error"])
        names: list[str] = []
        for s in secs:
            names += [k for k in s.get("counts", {}) if k not in names]
        t = ["<table class=counts><tr><th></th>" + "".join(f'<th><a href="#{s["strategy"]}">{s["strategy"]}</a></th>'
                                                           for s in secs) + "</tr>"]
        for k in names:
            t.append(f"<tr><td>{k}</td>" + "".join(
                f"<td>{'fails' if 'error' in s else html.escape(str(s['counts'].get(k, '-')))}</td>" for s in secs)
                + "</tr>")
        t.append("</table>")
        body.append("<section><h2>Counts (encrypt_blocks, static per function; source and code bytes: the "
                    "whole variant, all its functions)</h2>" + "".join(t) + "</section>")
        body += [_strategy_html(s) for s in secs]
    if not is_asm(base.target):
        with tempfile.TemporaryDirectory(prefix="tf-explore-") as tmp:
            body.append(size_section(size_rows(base, Path(tmp))))
    if not is_asm(base.target) or layout_packed:
        body.append(simd_section(base.spec, base.options))
    legend = " ".join(f'<span class="sw" style="background:{c}"></span>{k}' for k, c in FAMILY.items())
    return TEMPLATE.read_text().replace("{{title}}", html.escape(title)).replace("{{legend}}", legend).replace(
        "{{body}}", "\n".join(body))


def write(base: Variant, strategies, out: Path, bench: bool = False) -> Path:
    text = report(base, strategies, bench)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(out)
    return out
