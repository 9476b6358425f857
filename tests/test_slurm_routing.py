"""SLURM routing: a job goes to the GPU partition only when it requests a GPU (before, the profile sent
every torch rule to the gpu partition, with gpu=0 in a CPU run)."""

import re

import yaml

from staticvec.config import load_config
from staticvec.dag.workflow import Workflow


def test_gpu_resources_follow_the_device(repo_root):
    config = load_config([repo_root / "config/config.yaml"])
    assert Workflow(config, repo_root).gpu_resources() == {}  # CPU run: the profile's default partition
    config["device"] = "cuda"
    config["slurm"] = {"gpu_partition": "a100"}
    w = Workflow(config, repo_root)
    assert w.gpu_resources() == {"gpu": 1, "slurm_partition": "a100"}
    assert w.gpu_resources(False) == {}  # e.g. SemGloVe's builders outside recompute mode
    paper = load_config([repo_root / "config/config.yaml", repo_root / "config/paper.yaml"])
    assert Workflow(paper, repo_root).gpu_resources()["gpu"] == 1


def test_rules_request_gpus_only_through_gpu_resources(repo_root):
    for path in sorted((repo_root / "workflow" / "rules").glob("*.smk")):
        text = path.read_text()
        assert not re.search(r"^\s+gpu\s*=", text, flags=re.M), f"{path.name}: a literal gpu= resource"
        assert "slurm_partition" not in text, f"{path.name}: partition chosen outside W.gpu_resources"


def test_profile_routes_no_rule_by_name_to_the_gpu_partition(repo_root):
    profile = yaml.safe_load((repo_root / "workflow/profiles/slurm/config.yaml").read_text())
    assert profile["default-resources"]["slurm_partition"] == "cpu"
    routed = {rule: res for rule, res in (profile.get("set-resources") or {}).items() if "slurm_partition" in res}
    assert not routed, f"rules routed by name whatever they request: {routed}"


def test_paper_rules_request_a_gpu_exactly_where_the_measurements_route_them(repo_root):
    """What Snakemake gets from each rule with a CUDA path (RuleFunctions.resources): gpu=1 and the GPU partition
    for the rules of paper.yaml's plan.gpu_rules (the teacher's passes, the students), none for GloVe and the
    taggers, which the H200's figures make cheaper on CPU nodes (tests/test_plan_costs.py checks the list
    against those figures)."""
    from staticvec.dag.costs import GPU_CAPABLE_RULES
    from staticvec.dag.rules import RuleFunctions
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.teacher import TeacherPlan

    paper = load_config([repo_root / "config/config.yaml", repo_root / "config/paper.yaml"])
    rf = RuleFunctions(paper, Workflow(paper, repo_root), TeacherPlan(paper), SemgloveRules(paper))
    routed = {rule for rule in GPU_CAPABLE_RULES if rf.resources(rule).get("gpu") == 1}
    assert routed == set(paper["plan"]["gpu_rules"])
    assert {"train_glove", "tag", "tag_contextual"}.isdisjoint(routed)
    assert all(rf.resources(rule)["slurm_partition"] == "gpu" for rule in routed)
