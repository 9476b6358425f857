"""The teacher rules' paths and flags (TeacherPlan) from the default config."""

import copy
import json
import shlex

import pytest

from staticvec.config import load_config, validate_config
from staticvec.errors import StaticvecError
from staticvec.teacher.cli import register
from staticvec.teacher.plan import TeacherPlan, teacher_traits


@pytest.fixture(scope="module")
def config():
    return validate_config(load_config(["config/config.yaml"]))


def parse(args: str, step: str = "features"):
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    extra = ["--shard", "s.tsv.gz", "--vocab", "v.tsv", "--out", "o"] if step == "features" else ["--shards", "s", "--out", "o"]
    return parser.parse_args(["teacher", step, *shlex.split(args), *extra])


def test_traits_of_offline_and_local_teachers(tmp_path):
    assert teacher_traits("minilm") == {"mlm_head": False, "causal": False, "hidden_size": 384, "n_layers": 6}
    assert teacher_traits("smollm2") == {"mlm_head": False, "causal": True, "hidden_size": 576, "n_layers": 30}
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertForMaskedLM"],
                                                      "hidden_size": 1024, "num_hidden_layers": 24}))
    assert teacher_traits(str(tmp_path)) == {"mlm_head": True, "causal": False, "hidden_size": 1024, "n_layers": 24}
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                                                      "n_embd": 768, "n_layer": 12}))
    assert teacher_traits(str(tmp_path)) == {"mlm_head": False, "causal": True, "hidden_size": 768, "n_layers": 12}


def test_feature_flags_parse_back_into_the_cli(config):
    plan = TeacherPlan(config)
    args = parse(plan.feature_args("minilm", "sentence"))
    window = config["teacher"]["feature_sets"]["sentence"]["attention_window"]  # raw ±2S (SemGloVe's window)
    assert (args.context, args.layers, args.attention_window, args.mlm_topk) == ("sentence", [-1], window, 11)
    assert window == 2 * config["cooc"]["semglove"]["window"]
    assert args.sentence_vectors and args.special_tokens and args.min_count == 5
    assert args.ase == config["teacher"]["feature_sets"]["sentence"]["ase"]  # ASE sums ride on this pass by default
    ase = parse(plan.feature_args("minilm", "ase"))
    assert ase.ase and not ase.special_tokens and ase.layers == [] and ase.ase_max_words == 20000
    para = parse(plan.feature_args("minilm", "paragraph"))
    assert para.context == "paragraph" and para.mlm_topk == 0
    # a causal teacher gets no MLM flags, and needs no fitted head
    gpt = parse(plan.feature_args("smollm2", "sentence"))
    assert gpt.mlm_topk == 0 and gpt.attention_window == window
    assert not plan.uses_fitted_head("smollm2", "sentence")
    head = parse(plan.fit_head_args("minilm"), "fit-mlm-head")
    assert head.mode == "unmasked" and head.epochs == 6 and head.lr == 0.002


def test_fitted_head_only_where_needed(config):
    plan = TeacherPlan(config)
    assert plan.uses_fitted_head("minilm", "sentence")
    assert not plan.uses_fitted_head("minilm", "paragraph")  # no MLM in that set
    never = copy.deepcopy(config)
    never["teacher"]["mlm_head"]["fit"] = "never"
    assert not TeacherPlan(never).uses_fitted_head("minilm", "sentence")


def test_paths_and_targets(config):
    plan = TeacherPlan(config)
    r = config["results_dir"]
    assert plan.features("minilm", "sentence", "00003") == f"{r}/teacher/minilm/features/sentence/00003/features.json"
    assert len(plan.all_features("minilm", "ase", 3)) == 3
    targets = plan.baseline_targets()
    assert f"{r}/teacher/minilm/baselines/token.txt" in targets
    assert f"{r}/teacher/minilm/baselines/word-last.txt" in targets
    assert [t for t in targets if "ase-" in t][-1] == f"{r}/teacher/minilm/baselines/ase-8of8/ase.json"
    assert len([t for t in targets if "ase-" in t]) == 8  # the corpus-size curve: 1/8 … 8/8
    with pytest.raises(StaticvecError, match="teacher.models"):
        plan.model("bert-huge")


def test_paper_teachers_are_known_before_download(tmp_path, monkeypatch):
    # an empty Hugging Face cache: the paper DAG must still plan (ASE layers, static widths)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    # the same traits as the models' hub config.json files give through the local-directory path
    hub_configs = {
        "bert-base-uncased": {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 768, "num_hidden_layers": 12},
        "bert-large-uncased-whole-word-masking": {"model_type": "bert", "architectures": ["BertForMaskedLM"],
                                                  "hidden_size": 1024, "num_hidden_layers": 24},
        "roberta-base": {"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "hidden_size": 768,
                         "num_hidden_layers": 12},
        "gpt2": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_layer": 12},
    }
    for name, hub_config in hub_configs.items():
        local = tmp_path / name
        local.mkdir()
        (local / "config.json").write_text(json.dumps(hub_config))
        assert teacher_traits(name) == teacher_traits(str(local)), name
