"""The C printers' lines carry what the renders need, so nothing reads it back from the printed
text: the round chunks a hybrid loop interleaves are cut from the ops at their notes, and
--annotate none leaves out the lines the printers marked as notes."""
import jinja2
import pytest

from threefish_gen.gen.dsl import Mem, Op
from threefish_gen.gen.layouts import ir, scalar
from threefish_gen.gen.printers import asm_comment, comment_gap, env
from threefish_gen.gen.printers.c import CPrinter, indent, note_line, without_notes
from threefish_gen.gen.printers.c_simd.printer import interleave_code, round_chunks
from threefish_gen.gen.printers.nasm import Commented, printed


def test_round_chunks_cut_before_notes():
    ops = ["a", ir.Note("round 0"), "b", "c", ir.Note("round 1"), ir.Note("subkey 1"), "d"]
    assert round_chunks(ops, ir.is_note) == [
        ["a"], [ir.Note("round 0"), "b", "c"], [ir.Note("round 1")], [ir.Note("subkey 1"), "d"]]
    # a note first opens the first chunk; an empty program has none
    assert round_chunks([ir.Note("r"), "x"], ir.is_note) == [[ir.Note("r"), "x"]]
    assert round_chunks([], ir.is_note) == []


def test_interleave_alternates_chunks():
    assert interleave_code([["v0", "v1"], ["v2"], ["v3"]], [["s0"], ["s1", "s2"]]) == [
        "v0", "v1", "s0", "v2", "s1", "s2", "v3"]


def test_notes_are_marked_and_left_out_at_none():
    pr = CPrinter("p_", {"in": "in"})
    lines = pr.lines([ir.Note("round 0"), ir.Mov("x0", "x1"), ir.Note("subkey 1")], {"x0", "x1"})
    assert lines == ["/* round 0 */", "x0 = x1;", "/* subkey 1 */"]
    assert [getattr(ln, "note", False) for ln in lines] == [True, False, True]
    # indenting keeps the mark; none drops the notes, nothing else
    assert without_notes(indent(lines)) == ["    x0 = x1;"]
    assert without_notes([note_line("/* a */"), "/* a plain comment */"]) == ["/* a plain comment */"]


def test_comments_after_code_are_printed_at_the_level():
    """A comment after code is printed at the --annotate level, not fixed up in the text after:
    C keeps its column at full and none, brief has one space (a gap of one or none stays);
    NASM's none leaves the comment out (templates: the globals gap and asm_comment)."""
    assert [comment_gap(8, a) for a in ("full", "brief", "none")] == [" " * 8, " ", " " * 8]
    assert [comment_gap(n, "brief") for n in (0, 1)] == ["", " "]
    line = Commented("    jmp f.entry", 3, "tail call")
    assert printed([line, "    ret"], "full") == ["    jmp f.entry   ; tail call", "    ret"]
    assert printed([line], "brief") == ["    jmp f.entry ; tail call"]
    assert printed([line], "none") == ["    jmp f.entry"]
    assert asm_comment(0, "x", "brief") == "; x"
    tpl = "    if (x){{ gap(8) }}/* why */\n    ret{{ asm_comment(4, 'why') }}"
    t = env().from_string(tpl)
    assert t.render(annotate="brief") == "    if (x) /* why */\n    ret ; why"
    assert t.render(annotate="none") == "    if (x)        /* why */\n    ret"
    with pytest.raises(jinja2.UndefinedError):       # a render that forgets the level fails
        t.render()


def test_the_c_printer_reads_the_w1_ir():
    """Layout scalar is the W = 1 layout IR: caller memory through Load/Store (load64/store64 on
    pointer arrays), an arithmetic op on a word of it through an expression temporary printed at
    its one use, local arrays as Mov to and from their elements."""
    ops = scalar.ops([Op("mov", "x0", Mem("in", 1)), Op("xor", "x0", Mem("in", 2)), Op("rotl", "x0", 5),
                      Op("store", "x0", Mem("ks", 3)), Op("add", "x0", Mem("ks", 3)), Op("store", "x0", Mem("out", 0))])
    assert [type(o).__name__ for o in ops] == ["Load", "Load", "Xor", "Rotl", "Mov", "Add", "Store"]
    pr = CPrinter("p_", {"in": "in", "out": "out"})
    lines = pr.lines(ops, {"x0"})
    assert lines == ["x0 = p_load64(in + 8);", "x0 ^= p_load64(in + 16);", "x0 = (x0 << 5) | (x0 >> 59);",
                     "ks[3] = x0;", "x0 += ks[3];", "p_store64(out, x0);"]
    assert [ln.calls for ln in lines[:2]] == [(("p_load64", 1),), (("p_load64", 1),)]
    assert pr.used == {"load64", "store64"}
