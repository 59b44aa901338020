"""The `prove` row of verify: translation validation (gen/prove/) of the variant's emitted text.

It needs no CPU support (AVX-512 code is proved on any machine) and no toolchain: PASS when every
output word of every function equals the description's term, FAIL naming the function, word and
first differing line, SKIPPED (with the reason) for what the prover does not model."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.prove import SOURCE_SUFFIX, proves, prove_text, source_of, why_not
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.variant import Variant

from .runner import Row
from .sources import NotGiven, sources


@dataclass(frozen=True)
class ProveBuild:
    name: str = "prove"
    run: bool = False
    thorough: bool = True        # thorough runs only: the nasm-x64 recommended set takes ~290 s on a loaded 2-core host (c: 4.5 s; c-simd --set all, 207 Threefish variants: ~440 s; csharp --set all, 72 variants, 822 method paths: ~700 s)


BUILD = ProveBuild()


def applies(v: Variant) -> bool:
    return proves(get_target(v.target).recipe.language)


def check(variant: Variant, build: ProveBuild, workdir: Path, vectors: Path = None) -> Row:
    label, t0 = variant.label(), time.monotonic()
    why = why_not(variant)
    if why:
        return Row(label, build.name, "SKIPPED", f"not modeled: {why}")
    recipe = get_target(variant.target).recipe
    files = sources(variant, partial=True)       # check: the user's file (a missing .h does not matter here)
    if not any(n.endswith(SOURCE_SUFFIX.get(recipe.language, "")) for n in files):
        raise NotGiven(f"the folder has no {SOURCE_SUFFIX.get(recipe.language)} file of this render command")
    try:
        name, text = source_of(files, recipe.language)
        rep = prove_text(variant, recipe.language, recipe.word_bits, text)
    except (GenError, IndexError, KeyError, ValueError) as e:
        return Row(label, build.name, "FAIL", f"cannot read the program: {e}", time.monotonic() - t0)
    if rep.failed:
        first = next(line for line in rep.lines if "DIFFERS" in line)
        return Row(label, build.name, "FAIL", first, time.monotonic() - t0)
    note = f"; not proved: {rep.note}" if rep.note else ""
    return Row(label, build.name, "PASS", f"{len(rep.lines)} function(s) proved equivalent to the description{note}",
               time.monotonic() - t0, checks=len(rep.lines))
