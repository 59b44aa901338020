"""Printer for the C# target (.NET, net10.0): one static class per variant.

Two layouts of the same description program:

* ``scalar``: one ``ulong`` local per word, ``BitOperations.RotateLeft`` (one ``rol``);
* ``lanes``: the scalar one-block path plus word-sliced ``Vector512<ulong>`` (8 blocks,
  AVX-512F ``vprolq``) and ``Vector256<ulong>`` (4 blocks, AVX2 shift pairs) kernels for
  ``EncryptBlocks``/``DecryptBlocks``, chosen at run time by ``IsSupported`` (JIT-time
  constants), with the scalar kernel for the tail and as the fallback.

Skein (``--primitive skein``): the fused UBI block (``skein_ubi``) and, for HashMany and tree
leaves, the UBI block of 8 / 4 messages in Vector512 / Vector256 lanes (``skein_lanes``: the
lanes layout's gather/transpose form, printed by the same lanes printer).

Instruction spellings are gen/isa/dotnet.py's (``KINDS``, the shuffles and rotations); every
shift count, rotation count and permute control is a literal in the emitted code.  File structure and the public API
live in ``templates/csharp/``.
"""
from __future__ import annotations

import re

from .. import skein
from ..dsl import Idx, Mem
from ..errors import GenError
from ..isa import dotnet
from ..isa.dotnet import KINDS, OPERATORS, PACKED_VEC, VECTORS, api, lanes_shuffle, packed_rotate, packed_shuffle
from ..layouts import ir
from . import Line, load_word, render_template

LAYOUTS = ("scalar", "lanes", "packed")

# Value types, constants and statement forms per machine kind: gen/isa/dotnet.py.
ARITH = OPERATORS

CS_KEYWORDS = set("""abstract as base bool break byte case catch char checked class const continue
decimal default delegate do double else enum event explicit extern false finally fixed float for
foreach goto if implicit in int interface internal is lock long namespace new null object operator
out override params private protected public readonly ref return sbyte sealed short sizeof
stackalloc static string struct switch this throw true try typeof uint ulong unchecked unsafe ushort
using virtual void volatile while""".split())
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_identifier(name: str, what: str, dotted: bool = False) -> str:
    parts = name.split(".") if dotted else [name]
    for p in parts:
        if not _IDENT.match(p) or p in CS_KEYWORDS:
            raise GenError(f"{what} {name!r} is not a valid C# identifier")
    return name


def _hex(v: int) -> str:
    return f"{v:#018x}" if v > 0xFFFF else str(v)


class CsPrinter:
    """Prints layout IR as C# statements for one machine kind: the W = 1 IR of layout scalar
    (gen/layouts/scalar.py) for kind scalar, the lanes layout IR (stream form) for the vector
    kinds.

    ``refs`` maps the function's input/output arrays (key, tweak, in, out) to ``ref byte``
    locals; other arrays are local ``Span`` scratch (stackalloc'd once per call).  ``op_lists``:
    the W = 1 op lists of the code that uses those arrays."""

    def __init__(self, kind: str, refs: dict[str, str], nw: int, *op_lists):
        self.kind, self.k, self.refs, self.nw = kind, KINDS[kind], refs, nw
        # Local arrays only ever indexed by constants become plain locals (registers, no
        # stackalloc, no bounds checks): arr[i] -> arr_i.
        affine, seen = set(), set()
        for ops in op_lists:
            for op in ir.walk(ops):
                for m in ir.elements(op):
                    if m.array not in refs:
                        seen.add(m.array)
                        if m.index.scale:
                            affine.add(m.array)
        self.flat = seen - affine

    def index(self, idx: Idx) -> str:
        return str(idx).replace("*", " * ")

    @staticmethod
    def ld(ref: str, off: str) -> str:
        """Little-endian load at any alignment (Unsafe/BinaryPrimitives are JIT intrinsics, never
        calls, whatever the method size; IsLittleEndian folds to a constant)."""
        at = CsPrinter.ld_le(ref, off)
        return f"(BitConverter.IsLittleEndian ? {at} : {api('bswap', None, at)})"

    @staticmethod
    def ld_le(ref: str, off: str) -> str:
        return api("read", None, f"Unsafe.Add(ref {ref}, {off})")

    @staticmethod
    def st(ref: str, off: str, v: str) -> str:
        return api("write", None, f"Unsafe.Add(ref {ref}, {off})",
                   f"BitConverter.IsLittleEndian ? {v} : {api('bswap', None, v)}") + ";"

    def local(self, m: Mem) -> str:
        if m.array in self.flat:
            return f"{m.array}_{m.index.base}"
        return f"{m.array}[{self.index(m.index)}]"

    def byte_off(self, m: Mem) -> str:
        i = m.index
        return str(8 * i.base) if i.scale == 0 else f"8 * ({self.index(i)})"

    def operand(self, a) -> str:
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            if a.array in self.refs:       # scalar kind only: vector kernels load through the IR
                return self.ld(self.refs[a.array], self.byte_off(a))
            return self.local(a)
        if a.scale:
            v = f"(ulong)({self.index(a)})"
            return v if self.kind == "scalar" else api("broadcast", self.vec, v)
        return self.k["imm"].format(v=_hex(a.base))

    def lines(self, ops, names) -> list[str]:
        """Statements of W = 1 ops (kind scalar) whose values are ``names`` (any other name they
        write is an expression temporary: a word of caller memory, printed at its one use)."""
        v = _CsScalarOps(self, set(names))
        return [ln for op in ops for ln in ir.visit(op, v)]

    def scalar(self, op: ir.Scalar) -> str:
        """The statement of the W = 1 ops of one description op inside a vector program
        (``ir.Scalar``: a key word of the setup, a subkey word of the packed body)."""
        (line,) = self.lines(op.ops, op.names)
        return line

    # ---- vector kinds: the lanes layout IR (gen/layouts/lanes.py, stream form)
    @property
    def vec(self) -> str:
        return self.k["type"].split("<")[0]

    def ir_lines(self, ops) -> list[str]:
        v = _CsLanesOps(self)
        out: list[str] = []
        for item in ops:
            out += ir.visit(item, v)
        return out

    def ir_op(self, op) -> str:
        (line,) = ir.visit(op, _CsLanesOps(self))
        return line

    def declare(self, names) -> list[str]:
        names, t = list(names), self.k["type"]
        return [Line(f"{t} " + ", ".join(names[i:i + 10]) + ";", locals=[(t, n, 1) for n in names[i:i + 10]])
                for i in range(0, len(names), 10)]

    def arrays(self, *op_lists) -> list[str]:
        """Declarations of the local arrays the W = 1 ``op_lists`` use (each its largest size)."""
        sizes: dict[str, int] = {}
        for ops in op_lists:
            for arr, n in ir.array_sizes(ops).items():
                if arr not in self.refs:
                    sizes[arr] = max(sizes.get(arr, 0), n)
        t = self.k["type"]
        out = []
        for arr, n in sorted(sizes.items()):
            if arr in self.flat:
                out += self.declare(f"{arr}_{i}" for i in range(n))
            else:
                out.append(Line(f"Span<{t}> {arr} = stackalloc {t}[{n}];", locals=[(f"stackalloc {t}", arr, n)]))
        return out


class _CsOps:
    """The ops every kind prints alike (an IR visitor, gen/layouts/ir.py ``visit``): each returns
    its statements."""

    def __init__(self, p: CsPrinter):
        self.p = p

    def term(self, a) -> str:
        return self.p.operand(a)

    def loop(self, item):
        return ([f"for (int c = 0; c < {item.count}; c++)", "{"]
                + ["    " + ln for op in item.body for ln in ir.visit(op, self)] + ["}"])

    def note(self, op):
        return [f"// {op.text}"]

    def mov(self, op):
        if isinstance(op.dst, Mem):
            return [f"{self.p.local(op.dst)} = {op.a};"]
        return [ARITH["mov"].format(d=op.dst, a=self.term(op.a))]

    def arith(self, op):
        if op.a != op.dst:      # pragma: no cover - every layout's arithmetic is two-address
            raise GenError(f"C# printer: {op!r} is not in place")
        return [ARITH[op.name].format(d=op.dst, a=self.term(op.b))]

    def rotate(self, op):
        assert op.uniform and op.src == op.dst
        return [self.p.k["rotl" if op.left else "rotr"].format(d=op.dst, n=op.counts[0], m=64 - op.counts[0])]


class _CsScalarOps(_CsOps):
    """The W = 1 ops of kind scalar: words of the caller's memory read and written through the
    ``ref byte`` locals (the program's own arrays as locals), a word an arithmetic op reads loaded
    into an expression temporary printed at its one use."""

    def __init__(self, p: CsPrinter, names: set):
        super().__init__(p)
        self.names, self.expr = names, {}

    def term(self, a) -> str:
        return self.expr.pop(a) if isinstance(a, str) and a in self.expr else self.p.operand(a)

    def load(self, op):
        return load_word(self, op, self.p.operand, lambda a: ARITH["mov"].format(d=op.dst, a=a))

    def store(self, op):
        (w,) = op.words
        m = Mem(op.array, w)
        if m.array in self.p.refs:
            return [self.p.st(self.p.refs[m.array], self.p.byte_off(m), op.src)]
        return [f"{self.p.local(m)} = {op.src};"]


class _CsLanesOps(_CsOps):
    """The lanes kernels' ops (vector kinds)."""

    def __init__(self, p: CsPrinter):
        super().__init__(p)
        self.vec = p.vec

    def broadcast(self, op):        # a key word in every lane
        m = op.term
        return [f"{op.dst} = {api('broadcast', self.vec, self.p.ld_le(self.p.refs[m.array], self.p.byte_off(m)))};"]

    def _half(self) -> str:
        """The vector type of half this kind's lanes (Vector512 -> Vector256, Vector256 -> Vector128)."""
        return {n: v for v, n in VECTORS.items()}[self.p.k["lanes"] // 2]

    def load(self, op):
        p, vec = self.p, self.vec
        w0, ref = op.words[0], p.refs[op.array]
        used = [w for w in op.words if w is not None]
        if used == list(range(w0, w0 + len(used))) and op.words[len(used):] == (None,) * (len(op.words) - len(used)):
            if len(used) == len(op.words):
                return [f"{op.dst} = {dotnet.load(vec, ref, 8 * w0)};"]
            if 2 * len(used) == len(op.words):     # a row of half the lanes (the gather form): upper half 0
                half = self._half()
                return [f"{op.dst} = {api('halves', vec, dotnet.load(half, ref, 8 * w0), api('broadcast', half, '0UL'))};"]
        # lane b: its own word (tweaks), 0 where no word; vector kernels run only where BitConverter.IsLittleEndian
        lanes = ("0UL" if w is None else p.ld_le(ref, str(8 * w)) for w in op.words)
        return [f"{op.dst} = {api('create', vec, *lanes)};"]

    def store(self, op):
        ref, used = self.p.refs[op.array], [w for w in op.words if w is not None]
        w0 = used[0]
        if used == list(range(w0, w0 + len(used))) and op.words[:len(used)] == tuple(used):
            if len(used) == len(op.words):
                return [dotnet.store(op.src, ref, 8 * w0)]
            if 2 * len(used) == len(op.words):
                return [dotnet.store(api("lower", op.src), ref, 8 * w0)]
        raise GenError(f"C# lanes printer: a store of the words {op.words}")     # pragma: no cover

    def block(self, op):
        """A gather/scatter block of the lanes layout (gen/layouts/lanes.lower): row loads,
        transpose shuffles and zero rows into block temporaries (``var``, each assigned once; the
        ones nothing reads dropped), moves into the state, row stores; in a scope of its own."""
        body = list(op.body)
        if not ir.has_store(body):
            body = ir.dead_code(body, [o.dst for o in body if ir.is_mov(o)])
        out = []
        for o in body:
            for ln in ir.visit(o, self):
                out.append("var " + ln if ir.writes(o) is not None and not ir.is_mov(o) else ln)
        return ["{"] + ["    " + ln for ln in out] + ["}"]

    def const(self, op):
        if any(op.values):     # pragma: no cover - the scatter's only constant is its zero row
            raise GenError(f"C# lanes printer: constant {op.values}")
        return [f"{op.dst} = {api('broadcast', self.vec, '0UL')};"]

    def shuffle(self, op):
        a, b = op.srcs
        return [f"{op.dst} = {lanes_shuffle(self.p.kind, self.p.k['lanes'], a, b, op.lanes)};"]


def packed_kernel(nw: int) -> str:
    return f"{PACKED_VEC[nw][0].lower()}-packed"


def packed_lines(vp, nw: int) -> list[str]:
    """The packed one-block body (A = even words, B = odd words): the natural packed layout IR
    (gen/layouts/packed.py, one vector per half) formatted as C#."""
    vec, nl = PACKED_VEC[nw]
    out = [Line(f"ulong {', '.join(vp.scalars)};", locals=[("ulong", n, 1) for n in vp.scalars])] if vp.scalars else []
    out.append(Line(f"{vec}<ulong> {', '.join(vp.values)};", locals=[(f"{vec}<ulong>", n, 1) for n in vp.values]))
    return out + _CsPacked(vec, nl, nw, list(vp.body)).out


class _CsPacked:
    """The packed one-block body's ops (an IR visitor), with the subkey vectors waiting for the
    add that uses them."""

    def __init__(self, vec: str, nl: int, nw: int, body: list):
        self.vec, self.nl, self.body = vec, nl, body
        self.sp = CsPrinter("scalar", {"key": "key", "tweak": "tweak", "in": "src", "out": "dst"}, nw)
        self.out: list[str] = []
        self.expr: dict[str, str] = {}
        for self.i, op in enumerate(body):
            ir.visit(op, self)

    def scalar(self, op):
        self.out.append(self.sp.scalar(op))

    def note(self, op):
        self.out.append(f"// {op.text}")

    def load(self, op):
        self.out.append(f"{op.dst} = {dotnet.load(self.vec, 'src', 8 * op.words[0])};")

    def store(self, op):
        self.out.append(dotnet.store(op.src, "dst", 8 * op.words[0]))

    def shuffle(self, op):
        rest = self.body[self.i + 1:]
        self.out += packed_shuffle(self.vec, self.nl, op.dst, op.srcs, op.lanes,
                                   lambda: any(n in ir.reads(r) for r in rest for n in op.srcs
                                               if not ir.same_sources(r, op)))

    def insert(self, op):
        self.expr[op.dst] = api("create", self.vec, *(" + ".join(_cs_term(t) for t in ts) for ts in op.terms))

    def arith(self, op):
        assert op.a == op.dst
        self.out.append(ARITH[op.name].format(d=op.dst, a=self.expr.pop(op.b, op.b)))

    def rotate(self, op):
        self.out += packed_rotate(self.vec, self.nl, op.dst, op.src, op.counts, op.left).split("\n")


def _cs_term(t) -> str:
    return t if isinstance(t, str) else f"{t.base}UL"


def _section(p: CsPrinter, vp, part: str = "body", exclude=()) -> dict:
    """Declarations and statements of the setup (``part`` "setup") or the body of a W = 1
    program (gen/layouts/scalar.py); ``exclude``: values declared elsewhere."""
    ops, names = (vp.setup, vp.setup_values) if part == "setup" else (vp.body, vp.values)
    return {"decl": p.declare(n for n in names if n not in exclude),
            "code": p.lines(ops, vp.setup_values + vp.values)}


def _vsection(p: CsPrinter, vp, exclude=()) -> dict:
    """A lanes kernel section of the layout IR: its body's declared values, its body."""
    return {"decl": p.declare(v for v in vp.values if v not in exclude), "code": p.ir_lines(vp.body)}


def functions(spec, options, layout: str, laid: dict) -> dict:
    """Code sections for every direction: scalar one-block, scalar blocks, lane kernels, from
    the layout pass's output ``laid`` (gen/targets/csharp.py)."""
    nw = spec.nw
    out = {}
    for d in ("encrypt", "decrypt"):
        one, multi = laid[d]["one"], laid[d]["multi"]
        sp1 = CsPrinter("scalar", {"key": "key", "tweak": "tweak", "in": "src", "out": "dst"}, nw,
                        one.setup, one.body)
        spn = CsPrinter("scalar", {"key": "key", "tweak": "tweaks", "in": "src", "out": "dst"}, nw,
                        one.setup, multi.body, one.body)
        setup_vals = set(one.setup_values)
        f = {
            "arrays": sp1.arrays(one.setup, one.body),
            "setup": _section(sp1, one, "setup"),
            "body": _section(sp1, one),
            "blocks_arrays": spn.arrays(one.setup, multi.body, one.body),
            "multi_body": _section(spn, multi, "body", setup_vals),
            "tail_body": _section(spn, one, "body", setup_vals),
            "lanes": [],
            # The scalar blocks loop normally computes the key words once (setup) and keeps them
            # live across blocks.  Where they and the state exceed twice the 15 usable GPRs
            # (Threefish-1024: 17 + 16) the JIT spills that loop (measured 7.7 c/B bulk against 5.5
            # for its one-block path), so the loop runs the one-block code, setup included: key
            # words are re-read from memory per block, which costs less than the spills.
            # Tried (item 7): the loop (and the blocks left after an interleaved loop) calling the
            # one-block method marked AggressiveInlining instead of repeating its code.  Kept the
            # copy: verify's DOTNET_JitDisasm check failed -- Threefish-1024: the JIT does not
            # inline the 2.5k-instruction method, so *BlocksScalar holds a call and no rotates;
            # Threefish-256 i3: the method is inlined into every caller and never compiled alone
            # ("no listing").  The bench (threefish_gen/bench_csharp.py, v1.3, "AMD EPYC" 2 vCPUs
            # shared with other jobs; Scalar classes bulk c/B before -> after: 256 3.995 -> 0.842,
            # 512 0.747 -> 0.700, 1024 1.418 -> 6.204) was noise (the same run's Lanes256 chained
            # row: 2.05 -> 22.9), so it showed no speed either way.
            "blocks_per_block": (options.interleave == 1 and not sp1.arrays(one.setup, one.body)
                                 and len(setup_vals) + nw > 2 * 15),
        }
        if layout == "packed":
            f["packed"] = {"setup": _section(sp1, one, "setup"), "code": packed_lines(laid[d]["packed"], nw)}
        if layout == "lanes":
            # the vector kernels' own programs (--unroll loop: loop form, the scalar code unrolled)
            lone, lmulti = laid[d].get("lanes_one", one), laid[d].get("lanes_multi", multi)
            lsetup_vals = set(lone.setup_values)
            for kind in ("v512", "v256"):
                lp = CsPrinter(kind, {"key": "key", "tweak": "tweaks", "in": "src", "out": "dst"}, nw,
                               lone.setup, lmulti.body, lone.body)
                vm, v1 = laid[d]["lanes"][kind]
                f["lanes"].append({
                    "kind": kind, "lanes": KINDS[kind]["lanes"], "type": KINDS[kind]["type"],
                    "arrays": lp.arrays(lone.setup, lmulti.body, lone.body),
                    "setup": {"decl": lp.declare(lone.setup_values), "code": lp.ir_lines(v1.setup)},
                    "multi_body": _vsection(lp, vm, lsetup_vals),
                    "tail_body": _vsection(lp, v1, lsetup_vals),
                })
        out[d] = f
    return out


def render(v, laid: dict) -> dict[str, str]:
    """{Class.cs: text} from the layout pass's output."""
    layout = v.get("layout", "scalar")
    namespace = check_identifier(v.get("namespace", "ThreefishGen"), "namespace", dotted=True)
    cls = check_identifier(v.prefix, "class name")
    o = v.options
    counts = laid["counts"]
    notes = [f"layout {layout}; keys {o.keys} (subkeys "
             + ("computed on the fly" if o.keys == "fly" else "from a precomputed table")
             + f"); unroll {o.unroll}"
             + (" (vector kernels; scalar Encrypt/Decrypt and blocks tail unrolled)"
                if layout == "lanes" and o.unroll == "loop" else "")
             + f"; EncryptBlocks interleaves {o.interleave} block(s) (scalar) or lane group(s) (vector)",
             "ops per block (encrypt): " + ", ".join(f"{k} {n:g}" for k, n in counts.items())]
    if layout == "packed":
        vec, nl = PACKED_VEC[v.spec.nw]
        notes.append(f"Encrypt/Decrypt: one block packed in two {vec}<ulong> (A = even words, B = odd words), "
                     + ("AVX-512F" if v.spec.nw == 16 else "AVX-512VL vprolvq or AVX2 variable shifts")
                     + "; EncryptBlocks/DecryptBlocks: scalar")
    if layout == "lanes":
        notes.append("EncryptBlocks/DecryptBlocks: Vector512 x 8 blocks (AVX-512F), then Vector256 x 4 "
                     "blocks (AVX2), then scalar; chosen by IsSupported at JIT time")
    command = v.command("class")
    ctx = dict(spec=v.spec, namespace=namespace, cls=cls, command=command, notes=notes, layout=layout,
               packed_kernel=packed_kernel(v.spec.nw),
               interleave=o.interleave, fn=functions(v.spec, o, layout, laid), wipe=v.get("wipe", True))
    ctx["stackalloc"] = any("stackalloc" in ln for f in ctx["fn"].values()
                            for ln in f["arrays"] + f["blocks_arrays"] + [x for L in f["lanes"] for x in L["arrays"]])
    per = {name: n for d in ("encrypt", "decrypt") for name, n in kernel_locals(ctx["fn"][d], o.interleave).items()}
    ctx["burn"] = burn_bytes(per.values())
    ctx["burn_one"] = burn_one_bytes(n for name, n in per.items() if name in ("Block", "Packed"))
    return {f"{cls}.cs": render_template("csharp/threefish.cs.j2", **ctx)}


# Bytes per element of the locals and stackalloc scratch the kernels declare (the vector types:
# gen/isa/dotnet.py ELEMENT_BYTES, 8 bytes a lane).  A stackalloc'd vector (the lanes loop kernels' key table and
# subkey ring: Span<Vector512<ulong>> ks = stackalloc Vector512<ulong>[n]) takes its vector's size an
# element, like a vector local; the text scan the facts replaced counted such scratch 0 bytes, so
# Burn left most of the Vector512/Vector256 tables of --unroll loop lanes classes in place.
_CS_BYTES = dict(dotnet.ELEMENT_BYTES)
_CS_BYTES.update({f"stackalloc {t}": b for t, b in list(_CS_BYTES.items())})


def _declared(lines) -> int:
    """Bytes the locals and stackalloc scratch declared on ``lines`` take (the printer's facts)."""
    return sum(_CS_BYTES[t] * k for ln in lines if isinstance(ln, Line) for t, _, k in ln.locals)


def kernel_locals(f: dict, interleave: int) -> dict[str, int]:
    """Bytes of locals and stackalloc scratch each kernel method of one direction declares, by
    method (Block, Packed, BlocksScalar, Lanes512, Lanes256: the sections
    templates/csharp/threefish.cs.j2 prints in each, from the functions' dict ``f``)."""
    def sec(*secs):
        return [ln for x in secs for ln in (x if isinstance(x, list) else x["decl"] + x["code"])]

    tail = interleave > 1                     # the template prints the tail loops only then
    out = {"Block": _declared(sec(f["arrays"], f["setup"], f["body"]))}
    if "packed" in f:
        out["Packed"] = _declared(sec(f["packed"]["setup"], f["packed"]["code"]))
    if f["blocks_per_block"]:
        out["BlocksScalar"] = _declared(sec(f["setup"], f["body"]))
    else:
        out["BlocksScalar"] = _declared(sec(f["blocks_arrays"], f["setup"], f["multi_body"],
                                            *([f["tail_body"]] if tail else [])))
    for L in f["lanes"]:
        out[f"Lanes{64 * L['lanes']}"] = _declared(sec(L["arrays"], L["setup"], L["multi_body"],
                                                       *([L["tail_body"]] if tail else [])))
    return out


def burn_bytes(per_method, scratch: int = 0) -> int:
    """Bytes the C# wipe clears after a call: twice the most bytes of locals (and stackalloc
    scratch) one kernel method declares (``per_method``: kernel_locals' values), plus 1 KiB (the
    JIT's tier-0 code gives temporaries slots of their own), in 64-byte units.  Encrypt and
    Decrypt clear what their single-block kernels (Block, Packed) need, not what the 8-block
    Vector512 kernel needs (Threefish-256 lanes: 1.2 KiB instead of 11 KiB per 32-byte block).
    ``scratch``: bytes counted once (the Skein class: the stackalloc'd spans of the frames between
    a public method and Ubi, skein_burn_parts)."""
    return (2 * max(per_method, default=0) + scratch + 1024 + 63) // 64 * 64


# What BurnOne adds to twice the single-block kernels' declared bytes: the return address, the
# registers the kernel saves (six general-purpose ones and rbp; on Windows also xmm6-xmm15, 160
# bytes) and alignment.
BURN_ONE_SLACK = 256


def burn_one_bytes(per_method) -> int:
    """Bytes BurnOne clears after Encrypt/Decrypt: twice the most bytes one single-block kernel
    (Block, Packed) declares plus BURN_ONE_SLACK, in 64-byte units.  No 1 KiB for tier-0 frames
    (burn_bytes): those kernels are marked AggressiveOptimization, so the JIT never runs them as
    tier-0 code.  Their frames (.NET 10, x64 Linux, Zen 4, JitDisasm; bytes below the return
    address: pushes + sub rsp) against this bound, recommended options: Threefish-256 Block 40
    (bound 448), Packed 120 (512); 512 Block 120 (576), Packed 120 (704); 1024 lanes-class Block
    264 (832), Packed 296 (1088), scalar-layout Block (--unroll loop: stackalloc'd key ring) 888
    (1792).  As tier-0 code, which the attribute rules out, the same kernels' sub rsp was 304
    (256 Block), 528 (512 Block), 976 (1024 Block), 1360, 2672 and 688 (256, 512, 1024 Packed)."""
    return (2 * max(per_method, default=0) + BURN_ONE_SLACK + 63) // 64 * 64


def default_class(spec, layout: str) -> str:
    return f"Threefish{spec.bits}V{spec.version.replace('.', '')}{layout.capitalize()}"


# --------------------------------------------------------------------------- Skein

def skein_ubi(vp) -> dict:
    """The fused UBI block (gen/skein.ubi_program as one W = 1 body, gen/layouts/scalar.py
    ``lower(prog, fuse=True)``) as C#: the chaining value and tweak in locals h_0.., t_0, t_1
    (loaded from and stored back to the state span), the message block through ``ref byte src``."""
    nw = vp.nw
    p = CsPrinter("scalar", {"in": "src"}, nw, vp.body)
    if not all(a.startswith("ulong ") for a in p.arrays(vp.body)):
        raise GenError("C# Skein needs --keys fly --unroll full")     # local arrays: spans
    names = [f"h_{i}" for i in range(nw)]
    state_in = [f"ulong {n} = s[{i}];" for i, n in enumerate(names)]
    state_in.append(f"ulong t_0 = s[{nw}], t_1 = s[{nw + 1}];")
    state_out = [f"s[{i}] = {n};" for i, n in enumerate(names)] + [f"s[{nw}] = t_0;", f"s[{nw + 1}] = t_1;"]
    return {"decl": p.declare(vp.values), "code": p.lines(vp.body, vp.values), "state_in": state_in,
            "state_out": state_out}


def skein_render(v, laid) -> dict[str, str]:
    """TARGETS['csharp'] with --primitive skein: {Class.cs: text} (templates/csharp/skein.cs.j2);
    ``laid``: the UBI block as one W = 1 body (``ubi``), the UBI lanes kernels' programs
    (``lanes``: [(vector kind, lanes VProgram)], gen/targets/csharp.py ``skein_layout``)."""
    vp = laid["ubi"]
    namespace = check_identifier(v.get("namespace", "ThreefishGen"), "namespace", dotted=True)
    cls = check_identifier(v.prefix, "class name")
    spec, o = v.spec, v.options
    command = v.command("class")
    notes = [f"Skein-{spec.bits}: UBI = Threefish-{spec.bits} keyed by the chaining value, feed-forward and "
             "tweak update fused (locals); keys fly, unroll full",
             "HashMany (messages grouped by block count) and tree leaves: 8 (Vector512, AVX-512F) or 4 (Vector256, "
             "AVX2) messages at once through the UBI block in the lanes layout, chosen at run time "
             "(ManyKernel); scalar Ubi otherwise"]
    ivs = [(bits, [f"{w:#018x}UL" for w in skein.iv_words(spec, bits)]) for bits in skein.STANDARD_OUTPUTS[spec.bits]]
    ubi = skein_ubi(vp)
    wipe = v.get("wipe", True)
    if wipe:
        notes.append("wipe: every public method clears the stack below it (Burn), stackalloc'd secrets and "
                     "Incremental's pinned arrays are cleared (Dispose) (--no-wipe: no wipe)")
    lanes = skein_lanes(laid["lanes"], spec.nw)
    parts = skein_burn_parts(spec, ubi, lanes)
    ctx = dict(spec=spec, namespace=namespace, cls=cls, command=command, notes=notes, nw=spec.nw,
               nb=spec.block_bytes, nb_log2=spec.block_bytes.bit_length() - 1, ivs=ivs, ubi=ubi, wipe=wipe,
               lanes=lanes, burn=burn_bytes([parts["ubi"], parts["lanes"]], parts["spans"]), burn_parts=parts)
    return {f"{cls}.cs": render_template("csharp/skein.cs.j2", **ctx)}


def skein_stackalloc(spec) -> dict[tuple[str, str], int]:
    """Bytes of each span templates/csharp/skein.cs.j2 stackallocs, by (method, span) (tests/test_csharp.py
    checks this table against the rendered text)."""
    nb, nw = spec.block_bytes, spec.nw
    lanes = 3 * 8 * nb          # the lanes work area: chaining values, message blocks, results (8 lanes at most)
    return {("UbiAll", "last"): nb, ("Start", "cfg"): 32, ("Output", "s"): 8 * (nw + 2), ("Output", "blk"): nb,
            ("Output", "h"): nb, ("Pend", "blk"): nb, ("AppendBitsCore", "last"): 1,
            ("HashManyLanes", "start"): 8 * (nw + 2), ("HashManyLanes", "w"): lanes, ("HashManyLanes", "tw"): 128,
            ("LeavesLanes", "w"): lanes, ("LeavesLanes", "tw"): 128, ("LeavesLanes", "cv"): 8 * nw}


def skein_burn_parts(spec, ubi: dict, lanes=()) -> dict[str, int]:
    """What the C# Skein wipe's bound adds up (templates/csharp/skein.cs.j2 Burn): ``ubi``, the bytes
    of Ubi's locals (the chaining value and tweak words it loads, h_*, t_0, t_1, and the key,
    tweak and state words its declarations print, from the printer's facts); ``lanes``, the most
    bytes of vector locals one UBI lanes kernel declares (skein_lanes); ``spans``, every
    stackalloc'd span of the methods between a public method and a kernel (skein_stackalloc)."""
    state = 8 * (spec.nw + 2)                          # ubi.state_in: h_0.. and t_0, t_1
    return {"ubi": state + _declared(ubi["decl"]), "lanes": max((_declared(k["decl"]) for k in lanes), default=0),
            "spans": sum(skein_stackalloc(spec).values())}


def skein_lanes(kernels, nw: int) -> list[dict]:
    """The UBI block of L independent messages at once (HashMany, tree leaves): ``kernels``,
    [(vector kind, VProgram)]: gen/skein.py ubi_lanes_program (the Threefish description with the
    chaining value per lane) in the lanes layout's gather/transpose form (gen/layouts/lanes.lower)
    for Vector512 (8 lanes, AVX-512F) and Vector256 (4 lanes, AVX2), printed by the Threefish
    lanes kernels' printer.  The kernel reads ``src`` = L chaining values then L message blocks,
    ``tweaks`` = L tweaks (16 bytes each) and writes ``dst`` = the L new chaining values."""
    out = []
    for kind, vp in kernels:
        L = KINDS[kind]["lanes"]
        if vp.prologue or vp.setup or vp.arrays:     # pragma: no cover - keys fly, unroll full
            raise GenError("C# Skein lanes: the UBI lanes program has setup or arrays")
        p = CsPrinter(kind, {"in": "src", "tweak": "tweaks", "out": "dst"}, nw)
        out.append({"kind": kind, "lanes": L, "bits": 64 * L, "type": KINDS[kind]["type"],
                    "decl": p.declare(vp.values), "code": p.ir_lines(vp.body)})
    return out
