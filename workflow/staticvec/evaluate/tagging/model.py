"""The BiLSTM-CRF sequence labeller (Lample et al. 2016; Ma & Hovy 2016; NCRF++, Yang & Zhang 2018).

token → [frozen word vector ; casing embedding ; character CNN/LSTM feature] → dropout →
bidirectional LSTM → dropout → linear tag scores → linear-chain CRF (``crf.CRF``).

The word matrix is a buffer, not a parameter: it is never trained, never enters the
optimiser or the saved best state, and may be float16 (contextual vectors, one row per
token). Only the UNK row is learnt (``oov: unk``), as its own small parameter.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from staticvec.evaluate.tagging.crf import CRF
from staticvec.evaluate.tagging.features import CASING_CLASSES, UNK


def reversal_rows(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """Flat row index (B * T,) that reverses each sequence's first ``lengths[b]`` of ``T`` steps
    when applied to a (B * T, ...) view of a right-padded batch; padding rows stay in place.

    A permutation that is its own inverse: applying it twice restores the batch."""
    steps = torch.arange(T, device=lengths.device).unsqueeze(0)
    index = lengths.unsqueeze(1) - 1 - steps
    index = torch.where(index >= 0, index, steps)
    return (index + T * torch.arange(len(lengths), device=lengths.device).unsqueeze(1)).reshape(-1)


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
    """Reverse each sequence's first ``lengths[b]`` steps along dim 1; padding stays where it is.

    Whole (B, T, D) rows are selected (``index_select`` on the (B * T, D) view, backward an
    ``index_add_``): the same values as a ``gather`` with an index expanded over D, at about a third
    of its forward and backward cost. ``rows``: ``reversal_rows(lengths, T)``, if already made."""
    B, T = x.shape[:2]
    if rows is None:
        rows = reversal_rows(lengths.to(x.device), T)
    return x.reshape(B * T, *x.shape[2:]).index_select(0, rows).view(x.shape)


class Dropout(nn.Module):
    """Inverted dropout (as ``nn.Dropout``: zero each value with probability ``p``, scale the rest by
    1 / (1 - p); the identity in eval mode), with a cheaper mask than ``nn.Dropout``'s ``bernoulli_``.

    Where 256 p is a whole number (NCRF++'s 0.5 among them) a value is kept when one random byte is
    ≥ 256 p — exactly probability 1 - p —, the bytes being those of ``torch.randint`` int64 draws: eight
    decisions per draw of the generator, where ``torch.rand`` spends one draw on each (the mask then
    costs ~40 % of ``torch.rand(...) >= p``; dropout's masks were a fifth of a tagger epoch, then a
    tenth). Any other p: ``torch.rand(...) >= p``. Same distribution, another random stream."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p
        threshold = p * 256
        self.byte_threshold = int(threshold) if threshold == int(threshold) else None

    def keep_mask(self, shape: torch.Size, device) -> torch.Tensor:
        """Boolean mask, each entry true with probability 1 - p, independently."""
        if self.byte_threshold is None:
            return torch.rand(shape, device=device) >= self.p
        n = math.prod(shape)
        draws = torch.randint(-(2**63), 2**63 - 1, ((n + 7) // 8,), dtype=torch.int64, device=device)
        return (draws.view(torch.uint8)[:n] >= self.byte_threshold).view(shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = self.keep_mask(x.shape, x.device).to(x.dtype)
        return x * keep.mul_(1.0 / (1.0 - self.p))


class BiLSTM(nn.Module):
    """A bidirectional LSTM over right-padded batches, without packing.

    Packed sequences make torch's CPU LSTM run about twice slower than on a padded batch;
    here each direction runs on the padded batch and the backward one reads every sentence
    reversed within its own length, so padding never reaches a real token's state. The
    outputs at padding positions are meaningless and masked downstream.
    """

    def __init__(self, input_dim: int, hidden: int, layers: int = 1, dropout: float = 0.0):
        super().__init__()
        self.forward_lstms = nn.ModuleList()
        self.backward_lstms = nn.ModuleList()
        for layer in range(layers):
            size = input_dim if layer == 0 else 2 * hidden
            self.forward_lstms.append(nn.LSTM(size, hidden, batch_first=True))
            self.backward_lstms.append(nn.LSTM(size, hidden, batch_first=True))
        self.drop = Dropout(dropout)
        self.out_dim = 2 * hidden

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        rows = reversal_rows(lengths.to(x.device), x.shape[1])
        for layer, (fwd, bwd) in enumerate(zip(self.forward_lstms, self.backward_lstms)):
            if layer > 0:
                x = self.drop(x)
            ahead, _ = fwd(x)
            behind, _ = bwd(reverse_padded(x, lengths, rows))
            x = torch.cat([ahead, reverse_padded(behind, lengths, rows)], dim=2)
        return x


class CharCNN(nn.Module):
    """NCRF++'s character CNN: char embeddings, one convolution of width 3, max over the word."""

    def __init__(self, n_chars: int, char_dim: int, hidden: int, dropout: float):
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.drop = Dropout(dropout)
        self.conv = nn.Conv1d(char_dim, hidden, kernel_size=3, padding=1)
        self.out_dim = hidden

    def forward(self, chars: torch.Tensor) -> torch.Tensor:  # (B, T, C) → (B, T, hidden)
        B, T, C = chars.shape
        x = self.drop(self.embed(chars.view(B * T, C))).transpose(1, 2)  # (BT, dim, C)
        h = self.conv(x).masked_fill((chars.view(B * T, 1, C) == 0), float("-inf"))
        h = h.max(dim=2).values
        return torch.where(torch.isfinite(h), h, torch.zeros_like(h)).view(B, T, -1)  # padding tokens → 0


class CharLSTM(nn.Module):
    """NCRF++'s character BiLSTM: the last states of both directions (hidden split between them)."""

    def __init__(self, n_chars: int, char_dim: int, hidden: int, dropout: float):
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.drop = Dropout(dropout)
        self.lstm = nn.LSTM(char_dim, hidden // 2, batch_first=True, bidirectional=True)
        self.out_dim = 2 * (hidden // 2)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        B, T, C = chars.shape
        flat = chars.view(B * T, C)
        lengths = (flat != 0).sum(1)
        out = torch.zeros(B * T, self.out_dim, device=chars.device)
        real = lengths > 0
        if real.any():
            x = self.drop(self.embed(flat[real]))
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths[real].cpu(), batch_first=True, enforce_sorted=False)
            _, (h, _) = self.lstm(packed)  # h: (2, N, hidden/2)
            out[real] = torch.cat([h[0], h[1]], dim=1).to(out.dtype)
        return out.view(B, T, -1)


class BiLSTMCRF(nn.Module):
    def __init__(
        self,
        vectors: np.ndarray | torch.Tensor,
        n_tags: int,
        hidden: int = 200,
        layers: int = 1,
        dropout: float = 0.5,
        oov: str = "unk",
        casing_dim: int = 0,
        char_features: str = "none",
        n_chars: int = 0,
        char_dim: int = 30,
        char_hidden: int = 50,
    ):
        super().__init__()
        vectors = torch.as_tensor(vectors)
        self.register_buffer("vectors", vectors, persistent=False)
        dim = vectors.shape[1]
        if oov == "unk":
            # Same scale as the known rows, so UNK is neither silent nor dominant at the start.
            scale = float(vectors[2:].float().std()) if vectors.shape[0] > 2 else 0.1
            self.unk = nn.Parameter(torch.empty(dim).uniform_(-1.0, 1.0) * (scale or 0.1) * 3**0.5)
        elif oov == "zero":
            self.unk = None
        else:
            raise ValueError(f"unknown oov policy {oov!r}; known: unk, zero")
        self.casing = nn.Embedding(len(CASING_CLASSES), casing_dim, padding_idx=0) if casing_dim else None
        if char_features == "cnn":
            self.chars = CharCNN(n_chars, char_dim, char_hidden, dropout)
        elif char_features == "lstm":
            self.chars = CharLSTM(n_chars, char_dim, char_hidden, dropout)
        elif char_features == "none":
            self.chars = None
        else:
            raise ValueError(f"unknown character features {char_features!r}; known: none, cnn, lstm")
        input_dim = dim + casing_dim + (self.chars.out_dim if self.chars else 0)
        self.drop = Dropout(dropout)
        self.lstm = BiLSTM(input_dim, hidden // 2, layers=layers, dropout=dropout)
        self.to_tags = nn.Linear(self.lstm.out_dim, n_tags)
        self.crf = CRF(n_tags)

    def emissions(self, batch: dict) -> torch.Tensor:
        """Per-token tag scores (B, T, n_tags), float32."""
        words = batch["words"]
        x = F.embedding(words, self.vectors).float()
        if self.unk is not None:
            x = torch.where((words == UNK).unsqueeze(-1), self.unk.to(x.dtype), x)
        parts = [x]
        if self.casing is not None:
            parts.append(self.casing(batch["casing"]))
        if self.chars is not None:
            parts.append(self.chars(batch["chars"]).to(x.dtype))
        x = self.drop(torch.cat(parts, dim=-1))
        h = self.lstm(x, batch["lengths"])
        return self.to_tags(self.drop(h)).float()

    def loss(self, batch: dict, reduction: str = "sum") -> torch.Tensor:
        """Negative log-likelihood of the gold tags ('sum' over the batch as NCRF++, or 'mean')."""
        emissions = self.emissions(batch)
        with _float32(emissions):
            return -self.crf(emissions, batch["tags"], mask=batch["mask"], reduction=reduction)

    @torch.no_grad()
    def decode(self, batch: dict) -> list[list[int]]:
        """Viterbi tag ids of each sentence (its true length)."""
        emissions = self.emissions(batch)
        with _float32(emissions):
            return self.crf.decode(emissions, mask=batch["mask"])


@functools.lru_cache(maxsize=None)
def cpu_bf16_lstm() -> tuple[bool, str]:
    """Whether torch's CPU LSTM computes in bf16 under autocast on this machine, and why not. Only
    oneDNN has a bf16 LSTM on a CPU, and it needs AVX-512: on an AVX2-only CPU it refuses to build the
    primitive (a RuntimeError), so the tagger asks once with a tiny LSTM instead of guessing by flags."""
    lstm = nn.LSTM(4, 4, batch_first=True)
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            out, _ = lstm(torch.zeros(1, 2, 4))
    except RuntimeError as exc:
        return False, f"torch's CPU LSTM has no bf16 kernel on this machine ({str(exc).splitlines()[0][:100]})"
    if out.dtype != torch.bfloat16:
        return False, f"torch's CPU LSTM computes {out.dtype} under bf16 autocast on this machine"
    return True, "torch's CPU LSTM computes bf16"


def _float32(emissions: torch.Tensor):
    """Autocast off: under a bf16/fp16 autocast of the LSTM the CRF's forward recursion (a matmul in
    probability space) and its scores would otherwise be computed in the low precision too."""
    return torch.autocast(emissions.device.type, enabled=False)
