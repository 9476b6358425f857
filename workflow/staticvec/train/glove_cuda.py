"""GloVe's CUDA engine: one fused kernel per batch of entries (``cuda_engine: kernel``, the default on CUDA).

The update is glove.c's, entry by entry (:mod:`staticvec.train.glove`'s numba engine computes the same): a worker
(one warp, 32 lanes) takes an entry, computes ``diff = w_i·w̃_j + b_i + b̃_j − log X_ij`` (each lane a partial dot
over the components it owns, summed through shared memory), weights it, and applies AdaGrad in place to both
vectors, both biases and their accumulators; the workers run lock-free over the shared parameters (Hogwild, as
glove.c's threads and the CPU engine's). No per-entry Python, no gradient tensor: each parameter is read and written
once per entry, from and to its place (the second pass over a row re-reads what the lane has just read: cached).

Why numba.cuda and not a torch custom op: numba is already the project's compiler (the CPU engine), the kernel is the
CPU kernel's loop written for a warp, and numba ships a CUDA simulator that runs the very same kernel source on the
CPU, thread by thread (``NUMBA_ENABLE_CUDASIM``): under ``STATICVEC_CUDA_STANDIN=cpu`` (tests/cuda_fixtures.py) the
CUDA tests execute this kernel's code path, barriers and shared memory included, not a stand-in engine. A torch
extension would need a C++/CUDA toolchain at install time and has no such simulator; Triton has an interpreter but no
lock-free per-entry schedule (a program's tile stores its rows at once). The GPU image holds numba-cuda and the CUDA
toolkit it compiles with.

Order of the updates: the same visiting order as the CPU engine, the shuffled copy's blocks of ``_BLOCK`` entries in
the seeded order of each iteration (``shuffle: copy``), or each permuted chunk in turn (``shuffle: chunks``);
consecutive positions of that order go to consecutive workers. With one worker the updates are the CPU engine's on
one thread, in the same order (the tests compare both, and against glove.c's loop); with the whole device (the
default: every warp the device holds resident) each worker sees the others' updates as glove.c's threads do, only
with thousands of workers instead of 8 (``gpu_workers`` lowers it). The old mini-batch torch engine stays as
``cuda_engine: torch``.

Bandwidth limit (what the benchmark ``benchmarks/glove_kernel.py --cuda`` prints beside the measured entries/s):
an update reads and writes both vectors and both accumulator rows (4 rows of ``d`` float32, each read and written)
and the two biases and their accumulators (4 float32, read and written), and reads the entry (12 bytes)::

    bytes per entry = 2 · 4 · 4·d  +  2 · 4 · 4  +  12  =  32·d + 44      (9,644 bytes at d = 300)
    entries/s limit = memory bandwidth / (32·d + 44)                     (H200, 4.8 TB/s: 498M entries/s at 300-d)

It is an upper bound for the DRAM traffic of rows that miss the caches (frequent words' rows stay in L2 and cost
less; rows are read in 128-byte lines, a 300-d row is 1,200 bytes: 10 lines, little waste).

Memory: the parameters and accumulators live on the device (``2 · 2V · (d + 1) · 4`` bytes). The entries: with
``shuffle: copy`` the whole shuffled copy is uploaded once when it fits in ``shuffle_memory_gb`` (12 bytes an
entry), and each iteration only sends its block order; a larger store is gathered on the host in pieces of that
size, in the visiting order, each iteration. With ``shuffle: chunks`` each permuted chunk is uploaded in turn.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

from staticvec.errors import StaticvecError

ENTRY_BYTES = 12  # int32 i, int32 j, float32 x: the store's record


def bytes_per_entry(dim: int) -> int:
    """Bytes an update moves (module docstring): 4 rows of ``dim`` float32 and 4 scalars, read and written, and the
    entry's 12 bytes."""
    return 2 * 4 * 4 * dim + 2 * 4 * 4 + ENTRY_BYTES


def entries_per_s_limit(dim: int, bandwidth_bytes_per_s: float) -> float:
    """The memory-bandwidth limit of the kernel at ``dim``: bandwidth / bytes per entry."""
    return bandwidth_bytes_per_s / bytes_per_entry(dim)


def cuda_module(device: str):
    """numba.cuda for ``device``: the real CUDA target for ``cuda``/``cuda:N``, numba's CUDA simulator for ``cpu``
    (the CUDA stand-in of the tests). The choice is numba's, once per process, when ``numba.cuda`` is first imported:
    a process that imported it for the other kind cannot switch (a clear error says so)."""
    from numba.core import config

    simulate = not device.startswith("cuda")
    if "numba.cuda" not in sys.modules and simulate and not config.ENABLE_CUDASIM:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        config.reload_config()
    from numba import cuda

    if bool(config.ENABLE_CUDASIM) != simulate:
        want = "numba's CUDA simulator" if simulate else "a CUDA device"
        raise StaticvecError(
            f"GloVe's CUDA kernel on device {device!r} needs {want}, but numba.cuda was already loaded "
            f"{'with' if config.ENABLE_CUDASIM else 'without'} the simulator in this process "
            f"(NUMBA_ENABLE_CUDASIM={os.environ.get('NUMBA_ENABLE_CUDASIM', '')!r}); run it in a fresh process, "
            "or use cuda_engine: torch")
    if simulate:
        allocate_simulated_shared_arrays_once()
    if not simulate and device != "cuda":
        cuda.select_device(int(device.split(":", 1)[1]))
    return cuda


_SHARED_ARRAY_LOCK = threading.Lock()


def allocate_simulated_shared_arrays_once() -> None:
    """Make numba's simulator give every thread of a block the same ``cuda.shared.array``, as the device does.

    The simulator (numba 0.68, ``FakeCUDAShared.array``) allocates a block's shared array when its first thread asks,
    with an unlocked look-up then insert keyed by the calling line: lanes that ask at once can each get an array of
    their own, and the kernel's sums then add partials no lane of that group wrote. CI met it once
    (``test_one_step_is_adagrad_on_the_autograd_gradient[0.7-True-kernel]``: lanes {0, 1} and {2, 3} stepped with two
    different dots); a 4-lane probe kernel hit it in 2 of 200 launches. This replaces the method by the same look-up
    under a lock (the key is the caller's file and line, as numba's), once per process."""
    from numba.core import types
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    from numba.np import numpy_support

    if getattr(FakeCUDAShared.array, "allocates_once", False) or "_allocations" not in vars(FakeCUDAShared(0)):
        return  # already done, or a simulator whose allocation is not numba 0.68's (left as it is)
    unlocked = FakeCUDAShared.array

    def array(self, shape, dtype):
        if shape == 0:  # dynamic shared memory: one buffer for the launch already, no allocation to race
            return unlocked(self, shape, dtype)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with _SHARED_ARRAY_LOCK:
            found = self._allocations.get(key)
            if found is None:
                found = self._allocations[key] = np.empty(shape, dtype)
        return found

    array.allocates_once = True
    FakeCUDAShared.array = array


def resident_workers(cuda) -> int:
    """Workers (warps) that fill the device: its multiprocessors times the warps one holds (2,048 threads)."""
    from numba.core import config

    if config.ENABLE_CUDASIM:  # the simulator runs a block's threads as Python threads: a few workers
        return 8
    device = cuda.get_current_device()
    return int(device.MULTIPROCESSOR_COUNT) * (int(device.MAX_THREADS_PER_MULTIPROCESSOR) // 32)


class FusedGlove:
    """The parameters on the device and the kernel's launches over entries in a given order."""

    def __init__(self, state, device: str, workers: int | None = None):
        self.cuda = cuda_module(device)
        from staticvec.train import glove_cuda_kernel as kernel

        self.kernel = kernel
        self.vocab_size = state.vocab_size
        self.W, self.b, self.gW, self.gb = (self.cuda.to_device(np.ascontiguousarray(a, np.float32))
                                            for a in (state.W, state.b, state.gW, state.gb))
        self.workers = int(workers or resident_workers(self.cuda))
        self.blocks = -(-self.workers // kernel.WARPS_PER_BLOCK)  # the last block's spare warps get no entry
        self.costs = self.cuda.to_device(np.zeros(self.workers, np.float64))
        self.counts = self.cuda.to_device(np.zeros(self.workers, np.int64))

    def entries(self, records) -> tuple:
        """Records (the store's dtype) as device arrays i, j, x."""
        records = np.asarray(records)
        return tuple(self.cuda.to_device(np.ascontiguousarray(records[k])) for k in ("i", "j", "x"))

    def run(self, entries, block_order: np.ndarray, span: int, x_max: float, alpha: float, lr: float,
            bias_scale: float, clip: float) -> tuple[float, int]:
        """One launch over ``entries`` (device i, j, x) in the order of ``block_order`` (blocks of ``span``
        entries); returns (cost, entries updated)."""
        ci, cj, cx = entries
        if len(block_order) == 1:  # one block: no positions past the entries (a short last block wastes < span)
            span = min(int(span), len(ci))
        order = self.cuda.to_device(np.ascontiguousarray(block_order, np.int64))
        positions = len(block_order) * int(span)
        rounds = -(-positions // self.workers)
        # the simulator's threads hand the GIL to each other at every barrier: Python's default switch interval
        # (5 ms) would make each barrier cost milliseconds (13x slower tests)
        switch = sys.getswitchinterval()
        if self.kernel.SIMULATED:
            sys.setswitchinterval(1e-5)
        try:
            self.kernel.fused_epoch[self.blocks, self.kernel.WARPS_PER_BLOCK * self.kernel.LANES](
                ci, cj, cx, order, int(span), self.workers, int(rounds),
                self.W, self.b, self.gW, self.gb, self.vocab_size, float(x_max), float(alpha), float(lr),
                float(bias_scale), float(clip), self.costs, self.counts)
        finally:
            sys.setswitchinterval(switch)
        costs, counts = self.costs.copy_to_host(), self.counts.copy_to_host()
        return float(costs.sum()), int(counts.sum())

    def to_host(self) -> tuple[np.ndarray, ...]:
        return tuple(a.copy_to_host() for a in (self.W, self.b, self.gW, self.gb))


def run_kernel(state, records, cfg, device: str, on_iteration, workers: int | None = None):
    """Iterate the fused kernel (module docstring): ``train_glove``'s engine ``kernel``."""
    from staticvec.train.glove import _BLOCK, _block_order, shuffled_chunks

    engine = FusedGlove(state, device, workers or cfg.gpu_workers or None)
    bias_scale = cfg.lr if cfg.bias_lr_scaled else 1.0
    clip = float(cfg.grad_clip) if cfg.grad_clip else 0.0
    hyper = (float(cfg.x_max), float(cfg.alpha), float(cfg.lr), float(bias_scale), clip)
    n = len(records)
    budget = max(_BLOCK, int(cfg.shuffle_memory_gb * 2**30 // ENTRY_BYTES) // _BLOCK * _BLOCK)  # entries on the device
    resident = engine.entries(records) if cfg.shuffle == "copy" and n <= budget else None

    def publish():
        state.W, state.b, state.gW, state.gb = engine.W, engine.b, engine.gW, engine.gb  # device arrays mid-run

    while state.iteration < cfg.iterations:
        cost, seen = 0.0, 0
        if cfg.shuffle == "copy":
            order = _block_order(n, cfg.seed, state.iteration)
            if resident is not None:
                cost, seen = engine.run(resident, order, _BLOCK, *hyper)
            else:  # pieces of the visiting order, gathered on the host: the same order, piece after piece
                per = budget // _BLOCK
                for start in range(0, len(order), per):
                    blocks = order[start : start + per]
                    part = np.concatenate([records[k * _BLOCK : (k + 1) * _BLOCK] for k in blocks])
                    c, s = engine.run(engine.entries(part), np.arange(-(-len(part) // _BLOCK)), _BLOCK, *hyper)
                    cost, seen = cost + c, seen + s
        else:
            from staticvec.train.glove import chunk_records

            chunk = chunk_records(cfg, records.dtype.itemsize)
            for _, part in shuffled_chunks(records, chunk, cfg.seed, state.iteration, workers=cfg.prepare_threads):
                c, s = engine.run(engine.entries(part), np.arange(-(-len(part) // _BLOCK)), _BLOCK, *hyper)
                cost, seen = cost + c, seen + s
        publish()
        on_iteration(cost / max(seen, 1))
    state.W, state.b, state.gW, state.gb = engine.to_host()
