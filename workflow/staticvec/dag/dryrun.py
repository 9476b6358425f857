"""Snakemake's dry run read back as the planned jobs (the golden DAG test, the scale projection, the
planning command ``staticvec plan costs``).

``snakemake -n`` prints one block per job::

    rule train_glove:
        input: ...
        output: results/default/embeddings/glove/seed1/vectors.bin
        wildcards: emb=glove, seed=1
        benchmark: results/default/benchmarks/train/glove/seed1.tsv
        threads: 1

except for a rule with a ``message`` (the teacher passes), which prints ``Job N: <message>`` instead of
its block: such a job has only its message.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from staticvec.errors import StaticvecError

BLOCK = re.compile(r"^(?:local)?rule (\S+):$")
MESSAGE = re.compile(r"^Job \d+: (.+)$")
FIELDS = ("input", "output", "wildcards", "benchmark", "threads")


@dataclass(frozen=True)
class PlannedJob:
    """One job of a dry run: its rule's block fields, or (``rule`` None) its rule's message alone."""

    rule: str | None
    output: str = ""
    wildcards: str = ""
    input: str = ""
    benchmark: str | None = None
    threads: int = 1
    message: str | None = None

    @property
    def inputs(self) -> list[str]:
        return split_files(self.input)

    @property
    def outputs(self) -> list[str]:
        return split_files(self.output)


def split_files(field: str) -> list[str]:
    """The files of a block's ``input:`` or ``output:`` line (Snakemake joins them with ', ')."""
    return [f for f in field.split(", ") if f] if field else []


def planned_jobs(dry_run_output: str) -> list[PlannedJob]:
    """The jobs of a dry run's standard output, in the order printed."""
    jobs: list[PlannedJob] = []
    fields: dict | None = None  # the fields of the block being read

    def close():
        if fields is not None:
            jobs.append(PlannedJob(**fields))

    for line in dry_run_output.splitlines():
        block, message = BLOCK.match(line), MESSAGE.match(line)
        if block or message or not line.startswith("    "):
            close()
            fields = None
        if block:
            fields = {"rule": block.group(1)}
        elif message:
            jobs.append(PlannedJob(rule=None, message=message.group(1)))
        elif fields is not None:
            key, _, value = line.strip().partition(": ")
            if key in FIELDS:
                fields[key] = int(value) if key == "threads" else value
    close()
    return jobs


def dry_run(configfiles, root: str | os.PathLike = ".", extra: tuple[str, ...] = ()) -> str:
    """The standard output of ``snakemake -n --forceall`` of the workflow in ``root`` with ``configfiles``
    (every job of the plan, whatever exists already); an error with Snakemake's message if it fails."""
    root = Path(root).resolve()
    cmd = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--cores", "2", "--directory", str(root),
           "--snakefile", str(root / "Snakefile"), "--configfile", *map(str, configfiles), *extra]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "workflow"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env)
    if done.returncode != 0:
        raise StaticvecError(f"the dry run failed: {' '.join(cmd)}\n{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout


def job_rule_and_wildcards(job: PlannedJob) -> tuple[str, dict[str, str]] | None:
    """(rule, wildcards) of a planned job; a teacher pass (printed as its message) is rule
    teacher_features with its teacher, set and shard; None for another message-only job."""
    if job.rule is not None:
        wildcards = {}
        for item in filter(None, (s.strip() for s in re.split(r",\s(?=[A-Za-z_]\w*=)", job.wildcards or ""))):
            key, _, value = item.partition("=")
            wildcards[key] = value
        return job.rule, wildcards
    from staticvec.dag.teacher import pass_of_message

    teacher_pass = pass_of_message(job.message or "")
    if teacher_pass is None:
        return None
    teacher, fset, shard = teacher_pass
    return "teacher_features", {"teacher": teacher, "fset": fset, "shard": shard}
