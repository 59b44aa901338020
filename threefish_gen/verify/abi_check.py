"""ABI checks for the assembly targets: the harness calls every assembly function
through a thunk (NASM, below) that fills all callee-saved registers with canaries, calls,
then checks them, the stack pointer and the direction flag.  Which registers each ABI's
function must preserve is the ABI table's (gen/asm/abi.py ``callee_saved``,
``callee_saved_vector``), the one list the allocator, the printer and this check read:

* System V x86-64: rbx, rbp, r12-r15.
* Win64 (run on Linux: the thunk makes the Win64 call itself): rbx, rbp, rdi, rsi, r12-r15,
  xmm6-xmm15; 32 bytes of shadow space, the 5th argument on the stack.
* cdecl (x86): ebx, esi, edi, ebp.

:func:`interpose` renames the functions in the rendered .asm (``abi_`` + prefix) and writes a C
shim that defines the public names: each calls its function through the thunk and, on a
corrupted register, prints which and aborts (the harness row FAILs).
"""
from __future__ import annotations

import re
from pathlib import Path

from ..gen.asm import abi as abis

# bit in the thunk's result -> what was corrupted (the registers in the ABI table's order)
SYSV = abis.SYSV.callee_saved
WIN64 = abis.WIN64.callee_saved
CDECL = abis.CDECL.callee_saved
XMM = abis.WIN64.callee_saved_vector
SP_BIT, DF_BIT = 1 << 28, 1 << 29


def _canary(i: int) -> int:
    return 0x5CA1AB1E_00C0FFEE ^ (0x0101010101010101 * (i + 1))


def _check_gprs(regs, scratch: str, wide: bool) -> list[str]:
    out = []
    for i, r in enumerate(regs):
        c = _canary(i) if wide else _canary(i) & 0xFFFFFFFF
        out += [f"    mov {scratch}, {c:#x}", f"    cmp {r}, {scratch}", f"    je .ok_{r}",
                f"    or eax, {1 << i:#x}", f".ok_{r}:"]
    return out


def _tail_checks(sp: str, saved: str, flags: str) -> list[str]:
    return [f"    cmp {sp}, [{saved}]", "    je .ok_sp", f"    or eax, {SP_BIT:#x}", ".ok_sp:",
            f"    {flags}", "    pop ecx" if flags == "pushfd" else "    pop rcx", "    test ecx, 0x400",
            "    jz .ok_df", f"    or eax, {DF_BIT:#x}", "    cld", ".ok_df:"]


def thunk_x64(coff: bool = False) -> str:
    """tf_abi_call_sysv / tf_abi_call_win64 (fn, a, b, c, d, n): called from C (System V; on
    Windows declared sysv_abi), return a bit mask of what the called function corrupted (0:
    nothing).  ``coff``: for nasm -f win64."""
    sysv_set = [f"    mov {r}, {_canary(i):#x}" for i, r in enumerate(SYSV)]
    win_set = [f"    mov {r}, {_canary(i):#x}" for i, r in enumerate(WIN64)]
    xmm_set = [f"    movdqu {x}, [rel xmm_canary + {16 * i}]" for i, x in enumerate(XMM)]
    xmm_chk = []
    for i, x in enumerate(XMM):
        xmm_chk += [f"    movdqu xmm0, [rel xmm_canary + {16 * i}]", f"    pcmpeqb xmm0, {x}",
                    "    pmovmskb ecx, xmm0", "    cmp ecx, 0xffff", f"    je .ok_{x}",
                    f"    or eax, {1 << (len(WIN64) + i):#x}", f".ok_{x}:"]
    lines = ["bits 64", "default rel", "section .bss", "saved_rsp: resq 1",
             "section .rdata rdata align=16" if coff else "section .rodata", "align 16",
             "xmm_canary:"]
    lines += [f"    dq {_canary(20 + i):#x}, {_canary(40 + i):#x}" for i in range(len(XMM))]
    lines += ["section .text", "global tf_abi_call_sysv:function", "global tf_abi_call_win64:function", "",
              "tf_abi_call_sysv:", *[f"    push {r}" for r in SYSV], "    sub rsp, 8",
              "    mov [rel saved_rsp], rsp", "    mov rax, rdi", "    mov rdi, rsi", "    mov rsi, rdx",
              "    mov rdx, rcx", "    mov rcx, r8", "    mov r8, r9", *sysv_set, "    cld", "    call rax",
              "    xor eax, eax", *_check_gprs(SYSV, "rcx", True),
              *_tail_checks("rsp", "rel saved_rsp", "pushfq"),
              "    mov rsp, [rel saved_rsp]", "    add rsp, 8", *[f"    pop {r}" for r in reversed(SYSV)],
              "    ret", "",
              # Win64 call: rcx, rdx, r8, r9, 5th argument at [rsp + 32] above 32 bytes of shadow space
              "tf_abi_call_win64:", *[f"    push {r}" for r in SYSV], "    sub rsp, 56",
              "    mov [rel saved_rsp], rsp", "    mov rax, rdi", "    mov [rsp + 32], r9", "    mov r10, rcx",
              "    mov rcx, rsi", "    mov r9, r8", "    mov r8, r10", *win_set, *xmm_set, "    cld",
              "    call rax", "    xor eax, eax", *[ln.replace(".ok_", ".w_ok_") for ln in _check_gprs(WIN64, "rcx", True)],
              *[ln.replace(".ok_", ".w_ok_") for ln in xmm_chk],
              *[ln.replace(".ok_", ".w_ok_") for ln in _tail_checks("rsp", "rel saved_rsp", "pushfq")],
              "    mov rsp, [rel saved_rsp]", "    add rsp, 56", *[f"    pop {r}" for r in reversed(SYSV)],
              "    ret", "", "section .note.GNU-stack noalloc noexec nowrite progbits", ""]
    text = "\n".join(lines)
    if coff:
        text = text.replace(":function", "").replace("section .note.GNU-stack noalloc noexec nowrite progbits\n", "")
    return text


def thunk_x86() -> str:
    """tf_abi_call_cdecl (fn, a, b, c, d, n), cdecl."""
    lines = ["bits 32", "section .bss", "saved_esp: resd 1", "args_esp: resd 1", "section .text",
             "global tf_abi_call_cdecl:function", "", "tf_abi_call_cdecl:",
             *[f"    push {r}" for r in CDECL], "    mov [saved_esp], esp", "    mov eax, [esp + 20]",
             *["    push dword [esp + 40]"] * 5,         # n, d, c, b, a
             "    mov [args_esp], esp", *[f"    mov {r}, {_canary(i) & 0xFFFFFFFF:#x}" for i, r in enumerate(CDECL)],
             "    cld", "    call eax", "    xor eax, eax", *_check_gprs(CDECL, "ecx", False),
             *_tail_checks("esp", "args_esp", "pushfd"),
             "    mov esp, [saved_esp]", *[f"    pop {r}" for r in reversed(CDECL)], "    ret", "",
             "section .note.GNU-stack noalloc noexec nowrite progbits", ""]
    return "\n".join(lines)


# What both shims share: the thunk's calling convention, its declaration, the register names and
# the report of a violation (the bits the thunk returns: one per register, the stack pointer, the
# direction flag).
_CHECK = """#if defined(_WIN64)
#define TF_ABI_THUNK __attribute__((sysv_abi))   /* the thunk is entered the System V way */
#else
#define TF_ABI_THUNK
#endif
TF_ABI_THUNK int tf_abi_call_{abi}(void *fn, const void *a, const void *b, const void *c, void *d, size_t n);
static const char *const tf_abi_names[] = {{ {names} }};
static void tf_abi_check(int bad, const char *fn)
{{
    int i;
    if (!bad)
        return;
    fprintf(stderr, "ABI violation ({abi}) in %s:", fn);
    for (i = 0; i < {nregs}; i++)
        if (bad & (1 << i))
            fprintf(stderr, " %s corrupted", tf_abi_names[i]);
    if (bad & {sp:#x})
        fprintf(stderr, " stack pointer changed");
    if (bad & {df:#x})
        fprintf(stderr, " direction flag set");
    fprintf(stderr, "\\n");
    abort();
}}
"""

_INCLUDES = """#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
"""

SHIM = ("/* ABI check shim (verify/abi_check.py): the public names call the assembly through the thunk. */\n"
        + _INCLUDES + '#include "{header}"\n' + _CHECK + "{functions}\n")


def _check_fields(abi: str) -> dict:
    regs = abis.ABIS[abi].must_save()
    return dict(abi=abi, names=", ".join(f'"{r}"' for r in regs), nregs=len(regs), sp=SP_BIT, df=DF_BIT)


def interpose(asm: Path, header: str, prefix: str, nb: int, abi: str, asm_prefix: str | None = None) -> str:
    """Rename the functions of the .asm file (``asm_prefix``, default ``prefix``, becomes ``abi_`` +
    prefix) and return the C shim that defines the public names (``prefix``) through the thunk
    of ``abi`` (sysv, win64, cdecl)."""
    asm.write_text(asm.read_text().replace(asm_prefix or prefix, "abi_" + prefix))
    fns = []
    for d in ("encrypt", "decrypt"):
        fns.append(f"void abi_{prefix}{d}(void);\nvoid abi_{prefix}{d}_blocks(void);")
        fns.append(f"void {prefix}{d}(const uint8_t key[{nb}], const uint8_t tweak[16], const uint8_t in[{nb}], "
                   f"uint8_t out[{nb}])\n{{\n    tf_abi_check(tf_abi_call_{abi}((void *)abi_{prefix}{d}, key, tweak, "
                   f"in, out, 0), \"{prefix}{d}\");\n}}")
        fns.append(f"void {prefix}{d}_blocks(const uint8_t key[{nb}], const uint8_t *tweaks, const uint8_t *in, "
                   f"uint8_t *out, size_t n)\n{{\n    tf_abi_check(tf_abi_call_{abi}((void *)abi_{prefix}{d}_blocks, "
                   f"key, tweaks, in, out, n), \"{prefix}{d}_blocks\");\n}}")
    return SHIM.format(header=header, functions="\n".join(fns), **_check_fields(abi))


UBI_SHIM = ("/* ABI check shim (verify/abi_check.py): the Skein driver's UBI loop called through the thunk. */\n"
            + _INCLUDES + _CHECK + """#if {attr_cond} && !defined(_WIN32) && (defined(__GNUC__) || defined(__clang__))
#define TF_ABI_CALLEE __attribute__(({attr}))   /* as the driver declares it (the ms_abi build) */
#else
#define TF_ABI_CALLEE
#endif
extern const unsigned char abi_{name}[];   /* the loop's entry (an object: -Wpedantic) */
TF_ABI_CALLEE void {name}(uint8_t *h, const uint8_t *tweaks, const uint8_t *blocks, uint8_t *unused, size_t n);
TF_ABI_CALLEE void {name}(uint8_t *h, const uint8_t *tweaks, const uint8_t *blocks, uint8_t *unused, size_t n)
{{
    tf_abi_check(tf_abi_call_{abi}((void *)abi_{name}, h, tweaks, blocks, unused, n), "{name}");
}}
""")


def interpose_ubi(asm: Path, name: str, abi: str, attr: str = "") -> str:
    """The Skein form of :func:`interpose`: rename the UBI loop ``name`` of the .asm file (``abi_`` +
    name) and return the C shim that defines ``name`` (declared as the Skein driver declares it:
    ``attr``, e.g. ms_abi, off Windows) through the thunk of ``abi``."""
    asm.write_text(asm.read_text().replace(name, "abi_" + name))
    return UBI_SHIM.format(name=name, attr=attr or "none", attr_cond=int(bool(attr)), **_check_fields(abi))


def thunk_files(word_bits: int, workdir: Path, coff: bool = False) -> tuple[Path, list[str]]:
    """Write the thunk source; (its .asm, the nasm command that assembles it to .o beside it)."""
    src = workdir / f"abi_thunk{word_bits}{'w' if coff else ''}.asm"
    src.write_text(thunk_x64(coff) if word_bits == 64 else thunk_x86())
    fmt = "win64" if coff else "elf64" if word_bits == 64 else "elf32"
    return src, ["nasm", "-f", fmt, "-o", str(src.with_suffix(".o")), str(src)]


# ----------------------------------------------------------------------------- Win64 unwind data

def as_elf64(win64_asm: str) -> str:
    """A Win64 .asm file (the user's) as Linux assembles it for the ms_abi rows: its unwind data
    (.pdata/.xdata, COFF only) left out, the ELF non-executable-stack note added."""
    return win64_asm.split("; Win64 unwind data")[0] + "\nsection .note.GNU-stack noalloc noexec nowrite progbits\n"


_GPR = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")


_LOW_GPR = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi")


def unwind_points(asm_text: str) -> list[tuple[str, str, int, int, list[str]]]:
    """Every point of every function with unwind info where the unwinder must find the caller
    (read from the code, not from its unwind data): (function, label, bytes before the label,
    bytes allocated, registers pushed).  Prologue points (the entry, after each push, the end of
    the prologue), body points (``.done``, ``.wipe``: the whole frame) and epilogue points,
    counted back from ``.end`` (just after ``ret``): ``add rsp`` (the whole frame still), after
    it, after each ``pop``, and the ``ret`` itself (nothing left: the return address on top).
    An epilogue the Windows unwinder does not recognise (anything but ``add rsp``/``pop``/``ret``
    after the frame is released) fails its points."""
    points: list = []
    fn, pushes, alloc, in_prologue, tail = None, [], 0, False, []
    for ln in asm_text.splitlines():
        m = re.match(r"^(\w+):", ln)
        if m:
            fn, pushes, alloc, in_prologue, tail = m.group(1), [], 0, True, []
            points.append((fn, fn, 0, 0, []))
            continue
        if fn is None:
            continue
        s = ln.split(";")[0].strip()
        if in_prologue:
            if s.startswith("push "):
                pushes.append(s.split()[1])
            elif re.match(r"^sub rsp, \d+$", s):
                alloc = int(s.split()[2])
            elif s.startswith(".pushed_"):
                points.append((fn, f"{fn}{s[:-1]}", 0, 0, list(pushes)))
            elif s == ".prolog_end:":
                points.append((fn, f"{fn}.prolog_end", 0, alloc, list(pushes)))
                in_prologue = False
            elif s == ".entry:":
                points[-1] = (fn, fn, 0, 0, [])
            continue
        if s in (".done:", ".wipe:"):
            points.append((fn, f"{fn}{s[:-1]}", 0, alloc, list(pushes)))
        elif s == ".end:" and tail and tail[-1] == "ret":
            points.extend(_epilogue(fn, tail, alloc, pushes))
        if s and not s.endswith(":"):
            tail = (tail + [s])[-(len(pushes) + 3):]
    with_info = {p[0] for p in points if p[1].endswith(".prolog_end")}
    return [p for p in points if p[0] in with_info]


def _epilogue(fn: str, tail: list[str], alloc: int, pushes: list[str]) -> list:
    """Epilogue points of ``fn`` from its last instructions (``tail``, ending in ``ret``), as
    byte offsets back from ``fn.end``; [] (so the check fails on it) unless the instructions
    are the ones the code's prologue asks for: ``add rsp, alloc``, the pops in reverse, ``ret``."""
    want = ([f"add rsp, {alloc}"] if alloc else []) + [f"pop {r}" for r in reversed(pushes)] + ["ret"]
    if tail[-len(want):] != want:
        return [(fn, f"{fn}.end", 1, -1, [])]       # unreadable epilogue: a point that cannot pass
    back = 1
    out = [(fn, f"{fn}.end", back, 0, [])]                      # at ret: the return address on top
    for i, r in enumerate(pushes):          # at pop r (the last pop restores the first push)
        back += 1 if r in _LOW_GPR else 2
        out.append((fn, f"{fn}.end", back, 0, pushes[:i + 1]))
    if alloc:
        back += 4 if alloc < 128 else 7
        out.append((fn, f"{fn}.end", back, alloc, list(pushes)))  # at add rsp: the whole frame
    return out


UNWIND_C = r"""/* Win64 unwind data check (verify/abi_check.py): RtlVirtualUnwind from every prologue, body and
   epilogue point. */
#include <windows.h>
#include <stdio.h>
#include <string.h>
%(externs)s
struct point { const char *name; const unsigned char *label; int back; int alloc; int npush; const char *regs[8]; };
static const struct point points[] = {
%(points)s
};
static DWORD64 fake[512];
static DWORD64 reg(const CONTEXT *c, const char *r)
{
%(regs)s
    return 0;
}
int main(void)
{
    int bad = 0;
    size_t i;
    for (i = 0; i < sizeof points / sizeof points[0]; i++) {
        const struct point *p = &points[i];
        DWORD64 base = 0, frame = 0, *s = &fake[64];
        PVOID data = NULL;
        KNONVOLATILE_CONTEXT_POINTERS nv;
        CONTEXT c;
        int j, k = (p->alloc + 8 * p->npush) / 8;
        const unsigned char *at = p->label - p->back;
        PRUNTIME_FUNCTION f = RtlLookupFunctionEntry((DWORD64)at, &base, NULL);
        if (p->alloc < 0) {
            printf("unwind: %%s: the epilogue is not add rsp / pop / ret as its prologue asks\n", p->name);
            bad++;
            continue;
        }
        if (!f) {
            printf("unwind: %%s: no .pdata entry\n", p->name);
            bad++;
            continue;
        }
        for (j = 0; j < 512; j++)
            fake[j] = 0xFACE000000000000ull + (DWORD64)j;
        memset(&c, 0, sizeof c);
        memset(&nv, 0, sizeof nv);
        c.Rsp = (DWORD64)s;
        c.Rip = (DWORD64)at;
        RtlVirtualUnwind(UNW_FLAG_NHANDLER, base, (DWORD64)at, f, &c, &data, &frame, &nv);
        if (c.Rip != s[k] || c.Rsp != (DWORD64)&s[k + 1]) {
            printf("unwind: %%s-%%d: return address or stack pointer wrong\n", p->name, p->back);
            bad++;
        }
        for (j = 0; j < p->npush; j++)
            if (reg(&c, p->regs[j]) != s[p->alloc / 8 + p->npush - 1 - j]) {
                printf("unwind: %%s-%%d: %%s not restored\n", p->name, p->back, p->regs[j]);
                bad++;
            }
    }
    printf("unwind: %%u prologue, body and epilogue points, %%d wrong\n", (unsigned)(sizeof points / sizeof points[0]), bad);
    return bad != 0;
}
"""


def unwind_check(asm: Path) -> str:
    """Export the prologue labels of the Win64 .asm (appended ``global`` lines) and return the C
    program that unwinds from each of them (expected: what the prologue code itself did)."""
    text = asm.read_text()
    points = unwind_points(text)
    labels = sorted({lab for _, lab, _, _, _ in points})
    asm.write_text(text + "\nsection .text\n" + "".join(f"global {lab}\n" for lab in labels))
    cname = {lab: "p_" + re.sub(r"\W", "_", lab) for lab in labels}
    externs = "\n".join(f'extern const unsigned char {cname[lab]}[] __asm__("{lab}");' for lab in labels)
    rows = []
    for fn, lab, back, alloc, pushes in points:
        regs = ", ".join(f'"{r}"' for r in pushes) or "0"
        rows.append(f'    {{ "{lab}", {cname[lab]}, {back}, {alloc}, {len(pushes)}, {{ {regs} }} }},')
    regs = "\n".join(f'    if (!strcmp(r, "{r}")) return c->{r.capitalize()};' for r in _GPR if r != "rsp")
    return UNWIND_C % dict(externs=externs, points="\n".join(rows), regs=regs)
