"""The allocation checker: proves an allocation computes the lowered program.

It walks the allocated code (:class:`~gen.asm.ir.AOp`) with a dataflow over *locations*
(registers and stack slots) whose facts are the program values (names of the
:class:`~gen.asm.ir.MOp` program) each location holds *now*.  The program ops an instruction
implements (``AOp.mop``) say what it must read and write; spill, reload and move code is only
data movement (a location's facts are copied).  A program write of ``v`` kills ``v`` in every
location and puts it in the register written; a program copy ``d = s`` adds ``d`` wherever
``s`` is (also where the allocator emitted no instruction for it).  The block loop is one
loop: the header state is the meet (intersection) of the entry state and the state at the
loop bottom, iterated to a fixed point; the cycle loop of --unroll loop (``ctop``..``cbottom``,
inside the block loop) likewise, at each walk of the block loop's body.

Checked: at every use the register or slot read holds the value the program names (memory
operands: the pointer register holds the pointer, the offset is the word's); every program
write goes to one of the value's registers in the allocation; pinned values are only used and
written in their register; a spill fills a value's slot with that value; every value carried
around the loop is back in a location it had at the header when the loop closes; every
register the code uses is in the allocation's register list; a ring word read by the counter
(--unroll loop) is read through the register that holds the counter, at the word the program
names, while every word of its ring holds its value (the frame saves the callee-saved
ones) and no callee-saved register the frame cannot save (Win64 xmm6-15) is written.
A failure is an :class:`AllocationCheckError` (a ``GenError``: one line, exit 2).
"""
from __future__ import annotations

import os

from ..errors import GenError
from .ir import DEFS, POINTERS, Addr, Allocation, AOp, Imm, PtrMem, Reg, RingMem, Slot, ring_sizes
from .liveness import carried, cycle_carried

ENV_CORRUPT = "THREEFISH_GEN_CORRUPT_ALLOC"
CORRUPTIONS = ("swap", "drop-reload", "wrong-slot")


class AllocationCheckError(GenError):
    """An allocation that does not compute the program (a bug in an allocator, or the debug hook)."""


def _loc(x):
    """Dataflow location of an operand: a register name or a slot key (None: not a location)."""
    if isinstance(x, Reg):
        return x.name
    if isinstance(x, Slot):
        return x.key
    return None


def _loc_text(loc) -> str:
    if isinstance(loc, str):
        return loc
    kind = loc[0]
    if kind == "v":
        return f"the stack slot of {loc[1]}"
    if kind == "arg":
        return f"the argument slot of {loc[1]}"
    if kind == "const":
        return f"the constant slot {loc[1]:#x}"
    return f"the stack slot {loc[1]}[{loc[2]}]"


def _operand_text(x) -> str:
    if isinstance(x, Reg):
        return x.name
    if isinstance(x, Slot):
        return f"[{_loc_text(x.key)}]"
    if isinstance(x, PtrMem):
        return f"[{x.reg.name} + {x.offset}]"
    if isinstance(x, RingMem):
        return f"[{x.array}[{x.index}] + {x.reg.name}]"
    if isinstance(x, Imm):
        return f"{x.value:#x}"
    return str(x)


def array_name(a: Addr) -> str:
    """The program name of a frame array word (subkey table, constant): 'ks[3]', 'const[7]'."""
    return f"{a.array}[{a.index}]"


class State:
    """Location -> the program values it holds now (and the reverse index)."""

    def __init__(self):
        self.at: dict = {}
        self.where: dict = {}

    def copy(self) -> "State":
        s = State()
        s.at = {k: set(v) for k, v in self.at.items()}
        s.where = {k: set(v) for k, v in self.where.items()}
        return s

    def holds(self, loc) -> set:
        if loc not in self.at and isinstance(loc, tuple) and loc[0] == "const":
            return {f"const[{loc[1]}]"}      # the prologue fills the constant slots
        return self.at.get(loc, set())

    def put(self, loc, names) -> None:
        names = set(names)
        for n in self.at.get(loc, ()):
            self.where[n].discard(loc)
        self.at[loc] = names
        for n in names:
            self.where.setdefault(n, set()).add(loc)

    def kill(self, name: str) -> None:
        for loc in self.where.pop(name, ()):
            self.at[loc].discard(name)

    def add(self, loc, name: str) -> None:
        self.at.setdefault(loc, set()).add(name)
        self.where.setdefault(name, set()).add(loc)

    def locations_of(self, name: str) -> set:
        return set(self.where.get(name, ()))

    def meet(self, other: "State") -> "State":
        s = State()
        for loc in set(self.at) | set(other.at):
            s.put(loc, self.holds(loc) & other.holds(loc))
        return s

    def facts(self) -> dict:
        return {k: frozenset(v) for k, v in self.at.items() if v}


class Checker:
    def __init__(self, ops, isa, alloc: Allocation):
        self.ops, self.isa, self.alloc = ops, isa, alloc
        self.code = alloc.code
        self.pinned = alloc.pinned
        self.next_mop = 0
        self.rings = ring_sizes(ops)

    # ---- reporting

    def fail(self, pos: int, what: str) -> None:
        op = self.code[pos] if 0 <= pos < len(self.code) else None
        at = "function entry" if op is None else f"instruction {pos} ({self._op_text(op)})"
        raise AllocationCheckError(f"allocation check failed ({self.alloc.strategy}, {self.isa.name}): "
                                   + what.replace("{at}", at))

    @staticmethod
    def _op_text(op: AOp) -> str:
        args = ", ".join(_operand_text(x) for x in (op.dst, op.src) if x is not None)
        return f"{op.kind} {args}".strip() + (f": {op.text}" if op.text else "")

    @staticmethod
    def _holds_text(names) -> str:
        return ", ".join(f"'{n}'" for n in sorted(names)) if names else "nothing"

    def expect(self, st: State, pos: int, name: str, x) -> None:
        """Operand x (a register or a slot) must hold program value ``name``."""
        loc = _loc(x)
        if loc is None:
            self.fail(pos, f"'{name}' expected in a register or stack slot at {{at}}, found {_operand_text(x)}")
        if name in self.pinned and loc != self.pinned[name]:
            self.fail(pos, f"pinned '{name}' expected in {self.pinned[name]} at {{at}}, used from {_loc_text(loc)}")
        held = st.holds(loc)
        if name not in held:
            self.fail(pos, f"'{name}' expected in {_loc_text(loc)} at {{at}}, {_loc_text(loc)} holds "
                      f"{self._holds_text(held)}")

    def expect_mem(self, st: State, pos: int, i: int, a: Addr, x) -> None:
        """Operand x is the memory word Addr a of op i: pointer register and offset, its slot, or
        (a ring word by the counter) the counter's register, the ring and the word index."""
        if a.counter:
            if not isinstance(x, RingMem) or (x.array, x.index) != (a.array, a.index):
                self.fail(pos, f"ring word {a} expected at {{at}}, found {_operand_text(x)}")
            self.expect(st, pos, a.counter, x.reg)
            for j in range(self.rings[a.array]):
                self.expect(st, pos, f"{a.array}[{j}]", Slot(("a", a.array, j)))
            return
        if a.base is None:
            if not isinstance(x, Slot):
                self.fail(pos, f"'{array_name(a)}' expected in its stack slot at {{at}}, found {_operand_text(x)}")
            self.expect(st, pos, array_name(a), x)
            return
        if not isinstance(x, PtrMem):
            self.fail(pos, f"memory operand {a} expected at {{at}}, found {_operand_text(x)}")
        self.expect(st, pos, a.base, x.reg)
        if x.offset != a.offset:
            self.fail(pos, f"{a} expected at offset {a.offset} from '{a.base}' at {{at}}, not {x.offset}")

    @staticmethod
    def mem_name(i: int, a: Addr) -> str:
        return array_name(a) if a.base is None and not a.counter else f"{a} (op {i})"

    # ---- the walk

    def entry_state(self) -> State:
        st = State()
        for v in POINTERS:
            r = self.isa.arg_regs.get(v)
            st.put(r if r else ("arg", v), {v})
        return st

    def catch_up(self, st: State, pos: int, upto: int) -> None:
        """Program ops before ``upto`` that have no instruction: only copies may be elided (the
        copy then lives where its source is)."""
        for j in range(self.next_mop, upto):
            o = self.ops[j]
            if o.kind == "note":
                continue
            if o.kind == "mov" and isinstance(o.src, str):
                st.kill(o.dst)
                for loc in st.locations_of(o.src):
                    st.add(loc, o.dst)
                continue
            self.fail(pos, f"op {j} '{o.text or o.kind}' has no instruction (before {{at}})")
        self.next_mop = max(self.next_mop, upto)

    def walk(self, st: State, start: int, end: int) -> State:
        """The code from ``start`` to ``end`` from state ``st``; returns the state after it (a
        cycle loop inside is walked to its fixed point, :meth:`loop`)."""
        pos = start
        while pos < end:
            op = self.code[pos]
            if op.kind == "ctop" and pos != self.in_cycle:
                bottom = next((p for p in range(pos, len(self.code)) if self.code[p].kind == "cbottom"), None)
                if bottom is None or bottom >= end:
                    self.fail(pos, "a cycle loop without its bottom at {at}")
                self.catch_up(st, pos, op.mop)
                st = self.loop(st, pos, bottom, cycle_carried(self.ops)[0])
                pos = bottom + 1
                continue
            self.instruction(st, pos, op)
            pos += 1
        return st

    def instruction(self, st: State, pos: int, op: AOp) -> None:
        if op.kind == "note":
            return
        if op.mop is None:
            self.move(st, pos, op)
            return
        if op.mop < self.next_mop:
            self.fail(pos, f"instruction for op {op.mop} out of program order at {{at}}")
        self.catch_up(st, pos, op.mop)
        if op.role == "load":
            self.load(st, pos, op)
        else:
            self.implement(st, pos, op)
            self.next_mop = op.mop + 1

    def move(self, st: State, pos: int, op: AOp) -> None:
        """Spill, reload, move, exchange: data movement between locations."""
        d, s = _loc(op.dst), _loc(op.src)
        if d is None or s is None or op.kind not in ("mov", "xchg"):
            self.fail(pos, "an instruction that implements no program op and moves no value at {at}")
        if op.kind == "xchg":
            a, b = set(st.holds(d)), set(st.holds(s))
            st.put(d, b)
            st.put(s, a)
            return
        held = set(st.holds(s))
        if isinstance(d, tuple) and d[0] in ("v", "arg") and d[1] not in held and self.copied_before(st, pos, d[1]):
            held = set(st.holds(s))
        if isinstance(d, tuple) and d[0] in ("v", "arg") and d[1] not in held:
            self.fail(pos, f"'{d[1]}' expected in {_loc_text(s)} to fill its slot at {{at}}, {_loc_text(s)} holds "
                      f"{self._holds_text(held)}")
        st.put(d, held)

    def copied_before(self, st: State, pos: int, name: str) -> bool:
        """A spill of ``name`` after a copy that defines it and has no instruction (the copy took
        over its source's register), with only such copies before it in the program: the spill
        was made after them (the allocator elides a copy as it reaches it), so they are caught
        up to it.  False (nothing caught up) otherwise."""
        j = self.next_mop
        while j < len(self.ops) and (self.ops[j].kind == "note"
                                     or (self.ops[j].kind == "mov" and isinstance(self.ops[j].src, str))):
            if self.ops[j].kind == "mov" and self.ops[j].dst == name:
                self.catch_up(st, pos, j + 1)
                return True
            j += 1
        return False

    def load(self, st: State, pos: int, op: AOp) -> None:
        o = self.ops[op.mop]
        if not isinstance(o.src, Addr) or not isinstance(op.dst, Reg):
            self.fail(pos, f"a memory load for op {op.mop} '{o.text}' that loads no memory operand at {{at}}")
        self.expect_mem(st, pos, op.mop, o.src, op.src)
        name = self.mem_name(op.mop, o.src)
        st.put(op.dst.name, ())
        st.kill(name)
        st.add(op.dst.name, name)

    def implement(self, st: State, pos: int, op: AOp) -> None:
        i, o = op.mop, self.ops[op.mop]
        if o.kind == "cbottom":
            if op.kind != o.kind or op.src != o.src:
                self.fail(pos, f"op {i} '{o.text}' (cbottom, bound {_operand_text(o.src)}) implemented by "
                          f"{op.kind} {_operand_text(op.src)} at {{at}}")
            self.expect(st, pos, o.dst, op.dst)
            return
        if o.kind in ("top", "bottom", "ctop"):
            if op.kind != o.kind:
                self.fail(pos, f"op {i} '{o.text}' ({o.kind}) implemented by {op.kind} at {{at}}")
            return
        if o.kind == "guard":
            self.expect(st, pos, o.src, op.src)
            return
        if o.kind == "store":
            self.expect(st, pos, o.src, op.src)
            self.expect_store(st, pos, o.addr, op.dst)
            return
        if op.kind != o.kind:
            self.fail(pos, f"op {i} '{o.text}' ({o.kind}) implemented by {op.kind} at {{at}}")
        if not isinstance(op.dst, Reg):
            self.fail(pos, f"'{o.dst}' expected to be written to a register at {{at}}")
        d = op.dst.name
        if o.kind not in DEFS:
            self.expect(st, pos, o.dst, op.dst)
        elif o.dst in self.pinned and d != self.pinned[o.dst]:
            self.fail(pos, f"pinned '{o.dst}' expected in {self.pinned[o.dst]} at {{at}}, written to {d}")
        homes = self.alloc.homes.get(o.dst)
        if homes and d not in homes:
            self.fail(pos, f"'{o.dst}' written to {d} at {{at}}, not one of its registers ({', '.join(homes)})")
        if isinstance(o.src, str):
            self.expect(st, pos, o.src, op.src)
        elif isinstance(o.src, Addr):
            if isinstance(op.src, Reg):
                self.expect(st, pos, self.mem_name(i, o.src), op.src)
            else:
                self.expect_mem(st, pos, i, o.src, op.src)
        elif op.src != o.src:
            self.fail(pos, f"operand {_operand_text(o.src)} expected at {{at}}, found {_operand_text(op.src)}")
        # effects: the machine overwrites the register, the program redefines the value
        if o.kind == "mov" and isinstance(o.src, str):
            st.put(d, st.holds(_loc(op.src)))
            st.kill(o.dst)
            for loc in st.locations_of(o.src):
                st.add(loc, o.dst)
        else:
            st.put(d, ())
            st.kill(o.dst)
            st.add(d, o.dst)

    def expect_store(self, st: State, pos: int, a: Addr, x) -> None:
        if a.base is not None:
            if not isinstance(x, PtrMem):
                self.fail(pos, f"store to {a} expected at {{at}}, found {_operand_text(x)}")
            self.expect(st, pos, a.base, x.reg)
            if x.offset != a.offset:
                self.fail(pos, f"{a} expected at offset {a.offset} from '{a.base}' at {{at}}, not {x.offset}")
            return
        want = ("const", a.index) if a.array == "const" else ("a", a.array, a.index)
        if _loc(x) != want:
            self.fail(pos, f"'{array_name(a)}' expected to be stored to {_loc_text(want)} at {{at}}, "
                      f"not {_operand_text(x)}")
        st.kill(array_name(a))
        st.put(want, {array_name(a)})

    # ---- the function

    def run(self) -> None:
        self.registers()
        code = self.code
        try:
            top = next(p for p, op in enumerate(code) if op.kind == "top")
            bottom = next(p for p, op in enumerate(code) if op.kind == "bottom")
        except StopIteration:
            self.fail(-1, "the block loop (top/bottom) is missing at {at}")
        st = self.walk(self.entry_state(), 0, top)
        st = self.loop(st, top, bottom, carried(self.ops))
        st = self.walk(st, bottom + 1, len(code))
        self.catch_up(st, len(code) - 1, len(self.ops))

    in_cycle = -1         # the ctop being walked as its loop's header (walk does not re-enter it)

    def loop(self, entry: State, top: int, bottom: int, car: set) -> State:
        """The loop code[top..bottom] from state ``entry``: the header state is the meet of the
        entry and the bottom states, to a fixed point; the state after the bottom."""
        code = self.code
        outer = self.in_cycle
        if code[top].kind == "ctop":
            self.in_cycle = top
        header = entry.copy()
        first = True
        while True:
            if not first:       # again from the loop header
                self.next_mop = code[top].mop
            st = self.walk(header.copy(), top, bottom + 1)
            if first:
                self.carried_home(entry, st, bottom, car)
                first = False
            new = entry.meet(st)
            if new.facts() == header.facts():
                break
            header = new
        self.in_cycle = outer
        return st

    def carried_home(self, header: State, end: State, bottom: int, car: set) -> None:
        """At the loop bottom every carried value is in a location it had at the header."""
        for v in sorted(car):
            homes = header.locations_of(v)
            if not homes or any(v in end.holds(loc) for loc in homes):
                continue
            loc = sorted(homes, key=lambda x: (not isinstance(x, str), str(x)))[0]
            self.fail(bottom, f"carried '{v}' expected back in {_loc_text(loc)} at {{at}}, {_loc_text(loc)} "
                      f"holds {self._holds_text(end.holds(loc))}")

    def registers(self) -> None:
        """Registers in the code are the allocation's (the frame saves the callee-saved ones);
        callee-saved registers the frame cannot save are not written."""
        used = {r for rs in self.alloc.used.values() for r in rs}
        abi = self.isa.abi
        unsaved = set(abi.callee_saved_vector) if abi else set()
        for pos, op in enumerate(self.code):
            for x in (op.dst, op.src):
                r = x.reg if isinstance(x, (PtrMem, RingMem)) else x
                if isinstance(r, Reg) and r.name not in used:
                    self.fail(pos, f"{r.name} used at {{at}} but not in the allocation's registers "
                              f"(the frame would not save it)")
            if isinstance(op.dst, Reg) and op.dst.name in unsaved:
                self.fail(pos, f"{op.dst.name} written at {{at}} is callee-saved under {abi.name} and the "
                          f"frame does not save it")


def check(ops, isa, alloc: Allocation) -> None:
    """Raise AllocationCheckError unless ``alloc`` computes the program ``ops``."""
    Checker(ops, isa, alloc).run()


# --------------------------------------------------------------------------- debug hook

def corrupt(alloc: Allocation, how: str) -> None:
    """Break an allocation on purpose (``swap:N``, ``drop-reload:N``, ``wrong-slot:N``; N counts
    from 1): the checker must reject it."""
    kind, _, n = how.partition(":")
    if kind not in CORRUPTIONS or not n.isdigit() or int(n) < 1:
        raise GenError(f"{ENV_CORRUPT}={how!r}: expected one of {', '.join(CORRUPTIONS)} and ':N' (N >= 1)")
    code = alloc.code
    if kind == "swap":
        cands = [p for p, op in enumerate(code) if op.mop is not None and op.role != "load"
                 and isinstance(op.dst, Reg) and isinstance(op.src, Reg) and op.dst != op.src]
    elif kind == "drop-reload":
        cands = [p for p, op in enumerate(code) if op.role == "reload"]
    else:
        cands = [p for p, op in enumerate(code) if op.role == "spill" and isinstance(op.dst, Slot)
                 and op.dst.key[0] == "v" and any(k[0] == "v" and k != op.dst.key for k in alloc.slots)]
    if int(n) > len(cands):
        raise GenError(f"{ENV_CORRUPT}={how}: the allocation has {len(cands)} such instructions")
    p = cands[int(n) - 1]
    op = code[p]
    if kind == "swap":
        op.dst, op.src = op.src, op.dst
    elif kind == "drop-reload":
        del code[p]
    else:
        op.dst = Slot(next(k for k in alloc.slots if k[0] == "v" and k != op.dst.key))


def corrupt_from_env(alloc: Allocation) -> None:
    how = os.environ.get(ENV_CORRUPT)
    if how:
        corrupt(alloc, how)
