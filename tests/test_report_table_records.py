"""SemGloVe Table 4's total word pairs: our count per store, read from each row embedding's training
record (the store header's n_entries), beside the paper's printed count."""

import json
import math
from pathlib import Path

import pytest

from staticvec.cli import main
from staticvec.report.tables import build_comparison, count_text, parse_count, to_markdown

ROOT = Path(__file__).resolve().parents[1]


def _result(score):
    return {"results": {k: {"score": score, "found": 9, "total": 10} for k in ("ws353", "ws353_sim", "ws353_rel",
                                                                               "simlex999")}, "oov_policy": "mean"}


def test_counts_parse_and_print_like_the_paper():
    assert parse_count("0.3B") == pytest.approx(3e8) and parse_count("12M") == 12e6 and parse_count("950") == 950
    assert math.isnan(parse_count("")) and math.isnan(parse_count(None))
    assert count_text(3e8) == "300M" and count_text(2.41e6) == "2.41M" and count_text(2.5e9) == "2.5B"
    assert count_text(float("nan")) == "—"


def test_table4_shows_our_pairs_per_store_from_the_training_records(tmp_path):
    paper = ROOT / "resources/paper_tables/semglove_table4.csv"
    files = {}
    for emb, n in (("glove", 2_410_000), ("semglove_sd", 1_230_000)):
        (tmp_path / f"{emb}.json").write_text(json.dumps({"method": "glove", "cooc": {"n_entries": n}}))
        (tmp_path / f"{emb}.eval.json").write_text(json.dumps(_result(0.5)))
        files[emb] = str(tmp_path / f"{emb}.eval.json")
        files[f"{emb}@record"] = str(tmp_path / f"{emb}.json")
    frame = build_comparison(paper, files, {"glove": "glove", "semglove_sd": "semglove_sd", "semglove_md": None},
                             {"ws353": "ws353"}, record_columns={"pairs": "cooc.n_entries"})
    cell = frame.set_index(["row", "column"])
    assert cell.loc[("glove", "pairs"), "ours"] == 2_410_000 and cell.loc[("glove", "pairs"), "paper"] == 3e8
    assert cell.loc[("semglove_sd", "pairs"), "ours"] == 1_230_000 and cell.loc[("semglove_sd", "pairs"), "paper"] == 2e8
    assert math.isnan(cell.loc[("semglove_md", "pairs"), "ours"])  # no result of ours in this row
    assert cell.loc[("glove", "ws353"), "ours"] == pytest.approx(50.0)  # the scores are untouched
    md = to_markdown(frame)
    assert "| GloVe | glove | 2.41M / 300M | 50.0 / 52.6 (-2.6) |" in md
    assert "1.23M / 200M" in md


def test_table_command_reads_the_records_named_in_the_sheet(tmp_path):
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    w = Workflow(load_config([ROOT / "config" / "config.yaml"]), ROOT)
    results = w.table_results("semglove_table4")
    records = [(rid, path) for rid, path in results if rid.endswith("@record")]
    assert ("semglove_sd@record", w.embedding_record("semglove_sd", 1)) in records
    assert {rid[: -len("@record")] for rid, _ in records} == {"glove", "semglove_sd", "semglove_sd10", "semglove_sdR",
                                                               "semglove_md5", "semglove_md"}
    args = []
    for emb in ("glove", "semglove_sdR"):
        (tmp_path / f"{emb}.json").write_text(json.dumps({"cooc": {"n_entries": 5000}}))
        (tmp_path / f"{emb}.eval.json").write_text(json.dumps(_result(0.4)))
        args += [f"{emb}={tmp_path / f'{emb}.eval.json'}", f"{emb}@record={tmp_path / f'{emb}.json'}"]
    out_md = tmp_path / "t4.md"
    assert main(["report", "table", "--spec", str(ROOT / "config/tables.yaml"), "--root", str(ROOT), "--table", "semglove_table4",
                 "--out-csv", str(tmp_path / "t4.csv"), "--out-md", str(out_md), *args]) == 0
    text = out_md.read_text()
    assert "5K / 200M" in text and "5K / 300M" in text and "distinct word pairs" in text


def test_x2static_table4_ase_row_is_the_layer_with_the_best_average_macro_f1():
    from staticvec.config import load_config
    from staticvec.sheets.tables import load_tables_spec
    from staticvec.dag.workflow import Workflow

    spec = load_tables_spec(ROOT / "config/tables.yaml", ROOT)
    entry = spec["tables"]["x2static_table4"]
    tasks = ("cr", "mr", "mpqa", "subj", "trec", "sst5")

    def result(f1, acc):
        return {"results": {t: {"score": f1, "f1": f1, "accuracy": acc} for t in tasks}}

    # layer 1: the best average macro-F1; layer 2: the best mean of every column (its accuracy is high)
    ours = {"ase~layer0": result(0.50, 0.60), "ase~layer1": result(0.62, 0.63), "ase~layer2": result(0.60, 0.90)}
    frame = build_comparison(ROOT / entry["paper_file"], ours, entry["rows"], entry["columns"])
    row = frame[frame["row"] == "ase_bert"].set_index("column")
    assert row.loc["avg_f1", "ours"] == pytest.approx(62.0) and row.loc["avg_acc", "ours"] == pytest.approx(63.0)
    assert row["embedding"].iloc[0].startswith("ase~layer1 (best avg_f1")
    # the workflow feeds the table every layer's classification result
    w = Workflow(load_config([ROOT / "config" / "config.yaml"]), ROOT)
    ids = {rid for rid, _ in w.table_results("x2static_table4")}
    assert {f"ase~layer{k}" for k in w.config["methods"]["ase"]["layers"]} <= ids


def test_released_code_readings_are_rows_beside_the_papers(tmp_path):
    """Item 12: X2Static, BERT+Skip-gram and Context-to-Vec as their released code runs them, in the
    summary and, as rows of ours only, in the papers' tables."""
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    w = Workflow(load_config([ROOT / "config" / "config.yaml"]), ROOT)
    released = {"x2static_para_released": "x2static", "bert_sg_released": "bert_sg", "c2v_released": "c2v"}
    for emb, method in released.items():
        spec = w.spec(emb)
        assert spec.method == method
        preset = w.config["methods"][method]["variants"]["released"]
        assert all(w.params(emb)[k] == v for k, v in preset.items()), emb
    assert set(released) <= {r["id"] for r in w.summary_rows()}
    assert "c2v_released" in {rid for rid, _ in w.table_results("c2v_table1")}
    assert "x2static_para_released" in {rid for rid, _ in w.table_results("x2static_table4")}
    # the table command prints them after the paper's rows, labelled, ours only
    res = tmp_path / "c2v_released.json"
    res.write_text(json.dumps({"results": {"ws353": {"score": 0.5, "found": 353, "total": 353}}}))
    out_md = tmp_path / "t1.md"
    assert main(["report", "table", "--spec", str(ROOT / "config/tables.yaml"), "--root", str(ROOT), "--table", "c2v_table1",
                 "--out-csv", str(tmp_path / "t1.csv"), "--out-md", str(out_md), f"c2v_released={res}"]) == 0
    lines = out_md.read_text().splitlines()
    row = next(line for line in lines if line.startswith("| c2v_released (ours; not in the paper) | c2v_released |"))
    assert "50.0 / —" in row
    assert lines.index(row) > max(i for i, line in enumerate(lines) if line.startswith("| Skip-gram |"))


def test_causal_teacher_rows_are_built_only_when_their_flag_is_on(tmp_path):
    """Item 13: the GPT-2 rows (causal-LM teacher) are sheet entries marked `when: causal_teacher`;
    off (the laptop default) nothing builds them and the tables show the paper's numbers only."""
    import copy

    from staticvec.config import ConfigError, load_config
    from staticvec.sheets import EmbeddingSheet
    from staticvec.dag.workflow import Workflow

    config = load_config([ROOT / "config" / "config.yaml"])
    off = Workflow(config, ROOT)
    causal = {"bert_sg_causal", "x2static_sent_causal", "x2static_para_causal", "causal_token", "causal_word",
              "causal_avg"}
    roberta = {"x2static_sent_roberta", "x2static_para_roberta"}  # the other optional rows (their own flag)
    assert causal | roberta == set(off.sheet.disabled) and not causal & set(off.sheet.ids())
    assert off.tables["wang_table1"]["rows"]["gpt2"] == "bert_sg_causal"  # named, yet not an error
    assert "bert_sg_causal" not in {rid for rid, _ in off.table_results("wang_table1")}
    on_config = copy.deepcopy(config)
    on_config["sheets"]["optional_rows"]["causal_teacher"] = True
    on = Workflow(on_config, ROOT)
    assert causal <= set(on.sheet.ids()) and set(on.sheet.disabled) == roberta  # only this flag's rows built
    assert {on.spec(e).teacher for e in causal} == {"causal"}
    assert on.teacher_model("causal") == "smollm2"
    assert "bert_sg_causal" in {rid for rid, _ in on.table_results("wang_table1")}
    paper = load_config([ROOT / "config" / "config.yaml", ROOT / "config" / "paper.yaml"])
    assert paper["sheets"]["optional_rows"]["causal_teacher"] and paper["teacher"]["models"]["causal"] == "gpt2"
    bad = tmp_path / "sheet.yaml"
    bad.write_text("embeddings:\n  x:\n    method: glove\n    when: no_such_flag\n")
    with pytest.raises(ConfigError, match="no_such_flag"):
        EmbeddingSheet.load(bad, config)
