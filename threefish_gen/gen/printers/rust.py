"""Printer for the scalar Rust target (safe Rust, u64).

The scalar methods are the W = 1 layout IR (gen/layouts/scalar.py) printed one statement per op
(the table ``RUST_STATEMENTS``, as ``gen/printers/c.py`` prints it for C); the crate's structure (STEM/Cargo.toml, STEM/src/lib.rs,
STEM/README.md) lives in ``templates/rust/``.

The description's arrays map to Rust as follows: ``key`` (read in the setup only) is the
``&[u8; NB]`` argument of ``new``; ``tweak``, ``in`` and ``out`` are the tweak and the block of
the one-block methods (``in`` and ``out`` are the same ``&mut [u8; NB]``: every word is loaded
before any is stored, as the description orders them), or, in the interleaved body of the
``_blocks`` methods, ``tw[b]`` and ``blk[b]`` of a group of B blocks (``&[[u8; 16]; B]``,
``&mut [[u8; NB]; B]``).  Arrays the setup stores (the key and counter rings of ``--unroll loop``)
are fields of the key schedule struct; arrays the body stores (the subkey tables of keys table) are
locals of the method.

SIMD paths (``render --target rust --isa avx2 | avx512 | neon | auto``): :class:`LanesPrinter`
prints the lanes layout IR (gen/layouts/lanes.py: L blocks word-sliced, the IR the SIMD C target
prints its lanes kernels from) as Rust statements on ``core::arch`` vectors; every vector operation
is spelled by the ISA's module through its family (gen/isa/x86.py ``RustWidth``, gen/isa/neon.py
``RustNeonWidth``: ``rust_width``, ``rust_memory``, the shuffle candidates and rotations), this
module only walks the IR (``ir.visit``) and writes Rust's statements around the spellings.  It
lowers nothing: the target's layout pass (gen/targets/rust.py ``layout_simd``) hands it every
program already in its layout (W = 1, and lanes for the SIMD paths).
"""
from __future__ import annotations

from ..dsl import Idx, Mem
from ..errors import GenError
from ..isa import family_of, shuffle
from ..isa.x86 import vector_op
from ..layouts import ir
from . import LanesState, load_word

# One Rust statement per W = 1 operation.  {d} destination, {a} operand, {n} rotation.
RUST_STATEMENTS = {
    "mov": "{d} = {a};",
    "add": "{d} = {d}.wrapping_add({a});",
    "sub": "{d} = {d}.wrapping_sub({a});",
    "xor": "{d} ^= {a};",
    "rotl": "{d} = {d}.rotate_left({n});",
    "rotr": "{d} = {d}.rotate_right({n});",
}
# The first definition of a value (always a mov in the description: Builder.val) declares it.
RUST_LET = "let {mut}{d} = {a};"

COUNTER = "c"        # the loop counter (usize) of --unroll loop


def index(idx: Idx) -> str:
    """An array index affine in the loop counter, as a usize expression (never ``0 + c``)."""
    if idx.scale == 0:
        return str(idx.base)
    term = COUNTER if abs(idx.scale) == 1 else f"{abs(idx.scale)} * {COUNTER}"
    if idx.base == 0:
        if idx.scale < 0:
            raise GenError(f"internal: negative index -{term}")
        return term
    return f"{idx.base} {'+' if idx.scale > 0 else '-'} {term}"


class RustPrinter:
    """Prints the W = 1 layout IR (gen/layouts/scalar.py: the description's ops, one word per
    ``u64``) as Rust statements; an IR visitor (gen/layouts/ir.py ``visit``).

    ``arrays`` maps the description's input/output arrays to ``(expression, words per block)``:
    word w of ``in`` in the interleaved body is word ``w % nw`` of block ``w // nw`` of the
    group; ``words per block`` 0 means the expression is one array (the single-block methods).
    ``notes``: print the description's notes as ``// ...`` comments.  ``opaque``: the words
    ``(array, index)`` of local arrays read through ``core::hint::black_box`` (the value unchanged,
    hidden from the optimizer: Skein's position ``t[0]``, :func:`ubi_section`)."""

    def __init__(self, arrays: dict[str, tuple[str, int]], notes: bool = True, opaque=()):
        self.arrays = arrays
        self.notes = notes
        self.opaque = frozenset(opaque)

    def mem(self, m: Mem, store: bool = False) -> tuple[str, str | None]:
        """(the byte array reference and the word in it; or a local array element and None)."""
        if m.array in self.arrays:
            if m.index.scale:
                raise GenError(f"internal: {m.array}[{m.index}] is affine in the loop counter")
            expr, per = self.arrays[m.array]
            word = m.index.base
            if per:
                expr, word = f"&{'mut ' if store else ''}{expr}[{word // per}]", word % per
            return expr, str(word)
        return f"{m.array}[{index(m.index)}]", None

    def operand(self, a) -> str:
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            expr, word = self.mem(a)
            if word is None and not a.index.scale and (a.array, a.index.base) in self.opaque:
                return f"core::hint::black_box({expr})"
            return expr if word is None else f"load64({expr}, {word})"
        if a.scale:
            return f"({index(a)}) as u64"
        return f"{a.base:#x}" if a.base > 0xFFFF else f"{a.base}"

    def lines(self, ops, names, outer=()) -> list[str]:
        """The statements of W = 1 ops whose values are ``names`` (any other name they write is an
        expression temporary: a word of caller memory, printed at its one use); ``outer``: values
        defined before (bound by the caller)."""
        return _RustLines(self, ops, set(names), set(outer)).out


class _RustLines:
    """The statements of one W = 1 op list (:meth:`RustPrinter.lines`): the first definition of
    a value (always a move in the description: Builder.val) declares it, ``let mut`` where
    something writes it again."""

    def __init__(self, pr: RustPrinter, ops, names: set, declared: set):
        self.pr, self.names, self.declared = pr, names, declared
        self.mutable = assigned_again(ops)
        self.dead = ir.dead_first_writes(ops)
        self.expr: dict[str, str] = {}
        self.out: list[str] = []
        for op in ops:
            self.out += ir.visit(op, self)

    def term(self, a) -> str:
        return self.expr.pop(a) if isinstance(a, str) and a in self.expr else self.pr.operand(a)

    def note(self, op):
        return [f"// {op.text}"] if self.pr.notes else []

    def loop(self, item):
        first = [d for o in ir.walk(item.body) if (d := ir.writes(o)) in self.names and d not in self.declared]
        if first:
            raise GenError(f"internal: value {first[0]} is first defined inside a loop")
        uses_counter = any(ir.counter_operands(o) for o in item.body)
        body = [line for o in item.body for line in ir.visit(o, self)]
        return [f"for {COUNTER if uses_counter else '_'} in 0..{item.count} {{"] + ["    " + x for x in body] + ["}"]

    def load(self, op):
        return load_word(self, op, self.pr.operand, lambda a: self._assign(op, op.dst, a, True))

    def store(self, op):
        (w,) = op.words
        expr, word = self.pr.mem(Mem(op.array, w), store=True)
        return [f"{expr} = {op.src};" if word is None else f"store64({expr}, {word}, {op.src});"]

    def mov(self, op):
        if isinstance(op.dst, Mem):                # an element of a local array
            return [f"{self.pr.mem(op.dst, store=True)[0]} = {op.a};"]
        return [self._assign(op, op.dst, self.term(op.a), isinstance(op.a, (str, Mem)))]

    def _assign(self, op, d: str, a: str, typed: bool) -> str:
        if d in self.declared:
            return RUST_STATEMENTS["mov"].format(d=d, a=a)
        self.declared.add(d)
        if id(op) in self.dead:          # overwritten before any read: declared, not initialised
            return f"let mut {d}: u64;" + (f" // {d} = {a}: overwritten before it is read" if self.pr.notes else "")
        return RUST_LET.format(mut="mut " if d in self.mutable else "", d=d, a=a if typed else a + "_u64")

    def arith(self, op):
        if op.dst not in self.declared or op.a != op.dst:
            raise GenError(f"internal: {op!r} before {op.dst} is defined, or not in place")
        return [RUST_STATEMENTS[op.name].format(d=op.dst, a=self.term(op.b))]

    def rotate(self, op):
        (n,) = op.counts
        if op.src != op.dst:
            raise GenError(f"internal: rotation {op!r} is not in place")
        return [RUST_STATEMENTS["rotl" if op.left else "rotr"].format(d=op.dst, n=n)]


def assigned_again(ops) -> set[str]:
    """Values an op other than their first definition writes (they are ``let mut``)."""
    seen: set[str] = set()
    again: set[str] = set()
    for op in ir.walk(ops):
        d = ir.writes(op)
        if d is None:
            continue
        if d in seen:
            again.add(d)
        seen.add(d)
    return again


def read_names(ops) -> set[str]:
    """Values and arrays W = 1 ``ops`` read."""
    out: set[str] = set()
    for op in ir.walk(ops):
        out.update(ir.reads(op))
        out.update(ir.arrays_read(op))
    return out


def key_schedule(vp, bodies) -> dict:
    """What ``new`` computes and the struct keeps: the setup's statements (key read from
    ``key``; ``vp``: a W = 1 program), the values and arrays the ``bodies`` (W = 1 op lists)
    read from it (the struct's fields)."""
    pr = RustPrinter({"key": ("key", 0)})
    read = set().union(*(read_names(b) for b in bodies))
    words = [v for v in vp.setup_values if v in read]
    arrays = {a: n for a, n in vp.setup_arrays.items() if a in read}
    return {"code": [f"let mut {a} = [0u64; {n}];" for a, n in arrays.items()] + pr.lines(vp.setup, vp.setup_values),
            "words": words, "arrays": arrays}


def setup_suffix(setup, other) -> list:
    """The ops of ``other`` (a SIMD path's setup, W = 1) after ``setup`` (the scalar methods'):
    the rings of --unroll loop that the scalar options do not make ([] when ``other`` is not
    longer).  The setups of two option sets are prefixes of one another (key words and parity,
    then rings)."""
    n = min(len(setup), len(other))
    if list(setup[:n]) != list(other[:n]):
        raise GenError("internal: the option sets' key schedules are not prefixes of one another")
    return list(other[len(setup):])


def section(printer: RustPrinter, vp, schedule: dict) -> dict:
    """One body (of the W = 1 program ``vp``): the struct fields it reads (bound first), its
    local arrays, its statements."""
    read = read_names(vp.body)
    return {"words": [w for w in schedule["words"] if w in read],
            "arrays": [a for a in schedule["arrays"] if a in read],
            "locals": dict(vp.arrays),
            "code": printer.lines(vp.body, vp.values, schedule["words"])}


def function_bodies(progs: dict, blocks_progs: dict, notes: bool = True, simd_scalar=()) -> dict:
    """Code of ``new`` and of each direction's one-block and blocks methods, from their W = 1
    programs (gen/layouts/scalar.py); ``simd_scalar``: the W = 1 programs of the description
    programs the SIMD paths print (their key words and rings join the struct)."""
    first = next(iter(progs.values()))
    if any(vp.setup != first.setup for vp in progs.values()):
        raise GenError("internal: the directions' key schedules differ")
    bodies = [vp.body for vp in progs.values()] + [vp.body for vp in blocks_progs.values()]
    # a SIMD path reads the struct's key words and rings; rings only its options make (--unroll
    # loop beside scalar full) it computes itself, per call (new and the struct stay the scalar
    # crate's: single blocks pay nothing for the paths)
    for svp in simd_scalar:
        bodies += [svp.body, setup_suffix(first.setup, svp.setup)]
    schedule = key_schedule(first, bodies)
    single = RustPrinter({"tweak": ("tweak", 0), "in": ("block", 0), "out": ("block", 0)}, notes)
    group = RustPrinter({"tweak": ("tw", 2), "in": ("blk", first.nw), "out": ("blk", first.nw)}, notes)
    out = {"schedule": schedule}
    for d, vp in progs.items():
        out[d] = {"one": section(single, vp, schedule),
                  "group": section(group, blocks_progs[d], schedule),
                  "tail": section(single, vp, schedule)}
    return out


def ubi_section(vp, notes: bool = True) -> dict:
    """The fused UBI block of Skein (``gen/skein.ubi_program`` as one W = 1 body,
    gen/layouts/scalar.py ``lower(prog, fuse=True)``: key schedule of the chaining value, rounds,
    feed-forward into it) as the statements of one pass of the UBI loop of
    templates/rust/skein.rs.j2: ``h`` (``&mut [u64; NW]``) and ``t`` (``&[u64; 2]``) are read and
    stored as words, the message block ``in`` through ``load64(blk, i)`` (``blk: &[u8; NB]``).
    ``locals``: the scratch arrays the block stores (subkey table, key rings), declared once
    before the loop (and wiped after it).

    The position ``t[0]`` is read through ``core::hint::black_box``: the template inlines the
    block into the blocks loop of ``ubi``, where LLVM would otherwise see ``t[0]`` as an induction
    variable (``+= add`` per block) and strength-reduce every subkey addition of it into a value
    of its own kept across blocks (spilled: 1.8x the C's time on Zen 4).  Hidden, the block
    compiles as the C's loop body (and the call per block of a non-inlined block is gone)."""
    pr = RustPrinter({"in": ("blk", 0)}, notes, opaque={("t", 0)})
    return {"locals": dict(vp.arrays), "code": pr.lines(vp.body, vp.values)}


# --------------------------------------------------------------------------- SIMD paths

# The caller's arrays of one pass of the SIMD paths: (the Rust array of blocks, words per block).
LANE_ARRAYS = {"in": ("blk", None), "out": ("blk", None), "tweak": ("tw", 2)}


def assigned_counts(ops, weight: int = 1) -> dict[str, int]:
    """How often each vector value is assigned in ``ops`` (an assignment in a loop counts twice:
    it runs again)."""
    n: dict[str, int] = {}
    for op in ops:
        if ir.is_loop(op) or ir.is_block(op):
            for d, k in assigned_counts(op.body, weight * (2 if ir.is_loop(op) else 1)).items():
                n[d] = n.get(d, 0) + k
        elif (d := ir.writes(op)) is not None:
            n[d] = n.get(d, 0) + weight
    return n


class LanesPrinter(LanesState):
    """Prints the lanes layout IR of one pass (gen/layouts/lanes.py) as Rust statements on the
    vectors of an ISA, x86 or NEON (an IR visitor: one method per kind of op, each returning its
    lines).  Spellings: the ISA family's module (``rust_width``, shuffle candidates, rotations)."""

    def __init__(self, isa, vp: ir.VProgram, nw: int, notes: bool = True, splat: dict | None = None):
        super().__init__(isa, vp, "rust_width")
        self.nw, self.notes = nw, notes
        self.splat = splat or {}           # {vector ring: its word ring} read by broadcast loads
        self.dead = ir.dead_first_writes(vp.body)
        self.again = {d for d, k in assigned_counts(vp.body).items() if k - self._dead_of(d) > 1}

    def _dead_of(self, name: str) -> int:
        return sum(1 for op in self.vp.body if id(op) in self.dead and ir.writes(op) == name)

    def operand(self, a) -> str:
        """A vector operand: a value, an element of a vector array, or a constant in every lane
        (affine in the loop counter: a usize expression)."""
        if isinstance(a, str):
            return a
        if isinstance(a, Mem):
            if a.array in self.splat:
                return self.w.set1(f"{self.splat[a.array]}[{index(a.index)}]")
            return f"{a.array}[{index(a.index)}]"
        if a.scale:
            return self.w.set1_index(index(a))
        return self.w.set1(f"{a.base:#x}" if a.base > 0xFFFF else str(a.base))


    def addr(self, array: str, words: tuple, store: bool = False) -> str:
        """``&array[block], word`` of a row load or store (the crate's helpers' arguments)."""
        used = [x for x in words if x is not None]
        if used != list(range(used[0], used[0] + len(used))):
            raise GenError(f"internal: row {words} is not consecutive words")
        name, per = LANE_ARRAYS[array]
        blk, word = divmod(used[0], per or self.nw)
        return f"&{'mut ' if store else ''}{name}[{blk}], {word}", len(used)

    def lines(self, ops) -> list[str]:
        out: list[str] = []
        for op in ops:
            out += ir.visit(op, self)
        return out

    def declarations(self) -> list[str]:
        """The pass's vector values, declared before their first assignment (some are first
        assigned inside a gather block)."""
        return [f"let {'mut ' if n in self.again else ''}{n}: {self.w.T};" for n in self.vp.values]

    # ---- the ops of the pass body
    def loop(self, item):
        uses = any(isinstance(x, (Mem, Idx)) and (x.index if isinstance(x, Mem) else x).scale
                   for op in item.body for x in (getattr(op, "a", None), getattr(op, "b", None), getattr(op, "dst", None)))
        body = [line for op in item.body for line in ir.visit(op, self)]
        return [f"for {COUNTER if uses else '_'} in 0..{item.count} {{"] + ["    " + x for x in body] + ["}"]

    def block(self, op):
        for sh in ir.shuffles(op.body):
            self.count(f"shuffle ({sh.kind})")
        body = op.body if ir.has_store(op.body) else ir.dead_code(op.body, self.declared)
        return ["{"] + ["    " + line for o in body for line in ir.visit(o, _LanesBlock(self))] + ["}"]

    def note(self, op):
        return [f"// {op.text}"] if self.notes else []

    def mov(self, op):
        if id(op) in self.dead:           # overwritten before it is read (rustc: never read)
            return [f"// {op.dst} = {self.operand(op.a)}: overwritten before it is read"] if self.notes else []
        if isinstance(op.dst, Mem):
            return [f"{self.operand(op.dst)} = {op.a};"]
        if not isinstance(op.a, str):
            self.count("broadcast")
        return [f"{op.dst} = {self.operand(op.a)};"]

    def arith(self, op):
        self.count({"add": "add/sub", "sub": "add/sub", "xor": "xor"}[op.name])
        return [f"{op.dst} = {vector_op(self.w, op.name, op.a, self.operand(op.b))};"]

    def rotate(self, op):
        if not op.uniform:  # pragma: no cover - the lanes layout rotates every lane alike
            raise GenError(f"lanes printer: cannot print {op!r}")
        expr, kind = self.fam.rotl_uniform(self.isa, self.w, op.src, op.left_counts[0], self.consts)
        self.count(kind, self.fam.shift_ops if kind == "shifts" else 1)
        return [f"{op.dst} = {expr};"]


class _LanesBlock:
    """The ops of a gather/scatter block of :class:`LanesPrinter`: row loads, the transpose
    shuffles (``let`` temporaries of the block), moves into the state, row stores."""

    def __init__(self, lp: LanesPrinter):
        self.lp, self.w = lp, lp.w

    def load(self, op):
        at, n = self.lp.addr(op.array, op.words)
        return [f"let {op.dst} = {self.w.loadu(at, n)};"]

    def store(self, op):
        at, n = self.lp.addr(op.array, op.words, store=True)
        return [self.w.storeu(at, op.src, n)]

    def shuffle(self, op):
        return [f"let {op.dst} = {shuffle(self.lp.isa, self.w, op.pattern())};"]

    def const(self, op):
        assert not any(op.values)
        return [f"let {op.dst} = {self.w.zero()};"]

    def mov(self, op):
        if op.dst not in self.lp.declared:  # pragma: no cover
            raise GenError(f"lanes printer: cannot print {op!r} in a block")
        return [f"{op.dst} = {op.a};"]


def simd_path(isa, passes: list, own, schedule: dict, setup, notes: bool = True) -> dict:
    """One direction's SIMD path on ``isa``: ``passes``, the lanes layout IR programs of its
    description programs (gen/layouts/lanes.py, L = the ISA's lanes; the interleaved program first
    when there is one, then the one-block program: passes of L * blocks, then of L), printed for
    the template's ``{direction}_{isa}`` function; ``own``: the first description program at W = 1
    (gen/layouts/scalar.py: this path's key schedule); ``setup``: the scalar methods' W = 1 setup,
    which ``new`` runs.  The target's layout pass lowers both.  Returns dict(prologue: the rings the struct lacks, made from its key
    words (wiped after: ``wiped_words``), then the broadcast key words and rings, consts: the rotations' byte masks, arrays: the passes' vector
    arrays (name -> size, made once, wiped after), loops: [(blocks per pass, lines)], cost: vector
    ops per block of the first pass)."""
    L = isa.bits // 64
    w = family_of(isa).rust_width(isa.bits)
    bvals: dict[str, None] = {}
    barrs: dict[str, None] = {}
    arrays: dict[str, int] = {}
    loops, consts, cost = [], {}, None
    # the key words and rings: the struct's, or (rings the scalar options lack) made here from the
    # struct's words by the rest of this path's setup
    suffix = setup_suffix(setup, own.setup)
    written = {ir.array_written(op) for op in ir.walk(suffix)}
    made = {a: n for a, n in own.setup_arrays.items() if a in written}
    prologue = [f"let {v} = tf.k[{schedule['words'].index(v)}];" for v in schedule["words"]
                if v in read_names(suffix)]
    prologue += [f"let mut {a} = [0u64; {n}];" for a, n in made.items()]
    prologue += RustPrinter({}, notes).lines(suffix, own.setup_values, schedule["words"])
    for vp in passes:
        if vp.lanes != L:
            raise GenError(f"internal: a {vp.lanes}-lane program for {isa.name}'s {L} lanes")
        # rings read by a broadcast load at each use (ir.splat_rings): the struct's, or made here
        splat = {v: ring if ring in made else f"tf.{ring}" for v, ring in ir.splat_rings(vp, isa).items()}
        for op in vp.prologue:
            is_value, name = ir.broadcast_dst(op)
            if name not in splat:
                (bvals if is_value else barrs).setdefault(name, None)
        lp = LanesPrinter(isa, vp, vp.nw, notes, splat)
        for a, n in vp.arrays.items():
            arrays[a] = max(arrays.get(a, 0), n)
        code = lp.declarations() + lp.lines(vp.body)
        consts.update(lp.consts)
        if cost is None:
            cost = {k: v / vp.blocks for k, v in lp.cost.items()}
        loops.append((vp.blocks, code))
    for name in bvals:             # bk0 = <k0, k0, ...>: a key word
        v = name[1:]
        src = f"tf.k[{schedule['words'].index(v)}]" if v in schedule["words"] else v
        prologue.append(f"let {name} = {w.set1(src)};")
    for name in barrs:             # bkr[j] = <kr[j], ...>: a ring
        ring = name[1:]
        size = made[ring] if ring in made else schedule["arrays"][ring]
        prologue += [f"let mut {name} = [{w.zero()}; {size}];",
                     f"for (v, &k) in {name}.iter_mut().zip(&{ring if ring in made else 'tf.' + ring}) {{",
                     f"    *v = {w.set1('k')};",
                     "}"]
    return dict(lanes=L, prologue=prologue, consts=[f"let {n} = {e};" for n, e in sorted(consts.items())],
                arrays=[f"let mut {a} = [{w.zero()}; {n}];" for a, n in arrays.items()],
                wiped=list(barrs) + list(arrays), wiped_words=list(made), zero=w.zero(), T=w.T, loops=loops,
                cost=cost)


def memory_helpers(isa, paths) -> list[dict]:
    """The crate's row helpers of the family of ``isa`` (its ISA module's ``rust_memory``: a load
    and a store per vector width) that the printed SIMD functions ``paths`` (simd_path results) call."""
    text = "\n".join(line for f in paths for _, code in f["loops"] for line in code)
    out = []
    fam = family_of(isa)
    for bits in fam.rust_row_bits:
        h = fam.rust_memory(bits)
        h["load_used"], h["store_used"] = f"{h['load_name']}(" in text, f"{h['store_name']}(" in text
        if h["load_used"] or h["store_used"]:
            out.append(h)
    return out
