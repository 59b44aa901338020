"""The instruction tables of threefish_gen/gen/isa/: one semantics per instruction serves the
printer's shuffle search and the prover; every spelled intrinsic has one."""
from __future__ import annotations

import re

import pytest

from threefish_gen.gen.isa import x86
from threefish_gen.gen.isa import shuffle
from threefish_gen.gen.isa.common import lane_sources


def test_x86_call_refuses_an_intrinsic_without_semantics():
    assert x86.call(256, "unpacklo_epi64", "a", "b") == "_mm256_unpacklo_epi64(a, b)"
    with pytest.raises(AssertionError, match="no semantics"):
        x86.call(256, "unpacklo_epi32", "a", "b")


def test_lane_patterns_come_from_the_semantics():
    # within 128-bit halves: (a0, b0, a2, b2)
    assert lane_sources(x86.SEMANTICS["unpacklo_epi64"], 4, ("a", "b")) == ((0, 0), (1, 0), (0, 2), (1, 2))
    # pshufd 0x4e swaps the 64-bit halves of each 128-bit block (a byte-level instruction)
    assert lane_sources(x86.SEMANTICS["shuffle_epi32"], 2, ("a", 0x4E)) == ((0, 1), (0, 0))
    # pshufd 0xb1 swaps 32-bit halves inside each lane: no whole source lane
    assert lane_sources(x86.SEMANTICS["shuffle_epi32"], 2, ("a", 0xB1)) == (None, None)
    assert lane_sources(x86.SEMANTICS["permute2x128_si256"], 4, ("a", "b", 0x31)) == ((0, 2), (0, 3), (1, 2), (1, 3))


def test_shuffle_picks_the_cheapest_instruction_per_isa():
    w2, w4 = x86.Width(128), x86.Width(256)
    assert shuffle(x86.ISAS["sse2"], w2, (("x", 1), ("y", 1))) == "_mm_unpackhi_epi64(x, y)"
    assert shuffle(x86.ISAS["avx2"], w4, (("x", 3), ("x", 2), ("x", 1), ("x", 0))) == "_mm256_permute4x64_epi64(x, 0x1b)"
    # AVX-512: an index permute when no single immediate form builds the lanes
    e = shuffle(x86.ISAS["avx512"], w4, (("x", 0), ("y", 3), ("x", 3), ("y", 0)))
    assert e.startswith("_mm256_permutex2var_epi64(")


def test_every_rotation_spelling_is_modelled():
    consts = {}
    for isa in x86.ISAS.values():
        w = x86.Width(isa.bits)
        for n in (8, 13, 32):
            expr, _ = x86.rotl_uniform(isa, w, "x", n, consts)
            names = re.findall(r"_mm\d*_\w+", expr + " ".join(consts.values()))
            assert names
            for name in names:
                assert x86.parse(name)[0] in x86.SEMANTICS, name


def test_neon_call_refuses_an_intrinsic_without_semantics_and_derives_its_lane_moves():
    from threefish_gen.gen.isa import neon
    assert neon.call("vzip1q_u64", "a", "b") == "vzip1q_u64(a, b)"
    assert neon.call("vreinterpretq_u8_u64", "a") == "vreinterpretq_u8_u64(a)"
    with pytest.raises(AssertionError, match="no semantics"):
        neon.call("vtrn1q_u64", "a", "b")
    pats = {fmt: sem for _, fmt, sem in neon.shuffle_candidates(neon.ISAS["neon"], neon.NeonWidth())}
    assert pats["vextq_u64({a}, {b}, 1)"] == ((0, 1), (1, 0))
    assert pats["vcopyq_laneq_u64({a}, 0, {b}, 1)"] == ((1, 1), (0, 1))
    assert pats["vdupq_laneq_u64({a}, 1)"] == ((0, 1), (0, 1))


def test_dotnet_intrinsics_compile_to_modelled_x86_instructions():
    from threefish_gen.gen.isa import dotnet
    assert dotnet.call("Avx2", "UnpackLow", "a", "b") == "Avx2.UnpackLow(a, b)"
    with pytest.raises(AssertionError, match="no semantics"):
        dotnet.call("Avx2", "AlignRight", "a", "b", 8)
    for name in dotnet.INTRINSICS:
        for lanes in (2, 4, 8):
            op, order = dotnet.intrinsic("Avx2", name, lanes)
            assert op in x86.SEMANTICS, (name, op)
    assert dotnet.intrinsic("Avx512F", "Or", 8)[0] == "or_si512"
    # every statement form of the vector kinds spells only table methods
    for kind in ("v256", "v512"):
        for form in ("rotl", "rotr"):
            for cls, name in re.findall(r"(Avx512F|Avx2|Sse2)\.(\w+)\(", dotnet.KINDS[kind][form]):
                assert name in dotnet.INTRINSICS


def test_dotnet_packed_shuffles_build_the_lanes_they_are_asked_for():
    """Each .NET packed shuffle read back through the x86 semantics gives the wanted lanes."""
    from threefish_gen.gen.isa import dotnet
    from threefish_gen.gen.isa.common import Sources

    def run(expr: str, env: dict):
        # a tiny evaluator of the printer's C# call syntax over lane tokens
        expr = expr.strip()
        if expr in env:
            return env[expr]
        if expr.endswith(".AsUInt64()") or expr.endswith(".AsUInt32()"):
            return run(expr[:-11], env)
        if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", expr):
            return int(expr, 0)
        m = re.fullmatch(r"(Avx512F|Avx2|Sse2)\.(\w+)\((.*)\)", expr)
        depth, args, cur = 0, [], ""
        for ch in m.group(3):
            if ch == "," and depth == 0:
                args.append(cur)
                cur = ""
                continue
            depth += (ch == "(") - (ch == ")")
            cur += ch
        vals = [run(x, env) for x in args + [cur]]
        op, order = dotnet.intrinsic(m.group(1), m.group(2), len(vals[0]))
        return x86.SEMANTICS[op](Sources, len(vals[0]), [vals[i] for i in order])

    for nl, vec in ((2, "Vector128"), (4, "Vector256")):
        env = {"a": tuple(("a", k) for k in range(nl)), "b": tuple(("b", k) for k in range(nl))}
        low = tuple((s, k) for k in range(nl // 2) for s in (0, 1))               # a0 b0 a1 b1
        high = tuple((s, nl // 2 + k) for k in range(nl // 2) for s in (0, 1))    # the high halves
        for lanes in (low, high):       # in this order: the low half may permute a and b in place
            lines = dotnet.packed_shuffle(vec, nl, "d", ("a", "b"), lanes, lambda: False)
            for ln in lines:
                dst, expr = ln.rstrip(";").split(" = ", 1)
                env[dst] = run(expr, env)
            assert env["d"] == tuple(("ab"[s], k) for s, k in lanes), (nl, lanes, lines)


def test_nasm_lane_ops_of_every_register_class_are_read_through_the_semantics():
    """The add/sub/xor/or/shift/rotate forms the NASM printer prints for XMM, YMM and ZMM are
    mnemonics the prove reader maps onto SEMANTICS rows."""
    for table in (x86.X86_XMM_OPS, x86.X86_PACKED_OPS, x86.YMM_OPS, x86.ZMM_OPS):
        for kind in ("add", "sub", "xor", "or", "shl", "shr", "rol"):
            if kind in table:
                mnemonic = table[kind].split()[0]
                base = mnemonic[1:] if mnemonic.startswith("v") else mnemonic
                for lanes in (2, 4, 8):
                    assert x86.nasm_semantics(base, lanes) is not None, mnemonic


def test_packed_lane_moves_and_their_kinds_come_from_the_semantics():
    from threefish_gen.gen.isa.common import Ints
    d, s = [0x1111, 0x2222], [0x3333, 0x4444]
    assert x86.packed_move("lolo", Ints, d, s) == (0x1111, 0x3333)
    assert x86.packed_move("hilo", Ints, d, s) == (0x2222, 0x3333)
    assert x86.packed_move("movsd", Ints, d, s) == (0x3333, 0x2222)
    assert x86.packed_move("swap", Ints, None, s) == (0x4444, 0x3333)
    assert x86.packed_move("bshl", Ints, d, None, 8) == (0, 0x1111)
    assert {(h1, h2): x86.packed_lane_kind(h1, h2) for h1 in (0, 1) for h2 in (0, 1)} == {
        (0, 0): "lolo", (1, 1): "hihi", (1, 0): "hilo", (0, 1): "lohi"}


def test_nasm_rows_of_the_moves_and_byte_shifts():
    """The rows x86.NASM reads the moves, byte shifts and extracts through, on concrete lanes."""
    from threefish_gen.gen.isa.common import Ints
    x, y = (0x0807060504030201, 0x100F0E0D0C0B0A09), (0x3333, 0x4444)
    def row(m, lanes, *args):
        return x86.nasm_semantics(m, lanes)(Ints, lanes, list(args))
    assert row("pshufd", 2, x, 0x4E) == (x[1], x[0])
    assert row("pshufd", 2, x, 0xB1) == (0x0403020108070605, 0x0C0B0A09100F0E0D)      # dwords swapped
    assert row("pslldq", 2, x, 8) == (0, x[0]) and row("psrldq", 2, x, 8) == (x[1], 0)
    assert row("pslldq", 2, x, 3) == (0x0504030201000000, 0x0D0C0B0A09080706)
    assert row("psrldq", 2, x, 3) == (0x0B0A090807060504, 0x000000100F0E0D0C)
    assert row("psrldq", 2, x, 16) == (0, 0) and row("pslldq", 4, x + y, 8) == (0, x[0], 0, y[0])
    assert row("movq", 2, x) == (x[0], 0) and row("movq", 2, (7,)) == (7, 0)
    assert row("movsd", 2, x, y) == (y[0], x[1])
    assert row("movhlps", 2, x, y) == (y[1], x[1]) and row("movlhps", 2, x, y) == (x[0], y[0])
    assert row("pextrq", 2, x, 1) == x[1] and row("pextrq", 2, x, 0) == x[0]
    assert row("extracti128", 4, x + y, 1) == y and row("extracti128", 2, x + y, 0) == x
    assert row("pbroadcastq", 4, (5,)) == (5, 5, 5, 5)
    assert row("movdqu64", 8, tuple(range(8))) == tuple(range(8)) and row("movaps", 2, x) == x
    assert row("zeroupper", 8, tuple(range(1, 9))) == (1, 2, 0, 0, 0, 0, 0, 0)
    assert x86.nasm_form("movsd").memory == "movq" and x86.nasm_form("movdqa").aligned
    assert x86.nasm_form("perm2i128").vex and not x86.nasm_form("pshufd").reads_dest


def test_the_printer_forms_and_the_reader_table_agree():
    """The NASM form of each packed and lanes-kernel lane move (what the printer prints) is read
    back through the same SEMANTICS row (x86.NASM: what the prover reads)."""
    for form, op, _ in list(x86.PACKED_MOVES.values()) + [m for c in x86.LANE_MOVES.values() for m in c.values()]:
        mnemonic = form.split()[0]
        base = mnemonic[1:] if mnemonic.startswith("v") else mnemonic
        assert x86.NASM[base].row == op, (form, x86.NASM[base].row)


def test_dotnet_api_rows_on_concrete_values():
    """The portable .NET calls of dotnet.API (what the C# printer spells and the C# reader reads
    through) on concrete lanes and a small memory."""
    from threefish_gen.gen.isa import dotnet
    from threefish_gen.gen.isa.common import Ints

    mem = {}

    class M(Ints):
        @staticmethod
        def load(addr, n):
            return tuple(mem[addr + 8 * i] for i in range(n))

        @staticmethod
        def store(addr, v):
            mem.update({addr + 8 * i: t for i, t in enumerate(v)})

        @staticmethod
        def rotl(t, k):
            k %= 64
            return ((t << k) | (t >> (64 - k))) & (2 ** 64 - 1)

        @staticmethod
        def unsupported(text):
            raise ValueError(text)

    def row(form, w, *args):
        return dotnet.API[form].row(M, w, list(args))

    assert row("broadcast", 4, 7) == (7, 7, 7, 7)
    assert row("create", 4, 1, 2, 3, 4) == (1, 2, 3, 4)
    assert row("halves", 8, (1, 2, 3, 4), (5, 6, 7, 8)) == (1, 2, 3, 4, 5, 6, 7, 8)
    with pytest.raises(ValueError, match="half of 8"):
        row("halves", 8, (1, 2), (5, 6, 7, 8))
    assert row("lower", 4, (1, 2, 3, 4)) == (1, 2) and row("upper", 4, (1, 2, 3, 4)) == (3, 4)
    assert row("lower", 8, tuple(range(8))) == (0, 1, 2, 3) and row("upper", 2, (9, 10)) == (10,)
    assert all(row(v, 2, (9, 10)) == (9, 10) for v in ("as_ulong", "as_uint", "as_byte"))
    mem.update({100 + 8 * i: 0x10 + i for i in range(4)})
    assert row("load", 4, 100) == (0x10, 0x11, 0x12, 0x13) and row("load", 2, 116) == (0x12, 0x13)
    assert row("store", 2, (5, 6), 200) is None and (mem[200], mem[208]) == (5, 6) and 216 not in mem
    assert row("rotl", 1, 0x8000000000000001, 1) == 3 and row("rotr", 1, 3, 1) == 0x8000000000000001
    assert row("rotl", 1, 0x0123456789ABCDEF, 8) == 0x23456789ABCDEF01
    assert row("bswap", 1, 0x0102030405060708) == 0x0807060504030201
    assert row("read", 1, 108) == 0x11
    row("write", 1, 300, 0xAB)
    assert mem[300] == 0xAB


def test_dotnet_api_spells_and_finds_its_rows():
    """What the printer spells (api, load, store) and which row a parsed call reads as (api_row:
    by the method's name and its arguments' shapes)."""
    from threefish_gen.gen.isa import dotnet
    from threefish_gen.gen.isa.dotnet import API, VALUE, VECTOR, api, api_row
    assert dotnet.load("Vector256", "src", 32) == "Vector256.LoadUnsafe(ref src, 32).AsUInt64()"
    assert dotnet.store(api("lower", "s0"), "dst", 0) == "s0.GetLower().AsByte().StoreUnsafe(ref dst, 0);"
    assert api("create", "Vector512", *(f"{i}UL" for i in range(8))).startswith("Vector512.Create(0UL, 1UL, ")
    assert api("halves", "Vector512", "a", "b") == "Vector512.Create(a, b)"
    assert api("rotl", None, "x", 13) == "BitOperations.RotateLeft(x, 13)"
    assert api("read", None, "Unsafe.Add(ref k, 8)") == "Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref k, 8))"
    assert dotnet.KINDS["scalar"]["rotr"] == "{d} = BitOperations.RotateRight({d}, {n});"
    with pytest.raises(AssertionError):
        api("rotl", "Vector256", "x", 13)          # a ulong row is called on its own class
    with pytest.raises(AssertionError):
        api("lower", "x", "y")                      # an operand too many
    assert api_row(VECTOR, "Create", (None,), 4) is API["broadcast"]
    assert api_row(VECTOR, "Create", (None,) * 4, 4) is API["create"]
    assert api_row(VECTOR, "Create", (2, 2), 4) is API["halves"]
    assert api_row(VECTOR, "Create", (None, None), 2) is API["create"]      # Vector128: two lanes
    assert api_row(VECTOR, "Create", (1, 1), 2) is API["halves"]
    assert api_row(VECTOR, "Create", (None,) * 3, 4) is None and api_row(VECTOR, "Create", (4, 4), 4) is None
    assert api_row(VECTOR, "LoadUnsafe", ("ref", None), 8) is API["load"]
    assert api_row(VECTOR, "LoadUnsafe", (None, None), 8) is None              # no ref: not read
    assert api_row(VALUE, "StoreUnsafe", ("ref", None), 4) is API["store"]
    assert api_row(VECTOR, "GetLower", (), 4) is None and api_row(VALUE, "GetUpper", (), 4) is API["upper"]
    assert api_row("Unsafe", "ReadUnaligned<ulong>", ("ref",), 1) is API["read"]
    assert api_row("BitOperations", "RotateLeft", (None, None), 1) is API["rotl"]
    assert dotnet.api_on("Vector256") == (VECTOR, 4) and dotnet.api_on("BinaryPrimitives") == ("BinaryPrimitives", 1)
    assert dotnet.api_on("MemoryMarshal") is None and dotnet.api_on("Avx2") is None
    assert dotnet.api_args(API["store"], [0x40, 8], lambda r, k: r + k, receiver=(1, 2)) == [(1, 2), 0x48]
