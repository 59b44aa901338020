"""What this machine's CPU can run (shared by the checkers and the benchmark)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def cpu_flags() -> frozenset:
    """The CPU feature flags of this machine (/proc/cpuinfo), empty where unknown."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()
