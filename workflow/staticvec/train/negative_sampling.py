"""Negative sampling: what the students' losses are made of, shared by X2Static, BERT + Skip-gram
and Context-to-Vec (the rest of the shared core: :mod:`staticvec.train.student`).

The three methods train a *static* table against a *contextual* side computed by the teacher
(X2Static: the sentence context E_ctx; BERT + Skip-gram and Context-to-Vec: the centre word's
vector o_i) with the logistic loss of word2vec's negative sampling:

- :class:`UnigramSampler`: negatives drawn ∝ count^power (0.75 word2vec / Wang et al.; 0.5
  fastText / Sent2vec / X2Static's code), by inverse CDF on a seeded numpy generator;
- :func:`keep_probabilities`: frequent-word subsampling, word2vec C / fastText's
  ``min(1, sqrt(t/f) + t/f)`` (X2Static's code) or Mikolov et al.'s paper formula ``sqrt(t/f)``
  (f = count / total count of the vocabulary);
- :func:`log_sigmoid` / :func:`logistic_loss`: ``ℓ(x) = log(1 + e^-x) = -log σ(x)``;
- :func:`context_windows`: the ±w window of every position of a block, padded with -1 (no
  Python loop per word);
- :func:`centre_window_batches` / :func:`prepare_centre_windows`: Skip-gram steps with a
  contextual centre, as batches for the autograd engine and as flat arrays for the fast engine,
  from the same random draws.

All randomness (initialisation aside) comes from ONE numpy generator owned by the loop and handed
to the model per block, in a fixed order, so results depend only on the seed and the data.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from staticvec.errors import StaticvecError
from staticvec.train.kernels import feature_view
from staticvec.train.student import Batch

SUBSAMPLE_FORMULAS = ("word2vec", "mikolov")


# ---------------------------------------------------------------- sampling


def keep_probabilities(counts, t: float, formula: str = "word2vec") -> np.ndarray:
    """Probability of keeping each word as a target: 1 everywhere when ``t <= 0`` (no subsampling).

    ``word2vec``: ``min(1, sqrt(t/f) + t/f)`` — word2vec.c and fastText, X2Static's released code;
    ``mikolov``: ``min(1, sqrt(t/f))`` — the formula printed in Mikolov et al. (2013b) and Wang
    et al.'s Eq. 12 (discard with ``1 - sqrt(t/f)``). ``f`` is the word's share of all vocabulary
    tokens.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if t <= 0:
        return np.ones(len(counts))
    if formula not in SUBSAMPLE_FORMULAS:
        raise StaticvecError(f"subsampling formula {formula!r}: expected one of {', '.join(SUBSAMPLE_FORMULAS)}")
    ratio = t / np.maximum(counts / counts.sum(), 1e-300)
    p = np.sqrt(ratio) + (ratio if formula == "word2vec" else 0.0)
    return np.minimum(1.0, p)


class UnigramSampler:
    """Word ids drawn with probability ∝ ``count ** power`` (inverse CDF: exact, O(log V) per draw)."""

    def __init__(self, counts, power: float):
        weights = np.asarray(counts, dtype=np.float64) ** power
        if not len(weights) or weights.sum() <= 0:
            raise StaticvecError("negative sampling needs a vocabulary with positive counts")
        self.power = power
        self.probabilities = weights / weights.sum()
        self.cdf = np.cumsum(self.probabilities)
        self.cdf[-1] = 1.0

    def draw(self, rng: np.random.Generator, size) -> np.ndarray:
        u = rng.random(size)
        return np.minimum(np.searchsorted(self.cdf, u, side="right"), len(self.cdf) - 1).astype(np.int64)


# ---------------------------------------------------------------- losses and windows


def log_sigmoid(x):
    import torch.nn.functional as F

    return F.logsigmoid(x)


def logistic_loss(x):
    """ℓ(x) = log(1 + e^-x) = -log σ(x), computed stably."""
    import torch.nn.functional as F

    return F.softplus(-x)


def context_windows(sentence_of: np.ndarray, window: int) -> np.ndarray:
    """(n, 2·window) positions of the words at offsets -w..-1, +1..+w of each position, same sentence only.

    ``sentence_of`` gives each position's sentence (positions of a sentence are consecutive);
    -1 marks an offset outside the sentence. The centre itself is never its own context.
    """
    n = len(sentence_of)
    offsets = np.concatenate([np.arange(-window, 0), np.arange(1, window + 1)])
    j = np.arange(n)[:, None] + offsets[None, :]
    inside = (j >= 0) & (j < n)
    jc = np.clip(j, 0, max(n - 1, 0))
    inside &= sentence_of[jc] == sentence_of[:, None] if n else inside
    return np.where(inside, j, -1)


# ---------------------------------------------------------------- Skip-gram steps with a contextual centre


def _draw_centres(block: dict, rng: np.random.Generator, window: int, negatives: int, sampler: UnigramSampler,
                  keep: np.ndarray | None, shuffle: bool, negatives_per_pair: bool):
    """A block's centres and their random draws, shared by both engines (the same draws in the same
    order, so the same batches): ``(pos, c_ids, win, mask, centres, neg)``."""
    offsets, ids = block["sentence_offsets"], block["word_ids"]
    sent_of = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    pos = np.flatnonzero(ids >= 0)
    c_ids = ids[pos]
    win = context_windows(sent_of[pos], window)
    mask = win >= 0
    draws = rng.random(len(pos))  # drawn even without subsampling: a data-independent random stream
    ok = (block["word_pieces"][pos] > 0) & mask.any(axis=1)
    if keep is not None:
        ok &= draws < keep[c_ids]
    centres = np.flatnonzero(ok)
    if shuffle:
        centres = rng.permutation(centres)
    shape = (len(centres), 2 * window, negatives) if negatives_per_pair else (len(centres), negatives)
    return pos, c_ids, win, mask, centres, sampler.draw(rng, shape)


def centre_window_batches(block: dict, rng: np.random.Generator, *, window: int, batch_size: int, negatives: int,
                          sampler: UnigramSampler, keep: np.ndarray | None = None, shuffle: bool = True,
                          negatives_per_pair: bool = False, context_vectors: bool = False, centre_rows: bool = False,
                          device: str = "cpu") -> Iterator[Batch]:
    """Skip-gram batches with a contextual centre (BERT + Skip-gram, Context-to-Vec), vectorised per block.

    Out-of-vocabulary words are removed before windowing (word2vec; the teacher saw the whole
    sentence), so the ±``window`` context of a centre is its in-vocabulary neighbours in the same
    sentence, never itself. A centre needs a teacher vector (≥ 1 piece) and ≥ 1 context word;
    ``keep`` (per vocabulary id) subsamples centres. Centres are shuffled within the block.

    Each batch: ``rows["ctx"]`` = the context words' ids (B, 2w; -1 = padding), then the negatives
    (k per centre, or per (centre, context) pair with ``negatives_per_pair``: 2w·k, padded where
    the pair is), then with ``centre_rows`` the centre's own id; ``data["o"]`` the centre's teacher
    vector (B, d), ``data["mask"]`` the valid context slots (B, 2w) and with ``context_vectors``
    ``data["o_ctx"]``, the mean teacher vector of the context words (B, d).
    """
    import torch

    pos, c_ids, win, mask, centres, neg = _draw_centres(block, rng, window, negatives, sampler, keep, shuffle,
                                                        negatives_per_pair)
    vectors = block["word_vectors"]
    left_over = len(pos) - len(centres)  # words that are no centre still count as progress (first batch)
    for b in range(0, len(centres), batch_size):
        sel = centres[b:b + batch_size]
        w, m = win[sel], mask[sel]
        ctx_ids = np.where(m, c_ids[np.maximum(w, 0)], -1)
        n = neg[b:b + batch_size]
        if negatives_per_pair:
            n = np.where(m[:, :, None], n, -1)
        parts = [ctx_ids, n.reshape(len(sel), -1)] + ([c_ids[sel][:, None]] if centre_rows else [])
        data = {"o": torch.as_tensor(vectors[pos[sel]], device=device).float(),
                "mask": torch.as_tensor(m, device=device)}
        if context_vectors:
            ctx_vec = torch.as_tensor(vectors[pos[np.maximum(w, 0)]], device=device).float()
            mt = data["mask"].float().unsqueeze(-1)
            data["o_ctx"] = (ctx_vec * mt).sum(1) / mt.sum(1).clamp(min=1)
        words = len(sel) + (left_over if b == 0 else 0)
        yield Batch(rows={"ctx": torch.as_tensor(np.concatenate(parts, axis=1), device=device)}, data=data,
                    examples=len(sel), words=int(words))


def prepare_centre_windows(block: dict, rng: np.random.Generator, *, window: int, batch_size: int, negatives: int,
                           sampler: UnigramSampler, keep: np.ndarray | None = None, shuffle: bool = True,
                           negatives_per_pair: bool = False) -> dict | None:
    """The fast engine's form of :func:`centre_window_batches`: the same centres, order, negatives
    and random draws (so both engines see the same batches), as flat arrays for a kernel.

    Returns None when the block has no centre (no batch, as the batch generator). ``vec``: the
    block's word vectors as float32 (one conversion per block); ``xpos``: each centre's position in
    ``vec``; ``cpos`` / ``ctx``: its context words' positions / vocabulary ids (-1: padding);
    ``neg``: negatives (k, or 2w·k per pair, -1 where the pair is padding); ``cid``: the centre's
    id; ``bounds``: batch boundaries; ``words`` / ``examples``: per batch, as the batches count them.
    """
    pos, c_ids, win, mask, centres, neg = _draw_centres(block, rng, window, negatives, sampler, keep, shuffle,
                                                        negatives_per_pair)
    if not len(centres):
        return None
    w, m = win[centres], mask[centres]
    if negatives_per_pair:
        neg = np.where(m[:, :, None], neg, -1).reshape(len(centres), -1)
    bounds = np.append(np.arange(0, len(centres), batch_size), len(centres)).astype(np.int64)
    examples = np.diff(bounds)
    words = examples.copy()
    words[0] += len(pos) - len(centres)  # words that are no centre count with the first batch
    return {"vec": feature_view(block["word_vectors"]),
            "xpos": pos[centres].astype(np.int64),
            "cpos": np.ascontiguousarray(np.where(m, pos[np.maximum(w, 0)], -1), dtype=np.int64),
            "ctx": np.ascontiguousarray(np.where(m, c_ids[np.maximum(w, 0)], -1), dtype=np.int64),
            "neg": np.ascontiguousarray(neg, dtype=np.int64), "cid": c_ids[centres].astype(np.int64),
            "bounds": bounds, "words": words.astype(np.int64), "examples": examples.astype(np.int64)}
