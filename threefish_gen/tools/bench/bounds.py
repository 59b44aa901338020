"""Bounds: how fast a variant could run on a CPU's ports (ports.py), from what it executes.

* :func:`program_work` counts the machine operations of a described Program (gen/threefish.py):
  per class (ports.py: alu, rot, load, store, mov; or their vector forms when the words
  live in vector registers) and front-end slots, loops multiplied out.
* :func:`layout_work` maps the operation counts a SIMD layout reports (gen/printers/c_simd/driver.py
  op_counts) onto the same classes.
* :func:`throughput_cycles` is the least number of cycles a pass of that work takes on a port
  model: the most loaded set of ports (for every union S of classes' port sets: the work that
  can only go to S, over |S|), or the front end, whichever is more.
* :func:`latency_cycles` is the longest dependency chain from the input block to the output
  block of a Program, in the model's latencies (a run of adds into one word that nothing reads
  in between is summed in the fastest tree: compilers reassociate the key-injection adds).

Bounds are lower bounds under the model: register spills, loop overhead and scheduling
conflicts are not counted (docs/bench.md, "Bounds")."""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from itertools import combinations

from threefish_gen.gen.dsl import Idx, Loop, Mem

from .ports import VECTOR_CLASSES, PortModel


@dataclass
class Work:
    """Operations of one pass: ``counts`` per class, ``uops`` front-end slots, ``blocks`` per
    pass, ``bits`` the vector width of the vector classes (64: none)."""

    counts: dict = field(default_factory=dict)
    uops: float = 0.0
    blocks: int = 1
    bits: int = 64

    def add(self, cls: str, n: float = 1.0, uops: float | None = None) -> None:
        self.counts[cls] = self.counts.get(cls, 0.0) + n
        self.uops += n if uops is None else uops

    def merge(self, other: "Work") -> "Work":
        """Two kinds of work in one pass (e.g. layout hybrid: vector blocks beside scalar ones)."""
        out = Work(dict(self.counts), self.uops + other.uops, self.blocks + other.blocks, max(self.bits, other.bits))
        for k, n in other.counts.items():
            out.counts[k] = out.counts.get(k, 0.0) + n
        return out


# How a description op runs where the words live: GPRs (64) or vector registers (bits > 64):
# (classes it occupies, front-end slots).  ``rotate_ops``: 1 (rol, vprolq) or 3 (2 shifts + or).
def _op_classes(kind: str, mem: bool, vector: bool, rotate_ops: int) -> tuple[list, int]:
    if kind in ("rotl", "rotr"):
        if not vector:
            return ["rot"], 1
        return (["vrot"], 1) if rotate_ops == 1 else (["vshift", "vshift", "vxor"], 3)
    if kind == "store":
        return ["vstore" if vector else "store"], 1
    if kind == "mov":
        return (["vload" if vector else "load"] if mem else ["mov"]), 1
    alu = {"add": "vadd", "sub": "vadd", "xor": "vxor"}[kind] if vector else "alu"
    return ([alu, "vload" if vector else "load"] if mem else [alu]), 1   # add r, [m]: one fused slot


def program_work(prog, bits: int = 64, rotate_ops: int = 1, setup: bool = False) -> Work:
    """The operations of a Program's body (``setup``: and of its key setup, which runs once per
    call), loops multiplied out; ``bits`` > 64: every word in its own vector register of that
    width."""
    w = Work(blocks=prog.blocks, bits=bits)
    vector = bits > 64
    for item in (prog.setup if setup else []) + prog.body:
        body, times = (item.body, item.count) if isinstance(item, Loop) else ([item], 1)
        for op in body:
            if op.kind == "note":
                continue
            mem = isinstance(op.a, Mem) and op.kind != "store"
            if op.kind == "mov" and not mem and isinstance(op.a, Idx):
                classes, slots = ["alu" if not vector else "vxor"], 1      # a constant
            else:
                classes, slots = _op_classes(op.kind, mem, vector, rotate_ops)
            for c in classes:
                w.add(c, times, uops=0)
            w.uops += slots * times
    return w


# The SIMD layout's reported counts (gen/printers/c_simd/driver.py op_counts; per block) -> classes.
# "shifts" counts the three instructions of a shift rotate (2 shifts + or: gen/isa/x86.py).
LAYOUT_CLASSES = {"add/sub": {"vadd": 1}, "xor": {"vxor": 1}, "rotate": {"vrot": 1},
                  "shifts": {"vshift": 2 / 3, "vxor": 1 / 3}, "shuffle": {"shuffle": 1},
                  "shuffle (transpose)": {"shuffle": 1}, "broadcast": {"shuffle": 1},
                  "subkey insert": {"shuffle": 1}}


def layout_work(counts: dict, vector_blocks: int, bits: int, nw: int) -> Work:
    """A pass of ``vector_blocks`` blocks from per-block layout counts; plus the block loads and
    stores the layout does not count (nw words in and out, 2 tweak words in, per block)."""
    w = Work(blocks=vector_blocks, bits=bits)
    for key, n in counts.items():
        for cls, share in LAYOUT_CLASSES.get(key, {}).items():
            w.add(cls, n * share * vector_blocks)
    words = 64 * vector_blocks / bits              # vectors per word of every block
    w.add("vload", (nw + 2) * words)
    w.add("vstore", nw * words)
    return w


def throughput_cycles(work: Work, model: PortModel) -> tuple[float, str]:
    """(least cycles per pass, what binds: a port set or 'front end')."""
    load: dict = {}
    for cls, n in work.counts.items():
        bits = work.bits if cls in VECTOR_CLASSES else 64
        ports = frozenset(model.ports_for(cls, bits))
        if ports and n:
            load[ports] = load.get(ports, 0.0) + n * model.cost(cls, bits)
    best, what = work.uops / model.front_end, "front end"
    sets = list(load)
    for r in range(1, len(sets) + 1):
        for combo in combinations(sets, r):
            union = frozenset().union(*combo)
            need = sum(n for ps, n in load.items() if ps <= union)
            if need / len(union) > best + 1e-9:
                best, what = need / len(union), "+".join(sorted(union))
    return best, what


def bound_cpb(work: Work, model: PortModel, block_bytes: int) -> float:
    """Throughput bound in cycles per byte."""
    return throughput_cycles(work, model)[0] / (work.blocks * block_bytes)


def _tree(times: list, lat: int) -> int:
    """Earliest time the sum of terms ready at ``times`` is ready, adds of latency ``lat``."""
    h = list(times)
    heapq.heapify(h)
    while len(h) > 1:
        a, b = heapq.heappop(h), heapq.heappop(h)
        heapq.heappush(h, max(a, b) + lat)
    return h[0]


def latency_cycles(prog, model: PortModel, vector: bool = False, rotate_ops: int = 1) -> int:
    """Cycles from the first input word loaded to the last output word ready, for one call of a
    Program (setup and body; inputs ready at 0 plus a load).  ``vector``: the words live in
    vector registers (one lane used); ``rotate_ops`` 3: a rotate is shift (in parallel with the
    other shift) then or."""
    lat = model.latency
    alu = {"add": lat["vadd" if vector else "alu"], "sub": lat["vadd" if vector else "alu"],
           "xor": lat["vxor" if vector else "alu"]}
    rot = (lat["vrot"] if rotate_ops == 1 else lat["vshift"] + lat["vxor"]) if vector else lat["rot"]
    load = lat["vload" if vector else "load"]
    ready: dict = {}
    terms: dict = {}          # value -> ready times of an open add chain (nothing read it since)
    mem: dict = {}            # (array, index) -> ready
    out = 0

    def src(a, counter):
        if isinstance(a, str):
            terms.pop(a, None)            # read: its sum is materialised
            return ready[a]
        if isinstance(a, Mem):
            return mem.get((a.array, a.index.at(counter)), 0) + load
        return 0                           # an immediate

    def run(seq, counter):
        nonlocal out
        for item in seq:
            if isinstance(item, Loop):
                for c in range(item.count):
                    run(item.body, c)
                continue
            op = item
            if op.kind == "note":
                continue
            if op.kind == "store":
                t = src(op.dst, counter)
                mem[(op.a.array, op.a.index.at(counter))] = t
                if op.a.array == "out":
                    out = max(out, t)
            elif op.kind == "mov":
                ready[op.dst] = src(op.a, counter)
                terms.pop(op.dst, None)
            elif op.kind in ("rotl", "rotr"):
                ready[op.dst] = ready[op.dst] + rot
                terms.pop(op.dst, None)
            elif op.kind in ("add", "sub"):
                t = src(op.a, counter)
                chain = terms.setdefault(op.dst, [ready[op.dst]])
                chain.append(t)
                ready[op.dst] = _tree(chain, alu[op.kind])
            else:       # xor
                t = src(op.a, counter)
                ready[op.dst] = max(ready[op.dst], t) + alu["xor"]
                terms.pop(op.dst, None)

    run(prog.setup, 0)
    run(prog.body, 0)
    return out
