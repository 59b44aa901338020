"""Per-CPU choices from the shipped tuning profiles (``threefish_gen/profiles/*.json``, package
data; written by ``threefish-gen tune``, docs/tune.md).

A profile says which CPUs it stands for (``match``: cpuid vendor string, display family, model
ranges) and, per target, size and mode, the measured winner with its options.  The SIMD C
dispatcher (``--isa auto``) turns the bulk winners of its own target into a table of
:class:`Rule` s: on a CPU a rule matches, ``*_blocks`` takes the rule's path; on any other CPU
(or when ``THREEFISH_GEN_ISA`` caps the rule's ISA away) the documented default rule applies.

Single blocks (``encrypt``/``decrypt``) have a table of their own, from the **chained** winners
(``rules(target, bits, "chained")``: each input the previous output, the latency a one-block call
sees): gen/targets/c_simd.py ``single_rule_paths`` keeps the x86 rows whose winner's layout is
``packed`` (one block spread over the lanes: its one-block function is a SIMD kernel; a lanes or
hybrid winner's one-block function is the scalar C the dispatcher runs anyway, so such a row adds
nothing).  On a CPU such a row matches, where its ISA is allowed, single blocks take that packed
kernel; everywhere else the scalar kernel, as before.  Today: Sapphire/Emerald Rapids
Threefish-1024 (AVX-512 packed), Zen 4 Threefish-1024 (AVX2 packed).

The table today (docs/tune.md, "The dispatcher's CPU table"):

* AMD Zen 3 / Zen 4 / Zen 5: ``zen3.json``, ``zen4.json``, ``zen5.json``.
* Intel Sapphire Rapids and Emerald Rapids (GenuineIntel family 6, models 0x8F and 0xCF, Golden
  Cove / Raptor Cove cores): ``intel-spr-emr.json``, the c-simd results of the tune profile
  measured on Emerald Rapids (model 0xCF) in ``shared/profiles/intel-emr.json`` (its README says
  how it was made); bulk 256 AVX-512 lanes i4 (i3 until a re-measurement on 2026-11-27), 512 AVX-512 lanes i2, 1024 AVX-512 packed i1
  (whose ``*_blocks`` is the lanes i1 code: the dispatcher takes its default lanes i1 path,
  gen/targets/c_simd.py ``rule_paths``).  Sapphire Rapids has the same cores and
  is assumed, not measured.
* **Other Intel cores: the default rule, on purpose.**  AVX-512 parts (Skylake-SP, Cascade and
  Cooper Lake, Ice Lake, Tiger Lake, Granite Rapids, ...) get the highest default path, AVX-512
  lanes (gen/targets/c_simd.py ``RECOMMENDED``: i4 for 256, i2 for 512, i1 for 1024), the
  interleave that won or came within noise of the winner on every AVX-512 CPU measured (Zen 4,
  Zen 5, Emerald Rapids); AVX2-only cores (Haswell to Comet Lake, Alder/Raptor Lake hybrids with
  AVX-512 fused off, the E-core Xeons) get AVX2 lanes.  No row is written for a CPU nobody
  has measured: add one from ``threefish-gen tune`` on it (docs/tune.md).

A row names the measured winner; the dispatcher compiles its compact form where one exists (an
unrolled lanes kernel of an ISA whose recommended path loops becomes the loop of the same
interleave: gen/targets/c_simd.py ``compact``), so the table adds no unrolled copy of a path.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from .errors import GenError
from .threefish import Options

FORMAT = "threefish-gen profile 1"
DESCRIPTION_KEYS = ("keys", "unroll", "interleave")


@dataclass(frozen=True)
class Rule:
    """One row of a dispatcher's CPU table: CPUs (vendor, family, model ranges) -> a path."""

    name: str                   # the profile's name, e.g. zen3
    vendor: str                 # cpuid leaf 0 vendor string, e.g. AuthenticAMD
    family: int                 # display family (base + extended), e.g. 0x19
    models: tuple               # ((lo, hi), ...) display models, inclusive
    options: Options            # the winner's description options
    values: tuple               # the winner's target options as sorted (name, value) pairs
    source: str                 # where the figures come from

    def matches(self, vendor: str, family: int, model: int) -> bool:
        return vendor == self.vendor and family == self.family and any(lo <= model <= hi for lo, hi in self.models)

    def cpus(self) -> str:
        ranges = ",".join(f"{lo:#04x}-{hi:#04x}" if lo != hi else f"{lo:#04x}" for lo, hi in self.models)
        return f"{self.vendor} family {self.family:#04x} models {ranges}"


def check_profile(p, where: str) -> dict:
    """The profile's structure, checked (GenError naming ``where`` and what is wrong)."""
    if not isinstance(p, dict) or p.get("format") != FORMAT:
        raise GenError(f"{where}: not a threefish-gen profile (no \"format\": \"{FORMAT}\")")
    m = p.get("match")
    try:
        assert isinstance(m, dict) and isinstance(m["vendor"], str) and isinstance(m["family"], int)
        assert m["models"] and all(len(r) == 2 and 0 <= int(r[0]) <= int(r[1]) for r in m["models"])
    except (AssertionError, KeyError, TypeError, ValueError):
        raise GenError(f"{where}: \"match\" needs vendor, family and models [[lo, hi], ...]") from None
    res = p.get("results")
    if not isinstance(res, dict):
        raise GenError(f"{where}: no \"results\"")
    shape = "needs {size: {mode: {\"winner\": {\"options\": {...}} or null}}}"
    for target, sizes in res.items():
        if not isinstance(sizes, dict) or not all(str(b).isdigit() and isinstance(m, dict) for b, m in sizes.items()):
            raise GenError(f"{where}: results.{target} {shape}")
        for bits, modes in sizes.items():
            for mode, got in modes.items():
                w = got.get("winner") if isinstance(got, dict) else "?"
                if w is not None and not (isinstance(w, dict) and isinstance(w.get("options"), dict)):
                    raise GenError(f"{where}: results.{target}.{bits}.{mode} {shape}")
    return p


def load_profile(text: str, where: str) -> dict:
    try:
        p = json.loads(text)
    except ValueError as e:
        raise GenError(f"{where}: not JSON ({e})") from None
    return check_profile(p, where)


@lru_cache(maxsize=None)
def shipped() -> tuple:
    """(file name, profile) of every shipped profile, by name."""
    folder = files("threefish_gen") / "profiles"
    out = []
    for f in sorted((x for x in folder.iterdir() if x.name.endswith(".json")), key=lambda x: x.name):
        out.append((f.name, load_profile(f.read_text(), f"threefish_gen/profiles/{f.name}")))
    return tuple(out)


def matches(p: dict, vendor: str, family: int, model: int) -> bool:
    m = p["match"]
    return vendor == m["vendor"] and family == m["family"] and any(lo <= model <= hi for lo, hi in m["models"])


def winner(p: dict, target: str, bits: int, mode: str = "bulk") -> dict | None:
    got = p["results"].get(target, {}).get(str(bits), {}).get(mode) or {}
    return got.get("winner")


def split_options(values: dict) -> tuple[Options, dict]:
    """A winner's options -> (description options, target options)."""
    o = Options(*(values[k] for k in DESCRIPTION_KEYS if k in values))
    return o, {k: v for k, v in values.items() if k not in DESCRIPTION_KEYS}


def rules(target: str, bits: int, mode: str = "bulk") -> list[Rule]:
    """The dispatcher table of ``target`` for Threefish-``bits``: one rule per shipped profile
    with a winner for it in ``mode`` (bulk: the ``*_blocks`` table; chained: the single-block
    one, module docstring), in file-name order (the first match wins)."""
    out = []
    for _, p in shipped():
        w = winner(p, target, bits, mode)
        if w is None:
            continue
        o, values = split_options(w["options"])
        m = p["match"]
        out.append(Rule(p.get("name", "?"), m["vendor"], m["family"], tuple(tuple(r) for r in m["models"]),
                        o, tuple(sorted(values.items())), p.get("source", "threefish-gen tune")))
    return out


def rule_for(target: str, bits: int, vendor: str, family: int, model: int, mode: str = "bulk") -> Rule | None:
    """The CPU table row (``mode`` bulk: ``*_blocks``; chained: single blocks) the dispatcher of
    ``target`` for Threefish-``bits`` takes on this CPU (the first that matches), or None: the
    default rule (module docstring)."""
    return next((r for r in rules(target, bits, mode) if r.matches(vendor, family, model)), None)
