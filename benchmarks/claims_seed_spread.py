"""How wide is a claim's interval at n seeds? Seed-to-seed spread of two cheap claimed embeddings.

Trains Skip-gram and CBOW (the default config's settings, gensim, one deterministic thread) with seeds
1..N on the default corpus, scores each on the similarity sets under the `web` protocol, and prints per
data set (and SemGloVe's 4-set average): each method's seed sd, the sd of the paired difference sg − cbow,
and the 95 % t half-width of that difference at 2, 3, 5 and 10 seeds (t(0.975, n−1) · sd / √n). This is
the number config/config.yaml's `seeds` comment rests on: a difference must exceed the half-width to be
decided. Quality figures: valid under load (no timing is reported).

    PYTHONPATH=workflow OMP_NUM_THREADS=1 python benchmarks/claims_seed_spread.py \\
        --corpus results/default/corpus --eval-dir ../shared/data/eval --seeds 5 [--work benchmarks/work/seed_spread]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

SETS = ["ws353", "ws353_sim", "ws353_rel", "simlex999", "rw", "men"]
AVG = ["ws353", "ws353_sim", "ws353_rel", "simlex999"]
METHODS = {  # command and --params: config/config.yaml methods.skipgram / methods.cbow, as the workflow's train rule passes them
    "sg": ("skipgram", {"dim": 300, "window": 5, "negative": 5, "sample": 0.0001, "epochs": 5, "alpha": 0.025,
                        "min_alpha": 0.0001, "vectors": "input", "deterministic": True}),
    "cbow": ("cbow", {"dim": 300, "window": 5, "negative": 5, "sample": 0.0001, "epochs": 5, "alpha": 0.05,
                      "min_alpha": 0.0001, "cbow_mean": True, "deterministic": True}),
}


def run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stderr[-3000:]}")


def sd(values):
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def main() -> None:
    from scipy.stats import t

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="results/default/corpus")
    ap.add_argument("--eval-dir", default="../shared/data/eval")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--work", default="benchmarks/work/seed_spread")
    args = ap.parse_args()
    corpus, work = Path(args.corpus), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    shards = sorted(str(p) for p in (corpus / "shards").glob("*.tsv.gz"))
    scores = {}
    for method, (command, params) in METHODS.items():
        for seed in range(1, args.seeds + 1):
            out = work / f"{method}.seed{seed}"
            result = work / f"{method}.seed{seed}.web.json"
            if not result.exists():
                run(["staticvec", "train", command, "--shards", *shards, "--vocab", str(corpus / "vocab.min5.tsv"),
                     "--min-count", "5", "--params", json.dumps(params), "--seed", str(seed), "--threads", "1",
                     "--out", f"{out}.bin", "--record", f"{out}.json"])
                run(["staticvec", "evaluate", "intrinsic", f"{out}.bin", "--out", str(result), "--threads", "1",
                     "--data-dir", args.eval_dir, "--oov", "mean", "--tasks", *SETS])
            res = json.loads(result.read_text())["results"]
            scores[(method, seed)] = {k: 100 * res[k]["score"] for k in SETS}
            scores[(method, seed)]["avg4"] = sum(scores[(method, seed)][k] for k in AVG) / len(AVG)
            print(f"{method} seed {seed}: " + " ".join(f"{k} {v:.1f}" for k, v in scores[(method, seed)].items()),
                  flush=True)
    seeds = range(1, args.seeds + 1)
    ns = (2, 3, 5, 10)
    print("\n| set | sg sd | cbow sd | sd of sg − cbow (paired) | mean sg − cbow | "
          + " | ".join(f"95 % half-width, n={n}" for n in ns) + " |")
    print("| --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in ns) + " |")
    for key in SETS + ["avg4"]:
        sg = [scores[("sg", s)][key] for s in seeds]
        cb = [scores[("cbow", s)][key] for s in seeds]
        d = [a - b for a, b in zip(sg, cb)]
        sdd = sd(d)
        halves = [float(t.ppf(0.975, n - 1)) * sdd / math.sqrt(n) for n in ns]
        print(f"| {key} | {sd(sg):.2f} | {sd(cb):.2f} | {sdd:.2f} | {sum(d) / len(d):+.2f} | "
              + " | ".join(f"{h:.2f}" for h in halves) + " |")


if __name__ == "__main__":
    main()
