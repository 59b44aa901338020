"""The render command in every file's header (issue 25, item 2): one writer and one reader
(gen/header.py), for every target and primitive; ``check`` reads what ``render`` writes, refuses
copies it would not build, and turns an unreadable header into one line."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from threefish_gen.tools.check_dir import collect, header_command
from threefish_gen.cli import cli
from threefish_gen.gen import header
from threefish_gen.gen import targets as registry
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.output import MANIFEST, write_files
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.threefish import Options

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SET_ALL = [v for t in registry.names() for v in registry.variants("all", t)]


def prefix_option(v) -> str:
    return "class" if registry.get(v.target).option("class") is not None else "prefix"


def recorded(v) -> list[str]:
    """The words after ``render`` as a file of ``v`` records them (its printer's call)."""
    return header.find(" *   " + v.command(prefix_option(v)))


def kinds(variants):
    """One variant per (target, primitive, target option names): the smallest size first."""
    seen = {}
    for v in sorted(variants, key=lambda v: v.spec.bits):
        seen.setdefault((v.target, v.primitive, tuple(k for k, _ in v.extra)), v)
    return list(seen.values())


def test_every_variant_of_set_all_round_trips():
    targets = {v.target for v in SET_ALL}
    assert targets == set(registry.names()) and len(SET_ALL) > 500
    # every target that declares --primitive (all of them now) renders both
    skein = {t for t in targets if registry.get(t).option("primitive") is not None}
    assert len(skein) >= 4 and {(v.target, v.primitive) for v in SET_ALL} >= \
        {(t, p) for t in skein for p in ("threefish", "skein")}
    bad = [(v.label(), recorded(v)) for v in SET_ALL if registry.from_command(recorded(v)) != v]
    assert not bad, bad[:5]


@pytest.mark.parametrize("target,size,options,values", [
    ("c", 512, None, dict(wipe=False, annotate="full")),
    ("c", 256, Options("table", "loop", 3), dict(annotate="none")),
    ("c-simd", 1024, None, dict(isa="auto", primitive="skein")),
    ("nasm-x64", 512, None, dict(abi="win64")),
    ("nasm-x64", 256, None, dict(primitive="skein")),
    ("nasm-x64", 512, None, dict(primitive="skein", abi="win64")),
    ("nasm-x86", 256, None, dict(wipe=False)),
    ("csharp", 512, None, dict(namespace="My.Crypto", wipe=False, layout="packed")),
    ("csharp", 1024, None, dict(namespace="My.Crypto", primitive="skein")),
    ("csharp", 256, None, dict(primitive="skein", wipe=False)),
])
def test_options_outside_the_sets_round_trip(target, size, options, values):
    t = registry.get(target)
    if options is None:
        options = t.default_options_for(get_spec("1.2", size), values)
    t_values = {k: v for k, v in values.items() if t.option(k) is not None}
    for prefix in ("", "my_lib_" if t.option("class") is None else "MyClass"):
        v = t.variant(get_spec("1.2", size), options, prefix, **t_values)
        assert registry.from_command(recorded(v)) == v, v.command()


@pytest.mark.parametrize("v", kinds(SET_ALL), ids=lambda v: v.label())
def test_every_kind_of_rendered_file_records_its_variant_and_the_command_renders_it(v, tmp_path):
    """The header of every file a variant renders names that variant; run as a command, it renders
    the same files."""
    files = render_variant(v)
    write_files(files, tmp_path / "a")
    for name in files:
        argv = header_command(tmp_path / "a" / name)
        assert argv is not None and registry.from_command(argv) == v, (name, argv)
    argv = header_command(tmp_path / "a" / next(iter(files)))
    r = CliRunner().invoke(cli, ["render", *argv, "--out", str(tmp_path / "b")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    b = tmp_path / "b"          # (a rust crate's names are nested: STEM/src/lib.rs)
    assert {p.relative_to(b).as_posix(): p.read_text() for p in b.rglob("*")
            if p.is_file() and p.name != MANIFEST} == files


def test_older_headers_still_read():
    """Files from before gen/header.py: the C# Skein header had --version and no --keys/--unroll/
    --interleave; C# Threefish had --class after the options."""
    sk = registry.from_command(shlex.split("--target csharp --primitive skein --size 256 --version 1.3 "
                                           "--namespace ThreefishGen --class Skein256V13"))
    assert sk == registry.get("csharp").variant(get_spec("1.3", 256), primitive="skein")
    tf = registry.from_command(shlex.split("--target csharp --size 1024 --constants 1.1 --layout lanes --keys fly "
                                           "--unroll full --interleave 1 --namespace ThreefishGen "
                                           "--class Threefish1024V11Lanes --no-wipe"))
    assert tf.prefix == "Threefish1024V11Lanes" and tf.get("wipe") is False and tf.get("layout") == "lanes"


@pytest.mark.parametrize("argv,says", [
    ("--size 256 --constants 1.3", "no --target"),
    ("--target c --constants 1.3", "no --size"),
    ("--target c --size 256", "no --constants"),
    ("--target c --size x --constants 1.3", "not a whole number"),
    ("--target c --size 256 --constants 1.3 --keys", "--keys has no value"),
    ("--target c --size 256 --constants 1.3 stray", "unexpected 'stray'"),
    ("--target c --size 256 --constants 1.3 --size 512", "--size is given twice"),
    ("--target c --size 256 --constants 1.3 --class X", "--class does not apply"),
    ("--target nope --size 256 --constants 1.3", "unknown target"),
])
def test_bad_recorded_commands_are_one_line_errors(argv, says):
    with pytest.raises(GenError, match=says):
        registry.from_command(shlex.split(argv))


def test_check_reads_what_render_writes_for_csharp_skein_and_the_shipped_out(tmp_path):
    r = CliRunner().invoke(cli, ["render", "--target", "csharp", "--primitive", "skein", "--size", "512",
                                 "--constants", "1.3", "--out", str(tmp_path / "skein")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    found, others = collect(tmp_path / "skein")
    assert len(found) == 1 and not others and found[0][0].primitive == "skein"
    assert not any("differs" in n for n in found[0][3]), found[0][3]
    found, _ = collect(ROOT / "out" / "csharp")
    assert len(found) == len(list((ROOT / "out" / "csharp").glob("*.cs")))
    assert not [n for _, _, _, notes, _ in found for n in notes], [n for _, _, _, notes, _ in found for n in notes]


def _render(out: Path, *args):
    r = CliRunner().invoke(cli, ["render", "--target", "c", "--size", "256", "--constants", "1.3", *args,
                                 "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return sorted(p for p in out.iterdir() if p.name != MANIFEST)


def test_a_copy_with_the_same_header_is_refused_not_skipped(tmp_path):
    c, h = _render(tmp_path / "d")
    (c.parent / "copy.c").write_text(c.read_text())
    with pytest.raises(GenError, match=r"copy\.c .*record the same render command|record the same render.*copy\.c"):
        collect(tmp_path / "d")
    (c.parent / "copy.c").unlink()
    (c.parent / "copy.h").write_text(h.read_text())
    with pytest.raises(GenError, match="record the same render command"):
        collect(tmp_path / "d")


def test_the_same_variant_in_two_folders_is_refused(tmp_path):
    _render(tmp_path / "d" / "one")
    _render(tmp_path / "d" / "two")
    with pytest.raises(GenError, match="same variant .* in two folders"):
        collect(tmp_path / "d")
    assert len(collect(tmp_path / "d" / "one")[0]) == 1


def test_a_renamed_file_is_still_found_by_its_kind(tmp_path):
    c, h = _render(tmp_path / "d")
    c.rename(c.parent / "mine.c")
    (found,), _ = collect(tmp_path / "d")
    assert not [n for n in found[3] if "no .c file" in n]


def test_unbalanced_quote_in_a_header_is_one_line_exit_2(tmp_path):
    c, h = _render(tmp_path / "d")
    c.write_text(c.read_text().replace("--prefix ", "--prefix 'oops ", 1))
    p = subprocess.run([sys.executable, "-m", "threefish_gen", "check", str(tmp_path / "d")], env=ENV,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "header command cannot be read" in p.stderr and str(c) in p.stderr, p.stderr
