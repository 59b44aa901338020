"""The Skein reference model: UBI chaining over the reference Threefish (``gen/reference.py``).

Written from the Skein specification (v1.1 / v1.2 / v1.3 differ only in the Threefish
constants): UBI with its 128-bit tweak (position, tree level, bit padding, type, first, final),
the 32-byte configuration block (schema "SHA3", version 1, output length in bits, tree
parameters Yl / Yf / Ym), the optional stages before the message (MAC key, personalization,
public key, key identifier, nonce), the message (sequential, or tree hashing as in section
3.5.6), and the output stage for any output length.

It is the model verify checks every rendered Skein against; ``tests/test_skein.py`` checks it
against all golden records of ``verify/kat/skein_v1.{1,2,3}_golden.kat`` and, for tree hashing,
the 35 published tree records of ``verify/kat/skein_v1.3_tree.kat``.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import reference
from .dsl import Loop, Mem, Op, bytes_from_words, interpret, words_from_bytes
from .errors import GenError
from .spec import Spec
from .threefish import Options, Program, describe

# UBI type values (tweak bits 120..125)
T_KEY, T_CFG, T_PRS, T_PK, T_KDF, T_NON, T_MSG, T_OUT = 0, 4, 8, 12, 16, 20, 48, 63
MASK64 = (1 << 64) - 1

# Output lengths (bits) with a precomputed IV in generated code, per state size (the standard
# Skein-N-M instances).
STANDARD_OUTPUTS = {256: (128, 160, 224, 256), 512: (128, 160, 224, 256, 384, 512),
                    1024: (384, 512, 1024)}


@dataclass(frozen=True)
class Tree:
    """Tree parameters: leaf size Nb * 2**leaf bytes, fan-out 2**fan, at most ``height`` levels."""

    leaf: int
    fan: int
    height: int

    def check(self) -> "Tree":
        if not (1 <= self.leaf <= 255 and 1 <= self.fan <= 255 and 2 <= self.height <= 255):
            raise GenError(f"tree parameters need 1 <= Yl, Yf <= 255 and 2 <= Ym <= 255, "
                           f"not {self.leaf}, {self.fan}, {self.height}")
        return self


def tweak(position: int, type_: int, first: bool = False, final: bool = False,
          bitpad: bool = False, level: int = 0) -> bytes:
    """The 16-byte UBI tweak: position (96 bits), tree level, BitPad, type, First, Final."""
    t1 = ((position >> 64) & 0xFFFFFFFF) | (level << 48) | (bitpad << 55) | (type_ << 56) \
        | (first << 62) | (final << 63)
    return (position & MASK64).to_bytes(8, "little") + t1.to_bytes(8, "little")


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def ubi(spec: Spec, g: bytes, msg: bytes, type_: int, bitpad: bool = False, level: int = 0,
        start: int = 0) -> bytes:
    """UBI(G, M, T): blocks of M (zero-padded, at least one) through Threefish keyed by the
    chaining value, each XORed with its plaintext (feed-forward).  ``start`` is the tweak's
    starting position (tree nodes start at their byte offset in their level)."""
    nb = spec.block_bytes
    blocks = [msg[i:i + nb] for i in range(0, len(msg), nb)] or [b""]
    pos = start
    for i, blk in enumerate(blocks):
        pos += len(blk)
        final = i == len(blocks) - 1
        padded = blk.ljust(nb, b"\0")
        tw = tweak(pos, type_, i == 0, final, bitpad and final, level)
        g = _xor(reference.encrypt(spec, g, tw, padded), padded)
    return g


def config_block(out_bits: int, tree: Tree | None = None) -> bytes:
    """The 32-byte configuration string C."""
    t = tree or Tree(0, 0, 0)
    return (b"SHA3" + (1).to_bytes(2, "little") + bytes(2) + out_bits.to_bytes(8, "little")
            + bytes([t.leaf, t.fan, t.height]) + bytes(13))


def chain_start(spec: Spec, out_bits: int, key: bytes = b"", tree: Tree | None = None) -> bytes:
    """The chaining value after the key (if any) and the configuration block: the IV."""
    k = bytes(spec.block_bytes)
    if key:
        k = ubi(spec, k, key, T_KEY)
    return ubi(spec, k, config_block(out_bits, tree), T_CFG)


def standard_iv(spec: Spec, out_bits: int) -> bytes:
    """The IV of plain hashing with ``out_bits`` bits of output (no key, sequential)."""
    return chain_start(spec, out_bits)


def pad_bits(message: bytes, msg_bits: int) -> tuple[bytes, bool]:
    """The message bytes with Skein's bit padding when msg_bits is not a whole number of
    bytes (bits MSB-first; the next bit set, the rest cleared): (bytes, BitPad flag)."""
    msg = bytearray(message[:(msg_bits + 7) // 8])
    if len(msg) * 8 < msg_bits:
        raise GenError("message shorter than msg_bits")
    r = msg_bits % 8
    if r:
        msg[-1] = (msg[-1] & (0xFF << (8 - r)) & 0xFF) | (1 << (7 - r))
    return bytes(msg), bool(r)


def tree_message(spec: Spec, g: bytes, msg: bytes, tree: Tree) -> bytes:
    """Tree processing of the message (spec section 3.5.6): leaves of Nb * 2**Yl bytes at level
    1, nodes of Nb * 2**Yf bytes above, until one block is left or level Ym hashes the whole
    remaining level as one node.  Returns the chaining value G_o."""
    nb = spec.block_bytes
    level_msg = msg
    height = 0
    while True:
        if height and len(level_msg) == nb:
            return level_msg
        if height + 1 == tree.height:
            return ubi(spec, g, level_msg, T_MSG, level=height + 1)
        size = nb << (tree.fan if height else tree.leaf)
        pieces = [level_msg[i:i + size] for i in range(0, len(level_msg), size)] or [b""]
        level_msg = b"".join(ubi(spec, g, p, T_MSG, level=height + 1, start=i * size)
                             for i, p in enumerate(pieces))
        height += 1


def output(spec: Spec, g: bytes, out_bits: int) -> bytes:
    """The output stage: UBI(G, counter i as 8 bytes, T_out) for i = 0.. until enough bits."""
    nb = spec.block_bytes
    n = (out_bits + 7) // 8
    out = b"".join(ubi(spec, g, i.to_bytes(8, "little"), T_OUT) for i in range((n + nb - 1) // nb))
    return out[:n]      # as the reference code: whole bytes, a partial last byte unmasked


def skein(spec: Spec, message: bytes, out_bits: int, msg_bits: int | None = None, key: bytes = b"",
          pers: bytes = b"", tree: Tree | None = None, extra: tuple = ()) -> bytes:
    """Skein-N-out_bits of ``message`` (``msg_bits`` bits of it; default all).  ``key``: MAC
    key (empty = plain hash); ``pers``: personalization string (empty = none); ``tree``: tree
    parameters (None = sequential); ``extra``: further (type, bytes) stages before the message
    (public key, key identifier, nonce), in type order."""
    if out_bits < 1:
        raise GenError("output length must be at least 1 bit")
    if tree is not None:
        tree.check()
    g = chain_start(spec, out_bits, key, tree)
    stages = sorted(((T_PRS, pers),) + tuple(extra)) if pers else sorted(extra)
    for type_, data in stages:
        g = ubi(spec, g, data, type_)
    msg, bitpad = pad_bits(message, len(message) * 8 if msg_bits is None else msg_bits)
    if tree is None:
        g = ubi(spec, g, msg, T_MSG, bitpad)
    else:
        if bitpad:
            raise GenError("tree hashing takes whole bytes only")
        g = tree_message(spec, g, msg, tree)
    return output(spec, g, out_bits)


def hash_bytes(spec: Spec, message: bytes, outlen: int, key: bytes = b"", pers: bytes = b"",
               tree: Tree | None = None) -> bytes:
    """The byte-oriented form the generated code offers: ``outlen`` bytes of output."""
    return skein(spec, message, 8 * outlen, key=key, pers=pers, tree=tree)


def hash_bits(spec: Spec, message: bytes, nbits: int, outlen: int, key: bytes = b"") -> bytes:
    """The bit-granular form (``Phash_bits`` / ``Pmac_bits``): the first ``nbits`` bits of
    ``message`` (a partial last byte's bits from its most significant end), ``outlen`` bytes
    of output; ``key`` as for hash_bytes."""
    return skein(spec, message, 8 * outlen, nbits, key=key)


@dataclass(frozen=True)
class Params:
    """Every optional UBI argument before the message (``Pparams`` of the generated C): MAC key
    (type 0, before the configuration), personalization (8), public key (12), key identifier
    (16), nonce (20).  An empty value is an absent argument."""

    key: bytes = b""
    pers: bytes = b""
    pubkey: bytes = b""
    keyid: bytes = b""
    nonce: bytes = b""

    def stages(self) -> tuple:
        """The (type, bytes) stages after the configuration block, in type order."""
        return tuple((t, d) for t, d in ((T_PRS, self.pers), (T_PK, self.pubkey), (T_KDF, self.keyid),
                                         (T_NON, self.nonce)) if d)


def hash_params(spec: Spec, message: bytes, outlen: int, params: Params, msg_bits: int | None = None) -> bytes:
    """Skein with any UBI arguments (``Pinit_params``): ``outlen`` bytes of output of the first
    ``msg_bits`` bits of ``message`` (default all of it)."""
    return skein(spec, message, 8 * outlen, msg_bits, key=params.key, extra=params.stages())


def iv_words(spec: Spec, out_bits: int) -> list[int]:
    iv = standard_iv(spec, out_bits)
    return [int.from_bytes(iv[i:i + 8], "little") for i in range(0, len(iv), 8)]


# --------------------------------------------------------------------------- the fused UBI block

def ubi_program(spec: Spec, options: Options | None = None) -> Program:
    """One UBI block as a description Program, built from the Threefish description
    (``threefish.describe``): the key is the chaining value ``h``, the tweak ``t``, the
    plaintext the message block ``in``, and the feed-forward is fused into the stores: every
    output word is XORed with its plaintext word and stored back into ``h``.  ``setup`` (the
    key schedule of ``h``) and ``body`` must both run per block, since ``h`` changes."""
    opts = options if options is not None else Options()
    prog = describe(spec, opts, "encrypt", 1)
    rename = {"key": "h", "tweak": "t"}

    def conv(ops):
        out = []
        for op in ops:
            if isinstance(op, Loop):
                out.append(Loop(op.count, conv(op.body)))
                continue
            a = op.a
            if isinstance(a, Mem) and a.array in rename:
                a = Mem(rename[a.array], a.index)
            if op.kind == "store" and a.array == "out":
                out.append(Op("note", None, f"feed-forward: h[{a.index}] = x ^ m[{a.index}]")
                           if a.index.base == 0 else None)
                out.append(Op("xor", op.dst, Mem("in", a.index), op.tag))
                out.append(Op("store", op.dst, Mem("h", a.index), op.tag))
                continue
            out.append(Op(op.kind, op.dst, a, op.tag))
        return [o for o in out if o is not None]

    return Program(spec, opts, "ubi", 1, conv(prog.setup), conv(prog.body))


def run_ubi_program(prog, h: bytes, t: bytes, block: bytes) -> bytes:
    """Interpret a UBI program on one block: the new chaining value."""
    memory = {"h": words_from_bytes(h), "t": words_from_bytes(t), "in": words_from_bytes(block)}
    env = interpret(prog.setup, memory)
    interpret(prog.body, memory, env)
    return bytes_from_words(memory["h"])


def ubi_lanes_program(spec: Spec) -> Program:
    """The UBI block of L independent messages for the lanes layout (gen/layouts/lanes.py), from
    the same Threefish description: every lane has its own chaining value, so the key schedule
    moves into the body and reads ``in`` block 0 (the L chaining values); ``in`` block 1 holds
    the L message blocks (kept in values m0.. for the feed-forward), ``tweak`` the L tweaks, and
    ``out`` receives the L new chaining values.  Keys fly, unroll full (no scratch arrays)."""
    prog = describe(spec, Options("fly", "full", 1), "encrypt", 1)
    nw = spec.nw
    body: list = []
    for op in prog.setup:
        if isinstance(op.a, Mem) and op.a.array == "key":
            op = Op(op.kind, op.dst, Mem("in", op.a.index), op.tag)
        body.append(op)
    loads = [op for op in prog.body if op.kind == "mov" and isinstance(op.a, Mem) and op.a.array == "in"]
    stores = [op for op in prog.body if op.kind == "store"]
    assert len(loads) == nw and len(stores) == nw
    for op in prog.body:
        if op is loads[0]:
            body += [Op("mov", f"m{i}", Mem("in", nw + i)) for i in range(nw)]
            body += [Op("mov", ld.dst, f"m{ld.a.index.base}", ld.tag) for ld in loads]
        elif op in loads:
            continue
        elif op is stores[0]:
            body.append(Op("note", None, "feed-forward: h = x ^ m"))
            body += [Op("xor", st.dst, f"m{st.a.index.base}", st.tag) for st in stores]
            body += stores
        elif op in stores:
            continue
        else:
            body.append(op)
    return Program(spec, prog.options, "ubi-lanes", 1, [], body)


def ubi_blocks_program(spec: Spec, options: Options | None = None) -> Program:
    """The UBI blocks loop for the assembly backend: :func:`ubi_program` with the chaining value
    in the ``key`` array (read and written in place), one tweak per block from ``tweak`` (the C
    driver writes them) and the message blocks from ``in``; everything per block (no setup)."""
    ub = ubi_program(spec, options)
    rename = {"h": "key", "t": "tweak"}
    body = []
    for op in ub.setup + ub.body:
        a = op.a
        if isinstance(a, Mem) and a.array in rename:
            a = Mem(rename[a.array], a.index)
        body.append(Op(op.kind, op.dst, a, op.tag))
    return Program(spec, options, "ubi", 1, [], body)
