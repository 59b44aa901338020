"""verify spread over machines and made incremental: ``--shard K/N``, ``--merge REPORT...`` and the
result cache.

* **Shards.**  A run's rows (variant x build, in the order verify builds them) are split into N
  shards by a fixed cost model (:func:`cost`: each build's mean row time from a full run, a
  built-in table below, never a measurement of this machine), so every runner of a CI matrix
  computes the same split from the same matrix: the split is a pure function of the row list and the table.  Longest
  processing time first: rows by falling cost (ties by position), each into the lightest shard
  (ties: the lowest number).  Every row lands in exactly one shard; a shard's cost is at most
  ``total / N + the largest row cost`` (the LPT bound the tests check).
* **Merge.**  Each report names its shard ("K/N"), the matrix (a hash of every row of the whole
  run, :func:`matrix_id`), the seed and the vector count; :func:`merge` refuses reports of
  different seeds, counts or matrices, and overlapping or missing shards, with one line.
* **Cache.**  A PASS row is reused when the hash of everything that decides it is the same
  (:func:`row_key`): the rendered text (for nasm x86-64 also its Win64 form), the vector file's
  content (so the seed and count), the build (compiler, flags, emulator, environment), the
  ``--version`` of every tool the row runs, the CPU's flags (which decide native or SIMDe/emulated
  runs) and the checker code (a hash of every file of this verify package, harnesses included).
  FAIL, TIMEOUT and SKIPPED rows are never stored.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from functools import lru_cache
from pathlib import Path

# --------------------------------------------------------------------------- cost model

# A row's cost: the measured mean seconds of its build (relative to a `gcc -O2` row of a 512-bit
# variant that is not a dispatcher), times SIZE_FACTOR for its block size and AUTO_FACTOR for a SIMD
# dispatcher file (--isa auto: every kernel in one file, run per path).  Fitted to the row times of
# a full `make verify` (fresh clone of 7b78b43, 2026-11-27, 2-core Zen 4: 3,555 rows run; sizes and
# the dispatcher factor are medians over the builds that have both); docs/verify.md.  A build not
# in the table gets the first WEIGHTS pattern that matches, else 1.
MEASURED = {
    'aarch64 gcc asan+ubsan': 4.65,
    'cargo digest+zeroize+std': 2.90,
    'clang -m32 asan+ubsan': 1.98,
    'gcc asan+ubsan': 1.76,
    'clang asan+ubsan': 1.74,
    'valgrind memcheck': 1.73,
    'cargo std avx512': 1.68,
    'gcc -m32 asan+ubsan': 1.63,
    'clippy -D warnings': 1.60,
    'clang simde': 1.53,
    'cargo debug': 1.49,
    'cargo std forced scalar': 1.43,
    'cargo zeroize+std': 1.29,
    'cargo release': 1.23,
    'cargo aarch64 neon (qemu)': 1.21,
    'cargo no-std +avx2': 1.18,
    'aarch64 gcc -O2': 1.07,
    'gcc -O2': 1.00,
    'aarch64 clang -O2': 0.96,
    'clang -O2': 0.83,
    'clang -m32 -O2': 0.74,
    'cargo no simd': 0.73,
    'gcc -m32 -O2': 0.69,
    's390x gcc -O2': 0.68,
    'win64 under wine': 0.58,
    'dotnet default': 0.33,
    'no AVX-512': 0.28,
    'no HWIntrinsic': 0.27,
    'prove': 0.26,
    'ct (memcheck)': 0.23,
    'nasm elf32 + gcc -m32': 0.22,
    'nasm elf64 + asan+ubsan': 0.20,
    'nasm elf64 + gcc -O2': 0.19,
    'TC=0': 0.16,
    'no AVX2': 0.14,
    'jit disasm': 0.12,
    'win64 ABI via ms_abi': 0.12,
    'nasm win64 (assemble)': 0.02,
}
SIZE_FACTOR = {256: 0.77, 512: 1.0, 1024: 1.66}
AUTO_FACTOR = 1.9
WEIGHTS = (                 # builds the table does not name (new builds: until the next fit)
    ("asan", 1.8), ("aarch64", 1.1), ("s390x", 0.7), ("ct (memcheck)", 0.25), ("prove", 0.3),
    ("wine", 0.6), ("simde", 1.5), ("cargo", 1.3), ("dotnet", 0.3), ("no AVX", 0.3), ("no HWIntrinsic", 0.3),
    ("TC=0", 0.2), ("jit disasm", 0.15),
)


def cost(variant_label: str, build_name: str) -> float:
    w = MEASURED.get(build_name)
    if w is None:
        w = next((weight for pattern, weight in WEIGHTS if pattern in build_name), 1.0)
    size = next((b for b in SIZE_FACTOR if f" {b} " in f" {variant_label} "), 512)
    w *= SIZE_FACTOR[size]
    if "isa=auto" in variant_label or " auto" in variant_label:
        w *= AUTO_FACTOR
    return w


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard {text!r}: give K/N, e.g. 2/4") from None
    if not (n >= 1 and 1 <= k <= n):
        raise ValueError(f"--shard {text!r}: K must be 1..N and N at least 1")
    return k, n


def partition(rows: list[tuple[str, str]], n: int, costs: list[float] | None = None) -> list[int]:
    """The shard (0-based) of every row: greedy longest-processing-time over :func:`cost` (or the
    ``costs`` given, one per row: a COVERED row, which runs nothing, costs 0)."""
    costs = [cost(*r) for r in rows] if costs is None else costs
    load = [0.0] * n
    shard = [0] * len(rows)
    for i in sorted(range(len(rows)), key=lambda i: (-costs[i], i)):
        s = min(range(n), key=lambda j: (load[j], j))
        shard[i] = s
        load[s] += costs[i]
    return shard


def matrix_id(rows: list[tuple[str, str]]) -> str:
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- merge

class MergeError(Exception):
    """Reports that do not make one run (one line)."""


def merge(reports: list[dict]) -> dict:
    """One report from the reports of the N shards of one run (rows in the unsharded order)."""
    if not reports:
        raise MergeError("merge: no report given")
    for key in ("seed", "random_vectors", "matrix"):
        values = {r.get(key) for r in reports}
        if len(values) > 1:
            raise MergeError(f"merge: the reports are of different runs ({key}: "
                             f"{', '.join(sorted(map(str, values)))})")
    if any("shard" not in r or "positions" not in r for r in reports):
        raise MergeError("merge: a report without a shard (written by verify --shard K/N)")
    ns = {r["shard"].split("/")[1] for r in reports}
    if len(ns) > 1:
        raise MergeError(f"merge: the reports split the matrix differently (N = {', '.join(sorted(ns))})")
    n = int(ns.pop())
    ks = [int(r["shard"].split("/")[0]) for r in reports]
    dup = sorted({k for k in ks if ks.count(k) > 1})
    if dup:
        raise MergeError(f"merge: shard(s) {', '.join(f'{k}/{n}' for k in dup)} given more than once")
    missing = sorted(set(range(1, n + 1)) - set(ks))
    if missing:
        raise MergeError(f"merge: shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing")
    placed: dict = {}
    for r in reports:
        for pos, row in zip(r["positions"], r["rows"]):
            if pos in placed:
                raise MergeError(f"merge: row {pos} ({row['variant']} [{row['build']}]) is in two reports")
            placed[pos] = row
    total = reports[0].get("matrix_rows", len(placed))
    if sorted(placed) != list(range(total)):
        raise MergeError(f"merge: the reports hold {len(placed)} of the matrix's {total} rows")
    return {"seed": reports[0]["seed"], "random_vectors": reports[0]["random_vectors"],
            "matrix": reports[0]["matrix"], "matrix_rows": total,
            "cached": sum(r.get("cached", 0) for r in reports),
            "rows": [placed[p] for p in range(total)]}


# --------------------------------------------------------------------------- cache

HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def checker_version() -> str:
    """A hash of every file of the verify package (checkers, harnesses, vector code)."""
    h = hashlib.sha256()
    for p in sorted(HERE.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(HERE)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


PACKAGE = HERE.parent


def code_version() -> str:
    """What decides a render and a vector file besides its variant or spec, seed and count: every
    file of the threefish_gen package (generator, reference model, known-answer files, templates,
    profiles), the Python that runs it and the THREEFISH_GEN_* environment variables (e.g. the
    allocator's planted-fault switch).  Keys verify's render and vector caches."""
    env = json.dumps(sorted((k, v) for k, v in os.environ.items() if k.startswith("THREEFISH_GEN_")))
    return hashlib.sha256(f"{_package_files()}\0{sys.version}\0{env}".encode()).hexdigest()


@lru_cache(maxsize=1)
def _package_files() -> str:
    h = hashlib.sha256()
    for p in sorted(PACKAGE.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".tmp"):
            h.update(str(p.relative_to(PACKAGE)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


_VERSIONS: dict = {}
_LOCK = threading.Lock()


# Inputs a row reads that no program's --version names: a checker lists them in its TOOLS by
# these names (a header library's or a crate registry's upgrade changes what the row builds)
TREES = {"@simde-headers": Path("/usr/include/simde"),          # verify/simd.py: the SIMDe emulation
         "@cargo-registry": Path("/usr/share/cargo/registry")}  # verify/rust.py: the crates cargo resolves


def tree_digest(root: Path) -> str:
    """The content of every file under ``root`` (links followed), or "absent"."""
    if not root.is_dir():
        return "absent"
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            try:
                data = p.read_bytes()
            except OSError as e:
                data = f"unreadable: {e.strerror}".encode()
            h.update(str(p.relative_to(root)).encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def tool_version(tool: str) -> str:
    """``tool --version`` (first lines), once per run; "absent" where it is not installed.  A
    name of ``TREES``: the digest of that folder's files."""
    with _LOCK:
        if tool in _VERSIONS:
            return _VERSIONS[tool]
    path = shutil.which(tool) if tool not in TREES else None
    if tool in TREES:
        out = f"{TREES[tool]}: {tree_digest(TREES[tool])}"
    elif path is None:
        out = "absent"
    else:
        try:
            p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
            out = path + "\n" + (p.stdout + p.stderr)[:2000]
        except (OSError, subprocess.SubprocessError) as e:
            out = f"{path}: {e}"
    with _LOCK:
        _VERSIONS[tool] = out
    return out


def tools_of(build, checker_tools=()) -> list[str]:
    """The tools whose version decides a row: the build's own compiler(s) and emulator, the
    ``tools`` a build declares (verify/ct.py), and ``checker_tools``, those its checker declares
    (verify/matrix.py ``Checker.tools``, from the checker's module)."""
    tools = [getattr(build, "cc", None), getattr(build, "cxx", None), *(getattr(build, "runner", ())[:1])]
    tools += [*checker_tools, *getattr(build, "tools", ())]
    return sorted({t for t in tools if t})


def texts_digest(texts: list[dict]) -> str:
    return hashlib.sha256(json.dumps(texts, sort_keys=True).encode()).hexdigest()


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def row_key(kind: str, build, texts: list[dict] | str, vectors: Path | str, cpu: set, checker_tools=()) -> str:
    """``texts``: the row's texts or their :func:`texts_digest`; ``vectors``: the vector file or
    its :func:`file_digest` (a run computes each once, verify/matrix.py)."""
    h = hashlib.sha256()
    for part in (checker_version(), kind, repr(build), texts if isinstance(texts, str) else texts_digest(texts),
                 vectors if isinstance(vectors, str) else file_digest(vectors), " ".join(sorted(cpu)),
                 *(f"{t}={tool_version(t)}" for t in tools_of(build, checker_tools))):
        h.update(part.encode() + b"\0\1")
    return h.hexdigest()


def write_kept(path: Path, text: str) -> None:
    """Write a kept file of the cache whole or not at all (a temporary file of this process and
    thread, then renamed): concurrent rows and runs never read half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


class Cache:
    """PASS rows by key, one small JSON file each under ``root``; ``renders/`` (verify/sources.py)
    and ``vectors/`` (:meth:`vector_file`) beside them."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def vector_file(self, make, spec, path: Path, count: int, seed: int) -> Path:
        """``make(spec, path, count, seed)`` (a vector_file function), or its file from an earlier
        run with the same function, spec, count, seed and :func:`code_version` (the reference
        model and known-answer files are package files)."""
        key = hashlib.sha256(f"{code_version()}\0{make.__module__}.{make.__qualname__}\0{spec!r}\0{count}\0{seed}"
                             .encode()).hexdigest()
        kept = self.root / "vectors" / key[:2] / f"{key}.txt"
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if kept.is_file():
            shutil.copyfile(kept, path)
            return path
        out = Path(make(spec, path, count, seed))
        kept.parent.mkdir(parents=True, exist_ok=True)
        tmp = kept.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        shutil.copyfile(out, tmp)
        tmp.replace(kept)
        return out

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            return json.loads(self._path(key).read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, row: dict) -> None:
        if not row["status"].startswith("PASS"):
            return
        write_kept(self._path(key), json.dumps(row))
