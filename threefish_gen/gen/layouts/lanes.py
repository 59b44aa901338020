"""The ``lanes`` layout: L independent blocks word-sliced, one block per 64-bit lane.

The layout IR program (gen/layouts/ir.py) is the description's word program mapped one to one: every
word value ``x`` becomes the vector ``vx`` holding that word for L blocks, every
operation becomes the same operation on vectors (rotations stay uniform, the
word permutation stays free renaming).  What changes:

* loads of the caller's ``in`` / ``tweak`` words become :func:`gather` blocks
  (one row of up to L words loaded per block, then the L x L transpose network of
  gen/layouts/transpose.py as two-source lane shuffles), stores to ``out`` become
  :func:`scatter` blocks (the same network: a transpose is its own inverse);
* key words computed once per call (the description's ``setup``, computed on
  64-bit words at W = 1, ``ir.Scalar``) are broadcast to every lane in the program's prologue (``bk0`` = <k0, k0,
  ...>), so are setup arrays (``bkr``);
* arrays local to the body (the subkey table ``ks`` of keys table) become
  arrays of vectors.

Description block ``b`` (when the description interleaves blocks) owns lanes of
blocks ``b*L .. b*L+L-1`` of one pass.

:func:`lower_stream` is the *stream form*: whole-vector loads of the caller's blocks in memory
order, transposed in registers (the C# kernels; with ``moves``, the NASM lanes kernels: the
tweaks too, by the fewest stages of the ISA's two-source lane moves, transpose.bit_network).
"""
from __future__ import annotations

from ..dsl import Idx, Loop, Mem, Op, array_sizes, flat, values
from ..errors import GenError
from ..threefish import Program
from . import ir, scalar, transpose

NAME = "lanes"
CALLER_ARRAYS = {"in": None, "tweak": 2, "out": None}   # words per block (None: Nw)


def vname(name: str) -> str:
    return "v" + name


def bname(name: str) -> str:
    return "b" + name


def lower(prog: Program, lanes: int, sliced=(), rows=None) -> ir.VProgram:
    """The lanes layout of ``prog`` for vectors of ``lanes`` lanes (see the module doc).

    ``sliced``: caller-array groups ``(array, description block)`` the caller keeps word-sliced
    (word w of lane l at word ``(block * stride + w) * L + l``): one whole-vector load or store per
    word, no transpose (the Skein lanes kernels' chaining values and tweaks, kept in that form
    between blocks).  ``rows``: ``{(array, block): prefix}``, groups whose row of lane l is read
    from the array ``prefix + l`` (its words 0..stride-1: one pointer per lane, the message blocks
    read where they lie), then transposed as usual."""
    sliced, rows = set(sliced), dict(rows or {})
    nw = prog.spec.nw
    setup_vals = set(values(prog.setup))
    setup_arrays = {op.a.array for op in flat(prog.setup) if op.kind == "store"}
    body_arrays = {op.a.array for op in flat(prog.body) if op.kind == "store"} - {"out"}
    vp = ir.VProgram(NAME, lanes, lanes * prog.blocks, nw)
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
        if (arr, blk) in sliced:
            words = [tuple((blk * stride + w) * lanes + lane for lane in range(lanes)) for w in range(stride)]
            emit_at[last if arr == "out" else first] = (
                [ir.Store(n, arr, ws) for n, ws in zip(names, words)] if arr == "out"
                else [ir.Load(n, arr, ws) for n, ws in zip(names, words)])
        elif arr == "out":
            emit_at[last] = scatter(arr, blk, stride, names, lanes)
        else:
            emit_at[first] = gather(arr, blk, stride, names, lanes, rows.get((arr, blk)))
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
            return emit_at[here]
        if here in skip:
            return []
        if op.kind == "note":
            return [ir.Note(op.a)]
        d = vname(op.dst)
        if op.kind == "store":
            return [ir.Mov(operand(op.a), d)]
        if op.kind in ("rotl", "rotr"):
            return [(ir.Rotl if op.kind == "rotl" else ir.Rotr)(d, d, (op.a,) * lanes)]
        if op.kind == "mov":
            return [ir.Mov(d, operand(op.a))]
        return [{"add": ir.Add, "sub": ir.Sub, "xor": ir.Xor}[op.kind](d, d, operand(op.a))]

    for item in prog.body:
        if isinstance(item, Loop):
            body = []
            for op in item.body:
                body.extend(convert(op, True))
            out.append(ir.Loop(item.count, tuple(body)))
        else:
            out.extend(convert(item, False))
    vp.setup = [scalar.words(op) if isinstance(op, Op) else _scalar_loop(op) for op in prog.setup]
    vp.body = out
    vp.values = [vname(n) for n in values(prog.body)]
    sizes = array_sizes(prog.body)
    vp.arrays = {vname(a): sizes[a] for a in sorted(body_arrays)}
    setup_sizes = array_sizes(prog.setup)
    vp.prologue = [ir.Broadcast(bname(n), n) for n in values(prog.setup) if n in bvals]
    vp.prologue += [ir.Loop(setup_sizes[a], (ir.Broadcast(Mem(bname(a), Idx(0, 1)), Mem(a, Idx(0, 1))),))
                    for a in sorted(barrs)]
    return vp


def _scalar_loop(lp: Loop) -> ir.Loop:
    return ir.Loop(lp.count, tuple(scalar.words(op) for op in lp.body))


# --------------------------------------------------------------------------- edges

def _row_words(array: str, block: int, stride: int, lanes: int, lane: int, base: int, width: int) -> tuple:
    """Word offsets of one row: words base.. of block block*L + lane (width of them, rest unused)."""
    first = (block * lanes + lane) * stride + base
    return tuple(first + k for k in range(width)) + (None,) * (lanes - width)


def _temp(stage: int, vector: int) -> str:
    return f"s{stage}_{vector}"


def gather(array: str, block: int, stride: int, dsts: tuple, lanes: int, per_lane: str | None = None) -> list:
    """Words 0..stride-1 of ``array`` for the L blocks of description block ``block``: per
    chunk of L words, one row load per block and the L x L transpose network (``per_lane``: the
    row of lane l is words 0..stride-1 of the array ``per_lane + l``)."""
    out = []
    width = min(lanes, stride)
    for base in range(0, stride, lanes):
        rows = [_temp(0, lane) for lane in range(lanes)]
        body = [ir.Load(rows[lane], array, _row_words(array, block, stride, lanes, lane, base, width))
                if per_lane is None else
                ir.Load(rows[lane], f"{per_lane}{lane}", tuple(base + k for k in range(width)) + (None,) * (lanes - width))
                for lane in range(lanes)]
        ops, cols = transpose.network_ops(rows, lanes, _temp)
        body += ops
        finals = [dsts[base + c] for c in range(min(lanes, stride - base))]
        body += [ir.Mov(d, cols[c]) for c, d in enumerate(finals)]
        out.append(ir.Block(tuple(body)))      # the rows a narrow chunk leaves unread stay: printers drop them
    return out


def scatter(array: str, block: int, stride: int, srcs: tuple, lanes: int) -> list:
    """The inverse of :func:`gather` (the network is its own inverse); missing words are zero."""
    out = []
    width = min(lanes, stride)
    for base in range(0, stride, lanes):
        body = []
        cols = [srcs[base + c] if base + c < stride else "zero" for c in range(lanes)]
        if "zero" in cols:
            body.append(ir.Const("zero", (0,) * lanes))
        ops, rows = transpose.network_ops(cols, lanes, _temp)
        body += ops
        body += [ir.Store(rows[lane], array, _row_words(array, block, stride, lanes, lane, base, width))
                 for lane in range(lanes)]
        out.append(ir.Block(tuple(body)))
    return out


# --------------------------------------------------------------------------- stream form

def lower_stream(prog: Program, lanes: int, moves: list | None = None) -> ir.VProgram:
    """The lanes layout with whole-vector loads of the caller's blocks (the C# kernels; with
    ``moves``, also of the tweaks: the NASM lanes kernels).

    Every description op, setup included, becomes the same op on vectors of the same name
    (key words are loaded into every lane).  Tweak words are loaded lane by lane (word w of
    the tweaks of blocks g*L .. g*L+L-1).  Per lane group g, the nw stream-order vectors of its
    L blocks are loaded at the start of the body and transposed to one vector per word
    (:func:`transpose.load_plan` two-source permutes; for 4 lanes the 4 x 4 network, one per
    group of 4 words), and transposed back and stored at the end.  Temporaries (declared
    values): ``s{g}{j}`` stream vectors, ``l{g}{stage}_{j}`` / ``t{g}{stage}_{j}`` the load /
    store transpose intermediates (``{g}``: a, b, .. when there are several groups).

    ``moves`` (:class:`transpose.BitMove` pairs of the target's two-source lane moves, the NASM
    lanes kernels): whole-vector loads and stores of the blocks *and* of their tweaks, transposed
    by the fewest stages of those moves (:func:`transpose.bit_network`); lane b holds the block
    whose index has its bits in the order :func:`network_lanes` picks (the same for in, out and
    tweak: the one that needs the fewest shuffles), not block b."""
    nw, L = prog.spec.nw, lanes
    groups = prog.blocks
    vp = ir.VProgram(NAME + "-stream", L, L * groups, nw)
    ins = {op.a.index.base: op.dst for op in flat(prog.body)
           if op.kind == "mov" and isinstance(op.a, Mem) and op.a.array == "in"}
    outs = {op.a.index.base: op.dst for op in flat(prog.body)
            if op.kind == "store" and op.a.array == "out"}
    if sorted(ins) != list(range(groups * nw)) or sorted(outs) != sorted(ins):
        raise GenError("lanes layout: in/out words are not accessed exactly once each")

    def conv(op: Op) -> list:
        a = op.a
        if op.kind == "note":
            return [ir.Note(a)]
        if isinstance(a, Mem) and a.array in ("in", "out"):
            return []                                     # the edges below
        if op.kind == "store":
            return [ir.Mov(a, op.dst)]
        if op.kind in ("rotl", "rotr"):
            return [(ir.Rotl if op.kind == "rotl" else ir.Rotr)(op.dst, op.dst, (a,) * L)]
        if isinstance(a, Mem) and a.array == "key":
            assert op.kind == "mov", op
            return [ir.Broadcast(op.dst, a)]
        if isinstance(a, Mem) and a.array == "tweak":
            assert op.kind == "mov" and not a.index.scale, op
            g, w = divmod(a.index.base, 2)
            return [ir.Load(op.dst, "tweak", tuple(2 * (g * L + b) + w for b in range(L)))]
        if op.kind == "mov":
            return [ir.Mov(op.dst, a)]
        return [{"add": ir.Add, "sub": ir.Sub, "xor": ir.Xor}[op.kind](op.dst, op.dst, a)]

    def convert(seq, each=conv) -> list:
        out = []
        for item in seq:
            if isinstance(item, Loop):
                out.append(ir.Loop(item.count, tuple(x for op in item.body for x in each(op))))
            else:
                out += each(item)
        return out

    if moves is not None:
        if groups != 1:
            raise GenError("lanes layout: transpose networks take one lane group")
        tweaks = {op.a.index.base: op.dst for op in flat(prog.body)
                  if op.kind == "mov" and isinstance(op.a, Mem) and op.a.array == "tweak"}
        if sorted(tweaks) != [0, 1]:
            raise GenError("lanes layout: tweak words are not read exactly once each")
        pre, post, temps = _network_edges(nw, L, [ins[i] for i in range(nw)], [outs[i] for i in range(nw)],
                                          [tweaks[0], tweaks[1]], moves)
        body_ops = list(flat(prog.body))
        first = {op.dst: pos for pos, op in enumerate(body_ops)
                 if op.kind == "mov" and isinstance(op.a, Mem) and op.a.array in ("in", "tweak")}
        for name, at in first.items():      # the edge loads move to the body's start: nothing before
            for op in body_ops[:at]:         # their reads may touch their names
                if op.kind != "note" and (op.dst == name or op.a == name):
                    raise GenError(f"lanes layout: '{op.text()}' comes before the load of {name}")

        def conv_net(op: Op) -> list:
            return [] if isinstance(op.a, Mem) and op.a.array in ("in", "out", "tweak") else conv(op)

        vp.setup = convert(prog.setup)
        vp.body = pre + convert(prog.body, conv_net) + post
        vp.values = values(prog.body) + temps
        vp.arrays = {a: n for a, n in array_sizes(prog.body).items() if a not in ("in", "out", "tweak", "key")}
        return vp

    pre, post, temps = [], [], []
    for g in range(groups):
        gt = "abcd"[g] if groups > 1 else ""
        sv = [f"s{gt}{j}" for j in range(nw)]
        base = g * L * nw
        load, lt = _transpose_stream(sv, [ins[g * nw + i] for i in range(nw)], L, nw, True, "l" + gt)
        store, st = _transpose_stream([outs[g * nw + i] for i in range(nw)], sv, L, nw, False, "t" + gt)
        pre.append(ir.Note(f"load {L} blocks (lane group {g}) and transpose to one vector per word"))
        pre += [ir.Load(sv[j], "in", tuple(range(base + L * j, base + L * (j + 1)))) for j in range(nw)]
        pre += load
        post.append(ir.Note(f"transpose back to stream order and store {L} blocks (lane group {g})"))
        post += store
        post += [ir.Store(sv[j], "out", tuple(range(base + L * j, base + L * (j + 1)))) for j in range(nw)]
        temps += sv + lt + st
    vp.setup = convert(prog.setup)
    vp.body = pre + convert(prog.body) + post
    vp.values = values(prog.body) + temps
    vp.arrays = {a: n for a, n in array_sizes(prog.body).items() if a not in ("in", "out", "tweak", "key")}
    return vp


def _transpose_stream(srcs: list, dsts: list, L: int, nw: int, load: bool, tag: str) -> tuple[list, list]:
    """(shuffles, temporaries) taking stream-order vectors to word vectors (load) or back."""
    ops, temps = [], []
    if L == 4:      # per group of 4 words: the 4 x 4 network, each stage in vector order
        g4 = nw // 4
        for q in range(g4):
            if load:   # rows: words 4q..4q+3 of block b = stream vector b*g4 + q
                rows, cols = [srcs[b * g4 + q] for b in range(4)], [dsts[4 * q + k] for k in range(4)]
            else:
                rows, cols = [srcs[4 * q + k] for k in range(4)], [dsts[b * g4 + q] for b in range(4)]
            t = [f"{tag}{q}_{k}" for k in range(4)]
            net, _ = transpose.network_ops(rows, 4, lambda s, v: t[v] if s == 1 else cols[v], in_order=True)
            ops += net
            temps += t
        return ops, temps
    plan, stages = (transpose.load_plan if load else transpose.store_plan)(nw, L)
    cur = list(srcs)
    for st in range(stages):
        nxt = [None] * nw
        for p in (o for o in plan if o.stage == st):
            name = dsts[p.dst] if st == stages - 1 else f"{tag}{st}_{p.dst}"
            if st < stages - 1:
                temps.append(name)
            ops.append(ir.Shuffle(name, (cur[p.lo], cur[p.hi]), tuple(divmod(i, L) for i in p.idx), "transpose"))
            nxt[p.dst] = name
        cur = nxt
    return ops, temps


# --------------------------------------------------------------------------- transpose networks

def _bits(n: int) -> int:
    return n.bit_length() - 1


def network_lanes(nw: int, L: int, moves: list) -> tuple:
    """(lane order, the three stage lists) of the network form: the order of the block-index bits
    in the lane index (lane bit i holds block bit order[i]) needing the fewest shuffles in all for
    the blocks' load (nw vectors), their store (nw) and the tweaks' load (2), identity first on a
    tie, and the stages (:func:`transpose.bit_network`) of each."""
    from itertools import permutations
    wb, lb = _bits(nw), _bits(L)
    best = None
    for order in permutations(range(lb)):
        lay = _network_layouts(nw, L, order)
        plans = [transpose.bit_network(src[1], dst[1], wb + lb if k < 2 else 1 + lb, moves)
                 for k, (src, dst) in enumerate(lay)]
        if any(p is None for p in plans):
            continue
        cost = nw * (len(plans[0]) + len(plans[1])) + 2 * len(plans[2])
        if best is None or cost < best[0]:
            best = (cost, order, plans)
    if best is None:
        raise GenError(f"lanes layout: no transpose network of {nw} x {L} words from these lane moves")
    return best[1], best[2]


def _network_layouts(nw: int, L: int, order: tuple) -> list:
    """(source, destination) layouts, each (vector bits, lane bits) of the word label, of the blocks'
    load, their store and the tweaks' load.  Labels: p = block * nw + word (in, out), block * 2 +
    t (tweak), the caller's memory order; stream order: vector j = words j*L .. j*L+L-1."""
    wb, lb = _bits(nw), _bits(L)
    stream = (tuple(range(lb, lb + wb)), tuple(range(lb)))
    sliced = (tuple(range(wb)), tuple(wb + b for b in order))
    tstream = ((lb,), tuple(range(lb)))
    tsliced = ((0,), tuple(1 + b for b in order))
    return [(stream, sliced), (sliced, stream), (tstream, tsliced)]


def _network_edges(nw: int, L: int, ins: list, outs: list, tweaks: list, moves: list) -> tuple:
    """(body prologue, body epilogue, temporaries) of the network form: whole-vector loads of the
    tweaks and blocks, transposed into the words' values, and the state transposed back and stored."""
    order, (load, store, tload) = network_lanes(nw, L, moves)
    (ls, ld), (ss, sd), (ts, td) = _network_layouts(nw, L, order)
    temps: list = []

    def name(tag):
        def f(stage, k):
            n = f"{tag}{stage}_{k}"
            temps.append(n)
            return n
        return f
    pre = [ir.Note(f"load {L} tweaks and transpose to one vector per tweak word (lane bit i: block bit {order}[i])")]
    tv = ["tw0", "tw1"]
    temps += tv
    ops = [ir.Load(tv[j], "tweak", tuple(range(L * j, L * (j + 1)))) for j in range(2)]
    pre += _demand_order(ops + transpose.network_between(tv, ts, tweaks, td, tload, name("tl")), tweaks)
    pre.append(ir.Note(f"load {L} blocks and transpose to one vector per word"))
    sv = [f"s{j}" for j in range(nw)]
    temps += sv
    ops = [ir.Load(sv[j], "in", tuple(range(L * j, L * (j + 1)))) for j in range(nw)]
    pre += _demand_order(ops + transpose.network_between(sv, ls, ins, ld, load, name("l")), ins)
    post = [ir.Note(f"transpose back to stream order and store {L} blocks")]
    ov = [f"o{j}" for j in range(nw)]
    temps += ov
    ops = transpose.network_between(outs, ss, ov, sd, store, name("t"))
    ops += [ir.Store(ov[j], "out", tuple(range(L * j, L * (j + 1)))) for j in range(nw)]
    post += _demand_order(ops, [op for op in ops if isinstance(op, ir.Store)])
    return pre, post, temps


def _demand_order(ops: list, roots: list) -> list:
    """``ops`` (each defining one value, or a Store) in the order the ``roots`` (value names, or
    Store ops) need them, each root's inputs depth first: a value is made just before its first
    use, so fewer are live at once than stage by stage (a transpose's groups one after another)."""
    made = {op.dst: op for op in ops if not isinstance(op, ir.Store)}
    out, done = [], set()

    def need(name):
        if name in done or name not in made:
            return
        op = made[name]
        for r in ir.reads(op):
            need(r)
        done.add(name)
        out.append(op)
    for root in roots:
        if isinstance(root, ir.Store):
            need(root.src)
            out.append(root)
        else:
            need(root)
    assert len(out) == len(ops), (len(out), len(ops))
    return out
