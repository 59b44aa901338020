"""C# single blocks against BouncyCastle, before and after a change, in one process (issue 27).

``python3 -m threefish_gen.tools.bench.cs_single [--base REV] [--size N]... [--rounds K] [--ms M]
[--mode chained|bulk|all] [--layout L]... [--nowipe]`` renders, for every size, the recommended
options' classes of each layout (default lanes and scalar) twice: from this tree (namespace
``New``) and from git revision REV (namespace ``Old``, rendered by REV's own generator from a
``git archive`` of it; leave --base out to time this tree only); ``--nowipe`` adds this tree's
``--no-wipe`` lanes class (``New.LanesC<N>NW``: what the wipe costs).  One project with
BouncyCastle.Cryptography 2.7.0 (restored from the NuGet cache or source) and
``harness/dotnet/SingleBench.cs``; run with DOTNET_TieredCompilation=0.  chained = ``Encrypt``
of one block in place (each input the previous output), BouncyCastle ``ProcessBlock`` in place;
bulk = ``EncryptBlocks`` over 4 KiB, BouncyCastle ``ProcessBlock`` over the same 4 KiB.  Each
round times every row once (rotating the order), K rounds of about M ms per row; the rows print
ns/B min, q10, median and their per-round ratio to BouncyCastle (median, q10..q90).  On a loaded
machine compare the min and q10 columns: a sample either ran undisturbed or was slowed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from importlib.resources import files
from io import BytesIO
from pathlib import Path

from threefish_gen.verify import csharp as vcs

RENDER = r'''
import sys, json
from threefish_gen.gen.spec import get_spec
from threefish_gen.gen.targets.csharp import TARGET, RECOMMENDED
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.threefish import Options
ns, layout, bits, wipe, cls = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
opts = RECOMMENDED[bits][1] if layout != "packed" else Options()
kw = {} if wipe else {"wipe": False}
v = TARGET.variant(get_spec("1.3", bits), opts, layout=layout, namespace=ns, **{"class": cls}, **kw)
print(json.dumps(render_variant(v)))
'''

CSPROJ = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework><Nullable>enable</Nullable>
    <Optimize>true</Optimize><InvariantGlobalization>true</InvariantGlobalization><ImplicitUsings>disable</ImplicitUsings>
  </PropertyGroup>
  <ItemGroup><PackageReference Include="BouncyCastle.Cryptography" Version="2.7.0" /></ItemGroup>
</Project>
"""

ENGINE = ("new Org.BouncyCastle.Crypto.Engines.ThreefishEngine({bits}); eng.Init(true, "
          "new Org.BouncyCastle.Crypto.Parameters.TweakableBlockCipherParameters("
          "new Org.BouncyCastle.Crypto.Parameters.KeyParameter(key), tw));")


def render(tree: Path, ns: str, layout: str, bits: int, wipe: bool, cls: str) -> dict[str, str]:
    r = subprocess.run([sys.executable, "-c", RENDER, ns, layout, str(bits), "1" if wipe else "0", cls],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(tree)), check=True,
                       cwd=tree)   # -c puts the working folder first on sys.path: the tree's package, not ours
    return json.loads(r.stdout)


def main_cs(rows: dict[int, list[str]]) -> str:
    harness = files("threefish_gen.tools.bench") / "harness" / "dotnet"
    out = [(harness / "SingleBench.cs").read_text() + (harness / "Clock.cs").read_text(),
           "static partial class Bench {\n static void All(string mode, int samples) {"]
    for bits, names in sorted(rows.items()):
        out.append(f"  {{ int B = {bits // 8}; var key = Rnd(B); var tw = Rnd(16); var tweaks = Rnd(16 * 4096 / B); "
                   "var buf = Rnd(4096); var blk = Rnd(B);")
        out.append("    var eng = " + ENGINE.format(bits=bits))
        out.append(f'    if (mode != "bulk") Run("chained {bits}", B, samples, new (string, Action<int>)[] {{')
        out.append('      ("BouncyCastle", reps => { for (int r = 0; r < reps; r++) eng.ProcessBlock(blk, 0, blk, 0); }),')
        out += [f'      ("{n}", reps => {{ for (int r = 0; r < reps; r++) {n}.Encrypt(key, tw, blk, blk); }}),' for n in names]
        out.append("    });")
        out.append(f'    if (mode != "chained") Run("bulk {bits}", 4096, samples, new (string, Action<int>)[] {{')
        out.append('      ("BouncyCastle", reps => { for (int r = 0; r < reps; r++) for (int o = 0; o < 4096; o += B) '
                   'eng.ProcessBlock(buf, o, buf, o); }),')
        out += [f'      ("{n}", reps => {{ for (int r = 0; r < reps; r++) {n}.EncryptBlocks(key, tweaks, buf, buf); }}),'
                for n in names]
        out.append("    });")
        for n in names:     # every class agrees with BouncyCastle on a block
            out.append(f"    {{ var a = Rnd(B); var b = (byte[])a.Clone(); eng.ProcessBlock(a, 0, a, 0); {n}.Encrypt(key, tw, b, b); "
                       f'if (!a.AsSpan().SequenceEqual(b)) {{ Console.WriteLine("DISAGREE {n}"); Environment.Exit(3); }} }}')
        out.append("  }")
    return "\n".join(out + [" }", "}", ""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m threefish_gen.tools.bench.cs_single", description=__doc__.split("\n")[0])
    ap.add_argument("--base", help="git revision whose generator renders the Old classes")
    ap.add_argument("--size", type=int, action="append", choices=(256, 512, 1024))
    ap.add_argument("--layout", action="append", choices=("lanes", "scalar", "packed"))
    ap.add_argument("--nowipe", action="store_true")
    ap.add_argument("--rounds", type=int, default=101)
    ap.add_argument("--ms", type=float, default=1.0)
    ap.add_argument("--mode", choices=("chained", "bulk", "all"), default="all")
    ap.add_argument("--workdir", default="build/bench/cs_single")
    a = ap.parse_args(argv)
    here = Path(__file__).resolve().parents[3]
    proj = Path(a.workdir).resolve()
    proj.mkdir(parents=True, exist_ok=True)
    for p in proj.glob("*.cs"):
        p.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        trees = [("New", here)]
        if a.base:
            blob = subprocess.run(["git", "-C", str(here), "archive", a.base], capture_output=True, check=True).stdout
            tarfile.open(fileobj=BytesIO(blob)).extractall(tmp)  # our own repository's archive
            trees.insert(0, ("Old", Path(tmp)))
        rows: dict[int, list[str]] = {}
        for bits in a.size or (256, 512, 1024):
            for layout in a.layout or ("lanes", "scalar"):
                for ns, tree in trees:
                    cls = f"{layout.capitalize()}C{bits}"
                    for fn, text in render(tree, ns, layout, bits, True, cls).items():
                        (proj / f"{ns}.{fn}").write_text(text)
                    rows.setdefault(bits, []).append(f"{ns}.{cls}")
            if a.nowipe:
                for fn, text in render(here, "New", "lanes", bits, False, f"LanesC{bits}NW").items():
                    (proj / f"New.{fn}").write_text(text)
                rows[bits].append(f"New.LanesC{bits}NW")
    (proj / "Main.cs").write_text(main_cs(rows))
    (proj / "cssingle.csproj").write_text(CSPROJ)
    ok, out = vcs.build(proj)
    if not ok:
        print(out[-2000:], file=sys.stderr)
        return 2
    env = dict(os.environ, DOTNET_TieredCompilation="0", MB_MS=str(a.ms))
    return subprocess.run(["dotnet", str(proj / "bin" / "cssingle.dll"), a.mode, str(a.rounds)], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
