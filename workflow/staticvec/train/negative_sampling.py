"""The negative-sampling trainer core shared by X2Static, BERT + Skip-gram and Context-to-Vec.

The three methods are one training loop with different models: a *contextual* side computed by
the teacher (X2Static: the sentence context E_ctx; BERT + Skip-gram and Context-to-Vec: the centre
word's vector o_i) and a *static* table trained against it with the logistic loss of word2vec's
negative sampling. What they share lives here:

- :class:`UnigramSampler`: negatives drawn ∝ count^power (0.75 word2vec / Wang et al.; 0.5
  fastText / Sent2vec / X2Static's code), by inverse CDF on a seeded numpy generator;
- :func:`keep_probabilities`: frequent-word subsampling, word2vec C / fastText's
  ``min(1, sqrt(t/f) + t/f)`` (X2Static's code) or Mikolov et al.'s paper formula ``sqrt(t/f)``
  (f = count / total count of the vocabulary);
- :func:`log_sigmoid` / :func:`logistic_loss`: ``ℓ(x) = log(1 + e^-x) = -log σ(x)``;
- :func:`context_windows`: the ±w window of every position of a block, padded with -1 (no
  Python loop per word);
- :class:`Optimizer`: SGD and Adam over named tensors; a sparse *table* is updated only on the
  rows a batch touches, Adam lazily exactly as ``torch.optim.SparseAdam`` ("lazy Adam");
- :func:`train`: the loop. For each block of teacher features (a stored part: ~4k sentences) the
  model yields batches (:class:`Batch`), each a set of table rows and tensors; the loop gathers
  the rows (unique, as leaf tensors), computes the model's loss, back-propagates, clips the
  gradient norm (of the dense tensors, or of everything the step touches), applies the optimizer
  with the (linearly decaying) learning rate, and keeps the
  loss curve, throughput and the time split between teacher/loading, batching and the static
  update. Checkpoints are written atomically at block boundaries (every ``checkpoint_every``
  seconds) with every tensor, the optimizer state, the random generator and the position, so a
  resumed run equals an uninterrupted one bit for bit (tests/test_students_core.py).

All randomness (initialisation aside) comes from ONE numpy generator owned by the loop and handed
to the model per block, in a fixed order, so results depend only on the seed and the data.

Two engines run the same steps (``engine`` of each method; tests/test_students_fast.py): ``autograd``
(the torch loop above; CUDA runs use it) and ``fast`` (the CPU default): the model prepares a
block's batches as flat arrays with the same draws (``prepare_block``) and runs its steps in numba
kernels with hand-written gradients (``run_block``; the shared kernels are at the end of this
module), equal to autograd up to float rounding and repeatable bit for bit for a thread count.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator

import numba
import numpy as np
from numba import njit, prange

from staticvec.errors import StaticvecError
from staticvec.files import atomic_path

log = logging.getLogger(__name__)


def _numba_cache_dir() -> str:
    """Where compiled kernels are cached: $NUMBA_CACHE_DIR, else the user's cache directory (never
    the source tree); a temporary directory when that is not writable."""
    import tempfile

    path = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "staticvec", "numba")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return os.path.join(tempfile.gettempdir(), f"staticvec-numba-{os.getuid()}")


if not numba.config.CACHE_DIR:  # set before the kernels below are defined (their cache locator is chosen then)
    numba.config.CACHE_DIR = _numba_cache_dir()

SUBSAMPLE_FORMULAS = ("word2vec", "mikolov")
OPTIMIZERS = ("sgd", "adam")
ENGINES = ("fast", "autograd")
LR_DECAYS = ("linear", "none")


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


# ---------------------------------------------------------------- optimisation


class Optimizer:
    """SGD or Adam over named tensors; sparse tables get row updates (lazy Adam = torch SparseAdam).

    Lazy Adam keeps per-row moments and updates only the rows with a gradient in this step; the
    bias correction uses the table's step count, as ``torch.optim.SparseAdam`` does.
    """

    def __init__(self, kind: str = "sgd", betas=(0.9, 0.999), eps: float = 1e-8):
        if kind not in OPTIMIZERS:
            raise StaticvecError(f"optimizer {kind!r}: expected one of {', '.join(OPTIMIZERS)}")
        self.kind = kind
        self.betas = tuple(betas)
        self.eps = eps
        self.state: dict[str, dict] = {}

    def update(self, name: str, weight, grad, lr: float, rows=None) -> None:
        """``weight[rows] -= step(grad)`` (all of ``weight`` when ``rows`` is None); rows are unique."""
        import torch

        with torch.no_grad():
            if self.kind == "sgd":
                if rows is None:
                    weight.add_(grad, alpha=-lr)
                else:
                    weight.index_add_(0, rows, grad, alpha=-lr)
                return
            st = self.state.get(name)
            if st is None:
                st = self.state[name] = {"step": 0, "exp_avg": torch.zeros_like(weight),
                                         "exp_avg_sq": torch.zeros_like(weight)}
            b1, b2 = self.betas
            st["step"] += 1
            m_all, v_all = st["exp_avg"], st["exp_avg_sq"]
            m = (m_all if rows is None else m_all[rows]).mul(b1).add_(grad, alpha=1 - b1)
            v = (v_all if rows is None else v_all[rows]).mul(b2).addcmul_(grad, grad, value=1 - b2)
            step_size = lr * math.sqrt(1 - b2 ** st["step"]) / (1 - b1 ** st["step"])
            delta = m / (v.sqrt() + self.eps) * -step_size
            if rows is None:
                m_all.copy_(m)
                v_all.copy_(v)
                weight.add_(delta)
            else:
                m_all[rows] = m
                v_all[rows] = v
                weight.index_add_(0, rows, delta)

    def state_dict(self) -> dict:
        return {"kind": self.kind, "betas": self.betas, "eps": self.eps, "state": self.state}

    def load_state_dict(self, d: dict) -> None:
        self.state = d["state"]


def learning_rate(lr0: float, decay: str, done: int, total: int, min_fraction: float = 1e-4) -> float:
    """word2vec's schedule: ``lr0 · max(min_fraction, 1 - done/total)``, or constant."""
    if decay == "none" or total <= 0:
        return lr0
    if decay != "linear":
        raise StaticvecError(f"learning-rate decay {decay!r}: expected one of {', '.join(LR_DECAYS)}")
    return lr0 * max(min_fraction, 1.0 - done / total)


# ---------------------------------------------------------------- batches and models


@dataclass
class Batch:
    """One optimisation step's data: table rows to gather and the model's tensors.

    ``rows[name]`` is an integer tensor of row ids of table ``name`` (any shape): the loop hands the
    model those rows' vectors in the same shape plus a trailing dimension. ``examples`` counts the
    loss terms (targets or centres), ``words`` the corpus words this batch consumes (progress and
    the learning-rate schedule, like word2vec's word count).
    """

    rows: dict
    data: dict
    examples: int
    words: int


class Model:
    """What :func:`train` needs from a method (see x2static.py, bert_skipgram.py, context2vec.py)."""

    tables: dict  # name -> (V, d) tensor, updated on the rows of each batch
    dense: dict  # name -> tensor, updated by its full gradient
    feature_keys: list  # arrays each block must hold

    def batches(self, block: dict, rng: np.random.Generator) -> Iterator[Batch]:  # pragma: no cover
        raise NotImplementedError

    def loss(self, batch: Batch, rows: dict, dense: dict):  # pragma: no cover
        """The batch's loss (a scalar tensor) from the gathered ``rows`` and the ``dense`` tensors."""
        raise NotImplementedError

    def progress_words(self, word_ids: np.ndarray) -> int:
        """Words of a block that count towards progress (in-vocabulary words)."""
        return int((word_ids >= 0).sum())


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


@dataclass
class LoopSettings:
    """How the loop optimises (each method fills it from its hyper-parameters)."""

    epochs: int = 1
    lr: float = 0.025
    lr_decay: str = "linear"
    min_lr_fraction: float = 1e-4
    optimizer: str = "sgd"
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    clip_norm: float | None = None
    clip_scope: str = "all"  # all | dense (see optimisation_step)
    engine: str = "fast"  # fast: hand-written gradients in numba kernels (CPU) | autograd: the torch reference
    checkpoint_every: float = 600.0  # seconds between checkpoints (at block boundaries); 0: every block
    log_every: float = 60.0  # seconds between progress lines


@dataclass
class LoopState:
    """Where the loop is: everything a resumed run needs besides tensors and generator."""

    epoch: int = 0
    position: tuple = (0, 0)  # the next block of the source (shard, part)
    words: int = 0
    examples: int = 0
    steps: int = 0
    loss_sum: float = 0.0
    curve: list = field(default_factory=list)  # per block: epoch, words, examples, mean loss, lr
    timing: dict = field(default_factory=lambda: {"teacher_or_loading_s": 0.0, "batching_s": 0.0, "update_s": 0.0,
                                                  "checkpoint_s": 0.0})


def _fingerprint(obj) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


def save_checkpoint(path, model: Model, optimizer: Optimizer, rng: np.random.Generator, state: LoopState,
                    fingerprint: str) -> None:
    import torch

    payload = {
        "fingerprint": fingerprint,
        "tables": {k: v.detach().cpu() for k, v in model.tables.items()},
        "dense": {k: v.detach().cpu() for k, v in model.dense.items()},
        "optimizer": {**optimizer.state_dict(), "state": {
            k: {n: (t.cpu() if hasattr(t, "cpu") else t) for n, t in st.items()} for k, st in optimizer.state.items()}},
        "rng": rng.bit_generator.state,
        "state": asdict(state),
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path, model: Model, optimizer: Optimizer, rng: np.random.Generator, fingerprint: str,
                    device: str) -> LoopState | None:
    """Restore a checkpoint into ``model``/``optimizer``/``rng``; None when it belongs to another run."""
    import torch

    payload = torch.load(path, map_location="cpu", weights_only=False)
    if payload.get("fingerprint") != fingerprint:
        log.warning("%s: written for other settings or inputs; starting from scratch", path)
        return None
    with torch.no_grad():
        for k, v in payload["tables"].items():
            model.tables[k].copy_(v.to(device))
        for k, v in payload["dense"].items():
            model.dense[k].copy_(v.to(device))
    optimizer.load_state_dict({"state": {
        k: {n: (t.to(device) if hasattr(t, "to") else t) for n, t in st.items()}
        for k, st in payload["optimizer"]["state"].items()}})
    rng.bit_generator.state = payload["rng"]
    state = LoopState(**payload["state"])
    state.position = tuple(state.position)
    return state


def _gather(model: Model, batch: Batch):
    """Each table's unique rows as leaf tensors, and the batch's row views of them.

    An id of -1 (padding) gives a zero vector and touches no row: a padded slot neither moves a
    row under SGD nor ages its lazy-Adam moments.
    """
    import torch
    import torch.nn.functional as F

    leaves, views = {}, {}
    for name, ids in batch.rows.items():
        table = model.tables[name]
        flat = ids.reshape(-1)
        valid = flat >= 0
        uniq, inverse = torch.unique(flat[valid], return_inverse=True)
        leaf = table[uniq].detach().requires_grad_(True)
        leaves[name] = (uniq, leaf)
        # F.embedding: its backward sums the rows' gradients without index_put's sort
        if bool(valid.all()):
            view = F.embedding(inverse, leaf)
        else:
            padded = torch.cat([leaf, leaf.new_zeros(1, table.shape[1])])
            index = torch.full_like(flat, len(uniq))
            index[valid] = inverse
            view = F.embedding(index, padded)
        views[name] = view.reshape(*ids.shape, table.shape[1])
    return leaves, views


def optimisation_step(model: Model, optimizer: Optimizer, batch: Batch, lr: float, clip_norm: float | None,
                      clip_scope: str = "all") -> float:
    """Loss, gradients (autograd on the gathered rows), gradient-norm clipping and the update.

    ``clip_scope``: ``all`` clips the total norm of every gradient of the step (the dense tensors
    and the batch's table rows: ``torch.nn.utils.clip_grad_norm_`` over all parameters, as the
    released code does); ``dense`` clips only the dense tensors' (the projection), leaving the
    table rows their word2vec-style per-occurrence updates.
    """
    import torch

    leaves, views = _gather(model, batch)
    for p in model.dense.values():
        p.grad = None
    loss = model.loss(batch, views, model.dense)
    loss.backward()
    grads = {name: leaf.grad for name, (_, leaf) in leaves.items()}
    dense_grads = {name: p.grad if p.grad is not None else torch.zeros_like(p) for name, p in model.dense.items()}
    if clip_norm:
        clipped = [*dense_grads.values()] + ([*grads.values()] if clip_scope == "all" else [])
        total = torch.sqrt(sum((g.float() ** 2).sum() for g in clipped)) if clipped else torch.zeros(())
        scale = clip_norm / (total + 1e-6)
        if scale < 1:  # torch.nn.utils.clip_grad_norm_'s rule
            dense_grads = {k: g * scale for k, g in dense_grads.items()}
            if clip_scope == "all":
                grads = {k: g * scale for k, g in grads.items()}
    for name, (uniq, _) in leaves.items():
        optimizer.update(name, model.tables[name], grads[name], lr, rows=uniq)
    for name, p in model.dense.items():
        optimizer.update(name, p.data, dense_grads[name], lr)
        p.grad = None
    return float(loss.detach())


def train(model: Model, source, settings: LoopSettings, seed: int, total_words: int | None = None,
          checkpoint: str | os.PathLike | None = None, fingerprint: dict | None = None, name: str = "train",
          progress: bool = True) -> dict:
    """Train ``model`` on the blocks of ``source`` (see teacher_blocks.py); returns the run record.

    ``total_words`` (in-vocabulary words per epoch) drives the linear learning-rate decay and the
    progress percentage; it is counted from the source when not given.
    """
    device = getattr(model, "device", "cpu")
    rng = np.random.default_rng(seed)
    optimizer = Optimizer(settings.optimizer, settings.betas, settings.eps)
    state = LoopState()
    fp = _fingerprint({"settings": asdict(settings), "seed": seed, "run": fingerprint or {}})
    if checkpoint is not None and Path(checkpoint).exists():
        restored = load_checkpoint(checkpoint, model, optimizer, rng, fp, device)
        if restored is not None:
            state = restored
            log.info("%s: resuming from %s at epoch %d, block %s (%d words done)", name, checkpoint,
                     state.epoch, state.position, state.words)
    if total_words is None:
        total_words = sum(model.progress_words(ids) for ids in source.word_ids())
    total = total_words * settings.epochs
    started = time.perf_counter()
    elapsed_before = sum(state.timing.values())
    last_log = last_ckpt = started
    bar = _progress_bar(progress, total, state.words, name)
    timing = state.timing
    if settings.engine not in ENGINES:
        raise StaticvecError(f"engine {settings.engine!r}: expected one of {', '.join(ENGINES)}")
    use_fast = settings.engine == "fast" and device == "cpu" and bool(getattr(model, "supports_fast", False))
    if settings.engine == "fast" and not use_fast:
        log.info("%s: the fast engine covers CPU runs of the usual options; using the autograd engine (%s)",
                 name, device)
    examples_at_log, time_at_log = state.examples, started
    for epoch in range(state.epoch, settings.epochs):
        start = state.position if epoch == state.epoch else (0, 0)
        t0 = time.perf_counter()
        for position, block in source.blocks(start):
            timing["teacher_or_loading_s"] += time.perf_counter() - t0
            block_loss, block_examples, block_steps = 0.0, 0, 0
            lr = learning_rate(settings.lr, settings.lr_decay, state.words, total, settings.min_lr_fraction)
            if use_fast:
                t1 = time.perf_counter()
                prepared = model.prepare_block(block, rng)
                timing["batching_s"] += time.perf_counter() - t1
                t1 = time.perf_counter()
                losses, examples, words = model.run_block(prepared, optimizer, settings, state.words, total)
                timing["update_s"] += time.perf_counter() - t1
                for loss, ex, wd in zip(losses, examples, words):
                    lr = learning_rate(settings.lr, settings.lr_decay, state.words, total, settings.min_lr_fraction)
                    state.steps += 1
                    state.words += int(wd)
                    state.examples += int(ex)
                    state.loss_sum += float(loss)
                    block_loss += float(loss)
                    block_examples += int(ex)
                    block_steps += 1
                bar.update(int(sum(words)))
                batches = iter(())
            else:
                batches = iter(model.batches(block, rng))
            while True:
                t1 = time.perf_counter()
                batch = next(batches, None)
                timing["batching_s"] += time.perf_counter() - t1
                if batch is None:
                    break
                lr = learning_rate(settings.lr, settings.lr_decay, state.words, total, settings.min_lr_fraction)
                t1 = time.perf_counter()
                loss = optimisation_step(model, optimizer, batch, lr, settings.clip_norm, settings.clip_scope)
                if device.startswith("cuda"):
                    import torch

                    torch.cuda.synchronize()
                timing["update_s"] += time.perf_counter() - t1
                state.steps += 1
                state.words += batch.words
                state.examples += batch.examples
                state.loss_sum += loss
                block_loss += loss
                block_examples += batch.examples
                block_steps += 1
                bar.update(batch.words)
            state.curve.append({"epoch": epoch, "block": list(position), "words": state.words, "steps": block_steps,
                                "examples": block_examples, "loss_per_step": block_loss / max(block_steps, 1), "lr": lr})
            state.position = source.next_position(position)
            now = time.perf_counter()
            if now - last_log >= settings.log_every:
                last_log = now
                rate = (state.examples - examples_at_log) / max(now - time_at_log, 1e-9)
                examples_at_log, time_at_log = state.examples, now
                log.info("%s: epoch %d, %.1f%% of words, %d steps, %.0f examples/s, loss/step %.4f, lr %.5f",
                         name, epoch, 100.0 * state.words / max(total, 1), state.steps, rate,
                         block_loss / max(block_steps, 1), lr)
            if checkpoint is not None and now - last_ckpt >= settings.checkpoint_every:
                t1 = time.perf_counter()
                save_checkpoint(checkpoint, model, optimizer, rng, state, fp)
                timing["checkpoint_s"] += time.perf_counter() - t1
                last_ckpt = time.perf_counter()
            t0 = time.perf_counter()
        state.epoch = epoch + 1
        state.position = (0, 0)
    bar.close()
    wall = time.perf_counter() - started + elapsed_before
    busy = timing["teacher_or_loading_s"] + timing["batching_s"] + timing["update_s"]
    return {
        "steps": state.steps,
        "words": state.words,
        "examples": state.examples,
        "total_words_per_epoch": total_words,
        "mean_loss_per_step": state.loss_sum / max(state.steps, 1),
        "curve": state.curve,
        "timing": {**{k: round(v, 6) for k, v in timing.items()}, "wall_s": round(wall, 6),
                   "static_update_share": round(timing["update_s"] / busy, 4) if busy else None,
                   "teacher_or_loading_share": round(timing["teacher_or_loading_s"] / busy, 4) if busy else None},
        "throughput": {"examples_per_s": round(state.examples / wall, 1) if wall else None,
                       "examples_per_update_s": round(state.examples / timing["update_s"], 1) if timing["update_s"] else None,
                       "words_per_s": round(state.words / wall, 1) if wall else None},
        "device": device,
        "engine": "fast" if use_fast else "autograd",
    }


# ---------------------------------------------------------------- the fast engine's shared kernels
#
# The fast engine computes each method's loss and gradients by hand (see the methods' modules) in
# numba kernels that run a whole block of batches per call; the batches, the random draws and the
# update rule are the autograd engine's, so both engines give the same result up to float rounding
# (tests/test_students_fast.py). What is shared: a step's sparse gradient is a list of *slots*
# (row id, scalar coefficient, index of a vector), the row's gradient being Σ coef · vector over
# its slots. The slots are sorted by row (stable) and every unique row is summed in slot order by
# one thread, so the result does not depend on the thread count; then SGD or lazy Adam
# (torch.optim.SparseAdam's rule, as :class:`Optimizer`) updates those rows only.


def fast_engine_threads(threads: int | None = None) -> int:
    """Set (when given) and return the fast engine's thread count (numba's).

    The kernels split a step's matrix products across their own threads, so the BLAS they call
    runs on one thread (as threadpoolctl would set it), never threads within threads."""
    if threads:
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
        _single_threaded_openblas()
    return numba.get_num_threads()


def _single_threaded_openblas() -> None:
    import ctypes

    try:
        import scipy.linalg.cython_blas  # noqa: F401  (the BLAS numba's np.dot calls: load it now)

        maps = open("/proc/self/maps").read().split("\n")  # the loaded libraries (Linux)
    except (ImportError, OSError):
        return
    libs = {line.split()[-1] for line in maps if "openblas" in line.lower() and line.split()[-1].startswith("/")}
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("openblas_set_num_threads", "scipy_openblas_set_num_threads",
                       "openblas_set_num_threads64_", "scipy_openblas_set_num_threads64_"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                fn(1)
                break


@njit(cache=True)
def lr_at(lr0, decay_linear, min_fraction, done, total):
    """:func:`learning_rate` in a kernel (``decay_linear``: 1 linear, 0 none)."""
    if decay_linear == 0 or total <= 0:
        return lr0
    return lr0 * max(min_fraction, 1.0 - done / total)


@njit(cache=True)
def softplus(x):
    """log(1 + e^x), stable: ℓ(x) = softplus(-x)."""
    if x > 0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(cache=True)
def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + np.exp(-x))
    e = np.exp(x)
    return e / (1.0 + e)


@njit(cache=True, parallel=True)
def row_gradients(slot_row, slot_coef, slot_vec, vectors):
    """Unique rows of the valid slots (row >= 0) and their summed gradients (float32).

    Row r's gradient is Σ slot_coef[s] · vectors[slot_vec[s]] over its slots s, summed in slot
    order by one thread: the result does not depend on the thread count.
    """
    order = np.argsort(slot_row, kind="mergesort")
    n = len(order)
    first = 0
    while first < n and slot_row[order[first]] < 0:
        first += 1
    starts = np.empty(n - first + 1, np.int64)
    n_rows = 0
    for k in range(first, n):
        if k == first or slot_row[order[k]] != slot_row[order[k - 1]]:
            starts[n_rows] = k
            n_rows += 1
    starts[n_rows] = n
    rows = np.empty(n_rows, np.int64)
    dim = vectors.shape[1]
    grads = np.zeros((n_rows, dim), np.float32)
    for r in prange(n_rows):
        rows[r] = slot_row[order[starts[r]]]
        for k in range(starts[r], starts[r + 1]):
            s = order[k]
            c = np.float32(slot_coef[s])
            j = slot_vec[s]
            for e in range(dim):
                grads[r, e] += c * vectors[j, e]
    return rows, grads


def sq_norm(a) -> float:
    """Σ a² (a float32 array; BLAS dot)."""
    flat = np.ascontiguousarray(a).reshape(-1)
    return float(np.dot(flat, flat))


# Teacher vectors are stored as float16, which numba cannot read: kernels take them as their uint16
# bits (a view, no copy) and convert each value through a 65,536-entry table; float32 features
# pass through. feature_view() gives the array a kernel takes, value() reads one element.
_F16_TO_F32 = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)


def feature_view(a: np.ndarray) -> np.ndarray:
    """A stored vector array as a kernel reads it: float16 as its uint16 bits, else float32."""
    if a.dtype == np.float16:
        return np.ascontiguousarray(a).view(np.uint16)
    return np.ascontiguousarray(a, dtype=np.float32)


def value(x):  # pragma: no cover - replaced in kernels by the overload below
    raise NotImplementedError


@numba.extending.overload(value, inline="always")
def _value(x):
    if isinstance(x, numba.types.Integer):
        return lambda x: _F16_TO_F32[x]
    return lambda x: np.float32(x)


@njit(cache=True, parallel=True)
def gather_rows(vec, idx, out):
    """out[i] = vec[idx[i]] as float32 (vec: feature_view of stored vectors)."""
    for i in prange(len(idx)):
        for e in range(out.shape[1]):
            out[i, e] = value(vec[idx[i], e])


@njit(cache=True, parallel=True)
def update_rows(table, rows, grads, lr, scale, adam, m, v, step, b1, b2, eps):
    """``table[rows] -= lr · scale · grads`` (SGD) or lazy Adam at the table's ``step`` (>= 1)."""
    dim = table.shape[1]
    if not adam:
        a = np.float32(-lr * scale)
        for r in prange(len(rows)):
            w = rows[r]
            for e in range(dim):
                table[w, e] += a * grads[r, e]
        return
    step_size = np.float32(lr * np.sqrt(1.0 - b2 ** step) / (1.0 - b1 ** step))
    c1, c2, fb1, fb2, feps = np.float32(1.0 - b1), np.float32(1.0 - b2), np.float32(b1), np.float32(b2), np.float32(eps)
    for r in prange(len(rows)):
        w = rows[r]
        for e in range(dim):
            g = grads[r, e] * np.float32(scale)
            mm = m[w, e] * fb1 + c1 * g
            vv = v[w, e] * fb2 + c2 * g * g
            m[w, e] = mm
            v[w, e] = vv
            table[w, e] += -step_size * (mm / (np.sqrt(vv) + feps))


@njit(cache=True, parallel=True)
def update_dense(weight, grad, lr, scale, adam, m, v, step, b1, b2, eps):
    """The same rules over a whole tensor (any shape, C-contiguous)."""
    flat_w, flat_g = weight.reshape(-1), grad.reshape(-1)
    n = flat_w.size
    if not adam:
        a = np.float32(-lr * scale)
        for i in prange(n):
            flat_w[i] += a * flat_g[i]
        return
    flat_m, flat_v = m.reshape(-1), v.reshape(-1)
    step_size = np.float32(lr * np.sqrt(1.0 - b2 ** step) / (1.0 - b1 ** step))
    c1, c2, fb1, fb2, feps = np.float32(1.0 - b1), np.float32(1.0 - b2), np.float32(b1), np.float32(b2), np.float32(eps)
    for i in prange(n):
        g = flat_g[i] * np.float32(scale)
        mm = flat_m[i] * fb1 + c1 * g
        vv = flat_v[i] * fb2 + c2 * g * g
        flat_m[i] = mm
        flat_v[i] = vv
        flat_w[i] += -step_size * (mm / (np.sqrt(vv) + feps))


@njit(cache=True, parallel=True)
def matmul_nt(a, b, nthreads):
    """a @ b.T (a: n × k, b: m × k, float32); the rows of ``a`` split over ``nthreads`` BLAS calls."""
    n = a.shape[0]
    out = np.empty((n, b.shape[0]), np.float32)
    bt = b.T
    chunk = (n + nthreads - 1) // nthreads
    for t in prange(nthreads):
        lo, hi = t * chunk, min(n, (t + 1) * chunk)
        if hi > lo:
            out[lo:hi] = np.dot(a[lo:hi], bt)
    return out


@njit(cache=True, parallel=True)
def matmul_tn(a, b, nthreads):
    """a.T @ b (a: n × m, b: n × k, float32); the m output rows split over ``nthreads`` BLAS calls."""
    m = a.shape[1]
    out = np.empty((m, b.shape[1]), np.float32)
    chunk = (m + nthreads - 1) // nthreads
    for t in prange(nthreads):
        lo, hi = t * chunk, min(m, (t + 1) * chunk)
        if hi > lo:
            out[lo:hi] = np.dot(np.ascontiguousarray(a[:, lo:hi].T), b)
    return out


def adam_state(optimizer: Optimizer, name: str, weight):
    """The optimizer's state of ``name`` as numpy views (created as :meth:`Optimizer.update` does)."""
    import torch

    st = optimizer.state.get(name)
    if st is None:
        st = optimizer.state[name] = {"step": 0, "exp_avg": torch.zeros_like(weight),
                                      "exp_avg_sq": torch.zeros_like(weight)}
    return st, st["exp_avg"].numpy(), st["exp_avg_sq"].numpy()


def as_numpy(tensor) -> np.ndarray:
    """A CPU float32 tensor's storage as a numpy array (shared: kernels update the tensor in place)."""
    arr = tensor.detach().numpy()
    if not arr.flags.c_contiguous:
        raise StaticvecError("fast engine: parameters must be contiguous CPU tensors")
    return arr


_NO_STATE = np.zeros((1, 1), np.float32)


def fast_update(model: Model, optimizer: Optimizer, settings: LoopSettings, lr: float, table: str, rows: np.ndarray,
                grads: np.ndarray, dense_grads: dict) -> None:
    """One step's clipping and update, as :func:`optimisation_step` does it, from numpy gradients.

    ``rows`` / ``grads``: the unique rows of ``model.tables[table]`` and their summed gradients;
    ``dense_grads``: name -> the full gradient of ``model.dense[name]``.
    """
    scale = 1.0
    if settings.clip_norm:
        total = sum(sq_norm(g) for g in dense_grads.values())
        if settings.clip_scope == "all":
            total += sq_norm(grads)
        s = settings.clip_norm / (math.sqrt(total) + 1e-6)
        if s < 1:  # torch.nn.utils.clip_grad_norm_'s rule
            scale = s
    adam = optimizer.kind == "adam"
    b1, b2 = optimizer.betas
    targets = [(table, model.tables[table], rows, grads)] + [(n, model.dense[n], None, g) for n, g in dense_grads.items()]
    for name, tensor, r, g in targets:
        weight = as_numpy(tensor)
        m = v = _NO_STATE
        step = 0
        if adam:
            st, m, v = adam_state(optimizer, name, tensor.detach())
            st["step"] += 1
            step = st["step"]
        if r is None:  # the dense tensors are always clipped; the table's rows with clip_scope all only
            update_dense(weight, g, lr, scale, adam,
                         m if adam else weight, v if adam else weight, step, b1, b2, optimizer.eps)
        else:
            update_rows(weight, r, g, lr, scale if settings.clip_scope == "all" else 1.0, adam, m, v, step, b1, b2,
                        optimizer.eps)


def _progress_bar(enabled: bool, total: int, initial: int, name: str):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=name, unit="word", mininterval=30, disable=not enabled)


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
