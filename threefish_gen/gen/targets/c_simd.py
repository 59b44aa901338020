"""Target ``c-simd`` (``render --target c-simd --isa ISA``): SIMD C with x86 intrinsics, SSE2 to AVX-512,
and AArch64 NEON (``--isa neon``, gen/isa/neon.py).

Layouts ``lanes`` (L blocks word-sliced), ``hybrid`` (lanes plus scalar blocks in one loop),
``packed`` (one block over the lanes); ``--isa auto`` is the run-time dispatcher over the
recommended paths below and scalar C.  Compile: describe (exactly the programs the functions print,
:func:`needs`) -> lay out (each of them in the layouts its functions read, :func:`lowerings`:
gen/layouts/) -> print (gen/printers/c_simd/: driver.py prints each function from those layout IR
programs and fills the templates, printer.py walks the layout IR)."""
from __future__ import annotations

from .. import cpu_rules, skein
from ..errors import GenError
from ..layouts import lanes as llanes
from ..layouts.lay_out import lay_out
from ..printers.c_simd.driver import (ENV_VAR, FAMILY_MACROS, GUARDS, ISAS, LAYOUTS, family_name,
                                      render_c_simd, skein_lanes_kernel)
from ..printers.c_simd.printer import packed_width
from ..threefish import Options, loop_cycles
from ..variant import Variant
from .base import (ANNOTATE_OPTION, DIRECTIONS, PRIMITIVE_OPTION, WIPE_OPTION, Option, Pass, Recipe, Target,
                   describe_pass, is_skein, run_passes, ubi_pass, without_default_annotate)
from .c import RECOMMENDED as RECOMMENDED_C
from .c import render_skein, skein_context

# Skein (--primitive skein): hash_many runs messages in the lanes of these ISAs (--isa auto: all;
# an x86 build compiles the x86 ones and picks by cpuid, an AArch64 build the NEON one).
SKEIN_ISAS = ("avx2", "avx512", "neon")

# The Skein lanes kernels' layout (layouts/lanes.lower): chaining values (``in`` block 0, ``out``) and
# tweaks word-sliced, the message block of lane l read from the parameter m<l> (where it lies).
SKEIN_SLICED = (("in", 0), ("tweak", 0), ("out", 0))
SKEIN_ROWS = {("in", 1): "m"}


def skein_lanes_layout(prog, lanes: int):
    """gen/skein.ubi_lanes_program in the lanes layout of the SIMD C Skein kernels: ``in`` and
    ``out`` hold the L chaining values word-sliced (word j of lane l at word j*L + l: a vector per
    word, kept in that form from one block to the next, no transposes), ``tweaks`` the L tweaks
    the same way (t0 of lane l at word l, t1 at word L + l), and the message block of lane l is
    read from the parameter ``m<l>`` (loaded straight from the caller's message, then transposed
    into words: the only transpose of the kernel)."""
    return llanes.lower(prog, lanes, sliced=SKEIN_SLICED, rows=SKEIN_ROWS)


ISA_NAMES = tuple(ISAS)            # sse2 avx avx2 avx512 neon
# Layout packed (one block over the lanes, for single-block latency) is not a default path of the
# dispatcher: on most CPUs it did not beat scalar C for single-block calls (docs/bench.md, "Layout
# packed"); the CPU table's single-block rows add it where a profile's chained winner is packed
# (single_rule_paths, gen/cpu_rules.py).
# Paths the dispatcher holds per block size (and the standalone SIMD variants for out/), from
# measurements (docs/bench.md, "Compact kernels"): (isa, layout, options).  Both x86 ISAs take the
# compact form, the loop over 24-round passes (--unroll loop: a third of the rounds' source;
# Threefish-1024: five 16-round passes, the rings read through fresh pointers), its key and counter
# rings read by broadcast loads: on Zen 4 (AVX-512) it ran at 0.96-1.04x the unrolled kernel of the
# same interleave, on Zen 3 and Zen 4 (AVX2) at 0.88-1.02x.  Threefish-256's
# AVX-512 path interleaves 4 lane groups, the bulk winner on every AVX-512 CPU measured (Zen 4,
# Zen 5, Emerald Rapids), so the CPU table's rows and the default share one kernel.
RECOMMENDED = {
    256: [("avx512", "lanes", Options("fly", "loop", 4)), ("avx2", "lanes", Options("fly", "loop", 2))],
    512: [("avx512", "lanes", Options("fly", "loop", 2)), ("avx2", "lanes", Options("fly", "loop", 1))],
    1024: [("avx512", "lanes", Options("fly", "loop", 1)), ("avx2", "lanes", Options("fly", "loop", 1))],
}
# The AArch64 path of the dispatcher (and its standalone variant in out/), a separate entry: its
# speed is unmeasured here (qemu only), so it takes the compact form, the loop over 24-round passes;
# the interleave is the most lane groups whose state fits in AArch64's 32 vector registers without
# more stack traffic per block (docs/aarch64.md, "Speed").
RECOMMENDED_NEON = {
    256: [("neon", "lanes", Options("fly", "loop", 2))],
    512: [("neon", "lanes", Options("fly", "loop", 1))],
    1024: [("neon", "lanes", Options("fly", "loop", 1))],
}


def compact(isa: str, layout: str, o: Options) -> Options:
    """The options a CPU table row's path is compiled with: a measured winner's own, except that
    an unrolled lanes kernel (keys fly) of an ISA whose recommended path is the loop takes the
    loop form of the same interleave (the dispatcher holds the compact kernels only; the loop ran
    within 0.96-1.05x of the unrolled kernel on the CPUs measured: docs/bench.md, "Compact
    kernels")."""
    loops = {i for paths in RECOMMENDED.values() for i, lay, p in paths if lay == "lanes" and p.unroll == "loop"}
    if layout == "lanes" and isa in loops and o.keys == "fly" and o.unroll == "full":
        return Options("fly", "loop", o.interleave)
    return o


def lowerings(v: Variant, subs=()) -> dict:
    """{(direction, options, blocks): [(layout, lanes), ...]}: the description programs the
    functions of a variant print (``subs``: the dispatcher's paths), each with the layouts its
    functions read it in: W = 1 (``("scalar", 1)``: the single-block function, the key words of
    every *_blocks function and its scalar tail), the lanes of the path's ISA (its vector loops:
    the one-block program, the interleaved one, hybrid's one-block vector part), hybrid's
    interleaved scalar blocks at W = 1, layout packed's one block over its vectors."""
    shapes: dict = {}

    def want(shape, layout, lanes=1):
        got = shapes.setdefault(shape, [])
        if (layout, lanes) not in got:
            got.append((layout, lanes))

    def path(o, layout, isa):
        for d in DIRECTIONS:
            want((d, o, 1), "scalar")
            if isa is None:
                continue
            L = ISAS[isa].bits // 64
            if layout == "packed":
                one = Options("fly", "full", 1)
                want((d, one, 1), "scalar")
                want((d, one, 1), "packed", packed_width(ISAS[isa], v.spec.nw) // 64)
            if layout == "hybrid":
                want((d, Options(o.keys, o.unroll, 1), 1), "lanes", L)
                want((d, Options(o.keys, o.unroll, o.interleave), o.interleave), "scalar")
            elif o.interleave > 1:
                want((d, o, o.interleave), "lanes", L)
            want((d, o, 1), "lanes", L)

    if v.get("isa") == "auto":
        path(v.options, "lanes", None)
        for s in subs:
            path(s.options, s.get("layout", "lanes"), s.get("isa"))
    else:
        path(v.options, v.get("layout", "lanes"), v.get("isa"))
    return shapes


def needs(v: Variant, subs=()) -> list:
    """The (direction, options, blocks) programs the functions of a variant print: the describe
    pass makes exactly these (``subs``: the dispatcher's paths)."""
    return list(lowerings(v, subs))


class CSimd(Target):
    name = "c-simd"
    summary = "SIMD C (x86 intrinsics, SSE2 to AVX-512; AArch64 NEON; --isa auto: run-time dispatcher)"
    recipe = Recipe(checker="simde", language="c")
    schema = (
        Option("isa", "sse2 | avx | avx2 | avx512 | neon | auto (run-time dispatcher)", ISA_NAMES + ("auto",)),
        Option("layout", "lanes | hybrid | packed (with --isa)", LAYOUTS),
        ANNOTATE_OPTION,
        PRIMITIVE_OPTION,
        WIPE_OPTION,
    )

    def default_options(self, spec):
        return Options()

    def default_options_for(self, spec, values):
        return Options("fly", "full", 1) if values.get("primitive") == "skein" else self.default_options(spec)

    def checker(self, v):
        return "skein-simd" if is_skein(v) else self.recipe.checker

    def extra(self, spec, o, values):
        ann = {k: v for k, v in without_default_annotate(values).items() if k in ("annotate", "wipe")}
        if values.get("primitive") == "skein":
            ann["primitive"] = "skein"
        isa = values.get("isa")
        if isa is None:
            raise GenError("--layout needs --isa (sse2, avx, avx2, avx512, neon or auto)")
        if isa == "auto":
            if "layout" in values:
                raise GenError("--isa auto (the dispatcher) takes no --layout")
            return {"isa": "auto", **ann}
        return {"isa": isa, "layout": values.get("layout", "lanes"), **ann}

    def validate(self, v):
        if is_skein(v):
            if v.get("isa") not in SKEIN_ISAS + ("auto",):
                raise GenError(f"--primitive skein takes --isa {' | '.join(SKEIN_ISAS)} | auto, not {v.get('isa')}")
            if v.get("layout", "lanes") != "lanes" or v.options != Options("fly", "full", 1):
                raise GenError("--primitive skein with --isa takes --layout lanes --keys fly --unroll full "
                               "--interleave 1")
            return
        # options only (cheap: no description, no printing): whether layout packed finds a lane
        # shuffle for every step shows when the variant is rendered (one clear error, before
        # anything is written)
        isa, layout = v.get("isa"), v.get("layout", "lanes")
        if isa == "auto":
            return
        if isa not in ISAS:
            raise GenError(f"unknown isa {isa!r} (choose from {', '.join(ISAS)})")
        if layout not in LAYOUTS:
            raise GenError(f"unknown layout {layout!r} (choose from {', '.join(LAYOUTS)})")
        if layout == "hybrid" and v.options.unroll != "full":
            raise GenError("layout hybrid interleaves straight-line code: it needs --unroll full")
        if layout == "packed" and (v.options.keys != "fly" or v.options.unroll != "full"):
            raise GenError("layout packed needs --keys fly --unroll full (one block, subkeys on the fly)")

    def skein_isas(self, v):
        if not is_skein(v):
            return ()
        return SKEIN_ISAS if v.get("isa") == "auto" else (v.get("isa"),)

    def skein(self, spec, isa):
        return self.variant(spec, Options("fly", "full", 1), isa=isa, primitive="skein")

    # ---------------------------------------------------------------- catalogue

    def simd(self, spec, isa, layout="lanes", options=Options()):
        return self.variant(spec, options, isa=isa, layout=None if isa == "auto" else layout)

    def dispatcher(self, spec):
        return self.simd(spec, "auto", options=RECOMMENDED_C[spec.bits])

    def recommended(self, spec):
        """The recommended standalone SIMD variants (the dispatcher's paths) and the dispatcher."""
        paths = RECOMMENDED[spec.bits] + RECOMMENDED_NEON[spec.bits]
        return [self.simd(spec, i, lay, o) for i, lay, o in paths] + [self.dispatcher(spec)]

    def paths(self, spec):
        """The dispatcher's paths: the x86 ones (chosen by cpuid) and the NEON one (AArch64)."""
        return [v for v in self.recommended(spec) if v.get("isa") != "auto"]

    def all(self, spec):
        """The full matrix: every ISA x layout (packed: one block over the lanes), two vector
        groups per pass, hybrid with 1 and 2 scalar blocks where the vectors are wide enough to
        gain, a table/loop variant, the dispatcher."""
        out = []
        for isa in ISA_NAMES:
            out.append(self.simd(spec, isa, "lanes"))
            out.append(self.simd(spec, isa, "hybrid", Options("fly", "full", 1)))
            out.append(self.simd(spec, isa, "packed", Options("fly", "full", 1)))
        for isa in ("avx2", "avx512"):
            out.append(self.simd(spec, isa, "lanes", Options("fly", "full", 2)))
        out.append(self.simd(spec, "avx2", "hybrid", Options("fly", "full", 2)))
        out.append(self.simd(spec, "avx512", "lanes", Options("table", "loop", 1)))
        out.append(self.simd(spec, "sse2", "lanes", Options("fly", "loop", 1)))
        for il in (2, 3):         # NEON lane groups per pass (32 registers: docs/aarch64.md)
            out.append(self.simd(spec, "neon", "lanes", Options("fly", "full", il)))
        for v in self.recommended(spec):
            if v not in out:
                out.append(v)
        return out

    def variants(self, which, specs):
        """Threefish variants, then Skein (recommended: the dispatcher; all: each lanes ISA too)."""
        pick = self.recommended if which == "recommended" else self.all
        sk = ("auto",) if which == "recommended" else SKEIN_ISAS + ("auto",)
        return [v for s in specs for v in pick(s)] + [self.skein(s, isa) for s in specs for isa in sk]

    def list_lines(self):
        lines = ["  c --isa ISA --layout LAYOUT   SIMD C (x86 intrinsics; target attributes, no -m flags needed;",
                 "                                -DTHREEFISH_GEN_SIMDE builds against SIMDe, emulated)"]
        for isa in ISAS.values():
            for layout in LAYOUTS:
                if layout == "packed":
                    shapes = ", ".join(f"{nw * 64 // packed_width(isa, nw)}x{packed_width(isa, nw)} ({64 * nw})"
                                       for nw in (4, 8, 16))
                    what = f"encrypt/decrypt: one block in {shapes}; *_blocks: lanes"
                else:
                    what = (f"{isa.bits // 64} blocks word-sliced per {isa.bits}-bit vector" if layout == "lanes"
                            else f"{isa.bits // 64} vector blocks + --interleave scalar blocks per pass")
                lines.append(f"    --isa {isa.name:<6} --layout {layout:<6}  {what}; needs {'+'.join(isa.features)}")
        lines.append("                                (packed needs --keys fly --unroll full)")
        lines.append("    --isa auto                  dispatcher: scalar + recommended SIMD paths, chosen by cpuid/xgetbv;")
        lines.append("                                on AArch64 the NEON path (no check); elsewhere scalar C;")
        lines.append(f"                                ${ENV_VAR}=scalar|sse2|avx|avx2|avx512 (|neon) caps the path")
        return lines

    def recommended_lines(self):
        lines = []
        for bits, paths in RECOMMENDED.items():
            for isa, layout, o in paths + RECOMMENDED_NEON[bits]:
                lines.append(f"  c {bits:>4}: --isa {isa} --layout {layout} {o.describe()}")
            lines.append(f"  c {bits:>4}: --isa auto (dispatcher over the paths above and scalar)")
        return lines

    # ---------------------------------------------------------------- compile

    def rule_paths(self, spec) -> list:
        """The dispatcher's CPU table: (Rule, path variant) from the bulk winners of this target
        in the shipped profiles (gen/cpu_rules.py), x86 ISAs only (cpuid picks the row)."""
        out = []
        for r in cpu_rules.rules(self.name, spec.bits):
            isa, layout = dict(r.values).get("isa"), dict(r.values).get("layout", "lanes")
            # the table picks *_blocks, and packed's *_blocks is the lanes code of the same options
            # (a packed winner, e.g. Sapphire/Emerald Rapids' Threefish-1024, adds no second copy)
            layout = "lanes" if layout == "packed" else layout
            if isa in ISAS and family_name(ISAS[isa]) == "x86":
                out.append((r, self.simd(spec, isa, layout, compact(isa, layout, r.options))))
        return out

    def single_rule_paths(self, spec) -> list:
        """The dispatcher's single-block CPU table: (Rule, packed variant) from the chained winners
        of this target in the shipped profiles whose layout is packed, x86 ISAs only
        (gen/cpu_rules.py; a lanes or hybrid winner's single block is the scalar code)."""
        out = []
        for r in cpu_rules.rules(self.name, spec.bits, "chained"):
            isa, layout = dict(r.values).get("isa"), dict(r.values).get("layout", "lanes")
            if layout == "packed" and isa in ISAS and family_name(ISAS[isa]) == "x86":
                out.append((r, self.simd(spec, isa, "packed", Options("fly", "full", 1))))
        return out

    def subs(self, v) -> list:
        """Every path the dispatcher compiles (the default ones, then the CPU table's others, then
        the single-block table's packed paths); () for one path."""
        if v.get("isa") != "auto":
            return []
        paths = self.paths(v.spec)
        paths = paths + list(dict.fromkeys(rv for _, rv in self.rule_paths(v.spec) if rv not in paths))
        return paths + list(dict.fromkeys(rv for _, rv in self.single_rule_paths(v.spec) if rv not in paths))

    def describe(self, v) -> Pass:
        # vector kernels: Threefish-1024's loop passes of two cycles (gen/threefish.py loop_cycles)
        return describe_pass(lambda v: needs(v, self.subs(v)),
                             cycles=lambda v: loop_cycles(v.spec, vector=v.get("layout", "lanes") != "scalar"))

    def layout_pass(self, v, progs) -> dict:
        """The layout pass: {((direction, options, blocks), layout, lanes): VProgram}, every
        program in every layout its functions read (:func:`lowerings`), the only input of the
        print pass."""
        return {(shape, layout, lanes): lay_out(progs[shape], layout, lanes)
                for shape, want in lowerings(v, self.subs(v)).items() for layout, lanes in want}

    def laid(self, v) -> dict:
        """What the print pass reads: the describe and layout passes, run (bench's op counts)."""
        return run_passes(self.passes(v)[:2], v)

    def render_skein(self, v, prog):
        ctx = skein_context(v, prog)
        lanes_prog = skein.ubi_lanes_program(v.spec)
        kernels = [skein_lanes_kernel(v.prefix, skein_lanes_layout(lanes_prog, ISAS[isa].bits // 64), isa)
                   for isa in self.skein_isas(v)]
        families = list(dict.fromkeys(k["family"] for k in kernels))
        x86 = [i for i, k in enumerate(kernels, 1) if k["family"] == "x86"]
        ctx["simd"] = dict(kernels=kernels, max_lanes=max(k["lanes"] for k in kernels), families=families,
                           lanes_guard=" || ".join(f"defined({FAMILY_MACROS[f]})" for f in families),
                           simde_level=x86[-1] if x86 else 0,
                           helpers_guard=FAMILY_MACROS["neon"] if "neon" in families else None)
        ctx["guards"] = GUARDS
        ctx["env_var"] = ENV_VAR
        ctx["notes"] = ctx["notes"] + [
            "hash_many: " + ", ".join(f"{k['lanes']} messages per {k['isa'].name} pass" for k in kernels)
            + " (lanes layout; chaining values and tweaks word-sliced from block to block, message blocks "
            "loaded where they lie and transposed in registers)"]
        return render_skein(v, ctx)

    def passes(self, v):
        if is_skein(v):
            return [ubi_pass(), Pass("lanes kernels (gen/layouts/lanes.py) and print SIMD C Skein "
                                     "(gen/printers/c_simd/)", "UBI Program", "Skein .c + .h (templates/c/skein.*.j2)",
                                     self.render_skein)]
        if v.get("isa") == "auto":
            what, printed = "layout scalar + each path's layouts (gen/layouts/)", "SIMD C dispatcher"
        else:
            layout = v.get("layout")
            what = f"layout scalar + {'lanes + packed' if layout == 'packed' else layout} (gen/layouts/)"
            printed = f"SIMD C ({v.get('isa')})"
        return [self.describe(v),
                Pass(what, "Program", "VPrograms (W = 1 and vector)", self.layout_pass),
                Pass(f"print {printed} (gen/printers/c_simd/)", "VPrograms", ".c + .h (templates/c_simd/)",
                     self.render_simd)]

    def render_simd(self, v, laid):
        auto = v.get("isa") == "auto"
        return render_c_simd(v, laid, self.paths(v.spec) if auto else [], self.rule_paths(v.spec) if auto else [],
                             self.single_rule_paths(v.spec) if auto else [])

    # ---------------------------------------------------------------- recipe

    def features(self, v):
        isa = v.get("isa")
        if is_skein(v):
            return set()          # hash_many checks the CPU itself
        return set() if isa == "auto" else set(ISAS[isa].features)


TARGET = CSimd()
