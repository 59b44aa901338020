"""The packed layout (``gen/layouts/packed.py``) lowered to the allocator's machine ops, for
vectors of two 64-bit lanes (SSE2 XMM): ``nasm-x86 --layout packed`` and ``nasm-x64 --isa sse2
--layout packed``.

It consumes the layout IR of ``gen.layouts.packed.lower(prog, 2, natural=True)``: one block in
A = even words, B = odd words, each split over Nw/4 XMM values of two lanes (A0 = words 0, 2;
B0 = words 1, 3; A1 = words 4, 6; ...).  The IR's operations become:

* load / store: 128-bit ``movdqu`` of word pairs, split into A and B with ``punpcklqdq`` /
  ``punpckhqdq`` (and joined back the same way);
* mix: ``A += B`` (paddq), ``B <<<= (r_lo, r_hi)`` (see :func:`rotate`), ``B ^= A``; unmix the
  inverse;
* permute (the IR's lane shuffles, :func:`shuffle`): a register whose two lanes come from one
  old register is renamed (same order) or ``pshufd``-swapped, one built from two old registers
  is a copy plus one two-source shuffle (``LANE_OPS``);
* key (the IR's ``Insert`` of per-lane terms, added or subtracted): the terms the description
  adds to each word are split by what they depend on.  Key
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

from ..dsl import Idx
from ..errors import GenError
from ..isa import x86
from ..layouts import ir, packed
from ..threefish import Program
from .ir import Addr, MOp
from .lowering import Lowering
from .machine import ISA

# two-source lane shuffles: (half of the first source, half of the second) -> the machine-op kind
# that builds it (punpcklqdq, punpckhqdq, shufpd 1, shufpd 2), found from gen/isa/x86.py's semantics
LANE_OPS = {(h1, h2): x86.packed_lane_kind(h1, h2) for h1 in (0, 1) for h2 in (0, 1)}
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


def shuffle(out: list, dst: str, pattern: tuple, text: str):
    """MOps giving ``dst`` the two lanes ``pattern`` ((value, half) per lane); returns the value
    that holds the result: the source itself when the pattern is its own lanes in order."""
    (s1, h1), (s2, h2) = pattern
    if s1 == s2 and (h1, h2) == (0, 1):
        return s1
    if s1 == s2:
        if (h1, h2) != (1, 0):  # pragma: no cover - the packed layout never duplicates a lane
            raise GenError("packed XMM layout: a shuffle repeats one lane")
        out.append(MOp("swap", dst, s1, text=text))
    else:
        out += [MOp("mov", dst, s1, text=text), MOp(LANE_OPS[(h1, h2)], dst, s2, text=text)]
    return dst


def key_lanes(terms: tuple, setup_vals: set) -> tuple:
    """Per lane of an Insert: (key words, constant) -- the part that depends on the key only."""
    return tuple((tuple(t for t in ts if isinstance(t, str) and t in setup_vals),
                  sum(t.base for t in ts if isinstance(t, Idx)) & M64) for ts in terms)


def pair_text(lanes) -> str:
    return "(" + ", ".join(" + ".join([*ks, *([str(imm)] if imm else [])]) for ks, imm in lanes) + ")"


def lower_packed(prog: Program, isa: ISA) -> list:
    """Machine ops of ``PREFIX{direction}_blocks`` for the packed layout (see the module doc)."""
    if prog.spec.nw % 4:  # pragma: no cover - every Threefish size
        raise GenError("packed XMM layout needs a multiple of 4 words")
    vp = packed.lower(prog, 2, natural=True)
    low = Lowering(isa)
    out = low.out
    out.append(MOp("guard", src="n", text="if n == 0 return"))  # before any load: n = 0 touches no pointer
    setup_vals = {n for s in vp.setup for n in s.names}
    count: dict = {}

    def new(stem: str) -> str:
        count[stem] = count.get(stem, 0) + 1
        return f"{stem}{count[stem]}"

    def reg(name: str) -> tuple:
        """IR vector name (A, B, A0, B1, ...) -> (half, register index)"""
        return name[0], int(name[1:] or 0)

    def version(name: str) -> str:
        key = "%s%d" % reg(name)
        count[key] = count.get(key, -1) + 1
        return key if count[key] == 0 else f"{key}.{count[key]}"

    # ---- setup: the description's key schedule (low lanes), then the key-only subkey pairs
    for item in vp.setup:
        low.scalar(item)
    body = ir.flat_blocks(vp.body)
    table: dict = {}                 # per-lane (key words, constant) -> table index
    out.append(MOp("note", text="subkey pairs: key words and constants of each register's two lanes "
                                "(tweak words are added per block)"))
    for op in ir.inserts(body):
        lanes = key_lanes(op.terms, setup_vals)
        if lanes in table:
            continue
        if not lanes[0][0] or not lanes[1][0]:  # pragma: no cover - every Threefish word gets a key word
            raise GenError("packed layout: a lane without a key word in a subkey injection")
        idx = table[lanes] = len(table)
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
    out.append(MOp("top", text="for each block"))
    _Body(low, body, setup_vals, table, new, reg, version).run()
    low.loop_tail(prog)
    return out


class _Body:
    """The per-block ops of the packed lowering: an IR visitor (gen/layouts/ir.py ``visit``) over
    the flat body, with the values each IR vector name is held in now."""

    def __init__(self, low, body, setup_vals, table, new, reg, version):
        self.low, self.out, self.body = low, low.out, body
        self.setup_vals, self.table = setup_vals, table
        self.new, self.reg, self.version = new, reg, version
        self.cur: dict = {}          # IR vector name -> the value holding it now
        self.rows: dict = {}         # loaded row -> its words
        self.high: dict = {}         # tweak word -> its copy in the high lane (this block)
        self.inserts: dict = {}      # Insert temporary -> its terms
        self.nkey = 0
        self.k = 0

    def run(self):
        body = self.body
        while self.k < len(body):
            op = body[self.k]
            self.k += 1
            ir.visit(op, self)

    def scalar(self, op):
        self.low.scalar(op)

    def note(self, op):
        self.out.append(MOp("note", text=op.text))

    def load(self, op):
        w, cur = op.words, self.cur
        cur[op.dst] = self.new("v")
        self.rows[op.dst] = w
        self.out.append(MOp("ldu", cur[op.dst], Addr("in", "in", w[0], 8 * w[0]), text=f"v = in[{w[0]}], in[{w[1]}]"))

    def store(self, op):
        pass                         # emitted with its row shuffle

    def mov(self, op):
        self.cur[op.dst] = self.cur[op.a]  # the old registers of a permutation (no code)

    def shuffle(self, op):
        cur, out, body = self.cur, self.out, self.body
        if op.kind == "load/store" and op.srcs[0] in self.rows:
            v = self.version(op.dst)
            words = [self.rows[s][h] for s, h in op.pattern()]
            cur[op.dst] = shuffle(out, v, tuple((cur[s], h) for s, h in op.pattern()),
                                  f"{v} = x{words[0]}, x{words[1]}")
        elif op.kind == "load/store":
            # a store row: its shuffle, then the Store of it that follows the row shuffles
            st = ir.store_of(body[self.k:], op.dst)
            (a, h), (b, _) = op.pattern()
            v, i = self.new("v"), st.words[0]
            text = f"out[{i}..{i + 1}] = ({cur[a]}, {cur[b]}) {'low' if h == 0 else 'high'} lanes"
            shuffle(out, v, tuple((cur[s], x) for s, x in op.pattern()), text)
            out.append(MOp("store", src=v, addr=Addr("out", "out", i, 8 * i), text=text))
        else:
            # a permutation of one half: this shuffle and the ones after it that write the half
            group = [op]
            while self.k < len(body) and ir.is_shuffle(body[self.k], "permute"):
                group.append(body[self.k])
                self.k += 1
            regs = {n: self.reg(n[1:] if n.startswith("o") else n)[1] for g in group for n in g.srcs}
            p = [2 * regs[s] + h for g in group for s, h in g.pattern()]
            h = op.dst[0]
            text = f"{h} = {h}[{' '.join(map(str, p))}] (lanes)"
            new_cur = {}
            for g in group:
                pat = tuple((cur[s], x) for s, x in g.pattern())
                if pat[0][0] == pat[1][0] and (pat[0][1], pat[1][1]) == (0, 1):
                    new_cur[g.dst] = pat[0][0]
                else:
                    new_cur[g.dst] = shuffle(out, self.version(g.dst), pat, text)
            cur.update(new_cur)

    def insert(self, op):
        k, body = self.k, self.body
        self.inserts[op.dst] = op.terms
        if not (k > 1 and ir.is_insert(body[k - 3])):
            adds = getattr(body[k], "name", None) == "add"     # the Add or Sub that uses it
            self.out.append(MOp("note", text=f"{'add' if adds else 'subtract'} subkey "
                                             f"(injection {self.nkey})"))
            self.nkey += 1

    def arith(self, op):
        cur, out = self.cur, self.out
        if op.name != "xor" and op.b in self.inserts:
            r, terms = cur[op.dst], self.inserts.pop(op.b)
            kind, sym = (op.name, SYMBOL[op.name])
            lanes = key_lanes(terms, self.setup_vals)
            idx = self.table[lanes]
            out.append(MOp(kind, r, Addr(None, "kt", idx), text=f"{r} {sym} kt[{idx}] = {pair_text(lanes)}"))
            for half, ts in enumerate(terms):
                for t in ts:
                    if not isinstance(t, str) or t in self.setup_vals:
                        continue
                    if half == 0:
                        out.append(MOp(kind, r, t, text=f"{r} {sym} ({t}, 0)"))
                        continue
                    if t not in self.high:
                        self.high[t] = f"{t}h"
                        out += [MOp("mov", self.high[t], t, text=f"{t}h = (0, {t})"),
                                MOp("bshl", self.high[t], 8, text=f"{t}h = (0, {t})")]
                    out.append(MOp(kind, r, self.high[t], text=f"{r} {sym} (0, {t})"))
            return
        a, b = cur[op.dst], cur[op.b]
        out.append(MOp(op.name, a, b, text=f"{a} {SYMBOL[op.name]} {b}"))

    def rotate(self, op):
        b = self.cur[op.dst]
        text = f"{b} {'<<<=' if op.left else '>>>='} {op.counts}"
        rotate(self.out, lambda: self.new("r"), b, op.left_counts, text)


SYMBOL = {"add": "+=", "sub": "-=", "xor": "^="}
