"""How a rendered variant becomes one object file, from its descriptor's recipe (data): C files
(``recipe.language`` c) with the C compiler, NASM files with ``nasm -f`` in the object format of
the variant's calling convention (gen/asm/abi.py).  verify's checkers, bench and the allocation
report build objects through here; verify's rows through :func:`shared_object` (once per run for
the same text, tool and flags: verify/objstore.py)."""
from __future__ import annotations

from pathlib import Path

from threefish_gen.gen.asm.abi import ABIS
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.variant import Variant

from . import objstore


def object_format(v: Variant) -> str:
    """``nasm -f`` format of an assembly variant: its ABI's (elf64, win64, elf32)."""
    abi = v.get("abi") or get_target(v.target).option("abi").default
    return ABIS[abi].object_format


def object_commands(v: Variant, src_dir, obj, cc: str = "gcc") -> list[list[str]]:
    """Commands that turn the rendered files in ``src_dir`` into one object ``obj``."""
    language = get_target(v.target).recipe.language
    if language == "c":
        return [[cc, "-O2", "-std=c99", f"-I{src_dir}", "-c", f"{src_dir}/{v.stem}.c", "-o", str(obj)]]
    if language == "nasm":
        return [["nasm", "-f", object_format(v), "-o", str(obj), f"{src_dir}/{v.stem}.asm"]]
    raise GenError(f"{v.target} files ({language}) are not built into an object")


def shared_object(v: Variant, src_dir: Path, workdir: Path, run, cc: str = "gcc",
                  cflags=("-O2", "-std=c99")) -> tuple[int, str, Path | None]:
    """The object of the rendered files in ``src_dir``, built once per run for the same text,
    tool and flags (verify/objstore.py): (exit status, tool output, the object or None).  C:
    ``cc cflags -I src -c``; NASM: ``nasm -f`` in the variant's object format."""
    language = get_target(v.target).recipe.language
    if language == "c":
        return c_object(v.stem, src_dir, workdir, run, cc, cflags)
    if language == "nasm":
        src = Path(src_dir) / f"{v.stem}.asm"
        return objstore.build(["nasm", "-f", object_format(v), str(src)], src_dir, [src], run, workdir,
                              output=f"{v.stem}.o")
    raise GenError(f"{v.target} files ({language}) are not built into an object")


def c_object(stem: str, src_dir: Path, workdir: Path, run, cc: str, cflags) -> tuple[int, str, Path | None]:
    """``cc cflags -I src -c src/STEM.c`` once per run for the same text (STEM.c and the headers
    beside it), compiler and flags (verify/objstore.py)."""
    src = Path(src_dir) / f"{stem}.c"
    return objstore.build([cc, *cflags, f"-I{src_dir}", "-c", str(src)], src_dir,
                          [src, *sorted(Path(src_dir).glob("*.h"))], run, workdir, output=f"{stem}.o")
