"""Project the default DAG's job time at another corpus size from measured job times (issue 21).

Every job of the target plan (Snakemake's dry run of the given config files with ``--forceall``: rule,
benchmark file, threads) gets a cost measured at the base size on this machine:

1. the job of the same benchmark name in a base run (``--base``: results directories whose benchmark
   files were written by workflow runs of the base config), else
2. the mean of that rule's base jobs with the same name pattern (digits folded: every teacher shard of
   one feature set, every tokenize job), else the rule's mean over all its base jobs, else
3. the reference run's mean for the rule (``results/reference/manifest.json``: another CPU; flagged).

Then it scales the cost by what the job reads:

- a shard job (teacher passes, co-occurrence counting of one shard) by the ratio of shard sizes in
  tokens, target over base (1 when the target keeps the base's shard size and adds shards);
- a job that reads the whole corpus or a fraction of it (training, merges, the corpus cut) by
  ``(N / N0) ** e``, with ``e`` measured per rule from the jobs of the same name in a base run and a
  scaled run (``--scaled``: a run at the target size) where there are some, else 1 (flagged);
- everything else (evaluation, extrinsic tasks, post-processing, figures, fetching): unchanged.

It prints the per-rule table and the total in core-seconds (job time x threads); with ``--cores`` the
lower bound on the run's wall time (total / cores: the DAG's critical path is far shorter, see
benchmarks/README.md). What it cannot know: jobs that no run has measured on this machine, and
changes of vocabulary size (evaluation coverage) — both are listed.

    PYTHONPATH=workflow python benchmarks/scale_projection.py \\
        --target-config config/config.yaml benchmarks/scale10m.yaml \\
        --base-config config/config.yaml benchmarks/scale1m.yaml \\
        --base results/scale1m results/default --scaled results/scale10m --cores 2 --json projection.json

(the base and scaled runs: ``snakemake --configfile config/config.yaml benchmarks/scale1m.yaml ...``
and the same with ``scale10m.yaml``; benchmarks/README.md gives the targets). The base runs' job times
count only if they were taken with the plan being projected (e.g. the teacher passes' sets), on the
machine in question: list the runs in order, the first run holding a job wins.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from staticvec.config import load_config  # noqa: E402
from staticvec.dag.dryrun import dry_run as planned_dry_run  # noqa: E402
from staticvec.dag.dryrun import job_rule_and_wildcards, planned_jobs  # noqa: E402
from staticvec.dag.paths import RulePaths  # noqa: E402
from staticvec.dag.teacher import TeacherPlan  # noqa: E402
from staticvec.errors import StaticvecError  # noqa: E402

# rule -> how its cost grows with the corpus (see the module text); per-input jobs (tokenize) keep their
# cost and grow in number; rules not named are fixed
from staticvec.report.reference import PER_SHARD_RULES as SHARD_RULES  # noqa: E402
from staticvec.report.reference import WHOLE_CORPUS_RULES as CORPUS_RULES  # noqa: E402
from staticvec.report.reference import read_benchmark  # noqa: E402


def dry_run(configfiles: list[str]) -> tuple[list[dict], str]:
    """The plan's jobs (rule, benchmark path or None for rules without one, threads) and its results directory."""
    try:
        output = planned_dry_run(configfiles, ROOT)
    except StaticvecError as exc:
        sys.exit(str(exc))
    config = load_config(configfiles)
    teacher_plan, paths = TeacherPlan(config), RulePaths(config["results_dir"])
    jobs = []
    for job in planned_jobs(output):
        if job.rule is not None:
            jobs.append({"rule": job.rule, "benchmark": job.benchmark, "threads": job.threads})
            continue
        # a teacher pass prints its message instead of the rule's block (rule teacher_features)
        named = job_rule_and_wildcards(job)
        if named:
            jobs.append({"rule": "teacher_features", "threads": teacher_plan.feature_threads,
                         "benchmark": paths.benchmark("teacher_features", **named[1])})
    return jobs, config["results_dir"]


def relative(benchmark: str, results: str) -> str:
    return str(Path(benchmark).relative_to(Path(results) / "benchmarks").with_suffix(""))


def pattern(name: str) -> str:
    return re.sub(r"\d+", "#", name)


def corpus_tokens(results: Path) -> tuple[int, int]:
    manifest = json.loads((results / "corpus" / "manifest.json").read_text())
    return manifest["totals"]["tokens"], len(manifest["shards"])


def samples_of(run: Path, rule_of: dict[str, str]) -> dict[str, tuple[str, float]]:
    """{benchmark name: (rule, seconds)} of one run's benchmark files, the rule from the plan's names."""
    out = {}
    root = run / "benchmarks"
    for path in sorted(root.rglob("*.tsv")):
        name = str(path.relative_to(root).with_suffix(""))
        rule = rule_of.get(name) or rule_of.get(("pattern", pattern(name)))
        if rule:
            out[name] = (rule, read_benchmark(path)["s"])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target-config", nargs="+", required=True, help="config files of the plan to project")
    ap.add_argument("--base-config", nargs="+", default=["config/config.yaml"],
                    help="config files of the base runs' plan (to name their jobs' rules)")
    ap.add_argument("--base", nargs="+", required=True, help="results directories of runs at the base size")
    ap.add_argument("--scaled", nargs="*", default=[], help="results directories of runs at the target size")
    ap.add_argument("--reference", default="results/reference/manifest.json")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--json", help="also write the projection here")
    args = ap.parse_args(argv)

    target_jobs, target_results = dry_run(args.target_config)
    base_plan, base_results = dry_run(args.base_config)

    # rule of each benchmark name, in both plans (names are relative to the run's benchmarks/)
    rule_of: dict = {}
    for jobs, res in ((base_plan, base_results), (target_jobs, target_results)):
        for job in jobs:
            if job["benchmark"]:
                name = relative(job["benchmark"], res)
                rule_of[name] = job["rule"]
                rule_of[("pattern", pattern(name))] = job["rule"]

    base_runs = [Path(p) for p in args.base]
    n0, shards0 = corpus_tokens(base_runs[0])
    base: dict[str, tuple[str, float]] = {}
    for run in base_runs:  # the first run that has a job wins
        for name, sample in samples_of(run, rule_of).items():
            base.setdefault(name, sample)
    by_pattern, by_rule = defaultdict(list), defaultdict(list)
    for name, (rule, s) in base.items():
        by_pattern[(rule, pattern(name))].append(s)
        by_rule[rule].append(s)

    target_root = Path(target_results)
    n1 = shards1 = None
    for run in [Path(p) for p in args.scaled] + [target_root]:
        if (run / "corpus" / "manifest.json").exists():
            n1, shards1 = corpus_tokens(run)
            break
    if n1 is None:
        sys.exit("no corpus manifest of the target size: run its corpus stage (or pass --scaled)")

    scaled = [samples_of(Path(p), rule_of) for p in args.scaled]
    # measured exponents: the same job name at both sizes
    pairs = defaultdict(list)
    for samples in scaled:
        for name, (rule, s1) in samples.items():
            if name in base and rule in CORPUS_RULES:
                pairs[rule].append((name, base[name][1], s1))
    exponent = {rule: sum(math.log(s1 / s0) for _, s0, s1 in ps) / len(ps) / math.log(n1 / n0)
                for rule, ps in pairs.items()}
    # a shard job's cost at the target size, where a scaled run measured the rule: the ratio of the mean
    # shard job (a shard of the same size meets a larger vocabulary in a larger corpus)
    scaled_shards = defaultdict(list)
    for samples in scaled:
        for rule, s1 in samples.values():
            if rule in SHARD_RULES:
                scaled_shards[rule].append(s1)
    shard_factor = {rule: (sum(v) / len(v)) / (sum(by_rule[rule]) / len(by_rule[rule]))
                    for rule, v in scaled_shards.items() if by_rule.get(rule)}

    reference = json.loads(Path(args.reference).read_text())["timings"]["rules"] if Path(args.reference).exists() else {}
    shard_ratio = (n1 / shards1) / (n0 / shards0)
    rows = defaultdict(lambda: {"jobs": 0, "threads": 1, "base_s": 0.0, "projected_s": 0.0, "sources": set(),
                                "scaling": "fixed"})
    per_job = []
    for job in target_jobs:
        rule = job["rule"]
        row = rows[rule]
        row["jobs"] += 1
        row["threads"] = job["threads"]
        name = relative(job["benchmark"], target_results) if job["benchmark"] else None
        if name in base:
            cost, source = base[name][1], "job"
        elif name and by_pattern.get((rule, pattern(name))):
            vals = by_pattern[(rule, pattern(name))]
            cost, source = sum(vals) / len(vals), "pattern mean"
        elif by_rule.get(rule):
            cost, source = sum(by_rule[rule]) / len(by_rule[rule]), "rule mean"
        elif rule in reference:
            cost, source = reference[rule]["wall_s"] / reference[rule]["jobs"], "reference run (other CPU)"
        else:
            cost, source = 0.0, "unmeasured"
        if rule in SHARD_RULES and rule in shard_factor:
            factor, row["scaling"] = shard_factor[rule], f"per shard x{shard_factor[rule]:.2f} measured"
        elif rule in SHARD_RULES:
            factor, row["scaling"] = shard_ratio, f"per shard x{shard_ratio:.2f} (shard size), assumed"
        elif rule in CORPUS_RULES:
            e = exponent.get(rule)
            row["scaling"] = f"(N/N0)^{e:.2f} measured" if e is not None else "linear, assumed"
            factor = (n1 / n0) ** (1.0 if e is None else e)
        else:
            factor = 1.0
        row["base_s"] += cost
        row["projected_s"] += cost * factor
        per_job.append({"rule": rule, "benchmark": name, "threads": job["threads"], "base_s": round(cost, 2),
                        "projected_s": round(cost * factor, 2), "from": source})
        row["sources"].add(source)

    total_core = sum(r["projected_s"] * r["threads"] for r in rows.values())
    print(f"base: {n0:,} tokens in {shards0} shards; target: {n1:,} tokens in {shards1} shards "
          f"({len(target_jobs)} jobs)")
    for rule, f in sorted(shard_factor.items()):
        print(f"  per shard {rule}: x{f:.2f} (mean shard job, target run over base runs)")
    for rule, ps in sorted(pairs.items()):
        print(f"  exponent {rule}: {exponent[rule]:.3f} from " + ", ".join(
            f"{name} {s0:.1f}->{s1:.1f} s" for name, s0, s1 in ps))
    print()
    print("| rule | jobs | threads | scaling | job time at base size, s | projected job time, s | cost from |")
    print("| --- | ---: | ---: | --- | ---: | ---: | --- |")
    for rule, r in sorted(rows.items(), key=lambda kv: -kv[1]["projected_s"] * kv[1]["threads"]):
        print(f"| {rule} | {r['jobs']} | {r['threads']} | {r['scaling']} | {r['base_s']:,.0f} | "
              f"{r['projected_s']:,.0f} | {', '.join(sorted(r['sources']))} |")
    print(f"\nprojected: {sum(r['projected_s'] for r in rows.values()):,.0f} s of job time, "
          f"{total_core:,.0f} core-s; on {args.cores} cores at least {total_core / args.cores / 3600:.2f} h")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"base_tokens": n0, "target_tokens": n1, "exponents": exponent,
             "rules": {k: {**v, "sources": sorted(v["sources"])} for k, v in rows.items()},
             "core_s": total_core, "jobs": per_job}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
