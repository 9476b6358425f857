"""Time the whole intrinsic suite on a random V x d embedding whose vocabulary covers the eval words.

    python benchmarks/evaluate_speed.py [--vocab 100000] [--dim 300] [--threads 2] [--oov drop]

The vocabulary holds every word of every data set (lower-cased), then filler words up to
``--vocab``, so analogy runs over the full V. The embedding is written as word2vec binary under
benchmarks/work/ and the timing includes reading it, as `staticvec evaluate` does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--oov", default="drop", choices=["drop", "mean"])
    parser.add_argument("--data-dir", default="../shared/data/eval")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    from threadpoolctl import threadpool_limits

    from staticvec.embeddings import Embeddings
    from staticvec.evaluate.intrinsic import evaluate
    from staticvec.evaluate.datasets import DATASETS, load_dataset

    torch.set_num_threads(args.threads)
    words: dict[str, None] = {}
    for name in DATASETS:
        data = load_dataset(name, args.data_dir)
        for attr in ("pairs", "questions", "words"):
            for item in getattr(data, attr, []):
                for w in (item,) if isinstance(item, str) else item:
                    words.setdefault(w.lower())
        for rel in getattr(data, "relations", []):
            for x, y in rel.prototypes + rel.pairs:
                words.setdefault(x.lower()); words.setdefault(y.lower())
    words = {w: None for w in words if " " not in w}  # multi-word Battig items are OOV by nature
    n_eval = len(words)
    i = 0
    while len(words) < args.vocab:
        words.setdefault(f"filler{i}")
        i += 1
    vocab = list(words)[: args.vocab]
    vectors = np.random.default_rng(0).standard_normal((len(vocab), args.dim), dtype=np.float32)
    path = Path("benchmarks/work/evaluate_speed.bin")
    Embeddings(vocab, vectors).save(path)
    print(f"{len(vocab)} x {args.dim} embedding ({n_eval} evaluation words), {args.threads} threads, oov={args.oov}")

    with threadpool_limits(args.threads):
        wall, cpu = time.perf_counter(), time.process_time()
        emb = Embeddings.load(path)
        t_load = time.perf_counter() - wall
        result = evaluate(emb, data_dir=args.data_dir, oov=args.oov, device=args.device)
        total, total_cpu = time.perf_counter() - wall, time.process_time() - cpu
        # CPU seconds per data set (robust to a busy machine): one run per data set
        cpu_by_set = {}
        for name in DATASETS:
            c0 = time.process_time()
            evaluate(emb, [name], data_dir=args.data_dir, oov=args.oov, device=args.device)
            cpu_by_set[name] = time.process_time() - c0
    print(f"{'data set':12s} {'wall s':>7s} {'CPU s':>7s}")
    for name, entry in result["results"].items():
        if "seconds" in entry:
            print(f"  {name:12s} {entry['seconds']:7.2f} {cpu_by_set[name]:7.2f}")
    print(f"load {t_load:.2f} s; suite {result['seconds']:.2f} s; total wall {total:.2f} s, CPU {total_cpu:.2f} s "
          f"(all threads)")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
