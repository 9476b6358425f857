"""The tagger's inputs: frozen word vectors, casing classes and characters, as id arrays.

Word lookup. The embedding matrix is restricted to the word types that occur in the task's
train/dev/test data (the rest of a large vocabulary is never read by the tagger), plus two
rows: 0 = padding (zeros) and 1 = UNK. A token is looked up as written, then lower-cased
(the project's corpus is lower-cased), then with Penn Treebank escapes undone (``-LRB-`` → ``(``,
````` → ``"``). Tokens found in none of those forms map to UNK, which the model either learns
(one shared trainable vector, ``oov: unk``) or keeps at zero (``oov: zero``).

Casing. Lower-casing erases capitalisation, which POS (NNP) and NER depend on; a small casing
class per token (the feature of Collobert et al. 2011 and Reimers & Gurevych 2017, NCRF++'s
``[Cap]``) gives it back to every embedding alike, at no cost.

Characters. The original-case characters of each token, for the optional character CNN/LSTM
(NCRF++); ids from the training split, unseen characters → 1.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass

import numpy as np

from staticvec.evaluate.tagging.data import Sentence

PAD, UNK = 0, 1
PTB_UNESCAPE = {
    "-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]",
    "``": '"', "''": '"', "`": "'",
}
CASING_CLASSES = ("pad", "lower", "upper", "title", "numeric", "mainly_numeric", "has_digit", "other")


@functools.lru_cache(maxsize=1 << 18)  # a few thousand word types make up most tokens
def casing_class(word: str) -> int:
    """Index into CASING_CLASSES (Reimers & Gurevych's casing feature)."""
    digits = sum(ch.isdigit() for ch in word)
    if word.isdigit():
        return 4
    if digits / max(len(word), 1) > 0.5:
        return 5
    if word.islower():
        return 1
    if word.isupper():
        return 2
    if word[:1].isupper():
        return 3
    if digits:
        return 6
    return 7


def lookup_keys(word: str, lowercase: bool) -> list[str]:
    """The forms under which ``word`` is searched in the embeddings, in order."""
    keys = [word]
    if lowercase:
        keys.append(word.lower())
    if word in PTB_UNESCAPE:
        keys.append(PTB_UNESCAPE[word])
    return keys


@dataclass
class WordTable:
    """Rows of the frozen input matrix for a task: surface word → row."""

    row_of: dict[str, int]
    vectors: np.ndarray  # (rows, dim) float32; row 0 padding, row 1 UNK (zero here; learnt in the model)
    found_types: int
    total_types: int

    @classmethod
    def build(cls, embeddings, sentences, lowercase: bool = True, normalize: str = "none") -> "WordTable":
        """Restrict ``embeddings`` to the words of ``sentences`` (every split of the task)."""
        key_row: dict[str, int] = {}  # embedding word → row here
        source_rows: list[int] = []   # row in the embedding matrix, for rows 2..
        row_of: dict[str, int] = {}
        for sentence in sentences:
            for word in sentence.words:
                if word in row_of:
                    continue
                row = UNK
                for key in lookup_keys(word, lowercase):
                    index = embeddings.get_index(key)
                    if index is not None:
                        if key not in key_row:
                            key_row[key] = len(source_rows) + 2
                            source_rows.append(index)
                        row = key_row[key]
                        break
                row_of[word] = row
        vectors = np.zeros((len(source_rows) + 2, embeddings.dim), dtype=np.float32)
        if source_rows:
            vectors[2:] = embeddings.vectors[np.asarray(source_rows)]
        vectors = normalize_rows(vectors, normalize)
        found = sum(r != UNK for r in row_of.values())
        return cls(row_of, vectors, found, len(row_of))

    def coverage(self, sentences) -> dict:
        """Token and type coverage of ``sentences`` by the embeddings."""
        tokens = [w for s in sentences for w in s.words]
        types = set(tokens)
        found_tokens = sum(self.row_of.get(w, UNK) != UNK for w in tokens)
        found_types = sum(self.row_of.get(w, UNK) != UNK for w in types)
        return {
            "tokens": len(tokens),
            "found_tokens": found_tokens,
            "token_coverage": found_tokens / max(len(tokens), 1),
            "types": len(types),
            "found_types": found_types,
            "type_coverage": found_types / max(len(types), 1),
        }


def normalize_rows(vectors: np.ndarray, how: str) -> np.ndarray:
    """'none'; 'unit': every row to length 1; 'mean_norm': the matrix divided by its mean row length
    (one scale for all rows: keeps the geometry, puts embeddings of any scale on the same footing)."""
    if how == "none":
        return vectors
    norms = np.linalg.norm(vectors[2:], axis=1, keepdims=True)
    if how == "unit":
        vectors[2:] /= np.where(norms > 0, norms, 1.0)
    elif how == "mean_norm":
        mean = float(norms.mean()) if norms.size else 1.0
        vectors[2:] /= mean if mean > 0 else 1.0
    else:
        raise ValueError(f"unknown normalisation {how!r}; known: none, unit, mean_norm")
    return vectors


def char_vocabulary(sentences) -> dict[str, int]:
    """Character → id (0 padding, 1 unseen), from the training sentences."""
    chars = sorted({ch for s in sentences for w in s.words for ch in w})
    return {ch: i + 2 for i, ch in enumerate(chars)}


@dataclass
class EncodedSentence:
    words: np.ndarray   # (T,) int64 rows of the word table
    casing: np.ndarray  # (T,) int64
    chars: list[np.ndarray]  # T arrays of char ids
    tags: np.ndarray    # (T,) int64


def encode(sentences: list[Sentence], word_rows, tag_ids: dict[str, int], char_ids: dict[str, int] | None) -> list[EncodedSentence]:
    """Turn sentences into id arrays. ``word_rows``: a dict word → row, or a callable
    (sentence index, sentence) → row array (contextual vectors: one row per token)."""
    out = []
    for i, s in enumerate(sentences):
        if callable(word_rows):
            words = np.asarray(word_rows(i, s), dtype=np.int64)
        else:
            words = np.fromiter((word_rows.get(w, UNK) for w in s.words), dtype=np.int64, count=len(s.words))
        casing = np.fromiter((casing_class(w) for w in s.words), dtype=np.int64, count=len(s.words))
        chars = [np.fromiter((char_ids.get(c, 1) for c in w), dtype=np.int64) for w in s.words] if char_ids else []
        tags = np.fromiter((tag_ids[t] for t in s.tags), dtype=np.int64, count=len(s.tags))
        out.append(EncodedSentence(words, casing, chars, tags))
    return out


def collate(batch: list[EncodedSentence], with_chars: bool):
    """Pad a batch to its longest sentence: dict of tensors (B, T) (+ chars (B, T, C)) and mask."""
    import torch

    lengths = [len(s.words) for s in batch]
    B, T = len(batch), max(lengths)
    words = np.zeros((B, T), dtype=np.int64)
    casing = np.zeros((B, T), dtype=np.int64)
    tags = np.zeros((B, T), dtype=np.int64)
    for b, s in enumerate(batch):
        n = len(s.words)
        words[b, :n], casing[b, :n], tags[b, :n] = s.words, s.casing, s.tags
    out = {
        "words": torch.from_numpy(words),
        "casing": torch.from_numpy(casing),
        "tags": torch.from_numpy(tags),
        "lengths": torch.tensor(lengths, dtype=torch.int64),
        "mask": torch.from_numpy(np.arange(T)[None, :] < np.asarray(lengths)[:, None]),
    }
    if with_chars:
        C = max(len(c) for s in batch for c in s.chars)
        chars = np.zeros((B, T, C), dtype=np.int64)
        for b, s in enumerate(batch):
            for t, c in enumerate(s.chars):
                chars[b, t, : len(c)] = c
        out["chars"] = torch.from_numpy(chars)
    return out
