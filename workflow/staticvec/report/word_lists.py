"""Two-column word lists of the figures: word pairs (``first TAB second``) and word classes
(``class TAB word``, e.g. ``resources/word_lists/semglove_figure3.tsv`` for SemGloVe Figure 3's
t-SNE), ``#`` comments; and the vectors of a class list's words in one embedding. Words missing from
an embedding are reported, so every panel shows exactly the words it has.
"""

from __future__ import annotations

import os
import numpy as np

from staticvec.errors import InputFileError


def iter_tab_pairs(path: str | os.PathLike):
    """(line number, (first, second)) of a two-column TAB word list, skipping blank and ``#`` lines;
    a line without exactly two non-empty fields is an error naming the line."""
    from staticvec.files import open_any

    with open_any(path, "rt") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0] or not parts[1]:
                raise InputFileError(path, "expected two TAB-separated fields", lineno)
            yield lineno, (parts[0], parts[1])


def load_word_classes(path: str | os.PathLike) -> list[tuple[str, str]]:
    """(class, word) pairs in file order; a malformed or repeated line is an error naming the line."""
    pairs, seen = [], set()
    for lineno, (cls, word) in iter_tab_pairs(path):
        if " " in word:
            raise InputFileError(path, "expected 'class TAB word'", lineno)
        if word in seen:
            raise InputFileError(path, f"word {word!r} is listed twice", lineno)
        seen.add(word)
        pairs.append((cls, word))
    if not pairs:
        raise InputFileError(path, "no words listed")
    return pairs


def class_vectors(emb, classes: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], np.ndarray, list[str]]:
    """((class, word) found, their unit vectors, words missing from ``emb``)."""
    found = [(c, w) for c, w in classes if w in emb]
    missing = [w for _, w in classes if w not in emb]
    unit = emb.unit_vectors()
    rows = np.array([emb.get_index(w) for _, w in found], dtype=np.int64)
    return found, unit[rows] if len(rows) else np.zeros((0, emb.dim), np.float32), missing
