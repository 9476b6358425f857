"""The ``sbatch`` submissions of a config's plan, rendered offline by the SLURM executor plugin itself.

Snakemake runs the workflow's dry run with the SLURM profile (``--workflow-profile
workflow/profiles/slurm``): it parses the profile (an unknown key, a setting the plugin rejects, is an
error there) and validates it against the ``slurm`` executor plugin, then hands each job to the dry-run
executor. That executor is wrapped so that every job also goes through the plugin's own submission code:
``validate_slurm_extra``, ``get_submit_command`` (runtime, memory, partition, cores, GPU task geometry) and
``set_gres_string`` (GPU and GRES requests) — the string it would pass to ``sbatch``, without calling it.
A resource the plugin refuses fails here, before any allocation is spent.

    staticvec plan sbatch --configfile config/config.yaml config/paper.yaml --stand-ins --json sbatch.json

One JSON line per job: its rule, wildcards, threads, resources and the sbatch command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from staticvec.errors import StaticvecError

PROFILE = "workflow/profiles/slurm"
DRY_RUN_CORES = 4096  # above any job's threads: the dry run then renders each job's own


def _render(out_path: str, argv: list[str]) -> int:
    """In the Snakemake process: wrap the dry-run executor, then run Snakemake's command line."""
    from snakemake.executors import dryrun
    from snakemake_executor_plugin_slurm import ExecutorSettings
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string
    from snakemake_executor_plugin_slurm.validation import validate_slurm_extra

    out = open(out_path, "w", encoding="utf-8")  # noqa: SIM115 - closed at exit with the process
    run_job = dryrun.Executor.run_job

    def render(self, job):
        validate_slurm_extra(job)
        partition = job.resources.get("slurm_partition")
        params = {"run_uuid": "RUN", "slurm_logfile": f".snakemake/slurm_logs/{job.name}/%j.log",
                  "comment_str": f"rule_{job.name}", "account": "",
                  "partition": f" -p {partition}" if partition else "", "workdir": str(Path.cwd())}
        # A dry run does not get the slurm plugin's parsed settings: 9.27 hands it none, 9.15 the dry-run
        # executor's bare settings (which lack the attributes get_submit_command reads). The render then uses
        # the plugin's defaults, so a --slurm-* option given on the command line is not in the rendered line.
        settings = getattr(self.workflow, "executor_settings", None)
        if not isinstance(settings, ExecutorSettings):
            settings = ExecutorSettings()
        call = get_submit_command(job, params, settings=settings) + set_gres_string(job)
        resources = {k: v for k, v in dict(job.resources).items() if not k.startswith("_") and isinstance(v, (int, str))}
        jobs = job.jobs if job.is_group() else [job]
        # a localrule runs in the Snakemake process (a dry run reports every job as local: its executor is local)
        local = all(j.rule.name in getattr(self.workflow, "_localrules", ()) or j.rule.norun for j in jobs)
        out.write(json.dumps({"rule": job.name, "group": job.is_group(), "local": local, "threads": job.threads,
                              "wildcards": [dict(j.wildcards_dict) for j in jobs],
                              "rules": [j.rule.name for j in jobs], "resources": resources, "sbatch": call}) + "\n")
        out.flush()
        return run_job(self, job)

    dryrun.Executor.run_job = render
    from snakemake.cli import main

    return main(argv)


def render_sbatch(configfiles, root: str | os.PathLike = ".", extra: tuple[str, ...] = (),
                  profile: str | os.PathLike | None = None) -> list[dict]:
    """Every job's submission of the workflow in ``root`` with ``configfiles`` and the SLURM profile."""
    import tempfile

    root = Path(root).resolve()
    out = Path(tempfile.mkstemp(prefix="staticvec-sbatch-", suffix=".jsonl")[1])
    # --cores: a dry run executes locally and caps each job's threads at its cores (1 without the option): the
    # rendered --cpus-per-task read 1 where the SLURM run asks for the rule's threads (found against a real
    # cluster: tests/test_slurm_cluster.py compares these lines with sacct)
    argv = ["-n", "--forceall", "--cores", str(DRY_RUN_CORES), "--workflow-profile", str(profile or root / PROFILE),
            "--directory", str(root),
            "--snakefile", str(root / "Snakefile"), "--configfile", *map(str, configfiles), *extra]
    code = f"import sys; from staticvec.plan.sbatch import _render; sys.exit(_render({str(out)!r}, {argv!r}))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "workflow"), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env)
        if done.returncode != 0:
            raise StaticvecError(f"the SLURM dry run failed (snakemake {' '.join(argv)}):\n"
                                 f"{(done.stdout + done.stderr)[-4000:]}")
        return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    finally:
        out.unlink(missing_ok=True)


# ------------------------------------------------------------------ after a lost Snakemake process
# The SLURM executor names every job of a run after the run's id and comments it ``rule_<rule>_wildcards_…``;
# squeue reports its working directory. A Snakemake process that dies (a lost login node, SIGKILL) leaves its
# submitted jobs queued or running. Each such job's own Snakemake process records its outputs as complete when it
# finishes (the run directory's .snakemake is shared), so a rerun after the job ends keeps them; a rerun while it
# runs would submit the same job again into the same outputs. `staticvec plan slurm-orphans` waits for them first.
ORPHAN_FORMAT = "%i|%j|%k|%Z|%T"


def orphan_jobs(root: str | os.PathLike = ".", squeue_out: str | None = None) -> list[dict]:
    """This user's SLURM jobs still queued or running that a Snakemake run submitted from ``root``:
    [{"jobid", "run", "rule", "workdir", "state"}] (``squeue_out``: squeue's output, for tests)."""
    if squeue_out is None:
        done = subprocess.run(["squeue", "--me", "--noheader", f"--format={ORPHAN_FORMAT}"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise StaticvecError(f"squeue failed ({done.returncode}): {done.stderr.strip()}")
        squeue_out = done.stdout
    root = os.path.realpath(root)
    jobs = []
    for line in squeue_out.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 5:
            continue
        jobid, run, comment, workdir, state = parts
        if not comment.startswith("rule_") or os.path.realpath(workdir) != root:
            continue
        rule = comment[len("rule_"):].split("_wildcards_")[0]
        jobs.append({"jobid": jobid, "run": run, "rule": rule, "workdir": workdir, "state": state})
    return jobs


def settle_orphans(root: str | os.PathLike = ".", cancel: bool = False, poll_s: float = 10.0,
                   timeout_s: float | None = None, say=print) -> list[dict]:
    """Wait until no job of an earlier Snakemake run from ``root`` is queued or running (``cancel``: scancel them
    first). Returns the jobs found at the start. A timeout is an error naming the jobs still there."""
    import time

    found = orphan_jobs(root)
    for job in found:
        say(f"SLURM job {job['jobid']} ({job['rule']}, run {job['run']}) is {job['state']}")
    if cancel and found:
        subprocess.run(["scancel", *[j["jobid"] for j in found]], check=False)
    started = time.monotonic()
    left = found
    while left:
        if timeout_s is not None and time.monotonic() - started > timeout_s:
            raise StaticvecError(f"after {timeout_s:.0f} s, SLURM jobs of an earlier run are still there: "
                                 f"{', '.join(j['jobid'] for j in left)} (scancel them, or wait)")
        time.sleep(poll_s)
        left = orphan_jobs(root)
    if found:
        say(f"{len(found)} job(s) of an earlier run {'cancelled' if cancel else 'finished'}: rerun Snakemake now "
            "(after `snakemake --unlock` if the lost process held the lock)")
    return found
