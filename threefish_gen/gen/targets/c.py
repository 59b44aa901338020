"""Target ``c``: portable C99 (uint64_t), layout scalar, one .c and one .h per variant.

With ``--isa`` the command line hands the variant to ``c-simd`` (``gen/targets/c_simd.py``)."""
from __future__ import annotations

from dataclasses import replace

from .. import skein
from ..dsl import count_ops
from ..errors import GenError
from ..layouts import scalar
from ..printers import c as cprinter
from ..printers import render_template
from ..spec import Spec
from ..threefish import KEYS, UNROLL, Options
from .base import (ANNOTATE_OPTION, PRIMITIVE_OPTION, WIPE_OPTION, Pass, Recipe, Target, describe_pass, is_skein,
                   layout_scalar, scalar_needs, ubi_pass, without_default_annotate, without_default_primitive)

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


def _rows(words, per=4) -> list[str]:
    """C initialiser rows of 64-bit words, ``per`` to a row, commas between."""
    items = [f"UINT64_C({w:#018x})" for w in words]
    rows = [", ".join(items[i:i + per]) for i in range(0, len(items), per)]
    return [r + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)]


def skein_context(v, prog) -> dict:
    """Template context of a Skein render (templates/c/skein.*.j2): the UBI block fused from
    the Threefish description (gen/skein.ubi_program), the precomputed IVs, sizes."""
    spec = v.spec
    counts = dict(sorted(count_ops(prog.setup + prog.body).items()))
    notes = [f"Skein-{spec.bits}: UBI = Threefish-{spec.bits} keyed by the chaining value, feed-forward "
             f"and tweak update fused; keys {v.options.keys}; unroll {v.options.unroll}",
             "ops per block (UBI): " + ", ".join(f"{k} {n:g}" for k, n in counts.items())]
    nb = spec.block_bytes
    return dict(spec=spec, P=v.prefix, command=v.command(), notes=notes, header=f"{v.stem}.h",
                guard=f"{v.stem.upper()}_H", nw=spec.nw, nb=nb, nb_log2=nb.bit_length() - 1,
                tree_levels=64 - (2 * nb).bit_length() + 1, prefix=v.prefix,
                ubi=cprinter.ubi_sections(v.prefix, scalar.lower(prog, fuse=True)), simd=None, asm_ubi=None, stem=v.stem,
                ivs=[(bits, _rows(skein.iv_words(spec, bits))) for bits in skein.STANDARD_OUTPUTS[spec.bits]])


def _frame(nbytes: int) -> list[str]:
    """A function's locals of ``nbytes`` bytes as a declaration line the bound functions of
    gen/printers/c.py read (they count the locals a Line records)."""
    n = (nbytes + 7) // 8
    return [cprinter.decl("uint64_t", [("locals", n)], f"uint64_t locals[{n}];")]


def skein_burns(ctx: dict) -> dict:
    """Bytes each wipe of the Skein C clears per build ("opt", "gcc", "clang", "other"; gen/printers/c.py
    wipe_bounds): the bound of the deepest chain of frames below the wrapper, the sum of each
    frame's bound (its locals, twice, plus the room for saved registers, return address and red
    zone: 256 bytes optimized, 1 KiB unoptimized, plus the -O0 slots of the SIMD kernels'
    intrinsics).  Functions and their locals as templates/c/skein.c.j2 declares them; ubi: the
    fused UBI block's declarations (nasm-x64: the C wrapper, and below it the assembly loop's
    return address, pushes and frame, ctx["asm_stack"], counted as locals); kern: the largest
    hash_many lanes kernel."""
    nb, nw = ctx["nb"], ctx["nw"]
    ml = ctx["simd"]["max_lanes"] if ctx["simd"] else 0
    frames = {
        "ubi": ctx["ubi"]["decl"],
        "ubi_all": _frame(16 + nb + 8),                       # t[2], last[nb], full
        "start": _frame(32 + 32 + 32 + 24),                   # args, lens, cfg, bits, i, keylen
        "pend": _frame(nb + 8),                               # blk, i
        "push": _frame(16),
        "blocks": _frame(16),
        "update": _frame(16),
        "final": _frame(3 * nb + 64),                         # g, h, blk, t, i, left, k, w, j
        "hash_many": _frame(nb + 24),                         # iv, i, level
        "many_lanes": _frame(4 * ml * nb + nb + 64 * ml + 96),   # cv[2], pad, hw, ob, tw, mp, idx, pos, ctr, state, ...
        "lanes_call": _frame(8),                              # (its arguments; the kernel is called from it)
        "scrub": _frame(8),                                   # l
        "tree_lanes": _frame(2 * ml * nb + 24 * ml + nb + 96),    # hv[2], tw, mp, cv, ...
    }
    calls = {"start": ["ubi_all"], "ubi_all": ["ubi"], "update": ["blocks"], "blocks": ["ubi", "push"],
             "push": ["pend"], "pend": ["ubi"], "final": ["ubi", "push"], "hash_many": []}
    if ctx.get("asm_stack"):    # nasm-x64: ubi is the C wrapper (hb, tw[256], i, k) over the assembly loop
        frames["ubi"] = _frame(nb + 256 + 16)
        frames["asm"] = _frame(ctx["asm_stack"])
        calls["ubi"] = ["asm"]
    if ctx["simd"]:
        frames["kern"] = []
        calls.update(update=["blocks", "tree_lanes"], tree_lanes=["lanes_call", "push", "scrub"],
                     hash_many=["many_lanes"], many_lanes=["lanes_call", "scrub"], scrub=["lanes_call"],
                     lanes_call=["kern"])
    bounds = {f: cprinter.wipe_bounds(lines, True) for f, lines in frames.items()}
    if ctx["simd"]:
        kb = [cprinter.wipe_bounds(k["lines"], True) for k in ctx["simd"]["kernels"]]
        bounds["kern"] = {b: max(k[b] for k in kb) for b in kb[0]}

    def chain(f):
        below = [chain(c) for c in calls.get(f, [])]
        return {b: n + max((c[b] for c in below), default=0) for b, n in bounds[f].items()}
    out = {f: dict(chain(f)) for f in ("start", "update", "final", "hash_many")}
    if ctx["simd"]:      # update: the lanes' frames only on a tree context (ctx->leaf)
        calls["update"] = ["blocks"]
        seq = chain("update")
        out["update_tree"] = out["update"]
        out["update"] = {b: f"(ctx->leaf ? {n} : {seq[b]})" for b, n in out["update"].items()}
    return out


def render_skein(v, ctx: dict) -> dict[str, str]:
    annotate = v.get("annotate", ANNOTATE_OPTION.default)
    ctx.setdefault("wipe", v.get("wipe", True))
    ctx["burns"] = skein_burns(ctx)
    sizes = [b for f, b in ctx["burns"].items() if f != "update" or not ctx["simd"]]
    ctx["burn"] = max(b["other"] for b in sizes)
    ctx["burn_opt"] = max(b["opt"] for b in sizes)
    if ctx["wipe"]:
        ctx["notes"] = ctx["notes"] + [
            "wipe: init*, update, final and hash_many clear the stack below the caller after the work "
            "(key, chaining value, subkeys); hash/mac call them (--no-wipe: no wipe)"]
    if annotate == "none":          # the UBI block and the SIMD kernels without their notes
        ctx = dict(ctx, ubi=dict(ctx["ubi"], code=cprinter.without_notes(ctx["ubi"]["code"])))
        if ctx["simd"]:
            ctx["simd"] = dict(ctx["simd"], kernels=[dict(k, lines=cprinter.without_notes(k["lines"]))
                                                     for k in ctx["simd"]["kernels"]])
    text = render_template("c/skein.c.j2", annotate=annotate, **ctx)
    return {f"{v.stem}.c": text, f"{v.stem}.h": render_template("c/skein.h.j2", **ctx)}


class C(Target):
    name = "c"
    summary = "scalar C99 (uint64_t), layout scalar; needs any C99 compiler"
    recipe = Recipe(checker="c", language="c")
    schema = (ANNOTATE_OPTION, PRIMITIVE_OPTION, WIPE_OPTION)

    def extra(self, spec, o, values):
        return without_default_primitive(without_default_annotate(values))

    def default_options(self, spec):
        return RECOMMENDED[spec.bits]

    def default_options_for(self, spec, values):
        if values.get("primitive") == "skein":      # UBI chains blocks: one block at a time
            return replace(RECOMMENDED[spec.bits], interleave=1)
        return self.default_options(spec)

    def validate(self, v):
        if is_skein(v) and v.options.interleave != 1:
            raise GenError("--primitive skein takes --interleave 1 (UBI chains its blocks one at a time)")

    def checker(self, v):
        return "skein-c" if is_skein(v) else self.recipe.checker

    def variants(self, which, specs):
        """Threefish variants, then the Skein ones (recommended: one per spec; all: every
        key/unroll pair)."""
        sk = {"primitive": "skein"}
        if which == "recommended":
            return ([self.variant(s, RECOMMENDED[s.bits]) for s in specs]
                    + [self.variant(s, self.default_options_for(s, sk), **sk) for s in specs])
        return ([self.variant(s, o) for s in specs for o in option_sets(s)]
                + [self.variant(s, Options(k, u, 1), **sk) for s in specs for k in KEYS for u in UNROLL])

    def recommended_lines(self):
        return [f"  c {bits:>4}: {o.describe()}" for bits, o in RECOMMENDED.items()] + \
            ["  c skein (--primitive skein): every size, --keys fly --unroll full --interleave 1"]

    def list_lines(self):
        return super().list_lines() + [
            "            --primitive skein: Skein hash/MAC/personalization/tree (init, init_ex, init_tree,",
            "            update, final, hash, mac, hash_many); with --isa avx2|avx512|auto hash_many and tree",
            "            leaves run in SIMD lanes; --target csharp --primitive skein: static class;",
            "            --target nasm-x64|nasm-x86 --primitive skein: the UBI loop in assembly + the C driver"]

    def passes(self, v):
        if is_skein(v):
            return [ubi_pass(), Pass("print C Skein (gen/printers/c.py)", "UBI Program",
                                     "Skein .c + .h (templates/c/skein.*.j2)",
                                     lambda v, prog: render_skein(v, skein_context(v, prog)))]
        return [describe_pass(scalar_needs),
                Pass("layout scalar (gen/layouts/scalar.py)", "Program", "VProgram (W = 1: one word per uint64_t) + op counts",
                     layout_scalar),
                Pass("print C (gen/printers/c.py)", "VProgram", ".c + .h (templates/c/)", print_c)]


# From this block size up, the blocks function of a fly/full variant at interleave 1 runs each
# block through the single-block kernel (its key schedule, Nw loads and xors, once per block)
# instead of a second copy of it (issue 30); smaller blocks, subkey tables and the loop form's key
# and counter rings (filled once per call), and interleaved variants keep their own loop.  Measured
# (Zen 3, gcc 12 -O2, encrypt_blocks over 1 MiB, best of 41 x 15-21 alternated rounds, load 12-23):
# Threefish-1024 fly/full 0.98x; not shared: 1024 fly/loop 1.044x, 512 fly/full 1.028x, 256 i2
# with its tail shared 1.005x in bulk but 1.035x for 1-3 blocks.
SHARED_MIN_BYTES = 128


def print_c(v, laid) -> dict[str, str]:
    notes = [f"layout scalar; keys {v.options.keys} (subkeys "
             + ("computed on the fly" if v.options.keys == "fly" else "from a precomputed table")
             + f"); unroll {v.options.unroll}; encrypt_blocks interleaves {v.options.interleave} block(s)",
             "ops per block (encrypt): " + ", ".join(f"{k} {n:g}" for k, n in laid["counts"].items())]
    ctx = dict(spec=v.spec, prefix=v.prefix, command=v.command(), notes=notes,
               header=f"{v.stem}.h", guard=f"{v.stem.upper()}_H", interleave=v.options.interleave,
               fn=cprinter.function_bodies(v.prefix, laid["one"], laid["blocks"]))
    ctx["wipe"] = v.get("wipe", True)
    ctx["kernel_wipe"] = True       # the single-block bound of a scalar kernel (templates/c/wipe.j2)
    # the blocks function's blocks through the single-block kernel, not a second copy of it
    # (issue 30), where that costs nothing (SHARED_MIN_BYTES)
    ctx["shared"] = shared = (v.options.interleave == 1 and v.options.keys == "fly" and v.options.unroll == "full"
                              and v.spec.block_bytes >= SHARED_MIN_BYTES)
    # bytes each public function's wipe clears per build (gen/printers/c.py wipe_bounds) from its
    # locals (single block: setup + body; blocks: setup + the interleaved and tail bodies; where
    # the blocks call the single-block kernel, its frame lies below theirs: its bound is added)
    ctx["burns"] = {}
    for d, f in ctx["fn"].items():
        one = cprinter.wipe_bounds(f["setup"]["decl"] + f["body"]["decl"], True, "scalar")
        if not shared:
            many = cprinter.wipe_bounds(f["setup"]["decl"] + f["multi_body"]["decl"] + f["tail_body"]["decl"], False)
        else:
            many = {k: b + one[k] for k, b in cprinter.wipe_bounds([], False).items()}
        ctx["burns"][d] = (one, many)
    ctx["burn"] = max(b["other"] for pair in ctx["burns"].values() for b in pair)
    ctx["burn_opt"] = max(b["opt"] for pair in ctx["burns"].values() for b in pair)
    annotate = v.get("annotate", ANNOTATE_OPTION.default)
    if annotate == "none":          # the functions without the description's notes
        for f in ctx["fn"].values():
            for sec in f.values():
                sec["code"] = cprinter.without_notes(sec["code"])
    return {f"{v.stem}.c": render_template("c/threefish.c.j2", annotate=annotate, **ctx),
            f"{v.stem}.h": render_template("c/threefish.h.j2", **ctx)}


TARGET = C()
