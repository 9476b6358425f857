"""Functions the worker-process tests run in spawned workers (they must be importable by name there)."""

from __future__ import annotations

import os
import time


def squares(limit: int, fail_at: int | None, worker: int, n_workers: int):
    """Items ``worker``, ``worker + n``… of ``0..limit-1`` as (index, index², the worker that made it)."""
    for i in range(worker, limit, n_workers):
        if i == fail_at:
            raise ValueError(f"no square for {i}")
        yield i, i * i, worker


def dies_at(limit: int, die_at: int, worker: int, n_workers: int):
    """As :func:`squares`, the worker of item ``die_at`` exiting there without a word (a kill, say)."""
    for i in range(worker, limit, n_workers):
        if i == die_at:
            os._exit(3)
        yield i


def slow(pid_file: str, worker: int, n_workers: int):
    """Writes its pid, then items slowly, forever (a worker still busy when the caller stops)."""
    with open(f"{pid_file}.{worker}", "w") as fh:
        fh.write(str(os.getpid()))
    i = worker
    while True:
        time.sleep(0.05)
        yield i
        i += n_workers


def log_job(folder: str, job) -> None:
    """A job of the worker-jobs tests: appended to ``folder/<pid>`` (which worker ran which jobs, in order)."""
    with open(os.path.join(folder, str(os.getpid())), "a") as fh:
        fh.write(f"{job}\n")


def job_fails_at(bad, job) -> None:
    """A job that raises on ``bad``."""
    if job == bad:
        raise KeyError(f"no job {job}")


def job_dies_at(bad, job) -> None:
    """A job whose worker exits without a word on ``bad`` (a kill, say)."""
    if job == bad:
        os._exit(4)
