"""The import graph, read from the source with ast: layers and no cycles.

threefish_gen/gen/ (the generator library) imports nothing outside itself; threefish_gen/verify/
imports gen and never the application layer; the rest of threefish_gen/ (cli.py and tools/: bench,
tune, explore, check, ...) sits above both.  Every import counts,
also the ones inside functions: a cycle through a function-level import is still a cycle.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from threefish_gen.gen import targets as registry

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("threefish_gen",)
GEN, VERIFY = "threefish_gen.gen", "threefish_gen.verify"


def _in(mod: str, pkg: str) -> bool:
    return mod == pkg or mod.startswith(pkg + ".")
# the registry's target names but those that are also a language's name ("c", "rust": recipes, the
# prover's LANGUAGES)
LANGUAGE_NAMES = {registry.get(n).recipe.language for n in registry.names()}
TARGET_NAMES = tuple(n for n in registry.names() if n not in LANGUAGE_NAMES)


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    mods = {_module(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")
                    up = up[:len(up) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            for n in names:
                # the longest known module that the name is or lies in
                while n and n not in mods:
                    n = n.rsplit(".", 1)[0] if "." in n else ""
                if n and n != mod:
                    graph[mod].add(n)
    return graph


def test_gen_imports_nothing_outside_gen():
    bad = [(m, d) for m, deps in _graph().items() if _in(m, GEN)
           for d in deps if not _in(d, GEN)]
    assert not bad, bad


def test_verify_does_not_import_the_application_layer():
    bad = [(m, d) for m, deps in _graph().items() if _in(m, VERIFY)
           for d in deps if not (_in(d, GEN) or _in(d, VERIFY))]
    assert not bad, bad


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_is_not_vacuous():
    """The graph has the edges it must have (a parser that saw nothing would pass the above)."""
    g = _graph()
    assert "threefish_gen.gen.targets" in g["threefish_gen.cli"]
    assert "threefish_gen.verify.runner" in g["threefish_gen.verify.matrix"]
    assert any(d.startswith("threefish_gen.gen.targets") for d in g["threefish_gen.gen.render"])


def test_target_names_only_in_descriptors_printers_templates_tests_docs():
    """No `target == "nasm-x86"` outside gen/targets/: code asks the descriptor instead (the tools'
    per-target registry, tools/target_tools.py, holds each descriptor and takes its name from it)."""
    allowed = ("threefish_gen/gen/targets/", "threefish_gen/gen/printers/")
    pat = re.compile(r"""["'](%s)["']""" % "|".join(map(re.escape, TARGET_NAMES)))
    bad = []
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            rel = str(p.relative_to(ROOT))
            if rel.startswith(allowed):
                continue
            for n, line in enumerate(p.read_text().splitlines(), 1):
                if pat.search(line) and not line.lstrip().startswith("#"):
                    bad.append(f"{rel}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


# what bench, tune, the bounds and object builds need of a target: the application layer's
# (tools/target_tools.py) and verify's (verify/objects.py), never a descriptor method
TOOL_METHODS = ("bench_variants", "bench_name", "bench_note", "tune_candidates", "bound_work", "chain_bound",
                "is_dispatcher", "op_counts", "object_commands", "nasm_format", "sse2_stream")


def test_descriptors_hold_no_tool_methods_and_gen_no_port_models():
    from threefish_gen.gen import targets
    from threefish_gen.tools import target_tools

    bad = [(name, m) for name in targets.names() for m in TOOL_METHODS if hasattr(targets.get(name), m)]
    assert not bad, bad
    gen = ROOT / "threefish_gen" / "gen"
    assert not [p for p in gen.rglob("*.py") if p.stem in ("bounds", "ports")]
    assert not any(hasattr(targets.get(n).recipe, "bench") for n in targets.names())
    # the tools' registry is keyed by the descriptors' names, and every entry is a registered target
    assert set(target_tools.TOOLS) <= set(targets.names())
    assert all(t.target is targets.get(name) for name, t in target_tools.TOOLS.items())
    # the check sees methods: the tools have them
    assert all(hasattr(target_tools.tools_for(n), m) for n in targets.names() for m in TOOL_METHODS[:7])


def _imported_names(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            out |= {f"{'.' * node.level}{node.module or ''}:{a.name}" for a in node.names}
    return out


def test_printers_only_format():
    """Printers neither describe, allocate nor read target descriptors: the passes before them do."""
    bad = {}
    printers = ROOT / "threefish_gen" / "gen" / "printers"
    paths = sorted(printers.rglob("*.py"))          # the SIMD C printer's package too (c_simd/)
    assert printers / "c_simd" / "driver.py" in paths and printers / "c_simd" / "printer.py" in paths
    for path in paths:
        names = _imported_names(path)
        hits = sorted(n for n in names if n.endswith((":describe", ":allocate", ":assign", ":check_allocation"))
                      or n.split(":")[0].lstrip(".").startswith("targets"))
        if hits:
            bad[str(path.relative_to(printers))] = hits
    assert not bad, bad
    # the check sees imports: a printer that imported describe would be named
    assert "..threefish:describe" in _imported_names(ROOT / "threefish_gen" / "gen" / "targets" / "base.py")


def test_the_declared_passes_are_the_passes_that_run():
    """Every target's render is its pass list, run in order, each pass fed what the previous made."""
    from threefish_gen.gen import targets
    from threefish_gen.gen.spec import get_spec
    from threefish_gen.gen.targets import base

    for name in targets.names():
        t = targets.get(name)
        v = t.variants("recommended", [get_spec("1.3", 256)])[0]
        seen = []
        wrapped = [base.Pass(p.name, p.reads, p.makes,
                             (lambda p: lambda v, ir: (seen.append(p.name), p.run(v, ir))[1])(p))
                   for p in t.passes(v)]
        files = base.run_passes(wrapped, v)
        assert seen == [p.name for p in t.passes(v)] and seen[0] == "describe", (name, seen)
        assert files == t.render(v) and all(files.values()), name
