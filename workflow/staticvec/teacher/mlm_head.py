"""Fit a masked-LM head on a frozen encoder that ships without one (all-MiniLM-L6-v2).

The head has BERT's shape: ``dense (d→d) + GELU + LayerNorm``, then a decoder *tied to the
encoder's input embeddings* (frozen, not stored in the head file) plus a bias. It is trained
on last-layer states of the training corpus:

- ``unmasked`` (default for a fitted head): 15 % of the pieces are selected and each is predicted
  from its own *unmasked* state — the input the released SemGloVe code feeds its MLM. Measured on
  MiniLM: held-out top-1 ≈ 96 %, with meaningful contextual neighbours at ranks 2…k;
- ``masked``: the selected pieces are replaced by [MASK] and predicted (the paper's SemGloVe_md);
  on MiniLM this barely beats unigram frequency (measured offline: the shared data's docs/offline-teachers.md,
  not in this repository: held-out top-1 11.3 % against unigram 5.6 %).

The report gives held-out top-1/top-10 beside the unigram-frequency reference (always predicting
the training positions' most frequent pieces: :func:`unigram_accuracy`), both on *held-out text*:
whole sentences none of whose positions trained the head (:func:`heldout_split`), so a sentence's
context cannot leak from training into the score. Every feature file made with a fitted head carries
these figures and says the head was fitted; :func:`head_quality_text` is the sentence a table or
verdict that reads a row built on the head prints in its caption.
"""

from __future__ import annotations

import logging
import math
import os
import time
from pathlib import Path

import numpy as np

from staticvec.corpus.shards import iter_sentences
from staticvec.errors import InputFileError, StaticvecError
from staticvec.files import TIMING_KEY, sha256_of, torch_save
from staticvec.teacher.align import align
from staticvec.teacher.features import length_batches, pad_batch

log = logging.getLogger(__name__)

HEAD_FORMAT = 1


def _head_class():
    import torch
    from torch import nn

    class FittedMLMHead(nn.Module):
        """dense + GELU + LayerNorm, decoder = the (frozen) input embeddings, plus a bias."""

        def __init__(self, hidden: int, embeddings, eps: float = 1e-12):
            super().__init__()
            if embeddings.shape[1] != hidden:
                raise StaticvecError(
                    f"cannot tie an MLM head to input embeddings of width {embeddings.shape[1]} (hidden {hidden})")
            self.dense = nn.Linear(hidden, hidden)
            self.act = nn.GELU()
            self.norm = nn.LayerNorm(hidden, eps=eps)
            self.bias = nn.Parameter(torch.zeros(embeddings.shape[0]))
            self._embeddings = [embeddings]  # a list: not a parameter, not in the state dict
            self.meta: dict = {}
            self.source_sha256: str | None = None

        @property
        def embeddings(self):
            return self._embeddings[0]

        def transform(self, hidden):
            return self.norm(self.act(self.dense(hidden.to(self.dense.weight.dtype))))

        def transform_and_weights(self):
            """(transform, decoder weight, decoder bias): for :meth:`Teacher.mlm_topk`'s bf16 screen."""
            return self.transform, self.embeddings, self.bias

        def forward(self, hidden):
            h = self.transform(hidden)
            return nn.functional.linear(h, self.embeddings.to(h.dtype), self.bias.to(h.dtype))

    return FittedMLMHead


def new_head(teacher, embeddings_dtype=None):
    """A head tied to ``teacher``'s input embeddings (a copy in ``embeddings_dtype`` if given).

    The head's own parameters are fp32 (d x d: cheap); the decoder is the teacher's embedding matrix
    as the teacher holds it (bf16 when its weights are), which :meth:`Teacher.mlm_topk` screens in bf16.
    """
    cls = _head_class()
    eps = float(getattr(teacher.config, "layer_norm_eps", 1e-12))
    emb = teacher.input_embeddings().detach()
    if embeddings_dtype is not None:
        emb = emb.to(embeddings_dtype)
    return cls(teacher.hidden_size, emb, eps).to(teacher.device)


def save_head(head, path: str | os.PathLike) -> None:

    state = {"format": HEAD_FORMAT, "state_dict": {k: v.cpu() for k, v in head.state_dict().items()},
             "meta": head.meta}
    torch_save(state, path)  # the same bytes for the same head (staticvec.files.torch_save)


def load_head(path: str | os.PathLike, teacher):
    """A head file from :func:`fit_head`, tied to ``teacher``'s input embeddings."""
    import torch

    path = Path(path)
    if not path.exists():
        raise InputFileError(path, "MLM head file not found (make it with 'staticvec teacher fit-mlm-head')")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds
        raise InputFileError(path, f"not an MLM head file ({exc})") from None
    if not isinstance(state, dict) or state.get("format") != HEAD_FORMAT:
        raise InputFileError(path, "not an MLM head file of this version")
    meta = state["meta"]
    vocab = int(teacher.input_embeddings().shape[0])
    if meta.get("vocab_size") != vocab or meta.get("hidden_size") != teacher.hidden_size:
        raise InputFileError(
            path, f"head was fitted for a teacher with vocabulary {meta.get('vocab_size')} and width "
                  f"{meta.get('hidden_size')}; this teacher ({teacher.name}) has {vocab} and {teacher.hidden_size}")
    head = new_head(teacher)
    head.load_state_dict(state["state_dict"])
    head.meta = meta
    head.source_sha256 = sha256_of(path)
    return head.eval().requires_grad_(False)


def collect_states(teacher, sentences, n_positions: int, mode: str = "unmasked", select_prob: float = 0.15,
                   batch_tokens: int = 8192, chunk_sentences: int = 2048, seed: int = 0):
    """Last-layer states of randomly selected pieces, the pieces' ids and the index of each position's sentence
    (in the order ``sentences`` gives them), from the frozen encoder."""
    import torch

    if mode == "masked" and teacher.mask_id is None:
        raise StaticvecError(f"teacher {teacher.name!r} has no mask token: fit the head in 'unmasked' mode")
    rng = np.random.default_rng(seed)
    states, targets, sentence_of, have, first = [], [], [], 0, 0
    chunk: list[list[str]] = []

    def run(chunk):
        nonlocal have
        al = align(teacher.tokenizer, chunk, True, teacher.max_length)
        with torch.inference_mode():
            for batch in length_batches(al.lengths, batch_tokens):
                ids, pw, valid = pad_batch(al, batch, teacher.pad_id)
                chosen = (pw >= 0) & (rng.random(pw.shape) < select_prob)
                if not chosen.any():
                    continue
                inputs = ids.copy()
                if mode == "masked":
                    inputs[chosen] = teacher.mask_id
                out = teacher.forward(torch.as_tensor(inputs, device=teacher.device),
                                      torch.as_tensor(valid, device=teacher.device).long(), hidden_states=False)
                b, p = np.nonzero(chosen)
                states.append(out.last_hidden_state[torch.as_tensor(b), torch.as_tensor(p)].float().cpu())
                targets.append(torch.as_tensor(ids[b, p]))
                sentence_of.append(first + np.asarray(batch)[b])  # one aligned input per sentence
                have += len(b)
                if have >= n_positions:
                    return True
        return False

    for tokens in sentences:
        chunk.append(tokens)
        if len(chunk) == chunk_sentences:
            if run(chunk):
                break
            first += len(chunk)
            chunk = []
    else:
        if chunk:
            run(chunk)
    if not states:
        raise StaticvecError("no training positions: the corpus shards hold no training sentences")
    return (torch.cat(states)[:n_positions], torch.cat(targets)[:n_positions],
            np.concatenate(sentence_of)[:n_positions])


def heldout_split(sentence_of: np.ndarray, heldout_positions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(training positions, held-out positions): whole sentences go to the held-out side, in a seeded random
    order, until it holds ``heldout_positions`` positions (at most a fifth of them all when there are fewer
    than needed), so no held-out position shares its sentence with a training one."""
    sentence_of = np.asarray(sentence_of)
    n = len(sentence_of)
    want = min(heldout_positions, n // 5) if n < 5 * heldout_positions else heldout_positions
    sentences, counts = np.unique(sentence_of, return_counts=True)
    order = np.random.default_rng(seed).permutation(len(sentences))
    taken = np.cumsum(counts[order])
    k = int(np.searchsorted(taken, want, side="left")) + 1 if want else 0  # the first k sentences reach ``want``
    held_sentences = sentences[order[:min(k, len(sentences) - 1)]] if len(sentences) > 1 else sentences[:0]
    held = np.isin(sentence_of, held_sentences)
    return np.flatnonzero(~held), np.flatnonzero(held)


def unigram_accuracy(train_targets, heldout_targets, ks=(1, 10)) -> dict[str, float]:
    """The reference a head must beat: predict, at every held-out position, the ``k`` pieces most frequent among
    the training positions (ties broken by the smaller piece id); the share of held-out positions whose piece is
    among them."""
    train = np.asarray(train_targets, dtype=np.int64)
    held = np.asarray(heldout_targets, dtype=np.int64)
    if not len(held):
        return {f"top{k}": math.nan for k in ks}
    ids, counts = np.unique(train, return_counts=True)
    ranked = ids[np.lexsort((ids, -counts))]
    return {f"top{k}": float(np.isin(held, ranked[:k]).mean()) for k in ks}


def head_quality(meta: dict | None) -> dict | None:
    """The fitted head's held-out quality from its record (``mlm_head.json`` or the ``mlm_head`` block a feature or
    co-occurrence file carries): {teacher, mode, heldout_top1, heldout_top10, unigram_top1, unigram_top10,
    heldout_positions, heldout_sentences}; None for a teacher's own (native) head or no record."""
    if not meta or meta.get("kind") == "native" or meta.get("heldout_top1") is None:
        return None
    keys = ("teacher", "mode", "heldout_top1", "heldout_top10", "unigram_top1", "unigram_top10", "heldout_positions",
            "heldout_sentences", "heldout")
    return {k: meta.get(k) for k in keys}


def head_quality_text(quality: dict | None, row: str = "SemGloVe_md") -> str | None:
    """The caption sentence of a table or verdict that reads ``row`` built on a fitted head."""
    if not quality:
        return None
    pct = lambda x: "?" if x is None else f"{100 * x:.1f} %"  # noqa: E731
    held = quality.get("heldout_positions")
    where = f"{held:,} held-out positions" if held else "held-out positions"
    if quality.get("heldout_sentences"):
        where += f" of {quality['heldout_sentences']:,} sentences it never trained on"
    return (f"{row}'s masked-LM predictions come from a head fitted on the corpus ({quality.get('teacher') or 'the teacher'} "
            f"ships none; {quality.get('mode') or 'unmasked'} mode): top-1 {pct(quality.get('heldout_top1'))}, top-10 "
            f"{pct(quality.get('heldout_top10'))} on {where}, against {pct(quality.get('unigram_top1'))} / "
            f"{pct(quality.get('unigram_top10'))} for the unigram baseline")


def topk_accuracy(head, states, targets, ks=(1, 10), batch: int = 1024) -> dict[str, float]:
    import torch

    hits = {k: 0 for k in ks}
    with torch.inference_mode():
        for s in range(0, len(states), batch):
            logits = head(states[s:s + batch])
            top = logits.topk(max(ks), dim=-1).indices.cpu()
            match = top == targets[s:s + batch, None]
            for k in ks:
                hits[k] += int(match[:, :k].any(dim=1).sum())
    return {f"top{k}": hits[k] / max(len(states), 1) for k in ks}


def fit_head(teacher, shards, mode: str = "unmasked", train_positions: int = 50_000, heldout_positions: int = 10_000,
             select_prob: float = 0.15, epochs: int = 6, lr: float = 2e-3, batch_positions: int = 1024,
             batch_tokens: int = 8192, seed: int = 0):
    """Fit a head on the frozen encoder over ``shards``' training sentences; returns (head, report)."""
    import torch

    started = time.time()
    torch.manual_seed(seed)
    states, targets, sentence_of = collect_states(teacher, iter_sentences(shards), train_positions + heldout_positions,
                                                  mode, select_prob, batch_tokens, seed=seed)
    train_idx, held_idx = heldout_split(sentence_of, heldout_positions, seed)
    train, held = torch.as_tensor(train_idx), torch.as_tensor(held_idx)
    n_held = len(held_idx)
    dev = teacher.device
    x_train, y_train = states[train].to(dev), targets[train].to(dev)
    head = new_head(teacher, torch.float32).train()  # trained in fp32 on the (bf16 or fp32) encoder's states
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    losses = []
    for epoch in range(epochs):
        perm = torch.randperm(len(train), device=dev)
        total = 0.0
        for s in range(0, len(train), batch_positions):
            idx = perm[s:s + batch_positions]
            loss = torch.nn.functional.cross_entropy(head(x_train[idx]), y_train[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / max(len(train), 1))
        log.info("MLM head epoch %d/%d: loss %.4f", epoch + 1, epochs, losses[-1])
    head.eval().requires_grad_(False)
    acc = topk_accuracy(head, states[held].to(dev), targets[held])
    vocab = int(teacher.input_embeddings().shape[0])
    unigram = unigram_accuracy(targets[train].numpy(), targets[held].numpy())  # always the most frequent pieces
    head.meta = {
        "teacher": teacher.name,
        "teacher_dtype": teacher.dtype_name,  # the encoder's states it was fitted on
        "mode": mode,
        "vocab_size": vocab,
        "hidden_size": teacher.hidden_size,
        "train_positions": int(len(train)),
        "heldout_positions": int(n_held),
        "heldout_sentences": int(len(np.unique(sentence_of[held_idx]))),
        "train_sentences": int(len(np.unique(sentence_of[train_idx]))),
        "heldout": "whole sentences, none of whose positions trained the head",
        "select_prob": select_prob,
        "epochs": epochs,
        "lr": lr,
        "batch_positions": batch_positions,
        "seed": seed,
        "train_loss": [round(x, 5) for x in losses],
        "heldout_top1": round(acc["top1"], 5),
        "heldout_top10": round(acc["top10"], 5),
        "unigram_top1": round(unigram["top1"], 5),
        "unigram_top10": round(unigram["top10"], 5),
    }
    # the head file holds results only (the same bytes on a rerun); its time goes to the report's timing field,
    # which comparisons of two runs skip by name (staticvec.files.TIMING_KEY)
    return head, {**head.meta, TIMING_KEY: {"seconds": round(time.time() - started, 1)}}
