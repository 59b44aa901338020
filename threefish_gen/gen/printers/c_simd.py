"""Printer for the SIMD C targets (x86 intrinsics, SSE2 to AVX-512).

Instruction selection lives in the ISA tables below (``ISAS``, the lane
shuffle candidates of :func:`shuffle_candidates`); file structure, ABI glue and
the dispatcher's CPU detection live in ``templates/c_simd/``.  Lane shuffles are
never typed per use: a wanted lane pattern is matched against the semantics of
every candidate instruction and the cheapest match is printed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..dsl import Idx, Mem, Op
from ..errors import GenError
from ..layouts import ir
from .c import CPrinter, section


@dataclass(frozen=True)
class Isa:
    name: str
    level: int            # dispatcher order: higher = preferred when present
    bits: int             # widest integer vector
    target: str           # gcc/clang target attribute
    features: tuple       # /proc/cpuinfo flags needed
    simde: str            # SIMDe header emulating it
    pshufb: bool          # byte shuffles (SSSE3) available
    rol: bool             # vprolq / vprolvq (AVX-512F + VL)
    vl: bool = False
    family: object = None  # instruction family (Width, shuffles, rotations); None: x86 (this module)


ISAS = {
    "sse2": Isa("sse2", 1, 128, "sse2", ("sse2",), "simde/x86/sse2.h", False, False),
    "avx": Isa("avx", 2, 128, "avx", ("avx",), "simde/x86/avx.h", True, False),
    "avx2": Isa("avx2", 3, 256, "avx2", ("avx2",), "simde/x86/avx2.h", True, False),
    "avx512": Isa("avx512", 4, 512, "avx512f,avx512vl", ("avx512f", "avx512vl"),
                  "simde/x86/avx512.h", True, True, True),
}


def get_isa(name: str) -> Isa:
    if name not in ISAS:
        raise GenError(f"unknown isa {name!r} (choose from {', '.join(ISAS)})")
    return ISAS[name]


def vector_op(w, name: str, a: str = "", b: str = "") -> str:
    """A width's add/sub/xor/zero, from its OPS format table (every family's Width has one)."""
    return w.OPS[name].format(w=w, a=a, b=b)


@dataclass(frozen=True)
class Width:
    bits: int

    @property
    def lanes(self) -> int:
        return self.bits // 64

    @property
    def p(self) -> str:
        return {128: "_mm_", 256: "_mm256_", 512: "_mm512_"}[self.bits]

    @property
    def T(self) -> str:
        return f"__m{self.bits}i"

    @property
    def si(self) -> str:
        return f"si{self.bits}"

    def set1(self, expr: str) -> str:
        fn = "_mm512_set1_epi64" if self.bits == 512 else f"{self.p}set1_epi64x"
        return f"{fn}((long long)({expr}))"

    def setv(self, vals) -> str:
        """A constant vector, lane 0 first."""
        fn = "_mm512_set_epi64" if self.bits == 512 else f"{self.p}set_epi64x"
        return f"{fn}(" + ", ".join(f"{v}" for v in reversed(vals)) + ")"

    OPS = {"add": "{w.p}add_epi64({a}, {b})", "sub": "{w.p}sub_epi64({a}, {b})",
           "xor": "{w.p}xor_{w.si}({a}, {b})", "zero": "{w.p}setzero_{w.si}()"}

    def add(self, a: str, b: str) -> str:
        return vector_op(self, "add", a, b)

    def sub(self, a: str, b: str) -> str:
        return vector_op(self, "sub", a, b)

    def xor(self, a: str, b: str) -> str:
        return vector_op(self, "xor", a, b)

    def zero(self) -> str:
        return vector_op(self, "zero")

    def loadu(self, addr: str, words: int | None = None) -> str:
        words = words or self.lanes
        w = Width(64 * words)
        if w.bits == 512:
            load = f"_mm512_loadu_si512((const void *)({addr}))"
        else:
            load = f"{w.p}loadu_{w.si}((const {w.T} *)(const void *)({addr}))"   # no -Wcast-align
        return load if w.bits == self.bits else f"{self.p}cast{w.si}_{self.si}({load})"

    def storeu(self, addr: str, val: str, words: int | None = None) -> str:
        words = words or self.lanes
        w = Width(64 * words)
        if w.bits != self.bits:
            val = f"{self.p}cast{self.si}_{w.si}({val})"
        if w.bits == 512:
            return f"_mm512_storeu_si512((void *)({addr}), {val});"
        return f"{w.p}storeu_{w.si}(({w.T} *)(void *)({addr}), {val});"


# --------------------------------------------------------------------------- lane shuffles

def shuffle_candidates(isa: Isa, width: Width):
    """(cost, format with {a} {b}, semantics: per output lane (0 = a / 1 = b, lane)).
    A 'None' format entry means 'any pattern' (index-vector permutes), handled apart."""
    n, p = width.lanes, width.p
    c = []
    lo = tuple((s, k) for k in range(0, n, 2) for s in (0, 1))
    hi = tuple((s, k + 1) for k in range(0, n, 2) for s in (0, 1))
    c.append((1, f"{p}unpacklo_epi64({{a}}, {{b}})", lo))
    c.append((1, f"{p}unpackhi_epi64({{a}}, {{b}})", hi))
    for x in (0, 1):
        for y in (0, 1):
            imm = (2 * x) | (2 * x + 1) << 2 | (2 * y) << 4 | (2 * y + 1) << 6
            sem = tuple((0, base + z) for base in range(0, n, 2) for z in (x, y))
            c.append((1, f"{p}shuffle_epi32({{a}}, {imm:#04x})", sem))
    if n == 2:
        if isa.level >= 2:
            c.append((1, "_mm_blend_epi16({a}, {b}, 0xf0)", ((0, 0), (1, 1))))
        for imm in range(4):
            c.append((1, "_mm_castpd_si128(_mm_shuffle_pd(_mm_castsi128_pd({a}), "
                         f"_mm_castsi128_pd({{b}}), {imm}))", ((0, imm & 1), (1, imm >> 1))))
    if n == 4:
        for m in range(16):
            imm = sum(3 << (2 * k) for k in range(4) if m >> k & 1)
            c.append((1, f"_mm256_blend_epi32({{a}}, {{b}}, {imm:#04x})",
                      tuple(((m >> k) & 1, k) for k in range(4))))
        for s0 in range(4):
            for s1 in range(4):
                sem = tuple((s >> 1, 2 * (s & 1) + z) for s in (s0, s1) for z in (0, 1))
                c.append((2, f"_mm256_permute2x128_si256({{a}}, {{b}}, {s0 | s1 << 4:#04x})", sem))
        for imm in range(256):
            c.append((2, f"_mm256_permute4x64_epi64({{a}}, {imm:#04x})",
                      tuple((0, imm >> (2 * k) & 3) for k in range(4))))
    if n == 8:
        for imm in range(256):
            sem = tuple((h >> 1, 2 * (imm >> (2 * h) & 3) + z) for h in range(4) for z in (0, 1))
            c.append((2, f"_mm512_shuffle_i32x4({{a}}, {{b}}, {imm:#04x})", sem))
    return c


def _match(sem, pattern, order):
    for (s, k), want in zip(sem, pattern):
        if want is not None and (order[s], k) != want:
            return False
    return True


@lru_cache(maxsize=None)
def _candidates(isa: Isa, width):
    return sorted(family_of(isa).shuffle_candidates(isa, width), key=lambda c: c[0])


def shuffle(isa: Isa, width: Width, pattern: tuple) -> str:
    """C expression building a vector whose lane k is pattern[k] = (vector name, lane) (or None)."""
    srcs = list(dict.fromkeys(p[0] for p in pattern if p is not None))
    if len(srcs) > 2 or not srcs:
        raise GenError(f"shuffle of {len(srcs)} sources")
    if all(p is None or p == (srcs[0], k) for k, p in enumerate(pattern)) and len(srcs) == 1:
        return srcs[0]
    orders = [(srcs[0], srcs[-1]), (srcs[-1], srcs[0])] if len(srcs) == 2 else [(srcs[0], srcs[0])]
    for cost, fmt, sem in _candidates(isa, width):
        for order in orders:
            if _match(sem, pattern, order):
                return fmt.format(a=order[0], b=order[1])
    n = width.lanes
    if isa.level >= 4 and n >= 4:
        a, b = orders[0]
        idx = [(0 if p is None else (0 if p[0] == a else n) + p[1]) for p in pattern]
        if len(srcs) == 1:
            return f"{width.p}permutexvar_epi64({width.setv(idx)}, {a})"
        return f"{width.p}permutex2var_epi64({a}, {width.setv(idx)}, {b})"
    two = _two_steps(isa, width, tuple(pattern), tuple(srcs))
    if two is not None:
        return two
    raise GenError(f"no {isa.name} instruction for lane pattern {pattern}")


@lru_cache(maxsize=None)
def _two_steps(isa: Isa, width: Width, pattern: tuple, srcs: tuple) -> str | None:
    """The cheapest candidate applied to the result of another (e.g. unpack, then a lane
    permute), or None.  Only for patterns no single candidate (or index permute) builds."""
    cands = _candidates(isa, width)
    orders = [(srcs[0], srcs[-1]), (srcs[-1], srcs[0])] if len(srcs) == 2 else [(srcs[0], srcs[0])]
    best = None
    for c1, f1, s1 in cands:
        for order in orders:
            mid = tuple((order[s], k) for s, k in s1)     # lanes of the first result
            for c2, f2, s2 in cands:
                if best is not None and c1 + c2 >= best[0]:
                    break
                if all(s == 0 for s, _ in s2) and all(
                        want is None or mid[k] == want for (_, k), want in zip(s2, pattern)):
                    inner = f1.format(a=order[0], b=order[1])
                    best = (c1 + c2, f2.format(a=inner, b=inner))   # s2 reads only its first source
    return None if best is None else best[1]


# --------------------------------------------------------------------------- rotations

def byte_rotate_mask(width: Width, n) -> str:
    """pshufb control rotating every 64-bit lane left by n bits (a multiple of 8), or lane w
    by n[w] bits when n is a tuple of per-lane counts."""
    counts = n if isinstance(n, tuple) else (n,) * width.lanes
    idx = [8 * (w % 2) + (i - counts[w] // 8) % 8 for w in range(width.lanes) for i in range(8)]
    return f"{width.p}setr_epi8(" + ", ".join(str(i) for i in idx) + ")"


def rotl_uniform(isa: Isa, width: Width, x: str, n: int, consts: dict) -> tuple[str, str]:
    """(expression, kind) rotating every lane of x left by n; kind names the cost class."""
    p = width.p
    if isa.rol and (width.bits == 512 or isa.vl):
        return f"{p}rol_epi64({x}, {n})", "rotate"
    if n == 32:
        return f"{p}shuffle_epi32({x}, 0xb1)", "shuffle"
    if n % 8 == 0 and isa.pshufb:
        name = f"rot{n}"
        consts[name] = byte_rotate_mask(width, n)
        return f"{p}shuffle_epi8({x}, {name})", "shuffle"
    return f"{p}or_{width.si}({p}slli_epi64({x}, {n}), {p}srli_epi64({x}, {64 - n}))", "shifts"


def rotl_lanes(isa: Isa, width: Width, x: str, counts: tuple, consts: dict) -> tuple[str, str, int]:
    """(expression, cost class, instructions) rotating lane k of x left by counts[k]."""
    p = width.p
    if len(set(counts)) == 1:
        expr, kind = rotl_uniform(isa, width, x, counts[0], consts)
        return expr, kind, 3 if kind == "shifts" else 1
    tag = "_".join(map(str, counts))
    if isa.rol and (width.bits == 512 or isa.vl):
        consts[f"rc_{tag}"] = width.setv(counts)
        return f"{p}rolv_epi64({x}, rc_{tag})", "rotate", 1
    if isa.pshufb and all(c % 8 == 0 for c in counts):
        consts[f"rb_{tag}"] = byte_rotate_mask(width, tuple(counts))
        return f"{p}shuffle_epi8({x}, rb_{tag})", "shuffle", 1
    if isa.level >= 3:          # AVX2 variable shifts
        consts[f"rc_{tag}"] = width.setv(counts)
        consts[f"rr_{tag}"] = width.setv([64 - c for c in counts])
        return (f"{p}or_{width.si}({p}sllv_epi64({x}, rc_{tag}), {p}srlv_epi64({x}, rr_{tag}))",
                "shifts", 3)
    # SSE2/AVX: every distinct count rotates the whole vector, then a blend picks the lanes.
    parts, n = {}, 0
    for c in dict.fromkeys(counts):
        expr, kind = rotl_uniform(isa, width, x, c, consts)
        parts[c] = expr
        n += 3 if kind == "shifts" else 1
    return shuffle(isa, width, tuple((parts[c], k) for k, c in enumerate(counts))), "split shifts", n + 1


class X86:
    """The x86 instruction family (SSE2 to AVX-512): what the printers below ask an ISA's family
    for.  Other families (gen/printers/c_neon.py) provide the same five names."""
    width = Width
    shuffle_candidates = staticmethod(shuffle_candidates)
    rotl_uniform = staticmethod(rotl_uniform)
    rotl_lanes = staticmethod(rotl_lanes)
    shift_ops = 3          # a rotation by shifts: shift left, shift right, or


def family_of(isa: Isa):
    return isa.family or X86


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
        w = self.w
        out: list[str] = []
        expr: dict[str, str] = {}

        def val(name) -> str:
            return expr.pop(name, name)

        def assign(dst: str, e: str):
            if dst in declared:
                out.append(f"{dst} = {e};")
            elif in_block:
                out.append(f"const {w.T} {dst} = {e};")
            else:
                expr[dst] = e

        ops = list(ops)
        for i, op in enumerate(ops):
            if isinstance(op, ir.Block):
                out += ["{"] + _ind(self.lines(op.body, declared, True)) + ["}"]
            elif isinstance(op, ir.Note):
                out.append(f"/* {op.text} */")
            elif isinstance(op, ir.Scalar):
                out.append(self.scalar.op(op.op))
            elif isinstance(op, ir.Load):
                assign(op.dst, w.loadu(f"in + {8 * op.words[0]}"))
            elif isinstance(op, ir.Store):
                out.append(w.storeu(f"out + {8 * op.words[0]}", val(op.src)))
            elif isinstance(op, ir.Shuffle):
                assign(op.dst, self.build(op.pattern()))
                self.count(f"shuffle ({op.kind})")
            elif isinstance(op, ir.Mov):
                assign(op.dst, val(op.a))
            elif isinstance(op, ir.Insert):
                vals = ["(long long)(" + " + ".join(self.term(t) for t in ts) + ")" for ts in op.terms]
                self.count("subkey insert", self.L)
                assign(op.dst, w.setv(vals))
            elif isinstance(op, (ir.Add, ir.Sub)):
                self.count("add/sub")
                fn = w.add if isinstance(op, ir.Add) else w.sub
                assign(op.dst, fn(val(op.a), val(op.b)))
            elif isinstance(op, ir.Xor):
                self.count("xor")
                assign(op.dst, w.xor(val(op.a), val(op.b)))
            elif isinstance(op, ir.ROT):
                cs = op.counts if isinstance(op, ir.Rotl) else tuple(64 - c for c in op.counts)
                rot, rkind, n = self.fam.rotl_lanes(self.isa, w, val(op.src), cs, self.consts)
                self.count(rkind, n)
                nxt = ops[i + 1] if i + 1 < len(ops) else None
                if isinstance(nxt, ir.Xor) and nxt.a == op.dst == nxt.dst:
                    expr[op.dst] = rot          # one statement: b = xor(rot(b), a)
                else:
                    assign(op.dst, rot)
            else:  # pragma: no cover
                raise GenError(f"packed printer: cannot print {op!r}")
        return out

    def function_lines(self, prog, vp: ir.VProgram) -> list[str]:
        """Body of one single-block function: scalar key words, vector state, the IR body."""
        setup = section(self.scalar, prog.setup)
        code = self.lines(vp.body, set(vp.values))
        scal = [op.op for op in ir.walk(vp.body) if isinstance(op, ir.Scalar)]
        decl = self.scalar.declarations(scal) if scal else []
        decl.append(f"{self.w.T} " + ", ".join(vp.values) + ";")
        consts = [f"const {self.w.T} {n} = {e};" for n, e in sorted(self.consts.items())]
        return setup["decl"] + decl + consts + setup["code"] + code


def _ind(lines, n=4):
    return [(" " * n + ln) if ln else ln for ln in lines]


# --------------------------------------------------------------------------- lanes printer

class LanesPrinter:
    """Prints a lanes layout IR program (layouts/lanes.py) as C statements on vectors of `isa`."""

    PTR = {"in": "in", "tweak": "tweaks", "out": "out"}

    def __init__(self, isa: Isa, vp: ir.VProgram, prefix: str, block_bytes: int):
        self.isa, self.vp, self.prefix, self.bb = isa, vp, prefix, block_bytes
        self.fam = family_of(isa)
        self.w = self.fam.width(isa.bits)
        self.consts: dict[str, str] = {}
        self.cost: dict[str, int] = {}
        self.declared = set(vp.values)

    def count(self, kind, n=1):
        self.cost[kind] = self.cost.get(kind, 0) + n

    def operand(self, a) -> str:
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            return f"{a.array}[{str(a.index).replace('*', ' * ')}]"
        if a.scale:
            return self.w.set1(str(a).replace("*", " * "))
        return self.w.set1(f"UINT64_C({a.base:#x})")

    def addr(self, array: str, words: tuple) -> tuple[str, int]:
        """(address of the first word, words accessed) of a row load/store."""
        used = [x for x in words if x is not None]
        assert used == list(range(used[0], used[0] + len(used))), words
        return f"{self.PTR[array]} + {8 * used[0]}", len(used)

    def op(self, op) -> list[str]:
        w = self.w
        if isinstance(op, ir.Block):
            return ["{"] + ["    " + ln for ln in self.block(op.body)] + ["}"]
        if isinstance(op, ir.Note):
            return [f"/* {op.text} */"]
        if isinstance(op, ir.Mov):
            if isinstance(op.dst, Mem):
                return [f"{self.operand(op.dst)} = {op.a};"]
            if not isinstance(op.a, str):
                self.count("broadcast")
            return [f"{op.dst} = {self.operand(op.a)};"]
        if isinstance(op, (ir.Add, ir.Sub)):
            self.count("add/sub")
            fn = w.add if isinstance(op, ir.Add) else w.sub
            return [f"{op.dst} = {fn(op.a, self.operand(op.b))};"]
        if isinstance(op, ir.Xor):
            self.count("xor")
            return [f"{op.dst} = {w.xor(op.a, self.operand(op.b))};"]
        if isinstance(op, ir.ROT) and op.uniform:
            n = op.counts[0] if isinstance(op, ir.Rotl) else 64 - op.counts[0]
            expr, kind = self.fam.rotl_uniform(self.isa, w, op.src, n, self.consts)
            self.count(kind, self.fam.shift_ops if kind == "shifts" else 1)
            return [f"{op.dst} = {expr};"]
        raise GenError(f"lanes printer: cannot print {op!r}")  # pragma: no cover

    def block(self, body) -> list[str]:
        """A gather/scatter block: row loads, transpose shuffles (temporaries: ``const``, the
        ones nothing reads dropped), moves into the state, row stores."""
        w = self.w
        for op in body:
            if isinstance(op, ir.Shuffle):
                self.count(f"shuffle ({op.kind})")
        if not any(isinstance(op, ir.Store) for op in body):
            body = ir.dead_code(body, self.declared)
        out = []
        for op in body:
            if isinstance(op, ir.Load):
                at, n = self.addr(op.array, op.words)
                out.append(f"const {w.T} {op.dst} = {w.loadu(at, n)};")
            elif isinstance(op, ir.Store):
                at, n = self.addr(op.array, op.words)
                out.append(w.storeu(at, op.src, n))
            elif isinstance(op, ir.Shuffle):
                out.append(f"const {w.T} {op.dst} = {shuffle(self.isa, w, op.pattern())};")
            elif isinstance(op, ir.Const):
                assert not any(op.values)
                out.append(f"const {w.T} {op.dst} = {w.zero()};")
            elif isinstance(op, ir.Mov) and op.dst in self.declared:
                out.append(f"{op.dst} = {op.a};")
            else:  # pragma: no cover
                raise GenError(f"lanes printer: cannot print {op!r} in a block")
        return out

    def lines(self, ops) -> list[str]:
        out = []
        for item in ops:
            if isinstance(item, ir.Loop):
                out.append(f"for (c = 0; c < {item.count}; c++) {{")
                for op in item.body:
                    out.extend("    " + ln for ln in self.op(op))
                out.append("}")
            else:
                out.extend(self.op(item))
        return out

    def prologue(self, ops) -> list[str]:
        """The broadcast key words and arrays (Broadcast ops, once per call)."""
        w, out = self.w, []
        for op in ops:
            if isinstance(op, ir.Broadcast):
                out.append(f"const {w.T} {op.dst} = {w.set1(op.term)};")
            else:          # Loop(size, (Broadcast(arr[c], src[c]),))
                (bc,) = op.body
                arr, src, j = bc.dst.array, bc.term.array, f"j_{bc.dst.array}"
                out += [f"{w.T} {arr}[{op.count}];", f"unsigned {j};",
                        f"for ({j} = 0; {j} < {op.count}; {j}++)",
                        f"    {arr}[{j}] = {w.set1(f'{src}[{j}]')};"]
        return out

    def declarations(self) -> list[str]:
        vp, T = self.vp, self.w.T
        decl = []
        names = vp.values
        for i in range(0, len(names), 10):
            decl.append(f"{T} " + ", ".join(names[i:i + 10]) + ";")
        for arr, size in vp.arrays.items():
            decl.append(f"{T} {arr}[{size}];")
        if any(isinstance(item, ir.Loop) for item in vp.body):
            decl.append("unsigned c;")
        return decl


def _chunks(lines: list[str]) -> list[list[str]]:
    """Split printed code at round/subkey comments (for interleaving two programs)."""
    out, cur = [], []
    for ln in lines:
        if ln.startswith("/*") and cur:
            out.append(cur)
            cur = []
        cur.append(ln)
    if cur:
        out.append(cur)
    return out


def interleave_code(a: list[str], b: list[str]) -> list[str]:
    """Alternate the round chunks of two straight-line programs (vector and scalar blocks)."""
    ca, cb = _chunks(a), _chunks(b)
    out = []
    for i in range(max(len(ca), len(cb))):
        if i < len(ca):
            out += ca[i]
        if i < len(cb):
            out += cb[i]
    return out


__all__ = ["ISAS", "Isa", "Width", "X86", "family_of", "vector_width", "LanesPrinter", "PackedPrinter", "rotl_lanes", "shuffle", "rotl_uniform", "get_isa",
           "interleave_code", "CPrinter", "Idx", "Op"]
