"""What the claims' extra seeds cost: job time of every seed after the first, from a finished run.

Reads the run's Snakemake benchmark files (``<run>/benchmarks/**/*.tsv``, the ``s`` column: a job's wall
seconds) and splits the work into the jobs of the first seed and those of the later seeds (paths with
``seed<k>`` for k > the first seed: training, post-processing, intrinsic evaluation, taggers), per stage.
The later seeds' work divided by the cores is a lower bound of the wall time they add (jobs overlap).
Without --run, it prints the plan: how many jobs of each rule the extra seeds add (snakemake -n).

    PYTHONPATH=workflow python benchmarks/claims_seed_cost.py --run results/default [--cores 2]
    PYTHONPATH=workflow python benchmarks/claims_seed_cost.py --plan
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

SEED = re.compile(r"seed(\d+)")


def measured(run: Path, cores: int) -> None:
    from staticvec.report.reference import read_benchmark

    files = sorted((run / "benchmarks").rglob("*.tsv"))
    if not files:
        sys.exit(f"{run}/benchmarks: no benchmark files (run the workflow first)")
    seeds = sorted({int(m.group(1)) for f in files for m in [SEED.search(str(f.relative_to(run)))] if m})
    first = seeds[0] if seeds else 1
    work = defaultdict(lambda: [0.0, 0.0, 0, 0])  # stage -> first-seed s, later-seed s, jobs, later jobs
    for f in files:
        rel = f.relative_to(run / "benchmarks")
        stage = rel.parts[0] if len(rel.parts) > 1 else "other"
        seconds = read_benchmark(f)["s"]
        m = SEED.search(str(rel))
        later = bool(m) and int(m.group(1)) != first
        work[stage][1 if later else 0] += seconds
        work[stage][2] += 1
        work[stage][3] += later
    print(f"run {run}: seeds {seeds or '(none in paths)'}")
    print("| stage | jobs | later-seed jobs | work of the rest (s) | work of later seeds (s) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    total = [0.0, 0.0]
    for stage, (base, extra, jobs, later) in sorted(work.items()):
        print(f"| {stage} | {jobs} | {later} | {base:.0f} | {extra:.0f} |")
        total[0] += base
        total[1] += extra
    print(f"| **all** | | | {total[0]:.0f} | {total[1]:.0f} |")
    print(f"\nlater seeds: {total[1] / 60:.1f} min of work = {100 * total[1] / max(total[0], 1e-9):.0f} % of the rest; "
          f"at least {total[1] / cores / 60:.1f} min of wall time on {cores} cores")


def plan() -> None:
    def jobs(extra: str) -> dict:
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
            fh.write(extra)
        out = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--configfile", fh.name],
                             capture_output=True, text=True)
        counts = {}
        for line in out.stdout.splitlines():
            m = re.fullmatch(r"(\w+)\s+(\d+)", line.strip())
            if m:
                counts[m.group(1)] = int(m.group(2))
        if not counts:
            sys.exit(out.stdout[-2000:] + out.stderr[-2000:])
        return counts

    one, default = jobs("seeds: [1]\n"), jobs("{}\n")
    print("| rule | jobs with seeds [1] | jobs with the default seeds | added |")
    print("| --- | ---: | ---: | ---: |")
    for rule in sorted(set(one) | set(default)):
        a, b = one.get(rule, 0), default.get(rule, 0)
        if a != b or rule == "total":
            print(f"| {rule} | {a} | {b} | {b - a:+d} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", help="a finished run's results directory (its benchmarks/)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--plan", action="store_true", help="count the jobs the extra seeds add (snakemake -n)")
    args = ap.parse_args()
    if args.plan or not args.run:
        plan()
    if args.run:
        measured(Path(args.run), args.cores)


if __name__ == "__main__":
    main()
