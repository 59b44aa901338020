"""The prover under concurrency: each proof has its own term scope (gen/prove/terms.py).

verify runs its prove rows in a ThreadPoolExecutor; a shared hash-cons table made proofs in two
threads corrupt each other (false DIFFERS, issue 31).  Here the same proofs run serially, in
threads and in processes, in shuffled orders, and must give the very same reports; a file with a
wrong rotation must still be reported DIFFERS while correct files are proved beside it; and one
process proves different files one after the other.
"""
import multiprocessing
import random
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from test_prove import edit_line
from threefish_gen.gen import targets
from threefish_gen.gen.prove import prove_text, terms
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import get_spec

SUFFIX = {"c": ".c", "nasm": ".asm"}


def _pick(target, bits, set_name="recommended", interleave=None, **want):
    """The first Threefish variant of the set with these target options (None: not given)."""
    for v in targets.variants(set_name, target, [get_spec("1.3", bits)]):
        if v.primitive == "threefish" and all(v.get(k) == x for k, x in want.items()) \
                and interleave in (None, v.options.interleave):
            return v
    raise LookupError(f"no {target} {bits} variant with {want}")


def _case(v):
    """(name, variant, language, word bits, text): one proof, picklable (for the processes)."""
    t = targets.get(v.target)
    lang = t.recipe.language
    text = next(x for n, x in render_variant(v).items() if n.endswith(SUFFIX[lang]))
    return v.stem, v, lang, t.recipe.word_bits, text


ROTATION = ("x1 = (x1 << 14) | (x1 >> 50);", "x1 = (x1 << 15) | (x1 >> 49);")


def prove_case(case):
    """(name, failed, lines) of one proof (module-level: the processes import it; importing
    this module renders nothing)."""
    name, v, lang, bits, text = case
    rep = prove_text(v, lang, bits, text)
    return name, rep.failed, tuple(rep.lines)


@pytest.fixture(scope="module")
def cases():
    """The proofs, cheap ones (about 0.3 to 1.5 s each on one core): scalar C 256 (interleave 2)
    and 512, SIMD C NEON lanes 256, nasm-x64 GPR 256 (interleave 1); then the C 256 file with
    one rotation changed, and the line changed."""
    right = [_case(v) for v in (
        _pick("c", 256), _pick("c", 512), _pick("c-simd", 256, isa="neon"),
        _pick("nasm-x64", 256, "all", interleave=1, isa=None, abi="sysv", strategy="belady"))]
    name, v, lang, bits, text = right[0]
    edited, line = edit_line(text, *ROTATION)
    return right, (name + " (edited)", v, lang, bits, edited), line


@pytest.fixture(scope="module")
def serial(cases):
    right, wrong, _ = cases
    return {c[0]: prove_case(c) for c in right + [wrong]}


@pytest.fixture(scope="module")
def pool():
    """Two worker processes (spawned: fresh interpreters), shared by the tests that use them."""
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as ex:
        yield ex


def _shuffled(cases, seed):
    cases = list(cases)
    random.Random(seed).shuffle(cases)
    return cases


def _in_threads(jobs, pool):
    with ThreadPoolExecutor(max_workers=len(jobs)) as ex:
        return list(ex.map(prove_case, jobs))


def _in_processes(jobs, pool):
    return list(pool.map(prove_case, jobs))


def test_serial_run_proves_every_case_and_finds_the_wrong_rotation(cases, serial):
    right, wrong, line = cases
    for name, *_ in right:
        _, failed, lines = serial[name]
        assert not failed and lines and all(": equivalent (" in ln for ln in lines), lines
    _, failed, lines = serial[wrong[0]]
    assert failed and any("encrypt: DIFFERS: " in ln and f"line {line}: " in ln for ln in lines), lines


@pytest.mark.parametrize("run, rounds", [(_in_threads, 3), (_in_processes, 2)], ids=["threads", "processes"])
def test_concurrent_runs_give_the_serial_reports(cases, serial, pool, run, rounds):
    """The same proofs at once (one file twice, so two proofs of one file overlap too), shuffled:
    each report is the serial one, word for word."""
    for seed in range(rounds):
        for name, failed, lines in run(_shuffled(cases[0] + cases[0][:1], seed), pool):
            assert (name, failed, lines) == serial[name], (seed, name, lines)


@pytest.mark.parametrize("run", [_in_threads, _in_processes], ids=["threads", "processes"])
def test_a_wrong_rotation_is_found_while_correct_files_are_proved(cases, serial, pool, run):
    """Soundness under concurrency: the edited file is DIFFERS (at the edited line) and the correct
    ones are equivalent, whatever runs beside them."""
    right, wrong, _ = cases
    got = run(_shuffled(right + [wrong], 7), pool)
    for name, failed, lines in got:
        assert (name, failed, lines) == serial[name], (name, lines)
    assert [failed for name, failed, _ in got if name == wrong[0]] == [True]


def test_a_file_after_a_different_file_in_one_process(cases, serial):
    """One process, one proof after another (no scope shared, nothing cached across): each
    report is the one the file gets on its own; the wrong file between two right ones changes
    neither."""
    right, wrong, _ = cases
    order = [right[1], right[0], wrong, right[0], right[1]]
    for case in order:
        assert prove_case(case) == serial[case[0]], case[0]


def test_terms_belong_to_one_scope():
    """Terms are made only in a proof's scope, never from another scope's terms; the scope ends
    with its block."""
    with pytest.raises(terms.ScopeError):
        terms.var("x")
    with terms.scope() as a:
        x = terms.var("x")
        assert terms.var("x") is x and x.scope is a and terms.current() is a
        y = terms.add(x, terms.const(1))
        with terms.scope() as b:                # a nested proof: its own table
            x2 = terms.var("x")
            assert x2 is not x and terms.current() is b and x2.id == 0
            with pytest.raises(terms.ScopeError):
                terms.xor(x2, terms.rotl(x, 3))         # x is a's: never mixed into b's terms
            with pytest.raises(terms.ScopeError):
                terms.add(x2, y)
        assert terms.current() is a and terms.add(x, terms.const(1)) is y
    with pytest.raises(terms.ScopeError):
        terms.current()


def test_the_collector_is_off_while_proofs_run_and_as_before_after(cases):
    """prove_text pauses Python's cyclic collector (its full collections walked every term of the
    proof, 35-40 % of a long proof's time): no collection runs during a proof, which makes some
    hundred thousand objects (the collector's first threshold is 700); two overlapping pauses
    (verify's threads) keep it off until the last ends; then it is as it was before."""
    import gc
    import threading

    from threefish_gen.gen.prove import _gc_paused
    was = gc.isenabled()
    starts = []

    def count(phase, info):     # a collection in the proof's scope (not one just after it)
        try:
            terms.current()
        except terms.ScopeError:
            return
        if phase == "start":
            starts.append(info["generation"])
    gc.collect()
    gc.callbacks.append(count)
    try:
        name, failed, _ = prove_case(cases[0][1])
    finally:
        gc.callbacks.remove(count)
    assert not failed and starts == [] and gc.isenabled() == was, (name, starts)
    # a proof leaves no cyclic garbage behind, which would pile up while proofs overlap and keep
    # the collector off (the description's interpreter held its environment of terms in a cycle:
    # ~6,000 objects a proof)
    gc.disable()                # as while another proof runs beside this one
    try:
        prove_case(cases[0][1])
        leaked = gc.collect()
    finally:
        if was:
            gc.enable()
    assert leaked < 100

    inside, second_done, states = threading.Event(), threading.Event(), []

    def first():
        with _gc_paused():
            inside.set()
            second_done.wait(10)
            states.append(("first, after the second ended", gc.isenabled()))
    t = threading.Thread(target=first)
    t.start()
    inside.wait(10)
    with _gc_paused():
        states.append(("second", gc.isenabled()))
    second_done.set()
    t.join(10)
    assert states == [("second", False), ("first, after the second ended", False)]
    assert gc.isenabled() == was
    gc.disable()                # off before: it stays off after
    try:
        with _gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
