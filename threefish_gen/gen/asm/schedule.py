"""The description passes of the assembly targets, run before the description is lowered to
the layout IR (gen/layouts/) and from there to machine ops (gen/asm/lowering.py): the MIX
schedule (:func:`schedule_ops`) and the fusion of each subkey injection's terms into sums
(:func:`fuse_injections`, which reads the description's tags).  :func:`prepare` is what the
scalar lowering runs, :func:`scheduled` what the lanes lowering runs."""
from __future__ import annotations

from dataclasses import replace

from ..dsl import Idx, Loop, Mem, Op
from ..errors import GenError
from ..threefish import Program

SCHEDULES = ("description", "interleave")


def _mix(ops: list, i: int):
    """The words of the MIX whose three ops start at ops[i] (``a += b; b <<<= r; b ^= a`` or
    the inverse ``b ^= a; b >>>= r; a -= b``), or None."""
    if i + 3 > len(ops) or not all(isinstance(o, Op) for o in ops[i:i + 3]):
        return None
    x, y, z = ops[i:i + 3]
    kinds = (x.kind, y.kind, z.kind)
    if kinds == ("add", "rotl", "xor") and x.a == y.dst == z.dst and z.a == x.dst:
        return {x.dst, x.a}
    if kinds == ("xor", "rotr", "sub") and x.dst == y.dst == z.a and x.a == z.dst:
        return {x.dst, x.a}
    return None


def schedule_ops(ops: list, schedule: str) -> list:
    """Description ops in emission order.  ``interleave``: the independent MIXes of a round
    (consecutive MIXes on disjoint words) go first op of every MIX, then the second, then
    the third (ILP for in-order issue and the decoders)."""
    if schedule not in SCHEDULES:
        raise GenError(f"unknown schedule {schedule!r} (choose from {', '.join(SCHEDULES)})")
    if schedule == "description":
        return list(ops)
    out: list = []
    pending: list = []           # the MIXes of one round: three ops each
    used: set = set()

    def flush() -> None:
        for k in range(3):
            out.extend(m[k] for m in pending)
        pending.clear()
        used.clear()
    i = 0
    while i < len(ops):
        words = _mix(ops, i)
        if words is None:
            flush()
            op = ops[i]
            out.append(Loop(op.count, schedule_ops(op.body, schedule)) if isinstance(op, Loop) else op)
            i += 1
            continue
        if used & words:
            flush()
        pending.append(ops[i:i + 3])
        used |= words
        i += 3
    flush()
    return out


def fuse_injections(ops: list, key_values=frozenset(), share: bool = True,
                    stored=frozenset(), stem: str = "sk") -> tuple[list, list]:
    """Subkey injection (the ops tagged ``("key", s)``): a word that gets two or three terms
    (key word, tweak word, the counter s) gets their sum instead -- one add on the word's
    dependency chain, not two or three (what C compilers do by reassociation).  Returns
    (ops for the setup, the ops).

    * key word + s (``key_values``: values the setup defines): the sum depends on the key only,
      so the setup computes it once per call into the stack array ``kc[s]``, and the word gets
      ``x3 += kc[s]`` (a memory operand);
    * otherwise (a tweak word in the sum) a fresh value ``skN`` is computed first, off the chain:
      ``x1 += k1; x1 += t0`` becomes ``sk1 = k1; sk1 += t0; x1 += sk1`` (decrypt: ``x1 -= sk1``);
      with ``share`` a sum is kept for the next injection, whose word Nw-3 gets the sum word Nw-2
      got (one add fewer per block and injection, one more value live across 4 rounds).

    ``stored``: the counters s whose ``kc[s]`` the setup stores already (--unroll loop's counter
    ring).  A cycle loop (--unroll loop) is fused on its own (sums ``scN``) where ``share``: a word
    that gets a key ring word and a tweak ring word gets their sum, made off the chain from the two
    memory words (without ``share``, strategy named, the words get them one by one: no register
    is left for a sum beside 8 words, 4 pointers and the counter)."""
    out: list = []
    setup: list = []
    # a key value the body writes is not the setup's any more: no kc for it
    key_values = set(key_values) - {o.dst for o in ops if isinstance(o, Op) and o.kind not in ("store", "note")}
    hoisted: set = set(stored)
    sums: dict = {}               # the terms of a sum -> (the value that holds it, injection)
    count = groups = 0
    i = 0
    while i < len(ops):
        op = ops[i]
        tag = op.tag if isinstance(op, Op) else ()
        if isinstance(op, Loop):          # it writes the state words: no sum is kept across it
            sums = {}
            if share:
                op = Loop(op.count, fuse_injections(op.body, (), share, stem="sc")[1])
        if tag[:1] != ("key",):
            if isinstance(op, Op) and op.kind not in ("store", "note"):     # a term written: its sums go
                sums = {k: ng for k, ng in sums.items() if op.dst not in k}
            out.append(op)
            i += 1
            continue
        j = i
        while j < len(ops) and isinstance(ops[j], Op) and ops[j].tag == tag:
            j += 1
        group = ops[i:j]
        groups += 1
        # a sum is kept for the next injection only (word Nw-2's sum is word Nw-3's at the next
        # subkey): short lives, so that every strategy (named too) still fits the words
        sums = {k: (n, g) for k, (n, g) in sums.items() if g >= groups - 1} if share else {}
        written = {o.dst for o in group}
        terms: dict = {}
        for o in group:
            terms.setdefault(o.dst, []).append(o)
        done: set = set()
        for o in group:
            mine = terms[o.dst]
            fusable = (len(mine) > 1 and len({m.kind for m in mine}) == 1 and mine[0].kind in ("add", "sub")
                       and not any(isinstance(m.a, str) and m.a in written for m in mine)
                       and (any(isinstance(m.a, str) for m in mine) or stem == "sc"))
            if not fusable:
                out.append(o)
                continue
            if o.dst in done:
                continue
            done.add(o.dst)
            srcs = sorted((m.a for m in mine), key=lambda a: not isinstance(a, str))
            if (len(srcs) == 2 and srcs[0] in key_values and isinstance(srcs[1], Idx) and not srcs[1].scale):
                s = srcs[1].base
                slot = Mem("kc", s)
                if s not in hoisted:
                    hoisted.add(s)
                    setup += [Op("mov", "kcs", srcs[0]), Op("add", "kcs", srcs[1]), Op("store", "kcs", slot)]
                out.append(Op(o.kind, o.dst, slot, tag))
                continue
            key = tuple(sorted(map(str, srcs)))
            name = sums.get(key, (None,))[0]
            if name is None:
                count += 1
                name = f"{stem}{count}"
                sums[key] = (name, groups)
                out.append(Op("mov", name, srcs[0], tag))
                out.extend(Op("add", name, a, tag) for a in srcs[1:])
            out.append(Op(o.kind, o.dst, name, tag))
        i = j
    if setup:
        setup.insert(0, Op("note", None, "key words + s of the subkeys: kc[s] (once per call)"))
    return setup, out


def unrolled(items) -> list:
    """``items`` (a setup), refused where it holds a loop."""
    if any(isinstance(x, Loop) for x in items):
        raise GenError("the nasm targets need --unroll full")
    return list(items)


def prepare(prog: Program, schedule: str = "description", share_sums: bool = True) -> Program:
    """The program the scalar lowering lowers: the body scheduled (:func:`schedule_ops`), its
    subkey injections fused (:func:`fuse_injections`; ``share_sums``: sums kept for the next
    injection), the once-per-call sums (``kc[s]``) appended to the setup."""
    setup = unrolled(prog.setup)
    keys = {o.dst for o in setup if isinstance(o, Op) and o.kind == "mov"}
    stored = {o.a.index.base for o in setup if isinstance(o, Op) and o.kind == "store" and o.a.array == "kc"}
    body = list(prog.body)
    if sum(isinstance(x, Loop) for x in body) > (prog.options.unroll == "loop"):
        raise GenError("the nasm targets lower one cycle loop (--unroll loop) per function, no other loop")
    extra, body = fuse_injections(schedule_ops(body, schedule), keys, share_sums, stored)
    return replace(prog, setup=setup + extra, body=body)


def scheduled(prog: Program, schedule: str = "description") -> Program:
    """The program with its body in the MIX schedule (the lanes lowering: no fusion)."""
    return replace(prog, body=schedule_ops(list(prog.body), schedule))
