"""A small Skein (UBI chaining, config, output, bit padding, MAC) on top of the reference
Threefish, written for the tests: the Skein golden KATs pin every constant of a version
far harder than the raw Threefish vectors do."""
from __future__ import annotations

from threefish_gen.gen import reference
from threefish_gen.gen.spec import Spec

T_KEY, T_CFG, T_MSG, T_OUT = 0, 4, 48, 63


def _tweak(position: int, type_: int, first: bool, final: bool, bitpad: bool) -> bytes:
    t1 = (position >> 64) | (type_ << 56) | (first << 62) | (final << 63) | (bitpad << 55)
    return (position & ((1 << 64) - 1)).to_bytes(8, "little") + t1.to_bytes(8, "little")


def ubi(spec: Spec, g: bytes, msg: bytes, type_: int, bitpad: bool = False) -> bytes:
    nb = spec.block_bytes
    blocks = [msg[i:i + nb] for i in range(0, len(msg), nb)] or [b""]
    pos = 0
    for i, blk in enumerate(blocks):
        pos += len(blk)
        final = i == len(blocks) - 1
        padded = blk.ljust(nb, b"\0")
        tw = _tweak(pos, type_, i == 0, final, bitpad and final)
        c = reference.encrypt(spec, g, tw, padded)
        g = bytes(a ^ b for a, b in zip(c, padded))
    return g


def skein(spec: Spec, message: bytes, msg_bits: int, digest_bits: int, mac_key: bytes = b"") -> bytes:
    nb = spec.block_bytes
    k = bytes(nb)
    if mac_key:
        k = ubi(spec, k, mac_key, T_KEY)
    cfg = b"SHA3" + (1).to_bytes(2, "little") + bytes(2) + digest_bits.to_bytes(8, "little") + bytes(16)
    g = ubi(spec, k, cfg, T_CFG)
    bitpad = msg_bits % 8 != 0
    msg = bytearray(message[:(msg_bits + 7) // 8])
    if bitpad:
        r = msg_bits % 8
        msg[-1] = (msg[-1] & (0xFF << (8 - r)) & 0xFF) | (1 << (7 - r))
    g = ubi(spec, g, bytes(msg), T_MSG, bitpad)
    out = b""
    i = 0
    while len(out) * 8 < digest_bits:
        out += ubi(spec, g, i.to_bytes(8, "little"), T_OUT)
        i += 1
    return out[:(digest_bits + 7) // 8]
