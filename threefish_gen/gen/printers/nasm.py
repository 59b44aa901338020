"""Printer for the NASM targets: ``nasm-x64`` (64-bit words in GPRs; System V or Win64 ABI)
and ``nasm-x86`` (32-bit cdecl; 64-bit words in SSE2 XMM registers, one word per register).

Instruction selection is the small tables below (``X64_OPS``, ``X86_XMM_OPS``,
``X86_GPR_OPS``); machines, ABIs, lowering, register allocation and its check are the
assembly backend ``gen/asm/``.  The ABI glue (prologues, epilogues, the *_blocks dispatch,
the single-block wrappers, the Win64 unwind data, the ELF notes) is built here from the ABI
table (gen/asm/abi.py) as lines; ``templates/nasm/`` places them in the file's skeleton.  A glue
line with a comment after it is a :class:`Commented`, printed at the variant's --annotate level
(:func:`printed`), as the function bodies are (:func:`function_lines`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .. import asm as ra
from ..asm import ISA, Imm, PtrMem, Reg, RingMem, Slot
from ..asm.abi import ABI
from ..isa.x86 import LANE_MOVES, X64_OPS, X64_ROTATES, X86_GPR_OPS, X86_PACKED_OPS, X86_XMM_OPS, YMM_OPS, ZMM_OPS
from . import asm_comment, render_template
from .nasm_cpu import cpu_support

# Instruction tables (NASM forms of the machine-op kinds): gen/isa/x86.py.

# NASM's size keyword of a stack word
SIZE = {4: "dword", 8: "qword"}
# the registers cpuid writes (either width)
CPUID_OUTPUTS = ("rax", "rbx", "rcx", "rdx", "eax", "ebx", "ecx", "edx")
# stack slots of a frame-pointer frame (cdecl) are 16-aligned: paddq xmm, m128
SLOT_ALIGN = 16


# ---------------------------------------------------------------- printing

@dataclass(frozen=True)
class Commented:
    """A line of glue with a comment after it: ``code``, then ``spaces`` (its comment column), then
    ``; text``.  Printed at the variant's --annotate level (:meth:`at`): full as laid out, brief
    with one space before the comment, none without it."""

    code: str
    spaces: int
    text: str

    def at(self, annotate: str) -> str:
        return self.code + asm_comment(self.spaces, self.text, annotate)


def printed(lines, annotate: str) -> list[str]:
    """Glue ``lines`` (strings and :class:`Commented` lines) as text at the --annotate level."""
    return [ln.at(annotate) if isinstance(ln, Commented) else ln for ln in lines]


def _column(code: str, width: int, text: str) -> Commented:
    """``code`` with its comment at column ``width`` (right after it where the code is as wide)."""
    return Commented(code, max(0, width - len(code)), text)


class Frame:
    """Stack frame of one function: slot offsets, pushes, argument addresses."""

    def __init__(self, abi: str, alloc, isa: ISA):
        self.abi, self.isa = abi, isa
        regs = {r for rs in alloc.used.values() for r in rs}
        self.pushes = isa.abi.pushes(regs)
        # the most used slots first: [rsp + disp8] (offsets below 128) is 3 bytes shorter than disp32
        uses: dict = {}
        for op in alloc.code:
            for x in (op.dst, op.src):
                if isinstance(x, Slot):
                    uses[x.key] = uses.get(x.key, 0) + 1
        # the rings of the cycle loop (--unroll loop) after the other slots, each in index order:
        # a ring word is read at [sp + counter + the offset of its word 0 + slot bytes * index]
        rings = {x.array for op in alloc.code for x in (op.dst, op.src) if isinstance(x, RingMem)}
        keys = sorted((k for k in alloc.slots if k[0] != "arg" and not (k[0] == "a" and k[1] in rings)),
                      key=lambda k: -uses.get(k, 0))
        keys += sorted((k for k in alloc.slots if k[0] == "a" and k[1] in rings), key=lambda k: (k[1], k[2]))
        self.offset = {k: i * isa.slot_bytes for i, k in enumerate(keys)}
        for r in rings:
            words = sorted(k[2] for k in keys if k[0] == "a" and k[1] == r)
            if words != list(range(len(words))):
                raise AssertionError(f"ring {r}: its words are not one contiguous array of 8-byte slots")
        size = len(keys) * isa.slot_bytes
        # the return address and the pushes sit above the frame; keep the stack pointer aligned
        word = isa.abi.word
        while (word * (1 + len(self.pushes)) + size) % isa.abi.stack_align:
            size += word
        self.size = size
        self.consts = [k for k in keys if k[0] == "const"]

    @classmethod
    def glue(cls, isa: ISA, pushes, size: int) -> "Frame":
        """The frame of glue the printer writes (the *_blocks dispatch, the single-block
        wrapper): its pushes and stack allocation, for the Win64 unwind data."""
        f = cls.__new__(cls)
        f.abi, f.isa, f.pushes, f.size, f.offset, f.consts = isa.abi.name, isa, list(pushes), size, {}, []
        return f

    def prologue(self) -> list[str | Commented]:
        """Push the callee-saved registers and allocate the slots.  A stack-pointer frame labels
        each prolog operation (the offsets of the Win64 unwind codes); a frame-pointer frame
        (cdecl) saves the caller's stack pointer in the frame pointer and realigns the stack."""
        abi = self.isa.abi
        sp, fp = abi.stack_pointer, abi.frame_pointer
        lines = [f"    push {fp}", f"    mov {fp}, {sp}"] if fp else []
        for r in self.pushes:
            lines.append(f"    push {r}")
            if not fp:
                lines.append(f".pushed_{r}:")
        if fp:
            lines.append(_c(f"and {sp}, -{SLOT_ALIGN}", f"{SLOT_ALIGN}-aligned stack slots (paddq xmm, m128)"))
        if self.size:
            lines.append(f"    sub {sp}, {self.size}")
        return lines if fp else lines + [".prolog_end:"]

    def epilogue(self) -> list[str]:
        """Free the slots and pop what the prologue pushed (up to the ret)."""
        abi = self.isa.abi
        sp, fp = abi.stack_pointer, abi.frame_pointer
        pops = [f"    pop {r}" for r in reversed(self.pushes)]
        if fp:
            return [f"    lea {sp}, [{fp} - {abi.word * len(self.pushes)}]", *pops, f"    pop {fp}"]
        return ([f"    add {sp}, {self.size}"] if self.size else []) + pops

    def unwind_codes(self) -> list[tuple[str, str, str]]:
        """Win64 UNWIND_CODE slots, last prolog operation first: (label after it, bytes, what)."""
        regno = {r: i for i, r in enumerate(["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                             "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"])}
        codes: list[tuple[str, str, str]] = []
        if self.size:
            if self.size <= 128:
                codes.append(("prolog_end", f"{((self.size - 8) // 8) << 4 | 2:#04x}", f"UWOP_ALLOC_SMALL {self.size}"))
            else:   # UWOP_ALLOC_LARGE, size/8 in the next slot
                codes.append(("prolog_end", f"0x01, {(self.size // 8) & 0xFF:#04x}, {(self.size // 8) >> 8:#04x}",
                              f"UWOP_ALLOC_LARGE {self.size}"))
        for r in reversed(self.pushes):
            codes.append((f"pushed_{r}", f"{regno[r] << 4:#04x}", f"UWOP_PUSH_NONVOL {r}"))
        return codes

    def unwind_slots(self) -> int:
        return sum(code.count(",") + 1 for _, code, _ in self.unwind_codes()) // 1 - sum(
            1 for _, code, _ in self.unwind_codes() if code.count(",") == 2)

    def arg(self, name: str) -> str:
        i = ra.POINTERS.index(name)
        abi = self.isa.abi
        size = "qword" if abi.word == 8 else "dword"
        if abi.frame_pointer:   # above the saved frame pointer (cdecl: the caller's stack, 4-aligned)
            return f"{size} [{abi.frame_pointer} + {abi.stack_arg(i, abi.word)}]"
        # from the stack pointer, above this frame, the pushes, the return address (and Win64's shadow space)
        return f"{size} [{abi.stack_pointer} + {abi.stack_arg(i, self.size + abi.word * len(self.pushes))}]"

    def slot(self, s: Slot, cls: str) -> str:
        if s.key[0] == "arg":
            return self.arg(s.key[1])
        off = self.offset[s.key]
        if self.isa.abi.word == 8:
            return f"{'' if cls in ('xmm', 'ymm', 'zmm') else 'qword '}[rsp + {off}]"
        return f"{'dword ' if cls == 'gpr32' else ''}[esp + {off}]"


def _operand(x, frame: Frame, cls: str) -> str:  # noqa: C901
    if isinstance(x, Reg):
        return x.name
    if isinstance(x, Slot):
        return frame.slot(x, cls)
    if isinstance(x, PtrMem):
        size = "qword " if frame.isa.abi.word == 8 and cls not in ("xmm", "ymm", "zmm") else ""
        return f"{size}[{x.reg.name} + {x.offset}]" if x.offset else f"{size}[{x.reg.name}]"
    if isinstance(x, RingMem):
        size = "qword " if frame.isa.abi.word == 8 and cls not in ("xmm", "ymm", "zmm") else ""
        disp = frame.offset[("a", x.array, 0)] + frame.isa.slot_bytes * x.index
        sp = frame.isa.abi.stack_pointer
        return f"{size}[{sp} + {x.reg.name} + {disp}]" if disp >= 0 else f"{size}[{sp} + {x.reg.name} - {-disp}]"
    if isinstance(x, Imm):
        return f"{x.value:#x}" if x.value > 9 else str(x.value)
    return str(x)


def _shape(x) -> str:
    return "r" if isinstance(x, Reg) else ("i" if isinstance(x, (Imm, int)) else "m")


def zmm_instruction(op, frame: Frame, a: str = "") -> str:
    src, dst = op.src, op.dst
    d = _operand(dst, frame, "zmm")
    if isinstance(src, Slot) and src.key[0] == "const":
        m = f"qword [rsp + {frame.offset[src.key]}]"
        if op.kind == "mov":
            return ZMM_OPS["bcast"].format(d=d, s=m)
        return ZMM_OPS[op.kind].format(d=d, s=m + "{1to8}")
    return _vector_op(ZMM_OPS, "zmm", op, frame, d, a)


def ymm_instruction(op, frame: Frame, a: str = "") -> str:
    return _vector_op(YMM_OPS, "ymm", op, frame, _operand(op.dst, frame, "ymm"), a)


def _vector_op(ops: dict, cls: str, op, frame: Frame, d: str, a: str = "") -> str:
    """A ymm/zmm op (``ops``: the width's forms) into d, a register, a slot or the caller's
    memory: a key word broadcast, a whole vector of the blocks or tweaks loaded or stored, a store
    to a slot, a lane move (``a``: its first source where a copy into d was folded into it, else
    d), else the op's form for its operand shapes."""
    src, dst = op.src, op.dst
    if isinstance(src, PtrMem) and src.array == "key":
        return ops["bcast"].format(d=d, s=f"qword [{src.reg.name} + {src.offset}]")
    if isinstance(dst, (Slot, PtrMem)):
        return ops[("mov", "mr")].format(d=d, s=_operand(src, frame, cls))
    if op.kind in LANE_MOVES[cls]:
        return LANE_MOVES[cls][op.kind][0].format(d=d, a=a or d, s=_operand(src, frame, cls))
    pat = ops.get((op.kind, _shape(dst) + _shape(src))) or ops[op.kind]
    n = src if isinstance(src, int) else 0
    return pat.format(d=d, s=_operand(src, frame, cls) if src is not None else "", n=n)


def packed_instruction(op, frame: Frame) -> str:
    def shape(x):
        return {Reg: "r", Slot: "s", PtrMem: "p"}.get(type(x), "i")
    pat = X86_PACKED_OPS.get((op.kind, shape(op.dst) + shape(op.src))) or X86_PACKED_OPS[op.kind]
    n = op.src if isinstance(op.src, int) else 0
    return pat.format(d=_operand(op.dst, frame, "xmm"), s=_operand(op.src, frame, "xmm"), n=n)


def instruction(op, frame: Frame, rotate: str, a: str = "") -> str:
    """The NASM instruction of an allocated op (``a``: a lane move's first source, where the
    copy into its destination before it was folded into it: :func:`folded`)."""
    if op.cls == "xmm" and frame.isa.layout == "packed":
        return packed_instruction(op, frame)
    if op.cls == "zmm" and op.kind != "guard":
        return zmm_instruction(op, frame, a)
    if op.cls == "ymm" and op.kind != "guard":
        return ymm_instruction(op, frame, a)
    d = _operand(op.dst, frame, op.cls) if op.dst is not None else ""
    s = _operand(op.src, frame, op.cls) if op.src is not None else ""
    if op.kind == "guard":
        return f"test {s}, {s}" if isinstance(op.src, Reg) else f"cmp {s}, 0"
    if frame.isa.abi.word == 8 and op.cls != "xmm":
        table = dict(X64_OPS, **X64_ROTATES[rotate])
        if op.kind == "mov" and isinstance(op.src, Imm) and op.src.value >= 1 << 32:
            return f"mov {d}, {s}"
        pat = table[op.kind]
    elif op.cls == "xmm":
        pat = X86_XMM_OPS.get((op.kind, _shape(op.dst) + _shape(op.src))) or X86_XMM_OPS[op.kind]
    else:
        pat = X86_GPR_OPS[op.kind]
    n = op.src if isinstance(op.src, int) else 0
    return pat.format(d=d, s=s, n=n, m=64 - n)




def _statement_texts(code) -> list[str]:
    """The description statement each op of ``code`` belongs to ('' for notes): main ops their
    own text; reloads and moves the statement they prepare (the next main op's), spills the
    statement that made the value (the previous one)."""
    texts = [op.text if op.kind != "note" and op.role not in ("spill", "reload", "move") else None
             for op in code]
    nxt = ""
    for i in range(len(code) - 1, -1, -1):       # reloads/moves: the next statement
        if texts[i] is not None:
            nxt = texts[i]
        elif code[i].kind != "note" and code[i].role in ("reload", "move"):
            texts[i] = nxt
    prev = ""
    for i, op in enumerate(code):                # spills: the statement before
        if texts[i] is not None:
            prev = texts[i]
        elif op.kind != "note":
            texts[i] = prev
    return [t if t is not None else "" for t in texts]


def _rotates(code, rotate: str) -> list[str]:
    """The rotate instruction of each op (--rotate): one for all, or ``mix``: rol and shld by
    turns over the function's GPR rotates (half on the shift ports, half on shld's port)."""
    if rotate != "mix":
        return [rotate] * len(code)
    out, k = [], 0
    for op in code:
        out.append(("rol", "shld")[k % 2])
        k += op.kind == "rol" and op.cls == "gpr"
    return out


def folded(code) -> dict:
    """Index -> source register of each register copy ``mov d, a`` directly followed by a lane
    move into d (gen/isa/x86.py LANE_MOVES: d = op(d, s)) that does not read d as s: printed as
    the one three-operand instruction d = op(a, s)."""
    out = {}
    for i in range(len(code) - 1):
        op, nxt = code[i], code[i + 1]
        if (op.kind == "mov" and isinstance(op.dst, Reg) and isinstance(op.src, Reg)
                and nxt.kind in LANE_MOVES.get(nxt.cls, ()) and nxt.dst == op.dst and nxt.src != op.dst):
            out[i] = op.src.name
    return out


def cycle_test(op, frame: Frame) -> str:
    """The cycle loop's test: its counter (a register or its slot) against the bound."""
    return f"cmp {_operand(op.dst, frame, op.cls)}, {_operand(op.src, frame, op.cls)}"


def function_lines(alloc, frame: Frame, rotate: str, annotate: str = "full") -> list[str]:
    """The instructions of one function.  annotate: ``full`` every instruction with its comment,
    padded into a column; ``brief`` one comment line per description statement before the
    instructions that implement it, no padding; ``none`` instructions only."""
    if annotate != "full":
        return _function_lines_brief(alloc, frame, rotate, annotate == "brief")
    lines: list[str] = []
    fold = folded(alloc.code)
    for i, (op, rot) in enumerate(zip(alloc.code, _rotates(alloc.code, rotate))):
        if i in fold:
            continue
        if op.kind == "note":
            lines.append(f"; {op.text}")
        elif op.kind == "top":
            lines.append(f"    {'align 32':<36}; loop entry on a fetch boundary")
            lines.append(f".loop:                                  ; {op.text}")
        elif op.kind == "bottom":
            lines.append(f"    jnz .loop                           ; {op.text}")
        elif op.kind == "ctop":
            lines.append(f"{'.cycle:':<40}; {op.text}")
        elif op.kind == "cbottom":
            lines.append(f"    {cycle_test(op, frame):<36}; {op.text}")
            lines.append(f"    {'jne .cycle':<36}; next cycle")
        else:
            ins = instruction(op, frame, rot, fold.get(i - 1, ""))
            lines.append(f"    {ins:<36}; {op.text}")
            if op.kind == "guard":
                lines.append(f"    {'jz .done':<36}; no blocks")
    return lines


def _function_lines_brief(alloc, frame: Frame, rotate: str, comments: bool) -> list[str]:
    lines: list[str] = []
    last = None
    fold = folded(alloc.code)
    for i, (op, text, rot) in enumerate(zip(alloc.code, _statement_texts(alloc.code), _rotates(alloc.code, rotate))):
        if i in fold:
            continue
        if op.kind == "note":
            if comments:
                lines.append(f"; {op.text}")
            last = None
            continue
        if comments and text != last:
            lines.append(f"; {text}")
        last = text
        if op.kind == "top":
            lines += ["    align 32", ".loop:"]
        elif op.kind == "bottom":
            lines.append("    jnz .loop")
        elif op.kind == "ctop":
            lines.append(".cycle:")
        elif op.kind == "cbottom":
            lines += [f"    {cycle_test(op, frame)}", "    jne .cycle"]
        else:
            lines.append(f"    {instruction(op, frame, rot, fold.get(i - 1, ''))}")
            if op.kind == "guard":
                lines.append("    jz .done")
    return lines


def register_map(alloc, packed: bool = False) -> list[str]:
    homes = alloc.homes
    if packed:   # versions of A0 (A0, A0.1, ...) and the temporaries (r*, e*, v*) share one row
        grouped: dict = {}
        for v, rs in homes.items():
            g = re.sub(r"\.\d+$", ".*", v)
            g = re.sub(r"^([rev])\d+$", r"\1*", g)
            grouped.setdefault(g, set()).update(rs)
        homes = {g: sorted(rs, key=ra.natural) for g, rs in grouped.items()}
    rows = []
    for v in sorted(homes, key=ra.natural):
        rows.append(f"{v:>6}: {', '.join(homes[v])}")
    stack = sorted({k[1] for k in alloc.slots if k[0] == "v"}, key=ra.natural)
    out = []
    for i in range(0, len(rows), 4):
        out.append("  ".join(f"{r:<24}" for r in rows[i:i + 4]).rstrip())
    if stack:
        out.append("stack slots: " + " ".join(stack))
    return out


def const_dwords(value: int, isa: ISA) -> list[int]:
    """The dwords a constant's stack slot holds: one 64-bit word (scalar), a broadcast (ymm/zmm
    lanes), or two lanes given by the value's low and high 64 bits (packed)."""
    if isa.layout == "packed":
        lanes = [value & 0xFFFFFFFFFFFFFFFF, value >> 64]
    elif isa.data_class in ("ymm", "zmm"):
        lanes = [value] * (isa.slot_bytes // 8)
    else:
        lanes = [value]
    return [d for w in lanes for d in (w & 0xFFFFFFFF, w >> 32)]


def wipe_lines(size: int, sp: str, vex: bool) -> list[str | Commented]:
    """The epilogue's wipe of the ``size`` bytes of stack slots (spilled key, tweak and state
    words): a zeroed vector register stored over them, unrolled (32-byte ymm stores after VEX
    code, else SSE2 16-byte stores; an 8- or 4-byte rest), unaligned-safe.  Two stores a cycle
    where the former loop of one 8-byte store per iteration cost a cycle per word (Threefish-1024:
    71 iterations, 0.5 c/B of a single-block call).  xmm0 is caller-saved in every ABI.  sp: the
    stack pointer the slots are addressed from."""
    zero = "vpxor xmm0, xmm0, xmm0" if vex else "pxor xmm0, xmm0"
    lines: list[str | Commented] = [
        Commented(f"    {zero}", 18, f"wipe: zero the {size} bytes of stack slots (spilled key, tweak and state words)")]
    off = 0
    for width, reg in ((32, "ymm0"), (16, "xmm0")) if vex else ((16, "xmm0"),):
        while size - off >= width:
            lines.append(f"    {'vmovdqu' if vex else 'movdqu'} [{sp} + {off}], {reg}")
            off += width
    if size - off >= 8:
        lines.append(f"    {'vmovq' if vex else 'movq'} qword [{sp} + {off}], xmm0")
        off += 8
    if size - off >= 4:
        lines.append(f"    mov dword [{sp} + {off}], 0")
        off += 4
    assert off == size, size
    return lines


# ---------------------------------------------------------------- ABI glue (from gen/asm/abi.py)

# the arguments of every *_blocks function, in order (the public contract)
BLOCKS_ARGS = ("key", "tweaks", "in", "out", "n")


def _c(ins: str, comment: str) -> Commented:
    """A glue instruction with its comment in the template's column."""
    return _column(f"    {ins}", 44, comment)


def dispatch_lines(abi: ABI, group_fn: str, scalar_fn: str, group: int, block_bytes: int) -> list[str | Commented]:
    """The body of a split variant's *_blocks (after its label): keep the arguments in the ABI's
    dispatch registers, call the group function on the n / group groups, then jump to the
    one-block function with the rest (pointers advanced by the blocks done).  n arrives (and goes
    to the group function) in a register or, past the argument registers, on the stack above the
    shadow space; every other argument arrives in a register."""
    sp, word, args = abi.stack_pointer, abi.word, abi.int_args
    assert len(args) >= BLOCKS_ARGS.index("n"), abi.name
    frame, keep = abi.dispatch_frame, dict(zip(BLOCKS_ARGS, abi.dispatch_pushes))
    pushes = list(abi.dispatch_pushes)
    assert (word * (1 + len(pushes)) + frame) % abi.stack_align == 0, abi.name   # aligned at the call
    scratch = abi.volatile[0]
    shift, block_shift = group.bit_length() - 1, block_bytes.bit_length() - 1
    lines = []
    for r in pushes:
        lines.append(f"    push {r}")
        if abi.unwind:
            lines.append(f".pushed_{r}:")
    if frame:
        lines.append(Commented(f"    sub {sp}, {frame}", 29, "shadow space + 5th argument, rsp 16-aligned"))
    if abi.unwind:
        lines.append(".prolog_end:")
    n_at = ""           # the stack address of n (our own argument, and the group function's)
    for i, a in enumerate(BLOCKS_ARGS):
        if i < len(args):
            lines.append(_c(f"mov {keep[a]}, {args[i]}", a))
        else:
            n_at = f"{SIZE[word]} [{sp} + {abi.stack_arg(i, frame + word * len(pushes))}]"
            lines.append(Commented(f"    mov {keep[a]}, {n_at}", 14, f"{a} ({i + 1}th argument)"))
    n = BLOCKS_ARGS.index("n")
    if n_at:            # the groups: the group function's 5th argument
        lines += [f"    mov {scratch}, {keep['n']}",
                  Commented(f"    shr {scratch}, {shift}", 31, f"groups of {group}"),
                  "    jz .tail",
                  _c(f"mov {SIZE[word]} [{sp} + {abi.shadow_space + word * (n - len(args))}], {scratch}",
                     f"{n + 1}th argument: the groups")]
    else:
        lines += [Commented(f"    shr {args[n]}, {shift}", 31, f"groups of {group}"), "    jz .tail"]
    lines += [f"    call {group_fn}.entry", ".tail:", f"    mov {scratch}, {keep['n']}",
              Commented(f"    and {scratch}, -{group}", 29, "blocks done"),
              f"    mov {args[0]}, {keep['key']}"]
    for i, (a, size, shl) in enumerate((("tweaks", 16, 4), ("in", block_bytes, block_shift),
                                        ("out", block_bytes, block_shift)), 1):
        lines += [f"    mov {args[i]}, {scratch}", f"    shl {args[i]}, {shl}",
                  _c(f"add {args[i]}, {keep[a]}", f"{a} += {size} * done")]
    if n_at:
        lines += [Commented(f"    and {keep['n']}, {group - 1}", 31, "blocks left"),
                  Commented(f"    mov {n_at}, {keep['n']}", 14, f"as our own {n + 1}th argument")]
    else:
        lines += [f"    mov {args[n]}, {keep['n']}",
                  Commented(f"    and {args[n]}, {group - 1}", 31, "blocks left")]
    if frame:
        lines.append(f"    add {sp}, {frame}")
    lines += [f"    pop {r}" for r in reversed(pushes)]
    lines.append(f"    jmp {scalar_fn}.entry")
    return lines + ([".end:"] if abi.unwind else [])


def wrapper_lines(abi: ABI, blocks_fn: str) -> list[str | Commented]:
    """The body of a single-block function (after its label): the *_blocks function with n = 1.
    n in a register: set it and jump (a tail call); past the argument registers above a shadow
    space: the other arguments stay in their registers, n goes in the outgoing argument slot;
    every argument on the stack: push n and copies of the four arguments, call, free them."""
    sp, word, args = abi.stack_pointer, abi.word, abi.int_args
    n = BLOCKS_ARGS.index("n")
    if n < len(args):
        reg = args[n] + "d" if args[n][1:].isdigit() else "e" + args[n][1:]    # the 32-bit move: r8d, edi
        return [_c(f"mov {reg}, 1", "n = 1"), Commented(f"    jmp {blocks_fn}.entry", 3, "tail call")]
    call = [f"    call {blocks_fn}.entry"]
    if len(args) == n:
        frame = abi.wrapper_frame
        assert (word + frame) % abi.stack_align == 0 and frame >= abi.shadow_space + word, abi.name
        return ([_c(f"sub {sp}, {frame}", "shadow space + 5th argument, rsp 16-aligned")]
                + ([".prolog_end:"] if abi.unwind else [])
                + [_c(f"mov {SIZE[word]} [{sp} + {abi.shadow_space}], 1", "n = 1"), *call, f"    add {sp}, {frame}",
                   "    ret"] + ([".end:"] if abi.unwind else []))
    assert not args, abi.name
    above = word * (n + 1)          # the return address and the four arguments
    return ([_c("push 1", "n = 1")]
            + [_c(f"push {SIZE[word]} [{sp} + {above}]", a) for a in reversed(ra.POINTERS[:n])]
            + [*call, f"    add {sp}, {above}", "    ret"])


def cpuid_saves(abi: ABI) -> tuple[list[str | Commented], list[str]]:
    """cpu_supported's save and restore of the callee-saved registers cpuid writes: into a
    caller-saved register no argument and cpuid use, else on the stack."""
    saved = [r for r in abi.callee_saved if r in CPUID_OUTPUTS]
    spare = [r for r in abi.volatile if r not in abi.int_args and r not in CPUID_OUTPUTS]
    if len(spare) >= len(saved):
        return ([_c(f"mov {t}, {r}", f"cpuid clobbers {r} (callee-saved)") for r, t in zip(saved, spare)],
                [f"    mov {r}, {t}" for r, t in zip(saved, spare)])
    return [f"    push {r}" for r in saved], [f"    pop {r}" for r in reversed(saved)]


def xdata_lines(label: str, frame: Frame, explain: bool = False) -> list[str | Commented]:
    """The UNWIND_INFO of the function at ``label`` (its codes: ``frame``; explain: each code's
    meaning as a comment)."""
    lines = [f"{label}_xdata:", f"    db 1, {label}.prolog_end - {label}, {frame.unwind_slots()}, 0"]
    for at, code, what in frame.unwind_codes():
        line = f"    db {label}.{at} - {label}, {code}"
        lines.append(Commented(line, 3, what) if explain else line)
    if frame.unwind_slots() % 2:
        lines.append("    dw 0")
    return lines


def directives(abi: ABI) -> list[str]:
    """The file's assembler directives: the code width, RIP-relative addressing on x86-64."""
    bits = 8 * abi.word
    return [f"bits {bits}"] + (["default rel"] if bits == 64 else [])


def fn_suffix(abi: ABI) -> str:
    """The suffix of an exported function's global: typed function symbols in ELF objects."""
    return ":function" if abi.elf else ""


def report_line(alloc) -> str:
    """The allocation report of a function as printed: register copies folded into a lane move
    (:func:`folded`) are neither moves nor instructions of the file."""
    s = alloc.stats
    fold = folded(alloc.code)
    moves = s["moves"] - sum(1 for i in fold if alloc.code[i].role == "move")
    return (f"{alloc.strategy}: registers {alloc.registers_used()}, spills {s['spills']}, "
            f"reloads {s['reloads']}, memory operands {s['memops']}, moves {moves}, "
            f"instructions {s['instructions'] - len(fold)}")


def render(variant, no, allocs: dict, cpu=frozenset()) -> dict[str, str]:
    """The .asm and .h of a variant from its checked allocations ({(direction, part): (isa,
    allocation)}, in function order) and its target options ``no`` (gen/targets/nasm.py); ``cpu``: the CPU features its
    cpu_supported() entry tests."""
    annotate = no.annotate
    funcs = []
    notes = []
    lanes = no.lanes
    abi = None
    pdata, xdata = [], []           # Win64 unwind data: RUNTIME_FUNCTIONs, UNWIND_INFOs
    for (direction, part), (isa, alloc) in allocs.items():
        abi = isa.abi
        tail = lanes and part == "scalar"
        frame = Frame(no.abi, alloc, isa)
        frame.block_bytes = variant.spec.block_bytes
        name = f"{variant.prefix}{direction}_blocks" + (f"_{part}" if no.split else "")
        group = isa.lanes * (no.interleave if part == "interleave" else 1)
        dispatch = no.split and part != "scalar"
        # the public function before this one: the *_blocks dispatch of a split variant, the
        # single-block wrapper before the one-block function
        public = f"{variant.prefix}{direction}" + ("_blocks" if dispatch else "")
        glue = (dispatch_lines(abi, name, f"{variant.prefix}{direction}_blocks_scalar", group,
                               variant.spec.block_bytes) if dispatch else [])
        wrapper = wrapper_lines(abi, name) if part == "scalar" else []
        if abi.unwind:
            pdata += [f"    dd {x} wrt ..imagebase, {x}.end wrt ..imagebase, {x}_xdata wrt ..imagebase"
                      for x in (public, name)]
            xdata += printed(xdata_lines(public, Frame.glue(isa, abi.dispatch_pushes, abi.dispatch_frame)) if dispatch
                             else xdata_lines(public, Frame.glue(isa, (), abi.wrapper_frame), explain=True), annotate)
            xdata += printed(xdata_lines(name, frame), annotate)
        funcs.append(dict(direction=direction, part=part, name=name, frame=frame, group=group,
                          dispatch=printed(glue, annotate), wrapper=printed(wrapper, annotate),
                          prologue=printed(frame.prologue(), annotate),
                          # vector lanes (AVX2, AVX-512): clear the upper halves before returning to SSE code
                          epilogue=(["    vzeroupper"] if isa.lanes > 1 else []) + printed(frame.epilogue(), annotate),
                          lines=function_lines(alloc, frame, "rol" if tail else no.rotate, annotate),
                          regmap=register_map(alloc, isa.layout == "packed") if annotate != "none" else [],
                          report=report_line(alloc), lanes=isa.lanes, vreg=isa.data_class,
                          consts=[(frame.offset[k], const_dwords(k[1], isa)) for k in frame.consts],
                          wipe=printed(wipe_lines(frame.size, abi.stack_pointer, isa.data_class in ("ymm", "zmm")),
                                       annotate) if no.wipe and frame.size else []))
        notes.append(f"{name}: " + report_line(alloc))
    opts = [f"isa {no.words}", *([f"layout {no.layout}"] if no.layout != "scalar" else []), f"abi {no.abi}", f"strategy {no.strategy}", f"rotate {no.rotate}", f"schedule {no.schedule}"]
    if no.registers:
        opts.append(f"registers {no.registers}")
    if no.pin:
        opts.append(f"pin {no.pin}")
    if not no.wipe:
        opts.append("no-wipe (stack slots keep key, tweak and state words after return)")
    layout = {"gpr": "layout scalar: one 64-bit word per general-purpose register",
              "sse2": "layout scalar: one 64-bit word per SSE2 XMM register (low lane)",
              "packed": "layout packed: one block in XMM pairs of lanes, A = even words, B = odd words (A0 = x0, x2; "
                        "B0 = x1, x3; ...); subkey pairs of key words in an aligned stack table, tweak words per block",
              "avx2": "layout lanes: 4 blocks per pass, one ymm per word, a block per lane (whole-vector "
                      "loads and stores, transposed in registers); the n mod 4 blocks left and single blocks "
                      "run the scalar GPR code",
              "avx512": "layout lanes: 8 blocks per pass, one zmm per word, a block per lane (whole-vector "
                        "loads and stores, transposed in registers); the n mod 8 blocks left and single "
                        "blocks run the scalar GPR code"}[
        "packed" if no.layout == "packed" else no.words]
    if no.interleave > 1:
        layout += (f"; *_blocks runs {no.interleave} independent blocks per pass (their rounds interleaved), "
                   f"the n mod {no.interleave} blocks left and single blocks run the one-block code")
        opts.insert(1, f"interleave {no.interleave}")
    cpuid_save, cpuid_restore = cpuid_saves(abi)
    bits = 8 * abi.word
    # the ELF property note's descriptor: pr_type, pr_datasz, the IBT | SHSTK word, padded to a word
    descsz = -(-12 // abi.word) * abi.word
    ctx = dict(spec=variant.spec, prefix=variant.prefix, command=variant.command(), target=no.target, annotate=annotate,
               options=", ".join(opts), layout=layout, funcs=funcs, lanes=lanes, sp=abi.stack_pointer,
               directives=directives(abi), elf=abi.elf, fn_suffix=fn_suffix(abi),
               endbr=f"endbr{bits}" if abi.elf else "",     # CET: an indirect-branch target marker (ELF)
               cpuid_save=printed(cpuid_save, annotate), cpuid_restore=printed(cpuid_restore, annotate),
               unwind=dict(pdata=pdata, xdata=xdata) if abi.unwind else None,
               note=dict(align=abi.word, descsz=descsz, pad=(descsz - 12) // 4),
               cpu=cpu_support(cpu),
               header=f"{variant.stem}.h", guard=f"{variant.stem.upper()}_H",
               notes=[f"{no.target} ({', '.join(opts)}): assemble {variant.stem}.asm with nasm -f "
                      + abi.object_format] + notes)
    return {f"{variant.stem}.asm": render_template("nasm/threefish.asm.j2", **ctx),
            f"{variant.stem}.h": render_template("c/threefish.h.j2", **ctx)}


# ---------------------------------------------------------------- Skein (--primitive skein)

def clear_volatile(alloc, isa: ISA, zeroed: tuple = ()) -> list[str | Commented]:
    """Zero the caller-saved registers the loop used (chaining-value, subkey and message words
    stay in them after the return; the C driver's next call through the PLT, the lazy-binding
    resolver, would save them on the stack below the wipe): the general-purpose ones, and where
    the words live in vector registers (nasm-x86: XMM, all caller-saved in cdecl) those the ABI
    does not preserve, less ``zeroed`` (the wipe's zero register).  The callee-saved ones get the
    caller's values back from the pops."""
    used = {r for rs in alloc.used.values() for r in rs}
    regs = [f"xor {r}, {r}" for r in isa.abi.volatile if r in used]
    if isa.data_class != isa.ptr_class:
        vector = sorted(alloc.used.get(isa.data_class, ()), key=ra.natural)
        regs += [f"pxor {r}, {r}" for r in vector if r not in isa.abi.callee_saved_vector and r not in zeroed]
    return [Commented(f"    {ins}", 24, "wipe: the caller-saved registers the loop used") if i == 0 else f"    {ins}"
            for i, ins in enumerate(regs)]


def skein_stack_bytes(no, allocs: dict) -> int:
    """Stack bytes the UBI blocks loop of nasm Skein uses below its caller: the return address,
    the pushed callee-saved registers (the caller's values, possibly its key words), a frame
    pointer, the realignment of a frame-pointer frame (cdecl: up to 16 - 4 bytes) and the slot
    frame (gen/targets/c.py skein_burns adds it to the C driver's chain)."""
    (isa, alloc), = allocs.values()
    frame = Frame(no.abi, alloc, isa)
    realign = SLOT_ALIGN - isa.abi.word if isa.abi.frame_pointer else 0
    return frame.size + isa.abi.word * (len(frame.pushes) + 2) + realign


def skein_render(variant, no, allocs: dict) -> dict[str, str]:
    """--primitive skein of the nasm targets: {stem.asm: the UBI blocks loop} from its checked
    allocation (the C driver is templates/c/skein.c.j2, rendered by the descriptor).  nasm-x64:
    System V or Win64 (its unwind data), words in GPRs; nasm-x86: cdecl (arguments on the stack,
    a frame-pointer frame realigned to 16), words in XMM registers."""
    (isa, alloc), = allocs.values()
    frame = Frame(no.abi, alloc, isa)
    frame.block_bytes = variant.spec.block_bytes
    name = f"{variant.prefix}ubi_asm"
    f = dict(name=name, frame=frame, prologue=printed(frame.prologue(), no.annotate),
             epilogue=printed(frame.epilogue(), no.annotate),
             lines=function_lines(alloc, frame, no.rotate, no.annotate),
             regmap=register_map(alloc) if no.annotate != "none" else [], report=report_line(alloc),
             consts=[(frame.offset[k], const_dwords(k[1], isa)) for k in frame.consts],
             wipe=printed((wipe_lines(frame.size, isa.abi.stack_pointer, False) if frame.size else [])
                          + clear_volatile(alloc, isa, ("xmm0",) if frame.size else ()), no.annotate) if no.wipe else [])
    abi = isa.abi
    # Win64: the loop's RUNTIME_FUNCTION and UNWIND_INFO (its pushes and frame), as the Threefish files
    unwind = dict(pdata=[f"    dd {name} wrt ..imagebase, {name}.end wrt ..imagebase, {name}_xdata wrt ..imagebase"],
                  xdata=printed(xdata_lines(name, frame, explain=True), no.annotate)) if abi.unwind else None
    ctx = dict(spec=variant.spec, prefix=variant.prefix, command=variant.command(), f=f, target=no.target,
               annotate=no.annotate,
               directives=directives(abi), fn_suffix=fn_suffix(abi), sp=abi.stack_pointer,
               elf=abi.elf, unwind=unwind,
               options=f"abi {no.abi}, strategy {no.strategy}, rotate {no.rotate}, schedule {no.schedule}")
    return {f"{variant.stem}.asm": render_template("nasm/skein.asm.j2", **ctx)}
