"""Target ``rust``: a ``no_std`` Rust crate in safe Rust (u64, ``wrapping_add``, ``rotate_left``),
layout scalar, one crate per variant; with ``--primitive skein`` a Skein crate (hash, MAC, UBI
arguments, bit lengths, tree hashing, hash_many; the optional RustCrypto ``digest`` traits) whose
UBI block is the Threefish description fused by gen/skein.ubi_program, printed by the same printer.
With ``--isa avx2 | avx512 | neon | auto`` the Threefish crate's ``*_blocks_with_tweaks`` also run
the lanes layout (gen/layouts/lanes.py) in ``core::arch`` vectors (cargo feature ``simd``; the
vector ops spelled by gen/isa/x86.py ``RustWidth`` / gen/isa/neon.py ``RustNeonWidth``, printed by
gen/printers/rust.py ``LanesPrinter``).

Each variant renders a crate folder named after its stem: ``STEM/Cargo.toml``,
``STEM/src/lib.rs``, ``STEM/README.md`` (gen/output.py writes the nested names), so
``render --set recommended`` puts one crate per variant side by side.  Printer:
gen/printers/rust.py, templates/rust/ (skein*.j2 for Skein); the checker: verify/rust.py."""
from __future__ import annotations

from dataclasses import replace

from .. import skein
from ..dsl import count_ops
from ..errors import GenError
from ..isa import ISAS
from ..isa import neon as neon_isa
from ..layouts import scalar as scalar_layout
from ..layouts.lay_out import lay_out
from ..printers import render_template
from ..printers import rust as printer
from ..printers.c_simd.driver import ENV_VAR
from ..spec import Spec
from ..threefish import KEYS, UNROLL, Options, loop_cycles
from .c_simd import RECOMMENDED as C_SIMD_PATHS
from .c_simd import RECOMMENDED_NEON as C_SIMD_NEON_PATHS
from .base import (ANNOTATE_OPTION, DIRECTIONS, PRIMITIVE_OPTION, WIPE_OPTION, Option, Pass, Recipe, Target,
                   describe_pass, is_skein, layout_scalar, scalar_needs, ubi_pass, without_default_annotate,
                   without_default_primitive)

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
# ... with SIMD paths: the AVX-512 intrinsics and target features (1.89), safe intrinsic calls
# inside #[target_feature] functions (1.87), slice::as_chunks (1.88).
RUST_VERSION_SIMD = "1.89"

# --isa: the SIMD paths of *_blocks_with_tweaks (cargo feature simd, x86-64), in core::arch lanes
# (the lanes layout, L blocks word-sliced: gen/layouts/lanes.py).  scalar: none (the default,
# kept out of names: the crate of before); avx2 / avx512: that one path, every function with
# the variant's options (as c-simd's standalone --isa variants); auto: all, each path with its
# options in SIMD_OPTIONS, the scalar methods with the variant's.
ISA_OPTION = Option("isa", "scalar (default) | avx2 | avx512 | neon | auto (all three): *_blocks_with_tweaks in "
                    "core::arch lanes (cargo feature simd; x86-64, neon: little-endian AArch64)",
                    ("scalar", "avx2", "avx512", "neon", "auto"), "scalar")
SIMD_ISAS = ("avx2", "avx512")
# The AArch64 path (issue 29): NEON lanes, 2 blocks per 128-bit vector, in its own `mod simd`
# under cfg(target_arch = "aarch64", target_endian = "little"): NEON is architectural there (no
# run-time detection), the row helpers read little-endian words.  --isa auto has it beside the x86
# paths, with its SIMD_OPTIONS.
NEON_ISAS = ("neon",)
# The cfg of each architecture's `mod simd` (templates/rust/simd.rs.j2) and its core::arch module.
ARCH_CFG = {"x86_64": 'target_arch = "x86_64"', "aarch64": 'target_arch = "aarch64", target_endian = "little"'}
ARCH_TEXT = {"x86_64": "x86-64", "aarch64": "little-endian AArch64"}
# The recommended crates (--set recommended) have both paths: bulk ran 0.39-0.51x the scalar
# crate's cycles/byte and single blocks the same code (AMD EPYC Zen 3, AVX2 path; docs/rust.md,
# "SIMD paths").  A render without --isa stays the scalar crate (forbid(unsafe_code)).
RECOMMENDED_ISA = "auto"
# The lanes paths of --isa auto, per size and ISA: the options of the SIMD C dispatcher's lanes
# path of that ISA (gen/targets/c_simd.py RECOMMENDED, RECOMMENDED_NEON: the same lanes layout IR,
# printed in C, measured there), one table for both targets: every path the loop over 24-round
# passes, AVX-512 interleaved at 256 and 512 (--interleave 4 and 2: independent lane groups per
# pass).  One fly/loop/i1 kernel for every path (before) left Rust's
# AVX-512 path a latency-bound single chain: 1.25x the SIMD C's cycles/byte at 256 on Zen 4
# (docs/rust.md, "Speed").
SIMD_OPTIONS = {bits: {isa: o for isa, layout, o in C_SIMD_PATHS[bits] + C_SIMD_NEON_PATHS[bits] if layout == "lanes"}
                for bits in (256, 512, 1024)}
# The crates a rendered crate's Cargo.toml names (optional dependencies, templates/rust/), by
# primitive: cargo resolves them even where no feature asks for them, so verify's offline builds
# (verify/rust.py) need each in Debian's local registry, whose package for crate NAME is
# librust-NAME-dev; scripts/bootstrap.sh installs those (it reads this literal, with ast).
CRATES = {"threefish": ("zeroize",), "skein": ("zeroize", "digest")}


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
    schema = (ANNOTATE_OPTION, ISA_OPTION, PRIMITIVE_OPTION, WIPE_OPTION)

    def extra(self, spec, o, values):
        values = {k: v for k, v in values.items() if not (k == "isa" and v == ISA_OPTION.default)}
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
        if is_skein(v) and v.get("isa"):
            raise GenError("--primitive skein takes no --isa (the Rust Skein crate has no SIMD paths yet)")
        crate = crate_name(v)
        if len(crate) > 64:
            raise GenError(f"crate name {crate!r} is longer than 64 characters (crates.io's limit): "
                           f"give a shorter --prefix")

    def variants(self, which, specs):
        """Threefish crates, then one Skein crate per spec (recommended and all: --keys fly
        --unroll full --interleave 1, as the C target's recommended Skein).  recommended: the
        --isa auto crate of the recommended options; all: the scalar crates of every option set,
        then the recommended ones."""
        sk = {"primitive": "skein"}
        skeins = [self.variant(s, self.default_options_for(s, sk), **sk) for s in specs]
        rec = [self.variant(s, RECOMMENDED[s.bits], isa=RECOMMENDED_ISA) for s in specs]
        if which == "recommended":
            return rec + skeins
        return [self.variant(s, o) for s in specs for o in option_sets(s)] + rec + skeins

    def recommended_lines(self):
        return [f"  rust {bits:>4}: --isa {RECOMMENDED_ISA} {o.describe()} (SIMD paths: "
                + ", ".join(f"{isa} {p.keys}/{p.unroll}/i{p.interleave}" for isa, p in SIMD_OPTIONS[bits].items()) + ")"
                for bits, o in RECOMMENDED.items()] + \
            ["  rust skein (--primitive skein): every size, --keys fly --unroll full --interleave 1",
             "  rust: out/rust (make gen): one crate folder per recommended variant"]

    def list_lines(self):
        return super().list_lines() + [
            "            one crate folder per variant (STEM/Cargo.toml, src/lib.rs, README.md): Threefish512::new(&key),",
            "            encrypt_block_with_tweak / decrypt_block_with_tweak, *_blocks_with_tweaks;",
            "            features zeroize (wipe through the zeroize crate) and std;",
            "            --primitive skein: Skein512::new(out_len) / new_keyed / with_params(&Params), update,",
            "            update_bits, finalize_into, hash, mac, hash_params, hash_bits, mac_bits, hash_many,",
            "            Skein512Tree (leaf, fan, max height); feature digest (RustCrypto digest 0.10 traits)",
            "            --isa avx2 | avx512 | neon | auto: *_blocks_with_tweaks in core::arch lanes (feature simd,",
            "            default; std: run-time detection, $THREEFISH_GEN_ISA caps it; x86-64, neon: little-endian",
            "            AArch64, no detection), simd_path() names the path"]

    def passes(self, v):
        if simd_paths(v):
            return [describe_pass(simd_needs, cycles=lambda v: loop_cycles(v.spec, vector=True)),
                    Pass("layout scalar (gen/layouts/scalar.py) + lanes per SIMD path (gen/layouts/lanes.py)",
                         "Program", "VPrograms (W = 1: scalar methods; lanes and W = 1: SIMD paths) + op counts",
                         layout_simd),
                    Pass("print Rust (gen/printers/rust.py; vector ops spelled by gen/isa/x86.py)", "VPrograms",
                         "STEM/Cargo.toml + STEM/src/lib.rs + STEM/README.md (templates/rust/)", print_rust)]
        if is_skein(v):
            return [ubi_pass(), Pass("print Rust Skein (gen/printers/rust.py)", "UBI Program",
                                     "STEM/Cargo.toml + STEM/src/lib.rs + STEM/README.md (templates/rust/skein*.j2)",
                                     print_rust_skein)]
        return [describe_pass(scalar_needs),
                Pass("layout scalar (gen/layouts/scalar.py)", "Program",
                     "VProgram (W = 1: one word per u64) + op counts", layout_scalar),
                Pass("print Rust (gen/printers/rust.py)", "VProgram",
                     "STEM/Cargo.toml + STEM/src/lib.rs + STEM/README.md (templates/rust/)", print_rust)]


def simd_paths(v) -> list[tuple[str, Options]]:
    """The variant's SIMD paths, highest first: (isa, options of its lanes kernel)."""
    isa = v.get("isa")
    if isa == "auto":
        return [(i, SIMD_OPTIONS[v.spec.bits][i]) for i in (*reversed(SIMD_ISAS), *NEON_ISAS)]
    return [(isa, v.options)] if isa in SIMD_ISAS + NEON_ISAS else []


def path_arch(isa_name: str) -> str:
    """The target_arch a SIMD path is built for."""
    return "aarch64" if isa_name in NEON_ISAS else "x86_64"


def simd_needs(v) -> list:
    """The programs of a variant with SIMD paths: the scalar methods', then each path's (one
    block, and the interleaved blocks of its passes)."""
    shapes = dict.fromkeys(scalar_needs(v))
    for _, o in simd_paths(v):
        shapes.update(dict.fromkeys((d, o, n) for d in DIRECTIONS for n in sorted({1, o.interleave}, reverse=True)))
    return list(shapes)


def layout_simd(v, programs) -> dict:
    """The scalar methods' programs (layout scalar: W = 1 layout IR) and each SIMD path's
    programs, {isa: {direction: {"lanes": [...], "scalar": [...]}}}: its description programs (the
    interleaved one (if any), then the one-block one) in layout lanes for the ISA's vectors (the
    passes the path prints) and at W = 1 (their key schedules: the struct's words and rings, and
    the rings the path makes itself)."""
    laid = layout_scalar(v, programs)
    laid["simd"] = {}
    for isa, o in simd_paths(v):
        L = ISAS[isa].bits // 64
        laid["simd"][isa] = {}
        for d in DIRECTIONS:
            progs = [programs[(d, o, n)] for n in sorted({1, o.interleave}, reverse=True)]
            laid["simd"][isa][d] = {"lanes": [lay_out(p, "lanes", L) for p in progs],
                                    "scalar": [lay_out(p, "scalar") for p in progs]}
    return laid


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
    simd_scalar = [vp for dirs in laid.get("simd", {}).values() for path in dirs.values() for vp in path["scalar"]]
    fn = printer.function_bodies(laid["one"], laid["blocks"], notes=annotate != "none", simd_scalar=simd_scalar)
    simd = simd_context(v, laid.get("simd", {}), fn["schedule"], laid["one"]["encrypt"].setup, annotate != "none")
    if simd:
        notes += simd["notes"]
    ctx = dict(spec=v.spec, command=v.command(), notes=notes, crate=crate_name(v), ty=type_name(v),
               interleave=o.interleave, wipe=v.get("wipe", True), skein=False, fn=fn, simd=simd,
               rust_version=RUST_VERSION_SIMD if simd else RUST_VERSION)
    d = crate_dir(v)
    return {f"{d}/Cargo.toml": render_template("rust/Cargo.toml.j2", **ctx),
            f"{d}/src/lib.rs": render_template("rust/lib.rs.j2", **ctx),
            f"{d}/README.md": render_template("rust/README.md.j2", **ctx)}


def simd_context(v, laid_simd: dict, schedule: dict, setup, notes: bool) -> dict | None:
    """The template's view of the SIMD paths (None: a scalar crate): per path, highest first,
    its ISA, the target features it enables, its run-time and compile-time tests and each
    direction's function (gen/printers/rust.py simd_path); the row helpers; the level names
    (lowest first) that ``simd_path()`` returns and $THREEFISH_GEN_ISA caps."""
    if not laid_simd:
        return None
    paths, out_notes = [], []
    for (isa_name, o) in simd_paths(v):
        isa = ISAS[isa_name]
        # NEON: no run-time detection, the Rust target feature "neon" (the record's features are
        # the /proc/cpuinfo flag, "asimd")
        features = (neon_isa.RUST_FEATURE,) if isa_name in NEON_ISAS else isa.features
        fns = {d: printer.simd_path(isa, laid_simd[isa_name][d]["lanes"], laid_simd[isa_name][d]["scalar"][0],
                                    schedule, setup, notes) for d in DIRECTIONS}
        paths.append(dict(name=isa_name, feature=isa.target or neon_isa.RUST_FEATURE, features=features, fns=fns,
                          min_blocks=min(p for p, _ in fns["encrypt"]["loops"]), isa=isa,
                          wipes_vectors=any(f["wiped"] for f in fns.values())))
        cost = fns["encrypt"]["cost"]
        out_notes.append(f"SIMD path {isa_name} ({'+'.join(features)}): *_blocks_with_tweaks in lanes, "
                         f"{isa.bits // 64} blocks word-sliced in {isa.bits}-bit vectors, passes of "
                         + ", then ".join(str(p) for p, _ in fns["encrypt"]["loops"])
                         + f" blocks; keys {o.keys}, unroll {o.unroll}; vector ops per block (encrypt): "
                         + ", ".join(f"{k} {n:g}" for k, n in sorted(cost.items())))
    levels = ["scalar"] + [p["name"] for p in reversed(paths)]
    modules = []
    for arch in dict.fromkeys(path_arch(p["name"]) for p in paths):
        mine = [p for p in paths if path_arch(p["name"]) == arch]
        modules.append(dict(arch=arch, neon=arch == "aarch64", paths=mine, cfg=f'all(feature = "simd", {ARCH_CFG[arch]})',
                            levels=["scalar"] + [p["name"] for p in reversed(mine)],
                            helpers=printer.memory_helpers(mine[0]["isa"], [f for p in mine for f in p["fns"].values()])))
    archs = [m["arch"] for m in modules]
    cfg = modules[0]["cfg"] if len(modules) == 1 else \
        'all(feature = "simd", any(' + ", ".join(f"all({ARCH_CFG[a]})" if "," in ARCH_CFG[a] else ARCH_CFG[a]
                                             for a in archs) + "))"
    return dict(paths=paths, levels=levels, env_var=ENV_VAR, notes=out_notes, modules=modules, cfg=cfg,
                arch_text=" and ".join(ARCH_TEXT[a] for a in archs))


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
               ubi=printer.ubi_section(scalar_layout.lower(prog, fuse=True), notes=annotate != "none"), digest=True,
               ivs=[(bits, _iv_rows(skein.iv_words(spec, bits))) for bits in outputs],
               std_outputs=outputs, std_len=spec.bits // 8)
    d = crate_dir(v)
    return {f"{d}/Cargo.toml": render_template("rust/Cargo.toml.j2", **ctx),
            f"{d}/src/lib.rs": render_template("rust/skein.rs.j2", **ctx),
            f"{d}/README.md": render_template("rust/skein_README.md.j2", **ctx)}


TARGET = Rust()
