"""Stage 4 -- register allocation for the assembly targets.

Input: the description's program (``gen/threefish.py``), lowered by
:func:`lower` into *machine ops on values*: the same two-address operations,
with memory operands resolved to (pointer value, byte offset) or a stack
array, plus the function's own values -- the argument pointers ``key``,
``tweak``, ``in``, ``out`` and the block count ``n`` -- and the block loop
(``guard``/``top``/``bottom``).  A target describes its machine with an
:class:`ISA` (register classes, which memory operand forms exist, how a rotate
is lowered); the allocator then maps every value to registers and stack slots.

Liveness is over the straight-line program; the block loop is the one loop:
a value live into the loop (key words, pointers, the counter) is live through
the whole loop body.

Strategies (``STRATEGIES``):

``named``
    qhasm style: every register value keeps one register for its whole life,
    values of the *stack groups* (default: key and tweak words) live in stack
    slots and are used as memory operands.  Nothing is spilled; if the
    register values do not fit, allocation fails with the values live there.
``linear-scan``
    Poletto/Sarkar linear scan over live intervals; when registers run out the
    interval that ends furthest away is spilled for its whole life (its uses
    become memory operands or go through reserved scratch registers).
``belady``
    Walks the program keeping values in registers; when a register is needed
    and none is free, the value whose next use is furthest away is evicted
    (stored only if its stack copy is stale).  For straight-line code this is
    the optimal number of reloads (Belady's MIN).

Everywhere a spilled value is only read, a memory operand is used instead of a
reload when the ISA has that form (``add r64, m64``; ``paddq xmm, m128`` from
an aligned stack slot).  ``pinned`` values (``--pin k,t,x,p`` or value names)
get one fixed register for their whole life under every strategy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .dsl import Idx, Loop, Mem, Op
from .errors import GenError
from .threefish import Program

STRATEGIES = ("named", "linear-scan", "belady")
# Kinds whose destination is written without being read (everything else is dst op= src):
# mov; the packed layout's lane swap (pshufd) and 128-bit load (movdqu).
DEFS = ("mov", "swap", "ldu")
POINTERS = ("key", "tweak", "in", "out", "n")
GROUPS = {"k": "key words k0..kN", "t": "tweak words t0, t1, t2",
          "x": "state words x0..", "p": "pointers key/tweak/in/out and the count n"}


# --------------------------------------------------------------------------- machine ops on values

@dataclass(frozen=True)
class Addr:
    """A 64-bit memory word: ``base`` is a pointer value (caller memory) or None (the stack
    frame); ``array`` names the array (stack arrays: ks, const), ``index`` its word index,
    ``offset`` the byte offset from the pointer."""

    base: str | None
    array: str
    index: int
    offset: int = 0

    def __str__(self) -> str:
        return f"{self.array}[{self.index}]"


@dataclass(frozen=True)
class Imm:
    value: int


@dataclass(frozen=True)
class MOp:
    """kind: mov add sub xor or rol ror shl shr (dst op= src), store (addr = src),
    guard (skip the loop if src == 0), top / bottom (block loop), note."""

    kind: str
    dst: str | None = None
    src: object = None          # value name, Addr, Imm, or int (shift/rotate count)
    addr: Addr | None = None    # store target
    text: str = ""              # the description statement this implements

    def reads(self) -> list[str]:
        r = []
        if isinstance(self.src, str):
            r.append(self.src)
        for a in (self.src, self.addr):
            if isinstance(a, Addr) and a.base:
                r.append(a.base)
        if self.kind not in DEFS + ("store", "guard", "note", "top", "bottom") and self.dst:
            r.append(self.dst)
        return r

    def writes(self) -> str | None:
        return self.dst if self.kind not in ("store", "guard", "note", "top", "bottom") else None


# --------------------------------------------------------------------------- ISA description

@dataclass
class ISA:
    """What the allocator needs to know about a machine."""

    name: str
    regs: dict              # class -> registers in allocation order
    data_class: str         # class of the 64-bit words
    ptr_class: str          # class of pointers and the count
    slot_bytes: int         # stack slot size (16 for XMM: aligned m128 operands)
    scratch: dict           # class -> scratch registers the fixed strategies reserve when spilling
    mem_ops: dict           # (kind, class) -> set of memory kinds allowed as src: 'stack', 'ptr'
    rotate: str = "native"  # native rol/ror, or 'shift': tmp = x; x <<= n; tmp >>= 64-n; x |= tmp
    imm_ok: object = None   # fn(kind, cls, value) -> bool: immediate operand encodable
    arg_regs: dict = field(default_factory=dict)   # pointer value -> register at entry (else stack)
    lanes: int = 1          # blocks per pass (word-sliced vectors: lane b holds block b's word)
    layout: str = "scalar"  # 'packed': every data value is a whole 128-bit XMM (gen/lower_packed.py)

    def cls(self, v: str) -> str:
        return self.ptr_class if v in POINTERS else self.data_class

    def mem_ok(self, kind: str, cls: str, a) -> bool:
        if not isinstance(a, Addr):
            return True
        return ("stack" if a.base is None else "ptr") in self.mem_ops.get((kind, cls), ())


# --------------------------------------------------------------------------- lowering

SCHEDULES = ("description", "interleave")


class Lowering:
    """Description ops -> machine ops on values (``emit``), appended to ``out``; shared by
    :func:`lower` and the packed layout's lowering (``gen/lower_packed.py``)."""

    def __init__(self, isa: ISA):
        self.isa = isa
        self.out: list[MOp] = []
        self.tmp_count = 0

    @staticmethod
    def operand(a):
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            if a.index.scale:
                raise GenError("the nasm targets need --unroll full (no affine indices)")
            i = a.index.base
            base = a.array if a.array in ("key", "tweak", "in", "out") else None
            return Addr(base, a.array, i, 8 * i)
        if isinstance(a, Idx):
            if a.scale:
                raise GenError("the nasm targets need --unroll full (no affine immediates)")
            return Imm(a.base)
        raise AssertionError(a)

    def fresh(self) -> str:
        self.tmp_count += 1
        return f"r{self.tmp_count}"

    def emit(self, op: Op) -> None:
        isa, out, operand = self.isa, self.out, self.operand
        text = op.text()
        if op.kind == "note":
            out.append(MOp("note", text=str(op.a)))
            return
        if op.kind == "store":
            out.append(MOp("store", src=op.dst, addr=operand(op.a), text=text))
            return
        if op.kind in ("rotl", "rotr"):
            n = op.a if op.kind == "rotl" else 64 - op.a
            if isa.rotate == "native":
                out.append(MOp("rol", op.dst, n, text=text))
            else:
                t = self.fresh()
                out.extend([MOp("mov", t, op.dst, text=text), MOp("shl", op.dst, n, text=text),
                        MOp("shr", t, 64 - n, text=text), MOp("or", op.dst, t, text=text)])
            return
        src = operand(op.a)
        cls = isa.cls(op.dst)
        if isinstance(src, Imm) and not isa.imm_ok(op.kind, cls, src.value):
            src = Addr(None, "const", src.value)
        out.append(MOp(op.kind, op.dst, src, text=text))

    def loop_tail(self, prog: Program) -> None:
        """Advance the pointers by one pass, count ``n`` down, close the block loop."""
        lanes = self.isa.lanes
        nb = prog.spec.block_bytes * prog.blocks * lanes
        out = self.out
        out.append(MOp("note", text="next block"))
        out.append(MOp("add", "tweak", Imm(16 * prog.blocks * lanes), text=f"tweak += {16 * prog.blocks * lanes}"))
        out.append(MOp("add", "in", Imm(nb), text=f"in += {nb}"))
        out.append(MOp("add", "out", Imm(nb), text=f"out += {nb}"))
        out.append(MOp("sub", "n", Imm(1), text="n -= 1"))
        out.append(MOp("bottom", text="while n != 0"))


def lower(prog: Program, isa: ISA, schedule: str = "description") -> list[MOp]:
    """The machine ops of ``PREFIX{direction}_blocks(key, tweaks, in, out, n)``:
    setup once, then the body for each block, pointers advanced, ``n`` counted down."""
    low = Lowering(isa)
    out, emit = low.out, low.emit

    for item in prog.setup:
        if isinstance(item, Loop):
            raise GenError("the nasm targets need --unroll full")
        emit(item)
    pending: list[Op] = []     # the MIX operations of one round, by MIX index

    def flush_round() -> None:
        """Interleave the independent MIXes of a round (ILP for in-order issue and the
        decoders): first op of every MIX, then the second, then the third."""
        groups: dict = {}
        for op in pending:
            groups.setdefault(op.tag, []).append(op)
        for k in range(max((len(g) for g in groups.values()), default=0)):
            for g in groups.values():
                if k < len(g):
                    emit(g[k])
        pending.clear()
    out.append(MOp("guard", src="n", text="if n == 0 return"))
    out.append(MOp("top", text="for each block"))
    for item in prog.body:
        if isinstance(item, Loop):
            raise GenError("the nasm targets need --unroll full")
        if schedule == "interleave" and item.tag and item.tag[0] in ("mix", "unmix"):
            if pending and pending[0].tag[:2] != item.tag[:2]:
                flush_round()
            pending.append(item)
            continue
        flush_round()
        emit(item)
    flush_round()
    low.loop_tail(prog)
    return out


# --------------------------------------------------------------------------- liveness

def _loop_bounds(ops: list[MOp]) -> tuple[int, int]:
    top = next(i for i, o in enumerate(ops) if o.kind == "top")
    bottom = next(i for i, o in enumerate(ops) if o.kind == "bottom")
    return top, bottom


def carried(ops: list[MOp]) -> set[str]:
    """Values live into the block loop: read in the loop before (or without) being written."""
    top, bottom = _loop_bounds(ops)
    written, live = set(), set()
    for o in ops[top:bottom]:
        for r in o.reads():
            if r not in written:
                live.add(r)
        w = o.writes()
        if w and o.kind in DEFS:
            written.add(w)
    return live


def intervals(ops: list[MOp]) -> dict[str, tuple[int, int]]:
    """Live interval [first def, last use] of every value; loop-carried values span the loop."""
    top, bottom = _loop_bounds(ops)
    iv: dict[str, list[int]] = {}
    for v in POINTERS:
        iv[v] = [-1, -1]          # defined at entry (arguments)
    for i, o in enumerate(ops):
        for v in o.reads():
            iv.setdefault(v, [i, i])[1] = i
        w = o.writes()
        if w:
            iv.setdefault(w, [i, i])
            iv[w][1] = max(iv[w][1], i)
    for v in carried(ops):
        iv[v][1] = max(iv[v][1], bottom)
    return {v: (a, b) for v, (a, b) in iv.items() if b >= 0}


def next_uses(ops: list[MOp]) -> list[dict[str, int]]:
    """nxt[i][v]: position of v's next read after op i (carried values: the loop bottom,
    where they must be back in their home, when no read is left in the iteration)."""
    top, bottom = _loop_bounds(ops)
    car = carried(ops)
    n = len(ops)
    nxt: list[dict[str, int]] = [dict() for _ in range(n)]
    cur: dict[str, int] = {}
    for i in range(n - 1, -1, -1):
        if i == bottom - 1 or (top <= i < bottom - 1 and False):
            pass
        nxt[i] = dict(cur)
        if top <= i < bottom:
            for v in car:
                nxt[i].setdefault(v, bottom)
        w = ops[i].writes()
        if w and ops[i].kind in DEFS:
            cur.pop(w, None)
        for v in ops[i].reads():
            cur[v] = i
    return nxt


def group_of(v: str) -> str:
    if v in POINTERS:
        return "p"
    m = re.match(r"^([a-z]+?)[a-d]?(\d+|k)$", v)
    if m and m.group(1) in ("k", "t", "x"):
        return m.group(1)
    if re.match(r"^t[a-d]?(k|\d+h)$", v):      # tk (table temporary), t1h (packed: t1 in the high lane)
        return "t"
    return "?"


def select(spec_text: str, names) -> set[str]:
    """Values named by a list like 'k,t' (groups) or 'x0,x1,in' (values)."""
    chosen: set[str] = set()
    names = list(names)
    for part in [p.strip() for p in spec_text.split(",") if p.strip()]:
        if part in GROUPS:
            chosen |= {v for v in names if group_of(v) == part}
        elif part in names:
            chosen.add(part)
        else:
            raise GenError(f"--pin: unknown value or group {part!r} (groups: {', '.join(GROUPS)}; "
                           f"or value names like x0, k3, in)")
    return chosen


# --------------------------------------------------------------------------- output

@dataclass(frozen=True)
class Reg:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Slot:
    """A stack location: ('v', value) spill slot, ('a', array, index) stack array word,
    ('const', value) constant, ('arg', name) incoming argument."""

    key: tuple


@dataclass(frozen=True)
class PtrMem:
    reg: Reg
    offset: int
    array: str = ""           # caller array (key, tweak, in, out): lanes targets gather/broadcast by it


@dataclass
class AOp:
    """An allocated instruction: kind as MOp plus spill/reload/move; operands are Reg, Slot,
    PtrMem, Imm or int.  ``cls`` picks the instruction table; ``text`` is the comment."""

    kind: str
    cls: str
    dst: object = None
    src: object = None
    text: str = ""
    role: str = ""            # '', 'spill', 'reload', 'move', 'memop'


@dataclass
class Allocation:
    strategy: str
    code: list
    homes: dict               # value -> sorted registers it lived in
    slots: list               # slot keys in frame order
    used: dict                # class -> registers used
    stats: dict

    def registers_used(self) -> int:
        return sum(len(v) for v in self.used.values())


class _Emitter:
    def __init__(self, isa: ISA, strategy: str):
        self.isa = isa
        self.code: list[AOp] = []
        self.slots: dict = {}
        self.homes: dict[str, set] = {}
        self.stats = dict(spills=0, reloads=0, moves=0, memops=0)

    def slot(self, key: tuple) -> Slot:
        self.slots.setdefault(key, len(self.slots))
        return Slot(key)

    def vslot(self, v: str) -> Slot:
        if v in POINTERS and v not in self.isa.arg_regs:
            return self.slot(("arg", v))
        return self.slot(("v", v))

    def emit(self, op: AOp) -> None:
        if op.role in ("spill", "reload", "move", "memop"):
            self.stats[op.role + "s"] += 1
        self.code.append(op)

    def home(self, v: str, r: str) -> None:
        self.homes.setdefault(v, set()).add(r)


def _parallel_move(em: _Emitter, cls: str, moves: list[tuple[str, str, str]]) -> None:
    """Registers src -> dst all at once (value names for comments); cycles via xchg."""
    moves = [(s, d, v) for s, d, v in moves if s != d]
    while moves:
        srcs = {s for s, _, _ in moves}
        ready = [m for m in moves if m[1] not in srcs]
        if ready:
            s, d, v = ready[0]
            em.emit(AOp("mov", cls, Reg(d), Reg(s), f"{v}: {s} -> {d}", "move"))
            moves.remove(ready[0])
            continue
        s, d, v = moves[0]
        em.emit(AOp("xchg", cls, Reg(d), Reg(s), f"{v}: {s} <-> {d}", "move"))
        moves = [(d if ms == s else (s if ms == d else ms), md, mv) for ms, md, mv in moves[1:]]
        moves = [m for m in moves if m[0] != m[1]]


# --------------------------------------------------------------------------- fixed assignments

def _color(ops, isa: ISA, regs_of: dict, values: set[str], fail_named: bool, pinned=frozenset()):
    """Interval colouring of ``values`` (one register per value for its whole life), pinned
    values first, then by interval start.  Returns (assignment, spilled).  With fail_named,
    running out of registers is a GenError naming the values live there; otherwise the
    interval that ends furthest away is spilled (linear scan)."""
    iv = intervals(ops)
    order = sorted((v for v in values if v in iv), key=lambda v: (v not in pinned, iv[v][0], v))
    assign: dict[str, str] = {}
    spilled: set[str] = set()

    def overlap(a: str, b: str) -> bool:
        (s1, e1), (s2, e2) = iv[a], iv[b]
        return s1 < e2 and s2 < e1 or s1 == s2

    for v in order:
        cls = isa.cls(v)
        taken = {assign[a] for a in assign if overlap(a, v)}
        free = [r for r in regs_of[cls] if r not in taken]
        if free:
            pref = isa.arg_regs.get(v)
            assign[v] = pref if pref in free else free[0]
            continue
        if fail_named:
            start = max(iv[v][0], 0)
            live = sorted((a for a in values if a in iv and isa.cls(a) == cls
                           and iv[a][0] <= start <= iv[a][1]), key=_natural)
            raise GenError(f"cannot allocate {v}: {len(live)} {cls} values live at {_where(ops, iv[v][0])} "
                           f"({', '.join(live)}) but only {len(regs_of[cls])} {cls} registers")
        cands = [a for a in assign if a not in pinned and isa.cls(a) == cls and overlap(a, v)]
        far = max(cands, key=lambda a: (iv[a][1], a), default=None)
        if far is not None and iv[far][1] > iv[v][1]:
            r = assign.pop(far)
            spilled.add(far)
            if not any(assign[a] == r and overlap(a, v) for a in assign):
                assign[v] = r
                continue
        spilled.add(v)
    return assign, spilled


def _natural(v: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v)]


def _where(ops, i: int) -> str:
    if i < 0:
        return "function entry"
    o = ops[i]
    return f"op {i} '{o.text or o.kind}'"


def _fixed_emit(ops, isa: ISA, strategy: str, assign: dict, stack: set, scratch: dict) -> _Emitter:
    """Emit code for a fixed assignment: values in ``assign`` live in their register, values in
    ``stack`` in their slot; slot values go through memory operands or the scratch registers."""
    em = _Emitter(isa, strategy)
    for v, r in assign.items():
        em.home(v, r)
    # entry: arguments from their ABI registers (or stack) to their homes
    moves = []
    for v in POINTERS:
        src = isa.arg_regs.get(v)
        if v in assign:
            if src:
                moves.append((src, assign[v], v))
        elif src and v in stack:
            em.emit(AOp("mov", isa.ptr_class, em.vslot(v), Reg(src), f"{v} to its stack slot", "spill"))
    _parallel_move(em, isa.ptr_class, moves)
    for v in POINTERS:
        if v in assign and not isa.arg_regs.get(v):
            em.emit(AOp("mov", isa.ptr_class, Reg(assign[v]), em.vslot(v), f"{v} from the stack", "reload"))

    def loc(v: str):
        return Reg(assign[v]) if v in assign else em.vslot(v)

    for o in ops:
        if o.kind == "note":
            em.code.append(AOp("note", "", text=o.text))
            continue
        if o.kind in ("top", "bottom"):
            em.code.append(AOp(o.kind, "", text=o.text))
            continue
        free = {c: list(rs) for c, rs in scratch.items()}

        def take(cls: str) -> str:
            if not free.get(cls):
                raise GenError(f"{strategy}: no scratch {cls} register for '{o.text}' "
                               f"(raise --registers or pin fewer values)")
            return free[cls].pop(0)

        def mem(a: Addr):
            if a.base is None:
                key = ("const", a.index) if a.array == "const" else ("a", a.array, a.index)
                return em.slot(key)
            b = loc(a.base)
            if isinstance(b, Slot):
                r = take(isa.ptr_class)
                em.emit(AOp("mov", isa.ptr_class, Reg(r), b, f"reload {a.base} for '{o.text}'", "reload"))
                b = Reg(r)
            return PtrMem(b, a.offset, a.array)

        if o.kind == "guard":
            em.emit(AOp("guard", isa.ptr_class, None, loc("n"), o.text))
            continue
        if o.kind == "store":
            cls = isa.cls(o.src)
            s = loc(o.src)
            if isinstance(s, Slot):
                r = take(cls)
                em.emit(AOp("mov", cls, Reg(r), s, f"reload {o.src} for '{o.text}'", "reload"))
                s = Reg(r)
            a = mem(o.addr)
            em.emit(AOp("mov", cls, a, s, o.text))
            continue
        cls = isa.cls(o.dst)
        src = o.src
        if isinstance(src, str):
            s = loc(src)
            if isinstance(s, Slot) and not isa.mem_ok(o.kind, cls, Addr(None, "", 0)):
                r = take(cls)
                em.emit(AOp("mov", cls, Reg(r), s, f"reload {src} for '{o.text}'", "reload"))
                s = Reg(r)
            elif isinstance(s, Slot):
                em.stats["memops"] += 1
            src_op = s
        elif isinstance(src, Addr):
            m = mem(src)
            if not isa.mem_ok(o.kind, cls, src):
                r = take(cls)
                em.emit(AOp("mov", cls, Reg(r), m, f"load {src} for '{o.text}'"))
                src_op = Reg(r)
            else:
                src_op = m
        elif isinstance(src, Imm):
            src_op = src
        else:
            src_op = src
        d = loc(o.dst)
        if isinstance(d, Slot):
            r = take(cls)
            if o.kind not in DEFS:
                em.emit(AOp("mov", cls, Reg(r), d, f"reload {o.dst} for '{o.text}'", "reload"))
            em.emit(AOp(o.kind, cls, Reg(r), src_op, o.text))
            em.emit(AOp("mov", cls, d, Reg(r), f"spill {o.dst}", "spill"))
        else:
            if o.kind == "mov" and src_op == d:
                continue
            em.emit(AOp(o.kind, cls, d, src_op, o.text, "move" if o.kind == "mov" and isinstance(src_op, Reg) else ""))
    return em


# --------------------------------------------------------------------------- belady

def _belady_emit(ops, isa: ISA, pool: dict, pinned: dict) -> _Emitter:
    em = _Emitter(isa, "belady")
    nxt = next_uses(ops)
    top, bottom = _loop_bounds(ops)
    car = carried(ops)
    for v, r in pinned.items():
        em.home(v, r)
    where: dict[str, str] = {}      # value -> register (unpinned values in registers)
    owner: dict[str, str] = {}      # register -> value
    dirty: set[str] = set()         # register copy newer than the stack copy

    # entry: pointer arguments
    moves = []
    for v in POINTERS:
        src = isa.arg_regs.get(v)
        if v in pinned:
            if src:
                moves.append((src, pinned[v], v))
        elif src and src in pool[isa.ptr_class] and src not in pinned.values():
            where[v], owner[src] = src, v
            dirty.add(v)
            em.home(v, src)
        elif src:
            em.emit(AOp("mov", isa.ptr_class, em.vslot(v), Reg(src), f"{v} to its stack slot", "spill"))
    # pinned registers that receive arguments must not hold live unpinned arguments first
    for s, d, v in moves:
        if d in owner:
            u = owner.pop(d)
            del where[u]
            dirty.discard(u)
            em.emit(AOp("mov", isa.ptr_class, em.vslot(u), Reg(d), f"{u} to its stack slot", "spill"))
    _parallel_move(em, isa.ptr_class, moves)
    for v in POINTERS:
        if v in pinned and not isa.arg_regs.get(v):
            em.emit(AOp("mov", isa.ptr_class, Reg(pinned[v]), em.vslot(v), f"{v} from the stack", "reload"))

    def regof(v):
        if v in pinned:
            return pinned[v]
        return where.get(v)

    def drop(v):
        r = where.pop(v)
        del owner[r]
        dirty.discard(v)

    def get_reg(cls: str, i: int, busy: set) -> str:
        for r in pool[cls]:
            if r not in owner and r not in busy:
                return r
        cands = [r for r in pool[cls] if r not in busy]
        if not cands:
            live = sorted({owner.get(r, r) for r in busy} | {v for v in where if isa.cls(v) == cls}
                          | {v for v in pinned if isa.cls(v) == cls}, key=_natural)
            raise GenError(f"belady: no {cls} register left for '{ops[i].text}': live there "
                           f"{', '.join(live)} ({len(pool[cls])} {cls} registers)")
        # furthest next use; among equals prefer clean (no store needed)
        def score(r):
            v = owner[r]
            return (nxt[i - 1].get(v, 1 << 30) if i else 1 << 30, v not in dirty, r)
        r = max(cands, key=score)
        v = owner[r]
        if v in dirty and (nxt[i - 1].get(v) is not None or v in car):
            em.emit(AOp("mov", cls, em.vslot(v), Reg(r), f"spill {v}", "spill"))
        drop(v)
        return r

    def load(v: str, i: int, busy: set, why: str) -> str:
        r = regof(v)
        if r:
            return r
        cls = isa.cls(v)
        r = get_reg(cls, i, busy)
        em.emit(AOp("mov", cls, Reg(r), em.vslot(v), f"reload {v} for '{why}'", "reload"))
        where[v], owner[r] = r, v
        em.home(v, r)
        return r

    def free_dead(i: int):
        for v in list(where):
            if nxt[i].get(v) is None:
                drop(v)

    top_i = next(i for i, o in enumerate(ops) if o.kind == "top")
    written_in_loop = {o.writes() for o in ops[top_i:bottom] if o.writes()}
    header: dict[str, str] = {}
    # A class keeps its carried values in registers across the loop only if they fit beside
    # the values each block needs at its peak; otherwise they live in their stack slots at
    # the loop header (reloaded on demand, used as memory operands) -- restoring evicted
    # header registers every block costs more than it saves under pressure.
    iv = intervals(ops)
    keep_class = {}
    for c, rs in pool.items():
        peak = max((sum(1 for v, (a, b) in iv.items() if isa.cls(v) == c and v not in car and v not in pinned
                        and a <= i <= b) for i in range(top_i, bottom)), default=0)
        ncar = sum(1 for v in car if isa.cls(v) == c and v not in pinned)
        keep_class[c] = ncar + peak <= len(rs)

    def flush():
        for v in sorted(where):
            if v in dirty and v in car:
                em.emit(AOp("mov", isa.cls(v), em.vslot(v), Reg(where[v]), f"{v} back to its stack slot", "spill"))
                dirty.discard(v)

    for i, o in enumerate(ops):
        if o.kind == "note":
            em.code.append(AOp("note", "", text=o.text))
            continue
        if o.kind == "top":
            # loop header state: carried values in registers stay there (their stack copies
            # are written once here); the loop bottom puts them back where they were
            flush()
            for v in list(where):
                if v not in car or not keep_class.get(isa.cls(v)):
                    drop(v)
            header = dict(where)
            for v in header:
                if v in written_in_loop:
                    dirty.add(v)      # its stack copy goes stale on later iterations
            em.code.append(AOp("top", "", text=o.text))
            continue
        if o.kind == "bottom":
            for v in sorted(where, key=_natural):
                if v in car and v in dirty and header.get(v) != where[v]:
                    em.emit(AOp("mov", isa.cls(v), em.vslot(v), Reg(where[v]),
                                f"{v} back to its stack slot", "spill"))
                    dirty.discard(v)
            for v, r in sorted(header.items(), key=lambda t: _natural(t[0])):
                if where.get(v) != r:
                    em.emit(AOp("mov", isa.cls(v), Reg(r), em.vslot(v),
                                f"{v} back into {r} for the next block", "reload"))
            em.code.append(AOp("bottom", "", text=o.text))
            continue
        busy: set[str] = set()

        def hold(r):
            busy.add(r)
            return r

        def mem(a: Addr):
            if a.base is None:
                key = ("const", a.index) if a.array == "const" else ("a", a.array, a.index)
                return em.slot(key)
            return PtrMem(Reg(hold(load(a.base, i, busy, o.text))), a.offset, a.array)

        if o.kind == "guard":
            r = regof("n")
            em.emit(AOp("guard", isa.ptr_class, None, Reg(r) if r else em.vslot("n"), o.text))
            free_dead(i)
            continue
        if o.kind == "store":
            a = mem(o.addr)
            s = Reg(hold(load(o.src, i, busy, o.text)))
            em.emit(AOp("mov", isa.cls(o.src), a, s, o.text))
            free_dead(i)
            continue
        cls = isa.cls(o.dst)
        src = o.src
        if isinstance(src, str):
            r = regof(src)
            if r:
                src_op = Reg(hold(r))
            elif isa.mem_ok(o.kind, cls, Addr(None, "", 0)):
                src_op = em.vslot(src)
                em.stats["memops"] += 1
            else:
                src_op = Reg(hold(load(src, i, busy, o.text)))
        elif isinstance(src, Addr):
            m = mem(src)
            if not isa.mem_ok(o.kind, cls, src) and o.kind != "mov":
                t = get_reg(cls, i, busy | {r for r in busy})
                hold(t)
                em.emit(AOp("mov", cls, Reg(t), m, f"load {src} for '{o.text}'"))
                src_op = Reg(t)
            else:
                src_op = m
        else:
            src_op = src
        d = o.dst
        if o.kind in DEFS:
            rd = regof(d)
            if rd is None:
                # a value copy whose source dies here takes over the source's register
                if o.kind == "mov" and isinstance(src, str) and src in where and nxt[i].get(src) is None and src not in car:
                    r = where[src]
                    drop(src)
                    where[d], owner[r] = r, d
                    dirty.add(d)
                    em.home(d, r)
                    free_dead(i)
                    continue
                rd = get_reg(cls, i, busy)
                where[d], owner[rd] = rd, d
                em.home(d, rd)
            em.emit(AOp(o.kind, cls, Reg(rd), src_op, o.text,
                        "move" if o.kind == "mov" and isinstance(src_op, Reg) else ""))
        else:
            rd = load(d, i, busy, o.text)
            em.emit(AOp(o.kind, cls, Reg(rd), src_op, o.text))
        if d not in pinned:
            dirty.add(d)
        free_dead(i)
    return em


# --------------------------------------------------------------------------- driver

def allocate(ops: list[MOp], isa: ISA, strategy: str = "belady", registers: int | None = None,
             pin: str = "", stack: str = "k,t") -> Allocation:
    """Allocate registers for lowered ops.  ``registers`` limits the data class (the
    first N registers of its allocation order); ``pin`` names values or groups that keep
    one register for their whole life; ``stack`` (named only) the values kept in slots."""
    if strategy not in STRATEGIES:
        raise GenError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    regs_of = {c: list(rs) for c, rs in isa.regs.items()}
    if registers is not None:
        full = isa.regs[isa.data_class]
        if not 1 <= registers <= len(full):
            raise GenError(f"--registers must be 1..{len(full)} for {isa.name}, not {registers}")
        regs_of[isa.data_class] = list(full[:registers])
    iv = intervals(ops)
    names = list(iv)
    pinned_vals = select(pin, names) if pin else set()

    if strategy == "named":
        on_stack = select(stack, names) - pinned_vals if stack else set()
        for v in on_stack:
            if v in POINTERS and v not in isa.arg_regs:
                pass
        in_regs = set(names) - on_stack
        scratch = _scratch(isa, regs_of) if on_stack else {}
        avail = {c: [r for r in rs if r not in scratch.get(c, ())] for c, rs in regs_of.items()}
        assign, _ = _color(ops, isa, avail, in_regs, True, pinned_vals)
        em = _fixed_emit(ops, isa, strategy, assign, on_stack, scratch)
    elif strategy == "linear-scan":
        assign, spilled = _color(ops, isa, regs_of, set(names), False, pinned_vals)
        if spilled:
            scratch = _scratch(isa, regs_of)
            avail = {c: [r for r in rs if r not in scratch.get(c, ())] for c, rs in regs_of.items()}
            _check_pins(ops, isa, avail, pinned_vals)
            assign, spilled = _color(ops, isa, avail, set(names), False, pinned_vals)
        else:
            scratch = {}
        em = _fixed_emit(ops, isa, strategy, assign, spilled, scratch)
    else:
        pinned: dict[str, str] = {}
        if pinned_vals:
            _check_pins(ops, isa, regs_of, pinned_vals)
            pinned, _ = _color(ops, isa, regs_of, pinned_vals, True, pinned_vals)
        pool = {c: [r for r in rs if r not in pinned.values()] for c, rs in regs_of.items()}
        for c in pool:
            if not pool[c] and any(isa.cls(v) == c and v not in pinned for v in names):
                raise GenError(f"no {c} register left for unpinned values after pinning "
                               f"{', '.join(sorted(pinned_vals))}")
        em = _belady_emit(ops, isa, pool, pinned)
    code = em.code
    used: dict[str, set] = {}
    for op in code:
        for x in (op.dst, op.src):
            r = x.reg if isinstance(x, PtrMem) else x
            if isinstance(r, Reg) and op.cls:
                c = isa.ptr_class if isinstance(x, PtrMem) else op.cls
                used.setdefault(c, set()).add(r.name)
    for c in used:
        used[c] = sorted(used[c], key=lambda r: isa.regs[c].index(r) if r in isa.regs[c] else 99)
    stats = dict(em.stats)
    stats["instructions"] = sum(1 for op in code if op.kind not in ("note", "top", "bottom"))
    return Allocation(strategy, code, {v: sorted(rs) for v, rs in em.homes.items()},
                      sorted(em.slots, key=lambda k: em.slots[k]), used, stats)


def _scratch(isa: ISA, regs_of: dict) -> dict:
    sc = {}
    for c, n in isa.scratch.items():
        rs = regs_of[c]
        if len(rs) <= n:
            raise GenError(f"--registers {len(rs)} leaves no {c} register beside the {n} scratch")
        sc[c] = rs[-n:]
    return sc


def _check_pins(ops, isa: ISA, regs_of: dict, pinned_vals: set) -> None:
    """Pinned values alone must fit (else: one-line error naming them)."""
    if pinned_vals:
        _color(ops, isa, regs_of, pinned_vals, True, pinned_vals)
