"""`threefish-gen prove`: translation validation of emitted programs (gen/prove/)."""
from __future__ import annotations

from pathlib import Path

import click

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.prove import LANGUAGES, prove_text, source_of, why_not
from threefish_gen.gen.render import render_variant

def source_text(v, language: str) -> tuple[str, str]:
    """(name, text) of the rendered file that holds the variant's functions."""
    return source_of(render_variant(v), language)


def run(target, variants, file: str | None, echo=click.echo) -> int:
    """Prove each variant (the file the user holds, or a fresh render); exit status 0, 1."""
    language = target.recipe.language
    if language not in LANGUAGES:
        raise GenError(f"prove reads {', '.join(LANGUAGES)} programs; --target {target.name} emits {language}")
    if file is not None and len(variants) != 1:
        raise GenError("--file goes with one variant (drop --set)")
    failed = False
    notes: dict = {}            # what the proofs leave to verify (Skein's glue), in first-seen order
    left = {v: why_not(v) for v in variants}
    if len(variants) == 1 and left[variants[0]]:
        raise GenError(f"prove does not cover this variant yet: {left[variants[0]]}")
    for v, why in left.items():
        if why:
            echo(f"{v.stem}: SKIPPED ({why})")
    for v in (v for v in variants if not left[v]):
        if file is not None:
            try:
                text = Path(file).read_text()
            except (OSError, UnicodeDecodeError) as e:
                raise GenError(f"cannot read {file}: {getattr(e, 'strerror', None) or e}") from None
            name = file
        else:
            name, text = source_text(v, language)
        try:
            rep = prove_text(v, language, target.recipe.word_bits, text)
        except (IndexError, KeyError, ValueError) as e:      # text the reader does not know: one line
            raise GenError(f"{name}: cannot read the program ({type(e).__name__}: {e})") from None
        for line in rep.lines:
            echo(line)
        echo(f"{name}: {'DIFFERS' if rep.failed else 'proved equivalent'} ({rep.seconds:.1f} s)")
        if rep.note:
            notes.setdefault(rep.note, v.primitive)
        failed |= rep.failed
    for note, primitive in notes.items():        # once per run, not per file
        echo(f"{primitive}: not proved here: {note}")
    return 1 if failed else 0
