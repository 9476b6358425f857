"""One BiLSTM-CRF tagger run, old against new, side by side: CPU seconds, epochs, dev and test scores.

    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/tagging_speed.py                 # chunk, seed 1
    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/tagging_speed.py --task pos --seeds 1 2 3
    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/tagging_speed.py --vectors my.bin
    # the claims scale's tagger (config/claims10m.yaml: NCRF++'s settings to convergence on dev) alone, its curve:
    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/tagging_speed.py --task pos --seeds 1 2 3 \
        --overlay config/claims10m.yaml --new-only --vectors results/claims10m/embeddings/sg/seed1/vectors.bin

old: the code and the ``tagging.tagger`` settings of ``config/config.yaml`` at ``--old`` (fd12b22: SGD,
batch 10, 8 epochs); new: this checkout and its config. Each run is a fresh process on 1 thread (as a
workflow job: interpreter, torch import, data reading and the run); the figures are the process's
CPU seconds (user + system) and wall seconds, and the tagger's own training seconds.

``--overlay FILE`` merges a config over the new side's ``config/config.yaml`` (as ``--configfile`` does), e.g.
the claims scale's converged tagger; ``--new-only`` skips the old side. Each run also prints its epochs, the
epoch chosen on dev, why it stopped, and its CPU seconds per epoch: the cost of convergence is epochs run x
seconds an epoch (dev scored each epoch included), and the projection for a whole run is that per tagger job.

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
    settings = {}
    for path in args.config:  # later files over earlier ones, key by key (the tagger section is flat)
        settings.update((yaml.safe_load(Path(path).read_text()).get("tagging") or {}).get("tagger") or {})
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
                      "stopped_by": (result.get("convergence") or {}).get("stopped_by"),
                      "dev_curve": [round(p["dev_score"], 4) for p in result["dev_curve"]],
                      "epoch_seconds": [p["timing"]["seconds"] for p in result["dev_curve"]],
                      "train_sentences": result["train_sentences"],
                      "settings": {k: settings.get(k) for k in ("optimizer", "lr", "batch_size", "max_epochs", "patience",
                                                                 "char_features", "max_train_sentences")}}))


def run(tree: Path, configs: list[Path], args, seed: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "workflow"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--config", *map(str, configs), "--task", args.task,
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
    parser.add_argument("--overlay", action="append", default=[],
                        help="a config merged over the new side's config/config.yaml (e.g. config/claims10m.yaml)")
    parser.add_argument("--new-only", action="store_true", help="run this checkout only (no old side)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", nargs="+", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.data_dir = args.data_dir or str(DATA[args.task])
    if args.worker:
        worker(args)
        return

    print(f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    new_configs = [ROOT / "config/config.yaml", *(Path(o).resolve() for o in args.overlay)]
    with tempfile.TemporaryDirectory(prefix="tagging_speed.") as tmp:
        sides = {"new": (ROOT, new_configs)}
        if not args.new_only:
            old_tree = Path(tmp)
            archive = subprocess.run(["git", "archive", args.old, "workflow", "config/config.yaml"], cwd=ROOT,
                                     capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive.stdout, check=True)
            sides = {"old": (old_tree, [old_tree / "config/config.yaml"]), **sides}
        results = {side: [run(tree, configs, args, seed) for seed in args.seeds] for side, (tree, configs) in sides.items()}
    vectors = args.vectors or f"random {args.dim}-d (scores meaningless)"
    overlay = f" + {', '.join(args.overlay)}" if args.overlay else ""
    print(f"task {args.task}, vectors {vectors}, seeds {args.seeds}, 1 thread; new = this checkout{overlay}"
          + ("" if args.new_only else f"; old = {args.old}"))
    for side in results:
        print(f"  {side}: {results[side][0]['settings']}, {results[side][0].get('train_sentences')} training sentences")
    if not args.new_only:
        print(f"{'seed':>4s} | {'old CPU':>7s} {'wall':>6s} {'train':>6s} {'ep':>3s} {'dev':>6s} {'test':>6s} | "
              f"{'new CPU':>7s} {'wall':>6s} {'train':>6s} {'ep':>3s} {'dev':>6s} {'test':>6s} | {'CPU ratio':>9s}")
        for seed, old, new in zip(args.seeds, results["old"], results["new"]):
            cells = [f"{r['cpu']:7.1f} {r['wall']:6.1f} {r['train_seconds']:6.1f} {r['epochs']:3d} {100 * r['dev']:6.2f} "
                     f"{100 * r['test']:6.2f}" for r in (old, new)]
            print(f"{seed:4d} | {cells[0]} | {cells[1]} | {old['cpu'] / new['cpu']:8.2f}x")
    print("convergence (new side): seed, epochs run, chosen epoch, stopped by, CPU s, train s, s an epoch; dev curve")
    for seed, r in zip(args.seeds, results["new"]):
        per_epoch = sum(r.get("epoch_seconds") or [0.0]) / max(len(r.get("epoch_seconds") or []), 1)
        print(f"  {seed:4d} {r['epochs']:4d} {r['best_epoch']:4d} {str(r.get('stopped_by')):>10s} {r['cpu']:8.1f} "
              f"{r['train_seconds']:8.1f} {per_epoch:7.2f}  {' '.join(f'{100 * d:.2f}' for d in r.get('dev_curve') or [])}")
    mean = {side: {k: sum(r[k] for r in rs) / len(rs) for k in ("cpu", "dev", "test")} for side, rs in results.items()}
    cells = {side: f"CPU {m['cpu']:.1f} dev {100 * m['dev']:.2f} test {100 * m['test']:.2f}" for side, m in mean.items()}
    ratio = "" if args.new_only else f" | {mean['old']['cpu'] / mean['new']['cpu']:.2f}x"
    print("mean | " + " | ".join(cells[side] for side in results) + ratio)
    print(f"uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
