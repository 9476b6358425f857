"""GloVe's CPU kernel, old against new, side by side in one process: entries per second of one
thread over the same shuffled store, and the mean cost of each iteration (the two must optimise
alike: the new kernel computes in float32 and prefetches, the arithmetic is glove.c's).

    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/glove_kernel.py \
        --store results/default/cooc/window5.cooc [--old 4911005] [--dim 300] [--rounds 3] [--iterations 3] [--threads 1]

Each round trains ``--iterations`` iterations from the same initial state with the old kernel,
then with the new one (A B A B …, so a drift of the machine's speed hits both); the first
iteration of the first round (compilation) is not counted.

``--cuda``: the CUDA engines instead, the fused kernel (``cuda_engine: kernel``) against the torch
mini-batch engine it replaces (``cuda_engine: torch``), rounds interleaved likewise, on a store or on a
synthetic one (gpu_check.py's: ``--entries``, ``--words``), with the kernel's memory-bandwidth limit
(staticvec.train.glove_cuda: bytes per entry 32·d + 44) at the device's measured copy bandwidth and at
``--spec-tb-s`` (H200: 4.8)::

    PYTHONPATH=workflow python benchmarks/glove_kernel.py --cuda --entries 50000000 --words 400000 [--dim 300]
    PYTHONPATH=workflow python benchmarks/glove_kernel.py --cuda --smoke   # numba's CUDA simulator, CPU, seconds
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from staticvec.cooc.store import CoocStore  # noqa: E402
from staticvec.train import glove as new_glove  # noqa: E402


def old_module(commit: str, work: Path):
    """``staticvec.train.glove`` as it was at ``commit`` (it imports the rest of the package from here)."""
    source = subprocess.run(["git", "show", f"{commit}:workflow/staticvec/train/glove.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    path = work / f"glove_{commit}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"glove_{commit}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", default="results/default/cooc/window5.cooc")
    parser.add_argument("--old", default="4911005", help="commit of the old kernel (default 4911005)")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="threads of both kernels (Hogwild above 1)")
    parser.add_argument("--cuda", action="store_true", help="the CUDA engines: fused kernel against torch")
    parser.add_argument("--entries", type=int, default=0, help="--cuda: a synthetic store of this many entries")
    parser.add_argument("--words", type=int, default=400_000, help="--cuda: the synthetic store's vocabulary")
    parser.add_argument("--batch-size", type=int, default=65536, help="--cuda: the torch engine's batch")
    parser.add_argument("--spec-tb-s", type=float, default=4.8, help="--cuda: the device's specified bandwidth")
    parser.add_argument("--smoke", action="store_true", help="--cuda on the CPU (numba's simulator), tiny store")
    args = parser.parse_args(argv)
    if args.cuda:
        return cuda_main(args)
    store = CoocStore(args.store)
    records = np.asarray(store.records)[np.random.default_rng([args.seed, 1]).permutation(store.n_entries)]
    i, j, x = (np.ascontiguousarray(records[k]) for k in ("i", "j", "x"))
    print(f"{args.store}: {len(i):,} entries, {store.vocab_size:,} words, dim {args.dim}, {args.threads} thread(s); "
          f"old = {args.old}, new = this checkout; load {os.getloadavg()[0]:.2f}", flush=True)
    numba.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as work:
        kernels = {"old": old_module(args.old, Path(work))._epoch_kernel, "new": new_glove._epoch_kernel}
        speed = {side: [] for side in kernels}
        costs = {side: [] for side in kernels}
        for round_ in range(args.rounds):
            for side, kernel in kernels.items():
                state = new_glove.init_state(store.vocab_size, args.dim, args.seed)
                cost, count = np.zeros(args.threads), np.zeros(args.threads, np.int64)
                for iteration in range(args.iterations):
                    order = new_glove._block_order(len(i), args.seed, iteration)
                    started = time.perf_counter()
                    kernel(i, j, x, order, args.threads, state.W, state.b, state.gW, state.gb, store.vocab_size,
                           10.0, 0.75, 0.05, 0.05, 0.0, cost, count)
                    seconds = time.perf_counter() - started
                    if round_ or iteration:
                        speed[side].append(len(i) / seconds / 1e6)
                    if round_ == 0:
                        costs[side].append(float(cost.sum() / count.sum()))
    print("\n| kernel | M entries/s, min | median | max | mean cost per iteration |")
    print("| --- | ---: | ---: | ---: | --- |")
    for side, values in speed.items():
        print(f"| {side} | {min(values):.3f} | {np.median(values):.3f} | {max(values):.3f} | "
              f"{', '.join(f'{c:.6f}' for c in costs[side])} |")
    print(f"\nnew / old, medians: {np.median(speed['new']) / np.median(speed['old']):.2f}x; "
          f"load {os.getloadavg()[0]:.2f}")
    return 0


def cuda_main(args) -> int:
    """The fused kernel against the torch engine, A B A B, each round from GloVe's initialisation."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_check import copy_bandwidth, synthetic_store

    from staticvec.train.glove import GloveConfig, _run_torch
    from staticvec.train.glove_cuda import bytes_per_entry, entries_per_s_limit, run_kernel

    device = "cpu" if args.smoke else "cuda"
    with tempfile.TemporaryDirectory() as work:
        if args.smoke:
            args.entries, args.words, args.dim, args.rounds, args.iterations = 2000, 500, 16, 1, 2
        if args.entries:
            store = synthetic_store(Path(work) / "synthetic.cooc", args.words, args.entries)
        else:
            store = CoocStore(args.store)
        records = store.records
        cfg = GloveConfig(dim=args.dim, iterations=args.iterations, seed=args.seed, device=device,
                          batch_size=args.batch_size, shuffle_memory_gb=64.0)
        engines = {"kernel": lambda state, on_it: run_kernel(state, records, cfg, device, on_it),
                   "torch": lambda state, on_it: _run_torch(state, records, cfg, device, on_it)}
        print(f"{store.path.name}: {len(records):,} entries, {store.vocab_size:,} words, dim {args.dim}, device {device}; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        speed = {side: [] for side in engines}
        costs = {side: [] for side in engines}
        for round_ in range(args.rounds):
            for side, run in engines.items():
                state = new_glove.init_state(store.vocab_size, args.dim, args.seed)
                stamps = [time.perf_counter()]

                def on_iteration(cost, side=side, stamps=stamps):
                    state.iteration += 1  # the engines' loop runs to cfg.iterations
                    stamps.append(time.perf_counter())  # the engines synchronise (costs read back) each iteration
                    if round_ == 0:
                        costs[side].append(cost)

                run(state, on_iteration)
                laps = np.diff(stamps)
                speed[side] += [len(records) / s / 1e6 for s in (laps if round_ else laps[1:])]  # the 1st: compiling
        bandwidth = copy_bandwidth(device, (1 << 20) if args.smoke else (1 << 30))
    per = bytes_per_entry(args.dim)
    print("\n| CUDA engine | M entries/s, min | median | max | mean cost per iteration |")
    print("| --- | ---: | ---: | ---: | --- |")
    for side, values in speed.items():
        print(f"| {side} | {min(values):.2f} | {np.median(values):.2f} | {max(values):.2f} | "
              f"{', '.join(f'{c:.6f}' for c in costs[side])} |")
    kernel = np.median(speed["kernel"]) * 1e6
    print(f"\nkernel / torch, medians: {np.median(speed['kernel']) / np.median(speed['torch']):.2f}x")
    print(f"bandwidth limit: {per:,} bytes an entry at {args.dim}-d (32·d + 44); measured copy bandwidth "
          f"{bandwidth / 1e12:.2f} TB/s -> {entries_per_s_limit(args.dim, bandwidth) / 1e6:.1f}M entries/s "
          f"(kernel at {kernel / entries_per_s_limit(args.dim, bandwidth):.1%}); spec {args.spec_tb_s} TB/s -> "
          f"{entries_per_s_limit(args.dim, args.spec_tb_s * 1e12) / 1e6:.1f}M entries/s; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
