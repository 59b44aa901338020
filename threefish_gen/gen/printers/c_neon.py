"""The NEON instruction family of the SIMD C target (AArch64 Advanced SIMD, ``--isa neon``).

The layout printers of gen/printers/c_simd.py (LanesPrinter, PackedPrinter) print the one layout
IR; what they ask an ISA's *family* for lives here: the vector type and its loads, stores,
constants and arithmetic (:class:`NeonWidth`), the lane shuffle candidates (``vzip1q/vzip2q``,
``vextq``, lane copies and duplicates, matched against a wanted lane pattern like the x86 table)
and the rotations:

* any count: ``vshlq_n_u64`` then ``vsriq_n_u64`` (shift right and insert): 2 instructions;
* 32: ``vrev64q_u32`` (swap the 32-bit halves): 1;
* other multiples of 8: ``vqtbl1q_u8`` with a byte-rotation table held in a register: 1;
* per-lane counts (layout packed): one table lookup when every count is a multiple of 8, else
  ``vshlq_u64`` by a signed count vector left and right, OR-ed: 3.

Words are little-endian in memory.  Loads and stores go through ``threefish_gen_neon_load`` /
``_store`` (templates/c_simd/threefish.c.j2): ``vld1q_u8``/``vst1q_u8`` (any alignment) on
little-endian AArch64, byte by byte on a big-endian one.  NEON is architectural on
AArch64: no run-time check, no target attribute.
"""
from __future__ import annotations

from dataclasses import dataclass

from .c_simd import Isa, Width


@dataclass(frozen=True)
class NeonWidth:
    bits: int = 128
    T = "uint64x2_t"

    @property
    def lanes(self) -> int:
        return self.bits // 64

    @staticmethod
    def const(vals) -> str:
        """A vector of two 64-bit C expressions, lane 0 first."""
        return "vcombine_u64(" + ", ".join(f"vcreate_u64((uint64_t)({v}))" for v in vals) + ")"

    def set1(self, expr: str) -> str:
        return f"vdupq_n_u64((uint64_t)({expr}))"

    def setv(self, vals) -> str:
        return self.const(vals)

    OPS = {"add": "vaddq_u64({a}, {b})", "sub": "vsubq_u64({a}, {b})", "xor": "veorq_u64({a}, {b})",
           "zero": "vdupq_n_u64(0)"}
    add, sub, xor, zero = Width.add, Width.sub, Width.xor, Width.zero

    def _whole(self, words):
        if (words or self.lanes) != self.lanes:
            raise ValueError(f"neon: a row of {words} words (only whole 128-bit rows are printed)")

    def loadu(self, addr: str, words: int | None = None) -> str:
        self._whole(words)
        return f"threefish_gen_neon_load((const uint8_t *)({addr}))"

    def storeu(self, addr: str, val: str, words: int | None = None) -> str:
        self._whole(words)
        return f"threefish_gen_neon_store((uint8_t *)({addr}), {val});"


def shuffle_candidates(isa: Isa, width: NeonWidth):
    """(cost, format with {a} {b}, semantics per output lane: (0 = a / 1 = b, lane)); the
    two-lane permutes AArch64 has, every one a single instruction."""
    c = [(1, "vzip1q_u64({a}, {b})", ((0, 0), (1, 0))),
         (1, "vzip2q_u64({a}, {b})", ((0, 1), (1, 1))),
         (1, "vextq_u64({a}, {b}, 1)", ((0, 1), (1, 0)))]
    for k in (0, 1):
        c.append((1, f"vdupq_laneq_u64({{a}}, {k})", ((0, k), (0, k))))
    for i in (0, 1):            # a with lane i replaced by lane j of b (INS)
        for j in (0, 1):
            sem = tuple((1, j) if lane == i else (0, lane) for lane in (0, 1))
            c.append((1, f"vcopyq_laneq_u64({{a}}, {i}, {{b}}, {j})", sem))
    return c


def byte_rotate_table(counts) -> str:
    """vqtbl1q_u8 table rotating lane w left by counts[w] bits (multiples of 8), as a uint64x2_t
    (byte i of the vector is bits 8i.. of lane i // 8 on little-endian AArch64)."""
    lanes = []
    for w, n in enumerate(counts):
        idx = [8 * w + (i - n // 8) % 8 for i in range(8)]
        lanes.append(f"UINT64_C({sum(b << (8 * i) for i, b in enumerate(idx)):#018x})")
    return NeonWidth.const(lanes)


def _tbl(x: str, table: str) -> str:
    return f"vreinterpretq_u64_u8(vqtbl1q_u8(vreinterpretq_u8_u64({x}), vreinterpretq_u8_u64({table})))"


def rotl_uniform(isa: Isa, width: NeonWidth, x: str, n: int, consts: dict) -> tuple[str, str]:
    """(expression, cost class) rotating both lanes of x left by n."""
    if n == 32:
        return f"vreinterpretq_u64_u32(vrev64q_u32(vreinterpretq_u32_u64({x})))", "shuffle"
    if n % 8 == 0:
        consts[f"rot{n}"] = byte_rotate_table((n,) * width.lanes)
        return _tbl(x, f"rot{n}"), "shuffle"
    return f"vsriq_n_u64(vshlq_n_u64({x}, {n}), {x}, {64 - n})", "shifts"


def rotl_lanes(isa: Isa, width: NeonWidth, x: str, counts: tuple, consts: dict) -> tuple[str, str, int]:
    """(expression, cost class, instructions) rotating lane k of x left by counts[k]."""
    if len(set(counts)) == 1:
        expr, kind = rotl_uniform(isa, width, x, counts[0], consts)
        return expr, kind, 2 if kind == "shifts" else 1
    tag = "_".join(map(str, counts))
    if all(c % 8 == 0 for c in counts):
        consts[f"rb_{tag}"] = byte_rotate_table(counts)
        return _tbl(x, f"rb_{tag}"), "shuffle", 1
    consts[f"rc_{tag}"] = NeonWidth.const([f"UINT64_C({c})" for c in counts])
    consts[f"rr_{tag}"] = NeonWidth.const([f"UINT64_C({(1 << 64) + c - 64:#x})" for c in counts])
    return (f"vorrq_u64(vshlq_u64({x}, vreinterpretq_s64_u64(rc_{tag})), "
            f"vshlq_u64({x}, vreinterpretq_s64_u64(rr_{tag})))", "shifts", 3)


class Neon:
    """The NEON family: the names gen/printers/c_simd.py's printers ask an ISA's family for."""
    width = NeonWidth
    shuffle_candidates = staticmethod(shuffle_candidates)
    rotl_uniform = staticmethod(rotl_uniform)
    rotl_lanes = staticmethod(rotl_lanes)
    shift_ops = 2          # a rotation by shifts: shift left, shift right and insert


# level: order among the paths of one family's dispatcher (NEON is the only AArch64 path);
# target: None (architectural, no target attribute); features: the /proc/cpuinfo flag every AArch64
# CPU lists ("asimd"): x86 machines lack it, so bench skips the NEON rows (no timing under qemu).
ISAS = {"neon": Isa("neon", 1, 128, None, ("asimd",), None, True, False, family=Neon)}
