"""The assembly backend's IRs: *machine ops on values* (:class:`MOp`, the lowered program) and
*allocated instructions* (:class:`AOp`, operands :class:`Reg`, :class:`Slot`, :class:`PtrMem`,
:class:`Imm` or an int count), gathered in an :class:`Allocation`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Kinds whose destination is written without being read (everything else is dst op= src):
# mov; the packed layout's lane swap (pshufd) and 128-bit load (movdqu).
DEFS = ("mov", "swap", "ldu")
POINTERS = ("key", "tweak", "in", "out", "n")
COUNTER = "ctr"      # the cycle loop's counter (--unroll loop): a pointer-class value
# markers that implement no value op: the block loop (guard, top, bottom), the cycle loop of
# --unroll loop (ctop: its head; cbottom: compare the counter ``dst`` with the bound ``src`` and
# jump back while they differ)
MARKERS = ("store", "guard", "note", "top", "bottom", "ctop", "cbottom")


# --------------------------------------------------------------------------- machine ops on values

@dataclass(frozen=True)
class Addr:
    """A 64-bit memory word: ``base`` is a pointer value (caller memory) or None (the stack
    frame); ``array`` names the array (stack arrays: ks, const), ``index`` its word index,
    ``offset`` the byte offset from the pointer."""

    base: str | None
    array: str
    index: int
    offset: int = 0
    counter: str | None = None   # a frame ring word indexed by the cycle loop's counter value: the
                                 # word index + counter / 8 (--unroll loop; the counter is public)

    def __str__(self) -> str:
        if self.counter:
            return f"{self.array}[{self.index} + {self.counter}/8]"
        return f"{self.array}[{self.index}]"


@dataclass(frozen=True)
class Imm:
    value: int


@dataclass(frozen=True)
class MOp:
    """kind: mov add sub xor or rol ror shl shr (dst op= src), store (addr = src),
    guard (skip the loop if src == 0), top / bottom (block loop), ctop / cbottom (cycle loop of
    --unroll loop, inside the block loop), note."""

    kind: str
    dst: str | None = None
    src: object = None          # value name, Addr, Imm, or int (shift/rotate count)
    addr: Addr | None = None    # store target
    text: str = ""              # the description statement this implements

    def reads(self) -> list[str]:
        r = []
        if isinstance(self.src, str):
            r.append(self.src)
        for a in (self.src, self.addr):
            if isinstance(a, Addr) and a.base:
                r.append(a.base)
            if isinstance(a, Addr) and a.counter:
                r.append(a.counter)
        if (self.kind not in DEFS + MARKERS or self.kind == "cbottom") and self.dst:
            r.append(self.dst)
        return r

    def writes(self) -> str | None:
        return self.dst if self.kind not in MARKERS else None


@dataclass(frozen=True)
class Reg:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Slot:
    """A stack location: ('v', value) spill slot, ('a', array, index) stack array word,
    ('const', value) constant, ('arg', name) incoming argument."""

    key: tuple


@dataclass(frozen=True)
class PtrMem:
    reg: Reg
    offset: int
    array: str = ""           # caller array (key, tweak, in, out): lanes targets broadcast key words


@dataclass(frozen=True)
class RingMem:
    """A frame ring word indexed by a register: [frame word ``array[index]`` + ``reg``] (the
    printer lays each ring out contiguously in index order)."""
    reg: Reg
    array: str
    index: int


@dataclass
class AOp:
    """An allocated instruction: kind as MOp plus spill/reload/move; operands are Reg, Slot,
    PtrMem, Imm or int.  ``cls`` picks the instruction table; ``text`` is the comment."""

    kind: str
    cls: str
    dst: object = None        # (operands: Reg, Slot, PtrMem, RingMem, Imm or an int count)
    src: object = None
    text: str = ""
    role: str = ""            # '', 'spill', 'reload', 'move', 'memop', 'load' (a memory operand into a register)
    mop: int | None = None    # index of the MOp this implements (main op, memory-operand load,
                              # guard, top, bottom); None for spill/reload/move code and notes


@dataclass
class Allocation:
    strategy: str
    code: list
    homes: dict               # value -> sorted registers it lived in
    slots: list               # slot keys in frame order
    used: dict                # class -> registers used
    stats: dict
    pinned: dict = field(default_factory=dict)   # value -> the one register it keeps

    def registers_used(self) -> int:
        return sum(len(v) for v in self.used.values())


def natural(v: str):
    """Sort key: x2 before x10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v)]


def ring_sizes(ops) -> dict:
    """Frame rings of the cycle loop (--unroll loop): array -> word count, for each array read
    with the counter (its words: those the ops address without it, the setup's stores)."""
    rings = {a.array for o in ops for a in (o.src, o.addr) if isinstance(a, Addr) and a.counter}
    sizes: dict = {}
    for o in ops:
        for a in (o.src, o.addr):
            if isinstance(a, Addr) and a.array in rings and not a.counter:
                sizes[a.array] = max(sizes.get(a.array, 0), a.index + 1)
    return sizes
