"""Stage 5 -- printers: Jinja2 templates (``templates/<target>/``) fed by small Python
tables that select the instructions of each target."""
from __future__ import annotations

import jinja2

from .. import __version__


class Line(str):
    """One printed line of a function (C, C#) with the facts of it that the wipe bounds read,
    recorded by the printer as it prints the line (nothing reads them back from the text):

    * ``locals``: (type, name, elements) of each local it declares (elements: an array's
      length, else 1);
    * ``sites``: (vector bytes, vector operands, scalar operands) of each vector intrinsic call
      in it (gen/isa/common.py ``CExpr``);
    * ``calls``: (function name, operands) of each other function it calls (the word helpers,
      the single-block tail of a *_blocks function);
    * ``scope``: +1 where it opens a ``{ }`` block, -1 where it closes one;
    * ``note``: a note of the description (/* round 0 */), which --annotate none leaves out;
    * ``constant``: its locals are constants (``const`` with an initialiser of numbers only: the
      rotation counts of the SIMD kernels), no key material in them.

    A plain ``str`` line of a function (a statement on words) has none of them.  The C printers
    (c.py, c_simd.py) record them all, the C# printer (csharp.py) ``locals``."""

    def __new__(cls, text: str, locals=(), sites=(), calls=(), scope: int = 0, note: bool = False,
                constant: bool = False):
        ln = super().__new__(cls, text)
        ln.locals, ln.sites, ln.calls, ln.scope, ln.note = tuple(locals), tuple(sites), tuple(calls), scope, note
        ln.constant = constant
        return ln

    def indented(self, n: int) -> "Line":
        return Line(" " * n + self, self.locals, self.sites, self.calls, self.scope, self.note, self.constant)


class LanesState:
    """What every lanes printer (SIMD C, Rust) keeps of the program it prints: the ISA, its
    family's module (gen/isa/: spellings) and vector type (``width``: the family's ``width`` for C,
    ``rust_width`` for Rust), the named constants, the op counts (``count``) and the values the
    program declares."""

    def __init__(self, isa, vp, width: str):
        from ..isa import family_of
        self.isa, self.vp = isa, vp
        self.fam = family_of(isa)
        self.w = getattr(self.fam, width)(isa.bits)
        self.consts: dict[str, str] = {}
        self.cost: dict[str, int] = {}
        self.declared = set(vp.values)

    def count(self, kind, n=1):
        self.cost[kind] = self.cost.get(kind, 0) + n


def load_word(ops, op, operand, assign) -> list:
    """A W = 1 load of one memory word (C#, Rust scalar op printers, which have ``names``, the
    values printed as statements, and ``expr``, the expressions printed at their one use): folded
    into an expression where ``op.dst`` is not a statement value, else ``assign(expression)``."""
    (w,) = op.words
    from ..dsl import Mem
    a = operand(Mem(op.array, w))
    if op.dst not in ops.names:
        ops.expr[op.dst] = a
        return []
    return [assign(a)]


def indent(lines, n: int = 4) -> list:
    """``lines`` indented by n spaces (empty lines stay empty), each keeping its facts."""
    return [ln.indented(n) if isinstance(ln, Line) else (" " * n + ln) if ln else ln for ln in lines]


# --annotate (gen/targets/base.py ANNOTATE_OPTION) on a comment after code on one line: full and
# none keep the column it is laid out in, brief has one space before it; NASM's none leaves the
# comment out (C's none keeps the file's own comments: only the description's notes go).  The
# printers print each such comment at the level (``comment_gap``, ``asm_comment``; in templates the
# globals ``gap(n)`` and ``asm_comment(n, text)``, which read the context's ``annotate``).
def comment_gap(spaces: int, annotate: str) -> str:
    """The spaces between code and the comment after it: ``spaces`` (its column), at brief one."""
    return " " if annotate == "brief" and spaces >= 2 else " " * spaces


def asm_comment(spaces: int, text: str, annotate: str) -> str:
    """An assembly comment after an instruction, ``spaces`` after it: ``; text`` (none: nothing)."""
    return "" if annotate == "none" else f"{comment_gap(spaces, annotate)}; {text}"


def _annotate_of(ctx) -> str:
    level = ctx.resolve_or_missing("annotate")
    if level is jinja2.runtime.missing:
        raise jinja2.UndefinedError("a template that prints a comment after code needs 'annotate' in its context")
    return level


@jinja2.pass_context
def _gap(ctx, spaces: int) -> str:
    return comment_gap(spaces, _annotate_of(ctx))


@jinja2.pass_context
def _asm_comment(ctx, spaces: int, text: str) -> str:
    return asm_comment(spaces, text, _annotate_of(ctx))


_ENV: jinja2.Environment | None = None


def env() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        _ENV = jinja2.Environment(
            # package data of threefish_gen (pyproject: "templates/**/*"), found by import
            loader=jinja2.PackageLoader("threefish_gen", "templates"),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
        _ENV.globals["generator"] = f"threefish-gen {__version__}"
        _ENV.globals["generator_version"] = __version__
        _ENV.globals["gap"] = _gap
        _ENV.globals["asm_comment"] = _asm_comment
    return _ENV


def render_template(name: str, **ctx) -> str:
    return env().get_template(name).render(**ctx)
