"""The language-independent part of the prover: machine state, memory by (base, offset), path
exploration, loops by induction, and the comparison of output words with the description.

A ``*_blocks`` function is explored path by path: a branch on a term the path does not decide
forks.  A loop head (the target of a backward branch) is proved by induction: one run of the
body from the entry state tells which locations change (pointers advance by a constant, the
counter by -1, the rest is scratch); those become fresh variables (``ptr:in@L`` ...), the body
runs once more from that general state, and its back edge must give back the same state with the
pointers advanced and the counter decremented; every block it stores must equal the description
of the block its pointers name.  Which blocks the paths cover together (the loops' first block
and trip count) is checked for many n.
"""
from __future__ import annotations

import re

from ..errors import GenError
from .terms import (MASK, Term, add, and_, bytes_of, const, evaluate, mul, or_, rotl, show, shr, sub, subst, subterms, value,
                    var, variables, word, xor)


class ProveError(Exception):
    """The program differs from the description (exit 1)."""


class Unsupported(Exception):
    """The text cannot be read as a program of this language (exit 2)."""


INPUTS = ("key", "tweak", "in")
# read-only input pointers by number: the message blocks m0, m1, .. of the SIMD C Skein lanes kernels
NUMBERED_INPUTS = re.compile(r"m\d+")


def is_input(k: str) -> bool:
    """Whether pointer kind ``k`` (:func:`kind`) is a caller's input array: read as words
    ``k[i]``, never written."""
    return k in INPUTS or NUMBERED_INPUTS.fullmatch(k) is not None

# a loop whose test is decided on every run (a counter with a constant bound) is run, not proved
# by induction; the generator's run at most 20 times per path (Threefish-1024 --unroll loop)
TRIP_LIMIT = 10_000
# an integer literal of C or C# (digits and prefix, no suffix): longer is no 64-bit constant
LITERAL_CHARS = 24


def literal(text: str, where: str) -> int:
    """The value of an integer literal (0x.., decimal; suffixes stripped by the caller);
    Unsupported when it does not fit 64 bits (huge literals are refused before they are read)."""
    if len(text) > LITERAL_CHARS:
        raise Unsupported(f"{where}: an integer constant of {len(text):,} characters (wider than 64 bits)")
    v = int(text, 0)
    if v >> 64:
        raise Unsupported(f"{where}: the integer constant {text} is wider than 64 bits")
    return v


def split_top(s: str, brackets: str) -> list[str]:
    """s split at the commas outside brackets (``brackets``: the opening ones, then the closing
    ones, e.g. "([)]"); the parts as written (spaces kept), an empty last part included."""
    half = len(brackets) // 2
    opening, closing = brackets[:half], brackets[half:]
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


class TermLanes:
    """The lane operations of gen/isa/common.py's lane reader over terms, what an ISA module's
    SEMANTICS compute with; a reader adds how it reads its arguments (vec, imm, ...)."""

    const, add, sub, xor, or_, and_, shr, rotl = (staticmethod(f) for f in (const, add, sub, xor, or_, and_, shr, rotl))

    @staticmethod
    def shl(t: Term, k: int) -> Term:
        return mul(t, 1 << k)

    @staticmethod
    def bytes(v: tuple) -> list:
        """The (word, byte) sources of a vector's lanes (gen/prove/terms.py's byte views)."""
        return [b for t in v for b in bytes_of(t)]

    @staticmethod
    def words(bs: list) -> tuple:
        """The lanes of a byte list: each the word itself, a rotation by a multiple of 8, a
        constant, or an opaque ``bytes`` term (gen/prove/terms.py word)."""
        return tuple(word(bs[8 * i:8 * i + 8]) for i in range(len(bs) // 8))

    @staticmethod
    def same(a: Term, b: Term) -> bool:
        return a is b          # terms are hash-consed (gen/prove/terms.py)


def base_of(addr: Term) -> tuple[Term, Term]:
    """(base pointer variable, offset term) of an address."""
    if addr.op == "var" and _is_base(addr):
        return addr, const(0)
    if addr.op == "lin":
        bases = [t for t, k in addr.args[0] if t.op == "var" and _is_base(t) and k == 1]
        if len(bases) == 1:
            return bases[0], sub(addr, bases[0])
    raise ProveError(f"address without one base pointer: {show(addr)}")


def address_text(addr: Term) -> str:
    """'rsp0/aligned@12 - 648' for a base pointer plus a constant offset, else the term."""
    try:
        base, off = base_of(addr)
    except ProveError:
        return show(addr)
    vo = value(off)
    if vo is None:
        return show(addr)
    vo = vo - (1 << 64) if vo >> 63 else vo
    return f"{base.args[0]} {'-' if vo < 0 else '+'} {abs(vo)}" if vo else base.args[0]


def _is_base(t: Term) -> bool:
    return t.args[0].startswith(("ptr:", "rsp0", "sym:"))


def stem(base: Term) -> str:
    """'in', 'tweak@12', ... for a pointer variable ptr:in, ptr:tweak@12."""
    return base.args[0][4:] if base.args[0].startswith("ptr:") else ""


def kind(base: Term) -> str:
    return stem(base).split("@")[0]


class State:
    __slots__ = ("regs", "vregs", "mem", "zf", "assume", "active", "segments")

    def copy(self) -> "State":
        s = State()
        s.regs, s.vregs, s.mem = dict(self.regs), dict(self.vregs), dict(self.mem)
        s.zf = self.zf
        s.assume, s.active, s.segments = dict(self.assume), set(self.active), list(self.segments)
        return s


class Machine:
    """Shared machinery; a language subclass implements step(pc) and the locations."""

    def __init__(self):
        st = State()
        st.regs, st.vregs, st.mem, st.zf = {}, {}, {}, None
        st.assume, st.active, st.segments = {}, set(), []
        self.state = st
        self.rsp0 = var("rsp0")
        self.ret0 = var("ret:caller")
        self.origin: dict = {}
        self.line = None

    def clone(self):
        m = object.__new__(type(self))
        m.__dict__.update(self.__dict__)
        m.state = self.state.copy()
        return m

    def undef(self, name: str) -> Term:
        return var(f"undef:{name}")

    def concrete_head(self, pc: int) -> bool:
        return False

    def return_marker(self, pc: int) -> Term:
        return var(f"ret:{pc}")

    def note(self, t: Term) -> None:
        if self.line is not None and t not in self.origin:
            self.origin[t] = (self.line.no, self.line.text)

    # ---------------------------------------------------------------- locations for loops

    def locations(self) -> dict:
        """Every location the state holds, with its term: ("r", name) a register or scalar
        variable, ("v", name, lane) a lane of a vector, ("m", base, offset) a memory word."""
        st = self.state
        locs = {("r", r): t for r, t in st.regs.items()}
        for r, v in st.vregs.items():
            for i, t in enumerate(v):
                locs[("v", r, i)] = t
        for k, (size, t) in st.mem.items():
            locs[("m",) + k] = t
        return locs

    def set_location(self, loc, t: Term) -> None:
        """Set a location of locations() (one the state holds) to t."""
        st = self.state
        if loc[0] == "r":
            st.regs[loc[1]] = t
        elif loc[0] == "v":
            lanes = list(st.vregs[loc[1]])
            lanes[loc[2]] = t
            st.vregs[loc[1]] = tuple(lanes)
        else:
            size, _ = st.mem[loc[1:]]
            st.mem[loc[1:]] = (size, t)

    # ---------------------------------------------------------------- memory

    def load(self, addr: Term, size: int, tolerant: bool = False) -> Term:
        base, off = base_of(addr)
        mem = self.state.mem
        cell = mem.get((base, off))
        vo = value(off)
        if cell is not None and cell[0] == size:
            return cell[1]
        if size == 8 and vo is not None:     # a constant written as two dwords
            lo, hi = cell, mem.get((base, const(vo + 4)))
            if lo and hi and lo[0] == hi[0] == 4 and value(lo[1]) is not None and value(hi[1]) is not None:
                return const(value(lo[1]) | value(hi[1]) << 32)
        if cell is not None:
            raise ProveError(f"reads {size} bytes at {address_text(addr)}, {cell[0]} were written there")
        k = kind(base)
        if is_input(k) and vo is not None and vo % 8 == 0 and size == 8:
            return var(f"{stem(base)}[{vo // 8}]")
        if is_input(k) and vo is None and size == 8:
            # a word at a symbolic offset (a loop's first run from its entry state: the proof
            # proper reads the same word through the loop's own pointer variable)
            return var(f"{stem(base)}[#{off.id}]")
        if tolerant:      # a vector lane nothing uses (words in xmm lane 0 on x86)
            return var(f"undef:[{show(addr)}]")
        raise ProveError(f"reads memory never written: {address_text(addr)}")

    def store(self, addr: Term, size: int, t: Term) -> None:
        base, off = base_of(addr)
        if is_input(kind(base)):
            raise ProveError(f"writes into the input array {stem(base)}")
        self.note(t)
        if size == 8 and value(off) is not None:
            # a qword store replaces dword halves written before
            vo = value(off)
            self.state.mem.pop((base, const(vo + 4)), None)
        self.state.mem[(base, off)] = (size, t)


# -------------------------------------------------------------------- proving one function

class Context:
    """What the description says: expected(block vars) per direction, block sizes."""

    def __init__(self, nw: int, expected, induction=None, finish=None, steps=None):
        self.nw = nw
        self.bs = 8 * nw
        self.expected = expected        # (tweak stem, in stem, block) -> list of terms
        self.steps = steps              # same arguments -> the description's intermediate terms, or None
        # a primitive with other loops and outputs (Skein's UBI, gen/prove/skein.py) brings its
        # own loop proof (machine, head, ctx, line_text) -> (machine, exit pc) and its own check
        # of a returning path (machine, ctx); default: Threefish blocks stored through out
        self.induction = induction
        self.finish = finish


def label(name) -> str:
    """A job's name (C#: a callable naming the flags the path read, known once it ran)."""
    return name() if callable(name) else name


def record(report, name, prove) -> None:
    """Run one function's proof, ``prove()`` -> its summary, and add its line to ``report``
    (gen/prove/__init__.py's Report): equivalent, or DIFFERS (``report.failed``); a program the
    reader cannot follow is a GenError (exit 2).  ``name``: as label() takes it."""
    try:
        summary = prove()
    except ProveError as e:
        report.failed = True
        report.lines.append(f"{label(name)}: DIFFERS: {e}")
    except Unsupported as e:
        raise GenError(f"{label(name)}: cannot read the program: {e}") from None
    else:
        report.lines.append(f"{label(name)}: equivalent ({summary})")


def prove_function(machine, entry: int, heads: set, ctx: Context, single: bool, line_text) -> str:
    """Explore every path of one function; returns a summary line or raises ProveError."""
    finished = []
    work = [(machine, entry)]
    loops = set()
    trips: dict = {}            # loop head -> runs of a loop that is run (all paths together)
    while work:
        m, pc = work.pop()
        while True:
            if pc in heads and pc not in m.state.active:
                if not m.concrete_head(pc):
                    loops.add(pc)
                    m, pc = (ctx.induction or _induction)(m, pc, ctx, line_text)
                    continue
                trips[pc] = trips.get(pc, 0) + 1
                if trips[pc] > TRIP_LIMIT:
                    raise Unsupported(f"the loop at {line_text(pc)} runs more than {TRIP_LIMIT:,} times "
                                      f"(the prover's trip-count limit)")
            r = m.step(pc)
            if isinstance(r, int):
                pc = r
                continue
            if r[0] == "ret":
                ret = r[1]
                if ret is m.ret0:
                    (ctx.finish or _straight_outputs)(m, ctx)
                    finished.append(m)
                    break
                if ret.op == "var" and ret.args[0].startswith("ret:"):
                    pc = int(ret.args[0][4:])
                    continue
                raise ProveError(f"line {m.line.no}: returns to {show(ret)}, not to the caller")
            _, if_zero, target, fall = r
            zf = m.state.zf
            if zf is None:
                raise Unsupported(f"line {m.line.no}: branch on flags nothing set")
            known = value(zf)
            is_zero = (known == 0) if known is not None else m.state.assume.get(zf)
            if is_zero is None:
                other = m.clone()
                other.state.assume[zf] = False
                m.state.assume[zf] = True
                work.append((other, target if not if_zero else fall))
                is_zero = True
            pc = target if is_zero == if_zero else fall
    _coverage(finished, ctx, single)
    return f"{len(finished)} path(s), {len(loops)} loop(s) proved by induction"


def _straight_outputs(m, ctx: Context) -> None:
    """Blocks stored outside any loop (straight-line single-block code) against the description."""
    out = var("ptr:out")
    stored = {value(off): t for (b, off), (size, t) in m.state.mem.items() if b is out and value(off) is not None}
    if not stored:
        return
    blocks = (max(stored) + 8 + ctx.bs - 1) // ctx.bs
    _check_blocks(m, stored, blocks, ctx, "tweak", "in", blocks, "the function")
    m.state.segments.append(("straight", blocks))


def _check_blocks(m, stored: dict, blocks: int, ctx: Context, tw: str, inn: str, per_iter: int, where: str):
    want_offs = set(range(0, blocks * ctx.bs, 8))
    if set(stored) != want_offs:
        missing = sorted(want_offs - set(stored))
        raise ProveError(f"{where}: output words "
                         f"{'never stored: ' + str([o // 8 for o in missing]) if missing else 'outside the blocks'}")
    for blk in range(blocks):
        exp = ctx.expected(tw, inn, blk)
        for i, e in enumerate(exp):
            got = stored[blk * ctx.bs + 8 * i]
            if got is not e:
                steps = ctx.steps(tw, inn, blk) if ctx.steps else set()
                raise ProveError(_divergence(m, blk, i, got, e, per_iter, steps))


def classify(locs0: dict, locs1: dict, head: int, where: str, skip=()) -> tuple:
    """What one run of a loop body changes, location by location: (ptrs, counter, changed).
    ptrs: kind (in, tweak, out) -> (entry term, stride, fresh variable) of the pointers that
    advance by a constant; counter: (entry term, fresh variable n@head, step) of the location
    that counts down by 1..64 per iteration (or, where none does, counts up by 1..64: a
    ``for (b = 0; b < n; b++)``; its step is then the negative count mod 2^64); changed: loc
    -> ("ptr", kind) | ("counter",) | ("scratch",).  ``skip``: locations the caller classifies."""
    ptrs: dict = {}
    changed: dict = {}
    down, up = [], []
    for loc, t0 in locs0.items():
        if loc in skip:
            continue
        t1 = locs1.get(loc)
        if t1 is t0:
            continue
        d = value(sub(t1, t0)) if t1 is not None else None
        k = None
        if d is not None and t0.op in ("var", "lin"):
            try:
                b, _ = base_of(t0)
                k = kind(b) if kind(b) in ("in", "tweak", "out") else None
            except ProveError:
                k = None
        if k is not None:
            if k in ptrs and ptrs[k][0] is not t0:
                raise ProveError(f"{where}: two different {k} pointers")
            ptrs[k] = (t0, d, ptrs.get(k, (t0, d, var(f"ptr:{k}@{head}")))[2])
            changed[loc] = ("ptr", k)
        elif d is not None and 0 < (-d) & MASK <= 64:
            down.append((loc, t0, (-d) & MASK))
        elif d is not None and 0 < d <= 64:
            up.append((loc, t0, (-d) & MASK))
        else:
            changed[loc] = ("scratch",)
    counter = None
    for loc, t0, step in down or up:
        if counter is not None and counter[0] is not t0:
            raise ProveError(f"{where}: two counters")
        counter = (t0, var(f"n@{head}"), step)
        changed[loc] = ("counter",)
    for loc, _, _ in (up if down else ()):
        changed[loc] = ("scratch",)
    return ptrs, counter, changed


def check_test(test: Term, nvar: Term, head: int, where: str) -> None:
    """A loop test must be a function of its counter and of values the loop does not change
    (the function's inputs, such as n in ``b < n``): no variable of the loop's general state
    (named ``...@head``) but the counter."""
    vs = variables(test)
    mark = re.compile(rf"@{head}(?!\d)")
    if nvar.args[0] not in vs or any(mark.search(v) for v in vs - {nvar.args[0]}):
        raise ProveError(f"{where}: its test {show(test, 2)} is not a function of its counter")


def _run_body(m, head: int, line_text):
    """Run from the loop head to the jump back to it.  A test at the head (a C for loop) is
    taken as passed.  Returns (head test, back edge): head test (zf, exit pc) or None; back
    edge (zf, fall-through pc) of a bottom test, or None for an unconditional jump back."""
    pc = head
    top = None
    for n in range(10 ** 6):
        r = m.step(pc)
        if isinstance(r, int):
            if r == head:
                return top, None
            pc = r
            continue
        if r[0] == "branch":
            _, if_zero, target, fall = r
            zf = m.state.zf
            known = value(zf)
            if n == 0 and target != head and known is None:      # the loop's own test, at its head
                top = (zf, target if if_zero else fall)
                pc = fall if if_zero else target
                continue
            if target == head:        # the back edge (its test may be decided on a first run)
                if if_zero:
                    raise ProveError(f"loop at {line_text(head)}: loops while its counter is zero")
                return top, (zf, fall)
            if known is None:
                raise Unsupported(f"line {m.line.no}: a branch on a value that is not constant inside "
                                  f"the loop at {line_text(head)}")
            nxt = target if (known == 0) == if_zero else fall
            if nxt == head:
                return top, None
            pc = nxt
            continue
        raise Unsupported(f"line {m.line.no}: a return inside the loop body at {line_text(head)}")
    raise Unsupported("loop body does not end")


# ---------------------------------------------------------------- the steps of a loop's induction
# (the blocks loop of Threefish below; Skein's UBI loop, gen/prove/skein.py, adds its carried state)

def first_run(m, head: int, line_text) -> tuple:
    """One run of the loop body at ``head`` from the machine's state: (the locations at entry,
    the machine after the run, its locations) -- what classify() compares."""
    locs0 = m.locations()
    m1 = m.clone()
    m1.state.active.add(head)
    _run_body(m1, head, line_text)
    return locs0, m1, m1.locations()


class GeneralRun:
    """The loop body run once from the general state (general_run): ``machine`` after the run,
    ``at_head`` the general state before it, ``top``/``bottom`` the loop's test (_run_body),
    ``test`` its term, ``locs`` the locations after the run, ``before`` the memory cells the
    general state held."""
    __slots__ = ("machine", "at_head", "top", "bottom", "test", "locs", "before")


def general_run(m, head: int, line_text, where: str, unit: str, locs0: dict, changed: dict, ptrs: dict,
                counter: tuple, fresh=None) -> GeneralRun:
    """Run the body once from the general state: every location that ``changed`` names holds a
    fresh variable (a pointer its ptr:k@head, the counter n@head, scratch undef:..@head; another
    class of location the term ``fresh(loc, what)``).  The back edge must give back the entry
    state with the pointers advanced by their strides and the counter stepped (``unit``: what one
    run of the body handles, for the message), and the loop needs exactly one test, a function of
    its counter; a test at the bottom needs a zero test of the counter before the loop."""
    c0, nvar, step = counter
    mg = m.clone()
    mg.state.active.add(head)
    for loc, what in changed.items():
        if what[0] == "ptr":
            t = ptrs[what[1]][2]
        elif what[0] == "counter":
            t = nvar
        elif what[0] == "scratch":
            t = var(f"undef:{loc[0]}{loc[1:]}@{head}")
        else:
            t = fresh(loc, what)
        mg.set_location(loc, t)
    run = GeneralRun()
    run.machine, run.before, run.at_head = mg, set(mg.state.mem), mg.clone()
    run.top, run.bottom = _run_body(mg, head, line_text)
    run.locs = locsb = mg.locations()
    for loc, t0 in locs0.items():
        what = changed.get(loc)
        if what is None:
            want = t0
        elif what[0] == "ptr":
            want = add(ptrs[what[1]][2], const(ptrs[what[1]][1]))
        elif what[0] == "counter":
            want = sub(nvar, const(step))
        else:
            continue
        if locsb.get(loc) is not want:
            raise ProveError(f"{where}: {_loc_name(loc)} is {show(locsb.get(loc), 2)} after "
                             f"one {unit}, not {show(want, 2)}")
    # the loop test: a term of the counter alone that is zero when the loop ends
    if (run.top is None) == (run.bottom is None):
        raise ProveError(f"{where}: needs exactly one test (at its head or at its end)")
    run.test = run.top[0] if run.top else run.bottom[0]
    check_test(run.test, nvar, head, where)
    if run.bottom is not None:
        vc = value(c0)
        if vc == 0 or (vc is None and m.state.assume.get(c0) is not False):
            raise ProveError(f"{where}: entered without testing its counter for zero")
    return run


def after_loop(run: GeneralRun, head: int, ptrs: dict, counter: tuple, o_in: Term, per_iter: int) -> tuple:
    """The machine after the loop, (machine, pc): T@head trips ran (T bound when coverage
    evaluates): the pointers advanced T strides, the counter T steps (one trip less where the
    test is at the bottom, the general state being one trip in); the loop is a segment of
    ``per_iter`` blocks per trip from the input offset ``o_in``."""
    c0, nvar, step = counter
    trips = var(f"T@{head}")
    done = sub(trips, const(1)) if run.bottom is not None else trips
    mapping = {ptrs[k][2]: add(ptrs[k][0], _scale(done, ptrs[k][1])) for k in ptrs}
    mapping[nvar] = sub(c0, _scale(done, step))
    mx, pc = (run.at_head, run.top[1]) if run.top is not None else (run.machine, run.bottom[1])
    mx.state.assume[run.test] = True
    _substitute(mx, mapping)
    mx.state.segments.append(("loop", head, o_in, per_iter, c0, step, run.test, nvar, run.bottom is not None))
    return mx, pc


def _induction(m, head: int, ctx: Context, line_text):
    """Prove the loop at ``head`` for every trip count; returns (machine, pc) after its exit."""
    where = f"loop at {line_text(head)}"
    locs0, _, locs1 = first_run(m, head, line_text)
    ptrs, counter, changed = classify(locs0, locs1, head, where)
    if set(ptrs) != {"in", "tweak", "out"} or counter is None:
        raise ProveError(f"{where}: pointers advanced {sorted(ptrs)}, counter {'found' if counter else 'missing'}")
    bs = ctx.bs
    k_in, k_tw, k_out = ptrs["in"][1], ptrs["tweak"][1], ptrs["out"][1]
    if k_in % bs or k_out != k_in or k_tw * bs != 16 * k_in or k_in == 0:
        raise ProveError(f"{where}: strides in {k_in}, tweak {k_tw}, out {k_out} "
                         f"are not one count of {bs}-byte blocks and 16-byte tweaks")
    per_iter = k_in // bs
    o_in, o_tw, o_out = (base_of(ptrs[k][0])[1] for k in ("in", "tweak", "out"))
    if o_out is not o_in or sub(o_in, _scale(o_tw, bs // 16)) is not const(0):
        raise ProveError(f"{where}: enters with in, tweak and out at different "
                         f"blocks ({show(o_in)}, {show(o_tw)}, {show(o_out)})")

    # the general state (fresh pointer, counter and scratch variables) run once: every block it
    # stores through the out pointer is the description's block of its pointers
    run = general_run(m, head, line_text, where, "iteration", locs0, changed, ptrs, counter)
    out = ptrs["out"][2]
    stored = {value(off): t for (b, off), (size, t) in run.machine.state.mem.items()
              if b is out and (b, off) not in run.before}
    _check_blocks(run.machine, stored, per_iter, ctx, stem(ptrs["tweak"][2]), stem(ptrs["in"][2]), per_iter,
                  where)
    return after_loop(run, head, ptrs, counter, o_in, per_iter)


def _substitute(m, mapping: dict) -> None:
    st = m.state
    memo: dict = {}
    st.regs = {r: subst(t, mapping, memo) for r, t in st.regs.items()}
    st.vregs = {i: tuple(subst(t, mapping, memo) for t in v) for i, v in st.vregs.items()}
    mem = {}
    for (b, off), (size, t) in st.mem.items():
        if b in mapping:
            b, off = base_of(subst(add(b, off), mapping, memo))
        mem[(b, off)] = (size, subst(t, mapping, memo))
    st.mem = mem
    st.assume = {subst(t, mapping, memo): z for t, z in st.assume.items()}
    if st.zf is not None:
        st.zf = subst(st.zf, mapping, memo)


def _scale(t: Term, k: int) -> Term:
    from .terms import mul
    return mul(t, k)


def _loc_name(loc) -> str:
    if loc[0] == "r":
        return loc[1]
    if loc[0] == "v":
        return f"vector register {loc[1]} lane {loc[2]}"
    return f"memory [{show(loc[1])} + {show(loc[2])}]"


def _divergence(m, blk: int, word: int, got: Term, want: Term, per_iter: int, steps=frozenset()) -> str:
    """The output word and the first instruction whose result is neither part of the description's
    term nor one of the values the description computes on the way (``steps``: partial sums)."""
    lane = f" (block {blk} of {per_iter} per iteration)" if per_iter > 1 else ""
    return f"output word {word}{lane} differs from the description; first divergence at {first_divergence(m, got, want, steps)}"


def first_divergence(m, got: Term, want: Term, steps=frozenset()) -> str:
    """'line N: text' of the first instruction whose result is not part of the description's
    term.  A word of the input the description's word does not read (it came through a wrong
    load or a wrong lane move) is named with the lines that moved it between vector lanes
    (``m.moves``, kept by the vector readers): a shuffle makes no new term.  ``steps``: values
    the description computes on the way (partial sums), not divergences either."""
    inside = subterms(want) | steps
    cands = [(m.origin[t], t) for t in subterms(got) if t not in inside and t in m.origin]
    if not cands:
        where = m.origin.get(got)
        return f"line {where[0]}: {where[1]}" if where else "?"
    where, t = min(cands, key=lambda c: (c[0], c[1].id))     # a tie on one line: the first term made, not set order
    moved = getattr(m, "moves", {}).get(t) if t.op == "var" else None
    extra = (f" ({show(t)}, which the description's word does not read, moved by line(s) "
             f"{', '.join(map(str, moved))})" if moved else "")
    return f"line {where[0]}: {where[1]}{extra}"


def _coverage(finished, ctx: Context, single: bool) -> None:
    """The paths together store blocks 0..n-1, each once: for many n, exactly one path's
    assumptions hold, and its loops (first block, trip count from the loop test) tile 0..n-1."""
    if not finished:
        raise ProveError("no path returns")
    ns = [1] if single else list(range(0, 40)) + [255, 256, 257, 1000, 1 << 20, (1 << 32) + 7]
    for n in ns:
        hits, why = [], None
        for m in finished:
            env = {"n": n}
            try:
                pos = _tile(m, env, ctx, n)
                ok = all((evaluate(t, env) == 0) == z for t, z in m.state.assume.items())
            except KeyError as e:
                raise ProveError(f"a path's conditions depend on more than n ({e})") from None
            except ProveError as e:     # a loop of a path that does not apply to this n
                ok, why = False, why or str(e)
            if ok:
                hits.append((m, pos))
        if len(hits) != 1:
            raise ProveError(why if not hits and why else f"n = {n}: {len(hits)} paths apply")
        if hits[0][1] != n:
            raise ProveError(f"n = {n}: the function stores {hits[0][1]} blocks")


def _tile(m, env: dict, ctx: Context, n: int) -> int:
    """Blocks stored in order from block 0 (binds each loop's trip count T@head in env)."""
    pos = 0
    for seg in m.state.segments:
        if seg[0] == "straight":
            pos += seg[1]
            continue
        _, head, o_in, per_iter, c0, step, test, nvar, bottom = seg
        count = evaluate(c0, env)
        trips = _trips(count, step, test, nvar, bottom, env, n)
        env[f"T@{head}"] = trips
        start = evaluate(o_in, env)
        if trips and start != pos * ctx.bs:
            raise ProveError(f"n = {n}: a loop starts at block {start // ctx.bs}, not {pos}")
        pos += per_iter * trips
    return pos


def _trips(count: int, step: int, test: Term, nvar: Term, bottom: bool, env: dict, n: int) -> int:
    """How often a loop runs: the first trip whose test is zero.  Counted one by one up to
    4096 trips; beyond, by bisection when the test is monotone in the counter (the counter
    itself or the counter shifted right: zero exactly below a bound; a counter that counts up
    against a bound, ``lt(counter, bound)``: zero from the bound on)."""
    at = dict(env)              # env with the counter set (one copy, not one per trip)
    name = nvar.args[0]

    def zero_at(trips):
        at[name] = (count - step * (trips - 1 if bottom else trips)) & MASK
        return evaluate(test, at) == 0

    first = 1 if bottom else 0
    limit = min(n + 64, first + 4096)
    for trips in range(first, limit + 1):
        if zero_at(trips):
            return trips
    if limit >= n + 64:
        raise ProveError(f"n = {n}: a loop does not end within {n + 64} trips")
    k = value(sub(nvar, test))
    if k is not None:           # the test is counter - k: zero exactly when the counter is k
        k &= MASK
        if count < k or (count - k) % step:
            raise ProveError(f"n = {n}: a loop does not end")
        return (count - k) // step + first
    up = step >> 63              # a counter that counts up (step = -d mod 2^64)
    if not ((test is nvar or (test.op in ("shr", "ge") and test.args[0] is nvar)) and not up
            or test.op == "lt" and test.args[0] is nvar and up):
        raise ProveError(f"n = {n}: a loop does not end within {n + 64} trips")
    lo, hi = limit, max(first, count // step + first)      # zero_at(lo) is false, zero_at(hi) true
    while up and not zero_at(hi) and hi < 1 << 64:          # up to a bound: the first power of two past it
        hi = max(2 * hi, 1)
    if not zero_at(hi):
        raise ProveError(f"n = {n}: a loop does not end")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if zero_at(mid) else (mid, hi)
    return hi
