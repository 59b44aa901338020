"""`threefish-gen prove`: translation validation of emitted programs (gen/prove/)."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from pathlib import Path

import click

from threefish_gen.gen.errors import GenError
from threefish_gen.gen.prove import LANGUAGES, SOURCE_IN_FOLDER, OutOfMemory, prove_text, source_of, why_not
from threefish_gen.gen.render import render_variant

# the defaults of prove --time-limit (per file) and --memory-limit: far above what generated
# files need (nasm-x64 AVX-512 Threefish-1024: 44 s of CPU, 258 s wall at load 17 on 2 cores,
# 0.7 GB peak), low enough that hostile input ends in one line and exit 2
TIME_LIMIT_S = 1200
MEMORY_LIMIT_MIB = 8192


class TimeLimit(Exception):
    """The proof of one file ran past --time-limit."""


@contextmanager
def _limits(seconds: float, mib: int):
    """The proof of one file under a wall-time limit (SIGALRM: the main thread of a POSIX
    process; elsewhere none) and an address-space limit (RLIMIT_AS, lowered for the process
    while the proof runs, where the platform has it); 0: no limit."""
    try:
        import resource
    except ImportError:         # not POSIX
        resource = None
    old_as = None
    if mib and resource is not None and hasattr(resource, "RLIMIT_AS"):
        old_as = resource.getrlimit(resource.RLIMIT_AS)
        want = mib << 20
        hard = old_as[1]
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    alarm = bool(seconds) and hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if alarm:
        def on_alarm(signum, frame):
            raise TimeLimit()
        old_handler = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
        if old_as is not None:
            resource.setrlimit(resource.RLIMIT_AS, old_as)


def source_text(v, language: str) -> tuple[str, str]:
    """(name, text) of the rendered file that holds the variant's functions."""
    return source_of(render_variant(v), language)


def given_file(file: str, language: str) -> Path:
    """The file ``--file`` names: the file itself, or in a folder the language renders (a Rust
    crate: its src/lib.rs) the file the prover reads."""
    path = Path(file)
    if not path.is_dir():
        return path
    inside = SOURCE_IN_FOLDER.get(language)
    if inside is None:
        raise GenError(f"{file} is a folder: give the {language} file")
    if not (path / inside).is_file():
        raise GenError(f"{file} is a folder without {inside} (give a crate folder or its {inside})")
    return path / inside


def run(target, variants, file: str | None, echo=click.echo, time_limit: float = TIME_LIMIT_S,
        memory_limit: int = MEMORY_LIMIT_MIB) -> int:
    """Prove each variant (the file the user holds, or a fresh render); exit status 0, 1.  Each
    file's proof runs under time_limit seconds and memory_limit MiB (0: none); what the prover
    cannot handle (GenError: exit 2, one line) includes running past either."""
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
            path = given_file(file, language)
            try:
                text = path.read_text()
            except (OSError, UnicodeDecodeError) as e:
                raise GenError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
            name = str(path)
        else:
            name, text = source_text(v, language)
        try:
            with _limits(time_limit, memory_limit):
                rep = prove_text(v, language, target.recipe.word_bits, text)
        except TimeLimit:
            raise GenError(f"{name}: gave up after {time_limit:g} s (the time limit; --time-limit "
                           f"SECONDS, 0 for none)") from None
        except (MemoryError, OutOfMemory) as e:
            if not memory_limit:
                raise GenError(f"{name}: {e or 'the proof ran out of memory (MemoryError)'}") from None
            raise GenError(f"{name}: gave up at {memory_limit} MiB (the memory limit; --memory-limit "
                           f"MIB, 0 for none)") from None
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
