"""C# figures for ``make bench``: the generated classes (and BouncyCastle, when NuGet serves it).

``bench_rows(specs)`` renders, for every spec, the recommended ``lanes`` class and the
``scalar`` and ``packed`` classes into one project (``harness/dotnet/Bench.cs`` is its Main), builds it once
(offline: no package references) and runs it twice: with the default JIT settings (the
lanes class then runs its Vector512 kernel on AVX-512 CPUs) and with
``DOTNET_EnableAVX512F=0 DOTNET_EnableAVX512=0`` (its Vector256/AVX2 kernel).  A second,
optional project references ``BouncyCastle.Cryptography`` from the default NuGet source and
measures its ``ThreefishEngine`` (Skein 1.3 constants) the same way; when the restore fails
the row says so.

Method: bulk = ``EncryptBlocks`` over 4 KiB in place (in L1), chained = ``Encrypt`` of one
block in place, each depending on the previous; ns/byte from ``Stopwatch``; the core clock is
estimated around each sample by a chain of 16M dependent add/xor (1 cycle each); c/B =
ns/byte x GHz; medians of 9 samples (``samples``), the classes of one size and mode timed
alternately sample by sample; DOTNET_TieredCompilation=0 (every method fully
optimised on its first call, so no sample times Tier-0 code).
"""
from __future__ import annotations

from importlib.resources import files
import subprocess
import sys
from pathlib import Path

from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import Spec
from threefish_gen.gen.targets.csharp import RECOMMENDED as RECOMMENDED_CSHARP
from threefish_gen.gen.targets.csharp import TARGET as CSHARP
from threefish_gen.gen.threefish import Options

from ..codesize import source_bytes
from . import paired

NO_CODE = ("C#: the JIT compiles the class at run time (DOTNET_TieredCompilation=0): no object file; "
           "its machine code is not counted")

BENCH_CS = files("threefish_gen.tools.bench") / "harness" / "dotnet" / "Bench.cs"
CLOCK_CS = files("threefish_gen.tools.bench") / "harness" / "dotnet" / "Clock.cs"   # its Ghz, shared with SingleBench.cs

BOUNCY_CSPROJ = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
    <AssemblyName>{name}</AssemblyName>
    <Nullable>enable</Nullable>
    <Optimize>true</Optimize>
    <InvariantGlobalization>true</InvariantGlobalization>
    <ImplicitUsings>disable</ImplicitUsings>
    <DefineConstants>$(DefineConstants);BOUNCY</DefineConstants>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="BouncyCastle.Cryptography" Version="2.*" />
  </ItemGroup>
</Project>
"""


# Every measured method compiled fully optimised on first call: no Tier-0 code or tier-up
# pause inside a sample (the big unrolled methods would otherwise be timed at Tier 0).
TC0 = (("DOTNET_TieredCompilation", "0"),)


def other_unroll(opts: Options) -> Options:
    """The recommended lanes options with the other unrolling (full <-> loop): the compact
    candidate (issue 30) timed beside the recommended class, sample by sample."""
    return Options(opts.keys, "loop" if opts.unroll == "full" else "full", opts.interleave)


def _variants(specs, compact: bool = True):
    out = []
    for s in specs:
        _, opts = RECOMMENDED_CSHARP[s.bits]
        tag = f"{s.bits}V{s.version.replace('.', '')}"
        out.append(CSHARP.variant(s, opts, layout="lanes", namespace="TfBench", **{"class": f"Lanes{tag}"}))
        if compact:
            alt = other_unroll(opts)
            out.append(CSHARP.variant(s, alt, layout="lanes", namespace="TfBench",
                                      **{"class": f"Lanes{alt.unroll.capitalize()}{tag}"}))
        out.append(CSHARP.variant(s, opts, layout="scalar", namespace="TfBench", **{"class": f"Scalar{tag}"}))
        out.append(CSHARP.variant(s, Options(), layout="packed", namespace="TfBench", **{"class": f"Packed{tag}"}))
    return out


def _parse(out: str, label: str) -> list[dict]:
    """ROW lines as rows; each row's SAMPLE lines as its ``samples`` {(0, round): c/B} and
    ``ns_samples`` {(0, round): ns/B}, the key form of tools/bench/paired.py (one pass)."""
    samples: dict[tuple, dict] = {}
    times: dict[tuple, dict] = {}
    for ln in out.splitlines():
        p = ln.split()
        if len(p) == 7 and p[0] == "SAMPLE":
            samples.setdefault((p[1], int(p[2]), p[3]), {})[(0, int(p[4]))] = float(p[5])
            times.setdefault((p[1], int(p[2]), p[3]), {})[(0, int(p[4]))] = float(p[6])
    rows = []
    for ln in out.splitlines():
        p = ln.split()
        if len(p) == 7 and p[0] == "ROW":
            name, bits, mode, nsb, ghz, kernel = p[1], int(p[2]), p[3], float(p[4]), float(p[5]), p[6]
            version = None
            if "V1" in name:
                version = name.rsplit("V", 1)[1]
                version = version[0] + "." + version[1:]
            rows.append(dict(name=f"{label} {name.split('.')[-1]} [{kernel}]", bits=bits, mode=mode,
                             cpb=round(nsb * ghz, 3), ns_per_byte=nsb, ghz=ghz, kernel=kernel,
                             version=version, samples=samples.get((name, bits, mode), {}),
                             ns_samples=times.get((name, bits, mode), {})))
    return rows


def compact_ratios(rows: list[dict]) -> None:
    """Each compact-candidate lanes row (``Lanes{Loop|Full}NNNVxx``, other_unroll) gets
    ``vs_recommended``: its paired ratio to the recommended ``LanesNNNVxx`` row of the same run,
    size and mode (tools/bench/paired.py: median of per-round ratios, min, spread, noisy), from
    the rounds' ns/B (the two samples of a round ran at one clock: the clock estimate, which adds
    its own noise to each c/B sample, cancels)."""
    rec = {(r["name"].split(" [")[0], r["bits"], r["mode"]): r for r in rows if r.get("samples")}
    for r in rows:
        label, _, rest = r["name"].partition(" Lanes")
        for unroll in ("Loop", "Full"):
            if r.get("samples") and rest.startswith(unroll):
                base = rec.get((f"{label} Lanes{rest[len(unroll):].split(' [')[0]}", r["bits"], r["mode"]))
                if base:
                    a, b = r["ns_samples"], base["ns_samples"]
                    got = paired.ratio(a, b, r["ns_per_byte"], base["ns_per_byte"])
                    sp = paired.judged_spread(got.spread, paired.spread(a.values()), paired.spread(b.values()))
                    r["vs_recommended"] = dict(ratio=round(got.median, 4), min=round(got.min, 4),
                                               spread=round(got.spread, 4), judged_spread=round(sp, 4),
                                               paired=got.paired, noisy=sp > paired.NOISE_LIMIT,
                                               against=base["name"])


def bench_rows(specs: list[Spec], workdir: Path = Path("build/bench/csharp"), bouncy: bool = True,
               stream=sys.stderr, samples: int | None = None, filters=()) -> list[dict]:
    """Rows dict(name, bits, mode ('bulk'|'chained'), cpb, ns_per_byte, ghz, kernel, version,
    samples: the c/B of every round, src_bytes: bytes of the class's rendered .cs, code_bytes
    None); the compact candidate's rows also ``vs_recommended``
    (compact_ratios); a row with cpb None and a 'skipped' reason when something could not run.
    ``samples``: rounds per row (default 9); ``filters``: only the classes whose row name
    (``C# CLASS``) contains one of them are timed (all are built)."""
    from threefish_gen.verify import csharp as vcs
    workdir = Path(workdir).resolve()
    rows: list[dict] = []
    if vcs.DotnetRun("x").missing():
        return [dict(name=CSHARP.name, bits=0, mode="-", cpb=None, skipped="dotnet not installed")]
    proj = workdir / "gen"
    variants = _variants(specs)
    vcs.write_project(variants, proj, name="tfbench", main=BENCH_CS.read_text() + CLOCK_CS.read_text(), host="Bench")
    only = [vcs.class_name(v) for v in variants if not filters or any(f in f"C# {v.prefix}" for f in filters)]
    ok, out = vcs.build(proj)
    if not ok:
        return [dict(name=CSHARP.name, bits=0, mode="-", cpb=None, skipped="dotnet build failed: " + out)]
    dll = proj / "bin" / "tfbench.dll"
    flags = vcs.cpu_flags()
    for env, label in (((), "C#"), (vcs.NO512, "C# (AVX-512 off)")):
        if env and not ({"avx512f"} <= flags):
            continue
        print(f"bench: C# {label} ...", file=stream, flush=True)
        count = (("TFBENCH_SAMPLES", str(samples)),) if samples else ()
        p = subprocess.run(["dotnet", str(dll), "1", *only], capture_output=True, text=True,
                           env=vcs.dotnet_env(env + TC0 + count), timeout=1800)
        got = _parse(p.stdout, label)
        compact_ratios(got)
        if env:   # without AVX-512 only the vector kernels change: keep their rows
            got = [r for r in got if r["kernel"] != "scalar"]
        else:     # packed classes: only their one-block (chained) rows; bulk is the scalar kernel
            got = [r for r in got if not ("Packed" in r["name"] and r["mode"] == "bulk")]
        rows += got
        if p.returncode:
            rows.append(dict(name=label, bits=0, mode="-", cpb=None, skipped=p.stderr.strip()[-200:]))
    if bouncy:
        rows += _bouncy_rows(specs, workdir, stream)
    src = {v.prefix: source_bytes(render_variant(v)) for v in variants}
    for r in rows:      # source bytes of the row's class (tools/codesize.py); no code bytes: JIT-compiled
        cls = r["name"].split(" [")[0].split()[-1]
        if cls in src:
            r["src_bytes"] = src[cls]
            r["code_bytes"] = None
            r["code_note"] = NO_CODE
    for r in rows:      # JSON: the samples in round order
        for key in ("samples", "ns_samples"):
            if key in r:
                r[key] = [r[key][k] for k in sorted(r[key])]
    return rows


def _bouncy_rows(specs, workdir: Path, stream) -> list[dict]:
    from threefish_gen.verify import csharp as vcs
    proj = workdir / "bouncy"
    v13 = [s for s in specs if s.version == "1.3"] or [Spec("1.3", 512)]
    vcs.write_project(_variants(v13, compact=False), proj, name="tfbouncy",
                      main=BENCH_CS.read_text() + CLOCK_CS.read_text(), host="Bench",
                      csproj=BOUNCY_CSPROJ)
    (proj / "nuget.config").unlink()          # this one restores from the default NuGet source
    print("bench: BouncyCastle.Cryptography (restore from the default NuGet source) ...", file=stream, flush=True)
    ok, out = vcs.build(proj, timeout=600)
    if not ok:
        return [dict(name="BouncyCastle.ThreefishEngine", bits=0, mode="-", cpb=None,
                     skipped="BouncyCastle.Cryptography not available from NuGet: " + out[:200])]
    p = subprocess.run(["dotnet", str(proj / "bin" / "tfbouncy.dll"), "1", "none"], capture_output=True,
                       text=True, env=vcs.dotnet_env(TC0), timeout=1800)
    version = "?"
    assets = proj / "obj" / "project.assets.json"
    if assets.exists():
        import json
        libs = json.loads(assets.read_text()).get("libraries", {})
        version = next((k.split("/")[1] for k in libs if k.lower().startswith("bouncycastle.cryptography/")), "?")
    rows = _parse(p.stdout, f"BouncyCastle {version}")
    agree = {int(ln.split()[2]): ln.split()[3] == "yes" for ln in p.stdout.splitlines() if ln.startswith("AGREE")}
    for r in rows:
        r["version"] = "1.3"
        r["agrees_with_reference"] = agree.get(r["bits"])
    return rows or [dict(name="BouncyCastle.ThreefishEngine", bits=0, mode="-", cpb=None,
                         skipped="bench run failed: " + p.stderr.strip()[-200:])]


def print_rows(rows: list[dict], stream=sys.stdout) -> None:
    for r in rows:
        if r.get("cpb") is None:
            print(f"  {r['name']:<48} SKIPPED: {r.get('skipped')}", file=stream)
        else:
            print(f"  {r['name']:<48} {r['bits']:>5} v{r.get('version') or '-':<4} {r['mode']:<8} "
                  f"{r['cpb']:7.2f} c/B  ({r['ns_per_byte']:.3f} ns/B at {r['ghz']:.2f} GHz)"
                  + ("" if "agrees_with_reference" not in r else
                     f"  output {'matches' if r['agrees_with_reference'] else 'DIFFERS FROM'} the generated v1.3 class"),
                  file=stream)


if __name__ == "__main__":   # python3 -m threefish_gen.tools.bench.dotnet [VERSION ...]
    from threefish_gen.gen.spec import SIZES
    vers = sys.argv[1:] or ["1.3"]
    print_rows(bench_rows([Spec(v, b) for v in vers for b in SIZES]))
