"""The command-line options of the evaluation rules, from the workflow config: what each job of
``staticvec evaluate intrinsic|classify|tag`` is told (data directories, protocols, settings). The
planning layer's, so that neither planning nor building a command imports torch.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from staticvec.errors import StaticvecError
from staticvec.evaluate.tagging.data import TASKS

# ---------------------------------------------------------------- intrinsic evaluation

def data_dir_from_config(config: dict) -> str:
    """``evaluation.data_dir``, else ``<resources.download_dir>/eval``: the checksum-verified copies
    the resource rules place there (from the mirror or the data sets' URLs)."""
    evaluation = config.get("evaluation", {}) or {}
    if evaluation.get("data_dir"):
        return str(evaluation["data_dir"])
    resources = config.get("resources", {}) or {}
    return str(Path(resources.get("download_dir", "resources/data"), "eval"))


def _protocol(config: dict, protocol: str) -> dict:
    protocols = (config.get("evaluation", {}) or {}).get("protocols", {})
    if protocol not in protocols:
        raise StaticvecError(f"unknown evaluation protocol {protocol!r}; config evaluation.protocols has: "
                             f"{', '.join(protocols)}")
    return protocols[protocol]


# (section of config evaluation, key) → flag of ``staticvec evaluate intrinsic``. A key the config leaves
# out is not passed, so the command's own default applies: a default is written once, in the command.
INTRINSIC_SETTING_FLAGS = {
    ("analogy", "method"): "--analogy-method",
    ("analogy", "memory_mb"): "--memory-mb",
    ("relational", "score"): "--relational-score",
    ("relational", "split"): "--semeval-split",
    ("categorization", "method"): "--categorization-method",
    ("categorization", "seed"): "--seed",
    ("neighbours", "topn"): "--topn",
}


def _flag_words(flag: str, value) -> list[str]:
    """``flag`` followed by ``value`` (a list: one word per item)."""
    return [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]


def _device_option(config: dict) -> list[str]:
    return _flag_words("--device", config["device"]) if "device" in config else []


def _shared_options(config: dict, tasks: list[str] | None = None) -> list[str]:
    """The options every protocol shares: data, tasks (``tasks``, else the config's), and each task's
    method (those the config sets)."""
    evaluation = config.get("evaluation") or {}
    options = ["--data-dir", data_dir_from_config(config)]
    if tasks is not None:
        options += _flag_words("--tasks", list(tasks))
    elif "tasks" in evaluation:
        options += _flag_words("--tasks", evaluation["tasks"])
    for (section, key), flag in INTRINSIC_SETTING_FLAGS.items():
        settings = evaluation.get(section) or {}
        if key in settings:
            options += _flag_words(flag, settings[key])
    if "items" in evaluation:
        options.append("--items" if evaluation["items"] else "--no-items")
    options += _device_option(config)
    neighbours = evaluation.get("neighbours") or {}
    if "words" in neighbours:
        options += ["--neighbours", *neighbours["words"]]
    return options


def cli_options(config: dict, protocol: str) -> list[str]:
    """``staticvec evaluate intrinsic`` options for evaluation protocol ``protocol`` of the workflow config."""
    chosen = _protocol(config, protocol)
    options = ["--oov", chosen["oov"]]
    if not chosen.get("lowercase", True):
        options.append("--no-lowercase")
    if chosen.get("max_vocab"):
        options += ["--max-vocab", str(chosen["max_vocab"])]
    return options + _shared_options(config)


def protocol_view(config: dict, protocol: str) -> str:
    """``OOV,CASE,MAX_VOCAB`` of a protocol, as ``--protocol`` takes it (e.g. ``drop,lower,200000``)."""
    chosen = _protocol(config, protocol)
    case = "lower" if chosen.get("lowercase", True) else "keep"
    return f"{chosen['oov']},{case},{chosen.get('max_vocab') or 'all'}"


def multi_cli_options(config: dict, outputs: dict[str, str] | list[dict[str, str]],
                      tasks: list[str] | None = None) -> list[str]:
    """``staticvec evaluate intrinsic`` options scoring several protocols from one load: ``{protocol: result
    file}``, or a list of them, one per vector file of the job (the seeds of an embedding, in the order
    the files are given); ``tasks``: the data sets to score (default: the config's ``evaluation.tasks``)."""
    per_file = [outputs] if isinstance(outputs, dict) else list(outputs)
    options = []
    for protocol in per_file[0]:
        options += ["--protocol", protocol, protocol_view(config, protocol), *(str(out[protocol]) for out in per_file)]
    return options + _shared_options(config, tasks)


# ---------------------------------------------------------------- sentence classification (X2Static Table 4)


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


def config_arguments(config: dict, seeds: list[int] | None = None) -> str:
    """The ``evaluate classify`` flags for a workflow config: datasets, seeds, device and the protocol settings;
    ``seeds``: the row's classifier seeds (the planning layer's ``Workflow.extrinsic_seeds``), else the config's."""
    section = config.get("classification") or {}
    words = _flag_words("--datasets", section["datasets"]) if "datasets" in section else []
    seeds = seeds or section.get("seeds") or config.get("seeds")  # classification.seeds: null means the run's seeds
    if seeds:
        words += _flag_words("--seeds", seeds)
    words += _device_option(config)
    for key, flag in SETTING_FLAGS.items():
        if key in section:
            words += _flag_words(flag, section[key])
    if "refit" in section:
        words.append("--refit" if section["refit"] else "--no-refit")
    return " ".join(shlex.quote(w) for w in words)


# ---------------------------------------------------------------- sequence labelling

# Open data sets: task -> (format, resource group of config/resources.yaml, its path under download_dir)
OPEN_SETS = {
    "chunk": ("conll2000", "eval-conll2000", "eval/sequence/conll2000"),
    "pos": ("ud", "eval-ud-ewt", "eval/sequence/ud_english_ewt"),
}


@dataclass
class DataLocation:
    fmt: str
    directory: str
    resource_group: str | None  # a group of the resource registry; None for data the user supplied


def task_data_location(config: dict, task: str, workflow=None) -> DataLocation | None:
    """Where ``task``'s data is, from the workflow config; None when no data is supplied (NER).

    POS prefers the user's PTB WSJ (``resources.restricted.ptb_wsj``) over UD EWT; NER needs
    CoNLL-2003 or OntoNotes from ``resources.restricted`` (``tagging.ner_source`` picks one
    when both are given). The open sets are the registry's groups, fetched (or copied from the
    mirror) into ``resources.download_dir``; ``workflow`` (a ``staticvec.dag.workflow.Workflow``)
    names their folders when given.
    """
    if task not in TASKS:
        raise StaticvecError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    restricted = config.get("resources", {}).get("restricted") or {}
    if task == "pos" and restricted.get("ptb_wsj"):
        return DataLocation("ptb", str(restricted["ptb_wsj"]), None)
    if task == "ner":
        preferred = config.get("tagging", {}).get("ner_source", "conll2003")
        for fmt in (preferred, "conll2003", "ontonotes"):
            if restricted.get(fmt):
                return DataLocation(fmt, str(restricted[fmt]), None)
        return None
    fmt, group, rel_path = OPEN_SETS[task]
    if workflow is not None:
        return DataLocation(fmt, workflow.resource_dir(group), group)
    download_dir = config.get("resources", {}).get("download_dir", "resources/data").rstrip("/")
    return DataLocation(fmt, f"{download_dir}/{rel_path}", group)


def tag_data_arguments(config: dict, task: str, workflow=None) -> str:
    """The ``--data-dir/--data-format`` arguments of ``staticvec evaluate tag`` for ``task`` (empty: not supplied)."""
    location = task_data_location(config, task, workflow)
    if location is None:
        return ""
    return f"--data-dir {shlex.quote(location.directory)} --data-format {location.fmt}"


def tag_data_inputs(config: dict, task: str, workflow) -> list[str]:
    """Snakemake inputs of a tagging job's data: the open set's verification marker (else nothing)."""
    location = task_data_location(config, task, workflow)
    if location is None or location.resource_group is None:
        return []
    return [workflow.resource_marker(location.resource_group)]


def tagger_arguments(config: dict) -> str:
    """The run-wide arguments of ``staticvec evaluate tag`` from ``config['tagging']`` (one shell-quoted string)."""
    tagging = config.get("tagging") or {}
    args = ["--hparams", shlex.quote(json.dumps(tagging.get("tagger") or {}, sort_keys=True))]
    for key, flag in (("dev_fraction", "--dev-fraction"), ("dev_split_seed", "--dev-split-seed")):
        if key in tagging:
            args += _flag_words(flag, tagging[key])
    return " ".join(args + _device_option(config))
