"""The assembly backend by stage (gen/asm/): liveness, lowering (scalar and packed), the three
allocation strategies and the allocation checker, which must accept every real allocation and
reject hand-made broken ones with one line naming the value and the location."""
from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from threefish_gen.gen import asm as ra
from threefish_gen.gen.asm.check import ENV_CORRUPT, AllocationCheckError, check, corrupt
from threefish_gen.gen.asm.ir import AOp, Reg, Slot
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.render import Variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.threefish import Options, describe

ROOT = Path(__file__).resolve().parent.parent
needs_nasm = pytest.mark.skipif(shutil.which("nasm") is None, reason="nasm not installed")
A, I, M = ra.Addr, ra.Imm, ra.MOp


def variant(target, bits, version="1.3", keys_table=False, **kw):
    return get_target(target).variant(get_spec(version, bits), Options("table" if keys_table else "fly", "full", 1),
                                      "", **kw)


# --------------------------------------------------------------------------- liveness on a hand-written program

def small_program():
    """k0 = key[0]; per block: x0 = in[0]; x0 += k0; x0 <<<= 7; out[0] = x0; pointers advance."""
    return [M("mov", "k0", A("key", "key", 0, 0), text="k0 = key[0]"),
            M("guard", src="n", text="if n == 0 return"),
            M("top", text="for each block"),
            M("mov", "x0", A("in", "in", 0, 0), text="x0 = in[0]"),
            M("add", "x0", "k0", text="x0 += k0"),
            M("rol", "x0", 7, text="x0 <<<= 7"),
            M("store", src="x0", addr=A("out", "out", 0, 0), text="out[0] = x0"),
            M("add", "in", I(8), text="in += 8"),
            M("add", "out", I(8), text="out += 8"),
            M("add", "tweak", I(16), text="tweak += 16"),
            M("sub", "n", I(1), text="n -= 1"),
            M("bottom", text="while n != 0")]


def test_liveness_small_program():
    ops = small_program()
    assert ra.loop_bounds(ops) == (2, 11)
    assert ra.carried(ops) == {"k0", "in", "out", "tweak", "n"}
    iv = ra.intervals(ops)
    assert iv["x0"] == (3, 6)                   # defined by the load, last read by the store
    assert iv["k0"] == (0, 11)                  # carried: live through the whole loop
    assert iv["key"] == (-1, 0) and iv["n"] == (-1, 11)
    nxt = ra.next_uses(ops)
    assert nxt[3]["k0"] == 4 and nxt[4]["x0"] == 5
    assert nxt[6].get("x0") is None             # dead after the store
    assert nxt[7]["k0"] == 11                   # no read left in the iteration: needed at the bottom


@pytest.mark.parametrize("strategy", ra.STRATEGIES)
@pytest.mark.parametrize("words,abi", [("gpr", "sysv"), ("gpr", "win64"), ("sse2", "sysv")])
def test_small_program_allocated_and_checked(strategy, words, abi):
    isa = ra.isa_for("x86-64", abi, "rol", words)
    alloc = ra.allocate(small_program(), isa, strategy, stack="")
    assert [op.mop for op in alloc.code if op.kind in ("top", "bottom")] == [2, 11]
    check(small_program(), isa, alloc)


# --------------------------------------------------------------------------- every strategy on real programs

CONFIGS = {
    "x64-gpr": ("nasm-x64", dict()),
    "x64-win64": ("nasm-x64", dict(abi="win64")),
    "x64-sse2": ("nasm-x64", dict(isa="sse2")),
    "x64-avx2": ("nasm-x64", dict(isa="avx2")),
    "x64-avx512": ("nasm-x64", dict(isa="avx512")),
    "x64-interleave": ("nasm-x64", dict(schedule="interleave")),
    "x86": ("nasm-x86", dict()),
    "x86-packed": ("nasm-x86", dict(layout="packed")),
    "x64-sse2-packed": ("nasm-x64", dict(isa="sse2", layout="packed")),
}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_every_strategy_accepted_by_checker(config, bits):
    """allocate() runs the checker; it is run here once more on the result, for both directions
    and the scalar tail of the lanes variants.  An allocation that cannot be made (named at high
    pressure) is a one-line GenError, never a checker failure."""
    target, kw = CONFIGS[config]
    accepted = 0
    for strategy in ra.STRATEGIES:
        v = variant(target, bits, strategy=strategy, **kw)
        for direction in ("encrypt", "decrypt"):
            for tail in ((False, True) if kw.get("isa") in ("avx2", "avx512") else (False,)):
                try:
                    isa, alloc = get_target(v.target).allocate(v, direction, tail=tail)
                except AllocationCheckError:
                    raise
                except GenError as e:
                    assert strategy == "named" and "cannot allocate" in str(e), e
                    continue
                _, ops = get_target(v.target).lowered(v, direction, tail=tail)
                check(ops, isa, alloc)
                accepted += 1
    assert accepted >= 4          # belady and linear-scan, both directions


def test_pinned_and_keys_table_accepted():
    for kw in (dict(pin="k,in,out", strategy="linear-scan"), dict(pin="x", registers=None), dict(pin="p"),
               dict(keys_table=True), dict(registers=6), dict(strategy="linear-scan", registers=9)):
        get_target("nasm-x64").allocate(variant("nasm-x64", 256, "1.1", **kw), "encrypt")


# --------------------------------------------------------------------------- hand-made broken allocations

def real(bits=1024, direction="encrypt", **kw):
    """(ops, isa, allocation) of a real variant (default: belady at 1024, with spills)."""
    v = variant("nasm-x64", bits, **kw)
    isa, alloc = get_target(v.target).allocate(v, direction)
    ops = ra.lower(describe(v.spec, v.options, direction, 1), isa)
    return ops, isa, alloc


def rejected(ops, isa, alloc, pattern):
    with pytest.raises(AllocationCheckError, match=pattern) as e:
        check(ops, isa, alloc)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("allocation check failed")
    return msg


def test_swapped_registers_rejected():
    ops, isa, alloc = real()
    broken = copy.deepcopy(alloc)
    p = next(p for p, op in enumerate(broken.code) if op.kind == "add" and op.mop is not None
             and isinstance(op.dst, Reg) and isinstance(op.src, Reg))
    op = broken.code[p]
    want = ops[op.mop].dst
    op.dst, op.src = op.src, op.dst
    msg = rejected(ops, isa, broken, rf"'{want}' expected in {op.dst.name} at instruction {p} ")
    assert f"{op.dst.name} holds '" in msg


def test_dropped_reload_rejected():
    ops, isa, alloc = real()
    broken = copy.deepcopy(alloc)
    p = next(p for p, op in enumerate(broken.code) if op.role == "reload" and op.src.key[0] == "v"
             and ops[broken.code[p + 1].mop or 0].kind != "bottom")
    value, reg = broken.code[p].src.key[1], broken.code[p].dst.name
    del broken.code[p]
    rejected(ops, isa, broken, rf"'{value}' expected in {reg} at instruction \d+ .*, {reg} holds")


def test_spill_to_wrong_slot_rejected():
    ops, isa, alloc = real()
    broken = copy.deepcopy(alloc)
    p = next(p for p, op in enumerate(broken.code) if op.role == "spill" and op.dst.key[0] == "v"
             and op.dst.key[1].startswith("x"))
    value = broken.code[p].dst.key[1]
    other = next(k for k in alloc.slots if k[0] == "v" and k[1] != value)
    broken.code[p].dst = Slot(other)
    rejected(ops, isa, broken, rf"'{other[1]}' expected in {broken.code[p].src.name} to fill its slot "
                               rf"at instruction {p} .*holds '{value}'")


def test_carried_value_clobbered_across_back_edge_rejected():
    """256 bits, linear scan, subkey table: the key words keep their registers around the block
    loop; a move into one of them just before the loop closes breaks the next block."""
    ops, isa, alloc = real(256, strategy="linear-scan", keys_table=True)
    value = min((v for v in ra.carried(ops) if v.startswith("k") and v in alloc.homes), key=ra.natural)
    kreg = alloc.homes[value][0]
    broken = copy.deepcopy(alloc)
    bottom = next(p for p, op in enumerate(broken.code) if op.kind == "bottom")
    other = next(r for r in alloc.used["gpr"] if r != kreg)
    broken.code.insert(bottom, AOp("mov", "gpr", Reg(kreg), Reg(other), "clobber", "move"))
    msg = rejected(ops, isa, broken, rf"carried '{value}' expected back in {kreg} at instruction {bottom + 1} ")
    assert f"{kreg} holds" in msg


def test_pinned_value_moved_rejected():
    """k0 pinned: using it from another register (a copy made there) breaks the pin, although
    the copy holds the right value."""
    ops, isa, alloc = real(256, pin="k0")
    home = alloc.pinned["k0"]
    broken = copy.deepcopy(alloc)
    p = next(p for p, op in enumerate(broken.code) if op.mop is not None and ops[op.mop].src == "k0")
    other = next(r for r in isa.regs["gpr"] if r not in (home, broken.code[p].dst.name))
    broken.code[p].src = Reg(other)
    broken.code.insert(p, AOp("mov", "gpr", Reg(other), Reg(home), "copy k0", "move"))
    broken.used["gpr"] = sorted(set(broken.used["gpr"]) | {other})
    rejected(ops, isa, broken, rf"pinned 'k0' expected in {home} at instruction {p + 1} .*used from {other}")


def test_register_outside_the_frame_rejected():
    """A register the allocation does not list would not be saved by the frame; Win64's
    xmm6-15 are callee-saved and no frame here saves them."""
    ops, isa, alloc = real(256, abi="win64", keys_table=True)
    assert "r15" not in alloc.used["gpr"]
    broken = copy.deepcopy(alloc)
    broken.code.insert(0, AOp("mov", "gpr", Reg("r15"), Reg(isa.arg_regs["key"]), "", "move"))
    rejected(ops, isa, broken, r"r15 used at instruction 0 .*not in the allocation's registers")
    broken = copy.deepcopy(alloc)
    broken.code.insert(0, AOp("mov", "xmm", Reg("xmm6"), Reg("xmm0"), "", "move"))
    broken.used["xmm"] = ["xmm0", "xmm6"]
    rejected(ops, isa, broken, r"xmm6 written at instruction 0 .*callee-saved under win64")


# --------------------------------------------------------------------------- the debug hook and the report

@pytest.mark.parametrize("hook", ["swap:3", "drop-reload:1", "wrong-slot:1"])
def test_cli_corrupted_allocation_exit_2_one_line(hook, tmp_path):
    env = dict(os.environ, **{ENV_CORRUPT: hook})
    for cmd in (["render", "--target", "nasm-x64", "--size", "1024", "--constants", "1.3", "--out", str(tmp_path)],
                ["regalloc", "--target", "nasm-x64", "--size", "1024", "--strategy", "all"]):
        p = subprocess.run([sys.executable, "-m", "threefish_gen", *cmd], cwd=ROOT, capture_output=True, text=True, env=env)
        assert p.returncode == 2, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert re.match(r"threefish-gen: error: allocation check failed \(\S+, x86-64\): "
                        r"'[^']+' expected in \S+ .*at instruction \d+", p.stderr), p.stderr


def test_bad_corruption_hook_is_one_line_error():
    ops, isa, alloc = real(256)
    with pytest.raises(GenError, match="expected one of swap"):
        corrupt(alloc, "shuffle:1")

def test_belady_spills_less_than_linear_scan():
    """1024 bits: 16 words + pointers > 15 GPRs; Belady's MIN reloads less than linear scan."""
    st = {}
    for s in ("belady", "linear-scan"):
        _, alloc = get_target("nasm-x64").allocate(variant("nasm-x64", 1024, strategy=s), "encrypt")
        st[s] = alloc.stats
    assert st["belady"]["reloads"] < st["linear-scan"]["reloads"]
    assert st["belady"]["spills"] < st["linear-scan"]["spills"]
    assert st["belady"]["spills"] > 0          # the pressure is real


@pytest.mark.parametrize("kw,pattern", [
    (dict(strategy="belady", registers=1), r"no gpr register left for 'k0 = key\[0\]': live there key"),
    (dict(strategy="belady", pin="x"), r"16 gpr values live .*\(k0, .*x15\)|x1[0-5].*only 15"),
    (dict(strategy="named"), r"cannot allocate x9: .*\(in, n, out, tweak, x0, .*x9\)"),
    (dict(strategy="linear-scan", registers=2), r"leaves no gpr register"),
])
def test_impossible_allocation_is_one_line_error(kw, pattern):
    with pytest.raises(GenError, match=pattern) as e:
        get_target("nasm-x64").allocate(variant("nasm-x64", 1024, **kw), "encrypt")
    assert "\n" not in str(e.value)


def test_cli_regalloc_exit_2_on_impossible_budget():
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "regalloc", "--size", "1024", "--strategy", "named"],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.startswith("threefish-gen: error: cannot allocate") and "Traceback" not in p.stderr


@needs_nasm
def test_cli_regalloc_table():
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "regalloc", "--target", "nasm-x64", "--size", "1024",
                        "--strategy", "all"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[1].split() == ["named", "linear-scan", "belady"]
    spills = dict(zip(["named", "linear-scan", "belady"], lines[3].split()[1:]))
    assert spills["named"] == "fails" and int(spills["belady"]) < int(spills["linear-scan"])
    code = [ln for ln in lines if ln.startswith("code bytes")][0].split()[2:]
    assert all(int(x) > 1000 for x in code[1:])
    assert [ln for ln in lines if ln.startswith("allocation check")][0].split()[2:] == ["fails", "accepted", "accepted"]


def test_liveness_loop_carried():
    v = variant("nasm-x64", 256)
    isa = ra.isa_for("x86-64", "sysv", "rol")
    ops = ra.lower(describe(v.spec, v.options, "encrypt", 1), isa)
    car = ra.carried(ops)
    assert {"in", "out", "tweak", "n", "k0", "k4"} <= car
    assert not any(x.startswith("x") for x in car)      # state words live within one block
    iv = ra.intervals(ops)
    top, bottom = ra.loop_bounds(ops)
    assert iv["k0"][1] == bottom and iv["x0"][0] > top


FORMS = {   # name -> (machine, abi, rotate, --isa, --layout)
    "x86-packed": ("x86", "cdecl", "shift", "sse2", "packed"),
    "x64-sse2-packed": ("x86-64", "sysv", "shift", "sse2", "packed"),
    "x64-avx2-lanes": ("x86-64", "sysv", "shift", "avx2", "scalar"),
    "x64-avx512-lanes": ("x86-64", "sysv", "rol", "avx512", "scalar"),
    "x64-gpr": ("x86-64", "sysv", "rol", "gpr", "scalar"),
    "x86-sse2": ("x86", "cdecl", "shift", "sse2", "scalar"),
}


def lowered(form, prog, schedule="description"):
    isa = ra.isa_for(*FORMS[form])
    if isa.layout == "packed":
        return isa, ra.lower_packed(prog, isa)
    return isa, (ra.lower_lanes if isa.lanes > 1 else ra.lower)(prog, isa, schedule)


def run_lowered(form, spec, direction, ops, isa, passes=3, seed=1):
    """(output words, the reference's) for ``passes`` passes of random blocks through the
    machine-op interpreter (gen/asm/interp.py)."""
    import random
    from threefish_gen.gen import reference
    from threefish_gen.gen.asm import interp
    from threefish_gen.gen.dsl import bytes_from_words, words_from_bytes
    nb = passes * (1 if isa.layout == "packed" else isa.lanes)
    rnd = random.Random(seed)
    key = [rnd.getrandbits(64) for _ in range(spec.nw)]
    tw = [rnd.getrandbits(64) for _ in range(2 * nb)]
    data = [rnd.getrandbits(64) for _ in range(spec.nw * nb)]
    mem = {"key": key, "tweak": tw, "in": data, "out": [0] * (spec.nw * nb)}
    got = interp.run(ops, isa, spec.nw, mem, passes)["out"]
    want = []
    for b in range(nb):
        want += words_from_bytes(getattr(reference, direction)(
            spec, bytes_from_words(key), bytes_from_words(tw[2 * b:2 * b + 2]),
            bytes_from_words(data[spec.nw * b:spec.nw * (b + 1)])))
    return got, want


@pytest.mark.parametrize("version", ["1.1", "1.2", "1.3"])
@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("form", list(FORMS))
def test_lowered_ops_match_reference(form, bits, version):
    """The lowered machine ops of every form (packed: load/unpack, lane shuffles from the layout
    IR, per-lane rotates, key pairs + tweak words; lanes: whole-vector loads and stores with their
    transposes' lane moves, broadcasts, from the layout IR) compute Threefish: run three passes on Python integers against the reference,
    both schedules and key forms where the form has them."""
    spec = get_spec(version, bits)
    for d in ("encrypt", "decrypt"):
        for schedule, keys in (("description", "fly"), ("interleave", "fly"), ("description", "table")):
            if FORMS[form][4] == "packed" and (schedule, keys) != ("description", "fly"):
                continue
            isa, ops = lowered(form, describe(spec, Options(keys, "full", 1), d, 1), schedule)
            got, want = run_lowered(form, spec, d, ops, isa)
            assert got == want, (form, bits, version, d, schedule, keys)


@pytest.mark.parametrize("form", ["x86-packed", "x64-avx512-lanes"])
def test_lowered_ops_interpreter_catches_a_wrong_op(form):
    """The interpreter is not blind: one shuffle (packed lane move, lanes transpose move) or one
    load offset wrong fails the check."""
    spec = get_spec("1.3", 512)
    isa, ops = lowered(form, describe(spec, Options(), "encrypt", 1))
    swap = {"lolo": "hihi", "hihi": "lolo", "unpcklo": "unpckhi", "unpckhi": "unpcklo", "even128": "odd128",
            "odd128": "even128"}
    for pick in (lambda o: o.kind in swap, lambda o: isinstance(o.src, ra.Addr) and o.src.array == "in"):
        i = next(i for i, o in enumerate(ops) if pick(o))
        o = ops[i]
        bad = (ra.MOp(swap[o.kind], o.dst, o.src, text=o.text) if o.kind in swap
               else ra.MOp(o.kind, o.dst, ra.Addr("in", "in", o.src.index + 1, o.src.offset + 8), text=o.text))
        got, want = run_lowered(form, spec, "encrypt", ops[:i] + [bad] + ops[i + 1:], isa)
        assert got != want, (form, o)
    assert run_lowered(form, spec, "encrypt", ops, isa) == (want, want)


def test_lanes_lowering_comes_from_the_layout_ir():
    """nasm lanes: the blocks and their tweaks are whole-vector Loads of the layout IR (stream
    order) transposed by two-source Shuffles (gen/layouts/lanes.py lower_stream with the class's
    lane moves, gen/isa/x86.py LANE_PAIRS), the state transposed back and stored whole; a Load
    is lowered (an IR visitor, no description ops in between) as the load of its first word, a
    Shuffle as a copy of its first source and the two-address lane move that matches its lanes;
    a Load that is not one vector of consecutive words is refused."""
    from threefish_gen.gen.asm.lowering import lane_bit_moves
    from threefish_gen.gen.isa import x86
    from threefish_gen.gen.layouts import ir, lanes
    spec = get_spec("1.3", 512)
    vp = lanes.lower_stream(describe(spec, Options(), "encrypt", 1), 8, moves=lane_bit_moves("zmm"))
    ops = list(ir.walk(vp.body))
    loads = [op for op in ops if isinstance(op, ir.Load)]
    stores = [op for op in ops if isinstance(op, ir.Store)]
    shuffles = [op for op in ops if isinstance(op, ir.Shuffle)]
    assert [op.array for op in loads] == ["tweak"] * 2 + ["in"] * 8 and {op.array for op in stores} == {"out"}
    assert all(op.words == tuple(range(op.words[0], op.words[0] + 8)) for op in loads + stores)
    assert sorted(op.words[0] for op in stores) == list(range(0, 64, 8))
    # 3 stages of 8 lane moves for the blocks' load and for their store, 1 of 2 for the tweaks'
    assert len(shuffles) == 50 and {op.kind for op in shuffles} == {"transpose"}
    low = ra.Lowering(ra.isa_for(*FORMS["x64-avx512-lanes"]), spec.nw)
    last = next(op for op in reversed(loads) if op.array == "in")
    low.run([last, shuffles[0]])
    mop, copy, move = low.out
    assert (mop.kind, mop.dst, mop.src.base, mop.src.offset, mop.text) == ("mov", last.dst, "in", 8 * last.words[0],
                                                                           f"{last.dst} = in[{last.words[0]}]")
    assert (copy.kind, copy.dst, copy.src) == ("mov", shuffles[0].dst, shuffles[0].srcs[0])
    assert move.kind in x86.LANE_MOVES["zmm"] and (move.dst, move.src) == (shuffles[0].dst, shuffles[0].srcs[1])
    assert x86.lane_move_pattern("zmm", move.kind) == shuffles[0].lanes
    with pytest.raises(GenError, match="not one vector of consecutive words"):
        low.run([ir.Load("x0", "in", tuple(8 * b for b in range(8)))])


# --------------------------------------------------------------------------- layering

def _import_graph() -> dict:
    """Module -> the project modules it imports (anywhere in the file), from the source."""
    import ast
    files = {}
    for f in list(ROOT.glob("threefish_gen/gen/**/*.py")) + list(ROOT.glob("threefish_gen/verify/**/*.py")):
        name = ".".join(f.relative_to(ROOT / "threefish_gen").with_suffix("").parts)
        files[name[:-9] if name.endswith(".__init__") else name] = f
    graph = {}
    for name, f in files.items():
        pkg = name if f.name == "__init__.py" else name.rsplit(".", 1)[0]
        out = set()
        for n in ast.walk(ast.parse(f.read_text())):
            if isinstance(n, ast.ImportFrom):
                base = pkg.split(".")[:len(pkg.split(".")) - (n.level - 1)] if n.level else []
                m = ".".join(base + ([n.module] if n.module else []))
                cands = [m] + [f"{m}.{a.name}" for a in n.names]
            elif isinstance(n, ast.Import):
                cands = [a.name for a in n.names]
            else:
                continue
            cands = [c.removeprefix("threefish_gen.") for c in cands]
            out |= {c for c in cands if c in files and c != name}
        graph[name] = out
    return graph


def test_asm_layering_and_no_cycles():
    """gen/asm reaches neither verify/ nor the CLI, bench, report or printers (the instruction
    tables of gen/isa/ it shares with them are allowed); no import cycle."""
    graph = _import_graph()
    reach, todo = set(), [m for m in graph if m.startswith("gen.asm")]
    while todo:
        m = todo.pop()
        if m not in reach:
            reach.add(m)
            todo += graph[m]
    outside = {m for m in reach if not m.startswith(("gen.asm", "gen.dsl", "gen.errors", "gen.isa",
                                                      "gen.layouts", "gen.spec", "gen.threefish"))}
    assert not outside, outside
    state: dict = {}

    def visit(m, path):
        state[m] = "open"
        for n in graph[m]:
            if n not in reach:
                continue
            assert state.get(n) != "open", " -> ".join(path + [n])
            if n not in state:
                visit(n, path + [n])
        state[m] = "done"
    for m in sorted(reach):
        if m not in state:
            visit(m, [m])


# --------------------------------------------------------------------------- --unroll loop: the cycle loop

def loop_variant(bits=512, **kw):
    v = get_target("nasm-x64").variant(get_spec("1.3", bits), Options("fly", "loop", 1), "", **kw)
    return v


@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_loop_lowering_matches_reference(bits):
    """--unroll loop: the lowered ops (key/counter/tweak rings in the frame, the cycle loop read
    by its counter from -8*scale*cycles up or down to 0) compute Threefish: three passes of
    random blocks through the machine-op interpreter against the reference, both directions; a
    ring index one word off changes the output (the interpreter follows the counter)."""
    spec = get_spec("1.3", bits)
    for d in ("encrypt", "decrypt"):
        isa, ops = lowered("x64-gpr", describe(spec, Options("fly", "loop", 1), d, 1))
        assert [o.kind for o in ops].count("ctop") == 1 == [o.kind for o in ops].count("cbottom")
        got, want = run_lowered("x64-gpr", spec, d, ops, isa)
        assert got == want, (bits, d)
        i = next(i for i, o in enumerate(ops) if isinstance(o.src, ra.Addr) and o.src.counter)
        o = ops[i]
        bad = ra.MOp(o.kind, o.dst, ra.Addr(None, o.src.array, o.src.index + 1, o.src.offset + 8, o.src.counter),
                     text=o.text)
        got, _ = run_lowered("x64-gpr", spec, d, ops[:i] + [bad] + ops[i + 1:], isa)
        assert got != want


def test_loop_liveness_of_the_cycle_loop():
    """The cycle loop's head: the counter, the state words and the tweak words (rotated once per
    cycle) are read before written there; the pointers and the key words of the last subkey
    (18 at 512 bits) are live through it (read after it); its key word + 18 is the counter
    ring's kc[18], not stored twice."""
    spec = get_spec("1.3", 512)
    _, ops = lowered("x64-gpr", describe(spec, Options("fly", "loop", 1), "encrypt", 1))
    live, exposed = ra.cycle_carried(ops)
    assert exposed == {"ctr", "t0", "t1", "t2"} | {f"x{i}" for i in range(8)}
    assert live - exposed == {"in", "out", "tweak", "n"} | {f"k{i}" for i in range(7)}
    assert sum(1 for o in ops if o.kind == "store" and o.addr.array == "kc" and o.addr.index == 18) == 1
    ctop, cbottom = ra.cycle_bounds(ops)
    iv = ra.intervals(ops)
    assert all(iv[v][1] >= cbottom for v in live)
    assert ra.cycle_bounds(lowered("x64-gpr", describe(spec, Options(), "encrypt", 1))[1]) is None


@pytest.mark.parametrize("bits", [512, 1024])
def test_loop_every_strategy_accepted_by_checker(bits):
    """Every strategy's allocation of the cycle loop (both directions, both ABIs for belady)
    passes the checker, run once more here; named cannot fit 1024 (one line)."""
    for kw in (dict(strategy="belady"), dict(strategy="belady", abi="win64"), dict(strategy="linear-scan"),
               dict(strategy="named")):
        v = loop_variant(bits, **kw)
        for direction in ("encrypt", "decrypt"):
            try:
                isa, alloc = get_target(v.target).allocate(v, direction)
            except GenError as e:
                assert kw["strategy"] == "named" and bits == 1024 and "cannot allocate" in str(e), e
                continue
            _, ops = get_target(v.target).lowered(v, direction)
            check(ops, isa, alloc)
            assert [op.kind for op in alloc.code].count("cbottom") == 1


def real_loop(bits=512, direction="encrypt", **kw):
    v = loop_variant(bits, **kw)
    isa, alloc = get_target(v.target).allocate(v, direction)
    _, ops = get_target(v.target).lowered(v, direction)
    return ops, isa, alloc


def test_loop_ring_read_through_another_register_rejected():
    """A ring word read through a register that does not hold the counter is rejected."""
    ops, isa, alloc = real_loop()
    broken = copy.deepcopy(alloc)
    p = next(p for p, op in enumerate(broken.code) if isinstance(op.src, ra.RingMem))
    ring = broken.code[p].src
    other = next(r for r in alloc.used["gpr"] if r != ring.reg.name)
    broken.code[p].src = ra.RingMem(Reg(other), ring.array, ring.index)
    rejected(ops, isa, broken, rf"'ctr' expected in {other} at instruction {p} ")


def test_loop_ring_word_at_the_wrong_index_rejected():
    ops, isa, alloc = real_loop()
    broken = copy.deepcopy(alloc)
    p = next(p for p, op in enumerate(broken.code) if isinstance(op.src, ra.RingMem))
    ring = broken.code[p].src
    broken.code[p].src = ra.RingMem(ring.reg, ring.array, ring.index + 1)
    rejected(ops, isa, broken, rf"ring word {ring.array}\[{ring.index} \+ ctr/8\] expected at instruction {p} ")


def test_loop_ring_word_overwritten_rejected():
    """Every word of a ring must hold its value where the counter reads it: a spill into a ring
    slot before the cycle loop is rejected at the first ring read."""
    ops, isa, alloc = real_loop()
    broken = copy.deepcopy(alloc)
    ctop = next(p for p, op in enumerate(broken.code) if op.kind == "ctop")
    first = next(p for p, op in enumerate(broken.code) if isinstance(op.src, ra.RingMem))
    x = broken.code[first].src
    reg = next(r for r in alloc.used["gpr"] if r != x.reg.name)
    broken.code.insert(ctop, AOp("mov", "gpr", Slot(("a", x.array, 3)), Reg(reg), "clobber", "move"))
    rejected(ops, isa, broken, rf"'{x.array}\[3\]' expected in the stack slot {x.array}\[3\] at instruction "
                               rf"{first + 1} ")


def test_loop_cycle_carried_value_clobbered_across_back_edge_rejected():
    """A state word moved out of its register just before the cycle loop closes breaks the next
    cycle (the checker's fixed point over the cycle loop)."""
    ops, isa, alloc = real_loop()
    broken = copy.deepcopy(alloc)
    ctop = next(p for p, op in enumerate(broken.code) if op.kind == "ctop")
    cbottom = next(p for p, op in enumerate(broken.code) if op.kind == "cbottom")
    at_top = {}
    for op in broken.code[:ctop]:      # the register each state word was written to last
        if op.mop is not None and isinstance(op.dst, Reg) and ops[op.mop].writes():
            at_top[ops[op.mop].writes()] = op.dst.name
    reg = at_top["x3"]
    other = next(r for r in alloc.used["gpr"] if r != reg)
    broken.code.insert(cbottom, AOp("mov", "gpr", Reg(reg), Reg(other), "clobber", "move"))
    msg = rejected(ops, isa, broken, rf"carried '\w+' expected back in {reg} at instruction {cbottom + 1} ")
    assert f"{reg} holds" in msg
