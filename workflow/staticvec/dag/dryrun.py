"""Snakemake's dry run read back as the planned jobs (the golden DAG test, the scale projection).

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

import re
from dataclasses import dataclass

BLOCK = re.compile(r"^(?:local)?rule (\S+):$")
MESSAGE = re.compile(r"^Job \d+: (.+)$")
FIELDS = ("output", "wildcards", "benchmark", "threads")


@dataclass(frozen=True)
class PlannedJob:
    """One job of a dry run: its rule's block fields, or (``rule`` None) its rule's message alone."""

    rule: str | None
    output: str = ""
    wildcards: str = ""
    benchmark: str | None = None
    threads: int = 1
    message: str | None = None


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
