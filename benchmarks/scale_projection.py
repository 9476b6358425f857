"""Project a config's whole DAG to its corpus size from job times measured at another size (issues 21, 36).

Every job of the target plan (Snakemake's dry run of the given config files with ``--forceall``: rule,
benchmark file, threads) gets a cost measured at the base size on this machine:

1. the job of the same benchmark name in a base run (``--base``: results directories whose benchmark
   files were written by workflow runs of the base config), else
2. for a training job of a sweep point (``train/<base>~<point>/seed<s>``), its main row's job (the same
   method; a corpus fraction scales it below), else
3. the mean of that rule's base jobs with the same name pattern (digits folded: every teacher shard of
   one feature set, every tokenize job), else the rule's mean over all its base jobs, else
4. the reference run's mean for the rule (``benchmarks/results/tour-1m-2026-11-26/manifest.json``; with no ``--base`` run this
   is every job's cost; flagged).

Then it scales the cost by what the job reads:

- a shard job (teacher passes, co-occurrence counting of one shard) by the measured per-shard factor (a
  ``--scaled`` run, else ``--growth``), else the ratio of shard sizes in tokens, target over base;
- a job that reads the whole corpus or a fraction of it (training, merges, the corpus cut) by
  ``(f1·N1 / (f0·N0)) ** e``: the tokens it reads (its embedding's corpus fraction f of the corpus N) over
  those of the base job its cost came from, ``e`` measured per rule from the jobs of the same name in a base
  run and a scaled run (``--scaled``: a run at the target size), else taken from ``--growth`` (a JSON of
  exponents measured before, ``benchmarks/growth.json``), else 1 (flagged);
- a classification job (one job runs every classifier seed of its row) by its seeds, target over base;
- everything else (evaluation, tagging runs, post-processing, figures, fetching): unchanged.

It prints the per-rule and per-stage tables, the total job time and its ratio to the base run's, and the
total in core-seconds (job time x threads); with ``--cores`` the lower bound on the run's wall time (total /
cores: the DAG's critical path is far shorter, see benchmarks/README.md). ``--json`` writes all of it, per
job, for ``staticvec report reference --projection`` (a run's timings.md sets its measured times beside the
projection). What it cannot know: jobs that no run has measured on this machine, and the evaluation's growth
with the vocabulary (the analogy sets search every word: 3.9x the words at 10M tokens) — both are listed.
Without a run of the target size, the target's tokens are its config's ``corpus.max_tokens``.

    PYTHONPATH=workflow python benchmarks/scale_projection.py \\
        --target-config config/config.yaml benchmarks/scale10m.yaml \\
        --base-config config/config.yaml benchmarks/scale1m.yaml \\
        --base results/scale1m results/default --scaled results/scale10m --cores 2 --json projection.json

(the base and scaled runs: ``snakemake --configfile config/config.yaml benchmarks/scale1m.yaml ...``
and the same with ``scale10m.yaml``; benchmarks/README.md gives the targets). The base runs' job times
count only if they were taken with the plan being projected (e.g. the teacher passes' sets), on the
machine in question: list the runs in order, the first run holding a job wins. The claims scale:

    PYTHONPATH=workflow python benchmarks/scale_projection.py \\
        --target-config config/config.yaml config/claims10m.yaml --base results/default \\
        --growth benchmarks/growth.json --json benchmarks/projections/claims10m.json
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
from staticvec.dag.workflow import Workflow  # noqa: E402
from staticvec.errors import StaticvecError  # noqa: E402

# rule -> how its cost grows with the corpus (see the module text); per-input jobs (tokenize) keep their
# cost and grow in number; rules not named are fixed
from staticvec.report.reference import PER_SHARD_RULES as SHARD_RULES  # noqa: E402
from staticvec.report.reference import WHOLE_CORPUS_RULES as CORPUS_RULES  # noqa: E402
from staticvec.report.reference import read_benchmark  # noqa: E402


def dry_run(configfiles: list[str]) -> tuple[list[dict], str, Workflow]:
    """The plan's jobs (rule, benchmark path or None for rules without one, threads), its results directory and
    its planning layer (each job's corpus fraction, classifier seeds)."""
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
    return jobs, config["results_dir"], Workflow(config)


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


def growth_of(path: str | None) -> dict:
    """Measured growth of the corpus-driven rules (``--growth``): ``exponents`` {rule: e} (a whole-corpus
    job's time grows as tokens^e) and ``per_shard`` {rule: factor} (a shard job of the same size at the target
    size, over the base); used where no ``--scaled`` run measured the rule."""
    if not path:
        return {"exponents": {}, "per_shard": {}}
    data = json.loads(Path(path).read_text())
    return {"exponents": dict(data.get("exponents") or {}), "per_shard": dict(data.get("per_shard") or {}),
            "source": data.get("source")}


EMB_JOB = re.compile(r"^train/([^/]+)/seed(\d+)(\..+)?$")  # LOG_STEMS "train" and "same_run": train/{emb}/seed{seed}


def emb_of(name: str | None) -> str | None:
    match = EMB_JOB.match(name or "")
    return match.group(1) if match else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target-config", nargs="+", required=True, help="config files of the plan to project")
    ap.add_argument("--base-config", nargs="+", default=["config/config.yaml"],
                    help="config files of the base runs' plan (to name their jobs' rules)")
    ap.add_argument("--base", nargs="*", default=[],
                    help="results directories of runs at the base size (none: the reference manifest's rule means)")
    ap.add_argument("--scaled", nargs="*", default=[], help="results directories of runs at the target size")
    ap.add_argument("--growth", help="JSON of measured growth (exponents, per-shard factors) where no --scaled run is given")
    ap.add_argument("--reference", default="benchmarks/results/tour-1m-2026-11-26/manifest.json")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--json", help="also write the projection here (staticvec report reference --projection reads it)")
    args = ap.parse_args(argv)

    target_jobs, target_results, target_flow = dry_run(args.target_config)
    base_plan, base_results, base_flow = dry_run(args.base_config)

    # rule of each benchmark name, in both plans (names are relative to the run's benchmarks/)
    rule_of: dict = {}
    for jobs, res in ((base_plan, base_results), (target_jobs, target_results)):
        for job in jobs:
            if job["benchmark"]:
                name = relative(job["benchmark"], res)
                rule_of[name] = job["rule"]
                rule_of[("pattern", pattern(name))] = job["rule"]

    reference_manifest = json.loads(Path(args.reference).read_text()) if Path(args.reference).exists() else {}
    reference = (reference_manifest.get("timings") or {}).get("rules") or {}
    base_runs = [Path(p) for p in args.base]
    if base_runs:
        n0, shards0 = corpus_tokens(base_runs[0])
    elif reference_manifest:
        n0, shards0 = reference_manifest["tokens"], base_flow.n_shards
    else:
        sys.exit("no base run and no reference manifest: nothing measured to project from")
    base: dict[str, tuple[str, float]] = {}
    for run in base_runs:  # the first run that has a job wins
        for name, sample in samples_of(run, rule_of).items():
            base.setdefault(name, sample)
    by_pattern, by_rule = defaultdict(list), defaultdict(list)
    for name, (rule, s) in base.items():
        by_pattern[(rule, pattern(name))].append((name, s))
        by_rule[rule].append((name, s))

    target_root = Path(target_results)
    n1 = shards1 = None
    for run in [Path(p) for p in args.scaled] + [target_root]:
        if (run / "corpus" / "manifest.json").exists():
            n1, shards1 = corpus_tokens(run)
            break
    target_size = "measured"
    if n1 is None:  # no run of the target size yet: the config's budget and shards
        budget = target_flow.config["corpus"]["max_tokens"]
        if not budget:
            sys.exit("no corpus manifest of the target size and no corpus.max_tokens: run its corpus stage (or pass --scaled)")
        n1, shards1, target_size = int(budget), target_flow.n_shards, "the config's corpus.max_tokens (no corpus manifest yet)"

    growth = growth_of(args.growth)
    scaled = [samples_of(Path(p), rule_of) for p in args.scaled]
    # measured exponents: the same job name at both sizes
    pairs = defaultdict(list)
    for samples in scaled:
        for name, (rule, s1) in samples.items():
            if name in base and rule in CORPUS_RULES:
                pairs[rule].append((name, base[name][1], s1))
    exponent = {rule: float(e) for rule, e in growth["exponents"].items()}
    exponent.update({rule: sum(math.log(s1 / s0) for _, s0, s1 in ps) / len(ps) / math.log(n1 / n0)
                     for rule, ps in pairs.items()})
    measured_exponent = set(pairs)
    # a shard job's cost at the target size, where a scaled run measured the rule: the ratio of the mean
    # shard job (a shard of the same size meets a larger vocabulary in a larger corpus)
    scaled_shards = defaultdict(list)
    for samples in scaled:
        for rule, s1 in samples.values():
            if rule in SHARD_RULES:
                scaled_shards[rule].append(s1)
    shard_factor = {rule: float(f) for rule, f in growth["per_shard"].items()}
    shard_factor.update({rule: (sum(v) / len(v)) / (sum(s for _, s in by_rule[rule]) / len(by_rule[rule]))
                         for rule, v in scaled_shards.items() if by_rule.get(rule)})

    def fraction(flow, name) -> float:
        """The corpus share a training job reads (its embedding's fraction; 1 for other jobs)."""
        emb = emb_of(name)
        return flow.spec(emb).fraction if emb and emb in flow.sheet else 1.0

    def classifier_seeds(flow, name) -> int:
        emb = name.split("/")[1] if name and name.startswith("eval/") and name.endswith("/classification") else None
        return len(flow.extrinsic_seeds(emb, "classification")) if emb else 1

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
        share0 = 1.0  # the corpus share of the base job(s) the cost comes from
        family = emb_of(name) and re.sub(r"^train/[^/~]+~[^/]+/", f"train/{emb_of(name).split('~')[0]}/", name)
        if name in base:
            cost, source = base[name][1], "job"
            share0 = fraction(base_flow, name)
        elif family and family in base and family != name:  # the same method's main row: a fraction of it
            cost, source = base[family][1], "the main row's job"
            share0 = fraction(base_flow, family)
        elif name and by_pattern.get((rule, pattern(name))):
            vals = by_pattern[(rule, pattern(name))]
            cost, source = sum(s for _, s in vals) / len(vals), "pattern mean"
            share0 = sum(fraction(base_flow, n) for n, _ in vals) / len(vals)
        elif by_rule.get(rule):
            vals = by_rule[rule]
            cost, source = sum(s for _, s in vals) / len(vals), "rule mean"
            share0 = sum(fraction(base_flow, n) for n, _ in vals) / len(vals)
        elif rule in reference:
            cost, source = reference[rule]["wall_s"] / reference[rule]["jobs"], "reference run's rule mean"
        else:
            cost, source = 0.0, "unmeasured"
        if rule in SHARD_RULES and rule in shard_factor:
            factor, row["scaling"] = shard_factor[rule], f"per shard x{shard_factor[rule]:.2f} measured"
        elif rule in SHARD_RULES:
            factor, row["scaling"] = shard_ratio, f"per shard x{shard_ratio:.2f} (shard size), assumed"
        elif rule in CORPUS_RULES:
            e = exponent.get(rule)
            how = "measured here" if rule in measured_exponent else "measured (--growth)"
            row["scaling"] = f"(N/N0)^{e:.2f} {how}" if e is not None else "linear, assumed"
            factor = ((fraction(target_flow, name) * n1) / (share0 * n0)) ** (1.0 if e is None else e)
        elif rule == "classification":  # one job runs every classifier seed of its row
            factor = classifier_seeds(target_flow, name) / classifier_seeds(base_flow, name)
            row["scaling"] = "x classifier seeds, target over base"
        else:
            factor = 1.0
        row["base_s"] += cost
        row["projected_s"] += cost * factor
        per_job.append({"rule": rule, "benchmark": name, "threads": job["threads"], "base_s": round(cost, 2),
                        "projected_s": round(cost * factor, 2), "from": source})
        row["sources"].add(source)

    total_job = sum(r["projected_s"] for r in rows.values())
    total_core = sum(r["projected_s"] * r["threads"] for r in rows.values())
    stages = defaultdict(lambda: {"jobs": 0, "projected_s": 0.0})
    for job in per_job:
        stage = job["benchmark"].split("/")[0] if job["benchmark"] else "(no benchmark)"
        stages[stage]["jobs"] += 1
        stages[stage]["projected_s"] += job["projected_s"]
    base_total = sum(s for _, s in base.values()) if base else \
        sum(v["wall_s"] for v in reference.values())
    print(f"base: {n0:,} tokens in {shards0} shards ({sum(len(v) for v in by_rule.values()) or 'no'} measured jobs, "
          f"{base_total:,.0f} s of job time); target: {n1:,} tokens in {shards1} shards, {target_size} "
          f"({len(target_jobs)} jobs)")
    for rule, f in sorted(shard_factor.items()):
        print(f"  per shard {rule}: x{f:.2f}")
    for rule, e in sorted(exponent.items()):
        detail = ", ".join(f"{name} {s0:.1f}->{s1:.1f} s" for name, s0, s1 in pairs[rule]) if rule in pairs else growth.get("source")
        print(f"  exponent {rule}: {e:.3f} ({detail})")
    print()
    print("| rule | jobs | threads | scaling | job time at base size, s | projected job time, s | cost from |")
    print("| --- | ---: | ---: | --- | ---: | ---: | --- |")
    for rule, r in sorted(rows.items(), key=lambda kv: -kv[1]["projected_s"] * kv[1]["threads"]):
        print(f"| {rule} | {r['jobs']} | {r['threads']} | {r['scaling']} | {r['base_s']:,.0f} | "
              f"{r['projected_s']:,.0f} | {', '.join(sorted(r['sources']))} |")
    print("\n| stage | jobs | projected job time, s |\n| --- | ---: | ---: |")
    for stage, v in sorted(stages.items()):
        print(f"| {stage} | {v['jobs']} | {v['projected_s']:,.0f} |")
    print(f"\nprojected: {total_job:,.0f} s of job time ({total_job / base_total:.2f}x the base run's {base_total:,.0f} s), "
          f"{total_core:,.0f} core-s; on {args.cores} cores at least {total_core / args.cores / 3600:.2f} h")
    if args.json:
        head = {"target_config": args.target_config, "base_config": args.base_config, "base": args.base,
                "reference": args.reference, "growth": args.growth, "cores": args.cores,
                "base_tokens": n0, "target_tokens": n1, "target_size": target_size, "exponents": exponent,
                "per_shard": shard_factor, "base_job_s": round(base_total, 1), "job_s": round(total_job, 1),
                "core_s": round(total_core, 1),
                "stages": {k: {**v, "projected_s": round(v["projected_s"], 1)} for k, v in sorted(stages.items())},
                "rules": {k: {**v, "base_s": round(v["base_s"], 1), "projected_s": round(v["projected_s"], 1),
                              "sources": sorted(v["sources"])} for k, v in sorted(rows.items())}}
        # one line per job, so that the committed file diffs job by job
        text = json.dumps(head, indent=1)[:-2] + ',\n "jobs": [\n' + ",\n".join("  " + json.dumps(j) for j in per_job)
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n ]\n}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
