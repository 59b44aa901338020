"""The C# harness project that tests of two modules share: one ``dotnet build`` (about 12 CPU-seconds
before a class is compiled) instead of one per module.  Its tests carry the xdist group
csharp-edited, so one pytest-xdist worker builds it (``make test``: --dist loadgroup); tests/conftest.py
imports the fixture.

It holds, built through verify's own C# path (csharp.prepare and the build of the first row):
- tests/test_csharp.py: Broken (Threefish-256 scalar, one rotation count changed), the 256 lanes
  fly/loop and table/loop classes, and Planted (table/loop lanes with a real call planted in
  EncryptBlock);
- tests/test_trust.py (test_csharp_wipe_zeroes_stackalloc_and_runs): Threefish-512 table/loop,
  scalar and lanes, and the lanes one with --no-wipe."""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest


def break_rotation(cs: Path) -> None:
    """One rotation count of the class changed (its low bit flipped)."""
    text = cs.read_text()
    new = re.sub(r"BitOperations\.RotateLeft\((\w+), (\d+)\)",
                 lambda m: f"BitOperations.RotateLeft({m.group(1)}, {int(m.group(2)) ^ 1})", text, count=1)
    assert new != text
    cs.write_text(new)


def plant_call(cs: Path) -> None:
    """A real call (to a method that does nothing) planted at the top of EncryptBlock."""
    text = cs.read_text()
    # int: a wiped class's single-block kernels return 0 (rax holds no key word when the wipe runs)
    head = "    private static int EncryptBlock(ref byte key, ref byte tweak, ref byte src, ref byte dst)\n    {\n"
    assert text.count(head) == 1 and text.rstrip().endswith("}")
    text = text.replace(head, head + "        PlantedCall();\n")
    end = text.rstrip().rindex("}")             # the class's closing brace
    cs.write_text(text[:end] + "\n    [MethodImpl(MethodImplOptions.NoInlining)]\n"
                  "    private static void PlantedCall() { }\n" + text[end:])


def stackalloc_variants():
    """test_trust's stackalloc classes: (spec, the wiped ones (scalar, lanes), the --no-wipe lanes one)."""
    from threefish_gen.gen.spec import get_spec
    from threefish_gen.gen.targets import get as get_target
    from threefish_gen.gen.threefish import Options
    spec = get_spec("1.3", 512)
    cs = get_target("csharp")
    wiped = [cs.variant(spec, Options("table", "loop", 1), layout=lay) for lay in ("scalar", "lanes")]
    kept = cs.variant(spec, Options("table", "loop", 1), layout="lanes", wipe=False)
    return spec, wiped, kept


@pytest.fixture(scope="session")
def csharp_edited_project(tmp_path_factory):
    """The shared project, built: spec (Threefish-256 v1.3), state (verify's C# project state), dll
    (the harness), broken, good, planted (test_csharp's), stackalloc (stackalloc_variants())."""
    if shutil.which("dotnet") is None:
        pytest.skip("dotnet (.NET 10 SDK) not installed")
    from threefish_gen.gen.spec import get_spec
    from threefish_gen.gen.targets.csharp import TARGET as CSHARP
    from threefish_gen.gen.threefish import Options
    from threefish_gen.verify import csharp as vcs
    spec = get_spec("1.3", 256)
    broken = CSHARP.variant(spec, Options(), "Broken", layout="scalar", namespace="ThreefishGen")
    good = [CSHARP.variant(spec, Options(k, "loop", 1), "", layout="lanes", namespace="ThreefishGen")
            for k in ("fly", "table")]
    planted = CSHARP.variant(spec, Options("table", "loop", 1), "Planted", layout="lanes", namespace="ThreefishGen")
    stackalloc = stackalloc_variants()
    write = vcs.write_project

    def write_edited(vs, proj, **kw):
        write(vs, proj, **kw)
        break_rotation(proj / "ThreefishGen.Broken.cs")
        plant_call(proj / "ThreefishGen.Planted.cs")

    with pytest.MonkeyPatch.context() as m:
        m.setattr(vcs, "write_project", write_edited)
        vcs.prepare([broken, *good, planted, *stackalloc[1], stackalloc[2]], tmp_path_factory.mktemp("cs-edited"))
        dll, err = vcs._ensure_built(broken)
        state = vcs._STATE
    assert err is None, err
    return SimpleNamespace(spec=spec, state=state, dll=dll, broken=broken, good=good, planted=planted,
                           stackalloc=stackalloc)
