"""GloVe's fused CUDA kernel (numba.cuda): the module imported only once :func:`staticvec.train.glove_cuda.cuda_module`
has chosen the real CUDA target or numba's CPU simulator, since the simulator swaps a kernel's module-global ``cuda``
for its own (the kernel must see ``cuda`` as a global of its module, not a closure). Everything else, and why the
kernel is written this way, is in :mod:`staticvec.train.glove_cuda`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda
from numba.core import config

# The launch's shape: the lanes of a worker (one entry at a time, each lane owning the components k ≡ lane mod
# LANES) and the workers of a thread block (they pass the block's barriers together). On a GPU a worker is a warp.
# numba's simulator runs every thread as a Python thread, so there the same code runs on 4 lanes and one worker a
# block (the sums' partition differs, nothing else: the barriers are the block's, not the warp's).
SIMULATED = bool(config.ENABLE_CUDASIM)
LANES = 4 if SIMULATED else 32
WARPS_PER_BLOCK = 1 if SIMULATED else 4  # 128 threads a block on a GPU


@cuda.jit
def fused_epoch(ci, cj, cx, block_order, span, n_workers, rounds, W, b, gW, gb, vocab_size, x_max, alpha, lr, bias_scale, clip,
                costs, counts):
    """glove.c's per-entry update of the entries at positions worker, worker + n_workers, ... of the visiting order
    (position p: entry ``block_order[p // span] * span + p % span``), ``rounds`` of them per worker (the first ``n_workers``
    warps of the grid work; the last block's spare ones pass its barriers only); the workers update
    the parameters in place without locks (Hogwild, as glove.c's threads). Each worker's cost and entry count go to
    ``costs[worker]``, ``counts[worker]``."""
    lane = cuda.threadIdx.x % LANES
    warp = cuda.threadIdx.x // LANES
    worker = cuda.blockIdx.x * WARPS_PER_BLOCK + warp
    red = cuda.shared.array((WARPS_PER_BLOCK, 3, LANES), np.float32)  # the lanes' partial sums
    n = ci.shape[0]
    d = W.shape[1]
    total = block_order.shape[0] * span
    eta = np.float32(lr)
    clip32 = np.float32(clip)
    cost = 0.0
    seen = 0
    for r in range(rounds):  # the same count for every worker of the block: all of them meet each barrier
        p = worker + r * n_workers
        e = n
        if worker < n_workers and p < total:  # the last block's spare warps (worker >= n_workers) get no entry
            e = block_order[p // span] * span + p % span
        x = np.float32(0.0)
        l1 = 0
        l2 = 0
        if e < n:
            x = cx[e]
            l1 = ci[e]
            l2 = cj[e] + vocab_size
        active = x > 0.0  # also false past the end, and for a NaN count (skipped, as the CPU engine does)
        part = np.float32(0.0)
        if active:
            for k in range(lane, d, LANES):
                part += W[l1, k] * W[l2, k]
        red[warp, 0, lane] = part
        cuda.syncthreads()
        dot = np.float32(0.0)
        for q in range(LANES):  # every lane sums the 32 partials in the same order: all hold the same dot
            dot += red[warp, 0, q]
        ok = False
        diff = 0.0
        fdiff = 0.0
        if active:
            diff = dot + b[l1] + b[l2] - math.log(x)
            fdiff = diff if x > x_max else diff * (x / x_max) ** alpha
            ok = math.isfinite(diff) and math.isfinite(fdiff)
        fd = np.float32(fdiff)
        s1 = np.float32(0.0)
        s2 = np.float32(0.0)
        if ok:  # the steps' sums, for glove.c's check that no step is NaN or infinite
            for k in range(lane, d, LANES):
                g1 = fd * W[l2, k]
                g2 = fd * W[l1, k]
                if clip32 > 0.0:
                    g1 = min(max(g1, -clip32), clip32)
                    g2 = min(max(g2, -clip32), clip32)
                s1 += g1 * eta / math.sqrt(gW[l1, k])
                s2 += g2 * eta / math.sqrt(gW[l2, k])
        red[warp, 1, lane] = s1
        red[warp, 2, lane] = s2
        cuda.syncthreads()
        sum1 = np.float32(0.0)
        sum2 = np.float32(0.0)
        for q in range(LANES):
            sum1 += red[warp, 1, q]
            sum2 += red[warp, 2, q]
        cuda.syncthreads()  # the partials are read before the next entry writes its own
        if ok:
            apply = math.isfinite(sum1) and math.isfinite(sum2)
            for k in range(lane, d, LANES):  # the same steps again, from the rows this lane has just read (cached)
                w1 = W[l1, k]
                w2 = W[l2, k]
                a1 = gW[l1, k]
                a2 = gW[l2, k]
                g1 = fd * w2
                g2 = fd * w1
                if clip32 > 0.0:
                    g1 = min(max(g1, -clip32), clip32)
                    g2 = min(max(g2, -clip32), clip32)
                g1 *= eta
                g2 *= eta
                if apply:
                    W[l1, k] = w1 - g1 / math.sqrt(a1)
                    W[l2, k] = w2 - g2 / math.sqrt(a2)
                gW[l1, k] = a1 + g1 * g1  # glove.c adds to the accumulators even when the step is skipped
                gW[l2, k] = a2 + g2 * g2
            if lane == 0:  # the biases: one lane (the others read them after the next entry's first barrier)
                cost += 0.5 * fdiff * diff
                seen += 1
                gbias = fdiff * bias_scale
                u1 = gbias / math.sqrt(gb[l1])
                u2 = gbias / math.sqrt(gb[l2])
                if math.isfinite(u1):
                    b[l1] -= u1
                if math.isfinite(u2):
                    b[l2] -= u2
                gb[l1] += gbias * gbias
                gb[l2] += gbias * gbias
    if lane == 0 and worker < n_workers:
        costs[worker] = cost
        counts[worker] = seen
