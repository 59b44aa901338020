# threefish-gen -- the two commands a newcomer needs:
#   make verify   render every variant, build it with real toolchains, run it against the vectors
#   make test     the test suite (includes a fast verify of the recommended variants)
#   make test-fast  its fast part (pytest -m fast), for the edit-run loop
# Both install what is missing first (scripts/bootstrap.sh: Debian packages, or says what to pip install).

PY = $$(cat build/.python)
GEN = $(PY) -m threefish_gen

.PHONY: all setup setup-verify gen verify verify-fast test test-fast test-matrix bench explore clean fuzz

all: verify

setup:
	@./scripts/bootstrap.sh

# make verify's extra: the Rust NEON row's toolchain (scripts/rust-aarch64.sh), which make test skips
setup-verify:
	@./scripts/bootstrap.sh --verify

# Re-render the recommended variants of every target into out/ (committed; a test fails when
# out/ is stale).  Rendered into build/ first, so a failure leaves out/ as it was.
# OUT_TARGETS: target:folder[:keep], keep = a part of the file names to ship (the rest of the
# set is left out).  c-simd ships only its dispatcher files (--isa auto): they hold the
# recommended AVX-512 and AVX2 paths and scalar C, so the standalone path files would repeat them.
# rust ships crate folders (STEM/Cargo.toml, STEM/src/lib.rs, STEM/README.md): moved in whole.
# build/out.one is removed before each render, so render's ownership checks never refuse there;
# `build/out.one/*` does not match dot files, so render's record (.threefish-gen-manifest) stays
# behind and out/ ships only the rendered files (tests/test_out.py checks the exact file list).
OUT_TARGETS = c:c c-simd:c-simd:_auto_ nasm-x64:nasm nasm-x86:nasm csharp:csharp rust:rust
# out/ ships the final constants (Skein v1.3; issue 30: out/ <= 8 MB).  The recommended files of the
# older constants are one command away (`render --set recommended --constants 1.1|1.2 --target T`),
# and make verify checks every version of every variant either way.
OUT_CONSTANTS = 1.3
gen: setup
	@rm -rf build/out.new build/out.one
	@for tp in $(OUT_TARGETS); do \
	  set -- $$(echo $$tp | tr : ' '); rm -rf build/out.one; \
	  $(GEN) render --set recommended --constants $(OUT_CONSTANTS) --target $$1 --out build/out.one >/dev/null || exit 1; \
	  mkdir -p build/out.new/$$2; \
	  for f in build/out.one/*; do case $$f in *$${3:-}*) mv $$f build/out.new/$$2/;; esac; done; \
	done
	@rm -rf build/out.one out && mv build/out.new out
	@for d in out/*; do echo "$$d: $$(ls $$d | wc -l) files"; done
	@du -sh out

# Every variant of every target, every toolchain configuration, 1000 random vectors per size;
# then the tests' long matrices (make test-matrix).  Both run; the exit status is non-zero when
# either failed.
# Incremental: verify's rows and the matrix tests each have a result cache (build/verify-cache/,
# build/test-cache/), keyed by everything that decides them; a re-run with nothing changed runs
# nothing, a change runs the rows and tests it can touch (verify: the rows whose rendered text,
# harness, vectors, build or tools changed; the matrix tests: all of them, their key is the whole
# tree, tests/result_cache.py).  SEED fixes the random vectors, so that a re-run can reuse rows
# (SEED= : a fresh seed, every row runs); NO_CACHE=1 runs everything.
# Rows once per code shape: an older constants version's sanitizer, constant-time, SIMDe, Win64,
# clippy and JIT rows are COVERED by the newest version's where its code is the same but for
# integer literals (verify/shapes.py); EVERY_VERSION=1 runs them all.
SEED ?= 1
NO_CACHE ?=
EVERY_VERSION ?=
VERIFY_ARGS = --set all --random 1000 $(if $(SEED),--seed $(SEED)) $(if $(NO_CACHE),--no-cache) \
	$(if $(EVERY_VERSION),--every-version)
verify: setup-verify
	@s=0; echo "$(GEN) verify $(VERIFY_ARGS)"; $(GEN) verify $(VERIFY_ARGS) || s=$$?; \
	  $(MAKE) --no-print-directory test-matrix || { [ $$s -ne 0 ] || s=1; }; exit $$s

# The recommended variants only, fewer random vectors (part of make test).
verify-fast: setup
	$(GEN) verify --set recommended --random 200

# pytest-xdist (Debian: python3-pytest-xdist; scripts/bootstrap.sh installs it) runs the tests on
# JOBS workers (auto: one per core); without it the run is serial, with a note.  --dist loadgroup:
# the modules that build something once per module stay on one worker (tests/conftest.py SHARED).
JOBS ?= auto
pytest = set -- $(1) $$($(PY) -c 'import xdist' 2>/dev/null && echo "-n $(JOBS) --dist loadgroup" || \
	  echo "make: pytest-xdist is not installed (Debian: python3-pytest-xdist): running serially" >&2); \
	py=$(PY); echo "$$py -m pytest -q $$*"; $$py -m pytest -q "$$@"
test: setup
	@$(call pytest,-m "not matrix")

# The tests' long matrices (every size, optimization level, compiler or variant of a check whose
# representative case make test runs; tests/conftest.py MATRIX says which): part of make verify.
# Its result cache: a matrix test that passed with every input unchanged is reported "cached",
# not run (NO_CACHE=1 or THREEFISH_GEN_NO_TEST_CACHE=1: run them all).  The 15 longest are listed.
test-matrix: setup
	@$(call pytest,-m matrix --durations=15 $(if $(NO_CACHE),--no-result-cache,--result-cache=build/test-cache))

# The edit-run loop: the tests marked fast (no toolchain, no prover matrix; about a minute).
# `pytest -m "not toolchain"` adds the pure-Python slow tests; tests/conftest.py says which is which.
test-fast: setup
	@$(call pytest,-m fast)

bench: setup
	$(GEN) bench

# Allocation / layout pictures (one HTML file each, offline) for the recommended variants:
# every assembly target at every size, every strategy; the SIMD C layouts at every size.
explore: setup
	@mkdir -p build/explore
	@for t in nasm-x64 nasm-x86; do for s in 256 512 1024; do \
	  $(GEN) explore --target $$t --size $$s --strategy all --out build/explore/$$t-$$s.html || exit 1; \
	done; done
	@for s in 256 512 1024; do \
	  $(GEN) explore --target c-simd --isa avx2 --size $$s --out build/explore/c-simd-$$s.html || exit 1; \
	done

# Differential fuzzing (threefish_gen/verify/fuzz.py): scalar C, SIMD dispatcher and NASM x64 of each size
# compared by a libFuzzer harness for SECONDS per size; the corpus stays in build/fuzz/.
SECONDS ?= 60
fuzz: setup
	@nice $(PY) -m threefish_gen.verify.fuzz --seconds $(SECONDS)

clean:
	rm -rf build
