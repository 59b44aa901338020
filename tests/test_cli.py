"""The command line as a user meets it: `render` for every version x size, bad input, `kat`."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from threefish_gen.gen.spec import SIZES, VERSIONS, get_spec
from threefish_gen.verify.runner import HARNESS, vector_file

PY = sys.executable


def cli(*args, cwd=None):
    return subprocess.run([PY, "-m", "threefish_gen", *args], cwd=cwd or ROOT, capture_output=True, text=True)


def assert_one_line_error(p):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("threefish-gen: error: "), p.stderr
    assert "Traceback" not in p.stderr + p.stdout


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("size", SIZES)
def test_render_invocation_from_the_issue(tmp_path, size, version):
    """`render --target c --size S --version V --prefix tf_ --out DIR`: one .c and one .h whose
    functions are tf_*, and they pass the harness on fresh vectors (KATs, random, batches)."""
    out = tmp_path / "out"
    p = cli("render", "--target", "c", "--size", str(size), "--constants", version, "--prefix", "tf_",
            "--out", str(out))
    assert p.returncode == 0, p.stderr
    files = sorted(f.name for f in out.iterdir() if f.name != ".threefish-gen-manifest")
    assert len(files) == 2 and {f.rsplit(".", 1)[1] for f in files} == {"c", "h"}
    c_file = next(out.glob("*.c"))
    h_file = next(out.glob("*.h"))
    header = h_file.read_text()
    for fn in ("tf_encrypt(", "tf_decrypt(", "tf_encrypt_blocks(", "tf_decrypt_blocks("):
        assert fn in header
    assert 'extern "C"' in header
    # the header comment records the command that made the file
    assert f"render --target c --size {size} --constants {version}" in c_file.read_text()
    spec = get_spec(version, size)
    vectors = vector_file(spec, tmp_path / "vectors.txt", 25, seed=size * 10 + int(version[-1]))
    exe = tmp_path / "harness"
    b = subprocess.run(["gcc", "-O1", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-I{out}",
                        f'-DTF_HEADER="{h_file.name}"', "-DTF_PREFIX=tf_", f"-DTF_BYTES={spec.block_bytes}",
                        str(HARNESS), str(c_file), "-o", str(exe)], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    r = subprocess.run([str(exe), str(vectors)], capture_output=True, text=True)
    assert r.returncode == 0 and " 0 failed" in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("args, needle", [
    (["--size", "511", "--constants", "1.3"], "--size"),
    (["--size", "512", "--constants", "1.4"], "--constants"),
    (["--size", "512", "--constants", "1.3", "--target", "z80"], "target"),
    (["--size", "512", "--constants", "1.3", "--keys", "sometimes"], "--keys"),
    (["--size", "512", "--constants", "1.3", "--unroll", "half"], "--unroll"),
    (["--size", "512", "--constants", "1.3", "--interleave", "0"], "--interleave"),
    (["--size", "512", "--constants", "1.3", "--prefix", "1bad-"], "--prefix"),
    (["--size", "512"], "--constants"),
    (["--size", "512", "--constants", "1.3", "--frobnicate"], "frobnicate"),
])
def test_bad_render_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, needle):
    out = tmp_path / "out"
    p = cli("render", *args, "--out", str(out))
    assert_one_line_error(p)
    assert needle in p.stderr
    assert not out.exists() or not any(out.iterdir())


def test_output_folder_that_cannot_be_created():
    p = cli("render", "--size", "256", "--constants", "1.3", "--out", "/proc/threefish-gen/x")
    assert_one_line_error(p)


def test_read_only_output_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user who can write into a read-only folder (root)")
        p = cli("render", "--size", "256", "--constants", "1.3", "--out", str(ro))
        assert_one_line_error(p)
        assert not any(ro.iterdir())
    finally:
        os.chmod(ro, 0o700)


def test_render_output_is_deterministic(tmp_path):
    for d in ("a", "b"):
        p = cli("render", "--size", "1024", "--constants", "1.1", "--keys", "table", "--unroll", "loop",
                "--out", str(tmp_path / d))
        assert p.returncode == 0, p.stderr
    a = {f.name: f.read_bytes() for f in (tmp_path / "a").iterdir()}
    b = {f.name: f.read_bytes() for f in (tmp_path / "b").iterdir()}
    assert a == b and sorted(a)[0] == ".threefish-gen-manifest" and len(a) == 3     # .c, .h, manifest


def test_list_names_every_target_version_and_size():
    p = cli("list")
    assert p.returncode == 0
    for word in ("c", "nasm-x64", "nasm-x86", "csharp", "--isa avx512", "1.1", "1.2", "1.3", "1024"):
        assert word in p.stdout


def test_kat_command_checks_the_published_files():
    files = sorted(str(f) for f in (ROOT / "threefish_gen" / "verify" / "kat").glob("threefish*.kat"))
    assert len(files) == 9
    p = cli("kat", *files)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().endswith("kat: 0 failed")


def test_kat_command_catches_a_wrong_ciphertext(tmp_path):
    src = (ROOT / "threefish_gen" / "verify" / "kat" / "threefish512_v1.3.kat").read_text().splitlines()
    i = next(n for n, ln in enumerate(src) if ln.startswith("ciphertext = "))
    last = src[i][-1]
    src[i] = src[i][:-1] + ("0" if last != "0" else "1")
    bad = tmp_path / "bad.kat"
    bad.write_text("\n".join(src) + "\n")
    p = cli("kat", str(bad))
    assert p.returncode == 1 and "FAIL" in p.stdout


@pytest.mark.parametrize("mutate", [
    lambda t: t.replace("\nblock_bits = 512", "\nblock_bits = 500", 1),
    lambda t: t.replace("\nkey = ", "\nkey = zz", 1),
    lambda t: t.replace("\ntweak = ", "\ntwaek = ", 1),
    lambda t: t.replace("\nplaintext = ", "\nplaintext = 0", 1),
    lambda t: t + "\nthis line is not a field\n",
])
def test_malformed_kat_file_is_one_line_exit_2(tmp_path, mutate):
    text = (ROOT / "threefish_gen" / "verify" / "kat" / "threefish512_v1.3.kat").read_text()
    bad = tmp_path / "bad.kat"
    bad.write_text(mutate(text))
    assert_one_line_error(cli("kat", str(bad)))


def test_missing_kat_file_is_one_line_exit_2(tmp_path):
    assert_one_line_error(cli("kat", str(tmp_path / "nope.kat")))


def test_python_dash_m_and_console_script_agree():
    assert cli("--help").returncode == 0
    exe = shutil.which("threefish-gen")
    if exe:
        p = subprocess.run([exe, "list"], capture_output=True, text=True)
        assert p.returncode == 0 and p.stdout == cli("list").stdout


def test_render_set_part_by_size_and_constants(tmp_path):
    """`render --set recommended --constants V [--size S]` writes that part of the set (make gen
    ships v1.3 only through it): every file of the full set whose name has that version (and size),
    and nothing else; a part with no variant is one error line."""
    full, part, part2 = tmp_path / "full", tmp_path / "part", tmp_path / "part2"
    assert cli("render", "--set", "recommended", "--target", "c", "--out", str(full)).returncode == 0
    p = cli("render", "--set", "recommended", "--target", "c", "--constants", "1.2", "--out", str(part))
    assert p.returncode == 0, p.stderr
    names = lambda d: sorted(f.name for f in d.iterdir() if not f.name.startswith("."))
    want = [n for n in names(full) if "_v12_" in n]
    assert want and names(part) == want and len(want) * 3 == len(names(full))
    assert all((part / n).read_bytes() == (full / n).read_bytes() for n in want)
    p = cli("render", "--set", "recommended", "--target", "c", "--constants", "1.3", "--size", "512",
            "--out", str(part2))
    assert p.returncode == 0, p.stderr
    assert names(part2) == [n for n in names(full) if "_v13_" in n and "512_" in n] != []
    assert_one_line_error(cli("render", "--set", "recommended", "--target", "c", "--keys", "fly",
                              "--out", str(tmp_path / "x")))
