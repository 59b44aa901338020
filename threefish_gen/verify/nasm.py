"""verify for the NASM targets: assemble with nasm, link with the C harness, run.

* nasm-x64, abi sysv: ``nasm -f elf64``, linked with the harness by gcc (-O2) and by a
  gcc ASan/UBSan build of the harness; run on the vectors.
* nasm-x64, abi win64: ``nasm -f win64`` (assembled only), the Win64 code run on Linux through
  the ABI thunk (elf64, unwind data left out: "win64 ABI via ms_abi"), and the Windows object in
  a mingw-w64 harness under wine ("win64 under wine").  ``verify`` renders each x86-64 variant in
  both ABIs; ``check`` runs the rows of the ABI its file was rendered for (a Win64 file: the
  ms_abi and wine rows by default, a System V file: the elf64 rows), from the file itself.
* nasm-x86 (cdecl): ``nasm -f elf32``, linked into a ``gcc -m32`` harness (Debian
  gcc-12-multilib); run on the vectors.

How a variant assembles and what CPU features it needs come from its target descriptor
(gen/targets/nasm.py); which builds run comes from the recipe's word size.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from threefish_gen.gen.render import Variant, write_files
from threefish_gen.gen.targets import get as get_target

from . import abi_check as abi
from . import objstore
from .objects import shared_object
from .runner import Row, _first_lines, _run, cpu_flags, link_harness, run_harness
from . import sources as given_files
from .sources import sources

SANITIZE = ("-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer")

# tools whose version decides a row beside each build's own compiler (the result cache's key,
# verify/shard.py row_key): the assembler, gcc that links the harness, wine for the Win64 rows
TOOLS = ("nasm", "gcc", "wine")


@dataclass(frozen=True)
class NasmBuild:
    name: str
    fmt: str                 # nasm output format
    cflags: tuple = ()       # harness flags; () with run=False: assemble only
    run: bool = True
    fast: bool = False       # in `check`'s fast default even though it is a Win64 row (a Win64 file's own rows)

    @property
    def thorough(self) -> bool:
        """Left out of `check`'s fast default: the Win64 forms of a System V file, the sanitizer
        build, the assemble-only row.  The 32-bit row (elf32) is nasm-x86's only run: in it."""
        if self.fast:
            return False
        return self.fmt not in ("elf64", "elf32") or any(f.startswith("-fsanitize") for f in self.cflags)

    def missing(self) -> str | None:
        if shutil.which("nasm") is None:
            return "nasm not installed (Debian package nasm)"
        if self.run and shutil.which("gcc") is None:
            return "gcc not installed"
        if self.run and "-m32" in self.cflags and (why := m32_missing("gcc")):
            return why
        if self.fmt == "win64-wine" and shutil.which(MINGW) is None:
            return f"{MINGW} not installed (Debian package gcc-mingw-w64-x86-64)"
        if self.fmt == "win64-wine" and wine() is None:
            return "wine64 not installed (Debian package wine64)"
        return None


MINGW = "x86_64-w64-mingw32-gcc"


def wine() -> str | None:
    """The wine64 loader (Debian installs it under /usr/lib/wine), or None."""
    for p in (shutil.which("wine64"), "/usr/lib/wine/wine64"):
        if p and Path(p).exists():
            return p
    return None


_WINE_READY = threading.Lock()
_WINE_PREFIXES: set = set()
READY = ".threefish-gen-ready"


def wine_env(workdir: Path) -> tuple[dict, str]:
    """The environment wine runs the harnesses in, its prefix made first: (env, "") or (env, why
    making the prefix failed).  One prefix per user ($THREEFISH_GEN_WINEPREFIX, else
    $XDG_CACHE_HOME/threefish-gen/wine, ~/.cache/...), made once (``wineboot --init``, about 25 s)
    while a lock file beside it is held: two wine processes that both found no prefix would each
    start making it, and one of them fails ("could not load kernel32.dll").  The lock serializes
    the jobs of one verify, shards on one machine and test workers; a prefix is ready once its
    marker file is there."""
    prefix_dir = Path(os.environ.get("THREEFISH_GEN_WINEPREFIX") or
                      Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "threefish-gen" / "wine")
    env = dict(os.environ, WINEPREFIX=str(prefix_dir), WINEDEBUG="-all")
    with _WINE_READY:
        if prefix_dir in _WINE_PREFIXES:
            return env, ""
        prefix_dir.parent.mkdir(parents=True, exist_ok=True)
        with open(prefix_dir.parent / (prefix_dir.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (prefix_dir / READY).exists():
                ok, out, _ = run_harness([wine(), "wineboot", "--init"], workdir, env=env)
                if not ok or not (prefix_dir / "drive_c").is_dir():
                    return env, f"wine could not make its prefix {prefix_dir}: " + _first_lines(out, 3)
                (prefix_dir / READY).write_text("made by threefish-gen verify (wineboot --init)\n")
        _WINE_PREFIXES.add(prefix_dir)
    return env, ""


_M32: dict = {}     # compiler -> whether -m32 links
_NATIVE32: list = []


def runs_32bit_natively() -> bool:
    """Can this kernel execute 32-bit x86 programs (IA-32 emulation enabled)?"""
    if not _NATIVE32:
        import tempfile
        ok = False
        if _m32_ok():
            with tempfile.TemporaryDirectory() as d:
                src = Path(d) / "t.c"
                src.write_text("int main(void){return 0;}\n")
                exe = Path(d) / "t"
                if subprocess.run(["gcc", "-m32", str(src), "-o", str(exe)], capture_output=True).returncode == 0:
                    try:
                        ok = subprocess.run([str(exe)], capture_output=True).returncode == 0
                    except OSError:
                        ok = False
        _NATIVE32.append(ok)
    return _NATIVE32[0]


def runner_32bit() -> tuple[list[str], str] | None:
    """How to run a 32-bit harness: ([], '') natively, (['qemu-i386'], ' (emulated)'), or None."""
    if runs_32bit_natively():
        return [], ""
    if shutil.which("qemu-i386"):
        return ["qemu-i386"], " (emulated)"
    return None


def _m32_ok() -> bool:
    return m32_links("gcc")


def m32_missing(cc: str = "gcc", native_only: bool = False) -> str | None:
    """Why a ``cc -m32`` harness cannot be built and run here, or None: it must link, and run
    natively or under qemu-i386 (``native_only``: natively, e.g. a sanitizer build).  The NASM
    x86 rows and the nasm-x86 Skein builds (verify/skein_c_abi.py) ask the same."""
    if not m32_links(cc):
        return f"{cc} -m32 cannot link (Debian package gcc-12-multilib)"
    runner = runner_32bit()
    if runner is None or (native_only and runner[0]):
        return "this kernel cannot run 32-bit programs" + (
            "" if native_only else " and qemu-i386 (Debian qemu-user) is missing")
    return None


def m32_links(cc: str = "gcc") -> bool:
    """Can ``cc -m32`` link a C program (with its C library: Debian gcc-multilib)?"""
    if cc not in _M32:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "t.c"
            src.write_text("#include <stdio.h>\nint main(void){puts(\"\");return 0;}\n")
            p = subprocess.run([cc, "-m32", str(src), "-o", str(Path(d) / "t")], capture_output=True)
            _M32[cc] = p.returncode == 0
    return _M32[cc]


X64_BUILDS = (
    NasmBuild("nasm elf64 + gcc -O2", "elf64", ("-O2", "-std=c99")),
    NasmBuild("nasm elf64 + asan+ubsan", "elf64", ("-std=c99", *SANITIZE)),
)
WIN64_BUILDS = (NasmBuild("nasm win64 (assemble)", "win64", (), False),
                NasmBuild("win64 ABI via ms_abi", "elf64-ms", ("-O2", "-std=gnu99")),
                NasmBuild("win64 under wine", "win64-wine", ("-O2", "-std=gnu99", "-static")))
# check on a Win64 file: the two rows that run it, in `check`'s fast default (the wine row assembles it
# with -f win64 too, so the assemble-only row, which says nothing about what the code computes, is left out)
WIN64_FILE_BUILDS = (replace(WIN64_BUILDS[1], fast=True), replace(WIN64_BUILDS[2], fast=True))


def check_wine(variant: Variant, build: NasmBuild, workdir: Path, vectors: Path) -> Row:
    """The Win64 object as Windows links it (nasm -f win64, .pdata/.xdata kept) in a mingw-w64
    harness, run under wine; every call goes through the Win64 ABI thunk (verify/abi_check.py)."""
    label = variant.label()
    why = build.missing()
    if why:
        return Row(label, build.name, "SKIPPED", why)
    t0 = time.monotonic()
    src_dir = workdir / "src"
    write_files(sources(variant), src_dir)
    shim = src_dir / "abi_shim.c"
    shim.write_text(abi.interpose(src_dir / f"{variant.stem}.asm", f"{variant.stem}.h", variant.prefix,
                                  variant.spec.block_bytes, "win64"))
    unwind = src_dir / "unwind.c"
    unwind.write_text(abi.unwind_check(src_dir / f"{variant.stem}.asm"))
    # the Win64 object the assemble-only row makes too, and the COFF thunk: once per run (verify/objstore.py)
    rc, out, obj = shared_object(variant, src_dir, workdir, _run)
    if not rc:
        rc, out, thunk = thunk_object(64, src_dir, workdir, coff=True)
    if rc:
        return Row(label, build.name, "FAIL", "nasm failed: " + _first_lines(out), time.monotonic() - t0)
    exe = workdir / "harness.exe"
    rc, out = link_harness(MINGW, [*build.cflags, "-Wall", "-Wextra", "-Werror"], variant, src_dir,
                           [shim, obj, thunk], exe, workdir)
    if rc:
        return Row(label, build.name, "FAIL", "link failed: " + _first_lines(out), time.monotonic() - t0)
    uexe = workdir / "unwind.exe"
    rc, out = _run([MINGW, "-O2", "-static", "-Wall", "-Werror", str(unwind), str(obj), "-o", str(uexe)], workdir)
    if rc:
        return Row(label, build.name, "FAIL", "unwind check link failed: " + _first_lines(out), time.monotonic() - t0)
    (workdir / "vectors.txt").write_bytes(Path(vectors).read_bytes())
    env, why = wine_env(workdir)
    if why:
        return Row(label, build.name, "FAIL", why, time.monotonic() - t0)
    # both programs run, so a row names every failure (the ABI thunk's and the unwinder's)
    ok, out, checks = run_harness([wine(), str(exe), "vectors.txt"], workdir, env=env)
    uok, uout, _ = run_harness([wine(), str(uexe)], workdir, env=env)
    if not (ok and uok):
        why = [_first_lines(out, 4)] * (not ok) + [_first_lines(uout, 4)] * (not uok)
        return Row(label, build.name, "FAIL", " | ".join(why), time.monotonic() - t0, checks)
    points = next((ln.split()[1] for ln in uout.splitlines() if ln.startswith("unwind:")), "?")
    return Row(label, build.name, "PASS", f"{checks} checks (Windows harness under wine; callee-saved registers, "
               f"xmm6-15, stack pointer and DF checked after every call; RtlVirtualUnwind from {points} "
               "prologue, body and epilogue points)", time.monotonic() - t0, checks)

# Runs Win64-ABI code on Linux: the Win64 variant's .asm (verify: rendered with --abi win64;
# check: the user's file) with its unwind tables left out, assembled as elf64, every call made
# through the Win64 ABI thunk.


def check_ms_abi(win: Variant, build: NasmBuild, workdir: Path, vectors: Path) -> Row:
    """``win``: the Win64 variant; its .asm and .h are the files built (sources)."""
    label = win.label()
    why = build.missing()
    if why:
        return Row(label, build.name, "SKIPPED", why)
    t0 = time.monotonic()
    files = sources(win)
    name = f"{win.stem}.asm"
    asm = abi.as_elf64(files[name])
    src_dir = workdir / "src"
    write_files({**files, name: asm}, src_dir)
    # the Win64 calls are made by the ABI thunk (verify/abi_check.py), which checks rbx, rbp, rdi, rsi,
    # r12-r15, xmm6-xmm15, the stack pointer and the direction flag after each
    shim = src_dir / "abi_shim.c"
    shim.write_text(abi.interpose(src_dir / name, f"{win.stem}.h", win.prefix, win.spec.block_bytes, "win64"))
    obj = workdir / "w64.o"
    exe, failed = _assemble_and_link(label, build, win, src_dir, workdir, 64,
                                     [["nasm", "-f", "elf64", "-o", str(obj), str(src_dir / name)]],
                                     [shim, obj], t0)
    if failed:
        return failed
    ok, out, checks = run_harness([str(exe), str(vectors)], workdir)
    if not ok:
        return Row(label, build.name, "FAIL", _first_lines(out, 4), time.monotonic() - t0, checks)
    return Row(label, build.name, "PASS", f"{checks} checks (Win64 calling convention run on Linux; callee-saved registers, "
               "xmm6-15, stack pointer and DF checked after every call; the unwind data is left out here: the "
               "wine row checks it)", time.monotonic() - t0, checks)


X86_BUILDS = (NasmBuild("nasm elf32 + gcc -m32", "elf32", ("-m32", "-O2", "-std=c99", "-static")),)


def required_features(variant: Variant) -> set[str]:
    return get_target(variant.target).features(variant)


def word_size(variant: Variant) -> int:
    """32 for code that runs as a 32-bit program (elf32: link with -m32), 64 otherwise."""
    return get_target(variant.target).recipe.word_bits


def text_bytes(obj: Path) -> int:
    """Size of .text in an ELF object (32 or 64 bit)."""
    import struct
    data = obj.read_bytes()
    is64 = data[4] == 2
    if is64:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    else:
        shoff, = struct.unpack_from("<I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)

    def sh(i):
        o = shoff + i * shentsize
        if is64:
            name, _, _, _, off, size = struct.unpack_from("<IIQQQQ", data, o)
        else:
            name, _, _, _, off, size = struct.unpack_from("<IIIIII", data, o)
        return name, off, size

    _, stroff, _ = sh(shstrndx)
    for i in range(shnum):
        name, _, size = sh(i)
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] == b".text":
            return size
    return 0


def check_nasm(variant: Variant, build: NasmBuild, workdir: Path, vectors: Path) -> Row:
    label = variant.label()
    why = build.missing()
    if why:
        return Row(label, build.name, "SKIPPED", why)
    missing = required_features(variant) - cpu_flags()
    if build.run and missing:
        return Row(label, build.name, "SKIPPED", f"CPU lacks {', '.join(sorted(missing))}")
    t0 = time.monotonic()
    src_dir = workdir / "src"
    write_files(sources(variant), src_dir)
    # the file as rendered, assembled once per run (verify/objstore.py; the constant-time row links it)
    rc, out, obj = shared_object(variant, src_dir, workdir, _run)
    if rc:
        return Row(label, build.name, "FAIL", "nasm failed: " + _first_lines(out), time.monotonic() - t0)
    if not build.run:
        return Row(label, build.name, "ASSEMBLED", f"assembles ({obj.stat().st_size} bytes object; not run here)",
                   time.monotonic() - t0)
    # every call goes through the ABI thunk (verify/abi_check.py): callee-saved registers, stack, DF
    shim = src_dir / "abi_shim.c"
    shim.write_text(abi.interpose(src_dir / f"{variant.stem}.asm", f"{variant.stem}.h", variant.prefix,
                                  variant.spec.block_bytes, "cdecl" if word_size(variant) == 32 else "sysv"))
    # the renamed file, assembled once per run for the run rows of this text (gcc -O2, sanitizers)
    rc, out, obj = shared_object(variant, src_dir, workdir, _run)
    if rc:
        return Row(label, build.name, "FAIL", "nasm failed: " + _first_lines(out), time.monotonic() - t0)
    exe, failed = _assemble_and_link(label, build, variant, src_dir, workdir, word_size(variant), [],
                                     [obj, shim], t0)
    if failed:
        return failed
    prefix, how = (runner_32bit() or ([], "")) if "-m32" in build.cflags else ([], "")
    ok, out, checks = run_harness([*prefix, str(exe), str(vectors)], workdir)
    if not ok:
        return Row(label, build.name, "FAIL", _first_lines(out, 4), time.monotonic() - t0, checks)
    return Row(label, build.name, "PASS" + how, f"{checks} checks" + (" under qemu-i386" if how else "")
               + "; callee-saved registers, stack pointer and DF checked after every call",
               time.monotonic() - t0, checks)


def builds(target, variant: Variant | None = None) -> tuple:
    """The builds of a nasm target: 32-bit cdecl code, or x86-64 (System V run, Win64 forms).
    In `check` (sources.only_given) an x86-64 file gets the rows of its own ABI only: the other
    ABI's form is another file, which check does not render."""
    if target.recipe.word_bits == 32:
        return X86_BUILDS
    if variant is not None and given_files.only_given():
        return WIN64_FILE_BUILDS if variant.get("abi", "sysv") == "win64" else X64_BUILDS
    return X64_BUILDS + WIN64_BUILDS


# --------------------------------------------------------------------------- registration

def win64_form(variant: Variant) -> Variant | None:
    """The Win64 form the win64 rows of an x86-64 variant build (the variant itself when it is
    Win64, else its --abi win64 render), or None where there is none: --isa sse2/avx2/avx512 are
    rendered for System V only (their rows say SKIPPED)."""
    if variant.get("isa", "gpr") != "gpr":
        return None
    return _with_abi(variant, "win64")


def _with_abi(variant: Variant, abi: str) -> Variant:
    """The variant itself when it is of that ABI, else its other-ABI form (default prefix)."""
    if variant.get("abi", "sysv") == abi:
        return variant
    extra = tuple(sorted({**dict(variant.extra), "abi": abi}.items()))
    return Variant(variant.target, variant.spec, variant.options, "", extra)


def check(variant: Variant, build: NasmBuild, workdir: Path, vectors: Path) -> Row:
    """The checker of the nasm targets.  x86-64 variants get the elf64 rows (System V code,
    run) and the win64 rows (the variant's Win64 form: assembled, run on Linux through the ABI
    thunk, run under wine).  The Win64 form of a System V variant is its --abi win64 render
    (sources: verify renders it; check has only the user's file and does not ask for it)."""
    if word_size(variant) == 64:
        abi = variant.get("abi", "sysv")
        if build.fmt in ("win64", "elf64-ms", "win64-wine"):
            win = win64_form(variant)
            if win is None:
                return Row(variant.label(), build.name, "SKIPPED",
                           f"--isa {variant.get('isa')} is rendered for System V only")
            run = check_ms_abi if build.fmt == "elf64-ms" else check_wine if build.fmt == "win64-wine" else check_nasm
            row = run(win, build, workdir, vectors)
            row.variant = variant.label()
            return row
        if abi != "sysv":
            return Row(variant.label(), build.name, "SKIPPED", "Win64 variant: run by the 'win64 ABI via ms_abi' row")
    return check_nasm(variant, build, workdir, vectors)


def thunk_object(bits: int, src_dir: Path, workdir: Path, coff: bool = False) -> tuple[int, str, Path | None]:
    """The ABI thunk (verify/abi_check.py) of ``bits`` assembled: one text for every variant, so
    once per run (verify/objstore.py): (exit status, nasm output, the object or None)."""
    thunk, cmd = abi.thunk_files(bits, src_dir, coff)
    argv = [a for a in cmd if a not in ("-o", str(thunk.with_suffix(".o")))]
    return objstore.build(argv, src_dir, [thunk], _run, workdir, output=thunk.with_suffix(".o").name)


def _assemble_and_link(label, build, variant, src_dir: Path, workdir: Path, bits: int, commands, objects, t0):
    """Assemble (``commands`` and the ABI thunk of ``bits``) and link the C harness with
    ``objects`` and the thunk: (harness path, None), or (None, the FAIL row)."""
    for cmd in commands:
        rc, out = _run(cmd, workdir)
        if rc:
            return None, Row(label, build.name, "FAIL", "nasm failed: " + _first_lines(out), time.monotonic() - t0)
    rc, out, thunk = thunk_object(bits, src_dir, workdir)
    if rc:
        return None, Row(label, build.name, "FAIL", "nasm failed: " + _first_lines(out), time.monotonic() - t0)
    exe = workdir / "harness"
    rc, out = link_harness("gcc", [*build.cflags, "-Wall", "-Wextra", "-Werror"], variant, src_dir,
                           [*objects, thunk], exe, workdir)
    if rc:
        return None, Row(label, build.name, "FAIL", "link failed: " + _first_lines(out), time.monotonic() - t0)
    return exe, None
