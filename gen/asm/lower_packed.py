"""The packed layout (``gen/layouts/packed.py``) lowered to the allocator's machine ops, for
vectors of two 64-bit lanes (SSE2 XMM): ``nasm-x86 --layout packed`` and ``nasm-x64 --isa sse2
--layout packed``.

One block lives in A = even words, B = odd words, each split over Nw/4 XMM values of two lanes
(A0 = words 0, 2; B0 = words 1, 3; A1 = words 4, 6; ...).  The steps of ``map_program`` become:

* load / store: 128-bit ``movdqu`` of word pairs, split into A and B with ``punpcklqdq`` /
  ``punpckhqdq`` (and joined back the same way);
* mix: ``A += B`` (paddq), ``B <<<= (r_lo, r_hi)`` (see :func:`rotate`), ``B ^= A``; unmix the
  inverse;
* permute: the layout's lane permutation, register by register (``pair_sources``): a register
  whose two lanes come from one old register is renamed (same order) or ``pshufd``-swapped,
  one built from two old registers is a copy plus one two-source shuffle (``LANE_OPS``);
* key: the terms the description adds to each word are split by what they depend on.  Key
  words and constants (the subkey number) depend only on the key: the setup runs the
  description's key schedule in XMM low lanes (``movq`` loads zero the high lane), pairs the
  words of each register's two lanes with ``punpcklqdq``, adds the constants with ``paddq``
  and keeps each pair in an aligned stack table (once per call).  Tweak words depend on the
  block: they are loaded with ``movq`` (high lane zero, so a word added to a low lane is the
  value itself) and shifted into the high lane with ``pslldq 8`` where a high lane needs one.
  Per block a subkey injection is then one ``paddq``/``psubq`` from the table per register
  plus one per tweak term.

Every value is a 128-bit XMM value; the description's scalar values (key and tweak words)
keep their high lane zero (``movq`` loads, ``pxor``/``paddq`` of zero-high values).  The
allocator (any strategy) assigns registers and spills through 16-byte aligned stack slots.
"""
from __future__ import annotations

from ..dsl import Idx, Loop, values
from ..errors import GenError
from ..layouts import packed
from ..threefish import Program
from .ir import Addr, MOp
from .lowering import Lowering
from .machine import ISA

# two-source lane shuffles: (half of the first source, half of the second) -> kind; the
# printer's table gives the instruction (punpcklqdq, punpckhqdq, shufpd 1, shufpd 2)
LANE_OPS = {(0, 0): "lolo", (1, 1): "hihi", (1, 0): "hilo", (0, 1): "lohi"}
M64 = (1 << 64) - 1


def rotate(out: list, fresh, b: str, counts: tuple, text: str) -> None:
    """b <<<= (r_lo, r_hi) per 64-bit lane with SSE2 (no per-lane variable shift).

    Equal counts: t = b; b <<= r; t >>= 64-r; b |= t (4 instructions, one temporary).
    Different counts: each half is rotated by its own count in a copy and the halves are
    merged with one movsd (low lane from the copy):
        t = b; t <<= r_lo; u = b; u >>= 64-r_lo; t |= u    (t low lane = b.lo <<< r_lo)
        u = b; u <<= r_hi; b >>= 64-r_hi; b |= u           (b high lane = b.hi <<< r_hi)
        movsd b, t                                          (b = (t.lo, b.hi))
    10 instructions and two temporaries live at once; the alternatives tried on paper (merge
    the left and the right shifts first, then one por; pand/por with lane masks) need as many
    or more instructions and a mask register."""
    r0, r1 = counts
    if r0 == r1:
        t = fresh()
        out += [MOp("mov", t, b, text=text), MOp("shl", b, r0, text=text),
                MOp("shr", t, 64 - r0, text=text), MOp("or", b, t, text=text)]
        return
    t, u, w = fresh(), fresh(), fresh()
    out += [MOp("mov", t, b, text=text), MOp("shl", t, r0, text=text),
            MOp("mov", u, b, text=text), MOp("shr", u, 64 - r0, text=text), MOp("or", t, u, text=text),
            MOp("mov", w, b, text=text), MOp("shl", w, r1, text=text),
            MOp("shr", b, 64 - r1, text=text), MOp("or", b, w, text=text),
            MOp("movsd", b, t, text=text)]


def lower_packed(prog: Program, isa: ISA) -> list:
    """Machine ops of ``PREFIX{direction}_blocks`` for the packed layout (see the module doc)."""
    spec = prog.spec
    nw = spec.nw
    if nw % 4:  # pragma: no cover - every Threefish size
        raise GenError("packed XMM layout needs a multiple of 4 words")
    m = nw // 4                      # XMM values per half
    steps = packed.map_program(prog)
    low = Lowering(isa)
    out = low.out
    setup_vals = set(values(prog.setup))
    count = {"A": 0, "B": 0, "v": 0}

    def new(stem: str) -> str:
        count[stem] = count.get(stem, 0) + 1
        return f"{stem}{count[stem]}"

    def version(h: str, q: int) -> str:
        key = f"{h}{q}"
        count[key] = count.get(key, -1) + 1
        return key if count[key] == 0 else f"{key}.{count[key]}"

    def words(h: str, q: int) -> tuple:
        """word positions in the lanes of register q of half h"""
        base = 0 if h == "A" else 1
        return (base + 4 * q, base + 4 * q + 2)

    def pair_text(lanes) -> str:
        return "(" + ", ".join(" + ".join([*ks, *([str(imm)] if imm else [])]) for ks, imm in lanes) + ")"

    # ---- setup: the description's key schedule (low lanes), then the key-only subkey pairs
    for item in prog.setup:
        if isinstance(item, Loop):  # pragma: no cover - map_program requires --unroll full
            raise GenError("the nasm targets need --unroll full")
        low.emit(item)
    table: dict = {}                 # (lo terms, hi terms) -> table index
    out.append(MOp("note", text="subkey pairs: key words and constants of each register's two lanes "
                                "(tweak words are added per block)"))
    for st in steps:
        if st[0] != "key":
            continue
        for h in "AB":
            for q in range(m):
                lanes = []
                for w in words(h, q):
                    ks = tuple(t for t in st[2][w] if isinstance(t, str) and t in setup_vals)
                    imm = sum(t.base for t in st[2][w] if isinstance(t, Idx)) & M64
                    lanes.append((ks, imm))
                if lanes == [((), 0), ((), 0)]:  # pragma: no cover - every word gets a key word
                    continue
                key = tuple(lanes)
                if key in table:
                    continue
                if not lanes[0][0] or not lanes[1][0]:  # pragma: no cover - every Threefish word gets a key word
                    raise GenError("packed layout: a lane without a key word in a subkey injection")
                idx = len(table)
                table[key] = idx
                text = f"kt[{idx}] = {pair_text(lanes)}"
                e, f = new("e"), lanes[1][0][0]
                out.append(MOp("mov", e, lanes[0][0][0], text=text))
                for k in lanes[0][0][1:]:  # pragma: no cover - one key word per lane in Threefish
                    out.append(MOp("add", e, k, text=text))
                if len(lanes[1][0]) > 1:  # pragma: no cover
                    f = new("e")
                    out.append(MOp("mov", f, lanes[1][0][0], text=text))
                    out += [MOp("add", f, k, text=text) for k in lanes[1][0][1:]]
                out.append(MOp("lolo", e, f, text=text))
                imm = lanes[0][1] | lanes[1][1] << 64
                if imm:
                    out.append(MOp("add", e, Addr(None, "const", imm), text=text))
                out.append(MOp("store", src=e, addr=Addr(None, "kt", idx), text=text))

    # ---- body
    out.append(MOp("guard", src="n", text="if n == 0 return"))
    out.append(MOp("top", text="for each block"))
    cur = {"A": [f"A{q}" for q in range(m)], "B": [f"B{q}" for q in range(m)]}
    high: dict = {}                  # tweak word -> its copy in the high lane (this block)
    nkey = 0
    for st in steps:
        kind = st[0]
        if kind == "scalar":
            low.emit(st[1])
        elif kind == "load":
            out.append(MOp("note", text="load: A = even words, B = odd words"))
            vs = []
            for q in range(m):
                for i in (2 * q, 2 * q + 1):
                    v = new("v")
                    out.append(MOp("ldu", v, Addr("in", "in", 2 * i, 16 * i), text=f"v = in[{2 * i}], in[{2 * i + 1}]"))
                    vs.append(v)
                a, b = version("A", q), version("B", q)
                wa, wb = words("A", q), words("B", q)
                out += [MOp("mov", a, vs[2 * q], text=f"{a} = x{wa[0]}, x{wa[1]}"),
                        MOp("lolo", a, vs[2 * q + 1], text=f"{a} = x{wa[0]}, x{wa[1]}"),
                        MOp("mov", b, vs[2 * q], text=f"{b} = x{wb[0]}, x{wb[1]}"),
                        MOp("hihi", b, vs[2 * q + 1], text=f"{b} = x{wb[0]}, x{wb[1]}")]
                cur["A"][q], cur["B"][q] = a, b
        elif kind == "store":
            out.append(MOp("note", text="store: interleave A and B back into word order"))
            for q in range(m):
                a, b = cur["A"][q], cur["B"][q]
                for half, op in ((0, "lolo"), (1, "hihi")):
                    v, i = new("v"), 2 * (2 * q + half)
                    text = f"out[{i}..{i + 1}] = ({a}, {b}) {'low' if half == 0 else 'high'} lanes"
                    out += [MOp("mov", v, a, text=text), MOp(op, v, b, text=text),
                            MOp("store", src=v, addr=Addr("out", "out", i, 8 * i), text=text)]
        elif kind in ("mix", "unmix"):
            rd = st[1]
            rot = spec.rot[rd]
            out.append(MOp("note", text=f"{'inverse ' if kind == 'unmix' else ''}round, rotation row {rd}"))
            for q in range(m):
                a, b = cur["A"][q], cur["B"][q]
                counts = (rot[2 * q], rot[2 * q + 1])
                if kind == "mix":
                    out.append(MOp("add", a, b, text=f"{a} += {b}"))
                    rotate(out, lambda: new("r"), b, counts, f"{b} <<<= {counts}")
                    out.append(MOp("xor", b, a, text=f"{b} ^= {a}"))
                else:
                    out.append(MOp("xor", b, a, text=f"{b} ^= {a}"))
                    rotate(out, lambda: new("r"), b, tuple(64 - c for c in counts), f"{b} >>>= {counts}")
                    out.append(MOp("sub", a, b, text=f"{a} -= {b}"))
        elif kind == "permute":
            for h, p in (("A", st[1]), ("B", st[2])):
                if p is None:
                    continue
                old = list(cur[h])
                text = f"{h} = {h}[{' '.join(map(str, p))}] (lanes)"
                for q, ((r1, h1), (r2, h2)) in enumerate(packed.pair_sources(p)):
                    if r1 == r2 and (h1, h2) == (0, 1):
                        cur[h][q] = old[r1]
                        continue
                    v = version(h, q)
                    if r1 == r2:
                        out.append(MOp("swap", v, old[r1], text=text))
                    else:
                        out += [MOp("mov", v, old[r1], text=text), MOp(LANE_OPS[(h1, h2)], v, old[r2], text=text)]
                    cur[h][q] = v
        elif kind == "key":
            sign, terms = st[1], st[2]
            op = "add" if sign > 0 else "sub"
            out.append(MOp("note", text=f"{'add' if sign > 0 else 'subtract'} subkey (injection {nkey})"))
            nkey += 1
            for h in "AB":
                for q in range(m):
                    r = cur[h][q]
                    lanes, tw = [], []
                    for half, w in enumerate(words(h, q)):
                        ks = tuple(t for t in terms[w] if isinstance(t, str) and t in setup_vals)
                        imm = sum(t.base for t in terms[w] if isinstance(t, Idx)) & M64
                        lanes.append((ks, imm))
                        tw += [(half, t) for t in terms[w] if isinstance(t, str) and t not in setup_vals]
                    sym = "+=" if sign > 0 else "-="
                    if tuple(lanes) in table:
                        idx = table[tuple(lanes)]
                        out.append(MOp(op, r, Addr(None, "kt", idx), text=f"{r} {sym} kt[{idx}] = {pair_text(lanes)}"))
                    for half, t in tw:
                        if half == 0:
                            out.append(MOp(op, r, t, text=f"{r} {sym} ({t}, 0)"))
                            continue
                        if t not in high:
                            high[t] = f"{t}h"
                            out += [MOp("mov", high[t], t, text=f"{t}h = (0, {t})"),
                                    MOp("bshl", high[t], 8, text=f"{t}h = (0, {t})")]
                        out.append(MOp(op, r, high[t], text=f"{r} {sym} (0, {t})"))
    low.loop_tail(prog)
    return out
