"""What this machine's CPU can run (shared by the checkers and the benchmark).

``THREEFISH_GEN_HIDE_CPU_FLAGS`` (comma-separated flags or prefixes ending in ``*``, e.g.
``avx512*``) makes verify treat those features as absent: the variants that need them run
emulated (SIMDe) or are skipped exactly as on a CPU without them, and the .NET runtime of the
C# rows is started with the matching ``DOTNET_Enable...=0``.  This is how an AVX2-only
machine's ``make verify`` is reproduced on an AVX-512 machine (and how the tests force the
emulated path)."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

HIDE_VAR = "THREEFISH_GEN_HIDE_CPU_FLAGS"


@lru_cache(maxsize=None)
def _proc_flags() -> frozenset:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def hidden_flags() -> frozenset:
    """The flags of this CPU that THREEFISH_GEN_HIDE_CPU_FLAGS hides."""
    pats = [p.strip() for p in os.environ.get(HIDE_VAR, "").split(",") if p.strip()]
    return frozenset(f for f in _proc_flags()
                     if any(f == p or (p.endswith("*") and f.startswith(p[:-1])) for p in pats))


def cpu_flags() -> frozenset:
    """The CPU feature flags of this machine (/proc/cpuinfo) less the hidden ones; empty where
    unknown."""
    return _proc_flags() - hidden_flags()




@lru_cache(maxsize=None)
def cpu_id() -> dict:
    """vendor (cpuid vendor string), family and model (as cpuid's display family/model, the
    extended fields folded in, like /proc/cpuinfo), model_name: of the first CPU in
    /proc/cpuinfo; {} where unknown."""
    keys = {"vendor_id": "vendor", "cpu family": "family", "model": "model", "model name": "model_name"}
    out: dict = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break
            k, _, val = line.partition(":")
            k = k.strip()
            if k in keys:
                val = val.strip()
                out[keys[k]] = int(val) if k in ("cpu family", "model") and val.isdigit() else val
    except OSError:
        pass
    return out


def cpu_identity() -> tuple[str, int, int]:
    """(vendor_id, cpu family, model) of this machine from /proc/cpuinfo; ('', 0, 0) where unknown."""
    d = cpu_id()
    fam, model = d.get("family", 0), d.get("model", 0)
    return d.get("vendor", ""), fam if isinstance(fam, int) else 0, model if isinstance(model, int) else 0
