"""The SIMD C target ``c-simd`` (``render --target c-simd --isa ISA --layout L``) from the
laid-out programs to its files: each function printed by printer.py from the layout IR programs
the target's layout pass made (gen/targets/c_simd.py ``layout_pass``: {(shape, layout, lanes):
VProgram}), and the files filled from templates/c_simd/.

Target options (``Variant.extra``):

* ``isa``: sse2 | avx | avx2 | avx512 | neon (AArch64, gen/isa/neon.py) -- one variant; ``auto`` -- the dispatcher, one file
  holding the scalar code and the recommended SIMD paths (``RECOMMENDED`` in
  gen/targets/c_simd.py) for the size and version, choosing at run time (cpuid + xgetbv, ``THREEFISH_GEN_ISA``).
* ``layout``: ``lanes`` (L blocks word-sliced), ``hybrid`` (lanes plus
  ``interleave`` scalar blocks in the same loop, using the integer and vector
  pipes together); single-block calls of these use the scalar body of the same
  description.  ``packed``: single-block calls spread one block over the lanes
  (layouts/packed.py lowers it to the layout IR: A = even, B = odd words of the MIX
  pairs, in 128-, 256- or 512-bit vectors, at most half a block each); its ``*_blocks`` run the lanes
  bulk loop of the same ISA and hand tails to the packed single block.  The
  dispatcher's single blocks are scalar, except on the CPUs of its single-block table
  (gen/cpu_rules.py: profiles whose chained winner is packed), which take that packed kernel.
"""
from __future__ import annotations

from dataclasses import replace

from ...isa.neon import ISAS as NEON_ISAS
from ...isa.x86 import CPUID_C_CONDITION, FRESH_C
from ...isa.x86 import ISAS as X86_ISAS
from ...layouts import ir
from ...variant import Variant
from .. import Line, comment_gap, render_template
from ..c import CPrinter, close_line, decl, indent, open_line, section, wipe_bounds, without_notes
from .printer import (LanesPrinter, PackedPrinter, cpu_level_lines, interleave_code, round_chunks,
                      vector_width)

LAYOUTS = ("lanes", "hybrid", "packed")
ENV_VAR = "THREEFISH_GEN_ISA"
# Every ISA of the target, by instruction family: x86 (gen/isa/x86.py), then NEON
# (gen/isa/neon.py).  The dispatcher compiles one family's paths per architecture
# (GUARDS: the C condition under which a family's regions are compiled).
ISAS = {**X86_ISAS, **NEON_ISAS}
GUARDS = {"x86": "defined(THREEFISH_GEN_SIMDE) || defined(__x86_64__) || defined(__i386__)",
          "neon": "defined(__aarch64__) && defined(__ARM_NEON)"}
# The macro a file defines where GUARDS[family] holds (templates: #if GUARDS -> #define MACRO 1).
FAMILY_MACROS = {"x86": "THREEFISH_GEN_X86", "neon": "THREEFISH_GEN_NEON"}


def family_name(isa) -> str:
    return "neon" if isa.name in NEON_ISAS else "x86"


def isa_note(isa) -> str:
    if family_name(isa) == "neon":
        return f"isa {isa.name} (AArch64 Advanced SIMD: architectural, no run-time check, no target attribute)"
    return f"isa {isa.name} ({', '.join(isa.features)}; gcc/clang target \"{isa.target}\")"


def lanes_of(isa_name: str) -> int:
    return ISAS[isa_name].bits // 64


# --------------------------------------------------------------------------- functions

PTRS_ONE = {"key": "key", "tweak": "tweak", "in": "in", "out": "out"}
PTRS_MANY = {"key": "key", "tweak": "tweaks", "in": "in", "out": "out"}


def laid_out(laid: dict, direction: str, options, blocks: int, layout: str = "scalar", lanes: int = 1) -> ir.VProgram:
    """The layout IR program of one description program (``direction``, ``options``, ``blocks``)
    in ``layout`` with ``lanes`` lanes, as the layout pass made it (``laid``)."""
    return laid[((direction, options, blocks), layout, lanes)]


def scalar_single(laid, prefix: str, helpers: str, spec, options, direction: str) -> dict:
    vp = laid_out(laid, direction, options, 1)
    pr = CPrinter(helpers, PTRS_ONE)
    setup, body = section(pr, vp, "setup"), section(pr, vp)
    lines = setup["decl"] + setup["code"] + [open_line("{")] + indent(body["decl"] + body["code"]) + [close_line()]
    return dict(name=f"{prefix}{direction}", kind="one", lines=lines, static=False, helpers=pr.used)


def packed_single(laid, prefix: str, helpers: str, spec, options, direction: str, isa_name: str,
                  stats: dict | None = None) -> dict:
    """The single-block function of layout packed (one block spread over the lanes; its options
    are --keys fly --unroll full, checked when the variant was made)."""
    one = replace(options, interleave=1)
    pr = PackedPrinter(ISAS[isa_name], spec, helpers)
    lines = pr.function_lines(laid_out(laid, direction, one, 1), laid_out(laid, direction, one, 1, "packed", pr.L))
    if stats is not None:
        stats.update(pr.cost)
        stats["vector bits"] = pr.w.bits
        stats["vectors"] = 2 * pr.G
    # gcc's and clang's bounds of the vector kernels (gen/printers/c.py, the note above SLACK) were
    # measured on x86 (-fstack-usage); AArch64 keeps the bound of every compiler.  ``hoisted``:
    # bytes of the distinct subkey vectors (clang's bound)
    return dict(name=f"{prefix}{direction}", kind="one", lines=lines, static=False, helpers=pr.scalar.used,
                vector=True, native_bounds=family_name(ISAS[isa_name]) == "x86",
                hoisted=len(pr.subkey_vectors) * pr.w.bits // 8)


def blocks_function(laid, prefix: str, helpers: str, spec, options, direction: str,
                    isa_name: str | None, layout: str, stats: dict | None = None, tail: str | None = None, *,
                    annotate: str) -> dict:
    """encrypt_blocks / decrypt_blocks: vector passes, then one block at a time (scalar: the
    function ``tail``, by default the file's public single-block function); ``annotate``: the
    --annotate level its comments after code are printed at."""
    one_w1 = laid_out(laid, direction, options, 1)      # the one-block program at W = 1: the setup and the tail
    pr = CPrinter(helpers, PTRS_MANY)
    used = pr.used                     # word helpers the scalar parts call (the file defines those)
    setup = section(pr, one_w1, "setup")
    setup_vals = set(one_w1.setup_values)
    lines = setup["decl"] + [f"if (n == 0){comment_gap(9, annotate)}/* before any load: n = 0 touches no pointer */",
                             "    return;"] + setup["code"]
    nb = spec.block_bytes
    fresh = False                      # a vector loop reads its rings through fresh pointers
    if isa_name is not None:
        isa = ISAS[isa_name]
        L = isa.bits // 64
        w = vector_width(isa)
        vps = []
        if layout == "hybrid":
            vps.append((laid_out(laid, direction, replace(options, interleave=1), 1, "lanes", L), options.interleave))
        elif options.interleave > 1:
            vps.append((laid_out(laid, direction, options, options.interleave, "lanes", L), 0))
        vps.append((laid_out(laid, direction, options, 1, "lanes", L), 0))
        loops, consts, bvals, barrs = [], {}, {}, {}
        for vp, scalar_blocks in vps:
            vpr = LanesPrinter(isa, vp, helpers, nb, fresh_ok=True)
            fresh = fresh or bool(vpr.fresh)
            decls = vpr.declarations()
            for op in vp.prologue:       # key words broadcast once per call, shared by the loops
                is_value, name = ir.broadcast_dst(op)
                if not is_value and name in vpr.splat:
                    continue             # a ring read by broadcast loads (LanesPrinter.splat)
                (bvals if is_value else barrs).setdefault(name, op)
            per = vp.blocks
            if scalar_blocks:
                svp = laid_out(laid, direction, replace(options, interleave=scalar_blocks), scalar_blocks)
                sdeclared = set(svp.setup_values) | set(svp.values)
                off = per * nb
                spr = CPrinter(helpers, {"key": "key", "tweak": f"(tweaks + {16 * per})",
                                         "in": f"(in + {off})", "out": f"(out + {off})"})
                decls = decls + section(spr, svp, "body", setup_vals)["decl"]
                # a round of the vector blocks, then the same round of the scalar ones
                code = interleave_code([vpr.lines(c) for c in round_chunks(vp.body, ir.is_note)],
                                       [spr.lines(c, sdeclared) for c in round_chunks(svp.body, ir.is_note)])
                used |= spr.used
                per += scalar_blocks
            else:
                code = vpr.lines(vp.body)
            consts.update(vpr.consts)        # the rotations' constants (filled as it prints)
            if stats is not None and not stats:
                stats.update({k: v / vp.blocks for k, v in vpr.cost.items()})
                stats["blocks per pass"] = per
            loops.append((per, decls, code))
        if stats is not None:
            stats["min blocks"] = min(p for p, _, _ in loops)
        lines.append(open_line(f"if (n >= {min(p for p, _, _ in loops)}) {{"))
        inner = vpr.prologue(list(bvals.values()) + list(barrs.values()))
        for name, expr in sorted(consts.items()):
            inner.append(decl(w.T, [(name, 1)], f"const {w.T} {name} = {expr};", expr, constant=True))
        for per, decls, code in loops:
            inner.append(open_line(f"for (; n >= {per}; n -= {per}, tweaks += {16 * per}, in += {nb * per}, "
                                   f"out += {nb * per}) {{"))
            inner += indent(decls + code)
            inner.append(close_line())
        lines += indent(inner) + [close_line()]
    lines.append(open_line(f"for (; n > 0; n--, tweaks += 16, in += {nb}, out += {nb}) {{"))
    if isa_name is None:
        tail = section(pr, one_w1, "body", setup_vals)
        lines += indent(tail["decl"] + tail["code"]) + [close_line()]
    else:   # the tail: the single-block function (scalar body of the same description)
        tail = tail or f"{helpers}{direction}"
        lines += [Line(f"    {tail}(key, tweaks, in, out);", calls=[(tail, 4)]), close_line()]
    return dict(name=f"{prefix}{direction}_blocks", kind="blocks", lines=lines, static=False, helpers=used,
                fresh=fresh)


# The dispatcher's scalar blocks path calls the single-block kernel per block (scalar_blocks) from
# this block size up, and keeps a kernel of its own (the key schedule once per call) below it.
# Measured (issue 30; Zen 3, AVX2, gcc 12 -O2, 1 MiB of blocks under THREEFISH_GEN_ISA=scalar, best
# of 41 x 15 alternated rounds): Threefish-1024 1.000x, Threefish-512 1.006x, Threefish-256 1.050x
# (4 key words' schedule and a call per 32-byte block), so 256 keeps its own.
SHARED_SCALAR_MIN_BYTES = 64


def scalar_blocks(prefix: str, spec, direction: str, kernel: str) -> dict:
    """The dispatcher's scalar encrypt_blocks / decrypt_blocks: one block at a time through the
    single-block kernel ``kernel`` (the work function of encrypt / decrypt), so the scalar kernel
    is emitted once per direction, not twice (issue 30); each block redoes the key schedule (Nw
    loads and xors, a few percent of a scalar block; the SIMD paths, which take n blocks where the
    CPU has them, are not touched).  n = 0 touches no pointer (the loop does not run)."""
    nb = spec.block_bytes
    lines = [open_line(f"for (; n > 0; n--, tweaks += 16, in += {nb}, out += {nb}) {{"),
             Line(f"    {kernel}(key, tweaks, in, out);", calls=[(kernel, 4)]), close_line()]
    return dict(name=f"{prefix}scalar_{direction}_blocks", kind="blocks", lines=lines, static=False,
                helpers=set(), kernel=kernel)


def op_counts(v: Variant, laid, subs=()) -> dict[str, float]:
    """Vector operations per block of the bulk encrypt loop, by class (for bench reports);
    the dispatcher reports its highest path's counts (``subs``: its paths)."""
    if v.get("isa") == "auto":
        if not subs:
            return {}
        v = max(subs, key=lambda s: ISAS[s.get("isa")].level)
    stats: dict = {}
    blocks_function(laid, v.prefix, v.prefix, v.spec, v.options, "encrypt", v.get("isa"),
                    v.get("layout", "lanes"), stats, annotate=_annotate(v))
    return stats


# --------------------------------------------------------------------------- targets

def _annotate(v: Variant) -> str:
    return v.get("annotate", "brief")      # the default of --annotate (gen/targets/base.py ANNOTATE_OPTION)


def _ctx(v: Variant, notes, regions, dispatch=None, simde_headers=(), need=None):
    if _annotate(v) == "none":      # the functions without the description's notes
        for r in regions:
            for f in r["functions"]:
                f["lines"] = without_notes(f["lines"])
    neon = any(r["isa"] is not None and family_name(r["isa"]) == "neon" for r in regions)
    # the word helpers a function's scalar statements call (CPrinter.used): a file defines only
    # those (packed: every store is a vector store, so no store64)
    used = set().union(*(f["helpers"] for r in regions for f in r["functions"]))
    return dict(spec=v.spec, prefix=v.prefix, command=v.command(), notes=notes, annotate=_annotate(v),
                header=f"{v.stem}.h", guard=f"{v.stem.upper()}_H", regions=regions,
                dispatch=dispatch, simde_headers=list(simde_headers), env_var=ENV_VAR, wipe=v.get("wipe", True), scoped_wipe=True, kernel_wipe=True,
                packed_wipe=any(f.get("vector") for r in regions for f in r["functions"]),
                # the x86 dispatcher's optimized wipe stores 32 bytes a step from this level (AVX) up
                # (templates/c/wipe.j2; the level in use, which $THREEFISH_GEN_ISA caps)
                wide_wipe=X86_ISAS["avx"].level if dispatch and any(g["family"] == "x86" for g in dispatch["groups"]) else None,
                burn=max([_burn(f) for r in regions for f in r["functions"]] + [1024]),
                burn_opt=max(f["burn"]["opt"] for r in regions for f in r["functions"]),
                load64="load64" in used, store64="store64" in used, neon=neon, guards=GUARDS,
                # a lanes loop reads its rings through fresh pointers (printer.py FRESH_ISAS): the
                # macro's bodies, else None
                fresh=FRESH_C if any(f.get("fresh") for r in regions for f in r["functions"]) else None,
                # the x86 cpu_level(): its body (gen/isa/x86.py's cpuid table), its top level and
                # where cpuid can be asked
                cpu_level=cpu_level_lines(X86_ISAS.values(), _annotate(v)), cpu_top=max(i.level for i in X86_ISAS.values()),
                cpuid_condition=CPUID_C_CONDITION,
                # a single-ISA file's cpu_supported(): NEON is architectural on AArch64 (nothing to
                # detect), an x86 ISA's level is found by cpuid
                need=need and dict(architectural=family_name(need) == "neon", level=need.level, name=need.name))


def _burn(f: dict) -> int:
    """Bytes the wipe after function ``f`` clears per build (gen/printers/c.py wipe_bounds), recorded
    on it; the largest (the array of compilers other than gcc and clang)."""
    # one-block kernels: scalar, or vector (packed; gcc's and clang's bounds on x86 only):
    # gen/printers/c.py, the note above SLACK (tests/test_trust.py test_optimized_wipe_covers_the_frames,
    # test_clang_wipe_covers_the_packed_frames)
    kernel = ("vector" if f.get("vector") else "scalar") if f["kind"] == "one" else None
    f["burn"] = wipe_bounds(f["lines"], f["kind"] == "one", kernel, f.get("hoisted", 0))
    if not f.get("native_bounds"):
        f["burn"].pop("opt_gcc", None)
        f["burn"].pop("opt_clang", None)
    return f["burn"]["other"]


def _build_note(isa) -> str:
    if family_name(isa) == "neon":
        return "build for AArch64 with any gcc/clang flags (arm_neon.h; words are little-endian in memory)"
    return "build natively with any gcc/clang flags; define THREEFISH_GEN_SIMDE to build against SIMDe (emulated)"


def _render_one(v: Variant, laid) -> dict[str, str]:
    isa, layout = v.get("isa"), v.get("layout", "lanes")
    if layout == "packed":
        return _render_packed(v, laid)
    o = v.options
    stats: dict = {}
    public = [scalar_single(laid, v.prefix, v.prefix, v.spec, o, d) for d in ("encrypt", "decrypt")]
    blocks = [blocks_function(laid, v.prefix, v.prefix, v.spec, o, d, isa, layout, stats if d == "encrypt" else None,
                              annotate=_annotate(v)) for d in ("encrypt", "decrypt")]
    L = lanes_of(isa)
    notes = [f"{isa_note(ISAS[isa])}, "
             f"layout {layout}: {L} blocks word-sliced in {ISAS[isa].bits}-bit vectors"
             + (f" plus {o.interleave} scalar block(s) per pass" if layout == "hybrid" else
                (f", {o.interleave} vector groups per pass" if o.interleave > 1 else "")),
             f"single-block calls and tails of fewer than {stats['blocks per pass']} blocks: "
             f"scalar body of the same description; keys {o.keys}, unroll {o.unroll}",
             "vector ops per block (encrypt, bulk): " + ", ".join(
                 f"{k} {n:g}" for k, n in sorted(stats.items()) if "blocks" not in k),
             _build_note(ISAS[isa])]
    regions = [dict(isa=None, functions=public), dict(isa=ISAS[isa], functions=blocks)]
    ctx = _ctx(v, notes, regions, simde_headers=[ISAS[isa].simde], need=ISAS[isa])
    return {f"{v.stem}.c": render_template("c_simd/threefish.c.j2", **ctx),
            f"{v.stem}.h": render_template("c/threefish.h.j2", **ctx)}


def _render_packed(v: Variant, laid) -> dict[str, str]:
    isa, o = v.get("isa"), v.options
    one: dict = {}
    bulk: dict = {}
    public = [packed_single(laid, v.prefix, v.prefix, v.spec, o, d, isa, one if d == "encrypt" else None)
              for d in ("encrypt", "decrypt")]
    blocks = [blocks_function(laid, v.prefix, v.prefix, v.spec, o, d, isa, "lanes", bulk if d == "encrypt" else None,
                              annotate=_annotate(v)) for d in ("encrypt", "decrypt")]
    bits, nvec = one.pop("vector bits"), one.pop("vectors")
    notes = [f"{isa_note(ISAS[isa])}, "
             f"layout packed: encrypt/decrypt spread one block over {nvec} {bits}-bit vectors "
             f"(A = even, B = odd words of the MIX pairs; lanes follow the words, one half is "
             f"re-paired per round; subkeys on the fly, inserted per lane)",
             "vector ops per block (encrypt, one block): " + ", ".join(
                 f"{k} {n:g}" for k, n in sorted(one.items())),
             f"encrypt_blocks/decrypt_blocks: layout lanes ({lanes_of(isa)} blocks word-sliced in "
             f"{ISAS[isa].bits}-bit vectors" + (f", {o.interleave} vector groups" if o.interleave > 1 else "")
             + f" per pass), tails of fewer than {bulk['blocks per pass']} blocks: the packed single block",
             _build_note(ISAS[isa])]
    regions = [dict(isa=ISAS[isa], functions=public + blocks)]
    ctx = _ctx(v, notes, regions, simde_headers=[ISAS[isa].simde], need=ISAS[isa])
    return {f"{v.stem}.c": render_template("c_simd/threefish.c.j2", **ctx),
            f"{v.stem}.h": render_template("c/threefish.h.j2", **ctx)}


DEFAULT_RULE = f"default rule: the highest ISA the CPU and ${ENV_VAR} allow"


def cpu_condition(rule) -> dict:
    """The C conditions of a CPU table row (the dispatcher's cpu_rule()): ident, the cpuid vendor
    string and display family; models, its model ranges (inclusive; a range from 0 has no lower test)."""
    models = " || ".join(f"({f'model >= {lo:#x}u && ' if lo else ''}model <= {hi:#x}u)" for lo, hi in rule.models)
    return dict(ident=f'strcmp(vendor, "{rule.vendor}") == 0 && family == {rule.family:#x}u', models=models)


def _same_cpus(a, b) -> bool:
    """Two CPU table rules of the same CPUs (one profile's match)."""
    return (a.name, a.vendor, a.family, a.models) == (b.name, b.vendor, b.family, b.models)


def _render_dispatch(v: Variant, subs, laid, rules=(), singles=()) -> dict[str, str]:
    """The dispatcher: scalar, the default paths ``subs`` (one per ISA: the default rule picks
    the highest the CPU allows) and the paths of the CPU table ``rules`` ([(Rule, path variant)],
    gen/cpu_rules.py: x86 only, chosen by cpuid vendor, family and model); ``singles``: the
    single-block table [(Rule, packed variant)] (x86 only): where it has rows, encrypt/decrypt
    choose between the scalar kernel (``PREFIXscalar_encrypt``) and the rows' packed kernels, each a
    function that wipes its own frame (the bound of its kernel alone), so each path wipes what it used."""
    subs = list(subs)
    subs.sort(key=lambda s: -ISAS[s.get("isa")].level)
    every = subs + [rv for _, rv in rules if rv not in subs]
    every = list(dict.fromkeys(every))
    o = v.options
    single_pfx = f"{v.prefix}scalar_" if singles else v.prefix
    public = [scalar_single(laid, single_pfx, v.prefix, v.spec, o, d) for d in ("encrypt", "decrypt")]
    for f in public:
        f["wrap"] = True       # scalar_encrypt: a work function and a wiping wrapper (the tails')
    work = "_work" if v.get("wipe", True) else ""     # the single-block kernel (templates/c/wipe.j2 lead)
    if v.spec.block_bytes >= SHARED_SCALAR_MIN_BYTES:
        scalar = [scalar_blocks(v.prefix, v.spec, d, f"{single_pfx}{d}{work}") for d in ("encrypt", "decrypt")]
    else:
        scalar = [blocks_function(laid, f"{v.prefix}scalar_", v.prefix, v.spec, o, d, None, "lanes",
                                  annotate=_annotate(v)) for d in ("encrypt", "decrypt")]
    regions = [dict(isa=None, functions=public + scalar)]
    # the SIMD paths' tails: the scalar single-block wrapper; where it is public and the x86 wipe
    # asks for the level first (templates/c/wipe.j2 wrapper), the wiping function behind it
    primed = v.get("wipe", True) and not singles and any(family_name(ISAS[s.get("isa")]) == "x86" for s in every)
    tails = {d: f"{v.prefix}wiped_{d}" if primed else f"{single_pfx}{d}" for d in ("encrypt", "decrypt")}
    paths, used = {}, set()
    for s in every:
        isa, layout = s.get("isa"), s.get("layout", "lanes")
        stats: dict = {}
        pfx = f"{v.prefix}{isa}_{layout}_"
        if pfx in used:            # a second path of one ISA and layout (a CPU rule's)
            pfx += f"{s.options.keys}_{s.options.unroll}_i{s.options.interleave}_"
        used.add(pfx)
        fns = [blocks_function(laid, pfx, v.prefix, v.spec, s.options, d, isa, layout, stats if d == "encrypt" else None,
                               tail=tails[d], annotate=_annotate(v)) for d in ("encrypt", "decrypt")]
        fam = family_name(ISAS[isa])
        regions.append(dict(isa=ISAS[isa], functions=fns, guard=fam))
        o_ = s.options
        paths[s] = dict(isa=ISAS[isa], prefix=pfx, min_n=stats["min blocks"], label=s.label(), family=fam,
                        text=f"{isa} {layout} {o_.keys}/{o_.unroll}/i{o_.interleave}")
    spaths = {}
    for _, s in singles:         # the single-block table's packed kernels, each once
        if s in spaths:
            continue
        isa = s.get("isa")
        pfx = f"{v.prefix}{isa}_packed_"
        fns = [packed_single(laid, pfx, v.prefix, v.spec, s.options, d, isa) for d in ("encrypt", "decrypt")]
        for f in fns:
            f["wrap"] = True       # a work function and a wrapper wiping its frame (its own bound)
        regions.append(dict(isa=ISAS[isa], functions=fns, guard="x86"))
        spaths[s] = dict(isa=ISAS[isa], prefix=pfx, functions=fns, text=f"{isa} packed fly/full/i1")
    for r in regions:
        for f in r["functions"]:
            f["static"] = f["name"] != f"{v.prefix}encrypt" and f["name"] != f"{v.prefix}decrypt"
    table = [(rule, paths[rv]) for rule, rv in rules if paths[rv]["family"] == "x86"]
    single_table = [(rule, spaths[s]) for rule, s in singles]
    notes = ["runtime dispatcher: single blocks -> "
             + ("the packed kernel of the single-block CPU table row that matches this CPU (x86: cpuid vendor, "
                "family, model) where its ISA is allowed, else scalar" if singles else "scalar")
             + "; n blocks -> the path of the CPU table row that "
             "matches this CPU (x86: cpuid vendor, family, model) where its ISA is allowed and its pass fits "
             "in n; else (default rule) the highest-level default path that the CPU (x86: cpuid, xgetbv) "
             "supports and whose pass fits in n; else scalar",
             f"environment {ENV_VAR}=scalar|sse2|avx|avx2|avx512 (x86) or scalar|neon (AArch64) caps the "
             "level (tests force each path); dispatch_path(n) names the path and the rule that chose it",
             "x86 paths compile on x86-64 and i386 only; on AArch64 NEON is architectural (no run-time "
             "check) and its paths are compiled instead; elsewhere: portable scalar C"]
    notes += [f"path {paths[s]['isa'].name}: {paths[s]['label']} (n >= {paths[s]['min_n']}; default)" for s in subs]
    notes += [f"CPU table row {rule.name} ({rule.cpus()}; {rule.source}): {p['text']}" for rule, p in table]
    notes += [f"single-block CPU table row {rule.name} ({rule.cpus()}; chained winner): {p['text']}; "
              "single_path() names the path encrypt/decrypt take" for rule, p in single_table]
    groups = []
    for fam, isas in (("x86", X86_ISAS), ("neon", NEON_ISAS)):
        mine = [p for p in paths.values() if p["family"] == fam]
        if not mine:
            continue
        rows = [dict(rule=rule, index=i, **cpu_condition(rule)) for i, (rule, _) in enumerate(table)] if fam == "x86" else []
        choices = [dict(rule=i, path=p, name=f"{p['text']} (cpu rule {rule.name}: {rule.cpus()})")
                   for i, (rule, p) in enumerate(table)] if fam == "x86" else []
        single = []
        for rule, p in (single_table if fam == "x86" else []):
            # the CPU table's row of the same profile (its match), else a row of its own
            i = next((r["index"] for r in rows if _same_cpus(r["rule"], rule)), None)
            if i is None:
                i = len(rows)
                rows.append(dict(rule=rule, index=i, **cpu_condition(rule)))
            single.append(dict(rule=i, path=p, name=f"{p['text']} (cpu rule {rule.name}: {rule.cpus()})"))
        choices += [dict(rule=None, path=paths[s], name=f"{paths[s]['text']} ({DEFAULT_RULE})")
                    for s in subs if paths[s]["family"] == fam]
        for c in choices:        # choice(): the row's CPU (if a row's), the path's level, its pass fits n
            c["test"] = " && ".join(([f"rule == {c['rule']}"] if c["rule"] is not None else [])
                                    + [f"level >= {c['path']['isa'].level}", f"n >= {c['path']['min_n']}"])
        for c in single:         # single_choice(): the row's CPU and the packed kernel's level
            c["test"] = f"rule == {c['rule']} && level >= {c['path']['isa'].level}"
        levels = ["scalar"] + [i.name for i in sorted(isas.values(), key=lambda i: i.level)]
        # cpuid: the family's level is found at run time (x86: cpuid, xgetbv); NEON is architectural
        groups.append(dict(family=fam, guard=GUARDS[fam], paths=mine, levels=levels, rows=rows, choices=choices,
                           cpuid=fam == "x86", single=single, bulk_rows=any(c["rule"] is not None for c in choices)))
    dispatch = dict(groups=groups, single=bool(single_table))
    ctx = _ctx(v, notes, regions, dispatch=dispatch,
               simde_headers=sorted({p["isa"].simde for p in paths.values() if p["family"] == "x86"})
               or ["simde/x86/sse2.h"])
    ctx["wipe_primed"] = primed        # public single-block wrappers that ask for the level (level_unknown)
    # the public *_blocks dispatch, then wipe below it: the deepest path's frame (paths that are
    # not inlined lie below the dispatching function's own frame: 1 KiB more)
    blocks = [f for r in regions for f in r["functions"] if f["kind"] != "one"]
    kernels = {f"{f['name']}_work": f for f in public} | {f["name"]: f for f in public}
    for f in blocks:     # the scalar blocks: its loop's frame, then the single-block kernel's below it
        if f.get("kernel"):
            f["burn"] = {k: b + kernels[f["kernel"]]["burn"][k] for k, b in f["burn"].items()}
    dispatch["burn"] = {k: max(f["burn"][k] for f in blocks) + 1024 for k in blocks[0]["burn"]}
    ctx["burn"] = max(ctx["burn"], dispatch["burn"]["other"])
    ctx["burn_opt"] = max(ctx["burn_opt"], dispatch["burn"]["opt"])
    return {f"{v.stem}.c": render_template("c_simd/threefish.c.j2", **ctx),
            f"{v.stem}.h": render_template("c/threefish.h.j2", **ctx)}


def render_c_simd(v: Variant, laid, subs=(), rules=(), singles=()) -> dict[str, str]:
    """The files of one c-simd variant from its laid-out programs ``laid`` ({((direction,
    options, blocks), layout, lanes): VProgram}, gen/targets/c_simd.py ``layout_pass``); ``subs``:
    the dispatcher's default paths (its standalone variants), ``rules``: its CPU table [(Rule,
    path variant)], ``singles``: its single-block table [(Rule, packed variant)].  Each function
    is printed (printer.py, spelled by gen/isa/x86.py and neon.py) here."""
    return _render_dispatch(v, subs, laid, rules, singles) if v.get("isa") == "auto" else _render_one(v, laid)


# --------------------------------------------------------------------------- Skein

def skein_lanes_kernel(prefix: str, vp: ir.VProgram, isa_name: str) -> dict:
    """The UBI block of L messages at once (``vp``: gen/targets/c_simd.py :func:`skein_lanes_layout`, L = the ISA's
    lanes): ``in`` = the L chaining values word-sliced, ``tweaks`` = the L tweaks word-sliced,
    ``m0`` .. ``m<L-1>`` = the L message blocks, ``out`` = the L new chaining values word-sliced.
    Returns dict(name, lanes, lines, isa, cost, params: the message parameters)."""
    isa = ISAS[isa_name]
    L = isa.bits // 64
    vpr = LanesPrinter(isa, vp, prefix, 8 * vp.nw)
    code = vpr.lines(vp.body)
    w = vector_width(isa)
    lines = [decl(w.T, [(name, 1)], f"const {w.T} {name} = {expr};", expr, constant=True)
             for name, expr in sorted(vpr.consts.items())]
    lines += vpr.declarations() + code
    fam = family_name(isa)
    return dict(name=f"{prefix}ubi_lanes_{isa_name}", lanes=L, lines=lines, isa=isa, cost=dict(vpr.cost),
                params=[f"m{lane}" for lane in range(L)],
                family=fam, guard=FAMILY_MACROS[fam], architectural=fam == "neon")
