"""``staticvec train tokenlearn``: Tokenlearn (MinishLab's ``tokenlearn`` library) from the run's teacher and corpus.

How the POTION static models are trained, and today's corpus-trained counterpart of X2Static and
Context-to-Vec: a Model2Vec model of the teacher, fitted to the teacher's sentence embeddings over a
corpus. What the library does (``tokenlearn.train.main``, version 0.2.1), and where the workflow's
inputs come in:

1. *targets* (``tokenlearn.featurize``): per text, the mean of the teacher's last-layer states over its
   pieces, the first and last ([CLS], [SEP]) left out. Here the texts are the corpus's training
   sentences (the words joined by spaces: the teacher's own input) and the targets come from the
   teacher pass the students read (feature set ``sentence``), not from a second pass over the corpus:
   ``targets: pieces`` (default, the library's) rebuilds that mean exactly from the stored per-word
   means (each word's mean times its piece count, summed over the sentence, divided by its pieces);
   ``targets: sentence_vectors`` takes the stored sentence vectors (X2Static's: [CLS] and [SEP]
   included). The first ``max_sentences`` sentences (featurize's ``--max-means``);
2. a vocabulary (``tokenlearn.utils.create_vocab``): the ``vocab_size`` most frequent lower-cased
   regex tokens (``\\w+|[^\\w\\s]+``) of the texts;
3. ``model2vec.distill`` of the teacher with that vocabulary, ``pca_dims`` = ``dim``, float32 rows and
   the library's other defaults (the Model2Vec row's step, :func:`staticvec.train.model2vec.distill_teacher`);
4. ``tokenlearn.train.train_model``: PCA of the targets to ``dim`` (scikit-learn), the last
   min(10,000, n/10) texts held out, then ``tokenlearn.pretrain.train_supervised``: each token row and a
   per-token weight (initialised to the row's norm) trained so that a linear layer of the weighted mean
   of a text's rows predicts its target (MSE, AdamW, batches of 256, lr 1e-3), evaluated on the held-out
   texts every 1,000 steps and at each epoch's end, stopped after 5 evaluations without improvement;
   the "best" state's weighted rows are the model. (The library keeps that state as ``state_dict()``, whose
   tensors are the live parameters, so what it restores is the state at the stop, not the best evaluation's:
   the library's behaviour in every committed run, kept as it is.)

Our word embedding is then that model's ``encode`` of each word of the run's vocabulary (the unit-length
mean of its tokens' rows), exactly as for the Model2Vec row (:func:`staticvec.train.model2vec.encode_words`),
so the same evaluation and coverage apply; the library's own model is saved beside the vectors.

Random: the targets' PCA (scikit-learn's ``PCA``, randomized SVD on some shapes, from numpy's global
generator), the linear layer's initialisation and the batch order (torch's global generator): all drawn in
step 4, after :func:`seed_everything`, so the method trains once per seed. Steps 1-3 draw nothing (the
vocabulary is a count, Model2Vec's PCA an eigendecomposition, the teacher's forward has no dropout in eval
mode), so they are done once per (teacher, corpus, ``DISTILLATION_KEYS``) by :func:`distill` and saved
(:func:`save_distilled`), and each seed's job starts from that file (:func:`load_distilled`, :func:`fit`):
the same vectors as distilling in the seed's own job, since the one-job path (:func:`train`) also seeds
after distilling, the float32 rows cross the file exactly (safetensors) and the tokenizer with them
(``tokenizer.json``). What still must match is the floating-point environment: the forward's and the
training's torch threads and device (the workflow gives the distillation rule the training rule's threads),
and torch's deterministic kernels during the training (:func:`staticvec.device.deterministic_torch`: on more than
one thread, the library's ``w[ids]`` adds its gradient with atomics from every thread on a batch whose longest
text has 128 tokens or more, in an order, hence last bits, that change from run to run; the default's sentences
of at most 40 words stay below that).

The library has no epoch cap (``range(100_000)``; 324 epochs on the tests' 40 sentences): ``max_epochs``
(default none: the library's behaviour) stops it at the start of epoch ``max_epochs + 1`` through the
library's own interruption path, which restores the best held-out state as its early stopping does
(:class:`_EpochCap`).
"""

from __future__ import annotations

import dataclasses
import logging
import random
import re
from pathlib import Path
from typing import Sequence

import numpy as np

from staticvec.errors import InputFileError, StaticvecError
from staticvec.files import TIMING_KEY

log = logging.getLogger(__name__)

TARGETS = ("pieces", "sentence_vectors")
# the parameters the distilled starting point depends on: the width (Model2Vec's PCA), the vocabulary and the texts
# it is counted from (the first max_sentences with a target); max_epochs is the training's only
DISTILLATION_KEYS = ("dim", "vocab_size", "max_sentences", "targets")
DISTILLATION_RECORD = "distillation.json"  # beside the library's files in a distilled model's directory
MIN_SENTENCES = 20  # the library holds out n/10 texts: below this its validation set is (nearly) empty
VERSIONS = ("tokenlearn", "model2vec", "skeletoken", "scikit-learn", "transformers", "tokenizers", "torch")


@dataclasses.dataclass
class TokenlearnParams:
    """Hyper-parameters (config ``methods.tokenlearn``); defaults here are the library's (0.2.1)."""

    dim: int = 256  # tokenlearn.train --pca-dims: the model's width and the targets' PCA
    vocab_size: int = 56000  # tokenlearn.train --vocab-size: corpus words added as tokens; 0: the teacher's tokens only
    max_sentences: int = 1_000_000  # tokenlearn.featurize --max-means: the first N texts
    targets: str = "pieces"  # pieces: featurize's mean without [CLS]/[SEP]; sentence_vectors: the stored ones
    max_epochs: int | None = None  # None: the library's (no cap, early stopping only); N: at most N epochs

    def __post_init__(self):
        for name in ("dim", "max_sentences"):
            if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise StaticvecError(f"tokenlearn: {name} must be an integer >= 1, got {getattr(self, name)!r}")
        if isinstance(self.vocab_size, bool) or not isinstance(self.vocab_size, int) or self.vocab_size < 0:
            raise StaticvecError(f"tokenlearn: vocab_size must be an integer >= 0, got {self.vocab_size!r}")
        if self.targets not in TARGETS:
            raise StaticvecError(f"tokenlearn: targets {self.targets!r} is not one of {', '.join(TARGETS)}")
        if self.max_epochs is not None and (isinstance(self.max_epochs, bool) or not isinstance(self.max_epochs, int)
                                            or self.max_epochs < 1):
            raise StaticvecError(f"tokenlearn: max_epochs must be an integer >= 1 or null (no cap), "
                                 f"got {self.max_epochs!r}")

    def distillation(self) -> dict:
        """The parameters the distilled starting point depends on (``DISTILLATION_KEYS``)."""
        return {key: getattr(self, key) for key in DISTILLATION_KEYS}


def library_training_settings() -> dict:
    """What ``train_model`` does not expose: ``train_supervised``'s defaults and the held-out share."""
    import inspect

    from tokenlearn import pretrain, train

    defaults = {k: v.default for k, v in inspect.signature(pretrain.train_supervised).parameters.items()
                if v.default is not inspect.Parameter.empty and k != "device"}
    return {**defaults, "max_validation_texts": train._MAX_N_VAL_SAMPLES, "validation": "the last min(max, n/10) texts",
            "loss": "MSE to the targets' PCA, through a linear layer", "optimizer": "AdamW"}


# ---------------------------------------------------------------- targets from the stored teacher pass


def read_targets(shards: Sequence, features: Sequence, targets: str = "pieces", max_sentences: int = 1_000_000
                 ) -> tuple[list[str], np.ndarray, dict]:
    """(texts, targets (n, d) float32, what was read) of the corpus's training sentences, in corpus order.

    ``features[i]`` is the stored ``sentence``-context pass of ``shards[i]`` (checked by the shard's
    checksum); a text is its sentence's words joined by spaces, as the teacher read them. A sentence
    with no piece (``pieces``: every word without a vector) has no target and is left out, as the
    library leaves out NaN targets."""
    from staticvec.corpus.shards import iter_records
    from staticvec.files import sha256_of
    from staticvec.train.teacher_blocks import StoredFeatures

    if len(shards) != len(features):
        raise StaticvecError(f"tokenlearn: {len(shards)} corpus shards but {len(features)} feature directories "
                             "(one per shard, in the same order)")
    keys = ["word_ids", "sentence_records"] + (["sentence_offsets", "word_pieces", "word_vectors"]
                                               if targets == "pieces" else ["sentence_vectors"])
    source = StoredFeatures(features, keys)
    first = source.stores[0]
    if source.context != "sentence":
        raise InputFileError(first.dir / "features.json", f"features of {source.context} context: Tokenlearn's "
                             "targets are sentences encoded alone (a sentence-context pass)")
    if targets == "pieces":
        last = f"word_vectors.{first.meta['teacher']['layers']}"
        if source.vector_key != last:
            raise InputFileError(first.dir / "features.json", f"the stored word vectors are {source.vector_key}, "
                                 f"not the teacher's last layer ({last}) that Tokenlearn's targets average")
    for store, shard in zip(source.stores, shards):
        if store.meta.get("shard_sha256") != sha256_of(shard):
            raise InputFileError(store.dir / "features.json", f"computed on another shard than {shard} "
                                 "(give the shards and their features in the same order)")
    texts: list[str] = []
    blocks: list[np.ndarray] = []
    dropped = 0
    lines: list[list[str]] | None = None
    current = -1
    for (s, _), arrays in source.blocks():
        if len(texts) >= max_sentences:
            break
        if s != current:  # the shard's sentences, by line (the features index them by line)
            lines, current = [record.tokens for record in iter_records(shards[s])], s
        vectors = _part_targets(arrays, targets)
        records = arrays["sentence_records"]
        keep = np.flatnonzero(np.isfinite(vectors).all(axis=1))
        dropped += len(records) - len(keep)
        keep = keep[: max_sentences - len(texts)]
        try:
            texts.extend(" ".join(lines[r]) for r in records[keep])
        except IndexError:
            raise InputFileError(shards[s], f"has {len(lines)} lines, fewer than its features index "
                                 "(features of another version of the shard)") from None
        blocks.append(vectors[keep])
    dim = int(first.meta["teacher"]["hidden_size"])
    vectors = np.concatenate(blocks).astype(np.float32, copy=False) if blocks else np.zeros((0, dim), np.float32)
    info = {"features": [str(s.dir) for s in source.stores], "shards": [str(s) for s in shards], "targets": targets,
            "sentences": len(texts), "without_target": dropped, "max_sentences": max_sentences,
            "feature_dtype": first.meta["spec"].get("vector_dtype")}
    return texts, vectors, info


def _part_targets(arrays: dict, targets: str) -> np.ndarray:
    """One part's targets: the stored sentence vectors, or the mean over each sentence's pieces of their
    last-layer states (sum over its words of word mean × piece count, over its pieces; NaN: no piece)."""
    if targets == "sentence_vectors":
        return arrays["sentence_vectors"].astype(np.float32)
    pieces = arrays["word_pieces"].astype(np.float32)
    sums = arrays["word_vectors"].astype(np.float32) * pieces[:, None]
    offsets = arrays["sentence_offsets"]
    if np.any(np.diff(offsets) <= 0):
        raise StaticvecError("tokenlearn: a stored sentence without words")
    per_sentence = np.add.reduceat(sums, offsets[:-1], axis=0)
    n = np.add.reduceat(pieces, offsets[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return per_sentence / n[:, None]  # 0/0 = NaN where a sentence has no piece


# ---------------------------------------------------------------- training (the library's code)


class EpochCapReached(KeyboardInterrupt):
    """Raised at the start of the epoch after ``max_epochs``: a KeyboardInterrupt, so that the library's own
    ``except KeyboardInterrupt`` ends training and restores its best held-out state, as its early stopping does."""


class _EpochCap:
    """The library's per-step progress bars off (thousands of lines in a job's log; its logger's epoch and
    validation lines stay), and its epochs counted: ``train_supervised`` opens one training bar per epoch
    (``desc="Epoch NNN [Train]"``) before the epoch's first step, so the bar of epoch ``max_epochs + 1`` is where
    a cap stops it, every earlier epoch complete with its end-of-epoch evaluation."""

    def __init__(self, max_epochs: int | None):
        self.max_epochs = max_epochs
        self.started = 0  # epochs whose first step was reached
        self.reached = False

    def __enter__(self):
        from tokenlearn import pretrain
        from tqdm import tqdm

        self._saved = pretrain.tqdm

        def bar(*args, **kwargs):
            if str(kwargs.get("desc", "")).startswith("Epoch "):
                if self.max_epochs is not None and self.started >= self.max_epochs:
                    self.reached = True
                    raise EpochCapReached(f"tokenlearn: max_epochs {self.max_epochs} reached")
                self.started += 1
            return tqdm(*args, **{**kwargs, "disable": True})

        pretrain.tqdm = bar
        return self

    def __exit__(self, *exc):
        from tokenlearn import pretrain

        pretrain.tqdm = self._saved
        return False


class _Curve(logging.Handler):
    """The validation losses the library logs (``Validation loss: x``), for the training record, and whether
    it stopped on an interruption (``Training interrupted``: it catches KeyboardInterrupt and returns its best
    state so far, which must not be written as a finished run)."""

    PATTERN = re.compile(r"^Validation loss: ([0-9.eE+-]+)$")

    def __init__(self):
        super().__init__(logging.INFO)
        self.losses: list[float] = []
        self.epochs = 0
        self.interrupted = False

    def emit(self, record):
        message = record.getMessage()
        if message.startswith("Epoch "):
            self.epochs += 1
        if message == "Training interrupted":
            self.interrupted = True
        match = self.PATTERN.match(message)
        if match:
            self.losses.append(float(match.group(1)))


def check_padding(model) -> None:
    """tokenlearn 0.2 pads batches with id 0 and masks ``[PAD]``: the two must be the same token."""
    pad = model.tokenizer.token_to_id("[PAD]")
    if pad != 0:
        raise StaticvecError(f"tokenlearn: the library pads with token id 0 and masks '[PAD]', which is "
                             f"{'absent' if pad is None else f'id {pad}'} in this teacher's tokenizer "
                             "(it supports BERT-style tokenizers whose [PAD] is id 0)")


def seed_everything(seed: int) -> None:
    """The generators the library draws from: Python's, numpy's (PCA) and torch's (initialisation, batches)."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def check_sizes(n: int, width: int, params: TokenlearnParams) -> None:
    """The library's limits: a held-out tenth to stop on, and a PCA of the targets to ``dim``."""
    if n < MIN_SENTENCES:
        raise StaticvecError(f"tokenlearn: {n} sentences with a target; at least {MIN_SENTENCES} are needed "
                             "(a tenth is held out to stop training)")
    if params.dim > min(width, n):
        raise StaticvecError(f"tokenlearn: dim {params.dim} exceeds the targets' PCA limit min(teacher width {width}, "
                             f"sentences {n})")


def texts_digest(texts: Sequence[str]) -> str:
    """sha256 of the texts, one a line: what ties a distilled model to the texts its vocabulary was counted from."""
    import hashlib

    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def distill(teacher, texts: list[str], targets: np.ndarray, params: TokenlearnParams, offline: bool = True
            ) -> tuple[object, dict]:
    """Steps 2-3 (no random number drawn): the vocabulary of the texts and ``model2vec.distill`` of a loaded
    teacher with it; (StaticModel, what happened). ``targets`` only for the library's limits (checked before the
    teacher's forward passes, not after them)."""
    import time

    from tokenlearn.utils import create_vocab

    from staticvec.train.model2vec import Model2VecParams, distill_teacher

    check_sizes(*targets.shape, params)
    started = time.time()
    vocabulary = create_vocab(texts=texts, vocab_size=params.vocab_size) if params.vocab_size else None
    m2v = Model2VecParams(pca_dims=params.dim, quantize_to="float32", vocabulary="run" if vocabulary else "teacher")
    model = distill_teacher(teacher, m2v, vocabulary, offline=offline)
    check_padding(model)
    return model, {"vocabulary_words": len(vocabulary or []), "tokens": len(model.tokens),
                   TIMING_KEY: {"seconds_distill": round(time.time() - started, 2)}}


def fit(model, texts: list[str], targets: np.ndarray, params: TokenlearnParams, seed: int, device: str
        ) -> tuple[object, dict]:
    """Step 4, the library's training from a distilled ``model``, every random number drawn after seeding
    (``seed_everything``); at most ``params.max_epochs`` epochs. (StaticModel, what happened)."""
    import time

    from tokenlearn.train import train_model

    from staticvec.device import deterministic_torch

    check_sizes(*targets.shape, params)
    check_padding(model)
    started = time.time()
    seed_everything(seed)
    curve = _Curve()
    library_log = logging.getLogger("tokenlearn")
    level = library_log.level
    library_log.setLevel(logging.INFO)  # its epoch and validation lines, whatever the root logger's level
    library_log.addHandler(curve)
    try:
        with _EpochCap(params.max_epochs) as cap, deterministic_torch(device):
            model = train_model(model, texts, targets, device=device, pca_dims=params.dim)
    finally:
        library_log.removeHandler(curve)
        library_log.setLevel(level)
    if curve.interrupted and not cap.reached:  # a Ctrl-C reaching the job: stop as any job does, nothing written
        raise KeyboardInterrupt("tokenlearn: training interrupted (the library returned its best state so far)")
    return model, {"epochs": cap.started, "stopped": "max_epochs" if cap.reached else "early_stopping",
                   "validation_losses": curve.losses, TIMING_KEY: {"seconds_train": round(time.time() - started, 2)}}


def train(teacher, texts: list[str], targets: np.ndarray, params: TokenlearnParams, seed: int, device: str,
          offline: bool = True) -> tuple[object, dict]:
    """Distil and fit in one process (the one-job path): (StaticModel, what happened)."""
    model, distilled = distill(teacher, texts, targets, params, offline=offline)
    model, trained = fit(model, texts, targets, params, seed, device)
    return model, merge_steps(distilled, trained)


def merge_steps(*steps: dict) -> dict:
    """The records of the distillation and the training as one, their timings under one ``timing`` field (a plain
    merge would keep the last step's timings only)."""
    out, timing = {}, {}
    for step in steps:
        out.update({k: v for k, v in step.items() if k != TIMING_KEY})
        timing.update(step.get(TIMING_KEY) or {})
    return {**out, TIMING_KEY: timing}


DISTILLED_KIND = "tokenlearn distilled model"  # the marker of its folder (staticvec.files.atomic_directory)


def save_distilled(model, target, record: dict) -> None:
    """The distilled model (the library's ``save_pretrained``: float32 rows, tokenizer, config) with its record
    (``DISTILLATION_RECORD``), written as one directory that appears whole or not at all."""
    from staticvec.files import atomic_directory, write_json

    with atomic_directory(target, kind=DISTILLED_KIND) as tmp:
        model.save_pretrained(tmp, model_name=Path(target).name)  # the card names the target, not the temporary folder
        write_json(Path(tmp) / DISTILLATION_RECORD, record)


def load_distilled(path, params: TokenlearnParams, texts: Sequence[str]) -> tuple[object, dict]:
    """A model of :func:`save_distilled` and its record, checked against the seed's job: the same distillation
    parameters and the same texts (their digest), else an error naming the file (a stale or another entry's
    distillation would train silently otherwise)."""
    from model2vec import StaticModel

    from staticvec.files import read_json

    path = Path(path)
    record_path = path / DISTILLATION_RECORD
    if not record_path.is_file():
        raise InputFileError(record_path, "missing: not a distilled Tokenlearn model (staticvec train "
                             "tokenlearn-distill writes it)")
    record = read_json(record_path)
    wanted = params.distillation()
    if record.get("distillation") != wanted:
        raise InputFileError(record_path, f"distilled with {record.get('distillation')}, but this job's parameters are "
                             f"{wanted} (distil again with these)")
    if record.get("texts_sha256") != texts_digest(texts):
        raise InputFileError(record_path, "distilled from other texts than this job's (other shards, features or "
                             "max_sentences): distil again from the same inputs")
    model = StaticModel.from_pretrained(path)
    if model.embedding.dtype != np.float32 or model.dim != params.dim:
        raise InputFileError(path, f"holds {model.embedding.dtype} rows of width {model.dim}, not the float32 rows "
                             f"of width {params.dim} a distillation writes")
    return model, record


def versions() -> dict:
    from staticvec.train.model2vec import versions as package_versions

    return package_versions(VERSIONS)
