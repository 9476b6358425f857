"""Where torch work runs and in which precision: the one answer every stage gives to ``--device
auto|cpu|cuda[:N]``, and the one dtype policy (``auto``: bf16 where the machine computes it fast) of the
teacher passes and the tagger."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from staticvec.errors import StaticvecError


# The device nodes through which a GPU reaches torch on Linux: NVIDIA's driver, WSL2's GPU
# paravirtualisation, ROCm (torch.cuda is HIP there). Without any of them torch sees no CUDA device.
GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", "/dev/kfd")


def no_gpu_device_node() -> bool:
    """True on a Linux machine that has none of :data:`GPU_DEVICE_NODES` (False elsewhere: unknown)."""
    return sys.platform.startswith("linux") and not any(os.path.exists(node) for node in GPU_DEVICE_NODES)


def resolve_device(device: str = "auto") -> str:
    """``auto``: ``cuda`` when torch sees a CUDA device, else ``cpu`` (also without torch installed);
    ``cuda``/``cuda:N`` without CUDA is an error rather than a silent CPU run.

    On a Linux machine without a GPU device node ``auto`` answers ``cpu`` without importing torch:
    that import (1.2-1.7 s) was most of the start-up of the jobs that need no torch (GloVe's numba
    engine, 69 jobs of the default run). Where torch is loaded already it is asked."""
    if device == "auto":
        if "torch" not in sys.modules and no_gpu_device_node():
            return "cpu"
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


# CPU flags (``/proc/cpuinfo``) of native bf16 arithmetic: AVX512-BF16 (Cooper Lake, Zen 4/5) and AMX
# (Sapphire Rapids and later). Without them bf16 is emulated and slower than fp32.
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
DTYPES = ("auto", "float32", "bfloat16", "float16")


def cpu_flags(path: str | os.PathLike = "/proc/cpuinfo") -> set[str] | None:
    """The CPU's feature flags (the first ``flags`` line of ``/proc/cpuinfo``); None if unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        return None
    return None


def cpu_native_bf16(flags: set[str] | None = None) -> tuple[bool, str]:
    """Whether the CPU computes bf16 natively, and why we think so (for the logs and the manifest).

    ``flags`` (tests inject them) default to ``/proc/cpuinfo``'s; where that is unreadable (macOS),
    torch's own CPU probe decides.
    """
    if flags is None:
        flags = cpu_flags()
    if flags is not None:
        found = [f for f in BF16_CPU_FLAGS if f in flags]
        return (True, "cpu flags " + "+".join(found)) if found else (False, "no avx512_bf16/amx_bf16 cpu flag")
    try:  # pragma: no cover - platforms without /proc/cpuinfo
        import torch

        if torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported():
            return True, "torch cpu probe: avx512_bf16/amx"
    except Exception:  # noqa: BLE001 - private API: absent in some builds
        pass
    return False, "no native bf16 found"  # pragma: no cover


# bf16 weights are chosen on a CPU only where a bf16 matmul of the teacher's shape runs at least this much
# faster than fp32: a native bf16 flag is necessary but not sufficient (Zen 5: 2.9x; an Intel Xeon with
# avx512_bf16 and no AMX: 0.7x, benchmarks/README.md).
BF16_MIN_SPEEDUP = 1.15


def bf16_matmul_speedup(threads: int | None = None, repeats: int = 5) -> float:
    """fp32 time / bf16 time of a (2048 × 384) · (384 × 1536) matmul, the shape of a MiniLM/BERT
    feed-forward layer, best of ``repeats`` after a warm-up (about 0.1 s)."""
    import time

    import torch

    old = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        g = torch.Generator().manual_seed(0)
        x = torch.randn(2048, 384, generator=g)
        w = torch.randn(1536, 384, generator=g)
        best = {}
        for dtype in (torch.float32, torch.bfloat16):
            a, b = x.to(dtype), w.to(dtype)
            with torch.inference_mode():
                torch.nn.functional.linear(a, b)
                times = []
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    for _ in range(4):
                        torch.nn.functional.linear(a, b)
                    times.append(time.perf_counter() - t0)
            best[dtype] = min(times)
        return best[torch.float32] / best[torch.bfloat16]
    finally:
        torch.set_num_threads(old)


def measured_bf16_speedup(cache_dir: str | os.PathLike | None = None) -> float:
    """:func:`bf16_matmul_speedup` on this machine, measured once and cached (``~/.cache/staticvec``,
    keyed by CPU model, flags, torch version and thread count), so every teacher job of a run takes the
    same decision."""
    import hashlib
    import json
    import platform

    import torch

    from staticvec.files import write_json

    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        model = platform.processor()
    key = hashlib.sha256(json.dumps([model, sorted(cpu_flags() or []), torch.__version__,
                                     torch.get_num_threads()]).encode()).hexdigest()[:16]
    root = Path(cache_dir or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "staticvec"
    path = root / f"bf16-speedup-{key}.json"
    try:
        return float(json.loads(path.read_text())["speedup"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    speedup = bf16_matmul_speedup()
    try:
        write_json(path, {"speedup": round(speedup, 3), "cpu": model, "torch": torch.__version__,
                          "threads": torch.get_num_threads()})
    except OSError:  # a read-only home: measure again next time
        pass
    return round(speedup, 3)


def resolve_dtype(device: str, dtype: str = "auto", flags: set[str] | None = None,
                  speedup: float | None = None, what: str = "teacher dtype") -> tuple[str, str]:
    """The compute dtype of a model's passes (the teacher's, the tagger's), as ``(name, reason)``; ``what``
    names the setting in errors.

    ``auto``: on CUDA bf16 where the card has it, else fp16 (autocast); on a CPU bf16 weights where it
    computes bf16 natively *and* a bf16 matmul measures at least ``BF16_MIN_SPEEDUP`` times fp32's speed
    (``speedup``: tests inject it; else measured once per machine), else float32. ``float32``,
    ``bfloat16`` and ``float16`` (CUDA only) force one.
    """
    if dtype not in DTYPES:
        raise StaticvecError(f"{what} {dtype!r}: expected one of {', '.join(DTYPES)}")
    cuda = device.startswith("cuda")
    if dtype != "auto":
        if dtype == "float16" and not cuda:
            raise StaticvecError(f"{what} float16 is for CUDA only (CPUs compute it slower than fp32): "
                                 "use bfloat16 or float32")
        return dtype, "forced"
    if cuda:
        import torch

        return ("bfloat16", "cuda bf16") if torch.cuda.is_bf16_supported() else ("float16", "cuda without bf16")
    native, why = cpu_native_bf16(flags)
    if not native:
        return "float32", why
    if speedup is None:
        speedup = measured_bf16_speedup()
    fast = speedup >= BF16_MIN_SPEEDUP
    return ("bfloat16" if fast else "float32"), (f"{why}; bf16 matmul measured {speedup:.2f}x fp32 "
                                                 f"({'>=' if fast else '<'} {BF16_MIN_SPEEDUP})")


def default_threads() -> int:
    """The cores this process may use (Snakemake/SLURM restrict the affinity mask)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def deterministic_torch(device: str):
    """torch's deterministic kernels within the block, the previous setting restored after it.

    Why: on CPU, torch adds the backward of indexing a tensor (``w[ids]``: ``index_put_`` with accumulate) with
    atomic float additions from every thread once a batch holds 32,768 elements or more; the order of the additions
    to a shared row, hence the last bits of the result, then changes from run to run (the Tokenlearn library's
    training loop does this on a batch of 256 texts whose longest has 128 tokens or more: not the default's
    sentences of at most 40 words, but longer ones of a corpus of one's own). Deterministic mode adds them in order
    on one thread. On a GPU the ops without a deterministic kernel warn instead of failing (``warn_only``), and cuBLAS
    gets the workspace setting its deterministic mode needs, unless one is set already.
    """
    import torch

    before = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    gpu = device.startswith("cuda")  # (a resolved device: resolve_device's cpu or cuda[:N])
    if gpu:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=gpu)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
