# Tenzr: `make demo` runs the main job, `make test` runs the whole suite.
# Both create the virtual environment in .venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck lit pytest gpu-check gpu-bundle fuzz bench clean

$(STAMP): pyproject.toml
	@echo "Setting up $(VENV) (IREE's compiler and runtime, NumPy, MPI, the test tools): about a minute the first time..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,distributed]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/mlp.py
	@echo
	@echo "Tenzr is installed in $(VENV). To use tenzr-opt, tenzr-compile, tenzr-run and 'import tenzr'"
	@echo "in this shell:  . $(VENV)/bin/activate"

test: lint typecheck lit pytest

lint: $(STAMP)
	$(BIN)/ruff check .

# mypy reads packages from folders named after them; the distribution maps python/tenzr,
# dialect/, passes/ and tools/ to tenzr, tenzr.dialect, ..., so a tree of links mirrors that.
TYPED := build/typecheck
typecheck: $(STAMP)
	@rm -rf $(TYPED) && mkdir -p $(TYPED)/tenzr
	@for f in python/tenzr/*.py python/tenzr/scipy python/tenzr/nn python/tenzr/example_libraries; do ln -s "$(CURDIR)/$$f" $(TYPED)/tenzr/; done
	@for d in dialect passes tools; do ln -s "$(CURDIR)/$$d" $(TYPED)/tenzr/$$d; done
	cd $(TYPED) && MYPYPATH=. $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p tenzr

lit: $(STAMP)
	$(BIN)/lit --succinct tests/lit

pytest: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile tests/python

# Tenzr against JAX on this machine (installs the optional jax and matplotlib first).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/run.py

# Fuzzing for FUZZ_SECONDS in all, with fresh seeds: half mutates tenzr-opt's input and
# misuses the API (tests/python/fuzz_tools.py: crashes, hangs, tracebacks, unlocated errors,
# and the gradients of accepted mutants against finite differences), half differentiates
# random programs against NumPy (50 per seed; a failure's shrunk program is saved in
# tests/python/fuzz_regressions/). A failure stops the run.
FUZZ_SECONDS ?= 600
fuzz: $(STAMP)
	$(BIN)/python tests/python/fuzz_tools.py --seconds $$(( $(FUZZ_SECONDS) / 2 ))
	@end=$$(( $$(date +%s) + $(FUZZ_SECONDS) / 2 )); seed=$$(date +%s); runs=0; \
	while [ $$(date +%s) -lt $$end ]; do \
	  TENZR_FUZZ_SEED=$$seed TENZR_FUZZ_EXAMPLES=50 $(BIN)/python -m pytest -q -x \
	    tests/python/test_fuzz.py -k random_programs || exit 1; \
	  seed=$$((seed + 1)); runs=$$((runs + 1)); \
	done; echo "fuzzing: $$((runs * 50)) random programs, no failure"

# On a machine with a CUDA GPU: every op and every VJP run on CUDA, with a summary.
gpu-check: $(STAMP)
	$(BIN)/python -m pytest -q -rs tests/python/test_targets_cuda.py

# A GPU machine without network or an IREE compiler: record the CUDA checks here, run
# `python3 tests/python/cuda_run_bundle.py build/gpu-bundle out.npz` there (NumPy and IREE's
# runtime only), then judge here: `python tests/python/cuda_replay.py check build/gpu-bundle out.npz`.
gpu-bundle: $(STAMP)
	$(BIN)/python tests/python/cuda_replay.py record build/gpu-bundle

clean:
	rm -rf $(VENV) build *.egg-info tests/lit/Output
