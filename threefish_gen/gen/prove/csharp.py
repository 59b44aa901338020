"""Symbolic execution of the C# printer's output (gen/printers/csharp.py, templates/csharp/), read
as text.

The straight-line text is a small language, compiled by the SIMD C reader's statement compiler
(gen/prove/c_simd.py: blocks, ``for``/``if`` with or without braces, calls of the class's own
methods inlined with their locals renamed) and run by its machine, vectors as tuples of lane
terms; this module adds what C# says differently:

* expressions: ``ulong``/``int`` arithmetic (``/`` and ``%`` by a power of two on counts),
  ``a ? b : c`` and ``&&``/``||`` on conditions the path decides, ``ref`` expressions (byte
  addresses: ``ref Unsafe.Add(ref p, k)``, ``ref MemoryMarshal.GetReference(span)``), member
  calls (``s0.AsByte().StoreUnsafe(ref dst, 64)``), class constants and ``bool`` properties
  (``Lanes512 => BitConverter.IsLittleEndian && Avx512F.IsSupported``);
* calls: every call of the runtime the printer spells is read through gen/isa/dotnet.py: a
  call on a ``Vector128/256/512`` class, on a vector value or on the class of a ulong row
  (``BitOperations``, ``BinaryPrimitives``, ``Unsafe.ReadUnaligned/WriteUnaligned``) is an
  ``API`` row (vectors built, read and written through a byte ref, halves, views; rotations,
  the byte swap, a word's read and write: which row by the method's name and its arguments'
  shapes), an Avx512F/Avx2/Sse2 method an ``INTRINSICS`` row, given the meaning of the x86
  instruction it compiles to (gen/isa/x86.py ``SEMANTICS``); the operators ``+ - ^ |`` act per
  lane.  This module reads the C# around the calls (refs, spans, locals) and the byte order of
  their memory lanes, and spells no call of the tables (tests/test_isa_dispatch.py);
* local arrays: ``Span<ulong> ks = stackalloc ulong[76]`` (``Span<Vector512<ulong>>`` too;
  an index out of its length is a difference), a ``Span<ulong>`` parameter's elements in the
  caller's memory (Skein's state ``s``); ``CryptographicOperations.ZeroMemory`` of a stackalloc
  of the method clears it (any other memory: a difference);
* a declaration without a value makes the name unset (reading it is a difference); ``var x =
  e`` declares x with e's value (the lanes kernels' block temporaries).

Paths: the machine's byte order and every ``X.IsSupported`` the program reads are the path's
choice.  A public method is proved once per byte order (little-endian: ``ReadUnaligned`` reads
the word; big-endian: it reads the word's bytes reversed, ``WriteUnaligned`` writes them
reversed) and per value of each CPU flag it reads (``Lanes512``/``Lanes256``/``Packed``: each
kernel path; ``Avx512F.VL.IsSupported ? RotateLeftVariable : Or(shifts)``: both forms);
assignments that agree on every flag a proved path read are that path and are not run again.
The JIT's choice itself (which path a machine takes) is not proved.

The argument checks and the stack wipe (CheckOne, CheckBlocks, Burn: any method of the class
whose body only tests (``if (..) throw`` on lengths and ``Overlaps``, nothing assigned or called
otherwise), declares ``int`` locals, returns one, and clears its own stackalloc) are calls with
no effect on the proved words; the reader checks that form, so they store nothing through any
reference.  Any other method a public method calls is code: inlined and run.  A method that returns
``input.Length / BlockBytes`` (CheckBlocks) gives the block count n of a ``*Blocks`` method (its
argument must be the method's input span, BlockBytes the block size).  A throw ends a path with
no result: the caller gets an exception, and no output word is claimed.  ``int`` values are
counts, never negative (n = input.Length / BlockBytes): comparisons are read unsigned.
"""
from __future__ import annotations

import itertools
import re

from ..isa import dotnet
from .c_simd import (Function, LaneTerms, _tokens as c_tokens, Program as SimdProgram, SimdMachine, Stmt, _Parser as CParser,
                     _split_args, heads)
from .engine import ProveError, Unsupported, literal
from .terms import MASK, Term, add, and_, bswap, const, lt, mul, or_, shr, sub, value, var, xor

LITTLE = "BitConverter.IsLittleEndian"

# the public methods the prover reads: (direction, blocks)
PUBLIC = {"Encrypt": ("encrypt", False), "Decrypt": ("decrypt", False),
          "EncryptBlocks": ("encrypt", True), "DecryptBlocks": ("decrypt", True)}

_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*<\w+(?:<\w+>)?>(?=\s*\()|"
                    r"[A-Za-z_]\w*|<<|>>|>=|<=|==|!=|\+\+|--|&&|\|\||[-+*/%^|&()\[\],<>=!~?:.])")
_COMPARE = ("<", ">", "<=", ">=", "==", "!=")
_CASTS = {"ulong", "long", "int", "uint"}
_ELEM = {"byte": 1, **dotnet.ELEMENT_BYTES}



# ---------------------------------------------------------------------------- expressions

class _Parser(CParser):
    """C# expressions as the SIMD C reader's nodes, plus ("ternary", c, a, b), ("not", e),
    ("ref", e), ("cast", type, e), ("member", e, name), ("method", e, name, args)."""
    BINARY = {"*": 9, "/": 9, "%": 9, "+": 8, "-": 8, "<<": 7, ">>": 7, "<": 6, ">": 6, "<=": 6, ">=": 6,
              "==": 5, "!=": 5, "&": 4, "^": 3, "|": 2, "&&": 1, "||": 0}

    def whole(self):
        e = self.ternary()
        if self.i != len(self.t):
            raise Unsupported(f"line {self.no}: cannot read {' '.join(self.t[self.i:])!r}")
        return e

    def ternary(self):
        c = self.binary(-1)
        if self.peek() != "?":
            return c
        self.take("?")
        a = self.ternary()
        self.take(":")
        return ("ternary", c, a, self.ternary())

    def args(self):
        self.take("(")
        out = []
        while self.peek() != ")":
            out.append(self.ternary())
            if self.peek() != ",":
                break
            self.take(",")
        self.take(")")
        return tuple(out)

    def unary(self):
        tok = self.take()
        if tok == "(":
            if self.peek() in _CASTS and self.peek(1) == ")":
                typ = self.take()
                self.take(")")
                return ("cast", typ, self.unary())
            e = self.ternary()
            self.take(")")
            return self.postfix(e)
        if tok in ("-", "~"):
            return ("neg" if tok == "-" else "not", self.unary())
        if tok == "ref":
            return ("ref", self.unary())
        if tok[0].isdigit():
            return ("num", literal(tok.rstrip("uUlL"), f"line {self.no}"))
        if not (tok[0].isalpha() or tok[0] == "_"):
            raise Unsupported(f"line {self.no}: cannot read {tok!r}")
        if self.peek() == "(":
            return self.postfix(("call", tok, self.args()))
        if self.peek() == "[":
            self.take("[")
            idx = self.ternary()
            self.take("]")
            return self.postfix(("index", tok, idx))
        return self.postfix(("name", tok))

    def postfix(self, e):
        while self.peek() == ".":
            self.take(".")
            name = self.take()
            e = ("method", e, name, self.args()) if self.peek() == "(" else ("member", e, name)
        return e


def _tokens(s: str) -> list[str]:
    return c_tokens(s, _TOKEN)


def _parse(s: str, no: int):
    return _Parser(_tokens(s), no).whole()


def _path(e) -> str | None:
    """``A.B.C`` of a chain of names and members (a static class, a flag), else None."""
    if e[0] == "name":
        return e[1]
    if e[0] == "member":
        p = _path(e[1])
        return p and f"{p}.{e[2]}"
    return None


# ---------------------------------------------------------------------------- text -> lines

def _clean(text: str) -> list[str]:
    """The lines with comments removed and string literals emptied (their braces and slashes
    are not the program's)."""
    out = []
    for line in text.splitlines():
        res, i, n = [], 0, len(line)
        while i < n:
            ch = line[i]
            if line.startswith("//", i):
                break
            if ch == '"' or (ch in "$@" and line.startswith('"', i + 1)):
                j = line.index('"', i) + 1
                while j < n and line[j] != '"':
                    j += 2 if line[j] == "\\" else 1
                res.append('""')
                i = j + 1
                continue
            if ch == "'":
                j = i + 1
                while j < n and line[j] != "'":
                    j += 2 if line[j] == "\\" else 1
                res.append("' '")
                i = j + 1
                continue
            res.append(ch)
            i += 1
        out.append("".join(res).rstrip())
    return out


_CONT_END = (",", "(", "?", ":", "+", "&&", "||", "=", "=>")
_CONT_START = ("?", ":", ".", "&&", "||", "+ ", "- ")
_HEADER = re.compile(r"(if|for)\s*\(.*\)")


def _logical(text: str) -> list[str]:
    """One statement per line, at the line where it starts (the others blank): a statement
    over several lines is joined, a header (``if``/``for``) takes the ``{`` of the next line,
    and ``if (..)`` takes the ``throw`` it guards."""
    lines = _clean(text)
    out = [""] * len(lines)
    nxt = [i for i, s in enumerate(lines) if s.strip()]
    k = 0
    while k < len(nxt):
        i = nxt[k]
        cur = lines[i].strip()
        k += 1
        while k < len(nxt) and (cur.endswith(_CONT_END) or lines[nxt[k]].strip().startswith(_CONT_START)) \
                and not _HEADER.fullmatch(cur) and cur not in ("{", "}"):
            cur += " " + lines[nxt[k]].strip()
            k += 1
        if _HEADER.fullmatch(cur) and k < len(nxt):
            follow = lines[nxt[k]].strip()
            if follow == "{":
                cur += " {"
                k += 1
            elif cur.startswith("if") and follow.startswith("throw"):
                while not follow.endswith(";") and k + 1 < len(nxt):
                    k += 1
                    follow += " " + lines[nxt[k]].strip()
                cur += " " + follow
                k += 1
        out[i] = cur
    return out


# ---------------------------------------------------------------------------- the class

_MEMBER = re.compile(r"(?:(?:public|private|internal|protected|static|readonly|unsafe)\s+)*")
_METHOD = re.compile(_MEMBER.pattern + r"(void|int|ulong|bool)\s+(\w+)\s*\((.*)\)")
_CONST = re.compile(_MEMBER.pattern + r"const\s+(?:int|ulong|long|uint)\s+(.*);")
_PROP = re.compile(_MEMBER.pattern + r"bool\s+(\w+)\s*=>\s*(.*);")
_PARAM = re.compile(r"(ref\s+|in\s+|out\s+)?([\w<>]+)\s+(\w+)(\s*=.*)?")
_DECL = re.compile(r"(?:const\s+)?(ref\s+byte|ulong|uint|long|int|bool|var|Vector(?:128|256|512)<ulong>|"
                   r"(?:ReadOnly)?Span<[\w<>]+>)\s+(.*)")
_PURE_IF = re.compile(r"if\s*\((.*)\)\s*throw\s+new\s+\w+\(.*\);")
_ASSIGN = re.compile(r"(?<![=!<>+\-*/%&|^])=(?!=)|\+\+|--|\+=|-=|\^=|\|=|&=")


def _pure_test(cond: str) -> str | None:
    """The condition of an ``if (..) throw`` without its ``out int`` declarations, when it
    assigns nothing and calls nothing but ``Overlaps`` (span lengths and overlaps only); else None."""
    cond = re.sub(r"\bout\s+int\s+", "", cond)
    if _ASSIGN.search(cond) or any(name != "Overlaps" for name in re.findall(r"(\w+)\s*\(", cond)):
        return None
    return cond


class Program(SimdProgram):
    """The methods of one C# class, compiled to statements with jumps (kernel calls inlined)."""

    def __init__(self, text: str, select=None):
        """``select``: a predicate on method names choosing the methods to read (default: the
        public Encrypt/Decrypt/EncryptBlocks/DecryptBlocks); the methods they call are read
        with them."""
        self.functions: dict[str, Function] = {}
        self.consts: dict[str, int] = {}
        self.props: dict = {}
        self.methods: dict = {}         # name -> (return type, parameter text, body start index, line no)
        self.cls = None
        self.lines = _logical(text)
        self.flags = sorted(set(re.findall(r"\b((?:\w+\.)*\w+)\.IsSupported\b", "\n".join(self.lines))))
        self._scan()
        wanted = select or (lambda name: name in PUBLIC)
        self.selected = [n for n in self.methods if wanted(n)]
        for name in self.selected:
            self._compiled(name)

    def _scan(self) -> None:
        """Class constants, bool properties and method bodies of the (first) static class."""
        lines, depth = self.lines, 0
        for i, s in enumerate(lines):
            if not s:
                continue
            if depth == 0 and self.cls is None:
                m = re.search(r"\bclass\s+(\w+)", s)
                if m:
                    self.cls = m.group(1)
            if depth == 1 and not s.startswith("["):
                m = _CONST.fullmatch(s)
                if m:
                    for part in _split_args(m.group(1)):
                        name, expr = part.split("=", 1)
                        self.consts[name.strip()] = expr.strip()
                m = _PROP.fullmatch(s)
                if m:
                    self.props[m.group(1)] = _parse(m.group(2), i + 1)
                m = _METHOD.fullmatch(s)
                j = next((j for j in range(i + 1, len(lines)) if lines[j]), None)
                if m and j is not None and lines[j] == "{":
                    self.methods[m.group(2)] = (m.group(1), m.group(3), j + 1, i + 1)
            depth += s.count("{") - s.count("}")
        if self.cls is None:
            raise Unsupported("no class in the file")
        for name in list(self.consts):        # class constants: integer expressions of literals and constants
            self.consts[name] = self._const(name, set())

    def params(self, name: str) -> list:
        """(modifier, type, name) of each parameter of a method."""
        ret, text, start, no = self.methods[name]
        out = []
        for p in filter(None, (x.strip() for x in _split_args(text))):
            pm = _PARAM.fullmatch(p)
            if not pm:
                raise Unsupported(f"line {no}: cannot read the parameter {p!r}")
            out.append(((pm.group(1) or "").strip(), pm.group(2), pm.group(3)))
        return out

    def _const(self, name: str, seen: set) -> int:
        v = self.consts[name]
        if isinstance(v, int):
            return v
        if name in seen:
            raise Unsupported(f"the constant {name} is defined by itself")
        seen.add(name)
        toks = [str(self._const(t, seen)) if t in self.consts else t for t in _tokens(v)]
        self.consts[name] = _fold(_parse(" ".join(toks), 0), name)
        return self.consts[name]

    # ---------------------------------------------------------------- methods

    def _compiled(self, name: str) -> Function:
        fn = self.functions.get(name)
        if fn is not None:
            return fn
        ret, _, start, no = self.methods[name]
        params = self.params(name)
        fn = Function(name, [p[2] for p in params])
        fn.refs = {p[2] for p in params if p[0] == "ref"}
        fn.spans = {}
        fn.lengths = {}
        fn.widths = {}
        for mod, typ, pname in params:
            if mod == "ref" and typ != "byte":
                raise Unsupported(f"line {no}: {name} takes a ref {typ} (the reader knows byte refs)")
            sm = re.fullmatch(r"(?:ReadOnly)?Span<(\w+)>", typ)
            if sm:
                fn.spans[pname] = _ELEM.get(sm.group(1), 0)
        fn.locals = set(fn.params)
        saved = getattr(self, "_scopes", None)
        self._body(fn, self.lines, start)
        self._scopes = saved
        self.functions[name] = fn
        return fn

    def pure(self, name: str) -> tuple | None:
        """A check or wipe: ("pure", count) when the method's body only tests and throws,
        declares int locals, returns one and clears its own stackalloc; count: (parameter
        index, divisor) when it returns ``param.Length / CONST``, else None.  None: not pure."""
        cache = self.__dict__.setdefault("_pure", {})
        if name in cache:
            return cache[name]
        ret, _, start, no = self.methods[name]
        params = self.params(name)
        ints, allocs, count, depth, i = {}, set(), None, 1, start
        ok = True
        while depth and i < len(self.lines):
            s = self.lines[i]
            i += 1
            if not s:
                continue
            if s in ("{", "}"):
                depth += 1 if s == "{" else -1
                continue
            m = _PURE_IF.fullmatch(s)
            if m and _pure_test(m.group(1)) is not None:
                continue
            m = re.fullmatch(r"int\s+(\w+)\s*=\s*([^;]*);", s)
            if m and not _ASSIGN.search(m.group(2)) and "(" not in m.group(2):
                ints[m.group(1)] = m.group(2).strip()
                continue
            m = re.fullmatch(r"Span<byte>\s+(\w+)\s*=\s*stackalloc\s+byte\[\w+\];", s)
            if m:
                allocs.add(m.group(1))
                continue
            m = re.fullmatch(r"CryptographicOperations\.ZeroMemory\((\w+)\);", s)
            if m and m.group(1) in allocs:
                continue
            m = re.fullmatch(r"return\s*(\w*)\s*;", s)
            if m and (not m.group(1) or m.group(1) in ints):
                d = re.fullmatch(r"(\w+)\.Length\s*/\s*(\w+)", ints.get(m.group(1), ""))
                names = [p[2] for p in params]
                if d and d.group(1) in names and d.group(2) in self.consts:
                    count = (names.index(d.group(1)), self.consts[d.group(2)])
                continue
            ok = False
            break
        cache[name] = ("pure", count) if ok else None
        return cache[name]

    # ---------------------------------------------------------------- statements

    _parse = staticmethod(_parse)

    def _statement(self, fn: Function, s: str, no: int, text: str) -> None:
        if s == "return" or (s == "return 0" and self.methods[fn.name][0] == "int"):
            # return 0: the wiped classes' single-block kernels (their result clears rax for the
            # wipe); every caller calls them as a statement, so the value is never read
            fn.stmts.append(Stmt(no, text, "ret"))
            return
        m = _PURE_IF.fullmatch(s + ";")
        if m:       # an argument check: a throw ends the path with no result
            cond = _pure_test(m.group(1))
            if cond is None:
                raise Unsupported(f"line {no}: a check that assigns or calls")
            self._parse(cond, no)
            return
        m = _DECL.fullmatch(s)
        if m:
            self._declare(fn, m.group(1), m.group(2), no, text)
            return
        m = re.fullmatch(r"(\w+)\((.*)\)", s)
        if m and m.group(1) in self.methods:
            args = [a.strip() for a in _split_args(m.group(2))]
            if self.pure(m.group(1)):       # CheckOne, Burn: no effect on any word the proof reads
                if not all(re.fullmatch(r"\w*", a) for a in args):
                    raise Unsupported(f"line {no}: {m.group(1)} is called with expressions")
                return
            self._compiled(m.group(1))
            self._inline(fn, m.group(1), args, no, text)
            return
        fn.stmts.append(self._simple(fn, s, no, text))

    def _declare(self, fn: Function, typ: str, rest: str, no: int, text: str) -> None:
        typ = re.sub(r"\s+", " ", typ)
        m = re.fullmatch(r"(\w+)\s*=\s*stackalloc\s+([\w<>]+)\s*\[\s*(\w+)\s*\]", rest.strip())
        if m:
            name, elem = m.group(1), m.group(2)
            if typ != f"Span<{elem}>" or elem not in _ELEM:
                raise Unsupported(f"line {no}: a stackalloc of {elem} in a {typ}")
            n = m.group(3)
            fn.arrays[name] = _ELEM[elem]
            fn.lengths[name] = int(n, 0) if n[0].isdigit() else self.consts.get(n)
            fn.locals.add(name)
            return
        if typ.startswith(("Span", "ReadOnlySpan")):
            raise Unsupported(f"line {no}: a span that is not a stackalloc")
        for part in _split_args(rest):
            name, _, init = part.partition("=")
            name = name.strip()
            if not re.fullmatch(r"\w+", name):
                raise Unsupported(f"line {no}: cannot read the declaration {part.strip()!r}")
            fn.locals.add(name)
            if typ == "ref byte":
                fn.refs.add(name)
            if init.strip():
                fn.stmts.append(Stmt(no, text, "assign", ("name", name), "=", self._parse(init, no)))
            else:           # declared, no value yet: reading it before an assignment is a difference
                fn.stmts.append(Stmt(no, text, "expr", ("unset", ("name", name))))

    def _simple(self, fn, s: str, no: int, text: str) -> Stmt:
        m = _DECL.fullmatch(s)
        if m and fn is not None:        # for (int c = 0; ...)
            before = len(fn.stmts)
            self._declare(fn, m.group(1), m.group(2), no, text)
            if len(fn.stmts) != before + 1:
                raise Unsupported(f"line {no}: cannot read {s!r}")
            return fn.stmts.pop()
        m = re.fullmatch(r"(\w+)\s*(\+\+|--)", s)
        if m:
            return Stmt(no, text, "assign", ("name", m.group(1)), "=",
                        ("bin", "+" if m.group(2) == "++" else "-", ("name", m.group(1)), ("num", 1)))
        m = re.fullmatch(r"(\w+(?:\s*\[[^\]]*\])?)\s*(=|\+=|-=|\^=|\|=|&=)(?!=)\s*(.*)", s)
        if m:
            lhs, rhs = self._parse(m.group(1), no), self._parse(m.group(3), no)
            if m.group(2) != "=":       # x op= e  is  x = x op e
                rhs = ("bin", m.group(2)[0], lhs, rhs)
            return Stmt(no, text, "assign", lhs, "=", rhs)
        e = self._parse(s, no)
        if e[0] not in ("method", "call"):
            raise Unsupported(f"line {no}: cannot read {s!r}")
        return Stmt(no, text, "expr", e)

    @staticmethod
    def _renamer(callee: Function, pre: str):
        """Only the callee's own names (parameters, locals) are renamed: the others are the
        class's constants, properties and the static classes of the runtime."""
        own = callee.locals
        return lambda name: pre + name if name in own else name

    @staticmethod
    def _inherit(fn: Function, callee: Function, f) -> None:
        SimdProgram._inherit(fn, callee, f)
        fn.refs |= {f(r) for r in callee.refs}
        fn.spans.update({f(a): size for a, size in callee.spans.items()})
        fn.lengths.update({f(a): n for a, n in callee.lengths.items()})
        fn.locals |= {f(a) for a in callee.locals}


def _fold(e, name: str) -> int:
    """A constant expression's value."""
    k = e[0]
    if k == "num":
        return e[1]
    if k == "cast":
        return _fold(e[2], name)
    if k == "not":
        return ~_fold(e[1], name) & MASK
    if k == "neg":
        return -_fold(e[1], name) & MASK
    if k == "bin":
        a, b = _fold(e[2], name), _fold(e[3], name)
        ops = {"+": a + b, "-": a - b, "*": a * b, "|": a | b, "&": a & b, "^": a ^ b,
               "<<": a << (b & 63), ">>": a >> (b & 63)}
        if e[1] in ops:
            return ops[e[1]] & MASK
    raise Unsupported(f"the constant {name} is not an integer expression")


# ---------------------------------------------------------------------------- the machine

class CsMachine(SimdMachine):
    """One path through one method of a C# class: a byte order and CPU flags."""

    def __init__(self, prog: Program, fn: Function, flags: dict, reads: set, bs: int = 0, count: Term = None):
        super().__init__(prog, fn)
        self.flags = flags              # flag -> bool: this path's choice
        self.reads = reads              # the flags the path read (shared by its forks)
        self.little = flags[LITTLE]
        self.bs = bs                    # block bytes: what a count method must divide by
        self.count = count              # the block count n a count method returns

    # ---------------------------------------------------------------- values

    def ev(self, e):
        k = e[0]
        if k == "name":
            return self._name(e[1])
        if k == "bin" and e[1] in _COMPARE + ("&&", "||"):
            return self._cond(e)
        if k == "ternary":
            return self.ev(e[2] if self._decided(e[1], "?:") else e[3])
        if k == "not":
            x = self.ev(e[1])
            return tuple(xor(t, const(MASK)) for t in x) if isinstance(x, tuple) else xor(x, const(MASK))
        if k == "cast":
            x = self.ev(e[2])
            if isinstance(x, tuple):
                raise Unsupported(f"line {self.line.no}: a cast of a vector")
            return x
        if k == "ref":
            return self._ref(e[1])
        if k == "member":
            return self._member(e)
        if k == "method":
            return self._method(e)
        if k == "unset":
            self.state.regs.pop(e[1][1], None)
            self.state.vregs.pop(e[1][1], None)
            return None
        return super().ev(e)

    def _name(self, n: str):
        st = self.state
        if n in st.vregs:
            return st.vregs[n]
        if n in st.regs:
            if n in self.fn.refs:
                raise Unsupported(f"line {self.line.no}: {n} is a ref: the byte it names is not read")
            return st.regs[n]
        if n in self.fn.locals:
            raise ProveError(f"line {self.line.no}: {n} is read before it is set")
        if n in self.prog.consts:
            return const(self.prog.consts[n])
        if n in self.prog.props:
            return self.ev(self.prog.props[n])
        raise Unsupported(f"line {self.line.no}: {n} is not a local, constant or property")

    def _flag(self, name: str) -> Term:
        if name not in self.flags:
            raise Unsupported(f"line {self.line.no}: the flag {name} is not modelled")
        self.reads.add(name)
        return const(int(self.flags[name]))

    def _member(self, e):
        p = _path(e)
        if p == LITTLE:
            return self._flag(p)
        if p is not None and p.endswith(".IsSupported"):
            return self._flag(p[:-len(".IsSupported")])
        raise Unsupported(f"line {self.line.no}: the member {e[2]} is not modelled")

    def _decided(self, e, what: str) -> bool:
        c = value(self._cond(e))
        if c is None:
            raise Unsupported(f"line {self.line.no}: {what} on a value the path does not decide")
        return c != 0

    def _cond(self, e):
        """A condition as a term that is zero exactly when it is false."""
        if e[0] == "cond":
            e = e[1]
        if e[0] == "bin" and e[1] in ("&&", "||"):
            left = self._decided(e[2], e[1])
            if left == (e[1] == "||"):
                return const(int(left))
            return self._cond(e[3])
        if e[0] == "bin" and e[1] in _COMPARE:
            return self._compare(e[1], self._scalar(self.ev(e[2])), self._scalar(self.ev(e[3])))
        return self._scalar(self.ev(e))

    def _compare(self, op, a, b):
        """The SIMD C reader's comparisons, and a count against a count (``done < n``, ``b < n``)."""
        va, vb = value(a), value(b)
        if va == 0 and op in ("<", "!=") and vb is None:
            return b
        if op in ("<", ">") and (va is None or vb is None) and not (op == ">" and vb is not None):
            return lt(a, b) if op == "<" else lt(b, a)
        return super()._compare(op, a, b)

    def _scalar(self, x):
        if isinstance(x, tuple) or x is None:
            raise Unsupported(f"line {self.line.no}: a vector where a number is expected")
        return x

    def _bin(self, op, a, b):
        if isinstance(a, tuple) or isinstance(b, tuple):
            f = {"+": add, "-": sub, "^": xor, "|": or_}.get(op)
            if isinstance(a, tuple) and isinstance(b, tuple) and f and len(a) == len(b):
                return tuple(f(p, q) for p, q in zip(a, b))
            if isinstance(a, tuple) and op in ("<<", ">>") and value(b) is not None:
                k = value(b) & 63
                return tuple(mul(t, 1 << k) if op == "<<" else shr(t, k) for t in a)
            raise Unsupported(f"line {self.line.no}: the operator {op} on these vectors")
        vb = value(b)
        if op in ("/", "%"):
            if vb is None or vb & (vb - 1) or vb == 0:
                raise Unsupported(f"line {self.line.no}: {op} by {vb}, not a power of two")
            return shr(a, vb.bit_length() - 1) if op == "/" else and_(a, vb - 1)
        return super()._bin(op, a, b)

    # ---------------------------------------------------------------- memory

    def _mem(self, t: Term) -> Term:
        """A word as the program sees it in memory (big-endian: its bytes reversed)."""
        return t if self.little else bswap(t)

    def _ref(self, e) -> Term:
        """The byte address a ref expression names."""
        if e[0] == "name" and e[1] in self.fn.refs:
            if e[1] not in self.state.regs:
                raise ProveError(f"line {self.line.no}: {e[1]} is read before it is set")
            return self.state.regs[e[1]]
        if e[0] == "method":
            p = f"{_path(e[1])}.{e[2]}"
            args = e[3]
            if p == "Unsafe.Add" and len(args) == 2:
                return add(self._ref_arg(args[0]), self._scalar(self.ev(args[1])))
            if p == "MemoryMarshal.GetReference" and len(args) == 1 and args[0][0] == "name" \
                    and args[0][1] in self.fn.spans:
                return self.state.regs[args[0][1]]
        raise Unsupported(f"line {self.line.no}: a ref the reader does not know")

    def _ref_arg(self, a) -> Term:
        if a[0] != "ref":
            raise Unsupported(f"line {self.line.no}: a ref argument without ref")
        return self._ref(a[1])

    def _element(self, array: str, idx: Term):
        i = value(idx)
        if i is None:
            raise Unsupported(f"line {self.line.no}: {array}[..] with a non-constant index")
        fn = self.fn
        if array in fn.spans:           # a Span<ulong> parameter: the caller's memory
            if fn.spans[array] != 8:
                raise Unsupported(f"line {self.line.no}: {array} is not a span of ulong")
            return add(self.state.regs[array], const(8 * i)), 8
        if array not in fn.arrays:
            raise Unsupported(f"line {self.line.no}: {array} is not an array of the method")
        n = fn.lengths.get(array)
        if n is not None and not 0 <= i < n:
            raise ProveError(f"line {self.line.no}: {array}[{i}] is outside its {n} elements")
        size = fn.arrays[array]
        return add(var(f"rsp0.{array}"), const(size * i)), size

    def _zero(self, a) -> None:
        """CryptographicOperations.ZeroMemory of one of the method's stackallocs."""
        if a[0] == "method" and f"{_path(a[1])}.{a[2]}" == "MemoryMarshal.AsBytes" and len(a[3]) == 1:
            a = a[3][0]
        if a[0] != "name" or a[1] not in self.fn.arrays or self.fn.lengths.get(a[1]) is None:
            raise ProveError(f"line {self.line.no}: ZeroMemory of memory that is not a stackalloc of the method")
        base = var(f"rsp0.{a[1]}")
        for off in range(0, self.fn.arrays[a[1]] * self.fn.lengths[a[1]], 8):
            self.store(add(base, const(off)), 8, const(0))

    # ---------------------------------------------------------------- calls

    def _call(self, name: str, args):
        pure = self.prog.pure(name) if name in self.prog.methods else None
        if pure and pure[1]:            # n = CheckBlocks(key, tweaks, input, output)
            idx, div = pure[1]
            arg = args[idx] if idx < len(args) else None
            if self.count is None or arg is None or arg[0] != "name" or \
                    self.state.regs.get(arg[1]) is not var("ptr:in") or div != self.bs:
                raise Unsupported(f"line {self.line.no}: {name} is not the block count of the input")
            return self.count
        raise Unsupported(f"line {self.line.no}: a call of {name}")

    def _method(self, e):
        _, base, name, args = e
        if base[0] != "name" or base[1] not in self.fn.locals:
            p = _path(base)
            if p is not None:
                return self._static(p, name, args)
        x = self.ev(base)
        if not isinstance(x, tuple):
            raise Unsupported(f"line {self.line.no}: the method {name} is not modelled")
        return self._api(dotnet.VALUE, name, args, len(x), x)

    def _api(self, on: str, name: str, args, w: int, receiver=None):
        """A call of gen/isa/dotnet.py's ``API`` (on a vector class, a vector value ``receiver``
        or a static class; w lanes): the row found by the method's name and the shapes of its
        arguments (a ref, a scalar, a vector's lanes), its meaning read in the path's byte order."""
        vals = [self.ev(a) for a in args]
        shapes = tuple("ref" if a[0] == "ref" else len(v) if isinstance(v, tuple) else None
                       for a, v in zip(args, vals))
        row = dotnet.api_row(on, name, shapes, w)
        if row is None:
            raise Unsupported(f"line {self.line.no}: {name} with these arguments is not modelled")
        out = dotnet.api_args(row, vals, lambda ref, k: add(ref, self._scalar(k)), receiver)
        return row.row(_CsLanes(self, name), w, out)

    def _static(self, cls: str, name: str, args):
        full = f"{cls}.{name}"
        no = self.line.no
        if full == "CryptographicOperations.ZeroMemory" and len(args) == 1:
            self._zero(args[0])
            return None
        on = dotnet.api_on(cls)
        if on is not None:
            return self._api(on[0], name, args, on[1])
        a = [self.ev(x) for x in args]
        form = dotnet.intrinsic(cls, name, len(a[0])) if a and isinstance(a[0], tuple) else None
        if form is None and dotnet.intrinsic(cls, name, 2) is not None:
            raise Unsupported(f"line {no}: {full} with these arguments")
        if form is not None:        # an x86 intrinsic: gen/isa/x86.py's lane terms (via gen/isa/dotnet.py)
            op, order = form
            if len(a) != len(order):
                raise Unsupported(f"line {no}: {full} with these arguments")
            return self._x86(op, len(a[0]), [a[i] for i in order], full)
        raise Unsupported(f"line {no}: {full} is not modelled")


class _CsLanes(LaneTerms):
    """The lane reader of a vector call: memory lanes are ulongs in the path's byte order
    (big-endian: each word's bytes reversed, as ``ReadUnaligned`` reads it)."""

    def load(self, addr: Term, n: int) -> tuple:
        return tuple(self.mach._mem(t) for t in self.mach._vload(addr, n))

    def store(self, addr: Term, v: tuple) -> None:
        self.mach._vstore(addr, tuple(self.mach._mem(t) for t in v))


# ---------------------------------------------------------------------------- paths and jobs

def describe(flags: dict, reads: set) -> str:
    """The path's byte order and the CPU flags it read, e.g. 'little-endian, Avx512F, no Avx2'."""
    parts = ["little-endian" if flags[LITTLE] else "big-endian"]
    parts += [f if flags[f] else f"no {f}" for f in sorted(reads - {LITTLE})]
    return ", ".join(parts)


def paths(prog: Program):
    """(flags, reads) per path: little- then big-endian, each CPU flag of the file true then
    false; an assignment that agrees with an earlier path on every flag that path read (its
    ``reads``, filled while it is proved) is that path, and is skipped."""
    done = []
    for little in (True, False):
        for bits in itertools.product((True, False), repeat=len(prog.flags)):
            flags = {LITTLE: little, **dict(zip(prog.flags, bits))}
            if any(all(flags[f] == old[f] for f in reads) for old, reads in done):
                continue
            reads = {LITTLE}
            done.append((flags, reads))
            yield flags, reads


def jobs(text: str, bs: int):
    """(label, (direction, blocks), make) per public method and path; the label is a callable
    (its flags are known once the path ran).  The file is read here (exit 2 on what the reader
    does not know); the paths are made as the caller proves them."""
    try:
        prog = Program(text)
    except (TypeError, IndexError, AttributeError, AssertionError, ValueError, KeyError) as e:
        raise Unsupported(f"the program's structure ({type(e).__name__}: {e})") from None
    return _jobs(prog, bs)


def _jobs(prog: Program, bs: int):
    for name in prog.selected:
        fn = prog.functions[name]
        direction, blocks = PUBLIC[name]
        for flags, reads in paths(prog):
            def make(args, fn=fn, flags=flags, reads=reads, blocks=blocks):
                m = CsMachine(prog, fn, flags, reads, bs, args[4] if blocks else None)
                return m, m.enter(args[:4]), heads(fn), lambda pc: f"line {fn.stmts[pc].no}"

            def label(name=name, flags=flags, reads=reads):
                return f"{prog.cls}.{name} [{describe(flags, reads)}]"
            yield label, (direction, blocks), make
