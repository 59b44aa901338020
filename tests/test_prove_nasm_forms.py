"""gen/prove/nasm.py reads the vector instructions through gen/isa/x86.py's NASM table, including
the forms no current printer emits but a file a user holds may (byte shifts right, movhlps and
movlhps, pextrq, vextracti128 and movsd from memory, the ps/pd spellings): a hand-written
function run instruction by instruction, its stores compared with the lanes they must hold, and
the operand forms an instruction does not have refused."""
import pytest

from threefish_gen.gen.prove.engine import ProveError, Unsupported
from threefish_gen.gen.prove.nasm import NasmMachine, Program
from threefish_gen.gen.prove.terms import const, rotl, scope, var

BODY = """\
    movdqu xmm0, [rdx]              ; (in0, in1)
    movups xmm1, [rdx + 16]         ; (in2, in3)
    movdqa xmm2, xmm0
    psrldq xmm2, 8                  ; (in1, 0)
    movq [rcx], xmm2                ; out0 = in1
    movaps xmm3, xmm1
    movhlps xmm3, xmm0              ; (in1, in3)
    movdqu [rcx + 8], xmm3          ; out1, out2 = in1, in3
    movlhps xmm1, xmm0              ; (in2, in0)
    pextrq [rcx + 24], xmm1, 1      ; out3 = in0
    pextrq rax, xmm1, 0
    mov [rcx + 32], rax             ; out4 = in2
    movsd xmm4, [rdx + 24]          ; (in3, 0)
    pshufd xmm5, xmm0, 0xb1         ; (rotl(in0, 32), rotl(in1, 32))
    movupd [rcx + 40], xmm5         ; out5, out6
    movsd xmm4, xmm5                ; (rotl(in0, 32), 0)
    unpcklpd xmm4, xmm3             ; (rotl(in0, 32), in1)
    movdqu [rcx + 56], xmm4         ; out7, out8
    vmovdqu ymm6, [rdx]             ; (in0, in1, in2, in3)
    vextracti128 xmm7, ymm6, 1      ; (in2, in3)
    vextracti128 [rcx + 72], ymm6, 0  ; out9, out10 = in0, in1
    vpbroadcastq ymm8, xmm7         ; (in2, in2, in2, in2)
    vpslldq ymm9, ymm6, 8           ; (0, in0, 0, in2)
    vmovdqu [rcx + 88], ymm9        ; out11..14
    vpbroadcastq ymm10, qword [rdx + 8]
    vmovq qword [rcx + 120], xmm10  ; out15 = in1
    vzeroupper
    ret
"""


def _run(body: str):
    prog = Program("bits 64\nsection .text\nglobal f\nf:\n" + body)
    m = NasmMachine(prog, 64, "sysv")
    pc = m.enter("f", [var("ptr:key"), var("ptr:tweak"), var("ptr:in"), var("ptr:out")])
    while True:
        r = m.step(pc)
        if isinstance(r, tuple):
            return m
        pc = r


def test_the_moves_shifts_and_extracts_write_the_lanes_they_must():
    with scope():
        m = _run(BODY)
        i = [var(f"in[{k}]") for k in range(4)]
        zero = const(0)
        want = [i[1], i[1], i[3], i[0], i[2], rotl(i[0], 32), rotl(i[1], 32), rotl(i[0], 32), i[1], i[0], i[1],
                zero, i[0], zero, i[2], i[1]]
        out = var("ptr:out")
        got = [m.state.mem[(out, const(8 * k))][1] for k in range(len(want))]
        assert got == want
        assert m.state.vregs[8] == (i[2], i[2]) + (zero,) * 6       # vzeroupper: the upper lanes zeroed
        assert m.state.vregs[6][:4] == (i[0], i[1], zero, zero)


@pytest.mark.parametrize("line, error, text", [
    ("    paddq xmm0, [rdx]", ProveError, "need not be aligned"),           # legacy SSE m128: 16-aligned
    ("    movhlps xmm0, [rdx]", Unsupported, "where the instruction has none"),
    ("    perm2i128 ymm0, ymm1, 0", Unsupported, "not modelled"),           # VEX only
    ("    vpaddq [rcx], ymm0, ymm1", Unsupported, "with the destination"),  # no memory destination
    ("    movq xmm0, oword [rdx]", Unsupported, "16-byte memory operand"),
    ("    vperm2i128 xmm0, xmm1, xmm2, 0", Unsupported, "lanes where the instruction reads 4"),
    ("    pslldq xmm0, 300", Unsupported, "imm8"),
    ("    vpshufb xmm0, xmm1, xmm2", Unsupported, "not modelled"),
])
def test_forms_an_instruction_does_not_have_are_refused(line, error, text):
    with scope():
        with pytest.raises(error, match=text) as e:
            _run(line + "\n    ret\n")
    assert str(e.value).startswith("line 5: "), e.value       # the instruction's line


@pytest.mark.parametrize("line", ["    paddq xmm0, 5", "    pshufd xmm6, xmm3", "    pshufd xmm6, xmm3, xmm4",
                                  "    vpaddq ymm0, ymm1"])
def test_operands_the_row_does_not_take_are_refused(line):
    with scope():
        with pytest.raises(Unsupported):
            _run("    movdqa xmm0, xmm1\n" + line + "\n    ret\n")
