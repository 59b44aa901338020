"""threefish-gen tune (budget, pruning, profile), render --profile / --set tuned, and the
dispatcher's CPU table (fake cpuid answers through -DTHREEFISH_GEN_FAKE_CPUID)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from threefish_gen.tools import tune  # noqa: E402
from threefish_gen.gen import cpu_rules, reference  # noqa: E402
from threefish_gen.gen.errors import GenError  # noqa: E402
from threefish_gen.gen.render import render_variant  # noqa: E402
from threefish_gen.gen.spec import Spec  # noqa: E402
from threefish_gen.gen.targets.c_simd import TARGET as SIMD  # noqa: E402
from threefish_gen.gen.threefish import Options  # noqa: E402
from threefish_gen.verify import runner, simd  # noqa: E402
from threefish_gen.verify.cpu import cpu_flags  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "threefish_gen", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT)


def profile(results: dict, **top) -> dict:
    return {"format": cpu_rules.FORMAT, "name": "test", "cpu": {"model_name": "Test CPU"}, "date": "2026-11-24",
            "match": {"vendor": "TestVendor", "family": 1, "models": [[0, 255]]}, "results": results, **top}


def win(options: dict, cc="gcc", cpb=1.5) -> dict:
    return {"bulk": {"winner": {"name": "w", "options": options, "compiler": cc, "cpb": cpb}, "runner_up": None}}


# --------------------------------------------------------------------------- pruning and planning

def test_prune_keeps_what_is_within_the_ratio_of_the_best():
    cheap = {"a": 2.0, "b": 2.5, "c": 2.51, "d": 1.9, "e": 9.0}
    kept, pruned = tune.prune(cheap, 1.25)
    assert kept == ["d", "a"]                     # 1.9 * 1.25 = 2.375
    assert pruned == ["b", "c", "e"]
    assert tune.prune({"x": 3.0}) == (["x"], [])
    assert tune.prune({}) == ([], [])
    kept, _ = tune.prune({"a": 1.0, "b": 1.25, "c": 1.2501})
    assert kept == ["a", "b"]                     # the boundary is kept


def test_plan_full_shrinks_to_the_budget():
    groups = {("c", 256, "bulk"): [f"r{i}" for i in range(10)], ("c", 256, "chained"): ["q0", "q1"]}
    assert tune.plan_full(groups, 1000.0) == (3, 7, groups)          # everything fits: full plan
    p, s, kept = tune.plan_full(groups, 1.0)
    assert (p, s) == (1, 3)
    bulk = kept[("c", 256, "bulk")]
    assert bulk == groups[("c", 256, "bulk")][:len(bulk)] and 1 <= len(bulk) < 10       # the fastest ones
    assert tune.full_cost(len(bulk) + len(kept[("c", 256, "chained")]), 2, 1, 3) <= 1.0
    p, s, kept = tune.plan_full(groups, 0.0)          # nothing fits: still the best of each group
    assert all(len(v) == 1 for v in kept.values())

# --------------------------------------------------------------------------- tune itself

@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_tune_writes_a_profile_within_its_budget(tmp_path):
    budget = 15
    out = tmp_path / "p.json"
    t = time.monotonic()
    p = cli("tune", "--target", "c", "--size", "256", "--budget", budget, "--workdir", tmp_path / "w", "--out", out)
    wall = time.monotonic() - t
    assert p.returncode == 0, p.stderr[-2000:]
    assert wall < budget + 2.0, wall
    assert "tune: 1/" in p.stderr and f"/{budget}s]" in p.stderr          # progress lines
    prof = cpu_rules.load_profile(out.read_text(), str(out))
    assert prof["cpu"]["vendor"] and isinstance(prof["cpu"]["family"], int) and "date" in prof
    assert prof["budget_s"] == budget and prof["elapsed_s"] < budget
    for mode in ("bulk", "chained"):
        g = prof["results"]["c"]["256"][mode]
        w = g["winner"]
        assert w and w["cpb"] > 0 and w["cpb_min"] <= w["cpb"] and w["compiler"] in ("gcc", "clang")
        assert set(w["options"]) >= {"keys", "unroll", "interleave"}
        if g["runner_up"]:      # ranked by the paired ratio to the winner (tools/bench/paired.py)
            assert g["runner_up"]["vs_winner"] >= 1.0 and isinstance(g.get("toss_up"), bool)
        built = prof["candidates"]["built"]
        assert g["measured"] + len(g["pruned"]) + len(g["failed"]) <= built
        assert all(x["cheap_cpb"] > 0 for x in g["pruned"])


# --------------------------------------------------------------------------- render --profile / --set tuned

def test_render_profile_bakes_the_winner_in(tmp_path):
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(profile({
        "c": {"512": win({"keys": "table", "unroll": "loop", "interleave": 2}, "clang", 3.21)},
        "c-simd": {"256": win({"keys": "fly", "unroll": "full", "interleave": 1, "isa": "avx2", "layout": "hybrid"})},
    })))
    p = cli("render", "--target", "c", "--size", "512", "--constants", "1.3", "--profile", pf, "--out", tmp_path / "a")
    assert p.returncode == 0, p.stderr
    c = next((tmp_path / "a").glob("*.c")).read_text()
    head = "\n".join(c.splitlines()[:6])
    assert "--keys table --unroll loop --interleave 2" in head
    assert f"tuned: {pf} (test: Test CPU, 2026-11-24): bulk winner w, 3.21 c/B (clang)" in head
    # an option given on the command line wins over the profile's
    p = cli("render", "--target", "c", "--size", "512", "--constants", "1.3", "--interleave", "1", "--profile", pf,
            "--out", tmp_path / "b")
    assert p.returncode == 0, p.stderr
    assert "--keys table --unroll loop --interleave 1" in next((tmp_path / "b").glob("*.c")).read_text()
    # target options (isa, layout) come from the profile too
    p = cli("render", "--target", "c-simd", "--size", "256", "--constants", "1.2", "--profile", pf,
            "--out", tmp_path / "s")
    assert p.returncode == 0, p.stderr
    assert "--isa avx2 --layout hybrid" in next((tmp_path / "s").glob("*.c")).read_text()


def test_render_set_tuned_renders_every_winner(tmp_path):
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(profile({
        "c": {"256": win({"keys": "fly", "unroll": "loop", "interleave": 3}),
              "1024": win({"keys": "table", "unroll": "full", "interleave": 1})}})))
    p = cli("render", "--set", "tuned", "--profile", pf, "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    names = sorted(f.name for f in (tmp_path / "o").glob("*.c"))
    assert names == sorted([f"tf256_v{v}_c_fly_loop_i3.c" for v in ("11", "12", "13")]
                           + [f"tf1024_v{v}_c_table_full.c" for v in ("11", "12", "13")])


BAD = [
    ("missing", None, "cannot read it"),
    ("notjson", "{nope", "not JSON"),
    ("noformat", json.dumps({"results": {}}), "not a threefish-gen profile"),
    ("badmatch", json.dumps({"format": cpu_rules.FORMAT, "match": {"vendor": "x"}, "results": {}}), "\"match\""),
    ("badresults", json.dumps(profile({"c": {"512": {"bulk": {"winner": {"no": 1}}}}})), "results.c.512.bulk"),
    ("nosize", json.dumps(profile({"c": {"256": win({"keys": "fly", "unroll": "full", "interleave": 1})}})),
     "no bulk winner for --target c --size 512"),
    ("badoption", json.dumps(profile({"c": {"512": win({"keys": "fly", "unroll": "full", "interleave": 1,
                                                       "frobnicate": 2})}})), "frobnicate"),
]


@pytest.mark.parametrize("name,text,msg", BAD, ids=[b[0] for b in BAD])
def test_bad_profiles_are_one_line_and_exit_2(tmp_path, name, text, msg):
    pf = tmp_path / f"{name}.json"
    if text is not None:
        pf.write_text(text)
    p = cli("render", "--target", "c", "--size", "512", "--constants", "1.3", "--profile", pf, "--out", tmp_path / "o")
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("threefish-gen: error:") and msg in lines[0], p.stderr
    assert not (tmp_path / "o").exists()


def test_profile_without_size_or_with_recommended_set_is_refused(tmp_path):
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(profile({"c": {"512": win({"keys": "fly", "unroll": "full", "interleave": 1})}})))
    for args in (["--target", "c"], ["--set", "recommended"]):
        p = cli("render", *args, "--profile", pf, "--out", tmp_path / "o")
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "--profile applies to one variant" in p.stderr


def test_set_tuned_without_a_matching_shipped_profile(monkeypatch):
    monkeypatch.setattr(tune, "cpu_id", lambda: {"vendor": "GenuineIntel", "family": 6, "model": 0x55})
    with pytest.raises(GenError, match=r"no shipped profile matches this CPU \(GenuineIntel family 0x6 model 0x55\)"):
        tune.Tuned(None, "tuned", None)
    monkeypatch.setattr(tune, "cpu_id", lambda: {"vendor": "AuthenticAMD", "family": 0x19, "model": 0x21})
    assert tune.Tuned(None, "tuned", None).p["name"] == "zen3"


# --------------------------------------------------------------------------- the dispatcher's CPU table

ZEN3 = '"AuthenticAMD",0x19,0x21'
ZEN4 = '"AuthenticAMD",0x19,0x11'
ZEN5 = '"AuthenticAMD",0x1a,0x02'
INTEL = '"GenuineIntel",6,0xcf'       # Emerald Rapids: the intel-spr-emr row
OTHER = '"GenuineIntel",6,0x55'       # Skylake-SP: no row, the default rule


@pytest.fixture(scope="module")
def dispatcher_exe(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    if "avx2" not in cpu_flags():
        pytest.skip("CPU lacks avx2")
    tmp = tmp_path_factory.mktemp("disp")
    spec = Spec("1.3", 512)
    v = SIMD.dispatcher(spec)
    for name, text in render_variant(v).items():
        (tmp / name).write_text(text)
    main = tmp / "main.c"
    main.write_text(f"""#include <stdio.h>
#include <stdint.h>
#include "{v.stem}.h"
int main(void)
{{
    static uint8_t key[64], tw[64 * 16], in[64 * 64], out[64 * 64];
    size_t i;
    for (i = 0; i < sizeof key; i++) key[i] = (uint8_t)(7 * i + 1);
    for (i = 0; i < sizeof tw; i++) tw[i] = (uint8_t)(3 * i + 5);
    for (i = 0; i < sizeof in; i++) in[i] = (uint8_t)(i * i + 11);
    {v.prefix}encrypt_blocks(key, tw, in, out, 64);
    printf("%s|%s\\n", {v.prefix}dispatch_path(64), {v.prefix}dispatch_path(2));
    for (i = 0; i < sizeof out; i++) printf("%02x", out[i]);
    printf("\\n");
    return 0;
}}
""")
    exes = {}
    for label, fake in (("zen3", ZEN3), ("zen4", ZEN4), ("zen5", ZEN5), ("intel", INTEL), ("other", OTHER)):
        exe = tmp / f"d_{label}"
        subprocess.run(["gcc", "-O1", "-Wall", "-Wextra", "-Werror", f"-DTHREEFISH_GEN_FAKE_CPUID={fake}",
                        f"-I{tmp}", str(main), str(tmp / f"{v.stem}.c"), "-o", str(exe)], check=True)
        exes[label] = exe
    key = bytes((7 * i + 1) & 0xff for i in range(64))
    tw = bytes((3 * i + 5) & 0xff for i in range(64 * 16))
    data = bytes((i * i + 11) & 0xff for i in range(64 * 64))
    want = b"".join(reference.encrypt(spec, key, tw[16 * i:16 * i + 16], data[64 * i:64 * i + 64])
                    for i in range(64)).hex()
    return exes, want


def _run(exe, isa=None):
    env = dict(os.environ)
    env.pop("THREEFISH_GEN_ISA", None)
    if isa:
        env["THREEFISH_GEN_ISA"] = isa
    out = subprocess.run([str(exe)], env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    bulk, small = out[0].split("|")
    return bulk, small, out[1]


def test_dispatcher_table_zen3_takes_its_row(dispatcher_exe):
    exes, want = dispatcher_exe
    bulk, small, got = _run(exes["zen3"])
    assert bulk == "avx2 lanes fly/loop/i1 (cpu rule zen3: AuthenticAMD family 0x19 models 0x00-0x0f,0x20-0x5f)"
    assert small == "scalar"
    assert got == want                              # the Zen 3 path computes Threefish-512
    assert _run(exes["zen3"], "avx2")[0].startswith("avx2 lanes fly/loop/i1 (cpu rule zen3")


def test_dispatcher_table_zen4_takes_its_row_where_the_cpu_allows_it(dispatcher_exe):
    """Zen 4's row (tune on this project's Zen 4 VM: AVX-512 lanes i2 for Threefish-512) is named
    where the CPU has AVX-512; elsewhere its ISA is not allowed and the default rule applies."""
    exes, want = dispatcher_exe
    bulk, small, got = _run(exes["zen4"])
    if {"avx512f", "avx512vl"} <= cpu_flags():
        assert bulk == "avx512 lanes fly/loop/i2 (cpu rule zen4: AuthenticAMD family 0x19 models 0x10-0x1f,0x60-0x7f,0xa0-0xaf)"
    else:
        assert bulk.startswith("avx2 lanes fly/loop/i1 (default rule"), bulk
    assert (small, got) == ("scalar", want)
    assert _run(exes["zen4"], "avx2")[0].startswith("avx2 lanes fly/loop/i1 (default rule")


def test_zen4_model_ranges():
    r = next(x for x in cpu_rules.rules("c-simd", 256) if x.name == "zen4")
    for model in (0x11, 0x18, 0x61, 0x74, 0xa0):       # Genoa, Storm Peak, Raphael, Phoenix, Bergamo
        assert r.matches("AuthenticAMD", 0x19, model)
    assert not r.matches("AuthenticAMD", 0x19, 0x21) and not r.matches("AuthenticAMD", 0x1a, 0x11)
    assert (r.options, dict(r.values)) == (Options("fly", "full", 4), {"isa": "avx512", "layout": "lanes"})


def test_dispatcher_table_unknown_cpu_takes_the_default_rule(dispatcher_exe):
    exes, want = dispatcher_exe
    bulk, _, got = _run(exes["other"])
    top = "avx512" if {"avx512f", "avx512vl"} <= cpu_flags() else "avx2"
    path = {"avx512": "fly/loop/i2", "avx2": "fly/loop/i1"}[top]     # c_simd.RECOMMENDED[512]
    assert bulk == f"{top} lanes {path} (default rule: the highest ISA the CPU and $THREEFISH_GEN_ISA allow)"
    assert got == want
    assert _run(exes["other"], "avx2")[0].startswith("avx2 lanes fly/loop/i1 (default rule")
    assert _run(exes["other"], "scalar")[:2] == ("scalar", "scalar")


def test_dispatcher_table_isa_cap_beats_the_row(dispatcher_exe):
    """THREEFISH_GEN_ISA caps the ISA: a row whose path needs more falls to the default rule."""
    exes, want = dispatcher_exe
    assert _run(exes["zen3"], "avx")[0] == "scalar"        # no default path at or below AVX for 512
    assert _run(exes["zen3"], "scalar")[2] == want


def test_zen3_model_ranges():
    r = next(x for x in cpu_rules.rules("c-simd", 512) if x.name == "zen3")
    assert r.matches("AuthenticAMD", 0x19, 0x21) and r.matches("AuthenticAMD", 0x19, 0x01)
    assert not r.matches("AuthenticAMD", 0x19, 0x11) and not r.matches("AuthenticAMD", 0x19, 0x61)
    assert not r.matches("GenuineIntel", 0x19, 0x21)
    assert (r.options, dict(r.values)) == (Options("fly", "loop", 1), {"isa": "avx2", "layout": "lanes"})


def test_intel_model_ranges():
    """The Sapphire/Emerald Rapids row (threefish_gen/profiles/intel-spr-emr.json: the c-simd
    results of shared/profiles/intel-emr.json, measured on model 0xCF) is chosen for family 6
    models 0x8F and 0xCF, at every size; not for other Intel models (the default rule, documented
    in gen/cpu_rules.py) nor for AMD families 0x19 and 0x1A."""
    want = {256: (Options("fly", "full", 4), "lanes"), 512: (Options("fly", "full", 2), "lanes"),
            1024: (Options("fly", "full", 1), "packed")}
    for bits, (o, layout) in want.items():
        for model in (0x8F, 0xCF):
            r = cpu_rules.rule_for("c-simd", bits, "GenuineIntel", 6, model)
            assert r is not None and r.name == "intel-spr-emr", (bits, model)
            assert (r.options, dict(r.values)) == (o, {"isa": "avx512", "layout": layout})
        for model in (0x55, 0x6A, 0x97, 0xAD, 0x8E):   # Skylake-SP, Ice Lake-SP, Alder Lake, Granite Rapids, ...
            assert cpu_rules.rule_for("c-simd", bits, "GenuineIntel", 6, model) is None
        for fam, model in ((0x19, 0x8F), (0x19, 0xCF), (0x1A, 0x8F), (0x1A, 0xCF), (0x19, 0x11), (0x1A, 0x02)):
            r = cpu_rules.rule_for("c-simd", bits, "AuthenticAMD", fam, model)
            assert r is None or r.name != "intel-spr-emr"
        assert cpu_rules.rule_for("c-simd", bits, "AuthenticAMD", 6, 0xCF) is None


def test_dispatcher_table_intel_takes_its_row_where_the_cpu_allows_it(dispatcher_exe):
    exes, want = dispatcher_exe
    bulk, small, got = _run(exes["intel"])
    if {"avx512f", "avx512vl"} <= cpu_flags():
        assert bulk == "avx512 lanes fly/loop/i2 (cpu rule intel-spr-emr: GenuineIntel family 0x06 models 0x8f,0xcf)"
    else:
        assert bulk.startswith("avx2 lanes fly/loop/i1 (default rule"), bulk
    assert (small, got) == ("scalar", want)


# --------------------------------------------------------------------------- the single-block CPU table

INTEL_8F = '"GenuineIntel",6,0x8f'    # Sapphire Rapids: the same row


def test_single_block_table_rows():
    """The single-block table: each profile's chained winner whose layout is packed (x86), the
    one-block kernel of that ISA (gen/cpu_rules.py): Sapphire/Emerald Rapids Threefish-1024
    (AVX-512), Zen 4 Threefish-1024 (AVX2); lanes/hybrid chained winners add nothing (Intel
    Threefish-512: its chained winner is the scalar path since the 2026-11-27 re-measurement)."""
    p = Options("fly", "full", 1)
    got = {bits: [(r.name, v.get("isa"), v.get("layout"), v.options) for r, v in SIMD.single_rule_paths(Spec("1.3", bits))]
           for bits in (256, 512, 1024)}
    assert got == {256: [], 512: [],
                   1024: [("intel-spr-emr", "avx512", "packed", p), ("zen4", "avx2", "packed", p)]}
    for bits, want in ((512, {"isa": "avx", "layout": "lanes"}), (1024, {"isa": "avx512", "layout": "packed"})):
        for model in (0x8F, 0xCF):
            r = cpu_rules.rule_for("c-simd", bits, "GenuineIntel", 6, model, "chained")
            assert r is not None and r.name == "intel-spr-emr" and dict(r.values) == want
        for model in (0x55, 0x6A, 0x97, 0xAD, 0x8E):
            assert cpu_rules.rule_for("c-simd", bits, "GenuineIntel", 6, model, "chained") is None
    # the packed paths are among the dispatcher's (describe makes their programs), once each
    subs = SIMD.subs(SIMD.dispatcher(Spec("1.3", 1024)))
    assert [s.get("isa") for s in subs if s.get("layout") == "packed"] == ["avx512", "avx2"]


def test_dispatchers_without_a_single_row_have_no_single_path():
    """Threefish-256 (no packed chained winner): single blocks scalar, as before (no single_path)."""
    files = render_variant(SIMD.dispatcher(Spec("1.3", 256)))
    assert not any("single_path" in text or "_packed_encrypt" in text for text in files.values())


SINGLE_MAIN = """#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include "{stem}.h"
int main(void)
{{
    static uint8_t key[128], tw[16 * 3], in[128 * 3], out[128 * 3], back[128 * 3];
    size_t i;
    for (i = 0; i < sizeof key; i++) key[i] = (uint8_t)(5 * i + 3);
    for (i = 0; i < sizeof tw; i++) tw[i] = (uint8_t)(11 * i + 1);
    for (i = 0; i < sizeof in; i++) in[i] = (uint8_t)(i * i + 7);
    for (i = 0; i < 3; i++) {{
        {p}encrypt(key, tw + 16 * i, in + 128 * i, out + 128 * i);
        {p}decrypt(key, tw + 16 * i, out + 128 * i, back + 128 * i);
    }}
    printf("%s\\n", {p}single_path());
    for (i = 0; i < sizeof out; i++) printf("%02x", out[i]);
    printf("\\n%d\\n", memcmp(in, back, sizeof in) == 0);
    return 0;
}}
"""


@pytest.fixture(scope="module")
def single_exes(tmp_path_factory):
    """The Threefish-1024 dispatcher (both single-block rows) built per fake CPU (gcc -O0)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    tmp = tmp_path_factory.mktemp("single")
    spec = Spec("1.3", 1024)
    v = SIMD.dispatcher(spec)
    for name, text in render_variant(v).items():
        (tmp / name).write_text(text)
    (tmp / "main.c").write_text(SINGLE_MAIN.format(stem=v.stem, p=v.prefix))
    exes = {}
    for label, fake in (("intel", INTEL), ("intel8f", INTEL_8F), ("other", OTHER), ("zen4", ZEN4), ("zen3", ZEN3)):
        exes[label] = tmp / f"s_{label}"
        subprocess.run(["gcc", "-O0", "-Wall", "-Wextra", "-Werror", f"-DTHREEFISH_GEN_FAKE_CPUID={fake}", f"-I{tmp}",
                        str(tmp / "main.c"), str(tmp / f"{v.stem}.c"), "-o", str(exes[label])], check=True)
    key = bytes((5 * i + 3) & 0xff for i in range(128))
    tw = bytes((11 * i + 1) & 0xff for i in range(48))
    data = bytes((i * i + 7) & 0xff for i in range(384))
    want = b"".join(reference.encrypt(spec, key, tw[16 * i:16 * i + 16], data[128 * i:128 * i + 128])
                    for i in range(3)).hex()
    return exes, want


def _single(exe, isa=None):
    env = dict(os.environ)
    env.pop("THREEFISH_GEN_ISA", None)
    if isa:
        env["THREEFISH_GEN_ISA"] = isa
    return subprocess.run([str(exe)], env=env, capture_output=True, text=True, check=True).stdout.splitlines()


INTEL_SINGLE = "avx512 packed fly/full/i1 (cpu rule intel-spr-emr: GenuineIntel family 0x06 models 0x8f,0xcf)"
ZEN4_SINGLE = "avx2 packed fly/full/i1 (cpu rule zen4: AuthenticAMD family 0x19 models 0x10-0x1f,0x60-0x7f,0xa0-0xaf)"


def test_single_blocks_take_the_row_of_the_cpu(single_exes):
    """Single-block calls take the packed kernel of the row matching the (fake) CPU where the CPU
    has its ISA and THREEFISH_GEN_ISA allows it; else, and on CPUs without a row, scalar.  Every
    path computes Threefish-1024 (reference) and decrypts back."""
    exes, want = single_exes
    avx512 = {"avx512f", "avx512vl"} <= cpu_flags()
    avx2 = "avx2" in cpu_flags()
    for label, path in (("intel", INTEL_SINGLE if avx512 else "scalar"), ("intel8f", INTEL_SINGLE if avx512 else "scalar"),
                        ("zen4", ZEN4_SINGLE if avx2 else "scalar"), ("other", "scalar"), ("zen3", "scalar")):
        assert _single(exes[label]) == [path, want, "1"], label
    assert _single(exes["intel"], "avx2") == ["scalar", want, "1"]       # the cap: AVX-512 not allowed
    assert _single(exes["zen4"], "avx") == ["scalar", want, "1"]
    assert _single(exes["zen4"], "scalar") == ["scalar", want, "1"]
    if avx2:
        assert _single(exes["zen4"], "avx2")[0] == ZEN4_SINGLE


@pytest.mark.skipif(not simd.simde_available(), reason="SIMDe (libsimde-dev) not installed")
@pytest.mark.skipif(shutil.which("clang") is None or shutil.which("gcc") is None, reason="gcc and clang needed")
@pytest.mark.parametrize("fake,path", [(INTEL, "avx512"), (ZEN4, "avx2")], ids=["intel-avx512-simde", "zen4-avx2"])
def test_single_block_packed_paths_pass_the_harness(tmp_path, fake, path):
    """The verify harness (known-answer and reference vectors: encrypt, decrypt, *_blocks) on the
    Threefish-1024 dispatcher built for a fake CPU whose row takes a packed single-block kernel:
    Zen 4's AVX2 one natively where the CPU has AVX2, Intel's AVX-512 one under SIMDe (emulated;
    SIMDe builds report every level, and the fake cpuid picks the row)."""
    spec = Spec("1.3", 1024)
    v = SIMD.dispatcher(spec)
    vectors = runner.vector_file(spec, tmp_path / "v.txt", 4, seed=7)
    emulated = path == "avx512" and not {"avx512f", "avx512vl"} <= cpu_flags()
    if path == "avx2" and "avx2" not in cpu_flags():
        pytest.skip("CPU lacks avx2")
    build = simd.SIMD_BUILDS[4] if emulated else simd.SIMD_BUILDS[0]
    cflags, libs, _ = simd.emulated_flags(build) if emulated else (list(build.cflags), [], "")
    exe, why = runner.build_harness(v, build, tmp_path, cflags + [f"-DTHREEFISH_GEN_FAKE_CPUID={fake}"], libs)
    assert exe is not None, why
    ok, out, checks = runner.run_harness([str(exe), str(vectors)], tmp_path)
    assert ok and checks > 100, out
