"""The .NET vector API (C#, .NET 10) as the C# printer spells it and the C# prove reader reads it:
``Vector128/256/512<ulong>`` and the x86 hardware intrinsic classes ``Sse2``, ``Avx2``,
``Avx512F``, ``Avx512F.VL`` (System.Runtime.Intrinsics.X86).

* ``INTRINSICS``: every x86 intrinsic method the printer spells, with the x86 instruction it
  compiles to (a ``SEMANTICS`` row of gen/isa/x86.py, which gives its lane terms) and the order
  of its arguments there; :func:`call` spells one and refuses a name the table lacks;
* ``KINDS``: per machine kind (``scalar`` ulong, ``v256``, ``v512``) the value type, the
  constant and the uniform rotations; ``OPERATORS``: the compound assignments of the
  lane-wise operators (``+= -= ^=``);
* ``API``: every portable call the printer spells (``Vector256.Create``, ``LoadUnsafe``/
  ``StoreUnsafe`` through a byte ref, ``GetLower``/``GetUpper``, the ``As*`` views; on one
  ulong ``BitOperations.RotateLeft/Right``, ``BinaryPrimitives.ReverseEndianness``,
  ``Unsafe.ReadUnaligned/WriteUnaligned``), each with the C# method it calls, what its
  arguments are and its meaning as lane terms; :func:`api` spells one, :func:`api_row` finds
  the row a parsed call reads as;
* the lane shuffles and per-lane rotations of the lanes and packed kernels
  (:func:`lanes_shuffle`, :func:`packed_shuffle`, :func:`packed_rotate`).
"""
from __future__ import annotations

from dataclasses import dataclass

# .NET x86 intrinsic method -> (x86 intrinsic of gen/isa/x86.py SEMANTICS, with {bits} the vector
# width where the C name carries it; the .NET arguments in that intrinsic's order)
INTRINSICS = {
    "PermuteVar8x64x2": ("permutex2var_epi64", (0, 1, 2)),
    "PermuteVar8x64": ("permutexvar_epi64", (1, 0)),
    "Permute4x64": ("permute4x64_epi64", (0, 1)),
    "Permute2x128": ("permute2x128_si256", (0, 1, 2)),
    "UnpackLow": ("unpacklo_epi64", (0, 1)),
    "UnpackHigh": ("unpackhi_epi64", (0, 1)),
    "Shuffle": ("shuffle_epi32", (0, 1)),
    "ShiftLeftLogical": ("slli_epi64", (0, 1)),
    "ShiftRightLogical": ("srli_epi64", (0, 1)),
    "ShiftLeftLogicalVariable": ("sllv_epi64", (0, 1)),
    "ShiftRightLogicalVariable": ("srlv_epi64", (0, 1)),
    "RotateLeft": ("rol_epi64", (0, 1)),
    "RotateRight": ("ror_epi64", (0, 1)),
    "RotateLeftVariable": ("rolv_epi64", (0, 1)),
    "RotateRightVariable": ("rorv_epi64", (0, 1)),
    "Or": ("or_si{bits}", (0, 1)),
    "Xor": ("xor_si{bits}", (0, 1)),
    "Add": ("add_epi64", (0, 1)),
    "Subtract": ("sub_epi64", (0, 1)),
}
CLASSES = ("Avx512F", "Avx512F.VL", "Avx2", "Avx", "Sse2")
VECTORS = {"Vector128": 2, "Vector256": 4, "Vector512": 8}
# Bytes of one element of the ulong and vector locals and stackalloc'd spans (8 a lane).
ELEMENT_BYTES = {"ulong": 8, **{f"{v}<ulong>": 8 * n for v, n in VECTORS.items()}}


# --------------------------------------------------------------------------- the portable API

VECTOR, VALUE = "Vector", "value"


@dataclass(frozen=True)
class Api:
    """One call of the portable API (System.Runtime.Intrinsics, System.Numerics,
    System.Buffers.Binary, System.Runtime.CompilerServices): ``name`` the C# method, ``on``
    what it is called on: ``VECTOR`` a vector class (``Vector256.Create(..)``: the class gives the
    lanes w), ``VALUE`` a vector value (``x.GetLower()``: w is its lanes; the value is the row's
    first argument), else the static class of a call on one ulong (``BitOperations``: w = 1, the
    row's result a lane).  ``operands``, what the call's arguments are, in order:

    ``scalar``  a ulong (or a count);  ``lanes``: one ulong per lane (w of them);
    ``half``    a vector of w / 2 lanes;
    ``ref``     a ref expression, ``ref e``: a byte address;
    ``at``      a byte ref and a byte offset, ``ref r, k`` (two C# arguments, one row argument:
                the address r + k);

    ``row(m, w, args)``: the meaning through the lane reader of gen/isa/common.py (memory is
    ``m.load``/``m.store`` of ulong lanes: the reader reads them in its byte order)."""

    name: str
    operands: tuple
    row: object
    on: str = VECTOR


def _half(m, x, w: int) -> tuple:
    x = m.vec(x)
    if len(x) != w // 2:
        m.unsupported(f"a vector of {len(x)} lanes where half of {w} is read")
    return x


def _store(m, w, a):
    m.store(a[1], m.vec(a[0]))


def _view(m, w, a):
    """A reinterpretation (AsUInt64, AsByte, AsUInt32): the same bits, so the same lanes (the
    compiler types the operations; an x86 row reads bytes or dwords through ``m.bytes``)."""
    return m.vec(a[0])


def _bswap(m, w, a):
    (t,) = m.words(m.bytes((a[0],))[::-1])
    return t


API = {
    # vectors of ulong lanes: built, read and written through a byte ref, halves, views
    "broadcast": Api("Create", ("scalar",), lambda m, w, a: (a[0],) * w),
    "create": Api("Create", ("lanes",), lambda m, w, a: tuple(a)),
    "halves": Api("Create", ("half", "half"), lambda m, w, a: _half(m, a[0], w) + _half(m, a[1], w)),
    "load": Api("LoadUnsafe", ("at",), lambda m, w, a: m.load(a[0], w)),
    "store": Api("StoreUnsafe", ("at",), _store, VALUE),
    "lower": Api("GetLower", (), lambda m, w, a: m.vec(a[0])[:w // 2], VALUE),
    "upper": Api("GetUpper", (), lambda m, w, a: m.vec(a[0])[w // 2:], VALUE),
    "as_ulong": Api("AsUInt64", (), _view, VALUE),
    "as_uint": Api("AsUInt32", (), _view, VALUE),
    "as_byte": Api("AsByte", (), _view, VALUE),
    # one ulong: rotations, the byte swap, a word read and written at any alignment
    "rotl": Api("RotateLeft", ("scalar", "scalar"), lambda m, w, a: m.rotl(a[0], m.imm(a[1])), "BitOperations"),
    "rotr": Api("RotateRight", ("scalar", "scalar"), lambda m, w, a: m.rotl(a[0], -m.imm(a[1])), "BitOperations"),
    "bswap": Api("ReverseEndianness", ("scalar",), _bswap, "BinaryPrimitives"),
    "read": Api("ReadUnaligned<ulong>", ("ref",), lambda m, w, a: m.load(a[0], 1)[0], "Unsafe"),
    "write": Api("WriteUnaligned", ("ref", "scalar"), lambda m, w, a: m.store(a[0], (a[1],)), "Unsafe"),
}

_API_ON = frozenset(r.on for r in API.values())     # what API rows are called on (api_on: a set, not a scan per call)


def api(form: str, on: str | None, *args) -> str:
    """The C# call of the ``API`` row ``form`` on ``on`` (the vector class, or the value of a
    ``VALUE`` row; None: the row's static class); ``args`` fill its operands in order (an ``at``
    operand takes two: the ref's name and the byte offset; ``lanes`` takes the rest)."""
    r = API[form]
    out, rest = [], list(args)
    for kind in r.operands:
        if kind == "lanes":
            out, rest = out + [str(x) for x in rest], []
        elif kind == "at":
            out.append(f"ref {rest.pop(0)}, {rest.pop(0)}")
        elif kind == "ref":
            out.append(f"ref {rest.pop(0)}")
        else:
            out.append(str(rest.pop(0)))
    if rest:
        raise AssertionError(f"{form}: arguments left over: {rest}")
    if (on is None) != (r.on not in (VECTOR, VALUE)):
        raise AssertionError(f"{form} is called on {r.on}, not {on}")
    return f"{on or r.on}.{r.name}({', '.join(out)})"


def load(vec: str, ref: str, off) -> str:
    """A vector of ulong lanes read from the bytes at ``ref`` + ``off`` (any alignment)."""
    return api("as_ulong", api("load", vec, ref, off))


def store(x: str, ref: str, off) -> str:
    """The statement writing the lanes of ``x`` to the bytes at ``ref`` + ``off``."""
    return api("store", api("as_byte", x), ref, off) + ";"


_SHAPES = {"scalar": (None,), "half": ("half",), "ref": ("ref",), "at": ("ref", None)}


def _fits(r: Api, shapes: tuple, w: int) -> bool:
    want = []
    for kind in r.operands:
        want += [None] * w if kind == "lanes" else [w // 2 if x == "half" else x for x in _SHAPES[kind]]
    return tuple(want) == tuple(shapes)


def api_row(on: str, name: str, shapes: tuple, w: int) -> Api | None:
    """The ``API`` row a parsed call reads as, or None: ``on`` is ``VECTOR`` (a call on a vector
    class of w lanes), ``VALUE`` (on a vector value of w lanes) or the static class; ``name`` the
    method; ``shapes`` per C# argument, ``"ref"`` for a ref, None for a scalar, the lane count
    of a vector."""
    for r in API.values():
        if r.name == name and r.on == on and _fits(r, shapes, w):
            return r
    return None


def api_args(r: Api, vals: list, at, receiver=None) -> list:
    """A row's arguments from a call's evaluated C# arguments ``vals``: the receiver first (a
    ``VALUE`` row), an ``at`` operand's ref and offset as ``at(ref, offset)``."""
    it, out = iter(vals), [] if receiver is None else [receiver]
    for kind in r.operands:
        if kind == "lanes":
            out += list(it)
        elif kind == "at":
            ref = next(it)
            out.append(at(ref, next(it)))
        else:
            out.append(next(it))
    return out


def api_on(cls: str) -> tuple | None:
    """(what ``API`` rows are called on, lanes) of a call on the static class ``cls``: (VECTOR,
    its lanes) for Vector128/256/512, (cls, 1) for the class of a ulong row; None for any
    other class."""
    if cls in VECTORS:
        return VECTOR, VECTORS[cls]
    return (cls, 1) if cls in _API_ON else None


def api_names() -> set[str]:
    """The C# spellings ``Class.Method`` / ``.Method`` of every call this module spells: the
    ``API`` rows (a vector row's method on any class or value: ``.Create``) and the x86
    intrinsic methods on each of their classes."""
    names = {f"{r.on}.{r.name}" if r.on not in (VECTOR, VALUE) else f".{r.name}" for r in API.values()}
    return names | {f"{c}.{n}" for c in CLASSES for n in INTRINSICS}


def intrinsic(cls: str, name: str, lanes: int):
    """(x86 intrinsic name, argument order) of the .NET method ``cls.name`` on vectors of
    ``lanes`` lanes, or None when it is not one the table has."""
    if cls not in CLASSES or name not in INTRINSICS:
        return None
    op, order = INTRINSICS[name]
    return op.format(bits=64 * lanes), order


def call(cls: str, name: str, *args) -> str:
    """The C# call ``cls.name(args)`` of an x86 intrinsic method the table has."""
    if cls not in CLASSES or name not in INTRINSICS:
        raise AssertionError(f".NET intrinsic {cls}.{name} has no semantics")
    return f"{cls}.{name}(" + ", ".join(str(x) for x in args) + ")"


def _rot(cls: str, name: str) -> str:
    return "{d} = " + call(cls, name, "{d}", "{n}") + ";"


def _rot_shifts(first: str, second: str) -> str:
    return "{d} = " + call("Avx2", "Or", call("Avx2", first, "{d}", "{n}"), call("Avx2", second, "{d}", "{m}")) + ";"


# Value type and statement forms per machine kind.  {d} destination, {a} operand, {n}/{m} counts.
KINDS = {
    "scalar": dict(
        type="ulong", lanes=1,
        imm="{v}UL",
        rotl="{d} = " + api("rotl", None, "{d}", "{n}") + ";",
        rotr="{d} = " + api("rotr", None, "{d}", "{n}") + ";"),
    "v256": dict(
        type="Vector256<ulong>", lanes=4,
        imm=api("broadcast", "Vector256", "{v}UL"),
        rotl=_rot_shifts("ShiftLeftLogical", "ShiftRightLogical"),
        rotr=_rot_shifts("ShiftRightLogical", "ShiftLeftLogical")),
    "v512": dict(
        type="Vector512<ulong>", lanes=8,
        imm=api("broadcast", "Vector512", "{v}UL"),
        rotl=_rot("Avx512F", "RotateLeft"),
        rotr=_rot("Avx512F", "RotateRight")),
}
OPERATORS = {"mov": "{d} = {a};", "add": "{d} += {a};", "sub": "{d} -= {a};", "xor": "{d} ^= {a};"}

# The packed kernels' vector per block size in words: (type, lanes).
PACKED_VEC = {4: ("Vector128", 2), 8: ("Vector256", 4), 16: ("Vector512", 8)}


def vec_const(vec: str, vals) -> str:
    return api("create", vec, *(f"{v}UL" for v in vals))


def lanes_shuffle(kind: str, lanes: int, a: str, b: str, pattern: tuple) -> str:
    """Two-source lane shuffles of the lane transposition: AVX-512F vpermt2q (any lanes),
    AVX2 unpacks (within 128-bit halves) and vperm2i128 (whole halves)."""
    if kind == "v512":
        return call("Avx512F", "PermuteVar8x64x2", a, vec_const("Vector512", [lanes * s + k for s, k in pattern]), b)
    forms = {((0, 0), (1, 0), (0, 2), (1, 2)): call("Avx2", "UnpackLow", "{a}", "{b}"),
             ((0, 1), (1, 1), (0, 3), (1, 3)): call("Avx2", "UnpackHigh", "{a}", "{b}"),
             ((0, 0), (0, 1), (1, 0), (1, 1)): call("Avx2", "Permute2x128", "{a}", "{b}", "0x20"),
             ((0, 2), (0, 3), (1, 2), (1, 3)): call("Avx2", "Permute2x128", "{a}", "{b}", "0x31")}
    return forms[tuple(pattern)].format(a=a, b=b)


def packed_rotate(vec: str, nl: int, d: str, x: str, counts: tuple, left: bool) -> str:
    """Per-lane rotation of a packed half: AVX-512F vprolvq/vprorvq (Vector512), else AVX-512VL
    when the JIT has it, AVX2 variable shift pairs otherwise."""
    name = "RotateLeftVariable" if left else "RotateRightVariable"
    if nl == 8:
        return f"{d} = {call('Avx512F', name, x, vec_const(vec, counts))};"
    first, second = ("ShiftLeftLogicalVariable", "ShiftRightLogicalVariable")[::1 if left else -1]
    return (f"{d} = Avx512F.VL.IsSupported ? {call('Avx512F.VL', name, x, vec_const(vec, counts))}\n"
            f"    : {call('Avx2', 'Or', call('Avx2', first, x, vec_const(vec, counts)), call('Avx2', second, x, vec_const(vec, (64 - c for c in counts))))};")


def packed_shuffle(vec: str, nl: int, d: str, srcs: tuple, lanes: tuple, sources_read_later) -> list[str]:
    """A lane shuffle of the packed layout: SSE2/AVX2 unpacks and permutes where they build the
    pattern, AVX-512F index permutes (vpermq / vpermt2q) for Vector512.  ``sources_read_later()``
    says whether an op after this one reads a source (other than the shuffle of the same sources
    that builds the other half)."""
    a = srcs[0]
    if len(srcs) == 1:
        p = [k for _, k in lanes]
        if nl == 2:
            assert p == [1, 0], p
            return [f"{d} = {api('as_ulong', call('Sse2', 'Shuffle', api('as_uint', a), '0x4E'))};"]
        if nl == 4:
            return [f"{d} = {call('Avx2', 'Permute4x64', a, f'{sum(x << (2 * j) for j, x in enumerate(p)):#04x}')};"]
        return [f"{d} = {call('Avx512F', 'PermuteVar8x64', a, vec_const(vec, p))};"]
    b = srcs[1]
    if nl == 8:
        return [f"{d} = {call('Avx512F', 'PermuteVar8x64x2', a, vec_const(vec, [8 * s + k for s, k in lanes]), b)};"]
    half = nl // 2
    if nl == 2:
        which = {((0, 0), (1, 0)): "UnpackLow", ((0, 1), (1, 1)): "UnpackHigh"}[tuple(lanes)]
        return [f"{d} = {call('Sse2', which, a, b)};"]
    # Vector256: unpacks work within 128-bit halves; a lane order (0, 2, 1, 3) fixes it up.
    deal = {tuple((s, 2 * j + z) for s in (0, 1) for j in range(half)): ("UnpackLow", "UnpackHigh")[z] for z in (0, 1)}
    if tuple(lanes) in deal:         # (a0, a2, b0, b2): the even (odd) lanes of a then b
        return [f"{d} = {call('Avx2', 'Permute4x64', call('Avx2', deal[tuple(lanes)], a, b), '0xd8')};"]
    weave = {tuple((s, 2 * z + j) for j in range(half) for s in (0, 1)): ("UnpackLow", "UnpackHigh")[z] for z in (0, 1)}
    # (a0, b0, a1, b1) / (a2, b2, a3, b3): both sources are put in lane order (0, 2, 1, 3) in
    # place once (their last uses are these two shuffles), then unpacked.
    pre = []
    if weave[tuple(lanes)] == "UnpackLow":
        assert not sources_read_later(), "sources read later"
        pre = [f"{a} = {call('Avx2', 'Permute4x64', a, '0xd8')};", f"{b} = {call('Avx2', 'Permute4x64', b, '0xd8')};"]
    return pre + [f"{d} = {call('Avx2', weave[tuple(lanes)], a, b)};"]
