"""Templates place what the printers computed: no template compares a target's, an ABI's or an
architecture's name (issue 26, "One IR").  What differs between targets, calling conventions and
instruction families is data (the target descriptors, gen/asm/abi.py, the ISA modules) that the
printers turn into lines and flags; a template that asked `target == "nasm-x64"` or
`abi != "win64"` would be a second copy of that knowledge."""
from __future__ import annotations

import re
from pathlib import Path

from threefish_gen.gen import targets as registry
from threefish_gen.gen.asm.abi import ABIS as ABI_TABLE

TEMPLATES = Path(__file__).resolve().parent.parent / "threefish_gen" / "templates"
TARGETS = tuple(registry.names())     # every target of the registry: a new one needs no line here
ABIS = (*ABI_TABLE, "ms")                # the one ABI table (gen/asm/abi.py), and ms_abi
MACHINES = ("x86", "x86-64", "x64", "neon", "aarch64")     # machines and instruction families
NAMES = "|".join(re.escape(n) for n in TARGETS + ABIS + MACHINES)

# the Jinja statements and expressions of a template ({% ... %}, {{ ... }})
TAG = re.compile(r"{%.*?%}|{{.*?}}", re.S)
# a name on either side of == / !=, or first in the list or tuple after in / not in
COMPARE = re.compile(r"""(==|!=)\s*["'](%s)["']|["'](%s)["']\s*(==|!=)|\bin\s*[(\[]?\s*["'](%s)["']"""
                     % (NAMES, NAMES, NAMES))


def name_comparisons(text: str) -> list[str]:
    """The Jinja tags of ``text`` that compare something with a target, ABI or machine name."""
    return [tag for tag in TAG.findall(text) if COMPARE.search(tag)]


def test_no_template_compares_a_target_abi_or_machine_name():
    bad = []
    for path in sorted(p for p in TEMPLATES.rglob("*") if p.is_file()):
        for tag in name_comparisons(path.read_text()):
            bad.append(f"{path.relative_to(TEMPLATES)}: {' '.join(tag.split())}")
    assert not bad, "\n".join(bad)


def test_the_check_sees_comparisons():
    """Each form the check must catch is caught (a pattern that matched nothing would pass the above)."""
    for tag in ('{% if target == "nasm-x64" %}', "{% if abi != 'win64' %}", '{{ 8 if target == "nasm-x64" else 4 }}',
                '{% if "sysv" == abi %}', '{% if abi in ("sysv", "win64") %}', '{% if t not in ["c", "csharp"] %}',
                '{% set sp = "rsp" if target == "nasm-x64" else "esp" %}', '{% if g.family == "x86" %}'):
        assert name_comparisons(tag) == [tag], tag
    for tag in ('{% if layout == "packed" %}', '{{ target }}', '{% if f.kind == "one" %}', 'abi == "sysv"',
                '{% for d in ("encrypt", "decrypt") %}'):
        assert name_comparisons(tag) == [], tag
