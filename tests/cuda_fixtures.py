"""The CUDA tests' device: each CUDA path against its CPU twin, marked ``cuda`` (``pytest -m cuda``).

They are skipped where torch sees no CUDA device. ``STATICVEC_CUDA_STANDIN=cpu`` runs them on the CPU
instead (``DEVICE`` is then ``cpu``): every line of them runs, comparing the CPU with itself. That is
the rehearsal of ``benchmarks/gpu_check.sh`` on a machine without a GPU (``gpu_check.sh --smoke``): a
test that would fail for its own sake (a typo, a wrong key, an import the GPU machine lacks) fails
there, not in the few minutes of a lent GPU.
"""

from __future__ import annotations

import contextlib
import os

import pytest
import torch

STANDIN = os.environ.get("STATICVEC_CUDA_STANDIN", "")
DEVICE = STANDIN or "cuda"
ON_GPU = DEVICE.startswith("cuda")
AVAILABLE = bool(STANDIN) or torch.cuda.is_available()

# the files holding tests marked `cuda`: benchmarks/gpu_check.sh runs these (tests/test_gpu_check.py
# checks that no other file has one, so a new CUDA test cannot be left out of the GPU run)
CUDA_TEST_FILES = (
    "tests/test_classification_model.py",
    "tests/test_glove_train.py",
    "tests/test_students_core.py",
    "tests/test_tagging_model.py",
    "tests/test_teacher_dtype.py",
    "tests/test_teacher_mlm_head.py",
)


def cuda_test(fn):
    """Mark a test ``cuda`` and skip it where there is no CUDA device (nor a stand-in)."""
    return pytest.mark.cuda(pytest.mark.skipif(not AVAILABLE, reason="needs a CUDA device")(fn))


@contextlib.contextmanager
def exact_float32():
    """fp32 matmuls and cuDNN convolutions/RNNs in full fp32, not TF32 (cuDNN's default is TF32, ~1e-3
    relative): a CPU-vs-CUDA comparison of an fp32 path then needs only fp32 rounding tolerances."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
