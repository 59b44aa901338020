#!/usr/bin/env bash
# Installs what threefish-gen needs on a fresh Debian/Ubuntu machine, then records which
# Python interpreter has the Python packages (build/.python) for the Makefile.
# Idempotent and quiet when everything is present.  On other systems it says what is
# missing (pip install -e '.[test]' plus your system's C compilers) instead of installing.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
# --verify (make verify): also fetch what only verify's matrix needs (the Rust NEON row's toolchain)
for_verify=""
case "${1:-}" in
  --verify) for_verify=1 ;;
  "") ;;
  *) echo "bootstrap: unknown argument ${1} (only --verify)" >&2; exit 2 ;;
esac

GCC_MAJOR=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
GCC_MAJOR=${GCC_MAJOR:-12}
# Debian packages: tool (or header) to look for -> package that provides it.
DEB_TOOLS=(
  "gcc:gcc" "g++:g++" "clang:clang" "clang++:clang" "make:make"
  "nasm:nasm"            # the nasm-x64 / nasm-x86 targets
  "cmake:cmake" "pkg-config:pkgconf"   # examples/ (tests/test_examples.py): CMake and pkg-config projects
  "qemu-i386:qemu-user"  # runs the 32-bit harness where the kernel cannot run 32-bit programs
  "qemu-x86_64:qemu-user"  # tests/test_dropin.py: cpu_supported() on older (emulated) CPUs
  "chromium:chromium"    # headless render of the explore report (tests/test_explore.py, docs/explore-1024.png)
  # AArch64 (NEON) and big-endian s390x builds, run under qemu-user (verify's emulated rows)
  "aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu" "qemu-aarch64:qemu-user"
  "s390x-linux-gnu-gcc:gcc-s390x-linux-gnu" "qemu-s390x:qemu-user"
  # Win64 objects really run: a mingw-w64 harness under wine (verify's "nasm win64 under wine" row)
  "x86_64-w64-mingw32-gcc:gcc-mingw-w64-x86-64" "valgrind:valgrind"
  # check/verify run harnesses without network and with a read-only file system (verify/proc.py)
  "bwrap:bubblewrap"
)
DEB_FILES=(
  "/usr/include/botan-2/botan/botan.h:libbotan-2-dev"
  "/usr/include/crypto++/threefish.h:libcrypto++-dev"
  # gcc -m32: the versioned gcc-N-multilib, not the gcc-multilib metapackage, which Debian marks as
  # conflicting with the aarch64/s390x cross compilers below (one apt-get call could not install both)
  "/usr/lib/gcc/x86_64-linux-gnu/${GCC_MAJOR}/32/crtbegin.o:gcc-${GCC_MAJOR}-multilib"
  "/usr/include/simde/x86/avx512.h:libsimde-dev"   # SIMD variants the CPU lacks run emulated
  "/usr/aarch64-linux-gnu/lib/libc.a:libc6-dev-arm64-cross"   # static aarch64 harness
  "/usr/s390x-linux-gnu/lib/libc.a:libc6-dev-s390x-cross"     # static s390x harness
  "/usr/lib/wine/wine64:wine64"                                # runs the Win64 harness
)
DEB_PY="python3-jinja2 python3-click python3-pytest"
# bench's chart (threefish_gen/tools/bench/chart.py)
/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1 || DEB_EXTRA_PY="python3-matplotlib"
# make test runs pytest on every core with pytest-xdist (serially, with a note, without it)
/usr/bin/python3 -c 'import xdist' >/dev/null 2>&1 || DEB_EXTRA_PY="${DEB_EXTRA_PY:-} python3-pytest-xdist"

missing=()
for pair in "${DEB_TOOLS[@]}"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
for pair in "${DEB_FILES[@]}"; do
  [ -e "${pair%%:*}" ] || missing+=("${pair#*:}")
done
# clang's sanitizer runtime (for the clang ASan/UBSan rows)
if command -v clang >/dev/null 2>&1; then
  rt=$(clang -print-file-name=libclang_rt.asan-x86_64.a 2>/dev/null || true)
  if [ ! -e "$rt" ]; then
    v=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
    missing+=("libclang-rt-${v:-14}-dev")
  fi
else
  missing+=("libclang-rt-14-dev")
fi

# the rust target (verify/rust.py) builds offline: the crates its crates depend on come from
# Debian's local registry (/usr/share/cargo/registry), never from crates.io.  Which crates: the
# target's CRATES (threefish_gen/gen/targets/rust.py), read without importing the package (whose
# Python dependencies may be among what this script installs)
rust_crates=$(/usr/bin/python3 - threefish_gen/gen/targets/rust.py <<'PY'
import ast, sys
for node in ast.parse(open(sys.argv[1]).read()).body:
    if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["CRATES"]:
        print(" ".join(dict.fromkeys(c for crates in ast.literal_eval(node.value).values() for c in crates)))
PY
)
[ -n "$rust_crates" ] || { echo "bootstrap: no CRATES in threefish_gen/gen/targets/rust.py" >&2; exit 1; }
for crate in $rust_crates; do
  compgen -G "/usr/share/cargo/registry/${crate}-[0-9]*" >/dev/null || missing+=("librust-${crate}-dev")
done

have_py() { "$1" -c 'import jinja2, click, pytest' >/dev/null 2>&1; }
py=""
for cand in "${PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 && have_py "$cand" && { py=$(command -v "$cand"); break; }
done
[ -n "$py" ] || missing+=($DEB_PY)
[ -z "${DEB_EXTRA_PY:-}" ] || missing+=($DEB_EXTRA_PY)
# `pip install .` offline (docs/install.md, tests/test_install.py): venv + pip + setuptools + wheel
/usr/bin/python3 -c 'import setuptools, wheel, ensurepip, pip' >/dev/null 2>&1 || \
  missing+=(python3-venv python3-pip python3-setuptools python3-wheel)

if [ ${#missing[@]} -gt 0 ]; then
  # de-duplicate
  readarray -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "bootstrap: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
      # one package apt cannot install must not keep the others out: one at a time, then name it
      failed=()
      for p in "${missing[@]}"; do
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 || failed+=("$p")
      done
      if [ ${#failed[@]} -gt 0 ]; then
        echo "bootstrap: apt-get could not install: ${failed[*]}" >&2
        exit 1
      fi
    fi
  else
    echo "bootstrap: missing: ${missing[*]} (install them, or: pip install -e '.[test]')" >&2
  fi
fi

if [ -z "$py" ]; then
  for cand in "${PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 && have_py "$cand" && { py=$(command -v "$cand"); break; }
  done
fi
if [ -z "$py" ]; then
  echo "bootstrap: no Python with jinja2, click and pytest (pip install -e '.[test]')" >&2
  exit 1
fi
command -v dotnet >/dev/null 2>&1 || \
  echo "bootstrap: no dotnet on PATH: the C# rows will be SKIPPED (install the .NET 10 SDK to run them)" >&2
command -v cargo >/dev/null 2>&1 || \
  echo "bootstrap: no cargo on PATH: the Rust rows will be SKIPPED (install Rust 1.66+ with cargo and clippy:" \
       "https://rustup.rs, or apt-get install cargo rust-clippy where Debian's is new enough)" >&2
# the Rust NEON row (verify/rust.py aarch64_rustc): a rustc with the AArch64 std, looked for where
# verify looks; with --verify (make verify) and none found, scripts/rust-aarch64.sh unpacks Debian's
# rustc-web and its arm64 std into build/toolchains/rust-aarch64 (about 130 MB downloaded, 560 MB
# unpacked; nothing installed system-wide); make test does not need it
find_a64() {
  a64_std=""
  for rc in "${THREEFISH_GEN_RUSTC_AARCH64:-}" build/toolchains/rust-aarch64/rustc rustc /usr/bin/rustc; do
    [ -n "$rc" ] && command -v "$rc" >/dev/null 2>&1 || continue
    d=$("$rc" --print target-libdir --target aarch64-unknown-linux-gnu 2>/dev/null) || continue
    compgen -G "$d/libcore-*.rlib" >/dev/null && { a64_std=$rc; break; }
  done
}
find_a64
if [ -z "$a64_std" ] && [ -n "$for_verify" ] && command -v cargo >/dev/null 2>&1; then
  ./scripts/rust-aarch64.sh || true
  find_a64
fi
[ -n "$a64_std" ] || \
  echo "bootstrap: no rustc with the aarch64-unknown-linux-gnu std: the Rust NEON row will be SKIPPED (make verify" \
       "fetches one: scripts/rust-aarch64.sh; or rustup target add aarch64-unknown-linux-gnu; or set" \
       "THREEFISH_GEN_RUSTC_AARCH64)" >&2
echo "$py" > build/.python
