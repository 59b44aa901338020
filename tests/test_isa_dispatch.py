"""Instruction choice lives in the ISA modules (threefish_gen/gen/isa/): printers and prove readers
walk the layout IR through ``ir.visit`` and ask an ISA module for every spelling, so no module
outside gen/isa/ and the IR itself (gen/layouts/) dispatches with ``isinstance`` over the layout
IR's operation classes.  Read from the source with ast."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "threefish_gen" / "gen"
EXEMPT = (GEN / "isa", GEN / "layouts")

# Modules not converted yet, with the number of isinstance dispatches over IR classes each still
# has.  The counts must match exactly, so the list shrinks as modules are converted.
ALLOWED: dict[str, int] = {}


def _ir_classes() -> set[str]:
    tree = ast.parse((GEN / "layouts" / "ir.py").read_text())
    names = {n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name != "VProgram"}
    names |= {"ARITH", "ROT"}      # the tuples of classes ir.py exports
    return names


def dispatches(source: str, classes: set[str]) -> list[int]:
    """Lines of ``isinstance(x, C)`` where C (or a member of a tuple C) is a layout IR class,
    named through the module (``ir.Load``) or imported from it (``from ..layouts.ir import Load``)."""
    tree = ast.parse(source)
    modules, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            mod = node.module
            for a in node.names:
                if mod.endswith("layouts") and a.name == "ir":
                    modules.add(a.asname or "ir")
                elif mod.endswith("layouts.ir") and a.name in classes:
                    names.add(a.asname or a.name)

    def is_ir(t) -> bool:
        if isinstance(t, ast.Tuple):
            return any(is_ir(e) for e in t.elts)
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
            return t.value.id in modules and t.attr in classes
        return isinstance(t, ast.Name) and t.id in names

    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
            and len(node.args) == 2 and is_ir(node.args[1])]


def test_the_detector_finds_module_imported_and_tuple_forms():
    classes = _ir_classes()
    src = ("from ..layouts import ir\nfrom ..layouts.ir import Load as L, Note\n"
           "def f(op):\n    if isinstance(op, ir.Add): pass\n    if isinstance(op, (str, L)): pass\n"
           "    if isinstance(op, ir.ROT): pass\n    if isinstance(op, str): pass\n    if isinstance(op, Note): pass\n")
    assert dispatches(src, classes) == [4, 5, 6, 8]


def test_no_isinstance_dispatch_over_ir_operations_outside_isa_and_ir():
    classes = _ir_classes()
    found = {}
    for path in sorted(GEN.rglob("*.py")):
        if any(path.is_relative_to(e) for e in EXEMPT):
            continue
        lines = dispatches(path.read_text(), classes)
        if lines:
            found[path.relative_to(GEN).as_posix()] = lines
    extra = {f: ln for f, ln in found.items() if len(ln) != ALLOWED.get(f, 0)}
    gone = [f for f in ALLOWED if f not in found]
    assert not extra and not gone, (
        f"isinstance dispatch over layout IR classes (file: lines) {extra}; allow-list entries with none "
        f"left (remove them): {gone}.  Walk the IR with ir.visit and ask gen/isa/ for the spelling.")


# Printers read only the layout IR (scalar ones at W = 1, gen/layouts/scalar.py) or the machine
# ops of gen/asm/: from the description language (gen/dsl.py, gen/threefish.py) they take the
# operand types the IR shares (Mem, Idx) and nothing else: no description ops, loops, programs or
# queries over them.  Exempt, with the reason: none (the SIMD C driver was, until its target's
# layout pass made the layout IR programs it prints, gen/targets/c_simd.py ``layout_pass``).
DESCRIPTION_READERS: set[str] = set()
SHARED_OPERANDS = {"Mem", "Idx"}


def description_imports(source: str) -> set[str]:
    """Names a module imports from gen/dsl.py or gen/threefish.py other than the shared operands
    (a module imported whole counts as its name)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            last = (node.module or "").split(".")[-1]
            if last in ("dsl", "threefish"):
                found |= {a.name for a in node.names} - SHARED_OPERANDS
            elif last in ("", "gen"):          # from .. import dsl
                found |= {a.name for a in node.names if a.name in ("dsl", "threefish")}
    return found


def test_the_detector_finds_description_imports():
    src = ("from ..dsl import Idx, Loop, Mem\nfrom ...threefish import Options\nfrom .. import dsl\n"
           "from ..layouts import ir\n")
    assert description_imports(src) == {"Loop", "Options", "dsl"}


def test_printers_read_no_description_ops():
    found = {}
    for path in sorted((GEN / "printers").rglob("*.py")):
        name = path.relative_to(GEN).as_posix()
        if name not in DESCRIPTION_READERS and (n := description_imports(path.read_text())):
            found[name] = sorted(n)
    assert not found, (f"printers import description names {found}: lower the program first "
                       f"(gen/layouts/scalar.py is the W = 1 layout)")
    assert all((GEN / f).exists() for f in DESCRIPTION_READERS)


# Lowering is a pass of the target (gen/targets/), not of its printer: from gen/layouts/ a printer
# imports the IR (``ir``) and nothing that lowers a description program.  Every printer is converted
# (the Rust printer last: gen/targets/rust.py layout_simd lowers its SIMD paths); keep it empty.
LOWERING_PRINTERS: dict[str, set[str]] = {}


def layout_imports(source: str) -> set[str]:
    """Modules of gen/layouts/ other than ``ir`` that a module imports (``from ..layouts import
    lanes``, ``from ..layouts.packed import lower``, ``from .. import layouts``: "layouts")."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            if parts[-1] == "layouts":
                found |= {a.name for a in node.names} - {"ir"}
            elif len(parts) > 1 and parts[-2] == "layouts" and parts[-1] != "ir":
                found.add(parts[-1])
            elif parts[-1] in ("", "gen"):
                found |= {a.name for a in node.names if a.name == "layouts"}
    return found


def test_the_detector_finds_layout_imports():
    src = ("from ..layouts import ir, lanes as L\nfrom ...layouts.packed import lower\nfrom .. import layouts\n"
           "from ..layouts.ir import Load\n")
    assert layout_imports(src) == {"lanes", "packed", "layouts"}


def test_printers_lower_nothing():
    found = {}
    for path in sorted((GEN / "printers").rglob("*.py")):
        name = path.relative_to(GEN).as_posix()
        if n := layout_imports(path.read_text()):
            found[name] = n
    assert found == LOWERING_PRINTERS, (
        f"printers importing gen/layouts/ modules beside ir: {found}.  Lower in the target's layout "
        f"pass (gen/targets/, gen/layouts/lay_out.py) and hand the printer the VPrograms.")
