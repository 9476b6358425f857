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


def _auto_in_a_fresh_interpreter(nodes) -> tuple[str, bool]:
    """resolve_device('auto') in a new process with GPU_DEVICE_NODES = nodes: (answer, torch imported)."""
    import os
    import subprocess
    from pathlib import Path

    code = ("import sys; import staticvec.device as d; d.GPU_DEVICE_NODES = tuple(sys.argv[1:]); "
            "print(d.resolve_device('auto'), 'torch' in sys.modules)")
    workflow = str(Path(__file__).resolve().parents[1] / "workflow")
    done = subprocess.run([sys.executable, "-c", code, *map(str, nodes)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": workflow})
    answer, imported = done.stdout.split()
    return answer, imported == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="device nodes are Linux's")
def test_auto_without_a_gpu_device_node_answers_without_importing_torch(tmp_path):
    assert _auto_in_a_fresh_interpreter([tmp_path / "nvidiactl"]) == ("cpu", False)
    node = tmp_path / "nvidia0"
    node.touch()  # a node exists: torch is asked (and here sees no CUDA device, or does)
    pytest.importorskip("torch")
    import torch

    assert _auto_in_a_fresh_interpreter([tmp_path / "nvidiactl", node]) == (
        "cuda" if torch.cuda.is_available() else "cpu", True)
