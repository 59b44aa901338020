"""Symbolic execution of the Rust printer's output (gen/printers/rust.py, templates/rust/lib.rs.j2),
read as text.

The crate's Threefish type: ``new(key)`` (the key schedule: the struct's fields) and the methods
``encrypt_block_with_tweak`` / ``decrypt_block_with_tweak`` (one block in place) and
``encrypt_blocks_with_tweaks`` / ``decrypt_blocks_with_tweaks`` (a slice of blocks, one tweak per
block).  A method is proved as it runs after ``new``: a job is new's statements, the struct built
from its locals (``Self { k: [..], kr, .. }``: the fields become memory, new's names go out of
scope), then the method's statements with its parameters.

The text is a small language: ``let`` / ``let mut`` of u64 values, assignments (``=``, ``^=``,
``|=``, ``&=``), ``wrapping_add`` / ``wrapping_sub`` / ``rotate_left`` / ``rotate_right``, ``^ | &
<< >> !`` on words, ``+ - *`` on constants only (index arithmetic: a plain ``+`` on a word would
panic on overflow in a debug build; the kernels use ``wrapping_add``), ``as u64`` / ``as usize``,
local ``[0u64; N]`` arrays (zeroed), the struct's arrays (``self.k[i]``, ``let kr = &self.kr;``),
the crate's helpers ``load64(b, i)``, ``store64(b, i, v)`` and ``wipe(&mut a)`` (the array
zeroed), whose bodies must be the template's.  Names are scoped as in Rust: a ``let`` inside a
loop body is gone after it.  Loops: ``for c in 0..N`` (run), and the blocks loops over slice
iterators, ``blocks.iter_mut().zip(tweaks)`` and ``(&mut groups).zip(&mut tweak_groups)`` of
``chunks_exact_mut(B)`` / ``chunks_exact(B)`` (then ``into_remainder()`` / ``remainder()`` of
chunk iterators that ran out), compiled to a test of the remaining length at the head, the body,
the pointers' and lengths' steps and a jump back: proved by induction by the engine
(gen/prove/engine.py) as C's loops are.  A zip's two iterators must hold the same length (the
methods' ``assert_eq!`` of the two slices' lengths).

Memory: a block is read and written in place.  A mutable byte array (``block``, ``&mut blk[j]``)
names the caller's input words (``ptr:in``) and output words (``ptr:out``) at the same offsets: a
load reads what the method stored there, else the input word.  An index out of bounds (a helper's
word index, an array element, ``blk[j]``) panics: the method DIFFERS.

Not read: the ``core::arch`` SIMD paths of a crate rendered with ``--isa`` (the statement under
``#[cfg(all(feature = "simd", target_arch = "x86_64"))]`` that runs them first): the blocks methods
are proved as built without feature ``simd``, and the report's note says the SIMD paths are not
proved.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from .c_simd import _Parser as _CParser
from .cfamily import CFamilyMachine, Stmt, heads, skip, strip_comments, tokens
from .engine import ProveError, Unsupported, base_of, literal
from .terms import MASK, Term, add, and_, const, ge, lt, mul, or_, rotl, shr, sub, value, var, xor

# Rust's binary operators by precedence (the bit operators bind tighter than in C)
BINARY = {"*": 7, "+": 6, "-": 6, "<<": 5, ">>": 5, "&": 4, "^": 3, "|": 2}
_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F_]+(?:u64|usize|u32)?|\d[\d_]*(?:u64|usize|u32)?|[A-Za-z_]\w*|<<|>>|"
                    r"[-+*^|&!()\[\],.:;])")
_SUFFIX = re.compile(r"_?(?:u64|usize|u32)$")

# the statement of a blocks method that runs the SIMD paths first (feature simd): not read
CFG_SIMD = '#[cfg(all(feature = "simd", target_arch = "x86_64"))]'
SIMD_NOTE = ("the SIMD paths of *_blocks_with_tweaks (feature simd, core::arch) are not read: the blocks "
             "methods are proved as built without feature simd")
# the crate's helpers, modelled by name: their bodies must be the template's
HELPERS = ("load64", "store64", "wipe")
TEMPLATE = Path(__file__).resolve().parents[2] / "templates/rust/lib.rs.j2"
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


class _Parser(_CParser):
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
            if ty not in ("u64", "usize"):
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
    """A job: new's statements, then one method's (``stmts``); ``simd``: a statement of the
    method under the SIMD cfg was left out."""

    def __init__(self, name: str):
        self.name = name
        self.stmts: list[Stmt] = []
        self.simd = False


class Program:
    """The Threefish crate's ``lib.rs``: its consts, the struct's fields, the helpers (checked),
    and the line ranges of ``new`` and the methods."""

    def __init__(self, text: str):
        self.lines = _blank(text).splitlines()
        self.raw = text.splitlines()        # the attributes' strings (blanked in lines)
        self.consts: dict[str, int] = {}
        self.fields: dict[str, int] = {}
        self.methods: dict[str, tuple] = {}       # name -> (parameters text, first body line index)
        self.helpers: dict[str, str] = {}
        self.ty = None
        lines, i = self.lines, 0
        while i < len(lines):
            s = lines[i].strip()
            m = re.fullmatch(r"(?:pub\s+)?const\s+(\w+)\s*:\s*usize\s*=\s*(\w+)\s*;", s)
            if m and m.group(2)[0].isdigit():
                self.consts[m.group(1)] = _num(m.group(2), i + 1)
            m = re.fullmatch(r"fn\s+(\w+)\s*(?:<[^>]*>)?\s*\(.*\)\s*(?:->\s*\w+\s*)?\{", s)
            if m and m.group(1) in HELPERS:
                end = skip(lines, i)
                self.helpers[m.group(1)] = _squash(lines[i:end])
                i = end
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
                i = self._impl(i + 1)
                continue
            i = skip(lines, i) if s.endswith("{") else i + 1
        if self.ty is None or "new" not in self.methods:
            raise Unsupported("no `pub struct ThreefishNNN` with `impl` and `new` in the file")
        template = _template_helpers()
        for name in HELPERS:
            if name in self.helpers and self.helpers[name] != template[name]:
                raise Unsupported(f"the helper {name} is not the template's (templates/rust/lib.rs.j2)")

    def _impl(self, i: int) -> int:
        lines = self.lines
        while i < len(lines):
            s = lines[i].strip()
            if s == "}":
                return i + 1
            m = re.fullmatch(r"pub\s+fn\s+(\w+)\s*\((.*)\)\s*(?:->\s*Self\s*)?\{", s)
            if m:
                self.methods[m.group(1)] = (m.group(2), i + 1)
            i = skip(lines, i) if s.endswith("{") else i + 1
        raise Unsupported("an impl block does not end")

    def size(self, name: str, no: int) -> int:
        """A byte count: a literal or one of the file's usize consts."""
        if name[0].isdigit():
            return _num(name, no)
        if name not in self.consts:
            raise Unsupported(f"line {no}: {name} is not a const of the file")
        return self.consts[name]

    def ref_type(self, text: str, no: int):
        """``&[u8; N]`` -> ("bytes", N, mut); ``&[[u8; N]]`` -> ("slice", N, mut); with ``; M``
        after the element type: a slice of M elements (checked where it is made)."""
        m = re.fullmatch(r"&\s*(mut\s+)?\[\s*(?:u8\s*;\s*(\w+)|\[\s*u8\s*;\s*(\w+)\s*\]\s*(?:;\s*(\w+))?)\s*\]",
                         text.strip())
        if not m:
            raise Unsupported(f"line {no}: cannot read the type {text.strip()!r}")
        mut = bool(m.group(1))
        if m.group(2):
            return ("bytes", self.size(m.group(2), no), mut)
        return ("slice", self.size(m.group(3), no), mut, self.size(m.group(4), no) if m.group(4) else None)

    def job(self, method: str) -> Function:
        fn = Function(method)
        params, start = self.methods["new"]
        c = _Compiler(self, fn)
        c.function(params, start, "new")
        params, start = self.methods[method]
        c.function(params, start, method)
        return fn


def _squash(lines) -> str:
    return " ".join(" ".join(lines).split())


@functools.lru_cache(maxsize=1)
def _template_helpers() -> dict:
    """The helpers' text in templates/rust/lib.rs.j2 (whitespace squashed)."""
    lines = _blank(TEMPLATE.read_text()).splitlines()
    out = {}
    for i, ln in enumerate(lines):
        m = re.match(r"\s*fn\s+(\w+)", ln)
        if m and m.group(1) in HELPERS:
            out[m.group(1)] = _squash(lines[i:skip(lines, i)])
    return out


# ---------------------------------------------------------------------------- compiling a body

class _Compiler:
    """Compiles new's and a method's bodies into ``fn.stmts``, resolving names by Rust's scopes.
    A binding's type: ("u64", mut), ("arr", base name, words, mut), ("bytes", n, mut), ("slice",
    element bytes, mut), ("chunks", element bytes, mut, B); its value's registers: the name (u64),
    ``name#in``, ``name#out`` (mutable), ``name#len`` (slices, iterators)."""

    def __init__(self, prog: Program, fn: Function):
        self.prog, self.fn = prog, fn
        self.scopes: list[dict] = []
        self.spent: set = set()         # chunk iterators that ran out (their remainder may be taken)

    def emit(self, no, text, kind, a=None, b=None, c=None) -> Stmt:
        st = Stmt(no, text, kind, a, b, c)
        self.fn.stmts.append(st)
        return st

    # ---- names
    def lookup(self, name: str, no: int):
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        raise Unsupported(f"line {no}: {name} is not declared")

    def bind(self, name: str, ty: tuple) -> tuple:
        """Declare name in the innermost scope; returns (type, register name): a name that
        shadows one of an outer scope gets registers of its own."""
        cur = self.scopes[-1]
        if name in cur:                 # let x = .. x ..; in one scope: the same registers
            reg = cur[name][1]
        elif any(name in sc for sc in self.scopes[:-1]):
            reg = f"{name}'{len(self.fn.stmts)}"
        else:
            reg = name
        cur[name] = (ty, reg)
        return ty, reg

    def resolve(self, e, no: int):
        """The node with its names resolved: ("var", reg), ("arr", base, words, mut), ("bytes",
        reg, n, mut), ("slice", reg, element bytes, mut)."""
        k = e[0]
        if k == "name":
            if e[1] == "self":
                raise Unsupported(f"line {no}: self outside self.FIELD")
            ty, reg = self.lookup(e[1], no)
            if ty[0] == "u64":
                return ("var", reg)
            if ty[0] == "arr":
                return ty
            if ty[0] in ("bytes", "slice"):
                return (ty[0], reg, ty[1], ty[2])
            raise Unsupported(f"line {no}: the iterator {e[1]} in an expression")
        if k == "field":
            if e[1] != ("name", "self") or e[2] not in self.prog.fields:
                raise Unsupported(f"line {no}: cannot read the field {e[2]}")
            return ("arr", f"rsp0.self.{e[2]}", self.prog.fields[e[2]], False)
        if k == "num":
            return e
        if k in ("bin",):
            return (k, e[1], self.resolve(e[2], no), self.resolve(e[3], no))
        if k in ("not", "cast"):
            return (k, self.resolve(e[1], no))
        if k == "ref":
            return (k, e[1], self.resolve(e[2], no))
        if k == "index":
            return (k, self.resolve(e[1], no), self.resolve(e[2], no))
        if k == "method":
            return (k, e[1], self.resolve(e[2], no), tuple(self.resolve(a, no) for a in e[3]))
        if k == "call":
            if e[1] not in HELPERS or e[1] not in self.prog.helpers:
                raise Unsupported(f"line {no}: a call of {e[1]}, which is not a helper of the crate")
            return (k, e[1], tuple(self.resolve(a, no) for a in e[2]))
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
        if name == "new":
            if len(parts) != 1:
                raise Unsupported(f"line {no}: new takes one parameter (the key)")
            want = [("bytes", self.prog.consts.get("BLOCK_BYTES"), False)]
        else:
            if not parts or parts[0] != "&self":
                raise Unsupported(f"line {no}: {name} does not take &self")
            parts = parts[1:]
            blocks = METHODS[name][1]
            want = [("slice", self.prog.consts.get("BLOCK_BYTES"), True, None),
                    ("slice", 16, False, None)] if blocks else \
                [("bytes", self.prog.consts.get("BLOCK_BYTES"), True), ("bytes", 16, False)]
        regs = []
        for p, w in zip(parts, want):
            pname, _, ptype = p.partition(":")
            ty = self.prog.ref_type(ptype, no)
            if ty != w:
                raise Unsupported(f"line {no}: {name}'s parameter {p!r} is not a {w}")
            regs.append(self.bind(pname.strip(), ty[:3])[1])
        if len(parts) != len(want):
            raise Unsupported(f"line {no}: {name} takes {len(parts)} parameters, not {len(want)}")
        self.emit(no, params, "params", name, regs)
        i = self.block(start)
        if name == "new" and self.fn.stmts[-1].kind != "construct":
            raise Unsupported(f"line {i}: new does not end in Self {{ .. }}")
        if name != "new":
            self.emit(i, "}", "ret")

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
                if self.prog.raw[no - 1].strip() != CFG_SIMD:
                    raise Unsupported(f"line {no}: the attribute {self.prog.raw[no - 1].strip()}")
                self.fn.simd = True         # the SIMD paths' statement: not read (see the module's doc)
                i = skip(lines, i)
                continue
            if s == "Self {":
                i = self.construct(i, no)
                continue
            m = re.fullmatch(r"for\s+(.+?)\s+in\s+(.+?)\s*\{", s)
            if m:
                i = self.for_loop(m.group(1), m.group(2), no, s, i)
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
        return i, [reg for ty, reg in sc.values()]

    def statement(self, s: str, no: int, text: str) -> None:
        m = re.fullmatch(r"let\s+(mut\s+)?(\w+)\s*(?::\s*([^=]+?))?\s*(?:=\s*(.+))?", s)
        if m:
            return self.let(bool(m.group(1)), m.group(2), m.group(3), m.group(4), no, text)
        m = re.fullmatch(r"assert_eq!\((\w+)\.len\(\),\s*(\w+)\.len\(\),\s*\"\s*\"\)", s)
        if m:
            self.emit(no, text, "sameLen", [self.expr(m.group(k), no) for k in (1, 2)])
            return None
        m = re.fullmatch(r"(store64|wipe)\((.*)\)", s)
        if m:
            e = self.expr(s, no)
            if e[1] == "wipe":
                arr = e[2][0][2] if len(e[2]) == 1 and e[2][0][0] == "ref" and e[2][0][1] else None
                if arr is None or arr[0] != "arr" or not arr[3]:
                    raise Unsupported(f"line {no}: wipe of something but a mutable local array")
                self.emit(no, text, "zero", arr)
            else:
                self.emit(no, text, "store", e[2])
            return None
        m = re.fullmatch(r"(.+?)\s*(\^=|\|=|&=|=)\s*(.+)", s)
        if m:
            lhs = self.expr(m.group(1), no)
            if lhs[0] == "var":
                ty = next(sc[n][0] for sc in reversed(self.scopes) for n in sc if sc[n][1] == lhs[1])
                if not ty[1]:
                    raise Unsupported(f"line {no}: assigns {lhs[1]}, which is not mut")
            elif not (lhs[0] == "index" and lhs[1][0] == "arr" and lhs[1][3]):
                raise Unsupported(f"line {no}: assigns to something but a u64 or a mutable array's element")
            self.emit(no, text, "assign", lhs, m.group(2), self.expr(m.group(3), no))
            return None
        raise Unsupported(f"line {no}: cannot read {s!r}")

    def let(self, mut: bool, name: str, ty: str | None, rhs: str | None, no: int, text: str) -> None:
        if rhs is None:                     # let mut x: u64; (set before it is read)
            if (ty or "").strip() != "u64":
                raise Unsupported(f"line {no}: a declaration of type {ty}")
            self.emit(no, text, "let", self.bind(name, ("u64", mut))[1], None)
            return
        m = re.fullmatch(r"\[\s*0(?:_?u64)\s*;\s*(\w+)\s*\]", rhs)
        if m:                               # let mut ks = [0u64; N];
            arr = ("arr", f"rsp0.{name}@{no}", self.prog.size(m.group(1), no), mut)
            self.bind(name, arr)
            self.emit(no, text, "zero", arr)
            return
        m = re.fullmatch(r"&\s*self\.(\w+)", rhs)
        if m:                               # let kr = &self.kr;
            self.bind(name, self.expr(f"self.{m.group(1)}", no))
            return
        m = re.fullmatch(r"(\w+)\.(chunks_exact_mut|chunks_exact)\((\d+)\)", rhs)
        if m:                               # let mut groups = blocks.chunks_exact_mut(B);
            src = self.expr(m.group(1), no)
            want_mut = m.group(2).endswith("mut")
            if src[0] != "slice" or (want_mut and not src[3]) or int(m.group(3)) < 1:
                raise Unsupported(f"line {no}: {m.group(2)} of something but a slice")
            _, reg = self.bind(name, ("chunks", src[2], want_mut, int(m.group(3))))
            self.emit(no, text, "iter", reg, src, want_mut)
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
        if ty is not None and ty.strip() != "u64":
            raise Unsupported(f"line {no}: a let of type {ty}")
        e = self.expr(rhs, no)              # before the binding: `let x = x ...` reads the outer x
        self.emit(no, text, "let", self.bind(name, ("u64", mut))[1], e)

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
                if words[0] != "arr":
                    raise Unsupported(f"line {i}: the field {m.group(1)} is not made from an array")
            inits[m.group(1)] = words
        if set(inits) != set(self.prog.fields):
            raise Unsupported(f"line {no}: Self {{ .. }} does not set every field")
        self.emit(no, "Self { .. }", "construct", inits)
        return i + 1

    # ---- loops
    def for_loop(self, pat: str, it: str, no: int, text: str, i: int) -> int:
        m = re.fullmatch(r"0\.\.(\w+)", it)
        if m and re.fullmatch(r"\w+", pat):
            return self.range_loop(pat, _num(m.group(1), no), no, text, i)
        m = re.fullmatch(r"\(\s*(\w+)\s*,\s*(\w+)\s*\)", pat)
        z = re.fullmatch(r"(.+)\.zip\((.+)\)", it)
        if not m or not z:
            raise Unsupported(f"line {no}: cannot read the loop {text!r}")
        sides = [self.side(z.group(k), no, text) for k in (1, 2)]
        if sides[0][1] != sides[1][1]:
            raise Unsupported(f"line {no}: a zip of iterators of {sides[0][1]} and {sides[1][1]} elements per step")
        head = len(self.fn.stmts)
        test = self.emit(no, text, "zipTest", [side[0] for side in sides], sides[0][1])
        self.scopes.append({})
        for name, (reg, count, item, _) in zip((m.group(1), m.group(2)), sides):
            _, r = self.bind(name, item)
            self.emit(no, text, "next", r, reg, count)
        i = self.block(i)
        sc = self.scopes.pop()
        self.emit(i, "}", "drop", [reg for _, reg in sc.values()])
        for reg, count, item, _ in sides:
            self.emit(i, "}", "advance", reg, count * item[1], count)
        self.emit(i, "}", "jmp", head)
        test.c = len(self.fn.stmts)
        self.spent.update(reg for reg, _, _, chunks in sides if chunks)
        return i

    def side(self, s: str, no: int, text: str) -> tuple:
        """One iterator of a zip: (its registers' name, elements per step, the item's type, whether
        it is a chunk iterator).
        ``&mut groups`` (a chunk iterator: its own registers, so its remainder can follow), or a
        slice (``blocks``, ``blocks.iter_mut()``, ``groups.into_remainder()``) iterated here."""
        s = s.strip()
        m = re.fullmatch(r"\(?&mut\s+(\w+)\)?", s)
        if m:
            ty, reg = self.lookup(m.group(1), no)
            if ty[0] != "chunks":
                raise Unsupported(f"line {no}: {m.group(1)} is not a chunk iterator")
            return reg, ty[3], ("slice", ty[1], ty[2]), True
        m = re.fullmatch(r"(.+?)(?:\.(iter_mut|iter)\(\))?", s)
        base, how = m.group(1), m.group(2)
        r = re.fullmatch(r"(\w+)\.(into_remainder|remainder)\(\)", base)
        if r:
            ty, src = self.lookup(r.group(1), no)
            if ty[0] != "chunks" or src not in self.spent or (r.group(2) == "into_remainder") != ty[2]:
                raise Unsupported(f"line {no}: {base} of something but a chunk iterator that ran out")
            elem, mut = ty[1], ty[2]
        else:
            e = self.expr(base, no)
            if e[0] != "slice":
                raise Unsupported(f"line {no}: a loop over {base}, which is not a slice")
            src, elem, mut = e[1], e[2], e[3]
        if how == "iter_mut" and not mut:
            raise Unsupported(f"line {no}: iter_mut of an immutable slice")
        mut = mut and how != "iter"
        reg = f"it{len(self.fn.stmts)}"
        self.emit(no, text, "iter", reg, ("slice", src, elem, mut), mut)
        return reg, 1, ("bytes", elem, mut), False

    def range_loop(self, name: str, count: int, no: int, text: str, i: int) -> int:
        ctr = f"#c{no}"
        self.emit(no, text, "let", ctr, ("num", 0))
        head = len(self.fn.stmts)
        test = self.emit(no, text, "rangeTest", ctr, count)
        self.scopes.append({})
        if name != "_":
            self.emit(no, text, "let", self.bind(name, ("u64", False))[1], ("var", ctr))
        i = self.block(i)
        sc = self.scopes.pop()
        self.emit(i, "}", "drop", [reg for _, reg in sc.values()])
        self.emit(i, "}", "let", ctr, ("bin", "+", ("var", ctr), ("num", 1)))
        self.emit(i, "}", "jmp", head)
        test.c = len(self.fn.stmts)
        self.emit(i, "}", "drop", [ctr])
        return i


# ---------------------------------------------------------------------------- the machine

_REF_PARTS = ("#in", "#out", "#len")


class RustMachine(CFamilyMachine):
    """One path through one job (new, then a method) of a Rust crate.  ``args``: key, tweak, in,
    out pointers (and n, the blocks methods)."""

    def __init__(self, prog: Program, fn: Function, args: list):
        super().__init__(prog, fn)
        self.args = args

    def enter(self, args) -> int:
        return 0

    # ---- values
    def ev(self, e) -> Term:
        k = e[0]
        if k == "num":
            return const(e[1])
        if k == "var":
            t = self.state.regs.get(e[1])
            if t is None:
                raise ProveError(f"line {self.line.no}: {e[1]} is read before it is set")
            return t
        if k == "bin":
            return self._bin(e[1], self.ev(e[2]), self.ev(e[3]))
        if k == "not":
            return xor(self.ev(e[1]), const(MASK))
        if k == "cast":
            return self.ev(e[1])
        if k == "index":
            return self.load(self._element(e), 8)
        if k == "method":
            return self._method(e[1], e[2], e[3])
        if k == "call" and e[1] == "load64" and len(e[2]) == 2:
            return self._word(self.ref(e[2][0]), self._const(e[2][1]))
        raise Unsupported(f"line {self.line.no}: cannot read this as a u64")

    def _const(self, e) -> int:
        v = value(self.ev(e))
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
        x = self.ev(recv)
        if name == "wrapping_add":
            return add(x, self.ev(args[0]))
        if name == "wrapping_sub":
            return sub(x, self.ev(args[0]))
        if name in ("rotate_left", "rotate_right"):
            n = self._const(args[0]) % 64
            return rotl(x, n if name == "rotate_left" else (64 - n) % 64)
        raise Unsupported(f"line {self.line.no}: the method {name}")

    def _element(self, e) -> Term:
        """The address of ``array[i]`` (bounds checked)."""
        arr, i = e[1], self._const(e[2])
        if arr[0] != "arr":
            raise Unsupported(f"line {self.line.no}: an index into something but a u64 array")
        if i >= arr[2]:
            raise ProveError(f"line {self.line.no}: index {i} of an array of {arr[2]} words (panics)")
        return add(var(arr[1]), const(8 * i))

    # ---- references: (in address, out address or None, bytes)
    def ref(self, e) -> tuple:
        regs = self.state.regs
        if e[0] == "bytes":
            return regs[e[1] + "#in"], regs[e[1] + "#out"] if e[3] else None, e[2]
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
            return add(regs[s[1] + "#in"], off), add(regs[s[1] + "#out"], off) if e[1] else None, s[2]
        raise Unsupported(f"line {self.line.no}: a reference the prover does not read")

    def _word(self, ref: tuple, i: int) -> Term:
        """Word i of a byte array: in place, what was stored at the out address, else the input."""
        inn, out, n = ref
        if 8 * i + 8 > n:
            raise ProveError(f"line {self.line.no}: word {i} of {n} bytes (panics)")
        if out is not None and base_of(add(out, const(8 * i))) in self.state.mem:
            return self.load(add(out, const(8 * i)), 8)
        return self.load(add(inn, const(8 * i)), 8)

    def _zip_test(self, iters: list, count: int) -> Term:
        lens = [self.state.regs[r + "#len"] for r in iters]
        if any(t is not lens[0] for t in lens):
            raise Unsupported(f"line {self.line.no}: a zip of iterators of different lengths")
        return lens[0] if count == 1 else ge(lens[0], count)

    # ---- statements
    def step(self, pc: int):
        st = self.fn.stmts[pc]
        self.line = st
        k, regs = st.kind, self.state.regs
        if k == "let":
            if st.b is None:
                regs.pop(st.a, None)
            else:
                t = self.ev(st.b)
                self.note(t)
                regs[st.a] = t
        elif k == "assign":
            self._assign(st.a, st.b, self.ev(st.c))
        elif k == "store":
            ref, i, v = self.ref(st.a[0]), self._const(st.a[1]), self.ev(st.a[2])
            if ref[1] is None:
                raise Unsupported(f"line {st.no}: store64 into an immutable array")
            if 8 * i + 8 > ref[2]:
                raise ProveError(f"line {st.no}: word {i} of {ref[2]} bytes (panics)")
            self.store(add(ref[1], const(8 * i)), 8, v)
        elif k == "zero":
            for i in range(st.a[2]):
                self.store(add(var(st.a[1]), const(8 * i)), 8, const(0))
        elif k in ("rangeTest", "zipTest"):
            self.state.zf = self._test(st)
            return ("branch", True, st.c, pc + 1)
        elif k == "jmp":
            return st.a
        elif k == "ret":
            return ("ret", self.ret0)
        else:
            self._move(st)
        return pc + 1

    def _test(self, st: Stmt) -> Term:
        if st.kind == "rangeTest":
            return lt(self.state.regs[st.a], const(st.b))
        return self._zip_test(st.a, st.b)

    def concrete_head(self, pc: int) -> bool:
        st = self.fn.stmts[pc]
        self.line = st
        return st.kind == "rangeTest" and value(self._test(st)) is not None

    def _assign(self, lhs, op: str, t: Term) -> None:
        if lhs[0] == "index":
            addr = self._element(lhs)
            old = self.load(addr, 8) if op != "=" else None
            self.store(addr, 8, self._combine(op, old, t))
            return
        old = self.state.regs.get(lhs[1])
        if old is None:
            if op != "=":
                raise ProveError(f"line {self.line.no}: {lhs[1]} is read before it is set")
        t = self._combine(op, old, t)
        self.note(t)
        self.state.regs[lhs[1]] = t

    def _combine(self, op: str, old: Term, t: Term) -> Term:
        return t if op == "=" else self._bin(op[0], old, t)

    def _move(self, st: Stmt) -> None:
        """The statements on references, iterators and the struct."""
        k, regs = st.kind, self.state.regs
        if k == "params":
            self._params(st)
        elif k == "construct":
            self._construct(st.a)
        elif k == "iter":           # an iterator over a slice: its pointers and length
            src = st.b[1]
            regs[st.a + "#in"], regs[st.a + "#len"] = regs[src + "#in"], regs[src + "#len"]
            if st.c:
                regs[st.a + "#out"] = regs[src + "#out"]
        elif k == "next":           # a zip's item: the iterator's element (1) or chunk (B elements)
            for part in ("#in", "#out"):
                if st.b + part in regs:
                    regs[st.a + part] = regs[st.b + part]
            if st.c > 1:
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
            for part in _REF_PARTS:
                if st.b[1] + part in regs:
                    regs[st.a + part] = regs[st.b[1] + part]
        elif k == "drop":
            for reg in st.a:
                for name in (reg,) + tuple(reg + p for p in _REF_PARTS):
                    regs.pop(name, None)
        elif k == "sameLen":
            a, b = (regs[x[1] + "#len"] for x in st.a)
            if a is not b:
                raise Unsupported(f"line {st.no}: assert_eq! of lengths the prover cannot tell equal")
        else:
            raise Unsupported(f"line {st.no}: cannot run {st.text!r}")

    def _params(self, st: Stmt) -> None:
        """new's key, or (new's locals gone out of scope) the method's block(s) and tweak(s)."""
        regs, a = self.state.regs, self.args
        if st.a == "new":
            regs[st.b[0] + "#in"] = a[0]
            return
        regs.clear()
        blk, tw = st.b
        regs[blk + "#in"], regs[blk + "#out"], regs[tw + "#in"] = a[2], a[3], a[1]
        if len(a) > 4:
            regs[blk + "#len"] = regs[tw + "#len"] = a[4]

    def _construct(self, inits: dict) -> None:
        for field, src in inits.items():
            size = self.prog.fields[field]
            if isinstance(src, list):
                words = [self.ev(x) for x in src]
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
    """(name, (direction, blocks), make) per method of the Threefish type, and the report's
    note (what is not read: the SIMD paths of a crate rendered with --isa)."""
    try:
        prog = Program(text)
    except (TypeError, IndexError, AttributeError, ValueError) as e:
        raise Unsupported(f"the crate's structure ({type(e).__name__}: {e})") from None
    if prog.consts.get("BLOCK_BYTES") != block_bytes or prog.consts.get("TWEAK_BYTES") != 16:
        raise Unsupported(f"BLOCK_BYTES is {prog.consts.get('BLOCK_BYTES')} and TWEAK_BYTES "
                          f"{prog.consts.get('TWEAK_BYTES')}, not {block_bytes} and 16")
    out, simd = [], False
    for name, kind in METHODS.items():
        if name not in prog.methods:
            raise Unsupported(f"no method {name} in impl {prog.ty}")
        fn = prog.job(name)
        simd |= fn.simd
        label = f"{prog.ty}::{name}" + (" [without feature simd]" if fn.simd else "")

        def make(args, fn=fn):
            m = RustMachine(prog, fn, args)
            return m, 0, heads(fn), lambda pc: f"line {fn.stmts[pc].no}"
        out.append((label, kind, make))
    return out, SIMD_NOTE if simd else ""
