"""Quality of the distillation trainers, old code vs new, over seeds (issue 14).

Trains each method with its block of config/config.yaml (the workflow's default run; keys that steer the
workflow, variants and ``engine`` left out, so old code reads them too) on the stored teacher features of the default corpus,
once per seed, with the code of a given ``workflow`` directory (``--code``: today's checkout, or an
older commit unpacked with ``git archive <commit> workflow | tar -x -C DIR``), evaluates WS353,
SimLex-999, RW and MEN, and writes one JSON per run under ``--out``. ``--summary OLD NEW`` prints the
means ± standard deviations side by side.

    python benchmarks/students_quality.py --code /tmp/old/workflow --out /tmp/q/old
    python benchmarks/students_quality.py --code workflow --out /tmp/q/new
    python benchmarks/students_quality.py --summary /tmp/q/old /tmp/q/new
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

FEATURES = "/work/main/results/default/teacher/minilm/features"
VOCAB = "/work/main/results/default/corpus/vocab.min5.tsv"
METHODS = {"bert_sg": ("bert-sg", "sentence"), "c2v": ("c2v", "sentence"), "x2static": ("x2static", "sentence")}
TASKS = ("ws353", "simlex999", "rw", "men")


def run(args) -> None:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(args.code), "OMP_NUM_THREADS": str(args.threads),
           "HF_HUB_OFFLINE": "1"}
    env.setdefault("NUMBA_CACHE_DIR", "/tmp/staticvec-numba-cache")
    os.makedirs(args.out, exist_ok=True)
    for seed in args.seeds:
        for method in args.methods:
            command, feature_set = METHODS[method]
            stem = os.path.join(args.out, f"{method}.seed{seed}")
            if os.path.exists(stem + ".scores.json"):
                continue
            shards = sorted(glob.glob(os.path.join(args.features, feature_set, "0*")))
            params = json.dumps(config_params(args.config, method), sort_keys=True)
            t0 = time.time()
            subprocess.run(["staticvec", "train", command, "--features", *shards, "--vocab", args.vocab,
                            "--feature-vocab", args.vocab, "--params", params, "--seed", str(seed),
                            "--threads", str(args.threads),
                            "--device", "cpu", "--no-progress", "--out", stem + ".npy"], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=open(stem + ".log", "w"))
            seconds = time.time() - t0
            subprocess.run(["staticvec", "evaluate", "intrinsic", stem + ".npy", "--tasks", *TASKS, "--out", stem + ".eval.json",
                            "--threads", "1"], env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            scores = extract(json.load(open(stem + ".eval.json")))
            with open(stem + ".scores.json", "w") as f:
                json.dump({"method": method, "seed": seed, "seconds": round(seconds, 1), "scores": scores}, f)
            print(method, seed, round(seconds, 1), scores, flush=True)
            os.unlink(stem + ".npy")


def config_params(path: str, method: str) -> dict:
    import yaml

    block = yaml.safe_load(open(path))["methods"][method]
    return {k: v for k, v in block.items() if k not in ("threads", "checkpoint_every", "variants", "engine")}


def extract(result: dict) -> dict:
    """The Spearman ρ of each task from an evaluation JSON."""
    out = {}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in TASKS and isinstance(value, dict):
                    for k in ("spearman", "rho", "score"):
                        if isinstance(value.get(k), (int, float)):
                            out[key] = value[k]
                            break
                walk(value)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(result)
    return out


def summary(old_dir: str, new_dir: str) -> None:
    def load(d):
        rows = {}
        for path in sorted(glob.glob(os.path.join(d, "*.scores.json"))):
            r = json.load(open(path))
            rows.setdefault(r["method"], []).append(r)
        return rows

    old, new = load(old_dir), load(new_dir)
    print("| method | task | old mean ± sd | new mean ± sd | seeds old/new |")
    print("| --- | --- | ---: | ---: | ---: |")

    def ms(values):
        if not values:
            return "–"
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{100 * statistics.mean(values):.1f} ± {100 * sd:.1f}"

    for method in METHODS:
        for task in TASKS:
            o = [r["scores"][task] for r in old.get(method, []) if task in r["scores"]]
            n = [r["scores"][task] for r in new.get(method, []) if task in r["scores"]]
            print(f"| {method} | {task} | {ms(o)} | {ms(n)} | {len(o)}/{len(n)} |")
        o = [r["seconds"] for r in old.get(method, [])]
        n = [r["seconds"] for r in new.get(method, [])]
        if o and n:
            print(f"| {method} | train s | {statistics.mean(o):.0f} | {statistics.mean(n):.0f} | |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", default="workflow", help="the workflow directory whose staticvec package runs")
    ap.add_argument("--out", help="directory for the runs' records")
    ap.add_argument("--features", default=FEATURES)
    ap.add_argument("--config", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config",
                                                     "config.yaml"), help="the methods' hyper-parameters")
    ap.add_argument("--vocab", default=VOCAB)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--summary", nargs=2, metavar=("OLD", "NEW"))
    args = ap.parse_args(argv)
    if args.summary:
        summary(*args.summary)
    else:
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
