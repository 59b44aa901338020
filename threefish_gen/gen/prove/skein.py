"""Skein: the generated UBI compression function proved equal to the description.

A Skein render holds one generated function, the UBI blocks loop, and hand-written glue
(templates/c/skein.*: configuration, key / personalization stages, padding, the output stage,
tree hashing, hash_many).  The prover reads the generated function only:

* C (``P_ubi(h, t, blk, n, add)``, targets c and c-simd): for each of the n blocks m_i,
  ``t[0] += add``; ``h = Threefish_E(key h, tweak t, m_i) ^ m_i``; ``t[1] &= ~First``.
* nasm-x64 (``P_ubi_asm(h, tweaks, blocks, unused, n)``): for each block,
  ``h = Threefish_E(key h, tweak = tweaks[i], m_i) ^ m_i`` (the C driver writes the tweaks).
* SIMD C lanes kernels (``P_ubi_lanes_ISA(in, tweaks, out, m0, .., m<L-1>)``, target c-simd:
  hash_many and tree leaves): one block of L messages at once, L = the ISA's 64-bit lanes (avx2
  4, avx512 8); ``in`` holds the L chaining values word-sliced (word j of lane l at in[j*L + l]),
  ``tweaks`` the L tweaks the same way (tweak[j*L + l]), ``m<l>`` lane l's message block; for
  each lane l, ``out_l = Threefish_E(key h_l, tweak t_l, m_l) ^ m_l``, stored word-sliced
  (out[j*L + l]).  Straight-line code: read by gen/prove/c_simd.py (intrinsics as lane terms),
  every output word compared.  (The C# lanes kernels keep the row form: ``in`` = L chaining
  values then L message blocks, ``tweaks`` 2 words per lane, ``out`` L rows.)

Threefish_E is the description's term (gen/prove/expect.py) and First is bit 62 of t[1] as in
the reference model (gen/skein.tweak).  The loop is proved by induction over a carried state:
the chaining value (and in C the tweak) at the loop head are fresh variables ``h@L[j]``,
``t@L[j]``; one run of the body from that general state must store the description's next
state, advance the block pointer (and the tweak pointer) by one block and count down once; the
path that returns must hold the state the loop left (or the inputs, for n = 0), and the trip
count must be n (engine._coverage).  The glue is not read here: verify checks it against the
1,368 golden records, the 35 published v1.3 tree records and the reference model.
"""
from __future__ import annotations

import itertools
import re
import time

from ..errors import GenError
from ..skein import tweak as skein_tweak
from .c import CMachine, Program as CProgram
from .c_simd import Program as SimdProgram, SimdMachine
from .cfamily import heads as loop_heads
from .csharp import LITTLE, CsMachine, Program as CsProgram, describe, paths
from .engine import (Context, ProveError, Unsupported, _scale, after_loop, base_of, classify, first_divergence,
                     first_run, general_run, kind, prove_function, record, stem)
from .nasm import NasmMachine, Program as NasmProgram, abi_of
from .rust import RustMachine, ubi_job
from .expect import expected
from .terms import MASK, Term, add, and_, const, show, sub, value, var, xor

# First (bit 62 of t[1]): the reference model's flag, read back from its tweak encoder
FIRST = int.from_bytes(skein_tweak(0, 0, first=True)[8:], "little")

GLUE = ("the glue (configuration, key/personalization stages, padding, output stage, tree, "
        "hash_many driver{asm}) is checked by verify against the 1,368 golden records and the 35 "
        "published v1.3 tree records")


class UbiContext(Context):
    """The UBI loop's description: the carried words and the next state of one block."""

    def __init__(self, v, tweak_in_state: bool, one_array: bool = False):
        """one_array: h and t in one array s = h[0..nw), t[0], t[1] (C#'s Span<ulong> s)."""
        super().__init__(v.spec.nw, None, induction=ubi_induction, finish=ubi_finish)
        self.spec, self.options = v.spec, v.options
        self.state_tweak = tweak_in_state
        nw = v.spec.nw
        # carried word name -> (pointer variable, byte offset)
        h, t, t0 = (var("ptr:s"), var("ptr:s"), 8 * nw) if one_array else (var("ptr:h"), var("ptr:t"), 0)
        self.carried = {f"h[{j}]": (h, 8 * j) for j in range(nw)}
        if tweak_in_state:
            self.carried.update({f"t[{j}]": (t, t0 + 8 * j) for j in range(2)})

    def next_state(self, g: dict, msg: list, tw_stem: str | None) -> dict:
        """The description's state after one block from state g (name -> term)."""
        nw = self.nw
        if self.state_tweak:
            tw = [add(g["t[0]"], var("add")), g["t[1]"]]
        else:
            tw = [var(f"{tw_stem}[{j}]") for j in range(2)]
        e = expected(self.spec, self.options, "encrypt", [g[f"h[{j}]"] for j in range(nw)], tw, msg)
        out = {f"h[{j}]": xor(e[j], msg[j]) for j in range(nw)}
        if self.state_tweak:
            out["t[0]"] = tw[0]
            out["t[1]"] = and_(g["t[1]"], MASK ^ FIRST)
        return out


def _seed(m, ctx: UbiContext) -> None:
    """The carried words hold the function's inputs h[j] (t[j]) at entry."""
    for name, (base, off) in ctx.carried.items():
        m.state.mem[(base, const(off))] = (8, var(name))


def _carried_terms(m, ctx: UbiContext) -> dict:
    out = {}
    for name, (base, off) in ctx.carried.items():
        cell = m.state.mem.get((base, const(off)))
        if cell is None or cell[0] != 8:
            raise ProveError(f"{name} is not a 64-bit word in memory")
        out[name] = cell[1]
    return out


def _origin(m, t: Term) -> str:
    """The line that computed t, or the first line of a part of it that the description lacks."""
    if t in m.origin:
        no, text = m.origin[t]
        return f"line {no}: {text}"
    return "?"


def ubi_induction(m, head: int, ctx: UbiContext, line_text):
    """The UBI loop at ``head`` for every trip count; returns (machine, pc) after its exit."""
    where = f"loop at {line_text(head)}"
    if any(seg[0] == "loop" for seg in m.state.segments):
        raise ProveError(f"{where}: a second blocks loop (UBI chains its blocks in one)")
    locs0, m1, locs1 = first_run(m, head, line_text)
    carried_locs = _carried_locations(locs0, locs1, ctx, where)
    ptrs, counter, changed = classify(locs0, locs1, head, where, skip=carried_locs)
    for loc, name in carried_locs.items():
        changed[loc] = ("carried", name)
    want_ptrs = {"in"} if ctx.state_tweak else {"in", "tweak"}
    if not want_ptrs <= set(ptrs) or counter is None:
        raise ProveError(f"{where}: pointers advanced {sorted(ptrs)} (needs {sorted(want_ptrs)}), "
                         f"counter {'found' if counter else 'missing'}")
    if counter[2] not in (1, MASK):         # down by one (C, NASM) or up by one (C#: b++)
        raise ProveError(f"{where}: counts by {counter[2] if counter[2] < 1 << 63 else counter[2] - (1 << 64)} "
                         f"per block, not 1")
    bs = ctx.bs
    o_in = base_of(ptrs["in"][0])[1]
    if ptrs["in"][1] != bs:
        raise ProveError(f"{where}: the block pointer advances {ptrs['in'][1] & MASK:#x} bytes per block, "
                         f"not {bs} ({_stride_line(m1, ptrs['in'])})")
    if not ctx.state_tweak:
        if ptrs["tweak"][1] != 16:
            raise ProveError(f"{where}: the tweak pointer advances {ptrs['tweak'][1] & MASK:#x} bytes per "
                             f"block, not 16 ({_stride_line(m1, ptrs['tweak'])})")
        o_tw = base_of(ptrs["tweak"][0])[1]
        if sub(o_in, _scale(o_tw, bs // 16)) is not const(0):
            raise ProveError(f"{where}: enters with the blocks and tweaks at different blocks "
                             f"({show(o_in)}, {show(o_tw)})")

    # the general state: fresh pointers, counter, carried words (g: name -> h@L[j], t@L[j]) and scratch
    g = {}

    def carried(loc, what):
        name = what[1]
        t = g[name] = var(f"{name[0]}@{head}{name[1:]}")
        return t
    run = general_run(m, head, line_text, where, "block", locs0, changed, ptrs, counter, carried)
    mg, locsb = run.machine, run.locs

    # the step: the body maps the carried state g to the description's next state
    msg = [var(f"{stem(ptrs['in'][2])}[{i}]") for i in range(ctx.nw)]
    want = ctx.next_state(g, msg, stem(ptrs["tweak"][2]) if "tweak" in ptrs else None)
    got = {name: locsb[loc] for loc, name in carried_locs.items()}
    for name in sorted(want, key=lambda s: (s[0] != "t", s)):       # the tweak first: a cause
        if got[name] is not want[name]:
            terms = f" ({show(got[name], 2)}, not {show(want[name], 2)})" if name[0] == "t" else ""
            at = ("none: the body does not update it" if got[name] is g[name] else
                  first_divergence(mg, got[name], want[name]))
            raise ProveError(f"{where}: {_word(name)} after one block differs from the description{terms}; "
                             f"first divergence at {at}")
    for (b, off) in set(mg.state.mem) - run.before:
        _check_store(b, off, ctx, where)

    # after the loop: T blocks ran; what the carried words hold now is the state after T blocks
    # (top test: the general state itself; bottom test: one step after it); the returning path
    # must keep it
    mx, pc = after_loop(run, head, ptrs, counter, o_in, 1)
    locsx = mx.locations()
    mx.ubi_final = {name: locsx[loc] for loc, name in carried_locs.items()}
    return mx, pc


def _carried_locations(locs0: dict, locs1: dict, ctx: UbiContext, where: str) -> dict:
    """Where the loop carries each state word: the location that holds the function's input
    word when the loop is entered and that one run of the body changes (C: the h[] and t[]
    words in memory; C#: the locals h_j, t_j the words were read into).  A word no location
    changes is carried where the function keeps it (the step then finds it not updated)."""
    out = {}
    for name, (base, off) in ctx.carried.items():
        holders = [loc for loc, t in locs0.items() if t is var(name)]
        if not holders:
            raise ProveError(f"{where}: is entered without {name}, the function's input, in any location")
        moving = [loc for loc in holders if locs1.get(loc) is not locs0[loc]]
        if len(moving) > 1:
            raise ProveError(f"{where}: carries {name} in {len(moving)} locations")
        home = ("m", base, const(off))
        out[moving[0] if moving else home if home in holders else holders[0]] = name
    return out


def _word(name: str) -> str:
    return (f"chaining value word {name}" if name[0] == "h" else f"tweak word {name}")


def _stride_line(m, ptr) -> str:
    t0, d, _ = ptr
    return _origin(m, add(t0, const(d)))


def _check_store(b: Term, off: Term, ctx: UbiContext, where: str) -> None:
    """Memory the function may write: its stack, and the carried words."""
    name = b.args[0]
    if name.startswith(("rsp0", "sym:")):
        return
    if any(b is base and off is const(o) for base, o in ctx.carried.values()):
        return
    raise ProveError(f"{where}: writes [{show(b)} + {show(off)}], outside the chaining value")


def ubi_finish(m, ctx: UbiContext) -> None:
    """A returning path holds the state its loop left (the inputs when no loop ran), and wrote
    nothing else but its stack."""
    final = getattr(m, "ubi_final", None) or {name: var(name) for name in ctx.carried}
    got = _carried_terms(m, ctx)
    for name, want in final.items():
        if got[name] is not want:
            raise ProveError(f"the function returns a {_word(name)} that is not the state after its "
                             f"blocks; first divergence at {first_divergence(m, got[name], want)}")
    for (b, off) in m.state.mem:
        _check_store(b, off, ctx, "the function")


# -------------------------------------------------------------------- the prover's entry

def prove_text(v, language: str, word_bits: int, text: str, report):
    """Prove the UBI function(s) of one emitted Skein file; fills and returns ``report``.  Runs in
    the proof's term scope (gen/prove/__init__.py:prove_text opens it)."""
    t0 = time.monotonic()
    try:
        if language == "nasm":
            jobs = _nasm_jobs(text, word_bits, v)
        elif language == "c#":             # Ubi made path by path (byte order), labelled once run
            jobs = itertools.chain(_cs_jobs(text, v), _cs_lanes_jobs(text, v))
        elif language == "rust":
            jobs = _rust_jobs(text, v)
        else:
            jobs = _c_jobs(text, v) + (_lanes_jobs(text, v) if v.get("isa") else [])
    except Unsupported as e:
        raise GenError(f"cannot read the file: {e}") from None
    for name, make, ctx, what in jobs:
        def prove():
            m, entry, heads, line_text = make()
            lanes = isinstance(ctx, LanesContext)       # straight-line: one call, no carried state
            if not lanes:
                _seed(m, ctx)
            return f"{what}; {prove_function(m, entry, heads, ctx, lanes, line_text)}"
        record(report, name, prove)
    if not report.lines:
        raise GenError("no UBI function (P_ubi / P_ubi_asm / Ubi) in the file")
    report.note = GLUE.format(asm=", the C driver that writes the tweaks" if language == "nasm" else "")
    report.seconds = time.monotonic() - t0
    return report


C_WHAT = "UBI: h = E(h, t, m_i) ^ m_i, t[0] += add before, First cleared after each block"
ASM_WHAT = "UBI: h = E(h, tweaks[i], m_i) ^ m_i per block"
CS_WHAT = "UBI: s = h, t; h = E(h, t, m_i) ^ m_i, t[0] += add before, First cleared after each block"


def _c_jobs(text: str, v) -> list:
    prog = CProgram(text, select=lambda name: name.endswith("_ubi"))
    jobs = []
    for name, fn in prog.functions.items():
        if fn.params != ["h", "t", "blk", "n", "add"]:
            raise Unsupported(f"{name} takes ({', '.join(fn.params)}), not (h, t, blk, n, add)")

        def make(fn=fn):
            m = CMachine(prog, fn)
            entry = m.enter([var("ptr:h"), var("ptr:t"), var("ptr:in"), var("n"), var("add")])
            return m, entry, loop_heads(fn), lambda pc: f"line {fn.stmts[pc].no}"
        jobs.append((name, make, UbiContext(v, True), C_WHAT))
    return jobs


def _rust_jobs(text: str, v) -> list:
    """Rust (``fn ubi(h: &mut [u64; NW], t: &mut [u64; 2], blocks: &[u8], add: u64)``, its
    ubi_block inlined: gen/prove/rust.py): the C contract, blocks n whole blocks."""
    prog, fn = ubi_job(text, v.spec.block_bytes)

    def make():
        m = RustMachine(prog, fn, [var("ptr:h"), var("ptr:t"), var("ptr:in"), var("n"), var("add")])
        return m, 0, loop_heads(fn), lambda pc: f"line {fn.stmts[pc].no}"
    return [("ubi", make, UbiContext(v, True), C_WHAT)]


def _cs_jobs(text: str, v):
    """C# (``Ubi(Span<ulong> s, ReadOnlySpan<byte> blocks, int n, ulong add)``, s = h, t0, t1):
    one job per byte order (gen/prove/csharp.py's paths); a generator, after the file is read."""
    prog = CsProgram(text, select=lambda name: name == "Ubi")
    fn = prog.functions.get("Ubi")
    if fn is None:
        raise Unsupported("no Ubi method in the class")
    if fn.params != ["s", "blocks", "n", "add"] or fn.spans.get("s") != 8 or fn.spans.get("blocks") != 1:
        raise Unsupported(f"Ubi takes ({', '.join(fn.params)}), not (Span<ulong> s, ReadOnlySpan<byte> blocks, "
                          f"int n, ulong add)")

    def gen():
        for flags, reads in paths(prog):
            def make(flags=flags, reads=reads):
                m = CsMachine(prog, fn, flags, reads)
                entry = m.enter([var("ptr:s"), var("ptr:in"), var("n"), var("add")])
                return m, entry, loop_heads(fn), lambda pc: f"line {fn.stmts[pc].no}"

            def label(flags=flags, reads=reads):
                return f"{prog.cls}.Ubi [{describe(flags, reads)}]"
            yield label, make, UbiContext(v, True, one_array=True), CS_WHAT
    return gen()


def _nasm_jobs(text: str, word_bits: int, v) -> list:
    prog = NasmProgram(text)
    heads = prog.heads()
    abi = abi_of(v)

    def job(name):
        def make():
            m = NasmMachine(prog, word_bits, abi)
            entry = m.enter(name, [var("ptr:h"), var("ptr:tweak"), var("ptr:in"), var("ptr:out"), var("n")])
            return m, entry, heads, lambda pc: f"line {prog.lines[pc].no}"
        return make
    return [(f, job(f), UbiContext(v, False), ASM_WHAT) for f in prog.globals if f.endswith("_ubi_asm")]


# -------------------------------------------------------------------- SIMD C lanes kernels

LANES = {"sse2": 2, "avx": 2, "avx2": 4, "avx512": 8, "neon": 2}
LANES_WHAT = "UBI lanes: out_l = E(h_l, t_l, m_l) ^ m_l for each of {L} lanes"


class LanesContext(Context):
    """One block of L messages.  Rows (C#): lane l's chaining value is in[l*nw ..], its message
    block in[(L + l)*nw ..], its tweak tweak[2l], tweak[2l+1]; out[l*nw + j] is its next h[j].
    Sliced (SIMD C): its chaining value word j is in[j*L + l], its tweak word j tweak[j*L + l],
    its message block m<l>[0 ..]; out[j*L + l] is its next h[j]."""

    def __init__(self, v, lanes: int, sliced: bool = False):
        super().__init__(v.spec.nw, None, induction=_no_loop, finish=_lanes_finish)
        self.spec, self.options, self.lanes, self.sliced = v.spec, v.options, lanes, sliced

    def out_word(self, lane: int, j: int) -> int:
        """The word of ``out`` that holds lane's next h[j]."""
        return j * self.lanes + lane if self.sliced else lane * self.nw + j

    def want(self, lane: int) -> list:
        nw, L = self.nw, self.lanes
        if self.sliced:
            h = [var(f"in[{j * L + lane}]") for j in range(nw)]
            msg = [var(f"m{lane}[{j}]") for j in range(nw)]
            tw = [var(f"tweak[{j * L + lane}]") for j in range(2)]
        else:
            h = [var(f"in[{lane * nw + j}]") for j in range(nw)]
            msg = [var(f"in[{(L + lane) * nw + j}]") for j in range(nw)]
            tw = [var(f"tweak[{2 * lane + j}]") for j in range(2)]
        e = expected(self.spec, self.options, "encrypt", h, tw, msg)
        return [xor(e[j], msg[j]) for j in range(nw)]


def _no_loop(m, head, ctx, line_text):
    raise ProveError(f"a loop at {line_text(head)}: the lanes kernel is one block of each lane")


def _lanes_finish(m, ctx: LanesContext) -> None:
    out = var("ptr:out")
    stored = {}
    for (b, off), (size, t) in m.state.mem.items():
        if b is out:
            if value(off) is None or size != 8:
                raise ProveError(f"stores {size} bytes at out + {show(off)}")
            stored[value(off)] = t
        elif kind(b) in ("in", "tweak") or b.args[0].startswith("ptr:"):
            raise ProveError(f"writes through {stem(b)}")
    want_offs = set(range(0, 8 * ctx.nw * ctx.lanes, 8))
    if set(stored) != want_offs:
        missing = sorted(want_offs - set(stored))
        raise ProveError("output words " + (f"never stored: {[o // 8 for o in missing]}" if missing
                                            else f"outside the {ctx.lanes} lanes"))
    for lane in range(ctx.lanes):
        for j, want in enumerate(ctx.want(lane)):
            got = stored[8 * ctx.out_word(lane, j)]
            if got is not want:
                raise ProveError(f"lane {lane}: h[{j}] differs from the description; first divergence at "
                                 f"{first_divergence(m, got, want)}")
    m.state.segments.append(("straight", 1))


def _cs_lanes_jobs(text: str, v) -> list:
    """C# lanes kernels (``UbiLanes512`` / ``UbiLanes256(ref byte src, ref byte tweaks, ref byte
    dst)``: HashMany and tree leaves), the same contract as the SIMD C ones.  The class calls them
    only where ``BitConverter.IsLittleEndian`` (LaneCount), so each is proved on the little-endian
    path (its byte loads are little-endian words).  A file without them (a render from before
    they existed) has no lanes job."""
    prog = CsProgram(text, select=lambda name: re.fullmatch(r"UbiLanes\d+", name) is not None)
    jobs = []
    for name in prog.selected:
        fn = prog.functions[name]
        if fn.params != ["src", "tweaks", "dst"] or not {"src", "tweaks", "dst"} <= fn.refs:
            raise Unsupported(f"{name} takes ({', '.join(fn.params)}), not (ref byte src, ref byte tweaks, ref byte dst)")
        lanes = int(name[len("UbiLanes"):]) // 64
        if lanes not in LANES.values():
            raise Unsupported(f"{name}: a lanes kernel of {lanes} lanes")
        flags = {LITTLE: True, **{f: True for f in prog.flags}}

        def make(fn=fn, flags=flags):
            m = CsMachine(prog, fn, flags, {LITTLE})
            entry = m.enter([var("ptr:in"), var("ptr:tweak"), var("ptr:out")])
            return m, entry, loop_heads(fn), lambda pc: f"line {fn.stmts[pc].no}"
        jobs.append((f"{prog.cls}.{name} [little-endian]", make, LanesContext(v, lanes), LANES_WHAT.format(L=lanes)))
    return jobs


def _lanes_jobs(text: str, v) -> list:
    prog = SimdProgram(text, select=lambda name: "_ubi_lanes_" in name)
    jobs = []
    for name, fn in prog.functions.items():
        isa = name.rsplit("_", 1)[1]
        if isa not in LANES:
            raise Unsupported(f"{name}: a lanes kernel of an ISA the prover does not know ({isa})")
        msgs = [f"m{lane}" for lane in range(LANES[isa])]
        if fn.params != ["in", "tweaks", "out", *msgs]:
            raise Unsupported(f"{name} takes ({', '.join(fn.params)}), not (in, tweaks, out, {', '.join(msgs)})")
        ctx = LanesContext(v, LANES[isa], sliced=True)

        def make(fn=fn, msgs=msgs):
            m = SimdMachine(prog, fn)
            entry = m.enter([var("ptr:in"), var("ptr:tweak"), var("ptr:out"), *[var(f"ptr:{x}") for x in msgs]])
            return m, entry, loop_heads(fn), lambda pc: f"line {fn.stmts[pc].no}"
        jobs.append((name, make, ctx, LANES_WHAT.format(L=ctx.lanes)))
    if not jobs:
        raise Unsupported("no SIMD lanes kernel (P_ubi_lanes_ISA) in a Skein render with --isa")
    return jobs
