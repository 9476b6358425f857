"""The plan's peak disk: what exists at each moment of a schedule of the dry run's jobs, with Snakemake's
temporary outputs deleted once read.

The schedule: every job starts as soon as the jobs writing its inputs have ended (a cluster that queues
nothing) and runs for its modelled time (``JobCost.work_s``, no margin). What exists:

- a kept output, from its job's start (the job writes it while it runs) to the end of the run;
- a temporary output (``temp()``: ``plan.temporary``, ``cooc.keep_shard_stores: false``), from its job's start
  to the end of its last reader, when Snakemake deletes it (one read by no job of the plan stays: Snakemake keeps
  a temporary file nothing reads);
- a job's scratch (GloVe's shuffled copy of its store, checkpoints, spilled runs), while it runs: the
  ``plan.scratch_jobs`` largest scratches of the jobs running at that moment. This is an assumption: nothing
  in Snakemake bounds how many such jobs run at once.

The peak is the largest sum over the schedule (at one moment, what ends goes before what starts: a job that
starts then is one waiting for those that end); :class:`DiskPeak` says when it is reached and what makes it
up, rule by rule.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from staticvec.errors import StaticvecError


@dataclass(frozen=True)
class ScheduledJob:
    """What the schedule needs of a planned job: its files and its cost (``staticvec.dag.costs.JobCost``)."""

    rule: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    work_s: float
    disk_gb: float
    temp: bool
    scratch_gb: float


@dataclass
class DiskPeak:
    gb: float
    hours: float  # when, from the start of the schedule
    kept_gb: float
    temp_gb: float
    scratch_gb: float
    parts: dict = field(default_factory=dict)  # (rule, "kept" | "temp" | "scratch") -> GB at the peak
    makespan_hours: float = 0.0

    def largest_parts(self, n: int = 6) -> list[tuple[str, str, float]]:
        return [(rule, kind, gb) for (rule, kind), gb in sorted(self.parts.items(), key=lambda kv: -kv[1])[:n] if gb > 0]


def schedule(jobs: list[ScheduledJob]) -> tuple[list[float], list[float], list[set[int]]]:
    """Start and end (seconds) of every job when each starts once its inputs' jobs have ended, and each
    job's readers (the jobs reading one of its outputs)."""
    producer = {f: i for i, job in enumerate(jobs) for f in job.outputs}
    deps = [{producer[f] for f in job.inputs if f in producer} - {i} for i, job in enumerate(jobs)]
    readers: list[set[int]] = [set() for _ in jobs]
    for i, d in enumerate(deps):
        for p in d:
            readers[p].add(i)
    waiting = [len(d) for d in deps]
    ready = [i for i, n in enumerate(waiting) if n == 0]
    start, end = [math.nan] * len(jobs), [math.nan] * len(jobs)
    while ready:
        i = ready.pop()
        start[i] = max((end[d] for d in deps[i]), default=0.0)
        end[i] = start[i] + max(0.0, jobs[i].work_s)
        for r in readers[i]:
            waiting[r] -= 1
            if waiting[r] == 0:
                ready.append(r)
    stuck = [jobs[i].rule for i, t in enumerate(start) if math.isnan(t)]
    if stuck:
        raise StaticvecError(f"the planned jobs' inputs form a cycle (jobs of {', '.join(sorted(set(stuck))[:5])})")
    return start, end, readers


def disk_peak(jobs: list[ScheduledJob], scratch_jobs: int) -> DiskPeak:
    """The most disk that exists at once over the schedule (module text)."""
    start, end, readers = schedule(jobs)
    adds, removes = defaultdict(list), defaultdict(list)  # time -> [(job, kind, GB)]
    for i, job in enumerate(jobs):
        if job.disk_gb > 0:
            temp = job.temp and readers[i]
            kind = "temp" if temp else "kept"
            adds[start[i]].append((i, kind, job.disk_gb))
            if temp:
                removes[max(end[r] for r in readers[i])].append((i, kind, job.disk_gb))
        if job.scratch_gb > 0:
            adds[start[i]].append((i, "scratch", job.scratch_gb))
            removes[end[i]].append((i, "scratch", job.scratch_gb))
    alive = Counter()  # (rule, kind) -> GB of outputs that exist
    running: dict[int, float] = {}  # job -> scratch GB while it runs
    best = DiskPeak(0.0, 0.0, 0.0, 0.0, 0.0, makespan_hours=max(end, default=0.0) / 3600)
    for t in sorted(set(adds) | set(removes)):
        for i, kind, gb in removes.get(t, ()):
            if kind == "scratch":
                running.pop(i, None)
            else:
                alive[jobs[i].rule, kind] -= gb
        for i, kind, gb in adds.get(t, ()):
            if kind == "scratch":
                running[i] = gb
            else:
                alive[jobs[i].rule, kind] += gb
        counted = heapq.nlargest(scratch_jobs, running.items(), key=lambda kv: kv[1])
        kept = sum(gb for (_, kind), gb in alive.items() if kind == "kept")
        temp = sum(gb for (_, kind), gb in alive.items() if kind == "temp")
        scratch = sum(gb for _, gb in counted)
        if kept + temp + scratch > best.gb:
            parts = Counter({k: v for k, v in alive.items() if v > 1e-9})
            for i, gb in counted:
                parts[jobs[i].rule, "scratch"] += gb
            best = DiskPeak(kept + temp + scratch, t / 3600, kept, temp, scratch, dict(parts), best.makespan_hours)
    return best
