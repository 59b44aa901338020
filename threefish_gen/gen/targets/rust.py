"""Target ``rust``: a ``no_std`` Rust crate in safe Rust (u64, ``wrapping_add``, ``rotate_left``),
layout scalar, one crate per variant; with ``--primitive skein`` a Skein crate (hash, MAC, UBI
arguments, bit lengths, tree hashing, hash_many; the optional RustCrypto ``digest`` traits) whose
UBI block is the Threefish description fused by gen/skein.ubi_program, printed by the same printer.

Each variant renders a crate folder named after its stem: ``STEM/Cargo.toml``,
``STEM/src/lib.rs``, ``STEM/README.md`` (gen/output.py writes the nested names), so
``render --set recommended`` puts one crate per variant side by side.  Printer:
gen/printers/rust.py, templates/rust/ (skein*.j2 for Skein); the checker: verify/rust.py."""
from __future__ import annotations

from dataclasses import replace

from .. import skein
from ..dsl import count_ops
from ..errors import GenError
from ..printers import render_template
from ..printers import rust as printer
from ..spec import Spec
from ..threefish import KEYS, UNROLL, Options
from .base import (ANNOTATE_OPTION, PRIMITIVE_OPTION, WIPE_OPTION, Pass, Recipe, Target, describe_pass, is_skein,
                   layout_scalar, scalar_needs, ubi_pass, without_default_annotate, without_default_primitive)

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
    schema = (ANNOTATE_OPTION, PRIMITIVE_OPTION, WIPE_OPTION)

    def extra(self, spec, o, values):
        return without_default_primitive(without_default_annotate(values))

    def default_options(self, spec):
        return RECOMMENDED[spec.bits]

    def default_options_for(self, spec, values):
        if values.get("primitive") == "skein":      # UBI chains blocks: one block at a time
            return replace(RECOMMENDED[spec.bits], interleave=1)
        return self.default_options(spec)

    def checker(self, v):
        return "cargo-skein" if is_skein(v) else self.recipe.checker

    def validate(self, v):
        if is_skein(v) and v.options.interleave != 1:
            raise GenError("--primitive skein takes --interleave 1 (UBI chains its blocks one at a time)")
        crate = crate_name(v)
        if len(crate) > 64:
            raise GenError(f"crate name {crate!r} is longer than 64 characters (crates.io's limit): "
                           f"give a shorter --prefix")

    def variants(self, which, specs):
        """Threefish crates, then one Skein crate per spec (recommended and all: --keys fly
        --unroll full --interleave 1, as the C target's recommended Skein)."""
        sk = {"primitive": "skein"}
        skeins = [self.variant(s, self.default_options_for(s, sk), **sk) for s in specs]
        if which == "recommended":
            return [self.variant(s, RECOMMENDED[s.bits]) for s in specs] + skeins
        return [self.variant(s, o) for s in specs for o in option_sets(s)] + skeins

    def recommended_lines(self):
        return [f"  rust {bits:>4}: {o.describe()}" for bits, o in RECOMMENDED.items()] + \
            ["  rust skein (--primitive skein): every size, --keys fly --unroll full --interleave 1",
             "  rust: not in out/ yet (render --target rust --set recommended writes one crate folder per variant)"]

    def list_lines(self):
        return super().list_lines() + [
            "            one crate folder per variant (STEM/Cargo.toml, src/lib.rs, README.md): Threefish512::new(&key),",
            "            encrypt_block_with_tweak / decrypt_block_with_tweak, *_blocks_with_tweaks;",
            "            features zeroize (wipe through the zeroize crate) and std;",
            "            --primitive skein: Skein512::new(out_len) / new_keyed / with_params(&Params), update,",
            "            update_bits, finalize_into, hash, mac, hash_params, hash_bits, mac_bits, hash_many,",
            "            Skein512Tree (leaf, fan, max height); feature digest (RustCrypto digest 0.10 traits)"]

    def passes(self, v):
        if is_skein(v):
            return [ubi_pass(), Pass("print Rust Skein (gen/printers/rust.py)", "UBI Program",
                                     "STEM/Cargo.toml + STEM/src/lib.rs + STEM/README.md (templates/rust/skein*.j2)",
                                     print_rust_skein)]
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
    return f"{'Skein' if is_skein(v) else 'Threefish'}{v.spec.bits}"


def print_rust(v, laid) -> dict[str, str]:
    o = v.options
    notes = [f"layout scalar; keys {o.keys} (subkeys "
             + ("computed on the fly" if o.keys == "fly" else "from a table computed per block and tweak")
             + f"); unroll {o.unroll}; *_blocks_with_tweaks interleaves {o.interleave} block(s)",
             "ops per block (encrypt): " + ", ".join(f"{k} {n:g}" for k, n in laid["counts"].items())]
    annotate = v.get("annotate", ANNOTATE_OPTION.default)
    ctx = dict(spec=v.spec, command=v.command(), notes=notes, crate=crate_name(v), ty=type_name(v),
               interleave=o.interleave, wipe=v.get("wipe", True), rust_version=RUST_VERSION, skein=False,
               fn=printer.function_bodies(laid["one"], laid["blocks"], notes=annotate != "none"))
    d = crate_dir(v)
    return {f"{d}/Cargo.toml": render_template("rust/Cargo.toml.j2", **ctx),
            f"{d}/src/lib.rs": render_template("rust/lib.rs.j2", **ctx),
            f"{d}/README.md": render_template("rust/README.md.j2", **ctx)}


def _iv_rows(words, per=4) -> list[str]:
    """Rust array rows of 64-bit words, ``per`` to a row, each ending in a comma."""
    items = [f"{w:#018x}" for w in words]
    return [", ".join(items[i:i + per]) + "," for i in range(0, len(items), per)]


def print_rust_skein(v, prog) -> dict[str, str]:
    """The Skein crate: the UBI block (gen/skein.ubi_program, printed statement for statement by
    gen/printers/rust.py ubi_section) in templates/rust/skein.rs.j2, the IVs of the standard output
    lengths, the tree hashing and the digest traits (templates/rust/skein_digest.rs.j2)."""
    spec = v.spec
    nb = spec.block_bytes
    counts = dict(sorted(count_ops(prog.setup + prog.body).items()))
    notes = [f"Skein-{spec.bits}: UBI = Threefish-{spec.bits} keyed by the chaining value, feed-forward "
             f"fused; keys {v.options.keys}; unroll {v.options.unroll}",
             "ops per block (UBI): " + ", ".join(f"{k} {n:g}" for k, n in counts.items())]
    annotate = v.get("annotate", ANNOTATE_OPTION.default)
    outputs = skein.STANDARD_OUTPUTS[spec.bits]
    ctx = dict(spec=spec, command=v.command(), notes=notes, crate=crate_name(v), ty=type_name(v),
               wipe=v.get("wipe", True), rust_version=RUST_VERSION, skein=True, nb=nb, nw=spec.nw,
               nb_log2=nb.bit_length() - 1, tree_levels=64 - (2 * nb).bit_length() + 1,
               ubi=printer.ubi_section(prog, notes=annotate != "none"), digest=True,
               ivs=[(bits, _iv_rows(skein.iv_words(spec, bits))) for bits in outputs],
               std_outputs=outputs, std_len=spec.bits // 8)
    d = crate_dir(v)
    return {f"{d}/Cargo.toml": render_template("rust/Cargo.toml.j2", **ctx),
            f"{d}/src/lib.rs": render_template("rust/skein.rs.j2", **ctx),
            f"{d}/README.md": render_template("rust/skein_README.md.j2", **ctx)}


TARGET = Rust()
