"""Rust rows of ``make bench``: the rendered Rust crates called from the C timing programs.

One static library (a shim crate, ``crate-type = ["staticlib"]``, release profile as cargo's
default: opt-level 3) depends by path on the rendered crates and exports, per Threefish variant,
the two functions of bench.c's contract (``Pencrypt``, ``Pencrypt_blocks``), and for a Skein
crate ``bench_rust_skein512_hash(msg, len, out, out_len)`` (harness/skein_bench.c with
``-DHAVE_RUST_SKEIN``).  So the Rust rows go through the same checks and the same measurement
loop as the C rows, alternated with them sample by sample (harness/bench.c's method).

What a call costs beyond the crate's own code: the Rust API transforms blocks in place, and
bench.c's buffers are separate (in != out), so a bulk call first copies ``in`` to ``out`` (4 KiB:
well under 1% of the time of a call) and a chained call copies the block word by word (8-byte
volatile loads and stores, so the kernel's 8-byte loads of ``out`` forward from stores of their own
size: a memcpy, or a copy through a local array, let the compiler move wider pieces, and on Zen 4
single blocks then ran 1.03-1.18x the C's, by block size, against 0.94-1.03x this way), then runs
``Threefish::new(key)`` (the C target's ``encrypt`` also takes the key on every call and runs the
same setup) and the in-place method.

Offline: cargo runs with verify/rust.py's ``cargo_env`` (crates.io replaced by Debian's local
registry in a CARGO_HOME under the work folder; nothing written into the crates or ``~/.cargo``).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.render import render_variant, write_files
from threefish_gen.gen.targets import rust as rust_target
from threefish_gen.gen.variant import Variant

TARGET = rust_target.TARGET
COMPILER = "cargo"        # the "compiler" column of a Rust row (row name: "rust fly/full/i1 cargo")
# what rustc links a std staticlib against on Linux (the fallback when cargo's note is not printed:
# a cached build prints nothing)
NATIVE_LIBS = ["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]

SHIM_TOML = """# written by threefish-gen bench: the Rust rows' C-ABI shim over the rendered crates
[package]
name = "tfgen-bench-rust"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
crate-type = ["staticlib"]
path = "src/lib.rs"

[dependencies]
{deps}

[workspace]
"""


def missing() -> str | None:
    """Why the Rust rows cannot be built here (cargo, Debian's registry), or None."""
    from threefish_gen.verify.rust import RUNS, SKEIN_REGISTRY, CargoRun
    release = next(r for r in RUNS if r.name == "cargo release")
    return CargoRun(release.name, registry=SKEIN_REGISTRY).missing()


def symbol_prefix(v: Variant) -> str:
    """The C symbol prefix of a Threefish variant's shim functions (a crate with SIMD paths: its
    --isa too)."""
    o = v.options
    isa = f"{v.get('isa')}_" if v.get("isa") else ""
    return f"rs{v.spec.bits}_{isa}{o.keys}_{o.unroll}_i{o.interleave}_"


def crate_features(v: Variant) -> str:
    """The dependency's features: a crate with SIMD paths is built with ``std`` (run-time CPU
    detection, as an application would), so the rows take the path this CPU has."""
    return ', features = ["std"]' if v.get("isa") else ""


def _threefish_fns(v: Variant, alias: str) -> str:
    nb, p = v.spec.block_bytes, symbol_prefix(v)
    ty = f"{alias}::Threefish{v.spec.bits}"
    return f"""
/// # Safety
/// bench.c's contract: key, tweak {nb}/16 bytes, in and out {nb} bytes each (out writable), in and
/// out 8-byte aligned (bench.c's buffers are 64-byte aligned).
#[no_mangle]
pub unsafe extern "C" fn {p}encrypt(key: *const u8, tweak: *const u8, inp: *const u8, out: *mut u8) {{
    if inp != out as *const u8 {{
        // word by word (volatile: never merged into wider moves), so the kernel's 8-byte loads
        // of out forward from stores of their own size, as the C rows load in
        for i in 0..{nb} / 8 {{
            let w = core::ptr::read_volatile((inp as *const u64).add(i));
            core::ptr::write_volatile((out as *mut u64).add(i), w);
        }}
    }}
    let (key, tweak) = (&*(key as *const [u8; {nb}]), &*(tweak as *const [u8; 16]));
    {ty}::new(key).encrypt_block_with_tweak(&mut *(out as *mut [u8; {nb}]), tweak);
}}

/// # Safety
/// bench.c's contract: n blocks of {nb} bytes in and out, n tweaks of 16 bytes.
#[no_mangle]
pub unsafe extern "C" fn {p}encrypt_blocks(key: *const u8, tweaks: *const u8, inp: *const u8, out: *mut u8,
                                           n: usize) {{
    if n == 0 {{
        return;
    }}
    if inp != out as *const u8 {{
        core::ptr::copy_nonoverlapping(inp, out, n * {nb});
    }}
    let blocks = core::slice::from_raw_parts_mut(out as *mut [u8; {nb}], n);
    let tweaks = core::slice::from_raw_parts(tweaks as *const [u8; 16], n);
    {ty}::new(&*(key as *const [u8; {nb}])).encrypt_blocks_with_tweaks(blocks, tweaks);
}}
"""


def _skein_fns(v: Variant, alias: str) -> str:
    return f"""
/// # Safety
/// msg: len bytes; out: out_len writable bytes.
#[no_mangle]
pub unsafe extern "C" fn bench_rust_skein{v.spec.bits}_hash(msg: *const u8, len: usize, out: *mut u8, out_len: usize) {{
    let msg: &[u8] = if len == 0 {{ &[] }} else {{ core::slice::from_raw_parts(msg, len) }};
    {alias}::Skein{v.spec.bits}::hash(msg, core::slice::from_raw_parts_mut(out, out_len));
}}
"""


def build(variants: list[Variant], workdir: Path, timeout: float | None = None) -> tuple[Path, list[str]]:
    """Render the crates of ``variants`` (Threefish and Skein, Rust target) into
    ``workdir/crates``, write the shim crate in ``workdir/shim`` and build it (release, offline).
    Returns (the static library, the linker arguments it needs).  GenError when cargo fails."""
    from threefish_gen.verify.rust import cargo_env, crate_of
    workdir = Path(workdir).resolve()
    crates, shim = workdir / "crates", workdir / "shim"
    if crates.exists():
        shutil.rmtree(crates)
    deps, body = [], []
    for i, v in enumerate(variants):
        files = render_variant(v)
        write_files(files, crates)
        toml = next(crates / f for f in files if f.endswith("Cargo.toml"))
        alias = f"c{i}"
        deps.append(f'{alias} = {{ path = "{toml.parent.as_posix()}", package = "{crate_of(toml.read_text())}"'
                    f'{crate_features(v)} }}')
        body.append(_skein_fns(v, alias) if v.primitive == "skein" else _threefish_fns(v, alias))
    (shim / "src").mkdir(parents=True, exist_ok=True)
    (shim / "Cargo.toml").write_text(SHIM_TOML.format(deps="\n".join(deps)))
    (shim / "src" / "lib.rs").write_text("// written by threefish-gen bench (tools/bench/rust_rows.py)\n"
                                         "#![allow(clippy::missing_safety_doc)]\n" + "".join(body))
    cmd = ["cargo", "rustc", "--offline", "--release", "--lib", "--", "--print", "native-static-libs"]
    try:
        p = subprocess.run(cmd, cwd=shim, env=cargo_env(workdir), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GenError(f"bench: cargo build of the Rust rows timed out after {timeout:.0f} s") from None
    out = p.stdout + p.stderr
    if p.returncode:
        err = [ln for ln in out.splitlines() if ln.startswith("error")][:2] or out.strip().splitlines()[-2:]
        raise GenError(f"bench: cargo build of the Rust rows failed: {' / '.join(err)}")
    lib = workdir / "target" / "release" / "libtfgen_bench_rust.a"
    if not lib.exists():
        raise GenError(f"bench: cargo built no {lib.name}")
    m = re.search(r"native-static-libs: (.*)", out)
    return lib, (m.group(1).split() if m else NATIVE_LIBS)


SIMD_GOAL = 1.05     # issue 29: Rust AVX-512/AVX2 lanes within 1.05x of the SIMD C


def simd_pairs(entries) -> list[tuple[str, str]]:
    """(Rust SIMD row, SIMD C row) name pairs: each Rust crate with one SIMD path (--isa avx2 or
    avx512) beside the c-simd lanes row of the same ISA and options, where both are timed."""
    out = []
    for name, v, _ in entries:
        if v.target != TARGET.name or v.get("isa") not in ("avx2", "avx512"):
            continue
        twin = next((n for n, w, _ in entries if w.target != TARGET.name and w.get("isa") == v.get("isa")
                     and w.get("layout", "lanes") == "lanes" and w.options == v.options and w.spec == v.spec), None)
        if twin:
            out.append((name, twin))
    return list(dict.fromkeys(out))       # entries hold a row name once per size


def simd_lines(results, entries, goal: float = SIMD_GOAL) -> list[str]:
    """Per size, bulk, 'rust ROW / c-simd ROW = 1.02 (paired: min, spread; goal <= 1.05: verdict)':
    the median of the per-round ratios of the two rows' samples (paired.py); a noisy figure is
    not judged.  Chained rows are left out: single blocks run the scalar code.  Lines only,
    nothing fails."""
    from . import paired
    lines = []
    for rust, c in simd_pairs(entries):
        for r in sorted((x for x in results if x.name == rust and x.mode == "bulk"), key=lambda x: x.bits):
            twin = next((x for x in results if x.name == c and x.bits == r.bits and x.mode == r.mode), None)
            if twin is None:
                continue
            got, how, judged = paired.judged_ratio(r, twin, goal)
            lines.append(f"  Threefish-{r.bits:<5} {r.mode:<8} {rust} / {c} = {got.median:.2f} ({how}; "
                         f"goal <= {goal:.2f}: {judged}) [{r.cpb:.2f} / {twin.cpb:.2f} c/B]")
    return lines
