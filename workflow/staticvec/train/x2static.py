"""X2Static (Gupta & Jaggi, ACL 2021): CBOW-style distillation of a contextual model into a static table.

Reading of the paper (§3, Eqs. 1–4; the PDF text mangles the equations)::

    min_U  Σ_{S∈C} Σ_{w_t∈S}  ℓ(u_{w_t}ᵀ E_ctx(S, w_t)) + Σ_{w'∈N} ℓ(−u_{w'}ᵀ E_ctx(S, w_t)),   ℓ(x) = log(1+e^−x)

U is the static target table (the output, width = the teacher's: 768/1024 for BERT, RoBERTa,
GPT-2; 384 for MiniLM, 576 for SmolLM2 here), N the negatives. E_ctx is fixed (no gradient):

- X2Static_sent (Eq. 3): ``E_ctx(S, w_t) = 1/|S| Σ_{w∈S} M(S, w)``, M(S, w) = the teacher's
  last-layer vector of word w with S as input (a word = the mean of its pieces);
- X2Static_para (Eq. 4): the same mean over the sentence's words, but M(P_S, w) computed with the
  whole paragraph P_S as input. Which of the two is ``context`` (``sentence`` | ``paragraph``):
  the teacher feature set of that name; the features given must match it. The code is the same.

What enters the mean (``context_mean``) is where the paper, its equation and the released code
differ; all three are offered:

- ``all_words`` (default): Eq. 3 as printed, ``E_ctx(S, w_t) = 1/|S| Σ_{w∈S} M(S, w)``: the mean
  over all words of S, the target included (the teacher sees the whole, unmasked sentence, so the
  target's own contextual vector is one of the |S| terms).
- ``exclude_target``: the mean over the sentence's words *without the target*,
  ``(Σ_{w∈S} M(S,w) − M(S,w_t)) / (|S| − 1)``. The prose calls w_t "the masked target word"
  (Eq. 1), builds on Sent2vec's ``E_ctx`` over ``S \\ {w_t}`` (Eq. 2) and speaks of "the sentence
  S \\ {w_t} without the target word", but Eq. 3, the definition X2Static_sent uses, sums over
  every w ∈ S; this reading of the prose is the option. The teacher still sees the whole sentence
  (masking the input would cost one teacher pass per word, which the paper rules out). Computed
  from the stored per-word vectors as sum minus the target's vector, over *words* (each word = the
  mean of its pieces).
- ``all_pieces``: the released code (``learn_from_*_ver2.py``: "No masking at all in this
  version"): the mean of every last-layer *piece* state of the sentence input, [CLS]/[SEP]
  (<s>/</s>) included, so words with many pieces weigh more — the ``sentence_vectors`` feature.
  In paragraph features it is the mean of the sentence's own pieces inside the paragraph (the
  released para code's spans; specials only where a paragraph chunk is a single sentence).

Words whose pieces were all dropped by the tokenizer (``word_pieces`` = 0: no vector) are left out
of the means. Out-of-vocabulary words are context (the teacher saw them) but never targets.

Training (Table 1 and §4.1): 1 epoch, lazy Adam (``torch.optim.SparseAdam`` semantics) lr 0.001
constant, 10 negatives, target subsampling t = 5e-6 with the fastText/word2vec formula
``keep = min(1, sqrt(t/f) + t/f)`` (paper: "similar to FASTTEXT"; the released code uses exactly
this), min count 10, vocabulary ≤ 750k, batch 128 — *sentences* (paragraph features: still 128
sentences; the released para code batches 128 paragraphs), as the released code's DataLoader
does, so a step has a varying number of targets. The loss of a step is the mean over its targets
of the per-target loss (the released ``ll_loss`` means). The negative distribution is not given
in the paper; its Sent2vec/fastText lineage and the released code draw ∝ count^0.5, the default
here (``negative_power``). The released code clamps scores to ±20 before the loss
(``score_clamp: 20``; default none). U is initialised uniform in ±1/d (released code). Sentences
are shuffled within each block of ~4k sentences (the released code shuffles buffers of 2^18).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from staticvec.errors import StaticvecError
from staticvec.train.kernels import as_numpy, feature_view, row_gradients, sigmoid, softplus, value
from staticvec.train.loop import LoopSettings
from staticvec.train.negative_sampling import UnigramSampler, keep_probabilities, logistic_loss
from staticvec.train.optimizer import fast_update
from staticvec.train.student import Batch, Student, StudentParams

CONTEXT_MEANS = ("exclude_target", "all_words", "all_pieces")


# The released code's values of the options where it differs from the paper (recorded beside each run).
RELEASED_CODE = {"context_mean": "all_pieces", "negative_power": 0.5, "score_clamp": 20.0}


@dataclass
class X2StaticParams(StudentParams):
    """Hyper-parameters; defaults are the paper's (Table 1), released-code behaviours are options."""

    context: str = "sentence"  # sentence (X2Static_sent) | paragraph (X2Static_para): the features' teacher inputs
    context_mean: str = "all_words"  # all_words (Eq. 3) | exclude_target (prose: masked target) | all_pieces (released)
    negatives: int = 10
    negative_power: float = 0.5  # paper: unspecified; fastText/Sent2vec and the released code: 0.5
    subsample_t: float = 5e-6
    subsample_formula: str = "word2vec"  # min(1, sqrt(t/f) + t/f) (fastText, released code) | mikolov
    epochs: int = 1
    lr: float = 0.001
    optimizer: str = "adam"  # lazy Adam on the rows of a step (SparseAdam); sgd as an option
    batch_sentences: int = 128
    score_clamp: float | None = None  # released code: 20
    shuffle: bool = True
    min_count: int = 10
    max_vocab: int | None = 750000
    # fast: hand-written gradients in numba kernels on CPU (the same batches, draws and update rule:
    # equal to autograd up to float rounding) | autograd: the torch reference (and the CUDA path)
    engine: str = "fast"

    def __post_init__(self):
        if self.engine not in ("fast", "autograd"):
            raise StaticvecError(f"x2static engine {self.engine!r}: expected fast or autograd")
        if self.context not in ("sentence", "paragraph"):
            raise StaticvecError(f"x2static context {self.context!r}: expected sentence or paragraph")
        if self.context_mean not in CONTEXT_MEANS:
            raise StaticvecError(f"x2static context_mean {self.context_mean!r}: expected one of {', '.join(CONTEXT_MEANS)}")
        if self.negatives < 0 or self.batch_sentences < 1 or self.epochs < 1:
            raise StaticvecError("x2static: negatives >= 0, batch_sentences >= 1 and epochs >= 1 are required")

    @classmethod
    def method_name(cls) -> str:
        return "x2static"

    def loop_settings(self) -> LoopSettings:
        return LoopSettings(epochs=self.epochs, lr=self.lr, lr_decay="none", optimizer=self.optimizer,
                            engine=self.engine)


def sentence_contexts(block: dict, mode: str, device: str = "cpu"):
    """Per sentence of a block: the sum of its word vectors and how many words have one (torch).

    ``all_pieces`` returns the stored piece means instead (and counts of 1).
    """
    import torch

    offsets = block["sentence_offsets"]
    n_sent = len(offsets) - 1
    if mode == "all_pieces":
        sv = torch.as_tensor(block["sentence_vectors"], device=device).float()
        return sv, torch.ones(n_sent, device=device)
    sent_of = np.repeat(np.arange(n_sent), np.diff(offsets))
    has = block["word_pieces"] > 0
    vec = torch.as_tensor(block["word_vectors"], device=device).float()
    idx = torch.as_tensor(sent_of[has], device=device)
    sums = torch.zeros(n_sent, vec.shape[1], device=device).index_add_(0, idx, vec[torch.as_tensor(has, device=device)])
    counts = torch.bincount(idx, minlength=n_sent).float()
    return sums, counts


def context_vectors(block: dict, targets: np.ndarray, mode: str, sums, counts, device: str = "cpu"):
    """E_ctx of each target word (block word indices), from the sentence sums (see module doc)."""
    import torch

    offsets = block["sentence_offsets"]
    sent = torch.as_tensor(np.searchsorted(offsets, targets, side="right") - 1, device=device)
    if mode == "all_pieces":
        return sums[sent]
    if mode == "all_words":
        return sums[sent] / counts[sent].clamp(min=1).unsqueeze(-1)
    own = torch.as_tensor(block["word_vectors"][targets], device=device).float()
    has = torch.as_tensor(block["word_pieces"][targets] > 0, device=device).float().unsqueeze(-1)
    return (sums[sent] - own * has) / (counts[sent].unsqueeze(-1) - has).clamp(min=1)


@njit(cache=True, parallel=True)
def sentence_sums(vec, offsets, pieces, sums, counts):
    """Per sentence: the float32 sum of its words' vectors (words with >= 1 piece) and their number."""
    for s in prange(len(offsets) - 1):
        sums[s, :] = 0.0
        n = 0
        for w in range(offsets[s], offsets[s + 1]):
            if pieces[w] > 0:
                n += 1
                for e in range(vec.shape[1]):
                    sums[s, e] += value(vec[w, e])
        counts[s] = n


@njit(cache=True, parallel=True, fastmath=True)
def x2static_grads(U, vec, sums, counts, targets, sent, has, rows, mode, clamp, red, E, loss, slot_row, slot_coef,
                   slot_vec):
    """E_ctx of each target (mode 0 exclude_target, 1 all_words, 2 all_pieces: ``sums`` are the
    sentence vectors), the loss ℓ(u_tᵀE) + Σ ℓ(−u_nᵀE) per target and its row slots (vector E_i)."""
    n, K = rows.shape
    D = U.shape[1]
    for i in prange(n):
        s = sent[i]
        if mode == 0:
            h = has[i]
            den = np.float32(max(counts[s] - h, 1))
            for e in range(D):
                E[i, e] = (sums[s, e] - value(vec[targets[i], e]) * h) / den if h else sums[s, e] / den
        elif mode == 1:
            den = np.float32(max(counts[s], 1))
            for e in range(D):
                E[i, e] = sums[s, e] / den
        else:
            for e in range(D):
                E[i, e] = sums[s, e]
        li = 0.0
        for m in range(K):
            r = rows[i, m]
            t = np.float32(0.0)
            for e in range(D):
                t += U[r, e] * E[i, e]
            sign = 1.0 if m == 0 else -1.0
            x = sign * t
            inside = True
            if clamp > 0:
                if t > clamp or t < -clamp:
                    inside = False
                    x = sign * max(-clamp, min(clamp, t))
            li += softplus(-x)
            g = (sigmoid(x) - 1.0) * sign * red if inside else 0.0
            k = i * K + m
            slot_row[k] = r
            slot_coef[k] = np.float32(g)
            slot_vec[k] = i
        loss[i] = li


class X2Static(Student):
    """The static table U and the batching of a block into steps of ``batch_sentences`` sentences."""

    params_class = X2StaticParams
    output_table = "U"
    output_description = "U (target table)"

    def __init__(self, counts, dim: int, params: X2StaticParams, device: str = "cpu", seed: int = 0):
        import torch

        self.params = params
        self.device = device
        self.dim = dim
        g = torch.Generator().manual_seed(seed)
        U = (torch.rand(len(counts), dim, generator=g) * 2 - 1) / dim  # uniform ±1/d, as the released code
        self.tables = {"U": U.to(device)}
        self.dense = {}
        self.sampler = UnigramSampler(counts, params.negative_power)
        self.keep = keep_probabilities(counts, params.subsample_t, params.subsample_formula)
        self.feature_keys = self.feature_keys_for(params)

    @staticmethod
    def feature_keys_for(params: X2StaticParams) -> list[str]:
        vectors = "sentence_vectors" if params.context_mean == "all_pieces" else "word_vectors"
        return ["sentence_offsets", "word_ids", "word_pieces", vectors]

    def _draw(self, block: dict, rng: np.random.Generator):
        """A block's random draws and steps, shared by both engines (same draws in the same order, so the
        same steps): ``(sent_of, targets, negatives, steps)`` with ``steps`` = [(lo, hi, words)] over
        ``targets``; a step whose targets were all subsampled away passes its words on to the next."""
        p = self.params
        offsets, ids = block["sentence_offsets"], block["word_ids"]
        n_sent, n_words = len(offsets) - 1, len(ids)
        sent_of = np.repeat(np.arange(n_sent), np.diff(offsets))
        # one uniform per word (in or out of the vocabulary) keeps the random stream data-independent
        draws = rng.random(n_words)
        in_vocab = ids >= 0
        kept = in_vocab & (draws < self.keep[np.maximum(ids, 0)])
        order = rng.permutation(n_sent) if p.shuffle else np.arange(n_sent)
        rank = np.empty(n_sent, dtype=np.int64)
        rank[order] = np.arange(n_sent)
        targets = np.flatnonzero(kept)
        targets = targets[np.argsort(rank[sent_of[targets]], kind="stable")]
        negatives = self.sampler.draw(rng, (len(targets), p.negatives))
        bounds = np.searchsorted(rank[sent_of[targets]], np.arange(0, n_sent + p.batch_sentences, p.batch_sentences))
        words_per_sent = np.bincount(sent_of[in_vocab], minlength=n_sent)[order]
        words_per_batch = np.add.reduceat(words_per_sent, np.arange(0, n_sent, p.batch_sentences)) if n_sent else []
        steps, carry = [], 0
        for b, words in enumerate(words_per_batch):
            carry += int(words)
            if bounds[b + 1] > bounds[b]:
                steps.append((int(bounds[b]), int(bounds[b + 1]), carry))
                carry = 0
        return sent_of, targets, negatives, steps

    def batches(self, block: dict, rng: np.random.Generator):
        import torch

        p = self.params
        ids = block["word_ids"]
        _, targets, negatives, steps = self._draw(block, rng)
        sums, counts = sentence_contexts(block, p.context_mean, self.device)
        for lo, hi, words in steps:
            sel = targets[lo:hi]
            rows = np.concatenate([ids[sel][:, None], negatives[lo:hi]], axis=1)
            ctx = context_vectors(block, sel, p.context_mean, sums, counts, self.device)
            yield Batch(rows={"U": torch.as_tensor(rows, device=self.device)}, data={"ctx": ctx},
                        examples=int(hi - lo), words=words)

    # ------------------------------------------------ fast engine

    @property
    def supports_fast(self) -> bool:
        return self.params.engine == "fast" and self.device == "cpu"

    def prepare_block(self, block: dict, rng: np.random.Generator) -> dict:
        """:meth:`batches` as flat arrays (the same draws in the same order, so the same steps)."""
        p = self.params
        offsets, ids = block["sentence_offsets"], block["word_ids"]
        n_sent = len(offsets) - 1
        sent_of, targets, negatives, steps = self._draw(block, rng)
        if p.context_mean == "all_pieces":
            sums = np.ascontiguousarray(block["sentence_vectors"], dtype=np.float32)
            vec, counts = sums[:1], np.ones(n_sent, np.int64)
        else:
            vec = feature_view(block["word_vectors"])
            sums, counts = np.empty((n_sent, vec.shape[1]), np.float32), np.empty(n_sent, np.int64)
            sentence_sums(vec, offsets.astype(np.int64), block["word_pieces"], sums, counts)
        return {"steps": steps, "targets": targets.astype(np.int64), "sent": sent_of[targets].astype(np.int64),
                "has": (block["word_pieces"][targets] > 0).astype(np.int64),
                "rows": np.ascontiguousarray(np.concatenate([ids[targets][:, None], negatives], axis=1), np.int64),
                "vec": vec, "sums": sums, "counts": counts}

    def run_block(self, prep, optimizer, settings, words_done: int, total: int):
        p = self.params
        U = as_numpy(self.tables["U"])
        mode = CONTEXT_MEANS.index(p.context_mean)
        losses, examples, words = [], [], []
        for lo, hi, w in prep["steps"]:
            n = hi - lo
            rows = prep["rows"][lo:hi]
            E, loss = np.empty((n, U.shape[1]), np.float32), np.empty(n)
            slot_row, slot_coef, slot_vec = (np.empty(rows.size, np.int64), np.empty(rows.size, np.float32),
                                             np.empty(rows.size, np.int64))
            x2static_grads(U, prep["vec"], prep["sums"], prep["counts"], prep["targets"][lo:hi], prep["sent"][lo:hi],
                           prep["has"][lo:hi], rows, mode, float(p.score_clamp or 0.0), 1.0 / n, E, loss, slot_row,
                           slot_coef, slot_vec)
            r, g = row_gradients(slot_row, slot_coef, slot_vec, E)
            fast_update(self, optimizer, settings, settings.lr, "U", r, g, {})
            losses.append(float(loss.sum()) / n)
            examples.append(n)
            words.append(w)
        return losses, examples, words

    def loss(self, batch: Batch, rows: dict, dense: dict):
        import torch

        U = rows["U"]  # (n, 1 + k, d): the target's row, then the negatives'
        scores = (U * batch.data["ctx"].unsqueeze(1)).sum(-1)
        if self.params.score_clamp:
            scores = scores.clamp(-self.params.score_clamp, self.params.score_clamp)
        sign = torch.ones(scores.shape[1], device=scores.device)
        sign[1:] = -1  # ℓ(u_tᵀE) + Σ ℓ(−u_nᵀE)
        return logistic_loss(scores * sign).sum(dim=1).mean()
