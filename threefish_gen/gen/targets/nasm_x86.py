"""Target ``nasm-x86``: NASM 32-bit cdecl, 64-bit words in SSE2 XMM registers."""
from __future__ import annotations

from .base import PRIMITIVE_OPTION, Recipe
from .nasm import Nasm, schema


class NasmX86(Nasm):
    name = "nasm-x86"
    summary = "NASM 32-bit cdecl, words in SSE2 XMM registers"
    machine = "x86"
    recipe = Recipe(checker="nasm", language="nasm", word_bits=32)
    schema = schema(("cdecl",), ("shift",), ("sse2",), ("scalar", "packed")) + (PRIMITIVE_OPTION,)
    interleave_why = ("64-bit words live in the 8 XMM registers: one block of Threefish-256 with its key and "
                      "tweak words already spills, a second block would only add spills")
    recommended_extra = [(("abi", "cdecl"), ("strategy", "belady"))]
    # the 8-round cycle loop where it ran at least as fast as the unrolled code, bulk and chained
    # (the nasm-x64 --isa sse2 rows: this target's instruction stream; docs/nasm.md, "Recommended")
    recommended_unroll = {512: "loop", 1024: "loop"}
    all_extra = ([(("abi", "cdecl"), ("strategy", s)) for s in ("belady", "linear-scan")]
                 + [(("abi", "cdecl"), ("layout", "packed"), ("strategy", s))
                    for s in ("belady", "linear-scan", "named")])
    unallocatable = {(("layout", "packed"), ("strategy", "named")): (1024,)}   # 16 words in 8 XMMs
    # --unroll loop (the 8-round cycle loop, its rings in 16-byte slots): both strategies of all_extra
    all_loop = [(1, (("abi", "cdecl"), ("strategy", s))) for s in ("belady", "linear-scan")]
    # Skein (--primitive skein): the UBI blocks loop with one word per XMM register (its spills
    # in 16-aligned stack slots, as the Threefish kernels), under the C driver; one per size
    skein_abis = ("cdecl",)
    skein_isa = "sse2"
    skein_words = "words in SSE2 XMM registers"

    def list_lines(self):
        return ["  nasm-x86  NASM 32-bit cdecl, words in SSE2 XMM registers (one per register); needs SSE2;",
                "            --layout packed: one block in XMM pairs (A = even, B = odd words; also nasm-x64 --isa sse2)",
                "            --strategy, --registers (XMM budget 1..8), --pin as for nasm-x64;",
                "            --primitive skein: the UBI blocks loop in 32-bit SSE2 assembly under the Skein C driver"]


TARGET = NasmX86()
