"""Teacher features as training blocks: stored per-shard features, or computed now by the teacher.

A *block* is one part of a shard's features (``teacher/features.py``: ~4k training sentences in
order): a dict of arrays (``sentence_offsets``, ``word_ids``, ``word_pieces``, the last layer's
``word_vectors.<L>`` renamed ``word_vectors``, ``sentence_vectors``…). Positions are
``(shard index, part index)``, so a trainer resumes at a block boundary without reading what it
has done. The two sources behave the same:

- :class:`StoredFeatures`: the ``features.json`` directories the teacher rule wrote
  (``teacher.cache: store``); only the arrays a method needs are read from each part file;
- :class:`RecomputedFeatures`: corpus shards run through the teacher now, with the one extraction
  path (``teacher.cache: recompute``, the paper-scale path where caching 1B words is too big).

Word ids are those of the vocabulary the features were computed with; ``remap`` (feature id →
the method's id, -1 = not in the method's vocabulary) turns them into the method's ids, e.g. for
X2Static's min-count-10 vocabulary over features computed with the min-count-5 one.
"""

from __future__ import annotations

import logging
from typing import Iterator, Sequence

import numpy as np

from staticvec.errors import InputFileError, StaticvecError
from staticvec.files import sha256_of

log = logging.getLogger(__name__)

BASE_KEYS = ("sentence_offsets", "word_ids", "word_pieces")


def vocabulary_remap(feature_words: Sequence[str], method_index: dict) -> np.ndarray:
    """Feature-vocabulary id → method-vocabulary id (-1 where the method has no such word)."""
    return np.fromiter((method_index.get(w, -1) for w in feature_words), dtype=np.int64, count=len(feature_words))


def _apply_remap(arrays: dict, remap: np.ndarray | None) -> dict:
    if remap is not None:
        ids = arrays["word_ids"].astype(np.int64)
        arrays["word_ids"] = np.where(ids >= 0, remap[np.maximum(ids, 0)], -1)
    else:
        arrays["word_ids"] = arrays["word_ids"].astype(np.int64)
    return arrays


class StoredFeatures:
    """Blocks from stored shard features (directories or ``features.json`` files), in the order given."""

    def __init__(self, paths: Sequence, keys: Sequence[str], remap: np.ndarray | None = None):
        from staticvec.teacher.store import FeatureStore

        if not paths:
            raise StaticvecError("no teacher features given")
        self.stores = [FeatureStore(p) for p in paths]
        first = self.stores[0]
        self.vector_key = first.layer_key(None)
        for store in self.stores[1:]:
            for what in ("teacher", "spec", "layers", "vocab_sha256"):
                if what == "spec":  # as specs (a field added since a shard was written takes its default)
                    a, b = first.spec.to_dict(), store.spec.to_dict()
                else:
                    a, b = _comparable(first.meta.get(what)), _comparable(store.meta.get(what))
                if a != b:
                    raise InputFileError(store.dir / "features.json",
                                         f"its {what} differs from that of {first.dir} (features of one run must match)")
        self.keys = [k for k in keys if k != "word_vectors"] + ([self.vector_key] if "word_vectors" in keys else [])
        if "sentence_vectors" in keys and not first.spec.sentence_vectors:
            raise InputFileError(first.dir / "features.json", "no sentence vectors stored (feature set without sentence_vectors)")
        self.remap = remap

    @property
    def meta(self) -> dict:
        return self.stores[0].meta

    @property
    def hidden_size(self) -> int:
        return int(self.meta["teacher"]["hidden_size"])

    @property
    def context(self) -> str:
        return self.meta["spec"]["context"]

    def check_vocabulary(self, vocab_path, vocab) -> None:
        """The features' word ids must come from ``vocab`` (file checksum, else its size)."""
        sha, size = self.meta.get("vocab_sha256"), self.meta.get("vocab_size")
        if sha is None:
            raise InputFileError(self.stores[0].dir / "features.json", "features computed without a vocabulary")
        if sha == sha256_of(vocab_path):
            return
        if size != len(vocab):
            raise InputFileError(vocab_path, f"{len(vocab)} words, but the teacher features were computed with a "
                                             f"vocabulary of {size} words: give that one as the feature vocabulary")
        log.warning("%s is not the file the features were computed with, but has the same size (%d): "
                    "assuming the same words", vocab_path, size)

    def blocks(self, start=(0, 0)) -> Iterator[tuple[tuple[int, int], dict]]:
        s0, p0 = start
        for s, store in enumerate(self.stores):
            if s < s0:
                continue
            first = p0 if s == s0 else 0
            for p, arrays in enumerate(store.parts(first, self.keys), start=first):
                if self.vector_key in arrays:
                    arrays["word_vectors"] = arrays.pop(self.vector_key)
                yield (s, p), _apply_remap(arrays, self.remap)

    @staticmethod
    def next_position(position):
        return (position[0], position[1] + 1)

    def word_ids(self) -> Iterator[np.ndarray]:
        for store in self.stores:
            for arrays in store.parts(0, ["word_ids"]):
                yield _apply_remap(arrays, self.remap)["word_ids"]

    def describe(self) -> dict:
        return {"cache": "store", "features": [str(s.dir) for s in self.stores], "teacher": self.meta["teacher"],
                "spec": self.meta["spec"], "layer": self.vector_key,
                "sentences": sum(s.meta["sentences"] for s in self.stores),
                "words": sum(s.meta["words"] for s in self.stores)}


def _comparable(value):
    if isinstance(value, dict):  # where a shard's features ran does not matter
        return {k: v for k, v in value.items() if k not in ("device", "autocast")}
    return value


class RecomputedFeatures:
    """Blocks computed now: each corpus shard's parts run through ``teacher`` (the recompute switch)."""

    def __init__(self, shards: Sequence, teacher, vocab, keys: Sequence[str], context: str = "sentence",
                 special_tokens: bool = True, part_sentences: int = 4096, batch_tokens: int = 8192,
                 sentences: str = "kept"):
        from staticvec.teacher.features import FeatureExtractor, FeatureSpec

        if not shards:
            raise StaticvecError("no corpus shards given")
        self.shards = list(shards)
        self.teacher = teacher
        self.vocab = vocab
        self.spec = FeatureSpec(context=context, special_tokens=special_tokens, layers=(-1,),
                                sentence_vectors="sentence_vectors" in keys, vector_dtype="float32", sentences=sentences)
        self.extractor = FeatureExtractor(teacher, self.spec, vocab, batch_tokens)
        self.vector_key = f"word_vectors.{self.extractor.layers[0]}"
        self.keys = [k for k in keys if k != "word_vectors"] + [self.vector_key]
        self.part_sentences = part_sentences
        self.remap = None

    @property
    def hidden_size(self) -> int:
        return int(self.teacher.hidden_size)

    @property
    def context(self) -> str:
        return self.spec.context

    def blocks(self, start=(0, 0)) -> Iterator[tuple[tuple[int, int], dict]]:
        from staticvec.teacher.features import iter_features

        s0, p0 = start
        for s, shard in enumerate(self.shards):
            if s < s0:
                continue
            first = p0 if s == s0 else 0
            for p, arrays in iter_features(self.teacher, shard, self.spec, self.vocab, self.part_sentences,
                                           start_part=first, extractor=self.extractor):
                arrays = {k: arrays[k] for k in self.keys}
                arrays["word_vectors"] = arrays.pop(self.vector_key)
                yield (s, p), _apply_remap(arrays, None)

    @staticmethod
    def next_position(position):
        return (position[0], position[1] + 1)

    def word_ids(self) -> Iterator[np.ndarray]:
        """Vocabulary ids of the training sentences, read from the shards' text (no teacher pass)."""
        from staticvec.corpus.shards import iter_sentences

        index = self.vocab.index
        for shard in self.shards:
            ids = [index.get(w, -1) for tokens in iter_sentences([shard]) for w in tokens]
            yield np.asarray(ids, dtype=np.int64)

    def describe(self) -> dict:
        return {"cache": "recompute", "shards": [str(s) for s in self.shards], "teacher": self.teacher.describe(),
                "spec": self.spec.to_dict(), "layer": self.vector_key}
