"""Stage 5 -- printers: Jinja2 templates (``templates/<target>/``) fed by small Python
tables that select the instructions of each target."""
from __future__ import annotations

import jinja2

from .. import __version__


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
