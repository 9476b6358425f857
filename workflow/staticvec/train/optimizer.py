"""The students' optimiser: SGD and Adam over named tensors, the learning-rate schedule and the
gradient-norm clip, for both engines (:func:`apply_gradients`: the autograd engine's torch
gradients; :func:`fast_update`: the fast engine's numpy gradients, through the shared kernels).

A sparse *table* is updated only on the rows a step touches, Adam lazily exactly as
``torch.optim.SparseAdam`` ("lazy Adam"); the dense tensors by their full gradient.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from staticvec.errors import StaticvecError
from staticvec.train.kernels import as_numpy, sq_norm, update_dense, update_rows

if TYPE_CHECKING:
    from staticvec.train.loop import LoopSettings
    from staticvec.train.student import Student

OPTIMIZERS = ("sgd", "adam")
LR_DECAYS = ("linear", "none")


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
            st = self.state_of(name, weight)
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

    def state_of(self, name: str, weight) -> dict:
        """Adam's state of tensor ``name``: its step count and moments (zeros at the first step)."""
        import torch

        st = self.state.get(name)
        if st is None:
            st = self.state[name] = {"step": 0, "exp_avg": torch.zeros_like(weight),
                                     "exp_avg_sq": torch.zeros_like(weight)}
        return st

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


def apply_gradients(model: Student, optimizer: Optimizer, table_grads: dict, dense_grads: dict, lr: float,
                    clip_norm: float | None, clip_scope: str = "all") -> None:
    """One autograd step's clip and update: ``table_grads`` name -> (unique rows, their gradients),
    ``dense_grads`` name -> the full gradient of ``model.dense[name]``.

    ``clip_scope``: ``all`` clips the total norm of every gradient of the step (the dense tensors
    and the batch's table rows: ``torch.nn.utils.clip_grad_norm_`` over all parameters, as the
    released code does); ``dense`` clips only the dense tensors' (the projection), leaving the
    table rows their word2vec-style per-occurrence updates.
    """
    import torch

    grads = {name: g for name, (_, g) in table_grads.items()}
    if clip_norm:
        clipped = [*dense_grads.values()] + ([*grads.values()] if clip_scope == "all" else [])
        total = torch.sqrt(sum((g.float() ** 2).sum() for g in clipped)) if clipped else torch.zeros(())
        scale = clip_norm / (total + 1e-6)
        if scale < 1:  # torch.nn.utils.clip_grad_norm_'s rule
            dense_grads = {k: g * scale for k, g in dense_grads.items()}
            if clip_scope == "all":
                grads = {k: g * scale for k, g in grads.items()}
    for name, (uniq, _) in table_grads.items():
        optimizer.update(name, model.tables[name], grads[name], lr, rows=uniq)
    for name, p in model.dense.items():
        optimizer.update(name, p.data, dense_grads[name], lr)


def adam_state(optimizer: Optimizer, name: str, weight):
    """The optimizer's state of ``name`` and its moments as numpy views (the fast engine's kernels update them)."""
    st = optimizer.state_of(name, weight)
    return st, st["exp_avg"].numpy(), st["exp_avg_sq"].numpy()


_NO_STATE = np.zeros((1, 1), np.float32)


def fast_update(model: Student, optimizer: Optimizer, settings: LoopSettings, lr: float, table: str, rows: np.ndarray,
                grads: np.ndarray, dense_grads: dict) -> None:
    """One step's clipping and update, as :func:`apply_gradients` does it, from numpy gradients.

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

