"""Instruction choice lives in the ISA modules (threefish_gen/gen/isa/): printers and prove readers
walk the layout IR through ``ir.visit`` and ask an ISA module for every spelling, so no module
outside gen/isa/ and the IR itself (gen/layouts/) dispatches with ``isinstance`` over the layout
IR's operation classes.  Read from the source with ast."""
from __future__ import annotations

import ast
import re
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


# The NASM prove reader (gen/prove/nasm.py) reads every vector instruction through gen/isa/x86.py
# (``NASM``: each mnemonic's SEMANTICS row and operand forms): it decodes operands and does the
# loads and stores, and spells no vector mnemonic.  The words it may spell as string literals:
# the general-purpose and control instructions it reads itself, the wipe loop's, registers and
# their classes, operand sizes, directives, term and state names, and ``v`` (the VEX/EVEX
# prefix, stripped before x86.nasm_form).  A new word goes here only if it is none of a vector
# instruction's spelling or meaning.
NASM_READER = GEN / "prove" / "nasm.py"
NASM_READER_WORDS = {
    # general-purpose and control instructions (and the epilogue wipe loop's dec)
    "mov", "movsxd", "add", "sub", "xor", "and", "or", "rol", "ror", "shl", "shr", "rorx", "shld", "lea",
    "test", "cmp", "push", "pop", "call", "jmp", "jz", "je", "jnz", "jne", "ret", "dec", "endbr64", "endbr32",
    # registers, register classes (g GPR, v vector, k mask), operand sizes, rel
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "eax", "ebx", "ecx", "edx", "esi", "edi", "ebp",
    "esp", "r", "g", "k", "xmm", "ymm", "zmm", "byte", "word", "dword", "qword", "oword", "yword", "zword", "rel",
    # directives, term/state names, the VEX prefix
    "global", "extern", "section", "default", "bits", "align", "dq", "text", "abi", "args", "branch", "d",
    "lin", "no", "op", "out", "rsp0", "scope", "var", "v",
}


def string_words(source: str) -> set[str]:
    """The string literals of a module that are one lowercase word (what a mnemonic looks like)."""
    return {n.value for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and re.fullmatch(r"[a-z][a-z0-9]*", n.value)}


def _x86_vector_mnemonics() -> set[str]:
    """Every x86 vector mnemonic gen/isa/x86.py knows: the NASM table's (bare and v-prefixed) and
    the first word of every vector form the NASM printer prints."""
    from threefish_gen.gen.isa import x86
    names = set(x86.NASM) | {"v" + m for m in x86.NASM}
    forms = [f for t in (x86.X86_XMM_OPS, x86.X86_PACKED_OPS, x86.YMM_OPS, x86.ZMM_OPS) for f in t.values()]
    forms += [f for f, _, _ in x86.PACKED_MOVES.values()]
    forms += [f for cls in x86.LANE_MOVES.values() for f, _, _ in cls.values()]
    return names | {f.split()[0] for f in forms}


def nasm_reader_problems(source: str) -> list[str]:
    words = string_words(source)
    problems = []
    if spelled := sorted(words & _x86_vector_mnemonics()):
        problems.append(f"vector mnemonics spelled in the reader: {spelled} (read them through x86.nasm_form)")
    if unknown := sorted(words - NASM_READER_WORDS):
        problems.append(f"words not documented in NASM_READER_WORDS: {unknown}")
    return problems


def test_the_nasm_reader_spells_no_vector_instruction():
    assert not nasm_reader_problems(NASM_READER.read_text())


def test_the_nasm_reader_check_is_not_vacuous():
    """The reader as it was before the vector instructions moved to x86.py fails the check
    (pshufd, the moves and the lane-wise tuples it spelled), as does one new vector literal."""
    old = ('ALIASES = {"movaps": "movdqa", "unpcklpd": "punpcklqdq"}\n_LANEWISE = ("paddq", "pxor")\n'
           'def f(base):\n    if base == "pshufd":\n        return 1\n    if base in ("movq", "pextrq"):\n        return 2\n')
    assert "vector mnemonics spelled" in nasm_reader_problems(old)[0]
    assert nasm_reader_problems(NASM_READER.read_text() + '\nX = "vpshufb"\n')
    assert not nasm_reader_problems(NASM_READER.read_text() + '\nX = "mov"\n')


def test_every_vector_instruction_the_nasm_files_hold_is_in_the_x86_table():
    """Each instruction with an xmm/ymm/zmm operand in the shipped renders (out/nasm) and each
    vector form of the printer's tables is a key of x86.NASM (without its v prefix)."""
    from threefish_gen.gen.isa import x86
    seen = set()
    for path in sorted((ROOT / "out" / "nasm").glob("*.asm")):
        for line in path.read_text().splitlines():
            code = line.split(";")[0].strip()
            m = re.match(r"([a-z][a-z0-9]*)\s+(.*)", code)
            if m and re.search(r"\b[xyz]mm\d+\b", m.group(2)):
                seen.add(m.group(1))
            elif code == "vzeroupper":
                seen.add(code)
    assert {"movq", "movdqa", "paddq", "vpbroadcastq", "vshufi64x2", "vperm2i128", "vzeroupper"} <= seen, seen
    assert {"pshufd", "pslldq", "movsd", "shufpd"} <= _x86_vector_mnemonics()
    missing = sorted(m for m in seen | _x86_vector_mnemonics()
                     if x86.nasm_form(m[1:] if m.startswith("v") else m) is None)
    assert not missing, missing


# The C# prove reader (gen/prove/csharp.py) reads every runtime call the printer spells through
# gen/isa/dotnet.py (``API``: the portable vector calls and the ulong rotations, byte swap,
# unaligned read and write; ``INTRINSICS``: the x86 methods) and spells none of them; the C#
# printer (gen/printers/csharp.py) spells them only through that module (api, load, store, the
# shuffles and rotations).  The words the reader may spell as string literals: C# syntax it
# parses itself (ref arithmetic, spans, the wipe, the byte-order flag, keywords and types), the
# public methods it proves, and its own node and state names.  A new word goes here only if it is
# no call of the tables.
CS_READER = GEN / "prove" / "csharp.py"
CS_PRINTER = GEN / "printers" / "csharp.py"
CS_READER_WORDS = {
    # refs, spans and the wipe (C# around the calls), the byte-order flag, Overlaps (argument checks)
    "Unsafe.Add", "MemoryMarshal.GetReference", "MemoryMarshal.AsBytes", "CryptographicOperations.ZeroMemory",
    "BitConverter.IsLittleEndian", "Overlaps", "Span", "ReadOnlySpan",
    # keywords and types, the literal suffixes
    "if", "return", "throw", "ref", "byte", "int", "uint", "long", "ulong", "uUlL",
    # the public methods proved and their directions
    "Encrypt", "Decrypt", "EncryptBlocks", "DecryptBlocks", "encrypt", "decrypt",
    # expression nodes, statement kinds, state names
    "assign", "bin", "call", "cast", "cond", "expr", "index", "member", "method", "name", "neg", "not", "num",
    "ternary", "unset", "pure", "ret", "rsp0.", "_", "_pure", "_scopes",
}


def cs_string_words(source: str) -> set[str]:
    """The string literals of a module that are one C# name (``Create``, ``Vector256``,
    ``Unsafe.ReadUnaligned<ulong>``)."""
    return {n.value for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and re.fullmatch(r"[A-Za-z_][\w.]*(<\w+>)?", n.value)}


def _dotnet_spellings() -> tuple[set[str], set[str]]:
    """(method names, classes) of every call gen/isa/dotnet.py spells: the API rows' methods
    (their static classes' qualified names too), the x86 intrinsic methods, the vector and x86
    classes."""
    from threefish_gen.gen.isa import dotnet
    methods = {r.name for r in dotnet.API.values()} | set(dotnet.INTRINSICS)
    methods |= {f"{r.on}.{r.name}" for r in dotnet.API.values() if r.on not in (dotnet.VECTOR, dotnet.VALUE)}
    return methods, set(dotnet.VECTORS) | set(dotnet.CLASSES)


def cs_reader_problems(source: str) -> list[str]:
    methods, classes = _dotnet_spellings()
    words = cs_string_words(source)
    spelled = sorted(w for w in words if w in methods | classes or w.rsplit(".", 1)[0] in classes)
    problems = []
    if spelled:
        problems.append(f"C# calls spelled in the reader: {spelled} (read them through dotnet.api_row)")
    if unknown := sorted(words - CS_READER_WORDS):
        problems.append(f"words not documented in CS_READER_WORDS: {unknown}")
    return problems


def cs_printer_problems(source: str) -> list[str]:
    """Pieces of string literals (f-string parts too) of the printer that spell a call of the
    tables: ``.Method(`` of a vector row, ``Class.Method(`` of a ulong row or an x86 class."""
    from threefish_gen.gen.isa import dotnet
    rows = dotnet.API.values()
    pats = [re.escape(f".{r.name}(") for r in rows if r.on in (dotnet.VECTOR, dotnet.VALUE)]
    pats += [rf"\b{re.escape(f'{r.on}.{r.name}')}\(" for r in rows if r.on not in (dotnet.VECTOR, dotnet.VALUE)]
    pats += [rf"\b{re.escape(c)}\.\w+\(" for c in dotnet.CLASSES]
    found = set()
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            found |= {m.group(0) for p in pats for m in re.finditer(p, n.value)}
    return [f"C# calls spelled in the printer: {sorted(found)} (spell them through gen/isa/dotnet.py)"] if found else []


def test_the_csharp_reader_and_printer_spell_no_call_of_the_tables():
    assert not cs_reader_problems(CS_READER.read_text())
    assert not cs_printer_problems(CS_PRINTER.read_text())


def test_the_csharp_checks_are_not_vacuous():
    """The reader and printer as they were before the portable calls moved to dotnet.py fail the
    checks, as does one new call literal; a documented word passes."""
    old_reader = ('def f(self, name, x, p, e):\n    if name in ("AsUInt64", "AsByte", "AsUInt32"):\n        return x\n'
                  '    if name == "GetLower":\n        return x[:1]\n    if p == "Unsafe" and e == "Add":\n        return 0\n'
                  '    if p in ("BitOperations.RotateLeft", "BitOperations.RotateRight"):\n        return 1\n')
    (problem,) = [p for p in cs_reader_problems(old_reader) if "spelled" in p]
    for name in ("AsUInt64", "GetLower", "BitOperations.RotateLeft", "Add"):
        assert repr(name) in problem, problem
    assert cs_reader_problems(CS_READER.read_text() + '\nX = "LoadUnsafe"\n')
    assert cs_reader_problems(CS_READER.read_text() + '\nX = "Vector512"\n')
    assert not cs_reader_problems(CS_READER.read_text() + '\nX = "Unsafe.Add"\n')
    old_printer = ('def load(op, vec, ref, w0, src):\n    a = f"{op.dst} = {vec}.LoadUnsafe(ref {ref}, {8 * w0}).AsUInt64();"\n'
                   '    b = f"{src}.GetLower().AsByte().StoreUnsafe(ref {ref}, 0);"\n'
                   '    return f"Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref {ref}, 0))", a, b\n')
    (problem,) = cs_printer_problems(old_printer)
    for call in (".LoadUnsafe(", ".AsUInt64(", ".GetLower(", ".StoreUnsafe(", "Unsafe.ReadUnaligned<ulong>("):
        assert repr(call) in problem, problem
    assert cs_printer_problems('X = f"{a}.Create({b})"\nY = "Avx2.Permute4x64(a, 0xd8)"\n')
    assert not cs_printer_problems('X = f"ref Unsafe.Add(ref {r}, {k})"\n')


def test_every_call_the_csharp_files_hold_is_in_the_dotnet_tables():
    """Each call on a vector class or an x86 class in the shipped renders (out/csharp), each
    vector method called on a value (``x.GetLower()``, ``.AsByte()``, ``..StoreUnsafe(``) and each
    rotation, byte swap and unaligned read or write is a row of dotnet.API or dotnet.INTRINSICS."""
    from threefish_gen.gen.isa import dotnet
    rows = {(r.on, r.name) for r in dotnet.API.values()}
    seen = set()
    for path in sorted((ROOT / "out" / "csharp").glob("*.cs")):
        text = path.read_text()
        for cls, name in re.findall(r"\b(Vector128|Vector256|Vector512)\.(\w+)\(", text):
            seen.add((dotnet.VECTOR, name))
        for cls, name in re.findall(r"\b(Avx512F\.VL|Avx512F|Avx2|Avx|Sse2)\.(\w+)\(", text):
            seen.add(("x86", name))
        for name in re.findall(r"[\w)](?<!Vector128)(?<!Vector256)(?<!Vector512)\.(As(?:UInt64|UInt32|Byte)|Get(?:Lower|Upper)|"
                               r"\w+Unsafe)\(", text):
            seen.add((dotnet.VALUE, name))
        for cls, name in re.findall(r"\b(BitOperations|BinaryPrimitives|Unsafe)\.(Rotate\w+|ReverseEndianness|"
                                    r"ReadUnaligned<ulong>|WriteUnaligned)\(", text):
            seen.add((cls, name))
    assert {(dotnet.VECTOR, "Create"), (dotnet.VECTOR, "LoadUnsafe"), (dotnet.VALUE, "GetLower"),
            (dotnet.VALUE, "StoreUnsafe"), ("x86", "PermuteVar8x64x2"), ("BitOperations", "RotateLeft"),
            ("Unsafe", "ReadUnaligned<ulong>")} <= seen, seen
    missing = sorted(c for c in seen if c not in rows and not (c[0] == "x86" and c[1] in dotnet.INTRINSICS))
    assert not missing, missing
