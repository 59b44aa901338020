"""Symbolic execution of the SIMD C printer's output (target c-simd: x86 intrinsics SSE2 to
AVX-512, AArch64 NEON; layouts lanes, hybrid, packed; the ``--isa auto`` dispatcher), read as text.

A vector value is a tuple of 64-bit lane terms (lane 0 first); a 128-bit NEON/SSE value has two,
``__m256i`` four, ``__m512i`` eight.  Element shuffles on 8-, 16- or 32-bit elements
(``_mm_shuffle_epi32``, ``_mm_shuffle_epi8``, ``vqtbl1q_u8``, ``vrev64q_u32``, ``_mm_blend_epi16``)
go through exact byte views: each output word is rebuilt from (word, byte) sources and becomes
the word itself, a rotation by a multiple of 8 (``rotl``), a constant, or an opaque ``bytes``
term (which then cannot equal the description's term).  Every intrinsic the printers emit is
modelled by name; any other call is an error of reading (exit 2).  Loads and stores are the
unaligned forms (``loadu``/``storeu``, ``vld1q_u8`` through the NEON helpers); an aligned one on a
caller's pointer is a difference (the caller promises no alignment).

Control flow: ``if (cond) {..}``, ``if (cond) stmt``, ``for`` loops with or without braces (the
blocks loops over ``n`` are proved by the engine's induction, loops with a constant bound just
run), calls of the file's own functions (the scalar tail ``encrypt(key, tweaks, in, out)``, the
hybrid's scalar blocks) inlined with their locals renamed.  The dispatcher's
``switch (choice(n))`` (and single blocks' ``switch (single_choice())``) is not followed: the CPU test (cpuid/xgetbv) and the choice are not
proved; each path function a case (or the default) calls is proved as the public function, and
the reader checks that every call passes the function's own parameters in order.
"""
from __future__ import annotations

import re

from ..isa import neon, x86
from .cfamily import (BINARY as _BINARY, CFamilyMachine, Stmt as _Stmt, body_lines, heads, skip, strip_comments,
                      tokens)
from .engine import ProveError, TermLanes, Unsupported, base_of, kind, literal, split_top
from .terms import Term, add, const, ge, sub, value, var, xor

_TOKEN = re.compile(r"\s*(UINT64_C\(\s*(?:0[xX][0-9a-fA-F]+|\d+)\s*\)|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|"
                    r"[A-Za-z_]\w*|<<|>>|>=|<=|==|!=|\+\+|--|&&|\|\||[-+*^|&()\[\],<>=!~])")
_TYPES = {"const", "void", "unsigned", "signed", "long", "int", "char", "short", "size_t", "uint8_t",
          "uint32_t", "uint64_t", "int64_t", "uint64x1_t", "uint8x16_t", "int64x2_t",
          "uint32x4_t"} | set(x86.TYPES) | set(x86.CAST_TYPES) | set(neon.TYPES)
_VBYTES = {**x86.TYPES, **x86.CAST_TYPES, **neon.TYPES}


def _tokens(s: str, token=_TOKEN) -> list[str]:
    """The tokens of an expression (``token``: the reader's pattern, its token in group 1)."""
    return tokens(s, token)


# ---------------------------------------------------------------------------- expressions (AST)

class _Parser:
    BINARY = _BINARY

    def __init__(self, toks, no):
        self.t, self.i, self.no = toks, 0, no

    def peek(self, k=0):
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def take(self, tok=None):
        t = self.peek()
        if t is None or (tok is not None and t != tok):
            raise Unsupported(f"line {self.no}: expected {tok!r} in {' '.join(self.t)!r}")
        self.i += 1
        return t

    def whole(self):
        e = self.binary(-1)
        if self.i != len(self.t):
            raise Unsupported(f"line {self.no}: cannot read {' '.join(self.t[self.i:])!r}")
        return e

    def binary(self, floor):
        left = self.unary()
        while True:
            op = self.peek()
            prec = self.BINARY.get(op)
            if prec is None or prec <= floor:
                return left
            self.i += 1
            left = ("bin", op, left, self.binary(prec))

    def unary(self):
        tok = self.take()
        if tok == "(":
            if self.peek() in _TYPES:            # a cast: value unchanged (64-bit words, byte pointers)
                while self.peek() != ")":
                    self.take()
                self.take(")")
                return self.unary()
            e = self.binary(-1)
            self.take(")")
            return e
        if tok == "-":
            return ("neg", self.unary())
        if tok.startswith("UINT64_C"):
            return ("num", literal(tok[tok.index("(") + 1:-1].strip(), f"line {self.no}"))
        if tok[0].isdigit():
            return ("num", literal(tok.rstrip("uUlL"), f"line {self.no}"))
        if not (tok[0].isalpha() or tok[0] == "_"):
            raise Unsupported(f"line {self.no}: cannot read {tok!r}")
        if self.peek() == "(":
            self.take("(")
            args = []
            if self.peek() != ")":
                while True:
                    args.append(self.binary(-1))
                    if self.peek() == ",":
                        self.take(",")
                        continue
                    break
            self.take(")")
            return ("call", tok, tuple(args))
        if self.peek() == "[":
            self.take("[")
            idx = self.binary(-1)
            self.take("]")
            return ("index", tok, idx)
        return ("name", tok)


def _parse(s: str, no: int):
    return _Parser(_tokens(s), no).whole()


def _rename(e, f):
    """The expression with every name passed through f (the nodes are tuples (kind, ...): a
    child is a node, a tuple of nodes (call arguments) or a plain value)."""
    k = e[0]
    if k == "name":
        return ("name", f(e[1]))
    if k == "index":
        return ("index", f(e[1]), _rename(e[2], f))
    out = [k]
    for x in e[1:]:
        if isinstance(x, tuple):
            x = _rename(x, f) if x and isinstance(x[0], str) else tuple(_rename(a, f) for a in x)
        out.append(x)
    return tuple(out)


# ---------------------------------------------------------------------------- statements

class Stmt(_Stmt):
    """A statement whose expressions are parsed (tuples); it can move into a caller (inlining)."""
    __slots__ = ()

    def moved(self, base: int, f, end: int) -> "Stmt":
        k = self.kind
        if k == "ret":
            return Stmt(self.no, self.text, "jmp", end)
        if k == "jmp":
            return Stmt(self.no, self.text, "jmp", self.a + base)
        if k in ("test", "ifzero"):
            return Stmt(self.no, self.text, k, _rename(self.a, f), self.b + base)
        if k == "assign":
            return Stmt(self.no, self.text, k, _rename(self.a, f), self.b, _rename(self.c, f))
        if k == "expr":
            return Stmt(self.no, self.text, k, _rename(self.a, f))
        raise AssertionError(k)


class Function:
    def __init__(self, name: str, params: list[str]):
        self.name, self.params = name, params
        self.stmts: list[Stmt] = []
        self.arrays: dict = {}          # local array -> element bytes
        self.paths: list[str] | None = None     # a dispatcher: the path functions it calls
        self.inlined = 0


_FUNC = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:\w+_NOINLINE\s+)?(void|uint64_t|uint64x2_t|int)\s+(\w+)\s*"
                   r"\(([^)]*)\)\s*$")
_DECL = re.compile(r"^(?:const\s+)?(uint64_t|unsigned|int|size_t|" + "|".join([*x86.TYPES, *neon.TYPES])
                   + r")\s+(.*)$")


def _kind(name: str):
    for suffix in ("_encrypt_blocks", "_decrypt_blocks", "_encrypt", "_decrypt"):
        if name.endswith(suffix):
            return True
    return False


class Program:
    """The functions of one SIMD C file, compiled to statements with jumps (calls inlined)."""

    def __init__(self, text: str, select=None):
        """``select``: a predicate on names choosing the functions to read (default: the
        exported encrypt/decrypt functions and their *_work bodies)."""
        self.functions: dict[str, Function] = {}
        self.text = text
        wanted = select or (lambda name: _kind(name) or name.endswith("_work"))
        lines = strip_comments(text).splitlines()
        i = 0
        while i < len(lines):
            head = lines[i].strip()
            start = i
            if re.match(r"(void|static|int|uint64_t)\b", head) and "(" in head and not head.endswith(";") \
                    and not head.endswith("=") and "= " not in head:
                while not head.endswith(")") and i + 1 < len(lines) and not lines[i + 1].strip() == "{":
                    i += 1
                    head += " " + lines[i].strip()
                m = _FUNC.match(head)
                if m and i + 1 < len(lines) and lines[i + 1].strip() == "{":
                    name = m.group(2)
                    if wanted(name) and m.group(1) == "void":
                        params = [p.strip().split()[-1].lstrip("*").split("[")[0] for p in m.group(3).split(",")]
                        fn = Function(name, params)
                        i = self._body(fn, lines, i + 2)
                        self.functions[name] = self._wrapper(fn)
                        continue
                    i = skip(lines, i + 1)   # helpers (modelled by name), cpu tests
                    continue
            i = start + 1

    # ---------------------------------------------------------------- functions

    def _wrapper(self, fn: Function) -> Function:
        """A public function that calls its *_work function (then wipes the stack) is that function."""
        calls = [s for s in fn.stmts if s.kind == "callw"]
        if not calls or fn.paths is not None:
            return fn
        work = [s for s in calls if not s.a.endswith(("_burn", "_burn_top"))]
        if len(work) != 1 or len(fn.stmts) != len(calls) + 1 or fn.stmts[-1].kind != "ret":
            raise Unsupported(f"line {calls[0].no}: {fn.name} calls more than its work function")
        callee = self.functions.get(work[0].a)
        if callee is None:
            raise Unsupported(f"line {work[0].no}: {work[0].a} is not a function of the file")
        if work[0].b != fn.params or callee.params != fn.params:
            raise Unsupported(f"line {work[0].no}: {work[0].a} is called with other arguments than {fn.name}'s")
        out = Function(fn.name, fn.params)
        out.stmts, out.arrays, out.paths = callee.stmts, callee.arrays, callee.paths
        return out

    def _inline(self, fn: Function, callee_name: str, args: list[str], no: int, text: str) -> None:
        callee = self.functions.get(callee_name)
        if callee is None:
            raise Unsupported(f"line {no}: a call of {callee_name}, which is not a function of the file")
        if callee.paths is not None:
            raise Unsupported(f"line {no}: a call of the dispatcher {callee_name}")
        if len(args) != len(callee.params):
            raise Unsupported(f"line {no}: {callee_name} takes {len(callee.params)} arguments")
        fn.inlined += 1
        f = self._renamer(callee, f"{callee_name}#{fn.inlined}.")
        for p, a in zip(callee.params, args):
            fn.stmts.append(Stmt(no, text, "assign", ("name", f(p)), "=", self._parse(a, no)))
        base = len(fn.stmts)
        end = base + len(callee.stmts)
        for s in callee.stmts:
            fn.stmts.append(s.moved(base, f, end))
        self._inherit(fn, callee, f)

    @staticmethod
    def _renamer(callee: Function, pre: str):
        """How the callee's names read inlined: every name prefixed (C: no other names in a body)."""
        return lambda name: pre + name

    @staticmethod
    def _inherit(fn: Function, callee: Function, f) -> None:
        """The callee's local arrays become the caller's (renamed)."""
        for a, size in callee.arrays.items():
            fn.arrays[f(a)] = size

    def _parse(self, s: str, no: int):
        e = _parse(s, no)
        alias = getattr(self, "_alias", None)
        return _rename(e, lambda n: alias.get(n, n)) if alias else e

    def _declare(self, name: str, no: int) -> None:
        """A local declared in the innermost open scope (a shadowing declaration is refused)."""
        if any(name in sc for sc in self._scopes):
            raise Unsupported(f"line {no}: {name} is declared again in an inner scope (shadowing)")
        self._scopes[-1].add(name)

    def _fresh_is_empty(self, prefix: str) -> bool:
        """The file defines PREFIX_FRESH(p) as an asm statement that emits nothing (or as nothing)."""
        want = {f"#define {prefix}FRESH(p) {body}" for body in x86.FRESH_C}
        got = {ln.strip() for ln in self.text.splitlines() if ln.strip().startswith(f"#define {prefix}FRESH(")}
        return got == want

    def _body(self, fn: Function, lines: list[str], i: int) -> int:
        """Compile statements up to the function's closing brace; returns the next line index."""
        blocks = []         # per open brace: None, ("loop", head, steps, test) or ("if", test)
        self._scopes = [set(fn.params)]     # names declared per open brace (a shadowing declaration is refused)
        self._alias = {}                    # const uint64_t *p = array: p reads as the array (fresh ring pointers)
        pending = []        # braceless for/if waiting for their one statement
        for no, s in body_lines(lines, i):
            if s == "{":
                blocks.append(None)
                self._scopes.append(set())
                continue
            if s == "}":
                if not blocks:
                    fn.stmts.append(Stmt(no, "}", "ret"))
                    return no
                self._close(fn, blocks.pop(), no)
                self._scopes.pop()
                self._close_pending(fn, pending, no)
                continue
            if s.startswith("switch"):
                return self._switch(fn, lines, no - 1)
            m = re.fullmatch(r"for\s*\((.*);(.*);(.*)\)\s*(\{?)", s)
            if m:
                for part in filter(None, (p.strip() for p in m.group(1).split(","))):
                    fn.stmts.append(self._simple(fn, part, no, s))
                head = len(fn.stmts)
                test = Stmt(no, s, "test", self._cond(m.group(2), no), None)
                fn.stmts.append(test)
                steps = [self._simple(None, p.strip(), no, s) for p in m.group(3).split(",") if p.strip()]
                (blocks if m.group(4) else pending).append(("loop", head, steps, test))
                if m.group(4):
                    self._scopes.append(set())
                continue
            m = re.fullmatch(r"if\s*\((.*)\)\s*(\{?)", s)
            if m:
                cond = m.group(1)
                z = re.fullmatch(r"(.*)==\s*0\s*", cond)
                if z and not m.group(2):       # if (x == 0) stmt: the statement runs when x is zero
                    st = Stmt(no, s, "ifzero", self._parse(z.group(1), no), None)
                    fn.stmts.append(st)
                    pending.append(("ifzero", st))
                    continue
                test = Stmt(no, s, "test", self._cond(cond, no), None)
                fn.stmts.append(test)
                (blocks if m.group(2) else pending).append(("if", test))
                if m.group(2):
                    self._scopes.append(set())
                continue
            if not s.endswith(";"):
                raise Unsupported(f"line {no}: cannot read {s!r}")
            self._statement(fn, s[:-1].strip(), no, s)
            self._close_pending(fn, pending, no)
        raise Unsupported("a function body does not end")

    def _close_pending(self, fn, pending, no):
        while pending:
            self._close(fn, pending.pop(), no)

    @staticmethod
    def _close(fn: Function, blk, no: int) -> None:
        if blk is None:
            return
        if blk[0] == "loop":
            _, head, steps, test = blk
            fn.stmts.extend(steps)
            fn.stmts.append(Stmt(no, "}", "jmp", head))
            test.b = len(fn.stmts)
        elif blk[0] == "if":
            blk[1].b = len(fn.stmts)
        else:                               # ifzero: the one statement, then on
            blk[1].b = len(fn.stmts)

    def _cond(self, s: str, no: int):
        return ("cond", self._parse(s, no))

    def _switch(self, fn: Function, lines: list[str], i: int) -> int:
        """The dispatcher, exactly: ``switch (choice(n)) { case K: path(params); return; ...
        default: break; } path(params); }`` (single blocks: ``switch (single_choice())``, the same) --
        returns the index after the function.  The choice
        (cpuid, xgetbv, $THREEFISH_GEN_ISA, n) is not modelled: every path is proved instead."""
        body, no0 = [], i + 1
        depth = 0
        while i < len(lines):
            s = lines[i].strip()
            i += 1
            if not s or s.startswith("#"):
                continue
            depth += s.count("{") - s.count("}")
            body.append((i, s))
            if depth < 0:
                break
        paths = []
        if not re.fullmatch(r"switch \(\w+\((?:n)?\)\) \{", body[0][1]):
            raise Unsupported(f"line {no0}: a switch on more than a function of n (or of nothing)")
        j = 1
        while j < len(body) and body[j][1].startswith("case"):
            if not re.fullmatch(r"case \d+:", body[j][1]) or j + 2 >= len(body) or body[j + 2][1] != "return;":
                raise Unsupported(f"line {body[j][0]}: a case that is not one call and return")
            paths.append(self._path_call(fn, *body[j + 1]))
            j += 3
        tail = [t for _, t in body[j:j + 3]]
        if tail != ["default:", "break;", "}"] or len(body) != j + 5 or body[-1][1] != "}":
            raise Unsupported(f"line {body[min(j, len(body) - 1)][0]}: the dispatcher's switch does not end "
                              f"in default: break; then one call")
        paths.append(self._path_call(fn, *body[j + 3]))
        fn.paths = list(dict.fromkeys(paths))
        fn.stmts = [Stmt(no0, "switch", "ret")]
        return i

    def _path_call(self, fn: Function, no: int, s: str) -> str:
        m = re.fullmatch(r"(\w+)\((.*)\);", s)
        if not m:
            raise Unsupported(f"line {no}: cannot read {s!r} in the dispatcher")
        if [a.strip() for a in m.group(2).split(",")] != fn.params:
            raise Unsupported(f"line {no}: {m.group(1)} is called with other arguments than {fn.name}'s")
        callee = self.functions.get(m.group(1))
        if callee is None or callee.params != fn.params:
            raise Unsupported(f"line {no}: {m.group(1)} is not a function of the file with {fn.name}'s parameters")
        return m.group(1)

    def _statement(self, fn: Function, s: str, no: int, text: str) -> None:
        if s == "return":
            fn.stmts.append(Stmt(no, text, "ret"))
            return
        m = re.fullmatch(r"const uint64_t \*(\w+) = (\w+)", s)
        if m:               # a fresh ring pointer (gen/printers/c_simd/printer.py FRESH_ISAS): the array
            if m.group(2) not in fn.arrays or fn.arrays[m.group(2)] != 8:
                raise Unsupported(f"line {no}: {m.group(1)} points to {m.group(2)}, not a word array of the function")
            self._declare(m.group(1), no)
            self._alias[m.group(1)] = m.group(2)
            return
        m = re.fullmatch(r"(\w+)FRESH\((\w+)\)", s)
        if m:               # the empty asm that marks a fresh pointer changed: it changes nothing
            if m.group(2) not in self._alias or not self._fresh_is_empty(m.group(1)):
                raise Unsupported(f"line {no}: {m.group(1)}FRESH is not the file's empty barrier on a ring pointer")
            return
        m = _DECL.match(s)
        if m:
            typ = m.group(1)
            rest = m.group(2)
            for name in re.findall(r"(?:^|,)\s*(\w+)", rest.split("=", 1)[0] if "=" in rest else rest):
                self._declare(name, no)
            if "=" in rest:
                name, init = rest.split("=", 1)
                fn.stmts.append(Stmt(no, text, "assign", ("name", name.strip()), "=", self._parse(init, no)))
                return
            for part in rest.split(","):
                a = re.fullmatch(r"\s*(\w+)\s*\[\s*(\d+)\s*\]\s*", part)
                if a:
                    fn.arrays[a.group(1)] = _VBYTES.get(typ, 8)
            return
        m = re.fullmatch(r"(\w+)\((.*)\)", s)
        if m and m.group(1) in self.functions or (m and m.group(1).endswith(("_burn", "_burn_top"))):
            args = [a.strip() for a in _split_args(m.group(2))]
            if m.group(1).endswith(("_burn", "_burn_top")):
                fn.stmts.append(Stmt(no, text, "callw", m.group(1), args))
                return
            if m.group(1).endswith("_work") and args == fn.params:    # a wrapper's call (_wrapper)
                fn.stmts.append(Stmt(no, text, "callw", m.group(1), args))
                return
            self._inline(fn, m.group(1), args, no, text)
            return
        fn.stmts.append(self._simple(fn, s, no, text))

    def _simple(self, fn, s: str, no: int, text: str) -> Stmt:
        m = re.fullmatch(r"(\w+)\s*(\+\+|--)", s)
        if m:
            return Stmt(no, text, "assign", ("name", m.group(1)), "+=" if m.group(2) == "++" else "-=", ("num", 1))
        m = re.fullmatch(r"(\w+(?:\s*\[[^\]]*\])?)\s*(=|\+=|-=|\^=)\s*(.*)", s)
        if m:
            return Stmt(no, text, "assign", self._parse(m.group(1), no), m.group(2), self._parse(m.group(3), no))
        e = self._parse(s, no)
        if e[0] != "call":
            raise Unsupported(f"line {no}: cannot read {s!r}")
        return Stmt(no, text, "expr", e)


def _split_args(s: str) -> list[str]:
    """The arguments of a call (as written) in the text between its parentheses."""
    return split_top(s, "([)]")


# ---------------------------------------------------------------------------- shuffle controls

def _const_bytes(v: tuple, no: int) -> list:
    out = []
    for t in v:
        x = value(t)
        if x is None:
            raise Unsupported(f"line {no}: a shuffle control that is not constant")
        out += [(x >> (8 * k)) & 0xff for k in range(8)]
    return out


# ---------------------------------------------------------------------------- the machine

class LaneTerms(TermLanes):
    """The lane reader of gen/isa/common.py over terms, for one intrinsic call of a machine:
    what an ISA module's SEMANTICS compute with."""

    def __init__(self, mach, name: str):
        self.mach, self.intrinsic = mach, name

    def vec(self, x) -> tuple:
        return self.mach._vec(x)

    def imm(self, x) -> int:
        return self.mach._imm(x)

    def counts(self, v: tuple) -> list:
        return self.mach._lane_counts(v)

    def const_bytes(self, v: tuple) -> list:
        return _const_bytes(v, self.mach.line.no)

    def load(self, addr: Term, n: int) -> tuple:
        return self.mach._vload(addr, n)

    def store(self, addr: Term, v: tuple) -> None:
        self.mach._vstore(addr, v)

    def load_aligned(self, addr: Term, n: int) -> tuple:
        self.mach._aligned(addr, self.intrinsic)
        return self.mach._vload(addr, n)

    def store_aligned(self, addr: Term, v: tuple) -> None:
        self.mach._aligned(addr, self.intrinsic)
        self.mach._vstore(addr, v)

    def undef(self, i: int) -> Term:
        return var(f"undef:upper@{self.mach.line.no}.{i}")

    def unsupported(self, text: str):
        raise Unsupported(f"line {self.mach.line.no}: {text}")


class LaneMachine:
    """The vector side of a machine (state, ``line``, load and store): the lane reader that gen/isa's
    SEMANTICS call back through (:class:`LaneTerms`), the x86 intrinsics, and vector values kept
    in registers.  The SIMD C machine's, and the Rust reader's (gen/prove/rust.py: core::arch
    takes the C intrinsics' names)."""

    def _vload(self, addr: Term, lanes: int) -> tuple:
        return tuple(self.load(add(addr, const(8 * i)), 8) for i in range(lanes))

    def _vstore(self, addr: Term, v: tuple) -> None:
        for i, t in enumerate(v):
            self.store(add(addr, const(8 * i)), 8, t)

    def _vec(self, x) -> tuple:
        if not isinstance(x, tuple):
            raise Unsupported(f"line {self.line.no}: a scalar where a vector is expected")
        return x

    def _imm(self, x) -> int:
        v = value(x) if isinstance(x, Term) else None
        if v is None:
            raise Unsupported(f"line {self.line.no}: an immediate that is not constant")
        return v

    def _lane_counts(self, v: tuple) -> list:
        return [self._imm(t) for t in v]

    def _aligned(self, addr: Term, name: str) -> None:
        """An aligned load or store (which the printers never emit) is refused on a caller's
        pointer: the caller promises no alignment."""
        base, _ = base_of(addr)
        if kind(base) in ("key", "tweak", "in", "out"):
            raise ProveError(f"line {self.line.no}: {name} on the caller's pointer, which need not be aligned")

    def _x86(self, op: str, w: int, a: list, name: str):
        """An x86 intrinsic: its lane terms from gen/isa/x86.py's SEMANTICS."""
        sem = x86.SEMANTICS.get(op)
        if sem is None:
            raise Unsupported(f"line {self.line.no}: the intrinsic {name} is not modelled")
        return sem(LaneTerms(self, name), w, a)

    def _neon(self, name: str, a: list):
        """A NEON intrinsic: its lane terms from gen/isa/neon.py's SEMANTICS (a reinterpretation:
        the same lanes)."""
        if neon.is_reinterpret(name):
            return a[0]
        sem = neon.SEMANTICS.get(name)
        if sem is None:
            raise Unsupported(f"line {self.line.no}: the intrinsic {name} is not modelled")
        return sem(LaneTerms(self, name), 2, a)

    def _set_vector(self, name: str, v: tuple) -> None:
        """A vector value into register ``name``: a lane moved from another vector (a shuffle, a
        copy) makes no new term, its line is kept in ``moves`` (engine.first_divergence)."""
        for t in v:
            if t in self.origin:
                lines = self.moves.setdefault(t, [])
                if len(lines) < 4 and self.line.no not in lines:
                    lines.append(self.line.no)
            else:
                self.note(t)
        self.state.vregs[name] = v
        self.state.regs.pop(name, None)


class SimdMachine(CFamilyMachine, LaneMachine):
    """One path through one function of a SIMD C program."""

    def __init__(self, prog: Program, fn: Function):
        super().__init__(prog, fn)
        self.moves: dict = {}       # term -> lines that moved it into another vector lane

    # ---------------------------------------------------------------- values

    def ev(self, e):
        k = e[0]
        if k == "num":
            return const(e[1])
        if k == "name":
            n = e[1]
            st = self.state
            if n in st.vregs:
                return st.vregs[n]
            if n in st.regs:
                return st.regs[n]
            raise ProveError(f"line {self.line.no}: {n} is read before it is set")
        if k == "bin":
            return self._bin(e[1], self.ev(e[2]), self.ev(e[3]))
        if k == "neg":
            return sub(const(0), self.ev(e[1]))
        if k == "index":
            addr, size = self._element(e[1], self.ev(e[2]))
            return self._vload(addr, size // 8) if size > 8 else self.load(addr, 8)
        if k == "call":
            return self._call(e[1], e[2])
        if k == "cond":
            return self._cond(e[1])
        raise AssertionError(k)

    def _bin(self, op, a, b):
        if isinstance(a, tuple) or isinstance(b, tuple):
            raise Unsupported(f"line {self.line.no}: C operator {op} on a vector")
        t = self._arith(op, a, b)
        if t is None:           # a comparison outside a test, another operator
            raise Unsupported(f"line {self.line.no}: " + (f"{op} by a non-constant" if value(b) is None else
                                                          f"operator {op}"))
        return t

    def _cond(self, e):
        """A test as a term that is zero exactly when it fails."""
        if e[0] != "bin" or e[1] not in ("<", ">", "<=", ">=", "==", "!="):
            raise Unsupported(f"line {self.line.no}: a test that is not a comparison")
        return self._compare(e[1], self.ev(e[2]), self.ev(e[3]))

    def _other_test(self, op: str, a: Term, vb: int | None) -> Term:
        """Against any other constant bound: ``ge`` (a block test, ``n >= 3``)."""
        if op == ">=" and vb:
            return ge(a, vb)
        if op == ">" and vb is not None:
            return ge(a, vb + 1)
        return super()._other_test(op, a, vb)

    def _element(self, array: str, idx: Term):
        if value(idx) is None:
            raise Unsupported(f"line {self.line.no}: {array}[..] with a non-constant index")
        size = self.fn.arrays.get(array, 8)
        return add(var(f"rsp0.{array}"), const(size * value(idx))), size

    # ---------------------------------------------------------------- intrinsics

    def _call(self, name: str, args):
        a = [self.ev(x) for x in args]
        no = self.line.no
        if name.endswith("load64") and len(a) == 1:
            return self.load(a[0], 8)
        if name.endswith("store64") and len(a) == 2:
            self.store(a[0], 8, a[1])
            return None
        if neon.is_reinterpret(name):
            return a[0]
        xc = x86.parse(name)
        if xc is not None:
            return self._x86(xc[0], xc[1], a, name)
        return self._neon(name, a)

    # ---------------------------------------------------------------- statements

    def step(self, pc: int):
        st = self.fn.stmts[pc]
        self.line = st
        try:
            return self._step(st, pc)
        except (TypeError, IndexError, AttributeError, AssertionError, ZeroDivisionError) as e:
            raise Unsupported(f"line {st.no}: cannot read {st.text.strip()!r} ({type(e).__name__})") from None

    def _step(self, st: Stmt, pc: int):
        k = st.kind
        if k == "assign":
            self._assign(st)
            return pc + 1
        if k == "expr":
            if self.ev(st.a) is not None:
                raise Unsupported(f"line {st.no}: a value computed and dropped")
            return pc + 1
        if k == "ret":
            return ("ret", self.ret0)
        if k == "jmp":
            return st.a
        if k == "test":
            self.state.zf = self.ev(st.a)
            return ("branch", True, st.b, pc + 1)
        if k == "ifzero":
            self.state.zf = self.ev(st.a)
            return ("branch", True, pc + 1, st.b)
        raise Unsupported(f"line {st.no}: a call of {st.a}")

    def _assign(self, st: Stmt) -> None:
        lhs, op = st.a, st.b
        rhs = self.ev(st.c)
        if lhs[0] == "index":
            addr, size = self._element(lhs[1], self.ev(lhs[2]))
            if isinstance(rhs, tuple):
                if op != "=" or len(rhs) * 8 != size:
                    raise Unsupported(f"line {st.no}: a vector array element of another width")
                self._vstore(addr, rhs)
                return
            old = self.load(addr, 8) if op != "=" else None
            self.store(addr, 8, self._combine(op, old, rhs))
            return
        if lhs[0] != "name":
            raise Unsupported(f"line {st.no}: cannot assign to this")
        name = lhs[1]
        s = self.state
        if isinstance(rhs, tuple):
            if op != "=":
                raise Unsupported(f"line {st.no}: {op} on a vector")
            self._set_vector(name, rhs)
            return
        old = s.regs.get(name) if op != "=" else None
        if op != "=" and old is None:
            raise ProveError(f"line {st.no}: {name} is read before it is set")
        t = self._combine(op, old, rhs)
        self.note(t)
        s.regs[name] = t
        s.vregs.pop(name, None)

    @staticmethod
    def _combine(op, old, t):
        if op == "=":
            return t
        return {"+=": add, "-=": sub, "^=": xor}[op](old, t)


def jobs(text: str, kind) -> list:
    """(name, (direction, blocks), make) per exported function, one per dispatcher path."""
    try:
        prog = Program(text)
    except (TypeError, IndexError, AttributeError, AssertionError, ValueError) as e:
        raise Unsupported(f"the program's structure ({type(e).__name__}: {e})") from None
    out = []
    exported = [f for f in prog.functions.values() if kind(f.name) and not _is_path(prog, f.name)]
    for fn in exported:
        targets = [(fn.name, fn)] if fn.paths is None else \
            [(f"{fn.name} [path {' > '.join(chain)}]", prog.functions[chain[-1]]) for chain in _chains(prog, fn)]
        for label, body in targets:

            def make(args, body=body):
                m = SimdMachine(prog, body)
                return m, m.enter(args), heads(body), lambda pc: f"line {body.stmts[pc].no}"
            out.append((label, kind(fn.name), make))
    return out


def _chains(prog: Program, fn: Function, seen: tuple = ()) -> list[tuple]:
    """The calls a dispatcher's paths lead to, down to functions that are not dispatchers: a path
    may dispatch again (the x86 dispatcher's public single-block function: its first call asks
    for the ISA level, then takes the wiping function the later calls take); each chain's last
    function is proved as the public function."""
    out = []
    for p in fn.paths:
        if p in seen:
            raise Unsupported(f"{fn.name}: dispatchers that call each other in a cycle")
        callee = prog.functions[p]
        out += [(p,)] if callee.paths is None else [(p,) + c for c in _chains(prog, callee, seen + (fn.name, p))]
    return out


def _is_path(prog: Program, name: str) -> bool:
    return any(f.paths and name in f.paths for f in prog.functions.values())
