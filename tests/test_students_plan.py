"""Names, inputs and options of the trainers' rules; the rule file wired in a Snakemake dry run."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from staticvec.cli import build_parser
from staticvec.config import ConfigError, load_config, validate_config
from staticvec.errors import StaticvecError
from staticvec.train.student_plan import StudentPlan


@pytest.fixture
def config():
    return load_config(["config/config.yaml"])


def test_methods_sections_are_valid_and_typos_rejected(config):
    validate_config(config)
    config["methods"]["x2static"]["variants"]["released"]["context_means"] = "all_pieces"
    with pytest.raises(ConfigError, match="methods.x2static.variants.released.context_means"):
        validate_config(config)


def test_names_parse_into_jobs(config):
    sp = StudentPlan(config)
    job = sp.parse("x2static", "para-minilm-released")
    assert (job.teacher, job.feature_set, job.variant, job.n_shards) == ("minilm", "paragraph", "released", 8)
    assert job.overrides["context_mean"] == "all_pieces"
    assert job.overrides["context"] == "paragraph" and sp.hyper("x2static", "sent-minilm")["context"] == "sentence"
    job = sp.parse("bert_sg", "smollm2-dev-w3-mean")
    assert job.teacher == "smollm2" and job.overrides == {"window": 3, "aggregation": "mean"}
    assert job.n_shards == 2  # sweep_fraction 0.25 of 8 shards
    assert sp.features("bert_sg", "minilm-dev-w3-mean") == [
        f"results/default/teacher/minilm/features/sentence/0000{i}/features.json" for i in range(2)]
    assert len(sp.features("c2v", "minilm")) == 8
    for bad in [("x2static", "minilm"), ("bert_sg", "nosuchteacher"), ("c2v", "minilm-nosuchvariant"),
                ("x2static", "sent-minilm-dev-w3-mean")]:
        with pytest.raises(StaticvecError):
            sp.parse(*bad)
    assert sp.vocab("x2static") == "results/default/corpus/vocab.min10.tsv"
    assert sp.vocab("bert_sg") == "results/default/corpus/vocab.min5.tsv"


@pytest.mark.parametrize("method, spec", [("x2static", "sent-minilm"), ("bert_sg", "minilm-dev-w2-attention"),
                                          ("c2v", "minilm-released")])
def test_rule_options_are_accepted_by_the_cli(config, method, spec):
    sp = StudentPlan(config)
    command = {"x2static": "x2static", "bert_sg": "bert-sg", "c2v": "c2v"}[method]
    args = build_parser().parse_args(["train", command, "--features", "f", "--vocab", "v", "--out", "o",
                                      *shlex.split(sp.args(method, spec))])
    params = json.loads(args.params)
    assert params == sp.hyper(method, spec)
    assert "threads" not in params and "variants" not in params
    if method == "bert_sg":
        assert params["window"] == 2 and params["lr"] == config["methods"]["bert_sg"]["lr"]
    if method == "c2v":
        assert params["variant"] == "released"
    assert args.threads == config["methods"][method]["threads"]


def test_default_targets_cover_the_figures(config):
    targets = StudentPlan(config).targets()
    names = {t.split("/")[3] for t in targets}
    assert {"x2static-sent-minilm", "x2static-para-minilm", "bert_sg-minilm", "c2v-minilm"} <= names
    assert {f"bert_sg-minilm-dev-w{w}-attention" for w in range(1, 9)} <= names  # Figure 4
    assert "bert_sg-minilm-dev-w5-mean" in names  # Figure 5
    assert "results/default/embeddings/bert_sg-minilm/seed1/attention.json" in targets  # Figure 7
    names = {t.split("/")[3] for t in StudentPlan(config).targets("smollm2")}
    assert {"x2static-para-smollm2", "x2static-sent-smollm2", "bert_sg-smollm2"} <= names


def test_rule_file_dry_run(config, tmp_path, repo_root):
    """The rules resolve the default targets from the teacher features and vocabularies."""
    config["results_dir"] = str(tmp_path / "results")
    sp = StudentPlan(config)
    targets = sp.targets()
    needed = {sp.feature_vocab(), sp.vocab("x2static"), sp.vocab("bert_sg")}
    for method, specs in sp.specs().items():
        for spec in specs:
            needed.update(sp.features(method, spec))
    for path in map(Path, needed):  # absolute: results_dir is under tmp_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "Snakefile").write_text(
        'configfile: "config.yaml"\n'
        'R = config["results_dir"]\n'
        f'include: "{repo_root}/workflow/rules/train_students.smk"\n'
        'rule all:\n'
        f'    input: {targets!r}\n')
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(tmp_path / "Snakefile"),
                             "-d", str(tmp_path), "--quiet", "rules"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout + result.stderr
    for rule, n in (("train_x2static", 2), ("train_bert_sg", 10), ("train_c2v", 1), ("bert_sg_attention", 1)):
        assert any(line.split()[:2] == [rule, str(n)] for line in out.splitlines()), out[-2000:]
