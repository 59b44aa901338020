"""Printer for the SIMD C targets (x86 intrinsics SSE2 to AVX-512, AArch64 NEON).

Instruction spellings live in the ISA modules (gen/isa/x86.py, gen/isa/neon.py: vector types,
shuffle candidates, rotations); this module walks the layout IR and asks the ISA's family for
each operation.  File structure and ABI glue live in ``templates/c_simd/``; the x86 CPU
detection (:func:`cpu_level_lines`) is printed from gen/isa/x86.py's cpuid table.  Lane shuffles are never typed per use: a wanted lane pattern is matched
against the semantics of every candidate instruction and the cheapest match is printed.
"""
from __future__ import annotations

from itertools import groupby

from ...dsl import Idx, Mem
from ...errors import GenError
from ...isa import Isa, family_of, shuffle
from ...isa.x86 import (CPUID, ISAS, TITLES, X86, XCR0, XCR0_STATE, Width, rotl_lanes, rotl_uniform,
                       shuffle_candidates, vector_op)
from ...layouts import ir
from .. import LanesState, comment_gap
from ..c import CPrinter, close_line, decl, indent, note_line, open_line, section, stmt


def get_isa(name: str) -> Isa:
    if name not in ISAS:
        raise GenError(f"unknown isa {name!r} (choose from {', '.join(ISAS)})")
    return ISAS[name]


def vector_width(isa: Isa):
    """The widest vector of an ISA, in its family's Width type."""
    return family_of(isa).width(isa.bits)


# --------------------------------------------------------------------------- packed printer

def packed_width(isa: Isa, nw: int) -> int:
    """Vector bits of layout packed: the ISA's widest, at most half a block (nw/2 words)."""
    return min(isa.bits, 32 * nw)


class PackedPrinter:
    """Prints a packed layout IR program (layouts/packed.py, tracked lanes) as C on vectors of
    `isa`: one block, A = the even words of the MIX pairs, B = the odd ones, each half in
    nw/2/L vectors of L lanes (the widest the ISA has, at most half a block)."""

    def __init__(self, isa: Isa, spec, helpers: str):
        self.isa, self.spec = isa, spec
        self.fam = family_of(isa)
        self.w = self.fam.width(packed_width(isa, spec.nw))
        self.L = self.w.lanes
        self.G = spec.nw // 2 // self.L
        self.scalar = CPrinter(helpers, {"key": "key", "tweak": "tweak", "in": "in", "out": "out"})
        self.consts: dict[str, str] = {}
        self.cost: dict[str, int] = {}
        # the distinct subkey vectors the kernel builds from key and tweak words (insert): what
        # an optimizer may compute once, ahead of the rounds, and hold (gen/printers/c.py, the
        # note above SLACK: clang's bound)
        self.subkey_vectors: set[tuple[str, ...]] = set()

    def count(self, kind, n=1):
        self.cost[kind] = self.cost.get(kind, 0) + n

    def term(self, t) -> str:
        return t if isinstance(t, str) else f"UINT64_C({t.at(0)})"

    def build(self, pattern: tuple) -> str:
        try:
            return shuffle(self.isa, self.w, pattern)
        except GenError:
            raise GenError(f"layout packed: no {self.isa.name} shuffle builds the lanes "
                           f"{pattern} (Threefish-{self.spec.bits} unavailable)") from None

    def lines(self, ops, declared: set, in_block: bool = False) -> list[str]:
        """C statements of IR ops; names outside ``declared`` are block temporaries (``const``)
        or, outside blocks, expressions inlined at their one use."""
        return _PackedLines(self, ops, declared, in_block).out

    def function_lines(self, w1: ir.VProgram, vp: ir.VProgram) -> list[str]:
        """Body of one single-block function: scalar key words (the setup of ``w1``, the same
        program at W = 1), vector state, the IR body of ``vp``."""
        setup = section(self.scalar, w1, "setup")
        code = self.lines(vp.body, set(vp.values))
        T = self.w.T
        decls = self.scalar.declarations(vp.scalars, {}, False)
        decls.append(decl(T, [(n, 1) for n in vp.values], f"{T} " + ", ".join(vp.values) + ";"))
        consts = [decl(T, [(n, 1)], f"const {T} {n} = {e};", e, constant=True) for n, e in sorted(self.consts.items())]
        return setup["decl"] + decls + consts + setup["code"] + code


# Cost class of each binary op (the printers' operation counts).
_ARITH_COST = {"add": "add/sub", "sub": "add/sub", "xor": "xor"}


class _PackedLines:
    """The statements of one straight-line op sequence of :class:`PackedPrinter` (an IR visitor,
    gen/layouts/ir.py ``visit``), with the expression temporaries waiting for their one use."""

    def __init__(self, pp: PackedPrinter, ops, declared: set, in_block: bool):
        self.pp, self.w, self.declared, self.in_block = pp, pp.w, declared, in_block
        self.out: list[str] = []
        self.expr: dict[str, str] = {}
        self.ops = list(ops)
        for self.i, op in enumerate(self.ops):
            ir.visit(op, self)

    def val(self, name) -> str:
        return self.expr.pop(name, name)

    def assign(self, dst: str, e: str):
        if dst in self.declared:
            self.out.append(stmt(f"{dst} = {e};", e))
        elif self.in_block:
            self.out.append(decl(self.w.T, [(dst, 1)], f"const {self.w.T} {dst} = {e};", e))
        else:
            self.expr[dst] = e

    def block(self, op):
        self.out += [open_line("{")] + indent(self.pp.lines(op.body, self.declared, True)) + [close_line()]

    def note(self, op):
        self.out.append(note_line(f"/* {op.text} */"))

    def scalar(self, op):
        self.out.append(self.pp.scalar.scalar(op))

    def load(self, op):
        self.assign(op.dst, self.w.loadu(f"in + {8 * op.words[0]}"))

    def store(self, op):
        s = self.w.storeu(f"out + {8 * op.words[0]}", self.val(op.src))
        self.out.append(stmt(s, s))

    def shuffle(self, op):
        self.assign(op.dst, self.pp.build(op.pattern()))
        self.pp.count(f"shuffle ({op.kind})")

    def mov(self, op):
        self.assign(op.dst, self.val(op.a))

    def insert(self, op):
        vals = ["(long long)(" + " + ".join(self.pp.term(t) for t in ts) + ")" for ts in op.terms]
        self.pp.count("subkey insert", self.pp.L)
        self.pp.subkey_vectors.add(tuple(vals))
        self.assign(op.dst, self.w.setv(vals))

    def arith(self, op):
        self.pp.count(_ARITH_COST[op.name])
        self.assign(op.dst, vector_op(self.w, op.name, self.val(op.a), self.val(op.b)))

    def rotate(self, op):
        pp = self.pp
        rot, rkind, n = pp.fam.rotl_lanes(pp.isa, self.w, self.val(op.src), op.left_counts, pp.consts)
        pp.count(rkind, n)
        nxt = self.ops[self.i + 1] if self.i + 1 < len(self.ops) else None
        if ir.xor_into(op, nxt):
            self.expr[op.dst] = rot          # one statement: b = xor(rot(b), a)
        else:
            self.assign(op.dst, rot)


# --------------------------------------------------------------------------- lanes printer

# Fresh ring pointers (Threefish-1024 lanes loops on x86): the loop body reads the key and counter
# rings through pointers (krf = kr, kcf = kc) that an empty asm statement, PREFIX_FRESH, marks as
# changed at each subkey injection, so that gcc cannot merge the broadcast loads of one ring word
# by two injections of a pass (subkey s word i and subkey s+1 word i-1 read the same word) and keep
# the broadcast live between them: 17 key words beside 16 state and 3 tweak vectors spilled gcc's
# AVX-512 loop (1.06-1.08 of the unrolled kernel; with the barrier 1.006-1.012; clang 1.025 ->
# 1.006; Zen 4, docs/bench.md "Fresh ring pointers").  Threefish-256/512 loops ran 1-1.5% slower
# with it, so they read the rings directly.  The asm emits nothing; other compilers: no barrier.
FRESH_ISAS = ("avx2", "avx512")
FRESH_BLOCK_BYTES = 128


class LanesPrinter(LanesState):
    """Prints a lanes layout IR program (layouts/lanes.py) as C statements on vectors of `isa`."""

    PTR = {"in": "in", "tweak": "tweaks", "out": "out"}

    def __init__(self, isa: Isa, vp: ir.VProgram, prefix: str, block_bytes: int, fresh_ok: bool = False):
        super().__init__(isa, vp, "width")
        self.prefix, self.bb = prefix, block_bytes
        self.splat = ir.splat_rings(vp, isa)     # rings read by broadcast loads: no prologue loop
        # the rings read through fresh pointers ({ring: pointer}; FRESH_ISAS above), {} elsewhere
        self.fresh = {ring: f"{ring}f" for ring in dict.fromkeys(self.splat.values())} if (
            fresh_ok and self.splat and block_bytes == FRESH_BLOCK_BYTES and isa.name in FRESH_ISAS
            and any(ir.is_loop(item) for item in vp.body)) else {}

    def operand(self, a) -> str:
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            index = str(a.index).replace('*', ' * ')
            if a.array in self.splat:
                ring = self.splat[a.array]
                return self.w.set1(f"{self.fresh.get(ring, ring)}[{index}]")
            return f"{a.array}[{index}]"
        if a.scale:
            return self.w.set1(str(a).replace("*", " * "))
        return self.w.set1(f"UINT64_C({a.base:#x})")

    def addr(self, array: str, words: tuple) -> tuple[str, int]:
        """(address of the first word, words accessed) of a row load/store."""
        used = [x for x in words if x is not None]
        assert used == list(range(used[0], used[0] + len(used))), words
        return f"{self.PTR.get(array, array)} + {8 * used[0]}", len(used)   # other arrays: a parameter of that name

    def op(self, op) -> list[str]:
        """C statements of one op of the loop body (an IR visitor: the methods below)."""
        return ir.visit(op, _LanesOps(self))

    def block(self, body) -> list[str]:
        """A gather/scatter block: row loads, transpose shuffles (temporaries: ``const``, the
        ones nothing reads dropped), moves into the state, row stores."""
        for op in ir.shuffles(body):
            self.count(f"shuffle ({op.kind})")
        if not ir.has_store(body):
            body = ir.dead_code(body, self.declared)
        v = _LanesBlock(self)
        out = []
        for op in body:
            out += ir.visit(op, v)
        return out

    def lines(self, ops) -> list[str]:
        v = _LanesOps(self)
        out = []
        for item in ops:
            out.extend(ir.visit(item, v))
        return out

    def prologue(self, ops) -> list[str]:
        """The broadcast key words and arrays (Broadcast ops, once per call)."""
        v = _LanesPrologue(self.w)
        out = []
        for op in ops:
            out += ir.visit(op, v)
        return out

    def declarations(self) -> list[str]:
        vp, T = self.vp, self.w.T
        decls = []
        names = vp.values
        for i in range(0, len(names), 10):
            decls.append(decl(T, [(n, 1) for n in names[i:i + 10]], f"{T} " + ", ".join(names[i:i + 10]) + ";"))
        for arr, size in vp.arrays.items():
            decls.append(decl(T, [(arr, size)], f"{T} {arr}[{size}];"))
        if any(ir.is_loop(item) for item in vp.body):
            decls.append("unsigned c;")
        for ring, ptr in self.fresh.items():
            decls.append(decl("uint64_t", [(ptr, 1)], f"const uint64_t *{ptr} = {ring};"))
        return decls

    def barrier(self) -> list[str]:
        """At a subkey injection in the loop: the fresh pointers marked as changed (FRESH_ISAS)."""
        return [f"{self.prefix}FRESH({ptr});" for ptr in self.fresh.values()]


class _LanesOps:
    """The loop body ops of :class:`LanesPrinter` (an IR visitor): each returns its lines."""

    def __init__(self, lp: LanesPrinter):
        self.lp, self.w = lp, lp.w

    def loop(self, item):
        out = [open_line(f"for (c = 0; c < {item.count}; c++) {{")]
        for op in item.body:
            out.extend(indent(ir.visit(op, self)))
            if ir.is_note(op) and op.text.startswith(("add subkey", "subtract subkey")):
                out.extend(indent(self.lp.barrier()))
        return out + [close_line()]

    def block(self, op):
        return [open_line("{")] + indent(self.lp.block(op.body)) + [close_line()]

    def load(self, op):          # a word-sliced caller array (layouts/lanes.lower ``sliced``): into the state
        at, n = self.lp.addr(op.array, op.words)
        e = self.w.loadu(at, n)
        return [stmt(f"{op.dst} = {e};", e)]

    def store(self, op):
        at, n = self.lp.addr(op.array, op.words)
        st = self.w.storeu(at, op.src, n)
        return [stmt(st, st)]

    def note(self, op):
        return [note_line(f"/* {op.text} */")]

    def mov(self, op):
        lp = self.lp
        if isinstance(op.dst, Mem):
            return [f"{lp.operand(op.dst)} = {op.a};"]
        if not isinstance(op.a, str):
            lp.count("broadcast")
        e = lp.operand(op.a)
        return [stmt(f"{op.dst} = {e};", e)]

    def arith(self, op):
        self.lp.count(_ARITH_COST[op.name])
        e = vector_op(self.w, op.name, op.a, self.lp.operand(op.b))
        return [stmt(f"{op.dst} = {e};", e)]

    def rotate(self, op):
        lp = self.lp
        if not op.uniform:  # pragma: no cover - the lanes layout rotates every lane alike
            raise GenError(f"lanes printer: cannot print {op!r}")
        expr, kind = lp.fam.rotl_uniform(lp.isa, self.w, op.src, op.left_counts[0], lp.consts)
        lp.count(kind, lp.fam.shift_ops if kind == "shifts" else 1)
        return [stmt(f"{op.dst} = {expr};", expr)]


class _LanesBlock:
    """The ops of a gather/scatter block of :class:`LanesPrinter` (an IR visitor)."""

    def __init__(self, lp: LanesPrinter):
        self.lp, self.w = lp, lp.w

    def load(self, op):
        at, n = self.lp.addr(op.array, op.words)
        e = self.w.loadu(at, n)
        return [decl(self.w.T, [(op.dst, 1)], f"const {self.w.T} {op.dst} = {e};", e)]

    def store(self, op):
        at, n = self.lp.addr(op.array, op.words)
        s = self.w.storeu(at, op.src, n)
        return [stmt(s, s)]

    def shuffle(self, op):
        e = shuffle(self.lp.isa, self.w, op.pattern())
        return [decl(self.w.T, [(op.dst, 1)], f"const {self.w.T} {op.dst} = {e};", e)]

    def const(self, op):
        assert not any(op.values)
        e = self.w.zero()
        return [decl(self.w.T, [(op.dst, 1)], f"const {self.w.T} {op.dst} = {e};", e)]

    def mov(self, op):
        if op.dst not in self.lp.declared:  # pragma: no cover
            raise GenError(f"lanes printer: cannot print {op!r} in a block")
        return [f"{op.dst} = {op.a};"]


class _LanesPrologue:
    """The once-per-call broadcasts of :class:`LanesPrinter` (an IR visitor)."""

    def __init__(self, w):
        self.w = w

    def broadcast(self, op):
        e = self.w.set1(op.term)
        return [decl(self.w.T, [(op.dst, 1)], f"const {self.w.T} {op.dst} = {e};", e)]

    def loop(self, op):          # Loop(size, (Broadcast(arr[c], src[c]),))
        w = self.w
        (bc,) = op.body
        arr, src, j = bc.dst.array, bc.term.array, f"j_{bc.dst.array}"
        e = w.set1(f"{src}[{j}]")
        return [decl(w.T, [(arr, op.count)], f"{w.T} {arr}[{op.count}];"), f"unsigned {j};",
                f"for ({j} = 0; {j} < {op.count}; {j}++)",
                stmt(f"    {arr}[{j}] = {e};", e)]


def round_chunks(ops, is_note) -> list[list]:
    """A straight-line op list cut before each note (a round or subkey comment) that does not
    open it: the pieces two programs interleave by (:func:`interleave_code`)."""
    out: list[list] = []
    for op in ops:
        if not out or (is_note(op) and out[-1]):
            out.append([])
        out[-1].append(op)
    return out


def interleave_code(a: list[list[str]], b: list[list[str]]) -> list[str]:
    """Alternate the printed round chunks of two straight-line programs (vector and scalar
    blocks; :func:`round_chunks`)."""
    out = []
    for i in range(max(len(a), len(b))):
        if i < len(a):
            out += a[i]
        if i < len(b):
            out += b[i]
    return out


__all__ = ["ISAS", "Isa", "Width", "X86", "family_of", "vector_width", "LanesPrinter", "PackedPrinter", "rotl_lanes", "shuffle",
           "shuffle_candidates", "rotl_uniform", "vector_op", "get_isa", "interleave_code", "round_chunks", "CPrinter", "Idx"]


# --------------------------------------------------------------------------- CPU detection

_CPUID_VAR = {"eax": "a", "ebx": "b", "ecx": "c", "edx": "d"}     # cpuid's outputs in cpu_level()
_COMMENT_COLUMN = 56


def _commented(code: str, comment: str, annotate: str) -> str:
    """``code /* comment */``, the comment in its column (--annotate brief: one space after the code)."""
    return code + comment_gap(max(2, _COMMENT_COLUMN - len(code)), annotate) + f"/* {comment} */"


def _mask(m: int) -> str:
    return f"{m}u" if m < 10 else f"{m:#x}u"


def cpu_level_lines(isas, annotate: str) -> list[str]:
    """The body of the x86 ``cpu_level()`` (gcc/clang, <cpuid.h>), indented: the highest level of
    ``isas`` (ISA records, gen/isa/x86.py ``ISAS``) the CPU and the OS support, 0 for none.  A
    level's test is the cpuid bits (x86 ``CPUID``) of its features, of SSSE3 where it is the first
    with byte shuffles, and, where its features need register state the levels below did not
    (x86 ``XCR0``), the OS's XCR0: the first such level reads it (XGETBV, after OSXSAVE), a later
    one tests the mask read.  The levels are tested in order, in groups of one cpuid leaf: the
    first leaf's each on its own (a failed read of it is level 0), a later leaf's only where the
    level below its first was found, and each after the first only where the level below it was.
    ``annotate``: the --annotate level of the comments after code."""
    steps, pshufb, state = [], False, 0
    for isa in sorted(isas, key=lambda i: i.level):
        flags = list(isa.features) + (["ssse3"] if isa.pshufb and not pshufb else [])
        need = 0
        for f in isa.features:
            need |= XCR0.get(f, 0)
        reads = bool(need) and not state                # the first level to need OS state: XGETBV
        if reads:
            flags.insert(0, "osxsave")
        leaves = {CPUID[f][:2] for f in flags}
        assert len(leaves) == 1, (isa.name, leaves)
        steps.append((isa, leaves.pop(), flags, need if need & ~state else 0, reads))
        pshufb |= isa.pshufb
        state |= need
    lines = ["    unsigned a, b, c, d, xcr0 = 0, edx0;", "    int level = 0;"]
    for g, (leaf, group) in enumerate(groupby(steps, key=lambda step: step[1])):
        group = list(group)
        ind = "    "
        if g == 0:
            lines += [f"{ind}if (!__get_cpuid({leaf[0]}, &a, &b, &c, &d))", f"{ind}    return 0;"]
        else:
            lines.append(f"{ind}if (level == {group[0][0].level - 1} && "
                         f"__get_cpuid_count({leaf[0]}, {leaf[1]}, &a, &b, &c, &d)) {{")
            ind += "    "
        for k, (isa, _, flags, test, reads) in enumerate(group):
            pre = [f"level == {isa.level - 1}"] if g and k else []
            bits = [f"({_CPUID_VAR[CPUID[f][2]]} & (1u << {CPUID[f][3]}))" for f in flags]
            if reads:
                lines += [_commented(f"{ind}if ({' && '.join(pre + bits)}) {{", ", ".join(f.upper() for f in flags),
                                     annotate),
                          f'{ind}    __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(edx0) : "c"(0));',
                          _commented(f"{ind}    if ((xcr0 & {_mask(test)}) == {_mask(test)})",
                                     f"OS saves {XCR0_STATE[test]} state", annotate),
                          _commented(f"{ind}        level = {isa.level};", TITLES[isa.name], annotate),
                          f"{ind}}}"]
                continue
            terms = pre + bits + ([f"(xcr0 & {_mask(test)}) == {_mask(test)}"] if test else [])
            cond = terms[0][1:-1] if len(terms) == 1 else " && ".join(terms)    # one bit: no parentheses
            lines += [f"{ind}if ({cond})",
                      _commented(f"{ind}    level = {isa.level};",
                                 TITLES[isa.name] + (f", {XCR0_STATE[test]} state saved" if test else ""), annotate)]
        if g:
            lines.append("    }")
    return lines + ["    return level;"]
