"""Word analogy ``a : b :: c : ?`` by 3CosAdd (default) or 3CosMul over the whole vocabulary.

3CosAdd (Mikolov et al. 2013; Levy & Goldberg 2014, the papers' Eq. 16)::

    d* = argmax_{x in V, x not in {a, b, c}} cos(x, b - a + c)

on unit vectors; the answer is the arg-max over the *whole* (possibly ``max_vocab``-cut) vocabulary,
excluding the three question words. This is word2vec's ``compute-accuracy`` with no threshold,
GloVe's ``evaluate.py``, gensim's ``evaluate_word_analogies(restrict_vocab=len(vocab))`` and
``web``'s ``SimpleAnalogySolver``. 3CosMul (Levy & Goldberg 2014)::

    d* = argmax  c'(x, b) c'(x, c) / (c'(x, a) + 0.001),   c'(x, y) = (cos(x, y) + 1) / 2

OOV: under ``drop`` a question with any of its four words missing is left out (gensim, GloVe,
word2vec, vecmap); under ``mean`` (``web``) a missing question word is replaced by the mean vector
(used as is, not re-normalised, as ``web`` does) and a missing answer is simply never predicted.

Speed: instead of one ``questions × vocabulary`` product per question batch, the cosines of every
distinct question word with the vocabulary are computed (``S = W Uᵀ``; about 900 words for Google
and for MSR) and each question's scores are rows of S combined, ``S[b] - S[a] + S[c]``: the cost
is ``|W|·V·d`` multiply-adds plus three vector additions per question instead of ``n·V·d``. The
vocabulary is scanned in tiles (4096 words on CPU) so that S and the score batches stay in cache,
with a running arg-max; question sets with too many distinct words for the memory budget are cut
into chunks. Runs on CUDA when asked (``device``), else on CPU threads.

With ``items=True`` the result also keeps each question's outcome, in the data set's order
(``items.correct``: one character per question, ``1`` answered right, ``0`` wrong, ``-`` left out
of the score; ``items.found``, ``1`` when the question's four words are in the vocabulary, ``0`` when
one is out of it), so that the accuracy can be recomputed on a subset of the questions
(:mod:`staticvec.evaluate.items`: the claims' common ground).
"""

from __future__ import annotations

import numpy as np

from staticvec.evaluate.datasets import AnalogyData
from staticvec.evaluate.lookup import VectorLookup
from staticvec.device import resolve_device

METHODS = ("3cosadd", "3cosmul")
COSMUL_EPSILON = 1e-3


def _chunks(a: np.ndarray, b: np.ndarray, c: np.ndarray, max_words: int):
    """Consecutive question ranges whose distinct question words number at most ``max_words``."""
    start, seen = 0, set()
    for i in range(len(a)):
        new = {int(a[i]), int(b[i]), int(c[i])} - seen
        if seen and len(seen) + len(new) > max_words:
            yield start, i
            start, seen = i, set()
            new = {int(a[i]), int(b[i]), int(c[i])}
        seen |= new
    if len(a) > start:
        yield start, len(a)


def _row_argmax(scores):
    """Arg-max of each row (first one on ties); NumPy's is ~10x faster than torch's on CPU."""
    import torch

    if scores.device.type == "cpu":
        return torch.from_numpy(scores.numpy().argmax(axis=1))
    return scores.argmax(dim=1)


def solve_analogies(
    lookup: VectorLookup,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    method: str = "3cosadd",
    device: str = "auto",
    memory_mb: int = 1024,
    tile: int | None = None,
    batch: int = 256,
) -> np.ndarray:
    """Predicted row for each question (rows of ``a``, ``b``, ``c``; -1 = missing → mean vector).

    The vocabulary is scanned in tiles of ``tile`` words: for each tile the cosines of the
    distinct question words with the tile's words are one matrix product, and each batch of
    questions combines three of its rows and keeps a running arg-max. Ties go to the earlier
    (more frequent) word.
    """
    import torch

    if method not in METHODS:
        raise ValueError(f"unknown analogy method {method!r}; known: {', '.join(METHODS)}")
    a, b, c = (np.asarray(x, dtype=np.int64) for x in (a, b, c))
    n = len(a)
    predicted = np.zeros(n, dtype=np.int64)
    if n == 0:
        return predicted
    device = resolve_device(device)
    unit = torch.from_numpy(lookup.unit).to(device)
    mean = torch.from_numpy(lookup.mean).to(device)
    vocab = unit.shape[0]
    tile = min(vocab, tile or (4096 if device == "cpu" else 65536))
    max_words = max(8, memory_mb * 2**20 // 2 // (4 * tile))

    with torch.inference_mode():
        for start, stop in _chunks(a, b, c, max_words):
            qa, qb, qc = a[start:stop], b[start:stop], c[start:stop]
            words = np.unique(np.concatenate([qa, qb, qc]))  # sorted: -1 (mean vector) first if present
            query = unit[torch.from_numpy(np.maximum(words, 0)).to(device)]
            if words[0] < 0:
                query[0] = mean
            # b - a is shared by every question on the same pair a:b (Google: ~600 pairs, 19,544 questions)
            ab, pair = np.unique(np.stack([qa, qb], axis=1), axis=0, return_inverse=True)
            pa, pb = (torch.from_numpy(np.searchsorted(words, ab[:, k])).to(device) for k in (0, 1))
            la, lb, lc = (torch.from_numpy(np.searchsorted(words, q)).to(device) for q in (qa, qb, qc))
            pair = torch.from_numpy(pair.reshape(-1)).to(device)
            asked = torch.from_numpy(np.stack([qa, qb, qc], axis=1)).to(device)  # (m, 3) rows, -1 = none
            m, n_tiles = stop - start, (vocab + tile - 1) // tile
            tile_best = torch.empty((m, n_tiles), device=device)
            tile_arg = torch.empty((m, n_tiles), dtype=torch.int64, device=device)
            for t, t0 in enumerate(range(0, vocab, tile)):
                width = min(vocab, t0 + tile) - t0
                # one spare column, left out of the max, where question words outside the tile are "masked"
                sims = torch.zeros((len(words), width + 1), device=device)
                sims[:, :width] = query @ unit[t0 : t0 + width].T
                if method == "3cosadd":
                    offsets = sims.index_select(0, pb) - sims.index_select(0, pa)
                cols = asked - t0
                cols = torch.where((asked >= 0) & (cols >= 0) & (cols < width), cols, width)
                for s0 in range(0, m, batch):
                    sl = slice(s0, min(m, s0 + batch))
                    if method == "3cosadd":
                        scores = offsets.index_select(0, pair[sl])
                        scores += sims.index_select(0, lc[sl])
                    else:
                        scores = (sims[lb[sl]] + 1) * (sims[lc[sl]] + 1) / 4 / ((sims[la[sl]] + 1) / 2 + COSMUL_EPSILON)
                    scores.scatter_(1, cols[sl], -torch.inf)  # never answer with a question word
                    best = _row_argmax(scores[:, :width])
                    tile_arg[sl, t] = best
                    tile_best[sl, t] = scores.gather(1, best[:, None]).squeeze(1)
            # first tile holding the maximum: ties go to the earlier (more frequent) word
            t_best = tile_best.argmax(dim=1, keepdim=True)
            predicted[start:stop] = (tile_arg.gather(1, t_best).squeeze(1) + t_best.squeeze(1) * tile).cpu().numpy()
    return predicted


def evaluate_analogy(lookup: VectorLookup, data: AnalogyData, method: str = "3cosadd", device: str = "auto",
                     memory_mb: int = 1024, items: bool = False) -> dict:
    columns = list(zip(*data.questions)) if data.questions else [[], [], [], []]
    a, b, c, d = (lookup.indices(col) for col in columns)
    found = (a >= 0) & (b >= 0) & (c >= 0) & (d >= 0)
    keep = found if lookup.oov == "drop" else np.ones_like(found)
    kept = np.flatnonzero(keep)
    predicted = np.full(len(a), -2, dtype=np.int64)
    predicted[kept] = solve_analogies(lookup, a[kept], b[kept], c[kept], method, device, memory_mb)
    correct = keep & (predicted == d) & (d >= 0)

    def counts(mask) -> dict:
        scored = int((keep & mask).sum())
        hits = int((correct & mask).sum())
        return {
            "score": hits / scored if scored else None,
            "correct": hits,
            "found": int((found & mask).sum()),
            "total": int(mask.sum()),
            "scored": scored,
        }

    everything = np.ones(len(a), dtype=bool)
    groups = np.asarray(data.groups, dtype=object)
    sections = np.asarray(data.sections, dtype=object)
    result = {"task": "analogy", "metric": "accuracy", "method": method, **counts(everything)}
    group_counts = {g: counts(groups == g) for g in dict.fromkeys(data.groups)}
    for g, entry in group_counts.items():
        result[g] = entry["score"]
    result["groups"] = group_counts
    result["sections"] = {s: counts(sections == s) for s in dict.fromkeys(data.sections)}
    if items:
        result["items"] = {"correct": "".join("1" if c else "0" if k else "-" for c, k in zip(correct, keep)),
                           "found": "".join("1" if f else "0" for f in found)}
    return result

