"""The `prove` row of verify: translation validation (gen/prove/) of the variant's emitted text.

It needs no CPU support (AVX-512 code is proved on any machine) and no toolchain: PASS when every
output word of every function equals the description's term, FAIL naming the function, word and
first differing line, SKIPPED (with the reason) for what the prover does not model.

The user's files (`check --thorough`) are proved in a child process under proc's limits
(PROVE_LIMIT seconds, CPU time alike, 8 GiB of address space): a TIMEOUT row past them, whatever
the input makes the prover do; verify's own renders are proved in the run's worker processes
(verify/workers.py; in process outside a run)."""
from __future__ import annotations

import json
import os
import pickle
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.prove import SOURCE_SUFFIX, proves, prove_text, source_of, why_not
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.variant import Variant

from . import proc, workers
from .runner import Row
from .sources import NotGiven, is_given, sources


@dataclass(frozen=True)
class ProveBuild:
    name: str = "prove"
    run: bool = False
    thorough: bool = True        # thorough runs only: minutes for a target's --set all (docs/verify.md has the measured times)


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
        if is_given(variant):       # the user's text (check DIR): in a child process, bounded
            failed, lines, note = _prove_in_child(variant, recipe.language, recipe.word_bits, text, workdir)
        else:                       # this threefish-gen's own render (verify): in the run's workers
            failed, lines, note = workers.call(_prove, variant, recipe.language, recipe.word_bits, text)
    except (GenError, IndexError, KeyError, ValueError) as e:
        return Row(label, build.name, "FAIL", f"cannot read the program: {e}", time.monotonic() - t0)
    if failed:
        first = next((line for line in lines if "DIFFERS" in line), lines[0] if lines else "differs")
        return Row(label, build.name, "FAIL", first, time.monotonic() - t0)
    note = f"; not proved: {note}" if note else ""
    return Row(label, build.name, "PASS", f"{len(lines)} function(s) proved equivalent to the description{note}",
               time.monotonic() - t0, checks=len(lines))


def _prove(variant: Variant, language: str, word_bits: int, text: str) -> tuple:
    """prove_text's verdict, lines and note (in a worker process of the run: verify/workers.py)."""
    rep = prove_text(variant, language, word_bits, text)
    return rep.failed, list(rep.lines), rep.note


PROVE_LIMIT = 900        # seconds per variant (times THREEFISH_GEN_TIMEOUT_SCALE); CPU time alike
_RESULT = "threefish-gen-prove-result: "


def _prove_in_child(variant: Variant, language: str, word_bits: int, text: str, workdir: Path):
    """prove_text in a child Python under proc's limits: past PROVE_LIMIT (or its CPU or memory
    limit) the child is killed and proc.Timeout raised (a TIMEOUT row), whatever the prover does
    inside; a crash of the child is a one-line FAIL, never a traceback in check."""
    workdir.mkdir(parents=True, exist_ok=True)
    job = workdir / "prove-job.pickle"
    job.write_bytes(pickle.dumps((variant, language, word_bits, text)))
    root = str(Path(__file__).resolve().parents[2])       # the folder holding threefish_gen
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    rc, out = proc.run([sys.executable, "-m", "threefish_gen.verify.prove", str(job)], workdir, PROVE_LIMIT,
                       env, what="prove",
                       limits=proc.Limits(threaded=False, address_space=8 * proc.GiB, file_size=proc.MiB))
    got = [ln[len(_RESULT):] for ln in out.splitlines() if ln.startswith(_RESULT)]
    if not got:
        why = [ln for ln in out.strip().splitlines() if ln.strip()][-1:] or [f"exit status {rc}"]
        raise GenError(f"the prover stopped: {why[0]}")
    r = json.loads(got[-1])
    if "error" in r:
        raise GenError(r["error"])
    return r["failed"], r["lines"], r["note"]


def _child(job: str) -> None:
    variant, language, word_bits, text = pickle.loads(Path(job).read_bytes())
    try:
        rep = prove_text(variant, language, word_bits, text)
        r = {"failed": rep.failed, "lines": list(rep.lines), "note": rep.note}
    except (GenError, IndexError, KeyError, ValueError, RecursionError, MemoryError, OverflowError) as e:
        r = {"error": f"{type(e).__name__}: {e}" if not isinstance(e, GenError) else str(e)}
    print(_RESULT + json.dumps(r), flush=True)


if __name__ == "__main__":
    _child(sys.argv[1])
