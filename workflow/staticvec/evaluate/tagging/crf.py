"""A linear-chain CRF over tag scores: log-likelihood (forward algorithm) and Viterbi decoding.

Same model and parameters as ``pytorch-crf`` (start, end and transition scores; batch first;
a mask of real tokens whose first column is all true), written for speed on CPU: the gold
path score is one vectorised gather instead of a loop over time, and Viterbi back-tracks
with tensors for the whole batch. Only the forward recursion (scaled, in probability space) loops over time, vectorised
over the batch. tests/test_tagging_crf.py checks it against brute-force enumeration and
against pytorch-crf.
"""

from __future__ import annotations

import torch
from torch import nn


class CRF(nn.Module):
    def __init__(self, n_tags: int):
        super().__init__()
        self.n_tags = n_tags
        self.start = nn.Parameter(torch.empty(n_tags).uniform_(-0.1, 0.1))
        self.end = nn.Parameter(torch.empty(n_tags).uniform_(-0.1, 0.1))
        # transitions[i, j]: score of tag j following tag i
        self.transitions = nn.Parameter(torch.empty(n_tags, n_tags).uniform_(-0.1, 0.1))

    def forward(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, reduction: str = "sum") -> torch.Tensor:
        """Log-likelihood of ``tags`` (B, T) given ``emissions`` (B, T, K): 'none', 'sum' or 'mean' over the batch."""
        llh = self.path_score(emissions, tags, mask) - self.log_partition(emissions, mask)
        if reduction == "none":
            return llh
        if reduction == "sum":
            return llh.sum()
        if reduction == "mean":
            return llh.mean()
        raise ValueError(f"unknown reduction {reduction!r}")

    def path_score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Unnormalised score of each sentence's tag path (B,)."""
        maskf = mask.to(emissions.dtype)
        emitted = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # (B, T)
        score = self.start[tags[:, 0]] + (emitted * maskf).sum(1)
        moves = self.transitions[tags[:, :-1], tags[:, 1:]]  # (B, T-1)
        score = score + (moves * maskf[:, 1:]).sum(1)
        last = tags.gather(1, (mask.sum(1, keepdim=True) - 1).clamp(min=0)).squeeze(1)
        return score + self.end[last]

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """log Σ over every tag path of exp(score) (B,): the forward algorithm, scaled.

        The recursion runs in probability space, rescaled at each step (the scaled forward
        algorithm of HMMs): with W = exp(transitions - T*) (T* the largest transition) and
        Ê_t = exp(emissions_t - max emissions_t), both made once for all steps,
        ``q_t = (p_{t-1} @ W) * Ê_t``, ``s_t = Σ q_t``, ``p_t = q_t / s_t``, and
        log Z = log-scale of p_0 + Σ_t (log s_t + T* + max emissions_t) + log Σ p_last exp(end):
        the same quantity as ``logsumexp(alpha[:, :, None] + transitions, dim=1)`` at each step, at
        five tensor operations a step instead of ten (forward and backward about half as many
        kernels; the per-step recursion is the CRF's whole cost). tests/test_tagging_crf.py compares
        values and gradients with the log-space recursion, brute force and pytorch-crf. Past a
        sentence's end its p stays and its s is left out. Each sum has the smallest normal float added
        (a floor), so that a step no transition can reach (exp underflow) gives a finite, not -inf, score.
        """
        tiny = torch.finfo(emissions.dtype).tiny
        top = self.transitions.max().detach()
        weights = torch.exp(self.transitions - top)  # (K, K), entries in (0, 1]
        peak = emissions.max(dim=2, keepdim=True).values.detach()  # (B, T, 1)
        scaled = torch.exp(emissions - peak)  # (B, T, K), entries in (0, 1]
        alpha = self.start + emissions[:, 0]
        offset = alpha.max(dim=1, keepdim=True).values.detach()
        p = torch.exp(alpha - offset)  # (B, K)
        # while every row is real (up to the shortest sentence) no step needs the mask
        every_row_real = int(mask.all(dim=0).cumprod(dim=0).sum())
        sums = []
        steps = scaled.unbind(dim=1)  # one backward for all steps, not a (B, T, K) zero tensor per step
        for t in range(1, emissions.shape[1]):
            q = (p @ weights) * steps[t]
            s = q.sum(dim=1, keepdim=True) + tiny  # the floor: no change to any sum above ~1e-31
            p = q / s if t < every_row_real else torch.where(mask[:, t].unsqueeze(1), q / s, p)
            sums.append(s)
        maskf = mask[:, 1:].to(emissions.dtype)
        log_z = offset.squeeze(1) + ((peak[:, 1:, 0] + top) * maskf).sum(1)
        if sums:  # past a sentence's end its s counts for nothing
            log_z = log_z + (torch.log(torch.cat(sums, dim=1)) * maskf).sum(1)
        end_top = self.end.max().detach()
        return log_z + torch.log((p @ torch.exp(self.end - end_top)).clamp_min(tiny)) + end_top

    @torch.no_grad()
    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """The best tag path of each sentence (Viterbi), as lists of its true length."""
        B, T, K = emissions.shape
        score = self.start + emissions[:, 0]
        pointers = torch.zeros(B, T, K, dtype=torch.long, device=emissions.device)
        for t in range(1, T):
            best, arg = (score.unsqueeze(2) + self.transitions).max(dim=1)  # over the previous tag
            step = best + emissions[:, t]
            real = mask[:, t].unsqueeze(1)
            score = torch.where(real, step, score)
            # past a sentence's end the pointer is the identity, so back-tracking walks through padding unchanged
            pointers[:, t] = torch.where(real, arg, torch.arange(K, device=emissions.device))
        tag = (score + self.end).argmax(dim=1)
        path = torch.empty(B, T, dtype=torch.long, device=emissions.device)
        path[:, T - 1] = tag
        for t in range(T - 1, 0, -1):
            tag = pointers[:, t].gather(1, tag.unsqueeze(1)).squeeze(1)
            path[:, t - 1] = tag
        lengths = mask.sum(1).tolist()
        return [row[:n] for row, n in zip(path.tolist(), lengths)]
