"""Seconds per data set of one classification run (one seed, the paper's full grid + refit).

Random embeddings (300-d and 384-d by default) cover each data set's words except ~5 % of the
types (OOV), so the work per batch is the real one. Prints one markdown row per (dim, data set)
with wall and CPU seconds and the machine load; record them in benchmarks/README.md.

    PYTHONPATH=workflow python benchmarks/classification_speed.py --threads 2
    PYTHONPATH=workflow python benchmarks/classification_speed.py --dims 300 --datasets trec --epochs 8 16
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch

from staticvec.embeddings import Embeddings
from staticvec.evaluate.classification import ClassifierSettings, evaluate_dataset, resolve_device
from staticvec.evaluate.classification_data import DATASET_NAMES, load_dataset


def random_embeddings(dataset, dim: int, seed: int = 0) -> Embeddings:
    words = sorted({t for s in dataset.all_sentences() for t in s})
    rng = np.random.default_rng(seed)
    words = [w for w in words if rng.random() >= 0.05]
    return Embeddings(words, rng.normal(scale=0.3, size=(len(words), dim)).astype(np.float32))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="../shared/data/eval/classification")
    p.add_argument("--dims", type=int, nargs="+", default=[300, 384])
    p.add_argument("--datasets", nargs="+", default=list(DATASET_NAMES))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="auto")
    p.add_argument("--epochs", type=int, nargs="+", default=None, help="epoch grid (default the paper's 8-16)")
    p.add_argument("--learning-rates", type=float, nargs="+", default=None)
    p.add_argument("--no-refit", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    settings = ClassifierSettings(refit=not args.no_refit)
    if args.epochs:
        settings.epochs = sorted(args.epochs)
    if args.learning_rates:
        settings.learning_rates = args.learning_rates
    device = resolve_device(args.device)
    print(f"# {platform.processor() or platform.machine()}, torch {torch.__version__}, {args.threads} threads, device {device}, "
          f"grid {settings.epochs[0]}-{settings.epochs[-1]} epochs x {len(settings.learning_rates)} lr, refit {settings.refit}")
    print("| dim | data set | train/valid/test | wall s | CPU s | load before → after |")
    print("| --- | --- | --- | --- | --- | --- |")
    for dim in args.dims:
        for name in args.datasets:
            dataset = load_dataset(name, args.data_dir)
            embeddings = random_embeddings(dataset, dim)
            load_before = os.getloadavg()[0]
            wall, cpu = time.perf_counter(), time.process_time()
            result = evaluate_dataset(embeddings, dataset, [1], settings, device)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            sizes = "/".join(str(v) for v in result["sizes"].values())
            print(f"| {dim} | {name} | {sizes} | {wall:.0f} | {cpu:.0f} | {load_before:.1f} → {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
