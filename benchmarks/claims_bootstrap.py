"""Cost of the claims' item bootstrap (docs/statistics.md): seconds per run and data set of
staticvec.stats.bootstrap_spearman at the claims' replicate count, over the sizes of the similarity sets.
The claims report pays it once per (row, seed, data set, common items); the analogy sets cost nothing
(their variance is exact). Run on a quiet machine:

    PYTHONPATH=workflow .venv/bin/python benchmarks/claims_bootstrap.py --replicates 1000
"""

import argparse
import time

import numpy as np

from staticvec.stats import bootstrap_counts, bootstrap_indices, bootstrap_spearman, resample_ranks

SIZES = {"rg65": 65, "ws353_sim": 203, "ws353": 353, "simlex999": 999, "rw": 2034, "men": 3000,
         "simverb3500": 3500}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("data set\titems\tseconds per run (median)")
    for name, n in SIZES.items():
        gold = rng.normal(size=n)
        counts = bootstrap_counts(bootstrap_indices(n, args.replicates, name))
        gold_ranks = resample_ranks(gold, counts)
        times = []
        for _ in range(args.repeats):
            cosines = gold + rng.normal(size=n)
            start = time.perf_counter()
            bootstrap_spearman(None, [cosines], None, gold_ranks, counts)
            times.append(time.perf_counter() - start)
        print(f"{name}\t{n}\t{np.median(times):.4f}")


if __name__ == "__main__":
    main()
