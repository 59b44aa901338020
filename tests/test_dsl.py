"""Stage 2a: the description language (gen/dsl.py) -- what the builder records and what the
interpreter computes, against values worked out by hand."""
from __future__ import annotations

import pytest

from threefish_gen.gen.dsl import (MASK64, Builder, Idx, Loop, Mem, Op, array_sizes, bytes_from_words, count_ops, flat,
                     interpret, values, walk, words_from_bytes)


def _program():
    b = Builder()
    x0 = b.val("x0", Mem("in", 0))
    x1 = b.val("x1", Mem("in", 1))
    x0 += x1
    x1.rotl(14)
    x1 ^= x0
    b.store(Mem("out", 0), x0)
    b.store(Mem("out", 1), x1)
    return b.ops


def test_builder_records_two_address_ops_in_order():
    ops = _program()
    assert [op.kind for op in ops] == ["mov", "mov", "add", "rotl", "xor", "store", "store"]
    assert [op.text() for op in ops] == ["x0 = in[0]", "x1 = in[1]", "x0 += x1", "x1 <<<= 14",
                                         "x1 ^= x0", "out[0] = x0", "out[1] = x1"]


def test_interpret_one_mix_by_hand():
    a, c = 0xFFFFFFFFFFFFFFFF, 0x8000000000000001
    mem = {"in": [a, c]}
    interpret(_program(), mem)
    s = (a + c) & MASK64                                     # 0x8000000000000000
    r = ((c << 14) | (c >> 50)) & MASK64                     # 0x0000000000006000 | 1 << 13
    assert s == 0x8000000000000000 and r == 0x6000
    assert mem["out"] == [s, r ^ s]


@pytest.mark.parametrize("n", [1, 13, 32, 63])
def test_rotations_are_inverse_and_match_the_definition(n):
    b = Builder()
    x = b.val("x", 0x0123456789ABCDEF)
    x.rotl(n)
    env = interpret(b.ops, {})
    want = ((0x0123456789ABCDEF << n) | (0x0123456789ABCDEF >> (64 - n))) & MASK64
    assert env["x"] == want
    x.rotr(n)
    assert interpret(b.ops, {})["x"] == 0x0123456789ABCDEF


def test_add_sub_wrap_modulo_2_64():
    b = Builder()
    x = b.val("x", 5)
    x -= 7
    env = interpret(b.ops, {})
    assert env["x"] == MASK64 - 1
    x += 3
    assert interpret(b.ops, {})["x"] == 1


def test_loop_with_affine_indices():
    """for c in 0..3: acc += tab[2c + 1] + c  (tab = 0..7): 1+3+5+7 + (0+1+2+3) = 22."""
    b = Builder()
    acc = b.val("acc", 0)
    with b.loop(4):
        acc += Mem("tab", Idx(1, 2))
        acc += Idx(0, 1)
    b.store(Mem("out", 0), acc)
    mem = {"tab": list(range(8))}
    interpret(b.ops, mem)
    assert mem["out"] == [22]
    assert array_sizes(b.ops) == {"tab": 8, "out": 1}
    assert count_ops(b.ops) == {"mov": 1, "add-mem": 4, "add": 4, "store": 1}
    loops = [lp for _, lp in walk(b.ops) if lp is not None]
    assert len(loops) == 2 and all(isinstance(lp, Loop) and lp.count == 4 for lp in loops)
    assert len(list(flat(b.ops))) == 4


def test_idx_text_and_values():
    assert str(Idx(3)) == "3" and str(Idx(0, 1)) == "c" and str(Idx(2, -2)) == "2 - 2*c"
    assert values(_program()) == ["x0", "x1"]


def test_notes_and_tags():
    b = Builder()
    b.note("round 0")
    b.tag = ("mix", 0, 0)
    x = b.val("x", 1)
    x += 2
    assert b.ops[0] == Op("note", None, "round 0")
    assert all(op.tag == ("mix", 0, 0) for op in b.ops[1:])
    assert interpret(b.ops, {})["x"] == 3


def test_word_byte_conversion_is_little_endian():
    data = bytes(range(16))
    w = words_from_bytes(data)
    assert w == [0x0706050403020100, 0x0F0E0D0C0B0A0908]
    assert bytes_from_words(w) == data


def test_rotation_count_out_of_range_is_refused():
    b = Builder()
    x = b.val("x", 1)
    with pytest.raises(AssertionError):
        x.rotl(64)
    with pytest.raises(AssertionError):
        x.rotr(0)
