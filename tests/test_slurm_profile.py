"""The SLURM profile exercised with the executor plugin installed: the paper config's dry run under
workflow/profiles/slurm, every job also rendered by the plugin's own submission code (staticvec plan sbatch),
so that a profile key, a plugin setting or a resource the plugin rejects fails here. The requests are then
checked against the planning model: GPU jobs only where the model routes work to a GPU, none asking for more
than its modelled runtime plus the stated margin, shard work on a GPU packed into allocations of at least
plan.gpu_allocation_minutes."""

import math
import sys
from pathlib import Path

import pytest

from staticvec.config import load_config
from staticvec.dag.costs import CostModel, Wildcards
from staticvec.dag.rules import RuleFunctions
from staticvec.dag.semglove import SemgloveRules
from staticvec.dag.teacher import TeacherPlan
from staticvec.dag.workflow import Workflow
from staticvec.errors import StaticvecError
from staticvec.plan.mirror import stand_in_override
from staticvec.plan.sbatch import render_sbatch

REPO = Path(__file__).resolve().parents[1]
if sys.version_info < (3, 11):  # the plugin needs Python 3.11 (pyproject.toml's dev extra installs it there)
    pytest.skip("snakemake-executor-plugin-slurm needs Python >= 3.11", allow_module_level=True)
import snakemake_executor_plugin_slurm  # noqa: E402,F401



@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("slurm")
    files = [REPO / "config/config.yaml", REPO / "config/paper.yaml"]
    files.append(stand_in_override(files, REPO, tmp))
    config = load_config(files)
    w = Workflow(config, REPO)
    rf = RuleFunctions(config, w, TeacherPlan(config), SemgloveRules(config))
    model = CostModel(config, w, rf.TP, rf.SG, manifest={}, root=REPO)  # the expected sizes, as the dry run
    return {"jobs": render_sbatch(files, REPO), "model": model, "config": config, "files": files}


@pytest.mark.slow  # the paper config's ~1,900 jobs: minutes
def test_every_paper_job_is_an_sbatch_request_the_plugin_accepts(paper):
    jobs = paper["jobs"]
    submitted = [j for j in jobs if not j["local"]]
    assert len(submitted) > 1500
    for job in submitted:
        line = job["sbatch"]
        assert line.startswith("sbatch --parsable ") and " -t " in line and " --mem " in line, line
        assert f"--cpus-per-task={job['threads']}" in line, line
        assert (" -p gpu " in line) == ("--gpus=1" in line), line  # the GPU partition exactly for GPU requests


@pytest.mark.slow
def test_gpu_jobs_carry_gpu_work_within_their_modelled_runtime(paper):
    model, config = paper["model"], paper["config"]
    margin, startup = config["plan"]["gpu_runtime_margin"], config["plan"]["startup_minutes"]
    gpu_jobs = [j for j in paper["jobs"] if "--gpus=1" in j["sbatch"]]
    # exactly the rules of plan.gpu_rules that the DAG has (paper.yaml: from the measured figures)
    assert {j["rule"] for j in gpu_jobs} == set(config["plan"]["gpu_rules"]) & {j["rule"] for j in paper["jobs"]}
    assert {j["rule"] for j in gpu_jobs} >= {"train_student", "train_bert_sg", "semglove_cooc_shard", "teacher_ase"}
    for job in gpu_jobs:
        cost = model.job(job["rule"], Wildcards(job["wildcards"][0]))
        assert cost.device == "gpu" and cost.work_s > 0
        modelled = cost.work_s / 60
        assert job["resources"]["runtime"] <= math.ceil(modelled * (1 + margin) + startup), job
        assert job["resources"]["mem_mb"] == model.mem_mb(cost)
    # the teacher's shard work: packed so that each GPU allocation carries at least gpu_allocation_minutes
    shards = [j for j in gpu_jobs if j["rule"] == "semglove_cooc_shard"]
    assert shards and all("-" in j["wildcards"][0]["shard"] for j in shards)
    for job in shards:
        work = model.job("semglove_cooc_shard", Wildcards(job["wildcards"][0])).work_s / 60
        assert work >= config["plan"]["gpu_allocation_minutes"], job
    # no work cheaper on CPU nodes holds a GPU: GloVe and the taggers (measured: the CUDA GloVe engine at 18 EPYC
    # cores' worth, the GPU tagger at 532 sentences/s), gensim, merges, classification, evaluation
    cpu_rules = {j["rule"] for j in paper["jobs"] if "--gpus" not in j["sbatch"]}
    assert {"train_glove", "tag", "tag_contextual", "train_gensim_baseline", "cooc_window_merge", "classification"} <= cpu_rules


@pytest.mark.slow
def test_a_resource_the_plugin_rejects_fails_the_render(paper):
    # slurm_extra may not carry what the plugin manages itself (here a GPU count): its validation refuses it
    with pytest.raises(StaticvecError, match="slurm_extra"):
        render_sbatch(paper["files"], REPO, extra=("--set-resources", "tag:slurm_extra='--gpus=2'"))


def test_a_profile_key_snakemake_does_not_know_fails_the_render(tmp_path):
    profile = tmp_path / "profile"
    profile.mkdir()
    text = (REPO / "workflow/profiles/slurm/config.yaml").read_text()
    (profile / "config.yaml").write_text(text + "slurm-no-such-setting: 1\n")
    with pytest.raises(StaticvecError, match="no-such-setting"):
        render_sbatch([REPO / "config/config.yaml"], REPO, profile=profile)


def test_the_rendered_lines_ask_for_each_jobs_threads_not_the_dry_runs_cores():
    """A dry run caps threads at its --cores (1 by default); the SLURM run does not: the rendering must not either."""
    jobs = render_sbatch([REPO / "tests/config/test.yaml"], REPO, extra=("--", "results/test/teacher/minilm/mlm_head.pt"))
    head = next(j for j in jobs if j["rule"] == "teacher_mlm_head")
    assert head["threads"] == 2  # the tiny config's MLM-head job (its local run: threads 2; capped, it read 1)
    assert f"--cpus-per-task={head['threads']}" in head["sbatch"]
