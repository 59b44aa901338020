"""The wipe bounds (gen/printers/c.py, csharp.py) read the facts the printers record as they print
(declared locals with their scopes, intrinsic call sites), never the printed text: small programs
with bounds worked out by hand."""
from threefish_gen.gen.isa import neon, x86
from threefish_gen.gen.isa.common import fill
from threefish_gen.gen.printers import Line
from threefish_gen.gen.printers.c import (close_line, decl, intrinsic_sites, open_line, scoped_stack_bound, stmt,
                                          unoptimized_bounds, wipe_bounds)
from threefish_gen.gen.printers.csharp import burn_bytes, burn_one_bytes, kernel_locals

W128, W256 = x86.Width(128), x86.Width(256)


def test_calls_record_their_sites():
    # add(a, set1(k0)): the add on two vectors, the broadcast of one scalar, both 32-byte
    e = W256.add("a", W256.set1("k0"))
    assert e == "_mm256_add_epi64(a, _mm256_set1_epi64x((long long)(k0)))"
    assert sorted(e.sites) == [(32, 0, 1), (32, 2, 0)]
    # a 256-bit store of a 128-bit row: the store (16 bytes: address, vector), the cast (32: vector)
    s = W256.storeu("out + 8", "x", 2)
    assert s == "_mm_storeu_si128((__m128i *)(void *)(out + 8), _mm256_castsi256_si128(x));"
    assert sorted(s.sites) == [(16, 1, 1), (32, 1, 0)]
    # rotate by 13 on SSE2: or(slli(x, 13), srli(x, 51))
    e, kind = x86.rotl_uniform(x86.ISAS["sse2"], W128, "x", 13, {})
    assert kind == "shifts" and sorted(e.sites) == [(16, 1, 1), (16, 1, 1), (16, 2, 0)]
    # NEON: every vector is 16 bytes; its zero is a broadcast of the number 0
    assert neon.NeonWidth().zero().sites == ((16, 0, 1),)
    assert sorted(neon.NeonWidth().set1("k").sites) == [(16, 0, 1)]


def test_shuffle_placeholders_count_their_sources():
    # castpd(shuffle_pd(castsi128_pd({a}), castsi128_pd({b}), 1)): four 16-byte sites
    (fmt,) = [f for _, f, _ in x86.shuffle_candidates(x86.ISAS["sse2"], W128) if "shuffle_pd" in f and ", 1)" in f]
    assert sorted(fmt.sites) == [(16, 1, 0), (16, 1, 0), (16, 1, 0), (16, 2, 1)]
    # {a} a broadcast (one more site), {b} a name (none)
    e = fill(fmt, W128.set1("k"), "y")
    assert e == ("_mm_castpd_si128(_mm_shuffle_pd(_mm_castsi128_pd(_mm_set1_epi64x((long long)(k))), "
                 "_mm_castsi128_pd(y), 1))")
    assert sorted(e.sites) == [(16, 0, 1), (16, 1, 0), (16, 1, 0), (16, 1, 0), (16, 2, 1)]


def _function():
    """uint64_t k0, k1;  { __m256i x;  { uint64_t arr[4]; }  { __m512i y; } }  { __m128i z[3]; }"""
    return [decl("uint64_t", [("k0", 1), ("k1", 1)], "uint64_t k0, k1;"),
            open_line("{"),
            decl("__m256i", [("x", 1)], "    __m256i x;"),
            open_line("    {"), decl("uint64_t", [("arr", 4)], "        uint64_t arr[4];"), close_line("    }"),
            open_line("    {"), decl("__m512i", [("y", 1)], "        __m512i y;"), close_line("    }"),
            close_line(),
            open_line("{"), decl("__m128i", [("z", 3)], "    __m128i z[3];"), close_line()]


def test_scopes_and_declarations():
    lines = _function()
    # deepest chain: 16 (k0, k1) + 32 (x) + 64 (y) = 112; twice that plus 256 = 480 -> 512
    assert scoped_stack_bound(lines) == 512
    # plus 1 KiB (blocks functions): 224 + 1024 = 1248 -> 1280
    assert scoped_stack_bound(lines, 1024) == 1280
    # -O0: every local its own slot: 16 + 32 + 32 + 64 + 48 = 192; 384 + 1024 = 1408 (no sites)
    assert wipe_bounds(lines, True) == {"opt": 512, "gcc": 1408, "clang": 1408, "other": 1408}
    # blocks functions, optimized: x 7/4 (56), y, AVX-512, 5/4 (80), words twice (32): 168 + 1024 -> 1216
    assert wipe_bounds(lines, False)["opt"] == 1216


def test_blocks_bound_is_seven_quarters_of_the_vectors():
    """*_blocks functions, optimized: 7/4 of the vector locals of the deepest scope chain (AVX-512's
    5/4), twice its words, plus 1 KiB (gen/printers/c.py, the note above SLACK); single-block
    functions twice plus 256; -O0 unchanged, twice all locals plus 1 KiB."""
    lines = [decl("__m256i", [("v", 32)], "__m256i v[32];"), open_line("{"),
             decl("uint64_t", [("k", 3)], "    uint64_t k[3];"), close_line()]
    # vectors 7/4: 1792, words twice: 48, + 1024 = 2864 -> 2880; single: 2096 + 256 = 2352 -> 2368
    assert wipe_bounds(lines, False)["opt"] == 2880
    # words alone keep twice (scalar C's blocks): 2 * 800 + 1024 = 2624; vectors alone 7/4
    words = [decl("uint64_t", [("w", 100)], "uint64_t w[100];")]
    assert wipe_bounds(words, False)["opt"] == 2624
    assert wipe_bounds(lines[:1], False)["opt"] == 2816          # 1792 + 1024
    assert wipe_bounds(lines, True)["opt"] == 2368
    # -O0 (no sites): 2096 + 1024 = 3120 -> 3136, both kinds
    assert wipe_bounds(lines, False)["other"] == wipe_bounds(lines, True)["other"] == 3136
    # no locals (the scalar blocks loop over the single-block kernel): 1 KiB
    assert wipe_bounds([], False)["opt"] == 1024
    # the same bytes in AVX-512 vectors: 5/4 (1280), words twice (48), + 1024 = 2352 -> 2368
    wide = [decl("__m512i", [("v", 16)], "__m512i v[16];")] + lines[1:]
    assert wipe_bounds(wide, False)["opt"] == 2368
    assert wipe_bounds(wide[:1], False)["opt"] == 2304           # 1280 + 1024
    assert wipe_bounds(wide, False)["other"] == 3136             # -O0: bytes, not kinds


def test_sites_add_to_the_unoptimized_bounds():
    e = W256.add("a", W256.set1("k0"))
    lines = [decl("__m256i", [("a", 1)], "__m256i a;"), stmt(f"a = {e};", e), "/* a note */"]
    assert intrinsic_sites(lines) == [(32, 2, 0), (32, 0, 1)]
    # declared 32: 64 + 1024 = 1088.  gcc (3/2 W per operand and result): add 3 * 32 * 3 // 2 = 144,
    # set1 3 * 32 * 1 // 2 + 16 = 64: 208 -> 256.  clang (6/2): 288 + 112 = 400 -> 448.
    assert unoptimized_bounds(lines) == {"gcc": 1088 + 256, "clang": 1088 + 448, "other": 1088 + 448}


def test_helper_calls_are_not_sites():
    """Calls of the variant's helpers (word loads, the blocks tail's single-block call) count
    nothing, whatever their name (NEON variants' prefixes hold "neon_"; the text scan counted
    those as 128-bit sites)."""
    lines = [Line("k0 = tf256_csimd_neon_lanes_load64(key + 8);", calls=[("tf256_csimd_neon_lanes_load64", 1)]),
             Line("k1 = tf256_csimd_avx2_lanes_load64(key + 16);", calls=[("tf256_csimd_avx2_lanes_load64", 1)])]
    assert intrinsic_sites(lines) == []


def test_csharp_kernel_locals():
    ulong = "ulong"
    v512 = "Vector512<ulong>"
    sec = lambda *lines: {"decl": list(lines), "code": ["x0 += k0;"]}    # noqa: E731
    f = {"arrays": [Line("Span<ulong> ks = stackalloc ulong[17];", locals=[("stackalloc ulong", "ks", 17)])],
         "setup": sec(Line("ulong k0, k1;", locals=[(ulong, "k0", 1), (ulong, "k1", 1)])),
         "body": sec(Line("ulong x0;", locals=[(ulong, "x0", 1)])),
         "blocks_arrays": [], "multi_body": sec(), "tail_body": sec(Line("ulong y;", locals=[(ulong, "y", 1)])),
         "blocks_per_block": False,
         "lanes": [{"lanes": 8, "setup": sec(), "multi_body": sec(),
                    "arrays": [Line("Span<Vector512<ulong>> ks = stackalloc Vector512<ulong>[3];",
                                    locals=[("stackalloc " + v512, "ks", 3)])],
                    "tail_body": sec(Line("Vector512<ulong> v, w;", locals=[(v512, "v", 1), (v512, "w", 1)]))}]}
    # Block: 136 + 16 + 8; BlocksScalar: 16 (+ 8 with the tail loop); Lanes512: the stackalloc'd
    # vectors 3 * 64 = 192 (+ 128: v, w)
    assert kernel_locals(f, 1) == {"Block": 160, "BlocksScalar": 16, "Lanes512": 192}
    assert kernel_locals(f, 2) == {"Block": 160, "BlocksScalar": 24, "Lanes512": 320}
    # 2 * 160 + 1024 = 1344 (a multiple of 64); none: 1024
    assert burn_bytes([160, 24, 128]) == 1344 and burn_bytes([]) == 1024
    # 2 * 320 + 1024 = 1664
    assert burn_bytes(kernel_locals(f, 2).values()) == 1664
    # BurnOne: the single-block kernels are never tier-0 code: 2 * 160 + 256 = 576; none: 256
    assert burn_one_bytes([160, 96]) == 576 and burn_one_bytes([]) == 256 and burn_one_bytes([100]) == 512
    # a Vector256 or Vector128 table: 32 or 16 bytes an element
    for v, size in (("Vector256<ulong>", 32), ("Vector128<ulong>", 16)):
        f["lanes"][0]["arrays"] = [Line(f"Span<{v}> ks = stackalloc {v}[5];", locals=[("stackalloc " + v, "ks", 5)])]
        assert kernel_locals(f, 1)["Lanes512"] == 5 * size


def test_one_block_kernel_bounds():
    """Threefish's one-block kernels (gen/printers/c.py, the note above SLACK): scalar, words once
    and arrays twice plus 256; vector (packed), the blocks functions' bound, and gcc's: twice the
    locals that are not constants plus 256; clang's, gcc's plus the distinct subkey vectors, at
    most the generic one.  Unoptimized bounds are the same for every kind."""
    lines = [decl("uint64_t", [("k0", 1), ("k1", 1)], "uint64_t k0, k1;"),
             decl("uint64_t", [("ks", 4)], "uint64_t ks[4];"),
             decl("__m256i", [("rc", 1)], "const __m256i rc = _mm256_set_epi64x(1, 2, 3, 4);", constant=True),
             decl("__m256i", [("x", 1)], "__m256i x;")]
    plain = wipe_bounds(lines, True)
    # scalar: 16 + 2 * 32 + 32 + 32 = 144, + 256 = 400 -> 448 (plain single-block: 2 * 112 + 256 = 480 -> 512)
    scalar = wipe_bounds(lines, True, "scalar")
    assert plain["opt"] == 512 and scalar["opt"] == 448 and "opt_gcc" not in scalar
    # vector: 2 * 112 + 1024 = 1248 -> 1280; gcc without the constant: 2 * 80 + 256 = 416 -> 448
    vector = wipe_bounds(lines, True, "vector")
    assert vector["opt"] == 1280 and vector["opt_gcc"] == 448
    # clang: gcc's plus the hoisted subkey vectors (none: gcc's); 2 * 80 + 256 + 5 * 32 = 576;
    # never above the generic bound (2 * 80 + 256 + 40 * 32 = 1696 -> 1280)
    assert vector["opt_clang"] == 448
    assert wipe_bounds(lines, True, "vector", 5 * 32)["opt_clang"] == 576
    assert wipe_bounds(lines, True, "vector", 40 * 32)["opt_clang"] == 1280
    assert "opt_clang" not in scalar and "opt_clang" not in plain
    assert {k: v for k, v in scalar.items() if k != "opt"} == {k: v for k, v in plain.items() if k != "opt"}
    assert {k: v for k, v in vector.items() if k not in ("opt", "opt_gcc", "opt_clang")} == \
        {k: v for k, v in plain.items() if k != "opt"}
