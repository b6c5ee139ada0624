# Two commands: `make run` (the main job) and `make test` (the whole suite).
# Each creates .venv on first use and installs only what it needs: `make run` the [train] extra,
# `make test` the [dev] extra (every extra and the test tools).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Both installs take torch's CPU build (2.13.0 lies on the CI machine's disk). Override with e.g.
# `make test TORCH_SPEC='torch>=2.13'`; the package itself accepts any torch >= 2.2.
TORCH_SPEC ?= torch==2.13.0
SOURCES := pyproject.toml setup.py euchre_agents/_dds.c

.PHONY: run test bench clean clean-cache

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# What training needs: the core and [train].
$(VENV)/.installed-train: $(SOURCES) | $(VENV)/bin/python
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[train]"
	touch $@

# What the tests need: every extra and the test tools ([dev]).
$(VENV)/.installed: $(SOURCES) | $(VENV)/bin/python
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.installed-train

run: $(VENV)/.installed-train
	$(PY) train.py

test: $(VENV)/.installed
	$(PY) -m pytest -n 2 --dist loadgroup tests

bench: $(VENV)/.installed
	$(PY) benchmarks/throughput.py

# numba's cached kernels only (after editing a module whose constants other kernels compile in).
clean-cache:
	find . -name '*.nb[ic]' -not -path './.git/*' -not -path './$(VENV)/*' -print -delete

# The venv, build outputs and caches only: never runs/ or results/ (trained models and measured results).
clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis euchre_agents/_dds*.so
	find . -path ./.git -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
