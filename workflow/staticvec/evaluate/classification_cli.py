"""``staticvec classify``: score one embedding file on the sentence-classification sets (X2Static Table 4).

Kept apart from :mod:`staticvec.evaluate.classification` so that building the CLI does not import
torch; :func:`config_arguments` turns the config's ``classification`` section into the command's
flags for the workflow rule.
"""

from __future__ import annotations

import argparse
import json
import shlex

DATASETS = ("mr", "cr", "subj", "mpqa", "trec", "sst5")  # = classification_data.DATASET_NAMES

# config key → flag, for the settings that map one to one.
_SETTING_FLAGS = {
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


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "classify",
        help="score an embedding with the X2Static CNN on MR, CR, SUBJ, MPQA, TREC, SST-5",
        description="Train the X2Static sentence CNN on frozen embeddings; write test macro-F1 and "
        "accuracy (mean ± std over seeds) per data set as JSON. Defaults are the paper's protocol.",
    )
    p.add_argument("--vectors", required=True, help="embedding file (word2vec text/binary, .npy + .vocab)")
    p.add_argument("--format", choices=("word2vec", "glove", "binary", "npy"), help="embedding format (default: from the name)")
    p.add_argument("--data-dir", required=True, help="directory with the data files (rt-polarity.*, custrev.*, ...)")
    p.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS), metavar="NAME",
                   help=f"data sets (default all: {' '.join(DATASETS)})")
    p.add_argument("--seeds", nargs="+", type=int, default=[1], help="one run per seed (default 1)")
    p.add_argument("--out", required=True, help="result JSON")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where the CNN trains (auto: CUDA when available)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--checkpoint", help="finished runs are kept here to resume an interrupted job (default OUT.partial.jsonl)")
    g = p.add_argument_group("protocol (defaults: X2Static)")
    g.add_argument("--filters", type=int, default=100, help="convolution filters (X2Static: 100)")
    g.add_argument("--kernel-size", type=int, default=3, help="convolution width in tokens (X2Static: 3)")
    g.add_argument("--dropout", type=float, default=0.5, help="dropout before the output layer (X2Static: 0.5)")
    g.add_argument("--batch-size", type=int, default=50, help="sentences per step (X2Static: 50)")
    g.add_argument("--epochs", type=int, nargs="+", default=list(range(8, 17)), help="epoch grid (default 8 … 16)")
    g.add_argument("--learning-rates", type=float, nargs="+", default=[1e-4, 3e-4, 1e-3],
                   help="Adam learning-rate grid (X2Static: 1e-4 3e-4 1e-3)")
    g.add_argument("--select-by", choices=("macro_f1", "accuracy"), default="macro_f1", help="validation metric choosing the grid cell")
    g.add_argument("--refit", action=argparse.BooleanOptionalAction, default=True,
                   help="retrain on train+validation with the chosen cell (paper)")
    g.add_argument("--max-tokens", type=int, default=64, help="sentences are cut to this many tokens")
    g.add_argument("--tokenization", choices=("split_clitics", "whitespace"), default="split_clitics",
                   help="split_clitics: don't -> do n't (the corpus tokenizer's convention); whitespace: as the files are")
    g.add_argument("--trec-labels", choices=("coarse", "fine"), default="coarse", help="TREC: the 6 coarse or the 50 fine question classes")
    g.add_argument("--split", type=float, nargs=3, default=[0.6, 0.2, 0.2], metavar=("TRAIN", "VALID", "TEST"),
                   help="where no split is given")
    g.add_argument("--holdout-fraction", type=float, default=0.1, help="validation share of train where only train/test is given (TREC)")
    p.set_defaults(handler=_cli_classify)


def _cli_classify(args) -> int:
    import torch

    from staticvec.embeddings import Embeddings
    from dataclasses import asdict
    from pathlib import Path

    from staticvec.evaluate.classification import ClassifierSettings, RunCheckpoint, classify
    from staticvec.files import write_json

    if args.threads:
        torch.set_num_threads(args.threads)
    settings = ClassifierSettings(**{key: getattr(args, key) for key in _SETTING_FLAGS}, refit=args.refit)
    embeddings = Embeddings.load(args.vectors, fmt=args.format)
    stat = Path(args.vectors).stat()
    fingerprint = {
        "settings": asdict(settings),
        "vectors": [str(Path(args.vectors).resolve()), stat.st_size, stat.st_mtime_ns],
        "data_dir": str(Path(args.data_dir).resolve()),
    }
    checkpoint = RunCheckpoint(args.checkpoint or f"{args.out}.partial.jsonl", json.loads(json.dumps(fingerprint)))
    result = classify(embeddings, args.data_dir, args.datasets, args.seeds, settings, args.device, checkpoint)
    result = {"vectors": str(args.vectors), **result}
    write_json(args.out, result)
    checkpoint.remove()
    for name, r in result["datasets"].items():
        print(f"{name:5s} macro-F1 {_fmt(r['macro_f1'])}  accuracy {_fmt(r['accuracy'])}  OOV tokens {100 * r['oov']['token_rate']:.1f}%")
    print(f"average macro-F1 {100 * result['average']['macro_f1']:.1f}  accuracy {100 * result['average']['accuracy']:.1f}")
    return 0


def _fmt(stat: dict) -> str:
    std = "" if stat["std"] is None else f" ± {100 * stat['std']:.1f}"
    return f"{100 * stat['mean']:.1f}{std}"


def config_arguments(config: dict) -> str:
    """The ``classify`` flags for a workflow config: datasets, seeds, device and the protocol settings."""
    section = config.get("classification", {})
    seeds = section.get("seeds") or config.get("seeds") or [1]
    words = ["--datasets", *section.get("datasets", DATASETS), "--seeds", *map(str, seeds), "--device", config.get("device", "auto")]
    for key, flag in _SETTING_FLAGS.items():
        if key in section:
            value = section[key]
            words += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    if "refit" in section:
        words.append("--refit" if section["refit"] else "--no-refit")
    return " ".join(shlex.quote(w) for w in words)
