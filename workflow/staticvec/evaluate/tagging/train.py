"""Train the BiLSTM-CRF on a task's train split with early stopping on dev; score dev and test.

Defaults follow NCRF++ (Yang & Zhang 2018), the tagger Context-to-Vec names and the BiLSTM-CRF
Wang et al. cite (neither paper states its hyper-parameters; SemGloVe uses an S-LSTM tagger): hidden
200 (100 a direction), 1 layer, dropout 0.5, SGD lr 0.015 decayed as lr / (1 + 0.05 · epoch),
momentum 0, L2 1e-8, batch 10, loss summed over the batch, 100 epochs with the best dev epoch kept.
Where we differ, and why: the word vectors are frozen (the embedding under test is the input, not a
starting point); a casing feature stands in for the character CNN by default (which stays an option:
``char_features: cnn``, on at the claims scale and in paper.yaml); batches group sentences of similar
length; epochs are capped with early stopping (``max_epochs``, ``patience``: :class:`EarlyStopping`)
instead of NCRF++'s fixed 100. The model is chosen on dev only: the test split is scored once, with
the weights of the best dev epoch, and dev is scored again with those very weights (``dev_rescored``,
equal to the curve's best point: the check that the evaluated weights are the chosen epoch's).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import math
import random
import time
from dataclasses import dataclass

import numpy as np

from staticvec.errors import StaticvecError
from staticvec.files import TIMING_KEY
from staticvec.evaluate.tagging.chunk_f1 import score
from staticvec.evaluate.tagging.data import TaskData
from staticvec.device import DTYPES, resolve_device, resolve_dtype

log = logging.getLogger(__name__)
PROGRESS_SECONDS = 30.0  # a progress line at most this often within an epoch


@dataclass
class TaggerConfig:
    """Hyper-parameters of one tagger run (the config's ``tagging.tagger`` section)."""

    hidden: int = 200
    layers: int = 1
    dropout: float = 0.5
    casing_dim: int = 20            # 0 = no casing feature
    char_features: str = "none"     # none | cnn | lstm (NCRF++: cnn)
    char_dim: int = 30
    char_hidden: int = 50
    lowercase: bool = True
    oov: str = "unk"                # unk (one trainable vector) | zero
    normalize: str = "none"         # none | unit | mean_norm
    optimizer: str = "sgd"          # sgd | adam
    lr: float = 0.015
    lr_decay: float = 0.05
    momentum: float = 0.0
    weight_decay: float = 1e-8
    clip: float | None = None      # gradient-norm clipping (NCRF++: none; the summed loss has norms ~100s)
    loss_reduction: str = "sum"     # sum (NCRF++) | mean
    batch_size: int = 10
    max_epochs: int = 30
    patience: int = 5
    eval_batch_size: int = 64
    max_train_sentences: int | None = None  # keep only the first N training sentences (smoke tests)
    # compute precision of the LSTM and the tag projection (the CRF always runs in float32): float32 (NCRF++),
    # bfloat16, float16 (CUDA only), or auto = the teacher's policy (staticvec.device.resolve_dtype): on CUDA
    # bf16 (else fp16) autocast, on a CPU bf16 autocast where it computes bf16 natively and fast and torch has a
    # bf16 LSTM there (oneDNN: AVX-512), else float32 (tagger_dtype)
    dtype: str = "float32"

    @classmethod
    def from_dict(cls, values: dict | None) -> "TaggerConfig":
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise StaticvecError(f"unknown tagger setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        config = cls(**values)
        config.check()
        return config

    def check(self) -> None:
        choices = {"char_features": ("none", "cnn", "lstm"), "oov": ("unk", "zero"), "normalize": ("none", "unit", "mean_norm"),
                   "optimizer": ("sgd", "adam"), "loss_reduction": ("sum", "mean")}
        choices["dtype"] = DTYPES
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise StaticvecError(f"tagger setting {name} = {getattr(self, name)!r}; allowed: {', '.join(allowed)}")
        for name in ("hidden", "layers", "batch_size", "max_epochs", "patience", "eval_batch_size"):
            if getattr(self, name) < 1:
                raise StaticvecError(f"tagger setting {name} must be at least 1, got {getattr(self, name)}")
        if self.hidden < 2:
            raise StaticvecError("tagger setting hidden must be at least 2 (it is split between the two directions)")


class EarlyStopping:
    """Keep the best development epoch; stop after ``patience`` epochs without a strictly better score.

    ``update(epoch, score)`` returns whether the epoch is the new best (its weights are to be kept);
    ``stop`` says whether training should end. ``stopped_by``: ``patience`` (the curve has flattened:
    converged in the sense this tagger can check), or ``max_epochs`` when the cap came first.
    """

    def __init__(self, patience: int, max_epochs: int):
        if patience < 1 or max_epochs < 1:
            raise StaticvecError(f"early stopping needs patience and max_epochs of at least 1, got {patience}, {max_epochs}")
        self.patience, self.max_epochs = patience, max_epochs
        self.best_score, self.best_epoch, self.stale, self.epochs_seen = -math.inf, 0, 0, 0

    def update(self, epoch: int, score: float) -> bool:
        self.epochs_seen = epoch
        if score > self.best_score:
            self.best_score, self.best_epoch, self.stale = score, epoch, 0
            return True
        self.stale += 1
        return False

    @property
    def stop(self) -> bool:
        return self.stale >= self.patience or self.epochs_seen >= self.max_epochs

    @property
    def stopped_by(self) -> str | None:
        if self.stale >= self.patience:
            return "patience"
        return "max_epochs" if self.epochs_seen >= self.max_epochs else None

    def describe(self) -> dict:
        """The record's ``convergence``: the chosen epoch and why training ended. ``converged``: dev stopped
        improving for ``patience`` epochs before the cap (a run cut by ``max_epochs`` may still be rising)."""
        return {"best_epoch": self.best_epoch, "epochs_run": self.epochs_seen, "patience": self.patience,
                "max_epochs": self.max_epochs, "stopped_by": self.stopped_by, "converged": self.stopped_by == "patience"}


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _to(batch: dict, device) -> dict:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def length_bucketed_batches(lengths: list[int], batch_size: int, generator, pool_batches: int = 50) -> list[list[int]]:
    """Random batches of sentences of similar length (less padding, same randomness per epoch).

    The shuffled sentences are cut into pools of ``pool_batches`` batches; each pool is sorted
    by length and cut into batches, and the batches are shuffled.
    """
    import torch

    order = torch.randperm(len(lengths), generator=generator).tolist()
    batches = []
    pool_size = batch_size * pool_batches
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start : start + pool_size], key=lambda i: lengths[i])
        batches.extend(pool[k : k + batch_size] for k in range(0, len(pool), batch_size))
    shuffle = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in shuffle]


def tagger_dtype(device, requested: str) -> tuple[str, str]:
    """The tagger's compute dtype and why: the shared policy (:func:`staticvec.device.resolve_dtype`),
    except that bf16 on a CPU also needs torch's bf16 LSTM there (oneDNN, AVX-512): ``auto`` then
    falls back to float32, a forced ``bfloat16`` is an error naming the setting."""
    from staticvec.evaluate.tagging.model import cpu_bf16_lstm

    name, reason = resolve_dtype(str(device), requested, what="tagging.tagger.dtype")
    if name == "bfloat16" and device.type == "cpu":
        supported, why = cpu_bf16_lstm()
        if not supported and requested == "auto":
            return "float32", f"{reason}; but {why}"
        if not supported:
            raise StaticvecError(f"tagging.tagger.dtype bfloat16: {why}; use auto or float32")
    return name, reason


def _autocast(device, amp_dtype):
    """Autocast to ``amp_dtype`` (bf16 or fp16 on CUDA, bf16 on a CPU); nothing for float32 (None). The CRF
    itself always runs in float32 (``BiLSTMCRF`` turns autocast off around it)."""
    import torch

    return torch.autocast(device.type, dtype=amp_dtype) if amp_dtype is not None else contextlib.nullcontext()


def predict(model, encoded, config: TaggerConfig, device, with_chars: bool, amp_dtype=None) -> list[list[int]]:
    """Viterbi tag ids for every sentence, in input order (batches sorted by length for speed)."""
    import torch

    from staticvec.evaluate.tagging.features import collate

    model.eval()
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].words))
    out: list[list[int] | None] = [None] * len(encoded)
    with torch.inference_mode(), _autocast(device, amp_dtype):
        for start in range(0, len(order), config.eval_batch_size):
            ids = order[start : start + config.eval_batch_size]
            batch = _to(collate([encoded[i] for i in ids], with_chars), device)
            for i, tags in zip(ids, model.decode(batch)):
                out[i] = tags
    return out  # type: ignore[return-value]


def train_tagger(data: TaskData, inputs, config: TaggerConfig, seed: int, device: str = "auto") -> dict:
    """Train one tagger; return the result record (scores, dev curve, epochs, timings).

    ``inputs``: a :class:`staticvec.evaluate.tagging.inputs.TaggerInputs` giving the frozen
    matrix and the row of every token.
    """
    import torch

    from staticvec.evaluate.tagging.features import char_vocabulary, collate, encode
    from staticvec.evaluate import optim as light_optim
    from staticvec.evaluate.tagging.model import BiLSTMCRF

    device = torch.device(resolve_device(device))
    dtype_name, dtype_reason = tagger_dtype(device, config.dtype)
    amp_dtype = None if dtype_name == "float32" else getattr(torch, dtype_name)
    log.info("tagger compute dtype %s (%s)", dtype_name, dtype_reason)
    seed_everything(seed)
    train_sentences = data.train[: config.max_train_sentences] if config.max_train_sentences else data.train
    tagset = data.tagset()
    tag_ids = {t: i for i, t in enumerate(tagset)}
    with_chars = config.char_features != "none"
    char_ids = char_vocabulary(train_sentences) if with_chars else None
    encoded = {
        split: encode(sentences, inputs.rows_for(split), tag_ids, char_ids)
        for split, sentences in (("train", train_sentences), ("dev", data.dev), ("test", data.test))
    }
    model = BiLSTMCRF(
        inputs.vectors, len(tagset), hidden=config.hidden, layers=config.layers, dropout=config.dropout,
        oov=config.oov if inputs.has_unk else "zero", casing_dim=config.casing_dim, char_features=config.char_features,
        n_chars=(len(char_ids) + 2) if char_ids else 0, char_dim=config.char_dim, char_hidden=config.char_hidden,
    ).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    # without fp16 loss scaling, torch.optim's arithmetic without its torch._dynamo import (staticvec.evaluate.optim)
    optim = torch.optim if scaler.is_enabled() else light_optim
    if config.optimizer == "sgd":
        optimizer = optim.SGD(params, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    else:
        optimizer = optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay)

    def evaluate(split: str) -> dict:
        predicted = predict(model, encoded[split], config, device, with_chars, amp_dtype)
        sentences = data.splits()[split]
        return score(data.metric, [s.tags for s in sentences], [[tagset[i] for i in p] for p in predicted])

    generator = torch.Generator().manual_seed(seed)
    curve, best_state, stopping = [], None, EarlyStopping(config.patience, config.max_epochs)
    started = time.perf_counter()
    n_train = len(encoded["train"])
    train_lengths = [len(s.words) for s in encoded["train"]]
    for epoch in range(config.max_epochs):
        epoch_start = time.perf_counter()
        lr = config.lr / (1 + config.lr_decay * epoch) if config.optimizer == "sgd" else config.lr
        for group in optimizer.param_groups:
            group["lr"] = lr
        model.train()
        total_loss, total_tokens, done_sentences, last_report = 0.0, 0, 0, time.perf_counter()
        for ids in length_bucketed_batches(train_lengths, config.batch_size, generator):
            batch = _to(collate([encoded["train"][i] for i in ids], with_chars), device)
            with _autocast(device, amp_dtype):
                loss = model.loss(batch, reduction=config.loss_reduction)
            if not torch.isfinite(loss):
                raise StaticvecError(f"training diverged at epoch {epoch + 1} (loss {loss.item()}); lower tagging.tagger.lr or set clip")
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if config.clip:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(params, config.clip)
            scaler.step(optimizer)
            scaler.update()
            n_tokens = int(batch["lengths"].sum())
            # 'mean' averages over sentences; report the loss per token either way
            total_loss += loss.item() * (batch["words"].shape[0] if config.loss_reduction == "mean" else 1)
            total_tokens += n_tokens
            done_sentences += batch["words"].shape[0]
            if time.perf_counter() - last_report >= PROGRESS_SECONDS:  # long epochs (frozen teacher) are not silent
                last_report = time.perf_counter()
                elapsed = last_report - epoch_start
                log.info("epoch %d: %d/%d sentences, loss/token %.4f, %.0f s (about %.0f s left in the epoch)",
                         epoch + 1, done_sentences, n_train, total_loss / max(total_tokens, 1), elapsed,
                         elapsed * (n_train - done_sentences) / max(done_sentences, 1))
        dev = evaluate("dev")
        improved = stopping.update(epoch + 1, dev["score"])
        curve.append({
            "epoch": epoch + 1, "lr": lr, "train_loss_per_token": total_loss / max(total_tokens, 1),
            "dev_score": dev["score"], TIMING_KEY: {"seconds": round(time.perf_counter() - epoch_start, 2)},
        })
        log.info("epoch %d: lr %.4g, loss/token %.4f, dev %s %.4f%s (%.0f s)", epoch + 1, lr, curve[-1]["train_loss_per_token"],
                 data.metric, dev["score"], " *" if improved else "", curve[-1][TIMING_KEY]["seconds"])
        if improved:
            best_dev_detail, best_state = dev, copy.deepcopy(model.state_dict())
        if stopping.stop:
            if stopping.stopped_by == "patience":
                log.info("early stop: no dev improvement for %d epochs", stopping.stale)
            break
    train_seconds = time.perf_counter() - started
    model.load_state_dict(best_state)
    # dev scored again with the weights about to be tested: equal to the best epoch's point of the curve
    dev, test = evaluate("dev"), evaluate("test")
    if dev["score"] != best_dev_detail["score"]:
        log.warning("dev %s with the kept weights is %.6f, the best epoch (%d) scored %.6f: the evaluated weights "
                    "are not that epoch's", data.metric, dev["score"], stopping.best_epoch, best_dev_detail["score"])
    return {
        "status": "ok",
        "metric": data.metric,
        "test": test["score"],
        "dev": best_dev_detail["score"],
        "test_detail": test,
        "dev_detail": dev,
        "dev_rescored": dev["score"],
        "best_epoch": stopping.best_epoch,
        "epochs_run": len(curve),
        "stopped_early": len(curve) < config.max_epochs,
        "convergence": stopping.describe(),
        "dev_curve": curve,
        "train_sentences": n_train,
        "tags": tagset,
        "trainable_parameters": int(sum(p.numel() for p in params)),
        TIMING_KEY: {"train_seconds": round(train_seconds, 1)},  # skipped when two runs are compared
        "device": str(device),
        "amp": str(amp_dtype).replace("torch.", "") if amp_dtype else None,
        "dtype": {"requested": config.dtype, "used": dtype_name, "reason": dtype_reason},
        "torch_threads": torch.get_num_threads(),
    }
