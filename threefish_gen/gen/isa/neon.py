"""AArch64 Advanced SIMD (``--isa neon``, C intrinsics ``v*q_u64``): one table for the printer and
the prover.

* ``ISAS``: the one NEON record;
* :class:`NeonWidth`: the vector type ``uint64x2_t`` and its loads, stores, constants and
  add/sub/xor;
* ``SEMANTICS``: every intrinsic the printers spell, by its C name, as lane terms
  (gen/isa/common.py says how); gen/prove/c_simd.py reads a parsed call back through it, the
  shuffle candidates derive the lane pattern they build from it;
* the lane shuffle candidates (``vzip1q/vzip2q``, ``vextq``, lane copies and duplicates) and the
  rotations:

  - any count: ``vshlq_n_u64`` then ``vsriq_n_u64`` (shift right and insert): 2 instructions;
  - 32: ``vrev64q_u32`` (swap the 32-bit halves): 1;
  - other multiples of 8: ``vqtbl1q_u8`` with a byte-rotation table held in a register: 1;
  - per-lane counts (layout packed): one table lookup when every count is a multiple of 8, else
    ``vshlq_u64`` by a signed count vector left and right, OR-ed: 3.

Words are little-endian in memory.  Loads and stores go through ``threefish_gen_neon_load`` /
``_store`` (templates/c_simd/threefish.c.j2): ``vld1q_u8``/``vst1q_u8`` (any alignment) on
little-endian AArch64, byte by byte on a big-endian one.  NEON is architectural on
AArch64: no run-time check, no target attribute.  Every intrinsic is spelled through
:func:`call`, which refuses a name ``SEMANTICS`` lacks.
"""
from __future__ import annotations

from dataclasses import dataclass

from .common import A, B, CExpr, Isa, Scalar, intrinsic, lane_sources
from .x86 import Width

MASK = (1 << 64) - 1

# C vector types the printers declare, and their bytes.
TYPES = {"uint64x2_t": 16}
# The row load and store helpers of the template (templates/c_simd/threefish.c.j2).
LOAD, STORE = "threefish_gen_neon_load", "threefish_gen_neon_store"


# --------------------------------------------------------------------------- semantics

def _lanewise(f):
    return lambda m, w, a: tuple(f(m)(p, q) for p, q in zip(m.vec(a[0]), m.vec(a[1])))


def _shl_n(m, w, a):
    k = m.imm(a[1])
    if k > 63:
        m.unsupported(f"{m.intrinsic} by {k} (0..63)")
    return tuple(m.shl(t, k) for t in m.vec(a[0]))


def _shr_n(m, w, a):
    k = m.imm(a[1])
    if not 1 <= k <= 64:
        m.unsupported(f"{m.intrinsic} by {k} (1..64)")
    return tuple(m.shr(t, k) if k < 64 else m.const(0) for t in m.vec(a[0]))


def _sri_n(m, w, a):
    """(b >> n) inserted under the top n bits of a; a = b << (64 - n) makes it a rotation."""
    x, y, n = m.vec(a[0]), m.vec(a[1]), m.imm(a[2])
    if n >= 64:
        return x
    keep = ~(MASK >> n) & MASK
    return tuple(m.rotl(q, 64 - n) if m.same(p, m.shl(q, 64 - n)) else m.or_(m.and_(p, keep), m.shr(q, n))
                 for p, q in zip(x, y))


def _shl_v(m, w, a):
    """Per-lane signed count (low byte): left, or right if negative."""
    out = []
    for t, c in zip(m.vec(a[0]), m.counts(m.vec(a[1]))):
        s = c & 0xff
        s = s - 256 if s >= 128 else s
        out.append((m.shl(t, s) if s < 64 else m.const(0)) if s >= 0 else
                   (m.shr(t, -s) if -s < 64 else m.const(0)))
    return tuple(out)


def _copy_lane(m, w, a):
    x, la, y, lb = m.vec(a[0]), m.imm(a[1]), m.vec(a[2]), m.imm(a[3])
    out = list(x)
    out[la & 1] = y[lb & 1]
    return tuple(out)


def _tbl(m, w, a):
    x, ctl = m.vec(a[0]), m.const_bytes(m.vec(a[1]))
    bs = m.bytes(x)
    return m.words([bs[c] if c < 16 else (m.const(0), 0) for c in ctl])


SEMANTICS = {
    "vaddq_u64": _lanewise(lambda m: m.add), "vsubq_u64": _lanewise(lambda m: m.sub),
    "veorq_u64": _lanewise(lambda m: m.xor), "vorrq_u64": _lanewise(lambda m: m.or_),
    "vshlq_n_u64": _shl_n, "vshrq_n_u64": _shr_n, "vsriq_n_u64": _sri_n, "vshlq_u64": _shl_v,
    "vdupq_n_u64": lambda m, w, a: (a[0],) * 2,
    "vcreate_u64": lambda m, w, a: (a[0],),
    "vcombine_u64": lambda m, w, a: m.vec(a[0]) + m.vec(a[1]),
    "vgetq_lane_u64": lambda m, w, a: m.vec(a[0])[m.imm(a[1]) & 1],
    "vzip1q_u64": lambda m, w, a: (m.vec(a[0])[0], m.vec(a[1])[0]),
    "vzip2q_u64": lambda m, w, a: (m.vec(a[0])[1], m.vec(a[1])[1]),
    "vextq_u64": lambda m, w, a: (m.vec(a[0]) + m.vec(a[1]))[m.imm(a[2]):m.imm(a[2]) + 2],
    "vdupq_laneq_u64": lambda m, w, a: (m.vec(a[0])[m.imm(a[1]) & 1],) * 2,
    "vcopyq_laneq_u64": _copy_lane,
    "vrev64q_u32": lambda m, w, a: tuple(m.rotl(t, 32) for t in m.vec(a[0])),
    "vqtbl1q_u8": _tbl,
    LOAD: lambda m, w, a: m.load(a[0], 2),
    STORE: lambda m, w, a: m.store(a[0], m.vec(a[1])),
    # the Rust crate's row helpers (RUST_LOAD, RUST_STORE): 16 bytes, any alignment, read as two
    # little-endian words (the crate's NEON module is built for little-endian AArch64 only)
    "vld1q_u8": lambda m, w, a: m.load(a[0], 2),
    "vst1q_u8": lambda m, w, a: m.store(a[0], m.vec(a[1])),
}


def is_reinterpret(name: str) -> bool:
    """``vreinterpretq_*``: the same bits as another element type (no operation)."""
    return name.startswith("vreinterpretq_")


def call(name: str, *args) -> CExpr:
    """The C call of the intrinsic ``name`` (a ``SEMANTICS`` key or a reinterpretation): a site of
    16 bytes (every NEON vector is 128-bit; ints and Scalar operands are scalar)."""
    if name not in SEMANTICS and not is_reinterpret(name):
        raise AssertionError(f"NEON intrinsic {name} has no semantics")
    return intrinsic(name, 16, args)


# --------------------------------------------------------------------------- vector width

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
        return call("vcombine_u64", *(call("vcreate_u64", Scalar(f"(uint64_t)({v})")) for v in vals))

    def const_words(self, words) -> str:
        """A vector of two 64-bit integers, lane 0 first."""
        return self.const([f"UINT64_C({x:#018x})" for x in words])

    def set1(self, expr: str) -> str:
        return call("vdupq_n_u64", Scalar(f"(uint64_t)({expr})"))

    def setv(self, vals) -> str:
        return self.const(vals)

    OPS = {"add": "vaddq_u64", "sub": "vsubq_u64", "xor": "veorq_u64"}

    def op(self, name: str, a: str = "", b: str = "") -> CExpr:
        return call("vdupq_n_u64", 0) if name == "zero" else call(self.OPS[name], a, b)
    add, sub, xor, zero = Width.add, Width.sub, Width.xor, Width.zero

    def _whole(self, words):
        if (words or self.lanes) != self.lanes:
            raise ValueError(f"neon: a row of {words} words (only whole 128-bit rows are printed)")

    def loadu(self, addr: str, words: int | None = None) -> str:
        self._whole(words)
        return call(LOAD, Scalar(f"(const uint8_t *)({addr})"))

    def storeu(self, addr: str, val: str, words: int | None = None) -> str:
        self._whole(words)
        return call(STORE, Scalar(f"(uint8_t *)({addr})"), val).then(";")


# --------------------------------------------------------------------------- Rust (core::arch::aarch64)

# The Rust target's NEON path (gen/printers/rust.py ``LanesPrinter``) spells these same
# intrinsics: core::arch::aarch64 names them as C does and takes an immediate in its C argument
# position (``rustc_legacy_const_generics``: ``vshlq_n_u64(x, 13)``, ``vextq_u64(a, b, 1)``), so the
# shuffle candidates and rotations below print the same text for both languages.  What differs:
#
# * a scalar operand is already a ``u64`` (no cast), a usize index is cast ``as u64``;
# * constants are Rust integer literals in ``vcreate_u64`` (no ``UINT64_C``);
# * memory: the kernel touches no pointer; a row is read and written through the crate's helpers
#   ``ld128(&array, word)`` / ``st128(&mut array, word, v)``, each a bounds-checked slice of the
#   byte array and one ``unsafe`` block around ``vld1q_u8`` / ``vst1q_u8`` (any alignment; the
#   bytes as little-endian words: the module is compiled for little-endian AArch64 only).
RUST_LOAD, RUST_STORE = "ld128", "st128"
RUST_FEATURE = "neon"        # the target feature of the kernels and helpers (every AArch64 target has it)


def rust_memory(bits: int = 128) -> dict:
    """The crate's row helpers (as gen/isa/x86.py ``rust_memory``: names, vector type, target
    feature, the intrinsic calls they wrap on the bounds-checked slice ``s`` and the vector ``v``)."""
    if bits != 128:
        raise ValueError(f"neon: no {bits}-bit rows")
    return dict(bits=128, bytes=16, T=NeonWidth.T, feature=RUST_FEATURE, load_name=RUST_LOAD, store_name=RUST_STORE,
                load=call("vreinterpretq_u64_u8", call("vld1q_u8", Scalar("s.as_ptr()"))),
                store=call("vst1q_u8", Scalar("s.as_mut_ptr()"), call("vreinterpretq_u8_u64", "v")))


def rust_u64(expr, index: bool = False) -> str:
    """A Rust operand of ``vdupq_n_u64``: a u64 value as it is; a usize index (``index``) cast."""
    text = str(expr)
    if not index or text.isdigit():
        return text
    return f"{text} as u64" if text.isidentifier() else f"({text}) as u64"


@dataclass(frozen=True)
class RustNeonWidth(NeonWidth):
    """The NEON width spelled in Rust: :class:`NeonWidth`'s intrinsics, Rust's literals and the
    crate's row helpers for memory (``addr``: ``"&array, word"`` of the helper)."""

    def const_words(self, words) -> str:
        return call("vcombine_u64", *(call("vcreate_u64", Scalar(f"{x:#018x}")) for x in words))

    def set1(self, expr: str) -> str:
        return call("vdupq_n_u64", Scalar(rust_u64(expr)))

    def set1_index(self, expr: str) -> str:
        """Every lane a usize expression of the loop counter."""
        return call("vdupq_n_u64", Scalar(rust_u64(expr, index=True)))

    def loadu(self, addr: str, words: int | None = None) -> str:
        self._whole(words)
        return CExpr(f"{RUST_LOAD}({addr})")

    def storeu(self, addr: str, val: str, words: int | None = None) -> str:
        self._whole(words)
        return CExpr(f"{RUST_STORE}({addr}, {val});")


# --------------------------------------------------------------------------- lane shuffles

def _cand(fmt: str, name: str, args: tuple):
    """A shuffle candidate (one instruction): (cost, C format with {a} {b}, lane pattern)."""
    return 1, fmt, lane_sources(SEMANTICS[name], 2, args)


def shuffle_candidates(isa: Isa, width: NeonWidth):
    """(cost, format with {a} {b}, semantics per output lane: (0 = a / 1 = b, lane)); the
    two-lane permutes AArch64 has, every one a single instruction."""
    c = [_cand(call("vzip1q_u64", A, B), "vzip1q_u64", ("a", "b")),
         _cand(call("vzip2q_u64", A, B), "vzip2q_u64", ("a", "b")),
         _cand(call("vextq_u64", A, B, 1), "vextq_u64", ("a", "b", 1))]
    for k in (0, 1):
        c.append(_cand(call("vdupq_laneq_u64", A, k), "vdupq_laneq_u64", ("a", k)))
    for i in (0, 1):            # a with lane i replaced by lane j of b (INS)
        for j in (0, 1):
            c.append(_cand(call("vcopyq_laneq_u64", A, i, B, j), "vcopyq_laneq_u64", ("a", i, "b", j)))
    return c


# --------------------------------------------------------------------------- rotations

def byte_rotate_table(counts, width=None) -> str:
    """vqtbl1q_u8 table rotating lane w left by counts[w] bits (multiples of 8), as a uint64x2_t
    (byte i of the vector is bits 8i.. of lane i // 8 on little-endian AArch64), spelled by
    ``width`` (C by default; :class:`RustNeonWidth` for the Rust crate)."""
    words = []
    for w, n in enumerate(counts):
        idx = [8 * w + (i - n // 8) % 8 for i in range(8)]
        words.append(sum(b << (8 * i) for i, b in enumerate(idx)))
    return (width or NeonWidth()).const_words(words)


def _table_lookup(x: str, table: str) -> str:
    return call("vreinterpretq_u64_u8", call("vqtbl1q_u8", call("vreinterpretq_u8_u64", x),
                                             call("vreinterpretq_u8_u64", table)))


def rotl_uniform(isa: Isa, width: NeonWidth, x: str, n: int, consts: dict) -> tuple[str, str]:
    """(expression, cost class) rotating both lanes of x left by n."""
    if n == 32:
        return call("vreinterpretq_u64_u32", call("vrev64q_u32", call("vreinterpretq_u32_u64", x))), "shuffle"
    if n % 8 == 0:
        consts[f"rot{n}"] = byte_rotate_table((n,) * width.lanes, width)
        return _table_lookup(x, f"rot{n}"), "shuffle"
    return call("vsriq_n_u64", call("vshlq_n_u64", x, n), x, 64 - n), "shifts"


def rotl_lanes(isa: Isa, width: NeonWidth, x: str, counts: tuple, consts: dict) -> tuple[str, str, int]:
    """(expression, cost class, instructions) rotating lane k of x left by counts[k]."""
    if len(set(counts)) == 1:
        expr, kind = rotl_uniform(isa, width, x, counts[0], consts)
        return expr, kind, 2 if kind == "shifts" else 1
    tag = "_".join(map(str, counts))
    if all(c % 8 == 0 for c in counts):
        consts[f"rb_{tag}"] = byte_rotate_table(counts)
        return _table_lookup(x, f"rb_{tag}"), "shuffle", 1
    consts[f"rc_{tag}"] = NeonWidth.const([f"UINT64_C({c})" for c in counts])
    consts[f"rr_{tag}"] = NeonWidth.const([f"UINT64_C({(1 << 64) + c - 64:#x})" for c in counts])
    return (call("vorrq_u64", call("vshlq_u64", x, call("vreinterpretq_s64_u64", f"rc_{tag}")),
                 call("vshlq_u64", x, call("vreinterpretq_s64_u64", f"rr_{tag}"))), "shifts", 3)


class Neon:
    """The NEON family: the names the SIMD C printers ask an ISA's family for."""
    width = NeonWidth
    rust_width = RustNeonWidth
    rust_memory = staticmethod(rust_memory)
    rust_row_bits = (128,)
    shuffle_candidates = staticmethod(shuffle_candidates)
    rotl_uniform = staticmethod(rotl_uniform)
    rotl_lanes = staticmethod(rotl_lanes)
    shift_ops = 2          # a rotation by shifts: shift left, shift right and insert


# level: order among the paths of one family's dispatcher (NEON is the only AArch64 path);
# target: None (architectural, no target attribute); features: the /proc/cpuinfo flag every AArch64
# CPU lists ("asimd"): x86 machines lack it, so bench skips the NEON rows (no timing under qemu).
ISAS = {"neon": Isa("neon", 1, 128, None, ("asimd",), None, True, False, family=Neon)}
