"""A config's plan costed: every job of its dry run through the planning model (staticvec.dag.costs), summed
per rule and in total (jobs, CPU-hours, GPU-hours, peak memory, disk), with the sizes it was computed from.

The jobs are Snakemake's own (``snakemake -n --forceall``, read by :mod:`staticvec.dag.dryrun`), and each
job's figures are the ones its rule requests from SLURM (:meth:`CostModel.resources`), so the table is what
the cluster would be asked for. The peak disk is the most that exists at once over a schedule of those jobs,
temporary outputs deleted once their readers have run (:mod:`staticvec.plan.disk`).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from staticvec.dag.costs import GPU_CAPABLE_RULES, CostModel, JobCost, Wildcards
from staticvec.dag.dryrun import dry_run, job_rule_and_wildcards, planned_jobs
from staticvec.dag.unit_costs import UnitCosts, load_gpu_check, overlay_gpu_check
from staticvec.plan.disk import DiskPeak, ScheduledJob, disk_peak


@dataclass
class CostedJob:
    rule: str
    wildcards: dict
    cost: JobCost
    mem_mb: int
    runtime_min: int
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()

    def scheduled(self) -> ScheduledJob:
        c = self.cost
        return ScheduledJob(self.rule, self.inputs, self.outputs, c.work_s, c.disk_gb, c.temp, c.scratch_gb)


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
    _disk: DiskPeak | None = field(default=None, repr=False)

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

    def disk(self) -> DiskPeak:
        if self._disk is None:
            self._disk = disk_peak([j.scheduled() for j in self.jobs], int(self.model.plan.get("scratch_jobs", 4)))
        return self._disk

    def totals(self) -> dict:
        rules = self.rules()
        kept = sum(r.disk_gb for r in rules)
        peak = self.disk()
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
            "temporary_disk_gb": sum(r.temp_gb for r in rules),
            "peak_disk_gb": peak.gb,
            "peak_disk": {"hours": peak.hours, "kept_gb": peak.kept_gb, "temporary_gb": peak.temp_gb,
                          "scratch_gb": peak.scratch_gb, "makespan_hours": peak.makespan_hours,
                          "largest": [{"rule": r, "kind": k, "gb": gb} for r, k, gb in peak.largest_parts()]},
            "disk_budget_gb": float(self.model.plan.get("disk_budget_gb", 1000)),
            "largest_mem_mb": biggest.mem_mb,
            "largest_mem_job": f"{biggest.rule} {_wildcards_text(biggest.wildcards)}".strip(),
            "longest_runtime_min": max(j.runtime_min for j in self.jobs),
            "requested_cpu_hours": sum(j.runtime_min / 60 * j.cost.threads for j in self.jobs if j.cost.device == "cpu"),
            "requested_gpu_hours": sum(j.runtime_min / 60 for j in gpu_jobs),
        }

    def routing(self) -> list[dict]:
        """Each rule with a CUDA path costed both ways over its jobs, each job's start-up included (what every
        allocation pays: CostModel.held_hours): GPU-hours and the GPU jobs' core-hours on GPUs, core-hours on CPU
        nodes; the price of a GPU-hour (in core-hours) below which the GPU is the cheaper, and which is cheaper at
        ``plan.gpu_hour_core_hours``."""
        price = self.model.plan.get("gpu_hour_core_hours")
        out: dict[str, dict] = {}
        for job in self.jobs:
            if job.rule not in GPU_CAPABLE_RULES:
                continue
            wc = Wildcards(job.wildcards)
            gpu, cpu = self.model.job_on("gpu", job.rule, wc), self.model.job_on("cpu", job.rule, wc)
            r = out.setdefault(job.rule, {"rule": job.rule, "jobs": 0, "routed": job.cost.device, "gpu_hours": 0.0,
                                          "gpu_core_hours": 0.0, "cpu_core_hours": 0.0, "cpu_longest_h": 0.0})
            r["jobs"] += 1
            r["gpu_hours"] += self.model.held_hours(gpu)
            r["gpu_core_hours"] += self.model.routing_cost(gpu, 0.0)
            r["cpu_core_hours"] += self.model.routing_cost(cpu, 0.0)
            r["cpu_longest_h"] = max(r["cpu_longest_h"], cpu.work_s / 3600)
        for r in out.values():
            r["break_even"] = (r["cpu_core_hours"] - r["gpu_core_hours"]) / r["gpu_hours"] if r["gpu_hours"] else None
            r["cheaper"] = None if price is None else \
                ("gpu" if r["gpu_hours"] * float(price) + r["gpu_core_hours"] < r["cpu_core_hours"] else "cpu")
        return sorted(out.values(), key=lambda r: -r["gpu_hours"])

    def sizes(self) -> dict:
        s = self.model.sizes
        return {"tokens": s.tokens, "source": s.source, "shards": s.shards, "shard_tokens": s.shard_tokens,
                "vocabulary": s.vocabulary(), "types": s.types(), "shard_words": s.shard_words(),
                "window5_entries": s.window_entries(), "extrapolated": s.extrapolated(),
                "semglove_shards_per_job": self.model.SG.part_size}

    def to_json(self) -> dict:
        return {"sizes": self.sizes(), "totals": self.totals(), "gpu_figures_from_gpu_check": self.replaced,
                "routing": self.routing() if self.model.gpu_run else [],
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
            f"{t['kept_disk_gb']:,.0f} GB, temporary {t['temporary_disk_gb']:,.0f} GB); largest memory request "
            f"{t['largest_mem_mb'] / 1000:,.1f} GB ({t['largest_mem_job']}).**",
            f"Requested (with margins): {t['requested_cpu_hours']:,.0f} CPU core-hours, {t['requested_gpu_hours']:,.1f} GPU-hours; "
            f"the longest request {_hours(t['longest_runtime_min'])}.",
            self.disk_markdown(),
        ]
        laned = self.lanes_markdown()
        if laned:
            lines.append(laned)
        md = self.md_stores_markdown()
        if md:
            lines.append(md)
        if t["short_gpu_jobs"]:
            short, more = t["short_gpu_jobs"][:8], len(t["short_gpu_jobs"]) - 8
            lines.append(f"{len(t['short_gpu_jobs'])} GPU job(s) under {self.model.plan.get('gpu_allocation_minutes', 30)} "
                         f"min of modelled work: " + "; ".join(short) + (f"; and {more} more" if more > 0 else "") + ".")
        if self.model.gpu_run:
            lines += self.routing_markdown()
        if self.replaced:
            lines.append("GPU figures measured (--gpu-check): " + ", ".join(self.replaced) + ".")
        estimates = self.model.unit.estimates()
        if estimates:
            lines.append("Resting on estimates (config/unit_costs.yaml, status estimate): " + ", ".join(estimates) + ".")
        return "\n".join(lines)


    def disk_markdown(self) -> str:
        """When the peak disk is reached in the schedule and what it is made of (staticvec.plan.disk)."""
        p = self.disk()
        parts = "; ".join(f"{rule} {kind} {gb:,.0f}" for rule, kind, gb in p.largest_parts() if gb >= 0.5) or "none over 0.5"
        return (f"Peak disk: the most that exists at once when every job starts as soon as its inputs exist and runs "
                f"its modelled time ({p.makespan_hours:,.1f} h in all), temporary outputs deleted once their last reader "
                f"has run, plus the scratch of the {self.model.plan.get('scratch_jobs', 4)} largest jobs running (assumed): "
                f"{p.gb:,.0f} GB at hour {p.hours:,.1f}: kept {p.kept_gb:,.0f}, temporary {p.temp_gb:,.0f}, scratch "
                f"{p.scratch_gb:,.0f} GB (largest, GB: {parts}).")

    def lanes_markdown(self) -> str:
        """The rules made in lanes (config plan.lanes, staticvec.dag.lanes): how many items, how many at once."""
        from staticvec.dag.lanes import item_of

        lanes = self.model.plan.get("lanes") or {}
        parts = [f"{rule} {n} lane(s) over {len({item_of(rule, j.wildcards) for j in self.jobs if j.rule == rule})} "
                 "item(s)" for rule, n in lanes.items()]
        if not parts:
            return ""
        return ("In lanes (`plan.lanes`; an item waits until the readers of the one before it in its lane have run, so at "
                "most that many items' outputs exist at once): " + "; ".join(parts) + ".")

    def md_stores_markdown(self) -> str:
        """The MLM word stores' modelled size against what the builder can emit at most (CostModel.md_word_pairs)."""
        stores = [j for j in self.jobs if j.rule == "semglove_words"]
        if not stores:
            return ""
        m = self.model
        per_entry = float(m.unit.value("store_bytes_per_entry"))
        modelled = sum(m.md_word_pairs(j.wildcards.get("frac", "")) for j in stores)
        bound = sum(m.md_word_pairs_bound(j.wildcards.get("frac", "")) for j in stores)
        gate = ", less what the window gate removes (the released code: 97.5 % on that shard)" \
            if m.config["cooc"]["semglove"].get("gate_by_window") else ", ungated (the paper's eq. 14)"
        return (f"MLM word stores ({len(stores)}): {modelled:,.3g} entries, {modelled * per_entry / 1e9:,.0f} GB, "
                f"modelled as the one measured store's share of V^2 ({100 * m.md_measured_share():.2f} %: one shard at "
                f"{m.MD_MEASURED_VOCABULARY:,} words){gate}; what the builder can emit at most: V^2, {bound:,.3g} "
                f"entries, {bound * per_entry / 1e9:,.0f} GB.")

    def routing_markdown(self) -> list[str]:
        price = self.model.plan.get("gpu_hour_core_hours")
        lines = ["", "GPU or CPU nodes: each rule with a CUDA path costed both ways, every job's start-up of "
                 f"{self.model.plan.get('startup_minutes', 5)} min included (`plan.gpu_rules` routes; "
                 f"a GPU-hour priced at {price if price is not None else '(plan.gpu_hour_core_hours not set)'} "
                 "core-hours):", "",
                 "| rule | jobs | routed to | on GPUs: GPU-h | their cores' core-h | on CPU nodes: core-h | "
                 "longest CPU job | GPU cheaper below (core-h per GPU-h) | cheaper at the price |",
                 "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in self.routing():
            even = "never" if r["break_even"] is None or r["break_even"] <= 0 else f"{r['break_even']:,.0f}"
            lines.append(f"| {r['rule']} | {r['jobs']} | {r['routed']} | {r['gpu_hours']:,.1f} | {r['gpu_core_hours']:,.0f} | "
                         f"{r['cpu_core_hours']:,.0f} | {r['cpu_longest_h']:,.1f} h | {even} | {r['cheaper'] or '-'} |")
        return lines


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
        inputs, outputs = planned.inputs, planned.outputs
        if planned.rule is None:  # a teacher pass, printed as its message alone: its files from the planning layer
            wc = Wildcards(wildcards)
            inputs = list(rf.teacher_feature_inputs(wc).values())
            outputs = [model.TP.features(wc.teacher, wc.fset, wc.shard)]
        cost = model.job(rule, Wildcards(wildcards))
        jobs.append(CostedJob(rule, wildcards, cost, model.mem_mb(cost), model.runtime_minutes(cost),
                              tuple(inputs), tuple(outputs)))
    return Plan(config, model, jobs, replaced)


def write_json(plan: Plan, path: str | Path) -> None:
    Path(path).write_text(json.dumps(plan.to_json(), indent=1, default=float))
