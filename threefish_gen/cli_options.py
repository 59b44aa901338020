"""``--constants 1.1|1.2|1.3``: the Skein constants version, on every command that takes one.
``--version`` is its old name, kept as a hidden, deprecated alias on the subcommands (a note on
stderr says so); ``threefish-gen --version`` is the program's version."""
from __future__ import annotations

import functools

import click

from threefish_gen.gen.spec import VERSIONS

CONSTANTS_CHOICE = click.Choice(list(VERSIONS), case_sensitive=False)


def constants_option(param: str = "version", multiple: bool = False, default=None, help: str = ""):
    """Adds --constants (and the hidden --version alias) feeding the function's ``param``."""
    def deco(f):
        @functools.wraps(f)
        def inner(*args, **kw):
            alias = kw.pop("_constants_alias")
            if alias:
                if not multiple and kw[param] not in (None, default, alias):
                    raise click.UsageError(f"--constants {kw[param]} and --version {alias} disagree")
                click.echo("threefish-gen: note: --version VERSION is deprecated here; use --constants VERSION "
                           "(threefish-gen --version prints the program's version)", err=True)
                kw[param] = tuple(kw[param]) + tuple(alias) if multiple else alias
            return f(*args, **kw)
        inner = click.option("--version", "_constants_alias", multiple=multiple, default=None,
                             type=CONSTANTS_CHOICE, hidden=True, expose_value=True)(inner)
        return click.option("--constants", param, multiple=multiple, default=default,
                            show_default=default is not None, type=CONSTANTS_CHOICE,
                            help=help or "Skein version of the constants")(inner)
    return deco
