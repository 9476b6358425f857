"""Where torch work runs: the one answer every stage gives to ``--device auto|cpu|cuda[:N]``."""

from __future__ import annotations

from staticvec.errors import StaticvecError


def resolve_device(device: str = "auto") -> str:
    """``auto``: ``cuda`` when torch sees a CUDA device, else ``cpu`` (also without torch installed);
    ``cuda``/``cuda:N`` without CUDA is an error rather than a silent CPU run."""
    if device == "auto":
        try:
            import torch
        except ImportError:
            return "cpu"
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise StaticvecError(f"device {device!r} requested but torch sees no CUDA device (use 'auto' or 'cpu')")
    return device
