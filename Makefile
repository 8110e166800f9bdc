# `make demo` and `make test` do all the set-up on a fresh machine: their own venv, then the job.
# `make demo` installs only what the demo runs (gpuwrite and the writers it is compared with);
# `make venv`, `make test` and `make lint` install everything (tests, Spark, the CUDA simulator, linters).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.demo-stamp
# An editable install of this layout (the top-level kernels/ installed as gpuwrite.kernels, pyproject's package-dir)
# goes through setuptools' import finder, and setuptools then always warns that "folders in your working directory
# with the same name as your package" may take precedence during imports. The one such folder here, ./gpuwrite, is
# the installed source itself, and gpuwrite.kernels resolves to kernels/ from any directory, so the notice is
# silenced for these installs (only that message); what gets installed is the same.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -e

.PHONY: demo test lint venv clean bench warmup gpu-wheels

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(VENV)/bin/python
	$(EDITABLE) '.[demo]'
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(EDITABLE) '.[test,dev]'
	touch $(STAMP) $(DEMO_STAMP)

venv: $(STAMP)

demo: $(DEMO_STAMP)
	$(VENV)/bin/gpuwrite demo

# Compile the CPU kernels into numba's cache now (else the first write does it, once).
warmup: $(DEMO_STAMP)
	$(VENV)/bin/gpuwrite warmup

lint: $(STAMP)
	$(VENV)/bin/ruff check gpuwrite kernels
	$(VENV)/bin/mypy gpuwrite kernels

# The GPU backend's tests run in a second pytest process under numba's CUDA simulator (small inputs):
# the simulator is chosen when numba is imported, so it cannot share a process with the CPU tests.
# That run includes whole files written with device="gpu" (tests/gpu/test_simulator_identity.py, the corpus in
# tests/identity_corpus.py), byte-identical to the CPU's.
test: $(STAMP) lint
	$(PY) -m pytest -q tests
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q tests/gpu

bench: $(STAMP)
	$(EDITABLE) '.[bench]'
	$(PY) bench/write_bench.py

# The wheels the lent GPU machine (Python 3.12, CUDA 13) lacks, in .whl/ (at most 60 MiB): carried by a device
# call that runs `bash bench/gpu_session.sh $OUT .whl`.
gpu-wheels: $(STAMP)
	$(PY) bench/gpu_wheels.py --dest .whl

clean:
	rm -rf $(VENV) build *.egg-info kernels/_cache
