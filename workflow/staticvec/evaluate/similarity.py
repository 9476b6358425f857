"""Word similarity: Spearman's rho between the cosine of the two words' vectors and human scores.

Spearman's rho is ``scipy.stats.spearmanr`` (ties get average ranks), as in gensim's
``evaluate_word_pairs``, MUSE and ``web``. Under the ``drop`` policy a pair with a missing word
is left out (gensim with ``dummy4unknown=False``, MUSE, Faruqui's scripts); under ``mean`` the
missing word's vector is the mean vector (``web``). ``found`` counts pairs whose two words are
both in the vocabulary, whatever the policy.

With ``items=True`` the result also keeps each pair's numbers, in the data set's order (``items``:
``gold``, the human score; ``cosine``, ours, ``None`` for a pair left out of the score; ``found``, one
character per pair, ``1`` when both words are in the vocabulary, ``0`` when one is out of it — under
``mean`` such a pair has a cosine, against the mean vector), so that the
score can be recomputed on a subset of the pairs (:mod:`staticvec.evaluate.items`: the claims'
common ground).
"""

from __future__ import annotations

import numpy as np

from staticvec.evaluate.datasets import SimilarityData
from staticvec.evaluate.lookup import VectorLookup


def cosine_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise cosine in float64; 0 where a vector is zero."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1)
    dots = np.einsum("ij,ij->i", x, y)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def rankdata(a: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share their mean rank): ``scipy.stats.rankdata(a)``, same arithmetic."""
    a = np.asarray(a)
    sorter = np.argsort(a, kind="stable")
    inv = np.empty(sorter.size, dtype=np.intp)
    inv[sorter] = np.arange(sorter.size, dtype=np.intp)
    a = a[sorter]
    obs = np.r_[True, a[1:] != a[:-1]]
    dense = obs.cumsum()[inv]
    count = np.r_[np.nonzero(obs)[0], len(obs)]
    return 0.5 * (count[dense] + count[dense - 1] + 1)


def spearman(x, y) -> float | None:
    """Spearman's rho, or None when it is undefined (fewer than 2 values, a constant side, a NaN).

    The computation of ``scipy.stats.spearmanr(x, y).statistic`` (average ranks of the two columns,
    then ``np.corrcoef``), written out so that scoring does not import ``scipy.stats`` (over a second
    of every evaluation job's start-up); tests/test_evaluate_similarity.py checks that the two agree
    bit for bit, ties included.
    """
    if len(x) < 2:
        return None
    a = np.column_stack((x, y))
    if (a[:, 0][0] == a[:, 0]).all() or (a[:, 1][0] == a[:, 1]).all() or np.isnan(a).any():
        return None
    ranked = np.apply_along_axis(rankdata, 0, a)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.corrcoef(ranked, rowvar=False)[1, 0]
    return None if np.isnan(rho) else float(rho)


def evaluate_similarity(lookup: VectorLookup, data: SimilarityData, items: bool = False) -> dict:
    words1 = [a for a, _ in data.pairs]
    words2 = [b for _, b in data.pairs]
    i1, i2 = lookup.indices(words1), lookup.indices(words2)
    found = (i1 >= 0) & (i2 >= 0)
    keep = found if lookup.oov == "drop" else np.ones_like(found)
    cosines = cosine_rows(lookup.rows(i1[keep]), lookup.rows(i2[keep]))
    missing_words = {lookup.key(w) for w, i in zip(words1 + words2, np.concatenate([i1, i2])) if i < 0}
    result = {
        "task": "similarity",
        "metric": "spearman",
        "score": spearman(data.scores[keep], cosines),
        "found": int(found.sum()),
        "total": len(data.pairs),
        "scored": int(keep.sum()),
        "missing_words": len(missing_words),
    }
    if items:
        per_pair = [None] * len(data.pairs)
        for index, cosine in zip(np.flatnonzero(keep), cosines.tolist()):
            per_pair[index] = cosine
        result["items"] = {"gold": np.asarray(data.scores, dtype=np.float64).tolist(), "cosine": per_pair,
                           "found": "".join("1" if f else "0" for f in found)}
    return result
