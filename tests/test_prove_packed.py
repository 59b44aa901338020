"""threefish-gen prove on NASM --layout packed (nasm-x86 and nasm-x64 --isa sse2): one block in XMM
lane pairs (A = even words, B = odd words), read by gen/prove/nasm.py as two lane terms per XMM
register; every packed v1.3 variant of `--set all` proves equivalent (make verify proves all versions) and edited renders are rejected
naming function, word and line (exit 1), unreadable text is one line (exit 2)."""
import functools
import re

import pytest

from test_prove import _edit, cli, prove
from threefish_gen.gen import targets
from threefish_gen.gen.errors import GenError
from threefish_gen.gen.render import render_variant
from threefish_gen.gen.spec import all_specs, get_spec

# The packed variants `--set all` tries (no allocator run: collection stays cheap).  Set all leaves
# out those the allocator cannot fit (the descriptors' `unallocatable`, data); the one it cannot is
# named here, and the first test checks that this list is exactly set all's packed variants and
# that the allocator rejects the one left out (the allocator runs there, not at import).
CANDIDATES = [v for t in ("nasm-x64", "nasm-x86") for v in targets.get(t).candidates("all", all_specs())
              if v.get("layout") == "packed"]
NOT_ALLOCATABLE = {   # named keeps every value in one register: 16 words do not fit 8 XMMs
    f"tf1024_v{ver}_nasmx86_cdecl_packed_named_fly_full" for ver in ("11", "12", "13")}
PACKED = [v for v in CANDIDATES if v.stem not in NOT_ALLOCATABLE]
# the proofs of every variant: v1.3 here (the other versions differ in constants, not in the
# code's shape); `make verify`'s prove row proves all three versions
PACKED13 = [v for v in PACKED if v.spec.version == "1.3"]


@functools.lru_cache(maxsize=None)
def _source(v):
    return next(text for name, text in render_variant(v).items() if name.endswith(".asm"))


def test_set_all_has_packed_variants_of_both_targets():
    """PACKED is exactly the packed part of `--set all`, and the candidates left out are those the
    allocator cannot fit (it runs on those only)."""
    in_set_all = [v for t in ("nasm-x64", "nasm-x86") for v in targets.variants("all", t, all_specs())
                  if v.get("layout") == "packed"]
    assert in_set_all == PACKED, ([v.stem for v in in_set_all], [v.stem for v in PACKED])
    assert {v.stem for v in CANDIDATES} >= NOT_ALLOCATABLE
    for v in CANDIDATES:
        if v.stem in NOT_ALLOCATABLE:
            with pytest.raises(GenError):
                targets.get(v.target).allocate(v, "encrypt")
    spec = get_spec("1.3", 256)
    assert [v for v in targets.variants("all", "nasm-x86", [spec]) if v.get("layout") == "packed"] == \
        [v for v in PACKED if v.target == "nasm-x86" and v.spec == spec]
    assert {v.target for v in PACKED} == {"nasm-x64", "nasm-x86"}
    assert {v.spec.bits for v in PACKED} == {256, 512, 1024}
    assert {v.get("strategy") for v in PACKED if v.target == "nasm-x86"} == {"belady", "linear-scan", "named"}


@pytest.mark.parametrize("v", PACKED13, ids=lambda v: v.stem)
def test_every_packed_variant_of_set_all_proves_equivalent(v):
    """encrypt, decrypt (the one-block calls into the loop) and both *_blocks loops by induction."""
    rep = prove(v, _source(v))
    assert not rep.failed, "\n".join(rep.lines)
    assert len(rep.lines) == 4 and all(": equivalent (" in line for line in rep.lines), rep.lines
    assert all("2 path(s), 1 loop(s)" in line for line in rep.lines if "_blocks:" in line), rep.lines


# ------------------------------------------------------------------ rejections: edit a packed render

def _x86(bits, **extra):
    t = targets.get("nasm-x86")
    return t.variant(get_spec("1.3", bits), None, abi="cdecl", layout="packed", strategy="belady", **extra)


def _prove_file(tmp_path, v, text, *more):
    f = tmp_path / "edited.asm"
    f.write_text(text)
    return cli("prove", "--target", v.target, "--size", str(v.spec.bits), "--constants", "1.3",
               "--layout", "packed", *more, "--file", str(f))


def _differs(p, func, line, text):
    """func's line names an output word and the edited line as the first divergence."""
    assert p.returncode == 1, p.stdout + p.stderr
    want = rf"{func}: DIFFERS: output word \d+ differs from the description; first divergence at line {line}: {text}"
    assert re.search(want, p.stdout), p.stdout


def test_rejects_one_changed_rotation_count(tmp_path):
    """B0 <<<= (14, 16) of the first round becomes (15, 16): both shifts of the low lane's rotate."""
    v = _x86(256)
    src = _source(v)
    text, line = _edit(src, r"    psllq (xmm\d+), 14", r"    psllq \1, 15")
    text, _ = _edit(text, r"    psrlq (xmm\d+), 50", r"    psrlq \1, 49")
    p = _prove_file(tmp_path, v, text)
    # the rotate by 15 is whole at the por that joins the two shifts (3 lines on)
    _differs(p, f"{v.prefix}encrypt", line + 3, r"por xmm\d+, xmm\d+")
    assert f"{v.prefix}encrypt_blocks: DIFFERS" in p.stdout
    assert f"{v.prefix}decrypt: equivalent" in p.stdout and f"{v.prefix}decrypt_blocks: equivalent" in p.stdout


def test_rejects_one_swapped_register(tmp_path):
    """A0 += B0 of the first round reads another register (the tweak pair (0, t1))."""
    v = _x86(256)
    src = _source(v)
    m = re.search(r"; A0 \+= B0\n    paddq (xmm\d+), (xmm\d+)\n", src[src.index("\n.loop:"):])
    a, b = m.groups()
    other = next(f"xmm{i}" for i in range(8) if f"xmm{i}" not in (a, b))
    text, line = _edit(src, rf"    paddq {a}, {b}", f"    paddq {a}, {other}", after=r"; A0 \+= B0$")
    p = _prove_file(tmp_path, v, text)
    _differs(p, f"{v.prefix}encrypt_blocks", line, f"paddq {a}, {other}")
    assert f"{v.prefix}decrypt_blocks: equivalent" in p.stdout


def test_rejects_one_dropped_spill_reload(tmp_path):
    """Threefish-1024 packed spills (8 state XMMs in 8 registers): the first reload in the encrypt
    loop deleted, so the next instruction reads whatever the register held before."""
    v = _x86(1024, annotate="full")
    text, line = _edit(_source(v), r"    movdqa xmm\d+, \[esp \+ \d+\] +; reload [AB]\d.*", None)
    p = _prove_file(tmp_path, v, text, "--annotate", "full")
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt: DIFFERS: output word \d+ differs from the description; first "
                     rf"divergence at line \d+: ", p.stdout), p.stdout
    assert f"{v.prefix}encrypt_blocks: DIFFERS" in p.stdout
    assert f"{v.prefix}decrypt: equivalent" in p.stdout


def test_rejects_one_dropped_spill(tmp_path):
    """The spill of a state pair deleted: its reload reads a slot nothing wrote on the first block."""
    v = _x86(1024, annotate="full")
    src = _source(v)
    text, line = _edit(src, r"    movdqa \[esp \+ \d+\], xmm\d+ +; spill [AB]\d.*", None)
    slot, value = re.search(r"movdqa \[esp \+ (\d+)\], xmm\d+ +; spill ([AB]\d+)", src.splitlines()[line - 1]).groups()
    p = _prove_file(tmp_path, v, text, "--annotate", "full")
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt_blocks: DIFFERS: line \d+: movdqa xmm\d+, \[esp \+ {slot}\] +; reload "
                     rf"{value} .*: reads memory never written: rsp0/aligned@\d+ - \d+", p.stdout), p.stdout
    assert f"{v.prefix}decrypt_blocks: equivalent" in p.stdout


@pytest.mark.parametrize("imm", ["0x44", "0xee", "0xe4", "0xb1", "0x4f"])
def test_rejects_a_wrong_pshufd_immediate(tmp_path, imm):
    """The lane swap of the 256 permutation (pshufd 0x4e) with another immediate: a lane copied
    (0x44, 0xee), no swap (0xe4), dwords swapped in each lane (0xb1: rotate by 32), dwords mixed
    across the lanes (0x4f)."""
    v = _x86(256)
    text, line = _edit(_source(v), r"    pshufd (xmm\d+), (xmm\d+), 0x4e", rf"    pshufd \1, \2, {imm}")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    m = re.search(rf"{v.prefix}encrypt: DIFFERS: output word \d+ differs from the description; first divergence "
                  r"at line (\d+): (.*)", p.stdout)
    assert m, p.stdout
    if imm in ("0xb1", "0x4f"):     # new lane terms (rotl 32, dword halves): the pshufd itself
        assert int(m[1]) == line and m[2].startswith(f"pshufd xmm"), p.stdout
    else:                           # lanes copied as they are: the first instruction that combines them
        assert line < int(m[1]) <= line + 3 and m[2].startswith("paddq"), p.stdout
    assert f"{v.prefix}decrypt: equivalent" in p.stdout


@pytest.mark.parametrize("n", ["4", "16"])
def test_rejects_a_wrong_byte_shift(tmp_path, n):
    """512: the tweak word's shift into the high lane (pslldq 8) by 4 bytes (a word of bytes of
    two lanes and zero bytes: the pslldq itself) or by 16 (the lane zeroed)."""
    v = _x86(512)
    text, line = _edit(_source(v), r"    pslldq (xmm\d+), 8", rf"    pslldq \1, {n}")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    if n == "4":
        _differs(p, f"{v.prefix}encrypt", line, rf"pslldq xmm\d+, {n}")
    else:
        assert f"{v.prefix}encrypt: DIFFERS: output word" in p.stdout, p.stdout
    assert f"{v.prefix}decrypt: equivalent" in p.stdout


def test_rejects_a_wrong_lane_join(tmp_path):
    """512: a shufpd that picks the other lane of its source (shufpd 1 -> 3)."""
    v = _x86(512)
    text, line = _edit(_source(v), r"    shufpd (xmm\d+), (xmm\d+), 1", r"    shufpd \1, \2, 3")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    # lanes move as they are: the divergence is the first instruction that combines the wrong lane
    m = re.search(rf"{v.prefix}encrypt: DIFFERS: output word \d+ differs from the description; first divergence "
                  r"at line (\d+): paddq", p.stdout)
    assert m and line < int(m[1]) <= line + 10, p.stdout


def test_rejects_an_aligned_access_the_address_does_not_have(tmp_path):
    """movdqa/paddq m128 fault on an address that is not 16-aligned: the block load as movdqa
    (the caller's pointer need not be aligned), a subkey pair stored 8 bytes off in the frame."""
    v = _x86(256)
    src = _source(v)
    text, line = _edit(src, r"    movdqu (xmm\d+), \[ecx\]", r"    movdqa \1, [ecx]")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert (f"{v.prefix}encrypt: DIFFERS: line {line}: movdqa xmm" in p.stdout
            and "the caller's in pointer need not be aligned" in p.stdout), p.stdout
    text, line = _edit(src, r"    movdqa \[esp \+ 48\], (xmm\d+)", r"    movdqa [esp + 40], \1", after=r"; kt\[0\]")
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(rf"{v.prefix}encrypt: DIFFERS: line {line}: movdqa \[esp \+ 40\], xmm\d+: needs a 16-byte "
                     r"aligned address, rsp0/aligned@\d+ - \d+ is 8 mod 16", p.stdout), p.stdout


def test_x64_rejects_a_changed_rotation(tmp_path):
    """The same stream in 64-bit mode (nasm-x64 --isa sse2 --layout packed, System V)."""
    t = targets.get("nasm-x64")
    v = t.variant(get_spec("1.3", 512), None, abi="sysv", isa="sse2", layout="packed", strategy="belady")
    # one shift of a rotate changed: the two halves no longer make a rotate
    text, line = _edit(_source(v), r"    psllq (xmm\d+), (\d+)", lambda m: f"    psllq {m[1]}, {int(m[2]) + 1}")
    p = _prove_file(tmp_path, v, text, "--isa", "sse2")
    _differs(p, f"{v.prefix}encrypt", line, r"psllq xmm\d+, \d+")
    assert f"{v.prefix}decrypt: equivalent" in p.stdout


@pytest.mark.parametrize("bad", ["    pshufd xmm6, xmm3", "    frobnicate xmm1, xmm2", "    paddq xmm5, [esp + foo]"])
def test_unreadable_text_is_one_line_and_exit_2(tmp_path, bad):
    v = _x86(256)
    src = _source(v)
    lines = src.splitlines()
    i = lines.index(".loop:")
    text = "\n".join(lines[:i + 1] + [bad] + lines[i + 1:]) + "\n"
    p = _prove_file(tmp_path, v, text)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr


def test_verify_prove_row_passes_packed(tmp_path):
    """verify's prove row (thorough runs) no longer skips the packed layout."""
    from threefish_gen.verify.prove import BUILD, check
    for v in (_x86(512), next(v for v in PACKED if v.target == "nasm-x64" and v.spec.bits == 256)):
        row = check(v, BUILD, tmp_path)
        assert row.status == "PASS" and row.checks == 4, (row.status, row.detail)
