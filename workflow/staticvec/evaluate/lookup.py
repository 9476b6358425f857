"""The evaluation view of an embedding: vocabulary cut, lower-casing, unit rows and the OOV policy.

Every intrinsic task looks words up through :class:`VectorLookup`, so that the three choices
that move published numbers the most are made once and recorded in the result:

``max_vocab``
    keep only the first N words of the file (files are frequency-ordered). MUSE, used by X2Static,
    reads the first 200,000 words (``--max_vocab 200000``); gensim's analogy default is 300,000.
``lowercase``
    lower-case the vocabulary (keeping, among words that collide, the first and so most frequent
    row, as gensim's ``case_insensitive`` and MUSE do) and the data sets' words. With a cut, the
    vocabulary is lower-cased first and the cut keeps the first N *distinct* lower-cased words, as
    MUSE's ``read_txt_embeddings`` does (it lower-cases each word as it reads, skips a word already
    seen, and stops at N words); gensim instead cuts N rows and then folds case.
``oov``
    ``drop``: a pair / question / item with a word missing from the vocabulary is left out and
    counted (MUSE, Faruqui's ``eval-word-vectors``, GloVe's ``evaluate.py``, gensim, vecmap);
    ``mean``: a missing word is given the mean of all (unit) vectors and everything is scored
    (the ``web`` benchmarks, used by SemGloVe, Context-to-Vec and SynGCN).

Vectors are scaled to unit length before anything else (zero rows stay zero), as ``web``
(``normalize=True``), MUSE and gensim do: cosine similarity is unchanged, the analogy arithmetic
uses unit vectors, and the ``mean`` policy's vector is the mean of the unit rows (``web``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError

OOV_POLICIES = ("drop", "mean")


class VectorLookup:
    """Unit vectors of an embedding, looked up under a case and OOV policy."""

    def __init__(self, embeddings: Embeddings, oov: str = "drop", lowercase: bool = True, max_vocab: int | None = None):
        if oov not in OOV_POLICIES:
            raise StaticvecError(f"unknown OOV policy {oov!r}; known: {', '.join(OOV_POLICIES)}")
        self.file_vocab_size = len(embeddings)
        if lowercase:
            embeddings = embeddings.lowercased()  # first, then the cut (MUSE)
        if max_vocab is not None:
            embeddings = embeddings.restrict(max_vocab)
        if len(embeddings) == 0:
            raise StaticvecError("the embedding has no words to evaluate")
        self.embeddings = embeddings
        self.oov = oov
        self.lowercase = lowercase
        self.max_vocab = max_vocab
        self.unit = embeddings.unit_vectors().astype(np.float32, copy=False)
        self.mean = self.unit.mean(axis=0, dtype=np.float64).astype(np.float32)

    @property
    def words(self) -> list[str]:
        return self.embeddings.words

    def __len__(self) -> int:
        return len(self.embeddings)

    @property
    def dim(self) -> int:
        return self.unit.shape[1]

    def key(self, word: str) -> str:
        return word.lower() if self.lowercase else word

    def indices(self, words: Sequence[str]) -> np.ndarray:
        """Row of each word, -1 where it is out of vocabulary."""
        index = self.embeddings.index
        return np.fromiter((index.get(self.key(w), -1) for w in words), dtype=np.int64, count=len(words))

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """Unit vectors of rows ``idx``; -1 gives the mean vector (``mean``) or zeros (``drop``)."""
        idx = np.asarray(idx)
        out = self.unit[np.where(idx >= 0, idx, 0)]
        missing = idx < 0
        if missing.any():
            out[missing] = self.mean if self.oov == "mean" else 0.0
        return out

    def describe(self) -> dict:
        return {
            "oov_policy": self.oov,
            "lowercase": self.lowercase,
            "max_vocab": self.max_vocab,
            "vocab_size_file": self.file_vocab_size,
            "vocab_size": len(self),
            "dim": self.dim,
        }
