"""verify's rows once per code shape: the property rows of an older constants version whose code
is the newest version's code but for its integer literals run there, not again.

The three constants versions (Skein v1.1, v1.2, v1.3) differ only in numbers: rotation counts
(v1.1 against v1.2 and v1.3), the key schedule's parity constant (v1.3 against the others),
Skein's IV words.  For most variants the rendered text of an
older version is the newest version's text with other integer literals in the same places (and
its own version tag in names and comments).  A row that checks a *property of the code's shape*
-- memory safety and UB under the sanitizers, constant time under memcheck, the SIMDe and Win64
builds, clippy, a debug build, a JIT setting that only prints or re-tiers -- then checks the same
instructions, the same memory accesses and the same branches twice.  Such a row
(:data:`PER_SHAPE`) of an older version is COVERED by the newest version's row of the same variant
and build: it does not run, the matrix says so, and the newest row's verdict is the run's.

What stays for every version: every row whose verdict depends on the numbers (the functional
rows of every compiler, path, architecture and ABI, against that version's vectors) and `prove`.
Where the texts differ in anything but integer literals (a SIMD rotate by a multiple of 8 is a
byte shuffle, by 32 a dword shuffle: a different instruction), every row runs.  Shift counts
stay in 1..63 in every version (:func:`rotations_in_range`), so no literal can turn a rotate
into a shift by 0 or 64, which would be a property of the numbers, not of the shape.

``verify --every-version`` runs every row of every version (no row COVERED).
"""
from __future__ import annotations

import hashlib
import re

from threefish_gen.gen.spec import ROTATIONS, VERSIONS

# the builds whose rows check a property of the code's shape, not of its numbers (by name: a
# substring of the build name)
PER_SHAPE = ("asan", "ct (memcheck)", "simde", "win64 under wine", "nasm win64 (assemble)",
             "valgrind memcheck", "clippy", "cargo debug", "TC=0", "jit disasm")

COVERED = "COVERED"

# an integer literal's digits (C, NASM, C# and Rust spellings: 0x1bd1..., 0x1BD1_1BDA..., 14, 14u32,
# 0x55UL); its type suffix stays, a different type is a different shape
_INT = re.compile(r"\b(?:0[xX][0-9a-fA-F][0-9a-fA-F_]*|[0-9][0-9_]*)(?=(?:[uUlL]*|_?[ui](?:8|16|32|64|128|size))\b)")
# a version tag in names and comments (tf512_v13_..., TF512_V13_..., "v1.3", "constants 1.3")
_TAG = re.compile("|".join([rf"[vV]{v.replace('.', '')}(?![0-9])" for v in VERSIONS] +
                           [rf"(?<![0-9.]){re.escape(v)}(?![0-9.])" for v in VERSIONS]))


def per_shape(build_name: str) -> bool:
    return any(p in build_name for p in PER_SHAPE)


def shape_digest(files: dict) -> str:
    """The texts of a variant with version tags and integer literals masked (names too)."""
    h = hashlib.sha256()
    for name in sorted(files, key=lambda n: _TAG.sub("V", n)):
        for part in (_TAG.sub("V", name), _INT.sub("#", _TAG.sub("V", files[name]))):
            h.update(part.encode())
            h.update(b"\0")
    return h.hexdigest()


def rotations_in_range() -> bool:
    return all(1 <= r <= 63 for tables in ROTATIONS.values() for rows in tables.values()
               for row in rows for r in row)


def group_key(variant) -> tuple:
    """Variants that differ only in their constants version share this key."""
    return (variant.primitive, variant.label().replace(f" v{variant.spec.version}", " v*"))


def covered_by(tasks: list, digest_of) -> dict:
    """``tasks``: (variant, build) rows of a run; ``digest_of(variant)``: its :func:`shape_digest`.
    The index of every COVERED row -> the row (variant, build) that covers it: a per-shape build of
    a variant whose newest-version sibling in the run has the same build and the same shape."""
    if not rotations_in_range():
        return {}
    order = {v: i for i, v in enumerate(VERSIONS)}
    newest: dict = {}
    for v, _ in tasks:
        k = group_key(v)
        if k not in newest or order[v.spec.version] > order[newest[k].spec.version]:
            newest[k] = v
    builds = {(v, b.name) for v, b in tasks}
    digests: dict = {}

    def digest(v):
        if v not in digests:
            digests[v] = digest_of(v)
        return digests[v]

    out = {}
    for i, (v, b) in enumerate(tasks):
        rep = newest[group_key(v)]
        if rep is v or not per_shape(b.name) or (rep, b.name) not in builds:
            continue
        if digest(v) == digest(rep):
            out[i] = (rep, b)
    return out
