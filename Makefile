# Entry points for a fresh machine (Rust toolchain and Python ≥ 3.10 present;
# everything else comes from the package registries).
#   make demo   install the runtime (no development extras) and run the V2G demo
#   make test   install the development extras and run the whole test suite (what CI
#               runs), ending with the installed-wheel smoke run (make smoke)

VENV   ?= .venv
PY     := $(VENV)/bin/python
RUNTIME := $(VENV)/.installed-runtime
STAMP  := $(VENV)/.installed
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml') pyproject.toml Cargo.lock
WHEELS := target/wheels

.PHONY: install demo test lint rust-test py-test smoke bench clean

install: $(STAMP)

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The runtime only: vtlab and its dependencies, editable.
$(RUNTIME): $(SOURCES) | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $(RUNTIME)

# The development extras (ns-3, Dask, pytest, ruff, maturin) on top.
$(STAMP): $(SOURCES) | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUNTIME)

demo: $(RUNTIME)
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

# The wheel (maturin, abi3) installed into a fresh virtual environment outside the
# checkout, then every README command in quick form from an empty folder
# (tests/smoke/readme_smoke.py; about 5 min on 2 cores): the check that catches a
# command that finds its data beside the source tree.
smoke: install
	rm -rf $(WHEELS)
	$(VENV)/bin/maturin build --release --quiet --out $(WHEELS)
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	python3 -m venv "$$tmp/venv" && \
	"$$tmp/venv/bin/python" -m pip install --quiet $(WHEELS)/vtlab-*.whl && \
	"$$tmp/venv/bin/python" tests/smoke/readme_smoke.py --readme README.md --examples examples

test: lint rust-test py-test smoke

bench: install
	$(VENV)/bin/vtlab bench

clean:
	rm -rf $(VENV) target
