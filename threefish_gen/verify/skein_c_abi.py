"""verify for the C-ABI Skein renders (``--primitive skein`` of the C, SIMD C and NASM targets; the
C# class: skein_csharp.py): vectors from the Skein reference model (gen/skein.py, itself checked
against the golden KATs) through ``verify/harness/skein_harness.c``.

The vector file of a version and size holds

* every golden record of that version and size: hash and MAC, the messages of whole bytes
  through the byte API, the others (a partial last byte) through the bit API, and (v1.3: 11, 12
  or 12 of them) the published tree-hashing records of ``kat/skein_v1.3_tree.kat`` as T lines
  (Yl, Yf, Ym of (2, 2, 2), (1, 2, 3), (2, 1, 255); messages up to 2043 bytes); these lines carry
  the published digests, not the model's,
* random messages of every length 0..3 blocks, with output lengths 1..2B+1, MAC keys of
  0..2B bytes and personalization strings, and a few long messages (up to 64 KiB),
* tree hashing (the model's digests) for several (Yl, Yf, Ym) sets and message lengths around
  leaf and node boundaries,
* hash_many batches of mixed lengths, and the bad-argument checks,
* random bit lengths (every residue mod 8 around block boundaries; with MAC keys) and random
  sets of UBI arguments (key, personalization, public key, key identifier, nonce) with bit or
  byte lengths,

and the harness runs every record one-shot and streamed in seven chunkings, misaligned, with
guard bytes (see the harness's header); the SIMD renders also hash whole leaves in lanes.  A
nasm-x64 ``--abi win64`` render also runs as Windows builds it (mingw-w64, ``nasm -f win64``)
under wine, and its UBI loop is called through the Win64 ABI thunk in every row.
"""
from __future__ import annotations

import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from threefish_gen.gen import skein
from threefish_gen.gen.asm.abi import ABIS
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.kat import KAT_DIR, parse
from threefish_gen.gen.output import write_files
from threefish_gen.gen.printers.c_simd.driver import ENV_VAR, ISAS, family_name
from threefish_gen.gen.targets import get as get_target
from threefish_gen.gen.spec import Spec
from threefish_gen.gen.variant import Variant

from . import abi_check
from . import nasm as vnasm
from .objects import object_format
from .runner import C_BUILDS, HERE, WARN, Build, Row, _first_lines, _run, build_harness, cpu_flags, run_harness
from .sources import sources

SKEIN_HARNESS = HERE / "harness" / "skein_harness.c"
TREE_SETS = ((1, 1, 2), (1, 1, 3), (1, 2, 3), (2, 1, 255), (2, 2, 2), (1, 1, 255), (3, 2, 4))
BATCH_SIZES = (0, 1, 2, 3, 5, 8, 9, 17)
# tools whose version decides the rows of the nasm-x64 Skein renders beside the C build's own
# compiler (the result cache's key, verify/shard.py row_key): the UBI loop is assembled first
ASM_TOOLS = ("nasm", "gcc")


@dataclass(frozen=True)
class WineBuild(Build):
    """The Win64 Skein render as Windows builds it: the C driver and the harness by mingw-w64, the
    UBI loop by ``nasm -f win64`` (its unwind data kept), run under wine."""
    tools: tuple = ("wine",)

    def missing(self) -> str | None:
        if shutil.which("nasm") is None:
            return "nasm not installed (Debian package nasm)"
        return super().missing() or (None if vnasm.wine() else "wine64 not installed (Debian package wine64)")


WINE_BUILD = WineBuild("win64 under wine", vnasm.MINGW, ("-O2", "-std=gnu99", "-static", *WARN),
                       install="Debian package gcc-mingw-w64-x86-64")


@dataclass(frozen=True)
class M32Build(Build):
    """A C build of the nasm-x86 Skein render: the driver and the harness as 32-bit code
    (``-m32``, Debian gcc-multilib), linked with the elf32 UBI loop; run natively (IA-32
    emulation) or, the plain builds, under qemu-i386."""

    def missing(self) -> str | None:
        if shutil.which("nasm") is None:
            return "nasm not installed (Debian package nasm)"
        return super().missing() or vnasm.m32_missing(self.cc, native_only=self.thorough)

    def command(self, exe: Path, *args: str) -> list[str]:
        return [*vnasm.runner_32bit()[0], str(exe), *args]


# the C builds, as 32-bit programs
M32_BUILDS = tuple(M32Build(b.name.replace(b.cc, f"{b.cc} -m32", 1), b.cc, ("-m32", *b.cflags), b.cxx)
                   for b in C_BUILDS)


def is_win64(variant: Variant) -> bool:
    """A nasm-x64 Skein render whose UBI loop is Win64 code (its object format: win64)."""
    return get_target(variant.target).recipe.language == "nasm" and object_format(variant) == "win64"


def is_cdecl(variant: Variant) -> bool:
    """A nasm-x86 Skein render: its UBI loop is 32-bit cdecl code (object format elf32)."""
    return get_target(variant.target).recipe.language == "nasm" and object_format(variant) == "elf32"


def nasm_builds(target, variant: Variant) -> tuple:
    """The builds of a nasm Skein render: the C builds (a Win64 loop assembled as elf64, its
    unwind data left out, and called the ms_abi way from the Linux driver) and, for Win64, the
    Windows build under wine; nasm-x86 (cdecl): the C builds as 32-bit programs (-m32)."""
    if is_cdecl(variant):
        return M32_BUILDS
    return C_BUILDS + ((WINE_BUILD,) if is_win64(variant) else ())


def _hex(b: bytes) -> str:
    return b.hex() or "-"


def _h(spec: Spec, outlen: int, msg: bytes, key: bytes = b"", pers: bytes = b"") -> str:
    dig = skein.hash_bytes(spec, msg, outlen, key=key, pers=pers)
    return f"H {outlen} {_hex(key)} {_hex(pers)} {_hex(msg)} {dig.hex()}"


def _b_line(outlen: int, nbits: int, p: skein.Params, msg: bytes, digest: bytes) -> str:
    """A B record: the first nbits bits of msg ((nbits + 7) // 8 bytes) with the arguments of p."""
    return (f"B {outlen} {nbits} {_hex(p.key)} {_hex(p.pers)} {_hex(p.pubkey)} {_hex(p.keyid)} {_hex(p.nonce)} "
            f"{_hex(msg)} {digest.hex()}")


def _b(spec: Spec, outlen: int, nbits: int, msg: bytes, p: skein.Params = skein.Params()) -> str:
    return _b_line(outlen, nbits, p, msg, skein.hash_params(spec, msg, outlen, p, nbits))


def random_params(rng: random.Random, nb: int) -> skein.Params:
    """A random set of UBI arguments: each present (1..2B+2 bytes) or absent; the public key, key
    identifier and nonce each present two times in three."""
    def one(p: float) -> bytes:
        return rng.randbytes(rng.randrange(1, 2 * nb + 3)) if rng.random() < p else b""
    return skein.Params(key=one(0.5), pers=one(0.5), pubkey=one(0.67), keyid=one(0.67), nonce=one(0.67))


def golden_records(spec: Spec) -> list[dict]:
    """The golden records of the spec's version and size (whole-byte digests: all of them), of
    whole-byte and of bit-length messages."""
    recs = parse(KAT_DIR / f"skein_v{spec.version}_golden.kat",
                 ("version", "state_bits", "digest_bits", "msg_bits", "message", "digest"))
    return [r for r in recs if int(r["state_bits"]) == spec.bits and int(r["digest_bits"]) % 8 == 0]


def golden_tree_records(spec: Spec) -> list[dict]:
    """The published tree-hashing records of the spec's version and size (``kat/skein_v1.3_tree.kat``;
    none for v1.1 and v1.2, which have no published tree records here)."""
    path = KAT_DIR / f"skein_v{spec.version}_tree.kat"
    if not path.exists():
        return []
    recs = parse(path, ("version", "state_bits", "digest_bits", "msg_bits", "leaf", "node", "max_levels",
                        "message", "digest"))
    return [r for r in recs if r["version"] == spec.version and int(r["state_bits"]) == spec.bits]


def vector_file(spec: Spec, path: Path, count: int, seed: int) -> Path:
    rng = random.Random(f"{seed}-skein-{spec.tag}")
    nb = spec.block_bytes
    lines = [f"# Skein-{spec.bits} v{spec.version}: golden records (hash, MAC, tree), random messages, trees, batches "
             f"(seed {seed})"]
    for r in golden_records(spec):      # the published values themselves, not the model's
        nbits, outlen = int(r["msg_bits"]), int(r["digest_bits"]) // 8
        if nbits % 8:                   # the message bytes as published: the last byte's low bits unmasked
            lines.append(_b_line(outlen, nbits, skein.Params(key=r.get("mac_key", b"")), r["message"], r["digest"]))
        else:
            lines.append(f"H {outlen} {_hex(r.get('mac_key', b''))} - "
                         f"{_hex(r['message'][:nbits // 8])} {r['digest'].hex()}")
    for r in golden_tree_records(spec):  # published tree digests (whole bytes of message and digest)
        nbits, dbits = int(r["msg_bits"]), int(r["digest_bits"])
        if nbits != 8 * len(r["message"]) or dbits != 8 * len(r["digest"]):
            raise GenError(f"{r['source']}: tree record needs whole-byte message and digest")
        lines.append(f"T {dbits // 8} {int(r['leaf'])} {int(r['node'])} {int(r['max_levels'])} "
                     f"{_hex(r['message'])} {r['digest'].hex()}")
    for n in range(3 * nb + 1):          # every length 0..3 blocks, a standard output length
        lines.append(_h(spec, spec.bits // 8, rng.randbytes(n)))
    for outlen in range(1, 2 * nb + 2):  # every output length 1..2B+1
        lines.append(_h(spec, outlen, rng.randbytes(rng.randrange(2 * nb))))
    for klen in range(0, 2 * nb + 1):    # every MAC key length 0..2B
        lines.append(_h(spec, rng.choice((nb // 2, nb, nb + 3)), rng.randbytes(rng.randrange(3 * nb)),
                        key=rng.randbytes(klen)))
    for _ in range(max(8, count // 25)):  # personalization, with and without a key
        lines.append(_h(spec, rng.randrange(1, 2 * nb + 2), rng.randbytes(rng.randrange(3 * nb)),
                        key=rng.randbytes(rng.choice((0, 0, 5, nb))), pers=rng.randbytes(rng.randrange(1, 2 * nb))))
    for n in (1000, 4096 + 7, 65536):    # long ones
        lines.append(_h(spec, rng.choice((nb, 2 * nb + 1)), rng.randbytes(n)))
    for n in (0, 1, nb - 1, nb, nb + 1, 2 * nb, 3 * nb):   # every partial byte around block boundaries
        for r in range(1, 8):
            lines.append(_b(spec, spec.bits // 8, 8 * n + r, rng.randbytes(n + 1)))
    for _ in range(max(8, count // 10)):  # random bit lengths, MAC keys, output lengths
        nbits = rng.randrange(8 * 3 * nb + 8)
        p = skein.Params(key=rng.randbytes(rng.choice((0, 1, nb, nb + 5))))
        lines.append(_b(spec, rng.randrange(1, 2 * nb + 2), nbits, rng.randbytes((nbits + 7) // 8), p))
    for i in range(max(12, count // 5)):  # every UBI argument type, bit or byte lengths
        nbits = 8 * rng.randrange(3 * nb + 1) + (rng.randrange(1, 8) if i % 2 else 0)
        lines.append(_b(spec, rng.randrange(1, 2 * nb + 2), nbits, rng.randbytes((nbits + 7) // 8),
                        random_params(rng, nb)))
    for leaf, fan, height in TREE_SETS:
        tree = skein.Tree(leaf, fan, height)
        lsize = nb << leaf
        lengths = {0, 1, nb, lsize - 1, lsize, lsize + 1, 2 * lsize, 3 * lsize + 5,
                   (2 << fan) * lsize, (2 << fan) * lsize + 1, ((4 << (2 * fan)) + 3) * lsize - 1,
                   16 * lsize, 16 * lsize + 1, 40000}
        for n in sorted(x for x in lengths if x <= 40000):
            outlen = rng.choice((nb, 1, 2 * nb + 1))
            msg = rng.randbytes(n)
            dig = skein.hash_bytes(spec, msg, outlen, tree=tree)
            lines.append(f"T {outlen} {leaf} {fan} {height} {_hex(msg)} {dig.hex()}")
    for n in BATCH_SIZES:
        outlen = rng.choice((nb, 20, nb + 1))
        msgs = [rng.randbytes(rng.choice((0, 1, nb - 1, nb, nb + 1, 3 * nb, rng.randrange(5 * nb))))
                for _ in range(n)]
        items = " ".join(f"{_hex(m)} {skein.hash_bytes(spec, m, outlen).hex()}" for m in msgs)
        lines.append(f"M {outlen} {n} {items}".rstrip())
    lines.append("E")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def check_skein(variant: Variant, build: Build, workdir: Path, vectors: Path) -> Row:
    """One Skein variant under one build against its vector file; a SIMD variant (c-simd) runs
    once per hash_many level this CPU has (forced with $THREEFISH_GEN_ISA), scalar included."""
    label = variant.label()
    why = build.missing()
    if why:
        return Row(label, build.name, "SKIPPED", why)
    t0 = time.monotonic()
    target = get_target(variant.target)
    files = sources(variant)         # verify: the render; check: the user's files
    libs: tuple = ()
    how = ""
    if any(n.endswith(".asm") for n in files):          # nasm: the UBI loop is assembled first
        if shutil.which("nasm") is None:
            return Row(label, build.name, "SKIPPED", "nasm not installed")
        libs, how, failed = _ubi_objects(variant, build, files, workdir, t0)
        if failed:
            return failed
    exe, why = build_harness(variant, build, workdir, libs=libs, harness=SKEIN_HARNESS)
    if exe is None:
        return Row(label, build.name, "FAIL", why, time.monotonic() - t0)
    levels, skipped = [None], []
    if target.skein_isas(variant) and build.arch == "aarch64":    # under qemu: scalar, then the NEON kernel
        levels = ["scalar"] + [i for i in target.skein_isas(variant) if family_name(ISAS[i]) == "neon"]
    elif target.skein_isas(variant) and not build.runner:
        flags = cpu_flags()
        levels = ["scalar"]
        for isa in target.skein_isas(variant):
            if family_name(ISAS[isa]) != "x86":       # this machine is x86: its kernel is not compiled here
                skipped.append(f"{isa} (AArch64 only: the aarch64 rows run it under qemu)")
                continue
            lacking = [f for f in ISAS[isa].features if f not in flags]
            (skipped.append(f"{isa} (CPU lacks {'+'.join(lacking)})") if lacking else levels.append(isa))
    total = 0
    wine_env = None
    if isinstance(build, WineBuild):
        wine_env, why = vnasm.wine_env(workdir)
        if why:
            return Row(label, build.name, "FAIL", why, time.monotonic() - t0)
        (workdir / "vectors.txt").write_bytes(Path(vectors).read_bytes())
    for level in levels:
        env = None if level is None else dict(os.environ, **{ENV_VAR: level})
        if wine_env is not None:
            win_exe = exe.with_name(exe.name + ".exe")      # mingw-w64 names the program X.exe for -o X
            ok, out, checks = run_harness([vnasm.wine(), str(win_exe), "vectors.txt"], workdir, env=wine_env,
                                          leaks=False)
            if ok:      # the unwind data: RtlVirtualUnwind from every prologue, body and epilogue point
                uok, uout, _ = run_harness([vnasm.wine(), str(workdir / "unwind.exe")], workdir, env=wine_env,
                                           leaks=False)
                points = next((ln.split()[1] for ln in uout.splitlines() if ln.startswith("unwind:")), "?")
                ok, out = uok, uout if not uok else out
                how += f"; RtlVirtualUnwind from {points} prologue, body and epilogue points"
        else:
            ok, out, checks = run_harness(build.command(exe, str(vectors)), workdir, env=env, leaks=not build.runner)
        total += checks
        if not ok:
            return Row(label, build.name, "FAIL", (f"[{level}] " if level else "") + _first_lines(out, 4),
                       time.monotonic() - t0, total)
    detail = f"{total} checks" + (f"; hash_many paths {', '.join(levels)}" if levels != [None] else "") \
        + (f"; not run: {', '.join(skipped)}" if skipped else "") + how
    if build.runner:
        return Row(label, build.name, "PASS (emulated)", f"{detail}; {build.arch} under {build.runner[0]}",
                   time.monotonic() - t0, total)
    if isinstance(build, M32Build) and vnasm.runner_32bit()[0]:
        return Row(label, build.name, "PASS (emulated)", f"{detail}; i386 under {vnasm.runner_32bit()[0][0]}",
                   time.monotonic() - t0, total)
    return Row(label, build.name, "PASS", detail, time.monotonic() - t0, total)


def _ubi_objects(variant: Variant, build: Build, files: dict, workdir: Path, t0: float):
    """Assemble the UBI loop of a nasm render for ``build``: (what to link, what the row says of
    it, None) or ((), "", the FAIL row).  Every call goes through the ABI thunk of the
    convention (verify/abi_check.py: callee-saved registers, Win64 also xmm6-15, the stack
    pointer and DF checked after each).  System V: the .asm as it is; Win64 on Linux is assembled
    as elf64 with its unwind data left out (the driver calls it the ms_abi way), under wine
    (mingw-w64) as ``nasm -f win64`` with its unwind data, which a second program checks; cdecl
    as elf32 beside the 32-bit thunk."""
    src = workdir / "src"
    name = f"{variant.stem}.asm"
    cdecl = is_cdecl(variant)
    abi = "cdecl" if cdecl else "win64" if is_win64(variant) else "sysv"
    wine = isinstance(build, WineBuild)
    asm = abi_check.as_elf64(files[name]) if abi == "win64" and not wine else files[name]
    write_files({**files, name: asm}, src)
    shim = src / "abi_shim.c"
    shim.write_text(abi_check.interpose_ubi(src / name, f"{variant.prefix}ubi_asm", abi,
                                            ABIS[abi].c_attribute))
    obj = workdir / f"{variant.stem}-ubi.{'obj' if wine else 'o'}"
    thunk, thunk_cmd = abi_check.thunk_files(32 if cdecl else 64, src, coff=wine)
    fmt = "win64" if wine else "elf64" if abi == "win64" else object_format(variant)
    cmds = [["nasm", "-f", fmt, "-o", str(obj), str(src / name)], thunk_cmd]
    if wine:
        (src / "unwind.c").write_text(abi_check.unwind_check(src / name))   # exports its labels first
    for cmd in cmds:
        rc, out = _run(cmd, workdir)
        if rc:
            return (), "", Row(variant.label(), build.name, "FAIL", "nasm failed: " + _first_lines(out),
                               time.monotonic() - t0)
    if wine:
        rc, out = _run([vnasm.MINGW, "-O2", "-static", "-Wall", "-Werror", str(src / "unwind.c"), str(obj),
                        "-o", str(workdir / "unwind.exe")], workdir)
        if rc:
            return (), "", Row(variant.label(), build.name, "FAIL", "unwind check link failed: "
                               + _first_lines(out), time.monotonic() - t0)
    if cdecl:
        how = "; 32-bit cdecl UBI loop; callee-saved registers, stack pointer and DF checked after every call"
    elif abi == "sysv":
        how = "; System V UBI loop; callee-saved registers, stack pointer and DF checked after every call"
    else:
        how = ("; Windows build under wine" if wine else "; Win64 UBI loop called the ms_abi way on Linux") \
            + "; callee-saved registers, xmm6-15, stack pointer and DF checked after every call"
    return (str(shim), str(obj), str(thunk.with_suffix(".o"))), how, None
