"""Instruction tables, one module per instruction set: how each layout IR operation
(gen/layouts/ir.py) and each lane shuffle is spelled, and what it means as lane terms.

=============  =====================================================================
module         holds
=============  =====================================================================
``x86.py``     SSE2, AVX, AVX2, AVX-512 (C intrinsics ``_mm*_``): ISA records, vector
               widths, shuffle candidates, rotations, ``SEMANTICS`` of every intrinsic;
               the NASM forms of the assembly targets' machine ops (GPR, XMM, YMM, ZMM)
               and the packed XMM lane moves with their semantics
``neon.py``    AArch64 Advanced SIMD (C intrinsics ``v*q_u64``): the same for NEON
``dotnet.py``  .NET Vector128/256/512 (C#): the x86 intrinsic methods (Sse2, Avx2, Avx512F),
               each mapped to the x86.py instruction it compiles to; the portable calls
               (``API``: Create, LoadUnsafe/StoreUnsafe, GetLower/GetUpper, the As* views,
               the word rotations, byte swap, unaligned read and write) with their
               semantics; the per-kind rotations and the shuffles of the C# kernels
``common.py``  the ISA record, the lane reader semantics are written against, the
               search from a wanted lane pattern to the cheapest instruction(s)
=============  =====================================================================

The printers (gen/printers/, gen/asm/lower_packed.py) ask these modules for spellings; the prove
readers (gen/prove/) turn a parsed call or instruction back into lane terms with the same
modules' ``SEMANTICS``.  A new ISA is one
module here.
"""
from __future__ import annotations

from . import common, neon, x86
from .common import Isa

ISAS = {**x86.ISAS, **neon.ISAS}


def family_of(isa: Isa):
    """The instruction family (module class: Width, shuffle candidates, rotations) of an ISA
    record; x86 records leave it None."""
    return isa.family or x86.X86


def shuffle(isa: Isa, width, pattern: tuple) -> str:
    """C expression building a vector whose lane k is pattern[k] = (vector name, lane) (or None)
    with the cheapest instruction(s) of ``isa`` (gen/isa/common.py)."""
    return common.shuffle(family_of(isa), isa, width, pattern)
