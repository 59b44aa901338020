"""The NASM targets' shared descriptor: options, variants, passes and recipe of ``nasm-x64``
and ``nasm-x86`` (each declared in its own module with its own data).

Compile: description -> lowering to machine ops -> liveness -> register allocation ->
allocation check -> printer (gen/printers/nasm.py, templates/nasm/)."""
from __future__ import annotations

from ..errors import GenError
from ..printers import nasm as printer
from ..threefish import Options
from .base import ANNOTATE_OPTION, DESCRIBE, Option, Pass, Target

STRATEGIES = ("named", "linear-scan", "belady")
SCHEDULES = ("description", "interleave")


def schema(abis, rotates, isas, layouts) -> tuple:
    return (
        Option("abi", "calling convention", abis, abis[0]),
        Option("strategy", "register allocator: named | linear-scan | belady", STRATEGIES, "belady"),
        Option("registers", "register budget of the data class", None, None, int),
        Option("pin", "values kept in one register (groups k,t,x,p or value names)"),
        Option("rotate", "rotate instruction", rotates, rotates[0]),
        Option("schedule", "description (statement order) | interleave (the MIXes of a round)", SCHEDULES,
               SCHEDULES[0]),
        Option("isa", "where the words live", isas, isas[0]),
        Option("layout", "scalar | packed (words in XMM)", layouts, layouts[0]),
        ANNOTATE_OPTION,
    )


class Nasm(Target):
    unroll = ("full",)
    interleave = (1,)
    formats: dict = {}            # abi -> nasm -f format
    recommended_extra: list = []  # target options (sorted pairs) rendered for every size/version
    all_extra: list = []

    def default_options(self, spec):
        return Options("fly", "full", 1)

    def check_options(self, o):
        if o.unroll != "full":
            raise GenError(f"{self.name} needs --unroll full (the loop form indexes memory by the counter)")
        if o.interleave != 1:
            raise GenError(f"{self.name} supports --interleave 1 only")
        return super().check_options(o)

    def extra(self, spec, o, values):
        return dict(printer.variant_extra(self.name, **values))

    def validate(self, v):
        printer.NasmOptions.of(v)

    def variants(self, which, specs):
        out = []
        for s in specs:
            for extra in (self.recommended_extra if which == "recommended" else self.all_extra):
                v = self.variant(s, Options("fly", "full", 1), **dict(extra))
                if which != "recommended":
                    try:
                        printer.allocate(v, "encrypt")
                    except GenError:     # named fails by design where the words do not fit
                        continue
                out.append(v)
        return out

    def recommended_lines(self):
        return [f"  {self.name} (every size): " + " ".join(f"--{k} {v}" for k, v in extra)
                for extra in self.recommended_extra]

    def passes(self, v):
        lower = ("lower packed (gen/asm/lower_packed.py)" if v.get("layout") == "packed"
                 else "lower to machine ops (gen/asm/lowering.py)")
        return [DESCRIBE, Pass(lower, "Program", "MOp list (gen/asm/ir.py)"),
                Pass("liveness (gen/asm/liveness.py)", "MOp list", "intervals, next uses"),
                Pass(f"allocate registers ({v.get('strategy', 'belady')}; gen/asm/alloc/)", "MOp list",
                     "AOp list + frame"),
                Pass("check the allocation (gen/asm/check.py)", "MOp list + AOp list", "accepted, or an error"),
                Pass("print NASM (gen/printers/nasm.py)", "AOp list", ".asm + .h (templates/nasm/)")]

    def render(self, v):
        return printer.render(v, cpu=self.features(v))

    def nasm_format(self, v) -> str:
        return self.formats[v.get("abi", self.schema[0].default)]

    def object_commands(self, v, src_dir, obj, cc="gcc"):
        return [["nasm", "-f", self.nasm_format(v), "-o", str(obj), f"{src_dir}/{v.stem}.asm"]]

    def features(self, v):
        feats = set()
        if self.recipe.word_bits == 32:
            feats.add("sse2")
        if v.get("rotate") == "rorx":
            feats.add("bmi2")
        isa = v.get("isa")
        if isa in ("sse2", "avx2"):
            feats.add(isa)
        if isa == "avx512":
            feats.add("avx512f")
        return feats

    def bench_variants(self, spec, quick, asked):
        """System V variants only (Win64 code cannot be called from the System V bench program:
        see bench_note)."""
        if self.name not in asked:
            return []
        return [(v, "nasm") for v in self.variants("recommended" if quick else "all", [spec])
                if self.nasm_format(v) != "win64"]

    def bench_name(self, v, cc):
        d = dict(v.extra)
        d.pop("abi", None)
        isa = d.pop("isa", "gpr")
        parts = [self.name, isa] + [str(val) for _, val in sorted(d.items())]
        if isa in ("avx2", "avx512"):
            parts.insert(2, "lanes")
        name = " ".join(parts)
        if isa == "sse2":
            name += " (nasm-x86 stream)"
        return name
