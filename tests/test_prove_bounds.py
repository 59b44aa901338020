"""`prove --file` on hostile input: one line and exit 2 (what the prover cannot read or bound),
never a traceback and never exit 1 (which means DIFFERS), each well under a minute (issue 25
item 6): deep nesting, self-referencing macros, huge shifts and immediates, a 4e9-trip loop, and
the wall-time and memory limits of the command."""
import re
import time

import pytest

from test_prove import cli, committed_source
from threefish_gen.gen import targets
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec

V = targets.variants("recommended", "c", [get_spec("1.3", 256)])[0]     # fly, full, interleave 2
C_ARGS = ("--target", "c", "--size", "256", "--constants", "1.3", "--interleave", "2")


def _edit(text, old, new, before=""):
    assert old in text, old
    return before + text.replace(old, new, 1)


def _exit_2(tmp_path, name, text, args, *extra):
    """Prove text as a file; assert one line on stderr, nothing on stdout, exit 2, in < 60 s."""
    f = tmp_path / name
    f.write_text(text)
    t0 = time.monotonic()
    p = cli("prove", *args, "--file", str(f), *extra)
    took = time.monotonic() - t0
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stdout == "", p.stdout
    assert took < 60, took
    return p.stderr


C_CASES = {
    "nesting": (lambda t: _edit(t, "x0 += x1;", "x0 += " + "(" * 1200 + "x1" + ")" * 1200 + ";"),
                r"nests deeper than the prover follows \(RecursionError\)"),
    "macros": (lambda t: _edit(t, "x0 += x1;", "x0 += A;", "#define A B\n#define B A\n"),
               r"line \d+: the macro A expands to itself"),
    "shift": (lambda t: _edit(t, "x1 = (x1 << 14) | (x1 >> 50);", "x1 = (x1 << 100000000000) | (x1 >> 50);"),
              r"line \d+: a shift by 100000000000 \(C shifts a 64-bit word by 0\.\.63\)"),
    "hex-immediate": (lambda t: _edit(t, "x0 += x1;", "x0 += 0x" + "f" * 10_000_000 + ";"),
                      r"line \d+: an integer constant of 10,000,002 characters"),
    "decimal-immediate": (lambda t: _edit(t, "x0 += x1;", "x0 += 1" + "0" * 100_000 + ";"),
                          r"line \d+: an integer constant of 100,001 characters"),
    "65-bit-immediate": (lambda t: _edit(t, "x0 += x1;", "x0 += 0x10000000000000000;"),
                         r"line \d+: the integer constant 0x10000000000000000 is wider than 64 bits"),
    "4e9-trip-loop": (lambda t: _edit(t, "x0 += x1;", "x0 += x1;\n    for (i = 0; i < 4000000000; i++) {\n"
                                                       "        x0 ^= 0;\n    }"),
                      r"the loop at line \d+ runs more than 10,000 times \(the prover's trip-count limit\)"),
}


@pytest.mark.parametrize("case", list(C_CASES))
def test_hostile_c_is_one_line_and_exit_2(tmp_path, case):
    edit, want = C_CASES[case]
    err = _exit_2(tmp_path, "hostile.c", edit(committed_source(V)), C_ARGS)
    assert re.search(want, err), err


def test_hostile_shift_count_in_assembly_is_exit_2(tmp_path):
    v = next(v for v in targets.variants("all", "nasm-x64", [get_spec("1.3", 256)])
             if v.get("isa") is None and v.get("abi") == "sysv" and v.get("rotate", "rol") == "rol"
             and v.options.interleave == 1)
    text = render_variant(v)[f"{v.stem}.asm"]
    line = next(ln for ln in text.splitlines() if re.match(r"\s+rol\s+\w+, \d+$", ln))
    edited = text.replace(line, re.sub(r"\d+$", "100000000000", line), 1)
    o = v.options
    args = ["--target", "nasm-x64", "--size", "256", "--constants", "1.3", "--keys", o.keys, "--unroll", o.unroll,
            "--interleave", str(o.interleave)] + [a for k, x in v.extra for a in (f"--{k}", x)]
    err = _exit_2(tmp_path, "hostile.asm", edited, args)
    assert "a shift or rotate count of 100000000000 (0..63)" in err, err


@pytest.mark.parametrize("extra, want", [
    # 0.01 s: the whole proof of this file took 0.2 s on Zen 4 (2026-11-27), so 0.2 s was no limit there
    (("--time-limit", "0.01"), r"gave up after 0\.01 s \(the time limit; --time-limit SECONDS, 0 for none\)"),
    (("--memory-limit", "1"), r"gave up at 1 MiB \(the memory limit; --memory-limit MIB, 0 for none\)"),
], ids=["time", "memory"])
def test_the_time_and_memory_limits_are_one_line_and_exit_2(tmp_path, extra, want):
    """A correct file past the limits is no verdict: exit 2, not 1 (the defaults, 1200 s and
    8192 MiB, prove every generated file: the other tests of prove run under them)."""
    err = _exit_2(tmp_path, "right.c", committed_source(V), C_ARGS, *extra)
    assert re.search(want, err), err
