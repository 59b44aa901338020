"""verify for the Rust target: the rendered crate built offline with cargo and run against the
vector files the C checker uses.

Each row copies the crate (``sources``: the render, or check's given files, named as render
names them: ``STEM/Cargo.toml``, ``STEM/src/lib.rs``, ``STEM/README.md``) into ``WORKDIR/crate``
(so the crate is ``WORKDIR/crate/STEM``) and writes a harness crate beside it
(``WORKDIR/harness``: ``Cargo.toml`` with a path dependency on the crate, ``src/main.rs`` = a
generated line naming the type + ``verify/harness/harness.rs``).  Cargo runs offline: ``CARGO_HOME`` is ``WORKDIR/cargo-home``,
whose ``config.toml`` replaces crates.io by Debian's local registry (``/usr/share/cargo/registry``,
librust-zeroize-dev), so nothing is written into the user's crate or ``~/.cargo`` and nothing is
fetched.  Even a build without features needs the registry: cargo resolves optional dependencies
(zeroize) too.

=====================  ====================================================================
row                    what runs
=====================  ====================================================================
cargo release          ``cargo build --release`` of the harness, run on the vectors
cargo debug            a debug build (overflow checks and debug assertions on: a ``+`` that
                       should be ``wrapping_add`` panics), run on the vectors
cargo zeroize+std      release build with the crate's features ``zeroize`` and ``std``, run
clippy -D warnings     ``cargo clippy --all-targets`` on the crate, default and all features,
                       ``-D warnings``, then ``cargo test --doc`` (the crate's example)
valgrind memcheck      the release harness under ``valgrind --error-exitcode=1`` (no leak
                       check: the harness's own allocations) on the first MEMCHECK_RECORDS
                       one-block records (the published ones first) and every batch
=====================  ====================================================================

The harness (verify/harness/harness.rs) checks every record at every misalignment, in place,
guard bytes, unchanged key and tweak(s), ``*_blocks_with_tweaks`` with n = 0..33, the panic on
a length mismatch, and that drop wipes the key schedule (or, ``--no-wipe``, does not).

A Skein crate (``--primitive skein``, checker kind ``cargo-skein``) runs ``SKEIN_RUNS``: the same
rows, its features row being ``cargo digest+zeroize+std``, on the Skein vector file the C Skein
rows run (verify/skein_c_abi.py: every golden record of the official file, bit lengths
included, and for v1.3 its published tree records; MAC, personalization, every UBI argument
type, tree, hash_many, random lengths from the model), through verify/harness/skein_harness.rs: one-shot and streamed in eight chunkings
at misalignments 0..7, guard bytes, update_bits after a partial byte refused, the refusals of
bad arguments, finalize_into_reset, and that drop wipes the states; with feature ``digest`` the
harness's generated last part (``skein_digest_part``) also runs the RustCrypto traits
(VariableOutput, Digest of the fixed-output aliases, Mac) on the same records.  Under valgrind:
the first ``SKEIN_MEMCHECK`` records of each kind (the T ones, for v1.3: published tree records)
and every M and E line.
"""
from __future__ import annotations

import glob
import os
import shutil
import time
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from threefish_gen.gen.targets.rust import CRATES
from threefish_gen.gen.variant import Variant

from .proc import run as run_command
from .sources import write as write_source_files

HERE = Path(str(files(__package__)))   # package data: harness/
HARNESS_RS = HERE / "harness" / "harness.rs"
SKEIN_HARNESS_RS = HERE / "harness" / "skein_harness.rs"
REGISTRY = Path("/usr/share/cargo/registry")
INSTALL_CARGO = "Rust 1.66+ with cargo: apt-get install cargo, or https://rustup.rs"
# the crates the rendered crates depend on (gen/targets/rust.py CRATES), as Debian packages
INSTALL_REGISTRY = ("Debian's " + " and ".join(f"librust-{c}-dev" for c in dict.fromkeys(sum(CRATES.values(), ())))
                    + " (scripts/bootstrap.sh installs them)")
# tools whose version decides a row (the result cache's key, verify/shard.py row_key)
TOOLS = ("cargo", "rustc", "cargo-clippy", "@cargo-registry")   # @: the registry's files (verify/shard.py TREES)
BUILD_LIMIT = 900         # seconds per cargo command (times THREEFISH_GEN_TIMEOUT_SCALE)
RUN_LIMIT = 900

CARGO_CONFIG = f"""# written by threefish-gen verify: offline, crates.io replaced by Debian's local registry
[source.crates-io]
replace-with = "debian-registry"

[source.debian-registry]
directory = "{REGISTRY}"

[net]
offline = true
"""

HARNESS_TOML = """# written by threefish-gen verify: the Rust harness of one rendered crate
[package]
name = "tfgen-harness"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "harness"
path = "src/main.rs"

[dependencies]
tfcrate = {{ path = "../crate/{folder}", package = "{crate}"{features} }}

[profile.dev]
opt-level = 1              # debug assertions and overflow checks stay on; fast enough for the vectors

[workspace]
"""


@dataclass(frozen=True)
class CargoRun:
    """One row of the Rust matrix.

    For a crate with SIMD paths (``--isa``): ``default_features`` False builds without the
    crate's default ``simd``; ``rustflags`` are the build's ``RUSTFLAGS`` (target features: the
    compile-time choice); ``isa_env`` is the run's ``$THREEFISH_GEN_ISA`` (the cap of the
    run-time choice); ``expect`` is the path the harness must see ``simd_path()`` name: a level
    name, or ``CPU`` (the highest path of the crate this CPU has); ``needs``: an ISA the row
    runs on (a CPU without it: the row is only built, status BUILT)."""

    name: str
    profile: str = "release"          # release | dev | clippy
    features: tuple = ()
    valgrind: bool = False            # the harness runs under valgrind memcheck
    registry: tuple = CRATES["threefish"]     # crates the crate's Cargo.toml names (resolved even when optional)
    default_features: bool = True
    rustflags: str = ""
    isa_env: str | None = None
    expect: str | None = None
    needs: str | None = None
    target: str | None = None         # a cross build (--target TRIPLE), run under qemu-user (AARCH64)

    @property
    def tools(self) -> tuple:
        """Tools whose version decides the row beyond the checker's (verify/shard.py tools_of): a
        cross build's linker, emulator and the rustc with that target's std (found at key time)."""
        if self.target is None:
            return ()
        return (AARCH64_LINKER, AARCH64_RUNNER[0], aarch64_rustc() or "rustc-aarch64-absent")

    @property
    def thorough(self) -> bool:
        """Left out of `check`'s fast default: all but the release build."""
        return self.name != "cargo release"

    def missing(self) -> str | None:
        if self.target is not None and (why := aarch64_missing()):
            return why
        if self.valgrind and shutil.which("valgrind") is None:
            return "valgrind not installed (apt-get install valgrind)"
        if shutil.which("cargo") is None:
            return f"cargo not installed ({INSTALL_CARGO})"
        if self.profile == "clippy" and shutil.which("cargo-clippy") is None:
            return "cargo clippy not installed (rustup component add clippy, or apt-get install rust-clippy)"
        for crate in self.registry:
            if not glob.glob(str(REGISTRY / f"{crate}-[0-9]*")):
                return f"no {crate} crate in {REGISTRY} (cargo resolves the optional dependency even without the " \
                       f"feature; {INSTALL_REGISTRY})"
        return None


RUNS = (
    CargoRun("cargo release"),
    CargoRun("cargo debug", "dev"),
    CargoRun("cargo zeroize+std", "release", ("zeroize", "std")),
    CargoRun("clippy -D warnings", "clippy"),
    CargoRun("valgrind memcheck", valgrind=True),
)
# The Skein crate's rows (--primitive skein): its features are digest, zeroize and std; the
# harness is verify/harness/skein_harness.rs on the Skein vector file (verify/skein_c_abi.py).
SKEIN_REGISTRY = CRATES["skein"]
SKEIN_RUNS = (
    CargoRun("cargo release", registry=SKEIN_REGISTRY),
    CargoRun("cargo debug", "dev", registry=SKEIN_REGISTRY),
    CargoRun("cargo digest+zeroize+std", "release", ("digest", "zeroize", "std"), registry=SKEIN_REGISTRY),
    CargoRun("clippy -D warnings", "clippy", registry=SKEIN_REGISTRY),
    CargoRun("valgrind memcheck", valgrind=True, registry=SKEIN_REGISTRY),
)
# A crate with SIMD paths (--isa): the release, debug and zeroize rows build with std and detect
# the CPU at run time (AVX2 here; the release row is check's fast one); the forced rows are capped
# by $THREEFISH_GEN_ISA (scalar; AVX-512: only built on a CPU without it); the no-simd row builds
# without the default feature (the safe Rust build, forbid(unsafe_code)); the no-std row takes the
# path chosen at compile time (-C target-feature=+avx2: AVX2); valgrind runs the std build (the
# AVX2 path where the CPU has it).
CPU = "CPU"
SIMD_RUNS = (
    CargoRun("cargo release", "release", ("std",), expect=CPU),
    CargoRun("cargo debug", "dev", ("std",), expect=CPU),
    CargoRun("cargo zeroize+std", "release", ("zeroize", "std"), expect=CPU),
    CargoRun("cargo no simd", default_features=False, expect="scalar"),
    CargoRun("cargo std forced scalar", "release", ("std",), isa_env="scalar", expect="scalar"),
    CargoRun("cargo no-std +avx2", rustflags="-C target-feature=+avx2", expect="avx2", needs="avx2"),
    CargoRun("cargo std avx512", "release", ("std",), isa_env="avx512", expect="avx512", needs="avx512"),
    CargoRun("clippy -D warnings", "clippy"),
    CargoRun("valgrind memcheck", features=("std",), valgrind=True, expect=CPU),
    CargoRun("cargo aarch64 neon (qemu)", "release", ("std",), rustflags="-D warnings", expect="neon", needs="neon",
             target="aarch64-unknown-linux-gnu"),
)

# The NEON path's row: the harness cross-built for little-endian AArch64 (--target, linked by
# aarch64-linux-gnu-gcc) and run under qemu-aarch64.  It needs a rustc with that target's core and
# std: the rustc $THREEFISH_GEN_RUSTC_AARCH64 names, or the one scripts/rust-aarch64.sh unpacks into
# build/toolchains/rust-aarch64 (Debian's rustc-web with its arm64 std; make verify runs it), or
# rustup's (rustup target add aarch64-unknown-linux-gnu) or a system rustc that has the target;
# without one the row is SKIPPED with the reason.
AARCH64 = "aarch64-unknown-linux-gnu"
AARCH64_LINKER = "aarch64-linux-gnu-gcc"
AARCH64_RUNNER = ("qemu-aarch64", "-L", "/usr/aarch64-linux-gnu")
RUSTC_AARCH64_ENV = "THREEFISH_GEN_RUSTC_AARCH64"
# where scripts/rust-aarch64.sh puts its rustc (in the checkout that holds this package)
RUSTC_AARCH64_LOCAL = Path(__file__).resolve().parents[2] / "build" / "toolchains" / "rust-aarch64" / "rustc"


def aarch64_rustc() -> str | None:
    """A rustc that has AArch64's core and std (its target-libdir holds libcore), or None."""
    import subprocess
    for rustc in (os.environ.get(RUSTC_AARCH64_ENV), str(RUSTC_AARCH64_LOCAL), shutil.which("rustc"), "/usr/bin/rustc"):
        if not rustc or not (shutil.which(rustc) or Path(rustc).is_file()):
            continue
        try:
            out = subprocess.run([rustc, "--print", "target-libdir", "--target", AARCH64], capture_output=True,
                                 text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and glob.glob(os.path.join(out.stdout.strip(), "libcore-*.rlib")):
            return rustc
    return None


def aarch64_missing() -> str | None:
    for tool in (AARCH64_LINKER, AARCH64_RUNNER[0]):
        if shutil.which(tool) is None:
            return f"{tool} not installed (scripts/bootstrap.sh installs it)"
    if aarch64_rustc() is None:
        return (f"no rustc with the {AARCH64} std (make verify fetches one: scripts/rust-aarch64.sh; or rustup "
                f"target add {AARCH64}; or ${RUSTC_AARCH64_ENV})")
    return None


def runs(v: Variant) -> tuple:
    """The rows of a Rust crate: Threefish (with SIMD paths: SIMD_RUNS, less the rows of paths it
    lacks) or Skein."""
    if is_skein(v):
        return SKEIN_RUNS
    isas = simd_isas(v)
    if not isas:
        return RUNS
    return tuple(r for r in SIMD_RUNS if r.needs is None or r.needs in isas)


def simd_isas(v: Variant) -> list:
    """The SIMD paths of a Rust crate, lowest first ([] for a scalar crate)."""
    from threefish_gen.gen.targets.rust import simd_paths
    return [isa for isa, _ in reversed(simd_paths(v))]


def expected_path(v: Variant, run: CargoRun) -> tuple[str | None, str | None]:
    """(the path the row's harness must report, the $THREEFISH_GEN_ISA it runs with).  ``CPU``:
    the highest path this CPU has -- where verify hides CPU flags (THREEFISH_GEN_HIDE_CPU_FLAGS)
    the run is capped there too, since the crate's own detection sees the real CPU."""
    from threefish_gen.gen.isa import ISAS
    from .cpu import cpu_flags, hidden_flags
    if run.expect != CPU:
        return run.expect, run.isa_env
    have = [isa for isa in simd_isas(v) if set(ISAS[isa].features) <= cpu_flags()
            and not (run.valgrind and isa in VALGRIND_LACKS)]
    best = have[-1] if have else "scalar"
    return best, (best if hidden_flags() else run.isa_env)


# under valgrind, Skein: the first records of each kind (H, B, T) and every M and E line
SKEIN_MEMCHECK = {"H": 48, "B": 24, "T": 6}
MEMCHECK_RECORDS = 64        # under valgrind: 1000 random vectors take 100 s a row; safe Rust leaves little to find
# ISAs valgrind cannot run: it hides them from the CPUID its guest sees (valgrind 3.19-3.22 has no
# AVX-512), so under valgrind a crate's run-time detection takes the next path down on a CPU that has them
VALGRIND_LACKS = frozenset({"avx512"})
MEMCHECK = ("valgrind", "--tool=memcheck", "--error-exitcode=1", "--leak-check=no", "-q")


def is_skein(v: Variant) -> bool:
    return v.primitive == "skein"


def type_name(v: Variant) -> str:
    return f"{'Skein' if is_skein(v) else 'Threefish'}{v.spec.bits}"


def skein_digest_part(v: Variant, on: bool) -> str:
    """The last part of the Skein harness: the digest-trait checks (``on``: the row builds the
    crate with feature ``digest``) -- VariableOutput / Update / Reset on the state, Digest through
    the fixed-output aliases of the standard lengths, Mac through the MAC type -- or empty ones."""
    if not on:
        return ("\nfn digest_h(_: &mut Counts, _: usize, _: &[u8], _: &[u8], _: &[u8], _: &[u8]) {}\n"
                "fn digest_e(_: &mut Counts) {}\n")
    from threefish_gen.gen.skein import STANDARD_OUTPUTS
    ty = type_name(v)
    fixed = "\n".join(f"        {b // 8} => Some(<tfcrate::{ty}_{b} as Digest>::digest(msg).to_vec()),"
                       for b in STANDARD_OUTPUTS[v.spec.bits])
    mac = "\n".join(f"        {b // 8} => Some(mac_of::<tfcrate::{ty}Mac<U{b // 8}>>(key, msg)),"
                     for b in STANDARD_OUTPUTS[v.spec.bits])
    return f"""
// ---- generated by threefish-gen verify: the digest traits (feature digest)
use tfcrate::digest::consts::*;
use tfcrate::digest::{{Digest, FixedOutputReset, Mac, Update, VariableOutput, VariableOutputReset}};

fn mac_of<M: Mac + tfcrate::digest::KeyInit + FixedOutputReset>(key: &[u8], msg: &[u8]) -> Vec<u8> {{
    let mut m = <M as Mac>::new_from_slice(key).unwrap();
    Mac::update(&mut m, msg);
    let first = m.finalize_reset().into_bytes().to_vec();
    Mac::update(&mut m, msg);
    let tag = m.finalize().into_bytes().to_vec();
    if tag == first {{ tag }} else {{ Vec::new() }}
}}

fn fixed_hash(outlen: usize, msg: &[u8]) -> Option<Vec<u8>> {{
    match outlen {{
{fixed}
        _ => None,
    }}
}}

fn fixed_mac(outlen: usize, key: &[u8], msg: &[u8]) -> Option<Vec<u8>> {{
    match outlen {{
{mac}
        _ => None,
    }}
}}

fn digest_h(c: &mut Counts, outlen: usize, key: &[u8], pers: &[u8], msg: &[u8], dig: &[u8]) {{
    if !pers.is_empty() {{
        return;
    }}
    if key.is_empty() {{
        let mut v = <Sk as VariableOutput>::new(outlen).unwrap();
        for part in msg.chunks(B + 1) {{
            Update::update(&mut v, part);
        }}
        let mut out = vec![0u8; outlen];
        let mut ok = v.finalize_variable_reset(&mut out).is_ok() && out == dig;
        Update::update(&mut v, msg);
        ok &= v.finalize_variable(&mut out).is_ok() && out == dig;
        c.check(ok, "digest: VariableOutput (+Reset)");
        if let Some(d) = fixed_hash(outlen, msg) {{
            c.check(d == dig, "digest: Digest of the fixed-output type");
        }}
    }}
    if let Some(t) = fixed_mac(outlen, key, msg) {{
        c.check(t == dig, "digest: Mac (KeyInit::new_from_slice, finalize_reset, finalize)");
    }}
}}

fn digest_e(c: &mut Counts) {{
    c.check(<Sk as VariableOutput>::new(0).is_err(), "digest: VariableOutput::new(0) is an error");
    let v = <Sk as VariableOutput>::new(8).unwrap();
    c.check(v.finalize_variable(&mut [0u8; 9]).is_err(), "digest: finalize_variable into another length is an error");
}}
"""


def crate_of(text: str) -> str:
    """The package name a Cargo.toml declares (the crate under test)."""
    in_package = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("["):
            in_package = s == "[package]"
        elif in_package and s.startswith("name") and "=" in s:
            return s.split("=", 1)[1].strip().strip('"')
    raise ValueError("Cargo.toml names no [package] name")


def cargo_env(workdir: Path) -> dict:
    """The environment of every cargo command: its home, config and target folder in ``workdir``."""
    home = workdir / "cargo-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(CARGO_CONFIG)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CARGO_", "RUSTFLAGS", "RUSTDOCFLAGS", "THREEFISH_GEN_ISA"))}
    # rustup's proxies find their toolchains through RUSTUP_HOME (default: ~/.rustup) and the cargo
    # binary through PATH; CARGO_HOME only moves the config and the registry cache
    if "RUSTUP_HOME" not in env and Path.home().joinpath(".rustup").is_dir():
        env["RUSTUP_HOME"] = str(Path.home() / ".rustup")
    env.update(CARGO_HOME=str(home), CARGO_TARGET_DIR=str(workdir / "target"), CARGO_TERM_COLOR="never",
               CARGO_INCREMENTAL="0")
    return env


def crate_root(files: Path) -> Path:
    """The crate folder in ``files`` (what ``write_source_files`` wrote): the one folder holding a
    Cargo.toml (render's ``STEM/``)."""
    tomls = sorted(files.glob("*/Cargo.toml")) or sorted(files.glob("Cargo.toml"))
    if len(tomls) != 1:
        raise ValueError(f"{files}: {len(tomls)} Cargo.toml files, not one crate")
    return tomls[0].parent


def write_harness(variant: Variant, workdir: Path, features=(), default_features: bool = True) -> tuple[Path, str, Path]:
    """The crate under test in workdir/crate/STEM, the harness crate in workdir/harness:
    (the harness folder, the crate's package name, the crate folder)."""
    files = workdir / "crate"
    if files.exists():
        shutil.rmtree(files)
    write_source_files(variant, files)
    crate = crate_root(files)
    name = crate_of((crate / "Cargo.toml").read_text())
    feats = f", features = [{', '.join(repr(f).replace(chr(39), chr(34)) for f in features)}]" if features else ""
    if not default_features:
        feats += ", default-features = false"
    harness = workdir / "harness"
    (harness / "src").mkdir(parents=True, exist_ok=True)
    (harness / "Cargo.toml").write_text(HARNESS_TOML.format(crate=name, features=feats,
                                                            folder=crate.relative_to(files).as_posix()))
    wipe = f"const WIPE: bool = {'true' if variant.get('wipe', True) else 'false'};\n\n"
    if is_skein(variant):
        ty = type_name(variant)
        head = (f"// generated by threefish-gen verify for {variant.label()}\n"
                f"use tfcrate::{{{ty} as Sk, {ty}Tree as SkTree, Params, Error as SkError, STATE_BYTES as B}};\n"
                + wipe)
        text = head + SKEIN_HARNESS_RS.read_text() + skein_digest_part(variant, "digest" in features)
    else:
        path = ("use tfcrate::simd_path;\n" if simd_isas(variant) else
                "fn simd_path() -> &'static str {\n    \"scalar\"\n}\n")
        head = (f"// generated by threefish-gen verify for {variant.label()}\n"
                f"use tfcrate::{{{type_name(variant)} as Tf, BLOCK_BYTES as B}};\n" + path + wipe)
        text = head + HARNESS_RS.read_text()
    (harness / "src" / "main.rs").write_text(text)
    return harness, name, crate


def _cargo(args: list[str], cwd: Path, env: dict, what: str) -> tuple[int, str]:
    return run_command(["cargo", *args], cwd, BUILD_LIMIT, env, what=what)


def _errors(out: str, n: int = 4) -> str:
    lines = [ln.strip() for ln in out.splitlines() if ln.strip().startswith(("error", "warning", "-->"))]
    from .runner import _first_lines
    return " | ".join(lines[:n]) if lines else _first_lines(out, n)


def check(variant: Variant, run: CargoRun, workdir: Path, vectors: Path):
    from .runner import Row, _first_lines, run_harness
    label = variant.label()
    why = run.missing()
    if why:
        return Row(label, run.name, "SKIPPED", why)
    t0 = time.monotonic()
    workdir = Path(workdir).resolve()
    env = cargo_env(workdir)
    harness, name, crate = write_harness(variant, workdir, run.features, run.default_features)
    if run.rustflags:
        env["RUSTFLAGS"] = run.rustflags
    if run.profile == "clippy":
        for feats in ([], ["--all-features"]) + ((["--no-default-features"],) if simd_isas(variant) else ()):
            rc, out = _cargo(["clippy", "--offline", "--all-targets", *feats, "--", "-D", "warnings"], crate, env,
                             "cargo clippy")
            if rc:
                return Row(label, run.name, "FAIL", f"clippy {' '.join(feats) or 'default features'}: {_errors(out)}",
                           time.monotonic() - t0)
        rc, out = _cargo(["test", "--offline", "--doc"], crate, env, "cargo test --doc")
        if rc:
            return Row(label, run.name, "FAIL", "cargo test --doc: " + _errors(out), time.monotonic() - t0)
        which = "default, all and no default features" if simd_isas(variant) else "default and all features"
        return Row(label, run.name, "PASS", f"clippy clean ({which}, -D warnings); doc example runs",
                   time.monotonic() - t0, 1)
    args = ["build", "--offline", "--quiet"] + (["--release"] if run.profile == "release" else [])
    if run.target:
        args += ["--target", run.target]
        env.update(RUSTC=aarch64_rustc(), CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=AARCH64_LINKER)
    rc, out = _cargo(args, harness, env, "cargo build")
    if rc:
        return Row(label, run.name, "FAIL", "cargo build failed: " + _errors(out), time.monotonic() - t0)
    exe = workdir / "target" / (run.target or "") / ("release" if run.profile == "release" else "debug") / "harness"
    expect, isa_env = expected_path(variant, run) if simd_isas(variant) else (None, None)
    if run.needs is not None and run.target is None and not _cpu_has(run.needs):
        return Row(label, run.name, "BUILT", f"built ({run.profile} build); the {run.needs} path cannot run here "
                   "(CPU lacks " + ", ".join(_lacking(run.needs)) + "): only built, not run", time.monotonic() - t0)
    if run.valgrind:
        lines = Path(vectors).read_text().splitlines()
        if is_skein(variant):
            taken = {k: [ln for ln in lines if ln.startswith(k + " ")][:n] for k, n in SKEIN_MEMCHECK.items()}
            keep = [ln for k in taken for ln in taken[k]] + [ln for ln in lines if ln[:2] in ("M ", "E")]
        else:
            keep = [ln for ln in lines if ln.startswith("V ")][:MEMCHECK_RECORDS] + \
                [ln for ln in lines if ln.startswith("B ")]
        vectors = workdir / "vectors-memcheck.txt"
        vectors.write_text("\n".join(keep) + "\n")
    argv = [*(MEMCHECK if run.valgrind else ()), *(AARCH64_RUNNER if run.target else ()), str(exe), str(vectors)]
    env = None
    if expect is not None:
        env = {k: v for k, v in os.environ.items() if k != "THREEFISH_GEN_ISA"}
        env["TFGEN_EXPECT_PATH"] = expect
        if isa_env is not None:
            env["THREEFISH_GEN_ISA"] = isa_env
    ok, out, checks = run_harness(argv, workdir, env=env, timeout=RUN_LIMIT, leaks=False)
    if not ok:
        return Row(label, run.name, "FAIL", _first_lines(out, 4), time.monotonic() - t0, checks)
    feats = f" with features {', '.join(run.features)}" if run.features else ""
    feats += f", {run.target} under qemu-aarch64" if run.target else ""
    subset = (", ".join(f"the first {n} {k}" for k, n in SKEIN_MEMCHECK.items()) + " records, every M and E"
              if is_skein(variant) else f"{MEMCHECK_RECORDS} records + the batches")
    tool = f" under valgrind memcheck, {subset}" if run.valgrind else ""
    path = ""
    if expect is not None:
        path = (f"; *_blocks path {expect}" + (f" ($THREEFISH_GEN_ISA={isa_env})" if isa_env else "")
                + (f", RUSTFLAGS={run.rustflags}" if run.rustflags else ""))
    return Row(label, run.name, "PASS", f"{checks} checks ({run.profile} build{feats}{tool}{path})",
               time.monotonic() - t0, checks)


def _lacking(isa: str) -> list:
    from threefish_gen.gen.isa import ISAS
    from .cpu import cpu_flags
    return sorted(set(ISAS[isa].features) - cpu_flags())


def _cpu_has(isa: str) -> bool:
    return not _lacking(isa)


__all__ = ["RUNS", "SKEIN_RUNS", "SIMD_RUNS", "check", "CargoRun", "runs"]
