"""Lowering: the description's program (``gen/threefish.py``) to *machine ops on values*
(:class:`~gen.asm.ir.MOp`): the same two-address operations, memory operands resolved to
(pointer value, byte offset) or a stack array, the function's own values (the argument
pointers ``key``, ``tweak``, ``in``, ``out`` and the block count ``n``) and the block loop
(``guard``/``top``/``bottom``).  The scalar forms lower the description directly
(:func:`lower`), the lanes form its layout IR (:func:`lower_lanes`, gen/layouts/lanes.py),
the packed form lives in gen/asm/lower_packed.py (gen/layouts/packed.py)."""
from __future__ import annotations

from ..dsl import Idx, Loop, Mem, Op
from ..errors import GenError
from ..layouts import ir, lanes
from ..threefish import Program
from .ir import COUNTER, Addr, Imm, MOp
from .machine import ISA

SCHEDULES = ("description", "interleave")


class Lowering:
    """Description ops -> machine ops on values (``emit``), appended to ``out``; shared by
    :func:`lower`, :func:`lower_lanes` and the packed layout's lowering (``gen/asm/lower_packed.py``)."""

    def __init__(self, isa: ISA):
        self.isa = isa
        self.out: list[MOp] = []
        self.tmp_count = 0
        self.cycles = 0           # inside the cycle loop (--unroll loop): its trip count

    def operand(self, a):
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            if a.index.scale:
                if not self.cycles or a.array in ("key", "tweak", "in", "out"):
                    raise GenError("the nasm targets need --unroll full (no affine indices)")
                # the counter is slot*scale*c (0, slot*scale, ..; slot: the bytes of a stack slot,
                # 8 for a GPR word, 16 for an XMM one): word base + scale*c is word base
                # + counter/slot
                i = a.index.base
                return Addr(None, a.array, i, 8 * i, COUNTER)
            i = a.index.base
            base = a.array if a.array in ("key", "tweak", "in", "out") else None
            return Addr(base, a.array, i, 8 * i)
        if isinstance(a, Idx):
            if a.scale:
                raise GenError("the nasm targets need --unroll full (no affine immediates)")
            return Imm(a.base)
        raise AssertionError(a)

    def cycle_loop(self, loop: Loop) -> None:
        """The 8-round cycle loop of --unroll loop: the body once, its ring words indexed by the
        counter (a public round counter), the counter stepped to 0 and the jump back."""
        scales = {x.index.scale for o in loop.body if isinstance(o, Op) for x in (o.a,)
                  if isinstance(x, Mem) and x.index.scale}
        if len(scales) != 1:
            raise GenError(f"nasm --unroll loop: the cycle loop indexes by {len(scales)} strides, not one")
        step = self.isa.slot_bytes * scales.pop()
        self.out.append(MOp("mov", COUNTER, Imm(0), text=f"{COUNTER} = 0"))
        self.out.append(MOp("ctop", text=f"for each of {loop.count} cycles of 8 rounds"))
        self.cycles = loop.count
        for op in loop.body:
            self.emit(op)
        self.cycles = 0
        self.out.append(MOp("add", COUNTER, Imm(step), text=f"{COUNTER} += {step}"))
        self.out.append(MOp("cbottom", COUNTER, Imm(step * loop.count), text=f"while {COUNTER} != {step * loop.count}"))

    def fresh(self) -> str:
        self.tmp_count += 1
        return f"r{self.tmp_count}"

    def emit(self, op) -> None:
        if isinstance(op, Loop):
            self.cycle_loop(op)
            return
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


def _mix(ops: list, i: int):
    """The words of the MIX whose three ops start at ops[i] (``a += b; b <<<= r; b ^= a`` or
    the inverse ``b ^= a; b >>>= r; a -= b``), or None."""
    if i + 3 > len(ops) or not all(isinstance(o, Op) for o in ops[i:i + 3]):
        return None
    x, y, z = ops[i:i + 3]
    kinds = (x.kind, y.kind, z.kind)
    if kinds == ("add", "rotl", "xor") and x.a == y.dst == z.dst and z.a == x.dst:
        return {x.dst, x.a}
    if kinds == ("xor", "rotr", "sub") and x.dst == y.dst == z.a and x.a == z.dst:
        return {x.dst, x.a}
    return None


def schedule_ops(ops: list, schedule: str) -> list:
    """Description ops in emission order.  ``interleave``: the independent MIXes of a round
    (consecutive MIXes on disjoint words) go first op of every MIX, then the second, then
    the third (ILP for in-order issue and the decoders)."""
    if schedule not in SCHEDULES:
        raise GenError(f"unknown schedule {schedule!r} (choose from {', '.join(SCHEDULES)})")
    if schedule == "description":
        return list(ops)
    out: list = []
    pending: list = []           # the MIXes of one round: three ops each
    used: set = set()

    def flush() -> None:
        for k in range(3):
            out.extend(m[k] for m in pending)
        pending.clear()
        used.clear()
    i = 0
    while i < len(ops):
        words = _mix(ops, i)
        if words is None:
            flush()
            op = ops[i]
            out.append(Loop(op.count, schedule_ops(op.body, schedule)) if isinstance(op, Loop) else op)
            i += 1
            continue
        if used & words:
            flush()
        pending.append(ops[i:i + 3])
        used |= words
        i += 3
    flush()
    return out


def fuse_injections(ops: list, key_values=frozenset(), share: bool = True,
                    stored=frozenset(), stem: str = "sk") -> tuple[list, list]:
    """Subkey injection (the ops tagged ``("key", s)``): a word that gets two or three terms
    (key word, tweak word, the counter s) gets their sum instead -- one add on the word's
    dependency chain, not two or three (what C compilers do by reassociation).  Returns
    (ops for the setup, the ops).

    * key word + s (``key_values``: values the setup defines): the sum depends on the key only,
      so the setup computes it once per call into the stack array ``kc[s]``, and the word gets
      ``x3 += kc[s]`` (a memory operand);
    * otherwise (a tweak word in the sum) a fresh value ``skN`` is computed first, off the chain:
      ``x1 += k1; x1 += t0`` becomes ``sk1 = k1; sk1 += t0; x1 += sk1`` (decrypt: ``x1 -= sk1``);
      with ``share`` a sum is kept for the next injection, whose word Nw-3 gets the sum word Nw-2
      got (one add fewer per block and injection, one more value live across 4 rounds).

    ``stored``: the counters s whose ``kc[s]`` the setup stores already (--unroll loop's counter
    ring).  A cycle loop (--unroll loop) is fused on its own (sums ``scN``) where ``share``: a word
    that gets a key ring word and a tweak ring word gets their sum, made off the chain from the two
    memory words (without ``share``, strategy named, the words get them one by one: no register
    is left for a sum beside 8 words, 4 pointers and the counter)."""
    out: list = []
    setup: list = []
    # a key value the body writes is not the setup's any more: no kc for it
    key_values = set(key_values) - {o.dst for o in ops if isinstance(o, Op) and o.kind not in ("store", "note")}
    hoisted: set = set(stored)
    sums: dict = {}               # the terms of a sum -> (the value that holds it, injection)
    count = groups = 0
    i = 0
    while i < len(ops):
        op = ops[i]
        tag = op.tag if isinstance(op, Op) else ()
        if isinstance(op, Loop):          # it writes the state words: no sum is kept across it
            sums = {}
            if share:
                op = Loop(op.count, fuse_injections(op.body, (), share, stem="sc")[1])
        if tag[:1] != ("key",):
            if isinstance(op, Op) and op.kind not in ("store", "note"):     # a term written: its sums go
                sums = {k: ng for k, ng in sums.items() if op.dst not in k}
            out.append(op)
            i += 1
            continue
        j = i
        while j < len(ops) and isinstance(ops[j], Op) and ops[j].tag == tag:
            j += 1
        group = ops[i:j]
        groups += 1
        # a sum is kept for the next injection only (word Nw-2's sum is word Nw-3's at the next
        # subkey): short lives, so that every strategy (named too) still fits the words
        sums = {k: (n, g) for k, (n, g) in sums.items() if g >= groups - 1} if share else {}
        written = {o.dst for o in group}
        terms: dict = {}
        for o in group:
            terms.setdefault(o.dst, []).append(o)
        done: set = set()
        for o in group:
            mine = terms[o.dst]
            fusable = (len(mine) > 1 and len({m.kind for m in mine}) == 1 and mine[0].kind in ("add", "sub")
                       and not any(isinstance(m.a, str) and m.a in written for m in mine)
                       and (any(isinstance(m.a, str) for m in mine) or stem == "sc"))
            if not fusable:
                out.append(o)
                continue
            if o.dst in done:
                continue
            done.add(o.dst)
            srcs = sorted((m.a for m in mine), key=lambda a: not isinstance(a, str))
            if (len(srcs) == 2 and srcs[0] in key_values and isinstance(srcs[1], Idx) and not srcs[1].scale):
                s = srcs[1].base
                slot = Mem("kc", s)
                if s not in hoisted:
                    hoisted.add(s)
                    setup += [Op("mov", "kcs", srcs[0]), Op("add", "kcs", srcs[1]), Op("store", "kcs", slot)]
                out.append(Op(o.kind, o.dst, slot, tag))
                continue
            key = tuple(sorted(map(str, srcs)))
            name = sums.get(key, (None,))[0]
            if name is None:
                count += 1
                name = f"{stem}{count}"
                sums[key] = (name, groups)
                out.append(Op("mov", name, srcs[0], tag))
                out.extend(Op("add", name, a, tag) for a in srcs[1:])
            out.append(Op(o.kind, o.dst, name, tag))
        i = j
    if setup:
        setup.insert(0, Op("note", None, "key words + s of the subkeys: kc[s] (once per call)"))
    return setup, out


def _unrolled(items) -> list:
    if any(isinstance(x, (Loop, ir.Loop)) for x in items):
        raise GenError("the nasm targets need --unroll full")
    return list(items)


def lower(prog: Program, isa: ISA, schedule: str = "description", share_sums: bool = True) -> list[MOp]:
    """The machine ops of ``PREFIX{direction}_blocks(key, tweaks, in, out, n)``:
    setup once, then the body for each block, pointers advanced, ``n`` counted down; the subkey
    injections fused (:func:`fuse_injections`; ``share_sums``: sums kept for the next injection).
    --unroll loop: the body's cycle loop becomes the counter loop ``ctop``..``cbottom``."""
    setup = _unrolled(prog.setup)
    keys = {o.dst for o in setup if isinstance(o, Op) and o.kind == "mov"}
    stored = {o.a.index.base for o in setup if isinstance(o, Op) and o.kind == "store" and o.a.array == "kc"}
    body = list(prog.body)
    if sum(isinstance(x, Loop) for x in body) > (prog.options.unroll == "loop"):
        raise GenError("the nasm targets lower one cycle loop (--unroll loop) per function, no other loop")
    extra, body = fuse_injections(schedule_ops(body, schedule), keys, share_sums, stored)
    return _lower(isa, prog, setup + extra, body)


def _lower(isa: ISA, prog: Program, setup: list, body: list) -> list[MOp]:
    low = Lowering(isa)
    # n is tested before any load: n = 0 touches no pointer (key, tweaks, in, out may be NULL)
    low.out.append(MOp("guard", src="n", text="if n == 0 return"))
    for op in setup:
        low.emit(op)
    low.out.append(MOp("top", text="for each block"))
    for op in body:
        low.emit(op)
    low.loop_tail(prog)
    return low.out


# --------------------------------------------------------------------------- lanes (ymm, zmm)

def lower_lanes(prog: Program, isa: ISA, schedule: str = "description") -> list[MOp]:
    """The lanes form (``isa.lanes`` blocks per pass, lane b = block b) from the layout IR of
    ``gen.layouts.lanes.lower_stream(prog, isa.lanes, gather=True)``: every IR op is one op on
    vector values, written as the description op it is in lane 0 (:func:`lane_op`); the
    other lanes are the machine's: gathers and scatters read block b's words at the lane
    offsets of the index registers, key words and constants are broadcast."""
    vp = lanes.lower_stream(prog, isa.lanes, gather=True)
    nw = prog.spec.nw
    setup = [lane_op(x, nw) for x in _unrolled(vp.setup)]
    body = [lane_op(x, nw) for x in _unrolled(vp.body)]
    return _lower(isa, prog, setup, schedule_ops(body, schedule))


# words between the lanes of a gather or scatter: the index registers hold block b's offset
# (b * block bytes) for in/out, the tweak pair's (b * 16) for tweak
def lane_stride(array: str, nw: int) -> int:
    return 2 if array == "tweak" else nw


def lane_op(op, nw: int) -> Op:
    """A lanes layout IR op as the description op it is in lane 0 (checked: the other lanes
    are what the machine gives them)."""
    if isinstance(op, ir.Note):
        return Op("note", None, op.text)
    if isinstance(op, (ir.Load, ir.Store)):
        w = op.words
        if any(x != w[0] + b * lane_stride(op.array, nw) for b, x in enumerate(w)):
            raise GenError(f"nasm lanes: {op.array} words {w} are not one word of consecutive blocks")
        m = Mem(op.array, Idx(w[0]))
        return Op("mov", op.dst, m) if isinstance(op, ir.Load) else Op("store", op.src, m)
    if isinstance(op, ir.Broadcast) and isinstance(op.term, Mem) and op.term.array == "key":
        return Op("mov", op.dst, op.term)
    if isinstance(op, ir.Mov):
        return Op("store", op.a, op.dst) if isinstance(op.dst, Mem) else Op("mov", op.dst, op.a)
    if isinstance(op, ir.ARITH) and op.a == op.dst:
        return Op({ir.Add: "add", ir.Sub: "sub", ir.Xor: "xor"}[type(op)], op.dst, op.b)
    if isinstance(op, ir.ROT) and op.uniform and op.src == op.dst:
        return Op("rotl" if isinstance(op, ir.Rotl) else "rotr", op.dst, op.counts[0])
    raise GenError(f"nasm lanes: cannot lower {op!r}")
