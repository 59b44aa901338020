"""The render command a file's header comment records: one writer (:func:`command`), one reader
(:func:`parse`), for every target and primitive.

Every file threefish-gen writes names, in its header comment, the ``threefish-gen render ...``
command that makes it again; ``threefish-gen check`` reads it back to know what to build.  The
command spells out every option (size, constants, keys, unroll, interleave, the target's options,
the prefix or C# class), so ``parse(command_words(v)) == v`` for every variant (tests/test_header.py
asserts it over every variant of ``--set all``).  Files written by older versions may lack options
(the C# Skein header had ``--version`` and no ``--keys``): :func:`parse` fills what is missing as
``render`` does (the target's defaults).

This module imports no target descriptor (printers call :func:`command`); :func:`parse` is handed
the registry's lookup (``gen/targets/__init__.py`` :func:`from_command`)."""
from __future__ import annotations

import shlex

from .errors import GenError
from .spec import get_spec
from .threefish import Options

RENDER = "threefish-gen render"


def command_words(v, prefix_option: str = "prefix") -> list[str]:
    """The words after ``threefish-gen render`` that make variant ``v`` (``prefix_option``: how the
    target names ``v.prefix`` on the command line: ``prefix``, or ``class`` for C#)."""
    o = v.options
    words = ["--target", v.target, "--size", str(v.spec.bits), "--constants", v.spec.version,
             "--keys", o.keys, "--unroll", o.unroll, "--interleave", str(o.interleave)]
    for name, value in v.extra:
        if isinstance(value, bool):
            words.append(f"--{name}" if value else f"--no-{name}")
        else:
            words += [f"--{name}", str(value)]
    return words + [f"--{prefix_option}", v.prefix]


def command(v, prefix_option: str = "prefix") -> str:
    """The header's command line (shell-quoted where a word needs it)."""
    return f"{RENDER} {shlex.join(command_words(v, prefix_option))}"


def find(text: str) -> list[str] | None:
    """The words after ``threefish-gen render`` on the first line of ``text`` that has them (the
    head of a file); None where no line has them.  GenError (one line) where they cannot be split
    (an unbalanced quote)."""
    key = RENDER + " "
    for line in text.splitlines():
        at = line.find(key)
        if at >= 0:
            try:
                return shlex.split(line[at + len(key):])
            except ValueError as e:
                raise GenError(f"the recorded command cannot be split into words ({e})") from None
    return None


def parse(argv: list[str], get_target):
    """The variant the recorded command ``argv`` (the words after ``render``) names; ``get_target``:
    name -> target descriptor.  GenError (one line) for anything that is not such a command."""
    words = list(argv)
    t = get_target(_value_after(words, "target"))
    # the target decides which words are flags (--wipe / --no-wipe) and which take a value
    flags = {opt.name for opt in t.schema if opt.kind is bool}
    opts: dict[str, object] = {}
    i = 0
    while i < len(words):
        if not words[i].startswith("--") or words[i] == "--":
            raise GenError(f"unexpected {words[i]!r} in the recorded command")
        name, eq, value = words[i][2:].partition("=")
        i += 1
        if not eq:
            base = name[3:] if name.startswith("no-") and name[3:] in flags else name
            if base in flags:
                if base in opts:
                    raise GenError(f"--{base} is given twice in the recorded command")
                opts[base] = base == name
                continue
            if i >= len(words) or words[i].startswith("--"):
                raise GenError(f"--{name} has no value in the recorded command")
            value = words[i]
            i += 1
        if name in opts:
            raise GenError(f"--{name} is given twice in the recorded command")
        opts[name] = value
    opts.pop("target")
    if "constants" in opts and "version" in opts:
        raise GenError("the recorded command has both --constants and --version")
    try:
        version = opts.pop("constants") if "constants" in opts else opts.pop("version")   # older files: --version
        spec = get_spec(str(version), _int(opts.pop("size"), "size"))
    except KeyError as e:
        raise GenError(f"the recorded command has no --{e.args[0] if e.args[0] != 'version' else 'constants'}") \
            from None
    prefix = str(opts.pop("prefix", ""))
    keys, unroll, interleave = (opts.pop(k, None) for k in ("keys", "unroll", "interleave"))
    rec = t.default_options_for(spec, opts)       # what render fills in for options not given (older files)
    o = Options(keys or rec.keys, unroll or rec.unroll,
                rec.interleave if interleave is None else _int(interleave, "interleave"))
    return t.variant(spec, o, prefix, **opts)


def _value_after(words: list[str], name: str) -> str:
    for i, w in enumerate(words):
        if w == f"--{name}":
            if i + 1 >= len(words):
                break
            return words[i + 1]
        if w.startswith(f"--{name}="):
            return w.split("=", 1)[1]
    raise GenError(f"the recorded command has no --{name}")


def _int(value, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise GenError(f"the recorded command's --{name} is not a whole number: {value!r}") from None
