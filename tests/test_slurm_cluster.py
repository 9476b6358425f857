"""The SLURM profile on a real scheduler: a local cluster (tests/cluster/local_slurm.py: munged, MariaDB,
slurmdbd, slurmctld, slurmd on loopback) and `snakemake --profile workflow/profiles/slurm` as a user runs it.

In `make test` (a few minutes): a failing job shows its log and the reason; a job over its memory is killed by
the scheduler and its retry at twice the memory succeeds; `scancel` does not hang the run; Snakemake SIGKILLed
mid-run (a lost login node) is resumed without redoing a finished job or running a job twice into its outputs;
a profile naming a partition the cluster does not have fails with the scheduler's message. These use a toy
workflow (tests/cluster/Snakefile) under the project's profile.

Under `make cluster-test` (STATICVEC_CLUSTER_TESTS=all) also: the slice of the tiny config with a job of every
kind of rule (tests/config/slurm_slice.yaml) as SLURM jobs, byte-identical to the same slice run locally, each
job in sacct with the threads, memory and time the planning model asked; GPU routing (plan.gpu_rules to the
`gpu` partition with a GRES gpu, the rest to `cpu`); and the plugin's own sacct status hanging on a cancelled
job (the reason the profile reads squeue).

Every test passes `--slurm-init-seconds-before-status-checks 5` besides the profile: the plugin's first status
check comes 40 s after a submission otherwise, which only makes the suite slower (docs/cluster.md)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "workflow" / "profiles" / "slurm"
TOY = REPO / "tests" / "cluster" / "Snakefile"
FAST_STATUS = ("--slurm-init-seconds-before-status-checks", "5")
FULL = os.environ.get("STATICVEC_CLUSTER_TESTS") == "all"
full_only = pytest.mark.skipif(not FULL, reason="the whole cluster set runs under `make cluster-test` "
                                                "(STATICVEC_CLUSTER_TESTS=all)")

if sys.version_info < (3, 11):
    pytest.skip("snakemake-executor-plugin-slurm needs Python >= 3.11", allow_module_level=True)
pytest.importorskip("snakemake_executor_plugin_slurm")
sys.path.insert(0, str(REPO / "tests" / "cluster"))

from local_slurm import ClusterUnavailable, LocalSlurm, _running  # noqa: E402
from workflow_fixtures import TEST_CONFIG, plain_env  # noqa: E402


@pytest.fixture(scope="module")
def slurm_cluster():
    """The local cluster for this module; its teardown checks that no daemon it started is left running. Under
    `python tests/cluster/local_slurm.py -- pytest ...` (STATICVEC_LOCAL_SLURM=1) the command's cluster is used."""
    if os.environ.get("STATICVEC_LOCAL_SLURM") == "1":
        yield None
        return
    cluster = LocalSlurm()
    try:
        seconds = cluster.start()
    except ClusterUnavailable as exc:
        pytest.skip(f"no local SLURM cluster: {exc}")
    print(f"\nlocal SLURM cluster up in {seconds:.1f} s ({cluster.cpus} CPUs, {cluster.mem_mb} MB)")
    pids = cluster.pids()
    yield cluster
    cluster.stop()
    left = {name: pid for name, pid in pids.items() if _running(pid)}
    assert not left, f"daemons still running after stop: {left}"
    assert not Path(cluster.root).exists() and not Path("/run/munge/munge.socket.2").exists()


def profile_cmd(*args, profile: Path = PROFILE) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--profile", str(profile), *FAST_STATUS, *args]


def run_profile(*args, cwd: Path, timeout: float = 600, profile: Path = PROFILE) -> subprocess.CompletedProcess:
    return subprocess.run(profile_cmd(*args, profile=profile), cwd=cwd, capture_output=True, text=True,
                          env=plain_env(), timeout=timeout)


def toy_dir(tmp_path: Path) -> Path:
    work = tmp_path / "toy"
    work.mkdir()
    shutil.copy(TOY, work / "Snakefile")
    return work


def toy_args(work: Path, *targets: str, sleep: int = 1) -> list[str]:
    return ["--config", f"out={work / 'out'}", f"sleep={sleep}", "--", *(str(work / "out" / t) for t in targets)]


def sacct_jobs(workdir: Path) -> list[dict]:
    """The jobs sacct has of runs from ``workdir``: rule (from the plugin's comment), state, requests."""
    fields = "JobIDRaw,Comment,Partition,State,ReqCPUS,ReqMem,Timelimit,AllocTRES,WorkDir"
    out = subprocess.run(["sacct", "-X", "-P", "-n", "-a", "-S", "now-6hours", f"--format={fields}"],
                         capture_output=True, text=True, check=True).stdout
    jobs = []
    for line in out.splitlines():
        jobid, comment, partition, state, cpus, mem, limit, tres, wd = line.split("|")
        if os.path.realpath(wd) != os.path.realpath(workdir) or not comment.startswith("rule_"):
            continue
        jobs.append({"jobid": jobid, "rule": comment[5:].split("_wildcards_")[0], "comment": comment,
                     "partition": partition, "state": state, "cpus": int(cpus), "mem_mb": _mb(mem),
                     "minutes": _minutes(limit), "tres": tres})
    return jobs


def _mb(text: str) -> int:
    value, unit = float(text[:-1]), text[-1]
    return int(round(value * {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2}[unit]))


def _minutes(limit: str) -> int:
    days, _, hms = limit.rpartition("-")
    h, m, s = (int(x) for x in hms.split(":"))
    return int(days or 0) * 1440 + h * 60 + m + (1 if s else 0)


def wait_for(what: str, ready, timeout: float = 120, poll: float = 1.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = ready()
        if got:
            return got
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def squeue_running(workdir: Path) -> list[str]:
    out = subprocess.run(["squeue", "-h", "-o", "%i|%T|%Z"], capture_output=True, text=True).stdout
    return [line.split("|")[0] for line in out.splitlines()
            if line.split("|")[1] == "RUNNING" and os.path.realpath(line.split("|")[2]) == os.path.realpath(workdir)]


def test_orphans_are_this_directorys_snakemake_jobs_only(tmp_path):
    from staticvec.plan.sbatch import orphan_jobs

    here, other = tmp_path / "run", tmp_path / "other"
    here.mkdir(), other.mkdir()
    squeue = "\n".join([
        f"11|5f0c-run|rule_train_glove_wildcards_glove_1|{here}|RUNNING",
        f"12|5f0c-run|rule_tag_wildcards_glove_pos_1|{here}/|PENDING",  # the same directory, spelled with a slash
        f"13|5f0c-run|rule_ok|{other}|RUNNING",                          # another run directory
        f"14|interactive|(null)|{here}|RUNNING",                          # not submitted by Snakemake
    ])
    found = orphan_jobs(here, squeue_out=squeue)
    assert [(j["jobid"], j["rule"], j["state"]) for j in found] == [("11", "train_glove", "RUNNING"),
                                                                    ("12", "tag", "PENDING")]


# ------------------------------------------------------------------ the profile's behaviour (make test)
def test_a_failing_job_shows_its_log_and_the_reason(slurm_cluster, tmp_path):
    work = toy_dir(tmp_path)
    done = run_profile("--retries", "0", *toy_args(work, "ok.txt", "fail.txt"), cwd=work)
    text = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Error in rule fail" in text and "SLURM status is: 'FAILED'" in text, text[-3000:]
    log = Path(re.search(r"log: (\S+/rule_fail/\d+\.log)", text).group(1))
    assert log.is_file() and "the command of rule fail exits 3" in log.read_text()
    assert (work / "out" / "ok.txt").read_text() == "done\n"  # keep-going: the other job ran
    assert {j["rule"]: j["state"] for j in sacct_jobs(work)} == {"ok": "COMPLETED", "fail": "FAILED"}


def test_a_job_over_its_memory_is_killed_and_its_retry_at_twice_the_memory_succeeds(slurm_cluster, tmp_path):
    work = toy_dir(tmp_path)
    done = run_profile(*toy_args(work, "hog.txt"), cwd=work)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert (work / "out" / "hog.txt").read_text() == "1000\n"  # written by the second attempt
    hog = sorted(sacct_jobs(work), key=lambda j: int(j["jobid"]))
    assert [(j["state"], j["mem_mb"]) for j in hog] == [("FAILED", 500), ("COMPLETED", 1000)]
    first_log = next((work / ".snakemake" / "slurm_logs" / "rule_hog").glob(f"{hog[0]['jobid']}.log"))
    assert "exceeded memory limit" in first_log.read_text()  # killed by the scheduler, not by the command


def test_a_job_cancelled_with_scancel_ends_the_run(slurm_cluster, tmp_path):
    work = toy_dir(tmp_path)
    proc = subprocess.Popen(profile_cmd("--retries", "0", *toy_args(work, "slow1.txt", sleep=300)), cwd=work,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=plain_env())
    try:
        jobid = wait_for("the job to run", lambda: squeue_running(work))[0]
        subprocess.run(["scancel", jobid], check=True)
        cancelled = time.monotonic()
        out, _ = proc.communicate(timeout=120)  # the plugin's sacct status would wait here for ever
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and "SLURM status is: 'CANCELLED'" in out, out[-3000:]
    assert time.monotonic() - cancelled < 120
    assert not (work / "out" / "slow1.txt").exists()


def test_a_lost_snakemake_process_is_resumed_without_redoing_or_doubling_a_job(slurm_cluster, tmp_path):
    """SIGKILL of the Snakemake process (a login node lost) while one job has finished and one runs: the running
    job goes on; `staticvec plan slurm-orphans` waits for it, `--unlock`, and the rerun has nothing left to do:
    each job ran once (sacct), into outputs written once."""
    from staticvec.cli import main

    work = toy_dir(tmp_path)
    log = open(tmp_path / "first.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(profile_cmd(*toy_args(work, "ok.txt", "slow1.txt", sleep=25)), cwd=work, stdout=log,
                            stderr=subprocess.STDOUT, env=plain_env(), start_new_session=True)
    try:
        wait_for("rule ok to finish", lambda: "(Rule: ok)" in (tmp_path / "first.log").read_text(), timeout=180)
        wait_for("rule slow to run", lambda: squeue_running(work), timeout=120)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process group, as a lost login session
        proc.wait()
        log.close()
    assert squeue_running(work), "the submitted job should outlive its Snakemake process"
    assert main(["plan", "slurm-orphans", "--root", str(work), "--poll", "2", "--timeout", "180"]) == 0
    assert not squeue_running(work)
    unlock = run_profile("--unlock", *toy_args(work, "ok.txt", "slow1.txt"), cwd=work)
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    rerun = run_profile(*toy_args(work, "ok.txt", "slow1.txt"), cwd=work)
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-3000:]
    assert "submitted with SLURM jobid" not in rerun.stdout + rerun.stderr  # nothing redone
    jobs = sacct_jobs(work)
    assert sorted(j["rule"] for j in jobs) == ["ok", "slow"] and all(j["state"] == "COMPLETED" for j in jobs), jobs
    assert (work / "out" / "slow1.txt").read_text() == "1\n"  # appended once: one job wrote it


def test_a_partition_the_cluster_does_not_have_fails_with_the_schedulers_message(slurm_cluster, tmp_path):
    profile = tmp_path / "profile"
    profile.mkdir()
    text = (PROFILE / "config.yaml").read_text()
    assert "slurm_partition: cpu" in text
    (profile / "config.yaml").write_text(text.replace("slurm_partition: cpu", "slurm_partition: nosuch"))
    work = toy_dir(tmp_path)
    done = run_profile(*toy_args(work, "ok.txt"), cwd=work, profile=profile)
    assert done.returncode != 0
    assert "Invalid partition name specified" in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]


@full_only
def test_the_plugins_sacct_status_waits_for_ever_on_a_cancelled_job(slurm_cluster, tmp_path):
    """Why the profile reads squeue: with `--slurm-status-command sacct`, sacct's `CANCELLED by 0` is not the
    plugin's `CANCELLED`, and the run goes on waiting after the job is gone (snakemake-executor-plugin-slurm 2.8)."""
    work = toy_dir(tmp_path)
    proc = subprocess.Popen(profile_cmd("--retries", "0", "--slurm-status-command", "sacct",
                                        *toy_args(work, "slow1.txt", sleep=300)), cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=plain_env(),
                            start_new_session=True)
    try:
        jobid = wait_for("the job to run", lambda: squeue_running(work))[0]
        subprocess.run(["scancel", jobid], check=True)
        wait_for("sacct to report the cancel", lambda: [j for j in sacct_jobs(work) if j["state"].startswith("CANCELLED by")])
        time.sleep(45)  # several status checks (every 5-15 s here)
        assert proc.poll() is None, "the plugin now ends the run on sacct's CANCELLED: the profile may read sacct again"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ------------------------------------------------------------------ the workflow's slice (make cluster-test)
SLICE_CONFIG = REPO / "tests" / "config" / "slurm_slice.yaml"


def slice_targets(results: Path) -> list[str]:
    """`all` of the slice config, and one GloVe, Skip-gram (gensim) and classification output besides."""
    return ["all", str(results / "eval/glove/seed1/intrinsic.web.json"), str(results / "eval/sg/seed1/intrinsic.web.json"),
            str(results / "eval/glove/classification.json")]


def _paths_config(run: Path, shared_data: Path) -> Path:
    import yaml

    path = run.parent / f"{run.name}.paths.yaml"
    path.write_text(yaml.safe_dump({"results_dir": str(run / "results"),
                                    "resources": {"download_dir": str(run / "data"), "mirror": str(shared_data)}}))
    return path


@full_only
def test_the_slice_runs_as_slurm_jobs_with_the_modelled_requests_and_the_local_runs_bytes(
        slurm_cluster, tmp_path_factory, shared_data):
    from staticvec.plan.sbatch import render_sbatch
    from staticvec.same_outputs import compared_files, differences

    base = tmp_path_factory.mktemp("slice")
    run = base / "run"  # both runs write here (their records name their paths), the local one then moved aside
    paths = _paths_config(run, shared_data)
    configs = ["--configfile", str(TEST_CONFIG), str(paths), str(SLICE_CONFIG)]
    targets = slice_targets(run / "results")
    t0 = time.monotonic()
    local = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", *configs, "--", *targets], cwd=REPO,
                           capture_output=True, text=True, env=plain_env())
    local_s = time.monotonic() - t0
    assert local.returncode == 0, local.stderr[-4000:]
    run.rename(base / "local")
    t0 = time.monotonic()
    done = run_profile(*configs, "--", *targets, cwd=REPO, timeout=3600)
    slurm_s = time.monotonic() - t0
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    print(f"\nthe slice: {local_s:.0f} s locally (--cores 2), {slurm_s:.0f} s as SLURM jobs")

    # the local run's files name the directory it ran in (now the SLURM run's): compared as <RUN> in both
    found = differences(base / "local" / "results", run / "results", roots_a=(str(run),), roots_b=(str(run),))
    assert not found, f"{len(found)} of {compared_files(run / 'results')} files differ: {found[:20]}"

    # sacct: every job of the slice, with the requests of the planning model (the plugin's rendering of them)
    planned = [j for j in render_sbatch([TEST_CONFIG, paths, SLICE_CONFIG], REPO, extra=("--", *targets))
               if not j["local"]]
    jobs = [j for j in sacct_jobs(REPO) if j["state"] == "COMPLETED" and int(j["jobid"]) >= _first_jobid(done)]
    # the downloads are local rules (the login node has the network, compute nodes often not): run by Snakemake
    assert "localrule fetch_group:" in done.stdout + done.stderr
    assert not {"fetch_group", "fetch_file"} & {j["rule"] for j in planned}
    kinds = {"prepare_corpus", "teacher_features", "cooc_window_merge", "train_glove",
             "train_gensim_baseline", "train_student", "post_retrofit", "evaluate_intrinsic", "classification",
             "paper_table", "claims", "claims_figure"}
    assert kinds <= {j["rule"] for j in jobs}
    for rule in {j["rule"] for j in planned}:
        want = sorted((j["threads"], j["resources"]["mem_mb"], j["resources"]["runtime"]) for j in planned if j["rule"] == rule)
        got = sorted((j["cpus"], j["mem_mb"], j["minutes"]) for j in jobs if j["rule"] == rule)
        assert got == want, f"{rule}: sacct {got}, planned {want}"


def _first_jobid(done: subprocess.CompletedProcess) -> int:
    ids = [int(x) for x in re.findall(r"submitted with SLURM jobid (\d+)", done.stdout + done.stderr)]
    return min(ids)


@full_only
def test_gpu_rules_go_to_the_gpu_partition_with_their_gpu_and_the_rest_to_cpu(slurm_cluster, tmp_path, shared_data):
    """teacher.gpu: true (the run's GPU switch; device auto runs the jobs on the CPU here, the GRES being a stand-in):
    the teacher's pass (a rule of plan.gpu_rules) asks for the `gpu` partition and a GPU, the corpus jobs do not."""
    import yaml

    from staticvec.config import load_config
    from staticvec.dag.rules import RuleFunctions
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.teacher import TeacherPlan
    from staticvec.dag.workflow import Workflow

    run = tmp_path / "run"
    paths = _paths_config(run, shared_data)
    gpu = tmp_path / "gpu.yaml"
    gpu.write_text(yaml.safe_dump({"teacher": {"gpu": True}, "plan": {"gpu_min_threads": 1, "gpu_max_threads": 2}}))
    target = run / "results" / "teacher" / "minilm" / "mlm_head.pt"
    done = run_profile("--configfile", str(TEST_CONFIG), str(paths), str(gpu), "--", str(target), cwd=REPO, timeout=1800)
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    config = load_config([REPO / "config/config.yaml", TEST_CONFIG, paths, gpu])
    rf = RuleFunctions(config, Workflow(config, REPO), TeacherPlan(config), SemgloveRules(config))
    jobs = [j for j in sacct_jobs(REPO) if int(j["jobid"]) >= _first_jobid(done)]
    assert {"teacher_mlm_head", "prepare_corpus"} <= {j["rule"] for j in jobs}
    assert rf.costs.device("teacher_mlm_head") == "gpu" and rf.costs.device("prepare_corpus") == "cpu"
    for job in jobs:
        on_gpu = rf.costs.device(job["rule"]) == "gpu"  # the planning model's routing (plan.gpu_rules)
        assert job["partition"] == ("gpu" if on_gpu else "cpu"), job
        assert ("gres/gpu=1" in job["tres"]) == on_gpu, job

