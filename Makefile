# approxnet: the two commands.
#   make demo   set up what is missing, then run the main job
#   make test   set up what is missing, then run every test and lint
# Everything installs into this checkout (.venv, target/); nothing global
# except Debian packages the testbed needs (iproute2, nftables).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
CARGO  ?= cargo

.PHONY: demo demo-atp test test-rust test-python lint lint-python setup setup-python bench clean

demo: setup
	$(CARGO) build --release -q -p approxnet-proto --example atp_demo
	$(CARGO) build --release -q -p approxnet-sim --bin approxnet-sim
	./target/release/examples/atp_demo
	@echo
	$(PY) experiments/netapprox/demo.py

demo-atp: setup
	$(CARGO) run --release -q -p approxnet-proto --example atp_demo

test: setup lint test-rust test-python

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings

test-rust:
	$(CARGO) test --workspace -q

# The suite runs against the installed package (maturin develop installs
# python/approxnet in editable mode with the freshly built _native module).
# The testbed smoke tests drive the real binary (release, as documented).
test-python: setup-python lint-python
	$(CARGO) build --release -q -p approxnet-net --bin approxnet-perf
	$(PY) -m pytest -q -W error python/tests

# ruff + mypy over the package's own modules (the testbed lints itself).
PY_LINTED := python/approxnet/__init__.py python/approxnet/_native.pyi \
  python/approxnet/sim.py python/approxnet/harness.py python/approxnet/repro.py \
  python/approxnet/cli python/tests/test_bindings.py python/tests/test_cli.py \
  python/tests/test_sim_api.py python/tests/conftest.py python/approxnet/__main__.py \
  python/approxnet/net.py python/tests/test_net_binding.py \
  python/approxnet/analytics python/tests/test_analytics.py python/tests/test_analytics_cli.py \
  python/approxnet/torch python/tests/test_torch_train.py python/tests/cli_runner.py \
  python/approxnet/saba python/tests/test_saba_models.py python/tests/test_saba_solver.py \
  python/tests/test_saba_controller.py python/tests/test_saba_enforcement.py \
  python/tests/test_saba_cli.py benches/saba experiments/saba
lint-python: setup-python $(VENV)/.stubtest
	$(VENV)/bin/ruff check -q $(wildcard $(PY_LINTED))
	$(VENV)/bin/ruff format -q --check $(wildcard $(PY_LINTED))
	$(VENV)/bin/mypy --no-error-summary -p approxnet.cli -m approxnet.sim -m approxnet.harness -m approxnet.repro -m approxnet -m approxnet.net -p approxnet.analytics -p approxnet.torch -p approxnet.saba

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
PY_NATIVE_DEPS := $(shell find crates/py/src crates/proto/src crates/sim/src crates/net/src crates/saba/src -type f 2>/dev/null) \
  $(wildcard data/workloads/*) crates/py/Cargo.toml crates/proto/Cargo.toml crates/sim/Cargo.toml crates/net/Cargo.toml crates/saba/Cargo.toml Cargo.toml Cargo.lock pyproject.toml

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
