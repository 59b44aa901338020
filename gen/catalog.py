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


def variants(which: str = "recommended", target: str = "c", specs=None) -> list[Variant]:
    specs = list(specs) if specs is not None else all_specs()
    simd = simd_variants(which, specs) if target in ("c", "c-simd") else []
    if target == "c-simd":
        return simd
    if which == "recommended":
        return [recommended_c(s) for s in specs] + simd
    return [Variant(target, s, o) for s in specs for o in c_option_sets(s)] + simd


# --------------------------------------------------------------------------- SIMD C (c-simd)
SIMD_ISAS = ("sse2", "avx", "avx2", "avx512")
SIMD_LAYOUTS = ("lanes", "hybrid")
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
    """The full matrix: every ISA x layout, two vector groups per pass, hybrid with 1 and 2 scalar
    blocks where the vectors are wide enough to gain, a table/loop variant, the dispatcher."""
    out = []
    for isa in SIMD_ISAS:
        out.append(simd_variant(spec, isa, "lanes"))
        out.append(simd_variant(spec, isa, "hybrid", Options("fly", "full", 1)))
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
