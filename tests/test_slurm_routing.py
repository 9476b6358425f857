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
