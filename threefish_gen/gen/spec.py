"""Stage 1 -- spec: the constants of Threefish, per Skein version and block size.

Data only.  Every table here is checked entry by entry against
``verify/kat/constants.md`` by ``tests/test_spec.py``; the known-answer vectors
(``verify/kat``) then pin them a second time.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import GenError

VERSIONS = ("1.1", "1.2", "1.3")
SIZES = (256, 512, 1024)

# Word permutation pi: after a round, v'[i] = f[pi(i)].  Same in every version.
PERMUTATION = {
    4: (0, 3, 2, 1),
    8: (2, 1, 4, 7, 6, 5, 0, 3),
    16: (0, 9, 2, 13, 6, 11, 4, 15, 10, 7, 12, 3, 14, 5, 8, 1),
}

ROUNDS = {4: 72, 8: 72, 16: 80}

# Rotation constants R[d][j] (d = round mod 8, j = MIX index within the round).
_ROT_V11 = {
    4: ((5, 56), (36, 28), (13, 46), (58, 44), (26, 20), (53, 35), (11, 42), (59, 50)),
    8: ((38, 30, 50, 53), (48, 20, 43, 31), (34, 14, 15, 27), (26, 12, 58, 7),
        (33, 49, 8, 42), (39, 27, 41, 14), (29, 26, 11, 9), (33, 51, 39, 35)),
    16: ((55, 43, 37, 40, 16, 22, 38, 12), (25, 25, 46, 13, 14, 13, 52, 57),
         (33, 8, 18, 57, 21, 12, 32, 54), (34, 43, 25, 60, 44, 9, 59, 34),
         (28, 7, 47, 48, 51, 9, 35, 41), (17, 6, 18, 25, 43, 42, 40, 15),
         (58, 7, 32, 45, 19, 18, 2, 56), (47, 49, 27, 58, 37, 48, 53, 56)),
}
_ROT_V12 = {
    4: ((14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32)),
    8: ((46, 36, 19, 37), (33, 27, 14, 42), (17, 49, 36, 39), (44, 9, 54, 56),
        (39, 30, 34, 24), (13, 50, 10, 17), (25, 29, 39, 43), (8, 35, 56, 22)),
    16: ((24, 13, 8, 47, 8, 17, 22, 37), (38, 19, 10, 55, 49, 18, 23, 52),
         (33, 4, 51, 13, 34, 41, 59, 17), (5, 20, 48, 41, 47, 28, 16, 25),
         (41, 9, 37, 31, 12, 47, 44, 30), (16, 34, 56, 51, 4, 53, 42, 41),
         (31, 44, 47, 46, 19, 42, 44, 25), (9, 48, 35, 52, 23, 31, 37, 20)),
}
ROTATIONS = {"1.1": _ROT_V11, "1.2": _ROT_V12, "1.3": _ROT_V12}

C240 = {"1.1": 0x5555555555555555, "1.2": 0x5555555555555555, "1.3": 0x1BD11BDAA9FC1A22}


@dataclass(frozen=True)
class Spec:
    """Everything that defines one Threefish instance."""

    version: str
    bits: int

    @property
    def nw(self) -> int:
        """Number of 64-bit words in the block (4, 8, 16)."""
        return self.bits // 64

    @property
    def block_bytes(self) -> int:
        return self.bits // 8

    @property
    def rounds(self) -> int:
        return ROUNDS[self.nw]

    @property
    def subkeys(self) -> int:
        return self.rounds // 4 + 1

    @property
    def perm(self) -> tuple[int, ...]:
        return PERMUTATION[self.nw]

    @property
    def rot(self) -> tuple[tuple[int, ...], ...]:
        return ROTATIONS[self.version][self.nw]

    @property
    def c240(self) -> int:
        return C240[self.version]

    @property
    def tag(self) -> str:
        """Short identifier used in file and symbol names, e.g. ``512_v13``."""
        return f"{self.bits}_v{self.version.replace('.', '')}"


def get_spec(version: str, bits: int | str) -> Spec:
    """Return the Spec for a version string and block size, or raise GenError."""
    version = str(version)
    if version not in VERSIONS:
        raise GenError(f"unknown version {version!r} (choose from {', '.join(VERSIONS)})")
    try:
        bits = int(bits)
    except (TypeError, ValueError):
        raise GenError(f"unknown block size {bits!r} (choose from 256, 512, 1024)") from None
    if bits not in SIZES:
        raise GenError(f"unknown block size {bits!r} (choose from 256, 512, 1024)")
    return Spec(version, bits)


def all_specs() -> list[Spec]:
    return [Spec(v, b) for v in VERSIONS for b in SIZES]
