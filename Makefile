# approxnet: the two commands.
#   make demo   set up what is missing, then run the main job
#   make test   set up what is missing, then run every test and lint
# Everything installs into this checkout (.venv, target/); nothing global
# except Debian packages the testbed needs (iproute2, nftables).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
CARGO  ?= cargo

.PHONY: demo demo-atp test test-rust test-python test-wheel lint lint-python setup setup-python bench clean

demo: setup
	$(CARGO) build --release -q -p approxnet-proto --example atp_demo
	$(CARGO) build --release -q -p approxnet-sim --bin approxnet-sim
	./target/release/examples/atp_demo
	@echo
	$(PY) experiments/netapprox/demo.py

demo-atp: setup
	$(CARGO) run --release -q -p approxnet-proto --example atp_demo

test: setup lint test-rust test-python test-wheel

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings

test-rust:
	$(CARGO) test --workspace -q

# The suite runs against the installed package (maturin develop installs
# python/approxnet in editable mode with the freshly built _native module).
# The testbed smoke tests drive the real binary (release, as documented).
test-python: setup-python lint-python
	$(CARGO) build --release -q -p approxnet-net --bin approxnet-perf --bin approxnet-link
	$(CARGO) build --release -q -p approxnet-sim --bin approxnet-sim
	$(PY) -m pytest -q -W error python/tests

# The wheel a user installs, from a fresh virtualenv outside the checkout.
test-wheel: setup-python
	bash scripts/test-wheel.sh

# ruff over the whole Python tree; mypy strict over the package, its tests
# and the testbed experiments; the netapprox sweep scripts and the benches
# are type-checked too, with untyped functions allowed (plain scripts).
PY_TREE := python experiments benches
lint-python: setup-python $(VENV)/.stubtest
	$(VENV)/bin/ruff check -q $(PY_TREE)
	$(VENV)/bin/ruff format -q --check $(PY_TREE)
	$(VENV)/bin/mypy --no-error-summary -p approxnet
	$(VENV)/bin/mypy --no-error-summary python/tests experiments/testbed
	$(VENV)/bin/mypy --no-error-summary experiments/interconnect
	$(VENV)/bin/mypy --no-error-summary experiments/dml
	$(VENV)/bin/mypy --no-error-summary experiments/saba
	$(VENV)/bin/mypy --no-error-summary experiments/sap
	$(VENV)/bin/mypy --no-error-summary --allow-untyped-defs --allow-untyped-calls \
	  --allow-incomplete-defs experiments/netapprox benches

# The stub must match the built module (mypy's stubtest; only when either changed).
$(VENV)/.stubtest: $(VENV)/.built python/approxnet/_native.pyi
	$(PY) -m mypy.stubtest approxnet._native --mypy-config-file pyproject.toml
	touch $@

setup: setup-python
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust (rustup) first"; exit 1; }
	@rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy
	@bash scripts/install-testbed-deps.sh

# setup-python: .venv with the tools, then the package built and installed
# into it (maturin develop --release: editable Python sources plus the
# native module approxnet._native from crates/py). Rebuilt only when a Rust
# source the module is made of, a manifest or pyproject.toml changed, or
# when the built module is missing.
PY_NATIVE_DEPS := $(shell find crates/*/src -type f 2>/dev/null) \
  $(wildcard data/workloads/*) $(wildcard crates/*/Cargo.toml) Cargo.toml Cargo.lock pyproject.toml

setup-python: $(VENV)/.built
	@ls python/approxnet/_native*.so >/dev/null 2>&1 || { rm -f $(VENV)/.built; $(MAKE) --no-print-directory $(VENV)/.built; }

$(VENV)/.ready: scripts/python-requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r scripts/python-requirements.txt
	touch $@

$(VENV)/.built: $(VENV)/.ready $(PY_NATIVE_DEPS)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q >/dev/null
	touch $@

bench:
	$(CARGO) bench -p approxnet-proto --bench proto

clean:
	rm -rf target $(VENV) results/tmp
