"""Translation validation: prove an emitted program (read as text) equal to the description.

``prove_files(variant, files)`` symbolically executes every exported function of the emitted
text over 64-bit words (gen/prove/terms.py) and compares each output word with the term the
description's interpreter computes (gen/prove/expect.py).  Languages: NASM (gen/prove/nasm.py),
C (gen/prove/c.py; the SIMD C of target c-simd: gen/prove/c_simd.py; what they share:
gen/prove/cfamily.py), C# (gen/prove/csharp.py, on the SIMD C reader's machinery), Rust
(gen/prove/rust.py: the crate's lib.rs, its core::arch SIMD paths on the SIMD C reader's lane
machinery).  Skein renders: the generated UBI function (gen/prove/skein.py).
"""
from __future__ import annotations

import gc
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import GenError
from ..targets import get as get_target
from ..variant import Variant
from . import c, c_simd, cfamily, csharp, engine, nasm, rust
from . import skein as skein_ubi
from .engine import Unsupported
from .expect import block_vars, expected, key_vars
from .terms import scope, var

LANGUAGES = ("nasm", "c", "c#", "rust")


class OutOfMemory(GenError):
    """A proof ran out of memory (prove --memory-limit, or the machine's)."""


@dataclass
class Report:
    lines: list = field(default_factory=list)    # one per function
    failed: bool = False
    seconds: float = 0.0
    note: str = ""                               # what the proof leaves to verify (Skein's glue)


# the file of a rendered variant the prover reads, by language
SOURCE_SUFFIX = {"nasm": ".asm", "c": ".c", "c#": ".cs", "rust": ".rs"}
# a language whose render is a folder (a Rust crate): where in it that file is (`prove --file FOLDER`)
SOURCE_IN_FOLDER = {"rust": "src/lib.rs"}


def proves(language: str) -> bool:
    return language in LANGUAGES


def why_not(v: Variant) -> str | None:
    """Why the prover does not cover a variant yet (None: it does)."""
    if v.primitive == "skein":
        return skein_why_not(v)
    return None


def skein_why_not(v: Variant) -> str | None:
    """Skein: the generated UBI function of scalar C, C#, Rust and nasm-x64 (GPR) and the SIMD C
    lanes kernels are proved (the glue is checked by verify against the golden records)."""
    language = get_target(v.target).recipe.language
    if language in ("c", "c#", "rust"):
        return None         # the scalar P_ubi (C# Ubi, Rust ubi), and with --isa the SIMD lanes kernels too
    if language == "nasm" and v.get("isa", "gpr") == "gpr":
        return None
    return f"the Skein UBI of --target {v.target} ({language}) is not read by the prover (verify checks it)"


def simd_c(v: Variant) -> bool:
    """C with an --isa: the SIMD C printer's output (intrinsics), read by gen/prove/c_simd.py."""
    return v.get("isa") is not None and get_target(v.target).recipe.language == "c"


def source_of(files: dict, language: str) -> tuple[str, str]:
    """(name, text) of the rendered file that holds the variant's functions."""
    suffix = SOURCE_SUFFIX.get(language, "")
    for name, text in files.items():
        if name.endswith(suffix):
            return name, text
    raise GenError(f"the render has no {suffix} file")


def _kind(name: str):
    for suffix, direction, blocks in (("_encrypt_blocks", "encrypt", True), ("_decrypt_blocks", "decrypt", True),
                                      ("_encrypt", "encrypt", False), ("_decrypt", "decrypt", False)):
        if name.endswith(suffix):
            return direction, blocks
    return None


class _GcPause:
    """Python's cyclic garbage collector off while any proof runs (a count: proofs in verify's
    threads overlap), back to what it was after the last.  A proof makes millions of long-lived
    terms, tuples and memo entries; each full collection walked them all (csharp 1024 v1.3
    fly/full/i2: 19 full collections, 4.2 s of a 12.3 s proof, on a 2-core Zen 4) and found
    nothing: terms are freed by their reference counts when the scope's table is cleared (the
    table -> term -> scope cycle is cut there), and the peak memory of a proof is the same with
    the collector off (451 MB there).  A proof leaves next to no cyclic garbage (gen/dsl.py's
    interpreter no longer holds its terms in a cycle), so none piles up while overlapping proofs
    keep the collector off; what there is, is collected once it is back on."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.was_enabled = False

    @contextmanager
    def __call__(self):
        with self.lock:
            if self.running == 0:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.running += 1
        try:
            yield
        finally:
            with self.lock:
                self.running -= 1
                if self.running == 0 and self.was_enabled:
                    gc.enable()


_gc_paused = _GcPause()


def prove_text(v: Variant, language: str, word_bits: int, text: str) -> Report:
    """Prove every exported encrypt/decrypt function of one emitted file, in a term scope of its
    own (gen/prove/terms.py): proofs running at once in threads (verify's prove rows) or one
    after another share no terms, table or cache."""
    if language not in LANGUAGES:
        raise GenError(f"prove does not read {language} yet (it reads: {', '.join(LANGUAGES)})")
    with _gc_paused(), scope():
        try:
            if v.primitive == "skein":
                return skein_ubi.prove_text(v, language, word_bits, text, Report())
            return _prove_threefish(v, language, word_bits, text)
        except RecursionError:      # hostile text: 1,200 nested parentheses, a term 10,000 deep
            raise GenError("cannot read the program: it nests deeper than the prover follows "
                           "(RecursionError)") from None
        except MemoryError:         # what the limits (prove --memory-limit) do not stop earlier
            raise OutOfMemory("the proof ran out of memory (MemoryError)") from None


def _prove_threefish(v: Variant, language: str, word_bits: int, text: str) -> Report:
    t0 = time.monotonic()
    rep = Report()
    spec, nw = v.spec, v.spec.nw
    key = key_vars(nw)
    # the output terms of a block, by (direction, stems, block): each path of each function asks
    # again (csharp: 232 asks, 80 blocks), and a rerun of the description makes no new term (its
    # every add, xor and rotate is a memo or table hit): the same list, without the run
    outputs: dict = {}

    def exp_for(direction, steps=False):
        def f(tw_stem, in_stem, blk):
            if not steps:
                out = outputs.get((direction, tw_stem, in_stem, blk))
                if out is not None:
                    return out
            seen: set = set()
            out = expected(spec, v.options, direction, key,
                           [var(f"{tw_stem}[{2 * blk + j}]") for j in range(2)],
                           [var(f"{in_stem}[{blk * nw + i}]") for i in range(nw)], seen if steps else None)
            if steps:
                return seen
            outputs[direction, tw_stem, in_stem, blk] = out
            return out
        return f

    try:
        if language == "rust":          # what it does not read (the SIMD paths) is the report's note
            jobs, rep.note = rust.jobs(text, spec.block_bytes)
        else:
            jobs = (_nasm_jobs(text, word_bits, v) if language == "nasm" else
                    csharp.jobs(text, bs=spec.block_bytes) if language == "c#" else
                    c_simd.jobs(text, _kind) if simd_c(v) else _c_jobs(text))
    except Unsupported as e:
        raise GenError(f"cannot read the file: {e}") from None
    for name, (direction, blocks), make in jobs:     # C#: made path by path, labelled once run
        args = [var("ptr:key"), var("ptr:tweak"), var("ptr:in"), var("ptr:out")]
        if blocks:
            args.append(var("n"))

        def prove():
            m, entry, heads, line_text = make(args)
            ctx = engine.Context(nw, exp_for(direction), steps=exp_for(direction, steps=True))
            return engine.prove_function(m, entry, heads, ctx, not blocks, line_text)
        engine.record(rep, name, prove)
    if not rep.lines:
        raise GenError("no exported encrypt/decrypt function in the file")
    rep.seconds = time.monotonic() - t0
    return rep


def _nasm_jobs(text: str, word_bits: int, v: Variant) -> list:
    prog = nasm.Program(text)
    heads = prog.heads()
    abi = nasm.abi_of(v)

    def job(name):
        def make(args):
            m = nasm.NasmMachine(prog, word_bits, abi)
            return m, m.enter(name, args), heads, lambda pc: f"line {prog.lines[pc].no}"
        return make
    return [(f, _kind(f), job(f)) for f in prog.globals if _kind(f)]


def _c_jobs(text: str) -> list:
    prog = c.Program(text)

    def job(fn):
        def make(args):
            m = c.CMachine(prog, fn)
            return m, m.enter(args), cfamily.heads(fn), lambda pc: f"line {fn.stmts[pc].no}"
        return make
    return [(name, _kind(name), job(fn)) for name, fn in prog.functions.items() if _kind(name)]
