"""Word counts and vocabularies.

A counts/vocabulary file is UTF-8 text, one ``word TAB count`` per line, sorted by count
(descending) then word, like GloVe's ``vocab_count``: the row number is the word id, so
ids follow frequency (id 0 = most frequent).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Iterable, Mapping

from staticvec.errors import InputFileError
from staticvec.files import atomic_open, open_any


class Vocabulary:
    """Words with counts, ids by decreasing frequency."""

    def __init__(self, words: list[str], counts: list[int]):
        if len(words) != len(counts):
            raise ValueError("words and counts differ in length")
        self.words = list(words)
        self.counts = list(counts)
        self.index = {w: i for i, w in enumerate(self.words)}
        if len(self.index) != len(self.words):
            raise ValueError("duplicate words in vocabulary")

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    @property
    def total(self) -> int:
        return sum(self.counts)

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], min_count: int = 1, max_size: int | None = None) -> "Vocabulary":
        items = sorted(((w, c) for w, c in counts.items() if c >= min_count), key=lambda wc: (-wc[1], wc[0]))
        if max_size is not None:
            items = items[:max_size]
        return cls([w for w, _ in items], [c for _, c in items])

    @classmethod
    def load(cls, path: str | os.PathLike, min_count: int = 1, max_size: int | None = None) -> "Vocabulary":
        words, counts = [], []
        previous = None
        with open_any(path, "rt") as fh:
            for lineno, line in enumerate(fh, start=1):
                word, sep, count = line.rstrip("\n").partition("\t")
                if not sep or not count.isdigit() or not word:
                    raise InputFileError(path, "expected 'word TAB count'", lineno)
                c = int(count)
                if previous is not None and c > previous:
                    raise InputFileError(path, "counts are not sorted in decreasing order", lineno)
                previous = c
                if c < min_count or (max_size is not None and len(words) >= max_size):
                    break
                words.append(word)
                counts.append(c)
        return cls(words, counts)

    def save(self, path: str | os.PathLike) -> None:
        with atomic_open(path, "wt") as fh:
            for word, count in zip(self.words, self.counts):
                fh.write(f"{word}\t{count}\n")


def count_tokens(sentences: Iterable[list[str]]) -> Counter:
    counts: Counter = Counter()
    for tokens in sentences:
        counts.update(tokens)
    return counts


def merge_count_files(paths: Iterable[str | os.PathLike]) -> Counter:
    """Sum several ``word TAB count`` files (e.g. one per shard)."""
    total: Counter = Counter()
    for path in paths:
        with open_any(path, "rt") as fh:
            for lineno, line in enumerate(fh, start=1):
                word, sep, count = line.rstrip("\n").partition("\t")
                if not sep or not count.isdigit():
                    raise InputFileError(path, "expected 'word TAB count'", lineno)
                total[word] += int(count)
    return total


def restrict_embeddings(emb, vocab: Vocabulary):
    """The rows of ``emb`` for the words of ``vocab``, in ``vocab``'s order and with its counts:
    a corpus fraction's embedding holds only its fraction's words. Returns (embeddings, the
    vocabulary words ``emb`` has no vector for)."""
    import numpy as np

    from staticvec.embeddings import Embeddings

    rows = [emb.get_index(w) for w in vocab.words]
    have = [k for k, r in enumerate(rows) if r is not None]
    missing = [vocab.words[k] for k, r in enumerate(rows) if r is None]
    vectors = emb.vectors[np.array([rows[k] for k in have], dtype=np.int64)] if have else np.zeros((0, emb.dim), np.float32)
    return Embeddings([vocab.words[k] for k in have], vectors, [vocab.counts[k] for k in have]), missing


def load_vocabulary(path: str | os.PathLike, min_count: int = 1, max_size: int | None = None) -> Vocabulary:
    """A vocabulary file cut at ``min_count`` and ``max_size``, as every command reads it: a missing
    file, or one left without a word by the cut, is an error naming the file."""
    if not os.path.exists(path):
        raise InputFileError(path, "vocabulary file not found")
    vocab = Vocabulary.load(path, min_count=min_count, max_size=max_size)
    if len(vocab) == 0:
        raise InputFileError(path, f"no word has a count of at least {min_count}")
    return vocab
