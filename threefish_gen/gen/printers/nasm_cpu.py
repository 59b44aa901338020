"""``<prefix>cpu_supported`` for the NASM targets: the cpuid/xgetbv checks of the CPU features a
variant needs (its descriptor's ``features``: /proc/cpuinfo names), as data for the template.
Which cpuid bit and which XCR0 state each feature has is gen/isa/x86.py's (``CPUID``, ``XCR0``,
``IMPLIES``), the data the SIMD C detection is generated from too."""
from __future__ import annotations

from ..errors import GenError
from ..isa.x86 import CPUID, IMPLIES, XCR0


def cpu_support(features) -> dict:
    """checks: (leaf, subleaf, register, bit, flag) in order, OSXSAVE before XGETBV; xcr0: the
    mask of state the OS must enable (0: no XGETBV); max_leaf: the highest cpuid leaf used."""
    flags = set(features)
    for f in list(flags):
        flags.update(IMPLIES.get(f, ()))
    xcr0 = 0
    for f in flags:
        xcr0 |= XCR0.get(f, 0)
    if xcr0:
        flags.add("osxsave")
    unknown = sorted(flags - set(CPUID))
    if unknown:
        raise GenError(f"no cpuid check for {', '.join(unknown)}")
    checks = sorted((CPUID[f] + (f,) for f in flags), key=lambda c: (c[0], c[1], c[4] != "osxsave", c[4]))
    return dict(checks=checks, xcr0=xcr0, max_leaf=max([c[0] for c in checks], default=0))
