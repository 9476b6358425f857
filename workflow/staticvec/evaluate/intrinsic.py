"""The intrinsic evaluation suite: every data set of the four papers in one call, one JSON result.

``evaluate(embeddings, tasks, data_dir, oov, lowercase, max_vocab)`` runs the chosen data sets
(see :mod:`staticvec.evaluate.datasets`) and returns::

    {"vocab_size": 99812, "dim": 300, "oov_policy": "drop", "lowercase": true, "max_vocab": null,
     "vocab_size_file": 100000, "settings": {...},
     "results": {"ws353": {"task": "similarity", "metric": "spearman", "score": 0.61,
                           "found": 350, "total": 353, "scored": 350, "oov_policy": "drop", ...},
                 "google": {"task": "analogy", "metric": "accuracy", "score": 0.52,
                            "semantic": 0.61, "syntactic": 0.45, "groups": {...}, "sections": {...}},
                 "semeval2012": {..., "variants": {"cosine": .., "dot": .., "web": ..}},
                 "ap": {..., "methods": {"ward_euclidean": .., ..., "kmeans": ..}},
                 "neighbours": {"neighbours": {"light": [["lights", 0.71], ...], ...}}}}

Scores are fractions (0.612); tables multiply by 100 where the papers print percentages.
``found``/``total`` is the coverage (pairs, questions or items whose words are all in the
vocabulary) whatever the OOV policy; ``scored`` is how many entered the score.

Command line::

    staticvec evaluate VECTORS --out RESULT.json [--data-dir DIR] [--oov drop|mean]
                       [--tasks all|similarity|analogy|...|ws353 ...] [--no-lowercase] [--max-vocab N]
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Iterable

from staticvec.embeddings import FORMATS, Embeddings
from staticvec.errors import StaticvecError
from staticvec.evaluate import analogy, categorization, relational
from staticvec.evaluate.datasets import DATASETS, datasets_for, load_dataset
from staticvec.evaluate.lookup import OOV_POLICIES, VectorLookup
from staticvec.evaluate.neighbours import nearest_neighbours
from staticvec.evaluate.similarity import evaluate_similarity

log = logging.getLogger(__name__)

#: searched in order when no data directory is given (download folder, then the offline mirror)
DEFAULT_DATA_DIRS = ("resources/data/eval", "../shared/data/eval")
DEFAULT_NEIGHBOUR_WORDS = ("light", "while")


def find_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    if data_dir is not None:
        path = Path(data_dir)
        if not path.is_dir():
            raise StaticvecError(f"evaluation data directory {path} not found")
        return path
    for candidate in DEFAULT_DATA_DIRS:
        if Path(candidate).is_dir():
            return Path(candidate)
    raise StaticvecError(
        f"no evaluation data directory: none of {', '.join(DEFAULT_DATA_DIRS)} exists; pass --data-dir"
    )


def data_dir_from_config(config: dict) -> str:
    """``evaluation.data_dir``, else ``<resources.download_dir>/eval``: the checksum-verified copies
    the resource rules place there (from the mirror or the data sets' URLs)."""
    evaluation = config.get("evaluation", {}) or {}
    if evaluation.get("data_dir"):
        return str(evaluation["data_dir"])
    resources = config.get("resources", {}) or {}
    return str(Path(resources.get("download_dir", "resources/data"), "eval"))


def cli_options(config: dict, protocol: str) -> list[str]:
    """``staticvec evaluate`` options for evaluation protocol ``protocol`` of the workflow config."""
    evaluation = config.get("evaluation", {}) or {}
    protocols = evaluation.get("protocols", {})
    if protocol not in protocols:
        raise StaticvecError(f"unknown evaluation protocol {protocol!r}; config evaluation.protocols has: "
                             f"{', '.join(protocols)}")
    chosen = protocols[protocol]
    options = ["--data-dir", data_dir_from_config(config), "--oov", chosen["oov"]]
    if not chosen.get("lowercase", True):
        options.append("--no-lowercase")
    if chosen.get("max_vocab"):
        options += ["--max-vocab", str(chosen["max_vocab"])]
    options += ["--tasks", *evaluation.get("tasks", ["all"])]
    analogy_cfg = evaluation.get("analogy", {})
    relational_cfg = evaluation.get("relational", {})
    categorization_cfg = evaluation.get("categorization", {})
    neighbours_cfg = evaluation.get("neighbours", {})
    options += ["--analogy-method", analogy_cfg.get("method", "3cosadd"),
                "--memory-mb", str(analogy_cfg.get("memory_mb", 1024)),
                "--relational-score", relational_cfg.get("score", "cosine"),
                "--semeval-split", relational_cfg.get("split", "all"),
                "--categorization-method", categorization_cfg.get("method", "all"),
                "--seed", str(categorization_cfg.get("seed", 0)),
                "--topn", str(neighbours_cfg.get("topn", 10)),
                "--device", config.get("device", "auto")]
    options += ["--neighbours", *neighbours_cfg.get("words", DEFAULT_NEIGHBOUR_WORDS)]
    return options


def evaluate(
    embeddings: Embeddings | str | os.PathLike,
    tasks: Iterable[str] = ("all",),
    data_dir: str | os.PathLike | None = None,
    oov: str = "drop",
    lowercase: bool = True,
    max_vocab: int | None = None,
    *,
    analogy_method: str = "3cosadd",
    relational_score: str = "cosine",
    semeval_split: str = "all",
    categorization_method: str = "all",
    seed: int = 0,
    neighbour_words: Iterable[str] = DEFAULT_NEIGHBOUR_WORDS,
    topn: int = 10,
    device: str = "auto",
    memory_mb: int = 1024,
) -> dict:
    """Evaluate ``embeddings`` (an :class:`Embeddings` or a file) on ``tasks``; see the module doc."""
    if not isinstance(embeddings, Embeddings):
        embeddings = Embeddings.load(embeddings)
    tasks = list(tasks)
    selection = [t for t in tasks if t != "neighbours"]
    names = datasets_for(selection) if selection else []
    want_neighbours = "all" in tasks or "neighbours" in tasks
    if names:
        data_dir = find_data_dir(data_dir)
    lookup = VectorLookup(embeddings, oov=oov, lowercase=lowercase, max_vocab=max_vocab)
    started = time.perf_counter()
    results = {}
    for name in names:
        t0 = time.perf_counter()
        data = load_dataset(name, data_dir)
        task = DATASETS[name].task
        if task == "similarity":
            entry = evaluate_similarity(lookup, data)
        elif task == "analogy":
            entry = analogy.evaluate_analogy(lookup, data, analogy_method, device, memory_mb)
        elif task == "relational":
            entry = relational.evaluate_relational(lookup, data, relational_score, semeval_split)
        else:
            entry = categorization.evaluate_categorization(lookup, data, categorization_method, seed)
        entry["oov_policy"] = lookup.oov  # also at the top level; repeated so each entry stands alone
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        results[name] = entry
        score = "n/a" if entry["score"] is None else f"{entry['score']:.4f}"
        log.info("%-12s %-9s %s  (found %d/%d, %.1fs)", name, entry["metric"], score, entry["found"], entry["total"],
                 entry["seconds"])
    if want_neighbours:
        results["neighbours"] = nearest_neighbours(lookup, list(neighbour_words), topn)
    return {
        **lookup.describe(),
        "settings": {
            "analogy_method": analogy_method,
            "relational_score": relational_score,
            "semeval_split": semeval_split,
            "categorization_method": categorization_method,
            "seed": seed,
            "data_dir": None if data_dir is None else str(data_dir),
        },
        "results": results,
        "seconds": round(time.perf_counter() - started, 3),
    }


# ---------------------------------------------------------------- CLI


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="intrinsic evaluation (similarity, analogy, SemEval-2012, categorization, neighbours) to JSON",
        description="Evaluate a word-embedding file on the intrinsic tasks of the four papers.",
    )
    p.add_argument("vectors", help="word2vec text (.txt/.vec[.gz]) or binary (.bin) file, or the project's .npy")
    p.add_argument("--out", required=True, help="RESULT.json to write (atomically)")
    p.add_argument("--format", choices=FORMATS, help="vector file format (default: from the file name)")
    p.add_argument("--data-dir", help=f"evaluation data directory (default: first of {', '.join(DEFAULT_DATA_DIRS)})")
    p.add_argument("--oov", choices=OOV_POLICIES, default="drop",
                   help="drop: leave out pairs/questions/items with a missing word (MUSE, gensim, Faruqui, GloVe); "
                        "mean: use the mean vector for a missing word (web: SemGloVe, Context-to-Vec)")
    p.add_argument("--tasks", nargs="+", default=["all"],
                   help="task names (similarity analogy relational categorization neighbours), data set names "
                        f"({' '.join(DATASETS)}) or all")
    p.add_argument("--no-lowercase", dest="lowercase", action="store_false", help="keep case (default: lower-case)")
    p.add_argument("--max-vocab", type=int, help="evaluate only the first N words of the file (MUSE: 200000)")
    p.add_argument("--analogy-method", choices=analogy.METHODS, default="3cosadd")
    p.add_argument("--relational-score", choices=relational.SCORES, default="cosine",
                   help="SemEval-2012 pair score: cosine (Wang et al. Eq. 17) or dot (web); all variants are saved")
    p.add_argument("--semeval-split", choices=relational.SPLITS, default="all",
                   help="SemEval-2012 relations: all 79 (web), or the 69 test / 10 training ones")
    p.add_argument("--categorization-method", choices=categorization.METHODS, default="all")
    p.add_argument("--seed", type=int, default=0, help="seed of the categorization shuffle and k-means")
    p.add_argument("--neighbours", nargs="*", default=list(DEFAULT_NEIGHBOUR_WORDS), metavar="WORD",
                   help="words whose nearest neighbours are listed (default: light while)")
    p.add_argument("--topn", type=int, default=10, help="neighbours per word")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="where analogy scoring runs")
    p.add_argument("--threads", type=int, help="CPU threads (BLAS, torch, k-means); default: all")
    p.add_argument("--memory-mb", type=int, default=1024, help="memory budget of the analogy score matrices")
    p.set_defaults(handler=_cli_evaluate)


def _cli_evaluate(args) -> int:
    from staticvec.files import write_json

    if args.max_vocab is not None and args.max_vocab < 1:
        raise StaticvecError("--max-vocab must be a positive number of words")
    with contextlib.ExitStack() as stack:
        if args.threads:
            import torch
            from threadpoolctl import threadpool_limits

            torch.set_num_threads(args.threads)
            stack.enter_context(threadpool_limits(args.threads))
        result = _run_cli(args)
    write_json(args.out, {"vectors": str(args.vectors), **result})
    log.info("wrote %s (%.1fs)", args.out, result["seconds"])
    return 0


def _run_cli(args) -> dict:
    embeddings = Embeddings.load(args.vectors, fmt=args.format)
    return evaluate(
        embeddings,
        tasks=args.tasks,
        data_dir=args.data_dir,
        oov=args.oov,
        lowercase=args.lowercase,
        max_vocab=args.max_vocab,
        analogy_method=args.analogy_method,
        relational_score=args.relational_score,
        semeval_split=args.semeval_split,
        categorization_method=args.categorization_method,
        seed=args.seed,
        neighbour_words=args.neighbours,
        topn=args.topn,
        device=args.device,
        memory_mb=args.memory_mb,
    )
