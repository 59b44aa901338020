"""The NASM targets' shared descriptor: options, variants, passes and recipe of ``nasm-x64``
and ``nasm-x86`` (each declared in its own module with its own data).

Compile: description -> lowering to machine ops -> liveness -> register allocation ->
allocation check -> printer (gen/printers/nasm.py, templates/nasm/)."""
from __future__ import annotations

from dataclasses import dataclass

from .. import asm, skein
from ..asm.abi import ABIS
from ..errors import GenError
from ..printers import nasm as printer
from ..spec import Spec
from ..threefish import Options, loop_cycles
from .base import ANNOTATE_OPTION, DIRECTIONS, WIPE_OPTION, Option, Pass, Target, describe_pass, is_skein
from .c import render_skein, skein_context

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
    interleave: int = 1           # blocks per pass of the GPR *_blocks loop

    @property
    def lanes(self) -> bool:
        return self.words in ("avx2", "avx512")

    @property
    def split(self) -> bool:
        """*_blocks is a dispatch: groups of blocks (lanes, or interleaved GPR blocks) in one
        function, the n mod group blocks left (and single blocks) in the one-block function."""
        return self.lanes or self.interleave > 1


# --interleave N: N independent blocks per pass of the GPR loop (the dispatch splits n with a
# shift, so N is a power of two); nasm-x86 keeps --interleave 1 (see Nasm.interleave_why)
INTERLEAVE = (1, 2, 4)


class Nasm(Target):
    unroll = ("full", "loop")
    interleave = (1,)
    interleave_why = ""           # why a target keeps --interleave 1 (its error line)
    machine: str = ""             # gen/asm/machine.py machine the code runs on
    recommended_extra: list = []  # target options (sorted pairs) rendered for every size/version
    all_extra: list = []
    recommended_interleave: dict = {}   # size -> --interleave of the recommended GPR variants
    recommended_unroll: dict = {}       # size -> --unroll of the recommended Threefish scalar-layout variants (default full)
    recommended_isa_unroll: dict = {}   # --isa -> --unroll of its recommended Threefish variants, every size (lanes)
    all_interleave: list = []     # (interleave, target options) added to verify --set all, every size
    all_loop: list = []           # (interleave, target options) of --unroll loop in verify --set all, every size
    # --set all leaves out what the allocator cannot fit by design (strategy named keeps every value
    # in one register for its whole life): {target options that all apply: block sizes}; data, so
    # that a set is enumerated without running the allocator (tests/test_nasm.py checks it against
    # the allocator); a render of such a variant fails with one line
    unallocatable: dict = {}
    # Skein (--primitive skein): the UBI blocks loop in assembly under the C driver
    # (templates/c/skein.*.j2); the ABIs the sets render it in, the --isa it takes (where its
    # words live) and those words in the file's notes
    skein_abis: tuple = ()
    skein_isa: str = ""
    skein_words: str = ""

    def default_options(self, spec):
        return Options("fly", "full", 1)

    def default_options_for(self, spec, values):
        """--interleave: the recommended one for the size where the words are in GPRs (scalar
        layout, Threefish), else 1; --unroll: the recommended one for the size (scalar layout,
        Threefish), else full."""
        return Options("fly", self.unroll_for(spec, values), self.interleave_for(spec, values))

    def unroll_for(self, spec, values) -> str:
        scalar = (values.get("layout") or "scalar") == "scalar"
        threefish = (values.get("primitive") or "threefish") == "threefish"
        if scalar and threefish and values.get("isa") in self.recommended_isa_unroll:
            return self.recommended_isa_unroll[values.get("isa")]
        return self.recommended_unroll.get(spec.bits, "full") if scalar and threefish else "full"

    def interleave_for(self, spec, values) -> int:
        gpr = (values.get("isa") or "gpr") == "gpr" and (values.get("layout") or "scalar") == "scalar"
        threefish = (values.get("primitive") or "threefish") == "threefish"
        return self.recommended_interleave.get(spec.bits, 1) if gpr and threefish else 1

    def check_options(self, o):
        o.check()
        if o.interleave not in self.interleave:
            why = self.interleave_why or ("the *_blocks dispatch splits n into groups with a shift: "
                                          "powers of two only")
            raise GenError(f"{self.name} takes --interleave {' | '.join(map(str, self.interleave))}, "
                           f"not {o.interleave} ({why})")
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
        if v.options.unroll == "loop" and (no.layout != "scalar" or v.options.keys != "fly" or is_skein(v)):
            lanes = "/".join(i for i in ("avx2", "avx512") if i in self.option("isa").choices)
            raise GenError(f"--unroll loop for {self.name} needs --layout scalar (one block's words in registers"
                           f"{', or lanes: --isa ' + lanes if lanes else ''}), --keys fly and --primitive threefish "
                           f"(its cycle loop reads the key rings by the counter)")
        if no.words != "gpr" and no.rotate != self.option("rotate").default:   # rorx, shld, mix: GPR forms
            raise GenError(f"--rotate {no.rotate} needs the words in GPRs (--isa gpr)")
        if no.layout == "packed":
            if no.words != "sse2":
                raise GenError(f"--layout packed needs the words in XMM: nasm-x86, or nasm-x64 --isa sse2"
                               f" (not --isa {no.words})")
            if no.schedule != "description":
                raise GenError("--schedule interleave does not apply to --layout packed (a round is one vector step)")
            if v.options.keys != "fly":
                raise GenError("--layout packed needs --keys fly (the subkey pairs are built from the key words)")
        if v.options.interleave > 1 and (no.words != "gpr" or no.layout != "scalar"):
            raise GenError(f"--interleave {v.options.interleave} needs --isa gpr (the lanes layouts already run "
                           f"several blocks per pass; --isa sse2 is the x86 stream), not --isa {no.words}")
        if is_skein(v):
            if no.words != self.skein_isa or no.layout != "scalar":
                raise GenError(f"--primitive skein for {self.name} takes --isa {self.skein_isa} ({self.skein_words}"
                               f"; --abi {' or '.join(self.skein_abis)})"
                               + (", --layout scalar" if no.layout != "scalar" else ""))
            if v.options.interleave != 1:
                raise GenError("--primitive skein takes --interleave 1 (UBI chains its blocks one at a time)")

    def options(self, v) -> NasmOptions:
        """The variant's target options, defaults filled in."""
        def get(name):
            value = v.get(name)
            return self.option(name).default if value is None else value
        regs = v.get("registers")
        return NasmOptions(self.name, self.machine, get("abi"), get("strategy"),
                           int(regs) if regs is not None else None, str(v.get("pin", "") or ""),
                           get("rotate"), get("schedule"), get("isa"), get("layout"), get("annotate"),
                           get("wipe"), v.options.interleave)

    # ---------------------------------------------------------------- passes

    def functions(self, v) -> list[tuple[str, str]]:
        """(direction, part) of every function the file holds: a lanes variant has the lanes
        blocks function and the scalar GPR function (left-over blocks, single blocks); Skein the
        UBI blocks loop."""
        if is_skein(v):
            return [("ubi", "scalar")]
        return [(d, part) for d in DIRECTIONS for part in self.parts(v)]

    def parts(self, v) -> tuple:
        """The functions of one direction: the group function (lanes, or ``interleave``: N GPR
        blocks per pass) before the one-block function, or the one-block function alone."""
        no = self.options(v)
        return ("lanes", "scalar") if no.lanes else ("interleave", "scalar") if no.split else ("scalar",)

    def loop_cycles(self, v) -> int:
        """8-round cycles per pass of --unroll loop: gen/threefish.py loop_cycles (3; the vector
        kernels of Threefish-1024 2), except
        for the words in XMM (nasm-x86, nasm-x64 --isa sse2), whose allocation spills more over a
        longer pass: one cycle per pass (Threefish-1024 in 64-bit mode, Zen 4: 5.8 c/B with passes
        of one, 8.3 with passes of three, 8.4 unrolled; docs/bench.md, "Compact kernels")."""
        words = self.options(v).words
        return 1 if words == "sse2" else loop_cycles(v.spec, vector=words != "gpr")

    def main_part(self, v) -> str:
        return self.parts(v)[0]

    def _needs(self, v):
        needs = [(d, v.options, n) for d in DIRECTIONS for n in sorted({1, v.options.interleave})]
        if self.options(v).lanes and v.options.unroll == "loop":
            needs += [(d, self._scalar_options(v), 1) for d in DIRECTIONS]
        return needs

    @staticmethod
    def _scalar_options(v) -> Options:
        """The options of a lanes file's scalar GPR function (single blocks, the tail): unrolled,
        also under --unroll loop, which loops the lanes kernel only (issue 30: the GPR loop
        made single blocks 6-14% slower on Zen 3, the lanes loop none)."""
        return Options(v.options.keys, "full", 1)

    def _lower(self, v, programs):
        no = self.options(v)
        out = {}
        for d, part in self.functions(v):
            prog = programs.get((d, v.options, v.options.interleave if part == "interleave" else 1))
            if prog is None:        # a one-direction compile (allocate, lowered)
                continue
            if no.lanes and part == "scalar":
                isa = asm.isa_for(no.machine, no.abi, "rol", "gpr")
                prog = programs.get((d, self._scalar_options(v), 1), prog)
                out[(d, part)] = (isa, asm.lower(prog, isa), "belady")
                continue
            # named keeps every value in one register for its whole life: subkey sums are not kept
            # for the next injection there (longer lives would not fit the words)
            isa = asm.isa_for(no.machine, no.abi, no.rotate, no.words, no.layout)
            if no.layout == "packed":
                ops = asm.lower_packed(prog, isa)
            elif isa.lanes > 1:
                ops = asm.lower_lanes(prog, isa, no.schedule)
            else:
                ops = asm.lower(prog, isa, no.schedule, share_sums=no.strategy != "named")
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
        return self.skein_passes(v) if is_skein(v) else self.threefish_passes(v)

    def threefish_passes(self, v):
        no = self.options(v)
        lower = ("lower packed (gen/asm/lower_packed.py)" if no.layout == "packed"
                 else "lower lanes (gen/asm/lowering.py)" if no.lanes
                 else "lower to machine ops (gen/asm/lowering.py)")
        return [describe_pass(self._needs, cycles=self.loop_cycles),
                Pass(lower, "Program", "MOp list (gen/asm/ir.py)", self._lower),
                Pass("liveness (gen/asm/liveness.py)", "MOp list", "MOp list + intervals", self._liveness),
                Pass(f"allocate registers ({no.strategy}; gen/asm/alloc/)", "MOp list + intervals",
                     "AOp list + frame", self._assign),
                Pass("check the allocation (gen/asm/check.py)", "MOp list + AOp list", "checked AOp list",
                     self._check),
                Pass("print NASM (gen/printers/nasm.py)", "checked AOp list", ".asm + .h (templates/nasm/)",
                     lambda v, allocs: printer.render(v, self.options(v), allocs, cpu=self.features(v)))]

    def _described(self, v, direction: str) -> dict:
        """The describe pass of render (its loop passes too) for one direction's programs."""
        return describe_pass(lambda v: [x for x in self._needs(v) if x[0] == direction],
                             cycles=self.loop_cycles).run(v, None)

    def lowered(self, v, direction: str = "encrypt", tail: bool = False):
        """(isa, MOps) of one direction's main function (``tail``: its one-block function),
        through the same passes as render."""
        part = "scalar" if tail else self.main_part(v)
        isa, ops, _ = self._lower(v, self._described(v, direction))[(direction, part)]
        return isa, ops

    def allocate(self, v, direction: str, strategy: str | None = None, tail: bool = False):
        """One function's allocation, checked: (isa, allocation).  The allocation report and the
        explorer ask for one direction (and strategy) at a time; the same passes as render."""
        part = "scalar" if tail else self.main_part(v)
        lowered = {f: x for f, x in self._lower(v, self._described(v, direction)).items() if f == (direction, part)}
        return self._check(v, self._assign(v, self._liveness(v, lowered), strategy))[(direction, part)]

    def variants(self, which, specs):
        """A set's variants, in order: its candidates less those the allocator cannot fit
        (:attr:`unallocatable`, data: no allocator runs here), then Skein in each of
        :attr:`skein_abis` (one per size in both sets)."""
        return ([v for v in self.candidates(which, specs) if not self.unallocatable_by_design(v)]
                + [self.skein(s, abi) for abi in self.skein_abis for s in specs])

    def unallocatable_by_design(self, v) -> bool:
        return any(v.spec.bits in sizes and all(v.get(k) == value for k, value in options)
                   for options, sizes in self.unallocatable.items())

    def candidates(self, which, specs) -> list:
        """The variants a set tries, in order (cheap: no allocator runs)."""
        out = []
        for s in specs:
            if which == "recommended":      # each option set's recommended --unroll and --interleave
                out += [self.variant(s, self.default_options_for(s, dict(extra)), **dict(extra))
                        for extra in self.recommended_extra]
                continue
            sets = [(1, extra) for extra in self.all_extra] + self.all_interleave
            out += [self.variant(s, Options("fly", "full", il), **dict(extra)) for il, extra in sets]
            out += [self.variant(s, Options("fly", "loop", il), **dict(extra)) for il, extra in self.all_loop]
        return out

    def recommended_lines(self):
        lines = [f"  {self.name} (every size): " + " ".join(f"--{k} {v}" for k, v in extra)
                 for extra in self.recommended_extra]
        if self.skein_abis:
            lines.append(f"  {self.name} skein (--primitive skein, every size): --abi {' and '.join(self.skein_abis)}"
                         f" --isa {self.skein_isa} --strategy belady")
        if self.recommended_unroll:
            lines.append(f"  {self.name} Threefish: " + ", ".join(
                f"{bits}: --unroll {u}" for bits, u in sorted(self.recommended_unroll.items())) + " (else full)")
        if self.recommended_isa_unroll:
            lines.append(f"  {self.name} Threefish lanes: " + ", ".join(
                f"--isa {isa}: --unroll {u}" for isa, u in sorted(self.recommended_isa_unroll.items())) + " (every size)")
        if self.recommended_interleave:
            lines.append(f"  {self.name} words in GPRs: " + ", ".join(
                f"{bits}: --interleave {il}" for bits, il in sorted(self.recommended_interleave.items())))
        return lines

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

    # ---------------------------------------------------------------- Skein (--primitive skein)

    def checker(self, v):
        return "skein-nasm" if is_skein(v) else self.recipe.checker

    def skein(self, spec: Spec, abi: str | None = None):
        abi = abi or self.skein_abis[0]
        return self.variant(spec, Options("fly", "full", 1), abi=abi, strategy="belady", primitive="skein")

    def skein_passes(self, v):
        """The Threefish passes over the UBI blocks loop instead of encrypt/decrypt, then the
        loop's .asm and the C driver."""
        ubi = Pass("describe + fuse UBI blocks loop (gen/skein.py)", "spec + options", "UBI Program",
                   lambda v, _: {("ubi", v.options, 1): skein.ubi_blocks_program(v.spec, v.options)})
        middle = self.threefish_passes(v)[1:-1]
        return [ubi, *middle, Pass("print NASM Skein + C driver (gen/printers/nasm.py, templates/c/skein.*)",
                                   "checked AOp list", ".asm + .c + .h", self.print_skein)]

    def print_skein(self, v, allocs):
        no = self.options(v)
        files = printer.skein_render(v, no, allocs)
        ctx = skein_context(v, skein.ubi_program(v.spec, v.options))
        ctx["asm_ubi"] = f"{v.prefix}ubi_asm"
        ctx["asm_stack"] = printer.skein_stack_bytes(no, allocs)
        abi = ABIS[no.abi]
        # the loop's calling convention in its C declaration where the host's default differs (Win64)
        ctx["asm_attr"] = abi.c_attribute
        ctx["notes"] = ctx["notes"] + [f"UBI blocks loop: {v.stem}.asm (nasm -f {abi.object_format}), "
                                       f"{abi.title}, {self.skein_words}"]
        files.update(render_skein(v, ctx))
        return files
