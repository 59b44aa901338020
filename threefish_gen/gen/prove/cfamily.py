"""What the C-family readers share: gen/prove/c.py (scalar C) and gen/prove/c_simd.py (SIMD C;
gen/prove/csharp.py reads C# on its machinery).

The text: the tokenizer (each reader brings its token pattern), the operators' precedence, comments
made spaces, a skipped function body, the lines of a body.  The program: statements with jumps
(:class:`Stmt`) and the loop heads among them.  The machine (:class:`CFamilyMachine`): a
function's parameters, C's arithmetic on 64-bit words (``+ - ^ |``, ``* << >> &`` by a constant),
its comparisons as loop and branch tests, and the loop whose test a constant bound decides.
"""
from __future__ import annotations

import re

from .engine import Machine, ProveError, Unsupported
from .terms import Term, add, and_, const, mul, or_, shr, sub, value, xor

BINARY = {"*": 7, "+": 6, "-": 6, "<<": 5, ">>": 5, "<": 4, ">": 4, "<=": 4, ">=": 4, "==": 3, "!=": 3,
          "&": 2, "^": 1, "|": 0}


def tokens(s: str, token: re.Pattern) -> list[str]:
    """The tokens of an expression (``token``: the reader's pattern, its token in group 1)."""
    out, pos = [], 0
    s = s.strip()
    while pos < len(s):
        m = token.match(s, pos)
        if not m or m.end() == pos:
            raise Unsupported(f"cannot read {s[pos:pos + 20]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


def strip_comments(text: str) -> str:
    """Comments become spaces (line numbers stay)."""
    return re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def skip(lines: list[str], i: int) -> int:
    """The index after the braced body that starts at line index i (a function not read)."""
    depth = 0
    while i < len(lines):
        depth += lines[i].count("{") - lines[i].count("}")
        i += 1
        if depth == 0:
            return i
    return i


def body_lines(lines: list[str], i: int):
    """(line number, stripped text) of each line from index i on that is neither blank nor a
    preprocessor line; a line's number is also the index of the line after it."""
    while i < len(lines):
        s = lines[i].strip()
        i += 1
        if s and not s.startswith("#"):
            yield i, s


class Stmt:
    """One statement: ``kind`` (assign, test, ifzero, jmp, ret, ... as the reader compiles them)
    and its operands a, b, c; ``no``/``text``: the source line."""
    __slots__ = ("no", "text", "kind", "a", "b", "c")

    def __init__(self, no, text, kind, a=None, b=None, c=None):
        self.no, self.text, self.kind, self.a, self.b, self.c = no, text, kind, a, b, c


def heads(fn) -> set:
    """The loop heads of a compiled function: the targets of its backward jumps."""
    return {s.a for i, s in enumerate(fn.stmts) if s.kind == "jmp" and s.a <= i}


class CFamilyMachine(Machine):
    """One path through one compiled function (``fn.params``, ``fn.stmts``) of a C-family program.
    A reader's machine brings ``ev(x)``: the value of a statement's expression."""

    def __init__(self, prog, fn):
        super().__init__()
        self.prog, self.fn = prog, fn

    def enter(self, args: list[Term]) -> int:
        if len(args) != len(self.fn.params):
            raise Unsupported(f"{self.fn.name} takes {len(self.fn.params)} parameters")
        for p, a in zip(self.fn.params, args):
            self.state.regs[p] = a
        return 0

    def _arith(self, op: str, a: Term, b: Term) -> Term | None:
        """a op b for C's ``+ - ^ |`` and ``* << >> &`` (by a constant, a product also of a
        constant and a word), on 64-bit words; None for another operator."""
        if op == "+":
            return add(a, b)
        if op == "-":
            return sub(a, b)
        if op == "^":
            return xor(a, b)
        if op == "|":
            return or_(a, b)
        if op not in ("*", "<<", ">>", "&"):
            return None
        vb = value(b)
        if vb is None:
            if op == "*" and value(a) is not None:
                return mul(b, value(a))
            raise Unsupported(f"line {self.line.no}: {op} by a non-constant")
        if op == "*":
            return mul(a, vb)
        if op in ("<<", ">>") and vb > 63:
            raise Unsupported(f"line {self.line.no}: a shift by {vb} (C shifts a 64-bit word by 0..63)")
        if op == "<<":
            return mul(a, 1 << vb)
        if op == ">>":
            return shr(a, vb)
        return and_(a, vb)

    def _compare(self, op: str, a: Term, b: Term) -> Term:
        """a op b as a term that is zero exactly when it is false: decided for two constants;
        a counter against zero; ``a >= 2^k`` (``a >> k``).  Other tests: _other_test."""
        va, vb = value(a), value(b)
        if va is not None and vb is not None:
            ok = {"<": va < vb, ">": va > vb, "<=": va <= vb, ">=": va >= vb, "==": va == vb, "!=": va != vb}[op]
            return const(int(ok))
        if vb == 0 and op in (">", "!="):
            return a
        if op == ">=" and vb and vb & (vb - 1) == 0:
            return shr(a, vb.bit_length() - 1)          # a >= 2^k  <=>  a >> k != 0
        return self._other_test(op, a, vb)

    def _other_test(self, op: str, a: Term, vb: int | None) -> Term:
        raise Unsupported(f"line {self.line.no}: test {op} {vb} is not modelled")

    def concrete_head(self, pc: int) -> bool:
        """A loop whose test is decided here (a counter with a constant bound) just runs."""
        st = self.fn.stmts[pc]
        if st.kind != "test":
            return False
        self.line = st
        try:
            return value(self.ev(st.a)) is not None
        except (ProveError, Unsupported):
            return False
