"""Every layout's IR program (gen/layouts/) interpreted (gen/layouts/interp.py) against the
reference model (gen/reference.py): scalar, lanes (L = 2, 4, 8; interleave 1, 2; every key
schedule and unroll form), packed (every vector width an ISA uses, tracked and natural) x
size x version x direction, several passes of random blocks with per-block tweaks."""
import random

import pytest

from threefish_gen.gen import reference, skein
from threefish_gen.gen.dsl import bytes_from_words, words_from_bytes
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.layouts import interp, ir, lanes, packed, scalar, transpose
from threefish_gen.gen.spec import SIZES, VERSIONS, Spec
from threefish_gen.gen.threefish import Options, describe

DIRECTIONS = ("encrypt", "decrypt")
OPTION_SETS = [Options("fly", "full"), Options("table", "loop"), Options("fly", "loop"), Options("table", "full")]


def _check(vp, spec, direction, passes=2, seed=0):
    rng = random.Random(seed)
    n = vp.blocks * passes
    nb = spec.block_bytes
    key, tweaks, data = rng.randbytes(nb), rng.randbytes(16 * n), rng.randbytes(nb * n)
    fn = getattr(reference, direction)
    want = b"".join(fn(spec, key, tweaks[16 * i:16 * i + 16], data[nb * i:nb * (i + 1)]) for i in range(n))
    assert interp.crypt_bytes(vp, key, tweaks, data) == want


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bits", SIZES)
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: f"{o.keys}-{o.unroll}")
def test_scalar(bits, version, direction, options):
    spec = Spec(version, bits)
    blocks = 2 if options.unroll == "full" else 1
    _check(scalar.lower(describe(spec, options, direction, blocks)), spec, direction, seed=bits)


@pytest.mark.parametrize("bits", SIZES)
@pytest.mark.parametrize("options", OPTION_SETS[:3], ids=lambda o: f"{o.keys}-{o.unroll}")
def test_scalar_ubi_fused(bits, options):
    """Skein's UBI block as one W = 1 body (setup fused in): its caller arrays are the chaining
    value h (read, then written), the tweak t and the message in; the subkey tables its own."""
    spec = Spec("1.3", bits)
    prog = skein.ubi_program(spec, options)
    vp = scalar.lower(prog, fuse=True)
    assert vp.setup == [] and not vp.setup_values
    assert set(vp.arrays) == ({"kr", "kc"} if options.unroll == "loop" and options.keys == "fly" else
                              {"ks"} if options.keys == "table" else set())
    rng = random.Random(bits)
    h, t, m = rng.randbytes(spec.block_bytes), rng.randbytes(16), rng.randbytes(spec.block_bytes)
    mem = {"h": words_from_bytes(h), "t": words_from_bytes(t), "in": words_from_bytes(m)}
    machine = interp.Machine(vp, mem)
    for op in vp.body:
        machine.op(op, 0)
    assert bytes_from_words(mem["h"]) == skein.run_ubi_program(prog, h, t, m)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bits", SIZES)
@pytest.mark.parametrize("interleave", [1, 2])
@pytest.mark.parametrize("L", [2, 4, 8])
def test_lanes(L, interleave, bits, version, direction):
    spec = Spec(version, bits)
    o = OPTION_SETS[(L + interleave + bits // 256 + VERSIONS.index(version)) % len(OPTION_SETS)]
    vp = lanes.lower(describe(spec, Options(o.keys, o.unroll, interleave), direction, interleave), L)
    assert vp.blocks == L * interleave
    _check(vp, spec, direction, seed=L * bits)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bits", SIZES)
@pytest.mark.parametrize("interleave", [1, 2])
@pytest.mark.parametrize("L", [4, 8])
def test_lanes_stream(L, interleave, bits, version, direction):
    """The stream form (C# kernels): whole-vector loads, the transpose plan, per-lane tweak loads."""
    spec = Spec(version, bits)
    o = OPTION_SETS[(L + interleave + bits // 256 + VERSIONS.index(version)) % len(OPTION_SETS)]
    vp = lanes.lower_stream(describe(spec, Options(o.keys, o.unroll, interleave), direction, interleave), L)
    _check(vp, spec, direction, seed=L + bits)


def _nasm_moves(L):
    from threefish_gen.gen.asm.lowering import lane_bit_moves
    return lane_bit_moves({4: "ymm", 8: "zmm"}[L])


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bits", SIZES)
@pytest.mark.parametrize("L", [4, 8])
def test_lanes_stream_network(L, bits, version, direction):
    """The stream form of the NASM lanes kernels: whole-vector loads of the blocks and of their
    tweaks, transposed by the fewest stages of the ISA's lane moves (the lane order the
    planner picks: not lane b = block b), run against the reference (every option set)."""
    spec = Spec(version, bits)
    for o in OPTION_SETS:
        vp = lanes.lower_stream(describe(spec, Options(o.keys, o.unroll, 1), direction, 1), L, moves=_nasm_moves(L))
        assert not any(isinstance(op, ir.Load) and op.words != tuple(range(op.words[0], op.words[0] + L))
                       for op in ir.walk(vp.body))
        _check(vp, spec, direction, seed=L + bits)


@pytest.mark.parametrize("L,stages", [(4, {4: (2, 2, 1), 8: (2, 2, 1), 16: (2, 2, 1)}),
                                      (8, {4: (2, 3, 1), 8: (3, 3, 1), 16: (3, 3, 1)})])
def test_network_lanes_stages(L, stages):
    """Stages of the blocks' load, their store and the tweaks' load over the NASM lane moves
    (AVX2: unpack + vperm2i128, AVX-512: unpack + vshufi64x2): one per lane bit that must change
    (log2 L, less the lane bits the stream order already has right), the tweaks' one unpack,
    for the lane order picked (the tweaks' unpack order: lane bit 0 is the top block bit)."""
    for nw, want in stages.items():
        order, plans = lanes.network_lanes(nw, L, _nasm_moves(L))
        assert tuple(map(len, plans)) == want, nw
        assert order[0] == len(order) - 1, order


def test_bit_moves_are_bit_permutations():
    """A lo/hi pair of lane patterns is a bit move only when it permutes the lane bits and the
    a/b bit; the same pattern twice, or one that drops a lane, is not."""
    moves = _nasm_moves(8)
    assert [m.name for m in moves] == [("unpcklo", "unpckhi"), ("even128", "odd128"), ("lo256", "hi256")]
    assert [m.src_bit for m in moves] == [(3, 1, 2, 0), (0, 2, 3, 1), (0, 1, 3, 2)]
    lo = moves[0].lo
    assert transpose.bit_move("x", lo, lo) is None
    assert transpose.bit_move("x", lo, (None,) + moves[0].hi[1:]) is None
    assert transpose.bit_network((0, 1, 2), (3, 4, 5), 6, moves[:1]) is None     # unpack alone cannot


PACKED = [(bits, L) for bits in SIZES for L in (2, 4, 8) if L <= bits // 128]   # at most half a block


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bits,L", PACKED)
def test_packed_tracked(bits, L, version, direction):
    spec = Spec(version, bits)
    _check(packed.lower(describe(spec, Options(), direction, 1), L), spec, direction, passes=3, seed=bits + L)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("bits", SIZES)
def test_packed_natural(bits, version, direction):
    spec = Spec(version, bits)
    vp = packed.lower(describe(spec, Options(), direction, 1), spec.nw // 2, natural=True)
    _check(vp, spec, direction, passes=3, seed=bits)


# --------------------------------------------------------------------------- structure and mutations

def test_packed_needs_fly_full():
    with pytest.raises(GenError, match="--keys fly --unroll full"):
        packed.lower(describe(Spec("1.3", 512), Options("table", "full"), "encrypt", 1), 2)


def _permutes(vp):
    return [i for i, op in enumerate(vp.body)
            if isinstance(op, ir.Block) and any(isinstance(x, ir.Shuffle) and x.kind == "permute" for x in op.body)]


@pytest.mark.parametrize("bits", SIZES)
def test_packed_wrong_lane_permutation_is_caught(bits):
    """Mutation check: swapping two lanes of any one round's permutation changes the result."""
    spec = Spec("1.3", bits)
    vp = packed.lower(describe(spec, Options(), "encrypt", 1), 2)
    perms = _permutes(vp)
    assert 0 < len(perms) <= spec.rounds
    for i in (perms[0], perms[len(perms) // 2], perms[-1]):
        bad = ir.VProgram(**{**vp.__dict__, "body": list(vp.body)})
        bad.body[i] = swap_two_lanes(vp.body[i])
        with pytest.raises(AssertionError):
            _check(bad, spec, "encrypt", passes=1)


def swap_two_lanes(block: ir.Block) -> ir.Block:
    """The block with lanes 0 and 1 of its first permute shuffle exchanged."""
    body = list(block.body)
    k = next(i for i, x in enumerate(body) if isinstance(x, ir.Shuffle))
    sh = body[k]
    lanes_ = list(sh.lanes)
    lanes_[0], lanes_[1] = lanes_[1], lanes_[0]
    body[k] = ir.Shuffle(sh.dst, sh.srcs, tuple(lanes_), sh.kind)
    return ir.Block(tuple(body))


def test_packed_moves_the_half_that_is_ready_first():
    """Tracked lanes: encryption permutes only A (ready after the add), decryption only B."""
    spec = Spec("1.3", 1024)
    for direction, moved in (("encrypt", "A"), ("decrypt", "B")):
        vp = packed.lower(describe(spec, Options(), direction, 1), 8)
        dsts = {x.dst[0] for i in _permutes(vp) for x in vp.body[i].body if isinstance(x, ir.Shuffle)}
        assert dsts == {moved}


@pytest.mark.parametrize("L", [2, 4, 8])
def test_transpose_network_is_a_transpose(L):
    rows = [f"r{i}" for i in range(L)]
    ops, cols = transpose.network_ops(rows, L, lambda s, v: f"s{s}_{v}")
    m = interp.Machine(ir.VProgram("t", L, 1, L), {})
    m.vec = {f"r{i}": [(i, k) for k in range(L)] for i in range(L)}
    for op in ops:
        m.op(op, 0)
    assert [m.vec[c] for c in cols] == [[(r, c) for r in range(L)] for c in range(L)]
    assert len(ops) == L * (L.bit_length() - 1)


@pytest.mark.parametrize("nw", (4, 8, 16))
@pytest.mark.parametrize("nl", (4, 8))
def test_lane_plan_transposes(nw, nl):
    """Apply the planned two-source permutes to labelled words: load must give vector i = word i
    of blocks 0..L-1, store must give stream order back (independent of the planner's own check)."""
    stream = [[j * nl + e for e in range(nl)] for j in range(nw)]             # label = b*nw + i
    for load in (True, False):
        plan, stages = (transpose.load_plan if load else transpose.store_plan)(nw, nl)
        cur = stream if load else [[b * nw + i for b in range(nl)] for i in range(nw)]
        for st in range(stages):
            nxt = [None] * nw
            for op in (o for o in plan if o.stage == st):
                pool = cur[op.lo] + cur[op.hi]
                nxt[op.dst] = [pool[k] for k in op.idx]
            cur = nxt
        want = [[b * nw + i for b in range(nl)] for i in range(nw)] if load else stream
        assert cur == want


def test_interpreter_rejects_storing_an_undefined_lane():
    vp = ir.VProgram("t", 2, 1, 2, body=[ir.Load("x", "in", (0, None)), ir.Store("x", "out", (0, 1))])
    with pytest.raises(GenError, match="undefined lane"):
        interp.run(vp, {"in": [1, 2]}, 1)


def test_layouts_import_no_printer_verify_or_cli():
    import ast
    import pathlib
    for path in pathlib.Path(lanes.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                mod = "." * node.level + (node.module or "")
                assert not any(x in mod for x in ("printers", "verify", "cli", "render")), (path.name, mod)


W1_OPS = (ir.Load, ir.Store, ir.Mov, ir.Add, ir.Sub, ir.Xor, ir.Rotl, ir.Rotr, ir.Note)


def _scalars(ops):
    for op in ir.walk(ops):
        if isinstance(op, ir.Scalar):
            yield op


@pytest.mark.parametrize("bits", SIZES)
def test_vector_layouts_compute_words_in_w1_ir_ops(bits):
    """What a vector layout computes on 64-bit words (the setup's key words, the packed body's
    subkey words) is W = 1 layout IR, not a description op: each ``ir.Scalar`` holds IR ops of
    one lane and one word, and names exactly the description values it defines."""
    spec = Spec("1.3", bits)
    progs = [(lanes.lower(describe(spec, o, "encrypt", 1), 4), o) for o in OPTION_SETS]
    progs += [(packed.lower(describe(spec, Options("fly", "full"), d, 1), 2, natural=True), None) for d in DIRECTIONS]
    seen = 0
    for vp, _ in progs:
        for s in _scalars(vp.setup + vp.body):
            seen += 1
            assert s.ops and all(type(op) in W1_OPS for op in s.ops), s
            for op in s.ops:
                assert len(getattr(op, "words", (0,))) == 1 and len(getattr(op, "counts", (0,))) == 1, op
            written = {op.dst for op in s.ops if isinstance(getattr(op, "dst", None), str)}
            assert set(s.names) <= written and len(s.names) <= 1, s
            assert all(w in s.names or "@" in w for w in written), s     # others: expression temporaries
    assert seen > 4 * spec.nw


def test_the_ir_holds_no_description_op():
    """gen/layouts/ir.py takes only the shared operands from the description language."""
    import ast
    from pathlib import Path
    tree = ast.parse(Path(ir.__file__).read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").endswith("dsl")
             for a in n.names}
    assert names <= {"Mem", "Idx"}, names
