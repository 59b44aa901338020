"""Symbolic execution of the Rust printer's output (gen/printers/rust.py, templates/rust/lib.rs.j2 and
simd.rs.j2), read as text.

The crate's Threefish type: ``new(key)`` (the key schedule: the struct's fields) and the methods
``encrypt_block_with_tweak`` / ``decrypt_block_with_tweak`` (one block in place) and
``encrypt_blocks_with_tweaks`` / ``decrypt_blocks_with_tweaks`` (a slice of blocks, one tweak per
block).  A method is proved as it runs after ``new``: a job is new's statements, the struct built
from its locals (``Self { k: [..], kr, .. }``: the fields become memory, new's names go out of
scope), then the method's statements with its parameters.

The text is a small language: ``let`` / ``let mut`` of u64 values, assignments (``=``, ``^=``,
``|=``, ``&=``), ``wrapping_add`` / ``wrapping_sub`` / ``rotate_left`` / ``rotate_right``, ``^ | &
<< >> !`` on words, ``+ - *`` on constants only (index arithmetic: a plain ``+`` on a word would
panic on overflow in a debug build; the kernels use ``wrapping_add``), ``as u64`` / ``usize`` /
``i64``, local ``[0u64; N]`` arrays (zeroed), the struct's arrays (``self.k[i]``, ``let kr =
&self.kr;``), the crate's helpers ``load64(b, i)``, ``store64(b, i, v)`` and ``wipe(&mut a)`` (the
array zeroed), whose bodies must be the template's, and ``core::hint::black_box(x)`` (x: the
identity the optimizer does not see through).  Names are scoped as in Rust: a ``let`` inside
a block is gone after it.  Loops: ``for c in 0..N`` (run), and the blocks loops over slice
iterators, ``blocks.iter_mut().zip(tweaks)`` and ``(&mut groups).zip(&mut tweak_groups)`` of
``chunks_exact_mut(B)`` / ``chunks_exact(B)`` (then ``into_remainder()`` / ``remainder()`` of chunk
iterators that ran out), compiled to a test of the remaining length at the head, the body, the
pointers' and lengths' steps and a jump back: proved by induction by the engine
(gen/prove/engine.py) as C's loops are.  A zip's two iterators must hold the same length (the
methods' ``assert_eq!`` of the two slices' lengths).

Memory: a block is read and written in place.  A byte array of a mutable slice (``block``,
``&blk[j]``, ``&mut blk[j]``) names the caller's input words (``ptr:in``) and output words
(``ptr:out``) at the same offsets: a load reads what the method stored there, else the input
word.  An index out of bounds (a helper's word index, an array element, ``blk[j]``) panics: the
method DIFFERS.

SIMD paths (``--isa avx2 | avx512 | neon | auto``, feature ``simd``): a blocks method first runs
``simd::encrypt(self, blocks, tweaks)`` (under ``#[cfg(all(feature = "simd", target_arch =
"x86_64"))]``, the AArch64 module's cfg, or their union: ``STATEMENT_CFGS``) and goes on with
``blocks[done..]``; each architecture's ``mod simd`` (``MODULE_CFGS``) has its own dispatchers,
path functions and row helpers, and every module's arms are jobs (NEON intrinsics read through
gen/isa/neon.py's semantics, an intrinsic of the other architecture is a reading error).  That dispatcher's ``match level()`` is not
followed (the CPU test: ``is_x86_feature_detected!``, ``$THREEFISH_GEN_ISA``, target features):
each of its arms is a job of its own, the path function it calls inlined (``[path avx2]``, the
``_ => 0`` arm ``[path scalar]``), and the build without feature simd a job too.  A path function
is the same small language over ``core::arch`` vectors: the C intrinsics' names (their lane
semantics are gen/isa/x86.py's, as for the SIMD C reader, gen/prove/c_simd.py), vector arrays
(``[_mm256_setzero_si256(); N]``, filled by ``for (v, &k) in bk.iter_mut().zip(&kr) { *v = .. }``,
wiped by ``wipe_vectors``), the crate's row helpers ``ldBITS`` / ``stBITS`` (read from their bodies:
a bounds-checked slice of the byte array and one unaligned load or store), ``if blocks.len() < N
{ return 0; }``, passes over ``blocks[done..].as_chunks_mut::<B>()`` and ``done += B *
groups.len()`` after a loop that ran out (B times the chunks, exactly the elements it consumed).
``blocks[done..]`` with a ``done`` the prover does not know is proved in bounds for every block
count the engine checks (a condition of the path: engine._coverage).
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from ..isa import neon, x86
from .c_simd import LaneMachine, _Parser as CParser
from .cfamily import CFamilyMachine, Stmt, heads, skip, strip_comments, tokens
from .engine import ProveError, Unsupported, base_of, literal
from .terms import MASK, Term, add, and_, const, ge, lt, mul, or_, rotl, shr, sub, value, var, xor

# Rust's binary operators by precedence (the bit operators bind tighter than in C)
BINARY = {"*": 7, "+": 6, "-": 6, "<<": 5, ">>": 5, "&": 4, "^": 3, "|": 2}
_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F_]+(?:u64|usize|u32)?|\d[\d_]*(?:u64|usize|u32)?|[A-Za-z_]\w*|<<|>>|"
                    r"[-+*^|&!()\[\],.:;])")
_SUFFIX = re.compile(r"_?(?:u64|usize|u32)$")
_VECTOR_TYPES = ("__m128i", "__m256i", "__m512i", *neon.TYPES)
_CHUNKS = re.compile(r"(\w+)\.(chunks_exact_mut|chunks_exact)\((\w+)\)")

# the statement of a blocks method that runs the SIMD paths first (feature simd), and the module
# (templates/rust/simd.rs.j2: one `mod simd` per architecture, x86-64 and little-endian AArch64, each
# with its own dispatchers, path functions and row helpers; the statement's cfg is either one or both)
_X86_CFG, _A64_CFG = 'target_arch = "x86_64"', 'target_arch = "aarch64", target_endian = "little"'
MODULE_CFGS = {f'#[cfg(all(feature = "simd", {_X86_CFG}))]': "x86_64",
               f'#[cfg(all(feature = "simd", {_A64_CFG}))]': "aarch64"}
STATEMENT_CFGS = set(MODULE_CFGS) | {f'#[cfg(all(feature = "simd", any({_X86_CFG}, all({_A64_CFG}))))]'}
NO_SIMD = "without feature simd"
SIMD_NOTE = ("the CPU test that picks a SIMD path (simd::level(): is_x86_feature_detected!, $THREEFISH_GEN_ISA, "
             "target features; on AArch64 target feature neon): each path it can pick is proved, and the build "
             "without feature simd")
# the crate's helpers, modelled by name: their bodies must be the templates'
HELPERS = ("load64", "store64", "wipe", "wipe_vectors")
TEMPLATES = [Path(__file__).resolve().parents[2] / f"templates/rust/{name}" for name in ("lib.rs.j2", "simd.rs.j2")]
METHODS = {"encrypt_block_with_tweak": ("encrypt", False), "decrypt_block_with_tweak": ("decrypt", False),
           "encrypt_blocks_with_tweaks": ("encrypt", True), "decrypt_blocks_with_tweaks": ("decrypt", True)}


def _blank(text: str) -> str:
    """Comments (``//``, ``/* */``) and the contents of string literals become spaces (line
    numbers and braces outside strings stay)."""
    text = strip_comments(text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*',
                  lambda m: '"' + " " * (len(m.group(0)) - 2) + '"' if m.group(0)[0] == '"' else "", text)


def _num(tok: str, no: int) -> int:
    return literal(_SUFFIX.sub("", tok).replace("_", ""), f"line {no}")


class _Parser(CParser):
    """Rust expressions as tuples: ``num``, ``name``, ``bin``, ``not``, ``cast``, ``index`` (of a
    node), ``field``, ``method`` (name, receiver, args), ``call`` (name, args), ``ref`` (mut, node)."""
    BINARY = BINARY

    def unary(self):
        tok = self.take()
        if tok == "&":
            mut = self.peek() == "mut"
            if mut:
                self.take()
            return ("ref", mut, self.unary())
        if tok == "!":
            return ("not", self.unary())
        e = self._postfix(self._primary(tok))
        while self.peek() == "as":
            self.take()
            ty = self.take()
            if ty not in ("u64", "usize", "i64"):
                raise Unsupported(f"line {self.no}: a cast to {ty}")
            e = ("cast", e)
        return e

    def _primary(self, tok):
        if tok == "(":
            e = self.binary(-1)
            self.take(")")
            return e
        if tok[0].isdigit():
            return ("num", _num(tok, self.no))
        if not (tok[0].isalpha() or tok[0] == "_"):
            raise Unsupported(f"line {self.no}: cannot read {tok!r}")
        if tok == "super" and self.peek() == ":":           # super::wipe
            self.take(":")
            self.take(":")
            tok = "super::" + self.take()
        if tok == "core" and self.peek() == ":":            # core::hint::black_box(x): x
            while self.peek() == ":":
                self.take(":")
                self.take(":")
                tok += "::" + self.take()
            if tok != "core::hint::black_box" or self.peek() != "(":
                raise Unsupported(f"line {self.no}: cannot read {tok}")
            args = self._args()
            if len(args) != 1:
                raise Unsupported(f"line {self.no}: black_box of {len(args)} arguments")
            return args[0]          # an identity the optimizer does not see through
        if self.peek() == "(":
            return ("call", tok, self._args())
        return ("name", tok)

    def _args(self) -> tuple:
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.binary(-1))
            if self.peek() != ",":
                break
            self.take(",")
        self.take(")")
        return tuple(args)

    def _postfix(self, e):
        while self.peek() in ("[", "."):
            if self.take() == "[":
                idx = self.binary(-1)
                self.take("]")
                e = ("index", e, idx)
                continue
            name = self.take()
            e = ("method", name, e, self._args()) if self.peek() == "(" else ("field", e, name)
        return e


def _parse(s: str, no: int):
    return _Parser(tokens(s, _TOKEN), no).whole()


# ---------------------------------------------------------------------------- the program

class Function:
    """A job: new's statements, then one method's (``stmts``); ``arm``: the SIMD dispatcher's arm
    it runs (None: the build without feature simd); ``simd``: the method has the SIMD statement."""

    def __init__(self, name: str, arm):
        self.name, self.arm = name, arm
        self.stmts: list[Stmt] = []
        self.simd = False


class Program:
    """The Threefish crate's ``lib.rs``: its consts, the struct's fields, the helpers (checked),
    the line ranges of ``new`` and the methods, and of the SIMD module's functions: the
    dispatchers' arms, the path functions, the row helpers (read)."""

    def __init__(self, text: str):
        self.lines = _blank(text).splitlines()
        self.raw = text.splitlines()        # the attributes' strings (blanked in lines)
        self.consts: dict[str, int] = {}
        self.fields: dict[str, int] = {}
        self.methods: dict[str, tuple] = {}       # name -> (parameters text, first body line index)
        self.simd_fns: dict[str, tuple] = {}      # the SIMD module's path functions, alike
        self.arms: dict[str, list] = {}           # dispatcher (encrypt, decrypt) -> [(arm, callee or value)]
        self.rows: dict[tuple, tuple] = {}        # (module, row helper) -> (words, store?)
        self.modules: list[str] = []              # the SIMD modules' architectures, in file order
        self.helpers: dict[str, str] = {}
        self.functions: dict[str, tuple] = {}     # the file's other functions (name -> parameters, body)
        self.ty = None
        lines, i = self.lines, 0
        while i < len(lines):
            s = lines[i].strip()
            m = re.fullmatch(r"(?:pub\s+)?const\s+(\w+)\s*:\s*(?:usize|u64)\s*=\s*(.+?)\s*;", s)
            if m:
                self.consts[m.group(1)] = self._const_value(m.group(2), i + 1)
            if self._helper(i):
                i = skip(lines, i)
                continue
            m = re.fullmatch(r"pub\s+struct\s+(Threefish\d+)\s*\{", s)
            if m:
                end = skip(lines, i)
                for j in range(i + 1, end - 1):
                    f = re.fullmatch(r"(\w+)\s*:\s*\[\s*u64\s*;\s*(\d+)\s*\]\s*,?", lines[j].strip())
                    if f:
                        self.fields[f.group(1)] = int(f.group(2))
                    elif lines[j].strip():
                        raise Unsupported(f"line {j + 1}: a field that is not a [u64; N] array")
                self.ty = m.group(1)
                i = end
                continue
            if self.ty and s == f"impl {self.ty} {{":
                i = self._impl(i + 1, self.methods, r"pub\s+fn\s+(\w+)\s*\((.*)\)\s*(?:->\s*Self\s*)?\{")
                continue
            if s == "mod simd {" and i and self.raw[i - 1].strip() in MODULE_CFGS:
                arch = MODULE_CFGS[self.raw[i - 1].strip()]
                if arch in self.modules:
                    raise Unsupported(f"line {i + 1}: a second mod simd for {arch}")
                self.modules.append(arch)
                i = self._simd_module(i + 1, len(self.modules) - 1)
                continue
            m = re.fullmatch(r"fn\s+(\w+)\s*\((.*)\)\s*\{", s)
            if m:                           # a function of the file (Skein: ubi, ubi_block)
                self.functions[m.group(1)] = (m.group(2), i + 1)
            i = skip(lines, i) if s.endswith("{") else i + 1
        template = _template_helpers()
        for name, text in self.helpers.items():
            if text != template[name]:
                raise Unsupported(f"the helper {name} is not the template's (templates/rust/)")

    def _const_value(self, text: str, no: int):
        """The value of a const's expression of literals and earlier consts (None: not one)."""
        def ev(e):
            if e[0] == "num":
                return e[1]
            if e[0] == "name":
                return self.consts[e[1]]
            if e[0] == "bin" and e[1] in ("+", "*", "<<", "|", "&", "^"):
                a, b = ev(e[2]), ev(e[3])
                r = {"+": lambda: a + b, "*": lambda: a * b, "<<": lambda: a << b if b < 64 else None,
                     "|": lambda: a | b, "&": lambda: a & b, "^": lambda: a ^ b}[e[1]]()
                return r if r is not None and r <= MASK else None
            return None
        try:
            return ev(_parse(text, no))
        except (Unsupported, KeyError, TypeError):
            return None

    def _helper(self, i: int) -> bool:
        m = re.fullmatch(r"fn\s+(\w+)\s*(?:<[^>]*>)?\s*\(.*\)\s*(?:->\s*\w+\s*)?\{", self.lines[i].strip())
        if m and m.group(1) in HELPERS:
            self.helpers[m.group(1)] = _squash(self.lines[i:skip(self.lines, i)])
            return True
        return False

    def _impl(self, i: int, into: dict, head: str) -> int:
        """The functions of a braced item (an impl, the SIMD module) whose first line matches
        ``head`` (name, parameters) go into ``into``; returns the index after its brace."""
        lines = self.lines
        while i < len(lines):
            s = lines[i].strip()
            if s == "}":
                return i + 1
            m = re.fullmatch(head, s)
            if m:
                into[m.group(1)] = (m.group(2), i + 1)
            i = skip(lines, i) if s.endswith("{") else i + 1
        raise Unsupported("an impl block does not end")

    def _simd_module(self, i: int, module: int) -> int:
        """``mod simd`` (the ``module``-th): the row helpers (read), wipe_vectors (the template's),
        the dispatchers (their arms, added to those of the other modules) and the path functions."""
        lines = self.lines
        fns: dict = {}
        end = self._impl(i, fns, r"(?:pub\(super\)\s+)?(?:unsafe\s+)?fn\s+(\w+)\s*(?:<[^>]*>)?\s*\((.*)\)\s*"
                                 r"(?:->\s*[\w&' ]+\s*)?\{")
        for name, (params, start) in fns.items():
            if name == "wipe_vectors":
                self._helper(start - 1)
            elif re.fullmatch(r"(ld|st)(128|256|512)", name):
                self.rows[(module, name)] = _row_helper(name, params, lines[start:skip(lines, start - 1) - 1], start,
                                                        self.modules[module])
            elif name in ("encrypt", "decrypt"):
                have = self.arms.setdefault(name, [])
                for label, (how, what) in _arms(lines[start:skip(lines, start - 1) - 1], params, start):
                    if how == "value" and ("scalar", (how, what, None)) in have:
                        continue            # every module's `_ => 0`: one job
                    if any(lab == label for lab, _ in have):
                        raise Unsupported(f"line {start}: a second arm {label}")
                    have.append((label, (how, what, module if how == "call" else None)))
            elif name != "level":
                if name in self.simd_fns:
                    raise Unsupported(f"line {start}: a second SIMD function {name}")
                self.simd_fns[name] = (params, start)
        return end

    def size(self, name: str, no: int) -> int:
        """A byte count: a literal or one of the file's usize consts."""
        if name[0].isdigit():
            return _num(name, no)
        if self.consts.get(name) is None:
            raise Unsupported(f"line {no}: {name} is not a const of the file")
        return self.consts[name]

    def ref_type(self, text: str, no: int):
        """``&[u8; N]`` -> ("bytes", N, mut); ``&[[u8; N]]`` -> ("slice", N, mut); with ``; M``
        after the element type: a slice of M elements (checked where it is made); ``&ThreefishN``
        -> ("self",)."""
        text = text.strip()
        if self.ty and re.fullmatch(rf"&\s*{self.ty}", text):
            return ("self",)
        if text == "u64":
            return ("val",)
        m = re.fullmatch(r"&\s*(mut\s+)?\[\s*(u8|u64\s*;\s*(\w+))\s*\]", text)
        if m:                           # &[u8] (a byte slice), &[u64; N] (an array of words)
            return ("slice", 1, bool(m.group(1)), None) if m.group(2) == "u8" else \
                ("words", self.size(m.group(3), no), bool(m.group(1)))
        m = re.fullmatch(r"&\s*(mut\s+)?\[\s*(?:u8\s*;\s*(\w+)|\[\s*u8\s*;\s*(\w+)\s*\]\s*(?:;\s*(\w+))?)\s*\]", text)
        if not m:
            raise Unsupported(f"line {no}: cannot read the type {text!r}")
        mut = bool(m.group(1))
        if m.group(2):
            return ("bytes", self.size(m.group(2), no), mut)
        return ("slice", self.size(m.group(3), no), mut, self.size(m.group(4), no) if m.group(4) else None)

    def job(self, method: str, arm=None) -> Function:
        fn = Function(method, arm)
        c = _Compiler(self, fn)
        params, start = self.methods["new"]
        c.function(params, start, "new")
        params, start = self.methods[method]
        c.function(params, start, method)
        return fn


def _row_helper(name: str, params: str, body: list, no: int, arch: str = "x86_64") -> tuple:
    """A row helper of the module of ``arch`` read from its body: ``let s = &b[8 * i..8 * i +
    BYTES];`` and one unaligned load (or store of ``v``) of a vector of BYTES at ``s``: (words,
    store?)."""
    store = name.startswith("st")
    text = _squash(body)
    rows = [neon.rust_memory(128)] if arch == "aarch64" else [x86.rust_memory(b) for b in x86.X86.rust_row_bits]
    for h in rows:          # the family's helpers as the printer spells them (gen/isa/ ``rust_memory``)
        if name != (h["store_name"] if store else h["load_name"]):
            continue
        if store:
            want_text = f"let s = &mut b[8 * i..8 * i + {h['bytes']}]; unsafe {{ {h['store']} }}"
            want_params = f"b: &mut [u8], i: usize, v: {h['T']}"
        else:
            want_text = f"let s = &b[8 * i..8 * i + {h['bytes']}]; unsafe {{ {h['load']} }}"
            want_params = "b: &[u8], i: usize"
        if text == want_text and " ".join(params.split()) == want_params:
            return h["bytes"] // 8, store
    raise Unsupported(f"line {no}: the row helper {name} is not a bounds-checked unaligned "
                      f"{'store' if store else 'load'} of its vector")


def _arms(body: list, params: str, no: int) -> list:
    """The arms of a dispatcher (``match level() { N => { unsafe { PATH(tf, blocks, tweaks) } } ..
    _ => 0, }``): [(label, ("call", PATH) or ("value", v))]; every call passes the dispatcher's
    parameters in order."""
    text = _squash(body)
    m = re.fullmatch(r"match level\(\) \{ (.*) \}", text)
    if not m:
        raise Unsupported(f"line {no}: a SIMD dispatcher that is not a match on level()")
    names = [p.split(":")[0].strip() for p in params.split(",")]
    arms, read = [], ""
    for arm in re.finditer(r"(\d+|_) => (?:\{ unsafe \{ (\w+)\(([^)]*)\) \} \}|(\d+),)\s*", m.group(1)):
        read += arm.group(0)
        if arm.group(2):
            if [a.strip() for a in arm.group(3).split(",")] != names:
                raise Unsupported(f"line {no}: {arm.group(2)} is called with other arguments than the dispatcher's")
            arms.append((arm.group(2).rsplit("_", 1)[-1], ("call", arm.group(2))))
        else:
            arms.append(("scalar", ("value", int(arm.group(4)))))
    if read.strip() != m.group(1).strip():
        raise Unsupported(f"line {no}: cannot read the dispatcher's arms")
    return arms


def _squash(lines) -> str:
    return " ".join(" ".join(lines).split())


@functools.lru_cache(maxsize=1)
def _template_helpers() -> dict:
    """The helpers' text in templates/rust/ (whitespace squashed)."""
    out = {}
    for path in TEMPLATES:
        lines = _blank(path.read_text()).splitlines()
        for i, ln in enumerate(lines):
            m = re.match(r"\s*fn\s+(\w+)", ln)
            if m and m.group(1) in HELPERS:
                out[m.group(1)] = _squash(lines[i:skip(lines, i)])
    return out


# ---------------------------------------------------------------------------- compiling a body

class _Compiler:
    """Compiles new's and a method's bodies into ``fn.stmts``, resolving names by Rust's scopes.
    A binding's type: ("val", mut) (a u64 or a vector), ("arr", base name, elements, mut, element
    bytes), ("bytes", n, mut), ("slice", element bytes, mut), ("chunked", element bytes, mut, B)
    (``as_chunks_mut::<B>``: its length counted in elements), ("chunks", element bytes, mut, B)
    (a chunk iterator), ("self",), ("elemref", array, counter register); its value's registers:
    the name (a value), ``name#in``, ``name#out`` (mutable), ``name#len`` (slices, iterators)."""

    def __init__(self, prog: Program, fn: Function):
        self.prog, self.fn = prog, fn
        self.scopes: list[dict] = []
        self.spent: set = set()         # chunk iterators that ran out (their remainder may be taken)
        self.iterated: dict = {}        # chunked slice -> the iterator that ran it out
        self.ret = None                 # in an inlined path function: (result register, jumps to its end)
        self.simd = False               # in a function of the SIMD module (intrinsics, row helpers in reach)
        self.module = None              # which SIMD module (its row helpers)

    def emit(self, no, text, kind, a=None, b=None, c=None) -> Stmt:
        st = Stmt(no, text, kind, a, b, c)
        self.fn.stmts.append(st)
        return st

    # ---- names
    def lookup(self, name: str, no: int, const: bool = False):
        """(type, register) of a name in scope; ``const``: a const of the file is (("num",), value)."""
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        if const and self.prog.consts.get(name) is not None:
            return ("num",), self.prog.consts[name]
        raise Unsupported(f"line {no}: {name} is not declared")

    def bind(self, name: str, ty: tuple, reg: str | None = None) -> tuple:
        """Declare name in the innermost scope; returns (type, register name): a name that
        shadows one of an outer scope gets registers of its own (``reg``: given ones, a
        parameter bound to its caller's argument)."""
        cur = self.scopes[-1]
        if reg is None and name in cur:             # let x = .. x ..; in one scope: the same registers
            reg = cur[name][1]
        elif reg is None:
            reg = f"{name}'{len(self.fn.stmts)}" if any(name in sc for sc in self.scopes[:-1]) else name
        cur[name] = (ty, reg)
        return ty, reg

    def resolve(self, e, no: int):
        """The node with its names resolved: ("var", reg), ("arr", base, elements, mut, bytes),
        ("bytes", reg, n, mut), ("slice", reg, element bytes, mut), ("chunked", reg, element
        bytes, mut, B), ("vcall", intrinsic, args), ("row", helper, args)."""
        k = e[0]
        if k == "name":
            ty, reg = self.lookup(e[1], no, const=True)
            if ty[0] == "num":
                return ("num", reg)
            if ty[0] == "val":
                return ("var", reg)
            if ty[0] == "arr":
                return ty
            if ty[0] in ("bytes", "slice", "chunked"):
                return (ty[0], reg) + ty[1:]
            raise Unsupported(f"line {no}: {e[1]} in an expression")
        if k == "field":
            if e[1][0] != "name" or self.lookup(e[1][1], no)[0] != ("self",) or e[2] not in self.prog.fields:
                raise Unsupported(f"line {no}: cannot read the field {e[2]}")
            return ("arr", f"rsp0.self.{e[2]}", self.prog.fields[e[2]], False, 8)
        if k == "num":
            return e
        if k == "bin":
            return (k, e[1], self.resolve(e[2], no), self.resolve(e[3], no))
        if k in ("not", "cast"):
            return (k, self.resolve(e[1], no))
        if k == "ref":
            return (k, e[1], self.resolve(e[2], no))
        if k == "index":
            return (k, self.resolve(e[1], no), self.resolve(e[2], no))
        if k == "method" and e[1] == "unwrap" and not e[3] and e[2][0] == "method" and e[2][1] == "try_into" \
                and not e[2][3]:            # x.try_into().unwrap(): an argument whose type the callee says
            return ("tryInto", self.resolve(e[2][2], no))
        if k == "method":
            return (k, e[1], self.resolve(e[2], no), tuple(self.resolve(a, no) for a in e[3]))
        if k == "call":
            args = tuple(self.resolve(a, no) for a in e[2])
            simd = self.simd
            if simd and (x86.parse(e[1]) is not None or e[1] in neon.SEMANTICS or neon.is_reinterpret(e[1])) \
                    and (self.module, e[1]) not in self.prog.rows:
                if (x86.parse(e[1]) is None) != (self.prog.modules[self.module] == "aarch64"):
                    raise Unsupported(f"line {no}: {e[1]} in the SIMD module of another architecture")
                return ("vcall", e[1], args)
            if simd and (self.module, e[1]) in self.prog.rows:
                return ("row", (self.module, e[1]), args)
            # the helpers in reach: the crate's (load64, store64, wipe), in the SIMD module its own
            # wipe_vectors and the crate's wipe as super::wipe
            name = ({"super::wipe": "wipe", "wipe_vectors": "wipe_vectors"} if simd else
                    {n: n for n in ("load64", "store64", "wipe")}).get(e[1])
            if name in self.prog.helpers:
                return (k, name, args)
            raise Unsupported(f"line {no}: a call of {e[1]}, which is not a helper of the crate")
        raise Unsupported(f"line {no}: cannot read this expression")

    def expr(self, s: str, no: int):
        return self.resolve(_parse(s, no), no)

    # ---- bodies
    def function(self, params: str, start: int, name: str) -> None:
        """One function of the job: its parameters bound (new: key; a method: its block(s) and
        tweak(s)), then its body."""
        self.scopes = [{}]
        parts = [p.strip() for p in params.split(",") if p.strip()]
        no = start
        if name == "ubi":
            return self.ubi(parts, start)
        if name == "new":
            want = [("bytes", self.prog.consts.get("BLOCK_BYTES"), False)]
        else:
            if not parts or parts[0] != "&self":
                raise Unsupported(f"line {no}: {name} does not take &self")
            self.bind("self", ("self",))
            parts = parts[1:]
            want = [("slice", self.prog.consts.get("BLOCK_BYTES"), True, None), ("slice", 16, False, None)] \
                if METHODS[name][1] else [("bytes", self.prog.consts.get("BLOCK_BYTES"), True), ("bytes", 16, False)]
        regs = [self.bind(pname, ty[:3])[1] for pname, ty in self.params(parts, want, name, no)]
        self.emit(no, params, "params", name, regs)
        i = self.block(start)
        if name == "new" and self.fn.stmts[-1].kind != "construct":
            raise Unsupported(f"line {i}: new does not end in Self {{ .. }}")
        if name != "new":
            self.emit(i, "}", "ret")

    def ubi(self, parts: list, start: int) -> None:
        """Skein's ``fn ubi(h: &mut [u64; NW], t: &mut [u64; 2], blocks: &[u8], add: u64)``: h and t
        the words at ptr:h and ptr:t (gen/prove/skein.py's contract), blocks n whole blocks from ptr:in."""
        nw = self.prog.consts.get("NW")
        want = [("words", nw, True), ("words", 2, True), ("slice", 1, False, None), ("val",)]
        got = self.params(parts, want, "ubi", start)
        (h, _), (t, _), (blocks, _), (add_, _) = got
        self.bind(h, ("arr", "ptr:h", nw, True, 8))
        self.bind(t, ("arr", "ptr:t", 2, True, 8))
        regs = [self.bind(blocks, ("slice", 1, False))[1], self.bind(add_, ("val", False))[1]]
        self.emit(start, "ubi", "params", "ubi", regs, 8 * nw)
        self.emit(self.block(start), "}", "ret")

    def params(self, parts: list, want: list, name: str, no: int) -> list:
        """(name, type) of each parameter, checked against ``want``."""
        if len(parts) != len(want):
            raise Unsupported(f"line {no}: {name} takes {len(parts)} parameters, not {len(want)}")
        out = []
        for p, w in zip(parts, want):
            pname, _, ptype = p.partition(":")
            ty = self.prog.ref_type(ptype, no)
            if ty != w:
                raise Unsupported(f"line {no}: {name}'s parameter {p!r} is not a {w}")
            out.append((pname.strip(), ty))
        return out

    def block(self, i: int) -> int:
        """Statements up to the brace that closes the current scope; returns the line index after it."""
        lines = self.prog.lines
        while i < len(lines):
            s = lines[i].strip()
            no, i = i + 1, i + 1
            if not s:
                continue
            if s == "}":
                return i
            if s.startswith("#"):
                if self.prog.raw[no - 1].strip() not in STATEMENT_CFGS:
                    raise Unsupported(f"line {no}: the attribute {self.prog.raw[no - 1].strip()}")
                i = self.simd_statement(i)
                continue
            if s == "Self {":
                i = self.construct(i, no)
                continue
            if s == "{":
                i, regs = self.scoped(i)
                self.emit(i, "}", "drop", regs)
                continue
            m = re.fullmatch(r"for\s+(.+?)\s+in\s+(.+?)\s*\{", s)
            if m:
                i = self.for_loop(m.group(1), m.group(2), no, s, i)
                continue
            m = re.fullmatch(r"if\s+(.+?)\s*<\s*(.+?)\s*\{", s)
            if m:
                test = self.emit(no, s, "ifTest", self.expr(m.group(1), no), self.expr(m.group(2), no))
                i, regs = self.scoped(i)
                self.emit(i, "}", "drop", regs)
                test.c = len(self.fn.stmts)
                continue
            if self.ret is not None and len(self.scopes) == 1 and re.fullmatch(r"\w+", s) \
                    and next((ln.strip() for ln in lines[i:] if ln.strip()), None) == "}":
                self.emit(no, s, "let", self.ret[0], self.expr(s, no))      # the tail expression: the result
                continue
            if not s.endswith(";"):
                raise Unsupported(f"line {no}: cannot read {s!r}")
            self.statement(s[:-1].strip(), no, s)
        raise Unsupported("a function body does not end")

    def scoped(self, i: int) -> tuple:
        """A braced body in a scope of its own: (line index after it, the registers it declared)."""
        self.scopes.append({})
        i = self.block(i)
        sc = self.scopes.pop()
        return i, [reg for ty, reg in sc.values() if ty[0] not in ("arr", "self", "elemref")]

    def statement(self, s: str, no: int, text: str) -> None:
        m = re.fullmatch(r"let\s+(mut\s+)?(\w+)\s*(?::\s*([^=]+?))?\s*(?:=\s*(.+))?", s)
        if m:
            return self.let(bool(m.group(1)), m.group(2), m.group(3), m.group(4), no, text)
        m = re.fullmatch(r"let\s+\((\w+),\s*_\)\s*=\s*(\w+)\[(\w+)\.\.\]\.(as_chunks_mut|as_chunks)::<(\d+)>\(\)", s)
        if m:
            return self.chunked(m.group(1), m.group(2), m.group(3), m.group(4), int(m.group(5)), no, text)
        m = re.fullmatch(r"assert_eq!\((\w+)\.len\(\),\s*(\w+)\.len\(\),\s*\"\s*\"\)", s)
        if m:
            self.emit(no, text, "sameLen", [self.expr(m.group(k), no) for k in (1, 2)])
            return None
        m = re.fullmatch(r"return\s+(.+)", s)
        if m and self.ret is not None:
            self.emit(no, text, "let", self.ret[0], self.expr(m.group(1), no))
            self.ret[1].append(self.emit(no, text, "jmp", None))
            return None
        m = re.fullmatch(r"(\w+)\s*\+=\s*(\d+)\s*\*\s*(\w+)\.len\(\)", s)
        if m and self.ret is not None:
            return self.consumed(m.group(1), int(m.group(2)), m.group(3), no, text)
        m = re.fullmatch(r"(\w+)\((.*)\)", s)
        if m and m.group(1) in self.prog.functions and not self.simd:
            return self.inline_call(m.group(1), [self.resolve(a, no) for a in _parse(s, no)[2]], no, text)
        m = re.fullmatch(r"(?:super::)?\w+\((.*)\)", s)
        if m:
            return self.call(self.expr(s, no), no, text)
        m = re.fullmatch(r"(.+?)\s*(\^=|\|=|&=|=)\s*(.+)", s)
        if m:
            deref = re.fullmatch(r"\*(\w+)", m.group(1))
            if deref:               # *v = ..: the element of the array the loop is at
                ty, _ = self.lookup(deref.group(1), no)
                if ty[0] != "elemref" or m.group(2) != "=":
                    raise Unsupported(f"line {no}: cannot read {s!r}")
                lhs = ("index", ty[1], ("var", ty[2]))
            else:
                lhs = self.expr(m.group(1), no)
            if lhs[0] == "var":
                ty = next(sc[n][0] for sc in reversed(self.scopes) for n in sc if sc[n][1] == lhs[1])
                if not ty[1]:
                    raise Unsupported(f"line {no}: assigns {lhs[1]}, which is not mut")
            elif not (lhs[0] == "index" and lhs[1][0] == "arr" and lhs[1][3]):
                raise Unsupported(f"line {no}: assigns to something but a value or a mutable array's element")
            self.emit(no, text, "assign", lhs, m.group(2), self.expr(m.group(3), no))
            return None
        raise Unsupported(f"line {no}: cannot read {s!r}")

    def call(self, e, no: int, text: str) -> None:
        """store64, a row store, wipe / super::wipe (a u64 array zeroed), wipe_vectors (a vector
        array filled with its second argument)."""
        if e[0] == "row" and self.prog.rows[e[1]][1]:
            self.emit(no, text, "rowStore", e[1], e[2])
            return
        if e[0] != "call" or e[1] not in ("store64", "wipe", "wipe_vectors"):
            raise Unsupported(f"line {no}: a call of {e[1]} whose value is dropped")
        if e[1] == "store64":
            self.emit(no, text, "store", e[2])
            return
        arg = e[2][0] if e[2] and e[2][0][0] == "ref" and e[2][0][1] else None
        arr = arg[2] if arg else None
        if arr is None or arr[0] != "arr" or not arr[3] or len(e[2]) != (1 if e[1] == "wipe" else 2) \
                or (arr[4] == 8) != (e[1] == "wipe"):
            raise Unsupported(f"line {no}: {e[1]} of something but a mutable local array of its kind")
        self.emit(no, text, "fill", arr, ("num", 0) if e[1] == "wipe" else e[2][1])

    def let(self, mut: bool, name: str, ty: str | None, rhs: str | None, no: int, text: str) -> None:
        if rhs is None:                     # let mut x: u64; (set before it is read; without mut: set once)
            if (ty or "").strip() not in ("u64",) + _VECTOR_TYPES:
                raise Unsupported(f"line {no}: a declaration of type {ty}")
            self.emit(no, text, "let", self.bind(name, ("val", True))[1], None)
            return
        m = re.fullmatch(r"\[\s*(?:0(?:_?u64)|(_mm\w+)\(\)|(vdupq_n_u64)\(0\))\s*;\s*(\w+)\s*\]", rhs)
        if m:                               # let mut ks = [0u64; N]; let mut bk = [_mm256_setzero_si256(); N];
            lanes = x86.parse(m.group(1))[1] if m.group(1) and x86.parse(m.group(1)) else 2 if m.group(2) else 1
            arr = ("arr", f"rsp0.{name}@{no}", self.prog.size(m.group(3), no), mut, 8 * lanes)
            zero = self.expr(f"{m.group(1)}()", no) if m.group(1) else self.expr("vdupq_n_u64(0)", no) \
                if m.group(2) else ("num", 0)
            self.bind(name, arr)
            self.emit(no, text, "fill", arr, zero)
            return
        m = re.fullmatch(r"&\s*self\.(\w+)", rhs)
        if m:                               # let kr = &self.kr;
            self.bind(name, self.expr(f"self.{m.group(1)}", no))
            return
        m = _CHUNKS.fullmatch(rhs)
        if m:                               # let mut groups = blocks.chunks_exact_mut(B);
            self.chunks(name, m, no, text)
            return
        m = re.fullmatch(r"(\w+)\.try_into\(\)\.unwrap\(\)", rhs)
        if m:                               # let blk: &mut [[u8; NB]; B] = blk.try_into().unwrap();
            want = self.prog.ref_type(ty or "", no)
            src = self.expr(m.group(1), no)
            if want[0] != "slice" or want[3] is None or src[0] != "slice" or src[2] != want[1] \
                    or (want[2] and not src[3]):
                raise Unsupported(f"line {no}: try_into between other types")
            _, reg = self.bind(name, want[:3])
            self.emit(no, text, "fixLen", reg, src, want[3])
            return
        if ty is not None and ty.strip() not in ("u64",) + _VECTOR_TYPES:
            raise Unsupported(f"line {no}: a let of type {ty}")
        e = self.expr(rhs, no)              # before the binding: `let x = x ...` reads the outer x
        self.emit(no, text, "let", self.bind(name, ("val", mut))[1], e)

    def chunks(self, name: str, m, no: int, text: str) -> tuple:
        """A chunk iterator ``X.chunks_exact(B)`` / ``chunks_exact_mut(B)`` bound to name: (type,
        register).  Over a slice of byte arrays its length counts elements (the loop runs while
        B are left: the remainder follows); over a byte slice (Skein's blocks) it counts chunks:
        the slice's length must be a known multiple of B (no remainder)."""
        src = self.expr(m.group(1), no)
        mut = m.group(2).endswith("mut")
        per = self.prog.size(m.group(3), no)
        if src[0] != "slice" or (mut and not src[3]) or per < 1:
            raise Unsupported(f"line {no}: {m.group(2)} of something but a slice")
        ty, reg = self.bind(name, ("chunks", src[2], mut, per))
        self.emit(no, text, "iter", reg, src, per if src[2] == 1 else None)
        return ty, reg

    def inline_call(self, name: str, args: list, no: int, text: str) -> None:
        """A call of a function of the file (Skein's ubi_block) inlined: u64 arrays passed as they
        are (or by ``&mut a`` / ``&a``), a byte slice ``x.try_into().unwrap()`` made the parameter's byte array (its length
        checked), u64 values copied; its names in a scope of their own."""
        params, start = self.prog.functions[name]
        parts = [p.strip() for p in params.split(",") if p.strip()]
        if len(parts) != len(args):
            raise Unsupported(f"line {no}: {name} takes {len(parts)} arguments")
        saved, self.scopes = self.scopes, [{}]
        for p, arg in zip(parts, args):
            pname, _, ptype = p.partition(":")
            ty = self.prog.ref_type(ptype, no)
            pname = pname.strip()
            reg = f"{pname}'{len(self.fn.stmts)}"
            if ty[0] == "words" and arg[0] == "ref" and arg[2][0] == "arr" and (arg[1] or not ty[2]):
                arg = arg[2]                # &mut a / &a of a local array: the array itself
            if ty[0] == "words" and arg[0] == "arr" and arg[2] == ty[1] and arg[4] == 8 and (arg[3] or not ty[2]):
                self.bind(pname, arg)
            elif ty[0] == "bytes" and not ty[2] and arg[0] == "tryInto" and arg[1][0] == "slice" and arg[1][2] == 1:
                self.bind(pname, ty, reg)
                self.emit(no, text, "fixLen", reg, arg[1], ty[1])
            elif ty[0] == "val":
                self.bind(pname, ("val", False), reg)
                self.emit(no, text, "let", reg, arg)
            else:
                raise Unsupported(f"line {no}: {name}'s parameter {p!r} is given another kind of argument")
        self.block(start)
        own = [reg for ty, reg in self.scopes[0].values() if ty[0] not in ("arr", "self", "elemref")]
        self.emit(no, text, "drop", own)
        self.scopes = saved

    def chunked(self, name: str, src: str, start: str, how: str, per: int, no: int, text: str) -> None:
        """``let (groups, _) = blocks[done..].as_chunks_mut::<B>();``: groups is blocks from done
        on, iterated B elements at a time (the remainder, ``_``, is not named)."""
        s = self.expr(src, no)
        mut = how.endswith("mut")
        if s[0] != "slice" or (mut and not s[3]) or per < 1:
            raise Unsupported(f"line {no}: {how} of something but a slice")
        _, reg = self.bind(name, ("chunked", s[2], mut, per))
        self.emit(no, text, "subslice", reg, s, self.expr(start, no))

    def consumed(self, name: str, per: int, groups: str, no: int, text: str) -> None:
        """``done += B * groups.len()`` after a loop over groups (as_chunks_mut::<B>) ran out: B times
        its chunks are the elements the loop consumed, groups' length less the iterator's rest."""
        ty, reg = self.lookup(groups, no)
        if ty[0] != "chunked" or ty[3] != per or reg not in self.iterated:
            raise Unsupported(f"line {no}: {per} * {groups}.len() of something but chunks of {per} a loop ran out")
        self.emit(no, text, "consumed", self.expr(name, no)[1], reg, self.iterated[reg])

    def construct(self, i: int, no: int) -> int:
        """``Self { field: [words], field, .. }``: the struct's fields stored (the end of new)."""
        lines, inits = self.prog.lines, {}
        while i < len(lines) and lines[i].strip() != "}":
            s = lines[i].strip().rstrip(",")
            i += 1
            if not s:
                continue
            m = re.fullmatch(r"(\w+)\s*(?::\s*(.+))?", s)
            if not m or m.group(1) not in self.prog.fields or m.group(1) in inits:
                raise Unsupported(f"line {i}: cannot read the field initializer {s!r}")
            src = m.group(2) or m.group(1)
            if src.startswith("["):
                words = [self.expr(x, i) for x in src.strip("[]").split(",")]
            else:
                words = self.expr(src, i)
                if words[0] != "arr" or words[4] != 8:
                    raise Unsupported(f"line {i}: the field {m.group(1)} is not made from a u64 array")
            inits[m.group(1)] = words
        if set(inits) != set(self.prog.fields):
            raise Unsupported(f"line {no}: Self {{ .. }} does not set every field")
        self.emit(no, "Self { .. }", "construct", inits)
        return i + 1

    # ---- the SIMD paths
    def simd_statement(self, i: int) -> int:
        """The statement under the SIMD cfg: ``let (blocks, tweaks) = { let done =
        simd::DIR(self, blocks, tweaks); (&mut blocks[done..], &tweaks[done..]) };``.  Left out
        in the job of the build without feature simd; else the job's arm of the dispatcher (a
        path function inlined, or a constant), then blocks and tweaks from done on."""
        self.fn.simd = True
        lines, no = self.prog.lines, i + 1
        body = _squash(lines[i:skip(lines, i)])
        m = re.fullmatch(r"let \((\w+), (\w+)\) = \{ let (\w+) = simd::(\w+)\(self, \1, \2\); "
                         r"\(&mut \1\[\3\.\.\], &\2\[\3\.\.\]\) \};", body)
        if not m or m.group(4) != METHODS[self.fn.name][0] or not METHODS[self.fn.name][1]:
            raise Unsupported(f"line {no}: cannot read the SIMD statement {body[:60]!r}")
        end = skip(lines, i)
        if self.fn.arm is None:
            return end
        if m.group(4) not in self.prog.arms:
            raise Unsupported(f"line {no}: no dispatcher simd::{m.group(4)}")
        blocks, tweaks = (self.lookup(m.group(k), no) for k in (1, 2))
        done = f"{m.group(3)}'{len(self.fn.stmts)}"
        how, what, module = self.fn.arm
        if how == "value":
            self.emit(no, body, "let", done, ("num", what))
        else:
            self.inline(what, {"blocks": blocks, "tweaks": tweaks}, done, no, module)
        for name, (ty, reg) in ((m.group(1), blocks), (m.group(2), tweaks)):
            self.emit(no, body, "subslice", reg, (ty[0], reg) + ty[1:], ("var", done))
        self.emit(no, body, "drop", [done])
        return end

    def inline(self, name: str, args: dict, result: str, no: int, module: int) -> None:
        """A path function ``unsafe fn NAME(tf: &ThreefishN, blocks, tweaks) -> usize`` inlined:
        its parameters the struct and the caller's slices, its ``return`` and tail expression
        the result register."""
        if name not in self.prog.simd_fns:
            raise Unsupported(f"line {no}: {name} is not a function of the SIMD module")
        params, start = self.prog.simd_fns[name]
        parts = [p.strip() for p in params.split(",")]
        want = [("self",), ("slice", self.prog.consts.get("BLOCK_BYTES"), True, None), ("slice", 16, False, None)]
        saved, self.scopes, self.ret, self.simd, self.module = self.scopes, [{}], (result, []), True, module
        for (pname, ty), arg in zip(self.params(parts, want, name, start), (None, args["blocks"], args["tweaks"])):
            self.bind(pname, ty[:3], arg[1] if arg else None)
        self.block(start)
        for jmp in self.ret[1]:
            jmp.a = len(self.fn.stmts)
        own = [reg for n, (ty, reg) in self.scopes[0].items() if ty[0] not in ("arr", "self", "elemref")
               and n not in [p.split(":")[0].strip() for p in parts]]
        self.emit(start, "}", "drop", own)
        self.scopes, self.ret, self.simd, self.module = saved, None, False, None

    # ---- loops
    def for_loop(self, pat: str, it: str, no: int, text: str, i: int) -> int:
        m = re.fullmatch(r"0\.\.(\w+)", it)
        if m and re.fullmatch(r"\w+", pat):
            return self.range_loop(pat, _num(m.group(1), no), no, text, i)
        m = re.fullmatch(r"\(\s*(\w+)\s*,\s*&(\w+)\s*\)", pat)
        z = re.fullmatch(r"(\w+)\.iter_mut\(\)\.zip\(&(.+)\)", it)
        if m and z:
            return self.fill_loop(m.group(1), m.group(2), z.group(1), z.group(2), no, text, i)
        m = re.fullmatch(r"\(\s*(\w+)\s*,\s*(\w+)\s*\)", pat)
        z = re.fullmatch(r"(.+)\.zip\((.+)\)", it)
        if re.fullmatch(r"\w+", pat) and _CHUNKS.fullmatch(it):      # for blk in blocks.chunks_exact(NB)
            names, sides = [pat], [self.side(it, no, text)]
        elif m and z:
            names, sides = [m.group(1), m.group(2)], [self.side(z.group(k), no, text) for k in (1, 2)]
        else:
            raise Unsupported(f"line {no}: cannot read the loop {text!r}")
        if len({side[1] for side in sides}) != 1:
            raise Unsupported(f"line {no}: a zip of iterators of {sides[0][1]} and {sides[1][1]} per step")
        head = len(self.fn.stmts)
        test = self.emit(no, text, "zipTest", [side[0] for side in sides], sides[0][1])
        self.scopes.append({})
        for name, (reg, _, _, item, _) in zip(names, sides):
            _, r = self.bind(name, item[:3])
            self.emit(no, text, "next", r, reg, item[3])
        i = self.block(i)
        sc = self.scopes.pop()
        self.emit(i, "}", "drop", [reg for _, reg in sc.values()])
        for reg, count, stride, _, _ in sides:
            self.emit(i, "}", "advance", reg, stride, count)
        self.emit(i, "}", "jmp", head)
        test.c = len(self.fn.stmts)
        for reg, _, _, _, src in sides:
            if src == "chunks":
                self.spent.add(reg)
            elif src:
                self.iterated[src] = reg
        return i

    def side(self, s: str, no: int, text: str) -> tuple:
        """One iterator of a loop: (its registers' name, what its length counts down per step, the
        bytes its pointers advance, the item's type and length (None: a byte array), what it runs
        out: "chunks" (a chunk iterator), a chunked slice's register, or None).  ``&mut groups``
        or ``blocks.chunks_exact(B)`` (a chunk iterator: its own registers, so a remainder can
        follow), or a slice (``blocks``, ``blocks.iter_mut()``, ``groups.into_remainder()``, a
        chunked slice ``groups``) iterated here."""
        s = s.strip()
        m = re.fullmatch(r"\(?&mut\s+(\w+)\)?", s)
        c = _CHUNKS.fullmatch(s)
        if m or c:
            ty, reg = self.lookup(m.group(1), no) if m else self.chunks(f"it{len(self.fn.stmts)}", c, no, text)
            if ty[0] != "chunks":
                raise Unsupported(f"line {no}: {m.group(1)} is not a chunk iterator")
            _, elem, mut, per = ty
            count = 1 if elem == 1 else per         # a byte slice's chunks counts chunks
            return reg, count, per * elem, ("slice", elem, mut, per), "chunks"
        m = re.fullmatch(r"(.+?)(?:\.(iter_mut|iter)\(\))?", s)
        base, how = m.group(1), m.group(2)
        r = re.fullmatch(r"(\w+)\.(into_remainder|remainder)\(\)", base)
        per, ran = 1, None
        if r:
            ty, src = self.lookup(r.group(1), no)
            if ty[0] != "chunks" or src not in self.spent or (r.group(2) == "into_remainder") != ty[2] or ty[1] == 1:
                raise Unsupported(f"line {no}: {base} of something but a chunk iterator that ran out")
            elem, mut = ty[1], ty[2]
        else:
            e = self.expr(base, no)
            if e[0] not in ("slice", "chunked"):
                raise Unsupported(f"line {no}: a loop over {base}, which is not a slice")
            src, elem, mut = e[1], e[2], e[3]
            if e[0] == "chunked":
                per, ran = e[4], src
        if how == "iter_mut" and not mut:
            raise Unsupported(f"line {no}: iter_mut of an immutable slice")
        mut = mut and how != "iter"
        reg = f"it{len(self.fn.stmts)}"
        self.emit(no, text, "iter", reg, ("slice", src, elem, mut), None)
        return reg, per, per * elem, ("slice", elem, mut, per) if per > 1 else ("bytes", elem, mut, None), ran

    def range_loop(self, name: str, count: int, no: int, text: str, i: int, bind=None) -> int:
        """``for c in 0..N``: a counter with a constant bound (run, not proved by induction);
        ``bind(counter register)``: what else the loop binds per trip (fill_loop)."""
        ctr = f"#c{no}"
        self.emit(no, text, "let", ctr, ("num", 0))
        head = len(self.fn.stmts)
        test = self.emit(no, text, "rangeTest", ctr, count)
        self.scopes.append({})
        if name != "_":
            self.emit(no, text, "let", self.bind(name, ("val", False))[1], ("var", ctr))
        if bind:
            bind(ctr)
        i = self.block(i)
        sc = self.scopes.pop()
        self.emit(i, "}", "drop", [reg for ty, reg in sc.values() if ty[0] != "elemref"])
        self.emit(i, "}", "let", ctr, ("bin", "+", ("var", ctr), ("num", 1)))
        self.emit(i, "}", "jmp", head)
        test.c = len(self.fn.stmts)
        self.emit(i, "}", "drop", [ctr])
        return i

    def fill_loop(self, v: str, k: str, dst: str, src: str, no: int, text: str, i: int) -> int:
        """``for (v, &k) in bk.iter_mut().zip(&kr) { *v = f(k); }``: as many trips as the shorter
        array, k its word, v the element of bk it stores (``*v = ...``)."""
        a, b = self.expr(dst, no), self.expr(src, no)
        if a[0] != "arr" or b[0] != "arr" or not a[3] or b[4] != 8:
            raise Unsupported(f"line {no}: cannot read the loop {text!r}")

        def bind(ctr):
            self.emit(no, text, "let", self.bind(k, ("val", False))[1], ("index", b, ("var", ctr)))
            self.bind(v, ("elemref", a, ctr))
        return self.range_loop("_", min(a[2], b[2]), no, text, i, bind)


# ---------------------------------------------------------------------------- the machine

def _exact_div(t: Term, k: int, no: int) -> Term:
    """t / k where t is a known multiple of k: a constant, or a sum whose coefficients and constant
    are (read as signed: a length is far below 2^63)."""
    def signed(c):
        return c - (1 << 64) if c >> 63 else c
    if value(t) is not None and signed(value(t)) % k == 0:
        return const(signed(value(t)) // k)
    if t.op == "lin" and signed(t.args[1]) % k == 0 and all(signed(c) % k == 0 for _, c in t.args[0]):
        out = const(signed(t.args[1]) // k)
        for x, c in t.args[0]:
            out = add(out, mul(x, signed(c) // k))
        return out
    raise Unsupported(f"line {no}: chunks of {k} of a slice whose length is not a known multiple of {k}")


_REF_PARTS = ("#in", "#out", "#len")


class RustMachine(CFamilyMachine, LaneMachine):
    """One path through one job (new, then a method) of a Rust crate.  ``args``: key, tweak, in,
    out pointers (and n, the blocks methods)."""

    def __init__(self, prog: Program, fn: Function, args: list):
        super().__init__(prog, fn)
        self.args = args
        self.moves: dict = {}       # term -> lines that moved it into another vector lane

    def enter(self, args) -> int:
        return 0

    # ---- values
    def ev(self, e):
        k = e[0]
        if k == "num":
            return const(e[1])
        if k == "var":
            t = self._value_of(e[1])
            if t is None:
                raise ProveError(f"line {self.line.no}: {e[1]} is read before it is set")
            return t
        if k == "bin":
            return self._bin(e[1], self._word_value(e[2]), self._word_value(e[3]))
        if k == "not":
            return xor(self._word_value(e[1]), const(MASK))
        if k == "cast":
            return self._word_value(e[1])
        if k == "index":
            addr, size = self._element(e)
            return self.load(addr, 8) if size == 8 else self._vload(addr, size // 8)
        if k == "method":
            return self._method(e[1], e[2], e[3])
        if k == "call" and e[1] == "load64" and len(e[2]) == 2:
            return self._word(self.ref(e[2][0]), self._const(e[2][1]))
        if k == "vcall":
            name = e[1]
            args = [self.ev(a) for a in e[2]]
            if x86.parse(name) is None:
                return self._neon(name, args)
            op, w = x86.parse(name)
            return self._x86(op, w, args, name)
        if k == "row" and len(e[2]) == 2:
            ref, i = self.ref(e[2][0]), self._const(e[2][1])
            return tuple(self._word(ref, i + j) for j in range(self.prog.rows[e[1]][0]))
        raise Unsupported(f"line {self.line.no}: cannot read this as a value")

    def _value_of(self, reg: str):
        """A register's value: a vector (lane terms) or a word; None if unset."""
        v = self.state.vregs.get(reg)
        return v if v is not None else self.state.regs.get(reg)

    def _word_value(self, e) -> Term:
        t = self.ev(e)
        if isinstance(t, tuple):
            raise Unsupported(f"line {self.line.no}: a Rust operator on a vector")
        return t

    def _const(self, e) -> int:
        v = value(self._word_value(e))
        if v is None:
            raise Unsupported(f"line {self.line.no}: an index or count that is not constant")
        return v

    def _bin(self, op: str, a: Term, b: Term) -> Term:
        if op == "^":
            return xor(a, b)
        if op == "|":
            return or_(a, b)
        va, vb = value(a), value(b)
        if op == "&" and (va is not None or vb is not None):
            return and_(b, va) if vb is None else and_(a, vb)
        if op in ("<<", ">>") and vb is not None:
            if vb > 63:
                raise ProveError(f"line {self.line.no}: a shift by {vb} (panics)")
            return mul(a, 1 << vb) if op == "<<" else shr(a, vb)
        if va is None or vb is None:
            raise Unsupported(f"line {self.line.no}: {op} on a value the prover does not know" +
                              (" (a plain + - * can panic on overflow: the kernels use wrapping_add)"
                               if op in "+-*" else ""))
        r = {"+": va + vb, "-": va - vb, "*": va * vb}.get(op)
        if r is None or not 0 <= r <= MASK:
            raise ProveError(f"line {self.line.no}: {va} {op} {vb} overflows (panics)")
        return const(r)

    def _method(self, name: str, recv, args) -> Term:
        if name == "len" and not args and recv[0] == "slice":
            return self.state.regs[recv[1] + "#len"]
        if len(args) != 1:
            raise Unsupported(f"line {self.line.no}: the method {name}")
        x = self._word_value(recv)
        if name == "wrapping_add":
            return add(x, self._word_value(args[0]))
        if name == "wrapping_sub":
            return sub(x, self._word_value(args[0]))
        if name in ("rotate_left", "rotate_right"):
            n = self._const(args[0]) % 64
            return rotl(x, n if name == "rotate_left" else (64 - n) % 64)
        raise Unsupported(f"line {self.line.no}: the method {name}")

    def _element(self, e) -> tuple:
        """(address, element bytes) of ``array[i]`` (bounds checked)."""
        arr, i = e[1], self._const(e[2])
        if arr[0] != "arr":
            raise Unsupported(f"line {self.line.no}: an index into something but an array")
        if i >= arr[2]:
            raise ProveError(f"line {self.line.no}: index {i} of an array of {arr[2]} (panics)")
        return add(var(arr[1]), const(arr[4] * i)), arr[4]

    # ---- references: (in address, out address or None, bytes, writable)
    def ref(self, e) -> tuple:
        regs = self.state.regs
        if e[0] == "bytes":
            return regs[e[1] + "#in"], regs.get(e[1] + "#out"), e[2], e[3]
        if e[0] == "ref" and e[2][0] == "index" and e[2][1][0] == "slice":
            s, j = e[2][1], self._const(e[2][2])
            n = value(regs[s[1] + "#len"])
            if n is None:
                raise Unsupported(f"line {self.line.no}: an element of a slice whose length is not known")
            if j >= n:
                raise ProveError(f"line {self.line.no}: element {j} of a slice of {n} (panics)")
            if e[1] and not s[3]:
                raise Unsupported(f"line {self.line.no}: &mut of an immutable slice's element")
            off = const(s[2] * j)
            out = regs.get(s[1] + "#out")
            return add(regs[s[1] + "#in"], off), add(out, off) if out is not None else None, s[2], e[1]
        raise Unsupported(f"line {self.line.no}: a reference the prover does not read")

    def _word(self, ref: tuple, i: int) -> Term:
        """Word i of a byte array: in place, what was stored at the out address, else the input."""
        inn, out, n, _ = ref
        if 8 * i + 8 > n:
            raise ProveError(f"line {self.line.no}: word {i} of {n} bytes (panics)")
        if out is not None and base_of(add(out, const(8 * i))) in self.state.mem:
            return self.load(add(out, const(8 * i)), 8)
        return self.load(add(inn, const(8 * i)), 8)

    def _store_words(self, ref: tuple, i: int, words) -> None:
        inn, out, n, writable = ref
        if not writable or out is None:
            raise Unsupported(f"line {self.line.no}: a store into an immutable array")
        if 8 * (i + len(words)) > n:
            raise ProveError(f"line {self.line.no}: words {i}.. of {n} bytes (panics)")
        for j, t in enumerate(words):
            self.store(add(out, const(8 * (i + j))), 8, t)

    def _zip_test(self, iters: list, count: int) -> Term:
        lens = [self.state.regs[r + "#len"] for r in iters]
        if any(t is not lens[0] for t in lens):
            raise Unsupported(f"line {self.line.no}: a zip of iterators of different lengths")
        return lens[0] if count == 1 else ge(lens[0], count)

    # ---- statements
    def step(self, pc: int):
        st = self.fn.stmts[pc]
        self.line = st
        try:
            return self._step(st, pc)
        except (TypeError, IndexError, AttributeError, KeyError) as e:
            raise Unsupported(f"line {st.no}: cannot read {st.text.strip()!r} ({type(e).__name__})") from None

    def _step(self, st: Stmt, pc: int):
        k, regs = st.kind, self.state.regs
        if k == "let":
            if st.b is None:
                regs.pop(st.a, None)
                self.state.vregs.pop(st.a, None)
            else:
                self._set(st.a, self.ev(st.b))
        elif k == "assign":
            self._assign(st.a, st.b, self.ev(st.c))
        elif k == "store":
            self._store_words(self.ref(st.a[0]), self._const(st.a[1]), [self._word_value(st.a[2])])
        elif k == "rowStore":
            v = self._vec(self.ev(st.b[2]))
            if len(v) != self.prog.rows[st.a][0]:
                raise Unsupported(f"line {st.no}: {st.a} of a vector of another width")
            self._store_words(self.ref(st.b[0]), self._const(st.b[1]), v)
        elif k == "fill":
            v = self.ev(st.b)
            if 8 * (len(v) if isinstance(v, tuple) else 1) != st.a[4]:
                raise Unsupported(f"line {st.no}: fills an array with a value of another width")
            for i in range(st.a[2]):
                self._put(add(var(st.a[1]), const(st.a[4] * i)), v)
        elif k in ("rangeTest", "zipTest"):
            self.state.zf = self._test(st)
            return ("branch", True, st.c, pc + 1)
        elif k == "ifTest":
            self.state.zf = lt(self._word_value(st.a), self._word_value(st.b))
            return ("branch", True, st.c, pc + 1)
        elif k == "jmp":
            return st.a
        elif k == "ret":
            return ("ret", self.ret0)
        else:
            self._move(st)
        return pc + 1

    def _set(self, reg: str, t) -> None:
        if isinstance(t, tuple):
            self._set_vector(reg, t)
            return
        self.note(t)
        self.state.regs[reg] = t
        self.state.vregs.pop(reg, None)

    def _put(self, addr: Term, t) -> None:
        if isinstance(t, tuple):
            self._vstore(addr, t)
        else:
            self.store(addr, 8, t)

    def _test(self, st: Stmt) -> Term:
        if st.kind == "rangeTest":
            return lt(self.state.regs[st.a], const(st.b))
        return self._zip_test(st.a, st.b)

    def concrete_head(self, pc: int) -> bool:
        st = self.fn.stmts[pc]
        self.line = st
        return st.kind == "rangeTest" and value(self._test(st)) is not None

    def _assign(self, lhs, op: str, t) -> None:
        if lhs[0] == "index":
            addr, size = self._element(lhs)
            if isinstance(t, tuple) != (size > 8) or (op != "=" and size > 8):
                raise Unsupported(f"line {self.line.no}: an array element of another width")
            self._put(addr, t if op == "=" else self._bin(op[0], self.load(addr, 8), t))
            return
        old = self._value_of(lhs[1])
        if op != "=":
            if old is None:
                raise ProveError(f"line {self.line.no}: {lhs[1]} is read before it is set")
            if isinstance(old, tuple) or isinstance(t, tuple):
                raise Unsupported(f"line {self.line.no}: {op} on a vector")
            t = self._bin(op[0], old, t)
        self._set(lhs[1], t)

    def _move(self, st: Stmt) -> None:
        """The statements on references, iterators and the struct."""
        k, regs = st.kind, self.state.regs
        if k == "params":
            self._params(st)
        elif k == "construct":
            self._construct(st.a)
        elif k == "iter":           # an iterator over a slice: its pointers and length (a shared
            # iterator of a mutable slice keeps its out pointer: its reads see what was stored)
            src, chunks = st.b[1], st.c
            self._copy_ref(st.a, src)
            if chunks:              # counted in whole chunks
                regs[st.a + "#len"] = _exact_div(regs[src + "#len"], chunks, self.line.no)
        elif k == "next":           # a loop's item: the iterator's element, or its chunk of st.c elements
            for part in ("#in", "#out"):
                if st.b + part in regs:
                    regs[st.a + part] = regs[st.b + part]
            if st.c is not None:
                regs[st.a + "#len"] = const(st.c)
        elif k == "advance":
            for part in ("#in", "#out"):
                if st.a + part in regs:
                    regs[st.a + part] = add(regs[st.a + part], const(st.b))
            regs[st.a + "#len"] = sub(regs[st.a + "#len"], const(st.c))
        elif k == "fixLen":
            n = value(regs[st.b[1] + "#len"])
            if n != st.c:
                raise ProveError(f"line {st.no}: try_into a [_; {st.c}] of a slice of {n} (unwrap panics)")
            self._copy_ref(st.a, st.b[1])
        elif k == "subslice":
            self._subslice(st.a, st.b, self._word_value(st.c))
        elif k == "consumed":       # done += B * groups.len(): groups' length less what the loop left
            regs[st.a] = add(regs[st.a], sub(regs[st.b + "#len"], regs[st.c + "#len"]))
        elif k == "drop":
            for reg in st.a:
                for name in (reg,) + tuple(reg + p for p in _REF_PARTS):
                    regs.pop(name, None)
                self.state.vregs.pop(reg, None)
        elif k == "sameLen":
            a, b = (regs[x[1] + "#len"] for x in st.a)
            if a is not b:
                raise Unsupported(f"line {st.no}: assert_eq! of lengths the prover cannot tell equal")
        else:
            raise Unsupported(f"line {st.no}: cannot run {st.text!r}")

    def _copy_ref(self, dst: str, src: str) -> None:
        regs = self.state.regs
        got = {p: regs[src + p] for p in _REF_PARTS if src + p in regs}
        for p, t in got.items():
            regs[dst + p] = t

    def _subslice(self, dst: str, s: tuple, start: Term) -> None:
        """``s[start..]``: start elements on, start of them fewer; start past the end panics: a
        start the prover does not know must be in bounds for every block count (a condition of
        the path the engine checks, engine._coverage)."""
        regs = self.state.regs
        n = regs[s[1] + "#len"]
        past = lt(n, start)
        if value(past) == 1:
            raise ProveError(f"line {self.line.no}: a slice from {value(start)} of {value(n)} elements (panics)")
        if value(past) is None:
            self.state.assume[past] = True
        off = mul(start, s[2])
        got = {"#in": add(regs[s[1] + "#in"], off), "#len": sub(n, start)}
        if s[1] + "#out" in regs:
            got["#out"] = add(regs[s[1] + "#out"], off)
        regs.update({dst + p: t for p, t in got.items()})

    def _params(self, st: Stmt) -> None:
        """new's key, or (new's locals gone out of scope) the method's block(s) and tweak(s)."""
        regs, a = self.state.regs, self.args
        if st.a == "new":
            regs[st.b[0] + "#in"] = a[0]
            return
        if st.a == "ubi":           # (h, t, in, n, add): n blocks of st.c bytes
            blocks, add_ = st.b
            regs[blocks + "#in"], regs[blocks + "#len"], regs[add_] = a[2], mul(a[3], st.c), a[4]
            return
        regs.clear()
        self.state.vregs.clear()
        blk, tw = st.b
        regs[blk + "#in"], regs[blk + "#out"], regs[tw + "#in"] = a[2], a[3], a[1]
        if len(a) > 4:
            regs[blk + "#len"] = regs[tw + "#len"] = a[4]

    def _construct(self, inits: dict) -> None:
        for field, src in inits.items():
            size = self.prog.fields[field]
            if isinstance(src, list):
                words = [self._word_value(x) for x in src]
            else:
                words = [self.load(add(var(src[1]), const(8 * i)), 8) for i in range(min(size, src[2]))]
                if src[2] != size:
                    raise ProveError(f"the field {field} of {size} words is made from an array of {src[2]}")
            if len(words) != size:
                raise ProveError(f"the field {field} of {size} words is given {len(words)}")
            for i, t in enumerate(words):
                self.store(add(var(f"rsp0.self.{field}"), const(8 * i)), 8, t)


# ---------------------------------------------------------------------------- jobs

def jobs(text: str, block_bytes: int) -> tuple[list, str]:
    """(name, (direction, blocks), make) per method of the Threefish type (a blocks method of a
    crate with SIMD paths: one per arm of its dispatcher, and the build without feature simd),
    and the report's note (what is not proved: the CPU test that picks a SIMD path)."""
    prog = _program(text)
    if prog.ty is None or "new" not in prog.methods:
        raise Unsupported("no `pub struct ThreefishNNN` with `impl` and `new` in the file")
    if prog.consts.get("BLOCK_BYTES") != block_bytes or prog.consts.get("TWEAK_BYTES") != 16:
        raise Unsupported(f"BLOCK_BYTES is {prog.consts.get('BLOCK_BYTES')} and TWEAK_BYTES "
                          f"{prog.consts.get('TWEAK_BYTES')}, not {block_bytes} and 16")
    out, simd = [], False
    for name, kind in METHODS.items():
        if name not in prog.methods:
            raise Unsupported(f"no method {name} in impl {prog.ty}")
        fn = prog.job(name)
        simd |= fn.simd
        fns = [(f"{prog.ty}::{name}", fn)]
        if fn.simd:
            fns = [(f"{prog.ty}::{name} [{NO_SIMD}]", fn)] + \
                  [(f"{prog.ty}::{name} [path {label}]", prog.job(name, arm))
                   for label, arm in prog.arms.get(kind[0], [])]
        for label, f in fns:
            def make(args, f=f):
                m = RustMachine(prog, f, args)
                return m, 0, heads(f), lambda pc: f"line {f.stmts[pc].no}"
            out.append((label, kind, make))
    return out, SIMD_NOTE if simd else ""


def _program(text: str) -> Program:
    try:
        return Program(text)
    except (TypeError, IndexError, AttributeError, ValueError) as e:
        raise Unsupported(f"the crate's structure ({type(e).__name__}: {e})") from None


def ubi_job(text: str, block_bytes: int) -> tuple:
    """The Skein crate's ``ubi`` (its loop over ``blocks.chunks_exact(NB)``: ``t[0] += add``,
    ``ubi_block(h, t, blk)`` inlined, ``t[1] &= !FIRST``): (program, function), run with the
    arguments (h, t, in pointers, n, add) of gen/prove/skein.py's C contract."""
    prog = _program(text)
    if "ubi" not in prog.functions:
        raise Unsupported("no fn ubi in the crate")
    if prog.consts.get("NB") != block_bytes or prog.consts.get("NW") != block_bytes // 8:
        raise Unsupported(f"NB is {prog.consts.get('NB')} and NW {prog.consts.get('NW')}, not {block_bytes} "
                          f"and {block_bytes // 8}")
    fn = Function("ubi", None)
    params, start = prog.functions["ubi"]
    _Compiler(prog, fn).function(params, start, "ubi")
    return prog, fn
