"""SemGloVe rule plan: file names, corpus fractions, flags the CLI accepts, config errors, and a dry run
of the rule files (every target resolves to exactly one rule chain)."""

import copy
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from staticvec.cli import build_parser
from staticvec.config import load_config, validate_config
from staticvec.dag.semglove import SemgloveRules
from staticvec.errors import StaticvecError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def config():
    return load_config([REPO / "config" / "config.yaml"])


def test_default_variants_paths_and_fractions(config):
    sg = SemgloveRules(config)
    assert sg.attention == ["sd", "sr", "sd10"] and sg.mlm == ["md", "mr", "md5"] and sg.restricted == ["sdR"]
    assert sg.store("sd") == "results/default/cooc/semglove/sd.cooc"
    assert sg.pieces("md", ".2of8") == "results/default/cooc/semglove/md/pieces.2of8.cooc"
    assert sg.shard_ids(".3of8") == ["00000", "00001", "00002"] and len(sg.shard_ids()) == 8
    assert sg.shard_ids(".1of2") == ["00000", "00001", "00002", "00003"]
    with pytest.raises(StaticvecError, match="not a whole number of the 8"):
        sg.shard_ids(".1of3")
    # a variant regex matches whole names only: sd10 is not sd + a fraction
    assert re.fullmatch(f"(?P<v>{sg.attention_regex})(?P<f>{sg.FRACTION_REGEX})", "sd10").group("v") == "sd10"
    assert re.fullmatch(f"({sg.restricted_regex})", "sd") is None
    assert sg.table5() == "results/default/cooc/cooccurrence.table5.json"  # the tables sheet's cooccurrence result


def test_flags_are_accepted_by_the_cli(config):
    sg = SemgloveRules(config)
    parser = build_parser()
    args = parser.parse_args(["cooc", "semglove", "--features", "F", "--vocab", "V", *shlex.split(sg.shard_args())])
    assert [a[:2] for a in args.attention] == [["5", "divide"], ["5", "rank"], ["10", "divide"]]
    assert [a[:2] for a in args.mlm] == [["10", "divide"], ["10", "rank"], ["5", "divide"]]
    assert args.teacher == "minilm" and args.window == 5 and args.drop_target == "auto" and args.min_count == 5
    args = parser.parse_args(["cooc", "semglove-words", "P", "--vocab", "V", *shlex.split(sg.words_args()), "--out", "O"])
    assert (args.gate is None) == (not config["cooc"]["semglove"]["gate_by_window"])


def test_released_code_options_and_recompute(config):
    config["cooc"]["semglove"]["gate_by_window"] = True
    config["teacher"]["cache"] = "recompute"
    sg = SemgloveRules(config)
    assert sg.words_inputs("md", ".2of8")["gate"] == "results/default/cooc/window5.2of8.cooc"
    assert "--gate results/default/cooc/window5.2of8.cooc --gate-min 1.0" in sg.words_args(".2of8")
    inputs = sg.shard_inputs("00003")
    assert [s[-len("corpus/shards/00003.tsv.gz"):] for s in inputs["shard"]] == ["corpus/shards/00003.tsv.gz"]
    assert "features" not in inputs
    sg.set_part_size(2, [8])  # a builder job over a run of shards reads each of them
    assert [s.rsplit("/", 1)[1] for s in sg.shard_inputs("00002-00003")["shard"]] == ["00002.tsv.gz", "00003.tsv.gz"]
    assert sg.shard_stores("md", ".4of8") == [sg.shard_store("md", "00000-00001"), sg.shard_store("md", "00002-00003")]
    assert inputs["head"].endswith("teacher/minilm/mlm_head.pt")  # MiniLM has no MLM head: a fitted one
    args = build_parser().parse_args(["cooc", "semglove", "--shard", "S", "--vocab", "V", *shlex.split(sg.shard_args())])
    assert args.mlm_topk == 11 and args.mlm_mode == "auto" and args.teacher == "minilm"
    assert args.mlm_masking == "whole_word"
    config["teacher"]["mlm_masking"] = "piece"
    args = build_parser().parse_args(["cooc", "semglove", "--shard", "S", "--vocab", "V",
                                      *shlex.split(SemgloveRules(config).shard_args())])
    assert args.mlm_masking == "piece"


def test_config_errors_name_the_key(config):
    bad = copy.deepcopy(config)
    bad["cooc"]["semglove"]["variants"]["sdR"]["pairs_of"] = "md"
    with pytest.raises(StaticvecError, match="pairs_of"):
        SemgloveRules(bad)
    bad = copy.deepcopy(config)
    bad["cooc"]["semglove"]["window"] = bad["teacher"]["feature_sets"]["semglove"]["attention_window"] + 1
    with pytest.raises(StaticvecError, match="attention_window"):
        SemgloveRules(bad)
    bad = copy.deepcopy(config)
    bad["cooc"]["semglove"]["variants"]["x"] = {"source": "mlm", "top": 3, "weight": "max"}
    with pytest.raises(StaticvecError, match="weight"):
        validate_config(bad, sources="test")


def test_paper_config_names_the_paper_teacher_and_settings(config):
    paper = load_config([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"])
    validate_config(paper, sources="paper")
    sg = SemgloveRules(paper)
    assert sg.tp.model(sg.teacher) == "bert-large-uncased-whole-word-masking"
    assert paper["teacher"]["mlm_mode"] == "masked" and paper["methods"]["semglove"]["iterations"] == 100
    # raw ±2S positions hold GloVe's window of S in-vocabulary words each side (OOV deleted first)
    assert paper["teacher"]["feature_sets"]["semglove"]["attention_window"] == 2 * paper["cooc"]["semglove"]["window"]


def test_rule_files_resolve_every_semglove_target(shared_data):
    targets = ["results/default/embeddings/semglove_sdR/seed1/vectors.bin",
               "results/default/embeddings/semglove_md/seed1/vectors.bin",
               "results/default/cooc/cooccurrence.table5.json", "results/default/cooc/semglove/md.2of8.cooc",
               "results/default/cooc/semglove/sdR.4of8.cooc"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--quiet", "rules", "--", *targets],
                            capture_output=True, text=True, env=env, cwd=REPO)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, re.M))
    assert jobs["semglove_cooc_shard"] == "8"  # one job per shard builds every variant
    assert jobs["semglove_words"] == "2" and jobs["semglove_merge_pieces"] == "2"  # md, md.2of8
    assert jobs["semglove_restrict"] == "2"
    # window5, window5.4of8 (sdR) and window5.2of8 (md.2of8's window gate, the default)
    assert jobs["cooc_window_merge"] == "3"
    assert jobs["train_glove"] == "2" and jobs["semglove_table5_counts"] == "1"
    # a fraction's stores are on the fraction's own vocabulary: its window counts are counted with it
    # (8 shards for the corpus, 4 + 2 for the fractions), sd.4of8 is cut down to it (sdR.4of8's pairs)
    assert jobs["vocabulary"] == "3" and jobs["cooc_window_shard"] == "14"
    assert jobs["semglove_attention_fraction_vocab"] == "1" and jobs["semglove_merge_attention_fraction"] == "1"
