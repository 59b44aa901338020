"""The .NET vector API (C#, .NET 10) as the C# printer spells it and the C# prove reader reads it:
``Vector128/256/512<ulong>`` and the x86 hardware intrinsic classes ``Sse2``, ``Avx2``,
``Avx512F``, ``Avx512F.VL`` (System.Runtime.Intrinsics.X86).

* ``INTRINSICS``: every x86 intrinsic method the printer spells, with the x86 instruction it
  compiles to (a ``SEMANTICS`` row of gen/isa/x86.py, which gives its lane terms) and the order
  of its arguments there; :func:`call` spells one and refuses a name the table lacks;
* ``KINDS``: per machine kind (``scalar`` ulong, ``v256``, ``v512``) the value type, the
  constant and the uniform rotations; ``OPERATORS``: the compound assignments of the
  lane-wise operators (``+= -= ^=``);
* the lane shuffles and per-lane rotations of the lanes and packed kernels
  (:func:`lanes_shuffle`, :func:`packed_shuffle`, :func:`packed_rotate`).
"""
from __future__ import annotations

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
        rotl="{d} = BitOperations.RotateLeft({d}, {n});",
        rotr="{d} = BitOperations.RotateRight({d}, {n});"),
    "v256": dict(
        type="Vector256<ulong>", lanes=4,
        imm="Vector256.Create({v}UL)",
        rotl=_rot_shifts("ShiftLeftLogical", "ShiftRightLogical"),
        rotr=_rot_shifts("ShiftRightLogical", "ShiftLeftLogical")),
    "v512": dict(
        type="Vector512<ulong>", lanes=8,
        imm="Vector512.Create({v}UL)",
        rotl=_rot("Avx512F", "RotateLeft"),
        rotr=_rot("Avx512F", "RotateRight")),
}
OPERATORS = {"mov": "{d} = {a};", "add": "{d} += {a};", "sub": "{d} -= {a};", "xor": "{d} ^= {a};"}

# The packed kernels' vector per block size in words: (type, lanes).
PACKED_VEC = {4: ("Vector128", 2), 8: ("Vector256", 4), 16: ("Vector512", 8)}


def vec_const(vec: str, vals) -> str:
    return f"{vec}.Create({', '.join(f'{v}UL' for v in vals)})"


def lanes_shuffle(kind: str, lanes: int, a: str, b: str, pattern: tuple) -> str:
    """Two-source lane shuffles of the lane transposition: AVX-512F vpermt2q (any lanes),
    AVX2 unpacks (within 128-bit halves) and vperm2i128 (whole halves)."""
    if kind == "v512":
        idx = ", ".join(f"{lanes * s + k}UL" for s, k in pattern)
        return call("Avx512F", "PermuteVar8x64x2", a, f"Vector512.Create({idx})", b)
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
            return [f"{d} = {call('Sse2', 'Shuffle', f'{a}.AsUInt32()', '0x4E')}.AsUInt64();"]
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
