"""Time one tagger run: CoNLL-2000 chunking with random 300-d embeddings and the default config.

The issue's budget: one run finishes in at most 15 minutes on 2 CPU cores, so the default
workflow can include it. Random vectors are fine for timing (the cost does not depend on the
values), but not for convergence: a random-embedding run usually stops later than a real one,
so the figure is an upper bound for the default max_epochs / patience.

    python benchmarks/tagging_speed.py                                # the full default run, 1 thread
    python benchmarks/tagging_speed.py --threads 2 --max-epochs 2     # seconds per epoch only
    python benchmarks/tagging_speed.py --vectors my.vec               # a real embedding

Prints one JSON line: wall and CPU seconds, epochs, seconds per epoch, scores, machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default="../shared/data/eval/sequence/conll2000")
    parser.add_argument("--task", default="chunk", choices=["chunk", "pos"])
    parser.add_argument("--vectors", default=None, help="a real embedding file (default: random vectors)")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the workflow's default: 1 per job)")
    parser.add_argument("--config", default="config/config.yaml", help="tagger settings from this config's tagging.tagger")
    parser.add_argument("--max-epochs", type=int, default=None)
    parser.add_argument("--patience", type=int, default=None)
    parser.add_argument("--char-features", default=None, choices=["none", "cnn", "lstm"])
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import numpy as np
    import torch

    from staticvec.config import load_config
    from staticvec.embeddings import Embeddings
    from staticvec.evaluate.tagging.data import load_task
    from staticvec.evaluate.tagging.inputs import StaticInputs
    from staticvec.evaluate.tagging.train import TaggerConfig, train_tagger

    torch.set_num_threads(args.threads)
    settings = dict(load_config([args.config]).get("tagging", {}).get("tagger", {}))
    overrides = (("max_epochs", args.max_epochs), ("patience", args.patience), ("char_features", args.char_features),
                 ("batch_size", args.batch_size))
    for key, value in overrides:
        if value is not None:
            settings[key] = value
    config = TaggerConfig.from_dict(settings)
    data = load_task(args.task, args.data_dir)
    if args.vectors:
        embeddings = Embeddings.load(args.vectors)
    else:
        words = sorted({w.lower() for split in data.splits().values() for s in split for w in s.words})
        rng = np.random.default_rng(0)
        embeddings = Embeddings(words, rng.normal(0, 0.1, (len(words), args.dim)).astype(np.float32))
    inputs = StaticInputs(embeddings, data, config.lowercase, config.normalize)
    load_before = os.getloadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    result = train_tagger(data, inputs, config, seed=args.seed, device="cpu")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    epochs = result["epochs_run"]
    print(json.dumps({
        "task": args.task, "vectors": args.vectors or f"random {args.dim}-d", "threads": args.threads,
        "char_features": config.char_features, "batch_size": config.batch_size, "max_epochs": config.max_epochs,
        "patience": config.patience, "epochs_run": epochs, "best_epoch": result["best_epoch"],
        "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "wall_s_per_epoch": round(wall / epochs, 1),
        "dev": round(result["dev"], 4), "test": round(result["test"], 4),
        "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(), "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
