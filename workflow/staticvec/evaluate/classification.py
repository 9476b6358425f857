"""Downstream sentence classification with a CNN on frozen word embeddings (X2Static, Table 4).

The protocol of Gupta & Jaggi (2021), section 4.3, and the choices it leaves open:

* **Model** (paper): the embedding layer is the evaluated table, frozen; a convolution of 100
  filters of width 3, ReLU, global max-pooling over the sentence, dropout 0.5, a linear layer to
  the classes; cross-entropy; Adam. Open choices, ours: the convolution is "same"-padded (one
  zero vector each side), so every word is the centre of one window and one- or two-word items
  (MPQA phrases) still have windows; the max-pool runs over the sentence's own positions only,
  so a sentence's score does not depend on the batch it is in. Batches of 50 sentences
  (Kim 2014's value; the paper gives none); sentences are cut to their first ``max_tokens`` = 64
  tokens (longest items: SUBJ 120, CR 106; the cut count is reported). PyTorch's default
  initialisation (``nn.Conv1d``/``nn.Linear``) and Adam's default betas.
* **Words**: looked up lower-cased (an embedding with upper-case words is lower-cased first,
  keeping each word's most frequent row); a word without a vector (OOV) gets the zero vector, as
  the padding does. The OOV rate (tokens and types) is reported for each data set.
* **Grid and selection** (paper): epochs 8-16 and learning rates 1e-4, 3e-4, 1e-3, chosen on
  validation; then a fresh model is trained on train + validation with the chosen setting and
  scored on test (``refit``; with ``refit: false`` the grid run's own model at the chosen epoch
  is scored instead). The paper does not say which validation metric chooses; we use macro-F1
  (its first metric; ``select_by: accuracy`` is the alternative), ties broken by the other metric
  and then by grid order (smaller learning rate, fewer epochs).
  The epoch grid costs one run per learning rate: a run of 16 epochs is scored on validation
  after epochs 8, 9, …, 16, and is exactly the run that would stop at each of those counts (same
  seed, same shuffles, a constant learning rate), so this equals training each cell separately.
* **Splits**: see :mod:`staticvec.evaluate.classification_data` (60/20/20 stratified where no
  split is given, as the paper; TREC's validation is 10 % of its train; SST-5's are given).
* **Seeds**: each seed fixes the split, the initialisation, the batch order and dropout; the
  result is the mean ± sample standard deviation (ddof 1) over seeds of the test macro-F1 and
  accuracy (X2Static's Table 5 uses 6 seeds). Scores are fractions in [0, 1].
* **Metrics**: accuracy, and macro-F1 = unweighted mean of the per-class F1 over the classes that
  occur in the gold labels or the predictions (scikit-learn's ``f1_score(average="macro")``; a
  class predicted but absent from the gold labels has F1 0). Note: the paper's TREC macro-F1
  (45-53) beside its accuracy (86-89) cannot come from the 6 coarse classes under this
  definition (test classes of 9/138/94/65/81/113 questions: 55 errors in 500 leave a macro-F1
  of at least ~70); it resembles the 50 fine types (``trec_labels: fine``). Coarse is the
  default, as the task is defined (Kim 2014, SentEval).

Speed: the table is frozen and the convolution is linear in it, so a batch projects each
distinct word of the batch once, for every tap (``vectors[unique] @ W``), and sums the projected
taps of each token's window (``embedding_bag``); sentences are packed (no padding positions) and
max-pooled with ``scatter_reduce``. Equal to ``nn.Conv1d`` on each sentence (tested), and about
four times cheaper on CPU than ``nn.Conv1d`` over the padded, gathered input
(``benchmarks/classification_conv.py``). fp32 on CPU and GPU alike (the model is small; no
autocast, so both devices give comparable numbers).
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from staticvec.device import resolve_device
from staticvec.embeddings import Embeddings
from staticvec.files import TIMING_KEY
from staticvec.evaluate import optim as light_optim
from staticvec.errors import StaticvecError
from staticvec.stats import describe
from staticvec.evaluate.classification_data import (
    DATASET_NAMES,
    TOKENIZATIONS,
    ClassificationDataset,
    LabelledSentences,
    load_dataset,
    make_split,
)

log = logging.getLogger(__name__)

SELECT_BY = ("macro_f1", "accuracy")


@dataclass
class ClassifierSettings:
    """The evaluation protocol; defaults are X2Static's values (or ours where it gives none, see module doc)."""

    filters: int = 100
    kernel_size: int = 3
    dropout: float = 0.5
    batch_size: int = 50
    epochs: list[int] = field(default_factory=lambda: list(range(8, 17)))
    learning_rates: list[float] = field(default_factory=lambda: [1e-4, 3e-4, 1e-3])
    select_by: str = "macro_f1"
    refit: bool = True
    max_tokens: int = 64
    tokenization: str = "split_clitics"
    trec_labels: str = "coarse"
    split: list[float] = field(default_factory=lambda: [0.6, 0.2, 0.2])
    holdout_fraction: float = 0.1
    eval_batch_size: int = 1000

    def __post_init__(self):
        problems = []
        if self.filters < 1 or self.kernel_size < 1 or self.batch_size < 1 or self.max_tokens < 1 or self.eval_batch_size < 1:
            problems.append("filters, kernel_size, batch_size, max_tokens and eval_batch_size must be positive")
        if not 0.0 <= self.dropout < 1.0:
            problems.append(f"dropout must lie in [0, 1), got {self.dropout}")
        if not self.epochs or any(int(e) != e or e < 1 for e in self.epochs):
            problems.append(f"epochs must be a non-empty list of positive integers, got {self.epochs}")
        if not self.learning_rates or any(lr <= 0 for lr in self.learning_rates):
            problems.append(f"learning_rates must be a non-empty list of positive numbers, got {self.learning_rates}")
        if self.select_by not in SELECT_BY:
            problems.append(f"select_by must be one of {', '.join(SELECT_BY)}, got {self.select_by!r}")
        if self.tokenization not in TOKENIZATIONS:
            problems.append(f"tokenization must be one of {', '.join(TOKENIZATIONS)}, got {self.tokenization!r}")
        if self.trec_labels not in ("coarse", "fine"):
            problems.append(f"trec_labels must be 'coarse' or 'fine', got {self.trec_labels!r}")
        if len(self.split) != 3 or any(f <= 0 for f in self.split) or abs(sum(self.split) - 1.0) > 1e-6:
            problems.append(f"split must be three positive fractions summing to 1, got {self.split}")
        if not 0.0 < self.holdout_fraction < 1.0:
            problems.append(f"holdout_fraction must lie in (0, 1), got {self.holdout_fraction}")
        if problems:
            raise StaticvecError("classification settings: " + "; ".join(problems))
        self.epochs = sorted({int(e) for e in self.epochs})
        self.learning_rates = [float(lr) for lr in self.learning_rates]


# ---------------------------------------------------------------- metrics


def accuracy(gold: np.ndarray, predicted: np.ndarray) -> float:
    gold, predicted = np.asarray(gold), np.asarray(predicted)
    return float((gold == predicted).mean()) if len(gold) else float("nan")


def macro_f1(gold: np.ndarray, predicted: np.ndarray) -> float:
    """Unweighted mean per-class F1 over the classes in ``gold`` ∪ ``predicted`` (as scikit-learn's)."""
    gold, predicted = np.asarray(gold), np.asarray(predicted)
    classes = np.union1d(gold, predicted)
    scores = []
    for c in classes:
        tp = np.sum((gold == c) & (predicted == c))
        denominator = np.sum(gold == c) + np.sum(predicted == c)  # 2tp + fp + fn
        scores.append(2.0 * tp / denominator if denominator else 0.0)
    return float(np.mean(scores)) if scores else float("nan")


def scores(gold: np.ndarray, predicted: np.ndarray) -> dict:
    return {"macro_f1": macro_f1(gold, predicted), "accuracy": accuracy(gold, predicted)}


# ---------------------------------------------------------------- words → ids


class WordTable:
    """The embedding rows a set of sentences needs: id 0 is the zero vector (padding and OOV)."""

    def __init__(self, embeddings: Embeddings, sentences: Sequence[Sequence[str]]):
        types = sorted({token for sentence in sentences for token in sentence})
        found = [(word, embeddings.get_index(word)) for word in types]
        known = [(word, row) for word, row in found if row is not None]
        self.index = {word: i + 1 for i, (word, _) in enumerate(known)}
        self.vectors = np.zeros((len(known) + 1, embeddings.dim), dtype=np.float32)
        if known:
            self.vectors[1:] = embeddings.vectors[[row for _, row in known]]
        tokens = sum(len(s) for s in sentences)
        oov_tokens = sum(1 for s in sentences for t in s if t not in self.index)
        self.oov = {
            "tokens": tokens,
            "oov_tokens": oov_tokens,
            "token_rate": oov_tokens / tokens if tokens else 0.0,
            "types": len(types),
            "oov_types": len(types) - len(known),
            "type_rate": (len(types) - len(known)) / len(types) if types else 0.0,
        }


class EncodedSentences:
    """Sentences packed for the convolution: each token's window of word ids, with its sentence.

    ``windows[i, j]`` is the id of the word at offset ``j - left`` from token ``i`` in its sentence
    (0, the zero vector, outside the sentence: the "same" padding); sentences are cut to
    ``max_tokens`` and an empty one is one padding token.
    """

    def __init__(self, part: LabelledSentences, index: dict, max_tokens: int, kernel_size: int, device):
        cut = [[index.get(token, 0) for token in sentence[:max_tokens]] or [0] for sentence in part.sentences]
        lengths = np.array([len(ids) for ids in cut], dtype=np.int64)
        flat = np.fromiter((i for ids in cut for i in ids), dtype=np.int64, count=int(lengths.sum()))
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        position = np.arange(len(flat)) - np.repeat(offsets, lengths)  # index of each token in its sentence
        length = np.repeat(lengths, lengths)
        left = (kernel_size - 1) // 2
        windows = np.zeros((len(flat), kernel_size), dtype=np.int64)
        for j in range(kernel_size):
            shift = j - left
            inside = (position + shift >= 0) & (position + shift < length)
            windows[inside, j] = flat[np.flatnonzero(inside) + shift]
        self.truncated = int(sum(len(sentence) > max_tokens for sentence in part.sentences))
        self.lengths = torch.from_numpy(lengths)
        self.offsets = torch.from_numpy(offsets)
        self.windows = torch.from_numpy(windows).to(device)
        self.labels_np = np.asarray(part.labels, dtype=np.int64)
        self.labels = torch.from_numpy(self.labels_np).to(device)

    def __len__(self) -> int:
        return len(self.labels_np)

    def batch(self, index: torch.Tensor):
        """Windows of the tokens of sentences ``index`` (a CPU tensor), each token's place in the batch, labels."""
        lengths = self.lengths[index]
        starts = torch.repeat_interleave(self.offsets[index], lengths)
        owner = torch.repeat_interleave(torch.arange(len(index)), lengths)
        first = torch.repeat_interleave(torch.cumsum(lengths, 0) - lengths, lengths)
        rows = starts + torch.arange(len(owner)) - first
        device = self.windows.device
        return self.windows[rows.to(device)], owner.to(device), self.labels[index.to(device)]


# ---------------------------------------------------------------- the model


class SentenceCNN(nn.Module):
    """Frozen embeddings → same-padded convolution → ReLU → global max-pool → dropout → linear."""

    def __init__(self, vectors: torch.Tensor, n_classes: int, filters: int = 100, kernel_size: int = 3, dropout: float = 0.5):
        super().__init__()
        dim = vectors.shape[1]
        self.register_buffer("vectors", vectors, persistent=False)  # frozen: not a parameter
        self.filters, self.kernel_size = filters, kernel_size
        # weight[:, j, f] is nn.Conv1d's weight[f, :, j]; the same default initialisation.
        bound = 1.0 / math.sqrt(dim * kernel_size)
        self.weight = nn.Parameter(torch.empty(dim, kernel_size, filters).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(filters).uniform_(-bound, bound))
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(filters, n_classes)

    def features(self, windows: torch.Tensor, owner: torch.Tensor, n_sentences: int) -> torch.Tensor:
        """Max-pooled filter activations (n_sentences, filters) from token windows (tokens, kernel)."""
        k, f = self.kernel_size, self.filters
        # Project each distinct word of the batch once, for every tap: row u*k + j is word u at tap j.
        unique, inverse = torch.unique(windows, return_inverse=True)
        projected = (self.vectors[unique] @ self.weight.reshape(-1, k * f)).view(-1, f)
        taps = inverse * k + torch.arange(k, device=windows.device)
        conv = F.embedding_bag(taps, projected, mode="sum") + self.bias  # Σ_j W_j · e(word at tap j)
        hidden = torch.relu(conv)
        # ReLU outputs are >= 0, so a max starting from 0 is the max over the sentence's tokens.
        pooled = hidden.new_zeros(n_sentences, f)
        return pooled.scatter_reduce(0, owner[:, None].expand(-1, f), hidden, "amax", include_self=True)

    def forward(self, windows: torch.Tensor, owner: torch.Tensor, n_sentences: int) -> torch.Tensor:
        return self.output(self.dropout(self.features(windows, owner, n_sentences)))


def predict(model: SentenceCNN, data: EncodedSentences, batch_size: int = 1000) -> np.ndarray:
    model.eval()
    out = []
    with torch.inference_mode():
        for start in range(0, len(data), batch_size):
            index = torch.arange(start, min(start + batch_size, len(data)))
            windows, owner, _ = data.batch(index)
            out.append(model(windows, owner, len(index)).argmax(dim=1).cpu())
    return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.int64)


def train(
    table: torch.Tensor,
    n_classes: int,
    data: EncodedSentences,
    lr: float,
    epochs: int,
    seed: int,
    settings: ClassifierSettings,
    after_epoch=None,
) -> SentenceCNN:
    """Train a fresh model for ``epochs``; ``after_epoch(epoch, model)`` is called after each epoch.

    The seed fixes the initialisation, the batch order and dropout, so two calls with the same
    seed and learning rate follow the same path, whatever their number of epochs.
    """
    torch.manual_seed(seed)
    model = SentenceCNN(table, n_classes, settings.filters, settings.kernel_size, settings.dropout).to(table.device)
    optimizer = light_optim.Adam(model.parameters(), lr=lr)  # torch.optim.Adam's arithmetic, no torch._dynamo import
    order = torch.Generator().manual_seed(seed)
    for epoch in range(1, epochs + 1):
        model.train()
        permutation = torch.randperm(len(data), generator=order)
        for start in range(0, len(data), settings.batch_size):
            index = permutation[start : start + settings.batch_size]
            windows, owner, labels = data.batch(index)
            loss = F.cross_entropy(model(windows, owner, len(index)), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if after_epoch is not None:
            after_epoch(epoch, model)
    return model


# ---------------------------------------------------------------- one data set


def run_seed(
    table: torch.Tensor,
    n_classes: int,
    train_data: EncodedSentences,
    validation: EncodedSentences,
    test: EncodedSentences,
    refit_data: EncodedSentences | None,
    seed: int,
    settings: ClassifierSettings,
) -> dict:
    """Grid on validation, then the test score of the chosen setting (refit on train + validation)."""
    started = time.perf_counter()
    grid = []  # (lr, epochs, validation scores, test scores or None), in grid order
    for lr in settings.learning_rates:

        def score_epoch(epoch, model, lr=lr):
            if epoch in settings.epochs:
                valid = scores(validation.labels_np, predict(model, validation, settings.eval_batch_size))
                tested = None if settings.refit else scores(test.labels_np, predict(model, test, settings.eval_batch_size))
                grid.append((lr, epoch, valid, tested))

        train(table, n_classes, train_data, lr, max(settings.epochs), seed, settings, score_epoch)
    other = "accuracy" if settings.select_by == "macro_f1" else "macro_f1"
    best = grid[0]
    for cell in grid[1:]:  # strictly better replaces: ties keep the earlier cell in grid order
        if (cell[2][settings.select_by], cell[2][other]) > (best[2][settings.select_by], best[2][other]):
            best = cell
    lr, epochs, valid, tested = best
    if settings.refit:
        model = train(table, n_classes, refit_data, lr, epochs, seed, settings)
        tested = scores(test.labels_np, predict(model, test, settings.eval_batch_size))
    return {
        "seed": seed,
        "epochs": epochs,
        "learning_rate": lr,
        "validation": valid,
        "test": tested,
        "grid": [{"learning_rate": g[0], "epochs": g[1], **{f"validation_{k}": v for k, v in g[2].items()}} for g in grid],
        TIMING_KEY: {"seconds": round(time.perf_counter() - started, 2)},  # skipped when two runs are compared
    }


def _mean_std(values: list[float]) -> dict:
    """Mean and sample standard deviation (n − 1; :func:`staticvec.stats.describe`) over seeds."""
    d = describe(values)
    return {"mean": d.mean, "std": d.sd}


def evaluate_dataset(
    embeddings: Embeddings,
    dataset: ClassificationDataset,
    seeds: Sequence[int],
    settings: ClassifierSettings,
    device: torch.device,
    checkpoint: "RunCheckpoint | None" = None,
) -> dict:
    """Score ``embeddings`` on one data set over ``seeds``: per-seed runs and mean ± std.

    With a ``checkpoint``, runs it already holds are reused and each new run is added to it.
    """
    words = WordTable(embeddings, dataset.all_sentences())
    table = torch.from_numpy(words.vectors).to(device)

    def encode(part):
        return EncodedSentences(part, words.index, settings.max_tokens, settings.kernel_size, device)

    runs, sizes, protocol = [], None, None
    for seed in seeds:
        split = make_split(dataset, seed, settings.split, settings.holdout_fraction)
        empty = [name for name in ("train", "validation", "test") if not len(getattr(split, name))]
        if empty:
            raise StaticvecError(f"data set {dataset.name}, seed {seed}: the {' and '.join(empty)} part is empty ({split.protocol})")
        sizes = {"train": len(split.train), "validation": len(split.validation), "test": len(split.test)}
        protocol = split.protocol
        run = checkpoint.get(dataset.name, seed) if checkpoint is not None else None
        if run is not None:
            log.info("%s seed %d: reusing the finished run in %s", dataset.name, seed, checkpoint.path)
            runs.append(run)
            continue
        train_data, validation, test = encode(split.train), encode(split.validation), encode(split.test)
        refit = encode(LabelledSentences.concat([split.train, split.validation])) if settings.refit else None
        run = run_seed(table, dataset.n_classes, train_data, validation, test, refit, seed, settings)
        if checkpoint is not None:
            checkpoint.add(dataset.name, seed, run)
        log.info(
            "%s seed %d: lr %g, %d epochs (validation %s %.4f); test macro-F1 %.4f, accuracy %.4f (%.1f s)",
            dataset.name, seed, run["learning_rate"], run["epochs"], settings.select_by,
            run["validation"][settings.select_by], run["test"]["macro_f1"], run["test"]["accuracy"],
            (run.get(TIMING_KEY) or {}).get("seconds", 0.0),
        )
        runs.append(run)
    truncated = sum(int(sum(len(s) > settings.max_tokens for s in part.sentences)) for part in dataset.parts.values())
    return {
        "macro_f1": _mean_std([r["test"]["macro_f1"] for r in runs]),
        "accuracy": _mean_std([r["test"]["accuracy"] for r in runs]),
        "classes": list(dataset.label_names),
        "sizes": sizes,
        "split": protocol,
        "oov": words.oov,
        "truncated_sentences": truncated,
        "blank_lines_skipped": dataset.blank_lines,
        "encodings": dataset.encodings,
        "runs": runs,
    }


# ---------------------------------------------------------------- all data sets


class RunCheckpoint:
    """Finished (data set, seed) runs, one JSON line each, so an interrupted job resumes where it stopped.

    A line is reused only if its ``fingerprint`` (the settings and the embedding file's path, size
    and modification time) equals the current one; the file is removed when the job completes.
    """

    def __init__(self, path: str | os.PathLike, fingerprint: dict):
        self.path = os.fspath(path)
        self.fingerprint = fingerprint
        self.runs: dict[tuple[str, int], dict] = {}
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut by the interruption
                    if record.get("fingerprint") == fingerprint:
                        self.runs[(record["dataset"], record["seed"])] = record["run"]

    def get(self, dataset: str, seed: int) -> dict | None:
        return self.runs.get((dataset, seed))

    def add(self, dataset: str, seed: int, run: dict) -> None:
        self.runs[(dataset, seed)] = run
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"dataset": dataset, "seed": seed, "fingerprint": self.fingerprint, "run": run}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def remove(self) -> None:
        if os.path.exists(self.path):
            os.remove(self.path)


def lookup_embeddings(embeddings: Embeddings) -> Embeddings:
    """The table words are looked up in: lower-cased if it has upper-case words (most frequent row kept)."""
    if any(word != word.lower() for word in embeddings.words):
        return embeddings.lowercased()
    return embeddings


def classify(
    embeddings: Embeddings,
    data_dir: str | os.PathLike,
    datasets: Sequence[str] = DATASET_NAMES,
    seeds: Sequence[int] = (1,),
    settings: ClassifierSettings | None = None,
    device: str | torch.device = "auto",
    checkpoint: RunCheckpoint | None = None,
) -> dict:
    """Score ``embeddings`` on each data set; the JSON-ready result (see module doc)."""
    settings = settings or ClassifierSettings()
    device = device if isinstance(device, torch.device) else torch.device(resolve_device(device))
    unknown = [name for name in datasets if name not in DATASET_NAMES]
    if unknown:
        raise StaticvecError(f"unknown classification data set(s) {', '.join(unknown)}; known: {', '.join(DATASET_NAMES)}")
    if not seeds:
        raise StaticvecError("classification needs at least one seed")
    table = lookup_embeddings(embeddings)
    results = {}
    for name in datasets:
        dataset = load_dataset(name, data_dir, settings.tokenization, settings.trec_labels)
        results[name] = evaluate_dataset(table, dataset, seeds, settings, device, checkpoint)
    average = {
        metric: float(np.mean([results[name][metric]["mean"] for name in datasets])) for metric in ("macro_f1", "accuracy")
    }
    return {
        "task": "classification",
        "scale": "fraction",
        "dim": embeddings.dim,
        "vocabulary": len(embeddings),
        "device": device.type,
        "seeds": list(seeds),
        "settings": asdict(settings),
        "datasets": results,
        "average": {"datasets": list(datasets), **average},
        # what the tables sheet reads (<set>.f1, <set>.accuracy): test means over the seeds
        "results": {name: {metric: {"score": r[key]["mean"], "sd": r[key]["std"]}
                           for metric, key in (("f1", "macro_f1"), ("accuracy", "accuracy"))}
                    for name, r in results.items()},
    }


def classify_to_file(
    vectors: str | os.PathLike,
    out: str | os.PathLike,
    data_dir: str | os.PathLike,
    datasets: Sequence[str] = DATASET_NAMES,
    seeds: Sequence[int] = (1,),
    settings: ClassifierSettings | None = None,
    device: str = "auto",
    fmt: str | None = None,
    checkpoint: str | os.PathLike | None = None,
) -> dict:
    """:func:`classify` of a vector file, written to ``out`` (with the file's name).

    Finished runs are kept in ``checkpoint`` (default ``OUT.partial.jsonl``) so that an interrupted
    job resumes; it is tied to the settings, the vector file (path, size, time) and the data, and
    removed once ``out`` is written."""
    from pathlib import Path

    from staticvec.files import write_json

    settings = settings or ClassifierSettings()
    embeddings = Embeddings.load(vectors, fmt=fmt)
    stat = Path(vectors).stat()
    fingerprint = {
        "settings": asdict(settings),
        "vectors": [str(Path(vectors).resolve()), stat.st_size, stat.st_mtime_ns],
        "data_dir": str(Path(data_dir).resolve()),
    }
    runs = RunCheckpoint(checkpoint or f"{out}.partial.jsonl", json.loads(json.dumps(fingerprint)))
    result = classify(embeddings, data_dir, datasets, seeds, settings, device, runs)
    result = {"vectors": str(vectors), **result}
    write_json(out, result)
    runs.remove()
    return result
