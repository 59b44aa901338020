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
ns/byte x GHz; medians of 9 samples; DOTNET_TieredCompilation=0 (every method fully
optimised on its first call, so no sample times Tier-0 code).
"""
from __future__ import annotations

from importlib.resources import files
import subprocess
import sys
from pathlib import Path

from threefish_gen.gen.spec import Spec
from threefish_gen.gen.targets.csharp import RECOMMENDED as RECOMMENDED_CSHARP
from threefish_gen.gen.targets.csharp import TARGET as CSHARP
from threefish_gen.gen.threefish import Options

BENCH_CS = files("threefish_gen.tools.bench") / "harness" / "dotnet" / "Bench.cs"

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


def _variants(specs):
    out = []
    for s in specs:
        _, opts = RECOMMENDED_CSHARP[s.bits]
        tag = f"{s.bits}V{s.version.replace('.', '')}"
        out.append(CSHARP.variant(s, opts, layout="lanes", namespace="TfBench", **{"class": f"Lanes{tag}"}))
        out.append(CSHARP.variant(s, opts, layout="scalar", namespace="TfBench", **{"class": f"Scalar{tag}"}))
        out.append(CSHARP.variant(s, Options(), layout="packed", namespace="TfBench", **{"class": f"Packed{tag}"}))
    return out


def _parse(out: str, label: str) -> list[dict]:
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
                             version=version))
    return rows


def bench_rows(specs: list[Spec], workdir: Path = Path("build/bench/csharp"), bouncy: bool = True,
               stream=sys.stderr) -> list[dict]:
    """Rows dict(name, bits, mode ('bulk'|'chained'), cpb, ns_per_byte, ghz, kernel, version);
    a row with cpb None and a 'skipped' reason when something could not run."""
    from threefish_gen.verify import csharp as vcs
    workdir = Path(workdir).resolve()
    rows: list[dict] = []
    if vcs.DotnetRun("x").missing():
        return [dict(name=CSHARP.name, bits=0, mode="-", cpb=None, skipped="dotnet not installed")]
    proj = workdir / "gen"
    vcs.write_project(_variants(specs), proj, name="tfbench", main=BENCH_CS.read_text(), host="Bench")
    ok, out = vcs.build(proj)
    if not ok:
        return [dict(name=CSHARP.name, bits=0, mode="-", cpb=None, skipped="dotnet build failed: " + out)]
    dll = proj / "bin" / "tfbench.dll"
    flags = vcs.cpu_flags()
    for env, label in (((), "C#"), (vcs.NO512, "C# (AVX-512 off)")):
        if env and not ({"avx512f"} <= flags):
            continue
        print(f"bench: C# {label} ...", file=stream, flush=True)
        p = subprocess.run(["dotnet", str(dll), "1"], capture_output=True, text=True,
                           env=vcs.dotnet_env(env + TC0), timeout=1800)
        got = _parse(p.stdout, label)
        if env:   # without AVX-512 only the vector kernels change: keep their rows
            got = [r for r in got if r["kernel"] != "scalar"]
        else:     # packed classes: only their one-block (chained) rows; bulk is the scalar kernel
            got = [r for r in got if not ("Packed" in r["name"] and r["mode"] == "bulk")]
        rows += got
        if p.returncode:
            rows.append(dict(name=label, bits=0, mode="-", cpb=None, skipped=p.stderr.strip()[-200:]))
    if bouncy:
        rows += _bouncy_rows(specs, workdir, stream)
    return rows


def _bouncy_rows(specs, workdir: Path, stream) -> list[dict]:
    from threefish_gen.verify import csharp as vcs
    proj = workdir / "bouncy"
    v13 = [s for s in specs if s.version == "1.3"] or [Spec("1.3", 512)]
    vcs.write_project(_variants(v13), proj, name="tfbouncy", main=BENCH_CS.read_text(), host="Bench",
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
