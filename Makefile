# Entry points for a fresh machine (Rust toolchain and Python ≥ 3.10 present;
# everything else comes from the package registries).
#   make demo   install everything and run the V2G demo
#   make test   install everything and run the whole test suite (what CI runs)

VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml') pyproject.toml Cargo.lock

.PHONY: install demo test lint rust-test py-test bench clean

install: $(STAMP)

$(STAMP): $(SOURCES)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: install
	$(VENV)/bin/vtlab run v2g --cc newreno --loss 5% --bytes 100MB --runs 6 --seed 1

lint: install
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests

# Property tests draw from a fixed seed so that CI is reproducible; explore new
# cases with e.g. `make rust-test PROPTEST_RNG_SEED=$$RANDOM`.
PROPTEST_RNG_SEED ?= 1

rust-test:
	PROPTEST_RNG_SEED=$(PROPTEST_RNG_SEED) cargo test --workspace

py-test: install
	$(VENV)/bin/pytest -q

test: lint rust-test py-test

bench: install
	$(VENV)/bin/vtlab bench

clean:
	rm -rf $(VENV) target
