"""BERT + Skip-gram (Wang, Cui & Zhang, "Using Dynamic Embeddings to Improve Static Embeddings").

Reading of the paper (Eqs. 10–15)::

    u_i  = U o_i                                   (10)  o_i: the teacher's last-layer vector of the
                                                          centre word (mean of its pieces); U ∈ R^{300×d}
    a_j  = softmax_j (u_iᵀ v'_{i+j}),  1 ≤ |j| ≤ ws   (13) dot-product attention (Luong): u_i is the
                                                          query, the context words' static vectors the keys
    v'_ctx = Σ_j a_j v'_{i+j}                       (14)
    L = −Σ_i [ log σ(v'_ctxᵀ u_i) + Σ_{m=1..k} log σ(−v'_{neg_m}ᵀ u_i) ],  neg ~ U(w)^{3/4}/Z   (15)

V' (the static *context* table) is the output embedding. Settings (§Experiments): ws = 5, k = 5,
300-d, SGD lr 0.025, gradients clipped at norm 5, words with count < 5 dropped, no subsampling
(removing words would change the teacher's sentence). The learning rate decays linearly over the
run (word2vec's schedule, to 1e-4·lr; the released code decays to 0), the paper gives only the
initial value. The loss is summed over a batch of centres (the released code sums, over 5 pairs).
"Gradients are clipped at norm 5": the released code clips the total norm of all parameters'
gradients of its 5-pair step, where the clip rarely bites the rows of V'. Batching 64 centres per
step (vectorised, ~100× fewer steps) makes that total norm ~60 early on, so clipping it would
slow V' by the batch size — a coupling the paper never had. By default (``clip_scope: dense``)
the clip applies to the projection U's gradient, the rows of V' keep their per-occurrence SGD
updates (word2vec-style); ``clip_scope: all`` is the released call applied to the whole batch.

``aggregation`` (Figures 4 and 5 are sweeps over ``window`` 1–8 and over this):

- ``attention`` (default): Eqs. 13–15;
- ``mean``: "without attention aggregation, our model treats all context words equally": a_j =
  1/|context| in Eq. 14 (the Figure 5 ablation);
- ``pairs``: Eq. 11 with negative sampling, one positive term per (centre, context) pair and k
  negatives per pair — plain Skip-gram with a BERT centre.

Initialisation: V' zeros (word2vec, released code), U Xavier-uniform (released code), no bias
(Eq. 10; the released ``nn.Linear`` has one: ``projection_bias``).

What the released code (``ylwangy/bert2vec``) does differently and is *not* reproduced: it
keeps the (centre, centre) self-pair and drops a right-context word for centres past the first
``ws`` positions (a slice-relative index compared with an absolute one), uses a 4-word right
window (``min(i+w, len)`` exclusive), and its attention is a softmax over the mini-batch of
(centre, context) pairs scaled by 1/√300 — not aligned with one centre's window. Here the window
is ±ws without the centre, and the softmax runs over each centre's own context words
(``attention_scale`` multiplies the scores: 1/√dim gives the released scaling). The released code
feeds BERT the sentence with out-of-vocabulary words deleted; here the teacher sees the corpus
sentence and OOV words leave the window afterwards (word2vec's order).

After training, :func:`attention_weights` gives the a_j of every centre of a sentence from a
saved model (Figure 7: "football is the most popular sport in brazil").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numba import njit, prange

from staticvec.errors import StaticvecError
from staticvec.files import torch_save
from staticvec.train.kernels import (
    as_numpy, gather_rows, lr_at, matmul_nt, matmul_tn, row_gradients, sigmoid, softplus, value,
)
from staticvec.train.loop import LoopSettings
from staticvec.train.negative_sampling import (
    UnigramSampler, centre_window_batches, context_windows, keep_probabilities, log_sigmoid, prepare_centre_windows,
)
from staticvec.train.optimizer import fast_update, learning_rate
from staticvec.train.student import Batch, Student, StudentParams

AGGREGATIONS = ("attention", "mean", "pairs")


@dataclass
class SkipGramParams(StudentParams):
    """Hyper-parameters shared by BERT + Skip-gram and Context-to-Vec (paper values as defaults)."""

    dim: int = 300
    window: int = 5
    negatives: int = 5
    negative_power: float = 0.75
    lr: float = 0.025
    lr_decay: str = "linear"  # word2vec's linear decay | none
    min_lr_fraction: float = 1e-4  # word2vec.c; the released code decays to 0
    clip_norm: float | None = 5.0
    clip_scope: str = "dense"  # dense: the projection U only | all: every gradient of a step (released clip_grad_norm_)
    optimizer: str = "sgd"  # sgd | adam (lazy on the table)
    batch_centres: int = 64
    loss_reduction: str = "sum"  # sum over the batch (released code) | mean
    epochs: int = 1
    subsample_t: float = 0.0  # paper: no subsampling
    subsample_formula: str = "mikolov"  # Eq. 12 of Wang et al. (only with subsample_t > 0)
    context_init: str = "zeros"  # zeros (word2vec, released) | uniform (±0.5/dim)
    projection_bias: bool = False  # released nn.Linear: true
    shuffle: bool = True
    min_count: int = 5
    max_vocab: int | None = None
    # fast: hand-written gradients in numba kernels on CPU (the same batches, draws and update rule:
    # equal to autograd up to float rounding) | autograd: the torch reference (and the CUDA path)
    engine: str = "fast"

    def __post_init__(self):
        if self.engine not in ("fast", "autograd"):
            raise StaticvecError(f"{self.method_name()} engine {self.engine!r}: expected fast or autograd")
        if self.window < 1 or self.dim < 1 or self.batch_centres < 1 or self.epochs < 1 or self.negatives < 0:
            raise StaticvecError(f"{self.method_name()}: window, dim, batch_centres, epochs >= 1 and negatives >= 0 are required")
        if self.loss_reduction not in ("sum", "mean"):
            raise StaticvecError(f"{self.method_name()} loss_reduction {self.loss_reduction!r}: expected sum or mean")
        if self.clip_scope not in ("all", "dense"):
            raise StaticvecError(f"{self.method_name()} clip_scope {self.clip_scope!r}: expected all or dense")
        if self.context_init not in ("zeros", "uniform"):
            raise StaticvecError(f"{self.method_name()} context_init {self.context_init!r}: expected zeros or uniform")

    @classmethod
    def method_name(cls) -> str:
        return "bert_sg"

    def loop_settings(self) -> LoopSettings:
        return LoopSettings(epochs=self.epochs, lr=self.lr, lr_decay=self.lr_decay, min_lr_fraction=self.min_lr_fraction,
                            optimizer=self.optimizer, clip_norm=self.clip_norm, clip_scope=self.clip_scope,
                            engine=self.engine)


# The released code's values of the options where it differs from the paper (recorded beside each run).
RELEASED_CODE = {"lr": 0.08, "min_lr_fraction": 0.0, "attention_scale": 300 ** -0.5, "projection_bias": True,
                 "clip_scope": "all", "batch_centres": "5 pairs"}


@dataclass
class BertSGParams(SkipGramParams):
    aggregation: str = "attention"  # attention (Eqs. 13-15) | mean (Fig. 5 "without attention") | pairs (Eq. 11)
    attention_scale: float = 1.0  # score multiplier in the softmax; released code 1/sqrt(300)

    def __post_init__(self):
        super().__post_init__()
        if self.aggregation not in AGGREGATIONS:
            raise StaticvecError(f"bert_sg aggregation {self.aggregation!r}: expected one of {', '.join(AGGREGATIONS)}")


class ContextualSkipGram(Student):
    """The static context table V' and the projection U of a contextual centre (shared by C2V)."""

    output_table = "ctx"
    output_description = "V' / u' (static context table)"

    def __init__(self, counts, teacher_dim: int, params: SkipGramParams, device: str = "cpu", seed: int = 0):
        import torch

        self.params = params
        self.device = device
        self.teacher_dim = teacher_dim
        g = torch.Generator().manual_seed(seed)
        V = torch.zeros(len(counts), params.dim)
        if params.context_init == "uniform":
            V = (torch.rand(len(counts), params.dim, generator=g) * 2 - 1) * (0.5 / params.dim)
        self.tables = {"ctx": V.to(device)}
        self.dense = {"U": self._xavier(params.dim, teacher_dim, g)}
        if params.projection_bias:
            self.dense["b"] = torch.zeros(params.dim, device=device, requires_grad=True)
        self.sampler = UnigramSampler(counts, params.negative_power)
        self.keep = keep_probabilities(counts, params.subsample_t, params.subsample_formula) if params.subsample_t > 0 else None
        self.feature_keys = self.feature_keys_for(params)

    def _xavier(self, rows: int, cols: int, g):
        import torch

        bound = (6.0 / (rows + cols)) ** 0.5
        return ((torch.rand(rows, cols, generator=g) * 2 - 1) * bound).to(self.device).requires_grad_(True)

    def project(self, o, dense: dict):
        """u = U o (+ b)."""
        u = o @ dense["U"].T
        return u + dense["b"] if "b" in dense else u

    def reduce(self, per_example):
        return per_example.sum() if self.params.loss_reduction == "sum" else per_example.mean()

    # ------------------------------------------------ fast engine

    @property
    def supports_fast(self) -> bool:
        return self.params.engine == "fast" and self.device == "cpu"

    def _window_options(self) -> dict:  # pragma: no cover - per method
        raise NotImplementedError

    def prepare_block(self, block: dict, rng: np.random.Generator):
        p = self.params
        return prepare_centre_windows(block, rng, window=p.window, batch_size=p.batch_centres, negatives=p.negatives,
                                      sampler=self.sampler, keep=self.keep, shuffle=p.shuffle, **self._window_options())

    def run_block(self, prep, optimizer, settings, words_done: int, total: int):
        """The block's steps (the batches of :meth:`batches`): per step loss, examples, words."""
        if prep is None:
            return [], [], []
        import numba

        threads = numba.get_num_threads()
        U, V = as_numpy(self.dense["U"]), as_numpy(self.tables["ctx"])
        bias = as_numpy(self.dense["b"]) if "b" in self.dense else None
        bounds = prep["bounds"]
        if self._fused_sgd(settings):  # the defaults: one kernel call per block
            losses = self._run_fused(prep, settings, words_done, total, U, V, bias, threads)
            return losses, prep["examples"].tolist(), prep["words"].tolist()
        losses = []
        done = words_done
        for k in range(len(bounds) - 1):
            lo, hi = int(bounds[k]), int(bounds[k + 1])
            lr = learning_rate(settings.lr, settings.lr_decay, done, total, settings.min_lr_fraction)
            red = 1.0 if self.params.loss_reduction == "sum" else 1.0 / (hi - lo)
            loss, rows, grads, dense = self._fast_step(prep, lo, hi, U, V, bias, red, threads)
            fast_update(self, optimizer, settings, lr, "ctx", rows, grads, dense)
            losses.append(loss)
            done += int(prep["words"][k])
        return losses, prep["examples"].tolist(), prep["words"].tolist()

    def _fused_sgd(self, settings) -> bool:
        """Whether the block kernel runs the steps (BERT + Skip-gram, SGD, clip on U only: the defaults)."""
        return False

    def _skipgram_step(self, X, lo, hi, prep, U, V, bias, red, threads, mode, scale):
        """u = U X (+ b), skipgram_scores' gradients, and the dense ones."""
        u = matmul_nt(X, U, threads)
        if bias is not None:
            u += bias
        B = hi - lo
        ctx, neg = prep["ctx"][lo:hi], prep["neg"][lo:hi]
        S = ctx.shape[1] + neg.shape[1]
        loss, du = np.empty(B), np.empty_like(u)
        slot_row, slot_coef, slot_vec = np.empty(B * S, np.int64), np.empty(B * S, np.float32), np.empty(B * S, np.int64)
        sg_grads(u, V, ctx, neg, mode, scale, red, loss, du, slot_row, slot_coef, slot_vec)
        rows, grads = row_gradients(slot_row, slot_coef, slot_vec, u)
        dense = {"U": matmul_tn(du, X, threads)}
        if bias is not None:
            dense["b"] = du.sum(0)
        return float(loss.sum() * red), rows, grads, dense

    def save_model(self, path, words, teacher: dict | None = None) -> None:
        """The trained parameters (U, bias, W2…, V') with the words: what attention_weights needs."""

        payload = {"method": self.params.method_name(), "params": asdict(self.params), "words": list(words),
                   "dense": {k: v.detach().cpu() for k, v in self.dense.items()},
                   "ctx": self.tables["ctx"].detach().cpu(), "teacher": teacher}
        torch_save(payload, path)  # the same bytes for the same payload (staticvec.files.torch_save)


# ---------------------------------------------------------------- the fast engine (CPU)
#
# Hand-written forward and backward of skipgram_scores / c2v_losses per centre, in numba kernels
# (a centre per thread: the result does not depend on the thread count). Every table row's
# gradient is a scalar times one vector (u_i, or V_context for Context-to-Vec's static target), so
# a step's sparse gradient is a list of slots (row, coefficient, vector index), summed per unique
# row by kernels.row_gradients; the projection's gradient is one matrix product.

@njit(cache=True, fastmath=True)
def _sg_centre(i, u, V, ctx, neg, mode, scale, red, loss, du, slot_row, slot_coef, slot_vec):
    """One centre of sg_grads: its loss, dL/du_i and its slots (i * S ...)."""
    d = u.shape[1]
    W, N = ctx.shape[1], neg.shape[1]
    S = W + N
    gi = du[i]
    gi[:] = 0.0
    s = np.zeros(W, np.float32)
    n_valid = 0
    mx = -np.inf
    li = 0.0
    for j in range(W):
        c = ctx[i, j]
        slot_row[i * S + j] = c
        slot_vec[i * S + j] = i
        slot_coef[i * S + j] = 0.0
        if c < 0:
            continue
        acc = np.float32(0.0)
        for e in range(d):
            acc += V[c, e] * u[i, e]
        s[j] = acc
        n_valid += 1
        mx = max(mx, scale * acc)
    if mode == 2:
        for j in range(W):
            c = ctx[i, j]
            if c < 0:
                continue
            li += softplus(-s[j])
            g = np.float32((sigmoid(s[j]) - 1.0) * red)
            slot_coef[i * S + j] = g
            for e in range(d):
                gi[e] += g * V[c, e]
    else:
        a = np.zeros(W, np.float32)
        total = 0.0
        for j in range(W):
            if ctx[i, j] >= 0:
                a[j] = np.exp(scale * s[j] - mx) if mode == 0 else 1.0
                total += a[j]
        v = np.zeros(d, np.float32)
        for j in range(W):
            c = ctx[i, j]
            if c >= 0:
                a[j] = a[j] / total
                for e in range(d):
                    v[e] += a[j] * V[c, e]
        pscore = np.float32(0.0)
        for e in range(d):
            pscore += v[e] * u[i, e]
        li += softplus(-pscore)
        g = sigmoid(pscore) - 1.0
        gr = np.float32(g * red)
        for e in range(d):
            gi[e] += gr * v[e]
        sbar = 0.0
        if mode == 0:
            for j in range(W):
                if ctx[i, j] >= 0:
                    sbar += a[j] * g * s[j]
        for j in range(W):
            c = ctx[i, j]
            if c < 0:
                continue
            ds = a[j] * (g * s[j] - sbar) * scale if mode == 0 else 0.0
            slot_coef[i * S + j] = np.float32((g * a[j] + ds) * red)
            if ds != 0.0:
                dsr = np.float32(ds * red)
                for e in range(d):
                    gi[e] += dsr * V[c, e]
    for m in range(N):
        r = neg[i, m]
        k = i * S + W + m
        slot_row[k] = r
        slot_vec[k] = i
        slot_coef[k] = 0.0
        if r < 0:
            continue
        t = np.float32(0.0)
        for e in range(d):
            t += V[r, e] * u[i, e]
        li += softplus(t)
        g = np.float32(sigmoid(t) * red)
        slot_coef[k] = g
        for e in range(d):
            gi[e] += g * V[r, e]
    loss[i] = li


@njit(cache=True, parallel=True, fastmath=True)
def sg_grads(u, V, ctx, neg, mode, scale, red, loss, du, slot_row, slot_coef, slot_vec):
    """Loss per centre, dL/du and the row slots of skipgram_scores (mode 0 attention, 1 mean, 2 pairs).

    ``red`` scales the gradients (1: sum over the batch, 1/B: mean); ``neg``: -1 marks padding.
    """
    B, d = u.shape
    for i in prange(B):
        _sg_centre(i, u, V, ctx, neg, mode, scale, red, loss, du, slot_row, slot_coef, slot_vec)


@njit(cache=True, parallel=True, fastmath=True)
def sg_block_sgd(vec, xpos, ctx, neg, bounds, words, U, V, bias, has_bias, mode, scale, mean_loss, clip_norm, lr0,
                 decay_linear, min_fraction, done, total, nthreads, losses):
    """A whole block of BERT + Skip-gram steps with SGD and the clip on the dense gradients only (the
    defaults), two fork-joins per step: (1) each thread projects its share of the centres (one
    sgemm), then computes their losses, dL/du and row slots; (2) each thread computes its rows of
    ∂L/∂U (one sgemm) and applies the SGD updates of the table rows it owns (row id mod threads),
    in slot order, so a row's sequence of updates does not depend on the thread count. Then the
    clip and U's update. The same steps as row_gradients + update_rows (a row's summed gradient
    applied at once) up to float rounding."""
    d, D = U.shape
    W, N = ctx.shape[1], neg.shape[1]
    S = W + N
    n_steps = len(bounds) - 1
    bmax = 1
    for k in range(n_steps):
        bmax = max(bmax, bounds[k + 1] - bounds[k])
    X = np.empty((bmax, D), np.float32)
    u = np.empty((bmax, d), np.float32)
    du = np.empty((bmax, d), np.float32)
    loss = np.empty(bmax)
    slot_row = np.empty(bmax * S, np.int64)
    slot_coef = np.empty(bmax * S, np.float32)
    slot_vec = np.empty(bmax * S, np.int64)
    dU = np.empty((d, D), np.float32)
    Ut = U.T
    for k in range(n_steps):
        lo, hi = bounds[k], bounds[k + 1]
        B = hi - lo
        lr = lr_at(lr0, decay_linear, min_fraction, done, total)
        red = 1.0 / B if mean_loss else 1.0
        chunk = (B + nthreads - 1) // nthreads
        for t in prange(nthreads):
            a, z = t * chunk, min(B, (t + 1) * chunk)
            if z > a:
                for i in range(a, z):
                    p = xpos[lo + i]
                    for e in range(D):
                        X[i, e] = value(vec[p, e])
                u[a:z] = np.dot(X[a:z], Ut)
                if has_bias:
                    for i in range(a, z):
                        for e in range(d):
                            u[i, e] += bias[e]
                for i in range(a, z):
                    _sg_centre(i, u, V, ctx[lo:hi], neg[lo:hi], mode, scale, red, loss, du, slot_row, slot_coef,
                               slot_vec)
        rchunk = (d + nthreads - 1) // nthreads
        for t in prange(nthreads):
            r0, r1 = t * rchunk, min(d, (t + 1) * rchunk)
            if r1 > r0:
                dU[r0:r1] = np.dot(np.ascontiguousarray(du[:B, r0:r1].T), X[:B])
            for q in range(B * S):
                r = slot_row[q]
                if r < 0 or r % nthreads != t:
                    continue
                c = np.float32(-lr * slot_coef[q])
                j = slot_vec[q]
                for e in range(d):
                    V[r, e] += c * u[j, e]
        total_sq = 0.0
        for r in range(d):
            for e in range(D):
                total_sq += dU[r, e] * dU[r, e]
        db_sq = 0.0
        if has_bias:
            for e in range(d):
                g = 0.0
                for i in range(B):
                    g += du[i, e]
                db_sq += g * g
        sc = 1.0
        if clip_norm > 0:
            f = clip_norm / (np.sqrt(total_sq + db_sq) + 1e-6)
            if f < 1:
                sc = f
        a = np.float32(-lr * sc)
        for r in prange(d):
            for e in range(D):
                U[r, e] += a * dU[r, e]
            if has_bias:
                g = np.float32(0.0)
                for i in range(B):
                    g += du[i, r]
                bias[r] += a * g
        lsum = 0.0
        for i in range(B):
            lsum += loss[i]
        losses[k] = lsum * red
        done += words[k]


@njit(cache=True, parallel=True)
def context_means(vec, cpos, out):
    """out[i] = mean of vec[cpos[i, j]] over the valid (>= 0) positions (Context-to-Vec's o_ctx)."""
    B, D = out.shape
    for i in prange(B):
        out[i, :] = 0.0
        n = 0
        for j in range(cpos.shape[1]):
            p = cpos[i, j]
            if p >= 0:
                n += 1
                for e in range(D):
                    out[i, e] += value(vec[p, e])
        if n > 0:
            out[i, :] /= np.float32(n)


def skipgram_scores(u, rows, mask, window: int, negatives: int, aggregation: str, scale: float = 1.0,
                    negatives_per_pair: bool = False):
    """Per-centre loss of Eqs. 13–15 (or mean / pairs) from the centre vectors u (B, d) and rows (B, ·, d).

    Returns ``(loss per centre, attention weights or None)``.
    """
    import torch

    W = 2 * window
    Vc, Vn = rows[:, :W], rows[:, W:]
    uu = u.unsqueeze(1)  # (products and sums beat einsum's batched mat-vec on CPU for these shapes)
    s = (Vc * uu).sum(-1)
    weights = None
    if aggregation == "pairs":
        pos = -(log_sigmoid(s) * mask).sum(1)
    else:
        if aggregation == "attention":
            weights = torch.softmax((s * scale).masked_fill(~mask, float("-inf")), dim=1)
        else:
            weights = mask.float() / mask.sum(1, keepdim=True).clamp(min=1)
        v = (weights.unsqueeze(-1) * Vc).sum(1)
        pos = -log_sigmoid((v * u).sum(-1))
    neg_scores = (Vn[:, : (W * negatives if negatives_per_pair else negatives)] * uu).sum(-1)
    neg_terms = -log_sigmoid(-neg_scores)
    if negatives_per_pair:  # padded pairs have zero rows: their terms are log 2, masked out here
        neg_terms = neg_terms.reshape(len(u), W, negatives) * mask.unsqueeze(-1)
    return pos + neg_terms.reshape(len(u), -1).sum(1), weights


class BertSkipGram(ContextualSkipGram):
    params_class = BertSGParams

    def __init__(self, counts, teacher_dim: int, params: BertSGParams, device: str = "cpu", seed: int = 0):
        super().__init__(counts, teacher_dim, params, device, seed)

    def batches(self, block: dict, rng: np.random.Generator):
        p = self.params
        return centre_window_batches(block, rng, window=p.window, batch_size=p.batch_centres, negatives=p.negatives,
                                     sampler=self.sampler, keep=self.keep, shuffle=p.shuffle,
                                     negatives_per_pair=p.aggregation == "pairs", device=self.device)

    def _window_options(self) -> dict:
        return {"negatives_per_pair": self.params.aggregation == "pairs"}

    def _fused_sgd(self, settings) -> bool:
        return settings.optimizer == "sgd" and (not settings.clip_norm or settings.clip_scope == "dense")

    def _run_fused(self, prep, settings, words_done, total, U, V, bias, threads):
        p = self.params
        bounds = prep["bounds"]
        losses = np.empty(len(bounds) - 1)
        sg_block_sgd(prep["vec"], prep["xpos"], prep["ctx"], prep["neg"], bounds, prep["words"], U, V,
                     bias if bias is not None else np.zeros(1, np.float32), bias is not None,
                     AGGREGATIONS.index(p.aggregation), p.attention_scale, p.loss_reduction == "mean",
                     float(settings.clip_norm or 0.0), settings.lr, int(settings.lr_decay == "linear"),
                     settings.min_lr_fraction, float(words_done), float(total), threads, losses)
        return losses.tolist()

    def _fast_step(self, prep, lo, hi, U, V, bias, red, threads):
        p = self.params
        X = np.empty((hi - lo, U.shape[1]), np.float32)
        gather_rows(prep["vec"], prep["xpos"][lo:hi], X)
        return self._skipgram_step(X, lo, hi, prep, U, V, bias, red, threads, AGGREGATIONS.index(p.aggregation),
                                   p.attention_scale)

    def loss(self, batch: Batch, rows: dict, dense: dict):
        p = self.params
        u = self.project(batch.data["o"], dense)
        per, _ = skipgram_scores(u, rows["ctx"], batch.data["mask"], p.window, p.negatives, p.aggregation,
                                 p.attention_scale, negatives_per_pair=p.aggregation == "pairs")
        return self.reduce(per)


# ---------------------------------------------------------------- Figure 7


def load_model(path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)


def attention_weights(model: dict, words: list[str], word_vectors: np.ndarray, word_ids: np.ndarray | None = None) -> dict:
    """a_j (Eq. 13) of every centre of one sentence, from a saved BERT + Skip-gram model.

    ``word_vectors`` are the teacher's last-layer vectors of the sentence's words (one teacher pass
    of the sentence). Out-of-vocabulary words are dropped before windowing, as in training.
    Returns the kept words and an n × n matrix (row: centre, column: context word; None outside
    the window or on the diagonal).
    """
    import torch

    index = {w: i for i, w in enumerate(model["words"])}
    ids = np.array([index.get(w, -1) for w in words]) if word_ids is None else np.asarray(word_ids)
    keep = np.flatnonzero(ids >= 0)
    window = int(model["params"]["window"])
    scale = float(model["params"].get("attention_scale", 1.0))
    win = context_windows(np.zeros(len(keep), dtype=np.int64), window)
    mask = torch.as_tensor(win >= 0)
    with torch.no_grad():
        o = torch.as_tensor(np.asarray(word_vectors)[keep], dtype=torch.float32)
        u = o @ model["dense"]["U"].T
        if "b" in model["dense"]:
            u = u + model["dense"]["b"]
        V = model["ctx"][torch.as_tensor(ids[keep])]
        s = torch.einsum("bjd,bd->bj", V[torch.as_tensor(np.maximum(win, 0))], u) * scale
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=1).numpy()
    n = len(keep)
    matrix = [[None] * n for _ in range(n)]
    for i in range(n):  # n ≤ a sentence: this loop only formats the output
        for col, j in enumerate(win[i]):
            if j >= 0:
                matrix[i][j] = float(a[i, col])
    return {"words": [words[k] for k in keep], "dropped": [words[k] for k in np.flatnonzero(ids < 0)],
            "window": window, "weights": matrix}


def teacher_word_vectors(teacher, words: list[str], vocab=None) -> tuple[np.ndarray, np.ndarray]:
    """The teacher's last-layer word vectors of one sentence, through the one extraction path."""
    from staticvec.teacher.features import FeatureExtractor, FeatureSpec, Part

    spec = FeatureSpec(context="sentence", layers=(-1,), vector_dtype="float32")
    extractor = FeatureExtractor(teacher, spec, vocab)
    arrays = extractor.extract(Part(0, sentences=[list(words)], records=[0], paragraphs=[0]))
    return arrays[f"word_vectors.{extractor.layers[0]}"], arrays["word_ids"]
