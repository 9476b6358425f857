"""End result of the bf16 teacher: embeddings trained from bf16 features against the same trained from
fp32 features, scored on the same sets, over seeds.

    python benchmarks/teacher_dtype_quality.py --runs bf16=results/default fp32=results/fp32 \
        --embeddings semglove_sd:web x2static_sent:muse --seeds 1 2 3

Reads ``<run>/eval/<embedding>/seed<s>/intrinsic.<protocol>.json`` of two workflow runs that differ
only in ``teacher.dtype`` and prints, per embedding and data set, mean ± s.d. over the seeds for each
run and the difference of the means. Make the runs with the workflow itself, e.g. the fp32 one with
``snakemake --configfile config/config.yaml FP32.yaml <targets>`` where FP32.yaml sets
``results_dir: results/fp32`` and ``teacher: {dtype: float32}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

SETS = ("ws353", "ws353_sim", "ws353_rel", "simlex999", "rw", "men", "simverb3500")


def score(path: Path, name: str) -> float | None:
    data = json.loads(path.read_text())
    entry = (data.get("results") or data).get(name)
    if not isinstance(entry, dict) or entry.get("score") is None:
        return None
    return 100 * float(entry["score"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs=2, required=True, metavar="LABEL=RESULTS_DIR")
    ap.add_argument("--embeddings", nargs="+", required=True, metavar="ID:PROTOCOL")
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    args = ap.parse_args()
    runs = [tuple(r.split("=", 1)) for r in args.runs]
    (la, _), (lb, _) = runs
    print(f"| embedding (protocol) | data set | {la} mean ± sd | {lb} mean ± sd | {la} − {lb} |")
    print("| --- | --- | ---: | ---: | ---: |")
    for item in args.embeddings:
        emb, protocol = item.split(":")
        for name in SETS:
            cols = []
            for _, root in runs:
                vals = [score(Path(root) / "eval" / emb / f"seed{s}" / f"intrinsic.{protocol}.json", name) for s in args.seeds]
                vals = [v for v in vals if v is not None]
                cols.append(vals)
            if not all(cols):
                continue
            m = [statistics.mean(c) for c in cols]
            sd = [statistics.stdev(c) if len(c) > 1 else 0.0 for c in cols]
            print(f"| {emb} ({protocol}) | {name} | {m[0]:.1f} ± {sd[0]:.1f} | {m[1]:.1f} ± {sd[1]:.1f} | {m[0] - m[1]:+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
