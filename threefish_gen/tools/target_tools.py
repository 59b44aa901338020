"""What bench, tune and the bounds need of each target: the application layer's own per-target
data, beside the generator's descriptors (gen/targets/), which know nothing of it.

One :class:`TargetTools` per target, registered in :data:`TOOLS` under its descriptor's name
(``tools_for(name)``); a target without an entry gets the defaults (bench and tune time none of
its variants, its rows have no bound).  Each entry holds its descriptor (``target``) and asks it
for variants; nothing here compares target names.
"""
from __future__ import annotations

from dataclasses import replace

from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.printers.c_simd.driver import ISAS
from threefish_gen.gen.printers.c_simd.driver import op_counts as simd_op_counts
from threefish_gen.gen.spec import Spec
from threefish_gen.gen.targets import Target, base
from threefish_gen.gen.targets import c as c_target
from threefish_gen.gen.targets import c_simd as c_simd_target
from threefish_gen.gen.targets import csharp as csharp_target
from threefish_gen.gen.targets import nasm_x64 as nasm_x64_target
from threefish_gen.gen.targets import nasm_x86 as nasm_x86_target
from threefish_gen.gen.targets import rust as rust_target
from threefish_gen.gen.threefish import KEYS, UNROLL, Options, describe
from threefish_gen.gen.variant import Variant
from threefish_gen.verify.objects import object_format

from .bench import bounds


def scalar_work(v: Variant, blocks: int, bits: int = 64, rotate_ops: int = 1):
    """Work of ``blocks`` interleaved blocks of the described encrypt Program (tools/bench/bounds.py)."""
    return bounds.program_work(describe(v.spec, replace(v.options, interleave=blocks), "encrypt", blocks),
                               bits, rotate_ops)


def transpose_shuffles(nw: int, cls: str) -> int:
    """Lane moves per pass of a NASM lanes kernel's transposes: the blocks' load and store (nw
    vectors a stage) and the tweaks' load (2 vectors a stage)."""
    from threefish_gen.gen.asm.lowering import lane_bit_moves
    from threefish_gen.gen.layouts.lanes import network_lanes
    lanes = {"ymm": 4, "zmm": 8}[cls]
    _, (load, store, tweak) = network_lanes(nw, lanes, lane_bit_moves(cls))
    return nw * (len(load) + len(store)) + 2 * len(tweak)


def scalar_chain(v: Variant, model, bits: int = 64, rotate_ops: int = 1) -> tuple[float, str]:
    """(cycles, what binds) of one single-block encrypt call of the described Program on port
    model ``model``: its dependency chain ('latency') or, where more, the ports or front end its
    operations need (tools/bench/bounds.py)."""
    prog = describe(v.spec, replace(v.options, interleave=1), "encrypt", 1)
    lat = bounds.latency_cycles(prog, model, bits > 64, rotate_ops)
    thr, what = bounds.throughput_cycles(bounds.program_work(prog, bits, rotate_ops, setup=True), model)
    return (lat, "latency") if lat >= thr else (thr, what)


class TargetTools:
    """Defaults: bench and tune time nothing of the target, no bound, no op counts."""

    def __init__(self, target: Target):
        self.target = target

    @property
    def name(self) -> str:
        return self.target.name

    def op_counts(self, v: Variant) -> dict:
        """Operations per block the layout reports (bench prints them); {} where not known."""
        return {}

    def bound_work(self, v: Variant, flags=frozenset()):
        """The operations of one pass of the variant's encrypt_blocks (tools/bench/bounds.py Work)
        on a CPU with these /proc/cpuinfo ``flags``, for the throughput bound of its bulk bench
        rows; None where the model cannot say."""
        return None

    def chain_bound(self, v: Variant, model) -> tuple[float, str] | None:
        """(cycles, what binds) of one single-block encrypt call on port model ``model``
        (tools/bench/ports.py; :func:`scalar_chain`), for the bound of its chained bench rows
        (each call's input is the previous output: latency); None where not modelled."""
        return None

    def is_dispatcher(self, v: Variant) -> bool:
        """Whether the variant picks its path at run time (bench: ``dispatcher / best variant``)."""
        return False

    def bench_variants(self, spec: Spec, quick: bool, asked: set) -> list:
        """(variant, compiler) pairs ``make bench`` times for this target when ``asked`` (the
        target names the user asked for) includes it; [] for targets bench does not link into
        its C program (recipe.interface != "c-abi")."""
        return []

    def tunable(self) -> bool:
        """Whether ``threefish-gen tune`` times this target (cheap: the CLI's choices)."""
        return False

    def tune_candidates(self, spec: Spec) -> list:
        """(variant, compiler) pairs ``threefish-gen tune`` may time for this target, the likeliest
        winners first (tune builds in this order until its budget runs out); [] for targets tune
        does not time (not :meth:`tunable`).  Variants this CPU cannot run are dropped by tune
        (``features``)."""
        return []

    def bench_note(self, asked: set) -> str | None:
        """A SKIPPED line for parts of this target that bench cannot time, or None."""
        return None

    def bench_name(self, v: Variant, cc: str) -> str:
        o = v.options
        return f"{self.name} {o.keys}/{o.unroll}/i{o.interleave} {cc}"


class CTools(TargetTools):
    def bench_variants(self, spec, quick, asked):
        """Every option set with gcc and clang; when only other targets are asked for, the
        reference row (recommended options, gcc) that every ratio is taken against."""
        t = self.target
        rec = c_target.RECOMMENDED[spec.bits]
        if self.name not in asked:
            return [(t.variant(spec, rec), "gcc")]
        sets = [rec] if quick else c_target.option_sets(spec)
        return [(t.variant(spec, o), cc) for o in sets for cc in ("gcc", "clang")]

    def bound_work(self, v, flags=frozenset()):
        return None if base.is_skein(v) else scalar_work(v, v.options.interleave)

    def chain_bound(self, v, model):
        return None if base.is_skein(v) else scalar_chain(v, model)

    def tunable(self):
        return True

    def tune_candidates(self, spec):
        """Every keys x unroll x interleave set under gcc and clang: the recommended set first,
        then bench's option sets, then the rest (higher interleave last)."""
        t = self.target
        sets = [c_target.RECOMMENDED[spec.bits]] + c_target.option_sets(spec)
        sets += [Options(k, u, i) for i in t.interleave for k in KEYS for u in UNROLL]
        return [(t.variant(spec, o), cc) for o in dict.fromkeys(sets) for cc in ("gcc", "clang")]


class CSimdTools(TargetTools):
    def op_counts(self, v):
        t = self.target
        got = dict(simd_op_counts(v, t.laid(v), t.subs(v)))
        if v.options.unroll == "loop" and got:
            got["static"] = 1     # counted over the emitted loop body, not per executed block
        return got

    def is_dispatcher(self, v):
        return v.get("isa") == "auto"

    def bound_work(self, v, flags=frozenset()):
        """The vector loop's work from the layout's counts (hybrid: plus its scalar blocks); the
        dispatcher: that of the path it picks on a CPU with ``flags`` (none: scalar C)."""
        if base.is_skein(v):
            return None
        if v.get("isa") == "auto":
            fits = [p for p in self.target.paths(v.spec) if set(ISAS[p.get("isa")].features) <= set(flags)
                    and ISAS[p.get("isa")].family is None]
            if not fits:
                return scalar_work(v, v.options.interleave)
            v = max(fits, key=lambda p: ISAS[p.get("isa")].level)
        isa = ISAS[v.get("isa")]
        if isa.family is not None:          # NEON: no port model
            return None
        counts = self.op_counts(v)
        if counts.get("static"):            # counted over a loop body, not per executed block
            return None
        hybrid = v.get("layout") == "hybrid"
        vector_blocks = counts["blocks per pass"] - (v.options.interleave if hybrid else 0)
        work = bounds.layout_work(counts, vector_blocks, isa.bits, v.spec.nw)
        return work.merge(scalar_work(v, v.options.interleave)) if hybrid else work

    def chain_bound(self, v, model):
        """Single-block calls run the scalar body of the same description (layout packed: its
        own one-block vector code, not modelled)."""
        if base.is_skein(v) or v.get("layout") == "packed":
            return None
        return scalar_chain(v, model)

    def bench_variants(self, spec, quick, asked):
        if self.name not in asked:
            return []
        return [(v, cc) for v in self.target.variants("recommended" if quick else "all", [spec])
                if not base.is_skein(v) for cc in (("gcc",) if quick else ("gcc", "clang"))]

    def tunable(self):
        return True

    def tune_candidates(self, spec):
        """Keys fly; every ISA (highest first) x layout x interleave under gcc and clang: the
        recommended paths first, then lanes i1/i2 fully unrolled and as the loop over 8-round
        cycles (the compact form: on Zen 3 it beat the unrolled AVX2 lanes at 1024), hybrid 1/2,
        packed, the wider rest."""
        shapes = [("lanes", "full", 1), ("lanes", "full", 2), ("lanes", "loop", 1), ("lanes", "loop", 2),
                  ("hybrid", "full", 1), ("hybrid", "full", 2), ("packed", "full", 1),
                  ("lanes", "full", 3), ("lanes", "full", 4), ("hybrid", "full", 3), ("hybrid", "full", 4)]
        isas = sorted((i for i in c_simd_target.ISA_NAMES if i != "neon"), key=lambda i: -ISAS[i].level)
        paths = [(i, lay, o) for i, lay, o in c_simd_target.RECOMMENDED[spec.bits]]
        paths += [(i, lay, Options("fly", u, il)) for lay, u, il in shapes for i in isas]
        return [(self.target.simd(spec, i, lay, o), cc) for i, lay, o in dict.fromkeys(paths)
                for cc in ("gcc", "clang")]

    def bench_name(self, v, cc):
        if v.get("isa") == "auto":
            return f"{self.name} auto (dispatcher) {cc}"
        o = v.options
        return f"{self.name} {v.get('isa')} {v.get('layout', 'lanes')} {o.keys}/{o.unroll}/i{o.interleave} {cc}"


class NasmTools(TargetTools):
    """Both NASM targets: System V objects are linked into bench's 64-bit program."""

    def bench_variants(self, spec, quick, asked):
        """System V variants only (Win64 code cannot be called from the System V bench program:
        see bench_note)."""
        if self.name not in asked:
            return []
        return [(v, "nasm") for v in self.target.variants("recommended" if quick else "all", [spec])
                if object_format(v) != "win64"]

    def bound_work(self, v, flags=frozenset()):
        """Words in GPRs; one block's words in XMM (isa sse2, layout scalar: a rotate is 2 shifts
        + or); lanes (avx2: 4 blocks per ymm, rotate = 2 shifts + or; avx512: 8 per zmm, vprolq),
        whose whole-vector loads and stores (nw + 2 and nw per pass, as the described words) add
        the shuffles of their transposes (gen/layouts/lanes.py network_lanes).  Packed: not
        modelled."""
        if v.get("primitive", "threefish") != "threefish" or v.get("layout", "scalar") != "scalar":
            return None
        isa = v.get("isa", "gpr")
        if isa == "gpr":
            return scalar_work(v, 1)
        if isa == "sse2":
            return scalar_work(v, 1, 128, 3)
        lanes = {"avx2": 4, "avx512": 8}.get(isa)
        if lanes is None:
            return None
        work = scalar_work(v, 1, 64 * lanes, 1 if isa == "avx512" else 3)
        work.blocks = lanes
        work.add("shuffle", transpose_shuffles(v.spec.nw, {"avx2": "ymm", "avx512": "zmm"}[isa]))
        return work

    def chain_bound(self, v, model):
        if v.get("primitive", "threefish") != "threefish" or v.get("layout", "scalar") != "scalar":
            return None
        isa = v.get("isa", "gpr")
        if isa == "gpr":
            return scalar_chain(v, model)
        return scalar_chain(v, model, 128, 3) if isa == "sse2" else None

    def tunable(self):
        """64-bit code only (bench links one 64-bit program)."""
        return self.target.recipe.word_bits == 64

    def tune_candidates(self, spec):
        """System V, 64-bit code only (:meth:`tunable`): words in GPRs or vector
        lanes x allocation strategy x key schedule (x interleave where the target has it); the
        recommended (belady, keys fly) first, strategy named last (it fails where words do not fit)."""
        t = self.target
        if not self.tunable():
            return []
        isas = [i for i in ("gpr", "avx2", "avx512") if i in t.option("isa").choices]
        out = []
        for strategy in ("belady", "linear-scan", "named"):
            for keys in t.keys:
                for il in t.interleave:
                    for isa in isas:
                        try:
                            v = t.variant(spec, Options(keys, "full", il), abi="sysv", isa=isa, strategy=strategy)
                        except GenError:
                            continue
                        out.append((v, "nasm"))
        return out

    def bench_name(self, v, cc):
        d = dict(v.extra)
        d.pop("abi", None)
        isa = d.pop("isa", "gpr")
        parts = [self.name, isa] + [str(val) for _, val in sorted(d.items())]
        if v.options.interleave > 1:
            parts.append(f"i{v.options.interleave}")
        if v.options.unroll == "loop":
            parts.append("loop")
        if isa in ("avx2", "avx512"):
            parts.insert(2, "lanes")
        name = " ".join(parts)
        if isa == "sse2":
            name += f" ({nasm_x86_target.TARGET.name} stream)"
        return name


class NasmX64Tools(NasmTools):
    def sse2_stream(self, spec) -> list:
        """The nasm-x86 instruction stream (words in XMM) in 64-bit mode: what bench times for
        nasm-x86, whose elf32 objects cannot join the 64-bit bench program."""
        return [v for v in self.target.variants("all", [spec]) if v.get("isa") == "sse2"]

    def bench_variants(self, spec, quick, asked):
        out = [(v, cc) for v, cc in super().bench_variants(spec, quick, asked) if not base.is_skein(v)]
        if quick and self.name in asked:
            out += [(v, "nasm") for v in self.sse2_stream(spec)]
        return out

    def bench_note(self, asked):
        if self.name in asked:
            return (f"SKIPPED {self.name} --abi win64: the Microsoft x64 calling convention cannot be called "
                    "from this System V harness (verify runs it through gcc's ms_abi); same rounds as sysv")
        return None


class NasmX86Tools(NasmTools):
    def bench_variants(self, spec, quick, asked):
        """Timed as the same instruction stream in 64-bit mode (nasm-x64 --isa sse2): elf32
        objects cannot join the 64-bit bench program (bench's note says why)."""
        if self.name not in asked:
            return []
        return [(v, "nasm") for v in NASM_X64.sse2_stream(spec)]

    def bench_note(self, asked):
        if self.name in asked:
            return (f"SKIPPED {self.name} (all sizes): elf32 objects cannot be linked into the 64-bit bench "
                    f"program; the '{NASM_X64.name} sse2' rows time the same instruction stream (words in XMM "
                    "registers) natively in 64-bit mode (docs/nasm.md)")
        return None


class RustTools(TargetTools):
    """The Rust crate's recommended option set per size (the scalar C reference's options), called
    through a C-ABI shim linked into bench's C program (tools/bench/rust_rows.py); compiler column
    ``cargo``.  Its bound is the scalar C one: the crate's kernel is the same statements."""

    def bench_variants(self, spec, quick, asked):
        """The crate of the recommended options without and with its SIMD paths (--isa auto: bulk
        rows take the path this CPU has, bench builds it with std); without --quick also, per x86
        ISA (AVX2, AVX-512), the one-path crate of --isa auto's options for that path and, for
        their paired ratio, the SIMD C lanes row of the same ISA and options (gcc; the dispatcher's
        paths take the same options, so these are c-simd's own rows where it times them)."""
        if self.name not in asked:
            return []
        t = self.target
        rec = rust_target.RECOMMENDED[spec.bits]
        out = [(t.variant(spec, rec), "cargo"), (t.variant(spec, rec, isa=rust_target.RECOMMENDED_ISA), "cargo")]
        if not quick:
            for isa in rust_target.SIMD_ISAS:
                o = rust_target.SIMD_OPTIONS[spec.bits][isa]
                out += [(t.variant(spec, o, isa=isa), "cargo"), (c_simd_target.TARGET.simd(spec, isa, "lanes", o), "gcc")]
        return out

    def bench_name(self, v, cc):
        isa = f" {v.get('isa')}" if v.get("isa") else ""
        o = v.options
        return f"{self.name}{isa} {o.keys}/{o.unroll}/i{o.interleave} {cc}"

    def bound_work(self, v, flags=frozenset()):
        """The scalar C bound (the same statements); none for a crate with SIMD paths (its bulk
        rows run the lanes kernel: not modelled for Rust)."""
        return None if base.is_skein(v) or v.get("isa") else scalar_work(v, v.options.interleave)

    def chain_bound(self, v, model):
        return None if base.is_skein(v) else scalar_chain(v, model)


NASM_X64 = NasmX64Tools(nasm_x64_target.TARGET)

# The registry: descriptor name -> its tools.  C# is timed by tools/bench/dotnet.py (its own .NET
# program, chosen by recipe.interface), so it keeps the defaults here.
TOOLS: dict[str, TargetTools] = {t.name: t for t in (
    CTools(c_target.TARGET), CSimdTools(c_simd_target.TARGET), NASM_X64,
    NasmX86Tools(nasm_x86_target.TARGET), TargetTools(csharp_target.TARGET), RustTools(rust_target.TARGET))}


def tools_for(name: str) -> TargetTools:
    """The tools entry of a registered target (the defaults for one without an entry)."""
    got = TOOLS.get(name)
    return got if got is not None else TargetTools(registry.get(name))


def all_tools() -> list[TargetTools]:
    """Every registered target's tools, in the registry's order."""
    return [tools_for(name) for name in registry.names()]
