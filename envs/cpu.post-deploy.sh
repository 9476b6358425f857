#!/usr/bin/env bash
# Run by Snakemake in the new conda environment: the packages installed without their requirements'
# pins (pyproject.toml: [tool.staticvec] no-deps; tests/test_envs.py checks they agree).
set -euo pipefail
python -m pip install --no-deps "tokenlearn>=0.2.1,<0.3"
