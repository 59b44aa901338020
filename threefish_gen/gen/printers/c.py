"""Printer for the scalar C target (C99, uint64_t).

Instruction selection is the table ``C_STATEMENTS``; file structure, ABI glue
and formatting live in ``templates/c/``.
"""
from __future__ import annotations

import re

from ..dsl import INPUT_ARRAYS, Idx, Loop, Mem, Op, array_sizes, flat, values
from ..isa import neon, x86
from ..isa.common import sites_of
from ..threefish import Program
from . import Line, indent, statements

# One C statement per description operation.  {d} destination, {a} operand.
C_STATEMENTS = {
    "mov": "{d} = {a};",
    "add": "{d} += {a};",
    "sub": "{d} -= {a};",
    "xor": "{d} ^= {a};",
    # Compilers turn these into a single rol/ror; n is 1..63, so no shift is undefined.
    "rotl": "{d} = ({d} << {n}) | ({d} >> {m});",
    "rotr": "{d} = ({d} >> {n}) | ({d} << {m});",
}


def stmt(text: str, *exprs) -> Line:
    """A statement line that holds the expressions ``exprs`` (their intrinsic call sites)."""
    return Line(text, sites=[s for e in exprs for s in sites_of(e)])


def decl(ctype: str, names, text: str, *exprs) -> Line:
    """A declaration line of ``names`` ((name, elements) pairs) of C type ``ctype``; ``exprs``:
    the initialiser's expressions."""
    return Line(text, locals=[(ctype, n, k) for n, k in names], sites=[s for e in exprs for s in sites_of(e)])


def open_line(text: str) -> Line:
    """A line that opens a ``{ }`` block (its text ends in "{")."""
    return Line(text, scope=1)


def close_line(text: str = "}") -> Line:
    return Line(text, scope=-1)


def note_line(text: str) -> Line:
    """A note of the description (a comment line inside a function: /* round 0 */)."""
    return Line(text, note=True)


def without_notes(lines) -> list:
    """``lines`` without the notes of the description (--annotate none)."""
    return [ln for ln in lines if not (isinstance(ln, Line) and ln.note)]


class CPrinter:
    """Turns description ops into C statements.

    ``pointers`` maps the function's input/output arrays (key, tweak, in, out) to the
    C pointer expressions that hold them; ``words``: arrays that are uint64_t arrays of the
    function's parameters (indexed, never declared); other arrays are local uint64_t arrays.
    ``used``: the word-access helpers (``load64``, ``store64``) the printed statements call, so
    a file defines only those (an unused static function is a -Wunused-function error)."""

    def __init__(self, prefix: str, pointers: dict[str, str], words=()):
        self.prefix = prefix
        self.pointers = pointers
        self.words = tuple(words)
        self.used: set[str] = set()

    def index(self, idx: Idx) -> str:
        return str(idx).replace("*", " * ")

    def mem(self, m: Mem) -> str:
        if m.array in self.pointers:
            ptr = self.pointers[m.array]
            off = m.index
            if off.scale == 0:
                addr = ptr if off.base == 0 else f"{ptr} + {8 * off.base}"
            else:
                addr = f"{ptr} + 8 * ({self.index(off)})"
            return f"{self.prefix}load64({addr})", addr
        return f"{m.array}[{self.index(m.index)}]", None

    def operand(self, a) -> str:
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            text, addr = self.mem(a)
            if addr is not None:
                self.used.add("load64")
            return text
        if a.scale:
            return f"(uint64_t)({self.index(a)})"
        return f"UINT64_C({a.base:#018x})" if a.base > 0xFFFF else f"{a.base}"

    def op(self, op: Op) -> str:
        if op.kind == "note":
            return note_line(f"/* {op.a} */")
        if op.kind == "store":
            text, addr = self.mem(op.a)
            if addr is not None:
                self.used.add("store64")
                return Line(f"{self.prefix}store64({addr}, {op.dst});", calls=[(f"{self.prefix}store64", 2)])
            return f"{text} = {op.dst};"
        if op.kind in ("rotl", "rotr"):
            return C_STATEMENTS[op.kind].format(d=op.dst, n=op.a, m=64 - op.a)
        text = C_STATEMENTS[op.kind].format(d=op.dst, a=self.operand(op.a))
        if isinstance(op.a, Mem) and op.a.array in self.pointers:       # read through load64
            return Line(text, calls=[(f"{self.prefix}load64", 1)])
        return text

    def lines(self, ops) -> list[str]:
        return statements(ops, self.op, lambda count: [open_line(f"for (c = 0; c < {count}; c++) {{")],
                          close=close_line())

    def declarations(self, ops, exclude=()) -> list[str]:
        """uint64_t declarations for the values and local arrays that ``ops`` define."""
        out = []
        names = [v for v in values(ops) if v not in exclude]
        for i in range(0, len(names), 10):
            out.append(decl("uint64_t", [(n, 1) for n in names[i:i + 10]],
                            "uint64_t " + ", ".join(names[i:i + 10]) + ";"))
        for arr, size in array_sizes(ops).items():
            if arr not in self.pointers and arr not in INPUT_ARRAYS + ("out",) + self.words:
                if any(isinstance(op.a, Mem) and op.a.array == arr and op.kind == "store"
                       for op in flat(ops)):
                    out.append(decl("uint64_t", [(arr, size)], f"uint64_t {arr}[{size}];"))
        if any(isinstance(item, Loop) for item in ops):
            out.append("unsigned c;")       # the loop counter (the bounds count 64-bit and vector locals)
        return out


def section(printer: CPrinter, ops, exclude=()) -> dict:
    return {"decl": printer.declarations(ops, exclude), "code": printer.lines(ops)}


# Bytes of the C types a function's locals have (the vector types: gen/isa/x86.py, neon.py).
TYPE_BYTES = {"uint64_t": 8, **x86.TYPES, **neon.TYPES}


def _declared(line) -> int:
    """Bytes the locals declared on one line take (0 for a line that declares none)."""
    return sum(TYPE_BYTES[t] * k for t, _, k in line.locals) if isinstance(line, Line) else 0


# Room beyond twice the declared locals: 1 KiB, except for the single-block functions of
# optimized gcc/clang builds (__OPTIMIZE__), where the wipe is a large part of a call's cost:
# 256 bytes there, the x86-64 System V red zone (128 bytes below the stack pointer a leaf
# function may use without moving it) plus 128 for saved registers, the return address and
# alignment.  The frames gcc and clang -O2/-O3 give the work functions, red zone included, are
# checked against the optimized bounds (tests/test_trust.py); a Threefish-512 single-block call
# clears 576 bytes instead of 1344 (blocks functions keep 1 KiB of room: gcc -O3 gives the
# Threefish-1024 blocks loop 1 KiB of frame, and their wipe is spread over n blocks).
SLACK = 1024
OPTIMIZED_SLACK = 256
RED_ZONE = 128


def _bound(total: int, slack: int = SLACK) -> int:
    """Bytes a wipe clears below the caller after a call (the template's PREFIXburn) where the
    compiler gives every local a slot of its own and the code calls no vector intrinsic: twice
    the ``total`` bytes of declared locals (room for the compiler's spills and copies of them),
    plus ``slack``, in 64-byte units."""
    return (2 * total + slack + 63) // 64 * 64


# Unoptimized builds (-O0: no __OPTIMIZE__).  gcc and clang inline the intrinsics (always_inline
# functions of immintrin.h / arm_neon.h) but give each inlined call's parameters, result and
# temporaries stack slots of their own, never shared: the frame grows with the number of
# intrinsic call sites, not with the declared locals.  Measured per call site with -fstack-usage
# (gcc 12, clang 14), in units of the site's vector width W (16, 32 or 64 bytes):
#   gcc: one W per vector operand (add, xor, shifts: 2W; unpack, rolv, permutex2var: 3W);
#   clang: 256- and 512-bit: 2W per vector operand plus 2W (add, xor: 6W; permutex2var: 9W);
#          128-bit (SSE2, NEON): about W per vector operand (add: 2W).
# The bound per site is O0_FACTOR[compiler][W] / 2 times W times (vector operands + 1) plus 16
# bytes per scalar operand: 1.5 times the figures above for the operations that make up most
# sites (add, xor, shifts, unpacks), 1.2 times or more for the rest (a margin for other versions
# of the headers); tests/test_trust.py checks the bounds against the frames gcc and clang give
# the SIMD paths at -O0.  Other compilers (MSVC never defines __OPTIMIZE__) get the larger
# of the two.
O0_FACTOR = {"gcc": {16: 3, 32: 3, 64: 3}, "clang": {16: 4, 32: 6, 64: 6}}
# Calls of the variant's own helpers (load64, store64, the *_blocks tail's single-block call) are
# not intrinsic sites: a function call's operands get no inlined intrinsic's slots.  (The text
# scan these facts replaced, issue 26, counted the calls whose name held "neon_" -- every helper of
# a NEON variant -- as 128-bit sites; the -O0 frame tests pass without that.)


def intrinsic_sites(lines) -> list[tuple[int, int, int]]:
    """Every vector intrinsic call of ``lines`` (the sites their printers recorded): (width W,
    vector operands, scalar operands)."""
    sites = []
    for ln in lines:
        if isinstance(ln, Line):
            sites += ln.sites
    return sites


def unoptimized_bounds(lines) -> dict[str, int]:
    """Bytes the wipe clears after a function with ``lines`` in unoptimized builds (no
    __OPTIMIZE__), per compiler ("gcc", "clang", and "other": the larger): _bound of the
    declared locals plus the slots gcc or clang -O0 may give each intrinsic call site's operands,
    result and temporaries (O0_FACTOR)."""
    sites = intrinsic_sites(lines)
    declared = sum(_declared(ln) for ln in lines)
    out = {cc: _bound(declared) + (sum(f[w] * w * (v + 1) // 2 + 16 * s for w, v, s in sites) + 63) // 64 * 64
           for cc, f in O0_FACTOR.items()}
    out["other"] = max(out.values())
    return out


def wipe_bounds(lines, single: bool) -> dict[str, int]:
    """Bytes the wipe after a function with ``lines`` clears, by build: "opt" (__OPTIMIZE__:
    scoped_stack_bound with OPTIMIZED_SLACK for single-block functions, SLACK for blocks ones),
    and unoptimized "gcc", "clang", "other" (unoptimized_bounds)."""
    return {"opt": scoped_stack_bound(lines, OPTIMIZED_SLACK if single else SLACK), **unoptimized_bounds(lines)}


def scoped_stack_bound(lines, slack: int = OPTIMIZED_SLACK) -> int:
    """The bound for optimized builds (``__OPTIMIZE__``: gcc and clang -O1 and up), where
    locals of scopes that are not open at the same time share their slots and intrinsics leave
    no slots of their own: the most bytes of locals declared in one chain of open scopes
    (``{ ... }`` blocks of the emitted lines), twice, plus ``slack``.  The frames gcc and clang
    -O2/-O3 give the work functions are checked against it (tests/test_trust.py, -fstack-usage)."""
    scopes = [[0, 0]]                      # per open scope: bytes declared in it, most of any child
    for ln in lines:
        scopes[-1][0] += _declared(ln)
        scope = ln.scope if isinstance(ln, Line) else 0
        if scope > 0:
            scopes.append([0, 0])
        elif scope < 0 and len(scopes) > 1:
            own, child = scopes.pop()
            scopes[-1][1] = max(scopes[-1][1], own + child)
    while len(scopes) > 1:
        own, child = scopes.pop()
        scopes[-1][1] = max(scopes[-1][1], own + child)
    return _bound(scopes[0][0] + scopes[0][1], slack)


def function_bodies(prefix: str, progs: dict[str, Program], blocks_prog: dict[str, Program]) -> dict:
    """Code sections for each direction: single-block setup/body, and the B-block body."""
    single = CPrinter(prefix, {"key": "key", "tweak": "tweak", "in": "in", "out": "out"})
    multi = CPrinter(prefix, {"key": "key", "tweak": "tweaks", "in": "in", "out": "out"})
    out = {}
    for direction, prog in progs.items():
        bprog = blocks_prog[direction]
        setup_vals = set(values(prog.setup))
        out[direction] = {
            "setup": section(single, prog.setup),
            "body": section(single, prog.body),
            "multi_body": section(multi, bprog.body, setup_vals),
            "tail_body": section(multi, prog.body, setup_vals),
        }
    return out


def ubi_sections(prefix: str, prog: Program) -> dict:
    """The fused UBI block of Skein (``gen/skein.ubi_program``): its value and scratch
    declarations, and the statements of one block (key schedule of h, rounds, feed-forward into
    h), reading the message block through the byte pointer ``blk`` and h, t as uint64_t arrays."""
    pr = CPrinter(prefix, {"in": "blk"}, words=("h", "t"))
    ops = prog.setup + prog.body
    return {"decl": pr.declarations(ops), "code": pr.lines(ops)}


# A comment padded into a column after code (the dispatcher's cpuid checks).
_PADDED_COMMENT = re.compile(r"^([^\n]*[^\s/]) {2,}(/\*[^\n]*\*/)$", re.M)


def annotate_text(text: str, annotate: str) -> str:
    """C at an annotation level.  C statements are the description statements themselves, so
    full and brief are the same text (notes such as /* round 0 */ before their statements, no
    padding) but for the padding before a comment after code, which brief drops; none is full
    less the notes inside the functions, which the renders leave out of the functions' lines
    (:func:`without_notes`) and the templates out of theirs (templates/c/skein.c.j2); the
    file's header comments stay."""
    return _PADDED_COMMENT.sub(r"\1 \2", text) if annotate == "brief" else text
