"""Target rust: the rendered crate, its kernel printed from the description, and verify's cargo
checker (verify/rust.py) on real builds: one variant per size against the published known answers
(verify/kat) and the reference model's vectors, and the checker failing on broken crates.

The *_matrix tests (ids name the size) hold the other rows, option families and broken crates:
about two thirds of this file's CPU time.  `pytest tests/test_rust.py -k "not _matrix"` runs the
default part alone."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from threefish_gen.gen.dsl import count_ops
from threefish_gen.gen.kat import threefish_records
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.threefish import Options, describe
from threefish_gen.verify import rust as rust_checker
from threefish_gen.verify import sources
from threefish_gen.verify.runner import vector_file

PY = sys.executable
RUNS = {r.name: r for r in rust_checker.RUNS}


def cli(*args, cwd=None):
    return subprocess.run([PY, "-m", "threefish_gen", *args], cwd=cwd or ROOT, capture_output=True, text=True)


def need_cargo():
    """cargo and Debian's registry, or a failure: a test that skips for want of a toolchain proves
    nothing (tests/conftest.py), unless THREEFISH_GEN_ALLOW_SKIP names cargo."""
    why = RUNS["cargo release"].missing()
    if why:
        allowed = {t.strip() for t in os.environ.get("THREEFISH_GEN_ALLOW_SKIP", "").split(",")}
        if "cargo" in allowed:
            pytest.skip(why)
        pytest.fail(f"{why} -- run `make setup`, or set THREEFISH_GEN_ALLOW_SKIP=cargo")


def variant(bits, o=None, version="1.3", **extra):
    return get_target("rust").variant(get_spec(version, bits), o, **extra)


def lib_rs(files: dict) -> str:
    """The crate's STEM/src/lib.rs among a variant's rendered files."""
    (name,) = [n for n in files if n.endswith("/src/lib.rs")]
    return files[name]


def one_block_method(lib: str, name: str) -> str:
    m = re.search(rf"pub fn {name}\(.*?\n    }}\n", lib, re.S)
    assert m, name
    return m.group(0)


# ---------------------------------------------------------------------------- the crate (no cargo)

def test_render_writes_a_no_std_crate_folder(tmp_path):
    out = tmp_path / "out"
    p = cli("render", "--target", "rust", "--size", "512", "--constants", "1.3", "--out", str(out))
    assert p.returncode == 0, p.stderr
    crate = out / "tf512_v13_rust_fly_full"
    assert sorted(str(f.relative_to(out)) for f in out.rglob("*")) == [
        ".threefish-gen-manifest", "tf512_v13_rust_fly_full", "tf512_v13_rust_fly_full/Cargo.toml",
        "tf512_v13_rust_fly_full/README.md", "tf512_v13_rust_fly_full/src", "tf512_v13_rust_fly_full/src/lib.rs"]
    assert p.stdout.splitlines() == [str(crate / n) for n in ("Cargo.toml", "src/lib.rs", "README.md")]
    manifest = (out / ".threefish-gen-manifest").read_text()
    assert all(f"  tf512_v13_rust_fly_full/{n}\n" in manifest for n in ("Cargo.toml", "src/lib.rs", "README.md"))
    lib = (crate / "src" / "lib.rs").read_text()
    toml = (crate / "Cargo.toml").read_text()
    assert "#![no_std]" in lib and "#![forbid(unsafe_code)]" in lib
    assert not re.search(r"\bunsafe\b", lib.replace("#![forbid(unsafe_code)]", ""))
    for fn in ("pub fn new(key: &[u8; BLOCK_BYTES]) -> Self", "pub fn encrypt_block_with_tweak(",
               "pub fn decrypt_block_with_tweak(", "pub fn encrypt_blocks_with_tweaks(",
               "pub fn decrypt_blocks_with_tweaks(", "impl Drop for Threefish512"):
        assert fn in lib, fn
    assert "[lib]" not in toml and 'name = "tf512_v13_rust_fly_full"' in toml     # cargo's default src/lib.rs
    # no dependency but optional ones; the features the issue names
    deps = toml.split("[dependencies]", 1)[1].split("[features]", 1)[0]
    assert [ln for ln in deps.splitlines() if ln and not ln.startswith("#")] == \
        ['zeroize = { version = "1.5", optional = true, default-features = false }']
    assert 'default = []' in toml and 'std = []' in toml and 'zeroize = ["dep:zeroize"]' in toml
    # every file records the command that makes it again
    cmd = "threefish-gen render --target rust --size 512 --constants 1.3 --keys fly --unroll full --interleave 1"
    assert cmd in lib and cmd in toml and cmd in (crate / "README.md").read_text()
    p = cli("render", "--target", "rust", "--size", "512", "--constants", "1.3", "--out", str(out))
    assert p.returncode == 0 and p.stdout.splitlines() == [str(crate / n) + " (unchanged)" for n in
                                                           ("Cargo.toml", "src/lib.rs", "README.md")], p.stderr


def test_set_recommended_writes_one_crate_per_variant(tmp_path):
    """`render --target rust --set recommended`: a crate folder per size and version, side by side,
    all in one manifest; rendering it again changes nothing."""
    out = tmp_path / "out"
    p = cli("render", "--target", "rust", "--set", "recommended", "--out", str(out))
    assert p.returncode == 0, p.stderr
    t = get_target("rust")
    want = [v for v in t.variants("recommended", [get_spec(ver, b) for ver in ("1.1", "1.2", "1.3")
                                                   for b in (256, 512, 1024)])]
    crates = sorted(d.name for d in out.iterdir() if d.is_dir())
    assert crates == sorted(v.stem for v in want) and len(crates) == 18      # 9 Threefish, 9 Skein
    assert sum(1 for v in want if v.primitive == "skein") == 9
    for d in crates:
        assert sorted(str(f.relative_to(out / d)) for f in (out / d).rglob("*")) == \
            ["Cargo.toml", "README.md", "src", "src/lib.rs"]
    manifest = (out / ".threefish-gen-manifest").read_text()
    assert len([ln for ln in manifest.splitlines() if not ln.startswith("#")]) == 54
    p = cli("render", "--target", "rust", "--set", "recommended", "--out", str(out))
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 54 and \
        all(ln.endswith(" (unchanged)") for ln in p.stdout.splitlines()), p.stdout + p.stderr


def test_two_variants_that_write_one_path_are_refused(tmp_path, monkeypatch, capsys):
    """Two variants of a set whose renders name the same path with different text: one line, exit
    2, nothing written (a target bug, simulated here: every variant writes crate/src/lib.rs)."""
    from threefish_gen import cli as climod
    monkeypatch.setattr(climod, "render_variant", lambda v: {"crate/src/lib.rs": f"// {v.label()}\n"})
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        climod.main(["render", "--target", "rust", "--set", "recommended", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and not out.exists(), err
    assert re.fullmatch(r"threefish-gen: error: rust (auto )?\d+ v1\.\d .* and rust (auto )?\d+ v1\.\d .* both write "
                        r"crate/src/lib\.rs \(with different contents\): render them into separate folders", err[0]), err


@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("keys,unroll,interleave", [("fly", "full", 1), ("table", "loop", 2), ("fly", "loop", 3)])
def test_kernel_is_the_description_op_for_op(bits, keys, unroll, interleave):
    """gen/printers/rust.py prints one statement per description op: the one-block methods have
    exactly the description's adds, subs, xors and rotations, as wrapping_add/_sub, ^= and
    rotate_left/right (the blocks methods: the interleaved program's)."""
    o = Options(keys, unroll, interleave)
    lib = lib_rs(render_variant(variant(bits, o)))
    for d in ("encrypt", "decrypt"):
        body = describe(get_spec("1.3", bits), o, d, 1).body
        want = count_ops_static(body)
        got = one_block_method(lib, f"{d}_block_with_tweak")
        assert got.count(".wrapping_add(") == want.get("add", 0)
        assert got.count(".wrapping_sub(") == want.get("sub", 0)
        assert got.count(".rotate_left(") == want.get("rotl", 0)
        assert got.count(".rotate_right(") == want.get("rotr", 0)
        assert len(re.findall(r"\w \^= ", got)) == want.get("xor", 0)
        assert got.count("store64(") == bits // 64
        multi = describe(get_spec("1.3", bits), o, d, interleave).body
        blocks = one_block_method(lib, f"{d}_blocks_with_tweaks")
        rot = ".rotate_left(" if d == "encrypt" else ".rotate_right("
        assert blocks.count(rot) == count_ops_static(multi).get("rotl" if d == "encrypt" else "rotr", 0) + \
            (count_ops_static(body).get("rotl" if d == "encrypt" else "rotr", 0) if interleave > 1 else 0)


def count_ops_static(ops) -> dict:
    """Statements per kind as printed (a loop body once), not dynamic counts."""
    from threefish_gen.gen.dsl import Loop
    flat_ops = [op for item in ops for op in (item.body if isinstance(item, Loop) else [item])]
    out: dict = {}
    for op in flat_ops:
        out[op.kind] = out.get(op.kind, 0) + 1
    return out


def test_op_counts_in_the_header_are_the_descriptions():
    lib = lib_rs(render_variant(variant(1024)))
    counts = count_ops(describe(get_spec("1.3", 1024), Options("fly", "full", 1), "encrypt", 1).body)
    assert f"rotl {counts['rotl']}" in lib and f"add {counts['add']}" in lib


def test_no_wipe_and_annotate_none():
    plain = lib_rs(render_variant(variant(256, Options("table", "full", 1))))
    bare = lib_rs(render_variant(variant(256, Options("table", "full", 1), wipe=False, annotate="none")))
    assert "impl Drop" in plain and "wipe(&mut ks);" in plain
    assert "impl Drop" not in bare and "fn wipe" not in bare and "wipe(" not in bare
    assert "// round 0" in plain and "// round 0" not in bare
    # the same statements otherwise
    strip = lambda t: [ln.split("//")[0].rstrip() for ln in t.splitlines() if ".rotate_" in ln]   # noqa: E731
    assert strip(plain) == strip(bare) and strip(plain)


@pytest.mark.parametrize("args, needle", [
    (["--size", "512", "--constants", "1.3", "--isa", "sse2"], "--isa"),      # not an ISA of the rust target
    (["--size", "512", "--constants", "1.3", "--interleave", "5"], "--interleave"),
    (["--size", "512", "--constants", "1.3", "--namespace", "X"], "--namespace"),
    (["--size", "512", "--constants", "1.3", "--prefix", "9x"], "--prefix"),
])
def test_bad_rust_render_input_is_one_line(tmp_path, args, needle):
    p = cli("render", "--target", "rust", *args, "--out", str(tmp_path / "o"))
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("threefish-gen: error: ") and needle in lines[0], p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "o").exists()


def test_check_finds_a_crates_files_wherever_it_is_pointed(tmp_path):
    """check's collect (no cargo): the --out folder, the crate folder itself and a renamed copy
    each give one group of three files, keyed by the rendered names, none noted as differing; the
    recommended set's folder gives one group per crate."""
    import shutil
    from threefish_gen.tools.check_dir import collect
    out = tmp_path / "out"
    assert cli("render", "--target", "rust", "--size", "512", "--constants", "1.2", "--out", str(out)).returncode == 0
    stem = "tf512_v12_rust_fly_full"
    shutil.copytree(out / stem, tmp_path / "renamed" / "my_crate")
    for folder in (out, out / stem, tmp_path / "renamed"):
        found, others = collect(folder)
        assert len(found) == 1 and not others, (folder, found)
        v, files, paths, notes, missing = found[0]
        assert sorted(files) == [f"{stem}/Cargo.toml", f"{stem}/README.md", f"{stem}/src/lib.rs"], folder
        assert len(paths) == 3 and not notes and not missing, (folder, notes, missing)
    assert cli("render", "--target", "rust", "--set", "recommended", "--out", str(tmp_path / "set")).returncode == 0
    found, _ = collect(tmp_path / "set")
    assert len(found) == 18 and all(len(f[2]) == 3 and not f[3] and not f[4] for f in found)


# ---------------------------------------------------------------------------- cargo (toolchain)

def vectors(tmp_path, bits, version="1.3", count=20):
    """The C checker's vector file: every published record of this size and version (verify/kat),
    random vectors and batches n = 0..33 from the reference model (never from the code under test)."""
    spec = get_spec(version, bits)
    path = vector_file(spec, tmp_path / f"vectors-{bits}.txt", count, seed=bits)
    lines = path.read_text().splitlines()
    published = threefish_records(version, bits)
    assert published and all(f"V {r['key'].hex()} {r['tweak'].hex()} {r['plaintext'].hex()} {r['ciphertext'].hex()}"
                             in lines for r in published)
    assert [int(ln.split()[1]) for ln in lines if ln.startswith("B ")] == list(range(34))
    return path, len(published) + count


def expected_checks(records: int) -> int:
    """What harness.rs counts on a vector file: per record and direction 8 misalignments x 4
    checks; per batch (34) and direction 8 x 3; length mismatch 2; wipe 2."""
    return records * 2 * 8 * 4 + 34 * 2 * 8 * 3 + 2 + 2


# The default run builds one variant per size (the recommended one) through the release row, and
# checks that a broken rotation fails it and that `check DIR` builds a rendered crate.  The other
# rows (debug, zeroize+std, clippy, valgrind), the other option families and the other broken
# crates are the *_matrix tests below, each parametrized with ids that name the size: they cost
# most of this file's CPU time (cargo builds), so they can be marked and run apart.

@pytest.mark.toolchain
@pytest.mark.parametrize("bits", [256, 512, 1024])
def test_checker_passes_each_size(tmp_path, bits):
    """The recommended variant of each size, cargo release, on every published known answer of
    the size and the reference model's vectors."""
    need_cargo()
    v = variant(bits)
    vec, records = vectors(tmp_path, bits)
    row = rust_checker.check(v, RUNS["cargo release"], tmp_path / "wd", vec)
    assert row.status == "PASS" and row.checks == expected_checks(records), row.detail


MATRIX = [
    (256, Options("table", "loop", 2), "cargo release"),
    (256, Options("fly", "full", 3), "cargo debug"),
    (512, Options("fly", "loop", 2), "cargo zeroize+std"),
    (1024, Options("table", "full", 2), "clippy -D warnings"),
    (1024, Options("fly", "loop", 1), "valgrind memcheck"),
]


def _matrix_id(case) -> str:
    bits, o, run = case
    return f"{bits}-{o.keys}-{o.unroll}-i{o.interleave}-{run.split()[0]}"


@pytest.mark.toolchain
@pytest.mark.parametrize("case", MATRIX, ids=_matrix_id)
def test_checker_rows_matrix(tmp_path, case):
    """Every other row, each on another option family."""
    need_cargo()
    bits, o, run = case
    v = variant(bits, o)
    vec, records = vectors(tmp_path, bits)
    row = rust_checker.check(v, RUNS[run], tmp_path / "wd", vec)
    assert row.status == "PASS", row.detail
    if run.startswith("valgrind"):        # the first MEMCHECK_RECORDS records and every batch
        records = min(records, rust_checker.MEMCHECK_RECORDS)
    assert row.checks == (1 if run.startswith("clippy") else expected_checks(records)), row.detail


@pytest.mark.toolchain
@pytest.mark.parametrize("bits", [512])
def test_no_wipe_crate_passes_and_keeps_the_schedule_matrix(tmp_path, bits):
    need_cargo()
    v = variant(bits, Options("fly", "full", 1), wipe=False)
    vec, records = vectors(tmp_path, bits)
    row = rust_checker.check(v, RUNS["cargo release"], tmp_path / "wd", vec)
    assert row.status == "PASS" and row.checks == expected_checks(records), row.detail


def _broken(tmp_path, v, edit, run="cargo release"):
    files = render_variant(v)
    name = f"{v.stem}/src/lib.rs"
    files[name] = edit(files[name])
    vec, _ = vectors(tmp_path, v.spec.bits, count=5)
    with sources.given({v: (files, ())}):
        return rust_checker.check(v, RUNS[run], tmp_path / "wd", vec)


@pytest.mark.toolchain
def test_checker_fails_a_wrong_rotation(tmp_path):
    need_cargo()
    v = variant(256, Options("fly", "full", 1))
    row = _broken(tmp_path, v, lambda t: t.replace("x1 = x1.rotate_left(14);", "x1 = x1.rotate_left(15);", 1))
    assert row.status == "FAIL" and "result" in row.detail, row.detail


def _use_after_free(t: str) -> str:
    """A crate that reads freed memory (unsafe, forbid lifted, std linked): the vectors pass
    natively, memcheck reports the read."""
    t = t.replace("#![forbid(unsafe_code)]\n", "").replace("#![no_std]\n", "")
    return t.replace("    let mut w = [0u8; 8];\n",
                     "    let mut w = [0u8; 8];\n    if N == 16 {\n"
                     "        let gone = std::vec![1u8; 64];\n        let p = gone.as_ptr();\n"
                     "        drop(gone);\n        let _ = unsafe { core::ptr::read_volatile(p) };\n    }\n", 1)


# (id, size, options, the edit of lib.rs, the row that must fail, what its detail says, a row the
# broken crate still passes (None: none asked))
BROKEN = [
    # interleave 3: n % 3 blocks go through the tail loop; a crate that drops them fails n = 1, 2, 4...
    ("256-blocks-tail-skipped", 256, Options("fly", "full", 3),
     lambda t: t.replace(".iter_mut().zip(tweak_groups.remainder())",
                         ".iter_mut().zip(tweak_groups.remainder()).take(0)"),
     "cargo release", "_blocks_with_tweaks", None),
    ("256-wipe-missing", 256, Options("fly", "full", 1), lambda t: t.replace("        wipe(&mut self.k);\n", ""),
     "cargo release", "drop wipes the key schedule", None),
    # a plain + where the description adds mod 2^64: release wraps (the vectors pass), the debug
    # row's overflow checks panic
    ("256-overflowing-add-debug", 256, Options("fly", "full", 1),
     lambda t: t.replace("x0 = x0.wrapping_add(x1);", "x0 += x1;"), "cargo debug", "overflow", "cargo release"),
    ("256-use-after-free-memcheck", 256, Options("fly", "full", 1), _use_after_free, "valgrind memcheck",
     "Invalid read", "cargo release"),
    ("256-needless-mut-clippy", 256, Options("fly", "full", 1),
     lambda t: t.replace("let t0 = load64(tweak, 0);", "let mut t0 = load64(tweak, 0);", 1),
     "clippy -D warnings", "mut", None),
]


@pytest.mark.toolchain
@pytest.mark.parametrize("case", BROKEN, ids=[c[0] for c in BROKEN])
def test_checker_fails_a_broken_crate_matrix(tmp_path, case):
    """Each row fails the crate broken for it (and, where asked, the release row still passes it:
    only that row can see the break)."""
    need_cargo()
    _, bits, o, edit, run, says, passes = case
    v = variant(bits, o)
    if passes:
        assert _broken(tmp_path / "ok", v, edit, passes).status == "PASS"
    row = _broken(tmp_path / "bad", v, edit, run)
    assert row.status == "FAIL" and says in row.detail, row.detail


@pytest.mark.toolchain
@pytest.mark.parametrize("bits, primitives", [(256, ("threefish",)), (256, ("skein",)), (256, ())],
                         ids=["256-threefish", "256-skein", "256-both"])
def test_verify_target_rust_runs_every_row_matrix(tmp_path, bits, primitives):
    """`threefish-gen verify --target rust [--primitive P]`: the cargo rows of each recommended
    variant (the Threefish crate's, the Skein crate's, or both without --primitive), all PASS;
    --primitive leaves the other crate out.  make test runs the Threefish crate's rows (the Skein
    crate's rows run in test_skein_checker_rows' cases), make verify the other two."""
    need_cargo()
    report = tmp_path / "report.json"
    p = cli("verify", "--target", "rust", "--size", str(bits), "--constants", "1.2", "--random", "5", "--seed", "7",
            "--workdir", str(tmp_path / "wd"), "--report", str(report), "--no-cache", "--jobs", "2",
            *[a for prim in primitives for a in ("--primitive", prim)])
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    rows = json.loads(report.read_text())["rows"]
    # the NEON row (cross-built for AArch64, run under qemu) is SKIPPED, with the reason, where no rustc
    # with the AArch64 std is found (verify/rust.py aarch64_missing; tests/test_rust_simd.py covers it)
    no_neon = rust_checker.aarch64_missing()
    assert all(r["status"] == "PASS" or r["status"] == "BUILT" and r["build"] == "cargo std avx512"
               or no_neon and r["status"] == "SKIPPED" and r["build"] == "cargo aarch64 neon (qemu)"
               for r in rows), rows
    # the recommended Threefish crate has SIMD paths (--isa auto): its rows are SIMD_RUNS, the AVX-512
    # row only built on a CPU without AVX-512
    rec = get_target("rust").variants("recommended", [get_spec("1.2", bits)])[0]
    tf = [r["build"] for r in rows if r["variant"] == f"rust auto {bits} v1.2 fly/full/i2"]
    sk = [r["build"] for r in rows if r["variant"] == f"rust skein {bits} v1.2 fly/full/i1"]
    want = set(primitives or ("threefish", "skein"))
    assert sorted(tf) == (sorted(r.name for r in rust_checker.runs(rec)) if "threefish" in want else [])
    assert sorted(sk) == (sorted(r.name for r in rust_checker.SKEIN_RUNS) if "skein" in want else [])
    assert len(rows) == len(tf) + len(sk)


@pytest.mark.toolchain
def test_check_reads_a_rendered_crate_and_fails_an_edited_one(tmp_path):
    """`threefish-gen check DIR` on a crate render wrote: the recorded command names the variant,
    the user's files (not a fresh render) are built; an edited rotation fails."""
    need_cargo()
    out = tmp_path / "out"
    assert cli("render", "--target", "rust", "--size", "256", "--constants", "1.1", "--out", str(out)).returncode == 0
    p = cli("check", str(out), "--random", "5")
    assert p.returncode == 0 and "rust 256 v1.1 fly/full/i2" in p.stdout and "cargo release" in p.stdout, \
        p.stdout[-1500:] + p.stderr
    assert "note:" not in p.stdout, p.stdout              # all three files found, none differs
    lib = out / "tf256_v11_rust_fly_full_i2" / "src" / "lib.rs"
    assert lib.is_file()
    text = lib.read_text()
    m = re.search(r"\.rotate_left\((\d+)\)", text)
    assert m
    lib.write_text(text[:m.start()] + f".rotate_left({int(m.group(1)) % 63 + 1})" + text[m.end():])
    p = cli("check", str(out), "--random", "5")
    assert p.returncode == 1 and "FAIL rust 256 v1.1" in p.stdout, p.stdout[-1500:] + p.stderr


def test_cargo_config_stays_in_the_build_folder(tmp_path):
    """The offline source replacement is written under the build folder's CARGO_HOME, never into
    the crate the user gets."""
    env = rust_checker.cargo_env(tmp_path)
    cfg = (tmp_path / "cargo-home" / "config.toml").read_text()
    assert env["CARGO_HOME"] == str(tmp_path / "cargo-home") and 'directory = "/usr/share/cargo/registry"' in cfg
    assert "offline = true" in cfg
    assert not any(".cargo" in name or "config" in name for name in render_variant(variant(512)))



def test_render_names_the_crates_bootstrap_installs_and_verify_needs():
    """The dependencies a rendered crate's Cargo.toml names are its primitive's CRATES
    (gen/targets/rust.py), the crates verify's offline builds look for in the registry, and
    scripts/bootstrap.sh installs the package of each (its reader of CRATES, run here)."""
    from threefish_gen.gen.targets.rust import CRATES
    for primitive, v in (("threefish", variant(512)), ("skein", skein_variant(512))):
        (toml,) = [t for n, t in render_variant(v).items() if n.endswith("/Cargo.toml")]
        deps = toml.split("\n[dependencies]\n")[1].split("\n[")[0]
        assert re.findall(r"^(\w+) = ", deps, re.M) == sorted(CRATES[primitive]), (primitive, deps)
        runs = rust_checker.SKEIN_RUNS if primitive == "skein" else rust_checker.RUNS
        assert {r.registry for r in runs} == {CRATES[primitive]}
    script = (ROOT / "scripts" / "bootstrap.sh").read_text()
    assert "librust-zeroize" not in script and "librust-digest" not in script      # no second list
    reader = script.split("<<'PY'\n", 1)[1].split("\nPY\n", 1)[0]
    out = subprocess.run([sys.executable, "-", str(ROOT / "threefish_gen/gen/targets/rust.py")], input=reader,
                         capture_output=True, text=True, check=True).stdout.split()
    assert sorted(out) == sorted({c for crates in CRATES.values() for c in crates}) == ["digest", "zeroize"]


def test_cached_rows_are_keyed_by_the_rust_toolchain():
    """verify's result cache reuses a PASS row only for the same cargo, rustc and clippy, and the
    same offline crate registry (Debian's librust-*-dev: '@cargo-registry', its content)."""
    from threefish_gen.verify import matrix, shard
    kind = get_target("rust").checker(variant(512))
    assert kind in matrix.CHECKERS
    assert shard.tools_of(RUNS["cargo release"], matrix.CHECKERS[kind].tools) == [
        "@cargo-registry", "cargo", "cargo-clippy", "rustc"]
    # the NEON row's key also names the cross linker, qemu and the AArch64 rustc (whichever is found)
    neon = next(r for r in rust_checker.SIMD_RUNS if r.target)
    assert {"aarch64-linux-gnu-gcc", "qemu-aarch64"} <= set(shard.tools_of(neon, matrix.CHECKERS[kind].tools))
    assert (rust_checker.aarch64_rustc() or "rustc-aarch64-absent") in shard.tools_of(neon)


# ---------------------------------------------------------------------------- Skein (--primitive skein)

SKEIN_RUNS = {r.name: r for r in rust_checker.SKEIN_RUNS}


def skein_variant(bits, o=None, version="1.3", **extra):
    t = get_target("rust")
    spec = get_spec(version, bits)
    return t.variant(spec, o or t.default_options_for(spec, {"primitive": "skein"}), primitive="skein", **extra)


def test_skein_render_writes_a_no_std_crate(tmp_path):
    out = tmp_path / "out"
    p = cli("render", "--target", "rust", "--primitive", "skein", "--size", "512", "--constants", "1.3", "--out", str(out))
    assert p.returncode == 0, p.stderr
    crate = out / "skein512_v13_rust_fly_full"
    assert p.stdout.splitlines() == [str(crate / n) for n in ("Cargo.toml", "src/lib.rs", "README.md")]
    lib = (crate / "src" / "lib.rs").read_text()
    toml = (crate / "Cargo.toml").read_text()
    assert "#![no_std]" in lib and "#![forbid(unsafe_code)]" in lib
    assert not re.search(r"\bunsafe\b", lib.replace("#![forbid(unsafe_code)]", ""))
    for fn in ("pub fn new(out_len: usize) -> Self", "pub fn new_keyed(key: &[u8], out_len: usize) -> Self",
               "pub fn with_params(params: &Params<'_>, out_len: usize) -> Self",
               "pub fn update(&mut self, data: &[u8])", "pub fn update_bits(&mut self, data: &[u8], nbits: usize)",
               "pub fn finalize_into(mut self, out: &mut [u8])", "pub fn hash(msg: &[u8], out: &mut [u8])",
               "pub fn mac(key: &[u8], msg: &[u8], out: &mut [u8])", "pub fn hash_bits(", "pub fn mac_bits(",
               "pub fn hash_params(", "pub fn hash_many(msgs: &[&[u8]], outs: &mut [u8], out_len: usize)",
               "pub struct Skein512Tree", "pub fn new(out_len: usize, leaf: u32, fan: u32, max_height: u32)",
               "pub struct Params<'a>", "impl Drop for State", "impl Drop for Nodes",
               "impl VariableOutput for Skein512", "pub struct Skein512Fixed<", "pub struct Skein512Mac<",
               "pub type Skein512_256 = Skein512Fixed<digest::consts::U32>;"):
        assert fn in lib, fn
    # the Params fields in the specification's order
    fields = re.findall(r"    pub (\w+): &'a \[u8\],", lib)
    assert fields == ["key", "pers", "pubkey", "keyid", "nonce"]
    deps = toml.split("[dependencies]", 1)[1].split("[features]", 1)[0]
    assert [ln for ln in deps.splitlines() if ln and not ln.startswith("#")] == [
        'digest = { version = "0.10", optional = true, default-features = false, features = ["mac"] }',
        'zeroize = { version = "1.5", optional = true, default-features = false }']
    assert 'default = []' in toml and 'digest = ["dep:digest"]' in toml and 'zeroize = ["dep:zeroize"]' in toml
    cmd = ("threefish-gen render --target rust --size 512 --constants 1.3 --keys fly --unroll full --interleave 1 "
           "--primitive skein")
    assert all(cmd in t for t in (lib, toml, (crate / "README.md").read_text()))


@pytest.mark.parametrize("bits", [256, 512, 1024])
@pytest.mark.parametrize("keys,unroll", [("fly", "full"), ("table", "loop")])
def test_skein_ubi_is_the_description_op_for_op(bits, keys, unroll):
    """The UBI block function is gen/skein.ubi_program printed by gen/printers/rust.py: its
    rotations, adds and xors are the program's, statement for statement; the template has no
    round of its own.  It is inlined into the blocks loop of the non-inlined ``ubi``, reads the
    position t[0] through black_box (and nothing else), and takes its scratch arrays from ``ubi``,
    which declares them once and wipes them after the loop (templates/rust/skein.rs.j2)."""
    from threefish_gen.gen import skein
    o = Options(keys, unroll, 1)
    lib = lib_rs(render_variant(skein_variant(bits, o)))
    m = re.search(r"\nfn ubi_block\(.*?\n}\n", lib, re.S)
    assert m
    ubi = m.group(0)
    prog = skein.ubi_program(get_spec("1.3", bits), o)
    want = count_ops_static(prog.setup + prog.body)
    assert ubi.count(".rotate_left(") == want["rotl"] and ubi.count(".wrapping_add(") == want["add"]
    assert len(re.findall(r"\w \^= ", ubi)) == want["xor"]
    assert len(re.findall(r"\n\s*h\[\d+\] = x\d+;", ubi)) == bits // 64            # the feed-forward stores
    assert lib.count(".rotate_left(") == want["rotl"] and ".rotate_right(" not in lib
    assert re.search(r"#\[inline\(always\)\]\nfn ubi_block\(", lib)
    assert re.findall(r"black_box\((\w+\[\d+\])\)", ubi) == ["t[0]"]
    loop = re.search(r"#\[inline\(never\)\]\nfn ubi\(.*?\n}\n", lib, re.S)
    assert loop
    scratch = re.findall(r"let mut (\w+) = \[0u64; \d+\];", loop.group(0))
    assert (keys, unroll) == ("fly", "full") or scratch          # table / loop: scratch arrays
    assert not re.findall(r"let mut \w+ = \[0u64", ubi)          # none declared per block
    body = loop.group(0)
    for a in scratch:                                              # passed in, wiped after the loop
        assert f", &mut {a}" in body and f"{a}: &mut [u64; " in ubi.splitlines()[1]
        assert body.index(f"\n    wipe(&mut {a});\n") > body.rindex("\n    }\n")
    template = (ROOT / "threefish_gen" / "templates" / "rust" / "skein.rs.j2").read_text()
    assert "rotate_left" not in template and "wrapping_add(k" not in template


def test_skein_no_wipe_and_variants():
    plain = lib_rs(render_variant(skein_variant(256)))
    bare = lib_rs(render_variant(skein_variant(256, wipe=False, annotate="none")))
    assert "impl Drop for State" in plain and "fn wipe(" in plain and "// round 0" in plain
    assert "impl Drop" not in bare and "fn wipe" not in bare and "wipe(" not in bare and "// round 0" not in bare
    t = get_target("rust")
    specs = [get_spec(v, b) for v in ("1.1", "1.2", "1.3") for b in (256, 512, 1024)]
    for which in ("recommended", "all"):
        sk = [v for v in t.variants(which, specs) if v.primitive == "skein"]
        assert len(sk) == 9 and {(v.spec.version, v.spec.bits) for v in sk} == {(s.version, s.bits) for s in specs}
        assert all(v.options == Options("fly", "full", 1) for v in sk)
    assert t.checker(skein_variant(512)) == "cargo-skein"
    p = cli("render", "--target", "rust", "--primitive", "skein", "--size", "256", "--constants", "1.3",
            "--interleave", "2", "--out", "/nonexistent/x")
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "--interleave 1" in lines[0], p.stderr


def golden_lines(bits, version="1.3") -> list[str]:
    """The H / B lines of the official golden file's records of this size (whole-byte digests)
    and, v1.3, the T lines of its tree records (verify/kat/skein_v1.3_tree.kat: 11 or 12 a size),
    written here from the files: the digests are the files', not the model's."""
    from threefish_gen.gen.kat import KAT_DIR, parse
    recs = parse(KAT_DIR / f"skein_v{version}_golden.kat",
                 ("version", "state_bits", "digest_bits", "msg_bits", "message", "digest"))
    out = []
    for r in recs:
        if int(r["state_bits"]) != bits or int(r["digest_bits"]) % 8:
            continue
        nbits, key, msg, dig = int(r["msg_bits"]), r.get("mac_key", b""), r["message"], r["digest"]
        if nbits % 8:
            out.append(f"B {len(dig)} {nbits} {key.hex() or '-'} - - - - {msg.hex()} {dig.hex()}")
        else:
            out.append(f"H {len(dig)} {key.hex() or '-'} - {msg[:nbits // 8].hex() or '-'} {dig.hex()}")
    if version == "1.3":
        trees = [r for r in parse(KAT_DIR / "skein_v1.3_tree.kat") if int(r["state_bits"]) == bits]
        assert len(trees) == (11 if bits == 256 else 12)
        out += [f"T {len(r['digest'])} {r['leaf']} {r['node']} {r['max_levels']} "
                f"{r['message'].hex()} {r['digest'].hex()}" for r in trees]
    return out


@pytest.mark.toolchain
@pytest.mark.parametrize("edited", [True, False], ids=["edited", "as-rendered"])
def test_skein_check_reads_a_crate_and_fails_an_edited_byte(tmp_path, edited):
    """`check DIR` on a Skein crate render wrote: the user's files are built (cargo release) and run
    on the Skein vectors (every golden record of the official file for the size, with the file's
    digests, and the model's records: MAC, personalization, every UBI argument, tree, hash_many,
    chunkings); as rendered it passes, one changed byte of src/lib.rs fails it."""
    need_cargo()
    out = tmp_path / "out"
    assert cli("render", "--target", "rust", "--primitive", "skein", "--size", "256", "--constants", "1.3",
               "--out", str(out)).returncode == 0
    lib = out / "skein256_v13_rust_fly_full" / "src" / "lib.rs"
    if edited:
        text = lib.read_text()
        m = re.search(r"\.rotate_left\((\d+)\)", text)
        lib.write_text(text[:m.start()] + f".rotate_left({int(m.group(1)) % 63 + 1})" + text[m.end():])
    wd = tmp_path / "wd"
    p = cli("check", str(out), "--random", "5", "--seed", "3", "--workdir", str(wd), "--report", str(tmp_path / "r.json"))
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert [r["build"] for r in rows] == ["cargo release"] and "rust skein 256 v1.3 fly/full/i1" in p.stdout, p.stdout
    if edited:
        assert p.returncode == 1 and rows[0]["status"] == "FAIL" and "differs" in p.stdout, p.stdout[-1500:] + p.stderr
    else:
        assert p.returncode == 0 and rows[0]["status"] == "PASS" and "note:" not in p.stdout, p.stdout[-1500:] + p.stderr
    (vec,) = (wd / "vectors").glob("skein-*256*.txt")
    lines = set(vec.read_text().splitlines())
    golden = golden_lines(256)
    assert len(golden) > 40 and any(ln.startswith("B ") for ln in golden) and all(g in lines for g in golden)
    assert {ln[0] for ln in lines if ln[:1].isupper()} >= {"H", "B", "T", "M", "E"}


def _skein_wipe_missing(t: str) -> str:
    return t.replace("        wipe(&mut self.h);\n        wipe(&mut self.t);\n", "", 1)


# (id, size, options, extra, row, vectors (golden: the official file's records only, and E;
# model: verify's Skein vector file), edit of lib.rs or None, status, what the detail says)
SKEIN_CASES = [
    ("256-golden-file-release", 256, None, {}, "cargo release", "golden", None, "PASS", "checks"),
    ("512-golden-file-release", 512, None, {}, "cargo release", "golden", None, "PASS", "checks"),
    ("1024-golden-file-release", 1024, None, {}, "cargo release", "golden", None, "PASS", "checks"),
    ("256-nowipe-fly-loop-release", 256, Options("fly", "loop", 1), {"wipe": False}, "cargo release", "model", None,
     "PASS", "checks"),
    ("512-fly-full-digest", 512, None, {}, "cargo digest+zeroize+std", "model", None, "PASS", "features digest"),
    ("1024-table-loop-release", 1024, Options("table", "loop", 1), {}, "cargo release", "model", None, "PASS", "checks"),
    ("256-table-full-debug", 256, Options("table", "full", 1), {}, "cargo debug", "model", None, "PASS", "dev build"),
    ("1024-fly-full-clippy", 1024, None, {}, "clippy -D warnings", "model", None, "PASS", "clippy clean"),
    ("512-fly-full-memcheck", 512, None, {}, "valgrind memcheck", "model", None, "PASS", "valgrind"),
    ("256-wipe-missing", 256, None, {}, "cargo release", "golden", _skein_wipe_missing, "FAIL", "drop wipes the state"),
    ("256-tree-level-skipped", 256, None, {}, "cargo release", "model",
     lambda t: t.replace("            j += 1;\n        }\n        root", "            j += 2;\n        }\n        root"),
     "FAIL", "T: streamed digest"),
    ("512-bitpad-missing", 512, None, {}, "cargo release", "golden",
     lambda t: t.replace("FINAL | if self.partial != 0 { BITPAD } else { 0 }", "FINAL"), "FAIL", "bits"),
]


@pytest.mark.toolchain
@pytest.mark.parametrize("case", SKEIN_CASES, ids=[c[0] for c in SKEIN_CASES])
def test_skein_checker_rows(tmp_path, case):
    """The Skein crate's rows (verify/rust.py SKEIN_RUNS).  golden: the crate's digests of the
    official golden file's records (bit lengths and MACs included) equal the file's -- the
    vectors are written from the file here, not by the model; model: verify's vector file, on
    other rows, sizes and option sets; and crates broken for the harness's checks fail their row."""
    need_cargo()
    _, bits, o, extra, run, kind, edit, status, says = case
    v = skein_variant(bits, o, **extra)
    if kind == "golden":
        vec = tmp_path / "golden.txt"
        vec.write_text("\n".join(golden_lines(bits) + ["E"]) + "\n")
    else:
        from threefish_gen.verify.skein_c_abi import vector_file as skein_vectors
        vec = skein_vectors(v.spec, tmp_path / "vec.txt", 10, 5)
    if edit is None:
        row = rust_checker.check(v, SKEIN_RUNS[run], tmp_path / "wd", vec)
    else:
        files = render_variant(v)
        name = f"{v.stem}/src/lib.rs"
        assert edit(files[name]) != files[name]
        files[name] = edit(files[name])
        with sources.given({v: (files, ())}):
            row = rust_checker.check(v, SKEIN_RUNS[run], tmp_path / "wd", vec)
    assert row.status == status and says in row.detail, row.detail
    if kind == "golden" and status == "PASS":
        assert row.checks > 20 * len(golden_lines(bits)), row.detail
