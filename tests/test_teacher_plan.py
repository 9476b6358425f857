"""The teacher rules' paths and flags (TeacherPlan) from the default config."""

import copy
import json
import shlex

import pytest

from staticvec.config import load_config, validate_config
from staticvec.errors import StaticvecError
from staticvec.teacher.cli import register
from staticvec.dag.teacher import TEACHER_PASS_MESSAGE, TeacherPlan, pass_of_message, teacher_traits


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


def separate_passes(config):
    """paper.yaml's layout on the default teacher: the SemGloVe builders read a `semglove` pass of their own."""
    cfg = copy.deepcopy(config)
    cfg["cooc"]["semglove"]["feature_set"] = "semglove"
    return cfg


def test_feature_flags_parse_back_into_the_cli(config):
    plan = TeacherPlan(config)
    window = config["teacher"]["feature_sets"]["semglove"]["attention_window"]  # raw ±2S (SemGloVe's window)
    assert window == 2 * config["cooc"]["semglove"]["window"]
    # by default the SemGloVe builders share the students' pass (same teacher, same inputs, unmasked MLM):
    # one forward per shard gives the last layer, sentence vectors, ASE sums, attention and MLM
    assert config["cooc"]["semglove"]["feature_set"] == "sentence"
    args = parse(plan.feature_args("minilm", "sentence"))
    assert (args.context, args.layers, args.attention_window, args.mlm_topk) == ("sentence", [-1], window, 11)
    assert args.sentence_vectors and args.special_tokens and args.min_count == 5
    assert args.ase == config["teacher"]["feature_sets"]["sentence"]["ase"]  # ASE sums ride on this pass by default
    assert args.mlm_mode == "auto" and args.mlm_masking == "whole_word"
    # the same set on a teacher the builders do not read computes no attention and no MLM
    other = parse(plan.feature_args("smollm2", "sentence"))
    assert (other.layers, other.attention_window, other.mlm_topk) == ([-1], 0, 0)
    # the builders on a pass of their own (paper.yaml): attention and MLM only, and the students' pass none
    own = TeacherPlan(separate_passes(config))
    sg = parse(own.feature_args("minilm", "semglove"))
    assert (sg.context, sg.layers, sg.attention_window, sg.mlm_topk) == ("sentence", [], window, 11)
    students = parse(own.feature_args("minilm", "sentence"))
    assert (students.layers, students.attention_window, students.mlm_topk) == ([-1], 0, 0) and students.sentence_vectors
    ase = parse(plan.feature_args("minilm", "ase"))
    assert ase.ase and not ase.special_tokens and ase.layers == [] and ase.ase_max_words is None  # every word
    para = parse(plan.feature_args("minilm", "paragraph"))
    assert para.context == "paragraph" and para.mlm_topk == 0 and para.attention_window == 0
    # a causal teacher gets no MLM flags, and needs no fitted head
    causal = separate_passes(config)
    causal["cooc"]["semglove"]["teacher"] = "smollm2"
    gpt_plan = TeacherPlan(causal)
    gpt = parse(gpt_plan.feature_args("smollm2", "semglove"))
    assert gpt.mlm_topk == 0 and gpt.attention_window == window
    assert not gpt_plan.uses_fitted_head("smollm2", "semglove")
    head = parse(plan.fit_head_args("minilm"), "fit-mlm-head")
    assert head.mode == "unmasked" and head.epochs == 6 and head.lr == 0.002


def test_ase_fallback_and_evaluation_words_only_on_the_whole_corpus(config):
    import argparse

    on = copy.deepcopy(config)
    on["teacher"]["ase"]["evaluation_words"] = True  # paper.yaml (the laptop default leaves it off)
    plan = TeacherPlan(on)
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    n = plan.n_shards

    def ase_args(k, p=plan):
        return parser.parse_args(["teacher", "baseline", "ase", *shlex.split(p.ase_args("minilm", k)),
                                  "--vocab", "v", "--out", "o"])

    whole = ase_args(n)
    assert whole.fallback_word and whole.evaluation_data == "resources/data/eval" and whole.lowercase_evaluation_words
    assert whole.evaluation_tasks == config["evaluation"]["tasks"] and plan.ase_uses_evaluation_words(n)
    part = ase_args(1)  # a fraction is cut to its own vocabulary: every word of it is met, no fallback needed
    assert not part.fallback_word and part.evaluation_data is None and not plan.ase_uses_evaluation_words(1)
    default = ase_args(n, TeacherPlan(config))
    assert default.fallback_word and default.evaluation_data is None
    assert not TeacherPlan(config).ase_uses_evaluation_words(n)


def test_each_pass_serves_only_readers_that_need_it(config):
    """SemGloVe's builders are the only readers of attention/MLM, so exactly one pass computes them: theirs.
    By default it is the students' own pass (one forward per shard for both); at paper scale (another
    teacher, masked MLM: one copy per piece) the students' passes run no attention and no masked copies."""
    from staticvec.sheets import EmbeddingSheet

    paper = load_config(["config/config.yaml", "config/paper.yaml"])
    for cfg, shared in ((config, True), (paper, False), (separate_passes(config), False)):
        plan = TeacherPlan(cfg)
        passes = plan.passes(EmbeddingSheet.load("config/embeddings.yaml", cfg))
        with_mlm = [p for p in passes if "MLM" in p["computes"] or "attention" in p["computes"]]
        assert [(p["teacher"], p["set"]) for p in with_mlm] == [plan.semglove_pass()]
        assert any(r.startswith("semglove") for r in with_mlm[0]["readers"])
        students = [p for p in passes if any(r.startswith(("bert_sg", "c2v", "x2static")) for r in p["readers"])]
        assert students
        assert (with_mlm[0] in students) == shared
        if not shared:
            assert all(r.startswith("semglove") for r in with_mlm[0]["readers"])
    # the default: two passes per shard on MiniLM (sentence: students, ASE, SemGloVe; paragraph: X2Static para)
    default = TeacherPlan(config).passes(EmbeddingSheet.load("config/embeddings.yaml", config))
    assert sorted((p["teacher"], p["set"]) for p in default) == [("minilm", "paragraph"), ("minilm", "sentence")]


def test_fitted_head_only_where_needed(config):
    plan = TeacherPlan(config)
    assert plan.uses_fitted_head("minilm", "sentence")  # the builders' pass (shared with the students)
    assert not plan.uses_fitted_head("minilm", "semglove")  # a set nobody reads here: no MLM computed on it
    assert not plan.uses_fitted_head("minilm", "paragraph")
    own = TeacherPlan(separate_passes(config))
    assert own.uses_fitted_head("minilm", "semglove") and not own.uses_fitted_head("minilm", "sentence")
    never = copy.deepcopy(config)
    never["teacher"]["mlm_head"]["fit"] = "never"
    assert not TeacherPlan(never).uses_fitted_head("minilm", "sentence")


def test_paths_and_targets(config):
    plan = TeacherPlan(config)
    r = config["results_dir"]
    assert plan.features("minilm", "sentence", "00003") == f"{r}/teacher/minilm/features/sentence/00003/features.json"
    assert len(plan.all_features("minilm", "ase", 3)) == 3
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


def test_feature_pass_threads_come_from_the_config(config):
    assert TeacherPlan(config).feature_threads == config["teacher"]["threads"] == 1  # two passes side by side on 2 cores
    more = copy.deepcopy(config)
    more["teacher"]["threads"] = 4
    assert TeacherPlan(more).feature_threads == 4
    del more["teacher"]["threads"]
    assert TeacherPlan(more).feature_threads == 2  # a config without the key: the rule's former 2 threads
    more["teacher"]["threads"] = 0
    with pytest.raises(StaticvecError, match="threads"):
        validate_config(more)


def test_a_teacher_pass_message_reads_back_as_its_pass(config):
    """The dry-run line of a teacher pass (the rule's message, formatted as Snakemake does) gives back its
    teacher, set and shard, whatever the pass computes; any other message gives None."""
    from types import SimpleNamespace

    plan = TeacherPlan(config)
    for teacher, fset, shard in (("minilm", "sentence", "00003"), ("bert-large-wwm", "semglove", "00255")):
        line = TEACHER_PASS_MESSAGE.format(wildcards=SimpleNamespace(teacher=teacher, fset=fset, shard=shard),
                                           params=SimpleNamespace(computes=plan.computes("minilm", "sentence")))
        assert pass_of_message(line) == (teacher, fset, shard)
    assert pass_of_message("teacher minilm (8 shard passes): sentence context") is None
    assert pass_of_message("fitting the MLM head of minilm") is None

