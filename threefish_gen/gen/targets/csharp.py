"""Target ``csharp``: one C# static class (.NET 10, Span API) per variant.

Layouts: ``scalar`` (ulong), ``lanes`` (scalar one block + Vector512/Vector256 blocks, picked by
IsSupported), ``packed`` (one block in two vectors).  Printer: gen/printers/csharp.py,
templates/csharp/."""
from __future__ import annotations

import re

from .. import __version__, skein
from ..errors import GenError
from ..isa.dotnet import KINDS, PACKED_VEC
from ..layouts import lanes as lanes_layout
from ..layouts import packed as packed_layout
from ..layouts import scalar as scalar_layout
from ..printers import csharp as printer
from ..spec import Spec
from ..threefish import Options, loop_cycles
from ..variant import Variant
from .base import DIRECTIONS, PRIMITIVE_OPTION, WIPE_OPTION, Option, Pass, Recipe, Target, describe_pass, is_skein, ubi_pass

# (layout, options) per block size.  'lanes' also carries the scalar one-block path; the interleave
# per size is measured (docs/csharp.md, "Bench").  1024: --unroll loop (the vector kernels loop, the
# scalar Encrypt/Decrypt and tail stay unrolled, the same text as full): its bulk ran at 0.84-0.95x
# the unrolled kernels' time in three paired runs on Zen 3 (every one noisy), 762 KB -> 474 KB of
# source; 256 (1.03, 1.18) and 512 (0.97, 1.00, 1.03) stay full (docs/csharp.md, "Compact lanes classes").
RECOMMENDED = {
    256: ("lanes", Options(keys="fly", unroll="full", interleave=3)),
    512: ("lanes", Options(keys="fly", unroll="full", interleave=1)),
    1024: ("lanes", Options(keys="fly", unroll="loop", interleave=1)),
}
NAMESPACE = "ThreefishGen"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier(name: str, what: str, dotted: bool = False) -> str:
    for part in (name.split(".") if dotted else [name]):
        if not _IDENT.fullmatch(part) or part in printer.CS_KEYWORDS:
            raise GenError(f"{what} {name!r} is not a valid C# identifier")
    return name


class CSharp(Target):
    name = "csharp"
    summary = "C# static class (net10.0, Span API); --namespace N --class C; layouts scalar | lanes | packed"
    recipe = Recipe(checker="dotnet", language="c#", interface="dotnet")
    schema = (
        Option("layout", "scalar | lanes | packed", printer.LAYOUTS),
        Option("namespace", "namespace of the class", None, NAMESPACE),
        Option("class", "class name (default names size, version, layout)"),
        PRIMITIVE_OPTION,
        WIPE_OPTION,
    )

    def default_options_for(self, spec, values):
        return Options("fly", "full", 1) if values.get("primitive") == "skein" else self.default_options(spec)

    def checker(self, v):
        return "skein-dotnet" if is_skein(v) else self.recipe.checker

    def default_options(self, spec):
        return RECOMMENDED[spec.bits][1]

    def variant(self, spec: Spec, options: Options | None = None, prefix: str = "", **values):
        """``class`` (or ``prefix``) is the class name: by default it names size, version and layout
        (and the options when they are not the recommended ones), so every variant fits into one
        assembly."""
        values = self.normalize(spec, values)
        if values.get("primitive") == "skein":
            return self.skein_variant(spec, options, prefix, values)
        layout = values.get("layout") or RECOMMENDED[spec.bits][0]
        o = self.check_options(options if options is not None else RECOMMENDED[spec.bits][1])
        namespace = identifier(values.get("namespace") or NAMESPACE, "--namespace", dotted=True)
        cls = values.get("class") or prefix
        if cls:
            identifier(cls, "--class")
        else:
            cls = printer.default_class(spec, layout)
            if (layout, o) != RECOMMENDED[spec.bits]:
                cls += f"_{o.keys}_{o.unroll}_i{o.interleave}"
            if values.get("wipe") is False:
                cls += "_nowipe"
        wipe = (("wipe", False),) if values.get("wipe") is False else ()
        return Variant(self.name, spec, o, cls, (("layout", layout), ("namespace", namespace), *wipe))

    def skein_variant(self, spec, options, prefix, values):
        """Skein (--primitive skein): class Skein{bits}V{version} by default; layout scalar."""
        o = self.check_options(options if options is not None else Options("fly", "full", 1))
        if o != Options("fly", "full", 1) or values.get("layout") not in (None, "scalar"):
            raise GenError("--primitive skein for csharp takes --layout scalar --keys fly --unroll full "
                           "--interleave 1")
        namespace = identifier(values.get("namespace") or NAMESPACE, "namespace", dotted=True)
        default = f"Skein{spec.bits}V{spec.version.replace('.', '')}" + ("_nowipe" if values.get("wipe") is False else "")
        cls = identifier(values.get("class") or prefix or default, "class name")
        wipe = (("wipe", False),) if values.get("wipe") is False else ()
        return Variant(self.name, spec, o, cls, (("layout", "scalar"), ("namespace", namespace),
                                                 ("primitive", "skein"), *wipe))

    def variants(self, which, specs):
        if which == "recommended":
            return [self.variant(s) for s in specs] + [self.variant(s, primitive="skein") for s in specs]
        out = []
        for s in specs:
            sets = [Options("fly", "full", 1), Options("table", "full", 1), Options("fly", "loop", 1),
                    Options("table", "loop", 1), Options("fly", "full", 2)]
            out += [self.variant(s, o, layout="lanes") for o in sets]
            out.append(self.variant(s, RECOMMENDED[s.bits][1], layout="scalar"))
            out.append(self.variant(s, Options("fly", "full", 1), layout="packed"))
        return out + [self.variant(s, primitive="skein") for s in specs]

    def list_lines(self):
        return ["  csharp    C# static class (net10.0, Span API); --namespace N --class C; layouts:",
                "              scalar  ulong + BitOperations.RotateLeft; any .NET 10 runtime",
                "              lanes   scalar one-block + EncryptBlocks/DecryptBlocks over 8 blocks in Vector512",
                "                      (AVX-512F/VL/BW/DQ/CD) or 4 blocks in Vector256 (AVX2), picked at run time;",
                "                      --unroll loop loops the vector kernels only (24-round passes; Threefish-1024:",
                "                      16): the scalar Encrypt/Decrypt and the blocks tail stay unrolled",
                "              packed  Encrypt/Decrypt: one block in two vectors (A = even, B = odd words):",
                "                      Vector128 (256; AVX-512VL vprolvq or AVX2), Vector256 (512; same),",
                "                      Vector512 (1024; AVX-512F); needs --keys fly --unroll full"]

    def recommended_lines(self):
        return [f"  csharp {bits:>4}: --layout {layout} {o.describe()}" for bits, (layout, o) in RECOMMENDED.items()]

    def passes(self, v):
        if is_skein(v):
            return [ubi_pass(),
                    Pass("layout scalar (gen/layouts/scalar.py) + UBI lanes kernels (gen/layouts/lanes.py)",
                         "UBI Program", "VProgram (W = 1: setup and body fused, one block) + lanes VPrograms",
                         skein_layout),
                    Pass("print C# Skein (gen/printers/csharp.py)", "VProgram",
                         ".cs (templates/csharp/skein.cs.j2)", printer.skein_render)]
        o, so = v.options, scalar_options(v)
        shapes = [(d, x, n) for x in dict.fromkeys((o, so)) for d in DIRECTIONS for n in sorted({1, o.interleave})]
        vector = v.get("layout", "scalar") != "scalar"   # lanes/packed classes: vector loop kernels
        return [describe_pass(lambda v: shapes, cycles=lambda v: loop_cycles(v.spec, vector=vector)),
                Pass(f"layout {v.get('layout')} (gen/layouts/)", "Program",
                     "VProgram (W = 1) + lanes VPrograms per vector kind | packed VProgram", layout_pass),
                Pass("print C# (gen/printers/csharp.py)", "laid-out programs", ".cs (templates/csharp/)",
                     printer.render)]

    def package_files(self, variants):
        """A packable class library: `dotnet pack DIR` makes a .nupkg (PackageId = the namespace)."""
        namespace = variants[0].get("namespace", NAMESPACE)
        classes = ", ".join(v.prefix for v in variants)
        sizes = ", ".join(sorted({f"Threefish-{v.spec.bits}" for v in variants}))
        return {f"{namespace}.csproj": CSPROJ_PACKAGE.format(id=namespace, version=__version__, classes=classes,
                                                             sizes=sizes)}


# net10.0 only: net8.0 would need its targeting pack (Microsoft.NETCore.App.Ref 8.x), which offline
# SDK installs lack; add it to TargetFrameworks where the SDK has it.
CSPROJ_PACKAGE = """<Project Sdk="Microsoft.NET.Sdk">
  <!-- Generated by threefish-gen {version}: a packable class library of the rendered classes
       ({classes}).  dotnet pack -c Release -o FEED makes {id}.{version}.nupkg. -->
  <PropertyGroup>
    <TargetFrameworks>net10.0</TargetFrameworks>
    <PackageId>{id}</PackageId>
    <Version>{version}</Version>
    <Authors>threefish-gen</Authors>
    <Description>Threefish block cipher ({sizes}), generated by threefish-gen {version}.</Description>
    <PackageTags>threefish;skein;cipher</PackageTags>
    <IsPackable>true</IsPackable>
    <Nullable>enable</Nullable>
    <ImplicitUsings>disable</ImplicitUsings>
    <Optimize>true</Optimize>
    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
    <GenerateDocumentationFile>false</GenerateDocumentationFile>
  </PropertyGroup>
</Project>
"""


def scalar_options(v) -> Options:
    """The options of the scalar code (Encrypt/Decrypt, the scalar blocks loop and tail): a lanes
    class's are unrolled also under --unroll loop, which loops the vector kernels only (issue 30:
    on Zen 3 the loop form's vector bulk kernels ran as fast as the unrolled ones, its scalar
    single blocks 1.2-1.6x slower; as nasm-x64's lanes files, gen/targets/nasm.py)."""
    o = v.options
    if v.get("layout", "scalar") == "lanes" and o.unroll == "loop":
        return Options(o.keys, "full", o.interleave)
    return o


def layout_pass(v, programs: dict) -> dict:
    """The layout pass: per direction the one-block and interleaved programs in layout scalar (the
    W = 1 layout IR, gen/layouts/scalar.py; scalar_options' programs), the lanes layout of both
    for every vector kind (``lanes``; the variant's options, with their layout-scalar lowering in
    ``lanes_one``/``lanes_multi`` where it differs), the natural packed layout (``packed``)."""
    o, so, layout = v.options, scalar_options(v), v.get("layout", "scalar")
    out = {}
    for d in ("encrypt", "decrypt"):
        one, multi = programs[(d, so, 1)], programs[(d, so, o.interleave)]
        f = {"one": scalar_layout.lower(one), "multi": scalar_layout.lower(multi), "lanes": {}}
        if layout == "lanes":
            vone, vmulti = programs[(d, o, 1)], programs[(d, o, o.interleave)]
            f["lanes"] = {kind: tuple(lanes_layout.lower_stream(p, KINDS[kind]["lanes"]) for p in (vmulti, vone))
                          for kind in ("v512", "v256")}
            if so != o:
                f["lanes_one"], f["lanes_multi"] = scalar_layout.lower(vone), scalar_layout.lower(vmulti)
        if layout == "packed":
            f["packed"] = packed_layout.lower(one, PACKED_VEC[v.spec.nw][1], natural=True)
        out[d] = f
    out["counts"] = scalar_layout.op_counts(programs[("encrypt", o, 1)])
    return out


def skein_layout(v, prog) -> dict:
    """The Skein layout pass: the UBI block with setup and body fused at W = 1 (``ubi``), and the
    UBI block of L messages (gen/skein.py ubi_lanes_program) in the lanes of each vector kind the
    class runs many messages in (``lanes``: Vector512, Vector256)."""
    lanes_prog = skein.ubi_lanes_program(v.spec)
    return {"ubi": scalar_layout.lower(prog, fuse=True),
            "lanes": [(kind, lanes_layout.lower(lanes_prog, KINDS[kind]["lanes"])) for kind in ("v512", "v256")]}

TARGET = CSharp()
