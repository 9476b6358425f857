"""Nearest neighbours by cosine, for the papers' "light" / "while" tables.

The query word itself is excluded; the list is over the evaluated vocabulary (after the
``max_vocab`` cut and lower-casing). A query word missing from the vocabulary gets ``None``.
"""

from __future__ import annotations

import numpy as np

from staticvec.evaluate.lookup import VectorLookup


def nearest_neighbours(lookup: VectorLookup, words, topn: int = 10) -> dict:
    idx = lookup.indices(list(words))
    lists = {}
    for word, i in zip(words, idx):
        if i < 0:
            lists[word] = None
            continue
        sims = lookup.unit @ lookup.unit[i]
        sims[i] = -np.inf
        k = min(topn + 1, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.lexsort((top, -sims[top]))][:topn]  # by similarity, then row (frequency rank)
        lists[word] = [[lookup.words[j], round(float(sims[j]), 6)] for j in top if np.isfinite(sims[j])]
    return {
        "task": "neighbours",
        "metric": "cosine",
        "topn": topn,
        "found": int((idx >= 0).sum()),
        "total": len(idx),
        "neighbours": lists,
    }
