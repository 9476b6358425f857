"""GloVe (Pennington et al. 2014): weighted least squares on log co-occurrences, AdaGrad.

Objective, over the non-zero entries of X::

    J = Σ_ij f(X_ij) (w_i·w̃_j + b_i + b̃_j − log X_ij)² / 2,   f(x) = min(1, (x / x_max)^α)

Optimiser: AdaGrad as in the reference C code (``glove.c``): every parameter has an
accumulator that starts at 1 and adds the square of its *learning-rate-scaled* gradient;
a step is ``lr·g / sqrt(accumulator)`` with the accumulator as it was before the step, so
the first step equals ``lr·g``. Parameters start as ``(U[0,1) − 0.5) / dim``. The output
vector of word i is ``w_i + w̃_i``.

The two known variants of the reference code are options:

* ``bias_lr_scaled`` — the 2014 code (and SemGloVe's copy) scales the bias gradients by the
  learning rate like the vectors' (True); the current code (since the gradient-clipping
  commit) does not, so biases step ``g / sqrt(1 + Σ g²)`` (False).
* ``grad_clip`` — the current code clips each vector gradient component to ±100 before
  scaling; the 2014 code does not clip (None).

Two engines compute the same objective and update:

* CPU (numba): the reference algorithm, in float32 where glove.c computes in double. Entries
  are shuffled once (seeded), cut into blocks, and each iteration visits the blocks in a fresh
  seeded order; threads update the shared parameters lock-free (Hogwild, as ``glove.c``). One
  thread is fully deterministic.
* CUDA kernel (``cuda_engine: kernel``, the default on CUDA; :mod:`staticvec.train.glove_cuda`): the CPU
  engine's per-entry update as one fused numba.cuda kernel, a warp an entry, thousands of warps lock-free
  over the same visiting order (one worker: the CPU engine's updates exactly). On ``cpu`` it runs in
  numba's CUDA simulator (the CUDA tests' stand-in).
* torch (``cuda_engine: torch``, the engine before the kernel; CUDA, or CPU for testing): the same
  per-entry updates in mini-batches — each entry's gradient is computed from the parameters at the start
  of its batch, accumulators add every entry's squared scaled gradient, and the steps of a row's entries
  are summed.

Memory is bounded as in the C tools: the shuffled entries live in a file (GloVe's
``shuffle`` step, done out of core by :func:`shuffle_store`) that is memory-mapped; the
process holds the parameters, their accumulators and at most one chunk of entries.

Disk: that shuffled copy is as large as the store. ``shuffle: chunks`` trains without it (for
stores of hundreds of GB at paper scale): each iteration reads the sorted store in runs of
``_SOURCE_BLOCK`` records taken in a fresh seeded order, gathers them into chunks of
``shuffle_memory_gb`` and permutes each chunk in memory before the same kernel runs over it. Every
entry is still visited once an iteration, in an order uniform within a chunk; the records of one
run of the store (one word's contexts, mostly) share a chunk. It changes the order of the updates,
so its vectors differ from ``copy``'s (GloVe's own ``shuffle`` step, the default).

Training checkpoints its state (parameters, accumulators, iteration, losses) every
``checkpoint_every`` iterations; a restarted run resumes from it and, on the deterministic
path, ends exactly where an uninterrupted run does.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import math
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
from numba import prange

from staticvec.background import made_ahead
from staticvec.device import resolve_device
from staticvec.errors import StaticvecError
from staticvec.files import atomic_path
from staticvec.prefetch import prefetch_row

log = logging.getLogger(__name__)

_BLOCK = 4096  # entries per block of the shuffled order (the unit of thread scheduling)
_SOURCE_BLOCK = 1 << 16  # shuffle "chunks": records per contiguous read of the sorted store (768 KB)
SHUFFLES = ("copy", "chunks")  # GloVe's shuffled copy of the store | chunks of it permuted in memory, no copy
CUDA_ENGINES = ("kernel", "torch")  # the fused numba.cuda kernel (glove_cuda.py) | the mini-batch torch engine
ENGINES = ("numba", *CUDA_ENGINES)


@dataclass
class GloveConfig:
    dim: int = 300
    iterations: int = 100  # the paper's text; its released script (and SemGloVe's) uses 15
    x_max: float = 10.0
    alpha: float = 0.75
    lr: float = 0.05
    bias_lr_scaled: bool = True  # 2014 code; current stanfordnlp/GloVe: False
    grad_clip: float | None = None  # current stanfordnlp/GloVe: 100.0
    seed: int = 1
    threads: int = 1
    device: str = "cpu"  # cpu (numba) | cuda (cuda_engine) | auto
    batch_size: int = 1 << 16  # torch engine only
    cuda_engine: str = "kernel"  # the engine on CUDA: kernel (fused, glove_cuda.py) | torch (mini-batches)
    gpu_workers: int = 0  # kernel engine: warps updating at once (0: every warp the device holds resident)
    checkpoint_every: int = 0  # iterations; 0 = never
    shuffle_memory_gb: float = 2.0  # memory of the out-of-core shuffle (and of a chunk)
    shuffle: str = "copy"  # copy: GloVe's shuffled copy of the store | chunks: no copy (module docstring)
    prepare_threads: int = 1  # shuffle chunks, CPU: threads preparing the next chunks beside the kernel (speed only)

    def __post_init__(self):
        if self.shuffle not in SHUFFLES:
            raise StaticvecError(f"GloVe: shuffle must be one of {', '.join(SHUFFLES)}, not {self.shuffle!r}")
        if int(self.prepare_threads) < 1:
            raise StaticvecError(f"GloVe: prepare_threads must be at least 1, not {self.prepare_threads!r}")
        if self.cuda_engine not in CUDA_ENGINES:
            raise StaticvecError(f"GloVe: cuda_engine must be one of {', '.join(CUDA_ENGINES)}, not {self.cuda_engine!r}")

    def fingerprint(self, store_checksum: str) -> str:
        """Identifies a run whose checkpoint may be resumed: what changes the result."""
        keys = {k: v for k, v in dataclasses.asdict(self).items()
                if k not in ("iterations", "checkpoint_every", "threads", "shuffle_memory_gb", "prepare_threads",
                             "cuda_engine", "gpu_workers")}  # the engine is the fingerprint's suffix
        if keys["shuffle"] == "copy":
            del keys["shuffle"]  # the checkpoints written before the option existed stay resumable
        else:  # the chunks' size sets which records share a permutation
            keys["shuffle_memory_gb"] = self.shuffle_memory_gb
        keys["store"] = store_checksum
        return hashlib.sha256(json.dumps(keys, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class GloveParams:
    """GloVe's hyper-parameters as a glove/semglove entry gives them (config ``methods.glove|semglove``
    less the workflow's keys; ``staticvec train glove --params``). Defaults: :class:`GloveConfig`'s."""

    dim: int = GloveConfig.dim
    iterations: int = GloveConfig.iterations
    x_max: float = GloveConfig.x_max
    alpha: float = GloveConfig.alpha
    lr: float = GloveConfig.lr
    bias_lr_scaled: bool = GloveConfig.bias_lr_scaled
    grad_clip: float | None = GloveConfig.grad_clip
    deterministic: bool = True  # same seed, same vectors: one thread (several threads: Hogwild updates)
    gpu_batch_size: int = GloveConfig.batch_size  # torch engine only
    cuda_engine: str = GloveConfig.cuda_engine
    gpu_workers: int = GloveConfig.gpu_workers
    checkpoint_every: int = GloveConfig.checkpoint_every
    shuffle_memory_gb: float = GloveConfig.shuffle_memory_gb
    shuffle: str = GloveConfig.shuffle
    prepare_threads: int = GloveConfig.prepare_threads

    def config(self, seed: int, threads: int, device: str) -> GloveConfig:
        """The trainer's configuration: these parameters and the job's (one thread when deterministic)."""
        return GloveConfig(dim=self.dim, iterations=self.iterations, x_max=self.x_max, alpha=self.alpha, lr=self.lr,
                           bias_lr_scaled=self.bias_lr_scaled, grad_clip=self.grad_clip, seed=seed,
                           threads=1 if self.deterministic else threads, device=device,
                           batch_size=self.gpu_batch_size, checkpoint_every=self.checkpoint_every,
                           shuffle_memory_gb=self.shuffle_memory_gb, shuffle=self.shuffle,
                           prepare_threads=self.prepare_threads, cuda_engine=self.cuda_engine,
                           gpu_workers=self.gpu_workers)


@dataclass
class GloveState:
    """Everything a run needs to continue: parameters, AdaGrad accumulators, progress."""

    W: np.ndarray  # (2V, dim): rows 0..V-1 word vectors w, rows V..2V-1 context vectors w̃
    b: np.ndarray  # (2V,) biases b then b̃
    gW: np.ndarray  # accumulators of W
    gb: np.ndarray  # accumulators of b
    iteration: int = 0
    losses: list = dataclasses.field(default_factory=list)

    @property
    def vocab_size(self) -> int:
        return self.W.shape[0] // 2

    def vectors(self) -> np.ndarray:
        """The output vectors w + w̃ (GloVe's ``-model 2``)."""
        v = self.vocab_size
        return self.W[:v] + self.W[v:]

    def save(self, path: str | os.PathLike, fingerprint: str) -> None:
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, W=self.W, b=self.b, gW=self.gW, gb=self.gb, iteration=self.iteration,
                         losses=np.asarray(self.losses, np.float64), fingerprint=fingerprint)

    @classmethod
    def load(cls, path: str | os.PathLike) -> tuple["GloveState", str]:
        with np.load(path) as z:
            state = cls(z["W"].copy(), z["b"].copy(), z["gW"].copy(), z["gb"].copy(), int(z["iteration"]), z["losses"].tolist())
            return state, str(z["fingerprint"])


def init_state(vocab_size: int, dim: int, seed: int) -> GloveState:
    """GloVe's initialisation: every weight and bias (U[0,1) − 0.5) / dim; accumulators 1."""
    rng = np.random.default_rng([seed, 0])
    params = ((rng.random((2 * vocab_size, dim + 1)) - 0.5) / dim).astype(np.float32)
    W = np.ascontiguousarray(params[:, :dim])
    b = np.ascontiguousarray(params[:, dim])
    return GloveState(W, b, np.ones_like(W), np.ones_like(b))


def weighting(x: np.ndarray, x_max: float, alpha: float) -> np.ndarray:
    """f(x) = (x / x_max)^α below x_max, 1 above."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x < x_max, (x / x_max) ** alpha, 1.0)


def loss(state: GloveState, i: np.ndarray, j: np.ndarray, x: np.ndarray, x_max: float, alpha: float) -> float:
    """The objective J (sum over the given entries), computed in float64."""
    v = state.vocab_size
    W = state.W.astype(np.float64)
    b = state.b.astype(np.float64)
    jj = np.asarray(j, np.int64) + v
    diff = np.einsum("nd,nd->n", W[i], W[jj]) + b[i] + b[jj] - np.log(x)
    return float(0.5 * np.sum(weighting(x, x_max, alpha) * diff * diff))


# ---------------------------------------------------------------- CPU engine (numba)

_FASTMATH = {"reassoc", "contract", "arcp", "nsz", "afn"}  # not nnan/ninf: NaN checks stay
_PREFETCH_AHEAD = 2  # entries: the rows of the entry this far ahead are loaded while this one computes


# Speed (benchmarks/glove_kernel.py): once the parameters outgrow the caches the kernel waits on
# memory, so the four rows of the entry two ahead are prefetched; the per-dimension loop computes in
# float32, the parameters' precision (it used to promote to float64), so it vectorises 8 or 16 wide;
# and error_model "numpy" drops the per-element ZeroDivisionError check that kept the loop scalar
# (the accumulators start at 1 and only grow; a non-finite step is still skipped, as in glove.c).
# nogil: with ``shuffle: chunks`` the next chunk is read and permuted on another thread meanwhile.
@numba.njit(parallel=True, fastmath=_FASTMATH, cache=True, error_model="numpy", nogil=True)
def _epoch_kernel(ci, cj, cx, block_order, n_threads, W, b, gW, gb, vocab_size, x_max, alpha, lr, bias_scale, clip, costs, counts):
    n = ci.shape[0]
    d = W.shape[1]
    n_blocks = block_order.shape[0]
    eta = np.float32(lr)
    clip32 = np.float32(clip)
    for t in prange(n_threads):
        upd1 = np.empty(d, np.float32)
        upd2 = np.empty(d, np.float32)
        cost = 0.0
        seen = 0
        for bb in range(t, n_blocks, n_threads):
            start = block_order[bb] * _BLOCK
            end = min(start + _BLOCK, n)
            for e in range(start, end):
                if e + _PREFETCH_AHEAD < end:
                    ahead1 = ci[e + _PREFETCH_AHEAD]
                    ahead2 = cj[e + _PREFETCH_AHEAD] + vocab_size
                    prefetch_row(W, ahead1)
                    prefetch_row(W, ahead2)
                    prefetch_row(gW, ahead1)
                    prefetch_row(gW, ahead2)
                x = cx[e]
                if not x > 0.0:
                    continue
                l1 = ci[e]
                l2 = cj[e] + vocab_size
                w1, w2, a1, a2 = W[l1], W[l2], gW[l1], gW[l2]
                dot = np.float32(0.0)
                for k in range(d):
                    dot += w1[k] * w2[k]
                diff = dot + b[l1] + b[l2] - math.log(x)
                fdiff = diff if x > x_max else diff * (x / x_max) ** alpha
                if not (math.isfinite(diff) and math.isfinite(fdiff)):
                    continue
                cost += 0.5 * fdiff * diff
                seen += 1
                fd = np.float32(fdiff)
                s1 = np.float32(0.0)
                s2 = np.float32(0.0)
                for k in range(d):
                    g1 = fd * w2[k]
                    g2 = fd * w1[k]
                    if clip32 > 0.0:  # glove.c since 2020: each component clipped before the learning rate
                        g1 = min(max(g1, -clip32), clip32)
                        g2 = min(max(g2, -clip32), clip32)
                    g1 *= eta
                    g2 *= eta
                    upd1[k] = g1 / np.sqrt(a1[k])
                    upd2[k] = g2 / np.sqrt(a2[k])
                    s1 += upd1[k]
                    s2 += upd2[k]
                    a1[k] += g1 * g1
                    a2[k] += g2 * g2
                if math.isfinite(s1) and math.isfinite(s2):
                    for k in range(d):
                        w1[k] -= upd1[k]
                        w2[k] -= upd2[k]
                gbias = fdiff * bias_scale
                u1 = gbias / math.sqrt(gb[l1])
                u2 = gbias / math.sqrt(gb[l2])
                if math.isfinite(u1):
                    b[l1] -= u1
                if math.isfinite(u2):
                    b[l2] -= u2
                gb[l1] += gbias * gbias
                gb[l2] += gbias * gbias
        costs[t] = cost
        counts[t] = seen


def shuffle_store(store, out: str | os.PathLike, seed: int, memory_gb: float = 2.0):
    """GloVe's ``shuffle`` step, out of core: a seeded uniform permutation of the store's
    records written to ``out`` (a store marked unsorted), returned memory-mapped.

    Records are dealt to k random buckets (k files) that each fit ``memory_gb``, then each
    bucket is permuted in memory and appended: a uniform shuffle in two passes, unlike the
    C tool's chunk interleaving. An existing ``out`` made from the same store and seed is reused.
    """
    from staticvec.cooc.store import RECORD, CoocStore, SortedStoreWriter, _temporary_dir

    out = Path(out)
    n = store.n_entries
    per_bucket = max(1 << 10, int(memory_gb * 2**30 / 40))  # record + copy + sort keys ≈ 40 bytes each
    k = max(1, -(-n // per_bucket))
    tag = {"shuffled_from": store.header["checksum"], "seed": seed, "buckets": k}
    if out.exists():
        try:
            previous = CoocStore(out)
            if previous.meta.get("shuffle") == tag:
                return previous
        except StaticvecError:
            pass
    rng = np.random.default_rng([seed, 1])
    started = time.time()
    with SortedStoreWriter(out, store.vocab_size, store.vocab_sha256, {"shuffle": tag}, ordered=False) as writer:
        if k == 1:
            writer.write_records(np.asarray(store.records)[rng.permutation(n)])
        else:
            with _temporary_dir(out.parent, prefix=f".{out.name}.buckets.") as tmp:
                paths = [Path(tmp) / f"{b:05d}.bin" for b in range(k)]
                files = [open(p, "wb") for p in paths]
                try:
                    for start in range(0, n, per_bucket):
                        chunk = np.asarray(store.records[start : start + per_bucket])
                        bucket = rng.integers(0, k, len(chunk), dtype=np.int16 if k < 2**15 else np.int32)
                        order = np.argsort(bucket, kind="stable")  # radix sort for small ints
                        bounds = np.cumsum(np.bincount(bucket, minlength=k))[:-1]
                        for fh, piece in zip(files, np.split(chunk[order], bounds)):
                            fh.write(piece.tobytes())
                finally:
                    for fh in files:
                        fh.close()
                for p in paths:
                    records = np.fromfile(p, dtype=RECORD)
                    writer.write_records(records[rng.permutation(len(records))])
                    p.unlink()
    log.info("shuffled %d entries into %s (%d bucket(s)) in %.1f s", n, out, k, time.time() - started)
    return CoocStore(out)


def _block_order(n_entries: int, seed: int, iteration: int) -> np.ndarray:
    """The visiting order of the blocks in an iteration: fresh, but a function of (seed, iteration)."""
    n_blocks = -(-n_entries // _BLOCK)
    return np.random.default_rng([seed, 2, iteration]).permutation(n_blocks).astype(np.int64)


def chunk_records(cfg: GloveConfig, record_bytes: int) -> int:
    """Records in one chunk, a whole number of the store's runs (at least one): ``shuffle_memory_gb`` holds
    two chunks at once (the one training and the next being prepared), each with its gathered records, their
    permuted copy and the permutation's indices. Each further preparing thread (``prepare_threads``) holds
    one more chunk: the chunks, hence the vectors, do not depend on how many threads prepare them."""
    per = int(cfg.shuffle_memory_gb * 2**30 // (2 * (2 * record_bytes + 8)))
    return max(1, per // _SOURCE_BLOCK) * _SOURCE_BLOCK


def chunk_runs(n_records: int, chunk: int, seed: int, iteration: int, salt: int = 4) -> list[np.ndarray]:
    """``shuffle: chunks``: which runs of ``_SOURCE_BLOCK`` records of the sorted store make each chunk of one
    iteration: the runs in a fresh seeded order, ``chunk // _SOURCE_BLOCK`` at a time, each chunk's in file
    order (read forward). A function of (seed, iteration), so a resumed run repeats it."""
    per = max(1, chunk // _SOURCE_BLOCK)
    runs = np.random.default_rng([seed, salt, iteration]).permutation(-(-n_records // _SOURCE_BLOCK))
    return [np.sort(runs[start : start + per]) for start in range(0, len(runs), per)]


def make_chunk(records, runs: np.ndarray, seed: int, iteration: int, c: int, salt: int = 4) -> np.ndarray:
    """Chunk ``c`` of an iteration: its runs read and permuted in memory (seeded by (seed, iteration, c))."""
    pieces = [records[r * _SOURCE_BLOCK : (r + 1) * _SOURCE_BLOCK] for r in runs]
    gathered = np.concatenate(pieces) if len(pieces) > 1 else np.asarray(pieces[0])
    order = np.random.default_rng([seed, salt, iteration, c]).permutation(len(gathered))
    # permuted as opaque 12-byte items: numpy's fancy indexing of a structured array is ~15x slower
    return gathered.view(f"V{gathered.dtype.itemsize}")[order].view(gathered.dtype)


def shuffled_chunks(records, chunk: int, seed: int, iteration: int, salt: int = 4, workers: int = 0):
    """``shuffle: chunks``: one iteration's entries without a shuffled copy of the store, as ``(chunk number,
    records)`` (:func:`chunk_runs`, :func:`make_chunk`). ``workers`` > 0: made ahead on that many threads while
    the caller trains on the current one (numpy's permutation, concatenation and fancy indexing release the
    GIL, and so does the kernel); 0: made on demand. The chunks and their order are the same either way."""
    plan = chunk_runs(len(records), chunk, seed, iteration, salt)
    calls = (functools.partial(make_chunk, records, runs, seed, iteration, c, salt) for c, runs in enumerate(plan))
    yield from enumerate(made_ahead(calls, workers) if workers else (call() for call in calls))


def _run_cpu(state, records, cfg: GloveConfig, on_iteration):
    """Iterate the numba kernel over the shuffled records (memory-mapped: the page cache,
    not the process, holds them), or, with ``shuffle: chunks``, over each permuted chunk of the
    sorted store's records in turn."""
    threads = max(1, min(int(cfg.threads), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(threads)
    costs = np.zeros(threads, np.float64)
    counts = np.zeros(threads, np.int64)
    bias_scale = cfg.lr if cfg.bias_lr_scaled else 1.0
    clip = float(cfg.grad_clip) if cfg.grad_clip else 0.0

    def run(part, order) -> tuple[float, int]:
        _epoch_kernel(part["i"], part["j"], part["x"], order, threads, state.W, state.b, state.gW, state.gb,
                      state.vocab_size, float(cfg.x_max), float(cfg.alpha), float(cfg.lr), float(bias_scale), clip,
                      costs, counts)
        return float(costs.sum()), int(counts.sum())

    chunk = chunk_records(cfg, records.dtype.itemsize)
    while state.iteration < cfg.iterations:
        if cfg.shuffle == "copy":
            cost, seen = run(records, _block_order(len(records), cfg.seed, state.iteration))
        else:  # the chunk is already permuted: its blocks go to the threads in turn
            cost, seen = 0.0, 0
            for _, part in shuffled_chunks(records, chunk, cfg.seed, state.iteration, workers=cfg.prepare_threads):
                c, k = run(part, np.arange(-(-len(part) // _BLOCK), dtype=np.int64))
                cost, seen = cost + c, seen + k
        on_iteration(cost / max(seen, 1))


# ---------------------------------------------------------------- torch engine (CUDA)


def _run_torch(state, records, cfg: GloveConfig, device: str, on_iteration):
    """Mini-batches on the device, streamed from the shuffled records in chunks of
    ``shuffle_memory_gb``; each iteration visits the chunks in a fresh seeded order and
    permutes each chunk on the device."""
    import torch

    dev = torch.device(device)
    v = state.vocab_size
    W = torch.from_numpy(state.W).to(dev)
    b = torch.from_numpy(state.b).to(dev)
    gW = torch.from_numpy(state.gW).to(dev)
    gb = torch.from_numpy(state.gb).to(dev)
    bias_scale = cfg.lr if cfg.bias_lr_scaled else 1.0
    n = len(records)
    chunk = max(cfg.batch_size, int(cfg.shuffle_memory_gb * 2**30 / 64))
    n_chunks = max(1, -(-n // chunk))

    def chunks(iteration):
        """(chunk number, records): the shuffled copy's chunks in a fresh order, or the sorted store's
        chunks of ``shuffle: chunks`` (permuted once more on the device below, like the copy's)."""
        if cfg.shuffle == "chunks":
            yield from shuffled_chunks(records, max(_SOURCE_BLOCK, chunk // _SOURCE_BLOCK * _SOURCE_BLOCK), cfg.seed,
                                       iteration, salt=5)
            return
        for c in np.random.default_rng([cfg.seed, 3, iteration]).permutation(n_chunks):
            yield c, np.asarray(records[c * chunk : (c + 1) * chunk])

    with torch.no_grad():
        while state.iteration < cfg.iterations:
            total = torch.zeros((), dtype=torch.float64, device=dev)
            seen = 0
            for c, block in chunks(state.iteration):
                block = block[block["x"] > 0]
                ti = torch.from_numpy(block["i"].astype(np.int64)).to(dev)
                tj = torch.from_numpy(block["j"].astype(np.int64) + v).to(dev)
                tx = torch.from_numpy(block["x"].astype(np.float32)).to(dev)
                logx = torch.log(tx)
                fx = torch.where(tx < cfg.x_max, (tx / cfg.x_max) ** cfg.alpha, torch.ones_like(tx))
                gen = torch.Generator(device=dev).manual_seed(int(cfg.seed) * 1_000_003 + state.iteration * 10_007 + int(c))
                perm = torch.randperm(len(ti), device=dev, generator=gen)
                seen += len(ti)
                for s in range(0, len(ti), cfg.batch_size):
                    idx = perm[s : s + cfg.batch_size]
                    r1, r2 = ti[idx], tj[idx]
                    w1, w2 = W[r1], W[r2]
                    diff = (w1 * w2).sum(1) + b[r1] + b[r2] - logx[idx]
                    fdiff = fx[idx] * diff
                    ok = torch.isfinite(fdiff)
                    fdiff = torch.where(ok, fdiff, torch.zeros_like(fdiff))
                    total += (0.5 * fdiff * torch.where(ok, diff, torch.zeros_like(diff))).sum(dtype=torch.float64)
                    g1 = fdiff[:, None] * w2
                    g2 = fdiff[:, None] * w1
                    if cfg.grad_clip:
                        g1 = g1.clamp(-cfg.grad_clip, cfg.grad_clip)
                        g2 = g2.clamp(-cfg.grad_clip, cfg.grad_clip)
                    rows = torch.cat([r1, r2])
                    g = torch.cat([g1, g2]) * cfg.lr
                    gbias = (fdiff * bias_scale).repeat(2)
                    gW.index_add_(0, rows, g * g)
                    gb.index_add_(0, rows, gbias * gbias)
                    W.index_add_(0, rows, -g / gW[rows].sqrt())
                    b.index_add_(0, rows, -gbias / gb[rows].sqrt())
            state.W, state.b, state.gW, state.gb = W, b, gW, gb  # device tensors while running
            on_iteration(float(total) / max(seen, 1))
    state.W, state.b, state.gW, state.gb = (t.cpu().numpy() for t in (W, b, gW, gb))


# ---------------------------------------------------------------- driver


def train_glove(
    cooc_path: str | os.PathLike,
    vocab,
    cfg: GloveConfig,
    checkpoint_path: str | os.PathLike | None = None,
    engine: str | None = None,
    stop_after: int | None = None,
    work_dir: str | os.PathLike | None = None,
) -> GloveState:
    """Train GloVe on a co-occurrence store over ``vocab``; returns the final state.

    ``engine`` is 'numba' (CPU), 'kernel' (the fused CUDA kernel; on ``cpu``: numba's CUDA simulator) or
    'torch'; by default numba on CPU and ``cfg.cuda_engine`` on CUDA.
    The shuffled copy of the store goes to ``work_dir`` (default: beside the checkpoint,
    else the system's temporary directory) and is removed when the run completes; with
    ``cfg.shuffle == "chunks"`` there is none (the store itself is read, chunk by chunk).
    ``stop_after`` ends the run after that many iterations (as an interruption would;
    used to test resuming).
    """
    from staticvec.cooc.store import CoocStore, vocab_fingerprint

    store = CoocStore(cooc_path)
    if store.vocab_size != len(vocab):
        raise StaticvecError(
            f"{cooc_path}: the store was counted over {store.vocab_size} words but the vocabulary has {len(vocab)} "
            "(same vocabulary file and min_count needed)"
        )
    if store.vocab_sha256 and store.vocab_sha256 != vocab_fingerprint(vocab):
        raise StaticvecError(f"{cooc_path}: the store was counted over a different vocabulary (sha256 differs)")
    store.verify()
    device = resolve_device(cfg.device)
    engine = engine or ("numba" if device == "cpu" else cfg.cuda_engine)
    if engine not in ENGINES:
        raise StaticvecError(f"GloVe: unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    fingerprint = cfg.fingerprint(store.header["checksum"]) + f"-{engine}"

    state = None
    if checkpoint_path and Path(checkpoint_path).exists():
        loaded, saved_fp = GloveState.load(checkpoint_path)
        if saved_fp == fingerprint and loaded.W.shape == (2 * len(vocab), cfg.dim):
            state = loaded
            log.info("resuming from %s at iteration %d", checkpoint_path, state.iteration)
        else:
            log.warning("ignoring checkpoint %s: it belongs to a different run (settings or store changed)", checkpoint_path)
    if state is None:
        state = init_state(len(vocab), cfg.dim, cfg.seed)

    if work_dir is None:
        work_dir = Path(checkpoint_path).parent if checkpoint_path else Path(tempfile.gettempdir())
    shuffled_path = Path(work_dir) / f"{Path(cooc_path).name}.shuffled-seed{cfg.seed}.cooc"
    if cfg.shuffle == "copy":
        records = shuffle_store(store, shuffled_path, cfg.seed, cfg.shuffle_memory_gb).records
    else:
        records = store.records
    log.info("GloVe: %d entries, %d words, dim %d, %d iterations, engine %s (%s), %d thread(s), shuffle %s",
             len(records), len(vocab), cfg.dim, cfg.iterations, engine, device, cfg.threads, cfg.shuffle)
    started = time.time()

    class _Stop(Exception):
        pass

    def on_iteration(mean_cost: float) -> None:
        state.iteration += 1
        state.losses.append(mean_cost)
        log.info("iteration %d/%d: cost %.6f (%.1f s)", state.iteration, cfg.iterations, mean_cost, time.time() - started)
        if not math.isfinite(mean_cost):
            raise StaticvecError(f"GloVe diverged at iteration {state.iteration} (cost {mean_cost}); lower lr or set grad_clip")
        due = cfg.checkpoint_every and state.iteration % cfg.checkpoint_every == 0 and state.iteration < cfg.iterations
        if checkpoint_path and (due or (stop_after is not None and state.iteration >= stop_after)):
            _as_numpy(state).save(checkpoint_path, fingerprint)
        if stop_after is not None and state.iteration >= stop_after:
            raise _Stop

    try:
        if engine == "numba":
            _run_cpu(state, records, cfg, on_iteration)
        elif engine == "kernel":
            from staticvec.train.glove_cuda import run_kernel

            run_kernel(state, records, cfg, device, on_iteration)
        else:
            _run_torch(state, records, cfg, device, on_iteration)
    except _Stop:
        return _as_numpy(state)  # interrupted: the shuffled copy stays for the resumed run
    del records
    shuffled_path.unlink(missing_ok=True)
    return _as_numpy(state)


def _as_numpy(state: GloveState) -> GloveState:
    """A numpy view of a state whose arrays may be device arrays mid-run (torch tensors, numba.cuda arrays)."""
    arrays = []
    for a in (state.W, state.b, state.gW, state.gb):
        if isinstance(a, np.ndarray):
            arrays.append(a)
        elif hasattr(a, "copy_to_host"):
            arrays.append(a.copy_to_host())
        else:
            arrays.append(a.detach().cpu().numpy())
    return GloveState(*arrays, iteration=state.iteration, losses=list(state.losses))
