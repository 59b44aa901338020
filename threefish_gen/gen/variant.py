"""A *variant*: one target plus everything that selects its code.

The target is named by its registry name (``gen/targets/``); the spec and the description
options select the program; ``extra`` holds the target's own options as sorted (name, value)
pairs, already validated by the target's descriptor (``Target.variant``)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import header
from .errors import GenError
from .spec import Spec
from .threefish import Options

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Variant:
    target: str
    spec: Spec
    options: Options = Options()
    prefix: str = ""
    extra: tuple = field(default=())  # target options as sorted (name, value) pairs

    def get(self, name: str, default=None):
        """A target option (e.g. isa, layout, abi), or default."""
        return dict(self.extra).get(name, default)

    def __post_init__(self):
        self.options.check()
        if not self.prefix:
            object.__setattr__(self, "prefix", self.default_prefix())
        if not IDENT.fullmatch(self.prefix):
            raise GenError(f"--prefix {self.prefix!r} is not a C identifier prefix (letters, digits, _; not starting with a digit)")

    def default_prefix(self) -> str:
        """Names the size, version and variant, so several variants link into one program."""
        o = self.options
        tag = f"{o.keys}_{o.unroll}" + (f"_i{o.interleave}" if o.interleave > 1 else "")
        extra = "".join(f"_{re.sub(r'[^A-Za-z0-9]', '', _word(k, v))}" for k, v in self.extra if k != "primitive")
        target = self.target.replace("-", "")
        base = "skein" if self.primitive == "skein" else "tf"
        return f"{base}{self.spec.bits}_v{self.spec.version.replace('.', '')}_{target}{extra}_{tag}_"

    @property
    def primitive(self) -> str:
        """threefish (the block cipher) or skein (the hash over it): names and files say which."""
        return self.get("primitive", "threefish")

    @property
    def stem(self) -> str:
        """File names (without extension).  The default prefix already names size, version and
        variant; a prefix the user chose (e.g. ``tf_``) gets the primitive, the size and the target
        added, so renders of different sizes or targets into one folder never collide."""
        if self.prefix == self.default_prefix():
            return self.prefix.rstrip("_")
        return f"{self.prefix.rstrip('_')}_{self.primitive}{self.spec.bits}_{self.target.replace('-', '')}"

    def command(self, prefix_option: str = "prefix") -> str:
        """The render command the files' header comment records (gen/header.py: one writer, one
        reader)."""
        return header.command(self, prefix_option)

    def label(self) -> str:
        o = self.options
        extra = "".join(f" {_word(k, v)}" for k, v in self.extra)
        return (f"{self.target}{extra} {self.spec.bits} v{self.spec.version} "
                f"{o.keys}/{o.unroll}/i{o.interleave}")


def _word(name: str, value) -> str:
    """A target option's value in names and labels: a flag reads as its name or no-name."""
    if isinstance(value, bool):
        return name if value else f"no-{name}"
    return str(value)
