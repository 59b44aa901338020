"""Target ``rust``: a ``no_std`` Rust crate in safe Rust (u64, ``wrapping_add``, ``rotate_left``),
layout scalar, one crate per variant.

Each variant renders a crate folder named after its stem: ``STEM/Cargo.toml``,
``STEM/src/lib.rs``, ``STEM/README.md`` (gen/output.py writes the nested names), so
``render --set recommended`` puts one crate per variant side by side.  Printer:
gen/printers/rust.py, templates/rust/; the checker: verify/rust.py."""
from __future__ import annotations

from ..errors import GenError
from ..printers import render_template
from ..printers import rust as printer
from ..spec import Spec
from ..threefish import KEYS, UNROLL, Options
from .base import (ANNOTATE_OPTION, WIPE_OPTION, Pass, Recipe, Target, describe_pass, layout_scalar,
                   scalar_needs, without_default_annotate)

# The options of the scalar C target's recommended variants (README, "Benchmarks"): the Rust
# kernel is the same statements, so the same choices; not measured for Rust yet.
RECOMMENDED = {
    256: Options(keys="fly", unroll="full", interleave=2),
    512: Options(keys="fly", unroll="full", interleave=1),
    1024: Options(keys="fly", unroll="full", interleave=1),
}
# The oldest Rust the crate builds with: edition 2021 (1.56), const generics over arrays and
# TryFrom<&mut [T]> for &mut [T; N] (1.51), core::hint::black_box (1.66).
RUST_VERSION = "1.66"


def option_sets(spec: Spec) -> list[Options]:
    """Every option set worth building: all key/unroll pairs, plus interleaving (as the C target)."""
    sets = [Options(k, u, 1) for k in KEYS for u in UNROLL]
    sets += [Options("fly", "full", 2), Options("fly", "loop", 2)]
    if RECOMMENDED[spec.bits] not in sets:
        sets.append(RECOMMENDED[spec.bits])
    return sets


class Rust(Target):
    name = "rust"
    summary = "no_std Rust crate, safe scalar code (u64), layout scalar; needs cargo (Rust 1.66+)"
    recipe = Recipe(checker="cargo", language="rust", interface="rust")
    schema = (ANNOTATE_OPTION, WIPE_OPTION)

    def extra(self, spec, o, values):
        return without_default_annotate(values)

    def default_options(self, spec):
        return RECOMMENDED[spec.bits]

    def validate(self, v):
        crate = crate_name(v)
        if len(crate) > 64:
            raise GenError(f"crate name {crate!r} is longer than 64 characters (crates.io's limit): "
                           f"give a shorter --prefix")

    def variants(self, which, specs):
        if which == "recommended":
            return [self.variant(s, RECOMMENDED[s.bits]) for s in specs]
        return [self.variant(s, o) for s in specs for o in option_sets(s)]

    def recommended_lines(self):
        return [f"  rust {bits:>4}: {o.describe()}" for bits, o in RECOMMENDED.items()] + \
            ["  rust: not in out/ yet (render --target rust --set recommended writes one crate folder per variant)"]

    def list_lines(self):
        return super().list_lines() + [
            "            one crate folder per variant (STEM/Cargo.toml, src/lib.rs, README.md): Threefish512::new(&key),",
            "            encrypt_block_with_tweak / decrypt_block_with_tweak, *_blocks_with_tweaks;",
            "            features zeroize (wipe through the zeroize crate) and std"]

    def passes(self, v):
        return [describe_pass(scalar_needs),
                Pass("layout scalar (gen/layouts/scalar.py)", "Program",
                     "Program (one word per u64) + op counts", layout_scalar),
                Pass("print Rust (gen/printers/rust.py)", "Program",
                     "STEM/Cargo.toml + STEM/src/lib.rs + STEM/README.md (templates/rust/)", print_rust)]


def crate_name(v) -> str:
    """The crate's (package and library) name: the variant's file stem."""
    return v.stem.lower()


def crate_dir(v) -> str:
    """The folder the crate is rendered into (inside --out): the variant's file stem."""
    return v.stem


def type_name(v) -> str:
    return f"Threefish{v.spec.bits}"


def print_rust(v, laid) -> dict[str, str]:
    o = v.options
    notes = [f"layout scalar; keys {o.keys} (subkeys "
             + ("computed on the fly" if o.keys == "fly" else "from a table computed per block and tweak")
             + f"); unroll {o.unroll}; *_blocks_with_tweaks interleaves {o.interleave} block(s)",
             "ops per block (encrypt): " + ", ".join(f"{k} {n:g}" for k, n in laid["counts"].items())]
    annotate = v.get("annotate", ANNOTATE_OPTION.default)
    ctx = dict(spec=v.spec, command=v.command(), notes=notes, crate=crate_name(v), ty=type_name(v),
               interleave=o.interleave, wipe=v.get("wipe", True), rust_version=RUST_VERSION,
               fn=printer.function_bodies(laid["one"], laid["blocks"], notes=annotate != "none"))
    d = crate_dir(v)
    return {f"{d}/Cargo.toml": render_template("rust/Cargo.toml.j2", **ctx),
            f"{d}/src/lib.rs": render_template("rust/lib.rs.j2", **ctx),
            f"{d}/README.md": render_template("rust/README.md.j2", **ctx)}


TARGET = Rust()
