"""Captions state the inputs made below the run's scale: a fraction of the corpus, fewer seeds, fewer taggers."""

import copy

from staticvec.config import load_config
from staticvec.dag.workflow import Workflow
from staticvec.report.provenance import reduced_text


def test_the_sentence_groups_by_fraction_and_seeds_and_counts_a_sweeps_points():
    reduced = {"run_seeds": [1, 2, 3], "source": "intrinsic", "items": [
        {"id": "b~w1", "sweep": "win", "fraction": 0.25, "seeds": [1]},
        {"id": "b~w2", "sweep": "win", "fraction": 0.25, "seeds": [1]},
        {"id": "fasttext", "sweep": None, "seeds": [1]},
        {"id": "g~d50", "sweep": "dims", "fraction": 0.125, "seeds": [1, 2]}]}
    assert reduced_text(reduced, 10_000_000) == (
        "Below the run's scale: on 1/8 of the corpus, about 1.2M tokens: g~d50; on 1/4 of the corpus, about 2.5M "
        "tokens: the 2 points of sweep win; seed 1 only (the run: 1, 2, 3): the 2 points of sweep win; fasttext; "
        "seeds 1, 2 only (the run: 1, 2, 3): g~d50.")
    assert reduced_text({"run_seeds": [1, 2, 3], "items": []}) == "" == reduced_text(None)
    taggers = {"run_seeds": [1, 2], "source": "tagging", "items": [{"id": "glove", "extrinsic_seeds": [1]}]}
    assert reduced_text(taggers) == "Below the run's scale: taggers of seed 1 only (the run: 1, 2): glove."


def test_a_tables_caption_carries_the_sentence(tmp_path, repo_root):
    from staticvec.report.tables import table_from_files

    result = {"results": {"ws353": {"score": 0.5, "found": 1, "total": 1}}}
    reduced = {"run_seeds": [1, 2, 3], "source": "intrinsic", "items": [{"id": "glove", "sweep": None, "seeds": [1]}]}
    table_from_files(repo_root / "config/tables.yaml", "wang_table1", {"bert_sg": [result]}, tmp_path / "t.csv",
                     tmp_path / "t.md", root=repo_root, reduced=reduced)
    assert "Below the run's scale: seed 1 only (the run: 1, 2, 3): glove." in (tmp_path / "t.md").read_text()


def test_the_tours_figure_of_a_development_quarter_says_so(repo_root):
    w = Workflow(load_config([repo_root / "config/config.yaml"]))
    items = w.reduced_inputs(rid for rid, _ in w.figure_results("wang_figure4"))["items"]
    assert len(items) == 8 and all(i["fraction"] == 0.25 and i["seeds"] == [1] and i["sweep"] == "wang_window"
                                   for i in items)
    # a fraction sweep's fractions are its x axis, not a reduction; deterministic rows have no seeds to lack
    items = w.reduced_inputs(rid for rid, _ in w.figure_results("x2static_figure1"))["items"]
    assert all("fraction" not in i for i in items) and not any(i["id"].startswith("ase_best") for i in items)
    assert w.reduced_inputs(["glove", "bert_token", "semglove_md"])["items"] == []
    args = w.figure_args("wang_figure4")
    assert "--reduced" in args and w.reduced_args(["glove"]) == []
    config = copy.deepcopy(w.config)
    config["seeds"] = [1]
    assert Workflow(config).reduced_inputs(rid for rid, _ in Workflow(config).figure_results("semglove_figure2a"))["items"] == []
