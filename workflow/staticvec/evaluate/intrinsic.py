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

Scores are fractions (0.612); tables multiply by 100 where the papers print percentages. With
``items`` (the default) a similarity entry also holds each pair's gold score and cosine, and an
analogy entry each question's outcome, in the data set's order (``"items": {...}``), from which
:mod:`staticvec.evaluate.items` recomputes a score on any subset of the items (the claims' common
ground: the pairs every row of a claim scored).
``found``/``total`` is the coverage (pairs, questions or items whose words are all in the
vocabulary) whatever the OOV policy; ``scored`` is how many entered the score.

Command line::

    staticvec evaluate intrinsic VECTORS --out RESULT.json [--data-dir DIR] [--oov drop|mean]
                       [--tasks all|similarity|analogy|...|ws353 ...] [--no-lowercase] [--max-vocab N]
    staticvec evaluate intrinsic VECTORS [VECTORS ...] --protocol NAME OOV,CASE,MAX_VOCAB OUT [OUT ...] ...

(the second form: several protocols, and one result file per protocol and vector file; the workflow
scores every protocol of all the seeds of an embedding in one job).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import os
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.evaluate import analogy, categorization, relational
from staticvec.evaluate.datasets import DATASETS, load_dataset, selected
from staticvec.files import TIMING_KEY
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


def parse_view(text: str) -> tuple[str, bool, int | None]:
    """``OOV,CASE,MAX_VOCAB`` (``mean,lower,all``) → (oov, lowercase, max_vocab)."""
    parts = text.split(",")
    if len(parts) != 3 or parts[0] not in OOV_POLICIES or parts[1] not in ("lower", "keep"):
        raise StaticvecError(f"--protocol view {text!r}: expected OOV,CASE,MAX_VOCAB with OOV one of "
                             f"{', '.join(OOV_POLICIES)}, CASE lower or keep, MAX_VOCAB a number or all")
    if parts[2] == "all":
        max_vocab = None
    else:
        try:
            max_vocab = int(parts[2])
        except ValueError:
            raise StaticvecError(f"--protocol view {text!r}: MAX_VOCAB {parts[2]!r} is not a number or all") from None
        if max_vocab < 1:
            raise StaticvecError(f"--protocol view {text!r}: MAX_VOCAB must be a positive number of words")
    return parts[0], parts[1] == "lower", max_vocab


@dataclasses.dataclass(frozen=True)
class ScoringOptions:
    """How a task kind scores a data set (the ``evaluate`` keywords a scorer may read)."""

    analogy_method: str = "3cosadd"
    relational_score: str = "cosine"
    semeval_split: str = "all"
    categorization_method: str = "all"
    seed: int = 0
    device: str = "auto"
    memory_mb: int = 1024
    items: bool = True


#: task kind (:attr:`Dataset.task <staticvec.evaluate.datasets.Dataset.task>`) → its scorer
#: ``(lookup, parsed data, options) -> result entry``; a new kind of task registers its scorer here
SCORERS: dict[str, Callable[[VectorLookup, object, ScoringOptions], dict]] = {
    "similarity": lambda lookup, data, o: evaluate_similarity(lookup, data, items=o.items),
    "analogy": lambda lookup, data, o: analogy.evaluate_analogy(lookup, data, o.analogy_method, o.device,
                                                                o.memory_mb, items=o.items),
    "relational": lambda lookup, data, o: relational.evaluate_relational(lookup, data, o.relational_score,
                                                                         o.semeval_split),
    "categorization": lambda lookup, data, o: categorization.evaluate_categorization(
        lookup, data, o.categorization_method, o.seed),
}


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
    items: bool = True,
    parsed: dict | None = None,
) -> dict:
    """Evaluate ``embeddings`` (an :class:`Embeddings` or a file) on ``tasks``; see the module doc.

    ``items``: keep each similarity pair's cosine and each analogy question's outcome in the result
    (:mod:`staticvec.evaluate.items`); the scores are the same either way. ``parsed``: a dict used as
    a cache of the parsed data sets (name → data), shared between calls on the same data directory
    (:func:`evaluate_protocols`)."""
    if not isinstance(embeddings, Embeddings):
        embeddings = Embeddings.load(embeddings)
    names, want_neighbours = selected(tasks)
    if names:
        data_dir = find_data_dir(data_dir)
    lookup = VectorLookup(embeddings, oov=oov, lowercase=lowercase, max_vocab=max_vocab)
    options = ScoringOptions(analogy_method, relational_score, semeval_split, categorization_method, seed, device,
                             memory_mb, items)
    started = time.perf_counter()
    results = {}
    for name in names:
        t0 = time.perf_counter()
        if parsed is None or name not in parsed:
            data = load_dataset(name, data_dir)
            if parsed is not None:
                parsed[name] = data
        data = parsed[name] if parsed is not None else data
        entry = SCORERS[DATASETS[name].task](lookup, data, options)
        entry["oov_policy"] = lookup.oov  # also at the top level; repeated so each entry stands alone
        entry[TIMING_KEY] = {"seconds": round(time.perf_counter() - t0, 3)}  # skipped when two runs are compared
        results[name] = entry
        score = "n/a" if entry["score"] is None else f"{entry['score']:.4f}"
        log.info("%-12s %-9s %s  (found %d/%d, %.1fs)", name, entry["metric"], score, entry["found"], entry["total"],
                 entry[TIMING_KEY]["seconds"])
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
            "items": items,
            "data_dir": None if data_dir is None else str(data_dir),
        },
        "results": results,
        TIMING_KEY: {"seconds": round(time.perf_counter() - started, 3)},
    }


def evaluate_protocols(
    embeddings: Embeddings | str | os.PathLike,
    views: dict[str, tuple[str, bool, int | None]],
    tasks: Iterable[str] = ("all",),
    data_dir: str | os.PathLike | None = None,
    parsed: dict | None = None,
    **settings,
) -> dict[str, dict]:
    """Score several protocols of one embedding from one load: ``{name: (oov, lowercase, max_vocab)}``
    → ``{name: result}``, each result exactly what :func:`evaluate` returns for that protocol alone.

    The vectors are read once and the data sets parsed once (``parsed``: a cache of parsed data
    sets to share with other calls on the same data directory). Two protocols whose views coincide
    on this embedding (same OOV policy and case, and vocabulary cuts that keep the same rows, e.g.
    MUSE's 200,000 words and no cut on a 50,000-word embedding) are scored once; the second
    result is a copy that keeps its own ``max_vocab`` and names the first under ``same_view_as``.
    """
    if not isinstance(embeddings, Embeddings):
        embeddings = Embeddings.load(embeddings)
    tasks = list(tasks)
    if selected(tasks)[0]:
        data_dir = find_data_dir(data_dir)
    parsed = {} if parsed is None else parsed
    results: dict[str, dict] = {}
    scored: dict[tuple, str] = {}
    distinct: dict[bool, int] = {}  # words of the view before the cut: case-folded ones counted once
    for name, (oov, lowercase, max_vocab) in views.items():
        if max_vocab is not None and max_vocab < 1:
            raise StaticvecError(f"protocol {name}: max_vocab must be a positive number of words")
        if bool(lowercase) not in distinct:
            distinct[bool(lowercase)] = len({w.lower() for w in embeddings.words}) if lowercase else len(embeddings)
        words = distinct[bool(lowercase)]
        rows = words if max_vocab is None else min(max_vocab, words)
        key = (oov, bool(lowercase), rows)
        if key in scored:
            first = scored[key]
            result = copy.deepcopy(results[first])
            result["max_vocab"] = max_vocab
            result["same_view_as"] = first
            log.info("protocol %s: same view of this embedding as %s; its scores are copied", name, first)
        else:
            log.info("protocol %s: oov %s, lowercase %s, max_vocab %s", name, oov, lowercase, max_vocab)
            result = evaluate(embeddings, tasks, data_dir, oov=oov, lowercase=lowercase, max_vocab=max_vocab,
                              parsed=parsed, **settings)
            scored[key] = name
        results[name] = result
    return results



def _uses_torch(tasks) -> bool:
    """Whether scoring ``tasks`` runs torch (analogy scoring does; nothing else)."""
    return any(DATASETS[name].task == "analogy" for name in selected(tasks)[0])


def evaluate_to_files(
    vectors: str | os.PathLike | Sequence[str | os.PathLike],
    views: dict,
    outs: dict | Sequence[dict],
    fmt: str | None = None,
    threads: int | None = None,
    **settings,
) -> list[dict]:
    """Score each protocol of ``views`` (:func:`evaluate_protocols`) of each vector file and write
    each result, with the file's name, to ``outs[protocol]``; ``threads`` caps BLAS and torch.

    ``vectors`` is one file, or several (the seeds of one embedding) with ``outs`` a list of
    ``{protocol: result file}`` in the same order: one process then imports the libraries and parses
    the data sets once for all of them (the import alone, torch and scikit-learn, is ~3 s a job),
    and each file's results are exactly those of a job of its own. Each file is read and scored in
    turn; its results are written before the next file is read. Returns the results, file by file."""
    from staticvec.files import write_json

    files = [vectors] if isinstance(vectors, (str, os.PathLike)) else list(vectors)
    outs = [outs] if isinstance(outs, dict) else list(outs)
    if len(files) != len(outs):
        raise StaticvecError(f"{len(files)} vector files but {len(outs)} sets of result files: one set per file")
    parsed: dict = {}
    done = []
    with contextlib.ExitStack() as stack:
        if threads:
            from threadpoolctl import threadpool_limits

            if _uses_torch(settings.get("tasks", ("all",))):  # only analogy does: a job without it never imports torch
                import torch

                torch.set_num_threads(threads)
            stack.enter_context(threadpool_limits(threads))
        for path, out in zip(files, outs):
            embeddings = Embeddings.load(path, fmt=fmt)
            results = evaluate_protocols(embeddings, views, parsed=parsed, **settings)
            for name, result in results.items():
                write_json(out[name], {"vectors": str(path), **result})
                log.info("wrote %s (%.1fs)", out[name], result[TIMING_KEY]["seconds"])
            done.append(results)
    return done
