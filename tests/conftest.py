import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402

import pytest  # noqa: E402

# The toolchains `make test` needs.  scripts/bootstrap.sh installs all but dotnet on Debian; a
# missing one makes the whole run fail (a test that skips for want of a compiler proves nothing)
# unless it is named in THREEFISH_GEN_ALLOW_SKIP (e.g. THREEFISH_GEN_ALLOW_SKIP=nasm,dotnet on a
# machine that cannot have them); then the tests that need it are skipped with the reason.
TOOLCHAINS = {
    "gcc": lambda: shutil.which("gcc"),
    "clang": lambda: shutil.which("clang"),
    "nasm": lambda: shutil.which("nasm"),
    "cmake": lambda: shutil.which("cmake"),             # tests/test_examples.py
    "pkg-config": lambda: shutil.which("pkg-config"),
    "python3-matplotlib": lambda: subprocess.run([sys.executable, "-c", "import matplotlib"],
                                                 capture_output=True).returncode == 0,   # bench chart
    "qemu-i386": lambda: shutil.which("qemu-i386"),
    "qemu-x86_64": lambda: shutil.which("qemu-x86_64"),   # tests/test_dropin.py: cpu_supported on old CPUs
    "simde": lambda: Path("/usr/include/simde/x86/avx512.h").exists(),
    "dotnet": lambda: shutil.which("dotnet"),
    "aarch64-linux-gnu-gcc": lambda: shutil.which("aarch64-linux-gnu-gcc"),
    "qemu-aarch64": lambda: shutil.which("qemu-aarch64"),
    "s390x-linux-gnu-gcc": lambda: shutil.which("s390x-linux-gnu-gcc"),
    "qemu-s390x": lambda: shutil.which("qemu-s390x"),
    "chromium": lambda: shutil.which("chromium"),
    "botan": lambda: Path("/usr/include/botan-2/botan/skein_512.h").exists(),   # libbotan-2-dev (Skein oracle)
    "python3-venv": lambda: subprocess.run([sys.executable, "-c", "import setuptools, wheel, ensurepip, pip"],
                                           capture_output=True).returncode == 0,   # tests/test_install.py
    "x86_64-w64-mingw32-gcc": lambda: shutil.which("x86_64-w64-mingw32-gcc"),
    "wine64": lambda: Path("/usr/lib/wine/wine64").exists() or shutil.which("wine64"),
}


def pytest_sessionstart(session):
    allowed = {t.strip() for t in os.environ.get("THREEFISH_GEN_ALLOW_SKIP", "").split(",") if t.strip()}
    missing = [t for t, have in TOOLCHAINS.items() if not have() and t not in allowed]
    if missing:
        pytest.exit(f"missing toolchain(s): {', '.join(missing)} -- run `make setup` (scripts/bootstrap.sh), "
                    f"or set THREEFISH_GEN_ALLOW_SKIP={','.join(missing)} to skip the tests that need them",
                    returncode=1)
