"""A config's plan costed: every job of its dry run through the planning model (staticvec.dag.costs), summed
per rule and in total (jobs, CPU-hours, GPU-hours, peak memory, disk), with the sizes it was computed from.

The jobs are Snakemake's own (``snakemake -n --forceall``, read by :mod:`staticvec.dag.dryrun`), and each
job's figures are the ones its rule requests from SLURM (:meth:`CostModel.resources`), so the table is what
the cluster would be asked for. The peak disk is every kept output, plus the largest set of temporary
outputs of one rule (they live together until their reader has run), plus the scratch of the
``plan.scratch_jobs`` largest jobs running at once.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from staticvec.dag.costs import CostModel, JobCost, Wildcards
from staticvec.dag.dryrun import dry_run, job_rule_and_wildcards, planned_jobs
from staticvec.dag.unit_costs import UnitCosts, load_gpu_check, overlay_gpu_check


@dataclass
class CostedJob:
    rule: str
    wildcards: dict
    cost: JobCost
    mem_mb: int
    runtime_min: int


@dataclass
class RuleTotal:
    rule: str
    jobs: int = 0
    device: str = "cpu"
    threads: int = 1
    work_h: float = 0.0
    cpu_h: float = 0.0
    gpu_h: float = 0.0
    max_mem_mb: int = 0
    max_runtime_min: int = 0
    min_work_min: float = float("inf")
    disk_gb: float = 0.0
    temp_gb: float = 0.0
    scratch_gb: float = 0.0
    basis: str = ""
    flags: set = field(default_factory=set)


@dataclass
class Plan:
    config: dict
    model: CostModel
    jobs: list[CostedJob]
    replaced: list[str] = field(default_factory=list)  # GPU figures taken from a gpu_check JSON

    def rules(self) -> list[RuleTotal]:
        out: dict[str, RuleTotal] = {}
        for job in self.jobs:
            c = job.cost
            r = out.setdefault(job.rule, RuleTotal(job.rule, basis=c.basis))
            r.jobs += 1
            r.device = "gpu" if c.device == "gpu" or r.device == "gpu" else "cpu"
            r.threads = max(r.threads, c.threads)
            r.work_h += c.work_s / 3600
            r.cpu_h += c.core_hours
            r.gpu_h += c.gpu_hours
            r.max_mem_mb = max(r.max_mem_mb, job.mem_mb)
            r.max_runtime_min = max(r.max_runtime_min, job.runtime_min)
            r.min_work_min = min(r.min_work_min, c.work_s / 60)
            if c.temp:
                r.temp_gb += c.disk_gb
            else:
                r.disk_gb += c.disk_gb
            r.scratch_gb = max(r.scratch_gb, c.scratch_gb)
            r.flags.update(c.flags)
        return sorted(out.values(), key=lambda r: -(r.cpu_h + 100 * r.gpu_h))

    def totals(self) -> dict:
        rules = self.rules()
        scratch = sorted((j.cost.scratch_gb for j in self.jobs), reverse=True)
        n_scratch = int(self.model.plan.get("scratch_jobs", 4))
        kept = sum(r.disk_gb for r in rules)
        temp = max((r.temp_gb for r in rules), default=0.0)
        gpu_jobs = [j for j in self.jobs if j.cost.device == "gpu"]
        threshold = float(self.model.plan.get("gpu_allocation_minutes", 30))
        short = sorted((j for j in gpu_jobs if j.cost.work_s / 60 < threshold), key=lambda j: j.cost.work_s)
        biggest = max(self.jobs, key=lambda j: j.mem_mb)
        return {
            "jobs": len(self.jobs),
            "cpu_hours": sum(r.cpu_h for r in rules),
            "gpu_hours": sum(r.gpu_h for r in rules),
            "gpu_jobs": len(gpu_jobs),
            "shortest_gpu_job_min": min((j.cost.work_s / 60 for j in gpu_jobs), default=None),
            "short_gpu_jobs": [f"{j.rule} {_wildcards_text(j.wildcards)} ({j.cost.work_s / 60:.0f} min)" for j in short],
            "kept_disk_gb": kept,
            "peak_disk_gb": kept + temp + sum(scratch[:n_scratch]),
            "disk_budget_gb": float(self.model.plan.get("disk_budget_gb", 1000)),
            "largest_mem_mb": biggest.mem_mb,
            "largest_mem_job": f"{biggest.rule} {_wildcards_text(biggest.wildcards)}".strip(),
            "longest_runtime_min": max(j.runtime_min for j in self.jobs),
            "requested_cpu_hours": sum(j.runtime_min / 60 * j.cost.threads for j in self.jobs if j.cost.device == "cpu"),
            "requested_gpu_hours": sum(j.runtime_min / 60 for j in gpu_jobs),
        }

    def sizes(self) -> dict:
        s = self.model.sizes
        return {"tokens": s.tokens, "source": s.source, "shards": s.shards, "shard_tokens": s.shard_tokens,
                "vocabulary": s.vocabulary(), "types": s.types(), "shard_words": s.shard_words(),
                "window5_entries": s.window_entries(), "extrapolated": s.extrapolated(),
                "semglove_shards_per_job": self.model.SG.part_size}

    def to_json(self) -> dict:
        return {"sizes": self.sizes(), "totals": self.totals(), "gpu_figures_from_gpu_check": self.replaced,
                "estimates": self.model.unit.estimates(),
                "rules": [{**{k: v for k, v in vars(r).items() if k != "flags"}, "flags": sorted(r.flags)} for r in self.rules()]}

    def markdown(self) -> str:
        s, t = self.sizes(), self.totals()
        lines = [
            f"Corpus: {s['tokens']:,.0f} training tokens ({s['source']}) in {s['shards']} shards of {s['shard_tokens']:,.0f}; "
            f"vocabulary {s['vocabulary']:,.0f} words (min count {self.model.sizes.min_count}), {s['types']:,.0f} types; "
            f"{s['shard_words']:,.0f} vocabulary words met per shard; window-5 store {s['window5_entries']:,.0f} entries; "
            f"SemGloVe builder jobs of {s['semglove_shards_per_job']} shard(s).",
        ]
        if s["extrapolated"]:
            lines.append("Extrapolated beyond the measured range: " + "; ".join(s["extrapolated"]) + ".")
        lines += [
            "",
            "| rule | jobs | device | threads | CPU-h | GPU-h | largest mem request | longest runtime request | "
            "shortest job, min | disk kept, GB | how |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for r in self.rules():
            flags = f" [{', '.join(sorted(r.flags))}]" if r.flags else ""
            lines.append(f"| {r.rule} | {r.jobs} | {r.device} | {r.threads} | {r.cpu_h:,.1f} | {r.gpu_h:,.1f} | "
                         f"{r.max_mem_mb / 1000:,.1f} GB | {_hours(r.max_runtime_min)} | {r.min_work_min:,.1f} | "
                         f"{r.disk_gb + r.temp_gb:,.1f}{' (temp)' if r.temp_gb else ''} | {r.basis}{flags} |")
        lines += [
            "",
            f"**Total: {t['jobs']:,} jobs, {t['cpu_hours']:,.0f} CPU-hours (core-hours, GPU jobs' cores included), "
            f"{t['gpu_hours']:,.1f} GPU-hours in {t['gpu_jobs']} GPU jobs"
            + (f" (the shortest {t['shortest_gpu_job_min']:,.0f} min of modelled work)" if t["gpu_jobs"] else "")
            + f"; peak disk {t['peak_disk_gb']:,.0f} GB (budget {t['disk_budget_gb']:,.0f} GB; kept outputs "
            f"{t['kept_disk_gb']:,.0f} GB); largest memory request {t['largest_mem_mb'] / 1000:,.1f} GB "
            f"({t['largest_mem_job']}).**",
            f"Requested (with margins): {t['requested_cpu_hours']:,.0f} CPU core-hours, {t['requested_gpu_hours']:,.1f} GPU-hours; "
            f"the longest request {_hours(t['longest_runtime_min'])}.",
        ]
        if t["short_gpu_jobs"]:
            short, more = t["short_gpu_jobs"][:8], len(t["short_gpu_jobs"]) - 8
            lines.append(f"{len(t['short_gpu_jobs'])} GPU job(s) under {self.model.plan.get('gpu_allocation_minutes', 30)} "
                         f"min of modelled work: " + "; ".join(short) + (f"; and {more} more" if more > 0 else "") + ".")
        if self.replaced:
            lines.append("GPU figures measured (--gpu-check): " + ", ".join(self.replaced) + ".")
        estimates = self.model.unit.estimates()
        if estimates:
            lines.append("Resting on estimates (config/unit_costs.yaml, status estimate): " + ", ".join(estimates) + ".")
        return "\n".join(lines)


def _hours(minutes: float) -> str:
    return f"{minutes / 60:,.1f} h" if minutes >= 90 else f"{minutes:,.0f} min"


def _wildcards_text(wildcards: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in wildcards.items())


def with_gpu_check(configfiles: list, gpu_check: list | None, workdir: Path) -> tuple[list, list[str]]:
    """The config files with the gpu_check JSONs' GPU figures in force (a unit-cost file written beside,
    named by an extra config file), and the figures replaced."""
    if not gpu_check:
        return list(configfiles), []
    from staticvec.config import load_config

    config = load_config(configfiles)
    unit = UnitCosts.load(config.get("plan", {}).get("unit_costs", "config/unit_costs.yaml"))
    unit, replaced = overlay_gpu_check(unit, [load_gpu_check(f) for f in gpu_check], " + ".join(map(str, gpu_check)))
    costs_file, override = workdir / "unit_costs.yaml", workdir / "plan-gpu-check.yaml"
    costs_file.write_text(yaml.safe_dump(unit.data, sort_keys=False))
    override.write_text(yaml.safe_dump({"plan": {"unit_costs": str(costs_file)}}))
    return list(configfiles) + [str(override)], replaced


def cost_plan(configfiles: list, root: str | Path = ".", gpu_check: list | None = None) -> Plan:
    """Every job of the config's dry run, costed by the model the rules request from."""
    from staticvec.config import load_config, validate_config
    from staticvec.dag.rules import RuleFunctions
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.teacher import TeacherPlan
    from staticvec.dag.workflow import Workflow

    root = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="staticvec-plan-") as tmp:
        files, replaced = with_gpu_check([str(Path(f).resolve()) for f in configfiles], gpu_check, Path(tmp))
        config = load_config(files)
        validate_config(config, sources=" + ".join(map(str, files)))
        workflow = Workflow(config, root)
        rf = RuleFunctions(config, workflow, TeacherPlan(config), SemgloveRules(config))
        model = rf.costs
        model.unit  # noqa: B018 - loaded now, while an overlaid unit-cost file exists
        output = dry_run(files, root)
    jobs = []
    for planned in planned_jobs(output):
        named = job_rule_and_wildcards(planned)
        if named is None or named[0] == "all":
            continue
        rule, wildcards = named
        cost = model.job(rule, Wildcards(wildcards))
        jobs.append(CostedJob(rule, wildcards, cost, model.mem_mb(cost), model.runtime_minutes(cost)))
    return Plan(config, model, jobs, replaced)


def write_json(plan: Plan, path: str | Path) -> None:
    Path(path).write_text(json.dumps(plan.to_json(), indent=1, default=float))
