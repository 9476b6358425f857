# Shared helpers for the rule files: config validation, paths, target lists.
# Nothing here computes results; it only names files.

import json

from staticvec.config import validate_config
from staticvec.workflow import Workflow

validate_config(config, sources="config/config.yaml + --configfile overrides")
W = Workflow(config)
R = W.results_dir  # every output lives under this directory
W.check_resources()  # one error listing every missing input, before any job runs


def final_targets():
    return W.final_targets()
