"""What a target declares: its option schema, its variants and named sets, its passes, its
printer, and its recipe (what verify needs to know of the emitted code: checker, language,
interface, word size, CPU features).  Everything outside ``gen/targets/`` (the CLI, verify,
the tools) loops over the registry in ``gen/targets/__init__.py`` and asks these objects; no
code outside this folder compares target names.  What bench, tune and the bounds need of a
target lives in the application layer (threefish_gen/tools/target_tools.py), not here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import skein
from ..errors import GenError
from ..layouts import scalar
from ..spec import Spec
from ..threefish import KEYS, UNROLL, Options, describe
from ..variant import Variant

SETS = ("recommended", "all")


@dataclass(frozen=True)
class Option:
    """One target option (``--name VALUE`` on the command line, ``Variant.extra`` in code).

    ``choices``: the allowed values (None: ``kind`` decides: an int, or free text the target
    checks); ``default``: the value when not given (None: absent)."""

    name: str
    help: str
    choices: tuple | None = None
    default: object = None
    kind: type = str


# Comments in the emitted code (C, SIMD C, NASM): full = every instruction commented, padded into
# a column; brief = one comment per description statement, no padding; none = instructions only
# (the file header with the command stays).  The default stays out of Variant.extra and names.
ANNOTATE_OPTION = Option("annotate", "comments: none | brief (one per description statement) | full "
                         "(every instruction)", ("none", "brief", "full"), "brief")


# What the variant computes: the Threefish block cipher (default), or Skein (hash, MAC,
# personalization, tree hashing) whose UBI is built from the same Threefish description
# (gen/skein.py).  The default stays out of Variant.extra and names.
PRIMITIVE_OPTION = Option("primitive", "threefish (the block cipher) | skein (hash/MAC/tree over the same "
                          "description)", ("threefish", "skein"), "threefish")


def without_default_primitive(values: dict) -> dict:
    """Target option values without ``primitive`` when it is the default."""
    if values.get("primitive") == PRIMITIVE_OPTION.default:
        return {k: v for k, v in values.items() if k != "primitive"}
    return values


def is_skein(v) -> bool:
    return v.get("primitive", PRIMITIVE_OPTION.default) == "skein"


# Wipe: clear what the code spilled or tabled from the key, tweak or state (stack slots,
# subkey tables, stackalloc) before returning; --no-wipe opts out (the default stays out of names).
WIPE_OPTION = Option("wipe", "clear stack slots / key tables / stackalloc before returning (--no-wipe: keep)",
                     None, True, bool)


def without_default_annotate(values: dict) -> dict:
    """Target option values without ``annotate`` or ``wipe`` when they are the default."""
    return {k: v for k, v in values.items()
            if not (k == "annotate" and v == ANNOTATE_OPTION.default) and not (k == "wipe" and v is True)}


@dataclass(frozen=True)
class Recipe:
    """What the emitted code is, for the tools that build and run it (data; verify/ and the
    application layer read it).

    ``checker``: which verify checker builds and runs it (``c``: C harness, ``simde``: C
    harness with SIMDe fallback, ``nasm``: assembled and linked with the C harness,
    ``dotnet``: one C# project); ``language`` of the emitted code (``c``, ``nasm``, ``c#``:
    verify/objects.py turns c and nasm files into an object); ``interface``: ``c-abi`` (C
    functions a C program links) or ``dotnet`` (a .NET class); ``word_bits``: 64, or 32 for
    code that runs as a 32-bit program."""

    checker: str
    language: str
    interface: str = "c-abi"
    word_bits: int = 64


@dataclass(frozen=True)
class Pass:
    """One stage of a target's compile: its name, the IR it reads, the IR it makes, and ``run``
    (variant, IR read) -> IR made.  A target's compile is its list of passes run in order
    (:func:`run_passes`): the list ``threefish-gen list --passes`` prints is the list that runs."""

    name: str
    reads: str
    makes: str
    run: Callable | None = None


def run_passes(passes: list[Pass], v: Variant):
    """Run a compile: the first pass reads the variant, each next pass what the previous made."""
    ir = v
    for p in passes:
        if p.run is None:
            raise GenError(f"internal: pass {p.name!r} of {v.target} has nothing to run")
        ir = p.run(v, ir)
    return ir


def describe_pass(needs: Callable, what: str = "Program (gen/threefish.py)", cycles: Callable | None = None) -> Pass:
    """The first pass of every target: the description, for the (direction, options, blocks)
    shapes the target's layouts ask for (``needs(variant)``); makes {shape: Program}.
    ``cycles(variant)``: 8-round cycles per pass of the loop form (default 3; gen/threefish.py
    loop_cycles: vector kernels of Threefish-1024 2)."""
    def run(v, _):
        c = cycles(v) if cycles else None
        return {shape: describe(v.spec, shape[1], shape[0], shape[2], c) for shape in needs(v)}
    return Pass("describe", "spec + options", what, run)


def ubi_pass() -> Pass:
    """The first pass of a Skein variant: the Threefish description as a UBI block (key = the
    chaining value, tweak = the UBI tweak, feed-forward into the chaining value), gen/skein.py."""
    return Pass("describe + fuse UBI (gen/skein.py)", "spec + options",
                "UBI Program (key h, tweak t, h = E(h, t, m) ^ m)",
                lambda v, _: skein.ubi_program(v.spec, v.options))


DIRECTIONS = ("encrypt", "decrypt")


class Target:
    """Base class of the target descriptors (one module per target in this folder)."""

    name: str = ""
    summary: str = ""
    recipe: Recipe
    schema: tuple = ()              # Option, ...
    keys: tuple = KEYS              # description options this target takes
    unroll: tuple = UNROLL
    interleave: tuple = (1, 2, 3, 4)

    # ---------------------------------------------------------------- options

    def option(self, name: str) -> Option | None:
        return next((o for o in self.schema if o.name == name), None)

    def default_options(self, spec: Spec) -> Options:
        """Description options when the user gives none (the recommended ones)."""
        return Options()

    def default_options_for(self, spec: Spec, values: dict) -> Options:
        """Description options when the user gives none, given the target option values
        (e.g. --primitive); by default those of ``default_options``."""
        return self.default_options(spec)

    def skein_isas(self, v: Variant) -> tuple:
        """ISAs whose lanes hash_many of a Skein variant runs (verify forces each); () if none."""
        return ()

    def checker(self, v: Variant) -> str:
        """The verify checker of a variant (verify/matrix.py CHECKERS): the recipe's."""
        return self.recipe.checker

    def check_options(self, o: Options) -> Options:
        o.check()
        if o.keys not in self.keys:
            raise GenError(f"{self.name} supports --keys {' | '.join(self.keys)}, not {o.keys}")
        if o.unroll not in self.unroll:
            raise GenError(f"{self.name} needs --unroll {' | '.join(self.unroll)}, not {o.unroll}")
        if o.interleave not in self.interleave:
            raise GenError(f"{self.name} supports --interleave {', '.join(map(str, self.interleave))}, "
                           f"not {o.interleave}")
        return o

    def normalize(self, spec: Spec, values: dict) -> dict:
        """Target options with defaults filled in and each value checked against the schema;
        the result is what goes into Variant.extra (targets drop defaults they keep implicit)."""
        out = {}
        for name, value in values.items():
            opt = self.option(name)
            if opt is None:
                if value is None:
                    continue
                raise GenError(f"--{name} does not apply to --target {self.name}")
            if value is None:
                continue
            if opt.kind is bool:
                if not isinstance(value, bool):
                    raise GenError(f"--{name} is a flag (--{name} / --no-{name}), not {value!r}")
            elif opt.kind is int:
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    raise GenError(f"--{name} takes a whole number, not {value!r}") from None
            elif opt.choices is not None:
                value = str(value)
                match = [c for c in opt.choices if c.lower() == value.lower()]
                if not match:
                    raise GenError(f"--{name} {value!r} is not available for {self.name} "
                                   f"(choose from {', '.join(opt.choices)})")
                value = match[0]
            out[name] = value
        return out

    def variant(self, spec: Spec, options: Options | None = None, prefix: str = "", **values) -> Variant:
        """The one place a variant of this target is made: options filled and validated once."""
        o = self.check_options(options if options is not None else self.default_options(spec))
        extra = self.extra(spec, o, self.normalize(spec, values))
        v = Variant(self.name, spec, o, prefix or "", tuple(sorted(extra.items())))
        self.validate(v)
        return v

    def extra(self, spec: Spec, o: Options, values: dict) -> dict:
        """Variant.extra from checked option values (targets override to drop implicit defaults)."""
        return values

    def validate(self, v: Variant) -> None:
        """Checks that need the whole variant (combinations of options)."""

    # ---------------------------------------------------------------- catalogue

    def variants(self, which: str, specs) -> list[Variant]:
        raise NotImplementedError

    def recommended_lines(self) -> list[str]:
        """`threefish-gen list`: what `--set recommended` renders."""
        return []

    def list_lines(self) -> list[str]:
        """`threefish-gen list`: this target's line(s)."""
        return [f"  {self.name:<9} {self.summary}"]

    # ---------------------------------------------------------------- compile

    def passes(self, v: Variant) -> list[Pass]:
        """The compile of one variant: its passes, in the order :meth:`render` runs them."""
        raise NotImplementedError

    def render(self, v: Variant) -> dict[str, str]:
        """{file name: text}: the variant's passes, run."""
        return run_passes(self.passes(v), v)

    # ---------------------------------------------------------------- recipe

    def package_files(self, variants: list[Variant]) -> dict[str, str] | None:
        """`render --package DIR`: the project files that make the rendered files a package of the
        target's ecosystem (None: the target has no package format)."""
        return None

    def features(self, v: Variant) -> set[str]:
        """/proc/cpuinfo flags the variant needs to run natively."""
        return set()


def scalar_needs(v) -> list:
    """The programs a scalar target (C, Rust) prints: one block, and the interleaved blocks of
    its *_blocks functions."""
    o = v.options
    return [(d, o, n) for d in DIRECTIONS for n in sorted({1, o.interleave})]


def layout_scalar(v, programs) -> dict:
    """Layout scalar keeps the description's words one per 64-bit integer: the programs as W = 1
    layout IR programs (gen/layouts/scalar.py), one block and the interleaved blocks, and the
    op counts of the encrypt description."""
    o = v.options
    one = {d: programs[(d, o, 1)] for d in DIRECTIONS}
    return dict(one={d: scalar.lower(p) for d, p in one.items()},
                blocks={d: scalar.lower(programs[(d, o, o.interleave)]) for d in DIRECTIONS},
                counts=scalar.op_counts(one["encrypt"]))
