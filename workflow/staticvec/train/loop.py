"""The students' training loop, with checkpoints: :func:`train` runs a :class:`~staticvec.train.student.Student`
over the blocks of a feature source (:mod:`staticvec.train.teacher_blocks`).

For each block of teacher features (a stored part: ~4k sentences) the model yields batches
(:class:`~staticvec.train.student.Batch`), each a set of table rows and tensors; the loop gathers the
rows (unique, as leaf tensors), computes the model's loss, back-propagates, clips the gradient norm
(of the dense tensors, or of everything the step touches), applies the optimizer
(:mod:`staticvec.train.optimizer`) with the (linearly decaying) learning rate, and keeps the loss
curve, throughput and the time split between teacher/loading, batching and the static update.
Checkpoints are written atomically at block boundaries (every ``checkpoint_every`` seconds) with
every tensor, the optimizer state, the random generator and the position, so a resumed run equals
an uninterrupted one bit for bit (tests/test_students_core.py).

All randomness (initialisation aside) comes from ONE numpy generator owned by the loop and handed
to the model per block, in a fixed order, so results depend only on the seed and the data.

Two engines run the same steps (``engine`` of each method; tests/test_students_fast.py): ``autograd``
(the torch loop above; CUDA runs use it) and ``fast`` (the CPU default, for the methods that have
it): the model prepares a block's batches as flat arrays with the same draws (``prepare_block``) and
runs its steps in numba kernels with hand-written gradients (``run_block``; the shared kernels:
:mod:`staticvec.train.kernels`), equal to autograd up to float rounding and repeatable bit for bit
for a thread count.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from staticvec.errors import StaticvecError
from staticvec.files import torch_save
from staticvec.train.optimizer import Optimizer, apply_gradients, learning_rate
from staticvec.train.student import Batch, Student

log = logging.getLogger(__name__)

ENGINES = ("fast", "autograd")


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
    clip_scope: str = "all"  # all | dense (see optimizer.apply_gradients)
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


def save_checkpoint(path, model: Student, optimizer: Optimizer, rng: np.random.Generator, state: LoopState,
                    fingerprint: str) -> None:

    payload = {
        "fingerprint": fingerprint,
        "tables": {k: v.detach().cpu() for k, v in model.tables.items()},
        "dense": {k: v.detach().cpu() for k, v in model.dense.items()},
        "optimizer": {**optimizer.state_dict(), "state": {
            k: {n: (t.cpu() if hasattr(t, "cpu") else t) for n, t in st.items()} for k, st in optimizer.state.items()}},
        "rng": rng.bit_generator.state,
        "state": asdict(state),
    }
    torch_save(payload, path)  # the same bytes for the same payload (staticvec.files.torch_save)


def load_checkpoint(path, model: Student, optimizer: Optimizer, rng: np.random.Generator, fingerprint: str,
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


def _gather(model: Student, batch: Batch):
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


def optimisation_step(model: Student, optimizer: Optimizer, batch: Batch, lr: float, clip_norm: float | None,
                      clip_scope: str = "all") -> float:
    """The autograd engine's step: loss, gradients (autograd on the gathered rows), then the clip and
    update (:func:`staticvec.train.optimizer.apply_gradients`); returns the loss."""
    import torch

    leaves, views = _gather(model, batch)
    for p in model.dense.values():
        p.grad = None
    loss = model.loss(batch, views, model.dense)
    loss.backward()
    table_grads = {name: (uniq, leaf.grad) for name, (uniq, leaf) in leaves.items()}
    dense_grads = {name: p.grad if p.grad is not None else torch.zeros_like(p) for name, p in model.dense.items()}
    apply_gradients(model, optimizer, table_grads, dense_grads, lr, clip_norm, clip_scope)
    for p in model.dense.values():
        p.grad = None
    return float(loss.detach())


def train(model: Student, source, settings: LoopSettings, seed: int, total_words: int | None = None,
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
    use_fast = settings.engine == "fast" and device == "cpu" and bool(model.supports_fast)
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
                   "teacher_or_loading_share": round(timing["teacher_or_loading_s"] / busy, 4) if busy else None,
                   # rates of this run (not results: timing is skipped when two runs are compared)
                   "throughput": {
                       "examples_per_s": round(state.examples / wall, 1) if wall else None,
                       "examples_per_update_s": round(state.examples / timing["update_s"], 1) if timing["update_s"] else None,
                       "words_per_s": round(state.words / wall, 1) if wall else None}},
        "device": device,
        "engine": "fast" if use_fast else "autograd",
    }


def _progress_bar(enabled: bool, total: int, initial: int, name: str):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=name, unit="word", mininterval=30, disable=not enabled)

