"""x86 vector instructions, SSE2 to AVX-512 (SIMD C intrinsics): one table for the printer and
the prover.

* ``ISAS``: the ISAs of the family (sse2, avx, avx2, avx512) and what each has (byte shuffles,
  vprolq, 256/512-bit vectors);
* :class:`Width`: the C vector type of a width and its loads, stores, constants, add/sub/xor;
* ``SEMANTICS``: every intrinsic the printers spell (and those whose meaning a NASM instruction
  has), by its name after ``_mm{,256,512}_``, as lane terms (gen/isa/common.py says how);
  gen/prove/c_simd.py reads a parsed call back through it, the shuffle candidates below derive
  the lane pattern they build from it;
* :func:`shuffle_candidates` (lane moves per width), :func:`index_permute` (AVX-512 vpermq /
  vpermt2q), :func:`rotl_uniform` and :func:`rotl_lanes` (rotations: vprolq, pshufb, shifts);
* CPU detection: the cpuid bit of each feature (``CPUID``), the XCR0 state the OS must save for
  it (``XCR0``), what both the SIMD C and the NASM detection are generated from;
* NASM: every vector mnemonic the prove reader reads, as its ``SEMANTICS`` row and operand forms
  (``NASM``, :class:`NasmForm`, ``NASM_ROWS``), the NASM forms of
  the assembly targets' machine-op kinds per register class (``X64_OPS`` GPR, ``X86_XMM_OPS``,
  ``X86_PACKED_OPS``, ``YMM_OPS`` AVX2, ``ZMM_OPS`` AVX-512), the packed XMM lowering's lane
  moves with their semantics (``PACKED_MOVES``) and the lanes kernels' transpose moves
  (``LANE_MOVES``, ``LANE_PAIRS``).

Every intrinsic is spelled through :func:`call`, which refuses a name ``SEMANTICS`` lacks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import GenError
from .common import A, B, CExpr, Isa, Scalar, intrinsic, lane_sources, shuffle

ISAS = {
    "sse2": Isa("sse2", 1, 128, "sse2", ("sse2",), "simde/x86/sse2.h", False, False, splat_load=False),
    "avx": Isa("avx", 2, 128, "avx", ("avx",), "simde/x86/avx.h", True, False),
    "avx2": Isa("avx2", 3, 256, "avx2", ("avx2",), "simde/x86/avx2.h", True, False),
    "avx512": Isa("avx512", 4, 512, "avx512f,avx512vl", ("avx512f", "avx512vl"),
                  "simde/x86/avx512.h", True, True, True),
}

# --------------------------------------------------------------------------- CPU detection
# What says a CPU and its OS support a feature, the data of both detections: the SIMD C files'
# cpu_level() (gen/printers/c_simd/printer.py cpu_level_lines: the level ladder of ISAS) and the NASM
# files' cpu_supported() (gen/printers/nasm_cpu.py).
# /proc/cpuinfo flag -> (cpuid leaf, subleaf, output register, bit)
CPUID = {
    "sse2": (1, 0, "edx", 26),
    "ssse3": (1, 0, "ecx", 9),
    "osxsave": (1, 0, "ecx", 27),          # XGETBV available: the OS reports the state it saves
    "avx": (1, 0, "ecx", 28),
    "avx2": (7, 0, "ebx", 5),
    "bmi2": (7, 0, "ebx", 8),
    "avx512f": (7, 0, "ebx", 16),
    "avx512vl": (7, 0, "ebx", 31),
}
# flags whose registers the OS must save (XCR0 bits, read by XGETBV after OSXSAVE): SSE+AVX
# state; + opmask, ZMM_Hi256, Hi16_ZMM
XCR0 = {"avx": 0x06, "avx2": 0x06, "avx512f": 0xE6, "avx512vl": 0xE6}
XCR0_STATE = {0x06: "XMM and YMM", 0xE6: "opmask/ZMM"}     # what a mask's state is called
# flags a flag's instructions need beside it (AVX2 and AVX-512 code: the AVX state)
IMPLIES = {"avx2": ("avx",), "avx512f": ("avx",)}
# the C preprocessor condition under which cpu_level() can ask the CPU: <cpuid.h> and the xgetbv
# asm statement (gcc or clang, compiling for x86-64 or i386)
CPUID_C_CONDITION = "(defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))"
# the bodies of PREFIX_FRESH(p), the mark that a ring pointer changed (the SIMD C lanes loops'
# fresh ring pointers, gen/printers/c_simd/printer.py FRESH_ISAS): an empty asm statement for gcc
# and clang (it emits nothing), nothing for other compilers; gen/prove/c_simd.py accepts a file
# whose macro is exactly these
FRESH_C = ('__asm__("" : "+r"(p))', "((void)0)")
# the name of each ISA's level in cpu_level()'s comments
TITLES = {"sse2": "SSE2", "avx": "AVX", "avx2": "AVX2", "avx512": "AVX-512F + VL"}

# C vector types the printers declare, and their bytes; CAST_TYPES: met only inside casts.
TYPES = {"__m128i": 16, "__m256i": 32, "__m512i": 64}
CAST_TYPES = {"__m128d": 16}

_PREFIX = {128: "_mm_", 256: "_mm256_", 512: "_mm512_"}
_NAME = re.compile(r"_mm(\d*)_(\w+)")


def parse(name: str):
    """(intrinsic name after the width prefix, lanes) of an x86 intrinsic's C name, or None."""
    m = _NAME.fullmatch(name)
    return None if m is None else (m.group(2), {"": 2, "256": 4, "512": 8}[m.group(1)])


# --------------------------------------------------------------------------- semantics

def _lanewise(f):
    return lambda m, w, a: tuple(f(m)(p, q) for p, q in zip(m.vec(a[0]), m.vec(a[1])))


def _storeu(m, w, a):
    v = m.vec(a[1])
    if len(v) != w:
        m.unsupported(f"{m.intrinsic} of a vector of another width")
    m.store(a[0], v)


def _shift(m, t, k, left):
    if k > 63:
        return m.const(0)
    return m.shl(t, k) if left else m.shr(t, k)


def _unpack(h):
    def sem(m, w, a):
        x, y = m.vec(a[0]), m.vec(a[1])
        out = []
        for blk in range(0, w, 2):
            out += [x[blk + h], y[blk + h]]
        return tuple(out)
    return sem


def _permute2x128(m, w, a):
    x, y, imm = _lanes(m, a[0], 4), _lanes(m, a[1], 4), m.imm(a[2])
    src = [x[0:2], x[2:4], y[0:2], y[2:4]]
    out = ()
    for half in range(2):
        c = (imm >> (4 * half)) & 0xf
        out += (m.const(0), m.const(0)) if c & 8 else src[c & 3]
    return out


def _shuffle_i32x4(m, w, a):
    x, y, imm = _lanes(m, a[0], 8), _lanes(m, a[1], 8), m.imm(a[2])
    out = ()
    for i in range(4):
        s = x if i < 2 else y
        c = (imm >> (2 * i)) & 3
        out += s[2 * c:2 * c + 2]
    return out


def _shuffle_epi32(m, w, a):
    x, imm = m.vec(a[0]), m.imm(a[1])
    bs, out = m.bytes(x), []
    for blk in range(0, 8 * w, 16):
        for d in range(4):
            s = (imm >> (2 * d)) & 3
            out += bs[blk + 4 * s:blk + 4 * s + 4]
    return m.words(out)


def _shuffle_epi8(m, w, a):
    x, ctl = m.vec(a[0]), m.const_bytes(m.vec(a[1]))
    bs, out = m.bytes(x), []
    for i, c in enumerate(ctl):
        blk = i // 16 * 16
        out.append((m.const(0), 0) if c & 0x80 else bs[blk + (c & 15)])
    return m.words(out)


def _blend(unit):
    """blend_epi16 (unit 2 bytes, imm bit per element within 128 bits) / blend_epi32 (4 bytes,
    imm bit per element within 256 bits)."""
    def sem(m, w, a):
        x, y, imm = m.vec(a[0]), m.vec(a[1]), m.imm(a[2])
        bx, by = m.bytes(x), m.bytes(y)
        return m.words([(by if (imm >> ((i // unit) % 8)) & 1 else bx)[i] for i in range(8 * w)])
    return sem


def _widen(m, w, a):
    x = m.vec(a[0])
    return x + tuple(m.undef(i) for i in range(w - len(x)))


def _bslli(m, w, a):
    """Each 128-bit lane shifted left by n bytes (zeros shifted in)."""
    x, n = m.vec(a[0]), m.imm(a[1])
    bs = m.bytes(x)
    return m.words([(m.const(0), 0) if i % 16 < n else bs[i - n] for i in range(8 * w)])


def _bsrli(m, w, a):
    """Each 128-bit lane shifted right by n bytes (zeros shifted in)."""
    x, n = m.vec(a[0]), m.imm(a[1])
    bs = m.bytes(x)
    return m.words([(m.const(0), 0) if i % 16 + n >= 16 else bs[i + n] for i in range(8 * w)])


def _lanes(m, x, n: int):
    """A vector argument that must have n lanes (the rows that read one width only)."""
    x = m.vec(x)
    if len(x) != n:
        m.unsupported(f"a vector of {len(x)} lanes where the instruction reads {n}")
    return x


def _extracti128(m, w, a):
    """The 128-bit lane imm & 1 of a 256-bit vector."""
    k = m.imm(a[1]) & 1
    return _lanes(m, a[0], 4)[2 * k:2 * k + 2]


def _setr_epi8(m, w, a):
    bs = [m.imm(t) & 0xff for t in a]
    return tuple(m.const(sum(b << (8 * k) for k, b in enumerate(bs[8 * i:8 * i + 8]))) for i in range(w))


def _store_aligned(m, w, a):
    v = m.vec(a[1])
    if len(v) != w:
        m.unsupported(f"{m.intrinsic} of a vector of another width")
    m.store_aligned(a[0], v)


SEMANTICS = {
    "loadu_si128": lambda m, w, a: m.load(a[0], w),
    "loadu_si256": lambda m, w, a: m.load(a[0], w),
    "loadu_si512": lambda m, w, a: m.load(a[0], w),
    "storeu_si128": _storeu, "storeu_si256": _storeu, "storeu_si512": _storeu,
    # the aligned forms (no printer spells them: the caller's pointers need not be aligned)
    **{f"load_{t}": lambda m, w, a: m.load_aligned(a[0], w)
       for t in ("si128", "si256", "si512", "epi32", "epi64")},
    **{f"{op}_{t}": _store_aligned for op, ts in (("store", ("si128", "si256", "si512", "epi32", "epi64")),
                                                   ("stream", ("si128", "si256", "si512"))) for t in ts},
    "add_epi64": _lanewise(lambda m: m.add), "sub_epi64": _lanewise(lambda m: m.sub),
    "xor_si128": _lanewise(lambda m: m.xor), "xor_si256": _lanewise(lambda m: m.xor),
    "xor_si512": _lanewise(lambda m: m.xor),
    "or_si128": _lanewise(lambda m: m.or_), "or_si256": _lanewise(lambda m: m.or_),
    "or_si512": _lanewise(lambda m: m.or_),
    "slli_epi64": lambda m, w, a: tuple(_shift(m, t, m.imm(a[1]), True) for t in m.vec(a[0])),
    "srli_epi64": lambda m, w, a: tuple(_shift(m, t, m.imm(a[1]), False) for t in m.vec(a[0])),
    "rol_epi64": lambda m, w, a: tuple(m.rotl(t, m.imm(a[1])) for t in m.vec(a[0])),
    "ror_epi64": lambda m, w, a: tuple(m.rotl(t, -m.imm(a[1])) for t in m.vec(a[0])),
    "rolv_epi64": lambda m, w, a: tuple(m.rotl(t, c) for t, c in zip(m.vec(a[0]), m.counts(m.vec(a[1])))),
    "rorv_epi64": lambda m, w, a: tuple(m.rotl(t, -c) for t, c in zip(m.vec(a[0]), m.counts(m.vec(a[1])))),
    "sllv_epi64": lambda m, w, a: tuple(_shift(m, t, c, True) for t, c in zip(m.vec(a[0]), m.counts(m.vec(a[1])))),
    "srlv_epi64": lambda m, w, a: tuple(_shift(m, t, c, False) for t, c in zip(m.vec(a[0]), m.counts(m.vec(a[1])))),
    "set1_epi64x": lambda m, w, a: (a[0],) * w, "set1_epi64": lambda m, w, a: (a[0],) * w,
    "set_epi64x": lambda m, w, a: tuple(reversed(a)), "set_epi64": lambda m, w, a: tuple(reversed(a)),
    "setr_epi8": _setr_epi8,
    "setzero_si128": lambda m, w, a: (m.const(0),) * w, "setzero_si256": lambda m, w, a: (m.const(0),) * w,
    "setzero_si512": lambda m, w, a: (m.const(0),) * w,
    "unpacklo_epi64": _unpack(0), "unpackhi_epi64": _unpack(1),
    "permute2x128_si256": _permute2x128,
    "permute4x64_epi64": lambda m, w, a: tuple(m.vec(a[0])[(m.imm(a[1]) >> (2 * i)) & 3] for i in range(4)),
    "permutex2var_epi64": lambda m, w, a: tuple((m.vec(a[2]) if c & w else m.vec(a[0]))[c & (w - 1)]
                                                for c in m.counts(m.vec(a[1]))),
    "permutexvar_epi64": lambda m, w, a: tuple(m.vec(a[1])[c & (w - 1)] for c in m.counts(m.vec(a[0]))),
    "shuffle_i32x4": _shuffle_i32x4,
    "shuffle_pd": lambda m, w, a: (m.vec(a[0])[m.imm(a[2]) & 1], m.vec(a[1])[(m.imm(a[2]) >> 1) & 1]),
    "castsi128_pd": lambda m, w, a: a[0], "castpd_si128": lambda m, w, a: a[0],
    "castsi128_si256": _widen, "castsi128_si512": _widen, "castsi256_si512": _widen,
    "castsi512_si256": lambda m, w, a: m.vec(a[0])[:4],
    "castsi256_si128": lambda m, w, a: m.vec(a[0])[:2], "castsi512_si128": lambda m, w, a: m.vec(a[0])[:2],
    "shuffle_epi32": _shuffle_epi32,
    "shuffle_epi8": _shuffle_epi8,
    "blend_epi16": _blend(2),
    "blend_epi32": _blend(4),
    "move_sd": lambda m, w, a: (m.vec(a[1])[0], m.vec(a[0])[1]),
    "bslli_si128": _bslli, "bsrli_si128": _bsrli,
    "move_epi64": lambda m, w, a: (m.vec(a[0])[0], m.const(0)),
    "extract_epi64": lambda m, w, a: _lanes(m, a[0], 2)[m.imm(a[1]) & 1],
    "extracti128_si256": _extracti128,
    "broadcastq_epi64": lambda m, w, a: (m.vec(a[0])[0],) * w,
    "movehl_ps": lambda m, w, a: (m.vec(a[1])[1], m.vec(a[0])[1]),
    "movelh_ps": lambda m, w, a: (m.vec(a[0])[0], m.vec(a[1])[0]),
}


def call(bits: int, name: str, *args) -> CExpr:
    """The C call of the intrinsic ``name`` (a ``SEMANTICS`` key) at a vector width: a site of
    ``bits`` / 8 bytes (ints and Scalar operands are scalar, any other operand a vector)."""
    if name not in SEMANTICS:
        raise AssertionError(f"x86 intrinsic {name} has no semantics")
    return intrinsic(f"{_PREFIX[bits]}{name}", bits // 8, args)


# --------------------------------------------------------------------------- vector width

def vector_op(w, name: str, a: str = "", b: str = "") -> CExpr:
    """A width's add/sub/xor of a and b, or its zero vector (every family's Width has ``op``)."""
    return w.op(name, a, b)


@dataclass(frozen=True)
class Width:
    bits: int

    @property
    def lanes(self) -> int:
        return self.bits // 64

    @property
    def p(self) -> str:
        return _PREFIX[self.bits]

    @property
    def T(self) -> str:
        return f"__m{self.bits}i"

    @property
    def si(self) -> str:
        return f"si{self.bits}"

    def set1(self, expr: str) -> str:
        return call(self.bits, "set1_epi64" if self.bits == 512 else "set1_epi64x", Scalar(f"(long long)({expr})"))

    def setv(self, vals) -> str:
        """A constant vector, lane 0 first."""
        return call(self.bits, "set_epi64" if self.bits == 512 else "set_epi64x",
                    *(Scalar(v) for v in reversed(list(vals))))

    # the intrinsic of each lane op ({si}: the width's si128 / si256 / si512)
    OPS = {"add": "add_epi64", "sub": "sub_epi64", "xor": "xor_{si}"}

    def op(self, name: str, a: str = "", b: str = "") -> CExpr:
        if name == "zero":
            return call(self.bits, f"setzero_{self.si}")
        return call(self.bits, self.OPS[name].format(si=self.si), a, b)

    def add(self, a: str, b: str) -> str:
        return vector_op(self, "add", a, b)

    def sub(self, a: str, b: str) -> str:
        return vector_op(self, "sub", a, b)

    def xor(self, a: str, b: str) -> str:
        return vector_op(self, "xor", a, b)

    def zero(self) -> str:
        return vector_op(self, "zero")

    def loadu(self, addr: str, words: int | None = None) -> str:
        words = words or self.lanes
        w = Width(64 * words)
        if w.bits == 512:
            load = call(512, "loadu_si512", Scalar(f"(const void *)({addr})"))
        else:
            load = call(w.bits, f"loadu_{w.si}", Scalar(f"(const {w.T} *)(const void *)({addr})"))   # no -Wcast-align
        return load if w.bits == self.bits else call(self.bits, f"cast{w.si}_{self.si}", load)

    def storeu(self, addr: str, val: str, words: int | None = None) -> str:
        words = words or self.lanes
        w = Width(64 * words)
        if w.bits != self.bits:
            val = call(self.bits, f"cast{self.si}_{w.si}", val)
        if w.bits == 512:
            return call(512, "storeu_si512", Scalar(f"(void *)({addr})"), val).then(";")
        return call(w.bits, f"storeu_{w.si}", Scalar(f"({w.T} *)(void *)({addr})"), val).then(";")


# --------------------------------------------------------------------------- Rust (core::arch)

# The Rust target's SIMD paths (gen/printers/rust.py ``LanesPrinter``) spell these same
# intrinsics: core::arch names them as C does and takes an immediate in its C argument position
# (``rustc_legacy_const_generics``), and since Rust 1.87 an intrinsic that takes no pointer is a
# safe call inside a ``#[target_feature]`` function, so the shuffle candidates, the rotations and
# the lane ops below print the same text for both languages.  What differs is spelled here:
#
# * a scalar operand is cast with ``as i64`` (:func:`rust_i64`) where C writes ``(long long)``;
# * memory: the kernels never touch a pointer.  A row load or store reads or writes a byte array
#   through the crate's helpers ``ld{bits}(&array, word)`` / ``st{bits}(&mut array, word, v)``
#   (templates/rust/lib.rs.j2), each a bounds-checked slice of the array and one ``unsafe``
#   block around the unaligned intrinsic (:func:`rust_memory`: its call and target feature).
RUST_MEMORY_FEATURE = {128: None, 256: "avx", 512: "avx512f"}    # None: SSE2, baseline on x86-64
RUST_TYPES = {128: "__m128i", 256: "__m256i", 512: "__m512i"}


def rust_i64(expr) -> str:
    """A u64 (or usize) Rust expression as the i64 an intrinsic takes."""
    text = str(expr)
    if text.isdigit() or (text.startswith("0x") and int(text, 16) < 1 << 63):
        return text
    if re.fullmatch(r"[A-Za-z_][\w.]*(\[[^\]]*\])?", text):
        return f"{text} as i64"
    return f"({text}) as i64"


def rust_memory(bits: int) -> dict:
    """The crate's row helpers of one vector width: their names, the vector type, the target
    feature the helper enables (None: baseline), and the intrinsic calls they wrap (``s``: the
    bounds-checked byte slice, ``v``: the vector stored)."""
    w = Width(bits)
    load = f"loadu_{w.si}"
    store = f"storeu_{w.si}"
    return dict(bits=bits, bytes=bits // 8, T=RUST_TYPES[bits], feature=RUST_MEMORY_FEATURE[bits],
                load_name=f"ld{bits}", store_name=f"st{bits}",
                load=call(bits, load, Scalar("s.as_ptr().cast()")),
                store=call(bits, store, Scalar("s.as_mut_ptr().cast()"), "v"))


@dataclass(frozen=True)
class RustWidth(Width):
    """A vector width spelled in Rust: :class:`Width`'s intrinsics, with Rust's casts and the
    crate's row helpers for memory (``addr``: ``"&array, word"`` of the helper)."""

    @property
    def T(self) -> str:
        return RUST_TYPES[self.bits]

    def set1(self, expr: str) -> str:
        return call(self.bits, "set1_epi64" if self.bits == 512 else "set1_epi64x", Scalar(rust_i64(expr)))

    def set1_index(self, expr: str) -> str:
        """Every lane a usize expression of the loop counter (cast as any operand)."""
        return self.set1(expr)

    def loadu(self, addr: str, words: int | None = None) -> str:
        w = Width(64 * (words or self.lanes))
        load = CExpr(f"{rust_memory(w.bits)['load_name']}({addr})")
        return load if w.bits == self.bits else call(self.bits, f"cast{w.si}_{self.si}", load)

    def storeu(self, addr: str, val: str, words: int | None = None) -> str:
        w = Width(64 * (words or self.lanes))
        if w.bits != self.bits:
            val = call(self.bits, f"cast{self.si}_{w.si}", val)
        return CExpr(f"{rust_memory(w.bits)['store_name']}({addr}, {val});")


# --------------------------------------------------------------------------- lane shuffles

def _cand(cost: int, n: int, fmt: str, name: str, args: tuple):
    """A shuffle candidate: (cost, C format with {a} {b}, lane pattern from SEMANTICS)."""
    return cost, fmt, lane_sources(SEMANTICS[name], n, args)


def shuffle_candidates(isa: Isa, width: Width):
    """(cost, format with {a} {b}, semantics: per output lane (0 = a / 1 = b, lane))."""
    n, bits = width.lanes, width.bits
    c = [_cand(1, n, call(bits, "unpacklo_epi64", A, B), "unpacklo_epi64", ("a", "b")),
         _cand(1, n, call(bits, "unpackhi_epi64", A, B), "unpackhi_epi64", ("a", "b"))]
    for x in (0, 1):
        for y in (0, 1):
            imm = (2 * x) | (2 * x + 1) << 2 | (2 * y) << 4 | (2 * y + 1) << 6
            c.append(_cand(1, n, call(bits, "shuffle_epi32", A, Scalar(f"{imm:#04x}")), "shuffle_epi32", ("a", imm)))
    if n == 2:
        if isa.level >= 2:
            c.append(_cand(1, n, call(128, "blend_epi16", A, B, Scalar("0xf0")), "blend_epi16", ("a", "b", 0xf0)))
        for imm in range(4):
            fmt = call(128, "castpd_si128", call(128, "shuffle_pd", call(128, "castsi128_pd", A),
                                                 call(128, "castsi128_pd", B), imm))
            c.append(_cand(1, n, fmt, "shuffle_pd", ("a", "b", imm)))
    if n == 4:
        for m in range(16):
            imm = sum(3 << (2 * k) for k in range(4) if m >> k & 1)
            c.append(_cand(1, n, call(256, "blend_epi32", A, B, Scalar(f"{imm:#04x}")), "blend_epi32", ("a", "b", imm)))
        for s0 in range(4):
            for s1 in range(4):
                imm = s0 | s1 << 4
                c.append(_cand(2, n, call(256, "permute2x128_si256", A, B, Scalar(f"{imm:#04x}")),
                               "permute2x128_si256", ("a", "b", imm)))
        for imm in range(256):
            c.append(_cand(2, n, call(256, "permute4x64_epi64", A, Scalar(f"{imm:#04x}")), "permute4x64_epi64", ("a", imm)))
    if n == 8:
        for imm in range(256):
            c.append(_cand(2, n, call(512, "shuffle_i32x4", A, B, Scalar(f"{imm:#04x}")), "shuffle_i32x4",
                           ("a", "b", imm)))
    return c


def index_permute(isa: Isa, width: Width, pattern: tuple, order: tuple, nsrcs: int) -> str | None:
    """AVX-512 vpermq / vpermt2q with an index vector: any pattern of 4 or 8 lanes."""
    n = width.lanes
    if isa.level < 4 or n < 4:
        return None
    a, b = order
    idx = [(0 if p is None else (0 if p[0] == a else n) + p[1]) for p in pattern]
    if nsrcs == 1:
        return call(width.bits, "permutexvar_epi64", width.setv(idx), a)
    return call(width.bits, "permutex2var_epi64", a, width.setv(idx), b)


# --------------------------------------------------------------------------- rotations

def byte_rotate_mask(width: Width, n) -> str:
    """pshufb control rotating every 64-bit lane left by n bits (a multiple of 8), or lane w
    by n[w] bits when n is a tuple of per-lane counts."""
    counts = n if isinstance(n, tuple) else (n,) * width.lanes
    idx = [8 * (w % 2) + (i - counts[w] // 8) % 8 for w in range(width.lanes) for i in range(8)]
    return call(width.bits, "setr_epi8", *idx)


def _has_rol(isa: Isa, width: Width) -> bool:
    return isa.rol and (width.bits == 512 or isa.vl)


def rotl_uniform(isa: Isa, width: Width, x: str, n: int, consts: dict) -> tuple[str, str]:
    """(expression, kind) rotating every lane of x left by n; kind names the cost class."""
    bits = width.bits
    if _has_rol(isa, width):
        return call(bits, "rol_epi64", x, n), "rotate"
    if n == 32:
        return call(bits, "shuffle_epi32", x, Scalar("0xb1")), "shuffle"
    if n % 8 == 0 and isa.pshufb:
        name = f"rot{n}"
        consts[name] = byte_rotate_mask(width, n)
        return call(bits, "shuffle_epi8", x, name), "shuffle"
    return call(bits, f"or_{width.si}", call(bits, "slli_epi64", x, n), call(bits, "srli_epi64", x, 64 - n)), "shifts"


def rotl_lanes(isa: Isa, width: Width, x: str, counts: tuple, consts: dict) -> tuple[str, str, int]:
    """(expression, cost class, instructions) rotating lane k of x left by counts[k]."""
    bits = width.bits
    if len(set(counts)) == 1:
        expr, kind = rotl_uniform(isa, width, x, counts[0], consts)
        return expr, kind, 3 if kind == "shifts" else 1
    tag = "_".join(map(str, counts))
    if _has_rol(isa, width):
        consts[f"rc_{tag}"] = width.setv(counts)
        return call(bits, "rolv_epi64", x, f"rc_{tag}"), "rotate", 1
    if isa.pshufb and all(c % 8 == 0 for c in counts):
        consts[f"rb_{tag}"] = byte_rotate_mask(width, tuple(counts))
        return call(bits, "shuffle_epi8", x, f"rb_{tag}"), "shuffle", 1
    if isa.level >= 3:          # AVX2 variable shifts
        consts[f"rc_{tag}"] = width.setv(counts)
        consts[f"rr_{tag}"] = width.setv([64 - c for c in counts])
        return (call(bits, f"or_{width.si}", call(bits, "sllv_epi64", x, f"rc_{tag}"),
                     call(bits, "srlv_epi64", x, f"rr_{tag}")), "shifts", 3)
    # SSE2/AVX: every distinct count rotates the whole vector, then a blend picks the lanes.
    parts, n = {}, 0
    for c in dict.fromkeys(counts):
        expr, kind = rotl_uniform(isa, width, x, c, consts)
        parts[c] = expr
        n += 3 if kind == "shifts" else 1
    return shuffle(X86, isa, width, tuple((parts[c], k) for k, c in enumerate(counts))), "split shifts", n + 1


# --------------------------------------------------------------------------- NASM

# NASM vector instructions, as the prove reader (gen/prove/nasm.py) reads them: every mnemonic
# (without the ``v`` of its VEX/EVEX form) is a SEMANTICS row, or a NASM_ROWS row where no C
# intrinsic has the meaning, and how its operands map onto the row's arguments.  The reader
# decodes the operands (registers, memory, widths, immediates) and keeps the loads and stores;
# what an instruction computes and which operand forms it has are read here, nowhere else.
#
# Operands: the VEX/EVEX form reads its sources after the destination; the legacy SSE form is
# two-operand, d = row(d, s, ...) where ``reads_dest``, else d = row(s, ...) (pshufd, the moves).
# A memory operand holds ``mem`` lanes (None: the vector width; 0: no memory form; a GPR
# operand is one lane and allowed where ``mem`` is 1); a GPR or 64-bit memory destination
# receives lane 0 of the row's lanes.  Only ``store`` forms may have a memory (or GPR)
# destination.  Alignment: ``aligned`` True faults unless the memory operand is aligned to its
# size (movdqa, every encoding), False never, None the legacy SSE rule (an m128 operand of the
# SSE form 16-byte aligned, the VEX form any).  ``vex``: only the v-prefixed form exists.
# ``memory``: the mnemonic whose reading a form with a memory operand has (movsd's memory forms
# are movq's).  An instruction without operands applies its row to every register it names
# (vzeroupper: ymm0..15, ``every``).


@dataclass(frozen=True)
class NasmForm:
    row: str                    # SEMANTICS key ({bits}: the vector width) or NASM_ROWS key
    reads_dest: bool = False
    mem: int | None = None
    store: bool = False
    aligned: bool | None = None
    vex: bool = False
    memory: str | None = None
    every: int = 0


# meanings of NASM instructions that no C intrinsic spells: a vector copy (a move between
# registers, a load or a store: the reader does the memory part) and vzeroupper on one register
NASM_ROWS = {
    "copy": lambda m, w, a: m.vec(a[0]),
    "zeroupper": lambda m, w, a: m.vec(a[0])[:2] + (m.const(0),) * (len(m.vec(a[0])) - 2),
}

NASM = {
    # lane-wise, shifts and rotations by an immediate count
    "paddq": NasmForm("add_epi64", True), "psubq": NasmForm("sub_epi64", True),
    "pxor": NasmForm("xor_si{bits}", True), "por": NasmForm("or_si{bits}", True),
    "pxorq": NasmForm("xor_si{bits}", vex=True), "porq": NasmForm("or_si{bits}", vex=True),
    "psllq": NasmForm("slli_epi64", True), "psrlq": NasmForm("srli_epi64", True),
    "prolq": NasmForm("rol_epi64", vex=True), "prorq": NasmForm("ror_epi64", vex=True),
    # lane moves within 128-bit lanes (the packed layout's, the lanes kernels' transposes)
    "punpcklqdq": NasmForm("unpacklo_epi64", True), "unpcklpd": NasmForm("unpacklo_epi64", True),
    "punpckhqdq": NasmForm("unpackhi_epi64", True), "unpckhpd": NasmForm("unpackhi_epi64", True),
    "shufpd": NasmForm("shuffle_pd", True),
    "pshufd": NasmForm("shuffle_epi32"),
    "pslldq": NasmForm("bslli_si128", True, mem=0), "psrldq": NasmForm("bsrli_si128", True, mem=0),
    "movsd": NasmForm("move_sd", True, mem=0, memory="movq"),
    "movhlps": NasmForm("movehl_ps", True, mem=0), "movlhps": NasmForm("movelh_ps", True, mem=0),
    # across 128-bit lanes
    "perm2i128": NasmForm("permute2x128_si256", vex=True), "shufi64x2": NasmForm("shuffle_i32x4", vex=True),
    "extracti128": NasmForm("extracti128_si256", mem=2, store=True, vex=True),
    "pbroadcastq": NasmForm("broadcastq_epi64", mem=1, vex=True),
    # moves: whole vectors, one lane
    **{m: NasmForm("copy", store=True, aligned=True) for m in ("movdqa", "movaps", "movapd", "movdqa32", "movdqa64")},
    **{m: NasmForm("copy", store=True, aligned=False) for m in ("movdqu", "movups", "movupd", "movdqu32", "movdqu64")},
    "movq": NasmForm("move_epi64", mem=1, store=True),
    "pextrq": NasmForm("extract_epi64", mem=1, store=True),
    "zeroupper": NasmForm("zeroupper", vex=True, every=16),
}


def nasm_form(mnemonic: str) -> NasmForm | None:
    """How a NASM mnemonic (without its ``v`` prefix) is read, or None (not an x86 vector
    instruction the reader knows)."""
    return NASM.get(mnemonic)


def nasm_semantics(mnemonic: str, lanes: int):
    """The row of a NASM mnemonic (without its ``v`` prefix) on ``lanes`` lanes, or None."""
    f = NASM.get(mnemonic)
    if f is None:
        return None
    return NASM_ROWS.get(f.row) or SEMANTICS[f.row.format(bits=64 * lanes)]


# The machine-op kinds of the packed XMM lowering (gen/asm/lower_packed.py, SSE2): NASM form
# ({d} destination, {s} source, {n} count), the SEMANTICS row and its arguments ('d', 's', or
# constants): what the printer prints, the machine-op interpreter runs and the lowering searches.
PACKED_MOVES = {
    "lolo": ("punpcklqdq {d}, {s}", "unpacklo_epi64", ("d", "s")),      # (d.lo, s.lo)
    "hihi": ("punpckhqdq {d}, {s}", "unpackhi_epi64", ("d", "s")),      # (d.hi, s.hi)
    "hilo": ("shufpd {d}, {s}, 1", "shuffle_pd", ("d", "s", 1)),        # (d.hi, s.lo)
    "lohi": ("shufpd {d}, {s}, 2", "shuffle_pd", ("d", "s", 2)),        # (d.lo, s.hi)
    "movsd": ("movsd {d}, {s}", "move_sd", ("d", "s")),                 # (s.lo, d.hi); register source only
    "swap": ("pshufd {d}, {s}, 0x4e", "shuffle_epi32", ("s", 0x4E)),    # (s.hi, s.lo)
    "bshl": ("pslldq {d}, {n}", "bslli_si128", ("d", "n")),             # whole register left by n bytes
}


# NASM forms of the machine-op kinds per register class (gen/printers/nasm.py prints them):
# {d} destination, {s} source, {n} count.  Keys: (kind, operand shape) with shape 'rr'
# (register, register), 'rm' (register, memory), 'mr' (memory, register), 'ri' (immediate).
X64_OPS = {
    "mov": "mov {d}, {s}",
    "add": "add {d}, {s}",
    "sub": "sub {d}, {s}",
    "xor": "xor {d}, {s}",
    "xchg": "xchg {d}, {s}",
    "rol": "rol {d}, {n}",
}
X64_RORX = {"rol": "rorx {d}, {d}, {m}"}      # BMI2: rotate right by 64-n, flags untouched
# shld d, d, n: a rotate left by n (both operands the same register) on another port than rol/rorx
# on Intel cores from Ice Lake / Golden Cove on (rol and rorx share the two shift ports p0/p6, shld
# runs on p1: SUPERCOP's skein512256/sandy uses it); --rotate mix alternates rol and shld.
X64_SHLD = {"rol": "shld {d}, {d}, {n}"}
X64_ROTATES = {"rol": {}, "rorx": X64_RORX, "shld": X64_SHLD}
X86_XMM_OPS = {
    ("mov", "rr"): "movdqa {d}, {s}",
    ("mov", "rm"): "movq {d}, {s}",         # 64-bit load: any alignment
    ("mov", "mr"): "movq {d}, {s}",         # 64-bit store: any alignment
    "add": "paddq {d}, {s}",                 # memory source only from 16-aligned stack slots
    "sub": "psubq {d}, {s}",
    "xor": "pxor {d}, {s}",
    "or": "por {d}, {s}",
    "shl": "psllq {d}, {n}",
    "shr": "psrlq {d}, {n}",
}
# --layout packed: every XMM value is two 64-bit lanes (gen/asm/lower_packed.py).  Shapes: r register,
# s aligned stack slot, p caller memory (any alignment).
X86_PACKED_OPS = {
    ("mov", "rr"): "movdqa {d}, {s}",
    ("mov", "rs"): "movdqa {d}, {s}",       # spill slot / subkey table / constant: 16-aligned
    ("mov", "sr"): "movdqa {d}, {s}",
    ("mov", "rp"): "movq {d}, {s}",         # one key or tweak word, high lane zeroed
    ("mov", "pr"): "movdqu {d}, {s}",       # two words of the block, any alignment
    "ldu": "movdqu {d}, {s}",               # two words of the block, any alignment
    "add": "paddq {d}, {s}",
    "sub": "psubq {d}, {s}",
    "xor": "pxor {d}, {s}",
    "or": "por {d}, {s}",
    "shl": "psllq {d}, {n}",
    "shr": "psrlq {d}, {n}",
    # the lane moves (lolo, hihi, hilo, lohi, movsd, swap, bshl)
    **{kind: form for kind, (form, _, _) in PACKED_MOVES.items()},
}
X86_GPR_OPS = {"mov": "mov {d}, {s}", "add": "add {d}, {s}", "sub": "sub {d}, {s}",
               "xor": "xor {d}, {s}", "xchg": "xchg {d}, {s}"}


ZMM_OPS = {
    ("mov", "rr"): "vmovdqa64 {d}, {s}",
    ("mov", "rm"): "vmovdqu64 {d}, {s}",    # stack slot or 8 words of the caller's, any alignment
    ("mov", "mr"): "vmovdqu64 {d}, {s}",
    "add": "vpaddq {d}, {d}, {s}",
    "sub": "vpsubq {d}, {d}, {s}",
    "xor": "vpxorq {d}, {d}, {s}",
    "rol": "vprolq {d}, {d}, {n}",
    "bcast": "vpbroadcastq {d}, {s}",        # key word / constant to every lane
}



YMM_OPS = {
    ("mov", "rr"): "vmovdqa {d}, {s}",
    ("mov", "rm"): "vmovdqu {d}, {s}",
    ("mov", "mr"): "vmovdqu {d}, {s}",
    "add": "vpaddq {d}, {d}, {s}",
    "sub": "vpsubq {d}, {d}, {s}",
    "xor": "vpxor {d}, {d}, {s}",
    "or": "vpor {d}, {d}, {s}",
    "shl": "vpsllq {d}, {d}, {n}",
    "shr": "vpsrlq {d}, {d}, {n}",
    "bcast": "vpbroadcastq {d}, {s}",
}


# The lanes kernels' transposes (gen/asm/lowering.py lower_lanes): the two-source lane moves of
# each vector class, as machine-op kinds.  NASM form (two-address: {d} = op({d}, {s}); a
# printer may fold the copy before it into the three-operand form), the SEMANTICS row and its
# arguments ('d', 's' or constants): what the printer prints, the machine-op interpreter runs and
# the lowering matches the layout IR's shuffles against (:func:`lane_move_pattern`).
LANE_MOVES = {
    "ymm": {
        "unpcklo": ("vpunpcklqdq {d}, {a}, {s}", "unpacklo_epi64", ("d", "s")),        # (d0, s0, d2, s2)
        "unpckhi": ("vpunpckhqdq {d}, {a}, {s}", "unpackhi_epi64", ("d", "s")),        # (d1, s1, d3, s3)
        "lo128": ("vperm2i128 {d}, {a}, {s}, 0x20", "permute2x128_si256", ("d", "s", 0x20)),  # (d0, d1, s0, s1)
        "hi128": ("vperm2i128 {d}, {a}, {s}, 0x31", "permute2x128_si256", ("d", "s", 0x31)),  # (d2, d3, s2, s3)
    },
    "zmm": {
        "unpcklo": ("vpunpcklqdq {d}, {a}, {s}", "unpacklo_epi64", ("d", "s")),
        "unpckhi": ("vpunpckhqdq {d}, {a}, {s}", "unpackhi_epi64", ("d", "s")),
        # 128-bit chunks: even ones of d then of s / odd ones; low halves / high halves
        "even128": ("vshufi64x2 {d}, {a}, {s}, 0x88", "shuffle_i32x4", ("d", "s", 0x88)),
        "odd128": ("vshufi64x2 {d}, {a}, {s}, 0xdd", "shuffle_i32x4", ("d", "s", 0xDD)),
        "lo256": ("vshufi64x2 {d}, {a}, {s}, 0x44", "shuffle_i32x4", ("d", "s", 0x44)),
        "hi256": ("vshufi64x2 {d}, {a}, {s}, 0xee", "shuffle_i32x4", ("d", "s", 0xEE)),
    },
}
# the lo/hi pairs of LANE_MOVES that exchange one lane bit with the a/b bit (the transposes'
# stages, gen/layouts/transpose.py bit_network)
LANE_PAIRS = {"ymm": (("unpcklo", "unpckhi"), ("lo128", "hi128")),
              "zmm": (("unpcklo", "unpckhi"), ("even128", "odd128"), ("lo256", "hi256"))}


def lane_move_pattern(cls: str, kind: str) -> tuple:
    """The lane pattern of a LANE_MOVES kind: per output lane (0 = d / 1 = s, lane)."""
    _, op, args = LANE_MOVES[cls][kind]
    n = {"ymm": 4, "zmm": 8}[cls]
    return lane_sources(SEMANTICS[op], n, tuple({"d": "a", "s": "b"}.get(x, x) for x in args))


def lane_move(cls: str, kind: str, m, d, s):
    """The lanes a LANE_MOVES kind writes, from d (its destination's old lanes) and s, read by
    the lane reader m."""
    _, op, args = LANE_MOVES[cls][kind]
    d, s = tuple(d), tuple(s)
    return SEMANTICS[op](m, len(d), [{"d": d, "s": s}.get(x, x) if isinstance(x, str) else x for x in args])


def packed_move(kind: str, m, d, s, n=None):
    """The two lanes a packed lane-move kind writes, from d (its destination's old lanes), s (its
    source's) and n (its count), read by the lane reader m."""
    _, op, args = PACKED_MOVES[kind]
    return SEMANTICS[op](m, 2, [{"d": d, "s": s, "n": n}.get(x, x) if isinstance(x, str) else x for x in args])


def packed_lane_kind(h1: int, h2: int) -> str:
    """The two-source lane-move kind whose result is (d lane h1, s lane h2)."""
    for kind, (_, op, args) in PACKED_MOVES.items():
        if "d" in args and "s" in args and lane_sources(
                SEMANTICS[op], 2, tuple({"d": "a", "s": "b"}.get(x, x) for x in args)) == ((0, h1), (1, h2)):
            return kind
    raise GenError(f"no SSE2 lane move builds (d.{h1}, s.{h2})")


class X86:
    """The x86 instruction family: what the SIMD C printers ask an ISA's family for.  Other
    families (gen/isa/neon.py) provide the same names."""
    width = Width
    rust_width = RustWidth
    rust_memory = staticmethod(rust_memory)
    rust_row_bits = (128, 256, 512)      # the widths of the Rust row helpers (rust_memory)
    shuffle_candidates = staticmethod(shuffle_candidates)
    index_permute = staticmethod(index_permute)
    rotl_uniform = staticmethod(rotl_uniform)
    rotl_lanes = staticmethod(rotl_lanes)
    shift_ops = 3          # a rotation by shifts: shift left, shift right, or
