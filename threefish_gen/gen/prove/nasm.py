"""Symbolic execution of NASM text (x86-64 and x86): GPRs, SSE2 xmm, AVX2 ymm, AVX-512 zmm lanes.

The text is parsed line by line (labels, ``global``, ``dq`` tables, instructions); the executor
keeps registers (a vector register is a tuple of 64-bit lane terms), memory as a map from
(base pointer variable, offset term) to (size, term), and the zero flag as the term the last
flag-setting instruction computed.  Each loop is proved by induction (gen/prove/engine.py).
"""
from __future__ import annotations

import re

from ..asm.abi import ABIS
from ..isa import x86
from ..isa.common import Plain
from .engine import INPUTS, Machine, ProveError, TermLanes, Unsupported, address_text, base_of, kind, split_top
from .terms import MASK, Term, add, and_, const, mul, or_, rotl, shr, sub, value, var, xor


def abi_of(v) -> str:
    """The calling convention of an assembly variant: its own, else its target's default (the
    descriptor's option, not a name written here)."""
    from ..targets import get as get_target
    return v.get("abi") or get_target(v.target).option("abi").default

GPR64 = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp") + tuple(f"r{i}" for i in range(8, 16))
GPR32 = {"eax": "rax", "ebx": "rbx", "ecx": "rcx", "edx": "rdx", "esi": "rsi", "edi": "rdi", "ebp": "rbp",
         "esp": "rsp", **{f"r{i}d": f"r{i}" for i in range(8, 16)}}
VWIDTH = {"xmm": 2, "ymm": 4, "zmm": 8}
# other spellings of the same 128-bit moves and lane unpacks
ALIASES = {"movaps": "movdqa", "movapd": "movdqa", "movups": "movdqu", "movupd": "movdqu",
           "unpcklpd": "punpcklqdq", "unpckhpd": "punpckhqdq"}
# legacy SSE forms whose memory operand may have any alignment (the others fault unless 16-aligned)
UNALIGNED = ("movdqu", "movq", "movsd", "pextrq")
SIZES = {"byte": 1, "word": 2, "dword": 4, "qword": 8, "oword": 16, "yword": 32, "zword": 64}

_LABEL = re.compile(r"^([A-Za-z_.$?@][\w.$?@]*):\s*(.*)$")


class Line:
    __slots__ = ("no", "text", "op", "args", "scope")

    def __init__(self, no, text, op, args, scope):
        self.no, self.text, self.op, self.args, self.scope = no, text, op, args, scope


def _split_operands(s: str) -> list[str]:
    """The operands of an instruction, stripped (commas inside [..] and {..} do not split; a
    trailing comma adds no empty operand)."""
    out = [p.strip() for p in split_top(s, "[{]}")]
    return out if out[-1] else out[:-1]


def _int(s: str) -> int:
    s = s.strip()
    if len(s) > 24:                 # refused before it is read (a huge number is no 64-bit operand)
        raise Unsupported(f"a number of {len(s):,} characters (wider than 64 bits)")
    try:
        v = int(s, 0)
    except ValueError:
        raise Unsupported(f"not a number: {s!r}") from None
    if not -(1 << 63) <= v < 1 << 64:
        raise Unsupported(f"the number {s} is wider than 64 bits")
    return v


def _count(s: str) -> int:
    """A shift or rotate count (the generator's are 1..63; the CPU would mask a wider one)."""
    n = _int(s)
    if not 0 <= n <= 63:
        raise Unsupported(f"a shift or rotate count of {n} (0..63)")
    return n


def _wrap32(addr: Term) -> Term:
    """An x86 address wraps mod 2^32: a constant offset from its base at or above 2^31 (a
    register holding a negative 32-bit value, such as a counter counting down) is the negative
    offset it encodes."""
    try:
        b, off = base_of(addr)
    except ProveError:
        return addr
    v = value(off)
    if v is None:
        return addr
    w = ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    return addr if (w - v) % (1 << 64) == 0 else add(b, const(w))


class _Lanes(TermLanes, Plain):
    """The lane reader of gen/isa/common.py over terms (lanes of registers as read, counts and
    immediates as ints)."""


# mnemonics read through gen/isa/x86.py: lane-wise of two vectors; shifts and rotations by a count
_LANEWISE = ("paddq", "psubq", "pxor", "pxorq", "por", "porq")
_SHIFTS = ("psllq", "psrlq", "prolq", "prorq")
# two-source moves of 128-bit chunks with an immediate (the lanes kernels' transposes): their width
_CROSS = {"perm2i128": 4, "shufi64x2": 8}


def _dwords(pair: tuple, lo: int, hi: int) -> Term:
    """The 64-bit lane whose low and high dwords are dwords lo and hi (0..3) of a lane pair
    (pshufd): a lane itself when they are its two halves in order (0x4e, 0xe4, 0x44, 0xee), the
    lane rotated by 32 when swapped (0xb1), else the halves as and/shift terms (sums of disjoint
    bit ranges; they fold back into a word only where the halves recombine in order)."""
    if lo // 2 == hi // 2 and lo != hi:
        return pair[lo // 2] if lo < hi else rotl(pair[lo // 2], 32)

    def half(j):
        return and_(shr(pair[j // 2], 32 * (j % 2)), 0xFFFFFFFF)
    return add(half(lo), mul(half(hi), 1 << 32))


def _byte_shift(pair: tuple, n: int, left: bool) -> list:
    """pslldq/psrldq: the 128-bit value (lo, hi) shifted by n bytes, as two 64-bit lanes
    (by 8: a lane moves; else the bits crossing the lane boundary are added: disjoint ranges)."""
    lo, hi = pair
    b = 8 * min(n, 16)
    if b == 0:
        return [lo, hi]
    if b == 128:
        return [const(0), const(0)]
    if left:
        if b >= 64:
            return [const(0), mul(lo, 1 << (b - 64))]
        return [mul(lo, 1 << b), add(mul(hi, 1 << b), shr(lo, 64 - b))]
    if b >= 64:
        return [shr(hi, b - 64), const(0)]
    return [add(shr(lo, b), mul(hi, 1 << (64 - b))), shr(hi, b)]


class Program:
    """A parsed NASM file: instructions, labels (full names) and data tables."""

    def __init__(self, text: str):
        self.lines: list[Line] = []
        self.labels: dict[str, int] = {}
        self.globals: list[str] = []
        self.data: dict[str, list[int]] = {}
        scope = ""
        section = ".text"
        for no, raw in enumerate(text.splitlines(), 1):
            s = raw.split(";", 1)[0].strip()
            if not s:
                continue
            m = _LABEL.match(s)
            if m:
                name, rest = m.group(1), m.group(2).strip()
                if not name.startswith("."):
                    scope = name
                    full = name
                else:
                    full = scope + name
                if section == ".text":
                    self.labels.setdefault(full, len(self.lines))
                if rest.startswith("dq"):
                    self.data[full] = [_int(x) & MASK for x in rest[2:].split(",")]
                    continue
                if not rest:
                    continue
                s = rest
            word, _, rest = s.partition(" ")
            word = word.lower()
            if word in ("bits", "default", "align", "extern"):
                continue
            if word == "section":
                section = rest.split()[0]
                continue
            if word == "global":
                self.globals.append(rest.split(":")[0].strip())
                continue
            if section != ".text":
                continue
            self.lines.append(Line(no, raw.strip(), word, _split_operands(rest), scope))

    def target(self, name: str, line: Line) -> int:
        full = line.scope + name if name.startswith(".") else name
        if full not in self.labels:
            raise Unsupported(f"line {line.no}: unknown label {name}")
        return self.labels[full]

    def heads(self) -> set:
        """Loop heads: targets of backward jumps."""
        out = set()
        for i, ln in enumerate(self.lines):
            if ln.op in ("jmp", "jz", "je", "jnz", "jne"):
                t = self.target(ln.args[0], ln)
                if t <= i:
                    out.add(t)
        return out


class NasmMachine(Machine):
    """One path of execution of a parsed NASM program."""

    def __init__(self, prog: Program, word_bits: int, abi: str):
        super().__init__()
        self.prog = prog
        self.wide = word_bits == 64
        self.abi = abi
        self.frame_align: dict = {}      # frame base of ``and rsp, -2^k`` -> 2^k

    # ---------------------------------------------------------------- set-up

    def enter(self, func: str, args: list[Term]) -> int:
        """Registers and stack at the function's first instruction; returns its index."""
        st = self.state
        abi = ABIS[self.abi]            # the calling convention (gen/asm/abi.py)
        st.regs["rsp"] = self.rsp0
        for reg, a in zip(abi.int_args, args):              # the leading arguments in registers
            st.regs[reg] = a
        for i in range(len(abi.int_args), len(args)):       # the rest above the return address
            st.mem[(self.rsp0, const(abi.stack_arg(i, 0)))] = (abi.word, args[i])
        st.mem[(self.rsp0, const(0))] = (abi.word, self.ret0)
        if func not in self.prog.labels:
            raise Unsupported(f"no label {func}")
        return self.prog.labels[func]

    # ---------------------------------------------------------------- operands

    def _reg(self, name: str):
        n = name.lower()
        if n in GPR64:
            return ("g", n, 64)
        if n in GPR32:
            return ("g", GPR32[n], 32)
        m = re.fullmatch(r"([xyz]mm)(\d+)", n)
        if m:
            return ("v", int(m.group(2)), VWIDTH[m.group(1)])
        if re.fullmatch(r"k[0-7]", n):
            return ("k", n, 0)
        return None

    def address(self, op: str) -> tuple[int, Term, object]:
        """(size or 0, address term, vector index register or None) of a memory operand."""
        m = re.fullmatch(r"(?:(byte|word|dword|qword|oword|yword|zword)\s+)?\[(.*)\](\{k\d\}|\{1to\d+\})?", op.strip(),
                         re.I)
        if not m:
            raise Unsupported(f"not a memory operand: {op!r}")
        size = SIZES[m.group(1).lower()] if m.group(1) else 0
        inner = m.group(2).replace(" ", "")
        if inner.lower().startswith("rel"):
            name = inner[3:]
            if name not in self.prog.data:
                raise Unsupported(f"unknown data label {name}")
            return size, self.symbol(name), None
        addr: Term = const(0)
        for sign, part in re.findall(r"([+-]?)([^+-]+)", inner):
            neg = sign == "-"
            r = self._reg(part.split("*")[0])
            if r is None:
                v = _int(part)
                addr = add(addr, const(-v if neg else v))
            elif r[0] == "v":
                raise Unsupported(f"a vector index in {op!r} (no printer emits gathers or scatters)")
            else:
                scale = _int(part.split("*")[1]) if "*" in part else 1
                addr = add(addr, mul(self.state.regs.get(r[1], self.undef(r[1])), -scale if neg else scale))
        return size, (addr if self.wide else _wrap32(addr)), None

    def read(self, op: str, size: int = 8) -> Term:
        """A scalar operand (register, immediate or memory) as one term."""
        r = self._reg(op)
        if r is not None:
            if r[0] == "g":
                t = self.state.regs.get(r[1])
                if t is None:
                    t = self.undef(r[1])
                return and_(t, 0xFFFFFFFF) if r[2] == 32 and self.wide else t
            if r[0] == "v":
                return self.lanes(r[1])[0]
            raise Unsupported(f"mask register {op} as a value")
        if "[" in op:
            sz, addr, vi = self.address(op)
            return self.load(addr, sz or size)
        v = _int(op)
        if size == 8 and -(1 << 31) <= v < (1 << 31):
            return const(v)                # sign-extended imm32
        return const(v & ((1 << (8 * size)) - 1))

    def write_gpr(self, op: str, t: Term) -> None:
        r = self._reg(op)
        if r is None or r[0] != "g":
            raise Unsupported(f"not a general register: {op}")
        if r[2] == 32 and self.wide:
            t = and_(t, 0xFFFFFFFF)        # 32-bit writes zero the upper half
        self.note(t)
        self.state.regs[r[1]] = t

    def lanes(self, idx: int) -> tuple:
        v = self.state.vregs.get(idx)
        if v is None:
            v = tuple(self.undef(f"v{idx}.{i}") for i in range(8))
            self.state.vregs[idx] = v
        return v

    def vread(self, op: str, width: int) -> tuple:
        r = self._reg(op)
        if r is not None and r[0] == "v":
            return self.lanes(r[1])[:width]
        sz, addr, _ = self.address(op)
        if op.rstrip().endswith("}") and "{1to" in op:       # EVEX embedded broadcast
            return (self.load(addr, 8),) * width
        return tuple(self.load(add(addr, const(8 * i)), 8, tolerant=i > 0) for i in range(width))

    def vwrite(self, op: str, lanes, legacy: bool = False) -> None:
        """Write a vector register: VEX/EVEX forms zero the lanes above; legacy SSE keeps them."""
        r = self._reg(op.split("{")[0])
        if r is None or r[0] != "v":
            sz, addr, _ = self.address(op)
            for i, t in enumerate(lanes):
                self.store(add(addr, const(8 * i)), 8, t)
            return
        old = self.lanes(r[1])
        lanes = tuple(lanes)
        for t in lanes:
            self.note(t)
        if legacy:
            self.state.vregs[r[1]] = lanes + old[len(lanes):]
        else:
            self.state.vregs[r[1]] = lanes + (const(0),) * (8 - len(lanes))

    def width(self, op: str) -> int:
        r = self._reg(op.split("{")[0])
        if r is not None and r[0] == "v":
            return r[2]
        sz, _, _ = self.address(op)
        if not sz:
            raise Unsupported(f"memory operand without a size: {op}")
        return sz // 8

    # ---------------------------------------------------------------- stack

    def push(self, t: Term) -> None:
        ws = 8 if self.wide else 4
        sp = sub(self.state.regs["rsp"], const(ws))
        self.state.regs["rsp"] = sp
        self.store(sp, ws, t)

    def pop(self) -> Term:
        ws = 8 if self.wide else 4
        sp = self.state.regs["rsp"]
        t = self.load(sp, ws)
        self.state.regs["rsp"] = add(sp, const(ws))
        return t

    # ---------------------------------------------------------------- one instruction

    def step(self, pc: int):
        """Execute line pc; returns the next pc, ("branch", cond, target, fallthrough) or ("ret",).
        A difference found inside the instruction (memory never written, a store into an input)
        names the line."""
        try:
            return self._step(pc)
        except ProveError as e:
            ln = self.prog.lines[pc]
            if str(e).startswith("line "):
                raise
            raise ProveError(f"line {ln.no}: {ln.text}: {e}") from None

    def _step(self, pc: int):
        ln = self.prog.lines[pc]
        self.line = ln
        op, a = ln.op, ln.args
        st = self.state
        ws = 8 if self.wide else 4
        wipe = self._wipe_at(pc)
        if wipe is not None:                # the epilogue's stack wipe: N zero stores below the frame
            n, unit, nxt = wipe
            sp = st.regs["rsp"]
            for i in range(n):
                self.store(add(sp, const(unit * i)), unit, const(0))
            return nxt
        if op in ("endbr64", "endbr32"):     # CET landing pad: no effect on values
            pass
        elif op in ("mov", "movsxd"):
            if self._reg(a[0]) is not None:
                self.write_gpr(a[0], self.read(a[1], 8 if self._reg(a[0])[2] == 64 else 4))
            else:
                sz, addr, _ = self.address(a[0])
                src = self._reg(a[1])
                size = sz or (src[2] // 8 if src else ws)
                self.store(addr, size, self.read(a[1], size))
        elif op in ("add", "sub", "xor", "and", "or"):
            x, y = self.read(a[0]), self.read(a[1])
            f = {"add": add, "sub": sub, "xor": xor, "or": or_}.get(op)
            if op == "and":
                vy = value(y)
                if vy is None:
                    raise Unsupported(f"line {ln.no}: and with a non-constant")
                r = self.align(x, vy) or and_(x, vy if self.wide else vy & 0xFFFFFFFF)
            else:
                r = f(x, y)
            if not self.wide:
                r = self.wrap32(r)
            self.dest(a[0], r)
            st.zf = r
        elif op in ("rol", "ror", "shl", "shr"):
            x, n = self.read(a[0]), _count(a[1])
            if op in ("rol", "ror") and not self.wide:
                raise Unsupported(f"line {ln.no}: 32-bit rotate")
            r = {"rol": lambda: rotl(x, n), "ror": lambda: rotl(x, 64 - n), "shl": lambda: mul(x, 1 << n),
                 "shr": lambda: shr(x, n)}[op]()
            self.dest(a[0], r)
            if op in ("shl", "shr"):
                st.zf = r
        elif op == "rorx":
            self.write_gpr(a[0], rotl(self.read(a[1]), 64 - _count(a[2])))
        elif op == "shld":              # shld d, s, n: d = (d << n) | (s >> (64 - n)); a rotate when s is d
            if a[0] != a[1] or not self.wide:
                raise Unsupported(f"line {ln.no}: shld of two different registers")
            self.dest(a[0], rotl(self.read(a[0]), _count(a[2])))
        elif op == "lea":
            _, addr, _ = self.address(a[1])
            self.write_gpr(a[0], addr)
        elif op == "test":
            x, y = self.read(a[0]), self.read(a[1])
            if x is not y:
                raise Unsupported(f"line {ln.no}: test of two different operands")
            st.zf = x
        elif op == "cmp":
            d = sub(self.read(a[0]), self.read(a[1]))
            st.zf = d if self.wide else self.wrap32(d)      # x86: the 32-bit difference
        elif op == "push":
            self.push(self.read(a[0]))
        elif op == "pop":
            self.write_gpr(a[0], self.pop())
        elif op == "call":
            self.push(self.return_marker(pc + 1))
            return self.prog.target(a[0], ln)
        elif op == "jmp":
            return self.prog.target(a[0], ln)
        elif op in ("jz", "je", "jnz", "jne"):
            return ("branch", op in ("jz", "je"), self.prog.target(a[0], ln), pc + 1)
        elif op == "ret":
            return ("ret", self.pop())
        elif op == "vzeroupper":
            pass
        else:
            self.vector(op, a, ln)
        return pc + 1

    def _wipe_at(self, pc: int):
        """The wipe loop of earlier renders (files users hold; templates/nasm now stores a zeroed xmm/ymm,
        read as ordinary stores): xor eax, eax; mov ecx, N; .wipe: mov [sp + ecx * U - U],
        eax|rax; dec ecx; jnz .wipe) starting at pc: (N, U, the pc after it), else None."""
        lines = self.prog.lines[pc:pc + 5]
        if len(lines) < 5 or [ln.op for ln in lines] != ["xor", "mov", "mov", "dec", "jnz"]:
            return None
        x, m, st, d, j = lines
        if x.args != ["eax", "eax"] or m.args[0] != "ecx" or d.args != ["ecx"]:
            return None
        unit = 8 if self.wide else 4
        sp = "rsp" if self.wide else "esp"
        want = f"{'qword' if unit == 8 else 'dword'} [{sp} + {'rcx' if unit == 8 else 'ecx'} * {unit} - {unit}]"
        if st.args != [want, "rax" if unit == 8 else "eax"] or self.prog.target(j.args[0], j) != pc + 2:
            return None
        return _int(m.args[1]), unit, pc + 5

    def align(self, x: Term, mask: int):
        """``and rsp, -16``: a stack pointer aligned down is a new frame base (offsets below it
        stay relative to it); None for other ands."""
        low = (~mask) & (0xFFFFFFFF if not self.wide else MASK)
        if x.op not in ("var", "lin") or low & (low + 1) or not low:
            return None
        try:
            b, _ = base_of(x)
        except ProveError:
            return None
        if not b.args[0].startswith("rsp0"):
            return None
        t = var(f"rsp0/aligned@{self.line.no}")
        self.frame_align[t] = low + 1
        return t

    def check_aligned(self, op: str, need: int) -> None:
        """A memory operand of an instruction that faults unless it is ``need``-byte aligned
        (legacy SSE m128 operands, vmovdqa): its base must be known to be aligned (the frame
        after ``and rsp, -2^k``; on x86-64 rsp at entry is 8 mod 16) and its offset constant."""
        _, addr, _ = self.address(op)
        base, off = base_of(addr)
        if kind(base) in INPUTS + ("out",):
            raise ProveError(f"needs a {need}-byte aligned address, "
                             f"and the caller's {kind(base)} pointer need not be aligned")
        mod, res = self.frame_align.get(base, 1), 0
        if base is self.rsp0 and self.wide:
            mod, res = 16, 8
        vo = value(off)
        if vo is not None and mod % need == 0 and (res + vo) % need == 0:
            return
        why = f"is {(res + vo) % need} mod {need}" if vo is not None and mod % need == 0 else "is not known to be one"
        raise ProveError(f"needs a {need}-byte aligned address, {address_text(addr)} {why}")

    def dest(self, op: str, t: Term) -> None:
        if self._reg(op) is not None:
            self.write_gpr(op, t)
        else:
            sz, addr, _ = self.address(op)
            self.store(addr, sz or (8 if self.wide else 4), t)

    def wrap32(self, t: Term) -> Term:
        """32-bit arithmetic: pointers and counters only (words live in xmm on x86)."""
        v = value(t)
        return const(v & 0xFFFFFFFF) if v is not None else t

    # ---------------------------------------------------------------- vector instructions

    def vector(self, op: str, a: list, ln: Line) -> None:
        vex = op.startswith("v")
        base = op[1:] if vex else op
        base = ALIASES.get(base, base)
        if base.endswith("64") or base.endswith("32"):
            base = base[:-2]
        if vex:
            dst, srcs = a[0], a[1:]
        else:
            dst, srcs = a[0], a
        w = 0
        if base not in ("movq", "pextrq", "extracti128"):
            regs = [x for x in a if self._reg(x.split("{")[0]) is not None]
            w = self.width(dst if self._reg(dst.split("{")[0]) is not None or not regs else regs[0])
        need = 16 if not vex and base not in UNALIGNED else 8 * w if vex and base == "movdqa" else 0
        for x in (x for x in a if "[" in x and need):
            self.check_aligned(x, need)
        if base in _LANEWISE:          # gen/isa/x86.py's lane terms of the instruction
            x, y = self.vread(srcs[0], w), self.vread(srcs[1], w)
            self.vwrite(dst, list(x86.nasm_semantics(base, w)(_Lanes, w, [x, y])), legacy=not vex)
        elif base in _SHIFTS:
            x, n = self.vread(srcs[0], w), _count(srcs[1])
            self.vwrite(dst, list(x86.nasm_semantics(base, w)(_Lanes, w, [x, n])), legacy=not vex)
        elif base in ("movdqa", "movdqu"):
            if self._reg(dst.split("{")[0]) is not None:
                self.vwrite(dst, self.vread(a[1], w), legacy=not vex)
            else:
                self.vwrite(dst, self.vread(a[1], self.width(a[1])))
        elif base == "movq":
            d, r = self._reg(a[0]), self._reg(a[1])
            if d is not None and d[0] == "v":
                src = self.read(a[1], 8) if (r is None or r[0] == "g") else self.lanes(r[1])[0]
                self.vwrite(a[0], [src, const(0)])
            elif d is not None:
                self.write_gpr(a[0], self.lanes(self._vreg(a[1], ln))[0])
            else:
                _, addr, _ = self.address(a[0])
                self.store(addr, 8, self.lanes(self._vreg(a[1], ln))[0])
        elif base == "movsd":
            if self._reg(a[0]) is None:
                _, addr, _ = self.address(a[0])
                self.store(addr, 8, self.lanes(self._vreg(a[1], ln))[0])
            elif self._reg(a[1]) is None:
                self._vreg(a[0], ln)
                self.vwrite(a[0], [self.read(a[1], 8), const(0)], legacy=True)
            else:
                old = self.lanes(self._vreg(a[0], ln))
                self.vwrite(a[0], [self.lanes(self._vreg(a[1], ln))[0], old[1]], legacy=True)
        elif base == "pextrq":
            _, addr, _ = self.address(a[0])
            self.store(addr, 8, self.lanes(self._vreg(a[1], ln))[_int(a[2])])
        elif base == "extracti128":
            lanes = self.lanes(self._reg(a[1])[1])
            k = _int(a[2])
            self.vwrite(a[0], lanes[2 * k:2 * k + 2])
        elif base == "pbroadcastq":
            r = self._reg(a[1])
            t = self.read(a[1], 8) if r is None else self.lanes(r[1])[0]
            self.vwrite(dst, [t] * w)
        elif base in _CROSS and vex and w == _CROSS[base]:     # lane moves across 128-bit lanes
            x, y = self.vread(srcs[0], w), self.vread(srcs[1], w)
            self.vwrite(dst, list(x86.nasm_semantics(base, w)(_Lanes, w, [x, y, _int(srcs[2])])))
        elif base in ("punpcklqdq", "punpckhqdq", "shufpd", "pshufd", "pslldq", "psrldq"):
            self.shuffle(base, dst, srcs, w, vex)
        elif base in ("movhlps", "movlhps") and not vex:
            d, s = (self.lanes(self._vreg(x, ln)) for x in a[:2])
            self.vwrite(a[0], [s[1], d[1]] if base == "movhlps" else [d[0], s[0]], legacy=True)
        else:
            raise Unsupported(f"line {ln.no}: instruction {op} is not modelled")

    def _vreg(self, op: str, ln: Line) -> int:
        r = self._reg(op)
        if r is None or r[0] != "v":
            raise Unsupported(f"line {ln.no}: {op} is not a vector register")
        return r[1]

    def shuffle(self, base, dst, srcs, w, vex):
        """128-bit shuffles of 64-bit lanes (the packed layouts); per 128-bit lane for ymm/zmm.
        srcs: the operands after the destination (VEX) or all of them (SSE, whose two-operand
        forms punpck*, shufpd and pslldq read the destination; pshufd reads its second operand)."""
        ops = srcs[1:] if base == "pshufd" and not vex else srcs
        x = self.vread(ops[0], w)
        y = self.vread(ops[1], w) if base in ("punpcklqdq", "punpckhqdq", "shufpd") else None
        out = []
        for lo in range(0, w, 2):
            a2 = x[lo:lo + 2]
            if base in ("punpcklqdq", "punpckhqdq", "shufpd"):
                imm = [_int(ops[2])] if base == "shufpd" else []
                out += x86.nasm_semantics(base, 2)(_Lanes, 2, [a2, y[lo:lo + 2], *imm])
            elif base == "pshufd":
                sel = [(_int(ops[1]) >> (2 * i)) & 3 for i in range(4)]
                out += [_dwords(a2, sel[2 * i], sel[2 * i + 1]) for i in range(2)]
            else:
                out += _byte_shift(a2, _int(ops[-1]), base == "pslldq")
        self.vwrite(dst, out, legacy=not vex)

    # ---------------------------------------------------------------- data tables

    def symbol(self, name: str) -> Term:
        base = var(f"sym:{name}")
        for i, v in enumerate(self.prog.data[name]):
            self.state.mem.setdefault((base, const(8 * i)), (8, const(v)))
        return base

