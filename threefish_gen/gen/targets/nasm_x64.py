"""Target ``nasm-x64``: NASM x86-64, words in GPRs (or xmm/ymm/zmm lanes), System V or Win64."""
from __future__ import annotations

from .base import PRIMITIVE_OPTION, Recipe
from .nasm import INTERLEAVE, Nasm, schema


class NasmX64(Nasm):
    name = "nasm-x64"
    summary = "NASM x86-64 (System V or Win64), words in GPRs or ymm/zmm lanes; register allocators"
    machine = "x86-64"
    recipe = Recipe(checker="nasm", language="nasm")
    schema = schema(("sysv", "win64"), ("rol", "rorx", "shld", "mix"), ("gpr", "sse2", "avx2", "avx512"), ("scalar", "packed")) \
        + (PRIMITIVE_OPTION,)
    interleave = INTERLEAVE
    recommended_extra = [(("abi", "sysv"), ("strategy", "belady")), (("abi", "win64"), ("strategy", "belady")),
                         (("abi", "sysv"), ("isa", "avx2"), ("strategy", "belady")),
                         (("abi", "sysv"), ("isa", "avx512"), ("strategy", "belady"))]
    # verify --set all: every strategy (named fails by design where the words do not fit: left out)
    all_extra = ([(("abi", "sysv"), ("strategy", s)) for s in ("belady", "linear-scan", "named")]
                 + [(("abi", "sysv"), ("rotate", r), ("strategy", "belady")) for r in ("rorx", "shld", "mix")]
                 + [(("abi", "sysv"), ("isa", "sse2"), ("strategy", "belady")),
                    (("abi", "sysv"), ("isa", "sse2"), ("layout", "packed"), ("strategy", "belady")),
                    (("abi", "sysv"), ("isa", "avx2"), ("strategy", "belady")),
                    (("abi", "sysv"), ("isa", "avx512"), ("strategy", "belady"))])
    # --interleave (words in GPRs): the recommended count per size (measured, docs/nasm.md: 2 blocks
    # win for 256 bits; from 512 bits on the second block's words spill and 1 is faster), and the
    # interleaved variants verify --set all adds (each size)
    recommended_interleave = {256: 2}
    # --isa avx2 lanes: the 8-round cycle loop (its GPR single-block/tail function stays unrolled),
    # measured on Zen 3 at 0.67-0.98x the unrolled kernel's bulk time, chained the same code
    # (docs/bench.md, "NASM lanes loop"); AVX-512 stays unrolled: on Zen 4 its loop was level at 256
    # bits and 3-5% slower (noisy) at 512 and 1024 (docs/bench.md, "Compact kernels")
    recommended_isa_unroll = {"avx2": "loop"}
    unallocatable = {(("strategy", "named"),): (1024,)}     # 16 words + key + tweak > 15 GPRs
    all_interleave = [(2, (("abi", "sysv"), ("strategy", "belady"))), (4, (("abi", "sysv"), ("strategy", "belady")))]
    # --unroll loop (the 8-round cycle loop): words in GPRs with every strategy, both ABIs, 2 blocks;
    # words in XMM (--isa sse2, the nasm-x86 stream)
    all_loop = [(1, (("abi", "sysv"), ("strategy", "belady"))), (1, (("abi", "win64"), ("strategy", "belady"))),
                (1, (("abi", "sysv"), ("strategy", "linear-scan"))), (1, (("abi", "sysv"), ("strategy", "named"))),
                (2, (("abi", "sysv"), ("strategy", "belady"))),
                (1, (("abi", "sysv"), ("isa", "sse2"), ("strategy", "belady"))),
                (1, (("abi", "sysv"), ("isa", "avx2"), ("strategy", "belady"))),
                (1, (("abi", "sysv"), ("isa", "avx512"), ("strategy", "belady")))]

    # Skein (--primitive skein): the UBI blocks loop with words in GPRs, in both ABIs as the
    # Threefish GPR variants (recommended_extra); the passes and printer: gen/targets/nasm.py
    skein_abis = ("sysv", "win64")
    skein_isa = "gpr"
    skein_words = "words in GPRs"

    def list_lines(self):
        return ["  nasm-x64  NASM x86-64, words in GPRs; --abi sysv|win64, --rotate rol|rorx|shld|mix (rorx: BMI2;",
                "            shld: shld r, r, n, off the shift ports on Intel Golden Cove; mix: rol and shld by turns);",
                "            --strategy named|linear-scan|belady, --registers N, --pin k,t,x,p|names; any x86-64",
                "            --isa gpr (default) | sse2 (words in XMM, as nasm-x86; SSE2) |",
                "            avx2 (lanes: 4 blocks per pass in ymm; needs AVX2; sysv) |",
                "            avx512 (lanes: 8 blocks per pass in zmm; needs AVX-512F; sysv)"]


TARGET = NasmX64()
