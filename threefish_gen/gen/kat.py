"""Reading known-answer files (format: ``verify/kat/README.md``)."""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .errors import GenError
from .spec import get_spec

# the vectors ship as package data of threefish_gen.verify (read as files, no import of verify)
KAT_DIR = Path(str(files("threefish_gen") / "verify" / "kat"))

THREEFISH_FIELDS = ("version", "block_bits", "key", "tweak", "plaintext", "ciphertext")
HEX_FIELDS = ("key", "tweak", "plaintext", "ciphertext", "message", "mac_key", "digest")


def parse(path: str | Path, required=()) -> list[dict]:
    """Records of a KAT file as dicts; hex fields decoded to bytes.

    A malformed file raises GenError naming the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GenError(f"cannot read KAT file {path}: {e}") from None
    records: list[dict] = []
    cur: dict = {}
    start = 0
    for n, line in enumerate(text.split("\n") + [""], 1):
        s = line.strip()
        if s.startswith("#"):
            continue
        if not s:
            if cur:
                _finish(path, start, cur, required)
                records.append(cur)
                cur = {}
            continue
        if "=" not in s:
            raise GenError(f"{path}:{n}: malformed line (expected 'name = value'): {s[:40]!r}")
        name, value = (p.strip() for p in s.split("=", 1))
        if not cur:
            start = n
        if name in cur:
            raise GenError(f"{path}:{n}: field {name!r} repeated in one record")
        if name in HEX_FIELDS:
            try:
                value = bytes.fromhex(value)
            except ValueError:
                raise GenError(f"{path}:{n}: field {name!r} is not hex") from None
        cur[name] = value
    if not records:
        raise GenError(f"{path}: no records")
    return records


def _finish(path: Path, line: int, rec: dict, required) -> None:
    missing = [f for f in required if f not in rec]
    if missing:
        raise GenError(f"{path}:{line}: record lacks {', '.join(missing)}")


def threefish_spec(path, n: int, rec: dict):
    """The Spec a Threefish record is for (GenError for an unknown version or size, or fields
    of the wrong length)."""
    spec = get_spec(rec["version"], rec["block_bits"])
    nb = spec.block_bytes
    if len(rec["key"]) != nb or len(rec["plaintext"]) != nb or len(rec["ciphertext"]) != nb \
            or len(rec["tweak"]) != 16:
        raise GenError(f"{path}: record {n} has wrong field lengths for Threefish-{spec.bits}")
    return spec


def threefish_records(version: str, bits: int, kat_dir: Path = KAT_DIR) -> list[dict]:
    """The Threefish vectors of one version and size, checked for shape."""
    path = Path(kat_dir) / f"threefish{bits}_v{version}.kat"
    recs = parse(path, THREEFISH_FIELDS)
    for n, r in enumerate(recs, 1):
        spec = threefish_spec(path, n, r)
        if (spec.version, spec.bits) != (version, bits):
            raise GenError(f"{path}: record for {r['version']}/{r['block_bits']} in the wrong file")
    return recs
