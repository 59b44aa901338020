"""Symbolic execution of the C printer's output (gen/printers/c.py), read as text.

The straight-line text is a small language: ``uint64_t``/``unsigned``/``int`` declarations,
assignments (``=``, ``+=``, ``-=``, ``^=``) of expressions over variables, integer literals
(``UINT64_C(..)``), ``+ - * ^ | & << >>``, local arrays (``ks[16 * c + 3]``), the printer's
little-endian helpers ``<prefix>load64(p)`` and ``<prefix>store64(p, v)``, and ``for`` loops
(the blocks loops over ``n``, the 8-round-cycle loops over a counter with a constant bound).
A loop is compiled to a test at its head, the body, the step and a jump back, and run by the
same engine as the NASM programs.  The tokenizer, statements and C arithmetic are the SIMD C
reader's too (gen/prove/cfamily.py).
"""
from __future__ import annotations

import re

from .cfamily import BINARY as _BINARY, CFamilyMachine, Stmt, body_lines, skip, strip_comments, tokens
from .engine import ProveError, Unsupported, literal
from .terms import MASK, Term, add, and_, const, sub, value, var, xor

_TOKEN = re.compile(r"\s*(UINT64_C\(\s*(?:0[xX][0-9a-fA-F]+|\d+)\s*\)|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|"
                    r"[A-Za-z_]\w*|<<|>>|>=|<=|==|!=|\+\+|--|[-+*^|&()\[\],<>=~])")


def _tokens(s: str) -> list[str]:
    return tokens(s, _TOKEN)


class Function:
    def __init__(self, name: str, params: list[str]):
        self.name, self.params = name, params
        self.stmts: list[Stmt] = []


_FUNC = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:\w+_NOINLINE\s+)?(?:void|uint64_t)\s+(\w+)\s*\(([^)]*)\)\s*$")


class Program:
    """The exported functions of one C file, compiled to statements with jumps."""

    def __init__(self, text: str, select=None):
        """select: which functions to read, by name (default: the exported ones and the
        *_work functions they call); the others are skipped."""
        self.functions: dict[str, Function] = {}
        self.raw = text.splitlines()
        lines = strip_comments(text).splitlines()
        # object-like constant macros (#define NAME expr), read where a statement names them
        self.macros = {m.group(1): m.group(2) for m in
                       (re.match(r"\s*#\s*define\s+(\w+)\s+(.+?)\s*$", ln) for ln in lines) if m}
        i = 0
        while i < len(lines):
            head = lines[i].strip()
            start = i
            if head.startswith(("void ", "static ")) and "(" in head and not head.endswith(";"):
                while not head.endswith(")") and i + 1 < len(lines):   # parameters over two lines
                    i += 1
                    head += " " + lines[i].strip()
                m = _FUNC.match(head)
                if m and (not select(m.group(1)) if select is not None else
                          head.startswith("static") and not m.group(1).endswith("_work")):
                    # the load/store helpers are modelled by name; burn and burn_top (the wipe) change no output
                    i = skip(lines, i + 1)
                    continue
                if m and i + 1 < len(lines) and lines[i + 1].strip() == "{":
                    params = [p.strip().split()[-1].lstrip("*").split("[")[0] for p in m.group(2).split(",")]
                    fn = Function(m.group(1), params)
                    i = self._body(fn, lines, i + 2)
                    self.functions[fn.name] = self._wrapper(fn)
                    continue
            i = start + 1

    def _wrapper(self, fn: Function) -> Function:
        """A public function that calls its *_work function (then wipes the stack) is that
        function: the call must pass the parameters in order."""
        calls = [s for s in fn.stmts if s.kind == "call"]
        if not calls:
            return fn
        work = [s for s in calls if not s.a.endswith(("_burn", "_burn_top"))]
        if len(work) != 1 or work[0].a not in self.functions or [s.kind for s in fn.stmts][-1] != "ret" \
                or len(fn.stmts) != len(calls) + 1:
            raise Unsupported(f"line {calls[0].no}: {fn.name} calls more than its work function")
        callee = self.functions[work[0].a]
        if work[0].b != fn.params or callee.params != fn.params:
            raise Unsupported(f"line {work[0].no}: {work[0].a} is called with other arguments than {fn.name}'s")
        out = Function(fn.name, fn.params)
        out.stmts = callee.stmts
        return out

    def _inline(self, fn: Function, callee: Function, args: list[str], no: int, text: str) -> None:
        """A call of a single-block kernel (the blocks loop's, issue 30): its parameters assigned
        the arguments, then its statements, every name of its own prefixed (renamed apart from
        the caller's), its return a jump past it."""
        if len(args) != len(callee.params):
            raise Unsupported(f"line {no}: {callee.name} takes {len(callee.params)} arguments")
        own = set(callee.params) | {s.a[0] for s in callee.stmts if s.kind == "assign"}
        pre = f"{callee.name}#{len(fn.stmts)}."

        def f(toks):
            return [pre + t if t in own else t for t in toks]
        for p, a in zip(callee.params, args):
            fn.stmts.append(Stmt(no, text, "assign", [pre + p], "=", _tokens(a)))
        base = len(fn.stmts)
        end = base + len(callee.stmts)
        for st in callee.stmts:
            k = st.kind
            if k == "ret":
                fn.stmts.append(Stmt(st.no, st.text, "jmp", end))
            elif k == "jmp":
                fn.stmts.append(Stmt(st.no, st.text, "jmp", st.a + base))
            elif k == "test":
                fn.stmts.append(Stmt(st.no, st.text, "test", f(st.a), st.b + base))
            elif k == "ifzero":
                fn.stmts.append(Stmt(st.no, st.text, "ifzero", f(st.a)))
            elif k == "store":
                fn.stmts.append(Stmt(st.no, st.text, "store", f(st.a), f(st.b)))
            elif k == "assign":
                fn.stmts.append(Stmt(st.no, st.text, "assign", f(st.a), st.b, f(st.c)))
            else:
                raise Unsupported(f"line {st.no}: {callee.name} makes a call ({st.a}) where it is inlined")

    def _body(self, fn: Function, lines: list[str], i: int) -> int:
        """Compile statements up to the function's closing brace; returns the next line index."""
        loops = []          # (head index, step statements, line number) of the open for loops
        depth = 1
        for no, s in body_lines(lines, i):
            if s == "{":
                depth += 1
                loops.append(None)
                continue
            if s == "}":
                depth -= 1
                if depth == 0:
                    fn.stmts.append(Stmt(no, "}", "ret"))
                    return no
                lp = loops.pop()
                if lp is not None:
                    head, steps, exit_stmt = lp
                    fn.stmts.extend(steps)
                    fn.stmts.append(Stmt(no, "}", "jmp", head))
                    exit_stmt.b = len(fn.stmts)
                continue
            m = re.fullmatch(r"for\s*\((.*);(.*);(.*)\)\s*\{", s)
            if m:
                depth += 1
                for part in filter(None, (p.strip() for p in m.group(1).split(","))):
                    fn.stmts.append(self._simple(part, no, s))
                head = len(fn.stmts)
                test = Stmt(no, s, "test", _tokens(m.group(2)))
                fn.stmts.append(test)
                steps = [self._simple(p.strip(), no, s) for p in m.group(3).split(",") if p.strip()]
                loops.append((head, steps, test))
                continue
            m = re.fullmatch(r"if\s*\((.*)==\s*0\s*\)", s)
            if m:               # if (x == 0) followed by one statement on the next line
                fn.stmts.append(Stmt(no, s, "ifzero", _tokens(m.group(1))))
                continue
            if not s.endswith(";"):
                raise Unsupported(f"line {no}: cannot read {s!r}")
            s1 = s[:-1].strip()
            if re.match(r"(const\s+)?(uint64_t|unsigned|int|size_t)\b", s1):
                continue
            if s1 == "return":
                fn.stmts.append(Stmt(no, s, "ret"))
                continue
            m = re.fullmatch(r"(\w+_work)\((.*)\)", s1)
            if m and m.group(1) in self.functions:
                args = [a.strip() for a in m.group(2).split(",")]
                if args != fn.params:           # not a wrapper's call (_wrapper): the kernel inlined
                    self._inline(fn, self.functions[m.group(1)], args, no, s)
                    continue
            fn.stmts.append(self._simple(s1, no, s))
        raise Unsupported("a function body does not end")

    def _simple(self, s: str, no: int, text: str) -> Stmt:
        m = re.fullmatch(r"(\w+)store64\((.*)\)", s)
        if m:
            toks = _tokens(m.group(2))
            depth, cut = 0, None
            for j, t in enumerate(toks):
                depth += t in "([" and 1 or (t in ")]" and -1 or 0)
                if t == "," and depth == 0:
                    cut = j
            if cut is None:
                raise Unsupported(f"line {no}: store64 needs two arguments")
            return Stmt(no, text, "store", toks[:cut], toks[cut + 1:])
        m = re.fullmatch(r"(\w+)\((.*)\)", s)
        if m and not m.group(1).endswith("store64"):
            return Stmt(no, text, "call", m.group(1), [a.strip() for a in m.group(2).split(",")])
        m = re.fullmatch(r"(\w+)\s*(\+\+|--)", s)
        if m:
            return Stmt(no, text, "assign", [m.group(1)], "+=" if m.group(2) == "++" else "-=", ["1"])
        m = re.fullmatch(r"(\w+(?:\s*\[[^\]]*\])?)\s*(=|\+=|-=|\^=|&=)\s*(.*)", s)
        if m:
            return Stmt(no, text, "assign", _tokens(m.group(1)), m.group(2), _tokens(m.group(3)))
        raise Unsupported(f"line {no}: cannot read {s!r}")


class CMachine(CFamilyMachine):
    """One path through one function of a C program."""

    def __init__(self, prog: Program, fn: Function):
        super().__init__(prog, fn)
        self._expanding: set = set()        # the macros being expanded (empty between statements)

    # ---------------------------------------------------------------- expressions

    def ev(self, toks: list[str]) -> Term:
        self._t, self._i = toks, 0
        t = self._binary(-1)
        if self._i != len(toks):
            raise Unsupported(f"line {self.line.no}: cannot read {' '.join(toks[self._i:])!r}")
        return t

    def _peek(self):
        return self._t[self._i] if self._i < len(self._t) else None

    def _binary(self, floor: int) -> Term:
        left = self._unary()
        while True:
            op = self._peek()
            prec = _BINARY.get(op)
            if prec is None or prec <= floor:
                return left
            self._i += 1
            right = self._binary(prec)
            left = self._apply(op, left, right)

    def _apply(self, op, a, b):
        """An operator: arithmetic, else a comparison (a loop test)."""
        t = self._arith(op, a, b)
        return t if t is not None else self._compare(op, a, b)

    def _other_test(self, op, a, vb):
        raise Unsupported(f"line {self.line.no}: loop test {op} {vb} is not modelled")

    def _unary(self) -> Term:
        tok = self._peek()
        if tok is None:
            raise Unsupported(f"line {self.line.no}: expression ends early")
        self._i += 1
        if tok == "(":
            t = self._binary(-1)
            self._expect(")")
            return t
        if tok == "-":
            return sub(const(0), self._unary())
        if tok == "~":
            return xor(self._unary(), const(MASK))
        if tok.startswith("UINT64_C"):
            return const(literal(tok[tok.index("(") + 1:-1].strip(), f"line {self.line.no}"))
        if tok[0].isdigit():
            return const(literal(tok.rstrip("uUlL"), f"line {self.line.no}"))
        if self._peek() == "(":
            if not tok.endswith("load64"):
                raise Unsupported(f"line {self.line.no}: call of {tok}")
            self._i += 1
            addr = self._binary(-1)
            self._expect(")")
            return self.load(addr, 8)
        if self._peek() == "[":
            self._i += 1
            idx = self._binary(-1)
            self._expect("]")
            return self.load(self._element(tok, idx), 8)
        if tok not in self.state.regs and tok in self.prog.macros:
            expanding = self._expanding
            if tok in expanding:            # #define A B / #define B A
                raise Unsupported(f"line {self.line.no}: the macro {tok} expands to itself")
            saved = self._t, self._i
            expanding.add(tok)
            try:
                return self.ev(_tokens(self.prog.macros[tok]))
            finally:
                expanding.discard(tok)
                self._t, self._i = saved
        if tok not in self.state.regs:
            raise ProveError(f"line {self.line.no}: {tok} is read before it is set")
        return self.state.regs[tok]

    def _expect(self, tok):
        if self._peek() != tok:
            raise Unsupported(f"line {self.line.no}: expected {tok!r}")
        self._i += 1

    def _element(self, array: str, idx: Term) -> Term:
        if value(idx) is None:
            raise Unsupported(f"line {self.line.no}: {array}[{idx}] with a non-constant index")
        if array in self.fn.params:         # a uint64_t array parameter (Skein's h[], t[])
            return add(self.state.regs[array], const(8 * value(idx)))
        return add(var(f"rsp0.{array}"), const(8 * value(idx)))

    # ---------------------------------------------------------------- statements

    def step(self, pc: int):
        st = self.fn.stmts[pc]
        self.line = st
        if st.kind == "ret":
            return ("ret", self.ret0)
        if st.kind == "jmp":
            return st.a
        if st.kind == "test":
            self.state.zf = self.ev(st.a)
            return ("branch", True, st.b, pc + 1)
        if st.kind == "ifzero":
            self.state.zf = self.ev(st.a)
            return ("branch", True, pc + 1, pc + 2)
        if st.kind == "call":
            raise Unsupported(f"line {st.no}: a call of {st.a}")
        if st.kind == "store":
            addr, v = self.ev(st.a), self.ev(st.b)
            self.store(addr, 8, v)
            return pc + 1
        lhs, op, rhs = st.a, st.b, self.ev(st.c)
        if len(lhs) > 1:                          # array element
            self._t, self._i = lhs, 2
            idx = self._binary(-1)
            addr = self._element(lhs[0], idx)
            old = self.load(addr, 8) if op != "=" else None
            self.store(addr, 8, self._combine(op, old, rhs))
            return pc + 1
        name = lhs[0]
        old = self.state.regs.get(name) if op != "=" else None
        if op != "=" and old is None:
            raise ProveError(f"line {st.no}: {name} is read before it is set")
        t = self._combine(op, old, rhs)
        self.note(t)
        self.state.regs[name] = t
        return pc + 1

    @staticmethod
    def _combine(op, old, t):
        if op == "&=":
            if value(t) is None:
                raise Unsupported("&= with a non-constant")
            return and_(old, value(t))
        return {"=": lambda: t, "+=": lambda: add(old, t), "-=": lambda: sub(old, t),
                "^=": lambda: xor(old, t)}[op]()
