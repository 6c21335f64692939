# Tenzr: `make demo` runs the main job, `make test` runs the whole suite.
# Both create the virtual environment in .venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint lit pytest gpu-check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/mlp.py

test: lint lit pytest

lint: $(STAMP)
	$(BIN)/ruff check .

lit: $(STAMP)
	$(BIN)/lit --succinct tests/lit

pytest: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 tests/python

# On a machine with a CUDA GPU: every op and every VJP run on CUDA, with a summary.
gpu-check: $(STAMP)
	$(BIN)/python -m pytest -q -rs tests/python/test_targets.py -k cuda

clean:
	rm -rf $(VENV) build *.egg-info tests/lit/Output
