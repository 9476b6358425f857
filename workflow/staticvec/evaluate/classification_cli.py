"""The flags of ``staticvec evaluate classify`` (X2Static Table 4's sentence classification) from the
workflow config: :func:`config_arguments` turns the config's ``classification`` section into them for
the workflow rule. The command itself is built in :mod:`staticvec.evaluate.cli`.

Kept apart from :mod:`staticvec.evaluate.classification` so that neither building the command line
nor planning the workflow imports torch.
"""

from __future__ import annotations

import shlex

DATASETS = ("mr", "cr", "subj", "mpqa", "trec", "sst5")  # = classification_data.DATASET_NAMES

# config key → flag, for the settings that map one to one.
SETTING_FLAGS = {
    "filters": "--filters",
    "kernel_size": "--kernel-size",
    "dropout": "--dropout",
    "batch_size": "--batch-size",
    "epochs": "--epochs",
    "learning_rates": "--learning-rates",
    "select_by": "--select-by",
    "max_tokens": "--max-tokens",
    "tokenization": "--tokenization",
    "trec_labels": "--trec-labels",
    "split": "--split",
    "holdout_fraction": "--holdout-fraction",
}


def config_arguments(config: dict) -> str:
    """The ``evaluate classify`` flags for a workflow config: datasets, seeds, device and the protocol settings."""
    section = config.get("classification", {})
    seeds = section.get("seeds") or config.get("seeds") or [1]
    words = ["--datasets", *section.get("datasets", DATASETS), "--seeds", *map(str, seeds), "--device", config.get("device", "auto")]
    for key, flag in SETTING_FLAGS.items():
        if key in section:
            value = section[key]
            words += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    if "refit" in section:
        words.append("--refit" if section["refit"] else "--no-refit")
    return " ".join(shlex.quote(w) for w in words)
