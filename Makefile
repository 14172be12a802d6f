# Two commands on a fresh machine:
#   make lab    set up everything, then open JupyterLab on notebooks/ (main job)
#   make test   set up everything, then run the whole test suite (what CI runs)
# Other targets: make demo (headless seed examples), make bench, make lint.

PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

VENV_FLINK ?= .venv-flink
FLINK_STAMP := $(VENV_FLINK)/.installed

.PHONY: setup setup-flink lab demo test test-fast test-flink lint bench system-deps clean

EXT := extensions/cep_highlight

$(STAMP): pyproject.toml setup.py $(wildcard workbench/engine/*.pyx) $(EXT)/package.json $(EXT)/package-lock.json $(EXT)/pyproject.toml $(wildcard $(EXT)/src/*.ts $(EXT)/style/*)
	@command -v npm >/dev/null || { echo "make: Node.js >= 20 and npm are needed to build $(EXT)"; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@echo "setup: installing the workbench and its Python dependencies into $(VENV) (pip, quiet)"
	$(BIN)/python -m pip install -q -U pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	@echo "setup: building the %%cep highlighting extension $(EXT) (npm and jlpm: about a minute, quiet)"
	$(BIN)/python -m pip install -q ./$(EXT)
	@echo "setup: done ($(VENV)); make lab opens JupyterLab on notebooks/"
	touch $(STAMP)

setup: $(STAMP)

# PyFlink pins pandas 2.2.3 / numpy 2.1.3 / pyarrow 16, so the Flink backend gets its own environment.
$(FLINK_STAMP): pyproject.toml
	test -x $(VENV_FLINK)/bin/python || $(PY) -m venv $(VENV_FLINK)
	$(VENV_FLINK)/bin/python -m pip install -q -U pip
	$(VENV_FLINK)/bin/python -m pip install -q -e ".[flink]" "pytest>=8" "hypothesis>=6.100"
	touch $(FLINK_STAMP)

setup-flink: $(FLINK_STAMP)

# Debian packages the browser tests need (Chromium); installed only when missing.
system-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing chromium (browser tests)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

lab: setup
	$(BIN)/jupyter lab notebooks/

demo: setup
	$(BIN)/python -m workbench.demo

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow and not flink and not browser and not notebook"

test: setup system-deps setup-flink
	$(BIN)/python -m pytest -q
	$(BIN)/python -m pytest -q --nbval-lax notebooks/0[1-57]*.ipynb
	$(BIN)/python -m workbench.conformance -q tests/data/conformance
	$(BIN)/python -m workbench.conformance -q --via-language tests/data/conformance
	WORKBENCH_PURE=1 $(BIN)/python -m workbench.conformance -q tests/data/conformance
	$(MAKE) test-flink

test-flink: setup-flink
	$(VENV_FLINK)/bin/python -m pytest -q -m flink -W ignore::DeprecationWarning tests/backends tests/conformance/test_flink_nfa_oracle.py

lint: setup
	$(BIN)/ruff check workbench tests benchmarks
	$(BIN)/ruff format --check workbench tests benchmarks
	$(BIN)/mypy

bench: setup
	$(BIN)/python -m benchmarks.run --generate

clean:
	rm -rf $(VENV) $(VENV_FLINK) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
