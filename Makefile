# threefish-gen -- the two commands a newcomer needs:
#   make verify   render every variant, build it with real toolchains, run it against the vectors
#   make test     the test suite (includes a fast verify of the recommended variants)
# Both install what is missing first (scripts/bootstrap.sh: Debian packages, or says what to pip install).

PY = $$(cat build/.python)
GEN = $(PY) -m gen

.PHONY: all setup gen verify verify-fast test bench clean

all: verify

setup:
	@./scripts/bootstrap.sh

# Re-render the recommended variants into out/ (committed; tests fail when it is stale).
gen: setup
	@rm -rf build/out.new && $(GEN) render --set recommended --out build/out.new/c >/dev/null
	@rm -rf out/c && mkdir -p out && mv build/out.new/c out/c && rm -rf build/out.new
	@echo "out/: $$(ls out/c | wc -l) files"

# Every variant, every toolchain configuration, 1000 random vectors per size.
verify: setup
	$(GEN) verify --set all --random 1000

# The recommended variants only, fewer random vectors (part of make test).
verify-fast: setup
	$(GEN) verify --set recommended --random 200

test: setup
	$(PY) -m pytest -q

bench: setup
	$(GEN) bench

clean:
	rm -rf build
