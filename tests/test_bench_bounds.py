"""Bounds beside the bench rows (tools/bench/ports.py, bounds.py, row_bounds.py and the targets'
bound_work in tools/target_tools.py): the port model a
CPU gets, the operation counts of the described program against a hand count from the Threefish
spec, bounds of synthetic work against hand-computed values, and the dispatcher ratio line.
Nothing is timed."""
from __future__ import annotations

import io
from dataclasses import replace

import pytest

from threefish_gen.gen import targets as registry
from threefish_gen.gen.dsl import Builder, Mem
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.threefish import Options, Program, describe
from threefish_gen.tools.bench.bounds import Work, bound_cpb, latency_cycles, program_work, throughput_cycles
from threefish_gen.tools.bench.ports import GENERIC, ICELAKE, SAPPHIRE_RAPIDS, ZEN3, ZEN4, ZEN5, model_for
from threefish_gen.tools.bench.row_bounds import annotate, dispatcher_lines, row_bounds
from threefish_gen.tools.bench.run import Result, markdown, table
from threefish_gen.tools.target_tools import tools_for


@pytest.mark.parametrize("cpu, model", [
    (("AuthenticAMD", 0x19, 0x01), ZEN3),      # Milan
    (("AuthenticAMD", 0x19, 0x21), ZEN3),      # Vermeer
    (("AuthenticAMD", 0x19, 0x50), ZEN3),      # Cezanne
    (("AuthenticAMD", 0x19, 0x11), ZEN4),      # Genoa
    (("AuthenticAMD", 0x19, 0x61), ZEN4),      # Raphael
    (("AuthenticAMD", 0x19, 0x74), ZEN4),      # Phoenix
    (("AuthenticAMD", 0x1A, 0x02), ZEN5),      # this project's EPYC (family 26, model 2)
    (("AuthenticAMD", 0x1A, 0x44), ZEN5),      # Granite Ridge
    (("GenuineIntel", 6, 0x6A), ICELAKE),      # Ice Lake-SP
    (("GenuineIntel", 6, 0x8F), SAPPHIRE_RAPIDS),
    (("GenuineIntel", 6, 0x55), GENERIC),      # Skylake-SP: not modelled
    (("AuthenticAMD", 0x17, 0x31), GENERIC),   # Zen 2
    (("HygonGenuine", 0x18, 0x00), GENERIC),
    (("", 0, 0), GENERIC),                     # /proc/cpuinfo unreadable
])
def test_model_lookup_by_vendor_family_model(cpu, model):
    assert model_for(*cpu) is model


def test_op_counts_of_threefish_512_match_the_spec():
    # Threefish-512 (spec): 72 rounds x 4 MIX, each one add, one rotate, one xor; 19 subkey
    # injections of 8 key words, plus 2 tweak words each, plus the counter s on the last word
    # (s = 1..18: s = 0 adds nothing); the tweak word t2 = t0 ^ t1; 8 input and 2 tweak words
    # loaded, 8 output words stored.
    w = program_work(describe(get_spec("1.3", 512), Options("fly", "full", 1)))
    adds = 72 * 4 + 19 * 8 + 19 * 2 + 18          # 496
    xors = 72 * 4 + 1                              # 289
    assert w.counts["alu"] == adds + xors == 785
    assert w.counts["rot"] == 72 * 4 == 288
    assert w.counts["load"] == 8 + 2
    assert w.counts["store"] == 8
    assert w.counts["mov"] == 1                   # t2 = t0 before the xor
    assert w.uops == 785 + 288 + 10 + 8 + 1


def test_op_counts_of_threefish_1024_and_of_the_table_schedule():
    # Threefish-1024: 80 rounds x 8 MIX; 21 injections of 16 key words + 2 tweak + s (1..20).
    w = program_work(describe(get_spec("1.3", 1024), Options("fly", "full", 1)))
    assert w.counts["alu"] == (80 * 8 + 21 * 16 + 21 * 2 + 20) + (80 * 8 + 1)
    assert w.counts["rot"] == 640
    # keys table, Threefish-512: each injection adds 8 table words from memory (add r, [m]: an
    # alu op and a load); building the table stores 19 x 8 words and does the tweak/s adds there.
    t = program_work(describe(get_spec("1.3", 512), Options("table", "full", 1)))
    assert t.counts["alu"] == 785
    assert t.counts["load"] == 10 + 19 * 8
    assert t.counts["store"] == 8 + 19 * 8


def test_throughput_bound_of_synthetic_work():
    # Zen 3: 12 alu + 6 rot ops (rot only on 2 of the 4 ALUs): all 18 on 4 ALUs = 4.5 cycles;
    # the rotates alone 6 / 2 = 3; front end 18 / 6 = 3.  8-byte block: 4.5 / 8 c/B.
    w = Work({"alu": 12, "rot": 6}, uops=18, blocks=1)
    assert throughput_cycles(w, ZEN3) == (4.5, "ALU0+ALU1+ALU2+ALU3")
    assert bound_cpb(w, ZEN3, 8) == pytest.approx(0.5625)
    # Ice Lake: 512-bit vpaddq on p0/p5 only, scalar adds on p0/p1/p5/p6: 10 / 2 = 5 alone, but
    # together (10 + 14) / 4 = 6 cycles; front end 24 / 5 = 4.8.
    v = Work({"vadd": 10, "alu": 14}, uops=24, blocks=1, bits=512)
    assert throughput_cycles(v, ICELAKE) == (6.0, "p0+p1+p5+p6")
    # 10 vpaddq zmm on 4 FP pipes: Zen 4 double-pumps them (20 / 4 = 5), Zen 5 does not (2.5).
    z = Work({"vadd": 10}, uops=10, blocks=2, bits=512)
    assert throughput_cycles(z, ZEN4)[0] == 5.0
    assert throughput_cycles(z, ZEN5)[0] == 2.5
    assert bound_cpb(z, ZEN5, 64) == pytest.approx(2.5 / 128)
    # front end binds: 40 movs (renamed, no port) and 2 alu ops on Zen 3: 42 / 6 = 7
    f = Work({"mov": 40, "alu": 2}, uops=42)
    assert throughput_cycles(f, ZEN3) == (7.0, "front end")


def _program(build) -> Program:
    b = Builder()
    build(b)
    return Program(get_spec("1.3", 256), Options(), "encrypt", 1, [], b.ops)


def test_latency_of_hand_programs():
    # Zen 3: load 4, add/xor/rotate 1.  MIX: x += y (5), y <<<= 5 (5), y ^= x (6).
    def mix(b):
        x, y = b.val("x", Mem("in", 0)), b.val("y", Mem("in", 1))
        x += y
        y.rotl(5)
        y ^= x
        b.store(Mem("out", 0), x)
        b.store(Mem("out", 1), y)
    assert latency_cycles(_program(mix), ZEN3) == 6

    # x <<<= 1 (ready 5), then x += k0; x += k1; x += 3 (k0, k1 ready 4): in order 8, summed as
    # x + ((k0 + k1) + 3) (ready 6): 7.
    def inject(b):
        x = b.val("x", Mem("in", 0))
        k0, k1 = b.val("k0", Mem("key", 0)), b.val("k1", Mem("key", 1))
        x.rotl(1)
        x += k0
        x += k1
        x += 3
        b.store(Mem("out", 0), x)
    assert latency_cycles(_program(inject), ZEN3) == 7
    assert latency_cycles(_program(inject), ZEN5) == 7          # scalar latencies are the same


def test_latency_of_threefish_512():
    # Each round's chain is add then xor (the rotate runs beside the add): 72 x 2; each of the
    # 19 injections adds one add to it; the first load 4; the first injection's x + k + t (all
    # loaded at once) one more add at most.
    lat = latency_cycles(describe(get_spec("1.3", 512), Options("fly", "full", 1)), ZEN3)
    assert 4 + 72 * 2 + 19 <= lat <= 4 + 72 * 2 + 19 + 1


def test_row_bounds_of_scalar_c_and_the_dispatcher():
    spec = get_spec("1.3", 512)
    c = registry.get("c").variant(spec, Options("fly", "full", 1))
    auto = registry.get("c-simd").dispatcher(spec)
    got = row_bounds([("c row", c, "gcc"), ("auto row", auto, "gcc")], ZEN3, {"sse2", "avx", "avx2"})
    # (785 alu + 288 rotates) on Zen 3's 4 ALUs, per 64-byte block
    assert got[("c row", 512, "bulk")][0] == pytest.approx((785 + 288) / 4 / 64)
    # one call: the key setup too (k8 = C240, then 8 xors: 9 alu ops); on 4 ALUs that is more
    # than the dependency chain (~168 cycles)
    assert got[("c row", 512, "chained")] == ((785 + 9 + 288) / 4 / 64, "ALU0+ALU1+ALU2+ALU3")
    wide = row_bounds([("c row", c, "gcc")], replace(ZEN3, ports={**ZEN3.ports, "alu": tuple(f"A{i}" for i in range(12)),
                                                                   "rot": ("A0", "A1", "A2", "A3", "A4", "A5")},
                                                      front_end=16), set())
    assert wide[("c row", 512, "chained")][1] == "latency"      # 12 ALUs: the chain binds
    # the dispatcher on an AVX2 CPU runs its AVX2 lanes path: the same bound as that variant (none
    # where that path is the loop form: its counts are of the loop body, docs/bench.md "Bounds")
    avx2 = next(p for p in registry.get("c-simd").paths(spec) if p.get("isa") == "avx2")
    lanes = row_bounds([("lanes", avx2, "gcc")], ZEN3, set())
    assert (("auto row", 512, "bulk") in got) == (("lanes", 512, "bulk") in lanes) == (avx2.options.unroll == "full")
    if avx2.options.unroll == "full":
        assert got[("auto row", 512, "bulk")][0] == pytest.approx(lanes[("lanes", 512, "bulk")][0])
    full = registry.get("c-simd").simd(spec, "avx2", "lanes", Options("fly", "full", 1))
    assert row_bounds([("lanes", full, "gcc")], ZEN3, set())[("lanes", 512, "bulk")][0] > 0
    # ... and with no SIMD flags at all, scalar C's bound
    none = row_bounds([("auto row", auto, "gcc")], ZEN3, set())
    assert none[("auto row", 512, "bulk")][0] == pytest.approx((785 + 288) / 4 / 64)


def _r(name, bits, mode, cpb, kind="variant"):
    return Result(name, bits, mode, cpb, cpb, 3.0, kind)


def test_dispatcher_line_picks_the_fastest_non_dispatcher_variant():
    rows = [_r("disp gcc", 512, "bulk", 1.0), _r("disp clang", 512, "bulk", 1.1),
            _r("lanes A", 512, "bulk", 0.8), _r("lanes B", 512, "bulk", 1.2),
            _r("Botan", 512, "bulk", 0.5, "peer"),                       # peers never count
            _r("disp gcc", 512, "chained", 4.0), _r("scalar", 512, "chained", 3.2),
            _r("scalar", 256, "bulk", 3.0)]                              # no dispatcher row: no line
    lines = dispatcher_lines(rows, {"disp gcc", "disp clang"})
    assert len(lines) == 3
    # rows without samples (timed apart): the ratio of the medians, said so
    assert "512   bulk" in lines[0] and "dispatcher / best variant = 1.38 (medians (not timed together)" in lines[0]
    assert "goal <= 1.03: NOT met (by 33%)) (best: lanes A 0.80)" in lines[0]
    assert lines[0].endswith("[disp clang 1.10]")
    assert "dispatcher / best variant = 1.25 (" in lines[1] and lines[1].endswith("(best: lanes A 0.80) [disp gcc 1.00]")
    assert "chained" in lines[2] and "= 1.25 (" in lines[2] and "(best: scalar 3.20)" in lines[2]


def test_tables_print_bound_and_x_bound():
    rows = [_r("c fly/full/i1 gcc", 512, "bulk", 5.0), _r("Botan", 512, "bulk", 6.0, "peer")]
    annotate(rows, {("c fly/full/i1 gcc", 512, "bulk"): (4.0, "ALU0+ALU1")})
    assert (rows[0].bound, rows[0].x_bound, rows[1].bound) == (4.0, 1.25, None)
    info = {"fail": [], "dispatch": ["  Threefish-512 bulk dispatcher / best variant = 1.00 (best: x 1.00)"]}
    buf = io.StringIO()
    table(rows, info, buf)
    out = buf.getvalue()
    line = next(ln for ln in out.splitlines() if ln.startswith("  c fly/full/i1 gcc"))
    assert line.split()[-4:] == ["4.00", "1.25x", "-", "-"]      # bound, x bound, src KiB, code KiB
    botan = next(ln for ln in out.splitlines() if ln.startswith("  Botan"))
    assert botan.split()[-4:] == ["-", "-", "-", "-"]
    rows[0].src_bytes, rows[0].code_bytes = 132096, 17510
    buf = io.StringIO()
    table(rows, info, buf)
    line = next(ln for ln in buf.getvalue().splitlines() if ln.startswith("  c fly/full/i1 gcc"))
    assert line.split()[-4:] == ["4.00", "1.25x", "129.0", "17.1"]
    assert "dispatcher / best variant = 1.00" in out
    md = markdown(rows, info, [], [])
    assert "| bound | x bound |" in md and "| 4.00 | 1.25x | 129.0 | 17.1 |" in md and "## Dispatcher / best variant" in md


def test_nasm_lanes_work_counts_whole_vector_loads_and_transposes():
    # nasm-x64 --isa avx512 Threefish-512: one pass = 8 blocks in zmm lanes; per pass the vector
    # ops of one described block (496 adds, 289 xors, 288 vprolq), 8 + 2 whole-vector loads (block
    # and tweak words), 8 stores, and the transposes' lane moves: 3 stages of 8 for the blocks'
    # load and 3 for their store, 1 stage of 2 for the tweaks'.  Zen 5: (496 + 289 + 288 + 50) / 4
    # FP pipes per 8 x 64 bytes.
    t = registry.get("nasm-x64")
    spec = get_spec("1.3", 512)
    v = next(x for x in t.candidates("all", [spec]) if x.get("isa") == "avx512")   # (no allocator run)
    w = tools_for(t.name).bound_work(v)
    assert (w.blocks, w.bits) == (8, 512)
    assert (w.counts["vadd"], w.counts["vxor"], w.counts["vrot"]) == (496, 289, 288)
    assert (w.counts["vload"], w.counts["vstore"], w.counts["shuffle"]) == (10, 8, 50)
    assert "load" not in w.counts and "store" not in w.counts
    assert bound_cpb(w, ZEN5, 64) == pytest.approx((496 + 289 + 288 + 50) / 4 / (8 * 64))
