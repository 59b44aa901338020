"""Stage 2b -- the Threefish description, written once for every size and version.

``describe(spec, options, direction, blocks)`` returns a :class:`Program`: a
``setup`` part that depends only on the key (run once per call) and a ``body``
that transforms ``blocks`` independent blocks (each with its own tweak), their
MIX operations interleaved round by round.

Options (see :class:`Options`):

* ``keys``: ``fly`` computes each subkey word on the fly from the key and tweak
  words (k[(s+i) mod (Nw+1)] + t[..] + s), ``table`` precomputes the whole
  subkey table first and adds table words.
* ``unroll``: ``full`` unrolls every round (the permutation is free renaming),
  ``loop`` loops over passes of ``cycles`` 8-round cycles (key-ring indices affine in the
  loop counter); by default 3 (24 rounds, six subkey injections), so that a pass starts at a
  subkey index s = 0 mod 3 and reads the tweak words where they are (no moves); targets ask
  :func:`loop_cycles` per kernel: Threefish-1024's vector kernels take 2 (10 cycles: five
  passes of 16 rounds, nothing unrolled after the loop).
  A pass whose subkey count is not a multiple of three rotates the three tweak words through
  their values once per pass (moves); cycles a pass does not fill follow the loop unrolled.
* ``interleave``: how many independent blocks ``encrypt_blocks`` processes per
  pass (their rounds interleaved for instruction-level parallelism).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from .dsl import Builder, Idx, Mem, Op, Val
from .errors import GenError
from .spec import Spec

KEYS = ("fly", "table")
UNROLL = ("full", "loop")
# 8-round cycles per pass of the loop form, by default three (loop_cycles: every scalar kernel,
# and the vector kernels of Threefish-256/512), so that the tweak index s mod 3 of every subkey is
# the same in every pass (docs/bench.md, "Compact kernels": passes of one cycle rotate the tweak
# words through moves at every pass, 2-19% slower than passes of three, except where a target's
# allocator spills more over the longer pass: NASM's words in XMM, which keep passes of one,
# gen/targets/nasm.py loop_cycles);
# Threefish-1024's vector kernels (10 cycles) take five passes of two: two thirds of the source of
# passes of three and an unrolled tenth cycle (loop_cycles; docs/bench.md, "Passes of two").
LOOP_CYCLES = 3
CYCLES = (1, 2, 3)


def loop_cycles(spec: Spec, vector: bool = False) -> int:
    """The pass length of the loop form (8-round cycles): LOOP_CYCLES; for vector kernels
    (``vector``: the words of a block in vector registers) a pass that divides the cycle count,
    where one does (Threefish-1024: 2).  Scalar kernels keep three: their tweak words share the
    general registers with the state, and rotating them cost gcc 6% (scalar C Threefish-1024,
    Zen 4), NASM's GPR kernels 2%; the vector kernels ran as fast with passes of two (AVX2 and
    NASM, gcc and clang; AVX-512 lanes: gcc -2.5%, clang +1.8%; docs/bench.md)."""
    n = spec.rounds // 8
    if not vector:
        return LOOP_CYCLES
    return next(c for c in (LOOP_CYCLES, 2, 1) if n % c == 0)


DIRECTIONS = ("encrypt", "decrypt")


@dataclass(frozen=True)
class Options:
    keys: str = "fly"
    unroll: str = "full"
    interleave: int = 1

    def check(self) -> "Options":
        if self.keys not in KEYS:
            raise GenError(f"--keys {self.keys!r} is unknown (choose from {', '.join(KEYS)})")
        if self.unroll not in UNROLL:
            raise GenError(f"--unroll {self.unroll!r} is unknown (choose from {', '.join(UNROLL)})")
        if not isinstance(self.interleave, int) or not 1 <= self.interleave <= 4:
            raise GenError(f"--interleave must be 1..4, not {self.interleave!r}")
        return self

    def describe(self) -> str:
        return " ".join(f"--{f.name} {getattr(self, f.name)}" for f in fields(self))


@dataclass
class Program:
    spec: Spec
    options: Options
    direction: str
    blocks: int
    setup: list
    body: list


def _names(blocks: int, b: int, stem: str) -> str:
    """Value-name stem for block b: 'x' alone, or 'xa', 'xb', ... when interleaving."""
    return stem if blocks == 1 else f"{stem}{'abcd'[b]}"


class _Schedule:
    """Key-schedule access for one block: add or subtract subkey s to the state."""

    def __init__(self, b: Builder, spec: Spec, opts: Options, key: list[Val], block: int, blocks: int,
                 rotating: bool = False):
        self.b, self.spec, self.opts, self.key = b, spec, opts, key
        nw = spec.nw
        tn = _names(blocks, block, "t")
        t0 = b.val(f"{tn}0", Mem("tweak", 2 * block))
        t1 = b.val(f"{tn}1", Mem("tweak", 2 * block + 1))
        t2 = b.val(f"{tn}2", t0)
        t2 ^= t1
        self.tweak = [t0, t1, t2]
        self.table = f"ks{'abcd'[block]}" if blocks > 1 else "ks"
        # passes of one cycle rotate the tweak words through a spare value, defined here, before
        # the loop (a value first defined inside a loop is refused by some printers)
        self.spare = b.val(f"{tn}s", t0) if rotating else None
        if opts.keys == "table":
            # Precompute every subkey word of this block into the table ks[s*Nw + i].
            tmp = b.val(f"{tn}k", key[0])
            for s in range(spec.subkeys):
                for i in range(nw):
                    b.emit(Op("mov", tmp.name, key[(s + i) % (nw + 1)].name))
                    if i == nw - 3:
                        tmp += self.tweak[s % 3]
                    elif i == nw - 2:
                        tmp += self.tweak[(s + 1) % 3]
                    elif i == nw - 1 and s:
                        tmp += s
                    b.store(Mem(self.table, s * nw + i), tmp)

    def advance(self, k: int) -> None:
        """The tweak words moved k subkeys on: t[i] <- t[i+k mod 3] (k = 2 * cycles, negative
        backwards; nothing where k = 0 mod 3)."""
        if k % 3 == 1:
            self.rotate(-1)
        elif k % 3 == 2:
            self.rotate(+1)

    def rotate(self, step: int) -> None:
        """The tweak words, rotated by one place through a spare value (moves, no arithmetic):
        step +1, t[i] <- t[i-1 mod 3], step -1, t[i] <- t[i+1 mod 3]."""
        t, b, spare = self.tweak, self.b, self.spare
        b.emit(Op("mov", spare.name, t[0].name))
        dst = 0
        while (src := (dst - step) % 3) != 0:
            b.emit(Op("mov", t[dst].name, t[src].name))
            dst = src
        b.emit(Op("mov", t[dst].name, spare.name))

    def inject(self, x: list[Val], s: int | Idx, sign: int, pos: int | None = None) -> None:
        """x += subkey s (sign = +1) or x -= subkey s (sign = -1).  pos (the loop form): the
        subkey's place in its pass; the tweak words then hold t[s-pos mod 3], t[s-pos+1 mod 3],
        t[s-pos+2 mod 3] (a pass of three cycles is 6 subkeys: s = pos mod 3; shorter passes
        rotate them once per pass), so the subkey adds tweak words pos and pos + 1 mod 3."""
        nw = self.spec.nw

        def acc(v: Val, operand) -> None:
            if sign > 0:
                v += operand
            else:
                v -= operand

        if self.opts.keys == "table":
            si = s if isinstance(s, Idx) else Idx(s)
            for i in range(nw):
                acc(x[i], Mem(self.table, Idx(si.base * nw + i, si.scale * nw)))
            return
        tw = (s % 3, (s + 1) % 3) if pos is None else (pos % 3, (pos + 1) % 3)
        if isinstance(s, Idx):  # loop: key ring kr[s+i], counter ring kc[s], the tweak words
            for i in range(nw - 1):
                acc(x[i], Mem("kr", Idx(s.base + i, s.scale)))
            acc(x[nw - 1], Mem("kc", s))
            acc(x[nw - 3], self.tweak[tw[0]])
            acc(x[nw - 2], self.tweak[tw[1]])
            return
        for i in range(nw):
            acc(x[i], self.key[(s + i) % (nw + 1)])
        acc(x[nw - 3], self.tweak[tw[0]])
        acc(x[nw - 2], self.tweak[tw[1]])
        if s:
            acc(x[nw - 1], s)



def describe(spec: Spec, options: Options = Options(), direction: str = "encrypt",
             blocks: int = 1, cycles: int | None = None) -> Program:
    """The Threefish program for one spec, option set, direction and block count (``cycles``:
    8-round cycles per pass of the loop form, 1, 2 or 3; default :func:`loop_cycles`: 3)."""
    options.check()
    if cycles is None:
        cycles = loop_cycles(spec)
    if cycles not in CYCLES:
        raise GenError(f"loop passes of {cycles} cycles: 1, 2 or 3")
    if direction not in DIRECTIONS:
        raise GenError(f"unknown direction {direction!r}")
    nw, rounds, rot, perm = spec.nw, spec.rounds, spec.rot, spec.perm
    inv = [perm.index(i) for i in range(nw)]

    # ---- setup: key words and the parity word k[Nw] = C240 ^ k0 ^ ... ^ k[Nw-1]
    sb = Builder()
    sb.note("key schedule: k[Nw] = C240 ^ k[0] ^ ... ^ k[Nw-1]")
    key = [sb.val(f"k{i}", Mem("key", i)) for i in range(nw)]
    kp = sb.val(f"k{nw}", spec.c240)
    for k in key:
        kp ^= k
    key.append(kp)
    if options.unroll == "loop" and options.keys == "fly":
        sb.note("key ring kr[j] = k[j mod (Nw+1)]: subkey s, word i < Nw-1 reads kr[s+i]")
        for j in range(spec.subkeys + nw - 2):
            sb.store(Mem("kr", j), key[j % (nw + 1)])
        # The last word's key word and the counter s come as one ring word: one add
        # fewer per subkey, and no value in the loop that is affine in the loop
        # counter (clang 14 keeps such a state word as "partial sum + counter
        # terms" and rebuilds it at every use: 1.2-1.3x slower than gcc).
        sb.note("counter ring kc[s] = k[(s+Nw-1) mod (Nw+1)] + s: subkey s, word Nw-1 reads kc[s]")
        kt = None
        for s in range(spec.subkeys):
            w = key[(s + nw - 1) % (nw + 1)]
            if s == 0:
                sb.store(Mem("kc", s), w)
                continue
            if kt is None:
                kt = sb.val("kt", w)
            else:
                sb.emit(Op("mov", "kt", w.name))
            kt += s
            sb.store(Mem("kc", s), kt)

    # ---- body: per block, tweak words, state words, rounds
    per, cycles = cycles, rounds // 8
    passes = cycles // per             # the loop form: passes of `per` cycles, then the rest unrolled
    rotating = options.unroll == "loop" and options.keys == "fly" and per % 3 != 0
    b = Builder()
    sched, state = [], []
    for blk in range(blocks):
        b.note(f"block {blk}: tweak t2 = t0 ^ t1" + ("" if options.keys == "fly" else ", subkey table"))
        sched.append(_Schedule(b, spec, options, key, blk, blocks, rotating))
    for blk in range(blocks):
        xn = _names(blocks, blk, "x")
        src = "in"
        state.append([b.val(f"{xn}{i}", Mem(src, blk * nw + i)) for i in range(nw)])

    def inject(s, sign, pos=None):
        b.tag = ("key", s)
        b.note(f"{'add' if sign > 0 else 'subtract'} subkey {s}")
        for blk in range(blocks):
            sched[blk].inject(state[blk], s, sign, pos if options.unroll == "loop" else None)
        b.tag = ()

    def mix_round(d: int, rd: int) -> None:
        """Round d (rotation row rd = d mod 8): MIX every pair, then permute by renaming."""
        b.note(f"round {d}" if isinstance(d, int) else "round " + d.replace("c+", "*c + "))
        for j in range(nw // 2):
            b.tag = ("mix", rd, j)
            for st in state:
                x0, x1 = st[2 * j], st[2 * j + 1]
                x0 += x1
                x1.rotl(rot[rd][j])
                x1 ^= x0
        b.tag = ()
        for blk, st in enumerate(state):
            state[blk] = [st[perm[i]] for i in range(nw)]

    def unmix_round(d, rd: int) -> None:
        b.note(f"inverse round {d}" if isinstance(d, int) else "inverse round " + d.replace("c'+", "*c' + "))
        for blk, st in enumerate(state):
            state[blk] = [st[inv[i]] for i in range(nw)]
        for j in range(nw // 2):
            b.tag = ("unmix", rd, j)
            for st in state:
                x0, x1 = st[2 * j], st[2 * j + 1]
                x1 ^= x0
                x1.rotr(rot[rd][j])
                x0 -= x1
        b.tag = ()

    if direction == "encrypt":
        if options.unroll == "full":
            for d in range(rounds):
                if d % 4 == 0:
                    inject(d // 4, +1)
                mix_round(d, d % 8)
        else:
            names_before = [[v.name for v in st] for st in state]
            with b.loop(passes):
                for cyc in range(per):
                    for d in range(8):
                        if d % 4 == 0:
                            inject(Idx(2 * cyc + d // 4, 2 * per), +1, 2 * cyc + d // 4)
                        mix_round(f"{8 * per}c+{8 * cyc + d}", d)
                _check_identity(state, names_before)
                if rotating:
                    b.note(f"next pass's tweak words: t[i] <- t[i+{2 * per % 3} mod 3]")
                    for sc in sched:
                        sc.advance(2 * per)
            # after the loop the tweak words hold t[base+i mod 3]: a subkey s adds words s - base
            base = 2 * per * passes if rotating else 0
            for cyc in range(per * passes, cycles):
                for d in range(8):
                    if d % 4 == 0:
                        s = 2 * cyc + d // 4
                        inject(s, +1, s - base if rotating else None)
                    mix_round(8 * cyc + d, d)
        inject(rounds // 4, +1, rounds // 4 - 2 * per * passes if rotating else None)
    else:
        inject(rounds // 4, -1)
        if options.unroll == "full":
            for d in reversed(range(rounds)):
                unmix_round(d, d % 8)
                if d % 4 == 0:
                    inject(d // 4, -1)
        else:
            for cyc in reversed(range(per * passes, cycles)):
                for d in reversed(range(8)):
                    unmix_round(8 * cyc + d, d)
                    if d % 4 == 0:
                        inject(2 * cyc + d // 4, -1)
            names_before = [[v.name for v in st] for st in state]
            if rotating:
                # the last pass's tweak words: t[i] <- t[(2*per*(passes-1) + i) mod 3]
                for sc in sched:
                    sc.advance(2 * per * (passes - 1))
            with b.loop(passes):
                # counter c' = 0.. runs the passes backwards: pass = passes-1-c'
                for cyc in reversed(range(per)):
                    for d in reversed(range(8)):
                        unmix_round(f"{8 * per}c'+{8 * cyc + d}", d)
                        if d % 4 == 0:
                            p = 2 * cyc + d // 4
                            inject(Idx(2 * per * (passes - 1) + p, -2 * per), -1, p)
                _check_identity(state, names_before)
                if rotating:
                    b.note(f"previous pass's tweak words: t[i] <- t[i+{-2 * per % 3} mod 3]")
                    for sc in sched:
                        sc.advance(-2 * per)

    b.note("store the block(s)")
    for blk, st in enumerate(state):
        for i, v in enumerate(st):
            b.store(Mem("out", blk * nw + i), v)
    return Program(spec, options, direction, blocks, sb.ops, b.ops)


def _check_identity(state, names_before) -> None:
    """A loop pass (whole 8-round cycles) must leave every word in the value it started in."""
    after = [[v.name for v in st] for st in state]
    if after != names_before:  # pragma: no cover - holds for every Threefish permutation
        raise GenError("8-round permutation is not the identity; loop form unavailable")
