"""`threefish-gen explore`: the report's pictures agree with the passes they draw.

The pressure maximum is recomputed here from gen/asm/liveness.intervals (live values at each
position, independently of the explorer), the spill/reload marks are compared with the
allocator's stats, the HTML must parse with no external URL, and headless Chromium renders it.
"""
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from conftest import ROOT
from threefish_gen.gen import asm as ra
from threefish_gen.gen import targets as registry
from threefish_gen.gen.printers import nasm
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.threefish import Options, describe

PY = sys.executable
ASM = [t.name for t in registry.TARGETS.values() if t.recipe.language == "nasm"]
SIMD = [t.name for t in registry.TARGETS.values() if t.option("isa") is not None and t.recipe.language != "nasm"]


def cli(*args):
    return subprocess.run([PY, "-m", "threefish_gen", *args], cwd=ROOT, capture_output=True, text=True)


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.urls, self.svgs, self.marks = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        for k in ("href", "src", "xlink:href", "action"):
            if k in a:
                self.urls.append(a[k])
        if tag == "svg" and a.get("class") == "pressure":
            self.svgs.append(a)
        if tag == "line" and (a.get("class") or "").startswith("mark "):
            self.marks.append(a["class"].split()[1])


def report(tmp_path, *args):
    out = tmp_path / "r.html"
    p = cli("explore", *args, "--out", str(out))
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    c = Collect()
    c.feed(text)
    c.close()
    return out, text, c


def lowered(target, size):
    """The default variant's ISA model and MOps, lowered here through the backend's own entry points."""
    v = registry.get(target).variant(get_spec("1.3", size), Options("fly", "full", 1), "")
    no = registry.get(target).options(v)
    isa = ra.isa_for(registry.get(target).machine, no.abi, no.rotate, no.words)
    return isa, ra.lower(describe(v.spec, v.options, "encrypt", 1), isa)


def max_live(ops):
    iv = ra.intervals(ops)
    return max(sum(1 for a, b in iv.values() if a <= i <= b) for i in range(len(ops)))


def test_small_case_one_chart_per_strategy_and_counts(tmp_path):
    _, text, c = report(tmp_path, "--target", ASM[0], "--size", "256")
    assert [s["data-strategy"] for s in c.svgs] == list(ra.STRATEGIES)
    isa, ops = lowered(ASM[0], 256)
    want = max_live(ops)
    assert want > 0
    for s in c.svgs:
        assert int(s["data-max-live"]) == want
    spills = reloads = 0
    for st in ra.STRATEGIES:
        a = ra.allocate(ops, isa, st)
        spills += a.stats["spills"]
        reloads += a.stats["reloads"]
    assert c.marks.count("spill") == spills and spills > 0
    assert c.marks.count("reload") == reloads
    # anchored rows: every mark links to a row that exists
    ids = set(re.findall(r'<tr id="([^"]+)"', text))
    rows = [u[1:] for u in c.urls if re.fullmatch(r"#[a-z-]+-\d+", u)]
    assert len(rows) >= spills + reloads and all(r in ids for r in rows)


def test_nasm_counts_show_source_and_code_bytes(tmp_path):
    """Source bytes = the rendered .asm and .h; code bytes = the .text of the object nasm makes
    of them here (binutils' size -A; nasm's symbols carry no size, so the functions' bytes add up
    to the section)."""
    from threefish_gen.gen.render import render_variant, write_files
    if shutil.which("nasm") is None or shutil.which("size") is None:
        pytest.skip("nasm or binutils not installed")
    _, text, _ = report(tmp_path, "--target", ASM[0], "--size", "256", "--strategy", "belady")
    counts = dict(re.findall(r"<tr><td>([a-z /]+)</td><td>(.*?)</td></tr>", text))
    v = registry.get(ASM[0]).variant(get_spec("1.3", 256), Options("fly", "full", 1), "", strategy="belady")
    files = render_variant(v)
    write_files(files, tmp_path / "src")
    assert int(counts["source bytes"]) == sum((tmp_path / "src" / f).stat().st_size for f in files)
    obj = tmp_path / "x.o"
    subprocess.run(["nasm", "-f", "elf64", "-o", str(obj), str(tmp_path / "src" / f"{v.stem}.asm")], check=True)
    size = subprocess.run(["size", "-A", str(obj)], capture_output=True, text=True, check=True).stdout
    assert int(counts["code bytes"]) == next(int(ln.split()[1]) for ln in size.splitlines() if ln.startswith(".text "))
    assert counts["code bytes per function"].startswith("encrypt ")


def test_no_external_urls_and_parses(tmp_path):
    _, text, c = report(tmp_path, "--target", ASM[1], "--size", "512")
    assert "html" in c.tags and "svg" in c.tags and "script" in c.tags
    assert all(u.startswith("#") for u in c.urls), [u for u in c.urls if not u.startswith("#")][:3]
    assert not re.search(r"(https?:)?//[a-z0-9]", re.sub(r"<script>.*?</script>", "", text, flags=re.S).replace(
        "http://www.w3.org/2000/svg", ""))
    assert "<link" not in text and "@import" not in text


def test_named_fails_at_1024_with_one_line(tmp_path):
    _, text, c = report(tmp_path, "--target", ASM[0], "--size", "1024")
    assert [s["data-strategy"] for s in c.svgs] == ["linear-scan", "belady"]
    assert re.search(r'<p class="fail">fails: cannot allocate', text)
    isa, ops = lowered(ASM[0], 1024)
    st = {s: ra.allocate(ops, isa, s).stats["spills"] for s in ("linear-scan", "belady")}
    assert c.marks.count("spill") == sum(st.values())
    assert st["belady"] < st["linear-scan"]


def _size_rows(text):
    """The code size section's rows: [(label, options, source bytes, code bytes, how)]."""
    sec = re.search(r'<section id="size">(.*?)</section>', text, re.S).group(1)
    rows = [re.findall(r"<td>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", sec, re.S)]
    return [tuple(r[:5]) for r in rows if r]


def test_simd_layout_counts_and_lane_map(tmp_path):
    _, text, _ = report(tmp_path, "--target", SIMD[0], "--isa", "avx2", "--size", "512")
    assert "vector operations per block" in text
    # code size (issue 30): the page's variant and its --unroll loop form; the loop's machine code
    # (gcc -O2, the object's function symbols) and source are the smaller
    from threefish_gen.gen.render import render_variant
    (_, full_o, full_src, full_code, how), (_, loop_o, loop_src, loop_code, _) = _size_rows(text)
    assert (full_o, loop_o) == ("fly/full/i1", "fly/loop/i1") and how.startswith("gcc -O2")
    v = registry.get(SIMD[0]).variant(get_spec("1.3", 512), Options("fly", "full", 1), "", isa="avx2")
    assert int(full_src) == sum(len(t.encode()) for t in render_variant(v).values())
    if shutil.which("gcc"):
        assert 0 < int(loop_code) < int(full_code) and int(loop_src) < int(full_src)
    rows = re.findall(r"<tr><td>(after round \d+)</td><td>(.*?)</td>", text)
    assert len(rows) == get_spec("1.3", 512).rounds
    # every round's A lanes hold even words only, each once
    for _, a in rows:
        words = [int(w) for w in re.findall(r"w(\d+)", a)]
        assert sorted(words) == list(range(0, 8, 2))


@pytest.mark.parametrize("args", [("--size", "99"), ("--strategy", "nope"), ("--target", ASM[0], "--registers", "0"),
                                  ("--interleave", "9")])
def test_bad_input_one_line_exit_2(tmp_path, args):
    p = cli("explore", *args, "--out", str(tmp_path / "x.html"))
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("threefish-gen: error: ") and "Traceback" not in p.stderr


def _chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    boot = ROOT / "scripts" / "bootstrap.sh"
    if shutil.which("apt-get"):
        subprocess.run([str(boot)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    return shutil.which("chromium")


def test_headless_chromium_renders_png(tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium is absent and scripts/bootstrap.sh could not install it (Debian package chromium)")
    out, _, _ = report(tmp_path, "--target", ASM[0], "--size", "256")
    png = tmp_path / "r.png"
    p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1200,1400", "--enable-logging=stderr", f"--screenshot={png}", out.as_uri()],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
    assert "Uncaught" not in p.stderr and "SyntaxError" not in p.stderr
