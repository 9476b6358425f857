"""Context-to-Vec (Zheng et al., ACL 2022): Skip-gram with a contextual centre and the teacher's context.

Reading of the paper (§3.1–3.3, Eqs. 1 and 4–8; the PDF text mangles them)::

    u_i       = W_o o_i                                                   (1)  o_i: teacher vector of the centre
    V_context = λ1 W1 o_i + λ2 W2 φ( (1/2ws') Σ_{1≤|k|≤ws'} o_{i+k} )     (4)  "tied contextualized attention"
    L1 = −Σ log σ( (Σ_{1≤|j|≤ws} u'_{i+j})ᵀ u_i )                          (5)  semantic loss
    L2 = −Σ log σ( V_contextᵀ u_i )                                         (6)  contextualized loss
    L3 = −Σ Σ_{m=1..k} log σ( −u'_{neg_m}ᵀ u_i ),  neg ~ P(w)               (7)  negative loss
    L  = η1 L1 + η2 L2 + η3 L3                                             (8)

u' (the static table of the context words) is the output embedding. W2 is *tied*: one matrix for
every context word, so the mean of the W2-projected context vectors is W2 applied to their mean
(the paper's reduction). "In practice λ1 = λ2 (here ``lam``), the u_i of Eq. 1 can be directly used
as V_center" (i.e. W1 = W_o: ``tie_w1``, default true), "ws' = ws = 5". φ is "an optional
nonlinear function" (``phi``: identity by default, tanh as an option). The context words are the
centre's in-vocabulary neighbours within ±ws (those of the window that exist: at a sentence edge
the mean is over fewer than 2ws' words, as the released code's mean).

Choices where the text is ambiguous, each an option:

- Eq. 7 prints ``+ log σ(u'_negᵀ u_i)``, which is unbounded below when minimised; the standard
  negative-sampling term ``−log σ(−u'_negᵀ u_i)`` is used (same direction, bounded).
- Eq. 5 sums the context vectors (``semantic_context: sum``); the text mentions "the inner product
  of the normalized vectors": ``mean`` uses their mean instead.
- Eq. 6 scores V_context against the contextual centre u_i (``contextualized_target: centre``);
  Heuristic 2 says the context words' contextual vectors should match "the static embedding of the
  center word": ``static`` scores it against u'_{w_i}, the centre word's row of the output table.
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

from staticvec.errors import StaticvecError
from staticvec.train.bert_skipgram import ContextualSkipGram, SkipGramParams, skipgram_scores
from staticvec.train.negative_sampling import Batch, centre_window_batches, log_sigmoid


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
    contextualized_target: str = "centre"  # Eq. 6: u_i (centre) | u'_{w_i} (static, Heuristic 2)
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


class ContextToVec(ContextualSkipGram):
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
