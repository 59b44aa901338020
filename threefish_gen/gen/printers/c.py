"""Printer for the scalar C target (C99, uint64_t).

Instruction selection is the table ``C_STATEMENTS``; file structure, ABI glue
and formatting live in ``templates/c/``.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..dsl import Idx, Mem
from ..errors import GenError
from ..isa import neon, x86
from ..isa.common import sites_of
from ..layouts import ir
from . import Line, indent

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


def decl(ctype: str, names, text: str, *exprs, constant: bool = False) -> Line:
    """A declaration line of ``names`` ((name, elements) pairs) of C type ``ctype``; ``exprs``:
    the initialiser's expressions; ``constant``: a ``const`` of numbers only (no key material)."""
    return Line(text, locals=[(ctype, n, k) for n, k in names], sites=[s for e in exprs for s in sites_of(e)],
                constant=constant)


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
    """Prints the W = 1 layout IR (gen/layouts/scalar.py: the description's ops, one word per
    ``uint64_t``) as C statements; an IR visitor (gen/layouts/ir.py ``visit``).

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

    def mem(self, m: Mem) -> tuple[str, str | None]:
        """A word of an array: (its C lvalue or load64 call, the pointer expression of a
        pointer array's word, else None)."""
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
        """A value name, a word of a local array or a constant."""
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            return self.mem(a)[0]
        if a.scale:
            return f"(uint64_t)({self.index(a)})"
        return f"UINT64_C({a.base:#018x})" if a.base > 0xFFFF else f"{a.base}"

    def lines(self, ops, declared) -> list:
        """The C lines of W = 1 IR ops; names outside ``declared`` are expression temporaries
        (a word of caller memory), printed at their one use."""
        return _CLines(self, declared, ops).out

    def declarations(self, names, arrays: dict, loop: bool) -> list:
        """uint64_t declarations of the values ``names`` (ten to a line), of the local arrays
        ``arrays`` (name: words) and, for code with a loop, of its counter."""
        names = list(names)
        out = []
        for i in range(0, len(names), 10):
            out.append(decl("uint64_t", [(n, 1) for n in names[i:i + 10]],
                            "uint64_t " + ", ".join(names[i:i + 10]) + ";"))
        for arr, size in arrays.items():
            if arr not in self.pointers and arr not in self.words:
                out.append(decl("uint64_t", [(arr, size)], f"uint64_t {arr}[{size}];"))
        if loop:
            out.append("unsigned c;")       # the loop counter (the bounds count 64-bit and vector locals)
        return out

    def scalar(self, op: ir.Scalar) -> Line:
        """The C statement of the W = 1 ops of one description op inside a vector program
        (``ir.Scalar``: a key word of the setup, a subkey word of the packed body)."""
        (line,) = self.lines(op.ops, set(op.names))
        return line


class _CLines:
    """The statements of a W = 1 op list (:meth:`CPrinter.lines`), with each expression
    temporary (text, calls) waiting for its one use."""

    def __init__(self, pr: CPrinter, declared, ops):
        self.pr, self.declared = pr, declared
        self.out: list = []
        self.expr: dict[str, tuple] = {}
        for op in ops:
            ir.visit(op, self)

    def term(self, a) -> tuple[str, tuple]:
        """An operand's C text and the calls in it."""
        if isinstance(a, str) and a in self.expr:
            return self.expr.pop(a)
        return self.pr.operand(a), ()

    def put(self, text: str, calls) -> None:
        self.out.append(Line(text, calls=calls) if calls else text)

    def note(self, op):
        self.out.append(note_line(f"/* {op.text} */"))

    def loop(self, op):
        self.out.append(open_line(f"for (c = 0; c < {op.count}; c++) {{"))
        self.out += indent(_CLines(self.pr, self.declared, op.body).out)
        self.out.append(close_line())

    def load(self, op):
        (w,) = op.words
        text, _ = self.pr.mem(Mem(op.array, w))
        calls = ()
        if op.array in self.pr.pointers:           # read through load64
            self.pr.used.add("load64")
            calls = ((f"{self.pr.prefix}load64", 1),)
        if op.dst in self.declared:
            self.put(f"{op.dst} = {text};", calls)
        else:
            self.expr[op.dst] = (text, calls)

    def store(self, op):
        (w,) = op.words
        text, addr = self.pr.mem(Mem(op.array, w))
        if addr is not None:
            self.pr.used.add("store64")
            self.out.append(Line(f"{self.pr.prefix}store64({addr}, {op.src});",
                                 calls=[(f"{self.pr.prefix}store64", 2)]))
        else:
            self.out.append(f"{text} = {op.src};")

    def mov(self, op):
        if isinstance(op.dst, Mem):                # a word of a local array
            self.out.append(f"{self.pr.mem(op.dst)[0]} = {op.a};")
            return
        self.put(*self._assign(op.dst, "{d} = {a};", op.a))

    def arith(self, op):
        self.put(*self._assign(op.a, C_STATEMENTS[op.name], op.b, op.dst))

    def rotate(self, op):
        (n,) = op.counts
        if op.src != op.dst:
            raise GenError(f"C printer: rotation {op!r} is not in place")
        self.out.append(C_STATEMENTS["rotl" if op.left else "rotr"].format(d=op.dst, n=n, m=64 - n))

    def _assign(self, d: str, form: str, a, dst: str | None = None) -> tuple[str, tuple]:
        if dst is not None and dst != d:
            raise GenError(f"C printer: {dst} = {d} op ...: not two-address")
        text, calls = self.term(a)
        return form.format(d=d, a=text), calls


def section(printer: CPrinter, vp, part: str = "body", exclude=()) -> dict:
    """Declarations and code of the setup (``part`` "setup") or the body of a W = 1 program
    (gen/layouts/scalar.py); ``exclude``: values declared elsewhere."""
    ops = vp.setup if part == "setup" else vp.body
    names = vp.setup_values if part == "setup" else vp.values
    arrays = vp.setup_arrays if part == "setup" else vp.arrays
    declared = set(vp.setup_values) | set(vp.values)
    return {"decl": printer.declarations([n for n in names if n not in exclude], arrays, any(map(ir.is_loop, ops))),
            "code": printer.lines(ops, declared)}


# Bytes of the C types a function's locals have (the vector types: gen/isa/x86.py, neon.py).
TYPE_BYTES = {"uint64_t": 8, **x86.TYPES, **neon.TYPES}


def _declared(line, constants: bool = True, once: bool = False, weights: dict | None = None) -> int | Fraction:
    """Bytes the locals declared on one line take (0 for a line that declares none; and for a
    line of constants, without ``constants``); ``once``: a single value's bytes once, an array's
    twice (the bound then takes them once: scalar_bound); ``weights``: each type's bytes times
    its factor ({type: factor}, None: every other type's)."""
    if not isinstance(line, Line) or (line.constant and not constants):
        return 0
    return sum(TYPE_BYTES[t] * k * (2 if once and k > 1 else 1) * (weights.get(t, weights[None]) if weights else 1)
               for t, _, k in line.locals)


# Room beyond twice the declared locals: 1 KiB, except for the single-block functions of
# optimized gcc/clang builds (__OPTIMIZE__), where the wipe is a large part of a call's cost:
# 256 bytes there, the x86-64 System V red zone (128 bytes below the stack pointer a leaf
# function may use without moving it) plus 128 for saved registers, the return address and
# alignment.  The frames gcc and clang give the work functions, red zone included, are checked
# against the optimized bounds (tests/test_trust.py test_optimized_wipe_covers_the_frames).
#
# *_blocks functions, optimized: 7/4 (BLOCKS_FACTOR) of the vector locals of the deepest scope
# chain, twice its uint64_t words, plus 1 KiB (was twice every local: Threefish-1024 AVX-512
# lanes fly/full/i1 10,048 -> 8,960 bytes, the dispatcher's 11,072 -> 9,984; a 4 KiB call
# clears this after its blocks).  Measured on Zen 4 with gcc 12.2 and clang 14.0.6 at -O1, -O2,
# -O3, -Os and -Og (-fstack-usage: the work function, the deepest static function it calls --
# the tail's single-block kernel where the public wrapper is inlined -- and the red zone,
# tests/test_trust.py wipes_and_needs), 52 variants, 1,060 blocks-function builds: c-simd lanes
# at 1024 bits (avx512, avx2: interleave 1 to 4 of fly/full, fly/loop, table/loop; sse2 i2, i4;
# avx i4), AVX2 i4 at 256 and 512, hybrid fly/full (sse2, avx2, avx512; i1, i2, i4), packed
# (avx2, avx512), the dispatcher at each size, scalar C (1024 bits: fly/full i1, i2, i4, fly/loop
# i4, table/full i4, table/loop i2; fly/full i2 at 256 and 512); none above its bound (the
# script is not kept; this note is its table).  Against the declared bytes D, the
# frames beyond 1 KiB were at most 1.38 D for vectors (AVX2 lanes fly/full/i4 at Threefish-1024,
# gcc -O1: D 3,656, frame 6,080, bound 7,488, 0.81 of it; SSE2 i4 0.83: 16 vector registers for
# 64 state vectors, and gcc -O1 spills temporaries beyond the declared values; 3/2 would leave
# 0.93), 1.27 D for hybrid (SSE2 i2, gcc -O2, 0.78 of the bound: its scalar blocks' words spill
# too), 1.09 D for AVX-512 (32 registers; 0.65), 1.13 D where a subkey table fills D (AVX2
# table/loop: the tail's single-block frame comes on top); words 1.74 D (scalar C fly/full/i4
# at Threefish-1024, gcc -O3: D 896, frame 2,584, so words keep twice: 2,816, 0.92; 7/4 would
# leave 0.98).  AArch64 (cross gcc 12, clang 14, -O1/-O2; NEON lanes i4, hybrid i2 at 1024;
# no red zone): at most 0.98 D.  AVX-512 vectors take 5/4 (2026-11-28: 460 blocks-function
# builds, gcc 12 / clang 14 at -O1, -O2, -O3, -Os, -Og: c-simd AVX-512 lanes fly/full, fly/loop
# i1, i2, i4 and table/loop i1, i2 at 512 and 1024 bits, loop i4 at 256, hybrid i1, i2, i4 at
# 1024, the three dispatchers; the worst 0.876 of the new bound, fly/full/i4 at 1024, gcc -O1;
# table/loop 0.80): the dispatchers' 4 KiB calls clear 7,616 / 7,872 / 8,704 bytes instead of
# 9,536 / 9,856 / 10,880 (256 / 512 / 1024), 1.4-2.1% faster (Threefish-512, Zen 4, gcc / clang,
# paired against the old file).  SIMDe builds (THREEFISH_GEN_SIMDE, an x86-64-v2 host) do not
# take this bound: their AVX-512 frames are 8 to 26 times D under gcc 12 -O2 (Threefish-256 lanes
# i2: 79,232 bytes; Threefish-1024 packed blocks 131 KB; AVX2 lanes i4 at 1024 bits 12 KB against
# 7.5 KB), so they clear the unoptimized bound, every intrinsic site's slots (templates/c/wipe.j2
# burn_call; tests/test_trust.py test_simde_wipe_covers_the_frames).
#
# Threefish's one-block kernels (issue 27: the wipe was most of the gap between the dispatcher's
# single block and the NASM one; a Threefish-512 call's words are 64 bytes, its wipe cleared 576):
# * scalar (words in general registers): optimized, every word is one value the register
#   allocator gives at most one spill slot, so the words count once, arrays (--keys table's
#   subkey table, --unroll loop's key ring) twice, plus the 256 bytes of room (Threefish-1024
#   fly/full: 576 bytes; frames gcc 152 and clang 184 bytes at -O1 to -O3, -Os, -Og; gcc -Og
#   gives the Threefish-1024 subkey table's function the table plus 136 bytes);
# * vector (layout packed): other compilers get twice the locals plus 1 KiB; gcc builds each
#   subkey vector where it is used (frames 200 to 488 bytes at Threefish-1024) and gets twice the
#   locals that are not constants (the rotation counts hold no key material and are never
#   spilled: gcc and clang load them from memory again), plus 256 bytes; clang hoists the subkey
#   vectors out of the rounds and spills them (frames past the declared locals: Threefish-1024
#   AVX-512 packed decrypt 2,168 bytes), so it gets gcc's bound plus one slot for every distinct
#   subkey vector the kernel builds (its inserts; the most it can hold at once, all of them
#   computed ahead of the rounds), at most the other compilers' bound: Threefish-1024 AVX2
#   packed 59 vectors of 32 bytes, 3,008 bytes (was 3,904) for frames of 1,560 plus the red
#   zone; clang 14 -O1, -O2, -O3, -Os, -Og, every x86 ISA and size (tests/test_trust.py
#   test_clang_wipe_covers_the_packed_frames).  Both on x86 only, natively (not SIMDe, not NEON).
SLACK = 1024
OPTIMIZED_SLACK = 256
BLOCKS_FACTOR = Fraction(7, 4)
# per type of local: words twice; AVX-512 vectors 5/4 (32 registers: frames at most 1.09 D, the
# note above; 2026-11-28 below)
BLOCKS_FACTORS = {"uint64_t": 2, "__m512i": Fraction(5, 4), None: BLOCKS_FACTOR}
RED_ZONE = 128


def _bound(total: int, slack: int = SLACK, factor: int | Fraction = 2) -> int:
    """Bytes a wipe clears below the caller after a call (the template's PREFIXburn) where the
    compiler gives every local a slot of its own and the code calls no vector intrinsic: twice
    (``factor``) the ``total`` bytes of declared locals (room for the compiler's spills and copies
    of them), plus ``slack``, in 64-byte units."""
    return (math.ceil(factor * total) + slack + 63) // 64 * 64


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


def wipe_bounds(lines, single: bool, kernel: str | None = None, hoisted: int = 0) -> dict[str, int]:
    """Bytes the wipe after a function with ``lines`` clears, by build: "opt" (__OPTIMIZE__:
    scoped_stack_bound with OPTIMIZED_SLACK for single-block functions; BLOCKS_FACTOR and SLACK
    for blocks ones, the note above SLACK),
    and unoptimized "gcc", "clang", "other" (unoptimized_bounds).  ``kernel``: a Threefish
    one-block kernel (the note above SLACK), "scalar" (optimized: the locals once) or "vector"
    (optimized: SLACK; "opt_gcc", gcc's optimized bound: twice the locals but constants; and
    "opt_clang", clang's: gcc's plus ``hoisted``, the bytes of the distinct subkey vectors the
    kernel builds, at most "opt")."""
    opt = scoped_stack_bound(lines, OPTIMIZED_SLACK) if single else scoped_stack_bound(lines, SLACK, BLOCKS_FACTORS)
    out = {"opt": opt, **unoptimized_bounds(lines)}
    if kernel == "scalar":
        out["opt"] = scoped_stack_bound(lines, OPTIMIZED_SLACK, factor=1, once=True)
    elif kernel == "vector":       # twice the locals plus 1 KiB: the note above SLACK
        out["opt"] = scoped_stack_bound(lines, SLACK)
        out["opt_gcc"] = scoped_stack_bound(lines, OPTIMIZED_SLACK, constants=False)
        out["opt_clang"] = min(out["opt"], scoped_stack_bound(lines, OPTIMIZED_SLACK + hoisted, constants=False))
    elif kernel is not None:
        raise ValueError(f"kernel {kernel!r}: scalar or vector")
    return out


def scoped_stack_bound(lines, slack: int = OPTIMIZED_SLACK, factor: int | Fraction | dict = 2, constants: bool = True,
                       once: bool = False) -> int:
    """The bound for optimized builds (``__OPTIMIZE__``: gcc and clang -O1 and up), where
    locals of scopes that are not open at the same time share their slots and intrinsics leave
    no slots of their own: the most bytes of locals declared in one chain of open scopes
    (``{ ... }`` blocks of the emitted lines; without ``constants``, lines of constants count
    nothing; ``once``: arrays count twice, _declared), twice (``factor``; a dict: per type of
    local, _declared's weights), plus ``slack``.  The frames gcc and clang give the work
    functions are checked against it (tests/test_trust.py, -fstack-usage)."""
    weights = factor if isinstance(factor, dict) else None
    factor = 1 if weights else factor
    scopes = [[0, 0]]                      # per open scope: bytes declared in it, most of any child
    for ln in lines:
        scopes[-1][0] += _declared(ln, constants, once, weights)
        scope = ln.scope if isinstance(ln, Line) else 0
        if scope > 0:
            scopes.append([0, 0])
        elif scope < 0 and len(scopes) > 1:
            own, child = scopes.pop()
            scopes[-1][1] = max(scopes[-1][1], own + child)
    while len(scopes) > 1:
        own, child = scopes.pop()
        scopes[-1][1] = max(scopes[-1][1], own + child)
    return _bound(scopes[0][0] + scopes[0][1], slack, factor)


def function_bodies(prefix: str, progs: dict, blocks_prog: dict) -> dict:
    """Code sections for each direction from its W = 1 layout IR programs (gen/layouts/scalar.py):
    single-block setup/body, and the B-block body."""
    single = CPrinter(prefix, {"key": "key", "tweak": "tweak", "in": "in", "out": "out"})
    multi = CPrinter(prefix, {"key": "key", "tweak": "tweaks", "in": "in", "out": "out"})
    out = {}
    for direction, vp in progs.items():
        bvp = blocks_prog[direction]
        setup_vals = set(vp.setup_values)
        out[direction] = {
            "setup": section(single, vp, "setup"),
            "body": section(single, vp),
            "multi_body": section(multi, bvp, "body", setup_vals),
            "tail_body": section(multi, vp, "body", setup_vals),
        }
    return out


def ubi_sections(prefix: str, vp) -> dict:
    """The fused UBI block of Skein (``gen/skein.ubi_program``, as one W = 1 body:
    gen/layouts/scalar.py ``lower(prog, fuse=True)``): its value and scratch declarations, and
    the statements of one block (key schedule of h, rounds, feed-forward into h), reading the
    message block through the byte pointer ``blk`` and h, t as uint64_t arrays."""
    return section(CPrinter(prefix, {"in": "blk"}, words=("h", "t")), vp)
