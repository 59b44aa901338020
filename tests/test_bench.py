"""`threefish-gen bench --quick` on one size and a few rows: the tables have the rows, the
ratios and the peer lines, and bench.json / bench.md agree with them.  Nothing about speed."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REF = "c fly/full/i2 gcc"          # RECOMMENDED_C[256], built with gcc


def _simd_row(bits: int) -> tuple[str, object]:
    """The row name and options of the recommended AVX2 lanes path (gen/targets/c_simd.py
    RECOMMENDED: the dispatcher's AVX2 path, a standalone variant of the quick set), gcc."""
    from threefish_gen.gen.targets.c_simd import RECOMMENDED
    o = next(o for isa, _, o in RECOMMENDED[bits] if isa == "avx2")
    return f"c-simd avx2 lanes {o.keys}/{o.unroll}/i{o.interleave} gcc", o


SIMD256 = _simd_row(256)[0]


def _flags() -> set:
    for ln in Path("/proc/cpuinfo").read_text().splitlines():
        if ln.startswith("flags"):
            return set(ln.split(":", 1)[1].split())
    return set()


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        pytest.skip("gcc/g++ not installed")
    d = tmp_path_factory.mktemp("bench")
    cmd = [sys.executable, "-m", "threefish_gen", "bench", "--quick", "--size", "256", "--size", "512",
           "--target", "c-simd", "--target", "nasm-x64", "--target", "nasm-x86",
           "--filter", _simd_row(256)[0], "--filter", _simd_row(512)[0], "--filter", "nasm-x64 gpr belady",
           "--json", str(d / "bench.json"), "--md", str(d / "bench.md"), "--chart", str(d / "chart")]
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, json.loads((d / "bench.json").read_text()), (d / "bench.md").read_text(), d


def _row(out: str, title: str, name: str) -> list[str]:
    section = out.split(f"\n{title} ", 1)[1].split("\n\n", 1)[0]
    for ln in section.splitlines():
        if ln.strip().startswith(name + " "):
            return ln.split()
    raise AssertionError(f"no row {name!r} under {title!r}:\n{section}")


def _paired(a: dict, b: dict) -> float:
    import statistics
    sa, sb = ({(p, k): c for p, k, c in x["samples"]} for x in (a, b))
    return statistics.median(sa[k] / sb[k] for k in sa if k in sb)


def test_harness_alternates_rows_sample_by_sample(quick_run):
    """harness/bench.c times the rows of one size and mode in rounds, A B A B ...: SAMPLE records
    come out in that order, round k of every row before round k + 1 of any."""
    d = quick_run[3]
    exe = next(d.rglob("bench/bench"))
    p = subprocess.run([str(exe), "--quick", "--samples", "3", "--mode", "bulk", "--filter", REF,
                        "--filter", "crypto++"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "CLOCKSRC\t" in p.stdout
    got = [(f[1], int(f[4])) for ln in p.stdout.splitlines() if (f := ln.split("\t"))[0] == "SAMPLE"
           and f[2] == "256"]
    names = list(dict.fromkeys(n for n, _ in got))
    assert len(names) >= 1 and got == [(n, k) for k in range(3) for n in names]


def test_tables_have_rows_ratios_and_peers(quick_run):
    out, data, _, _ = quick_run
    for mode in ("bulk", "chained"):
        title = f"Threefish-256 {mode}"
        assert f"{title} (scalar C: {REF} " in out
        ref = _row(out, title, REF)
        # cpb, min, spread [noisy: N%], then vs C of the reference itself
        assert next(t for t in ref[len(REF.split()):] if t.endswith("x")) == "1.00x"
        assert "Threefish-1024" not in out                                    # --size 256 512 only
        if shutil.which("nasm"):
            _row(out, title, "nasm-x64 gpr belady")
        if "avx2" in _flags():
            _row(out, title, SIMD256)
    assert "c table/loop/i1" not in out and "c-simd avx512" not in out      # filtered out, not built
    if "avx2" not in _flags():
        assert f"SKIPPED {SIMD256} (Threefish-256): CPU lacks avx2" in out
    assert "SKIPPED nasm-x86 (all sizes):" in out
    peers = [r for r in data["results"] if r["kind"] == "peer"]
    if Path("/usr/include/crypto++/threefish.h").exists() or Path("/usr/include/cryptopp/threefish.h").exists():
        assert any(r["name"] == "crypto++" for r in peers)
    if Path("/usr/include/botan-2/botan/threefish_512.h").exists():    # Botan 2: Threefish-512 only
        assert {r["bits"] for r in peers if r["name"].startswith("botan")} == {512}
    if peers:
        assert "best peer: " in out


def test_json_ratios_and_op_counts(quick_run):
    _, data, md, _ = quick_run
    res = data["results"]
    assert data["reference"] == {"256": REF, "512": "c fly/full/i1 gcc"}
    for mode in ("bulk", "chained"):
        rows = [r for r in res if r["bits"] == 256 and r["mode"] == mode]
        ref = next(r for r in rows if r["name"] == REF)
        peers = [r for r in rows if r["kind"] == "peer"]
        best = min(peers, key=lambda p: p["cpb"]) if peers else None
        for r in rows:      # ratios: the median of the per-round ratios (paired samples, paired.py)
            assert r["vs_c"] == pytest.approx(_paired(r, ref), rel=1e-2)
            assert r["spread"] is not None and r["samples"]
            if peers:
                assert r["vs_peer"] == pytest.approx(_paired(r, best), rel=1e-2)
    if "avx2" in _flags():
        for bits, nw in ((256, 4), (512, 8)):
            name, o = _simd_row(bits)
            rows = [r for r in res if r["name"] == name and r["bits"] == bits]
            bulk = next(r for r in rows if r["mode"] == "bulk")
            # rounds x (words/2) MIX, one xor each, over 4 blocks per 256-bit vector (plus a fraction
            # for the tweak word t2 per group): 72 rounds unrolled (36 xors per block for
            # Threefish-256, 72 for 512), the 24 of one pass for the loop form (its body's counts)
            rounds = 72 if o.unroll == "full" else 24
            assert rounds * nw // 2 / 4 <= bulk["ops"]["xor"] < rounds * nw // 2 / 4 + 1, (name, bulk["ops"])
            assert bulk["ops"]["blocks per pass"] == 4 * o.interleave      # groups of 4 blocks
            assert next(r for r in rows if r["mode"] == "chained")["ops"] == {}   # one block: scalar code
    assert "## Threefish-256 bulk" in md and f"| {REF} |" in md
    assert "SKIPPED nasm-x86" in md


def test_every_generated_row_has_its_bound(quick_run):
    """Bounds (tools/bench/row_bounds.py): scalar C rows of both modes have one, x bound = cpb / bound;
    peers show '-' (None in the JSON); the port model is named."""
    out, data, md, _ = quick_run
    assert data["port_model"].startswith("port model ")
    for r in data["results"]:
        if r["kind"] == "peer":
            assert r["bound"] is None and r["x_bound"] is None
        elif r["target"] == "c":
            assert r["bound"] > 0 and r["x_bound"] == pytest.approx(r["cpb"] / r["bound"], rel=1e-2)
    ref = _row(out, "Threefish-256 chained", REF)
    assert ref[-3].endswith("x") and float(ref[-4]) > 0                # bound, x bound columns (then the sizes)
    assert "| bound | x bound |" in md


def test_bench_draws_its_chart_from_the_json(quick_run):
    """PNG + SVG beside the JSON (matplotlib from Debian); the chart's bars are the fastest row per
    target and each peer, the same figures as the JSON's rows."""
    from threefish_gen.tools.bench.chart import series, size_points
    out, data, _, _ = quick_run
    line = next(ln for ln in out.splitlines() if ln.startswith("bench: chart"))
    assert line.startswith("bench: chart written to "), line
    png, svg, size_png, size_svg = (Path(p) for p in line.split(" to ", 1)[1].split(", "))
    assert size_png.name == png.stem + "-size.png" and size_svg.name == png.stem + "-size.svg"
    for a, b in ((png, svg), (size_png, size_svg)):
        assert a.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "<svg" in b.read_text()[:500]
    ser = series(data)
    rows = [r for r in data["results"] if r["kind"] == "variant" and r["target"] == "c" and r["mode"] == "bulk"
            and r["bits"] == 512]
    assert ser["c"][(512, "bulk")] == min(r["cpb"] for r in rows)
    assert {"c", "c-simd", "nasm-x64"} <= set(ser)
    # the size chart's points: every bulk row with code bytes, at (code bytes, c/B)
    pts = size_points(data)
    want = {(r["name"], r["code_bytes"], r["cpb"]) for r in data["results"]
            if r["mode"] == "bulk" and r["code_bytes"] and r["bits"] == 512}
    assert want and {(n, x, y) for n, _, x, y in pts[512]} == want


def test_frontier_keeps_the_rows_nothing_beats_on_size_and_speed():
    from threefish_gen.tools.bench.chart import frontier
    pts = [("full", "c", 17000, 4.0), ("loop", "c", 6000, 4.5), ("worse", "c", 9000, 5.0),
           ("fastest", "c", 40000, 2.0), ("tie", "c", 17000, 4.2)]
    assert [p[0] for p in frontier(pts)] == ["loop", "full", "fastest"]


def test_rust_rows_build_pass_the_checks_and_agree_with_c(tmp_path):
    """The Rust rows (tools/bench/rust_rows.py: the rendered crates behind a C-ABI static library):
    Threefish-256 beside its scalar C reference of the same options, through bench.c's checks
    (--check-only: the all-zero vector gives v1.3's published ciphertext through both functions,
    blocks == single block on random data, nothing written past the end), and Skein-512-512
    through skein_bench.c's, which compares the Rust digest with the C render's on 64 B, 1 KiB and
    64 KiB.  Builds only (no timing)."""
    from threefish_gen.tools.bench import rust_rows, skein_rows
    from threefish_gen.tools.bench.run import build, default_entries
    why = rust_rows.missing()
    if why:
        if "cargo" in {t.strip() for t in os.environ.get("THREEFISH_GEN_ALLOW_SKIP", "").split(",")}:
            pytest.skip(why)
        pytest.fail(f"{why} -- run `make setup`, or set THREEFISH_GEN_ALLOW_SKIP=cargo")
    entries = default_entries((256,), "1.3", (rust_rows.TARGET.name,), quick=True)
    rust_row = "rust fly/full/i2 cargo"          # the Rust crate of RECOMMENDED_C[256]'s options
    simd_row = "rust auto fly/full/i2 cargo"     # the same with its SIMD paths (the recommended crate)
    assert [e[0] for e in entries] == [REF, rust_row, simd_row]
    exe, notes, *_ = build(entries, tmp_path / "tf", stream=open(os.devnull, "w"))
    assert not notes, notes
    p = subprocess.run([str(exe), "--check-only", "--filter", REF, "--filter", rust_row, "--filter", simd_row],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    checks = {tuple(ln.split("\t")[1:]) for ln in p.stdout.splitlines() if ln.startswith(("CHECK", "FAIL"))}
    assert checks == {(REF, "256", "ok", "v1.3"), (rust_row, "256", "ok", "v1.3"), (simd_row, "256", "ok", "v1.3")}, \
        p.stdout
    exe, notes = skein_rows.build(tmp_path / "skein", rust=True)
    assert not [n for n in notes if "Rust" in n], notes
    p = subprocess.run([str(exe), "--check-only"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = [ln.split("\t")[1:] for ln in p.stdout.splitlines() if ln.startswith("CHECK") and "Rust" in ln]
    assert got == [["ok", f"Rust Skein-512-512 equals the C render on {n} bytes"] for n in (64, 1024, 65536)], \
        p.stdout
    assert "CHECK\tFAIL" not in p.stdout


def test_skein_rust_goal_line_is_the_median_of_per_round_ratios():
    """skein_rows' goal line (issue 29): the Rust and C scalar hash rows of one size, alternated by
    skein_bench.c (row_pair), give the median of their per-round ratios (two passes' samples keyed
    (pass, round)); a burst of load that hits both samples of a round cancels; 1.08x is NOT met, a
    ratio that wanders is not judged; a size without the Rust row has no line."""
    from threefish_gen.tools.bench import skein_rows
    C, R = skein_rows.C_ROW, skein_rows.RUST_ROW

    def program(rounds):            # [(bytes, c, rust)] per round -> skein_bench.c's lines
        lines, rows = [], {}
        for k, (n, c, r) in enumerate(rounds):
            lines += [f"SAMPLE\t{C}\t{n}\t{k}\t{c}", f"SAMPLE\t{R}\t{n}\t{k}\t{r}"]
            rows.setdefault(n, []).append((c, r))
        for n, cs in rows.items():
            lines += [f"ROW\t{C}\t{n}\t{sorted(c for c, _ in cs)[len(cs) // 2]}\t1\t3.0",
                      f"ROW\t{R}\t{n}\t{sorted(r for _, r in cs)[len(cs) // 2]}\t1\t3.0"]
        return "\n".join(lines)

    burst = [1, 1, 1.6, 1, 1, 1, 1]                 # round 2 of each pass: both rows slowed alike
    wander = [0.9, 1.2, 1.0, 1.3, 0.95, 1.25, 1.1]   # the Rust row alone, unevenly
    runs = [skein_rows.parse(program([(65536, 4.5 * b, 4.5 * 1.02 * b) for b in burst]
                                     + [(1024, 5.4 * b, 5.4 * 1.08 * b) for b in burst]
                                     + [(64, 18.0, 18.0 * w) for w in wander]), i)[0] for i in range(2)]
    runs[1] += skein_rows.parse(f"ROW\t{C}\t1048576\t4.5\t4.4\t3.0")[0]
    rows = skein_rows.merge(runs)
    assert len(next(r for r in rows if r["name"] == R and r["bytes"] == 65536)["samples"]) == 14
    got = {g["bytes"]: g for g in skein_rows.rust_goal_lines(rows)}
    assert sorted(got) == [64, 1024, 65536]
    assert got[65536]["paired"] and abs(got[65536]["ratio"] - 1.02) < 1e-9 and got[65536]["spread"] < 1e-9
    assert got[65536]["verdict"] == "met" and "= 1.020 (paired: min 1.02, spread 0.0%; goal <= 1.05: met)" \
        in got[65536]["line"]
    assert got[1024]["verdict"].startswith("NOT met") and abs(got[1024]["ratio"] - 1.08) < 1e-9
    assert got[64]["verdict"].endswith("(not judged)") and got[64]["spread"] > 0.05


def _nm_functions(obj: Path) -> dict[str, int]:
    """{function: bytes} from binutils' nm -S (the text symbols that carry a size)."""
    p = subprocess.run(["nm", "-S", "--defined-only", str(obj)], capture_output=True, text=True, check=True)
    return {f[3]: int(f[1], 16) for ln in p.stdout.splitlines() if len(f := ln.split()) == 4 and f[2] in "tT"}


def _text_bytes(obj: Path) -> int:
    """The .text section's size from binutils' size -A."""
    p = subprocess.run(["size", "-A", str(obj)], capture_output=True, text=True, check=True)
    return next(int(ln.split()[1]) for ln in p.stdout.splitlines() if ln.startswith(".text "))


def test_size_columns_match_an_independent_count(quick_run):
    """src KiB / code KiB (tools/codesize.py): the reference row's source bytes are the sizes of its
    rendered files on disk, its code bytes the sizes nm -S gives its functions in the object the
    bench linked (gcc: every function symbol has its size); the NASM row's code bytes are its
    object's .text (nasm gives symbols no size: each function runs to the next one).  The text
    table, bench.md and bench.json show the same figures; peers have none."""
    from threefish_gen.tools.bench.run import default_entries
    out, data, md, d = quick_run
    work = d / "build" / "bench"
    ents = {n: v for n, v, _ in default_entries((256,), "1.3", ("c", "nasm-x64"), quick=True)}
    for name in (REF, "nasm-x64 gpr belady i2") if shutil.which("nasm") else (REF,):
        v = ents[name]
        rows = [r for r in data["results"] if r["name"] == name and r["bits"] == 256]
        assert len(rows) == 2
        src = work / "src" / v.stem
        assert rows[0]["src_bytes"] == sum(f.stat().st_size for f in src.iterdir()) > 0
        obj, = (work / "obj").glob(v.stem + "-*.o")
        if name == REF:
            nm = _nm_functions(obj)
            assert rows[0]["code_functions"] == nm and all(f.startswith(v.prefix) for f in nm)
            assert rows[0]["code_bytes"] == sum(nm.values()) and "symbol sizes" in rows[0]["code_note"]
        else:
            assert rows[0]["code_bytes"] == _text_bytes(obj) and "label distances" in rows[0]["code_note"]
            assert {f[len(v.prefix):] for f in rows[0]["code_functions"]} >= {"encrypt", "encrypt_blocks"}
        for r in rows:
            assert (r["src_bytes"], r["code_bytes"]) == (rows[0]["src_bytes"], rows[0]["code_bytes"])
            sk, ck = f"{r['src_bytes'] / 1024:.1f}", f"{r['code_bytes'] / 1024:.1f}"
            line = _row(out, f"Threefish-256 {r['mode']}", name)
            assert line[-2:] == [sk, ck], line          # src KiB, code KiB (no op counts after them)
            assert f" | {sk} | {ck} | " in md
    for r in data["results"]:
        if r["kind"] == "peer":
            assert r["src_bytes"] is None and r["code_bytes"] is None
    assert "src KiB code KiB" in " ".join(out.split()) and "| src KiB | code KiB |" in md


def test_a_loop_kernel_has_less_code_than_its_full_kernel(tmp_path):
    """--unroll loop (24-round passes) against fully unrolled, same options otherwise: the built
    objects' function bytes (build(): what the bench tables show), scalar C and NASM gpr: less
    than two thirds (a pass is 24 of the 72 rounds, plus the functions' fixed parts)."""
    from threefish_gen.tools.bench.run import build, default_entries
    names = ["c fly/full/i1 gcc", "c fly/loop/i1 gcc"]
    if shutil.which("nasm"):
        names += ["nasm-x64 gpr belady", "nasm-x64 gpr belady loop"]
    entries = [e for e in default_entries((512,), "1.3", ("c", "nasm-x64")) if e[0] in names]
    assert sorted(e[0] for e in entries) == sorted(names)
    _, notes, _, sizes = build(entries, tmp_path / "tf", stream=open(os.devnull, "w"))
    assert not [n for n in notes if n.startswith("FAIL")], notes
    got = {name: sizes[(name, 512)] for name in names}
    for full, loop in zip(names[::2], names[1::2]):
        assert 0 < 3 * got[loop]["code_bytes"] < 2 * got[full]["code_bytes"], (got[loop], got[full])
        assert 0 < got[loop]["src_bytes"] < got[full]["src_bytes"]
