"""SGD and Adam exactly as ``torch.optim`` computes them on CPU, without ``torch.optim.Optimizer``.

Any method of a ``torch.optim.Optimizer`` imports ``torch._dynamo`` on its first call (over a
second of CPU: a tenth of a laptop tagger run). These two classes do the same arithmetic as
``torch.optim.SGD`` / ``torch.optim.Adam`` with their defaults on CPU (the single-tensor path:
L2 weight decay added to the gradient; SGD momentum buffer started at the first gradient, no
dampening or Nesterov; Adam's bias corrections on Python floats), so the parameters after any
number of steps are bit for bit those of torch's (tests/test_tagging_model.py). Only what the tagger
and the classifier use: ``param_groups[i]["lr"]`` (set per epoch), ``zero_grad`` and ``step``.
"""

from __future__ import annotations

import torch


class _Light:
    def __init__(self, params, lr: float, weight_decay: float):
        self.params = [p for p in params]
        self.param_groups = [{"params": self.params, "lr": float(lr), "weight_decay": float(weight_decay)}]
        self.state: dict[int, dict] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def _grad(self, p: torch.Tensor, weight_decay: float) -> torch.Tensor:
        return p.grad.add(p, alpha=weight_decay) if weight_decay != 0 else p.grad


class SGD(_Light):
    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        super().__init__(params, lr, weight_decay)
        self.momentum = float(momentum)

    @torch.no_grad()
    def step(self) -> None:
        group = self.param_groups[0]
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            grad = self._grad(p, group["weight_decay"])
            if self.momentum != 0:
                state = self.state.setdefault(i, {})
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.clone(grad).detach()
                else:
                    state["momentum_buffer"].mul_(self.momentum).add_(grad)
                grad = state["momentum_buffer"]
            p.add_(grad, alpha=-group["lr"])


class Adam(_Light):
    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(params, lr, weight_decay)
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps = float(eps)

    @torch.no_grad()
    def step(self) -> None:
        """One Adam step over every parameter that has a gradient, as ``torch._foreach_*`` calls: on
        CPU each is the same per-tensor operation (the single-tensor path's), dispatched once for all
        the parameters instead of once per parameter from Python (a tagger step has ~15 of them)."""
        group = self.param_groups[0]
        beta1, beta2 = self.betas
        todo = [(i, p) for i, p in enumerate(self.params) if p.grad is not None]
        by_step: dict[float, list] = {}
        for i, p in todo:
            state = self.state.setdefault(i, {})
            if not state:
                state["step"] = 0.0
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["step"] += 1
            by_step.setdefault(state["step"], []).append((i, p))
        for step, members in by_step.items():  # one group unless some parameter missed a step
            params = [p for _, p in members]
            grads = [p.grad for p in params]
            if group["weight_decay"] != 0:
                grads = torch._foreach_add(grads, params, alpha=group["weight_decay"])
            exp_avgs = [self.state[i]["exp_avg"] for i, _ in members]
            exp_avg_sqs = [self.state[i]["exp_avg_sq"] for i, _ in members]
            torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
            torch._foreach_mul_(exp_avg_sqs, beta2)
            torch._foreach_addcmul_(exp_avg_sqs, grads, grads, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = group["lr"] / bias_correction1
            denom = torch._foreach_sqrt(exp_avg_sqs)
            torch._foreach_div_(denom, bias_correction2**0.5)
            torch._foreach_add_(denom, self.eps)
            torch._foreach_addcdiv_(params, exp_avgs, denom, value=-step_size)
