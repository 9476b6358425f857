"""The DAG's job list, pinned: `snakemake -n --forceall` for the default config and for the paper
config (rule, wildcards, output paths of every job). A change of the planning layer that is meant to
be a pure refactor must leave it unchanged; a change that is meant to change the DAG updates the
golden files on purpose:

    STATICVEC_UPDATE_GOLDEN=1 python -m pytest tests/test_dag_golden.py

The paper config plans on this machine against a mirror holding the offline data plus empty
stand-ins for the files only a user can supply (WordNet): planning reads no file's content.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from staticvec.dag.dryrun import planned_jobs
from staticvec.plan.mirror import stand_in_mirror

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden"


def job_list(dry_run_output: str) -> list[str]:
    """One line per planned job: rule, wildcards and outputs, sorted (the order of a dry run is not part of the DAG);
    a job printed as its rule's message is pinned by that message (the teacher passes: teacher, set, shard and what
    the pass computes)."""
    return sorted(f"(message)\t\t{j.message}" if j.rule is None else f"{j.rule}\t{j.wildcards}\t{j.output}"
                  for j in planned_jobs(dry_run_output))


def plan(configfiles: list[str], tmp_path: Path) -> list[str]:
    cmd = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--cores", "2", "--directory", str(REPO),
           "--snakefile", str(REPO / "Snakefile"), "--configfile", *configfiles]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO / "workflow")}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    jobs = job_list(done.stdout)
    assert jobs, "the dry run planned no job"
    return jobs


def paper_mirror(tmp_path: Path) -> Path:
    """The offline mirror, file by file, plus empty stand-ins for what is not in it."""
    return stand_in_mirror([REPO / "config/config.yaml", REPO / "config/paper.yaml"], REPO, tmp_path)


def check(name: str, jobs: list[str]) -> None:
    path = GOLDEN / f"dag-{name}.tsv"
    text = "\n".join(jobs) + "\n"
    if os.environ.get("STATICVEC_UPDATE_GOLDEN"):
        path.write_text(text)
    expected = path.read_text().splitlines()
    added = sorted(set(jobs) - set(expected))
    removed = sorted(set(expected) - set(jobs))
    assert not added and not removed, (
        f"{path.name}: the DAG changed ({len(added)} job(s) added, {len(removed)} removed); first added: "
        f"{added[:3]}; first removed: {removed[:3]}. If the change is meant, rerun with STATICVEC_UPDATE_GOLDEN=1.")
    assert len(jobs) == len(expected)


def test_default_config_plans_the_golden_job_list(tmp_path):
    check("default", plan(["config/config.yaml"], tmp_path))


@pytest.mark.slow  # ~2,400 jobs: about half a minute
def test_paper_config_plans_the_golden_job_list(tmp_path):
    mirror = paper_mirror(tmp_path)
    override = tmp_path / "mirror.yaml"
    override.write_text(f"resources:\n  mirror: {mirror}\n")
    check("paper", plan(["config/config.yaml", "config/paper.yaml", str(override)], tmp_path))


def test_job_list_reads_rule_wildcards_and_outputs():
    out = ("Building DAG of jobs...\nrule train_glove:\n    input: a\n    output: x/glove/seed1/vectors.bin\n"
           "    wildcards: emb=glove, seed=1\n    resources: tmpdir=/tmp\n\nlocalrule all:\n    input: x\n"
           "    jobid: 0\nJob 7: teacher minilm / set sentence / shard 00003: sentence context\nJob stats:\n")
    assert job_list(out) == ["(message)\t\tteacher minilm / set sentence / shard 00003: sentence context", "all\t\t",
                             "train_glove\temb=glove, seed=1\tx/glove/seed1/vectors.bin"]


def test_rule_files_pass_snakemakes_lint():
    """Rules only in the rule files, a conda environment and a log on each, no config in shell commands."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO / "workflow")}
    done = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--directory", str(REPO),
                           "--snakefile", str(REPO / "Snakefile")], capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
