"""The ``lanes`` layout: L independent blocks word-sliced, one block per 64-bit lane.

The vector program is the description's word program mapped one to one: every
word value ``x`` becomes the vector ``vx`` holding that word for L blocks, every
operation becomes the same operation on vectors (rotations stay uniform, the
word permutation stays free renaming).  What changes:

* loads of the caller's ``in`` / ``tweak`` words become :class:`Gather` groups
  (L rows loaded, transposed in registers by :func:`transpose_network`), stores
  to ``out`` become :class:`Scatter` groups (the same network: a transpose is its
  own inverse);
* key words computed once per call (the description's ``setup``) are broadcast
  to every lane (``bk0`` = <k0, k0, ...>), so are setup arrays (``bkr``);
* arrays local to the body (subkey table ``ks``, tweak ring ``tr``) become
  arrays of vectors.

Description block ``b`` (when the description interleaves blocks) owns lanes of
blocks ``b*L .. b*L+L-1`` of one pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..dsl import Idx, Loop, Mem, Op, array_sizes, flat, values
from ..errors import GenError
from ..threefish import Program

NAME = "lanes"
CALLER_ARRAYS = {"in": None, "tweak": 2, "out": None}   # words per block (None: Nw)


@dataclass(frozen=True)
class Gather:
    """Load words 0..len(dsts)-1 of ``array`` for the L blocks of description block ``block``."""

    array: str
    block: int
    stride: int          # words per block in the caller's array
    dsts: tuple          # vector value name per word


@dataclass(frozen=True)
class Scatter:
    array: str
    block: int
    stride: int
    srcs: tuple


@dataclass
class VProgram:
    """The vector form of one description program."""

    prog: Program
    lanes: int
    body: list                                     # Ops on vectors, Gathers, Scatters, Loops
    vector_values: list = field(default_factory=list)
    vector_arrays: dict = field(default_factory=dict)
    broadcast_values: list = field(default_factory=list)   # setup values used by the body
    broadcast_arrays: dict = field(default_factory=dict)   # setup arrays used by the body

    @property
    def blocks(self) -> int:
        """Blocks per pass."""
        return self.lanes * self.prog.blocks


def vname(name: str) -> str:
    return "v" + name


def bname(name: str) -> str:
    return "b" + name


def vectorize(prog: Program, lanes: int) -> VProgram:
    nw = prog.spec.nw
    setup_vals = set(values(prog.setup))
    setup_arrays = {op.a.array for op in flat(prog.setup) if op.kind == "store"}
    body_arrays = {op.a.array for op in flat(prog.body) if op.kind == "store"} - {"out"}
    vp = VProgram(prog, lanes, [])
    bvals: dict[str, None] = {}
    barrs: dict[str, int] = {}

    # ---- find the caller-array groups: (array, description block) -> [(position, word, name)]
    ops = list(flat(prog.body))
    groups: dict[tuple, list] = {}
    for pos, op in enumerate(ops):
        if isinstance(op.a, Mem) and op.a.array in CALLER_ARRAYS:
            arr = op.a.array
            if (op.kind == "mov") != (arr != "out") or (op.kind == "store") != (arr == "out"):
                raise GenError(f"lanes layout: unsupported access to {arr} in '{op.text()}'")
            if op.a.index.scale:
                raise GenError(f"lanes layout: {arr} indexed by a loop counter in '{op.text()}'")
            stride = CALLER_ARRAYS[arr] or nw
            blk, word = divmod(op.a.index.base, stride)
            groups.setdefault((arr, blk), []).append((pos, word, op.dst))
    emit_at: dict[int, object] = {}
    skip: set[int] = set()
    for (arr, blk), members in groups.items():
        stride = CALLER_ARRAYS[arr] or nw
        words = sorted(w for _, w, _ in members)
        if words != list(range(stride)):
            raise GenError(f"lanes layout: {arr} words of block {blk} are not accessed exactly once each")
        names = tuple(vname(n) for _, _, n in sorted(members, key=lambda m: m[1]))
        first, last = min(p for p, _, _ in members), max(p for p, _, _ in members)
        group_names = {n for _, _, n in members}
        own = {p for p, _, _ in members}
        for pos in range(first, last + 1):
            if pos in own:
                continue
            op = ops[pos]
            if op.kind != "note" and (op.dst in group_names or op.a in group_names):
                raise GenError(f"lanes layout: '{op.text()}' comes between the {arr} accesses it uses")
        if arr == "out":
            emit_at[last] = Scatter(arr, blk, stride, names)
        else:
            emit_at[first] = Gather(arr, blk, stride, names)
        skip |= own

    def operand(a):
        if isinstance(a, str):
            if a in setup_vals:
                bvals.setdefault(a, None)
                return bname(a)
            return vname(a)
        if isinstance(a, Mem):
            if a.array in setup_arrays:
                barrs[a.array] = 0
                return Mem(bname(a.array), a.index)
            if a.array in body_arrays:
                return Mem(vname(a.array), a.index)
            raise GenError(f"lanes layout: unknown array {a.array}")
        return a                       # Idx immediate: broadcast by the printer

    pos = 0
    out: list = []

    def convert(op: Op, in_loop: bool):
        nonlocal pos
        here = pos
        pos += 1
        if here in emit_at:
            if in_loop:
                raise GenError("lanes layout: caller memory accessed inside a loop")
            return [emit_at[here]]
        if here in skip:
            return []
        if op.kind == "note":
            return [op]
        if op.kind == "store":
            return [Op("store", vname(op.dst), operand(op.a), op.tag)]
        if op.kind in ("rotl", "rotr"):
            return [Op(op.kind, vname(op.dst), op.a, op.tag)]
        return [Op(op.kind, vname(op.dst), operand(op.a), op.tag)]

    for item in prog.body:
        if isinstance(item, Loop):
            lp = Loop(item.count)
            for op in item.body:
                lp.body.extend(convert(op, True))
            out.append(lp)
        else:
            out.extend(convert(item, False))
    vp.body = out
    vp.vector_values = [vname(n) for n in values(prog.body)]
    sizes = array_sizes(prog.body)
    vp.vector_arrays = {vname(a): sizes[a] for a in sorted(body_arrays)}
    setup_sizes = array_sizes(prog.setup)
    vp.broadcast_values = [bname(n) for n in values(prog.setup) if n in bvals]
    vp.broadcast_arrays = {bname(a): setup_sizes[a] for a in sorted(barrs)}
    return vp


# --------------------------------------------------------------------------- transposes

def transpose_network(lanes: int) -> list[tuple[int, int, int]]:
    """Steps (bit, i, j) of an in-register L x L transpose of 64-bit lanes.

    Vectors i and j = i | bit exchange their off-diagonal bit-sized blocks:
    new_i[k] = i[k] if k & bit == 0 else j[k ^ bit]   ("low" combine),
    new_j[k] = i[k ^ bit] if k & bit == 0 else j[k]   ("high" combine).
    After every bit, vector r holds column r.  The network is its own inverse."""
    if lanes & (lanes - 1):
        raise GenError(f"lanes must be a power of two, not {lanes}")
    steps = []
    bit = 1
    while bit < lanes:
        for i in range(lanes):
            if not i & bit:
                steps.append((bit, i, i | bit))
        bit <<= 1
    return steps


def combine_pattern(lanes: int, bit: int, high: bool) -> tuple:
    """Source of each output lane of one network combine: (0 = first vector / 1 = second, lane)."""
    pat = []
    for k in range(lanes):
        if not high:
            pat.append((0, k) if not k & bit else (1, k ^ bit))
        else:
            pat.append((0, k ^ bit) if not k & bit else (1, k))
    return tuple(pat)


def simulate_transpose(rows: list[list]) -> list[list]:
    """Run the network on Python lists (used by the tests and as a self-check)."""
    lanes = len(rows)
    v = [list(r) for r in rows]
    for bit, i, j in transpose_network(lanes):
        a, b = v[i], v[j]
        src = (a, b)
        v[i] = [src[s][k] for s, k in combine_pattern(lanes, bit, False)]
        v[j] = [src[s][k] for s, k in combine_pattern(lanes, bit, True)]
    return v


def op_counts(vp: VProgram) -> dict[str, float]:
    """Vector operations per block of the body (loops multiplied out; renaming moves excluded)."""
    counts: dict[str, float] = {}

    def add(key, n):
        counts[key] = counts.get(key, 0) + n

    for item in vp.body:
        seq, mult = (item.body, item.count) if isinstance(item, Loop) else ([item], 1)
        for op in seq:
            if isinstance(op, Gather):
                add(f"load {op.array} (transposed)", op.stride * mult)
            elif isinstance(op, Scatter):
                add(f"store {op.array} (transposed)", op.stride * mult)
            elif op.kind == "note" or (op.kind == "mov" and isinstance(op.a, str)):
                continue
            else:
                add(op.kind + ("-mem" if isinstance(op.a, Mem) and op.kind != "store" else ""), mult)
    return {k: v / vp.blocks for k, v in sorted(counts.items())}
