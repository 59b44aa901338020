"""Per-CPU port models (data): which execution ports each class of operation the generated code
uses may issue to, how wide the front end is, and the latencies of the operations on a
Threefish dependency chain.  ``bounds.py`` turns a variant's operation counts into a
throughput bound (and a program into a latency bound) with one of these; ``make bench`` prints
it beside every row.  Sources and the figures that are assumptions: docs/bench.md, "Bounds".

Operation classes (what bounds.py counts):

=========  ===============================================================================
alu        scalar add / sub / xor / mov-immediate (r64)
rot        scalar rotate by immediate (rol/ror r64, imm8; rorx)
load       a scalar load (also the load half of ``add r64, [mem]``)
store      a scalar store
mov        a register copy: renamed away (move elimination), costs a front-end slot only
vadd       vpaddq / vpsubq
vxor       vpxor / vpor / vpand (vector logic)
vshift     vpsllq / vpsrlq by immediate (AVX2 and SSE2 rotate = 2 shifts + or)
vrot       vprolq (AVX-512)
shuffle    vpermq / vpshufd / vpunpck{l,h}qdq / vpshufb / broadcasts / inserts
vload      a vector load
vstore     a vector store
=========  ===============================================================================

A model lists, per class, the ports (names) that can execute it; a class that shares a port
with another (Intel: scalar and vector ALUs on p0/p1/p5) competes for it.  ``ports512`` and
``cost512`` say what a 512-bit operation takes: other ports (Intel: port 1's vector ALU is
fused off for 512-bit uops) and how many cycles of a port (Zen 4: 2, its 512-bit ops run as
two 256-bit halves on 256-bit pipes; Zen 5: 1, full 512-bit datapaths)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

SCALAR_CLASSES = ("alu", "rot", "load", "store", "mov")
VECTOR_CLASSES = ("vadd", "vxor", "vshift", "vrot", "shuffle", "vload", "vstore")


@dataclass(frozen=True)
class PortModel:
    key: str                     # short name (bench prints it)
    name: str                    # what it models
    ports: dict                  # class -> tuple of port names
    front_end: int               # macro-ops renamed/dispatched per cycle
    latency: dict                # class -> cycles (dependency chains)
    ports512: dict = field(default_factory=dict)   # class -> ports for 512-bit operations
    cost512: int = 1             # port cycles one 512-bit operation takes
    assumed: tuple = ()          # the figures of this model that are assumptions (docs/bench.md)

    def ports_for(self, cls: str, bits: int = 64) -> tuple:
        if bits >= 512 and cls in self.ports512:
            return self.ports512[cls]
        return self.ports.get(cls, ())

    def cost(self, cls: str, bits: int = 64) -> int:
        return self.cost512 if bits >= 512 and cls in VECTOR_CLASSES else 1


def _ports(prefix: str, n: int, first: int = 0) -> tuple:
    return tuple(f"{prefix}{i}" for i in range(first, first + n))


# AMD Zen 3 (family 19h, models 00-0F, 20-5F): AMD SOG for family 19h (#56665), Agner Fog's
# microarchitecture guide ("Zen 3"), uops.info (ROL r64,imm8 0.5 c throughput: 2 ports).
ZEN3 = PortModel(
    key="zen3", name="AMD Zen 3 (family 19h)",
    ports={"alu": _ports("ALU", 4), "rot": ("ALU1", "ALU2"), "load": _ports("AGU", 3),
           "store": ("AGU0", "AGU1"), "mov": (),
           "vadd": _ports("FP", 4), "vxor": _ports("FP", 4), "vshift": ("FP1", "FP2"),
           "vrot": ("FP1", "FP2"), "shuffle": ("FP1", "FP2"), "vload": ("AGU0", "AGU1"),
           "vstore": ("AGU0",)},
    front_end=6,
    latency={"alu": 1, "rot": 1, "load": 4, "vadd": 1, "vxor": 1, "vshift": 1, "vrot": 1,
             "shuffle": 1, "vload": 7},
    cost512=2, assumed=("vrot (no AVX-512 on Zen 3: never used)",))

# AMD Zen 4 (family 19h, models 10-1F, 60-7F, A0-AF): same integer core as Zen 3; AVX-512 on the
# 256-bit pipes, each 512-bit op two halves (AMD SOG for family 19h; A. Yee, "Zen4's AVX512
# teardown"; uops.info VPROLQ).
ZEN4 = replace(ZEN3, key="zen4", name="AMD Zen 4 (family 19h, AVX-512 on 256-bit pipes)",
               cost512=2, assumed=("vrot on the shift pipes FP1/FP2",))

# AMD Zen 5 (family 1Ah): 6 ALUs, 4 load pipes, 8-wide dispatch, full 512-bit vector datapaths
# (AMD SOG for family 1Ah (#58455); A. Yee, "Zen5's AVX512 teardown"); every simple vector
# integer op 2 cycles of latency (measured by this project, docs/bench.md "Layout packed").
ZEN5 = replace(
    ZEN3, key="zen5", name="AMD Zen 5 (family 1Ah, 512-bit datapaths)",
    ports={**ZEN3.ports, "alu": _ports("ALU", 6), "load": _ports("AGU", 4)},
    front_end=8,
    latency={**ZEN3.latency, "vadd": 2, "vxor": 2, "vshift": 2, "vrot": 2, "shuffle": 2},
    cost512=1,
    assumed=("rot on 2 of the 6 ALUs (as Zen 3/4)", "vshift/vrot/shuffle on 2 pipes (as Zen 4)"))

# Intel Ice Lake server (Sunny Cove; family 6 models 6A, 6C; client 7D, 7E, Tiger Lake 8C, 8D):
# Intel 64 and IA-32 Architectures Optimization Reference Manual; uops.info (ICL); Agner Fog's
# instruction tables.  512-bit uops: p0 + p5 (p1's vector ALU is fused into p0).
ICELAKE = PortModel(
    key="icl", name="Intel Ice Lake (Sunny Cove, AVX-512)",
    ports={"alu": ("p0", "p1", "p5", "p6"), "rot": ("p0", "p6"), "load": ("p2", "p3"),
           "store": ("p4", "p9"), "mov": (),
           "vadd": ("p0", "p1", "p5"), "vxor": ("p0", "p1", "p5"), "vshift": ("p0", "p1"),
           "vrot": ("p0", "p1"), "shuffle": ("p5",), "vload": ("p2", "p3"), "vstore": ("p4",)},
    ports512={"vadd": ("p0", "p5"), "vxor": ("p0", "p5"), "vshift": ("p0",), "vrot": ("p0",),
              "shuffle": ("p5",)},
    front_end=5,
    latency={"alu": 1, "rot": 1, "load": 5, "vadd": 1, "vxor": 1, "vshift": 1, "vrot": 1,
             "shuffle": 1, "vload": 7},
    assumed=("shuffles on p5 only (the p1 in-lane shuffle unit is not modelled)",))

# Intel Sapphire Rapids / Emerald Rapids (Golden Cove; family 6 models 8F, CF): 6-wide rename,
# a fifth ALU (p10), a third load port (p11).
SAPPHIRE_RAPIDS = replace(
    ICELAKE, key="spr", name="Intel Sapphire Rapids (Golden Cove, AVX-512)", front_end=6,
    ports={**ICELAKE.ports, "alu": ("p0", "p1", "p5", "p6", "p10"), "load": ("p2", "p3", "p11")})

# Anything else: a documented middle of the road (4 ALUs, 2 rotating; 3 vector ALUs, 2 shifting,
# 1 shuffling; 512-bit ops at half rate; 4-wide; 2 loads + 1 store; 1-cycle latencies).
GENERIC = PortModel(
    key="generic", name="generic x86-64 (assumed figures)",
    ports={"alu": _ports("I", 4), "rot": ("I0", "I1"), "load": ("L0", "L1"), "store": ("S0",),
           "mov": (), "vadd": _ports("V", 3), "vxor": _ports("V", 3), "vshift": ("V0", "V1"),
           "vrot": ("V0", "V1"), "shuffle": ("V2",), "vload": ("L0", "L1"), "vstore": ("S0",)},
    front_end=4,
    latency={"alu": 1, "rot": 1, "load": 4, "vadd": 1, "vxor": 1, "vshift": 1, "vrot": 1,
             "shuffle": 1, "vload": 6},
    cost512=2, assumed=("every figure",))

MODELS = (ZEN3, ZEN4, ZEN5, ICELAKE, SAPPHIRE_RAPIDS, GENERIC)

# (vendor, family, model ranges) -> model; first match wins
TABLE = (
    ("AuthenticAMD", 0x19, ((0x00, 0x0F), (0x20, 0x5F)), ZEN3),
    ("AuthenticAMD", 0x19, ((0x10, 0x1F), (0x60, 0x7F), (0xA0, 0xAF)), ZEN4),
    ("AuthenticAMD", 0x1A, ((0x00, 0xFF),), ZEN5),
    ("GenuineIntel", 6, ((0x6A, 0x6A), (0x6C, 0x6C), (0x7D, 0x7E), (0x8C, 0x8D)), ICELAKE),
    ("GenuineIntel", 6, ((0x8F, 0x8F), (0xCF, 0xCF)), SAPPHIRE_RAPIDS),
)


def model_for(vendor: str, family: int, model: int) -> PortModel:
    """The port model of a CPU (cpuid vendor string, family and model as /proc/cpuinfo gives
    them); GENERIC where the table has no entry."""
    for ven, fam, ranges, pm in TABLE:
        if vendor == ven and family == fam and any(lo <= model <= hi for lo, hi in ranges):
            return pm
    return GENERIC
