"""One answer to --device for every stage."""

import sys

import pytest

from staticvec.device import resolve_device
from staticvec.errors import StaticvecError


def test_auto_is_cuda_only_where_torch_sees_one(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu" and resolve_device() == "cpu"
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(StaticvecError, match="cuda:1"):
        resolve_device("cuda:1")  # never a silent CPU run when a GPU was asked for
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda:1") == "cuda:1"


def test_auto_without_torch_is_cpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert resolve_device("auto") == "cpu"
