"""How a rendered variant becomes one object file, from its descriptor's recipe (data): C files
(``recipe.language`` c) with the C compiler, NASM files with ``nasm -f`` in the object format of
the variant's calling convention (gen/asm/abi.py).  verify's checkers, bench and the allocation
report build objects through here."""
from __future__ import annotations

from threefish_gen.gen.asm.abi import ABIS
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.variant import Variant


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
