"""Rendering variants to files, and writing them atomically.

A *variant* is a target plus everything that selects its code: spec, description
options and target options.  ``render_variant`` returns ``{file name: text}``;
``write_files`` puts them in place only once every file rendered, so a failure
never leaves anything half-written.
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .errors import GenError
from .layouts import scalar
from .printers import c as cprinter
from .printers import render_template
from .spec import Spec
from .threefish import Options, describe

# Target name -> renderer(variant) -> {file name: text}.  Each target module registers itself.
TARGETS: dict = {}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
        if self.target not in TARGETS:
            raise GenError(f"unknown target {self.target!r} (choose from {', '.join(TARGETS)})")
        self.options.check()
        if not self.prefix:
            object.__setattr__(self, "prefix", self.default_prefix())
        if not _IDENT.match(self.prefix):
            raise GenError(f"prefix {self.prefix!r} is not a C identifier prefix")

    def default_prefix(self) -> str:
        """Names the size, version and variant, so several variants link into one program."""
        o = self.options
        tag = f"{o.keys}_{o.unroll}" + (f"_i{o.interleave}" if o.interleave > 1 else "")
        extra = "".join(f"_{re.sub(r'[^A-Za-z0-9]', '', str(v))}" for _, v in self.extra)
        target = self.target.replace("-", "")
        return f"tf{self.spec.bits}_v{self.spec.version.replace('.', '')}_{target}{extra}_{tag}_"

    @property
    def stem(self) -> str:
        return self.prefix.rstrip("_") or "threefish"

    def command(self) -> str:
        o = self.options
        return (f"threefish-gen render --target {self.target} --size {self.spec.bits} "
                f"--version {self.spec.version} --keys {o.keys} --unroll {o.unroll} "
                f"--interleave {o.interleave}"
                + "".join(f" --{k} {v}" for k, v in self.extra) + f" --prefix {self.prefix}")

    def label(self) -> str:
        o = self.options
        extra = "".join(f" {v}" for _, v in self.extra)
        return (f"{self.target}{extra} {self.spec.bits} v{self.spec.version} "
                f"{o.keys}/{o.unroll}/i{o.interleave}")


def render_variant(v: Variant) -> dict[str, str]:
    return TARGETS[v.target](v)


def _render_c(v: Variant) -> dict[str, str]:
    progs = {d: describe(v.spec, v.options, d, 1) for d in ("encrypt", "decrypt")}
    bprogs = {d: describe(v.spec, v.options, d, v.options.interleave) for d in ("encrypt", "decrypt")}
    counts = scalar.op_counts(progs["encrypt"])
    notes = [f"layout scalar; keys {v.options.keys} (subkeys "
             + ("computed on the fly" if v.options.keys == "fly" else "from a precomputed table")
             + f"); unroll {v.options.unroll}; encrypt_blocks interleaves {v.options.interleave} block(s)",
             "ops per block (encrypt): " + ", ".join(f"{k} {n:g}" for k, n in counts.items())]
    ctx = dict(spec=v.spec, prefix=v.prefix, command=v.command(), notes=notes,
               header=f"{v.stem}.h", guard=f"{v.stem.upper()}_H", interleave=v.options.interleave,
               fn=cprinter.function_bodies(v.prefix, progs, bprogs))
    return {f"{v.stem}.c": render_template("c/threefish.c.j2", **ctx),
            f"{v.stem}.h": render_template("c/threefish.h.j2", **ctx)}


TARGETS["c"] = _render_c

from .printers import csharp as _csharp  # noqa: E402  (C# target, layouts scalar and lanes)

TARGETS["csharp"] = _csharp.render


def _render_nasm(v: Variant) -> dict[str, str]:
    from .printers import nasm
    return nasm.render(v)


TARGETS["nasm-x64"] = _render_nasm
TARGETS["nasm-x86"] = _render_nasm


def write_files(files: dict[str, str], out_dir: str | Path) -> list[Path]:
    """Write every file or none: render to temporaries in out_dir, then rename into place."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GenError(f"cannot create output folder {out}: {e.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise GenError(f"output folder {out} is not writable")
    temps: list[tuple[str, Path]] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for name, text in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=out)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.chmod(tmp, 0o666 & ~umask)      # mkstemp makes 0600; give the usual file mode
            temps.append((tmp, out / name))
        for tmp, final in temps:
            os.replace(tmp, final)
    except OSError as e:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise GenError(f"cannot write into {out}: {e.strerror or e}") from None
    return [final for _, final in temps]

from . import render_simd as _render_simd  # noqa: E402,F401  (registers the c-simd target)
