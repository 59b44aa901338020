"""Which variants exist, and which ones are recommended (and rendered into out/).

The recommendations come from ``make bench`` on the machine named in the README;
change them here when the measurements say so.
"""
from __future__ import annotations

from .render import Variant
from .spec import Spec, all_specs
from .threefish import KEYS, UNROLL, Options

# Scalar C: best measured options per block size (see README, "Benchmarks").
RECOMMENDED_C = {
    256: Options(keys="fly", unroll="full", interleave=2),
    512: Options(keys="fly", unroll="full", interleave=1),
    1024: Options(keys="fly", unroll="full", interleave=1),
}


def recommended_c(spec: Spec) -> Variant:
    return Variant("c", spec, RECOMMENDED_C[spec.bits])


def c_option_sets(spec: Spec) -> list[Options]:
    """Every scalar C option set worth building: all key/unroll pairs, plus interleaving."""
    sets = [Options(k, u, 1) for k in KEYS for u in UNROLL]
    sets += [Options("fly", "full", 2), Options("fly", "loop", 2)]
    rec = RECOMMENDED_C[spec.bits]
    if rec not in sets:
        sets.append(rec)
    return sets


# NASM targets: target options (sorted (name, value) pairs) rendered for every size and
# version with --keys fly --unroll full --interleave 1 (the only form they take).
RECOMMENDED_NASM = {
    "nasm-x64": [(("abi", "sysv"), ("strategy", "belady")), (("abi", "win64"), ("strategy", "belady")),
                 (("abi", "sysv"), ("isa", "avx2"), ("strategy", "belady")),
       (("abi", "sysv"), ("isa", "avx512"), ("strategy", "belady"))],
    "nasm-x86": [(("abi", "cdecl"), ("strategy", "belady"))],
}
# verify --set all: every strategy (named fails by design where the words do not fit: skipped here)
ALL_NASM = {
    "nasm-x64": [(("abi", "sysv"), ("strategy", s)) for s in ("belady", "linear-scan", "named")]
    + [(("abi", "sysv"), ("rotate", "rorx"), ("strategy", "belady")),
       (("abi", "sysv"), ("isa", "sse2"), ("strategy", "belady")),
       (("abi", "sysv"), ("isa", "sse2"), ("layout", "packed"), ("strategy", "belady")),
       (("abi", "sysv"), ("isa", "avx2"), ("strategy", "belady")),
       (("abi", "sysv"), ("isa", "avx512"), ("strategy", "belady"))],
    "nasm-x86": [(("abi", "cdecl"), ("strategy", s)) for s in ("belady", "linear-scan")]
    + [(("abi", "cdecl"), ("layout", "packed"), ("strategy", s)) for s in ("belady", "linear-scan", "named")],
}


def nasm_variants(which: str, target: str, specs) -> list[Variant]:
    from .errors import GenError
    from .printers.nasm import allocate
    out = []
    for s in specs:
        for extra in (RECOMMENDED_NASM if which == "recommended" else ALL_NASM)[target]:
            v = Variant(target, s, Options("fly", "full", 1), "", extra)
            if which != "recommended":
                try:
                    allocate(v, "encrypt")
                except GenError:
                    continue
            out.append(v)
    return out


# C#: (layout, options) per block size.  'lanes' also carries the scalar one-block path.
# Measured (gen/bench_csharp.py, AMD EPYC with AVX-512, .NET 10): Threefish-256 gains from
# three lane groups per pass (Vector512 bulk 1.49 -> 0.84 c/B, Vector256 4.43 -> 2.27, scalar
# tail/fallback 5.6 -> 4.0); 512/1024 lose with any interleave (the JIT spills: 0.97 -> 7.0).
RECOMMENDED_CSHARP = {
    256: ("lanes", Options(keys="fly", unroll="full", interleave=3)),
    512: ("lanes", Options(keys="fly", unroll="full", interleave=1)),
    1024: ("lanes", Options(keys="fly", unroll="full", interleave=1)),
}
CSHARP_NAMESPACE = "ThreefishGen"


def csharp_variant(spec: Spec, layout: str, options: Options, namespace: str = CSHARP_NAMESPACE,
                   cls: str | None = None) -> Variant:
    """A C# variant; the class name defaults to one naming size, version, layout (and options
    when they are not the recommended ones), so every variant fits into one assembly."""
    from .printers.csharp import default_class
    if cls is None:
        cls = default_class(spec, layout)
        if (layout, options) != RECOMMENDED_CSHARP[spec.bits]:
            cls += f"_{options.keys}_{options.unroll}_i{options.interleave}"
    return Variant("csharp", spec, options, cls, (("layout", layout), ("namespace", namespace)))


def recommended_csharp(spec: Spec) -> Variant:
    layout, opts = RECOMMENDED_CSHARP[spec.bits]
    return csharp_variant(spec, layout, opts)


def csharp_variants(which: str, specs) -> list[Variant]:
    if which == "recommended":
        return [recommended_csharp(s) for s in specs]
    out = []
    for s in specs:
        sets = [Options("fly", "full", 1), Options("table", "full", 1), Options("fly", "loop", 1),
                Options("table", "loop", 1), Options("fly", "full", 2)]
        out += [csharp_variant(s, "lanes", o) for o in sets]
        out.append(csharp_variant(s, "scalar", RECOMMENDED_CSHARP[s.bits][1]))
        out.append(csharp_variant(s, "packed", Options("fly", "full", 1)))
    return out


def variants(which: str = "recommended", target: str = "c", specs=None) -> list[Variant]:
    specs = list(specs) if specs is not None else all_specs()
    if target in RECOMMENDED_NASM:
        return nasm_variants(which, target, specs)
    if target == "csharp":
        return csharp_variants(which, specs)
    if target == "c-simd":
        return simd_variants(which, specs)
    if which == "recommended":
        return [recommended_c(s) for s in specs]
    return [Variant(target, s, o) for s in specs for o in c_option_sets(s)]


# --------------------------------------------------------------------------- SIMD C (c-simd)
SIMD_ISAS = ("sse2", "avx", "avx2", "avx512")
SIMD_LAYOUTS = ("lanes", "hybrid", "packed")
# Layout packed (one block over the lanes, for single-block latency) is NOT in the dispatcher:
# it never beat scalar C for single-block calls.  Measured with the make-bench harness
# (now `threefish-gen bench --target c-simd --filter packed`; chained single-block encrypt,
# cycles/byte, median of 5 runs x 11 samples, AMD EPYC Zen 5 (family 26) shared with other jobs; x scalar = per-run ratio to the scalar row
# of the same compiler, v1.3):
#   Threefish-256  scalar 5.5 (gcc) / 6.2 (clang); packed avx512 12.7 (2.1-2.3x), avx2 17.2-17.5
#                  (2.8-3.2x), avx 24.0, sse2 24.3-24.6 (3.9-4.5x)
#   Threefish-512  scalar 3.9 / 3.8; packed avx512 7.4 (1.9x), avx2 9.0-9.1 (2.3x), avx 13.1,
#                  sse2 13.8-14.1 (3.4-3.6x); Botan's packed AVX2 14.6 (its scalar 4.2)
#   Threefish-1024 scalar 4.7 / 5.1; packed avx512 5.4-6.0 (1.04-1.28x), avx2 5.6-5.8 (1.08-1.24x),
#                  avx 8.7-8.9, sse2 11.1-14.8
# Why: every vector op on this core has 2 cycles of latency (scalar add/rotate/xor: 1) and a
# round of packed is a chain add -> xor (B) and add -> lane permute (A; vpermq 3-4 cycles), so
# even the ideal chain is no shorter than the scalar round, and subkeys need lane inserts.
# Re-measure (and add packed to RECOMMENDED_SIMD as a single-block path) on cores with
# 1-cycle vector latency.
# Paths the dispatcher holds per block size (and the standalone SIMD variants for out/), from
# measurements (README, "Benchmarks"): (isa, layout, options).
RECOMMENDED_SIMD = {
    256: [("avx512", "lanes", Options("fly", "full", 2)), ("avx2", "lanes", Options("fly", "full", 2))],
    512: [("avx512", "lanes", Options("fly", "full", 2)), ("avx2", "lanes", Options("fly", "full", 2))],
    1024: [("avx512", "lanes", Options("fly", "full", 1)), ("avx2", "lanes", Options("fly", "full", 1))],
}


def simd_variant(spec: Spec, isa: str, layout: str = "lanes", options: Options = Options()) -> Variant:
    extra = (("isa", isa),) if isa == "auto" else (("isa", isa), ("layout", layout))
    return Variant("c-simd", spec, options, "", extra)


def dispatcher(spec: Spec) -> Variant:
    return simd_variant(spec, "auto", options=RECOMMENDED_C[spec.bits])


def simd_recommended(spec: Spec) -> list[Variant]:
    """The recommended standalone SIMD variants (the dispatcher's paths) and the dispatcher."""
    return [simd_variant(spec, i, lay, o) for i, lay, o in RECOMMENDED_SIMD[spec.bits]] + [dispatcher(spec)]


def simd_all(spec: Spec) -> list[Variant]:
    """The full matrix: every ISA x layout (packed: one block over the lanes), two vector groups
    per pass, hybrid with 1 and 2 scalar blocks where the vectors are wide enough to gain, a
    table/loop variant, the dispatcher."""
    out = []
    for isa in SIMD_ISAS:
        out.append(simd_variant(spec, isa, "lanes"))
        out.append(simd_variant(spec, isa, "hybrid", Options("fly", "full", 1)))
        out.append(simd_variant(spec, isa, "packed", Options("fly", "full", 1)))
    for isa in ("avx2", "avx512"):
        out.append(simd_variant(spec, isa, "lanes", Options("fly", "full", 2)))
    out.append(simd_variant(spec, "avx2", "hybrid", Options("fly", "full", 2)))
    out.append(simd_variant(spec, "avx512", "lanes", Options("table", "loop", 1)))
    out.append(simd_variant(spec, "sse2", "lanes", Options("fly", "loop", 1)))
    for v in simd_recommended(spec):
        if v not in out:
            out.append(v)
    return out


def simd_variants(which: str = "recommended", specs=None) -> list[Variant]:
    specs = list(specs) if specs is not None else all_specs()
    pick = simd_recommended if which == "recommended" else simd_all
    return [v for s in specs for v in pick(s)]
