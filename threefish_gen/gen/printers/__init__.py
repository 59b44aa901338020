"""Stage 5 -- printers: Jinja2 templates (``templates/<target>/``) fed by small Python
tables that select the instructions of each target."""
from __future__ import annotations

import jinja2

from .. import __version__
from ..dsl import Loop


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
    return _ENV


def render_template(name: str, **ctx) -> str:
    return env().get_template(name).render(**ctx)


def statements(ops, op, loop_head) -> list[str]:
    """The lines of a list of description ops (the scalar C and C# printers): ``op(item)`` each;
    a Loop is the lines ``loop_head(count)`` (its for statement and opening brace), its body
    indented, then ``}``."""
    out: list[str] = []
    for item in ops:
        if isinstance(item, Loop):
            out.extend(loop_head(item.count))
            out.extend("    " + op(o) for o in item.body)
            out.append("}")
        else:
            out.append(op(item))
    return out
