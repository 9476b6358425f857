"""Context-to-Vec (Zheng et al., ACL 2022): Skip-gram with a contextual centre and the teacher's context.

Reading of the paper (§3.1–3.3, Eqs. 1 and 4–8; the PDF text mangles them)::

    u_i       = W_o o_i                                                   (1)  o_i: teacher vector of the centre
    V_context = λ1 W1 o_i + λ2 W2 φ( (1/2ws') Σ_{1≤|k|≤ws'} o_{i+k} )     (4)  "tied contextualized attention"
    L1 = −Σ log σ( (Σ_{1≤|j|≤ws} u'_{i+j})ᵀ u_i )                          (5)  semantic loss
    L2 = −Σ log σ( V_contextᵀ u'_{w_i} )                                    (6)  contextualized loss (read: see below)
    L3 = −Σ Σ_{m=1..k} log σ( −u'_{neg_m}ᵀ u_i ),  neg ~ P(w)               (7)  negative loss
    L  = η1 L1 + η2 L2 + η3 L3                                             (8)

u' (the static table of the context words) is the output embedding. W2 is *tied*: one matrix for
every context word, so the mean of the W2-projected context vectors is W2 applied to their mean
(the paper's reduction). §3.2: "In practice, to reduce the complexity, the weight parameter λ1 and
λ2 are the same [here ``lam``]; the u_i in Eq.1 can be directly used as V_context; the value of w's
is the same as that of ws". Taken literally (V_context = u_i), L2 would be −log σ(u_iᵀu_i), which
ignores the context words that Eq. 4 builds V_context from; it is read as the *residual term* of
Eq. 4, V_center = W1 o_i, being u_i (W1 = W_o: ``tie_w1``, default true). φ is "an optional
nonlinear function" (``phi``: identity by default, tanh as an option). The context words are the
centre's in-vocabulary neighbours within ±ws (those of the window that exist: at a sentence edge
the mean is over fewer than 2ws' words, as the released code's mean).

Choices where the text is ambiguous, each an option:

- Eq. 7 prints ``+ log σ(u'_negᵀ u_i)``, which is unbounded below when minimised; the standard
  negative-sampling term ``−log σ(−u'_negᵀ u_i)`` is used (same direction, bounded).
- Eq. 5 sums the context vectors (``semantic_context: sum``); the text mentions "the inner product
  of the normalized vectors": ``mean`` uses their mean instead.
- Eq. 6 prints V_contextᵀ u_i. With W1 tied to W_o that term involves only W_o and W2 (W2 is used
  nowhere else), so L2 would never reach the output table u' and "Context-to-Vec" would be
  BERT + Skip-gram with a summed-context term. Heuristic 2, which L2 implements ("the contextualized
  embeddings for the context words ... further enhance the static embedding"), says the context
  words' contextual vectors should match "the static embedding of the center word": the default
  (``contextualized_target: static``) scores V_context against u'_{w_i}, the centre word's row of
  the output table, so every loss shapes u'; ``centre`` is Eq. 6 as printed.
- η1 = η2 = η3 = 1 and λ = 0.5 (the paper gives no values; the released code's 0.5/0.5 mix).
  The other hyper-parameters are BERT + Skip-gram's (the paper's primary baseline, its code's
  ancestor): window 5, 5 negatives ∝ count^0.75, SGD lr 0.025 decaying linearly, clip norm 5.

``variant: released`` is the released code (``binbinjiang/Context2Vector``, a fork of bert2vec):
no attention and no separate losses — the centre is ``u_i = W (0.5·o_i + 0.5·mean_k o_{i+k})``
(``released_mix`` = 0.5) and the loss is per-pair Skip-gram with k negatives per pair. Its slips
are not reproduced: its right window has 4 words (an exclusive ``min(i+w, len)``), and bert2vec's
self-pair bug is in its ancestry; here the window is ±ws without the centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from staticvec.errors import StaticvecError
from staticvec.train.bert_skipgram import ContextualSkipGram, SkipGramParams, context_means, skipgram_scores
from staticvec.train.kernels import (
    as_numpy, gather_rows, lr_at, matmul_nt, matmul_tn, row_gradients, sigmoid, softplus, value,
)
from staticvec.train.negative_sampling import centre_window_batches, log_sigmoid
from staticvec.train.student import Batch


# The released code's values of the options where it differs from the paper (recorded beside each run).
RELEASED_CODE = {"variant": "released", "lr": 0.08, "min_lr_fraction": 0.0, "projection_bias": True,
                 "clip_scope": "all", "batch_centres": "1000 pairs"}


@dataclass
class C2VParams(SkipGramParams):
    variant: str = "paper"  # paper (Eqs. 4-8) | released (0.5·o_i + 0.5·mean context, per-pair Skip-gram)
    eta1: float = 1.0
    eta2: float = 1.0
    eta3: float = 1.0
    lam: float = 0.5  # λ1 = λ2
    tie_w1: bool = True  # V_center = u_i (W1 = W_o)
    phi: str = "identity"  # identity | tanh
    semantic_context: str = "sum"  # Eq. 5: sum | mean of the context vectors
    contextualized_target: str = "static"  # Eq. 6 vs u'_{w_i} (Heuristic 2: L2 reaches u') | centre: u_i as printed
    released_mix: float = 0.5  # released variant: weight of o_i (1 - mix for the context mean)

    def __post_init__(self):
        super().__post_init__()
        checks = {"variant": ("paper", "released"), "phi": ("identity", "tanh"), "semantic_context": ("sum", "mean"),
                  "contextualized_target": ("centre", "static")}
        for key, allowed in checks.items():
            if getattr(self, key) not in allowed:
                raise StaticvecError(f"c2v {key} {getattr(self, key)!r}: expected one of {', '.join(allowed)}")

    @classmethod
    def method_name(cls) -> str:
        return "c2v"


def c2v_losses(u, rows, mask, o, o_ctx, dense: dict, p: C2VParams):
    """L1, L2, L3 per centre (Eqs. 5–7) from u = W_o o (B, d'), the gathered rows and the teacher vectors."""
    import torch

    W = 2 * p.window
    Vc = rows[:, :W]  # padded slots are zero vectors: they add nothing to the sum
    ctx = Vc.sum(1)
    if p.semantic_context == "mean":
        ctx = ctx / mask.sum(1, keepdim=True).clamp(min=1)
    L1 = -log_sigmoid((ctx * u).sum(-1))
    centre_part = u if p.tie_w1 else o @ dense["W1"].T
    phi = torch.tanh if p.phi == "tanh" else (lambda x: x)
    v_context = p.lam * centre_part + p.lam * (phi(o_ctx) @ dense["W2"].T)
    target = u if p.contextualized_target == "centre" else rows[:, -1]
    L2 = -log_sigmoid((v_context * target).sum(-1))
    Vn = rows[:, W:W + p.negatives]
    L3 = -log_sigmoid(-(Vn * u.unsqueeze(1)).sum(-1)).sum(1)
    return L1, L2, L3


@njit(cache=True, fastmath=True)
def _c2v_centre(i, boff, u, y, z, V, ctx, neg, cid, sem_mean, static, tied, lam, eta1, eta2, eta3, red, loss, du, dz,
                vecs, slot_row, slot_coef, slot_vec):
    """One centre of c2v_grads (``boff``: where the V_context slot vectors start in ``vecs``)."""
    d = u.shape[1]
    W, N = ctx.shape[1], neg.shape[1]
    S = W + N + 1
    gi = du[i]
    gi[:] = 0.0
    vecs[i, :] = u[i]
    csum = np.zeros(d, np.float32)
    nv = 0
    for j in range(W):
        c = ctx[i, j]
        slot_row[i * S + j] = c
        slot_vec[i * S + j] = i
        slot_coef[i * S + j] = 0.0
        if c >= 0:
            nv += 1
            for e in range(d):
                csum[e] += V[c, e]
    f = 1.0 / max(nv, 1) if sem_mean else 1.0
    s1 = np.float32(0.0)
    for e in range(d):
        csum[e] *= np.float32(f)
        s1 += csum[e] * u[i, e]
    g1 = (sigmoid(s1) - 1.0) * eta1 * red
    for j in range(W):
        if ctx[i, j] >= 0:
            slot_coef[i * S + j] = np.float32(g1 * f)
    for e in range(d):
        gi[e] += np.float32(g1) * csum[e]
    # L2: V_context = λ y + λ z against the centre u or the centre word's row
    vctx = vecs[boff + i]
    for e in range(d):
        vctx[e] = np.float32(lam) * (y[i, e] + z[i, e])
    k = i * S + W + N
    slot_row[k] = -1
    slot_vec[k] = boff + i
    slot_coef[k] = 0.0
    s2 = np.float32(0.0)
    c = cid[i]
    if static:
        for e in range(d):
            s2 += vctx[e] * V[c, e]
    else:
        for e in range(d):
            s2 += vctx[e] * u[i, e]
    g2 = (sigmoid(s2) - 1.0) * eta2 * red
    gl = np.float32(g2 * lam)
    if static:
        slot_row[k] = c
        slot_coef[k] = np.float32(g2)
        for e in range(d):
            dz[i, e] = gl * V[c, e]
    else:
        for e in range(d):
            dz[i, e] = gl * u[i, e]
            gi[e] += np.float32(g2) * vctx[e]
    if tied:
        for e in range(d):
            gi[e] += dz[i, e]
    # L3: negatives
    l3 = 0.0
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
        l3 += softplus(t)
        g = np.float32(sigmoid(t) * eta3 * red)
        slot_coef[k] = g
        for e in range(d):
            gi[e] += g * V[r, e]
    loss[i] = eta1 * softplus(-s1) + eta2 * softplus(-s2) + eta3 * l3


@njit(cache=True, parallel=True, fastmath=True)
def c2v_grads(u, y, z, V, ctx, neg, cid, sem_mean, static, tied, lam, eta1, eta2, eta3, red, loss, du, dz, vecs,
              slot_row, slot_coef, slot_vec):
    """c2v_losses' loss per centre and its gradients, by hand (the fast engine).

    ``u`` = W_o o, ``y`` = the centre part of V_context (u when tied), ``z`` = W2 φ(o_ctx). Writes
    dL/du, dL/dz (= dL/dy: both enter V_context with weight λ) and the row slots; ``vecs`` gets the
    slot vectors (u_i, then V_context_i for the static target's row).
    """
    B, d = u.shape
    for i in prange(B):
        _c2v_centre(i, B, u, y, z, V, ctx, neg, cid, sem_mean, static, tied, lam, eta1, eta2, eta3, red, loss, du, dz,
                    vecs, slot_row, slot_coef, slot_vec)


@njit(cache=True, parallel=True, fastmath=True)
def c2v_block_sgd(vec, xpos, cpos, ctx, neg, cid, bounds, words, U, V, W2, W1, bias, has_bias, tied, tanh, sem_mean,
                  static, lam, eta1, eta2, eta3, mean_loss, clip_norm, lr0, decay_linear, min_fraction, done, total,
                  nthreads, losses):
    """A whole block of Context-to-Vec (paper variant) steps with SGD and the clip on the dense
    gradients only, as bert_skipgram.sg_block_sgd: (1) per thread, its centres' o, o_ctx, u = W_o o,
    z = W2 φ(o_ctx) (and W1 o), their losses, gradients and slots; (2) per thread, its rows of
    ∂L/∂W_o, ∂L/∂W2 (∂L/∂W1) and the SGD updates of the table rows it owns, in slot order; then the
    clip over every dense gradient and their updates."""
    d, D = U.shape
    W, N = ctx.shape[1], neg.shape[1]
    S = W + N + 1
    n_steps = len(bounds) - 1
    bmax = 1
    for k in range(n_steps):
        bmax = max(bmax, bounds[k + 1] - bounds[k])
    Out = np.empty((bmax, D), np.float32)
    X2 = np.empty((bmax, D), np.float32)
    u = np.empty((bmax, d), np.float32)
    z = np.empty((bmax, d), np.float32)
    y = np.empty((bmax, d), np.float32)
    du = np.empty((bmax, d), np.float32)
    dz = np.empty((bmax, d), np.float32)
    vecs = np.empty((2 * bmax, d), np.float32)
    loss = np.empty(bmax)
    slot_row = np.empty(bmax * S, np.int64)
    slot_coef = np.empty(bmax * S, np.float32)
    slot_vec = np.empty(bmax * S, np.int64)
    dU = np.empty((d, D), np.float32)
    dW2 = np.empty((d, D), np.float32)
    dW1 = np.empty((d, D), np.float32) if not tied else np.empty((1, D), np.float32)
    for k in range(n_steps):
        lo, hi = bounds[k], bounds[k + 1]
        B = hi - lo
        lr = lr_at(lr0, decay_linear, min_fraction, done, total)
        red = 1.0 / B if mean_loss else 1.0
        chunk = (B + nthreads - 1) // nthreads
        for t in prange(nthreads):
            a, b = t * chunk, min(B, (t + 1) * chunk)
            if b > a:
                for i in range(a, b):
                    p = xpos[lo + i]
                    for e in range(D):
                        Out[i, e] = value(vec[p, e])
                        X2[i, e] = 0.0
                    n = 0
                    for j in range(cpos.shape[1]):
                        q = cpos[lo + i, j]
                        if q >= 0:
                            n += 1
                            for e in range(D):
                                X2[i, e] += value(vec[q, e])
                    if n > 0:
                        for e in range(D):
                            X2[i, e] /= np.float32(n)
                    if tanh:
                        for e in range(D):
                            X2[i, e] = np.tanh(X2[i, e])
                u[a:b] = np.dot(Out[a:b], U.T)
                if has_bias:
                    for i in range(a, b):
                        for e in range(d):
                            u[i, e] += bias[e]
                z[a:b] = np.dot(X2[a:b], W2.T)
                if tied:
                    y[a:b] = u[a:b]
                else:
                    y[a:b] = np.dot(Out[a:b], W1.T)
                for i in range(a, b):
                    _c2v_centre(i, bmax, u, y, z, V, ctx[lo:hi], neg[lo:hi], cid[lo:hi], sem_mean, static, tied, lam,
                                eta1, eta2, eta3, red, loss, du, dz, vecs, slot_row, slot_coef, slot_vec)
        rchunk = (d + nthreads - 1) // nthreads
        for t in prange(nthreads):
            r0, r1 = t * rchunk, min(d, (t + 1) * rchunk)
            if r1 > r0:
                dU[r0:r1] = np.dot(np.ascontiguousarray(du[:B, r0:r1].T), Out[:B])
                dW2[r0:r1] = np.dot(np.ascontiguousarray(dz[:B, r0:r1].T), X2[:B])
                if not tied:
                    dW1[r0:r1] = np.dot(np.ascontiguousarray(dz[:B, r0:r1].T), Out[:B])
            for q in range(B * S):
                r = slot_row[q]
                if r < 0 or r % nthreads != t:
                    continue
                c = np.float32(-lr * slot_coef[q])
                j = slot_vec[q]
                for e in range(d):
                    V[r, e] += c * vecs[j, e]
        total_sq = 0.0
        for r in range(d):
            for e in range(D):
                total_sq += dU[r, e] * dU[r, e] + dW2[r, e] * dW2[r, e]
                if not tied:
                    total_sq += dW1[r, e] * dW1[r, e]
        if has_bias:
            for e in range(d):
                g = 0.0
                for i in range(B):
                    g += du[i, e]
                total_sq += g * g
        sc = 1.0
        if clip_norm > 0:
            f = clip_norm / (np.sqrt(total_sq) + 1e-6)
            if f < 1:
                sc = f
        a = np.float32(-lr * sc)
        for r in prange(d):
            for e in range(D):
                U[r, e] += a * dU[r, e]
                W2[r, e] += a * dW2[r, e]
                if not tied:
                    W1[r, e] += a * dW1[r, e]
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


class ContextToVec(ContextualSkipGram):
    params_class = C2VParams

    def __init__(self, counts, teacher_dim: int, params: C2VParams, device: str = "cpu", seed: int = 0):
        import torch

        super().__init__(counts, teacher_dim, params, device, seed)
        if params.variant == "paper":
            g = torch.Generator().manual_seed(seed + 1)
            self.dense["W2"] = self._xavier(params.dim, teacher_dim, g)
            if not params.tie_w1:
                self.dense["W1"] = self._xavier(params.dim, teacher_dim, g)

    def batches(self, block: dict, rng: np.random.Generator):
        p = self.params
        released = p.variant == "released"
        return centre_window_batches(block, rng, window=p.window, batch_size=p.batch_centres, negatives=p.negatives,
                                     sampler=self.sampler, keep=self.keep, shuffle=p.shuffle,
                                     negatives_per_pair=released, context_vectors=True,
                                     centre_rows=not released and p.contextualized_target == "static",
                                     device=self.device)

    def _window_options(self) -> dict:
        return {"negatives_per_pair": self.params.variant == "released"}

    def _fused_sgd(self, settings) -> bool:
        return (self.params.variant == "paper" and settings.optimizer == "sgd"
                and (not settings.clip_norm or settings.clip_scope == "dense"))

    def _run_fused(self, prep, settings, words_done, total, U, V, bias, threads):
        p = self.params
        bounds = prep["bounds"]
        losses = np.empty(len(bounds) - 1)
        W2 = as_numpy(self.dense["W2"])
        W1 = as_numpy(self.dense["W1"]) if "W1" in self.dense else W2
        c2v_block_sgd(prep["vec"], prep["xpos"], prep["cpos"], prep["ctx"], prep["neg"], prep["cid"], bounds,
                      prep["words"], U, V, W2, W1, bias if bias is not None else np.zeros(1, np.float32),
                      bias is not None, p.tie_w1, p.phi == "tanh", p.semantic_context == "mean",
                      p.contextualized_target == "static", p.lam, p.eta1, p.eta2, p.eta3, p.loss_reduction == "mean",
                      float(settings.clip_norm or 0.0), settings.lr, int(settings.lr_decay == "linear"),
                      settings.min_lr_fraction, float(words_done), float(total), threads, losses)
        return losses.tolist()

    def _fast_step(self, prep, lo, hi, U, V, bias, red, threads):
        p = self.params
        o = np.empty((hi - lo, U.shape[1]), np.float32)
        gather_rows(prep["vec"], prep["xpos"][lo:hi], o)
        o_ctx = np.empty_like(o)
        context_means(prep["vec"], prep["cpos"][lo:hi], o_ctx)
        if p.variant == "released":
            X = np.float32(p.released_mix) * o + np.float32(1 - p.released_mix) * o_ctx
            return self._skipgram_step(X, lo, hi, prep, U, V, bias, red, threads, 2, 1.0)
        u = matmul_nt(o, U, threads)
        if bias is not None:
            u += bias
        x2 = np.tanh(o_ctx) if p.phi == "tanh" else o_ctx
        z = matmul_nt(x2, as_numpy(self.dense["W2"]), threads)
        y = u if p.tie_w1 else matmul_nt(o, as_numpy(self.dense["W1"]), threads)
        B, d = u.shape
        ctx, neg = prep["ctx"][lo:hi], prep["neg"][lo:hi]
        S = ctx.shape[1] + neg.shape[1] + 1
        loss, du, dz, vecs = np.empty(B), np.empty_like(u), np.empty_like(u), np.empty((2 * B, d), np.float32)
        slot_row, slot_coef, slot_vec = np.empty(B * S, np.int64), np.empty(B * S, np.float32), np.empty(B * S, np.int64)
        c2v_grads(u, y, z, V, ctx, neg, prep["cid"][lo:hi], p.semantic_context == "mean",
                  p.contextualized_target == "static", p.tie_w1, p.lam, p.eta1, p.eta2, p.eta3, red, loss, du, dz,
                  vecs, slot_row, slot_coef, slot_vec)
        rows, grads = row_gradients(slot_row, slot_coef, slot_vec, vecs)
        dense = {"U": matmul_tn(du, o, threads)}
        if bias is not None:
            dense["b"] = du.sum(0)
        dense["W2"] = matmul_tn(dz, x2, threads)
        if not p.tie_w1:
            dense["W1"] = matmul_tn(dz, o, threads)
        return float(loss.sum() * red), rows, grads, dense

    def loss(self, batch: Batch, rows: dict, dense: dict):
        p = self.params
        o, o_ctx, mask = batch.data["o"], batch.data["o_ctx"], batch.data["mask"]
        if p.variant == "released":
            u = self.project(p.released_mix * o + (1 - p.released_mix) * o_ctx, dense)
            per, _ = skipgram_scores(u, rows["ctx"], mask, p.window, p.negatives, "pairs", negatives_per_pair=True)
            return self.reduce(per)
        u = self.project(o, dense)
        L1, L2, L3 = c2v_losses(u, rows["ctx"], mask, o, o_ctx, dense, p)
        return self.reduce(p.eta1 * L1 + p.eta2 * L2 + p.eta3 * L3)
