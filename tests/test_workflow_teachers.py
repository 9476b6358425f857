"""A teacher that cannot be loaded as configured is a plan-time error naming its config key (before,
a wrong path surfaced as 'number of layers ... not known offline; download the model')."""

import pytest

from staticvec.config import load_config
from staticvec.errors import StaticvecError
from staticvec.dag.workflow import Workflow


@pytest.fixture
def config(repo_root):
    return load_config([repo_root / "config/config.yaml"])


def test_shipped_configs_name_loadable_teachers(repo_root, config):
    Workflow(config, repo_root).check_teachers()
    paper = load_config([repo_root / "config/config.yaml", repo_root / "config/paper.yaml"])
    assert paper["teacher"]["offline"] is False  # hub names are downloaded by the jobs
    Workflow(paper, repo_root).check_teachers()


def test_missing_teacher_directory_is_named(repo_root, config, tmp_path):
    config["teacher"]["models"]["minilm"] = str(tmp_path / "no-such-model")
    with pytest.raises(StaticvecError, match=r"teacher.models.minilm' = '.*no-such-model'.*no such file or directory"):
        Workflow(config, repo_root).check_teachers()


def test_uncached_hub_model_offline_is_named(repo_root, config, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    config["teacher"]["models"]["minilm"] = "some-org/uncached-model"
    with pytest.raises(StaticvecError, match=r"teacher.models.minilm' = 'some-org/uncached-model'.*teacher.offline is true"):
        Workflow(config, repo_root).check_teachers()
    config["teacher"]["offline"] = False  # the job may download it
    Workflow(config, repo_root).check_teachers()


def test_only_the_teachers_the_run_reads_are_checked(repo_root, config):
    config["teacher"]["models"]["unused"] = "./not/here"
    w = Workflow(config, repo_root)
    assert "unused" not in w.teachers_used()
    w.check_teachers()
