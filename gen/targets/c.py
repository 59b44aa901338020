"""Target ``c``: portable C99 (uint64_t), layout scalar, one .c and one .h per variant.

With ``--isa`` the command line hands the variant to ``c-simd`` (``gen/targets/c_simd.py``)."""
from __future__ import annotations

from ..layouts import scalar
from ..printers import c as cprinter
from ..printers import render_template
from ..spec import Spec
from ..threefish import KEYS, UNROLL, Options
from .base import ANNOTATE_OPTION, WIPE_OPTION, DIRECTIONS, Pass, Recipe, Target, describe_pass, without_default_annotate

# Best measured options per block size (README, "Benchmarks").
RECOMMENDED = {
    256: Options(keys="fly", unroll="full", interleave=2),
    512: Options(keys="fly", unroll="full", interleave=1),
    1024: Options(keys="fly", unroll="full", interleave=1),
}


def option_sets(spec: Spec) -> list[Options]:
    """Every scalar C option set worth building: all key/unroll pairs, plus interleaving."""
    sets = [Options(k, u, 1) for k in KEYS for u in UNROLL]
    sets += [Options("fly", "full", 2), Options("fly", "loop", 2)]
    rec = RECOMMENDED[spec.bits]
    if rec not in sets:
        sets.append(rec)
    return sets


class C(Target):
    name = "c"
    summary = "scalar C99 (uint64_t), layout scalar; needs any C99 compiler"
    recipe = Recipe(checker="c", language="c")
    schema = (ANNOTATE_OPTION, WIPE_OPTION)

    def extra(self, spec, o, values):
        return without_default_annotate(values)

    def default_options(self, spec):
        return RECOMMENDED[spec.bits]

    def variants(self, which, specs):
        if which == "recommended":
            return [self.variant(s, RECOMMENDED[s.bits]) for s in specs]
        return [self.variant(s, o) for s in specs for o in option_sets(s)]

    def recommended_lines(self):
        return [f"  c {bits:>4}: {o.describe()}" for bits, o in RECOMMENDED.items()]

    def bench_variants(self, spec, quick, asked):
        """Every option set with gcc and clang; when only other targets are asked for, the
        reference row (recommended options, gcc) that every ratio is taken against."""
        if self.name not in asked:
            return [(self.variant(spec, RECOMMENDED[spec.bits]), "gcc")]
        sets = [RECOMMENDED[spec.bits]] if quick else option_sets(spec)
        return [(self.variant(spec, o), cc) for o in sets for cc in ("gcc", "clang")]

    def passes(self, v):
        return [describe_pass(needs),
                Pass("layout scalar (gen/layouts/scalar.py)", "Program", "Program (one word per uint64_t) + op counts",
                     layout_scalar),
                Pass("print C (gen/printers/c.py)", "Program", ".c + .h (templates/c/)", print_c)]


def needs(v) -> list:
    """The programs the C functions print: one block, and the interleaved blocks of *_blocks."""
    o = v.options
    return [(d, o, n) for d in DIRECTIONS for n in sorted({1, o.interleave})]


def layout_scalar(v, programs) -> dict:
    """Layout scalar keeps the description's words one per uint64_t: the programs, and their counts."""
    o = v.options
    one = {d: programs[(d, o, 1)] for d in DIRECTIONS}
    return dict(one=one, blocks={d: programs[(d, o, o.interleave)] for d in DIRECTIONS},
                counts=scalar.op_counts(one["encrypt"]))


def print_c(v, laid) -> dict[str, str]:
    notes = [f"layout scalar; keys {v.options.keys} (subkeys "
             + ("computed on the fly" if v.options.keys == "fly" else "from a precomputed table")
             + f"); unroll {v.options.unroll}; encrypt_blocks interleaves {v.options.interleave} block(s)",
             "ops per block (encrypt): " + ", ".join(f"{k} {n:g}" for k, n in laid["counts"].items())]
    ctx = dict(spec=v.spec, prefix=v.prefix, command=v.command(), notes=notes,
               header=f"{v.stem}.h", guard=f"{v.stem.upper()}_H", interleave=v.options.interleave,
               fn=cprinter.function_bodies(v.prefix, laid["one"], laid["blocks"]))
    ctx["wipe"] = v.get("wipe", True)
    # bytes each public function's wipe clears: its locals (single block: setup + body; blocks:
    # setup + the interleaved and tail bodies), see gen/printers/c.py stack_bound
    ctx["burns"] = {d: (cprinter.stack_bound(f["setup"]["decl"] + f["body"]["decl"]),
                        cprinter.stack_bound(f["setup"]["decl"] + f["multi_body"]["decl"] + f["tail_body"]["decl"]))
                    for d, f in ctx["fn"].items()}
    ctx["burn"] = max(b for pair in ctx["burns"].values() for b in pair)
    annotate = v.get("annotate", ANNOTATE_OPTION.default)
    return {f"{v.stem}.c": cprinter.annotate_text(render_template("c/threefish.c.j2", **ctx), annotate),
            f"{v.stem}.h": render_template("c/threefish.h.j2", **ctx)}


TARGET = C()
