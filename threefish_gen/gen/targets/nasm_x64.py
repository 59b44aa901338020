"""Target ``nasm-x64``: NASM x86-64, words in GPRs (or xmm/ymm/zmm lanes), System V or Win64."""
from __future__ import annotations

from ..asm.abi import ABIS
from ..errors import GenError
from ..printers import nasm as printer
from ..spec import Spec
from ..threefish import Options
from .. import skein
from .base import PRIMITIVE_OPTION, Pass, Recipe, is_skein
from .c import render_skein, skein_context
from .nasm import INTERLEAVE, Nasm, schema


ABI_NAMES = {"sysv": "System V", "win64": "Win64"}


class NasmX64(Nasm):
    name = "nasm-x64"
    summary = "NASM x86-64 (System V or Win64), words in GPRs or ymm/zmm lanes; register allocators"
    machine = "x86-64"
    recipe = Recipe(checker="nasm", language="nasm")
    schema = schema(("sysv", "win64"), ("rol", "rorx"), ("gpr", "sse2", "avx2", "avx512"), ("scalar", "packed")) \
        + (PRIMITIVE_OPTION,)
    interleave = INTERLEAVE
    recommended_extra = [(("abi", "sysv"), ("strategy", "belady")), (("abi", "win64"), ("strategy", "belady")),
                         (("abi", "sysv"), ("isa", "avx2"), ("strategy", "belady")),
                         (("abi", "sysv"), ("isa", "avx512"), ("strategy", "belady"))]
    # verify --set all: every strategy (named fails by design where the words do not fit: left out)
    all_extra = ([(("abi", "sysv"), ("strategy", s)) for s in ("belady", "linear-scan", "named")]
                 + [(("abi", "sysv"), ("rotate", "rorx"), ("strategy", "belady")),
                    (("abi", "sysv"), ("isa", "sse2"), ("strategy", "belady")),
                    (("abi", "sysv"), ("isa", "sse2"), ("layout", "packed"), ("strategy", "belady")),
                    (("abi", "sysv"), ("isa", "avx2"), ("strategy", "belady")),
                    (("abi", "sysv"), ("isa", "avx512"), ("strategy", "belady"))])
    # --interleave (words in GPRs): the recommended count per size (measured, docs/nasm.md: 2 blocks
    # win for 256 bits; from 512 bits on the second block's words spill and 1 is faster), and the
    # interleaved variants verify --set all adds (each size)
    recommended_interleave = {256: 2}
    unallocatable = {(("strategy", "named"),): (1024,)}     # 16 words + key + tweak > 15 GPRs
    all_interleave = [(2, (("abi", "sysv"), ("strategy", "belady"))), (4, (("abi", "sysv"), ("strategy", "belady")))]

    # ---------------------------------------------------------------- Skein (--primitive skein)

    def validate(self, v):
        super().validate(v)
        if is_skein(v) and v.get("isa", "gpr") != "gpr":
            raise GenError("--primitive skein for nasm-x64 takes --isa gpr (words in GPRs; --abi sysv or win64)")
        if is_skein(v) and v.options.interleave != 1:
            raise GenError("--primitive skein takes --interleave 1 (UBI chains its blocks one at a time)")

    def checker(self, v):
        return "skein-nasm" if is_skein(v) else self.recipe.checker

    def skein(self, spec: Spec, abi: str = "sysv"):
        return self.variant(spec, Options("fly", "full", 1), abi=abi, strategy="belady", primitive="skein")

    def variants(self, which, specs):
        # Skein in both ABIs, as the Threefish GPR variants (recommended_extra)
        return super().variants(which, specs) + [self.skein(s, abi) for abi in ("sysv", "win64") for s in specs]

    def functions(self, v):
        return [("ubi", "scalar")] if is_skein(v) else super().functions(v)

    def passes(self, v):
        if not is_skein(v):
            return super().passes(v)
        # the Threefish passes, over the UBI blocks loop instead of encrypt/decrypt
        ubi = Pass("describe + fuse UBI blocks loop (gen/skein.py)", "spec + options", "UBI Program",
                   lambda v, _: {("ubi", v.options, 1): skein.ubi_blocks_program(v.spec, v.options)})
        middle = super().passes(v)[1:-1]
        return [ubi, *middle, Pass("print NASM Skein + C driver (gen/printers/nasm.py, templates/c/skein.*)",
                                   "checked AOp list", ".asm + .c + .h", self.print_skein)]

    def print_skein(self, v, allocs):
        files = printer.skein_render(v, self.options(v), allocs)
        ctx = skein_context(v, skein.ubi_program(v.spec, v.options))
        ctx["asm_ubi"] = f"{v.prefix}ubi_asm"
        ctx["asm_stack"] = printer.skein_stack_bytes(self.options(v), allocs)
        abi = ABIS[self.options(v).abi]
        # the loop's calling convention in its C declaration where the host's default differs (Win64)
        ctx["asm_attr"] = abi.c_attribute
        ctx["notes"] = ctx["notes"] + [f"UBI blocks loop: {v.stem}.asm (nasm -f {abi.object_format}), "
                                       f"{ABI_NAMES[abi.name]}, words in GPRs"]
        files.update(render_skein(v, ctx))
        return files

    def list_lines(self):
        return ["  nasm-x64  NASM x86-64, words in GPRs; --abi sysv|win64, --rotate rol|rorx (rorx: BMI2);",
                "            --strategy named|linear-scan|belady, --registers N, --pin k,t,x,p|names; any x86-64",
                "            --isa gpr (default) | sse2 (words in XMM, as nasm-x86; SSE2) |",
                "            avx2 (lanes: 4 blocks per pass in ymm; needs AVX2; sysv) |",
                "            avx512 (lanes: 8 blocks per pass in zmm, gather/scatter; needs AVX-512F; sysv)"]


TARGET = NasmX64()
