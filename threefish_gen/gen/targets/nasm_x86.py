"""Target ``nasm-x86``: NASM 32-bit cdecl, 64-bit words in SSE2 XMM registers."""
from __future__ import annotations

from .base import Recipe
from .nasm import Nasm, schema
from .nasm_x64 import TARGET as X64


class NasmX86(Nasm):
    name = "nasm-x86"
    summary = "NASM 32-bit cdecl, words in SSE2 XMM registers"
    machine = "x86"
    recipe = Recipe(checker="nasm", language="nasm", word_bits=32)
    schema = schema(("cdecl",), ("shift",), ("sse2",), ("scalar", "packed"))
    formats = {"cdecl": "elf32"}
    interleave_why = ("64-bit words live in the 8 XMM registers: one block of Threefish-256 with its key and "
                      "tweak words already spills, a second block would only add spills")
    recommended_extra = [(("abi", "cdecl"), ("strategy", "belady"))]
    all_extra = ([(("abi", "cdecl"), ("strategy", s)) for s in ("belady", "linear-scan")]
                 + [(("abi", "cdecl"), ("layout", "packed"), ("strategy", s))
                    for s in ("belady", "linear-scan", "named")])

    def bench_variants(self, spec, quick, asked):
        """Timed as the same instruction stream in 64-bit mode (nasm-x64 --isa sse2): elf32
        objects cannot join the 64-bit bench program (bench's note says why)."""
        if self.name not in asked:
            return []
        return [(v, "nasm") for v in X64.sse2_stream(spec)]

    def bench_note(self, asked):
        if self.name in asked:
            return (f"SKIPPED {self.name} (all sizes): elf32 objects cannot be linked into the 64-bit bench "
                    f"program; the '{X64.name} sse2' rows time the same instruction stream (words in XMM "
                    "registers) natively in 64-bit mode (docs/nasm.md)")
        return None

    def list_lines(self):
        return ["  nasm-x86  NASM 32-bit cdecl, words in SSE2 XMM registers (one per register); needs SSE2;",
                "            --layout packed: one block in XMM pairs (A = even, B = odd words; also nasm-x64 --isa sse2)",
                "            --strategy, --registers (XMM budget 1..8), --pin as for nasm-x64"]


TARGET = NasmX86()
