# approxnet: the two commands.
#   make demo   set up what is missing, then run the main job
#   make test   set up what is missing, then run every test and lint
# Everything installs into this checkout (.venv, target/); nothing global
# except Debian packages the testbed needs (iproute2, nftables).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
CARGO  ?= cargo

.PHONY: demo demo-atp test test-rust test-python lint setup setup-python bench clean

demo: setup
	$(CARGO) build --release -q -p approxnet-proto --example atp_demo
	./target/release/examples/atp_demo
	@if [ -f experiments/demo/netapprox_small.toml ]; then \
	  $(CARGO) build --release -q -p approxnet-sim --bin approxnet-sim && \
	  ./target/release/approxnet-sim run experiments/demo/netapprox_small.toml --out results/demo; \
	fi

demo-atp: setup
	$(CARGO) run --release -q -p approxnet-proto --example atp_demo

test: setup lint test-rust test-python

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings

test-rust:
	$(CARGO) test --workspace -q

test-python: setup-python
	@if [ -d python/tests ]; then \
	  PYTHONPATH=python $(PY) -m pytest -q -W error python/tests; \
	fi

setup: setup-python
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust (rustup) first"; exit 1; }
	@rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy
	@bash scripts/install-testbed-deps.sh

setup-python: $(VENV)/.ready

$(VENV)/.ready: scripts/python-requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r scripts/python-requirements.txt
	touch $@

bench:
	$(CARGO) bench -p approxnet-proto --bench proto

clean:
	rm -rf target $(VENV) results/tmp
