"""Stage 5 -- printers: Jinja2 templates (``templates/<target>/``) fed by small Python
tables that select the instructions of each target."""
from __future__ import annotations

from pathlib import Path

import jinja2

from .. import __version__


def template_dir() -> Path:
    """templates/ beside gen/ (source tree, editable install) or the installed copy."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here.parent / "templates", here / "templates"):
        if cand.is_dir():
            return cand
    raise FileNotFoundError("templates/ not found")  # pragma: no cover


_ENV: jinja2.Environment | None = None


def env() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        _ENV = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(template_dir())),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )
        _ENV.globals["generator"] = f"threefish-gen {__version__}"
    return _ENV


def render_template(name: str, **ctx) -> str:
    return env().get_template(name).render(**ctx)
