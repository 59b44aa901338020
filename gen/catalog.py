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
    if which == "recommended":
        return [recommended_c(s) for s in specs]
    return [Variant(target, s, o) for s in specs for o in c_option_sets(s)]
