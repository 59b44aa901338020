import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402

import pytest  # noqa: E402

# the result cache of the matrix tests (make test-matrix passes --result-cache): tests/result_cache.py
pytest_plugins = ["result_cache"]
# the C# harness project tests/test_csharp.py and tests/test_trust.py share (one dotnet build)
from csharp_shared import csharp_edited_project  # noqa: E402,F401

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
    # once per run: not in pytest-xdist workers (the controller checked), not for --collect-only
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return
    allowed = {t.strip() for t in os.environ.get("THREEFISH_GEN_ALLOW_SKIP", "").split(",") if t.strip()}
    missing = [t for t, have in TOOLCHAINS.items() if not have() and t not in allowed]
    if missing:
        pytest.exit(f"missing toolchain(s): {', '.join(missing)} -- run `make setup` (scripts/bootstrap.sh), "
                    f"or set THREEFISH_GEN_ALLOW_SKIP={','.join(missing)} to skip the tests that need them",
                    returncode=1)


# ---------------------------------------------------------------------------------------- markers
# Every test gets one of three markers (registered in pyproject.toml), so a developer can run the
# quick part in the edit-run loop (`make test-fast` = `pytest -m fast`, about a minute):
#   toolchain  builds or runs code with an external tool: gcc/clang/nasm/ld/objdump, qemu-user,
#              wine, dotnet, cmake, valgrind, chromium, the bench or the fuzzer
#   slow       pure Python, but seconds a test: the prover over a set of variants, the allocator over
#              the matrix, `python -m threefish_gen` subprocesses (each imports the whole package)
#   fast       neither (added below to every test that has neither)
# MARKS: test module -> (marker of its every test or None, {regex over the test name: marker}); the
# first regex that matches wins over the module's marker.  A test may also carry its marker itself
# (@pytest.mark.toolchain / pytestmark).  A module missing here counts as slow until it is listed
# (a new file cannot make `make test-fast` slow by accident; `make test` runs it either way).
MARKS = {
    "test_annotate": (None, {r"_assemble_to_the_same_code|_compile_to_the_same_code": "toolchain"}),
    "test_asm": (None, {r"every_strategy_accepted|lowered_ops_match_reference|test_cli_|belady_spills_less"
                        r"|interpreter_catches|loop_lowering_matches": "slow"}),
    "test_bench": ("toolchain", {}),
    "test_bench_bounds": (None, {}),
    "test_bench_paired": (None, {}),
    "test_c": (None, {r"blocks_loop_stays_scalar": "toolchain"}),
    "test_c_simd": ("toolchain", {r"transpose_shuffles": None,
                                  r"render_cli|bad_options|render_is_deterministic": "slow"}),
    "test_cli": ("slow", {r"render_invocation_from_the_issue": "toolchain"}),
    "test_csharp": (None, {r"verify_matrix|harness_catches|disasm_row_passes": "toolchain"}),
    "test_dropin": ("toolchain", {}),
    "test_dsl": (None, {}),
    "test_examples": ("toolchain", {}),
    "test_explore": ("slow", {r"chromium": "toolchain"}),
    "test_fuzz": ("toolchain", {}),
    "test_install": ("toolchain", {}),
    "test_layering": (None, {}),
    "test_layouts": (None, {}),
    "test_nasm": ("toolchain", {r"deterministic_and_annotated|bad_options|permutation_is_derived": None,
                                r"set_all_leaves_out": "slow",
                                r"cli_packed_bad_combination": "slow"}),
    "test_nasm_interleave": ("toolchain", {r"allocation_checker|test_prove_|bad_interleave": "slow"}),
    "test_neon": ("toolchain", {r"shuffles_cover|byte_rotation_table|rotation_forms|x86_paths|no_x86_code"
                                r"|builds_are_keyed": None}),
    "test_out": ("slow", {}),
    "test_output": (None, {r"verify_workdir|trailing_newline|full_stdout|interrupt_at_random": "slow"}),
    "test_prove": ("slow", {}),
    "test_prove_c": ("slow", {}),
    "test_prove_csharp": ("slow", {}),
    "test_prove_csimd": ("slow", {}),
    "test_prove_packed": ("slow", {}),
    "test_prove_rust": ("slow", {}),
    "test_prove_skein": ("slow", {}),
    "test_reference": (None, {}),
    "test_result_cache": ("slow", {}),     # pytest subprocesses on a small project
    "test_render_safety": (None, {}),
    "test_rust": ("toolchain", {r"kernel_matches|op_for_op|render_|skein_no_wipe_and_variants": None}),
    "test_rust_simd": ("toolchain", {r"unchanged_and|op_for_op|options_and_bad|never_passed|without_an_aarch64_std": None}),
    "test_skein": ("toolchain", {r"test_skein_golden|golden_records|ubi_program|tree_model": None,
                                 r"test_cli_|bad_isa|takes_sysv": "slow"}),
    "test_spec": (None, {}),
    "test_trust": ("toolchain", {}),
    "test_tune": ("toolchain", {r"prune_keeps|plan_full|set_tuned_without|model_ranges": None,
                                r"render_profile|render_set_tuned|bad_profiles|profile_without": "slow"}),
    "test_verify_c": ("toolchain", {}),
    "test_verify_objstore": (None, {r"ct_row|changed_text": "toolchain"}),
    "test_verify_shard": (None, {r"ci_files_run": "toolchain", r"cache|failures_are_never": "slow"}),
    "test_verify_emulated": ("toolchain", {r"hiding_flags|signed_arithmetic|nothing_ran|hidden_avx512": None}),
}
KINDS = ("toolchain", "slow")
# MATRIX: test module -> regex over the test's name with its parameters (item.name): the cases
# that are a long matrix of a check whose representative cases make test runs (the other sizes,
# levels, compilers, variants).  They get the marker `matrix`: `make test` leaves them out
# (-m "not matrix"), `make verify` runs them (make test-matrix).  Every check stays in one of
# the two (tests/test_matrix_marks.py: each regex marks at least one case and leaves at least one
# of the module's cases to make test, so a renamed test cannot drop a check out of make test).
S = r"(?:512|1024)"        # the larger sizes of a check whose 256-bit case make test keeps
MATRIX: dict[str, str] = {
    "test_trust": rf"^test_(optimized_wipe_covers_the_frames\[(?!\w+--O2-512-c-simd-auto\]).*-{S}-"
                  rf"|wipe_leaves_no_key_word_on_the_stack\[(?!c-simd-auto-clang-512\]).*-{S}\]"
                  rf"|wipe_at_every_optimization_level\[.*-{S}\]|blocks_n0_touches_no_pointer\[.*-1024\]"
                  # the 1.1 MB Threefish-256 dispatcher (three AVX-512 lanes kernels, i2/i3/i4): make test
                  # runs these checks on the 512-bit one (575 KB, with the single-block packed path)
                  rf"|blocks_n0_touches_no_pointer\[c-simd-auto-256\]|wipe_leaves_no_key_word_on_the_stack\[c-simd-auto-clang-256\]"
                  rf"|optimized_wipe_covers_the_frames\[\w+--O2-256-c-simd-auto\]"
                  rf"|unoptimized_wipe_covers_the_frames\[.*-1024-|skein_wipe_at_every_optimization_level\[.*-{S}\]"
                  rf"|skein_wipe_covers_the_frames\[.*-1024-|skein_wipe_at_every_optimization_level\[(?!gcc--O0-)\w+--O\w-nasm-x86-256\]"
                  rf"|csharp_skein_wipe_leaves_no_key_word_on_the_stack\[(256|1024)\]"
                  # the C# scans: one size in make test (512 for the kernels, 256 for the vector tables)
                  rf"|csharp_wipe_leaves_no_key_word_on_the_stack\[1024\]|csharp_wipe_covers_the_lanes_vector_tables\[1024\]"
                  # the levels between -O0 and -O2 (make test keeps both compilers at -O0 and -O2)
                  rf"|wipe_at_every_optimization_level\[\w+--O[13s]-|optimized_wipe_covers_the_frames\[\w+--O3-"
                  # -O0 frames: gcc (x86-64 and aarch64) on every ISA and layout, clang on the hybrid layout
                  # (x86-64 AVX2 and aarch64 NEON; its other ISAs and layouts in make verify)
                  rf"|unoptimized_wipe_covers_the_frames\[(aarch64-)?clang-256-(?!c-simd-(avx2|neon)-hybrid\])"
                  # SIMDe frames: make test the dispatcher and Skein under gcc (the others emulate AVX-512 for minutes)
                  rf"|simde_wipe_covers_the_frames\[(?!gcc-256-c-simd-auto\]))",
    "test_prove_csharp": rf"^test_every_threefish_variant_proves_equivalent\[Threefish({S}|256V13Lanes_(table|fly_loop))",
    # the recommended variants: make test the 512-bit set (its dispatcher 575 KB; the 256-bit one is 1.1 MB)
    "test_c_simd": rf"^test_(recommended_simd_variants_pass_the_harness\[(256|1024)\]|packed_variants_pass_the_harness\[1024-)",
    "test_prove": rf"^test_recommended_nasm_proves_equivalent\[.*-tf{S}_",
    "test_prove_skein": rf"^test_ubi_proves_equivalent\[{S}-nasm-x86 ",
    # make test fuzzes Threefish-512 (its dispatcher 575 KB; the 256-bit one, 1.1 MB, in make verify)
    "test_fuzz": r"^test_fuzz_three_implementations_agree\[(256|1024)\]",
    "test_skein": rf"^test_(c_skein_render_against_the_vectors\[({S}-|256-1\.[12])|c_simd_skein_hash_many_lanes_against_the_vectors\[.*-{S}\]"
                  rf"|nasm_x64_skein_ubi_loop_against_the_vectors\[(.*-{S}|1\.1-.*)\]|nasm_x64_skein_win64_rows\[{S}\]"
                  rf"|nasm_x86_skein_rows\[.*-all\]|nasm_x86_skein_changed_copy_fails\[rotation\]"
                  rf"|csharp_skein_classes_against_the_vectors\[(?!1\.3-512\]))",
    "test_prove_packed": r"^test_every_packed_variant_of_set_all_proves_equivalent\[tf1024_",
    "test_prove_rust": rf"^test_every_threefish_variant_of_set_all_proves_equivalent\[tf{S}_",
    "test_neon": rf"^test_(neon_lanes_and_dispatcher_pass_under_qemu_aarch64\[({S}_|256_v1[12])"
                 rf"|scalar_c_and_dispatcher_pass_on_big_endian_s390x\[({S}_|256_v1[12])"
                 rf"|neon_packed_interleaved_and_hybrid_pass\[{S}\])"
                 # the 1.1 MB Threefish-256 dispatcher built for i386 (make test: 1024 there, 256 on aarch64/s390x)
                 rf"|^test_dispatcher_compiles_on_i386_aarch64_and_s390x\[256-gcc-flags0\]",
    "test_asm": r"^test_every_strategy_accepted_by_checker\[1024-|^test_loop_every_strategy_accepted_by_checker\[1024\]",
    "test_nasm": r"^test_set_all_leaves_out_exactly_what_the_allocator_cannot_fit\[nasm-x64\]"
                 r"|^test_x64_loop_harness\[(?!512-sysv)|^test_xmm_loop_harness\[(?!nasm-x86-256)"
                 r"|^test_x64_lanes_loop\[.*-(512|1024)\]",
    "test_nasm_interleave": r"^test_interleaved_blocks_match_the_reference_for_every_tail\[.*-1024\]",
    "test_csharp": r"^test_verify_matrix\[v13-512-1024\]",
    "test_annotate": r"^test_c_levels_compile_to_the_same_code\[c-simd-values2-",
    # the second group of kinds (the other Skein files, the C# Threefish class): tests/test_check_bytes.py
    "test_check_bytes": r"\[b\]",
    # the other cargo rows (debug, zeroize+std, clippy, valgrind), option sets and broken crates
    "test_rust": r"^test_checker_passes_each_size\[(512|1024)\]|^test_checker_rows_matrix\[(?!256-table-loop-i2-cargo)|^test_checker_fails_a_broken_crate_matrix\[(?!256-wipe-missing)"
                 # Skein: the check of an unedited crate, and every row but the golden file on 256
                 r"|^test_skein_check_reads_a_crate_and_fails_an_edited_byte\[as-rendered\]"
                 r"|^test_skein_checker_rows\[(?!256-golden-file-release)"
                 # verify --target rust through the CLI: the Threefish crate's rows in make test
                 r"|^test_verify_target_rust_runs_every_row_matrix\[256-(skein|both)\]",
    # the SIMD crates' rows on the other sizes and option sets (make test: 256, the AVX2 row and a broken kernel)
    "test_rust_simd": r"^test_simd_row\[(?!256-auto-fly-full-i2-cargo-std-avx512\])",
}
# Tests of many CPU-seconds (over 15 on a 2-core Zen 3, measured with a CPU-time plugin over a
# whole run), started first: pytest-xdist hands tests out in collection order, so a long test
# collected last (tests/test_verify_*.py sort last) ran alone at the end while the other worker idled.
EARLY = (r"test_verify_c\.py::test_fast_verify", r"test_csharp\.py::test_verify_matrix", r"test_verify_shard\.py::test_ci_files",
         r"test_check_bytes\.py", r"test_fuzz\.py", r"test_trust\.py::test_csharp_(skein_)?wipe", r"test_skein\.py::test_csharp_skein",
         r"test_c_simd\.py::test_recommended_simd", r"test_out\.py::test_out_is_fresh", r"test_verify_emulated\.py::test_emulated_",
         r"test_tune\.py", r"test_install\.py")    # SHARED modules: the whole module (one fixture build)
# Modules whose tests share something built once (a module-scoped fixture: the bench run, the wheel,
# the dispatcher executables, vector files): under pytest-xdist
# (`make test`: --dist loadgroup) each such module runs on one worker, so it is built once; the
# other tests are spread one by one.
SHARED = ("test_bench", "test_check_bytes", "test_install", "test_nasm", "test_nasm_interleave", "test_prove_concurrency",
          "test_tune")


# tryfirst: pytest-xdist's own hook (worker side, --dist loadgroup) reads the xdist_group marks to
# put the group's name into the node ids; a conftest hook that ran after it grouped nothing (the
# SHARED modules' fixtures were built once per worker and per test, measured: test_tune's
# dispatcher 20 s twice, check --thorough 37 s twice).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        rx = MATRIX.get(item.module.__name__ if item.module else "")
        if rx and re.search(rx, item.name):
            item.add_marker("matrix")
    for item in items:
        if not any(item.get_closest_marker(k) for k in KINDS):
            default, by_name = MARKS.get(item.module.__name__ if item.module else "", ("slow", {}))
            name = item.originalname or item.name
            hit = next(((k,) for rx, k in by_name.items() if re.search(rx, name)), None)
            kind = hit[0] if hit else default
            if kind:
                item.add_marker(kind)
        if not any(item.get_closest_marker(k) for k in KINDS):
            item.add_marker("fast")
        if item.module and item.module.__name__ in SHARED:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    # the long tests first (stable: the others keep their order; every worker sorts alike)
    rank = {item.nodeid: next((i for i, rx in enumerate(EARLY) if re.search(rx, item.nodeid)), len(EARLY))
            for item in items}
    items.sort(key=lambda item: rank[item.nodeid])
