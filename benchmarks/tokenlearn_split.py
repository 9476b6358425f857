"""Tokenlearn's jobs before and after the split (one distillation per width, then a job per seed), on the same
machine and the same inputs: their job time side by side and every vector compared byte for byte.

Two clones of the repository, ``--old`` (a commit before the split: each seed's job distils) and ``--new`` (after
it), each with ``../shared`` beside it as for ``make run``. The old clone builds what Tokenlearn reads (the corpus,
the teacher's stored sentence pass) and its Tokenlearn jobs; those inputs are copied into the new clone with their
times (so nothing upstream runs again: ``--rerun-triggers mtime``) and the new clone runs its Tokenlearn jobs
(the distillations and the seeds). Then, from both runs' Snakemake benchmark files, the seconds of the old jobs
against the new ones, and ``cmp`` of each seed's ``vectors.bin`` and library model (``model.safetensors``).

    python benchmarks/tokenlearn_split.py --old /work/ab/old --new /work/ab/new --cores 2 --json out.json
    python benchmarks/tokenlearn_split.py --old ... --new ... --configfile tests/config/test.yaml   # a tiny check

Exit status 1 when a vector or model differs. Take the figures on a quiet machine (nothing else running).
"""

from __future__ import annotations

import argparse
import csv
import filecmp
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

TOKENLEARN_RULES = ("tokenlearn_distill", "train_tokenlearn")


def plan(clone: Path, configfiles: list[str]) -> tuple[str, list[tuple[str, int]]]:
    """(results dir, [(Tokenlearn entry, seed)]) of the config, from the new clone's planning layer."""
    code = (
        "import json, sys; from staticvec.config import load_config; from staticvec.dag.workflow import Workflow;"
        "c = load_config(sys.argv[1:]); w = Workflow(c, '.');"
        "print(json.dumps([w.results_dir, [[e, s] for e in w.sheet.ids('tokenlearn') for s in w.seeds(e)]]))"
    )
    files = [str(clone / "config" / "config.yaml"), *[str(clone / f) for f in configfiles]]
    out = subprocess.run([sys.executable, "-c", code, *files], cwd=clone, env=_env(clone), check=True,
                         capture_output=True, text=True).stdout
    results, runs = json.loads(out)
    return results, [(e, int(s)) for e, s in runs]


def _env(clone: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(clone / "workflow")}


def snakemake(clone: Path, configfiles: list[str], cores: str, targets: list[str], *extra: str) -> str:
    args = [sys.executable, "-m", "snakemake", "--cores", cores, "--configfile", "config/config.yaml", *configfiles,
            *extra, "--", *targets]
    result = subprocess.run(args, cwd=clone, env=_env(clone), capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"snakemake failed in {clone}:\n{(result.stdout + result.stderr)[-4000:]}")
    return result.stdout + result.stderr


def copy_inputs(old: Path, new: Path, results: str, entries: set[str]) -> None:
    """The old run's results, times kept, less every Tokenlearn output, log and benchmark."""
    target = new / results
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(old / results, target, copy_function=shutil.copy2, symlinks=True)
    for emb in entries:
        for part in ("embeddings", "logs/train", "benchmarks/train"):
            shutil.rmtree(target / part / emb, ignore_errors=True)


def seconds(path: Path) -> float:
    with open(path, newline="") as fh:
        return float(next(csv.DictReader(fh, delimiter="\t"))["s"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, type=Path, help="clone before the split")
    parser.add_argument("--new", required=True, type=Path, help="clone after the split")
    parser.add_argument("--configfile", nargs="*", default=[], help="config files over config/config.yaml")
    parser.add_argument("--cores", default="2")
    parser.add_argument("--json", default=None, help="write the figures here too")
    args = parser.parse_args(argv)
    old, new = args.old.resolve(), args.new.resolve()
    results, runs = plan(new, args.configfile)
    entries = {e for e, _ in runs}
    targets = [f"{results}/embeddings/{e}/seed{s}/vectors.bin" for e, s in runs]

    # what Tokenlearn reads first, then its jobs alone (in the full run they share the cores with others)
    snakemake(old, args.configfile, args.cores, targets, "--omit-from", "train_tokenlearn")
    started = time.time()
    snakemake(old, args.configfile, args.cores, targets)
    old_wall = time.time() - started
    copy_inputs(old, new, results, entries)
    dry = snakemake(new, args.configfile, args.cores, targets, "-n", "--rerun-triggers", "mtime")
    stats = dry.split("Job stats:")[-1].split("\n\n")[0]  # the dry run's table: job, count
    planned = {line.split()[0] for line in stats.splitlines() if len(line.split()) == 2 and line.split()[1].isdigit()}
    if planned - {*TOKENLEARN_RULES, "total"}:
        sys.exit(f"the new clone would run more than Tokenlearn's jobs: {sorted(planned)}")
    started = time.time()
    snakemake(new, args.configfile, args.cores, targets, "--rerun-triggers", "mtime")
    new_wall = time.time() - started

    bench = {side: root / results / "benchmarks" / "train" for side, root in (("old", old), ("new", new))}
    old_jobs = {f"{e}/seed{s}": seconds(bench["old"] / e / f"seed{s}.tsv") for e, s in runs}
    new_jobs = {f"{e}/seed{s}": seconds(bench["new"] / e / f"seed{s}.tsv") for e, s in runs}
    distill = {p.parent.name: seconds(p) for p in sorted(bench["new"].glob("*/distilled.tsv"))}
    same = {}
    for e, s in runs:
        run = f"embeddings/{e}/seed{s}"
        same[f"{e}/seed{s}"] = all(filecmp.cmp(old / results / run / name, new / results / run / name, shallow=False)
                                   for name in ("vectors.bin", "tokenlearn/model.safetensors"))
    old_total, new_total = sum(old_jobs.values()), sum(new_jobs.values()) + sum(distill.values())
    figures = {"old_jobs_s": old_jobs, "new_seed_jobs_s": new_jobs, "new_distillations_s": distill,
               "old_total_s": round(old_total, 1), "new_total_s": round(new_total, 1),
               "saved_s": round(old_total - new_total, 1), "old_wall_s": round(old_wall, 1),
               "new_wall_s": round(new_wall, 1), "byte_identical": same, "cores": args.cores,
               "configfiles": args.configfile}
    print("| job | old, s | new, s | vectors and model |\n| --- | ---: | ---: | --- |")
    for key in old_jobs:
        print(f"| {key} | {old_jobs[key]:.1f} | {new_jobs[key]:.1f} | {'identical' if same[key] else 'DIFFER'} |")
    for emb, s in distill.items():
        print(f"| {emb}/distilled | — | {s:.1f} | |")
    print(f"| **all** | **{old_total:.1f}** | **{new_total:.1f}** | saved {old_total - new_total:.1f} s |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
