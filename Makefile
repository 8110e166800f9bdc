# `make demo` and `make test` do all the set-up on a fresh machine: their own venv, then the job.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint venv clean bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/gpuwrite demo

lint: $(STAMP)
	$(VENV)/bin/ruff check gpuwrite kernels
	$(VENV)/bin/mypy gpuwrite kernels

# The GPU backend's tests run in a second pytest process under numba's CUDA simulator (small inputs):
# the simulator is chosen when numba is imported, so it cannot share a process with the CPU tests.
test: $(STAMP) lint
	$(PY) -m pytest -q tests
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q tests/gpu

bench: $(STAMP)
	$(PY) bench/write_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
