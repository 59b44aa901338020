"""Printer for the scalar Rust target (safe Rust, u64).

Instruction selection is the table ``RUST_STATEMENTS`` (one statement per description op, as
``gen/printers/c.py`` has for C); the crate's structure (STEM/Cargo.toml, STEM/src/lib.rs,
STEM/README.md) lives in ``templates/rust/``.

The description's arrays map to Rust as follows: ``key`` (read in the setup only) is the
``&[u8; NB]`` argument of ``new``; ``tweak``, ``in`` and ``out`` are the tweak and the block of
the one-block methods (``in`` and ``out`` are the same ``&mut [u8; NB]``: every word is loaded
before any is stored, as the description orders them), or, in the interleaved body of the
``_blocks`` methods, ``tw[b]`` and ``blk[b]`` of a group of B blocks (``&[[u8; 16]; B]``,
``&mut [[u8; NB]; B]``).  Arrays the setup stores (the key and counter rings of ``--unroll loop``)
are fields of the key schedule struct; arrays the body stores (the subkey tables of keys table) are
locals of the method.
"""
from __future__ import annotations

from ..dsl import INPUT_ARRAYS, OUTPUT_ARRAYS, Idx, Loop, Mem, Op, array_sizes, flat, values
from ..errors import GenError

# One Rust statement per description operation.  {d} destination, {a} operand, {n} rotation.
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
    """Turns description ops into Rust statements.

    ``arrays`` maps the description's input/output arrays to ``(expression, words per block)``:
    word w of ``in`` in the interleaved body is word ``w % nw`` of block ``w // nw`` of the
    group; ``words per block`` 0 means the expression is one array (the single-block methods).
    ``notes``: print the description's notes as ``// ...`` comments."""

    def __init__(self, arrays: dict[str, tuple[str, int]], notes: bool = True):
        self.arrays = arrays
        self.notes = notes

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
            return expr if word is None else f"load64({expr}, {word})"
        if a.scale:
            return f"({index(a)}) as u64"
        return f"{a.base:#x}" if a.base > 0xFFFF else f"{a.base}"

    def op(self, op: Op, declared: set, mutable: set, dead: set = frozenset()) -> str:
        if op.kind == "note":
            return f"// {op.a}"
        if op.kind == "store":
            expr, word = self.mem(op.a, store=True)
            if word is None:
                return f"{expr} = {op.dst};"
            return f"store64({expr}, {word}, {op.dst});"
        if op.kind in ("rotl", "rotr"):
            return RUST_STATEMENTS[op.kind].format(d=op.dst, n=op.a)
        a = self.operand(op.a)
        if op.dst not in declared:
            if op.kind != "mov":
                raise GenError(f"internal: {op.text()} before {op.dst} is defined")
            declared.add(op.dst)
            if op.dst in dead:          # overwritten before any read: declared, not initialised
                return f"let mut {op.dst}: u64;" + (f" // {op.dst} = {a}: overwritten before it is read"
                                                    if self.notes else "")
            if not isinstance(op.a, (str, Mem)):
                a += "_u64"
            return RUST_LET.format(mut="mut " if op.dst in mutable else "", d=op.dst, a=a)
        return RUST_STATEMENTS[op.kind].format(d=op.dst, a=a)

    def lines(self, ops, outer=()) -> list[str]:
        """The statements of ``ops``; ``outer``: values defined before (bound by the caller)."""
        declared = set(outer)
        mutable = assigned_again(ops)
        dead = dead_first(ops)
        out: list[str] = []
        for item in ops:
            if isinstance(item, Loop):
                uses_counter = any(isinstance(x, (Idx, Mem)) and (x.index if isinstance(x, Mem) else x).scale
                                   for x in (o.a for o in item.body))
                first = [o.dst for o in item.body if o.kind not in ("note", "store") and o.dst not in declared]
                if first:
                    raise GenError(f"internal: value {first[0]} is first defined inside a loop")
                out.append(f"for {COUNTER if uses_counter else '_'} in 0..{item.count} {{")
                out.extend("    " + self.op(o, declared, mutable, dead) for o in item.body
                           if self.notes or o.kind != "note")
                out.append("}")
            elif self.notes or item.kind != "note":
                out.append(self.op(item, declared, mutable, dead))
        return out


def assigned_again(ops) -> set[str]:
    """Values an op other than their first definition writes (they are ``let mut``)."""
    seen: set[str] = set()
    again: set[str] = set()
    for op in flat(ops):
        if op.kind in ("note", "store") or op.dst is None:
            continue
        if op.dst in seen:
            again.add(op.dst)
        seen.add(op.dst)
    return again


def dead_first(ops) -> set[str]:
    """Values whose first definition is overwritten by a mov before anything reads it (the
    table schedule's scratch word starts as k0, then each subkey word is moved into it): Rust
    declares them without an initial value (an initial value never read is a warning)."""
    first: dict[str, bool] = {}            # value -> still waiting for its first read or write
    dead: set[str] = set()
    for op in flat(ops):
        if op.kind == "note":
            continue
        reads = {op.a} if isinstance(op.a, str) else set()
        if op.kind == "store" or op.kind not in ("mov",):
            reads.add(op.dst)
        for r in reads:
            first[r] = False
        if op.kind == "store":
            continue
        if op.dst in first:
            if first[op.dst] and op.kind == "mov" and op.a != op.dst:
                dead.add(op.dst)
            first[op.dst] = False
        else:
            first[op.dst] = True
    return dead


def local_arrays(ops) -> dict[str, int]:
    """Arrays ``ops`` store into that are not inputs or outputs: their sizes in words."""
    stored = {op.a.array for op in flat(ops) if op.kind == "store"}
    return {a: n for a, n in array_sizes(ops).items()
            if a in stored and a not in INPUT_ARRAYS + OUTPUT_ARRAYS}


def read_names(ops) -> set[str]:
    """Values and arrays ``ops`` read."""
    out: set[str] = set()
    for op in flat(ops):
        if isinstance(op.a, str) and op.kind != "note":
            out.add(op.a)
        elif isinstance(op.a, Mem) and op.kind != "store":
            out.add(op.a.array)
        if op.kind == "store":
            out.add(op.dst)
    return out


def key_schedule(setup, bodies) -> dict:
    """What ``new`` computes and the struct keeps: the setup's statements (key read from
    ``key``), the values and arrays the bodies read from it (the struct's fields)."""
    pr = RustPrinter({"key": ("key", 0)})
    read = set().union(*(read_names(b) for b in bodies))
    words = [v for v in values(setup) if v in read]
    arrays = {a: n for a, n in local_arrays(setup).items() if a in read}
    return {"code": [f"let mut {a} = [0u64; {n}];" for a, n in arrays.items()] + pr.lines(setup),
            "words": words, "arrays": arrays}


def section(printer: RustPrinter, ops, schedule: dict) -> dict:
    """One body: the struct fields it reads (bound first), its local arrays, its statements."""
    read = read_names(ops)
    return {"words": [w for w in schedule["words"] if w in read],
            "arrays": [a for a in schedule["arrays"] if a in read],
            "locals": local_arrays(ops),
            "code": printer.lines(ops, schedule["words"])}


def function_bodies(progs: dict, blocks_progs: dict, notes: bool = True) -> dict:
    """Code of ``new`` and of each direction's one-block and blocks methods."""
    setups = {d: "\n".join(op.text() for op in p.setup) for d, p in progs.items()}
    if len(set(setups.values())) != 1:
        raise GenError("internal: the directions' key schedules differ")
    setup = next(iter(progs.values())).setup
    bodies = [p.body for p in progs.values()] + [p.body for p in blocks_progs.values()]
    schedule = key_schedule(setup, bodies)
    nw = next(iter(progs.values())).spec.nw
    single = RustPrinter({"tweak": ("tweak", 0), "in": ("block", 0), "out": ("block", 0)}, notes)
    group = RustPrinter({"tweak": ("tw", 2), "in": ("blk", nw), "out": ("blk", nw)}, notes)
    out = {"schedule": schedule}
    for d, prog in progs.items():
        out[d] = {"one": section(single, prog.body, schedule),
                  "group": section(group, blocks_progs[d].body, schedule),
                  "tail": section(single, prog.body, schedule)}
    return out


def ubi_section(prog, notes: bool = True) -> dict:
    """The fused UBI block of Skein (``gen/skein.ubi_program``: key schedule of the chaining
    value, rounds, feed-forward into it) as the statements of one pass of the UBI loop of
    templates/rust/skein.rs.j2: ``h`` (``&mut [u64; NW]``) and ``t`` (``&[u64; 2]``) are read and
    stored as words, the message block ``in`` through ``load64(blk, i)`` (``blk: &[u8; NB]``).
    ``locals``: the scratch arrays the block stores (subkey table, key rings), declared once
    before the loop (and wiped after it)."""
    ops = prog.setup + prog.body
    pr = RustPrinter({"in": ("blk", 0)}, notes)
    return {"locals": {a: n for a, n in local_arrays(ops).items() if a not in ("h", "t")},
            "code": pr.lines(ops)}
