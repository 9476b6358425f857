"""One classification job (X2Static Table 4 CNN, six data sets), old against new, side by side.

    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/classification_speed.py                 # seed 1
    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/classification_speed.py --vectors my.bin --seeds 1 2 3

old: the code and the ``classification`` settings of ``config/config.yaml`` at ``--old`` (fd12b22: grid
of 8/10/12 epochs at lr 1e-3, then a refit on train + validation); new: this checkout and its config.
Each side is one ``staticvec evaluate classify`` process on 1 thread, as the workflow job (interpreter, torch
import, reading and tokenising the six data sets, every seed). The figures are the process's CPU
seconds (user + system) and wall seconds, and the mean test macro-F1 / accuracy over the data sets.

Without ``--vectors`` the embedding is random 300-d vectors for the data sets' words except ~5 % of
the types (OOV): the work per batch is the real one, the scores are meaningless. ``uptime`` before
and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def random_vectors(path: Path, data_dir: str, dim: int) -> None:
    from staticvec.embeddings import Embeddings
    from staticvec.evaluate.classification_data import DATASET_NAMES, load_dataset

    words = set()
    for name in DATASET_NAMES:
        words |= {t for s in load_dataset(name, data_dir).all_sentences() for t in s}
    rng = np.random.default_rng(0)
    words = [w for w in sorted(words) if rng.random() >= 0.05]
    Embeddings(words, rng.normal(scale=0.3, size=(len(words), dim)).astype(np.float32)).save(path)


def run(tree: Path, config: Path, vectors: Path, out: Path, args) -> dict:
    """``staticvec evaluate classify`` of ``tree`` with ``config``'s classification settings, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(tree / "workflow"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    # the config-to-flags helper and the command as the tree has them (staticvec.dag.arguments and
    # ``evaluate classify`` from 5c09631 and 84fe666 on; fd12b22: classification_cli and ``classify``)
    helper = "staticvec.dag.arguments" if (tree / "workflow/staticvec/dag/arguments.py").exists() \
        else "staticvec.evaluate.classification_cli"
    command = ["evaluate", "classify"] if (tree / "workflow/staticvec/evaluate/cli.py").exists() else ["classify"]
    flags = subprocess.run(
        [sys.executable, "-c", f"import sys, yaml; from {helper} import config_arguments as a; "
         "c = yaml.safe_load(open(sys.argv[1])); c['seeds'] = [int(s) for s in sys.argv[2:]]; "
         "c['classification']['seeds'] = None; c['device'] = 'cpu'; print(a(c))", str(config), *map(str, args.seeds)],
        env=env, capture_output=True, text=True, check=True).stdout.strip()
    cmd = [sys.executable, "-m", "staticvec", *command, "--vectors", str(vectors), "--data-dir", args.data_dir,
           "--out", str(out), "--threads", "1", *shlex.split(flags)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"run failed: {' '.join(cmd)}\n{done.stderr[-3000:]}")
    result = json.loads(out.read_text())
    per_set = {name: (entry["macro_f1"]["mean"], entry["accuracy"]["mean"]) for name, entry in result["datasets"].items()}
    return {"cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), "wall": wall,
            "per_set": per_set, "flags": flags}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(ROOT / "../shared/data/eval/classification"))
    parser.add_argument("--vectors", default=None, help="a real embedding file (default: random vectors)")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--old", default="fd12b22", help="commit of the old code and config (default fd12b22)")
    args = parser.parse_args()

    print(f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory(prefix="classification_speed.") as tmp:
        tmp = Path(tmp)
        archive = subprocess.run(["git", "archive", args.old, "workflow", "config/config.yaml"], cwd=ROOT,
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        vectors = Path(args.vectors).resolve() if args.vectors else tmp / "random.bin"
        if not args.vectors:
            random_vectors(vectors, args.data_dir, args.dim)
        old = run(tmp, tmp / "config/config.yaml", vectors, tmp / "old.json", args)
        new = run(ROOT, ROOT / "config/config.yaml", vectors, tmp / "new.json", args)
    label = args.vectors or f"random {args.dim}-d (scores meaningless)"
    print(f"vectors {label}; seeds {args.seeds}; 1 thread; old = {args.old}, new = this checkout")
    print(f"  old flags: {old['flags']}\n  new flags: {new['flags']}")
    print(f"{'data set':9s} | {'old F1':>7s} {'acc':>6s} | {'new F1':>7s} {'acc':>6s}")
    for name in old["per_set"]:
        (of, oa), (nf, na) = old["per_set"][name], new["per_set"][name]
        print(f"{name:9s} | {100 * of:7.2f} {100 * oa:6.2f} | {100 * nf:7.2f} {100 * na:6.2f}")
    mean = {side: np.mean(list(r["per_set"].values()), axis=0) * 100 for side, r in (("old", old), ("new", new))}
    print(f"{'mean':9s} | {mean['old'][0]:7.2f} {mean['old'][1]:6.2f} | {mean['new'][0]:7.2f} {mean['new'][1]:6.2f}")
    print(f"job: old CPU {old['cpu']:.1f} s (wall {old['wall']:.1f}) | new CPU {new['cpu']:.1f} s (wall {new['wall']:.1f}) | "
          f"CPU ratio {old['cpu'] / new['cpu']:.2f}x")
    print(f"uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
