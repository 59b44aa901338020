"""Printer for the C# target (.NET, net10.0): one static class per variant.

Two layouts of the same description program:

* ``scalar``: one ``ulong`` local per word, ``BitOperations.RotateLeft`` (one ``rol``);
* ``lanes``: the scalar one-block path plus word-sliced ``Vector512<ulong>`` (8 blocks,
  AVX-512F ``vprolq``) and ``Vector256<ulong>`` (4 blocks, AVX2 shift pairs) kernels for
  ``EncryptBlocks``/``DecryptBlocks``, chosen at run time by ``IsSupported`` (JIT-time
  constants), with the scalar kernel for the tail and as the fallback.

Instruction selection is the ``KINDS`` table; every shift count, rotation count and
permute control is a literal in the emitted code.  File structure and the public API
live in ``templates/csharp/``.
"""
from __future__ import annotations

import re

from ..dsl import Idx, Loop, Mem, Op, array_sizes, values
from ..errors import GenError
from ..layouts import transpose as lanes_layout
from ..layouts import packed as packed_layout
from ..layouts import scalar as scalar_layout
from ..threefish import Program, describe
from . import render_template

LAYOUTS = ("scalar", "lanes", "packed")

# Value type and statement forms per machine kind.  {d} destination, {a} operand, {n}/{m} counts.
KINDS = {
    "scalar": dict(
        type="ulong", lanes=1,
        imm="{v}UL",
        rotl="{d} = BitOperations.RotateLeft({d}, {n});",
        rotr="{d} = BitOperations.RotateRight({d}, {n});"),
    "v256": dict(
        type="Vector256<ulong>", lanes=4,
        imm="Vector256.Create({v}UL)",
        rotl="{d} = Avx2.Or(Avx2.ShiftLeftLogical({d}, {n}), Avx2.ShiftRightLogical({d}, {m}));",
        rotr="{d} = Avx2.Or(Avx2.ShiftRightLogical({d}, {n}), Avx2.ShiftLeftLogical({d}, {m}));"),
    "v512": dict(
        type="Vector512<ulong>", lanes=8,
        imm="Vector512.Create({v}UL)",
        rotl="{d} = Avx512F.RotateLeft({d}, {n});",
        rotr="{d} = Avx512F.RotateRight({d}, {n});"),
}
ARITH = {"mov": "{d} = {a};", "add": "{d} += {a};", "sub": "{d} -= {a};", "xor": "{d} ^= {a};"}

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
    """Turns description ops into C# statements for one machine kind.

    ``refs`` maps the function's input/output arrays (key, tweak, in, out) to ``ref byte``
    locals; other arrays are local ``Span`` scratch (stackalloc'd once per call)."""

    def __init__(self, kind: str, refs: dict[str, str], nw: int, *op_lists):
        self.kind, self.k, self.refs, self.nw = kind, KINDS[kind], refs, nw
        # Local arrays only ever indexed by constants become plain locals (registers, no
        # stackalloc, no bounds checks): arr[i] -> arr_i.
        affine, seen = set(), set()
        for ops in op_lists:
            for item in ops:
                for op in (item.body if isinstance(item, Loop) else [item]):
                    if isinstance(op.a, Mem) and op.a.array not in refs:
                        seen.add(op.a.array)
                        if op.a.index.scale:
                            affine.add(op.a.array)
        self.flat = seen - affine

    def index(self, idx: Idx) -> str:
        return str(idx).replace("*", " * ")

    @staticmethod
    def ld(ref: str, off: str) -> str:
        """Little-endian load at any alignment (Unsafe/BinaryPrimitives are JIT intrinsics, never
        calls, whatever the method size; IsLittleEndian folds to a constant)."""
        at = f"Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref {ref}, {off}))"
        return f"(BitConverter.IsLittleEndian ? {at} : BinaryPrimitives.ReverseEndianness({at}))"

    @staticmethod
    def ld_le(ref: str, off: str) -> str:
        return f"Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref {ref}, {off}))"

    @staticmethod
    def st(ref: str, off: str, v: str) -> str:
        return (f"Unsafe.WriteUnaligned(ref Unsafe.Add(ref {ref}, {off}), "
                f"BitConverter.IsLittleEndian ? {v} : BinaryPrimitives.ReverseEndianness({v}));")

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
            if a.array in self.refs:
                ref = self.refs[a.array]
                if self.kind == "scalar":
                    return self.ld(ref, self.byte_off(a))
                # Vector kernels run only where BitConverter.IsLittleEndian (their dispatch checks
                # it), so their scalar key/tweak reads are plain unaligned loads.
                if a.array == "key":       # the same key in every lane
                    return f"{self.k['type'].split('<')[0]}.Create({self.ld_le(ref, self.byte_off(a))})"
                if a.array == "tweak":     # lane b of group g: tweak word of block g*L + b
                    assert a.index.scale == 0
                    g, w = divmod(a.index.base, 2)
                    nl = self.k["lanes"]
                    lanes = ", ".join(self.ld_le(ref, str(16 * (g * nl + b) + 8 * w)) for b in range(nl))
                    return f"{self.k['type'].split('<')[0]}.Create({lanes})"
                raise AssertionError(a)  # 'in' words come from the lane transposition
            return self.local(a)
        if a.scale:
            v = f"(ulong)({self.index(a)})"
            return v if self.kind == "scalar" else f"{self.k['type'].split('<')[0]}.Create({v})"
        return self.k["imm"].format(v=_hex(a.base))

    def op(self, op: Op) -> str:
        if op.kind == "note":
            return f"// {op.a}"
        if op.kind == "store":
            m = op.a
            if m.array in self.refs:
                assert self.kind == "scalar"
                return self.st(self.refs[m.array], self.byte_off(m), op.dst)
            return f"{self.local(m)} = {op.dst};"
        if op.kind in ("rotl", "rotr"):
            return self.k[op.kind].format(d=op.dst, n=op.a, m=64 - op.a)
        return ARITH[op.kind].format(d=op.dst, a=self.operand(op.a))

    def lines(self, ops) -> list[str]:
        out: list[str] = []
        ops = list(ops)
        if self.kind != "scalar":
            ops, pre, post = self._edges(ops)
            out.extend(pre)
        for item in ops:
            if isinstance(item, Loop):
                out.append(f"for (int c = 0; c < {item.count}; c++)")
                out.append("{")
                out.extend("    " + self.op(op) for op in item.body)
                out.append("}")
            else:
                out.append(self.op(item))
        if self.kind != "scalar":
            out.extend(post)
        return out

    # ---- lanes: the change of layout at the edges of the body
    def _edges(self, ops):
        loads = {op.a.index.base: op.dst for op in ops
                 if isinstance(op, Op) and op.kind == "mov" and isinstance(op.a, Mem) and op.a.array == "in"}
        stores = {op.a.index.base: op.dst for op in ops
                  if isinstance(op, Op) and op.kind == "store" and isinstance(op.a, Mem) and op.a.array == "out"}
        if not loads:
            return ops, [], []
        nw, nl = self.nw, self.k["lanes"]
        groups = len(loads) // nw       # interleaved programs: block blk of the description = lane group blk
        assert sorted(loads) == list(range(groups * nw)) and sorted(stores) == sorted(loads)
        rest = [op for op in ops if not (isinstance(op, Op) and (
            (op.kind == "mov" and isinstance(op.a, Mem) and op.a.array == "in")
            or (op.kind == "store" and isinstance(op.a, Mem) and op.a.array == "out")))]
        src, dst = self.refs["in"], self.refs["out"]
        vbytes = 8 * nl
        vec = self.k["type"].split("<")[0]
        pre, post = [], []
        for g in range(groups):
            tag = self.gtag(g, groups)
            base = g * nl * nw * 8
            sv = [f"s{tag}{j}" for j in range(nw)]
            pre.append(f"// load {nl} blocks (lane group {g}) and transpose to one vector per word")
            pre += [f"{sv[j]} = {vec}.LoadUnsafe(ref {src}, {base + vbytes * j}).AsUInt64();" for j in range(nw)]
            pre += self._transpose(sv, [loads[g * nw + i] for i in range(nw)], True, tag)
            post.append(f"// transpose back to stream order and store {nl} blocks (lane group {g})")
            post += self._transpose([stores[g * nw + i] for i in range(nw)], sv, False, tag)
            post += [f"{sv[j]}.AsByte().StoreUnsafe(ref {dst}, {base + vbytes * j});" for j in range(nw)]
        return rest, pre, post

    @staticmethod
    def gtag(g: int, groups: int) -> str:
        return "abcd"[g] if groups > 1 else ""

    def _transpose(self, srcs: list[str], dsts: list[str], load: bool, gt: str = "") -> list[str]:
        if self.kind == "v256":
            return self._transpose4x4(srcs, dsts, load, gt)
        plan, stages = (lanes_layout.load_plan if load else lanes_layout.store_plan)(self.nw, 8)
        tag = ("l" if load else "t") + gt
        cur = list(srcs)
        out = []
        for st in range(stages):
            nxt = [None] * self.nw
            for op in (o for o in plan if o.stage == st):
                name = dsts[op.dst] if st == stages - 1 else f"{tag}{st}_{op.dst}"
                idx = ", ".join(f"{i}UL" for i in op.idx)
                out.append(f"{name} = Avx512F.PermuteVar8x64x2({cur[op.lo]}, Vector512.Create({idx}), {cur[op.hi]});")
                nxt[op.dst] = name
            cur = nxt
        return out

    def _transpose4x4(self, srcs, dsts, load: bool, gt: str = "") -> list[str]:
        """AVX2 4x4 word transposes (unpack + vperm2i128), one per group of 4 words."""
        nw, g4 = self.nw, self.nw // 4
        tag = ("l" if load else "t") + gt
        out = []
        for g in range(g4):
            if load:   # rows: words 4g..4g+3 of block b = stream vector b*g4 + g
                rows = [srcs[b * g4 + g] for b in range(4)]
                cols = [dsts[4 * g + k] for k in range(4)]
            else:
                rows = [srcs[4 * g + k] for k in range(4)]
                cols = [dsts[b * g4 + g] for b in range(4)]
            t = [f"{tag}{g}_{k}" for k in range(4)]
            out += [f"{t[0]} = Avx2.UnpackLow({rows[0]}, {rows[1]});",
                    f"{t[1]} = Avx2.UnpackHigh({rows[0]}, {rows[1]});",
                    f"{t[2]} = Avx2.UnpackLow({rows[2]}, {rows[3]});",
                    f"{t[3]} = Avx2.UnpackHigh({rows[2]}, {rows[3]});",
                    f"{cols[0]} = Avx2.Permute2x128({t[0]}, {t[2]}, 0x20);",
                    f"{cols[1]} = Avx2.Permute2x128({t[1]}, {t[3]}, 0x20);",
                    f"{cols[2]} = Avx2.Permute2x128({t[0]}, {t[2]}, 0x31);",
                    f"{cols[3]} = Avx2.Permute2x128({t[1]}, {t[3]}, 0x31);"]
        assert nw % 4 == 0
        return out

    def temps(self, groups: int = 1) -> list[str]:
        """Names the lane transposition needs besides the description's values."""
        if self.kind == "scalar":
            return []
        names = []
        for g in range(groups):
            gt = self.gtag(g, groups)
            names += [f"s{gt}{j}" for j in range(self.nw)]
            if self.kind == "v256":
                for tag in "lt":
                    names += [f"{tag}{gt}{q}_{k}" for q in range(self.nw // 4) for k in range(4)]
            else:
                for load, tag in ((True, "l"), (False, "t")):
                    plan, stages = (lanes_layout.load_plan if load else lanes_layout.store_plan)(self.nw, 8)
                    names += [f"{tag}{gt}{op.stage}_{op.dst}" for op in plan if op.stage < stages - 1]
        return names

    def declarations(self, ops, exclude=(), extra=()) -> list[str]:
        decl = []
        names = [v for v in values(ops) if v not in exclude] + list(extra)
        for i in range(0, len(names), 10):
            decl.append(f"{self.k['type']} " + ", ".join(names[i:i + 10]) + ";")
        return decl

    def arrays(self, *op_lists) -> list[str]:
        sizes: dict[str, int] = {}
        for ops in op_lists:
            for arr, n in array_sizes(ops).items():
                if arr not in self.refs:
                    sizes[arr] = max(sizes.get(arr, 0), n)
        t = self.k["type"]
        out = []
        for arr, n in sorted(sizes.items()):
            if arr in self.flat:
                names = [f"{arr}_{i}" for i in range(n)]
                out += [f"{t} " + ", ".join(names[i:i + 10]) + ";" for i in range(0, n, 10)]
            else:
                out.append(f"Span<{t}> {arr} = stackalloc {t}[{n}];")
        return out


PACKED_VEC = {4: ("Vector128", 2), 8: ("Vector256", 4), 16: ("Vector512", 8)}


def packed_kernel(nw: int) -> str:
    return f"{PACKED_VEC[nw][0].lower()}-packed"


def packed_lines(prog) -> list[str]:
    """The packed one-block body (A = even words, B = odd words) from the description program."""
    nw = prog.spec.nw
    vec, nl = PACKED_VEC[nw]
    scalar = CsPrinter("scalar", {"key": "key", "tweak": "tweak", "in": "src", "out": "dst"}, nw)
    t = f"{vec}<ulong>"
    vb = 8 * nl

    def cvec(vals) -> str:
        return f"{vec}.Create({', '.join(f'{v}UL' for v in vals)})"

    def rot(direction: str, counts) -> str:
        name = "RotateLeftVariable" if direction == "l" else "RotateRightVariable"
        if nw == 16:
            return f"B = Avx512F.{name}(B, {cvec(counts)});"
        first, second = ("ShiftLeftLogicalVariable", "ShiftRightLogicalVariable")[::1 if direction == "l" else -1]
        return (f"B = Avx512F.VL.IsSupported ? Avx512F.VL.{name}(B, {cvec(counts)})\n"
                f"    : Avx2.Or(Avx2.{first}(B, {cvec(counts)}), Avx2.{second}(B, {cvec(64 - c for c in counts)}));")

    def permute(v: str, p) -> str:
        if nl == 2:
            return f"{v} = Sse2.Shuffle({v}.AsUInt32(), 0x4E).AsUInt64();"
        if nl == 4:
            return f"{v} = Avx2.Permute4x64({v}, {sum(x << (2 * j) for j, x in enumerate(p)):#04x});"
        return f"{v} = Avx512F.PermuteVar8x64({v}, {cvec(p)});"

    def term(a) -> str:
        return a if isinstance(a, str) else f"{a.base}UL"

    steps = packed_layout.map_program(prog)
    names = list(dict.fromkeys(st[1].dst for st in steps if st[0] == "scalar"))
    out = ([f"ulong {', '.join(names)};"] if names else []) + [f"{t} A, B, V0, V1;"]
    for step in steps:
        kind = step[0]
        if kind == "scalar":
            out.append(scalar.op(step[1]))
        elif kind == "load":
            out.append("// load: A = even words, B = odd words")
            out += [f"V0 = {vec}.LoadUnsafe(ref src, 0).AsUInt64();", f"V1 = {vec}.LoadUnsafe(ref src, {vb}).AsUInt64();"]
            if nl == 2:
                out += ["A = Sse2.UnpackLow(V0, V1);", "B = Sse2.UnpackHigh(V0, V1);"]
            elif nl == 4:
                out += ["A = Avx2.Permute4x64(Avx2.UnpackLow(V0, V1), 0xd8);",
                        "B = Avx2.Permute4x64(Avx2.UnpackHigh(V0, V1), 0xd8);"]
            else:
                out += [f"A = Avx512F.PermuteVar8x64x2(V0, {cvec(range(0, 16, 2))}, V1);",
                        f"B = Avx512F.PermuteVar8x64x2(V0, {cvec(range(1, 16, 2))}, V1);"]
        elif kind == "store":
            out.append("// store: interleave A and B back into word order")
            if nl == 2:
                out += ["V0 = Sse2.UnpackLow(A, B);", "V1 = Sse2.UnpackHigh(A, B);"]
            elif nl == 4:
                out += ["A = Avx2.Permute4x64(A, 0xd8);", "B = Avx2.Permute4x64(B, 0xd8);",
                        "V0 = Avx2.UnpackLow(A, B);", "V1 = Avx2.UnpackHigh(A, B);"]
            else:
                out += [f"V0 = Avx512F.PermuteVar8x64x2(A, {cvec([0, 8, 1, 9, 2, 10, 3, 11])}, B);",
                        f"V1 = Avx512F.PermuteVar8x64x2(A, {cvec([4, 12, 5, 13, 6, 14, 7, 15])}, B);"]
            out += ["V0.AsByte().StoreUnsafe(ref dst, 0);", f"V1.AsByte().StoreUnsafe(ref dst, {vb});"]
        elif kind == "mix":
            rd = step[1]
            out += [f"// round, rotation row {rd}", "A += B;", *rot("l", prog.spec.rot[rd]).split("\n"), "B ^= A;"]
        elif kind == "unmix":
            rd = step[1]
            out += [f"// inverse round, rotation row {rd}", "B ^= A;", *rot("r", prog.spec.rot[rd]).split("\n"),
                    "A -= B;"]
        elif kind == "permute":
            if step[1] is not None:
                out.append(permute("A", step[1]))
            if step[2] is not None:
                out.append(permute("B", step[2]))
        elif kind == "key":
            sign, terms = step[1], step[2]
            op = "+=" if sign > 0 else "-="
            exprs = [" + ".join(term(a) for a in ts) for ts in terms]
            out.append(f"A {op} {vec}.Create({', '.join(exprs[0::2])});")
            out.append(f"B {op} {vec}.Create({', '.join(exprs[1::2])});")
    return out


def _section(p: CsPrinter, ops, exclude=(), extra=()) -> dict:
    return {"decl": p.declarations(ops, exclude, extra), "code": p.lines(ops)}


def functions(spec, options, layout: str) -> dict:
    """Code sections for every direction: scalar one-block, scalar blocks, lane kernels."""
    nw = spec.nw
    out = {}
    for d in ("encrypt", "decrypt"):
        one = describe(spec, options, d, 1)
        multi = describe(spec, options, d, options.interleave)
        sp1 = CsPrinter("scalar", {"key": "key", "tweak": "tweak", "in": "src", "out": "dst"}, nw,
                        one.setup, one.body)
        spn = CsPrinter("scalar", {"key": "key", "tweak": "tweaks", "in": "src", "out": "dst"}, nw,
                        one.setup, multi.body, one.body)
        setup_vals = set(values(one.setup))
        f = {
            "arrays": sp1.arrays(one.setup, one.body),
            "setup": _section(sp1, one.setup),
            "body": _section(sp1, one.body),
            "blocks_arrays": spn.arrays(one.setup, multi.body, one.body),
            "multi_body": _section(spn, multi.body, setup_vals),
            "tail_body": _section(spn, one.body, setup_vals),
            "lanes": [],
            # The scalar blocks loop normally computes the key words once (setup) and keeps them
            # live across blocks.  Where they and the state exceed twice the 15 usable GPRs
            # (Threefish-1024: 17 + 16) the JIT spills that loop (measured 7.7 c/B bulk against 5.5
            # for its one-block path), so the loop runs the one-block code, setup included: key
            # words are re-read from memory per block, which costs less than the spills.
            "blocks_per_block": (options.interleave == 1 and not sp1.arrays(one.setup, one.body)
                                 and len(setup_vals) + nw > 2 * 15),
        }
        if layout == "packed":
            f["packed"] = {"setup": _section(sp1, one.setup), "code": packed_lines(one)}
        if layout == "lanes":
            for kind in ("v512", "v256"):
                lp = CsPrinter(kind, {"key": "key", "tweak": "tweaks", "in": "src", "out": "dst"}, nw,
                               one.setup, multi.body, one.body)
                f["lanes"].append({
                    "kind": kind, "lanes": KINDS[kind]["lanes"], "type": KINDS[kind]["type"],
                    "arrays": lp.arrays(one.setup, multi.body, one.body),
                    "setup": _section(lp, one.setup),
                    "multi_body": _section(lp, multi.body, setup_vals, lp.temps(options.interleave)),
                    "tail_body": _section(lp, one.body, setup_vals, lp.temps()),
                })
        out[d] = f
    return out


def render(v) -> dict[str, str]:
    """TARGETS['csharp']: {Class.cs: text}."""
    layout = v.get("layout", "scalar")
    if layout not in LAYOUTS:
        raise GenError(f"unknown csharp layout {layout!r} (choose from {', '.join(LAYOUTS)})")
    namespace = check_identifier(v.get("namespace", "ThreefishGen"), "namespace", dotted=True)
    cls = check_identifier(v.prefix, "class name")
    o = v.options
    prog = describe(v.spec, o, "encrypt", 1)
    counts = scalar_layout.op_counts(prog)
    notes = [f"layout {layout}; keys {o.keys} (subkeys "
             + ("computed on the fly" if o.keys == "fly" else "from a precomputed table")
             + f"); unroll {o.unroll}; EncryptBlocks interleaves {o.interleave} block(s) (scalar) or lane group(s) (vector)",
             "ops per block (encrypt): " + ", ".join(f"{k} {n:g}" for k, n in counts.items())]
    if layout == "packed":
        vec, nl = PACKED_VEC[v.spec.nw]
        notes.append(f"Encrypt/Decrypt: one block packed in two {vec}<ulong> (A = even words, B = odd words), "
                     + ("AVX-512F" if v.spec.nw == 16 else "AVX-512VL vprolvq or AVX2 variable shifts")
                     + "; EncryptBlocks/DecryptBlocks: scalar")
    if layout == "lanes":
        notes.append("EncryptBlocks/DecryptBlocks: Vector512 x 8 blocks (AVX-512F), then Vector256 x 4 "
                     "blocks (AVX2), then scalar; chosen by IsSupported at JIT time")
    command = (f"threefish-gen render --target csharp --size {v.spec.bits} --version {v.spec.version} "
               f"--layout {layout} --keys {o.keys} --unroll {o.unroll} --interleave {o.interleave} "
               f"--namespace {namespace} --class {cls}")
    ctx = dict(spec=v.spec, namespace=namespace, cls=cls, command=command, notes=notes, layout=layout,
               packed_kernel=packed_kernel(v.spec.nw),
               interleave=o.interleave, fn=functions(v.spec, o, layout))
    return {f"{cls}.cs": render_template("csharp/threefish.cs.j2", **ctx)}


def default_class(spec, layout: str) -> str:
    return f"Threefish{spec.bits}V{spec.version.replace('.', '')}{layout.capitalize()}"
