"""The NASM targets' shared descriptor: options, variants, passes and recipe of ``nasm-x64``
and ``nasm-x86`` (each declared in its own module with its own data).

Compile: description -> lowering to machine ops -> liveness -> register allocation ->
allocation check -> printer (gen/printers/nasm.py, templates/nasm/)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import asm
from ..errors import GenError
from ..printers import nasm as printer
from ..threefish import Options
from .base import ANNOTATE_OPTION, DIRECTIONS, WIPE_OPTION, Option, Pass, Target, describe_pass

ALWAYS = ("abi", "strategy")     # target options kept in Variant.extra (and names) even at their default


def schema(abis, rotates, isas, layouts) -> tuple:
    return (
        Option("abi", "calling convention", abis, abis[0]),
        Option("strategy", "register allocator: named | linear-scan | belady", asm.STRATEGIES, "belady"),
        Option("registers", "register budget of the data class", None, None, int),
        Option("pin", "values kept in one register (groups k,t,x,p or value names)"),
        Option("rotate", "rotate instruction", rotates, rotates[0]),
        Option("schedule", "description (statement order) | interleave (the MIXes of a round)", asm.SCHEDULES,
               asm.SCHEDULES[0]),
        Option("isa", "where the words live", isas, isas[0]),
        Option("layout", "scalar | packed (words in XMM)", layouts, layouts[0]),
        ANNOTATE_OPTION,
        WIPE_OPTION,
    )


@dataclass(frozen=True)
class NasmOptions:
    """A nasm variant's target options with their defaults: what the passes and the printer read
    (checked once, when the variant was made: :meth:`Nasm.variant`)."""

    target: str
    machine: str
    abi: str
    strategy: str
    registers: int | None
    pin: str
    rotate: str
    schedule: str
    words: str
    layout: str
    annotate: str
    wipe: bool = True

    @property
    def lanes(self) -> bool:
        return self.words in ("avx2", "avx512")


class Nasm(Target):
    unroll = ("full",)
    interleave = (1,)
    machine: str = ""             # gen/asm/machine.py machine the code runs on
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
        """Defaults dropped from Variant.extra, except abi and strategy (every name shows them)."""
        out = {}
        for opt in self.schema:
            value = values.get(opt.name)
            if opt.name in ALWAYS:
                out[opt.name] = value if value is not None else opt.default
            elif value is not None and value != "" and value != opt.default:
                out[opt.name] = value
        return out

    def validate(self, v):
        """Combinations of options (each value was checked against the schema already)."""
        no = self.options(v)
        if no.words != "gpr" and no.rotate == "rorx":
            raise GenError("--rotate rorx needs the words in GPRs (--isa gpr)")
        if no.layout == "packed":
            if no.words != "sse2":
                raise GenError(f"--layout packed needs the words in XMM: nasm-x86, or nasm-x64 --isa sse2"
                               f" (not --isa {no.words})")
            if no.schedule != "description":
                raise GenError("--schedule interleave does not apply to --layout packed (a round is one vector step)")
            if v.options.keys != "fly":
                raise GenError("--layout packed needs --keys fly (the subkey pairs are built from the key words)")

    def options(self, v) -> NasmOptions:
        """The variant's target options, defaults filled in."""
        def get(name):
            value = v.get(name)
            return self.option(name).default if value is None else value
        regs = v.get("registers")
        return NasmOptions(self.name, self.machine, get("abi"), get("strategy"),
                           int(regs) if regs is not None else None, str(v.get("pin", "") or ""),
                           get("rotate"), get("schedule"), get("isa"), get("layout"), get("annotate"),
                           get("wipe"))

    # ---------------------------------------------------------------- passes

    def functions(self, v) -> list[tuple[str, str]]:
        """(direction, part) of every function the file holds: a lanes variant has the lanes
        blocks function and the scalar GPR function (left-over blocks, single blocks)."""
        parts = ("lanes", "scalar") if self.options(v).lanes else ("scalar",)
        return [(d, part) for d in DIRECTIONS for part in parts]

    def _needs(self, v):
        return [(d, v.options, 1) for d in DIRECTIONS]

    def _lower(self, v, programs):
        no = self.options(v)
        out = {}
        for d, part in self.functions(v):
            prog = programs.get((d, v.options, 1))
            if prog is None:        # a one-direction compile (allocate, lowered)
                continue
            if no.lanes and part == "scalar":
                isa = asm.isa_for(no.machine, no.abi, "rol", "gpr")
                out[(d, part)] = (isa, asm.lower(prog, isa), "belady")
                continue
            isa = asm.isa_for(no.machine, no.abi, no.rotate, no.words, no.layout)
            if no.layout == "packed":
                ops = asm.lower_packed(prog, isa)
            elif isa.lanes > 1:
                ops = asm.lower_lanes(prog, isa, no.schedule)
            else:
                ops = asm.lower(prog, isa, no.schedule)
            out[(d, part)] = (isa, ops, no.strategy)
        return out

    def _liveness(self, v, lowered):
        return {f: (isa, ops, strategy, asm.intervals(ops)) for f, (isa, ops, strategy) in lowered.items()}

    def _assign(self, v, live, strategy=None):
        no = self.options(v)
        out = {}
        for f, (isa, ops, default, intervals) in live.items():
            # the scalar tail of a lanes variant always uses belady on the full register set
            tail = no.lanes and f[1] == "scalar"
            strat = default if tail else (strategy or default)
            alloc = (asm.assign(ops, isa, strat, live=intervals) if tail
                     else asm.assign(ops, isa, strat, no.registers, no.pin, live=intervals))
            out[f] = (isa, ops, alloc)
        return out

    def _check(self, v, assigned):
        for isa, ops, alloc in assigned.values():
            asm.check_allocation(ops, isa, alloc)
        return {f: (isa, alloc) for f, (isa, ops, alloc) in assigned.items()}

    def passes(self, v):
        no = self.options(v)
        lower = ("lower packed (gen/asm/lower_packed.py)" if no.layout == "packed"
                 else "lower lanes (gen/asm/lowering.py)" if no.lanes
                 else "lower to machine ops (gen/asm/lowering.py)")
        return [describe_pass(self._needs),
                Pass(lower, "Program", "MOp list (gen/asm/ir.py)", self._lower),
                Pass("liveness (gen/asm/liveness.py)", "MOp list", "MOp list + intervals", self._liveness),
                Pass(f"allocate registers ({no.strategy}; gen/asm/alloc/)", "MOp list + intervals",
                     "AOp list + frame", self._assign),
                Pass("check the allocation (gen/asm/check.py)", "MOp list + AOp list", "checked AOp list",
                     self._check),
                Pass("print NASM (gen/printers/nasm.py)", "checked AOp list", ".asm + .h (templates/nasm/)",
                     lambda v, allocs: printer.render(v, self.options(v), allocs, cpu=self.features(v)))]

    def lowered(self, v, direction: str = "encrypt"):
        """(isa, MOps) of one direction's main function, through the same passes as render."""
        ir = describe_pass(lambda v: [(direction, v.options, 1)]).run(v, None)
        part = "lanes" if self.options(v).lanes else "scalar"
        isa, ops, _ = self._lower(v, ir)[(direction, part)]
        return isa, ops

    def allocate(self, v, direction: str, strategy: str | None = None, tail: bool = False):
        """One function's allocation, checked: (isa, allocation).  The allocation report and the
        explorer ask for one direction (and strategy) at a time; the same passes as render."""
        part = "scalar" if tail or not self.options(v).lanes else "lanes"
        ir = describe_pass(lambda v: [(direction, v.options, 1)]).run(v, None)
        lowered = {f: x for f, x in self._lower(v, ir).items() if f == (direction, part)}
        return self._check(v, self._assign(v, self._liveness(v, lowered), strategy))[(direction, part)]

    def variants(self, which, specs):
        out = []
        for s in specs:
            for extra in (self.recommended_extra if which == "recommended" else self.all_extra):
                v = self.variant(s, Options("fly", "full", 1), **dict(extra))
                if which != "recommended":
                    try:
                        self.allocate(v, "encrypt")
                    except GenError:     # named fails by design where the words do not fit
                        continue
                out.append(v)
        return out

    def recommended_lines(self):
        return [f"  {self.name} (every size): " + " ".join(f"--{k} {v}" for k, v in extra)
                for extra in self.recommended_extra]

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

    def tune_candidates(self, spec):
        """System V, 64-bit code only (bench links one 64-bit program): words in GPRs or vector
        lanes x allocation strategy x key schedule (x interleave where the target has it); the
        recommended (belady, keys fly) first, strategy named last (it fails where words do not fit)."""
        if self.recipe.word_bits != 64:
            return []
        isas = [i for i in ("gpr", "avx2", "avx512") if i in self.option("isa").choices]
        out = []
        for strategy in ("belady", "linear-scan", "named"):
            for keys in self.keys:
                for il in self.interleave:
                    for isa in isas:
                        try:
                            v = self.variant(spec, Options(keys, "full", il), abi="sysv", isa=isa, strategy=strategy)
                        except GenError:
                            continue
                        out.append((v, "nasm"))
        return out

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
