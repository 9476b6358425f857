"""One BiLSTM-CRF tagger run, old against new, side by side: CPU seconds, epochs, dev and test scores.

    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/tagging_speed.py                 # chunk, seed 1
    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/tagging_speed.py --task pos --seeds 1 2 3
    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/tagging_speed.py --vectors my.bin

old: the code and the ``tagging.tagger`` settings of ``config/config.yaml`` at ``--old`` (fd12b22: SGD,
batch 10, 8 epochs); new: this checkout and its config. Each run is a fresh process on 1 thread (as a
workflow job: interpreter, torch import, data reading and the run); the figures are the process's
CPU seconds (user + system) and wall seconds, and the tagger's own training seconds.

Random vectors (the default) are fine for timing but not for the scores, which need a real
embedding (``--vectors``). ``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = {"chunk": ROOT / "../shared/data/eval/sequence/conll2000", "pos": ROOT / "../shared/data/eval/sequence/ud_english_ewt"}


def worker(args) -> None:
    """One run inside this process (PYTHONPATH chooses the code); prints one JSON line."""
    import numpy as np
    import torch
    import yaml

    from staticvec.embeddings import Embeddings
    from staticvec.evaluate.tagging.data import load_task
    from staticvec.evaluate.tagging.inputs import StaticInputs
    from staticvec.evaluate.tagging.train import TaggerConfig, train_tagger

    torch.set_num_threads(1)
    settings = (yaml.safe_load(Path(args.config).read_text()).get("tagging") or {}).get("tagger") or {}
    config = TaggerConfig.from_dict(settings)
    data = load_task(args.task, args.data_dir)
    if args.vectors:
        embeddings = Embeddings.load(args.vectors)
    else:
        words = sorted({w.lower() for split in data.splits().values() for s in split for w in s.words})
        rng = np.random.default_rng(0)
        embeddings = Embeddings(words, rng.normal(0, 0.1, (len(words), args.dim)).astype(np.float32))
    inputs = StaticInputs(embeddings, data, config.lowercase, config.normalize)
    result = train_tagger(data, inputs, config, seed=args.seed, device="cpu")
    print(json.dumps({"epochs": result["epochs_run"], "best_epoch": result["best_epoch"], "dev": result["dev"],
                      "test": result["test"], "train_seconds": result["timing"]["train_seconds"],
                      "settings": {k: settings.get(k) for k in ("optimizer", "lr", "batch_size", "max_epochs")}}))


def run(tree: Path, config: Path, args, seed: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "workflow"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--config", str(config), "--task", args.task,
           "--data-dir", str(args.data_dir), "--seed", str(seed), "--dim", str(args.dim)]
    if args.vectors:
        cmd += ["--vectors", str(Path(args.vectors).resolve())]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"run failed: {' '.join(cmd)}\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out["wall"] = wall
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="chunk", choices=sorted(DATA))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--vectors", default=None, help="a real embedding file (default: random vectors)")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--old", default="fd12b22", help="commit of the old code and config (default fd12b22)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.data_dir = args.data_dir or str(DATA[args.task])
    if args.worker:
        worker(args)
        return

    print(f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory(prefix="tagging_speed.") as tmp:
        old_tree = Path(tmp)
        archive = subprocess.run(["git", "archive", args.old, "workflow", "config/config.yaml"], cwd=ROOT,
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive.stdout, check=True)
        sides = {"old": (old_tree, old_tree / "config/config.yaml"), "new": (ROOT, ROOT / "config/config.yaml")}
        results = {side: [run(tree, config, args, seed) for seed in args.seeds] for side, (tree, config) in sides.items()}
    vectors = args.vectors or f"random {args.dim}-d (scores meaningless)"
    print(f"task {args.task}, vectors {vectors}, seeds {args.seeds}, 1 thread; old = {args.old}, new = this checkout")
    for side in ("old", "new"):
        print(f"  {side}: {results[side][0]['settings']}")
    print(f"{'seed':>4s} | {'old CPU':>7s} {'wall':>6s} {'train':>6s} {'ep':>3s} {'dev':>6s} {'test':>6s} | "
          f"{'new CPU':>7s} {'wall':>6s} {'train':>6s} {'ep':>3s} {'dev':>6s} {'test':>6s} | {'CPU ratio':>9s}")
    for seed, old, new in zip(args.seeds, results["old"], results["new"]):
        cells = [f"{r['cpu']:7.1f} {r['wall']:6.1f} {r['train_seconds']:6.1f} {r['epochs']:3d} {100 * r['dev']:6.2f} "
                 f"{100 * r['test']:6.2f}" for r in (old, new)]
        print(f"{seed:4d} | {cells[0]} | {cells[1]} | {old['cpu'] / new['cpu']:8.2f}x")
    mean = {side: {k: sum(r[k] for r in rs) / len(rs) for k in ("cpu", "dev", "test")} for side, rs in results.items()}
    print(f"mean | CPU {mean['old']['cpu']:.1f} dev {100 * mean['old']['dev']:.2f} test {100 * mean['old']['test']:.2f} | "
          f"CPU {mean['new']['cpu']:.1f} dev {100 * mean['new']['dev']:.2f} test {100 * mean['new']['test']:.2f} | "
          f"{mean['old']['cpu'] / mean['new']['cpu']:.2f}x")
    print(f"uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
