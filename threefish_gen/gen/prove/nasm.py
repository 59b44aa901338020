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
# the prefix of a VEX/EVEX form's mnemonic (vpaddq: paddq's three-operand form)
VEX = "v"
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


class _Lanes(TermLanes):
    """The lane reader of gen/isa/common.py over terms (operands arrive read: a vector operand as
    its tuple of lane terms, an immediate as its int; one where the other is due is refused)."""

    @staticmethod
    def vec(x) -> tuple:
        if not isinstance(x, tuple):
            raise Unsupported(f"the immediate {x} where the instruction reads a vector")
        return x

    @staticmethod
    def imm(x) -> int:
        if not isinstance(x, int):
            raise Unsupported("a vector where the instruction reads an immediate")
        return x

    @staticmethod
    def unsupported(text: str):
        raise Unsupported(text)


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

    def vwrite(self, op: str, lanes, legacy: bool = False) -> None:
        """Write a vector register: VEX/EVEX forms zero the lanes above; legacy SSE keeps them."""
        idx = self._reg(op)[1]
        old = self.lanes(idx)
        lanes = tuple(lanes)
        for t in lanes:
            self.note(t)
        if legacy:
            self.state.vregs[idx] = lanes + old[len(lanes):]
        else:
            self.state.vregs[idx] = lanes + (const(0),) * (8 - len(lanes))

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
        """A vector instruction: what it computes and which operand forms it has come from
        gen/isa/x86.py (``nasm_form``: its SEMANTICS row, the legacy SSE form's operands, the
        size and alignment of its memory operand); here the operands are decoded (registers,
        memory, immediates), memory read and written.  What cannot be read names the line."""
        try:
            self._vector(op, a)
        except Unsupported as e:
            raise Unsupported(f"line {ln.no}: {e}") from None

    def _vector(self, op: str, a: list) -> None:
        vex = op.startswith(VEX)
        name = op[len(VEX):] if vex else op
        form = x86.nasm_form(name)
        if form is None or (form.vex and not vex):
            raise Unsupported(f"instruction {op} is not modelled")
        if form.memory and any("[" in x for x in a):
            name = form.memory
            form = x86.nasm_form(name)
        if form.every:                  # no operands: the row on each register it names
            if a:
                raise Unsupported(f"{op} takes no operands")
            row = x86.nasm_semantics(name, 8)
            for idx in range(form.every):
                if idx in self.state.vregs:
                    self.state.vregs[idx] = tuple(row(_Lanes, 8, [self.state.vregs[idx]]))
            return
        if not a:
            raise Unsupported(f"{op} without operands")
        dst = a[0]
        srcs = a if form.reads_dest and not vex else a[1:]
        regs = [r for r in map(self._reg, a) if r is not None and r[0] == "v"]
        if not regs:
            raise Unsupported(f"{op} without a vector register")
        d = self._reg(dst)
        w = d[2] if d is not None and d[0] == "v" else regs[0][2]
        args = [self._operand(x, form, w, vex) for x in srcs]
        try:
            out = x86.nasm_semantics(name, w)(_Lanes, w, args)
        except IndexError:
            raise Unsupported(f"{op} with {len(a)} operand(s)") from None
        out = out if isinstance(out, tuple) else (out,)
        if d is not None and d[0] == "v" and "{" not in dst:
            self.vwrite(dst, out, legacy=not vex)
        elif not form.store:
            raise Unsupported(f"{op} with the destination {dst}")
        elif d is not None and d[0] == "g" and form.mem == 1:
            self.write_gpr(dst, out[0])
        else:
            addr, n = self._memory(dst, form, w, vex)
            if len(out) < n:
                raise Unsupported(f"{op} stores {n} lanes of a {len(out)}-lane result")
            for i, t in enumerate(out[:n]):
                self.store(add(addr, const(8 * i)), 8, t)

    def _operand(self, x: str, form, w: int, vex: bool):
        """A source operand as the row reads it: a vector register's lanes, a GPR's or a memory
        operand's (as many as the form's memory operand holds), an immediate's int."""
        r = self._reg(x)
        if r is not None and r[0] == "v":
            return self.lanes(r[1])[:r[2]]
        if r is not None:
            if r[0] != "g" or form.mem != 1:
                raise Unsupported(f"{x} is not an operand of this instruction")
            return (self.read(x, 8),)
        if "[" not in x:
            v = _int(x)
            if not 0 <= v <= 255:
                raise Unsupported(f"an immediate of {v} (an imm8: 0..255)")
            return v
        addr, n = self._memory(x, form, w, vex)
        if x.rstrip().endswith("}") and "{1to" in x:       # EVEX embedded broadcast
            return (self.load(addr, 8),) * w
        return tuple(self.load(add(addr, const(8 * i)), 8, tolerant=i > 0) for i in range(n))

    def _memory(self, x: str, form, w: int, vex: bool) -> tuple[Term, int]:
        """(address, lanes) of a memory operand of an instruction of this form, its alignment
        checked (gen/isa/x86.py NasmForm: the lanes it holds, whether it must be aligned)."""
        if form.mem == 0:
            raise Unsupported(f"a memory operand ({x}) where the instruction has none")
        sz, addr, _ = self.address(x)
        n = form.mem or w
        if sz and sz != 8 * n and "{1to" not in x:
            raise Unsupported(f"a {sz}-byte memory operand ({x}) where the instruction reads {8 * n}")
        need = (8 * n if form.aligned else 0 if form.aligned is False or vex or n < 2 else 16)
        if need:
            self.check_aligned(x, need)
        return addr, n

    # ---------------------------------------------------------------- data tables

    def symbol(self, name: str) -> Term:
        base = var(f"sym:{name}")
        for i, v in enumerate(self.prog.data[name]):
            self.state.mem.setdefault((base, const(8 * i)), (8, const(v)))
        return base

