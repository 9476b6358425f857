"""Each corpus-trained method over corpus size: where a curve reaches a level (hand-computed), the table's and
figure's numbers from result files, and the planning layer's points, panels and targets."""

import copy
import json
import math

import pytest

from staticvec.config import load_config
from staticvec.dag.workflow import Workflow
from staticvec.report.corpus_scale import corpus_scale_data, corpus_scale_from_files, reach, reach_text
from staticvec.sheets.tables import load_tables_spec

M = 1e6


# ------------------------------------------------------------------ reach: interpolated in log tokens


def test_reach_interpolates_between_the_last_size_below_and_the_next_in_log_tokens():
    # 20 at 2M, 30 at 4M, level 25: half-way in log tokens, 2M · 2^0.5 (linear in tokens would give 3M)
    r = reach([1 * M, 2 * M, 4 * M, 8 * M], [10, 20, 30, 40], 25)
    assert r["status"] == "reaches" and r["tokens"] == pytest.approx(2 * M * math.sqrt(2))
    # a quarter of the way from 10 to 30 is 15: 2M · 2^0.25
    assert reach([1 * M, 2 * M, 4 * M], [5, 10, 30], 15)["tokens"] == pytest.approx(2 * M * 2 ** 0.25)
    # from 0 at 1M to 10 at 4M, level 5: 2M (geometric mean), not 2.5M
    assert reach([1 * M, 4 * M], [0, 10], 5)["tokens"] == pytest.approx(2 * M)


def test_reach_at_or_above_counts_as_reached_and_the_order_of_points_does_not_matter():
    assert reach([1 * M, 2 * M], [10, 25], 25)["tokens"] == pytest.approx(2 * M)  # equal to the level: reached there
    assert reach([8 * M, 1 * M, 4 * M, 2 * M], [40, 10, 30, 20], 25)["tokens"] == pytest.approx(2 * M * math.sqrt(2))


def test_reach_above_everywhere_below_at_the_end_and_dips():
    assert reach([1 * M, 2 * M], [30, 40], 25) == {"status": "above", "tokens": 1 * M, "crossings": 0}
    below = reach([1 * M, 2 * M, 4 * M], [10, 30, 20], 25)  # above at 2M, below again at 4M: not reached for good
    assert below["status"] == "below" and below["tokens"] == 4 * M and below["crossings"] == 1
    assert reach_text(below, "Model2Vec") == "not within 4.00M tokens"
    dipped = reach([1 * M, 2 * M, 4 * M, 8 * M], [10, 30, 20, 30], 25)  # up, down, up: the last crossing counts
    assert dipped["status"] == "reaches" and dipped["crossings"] == 2
    assert dipped["tokens"] == pytest.approx(4 * M * 2 ** 0.5)
    assert reach_text(dipped, "Model2Vec").endswith("(after dipping below again)")


def test_reach_leaves_out_missing_scores_and_needs_a_level():
    assert reach([1 * M, 2 * M, 4 * M], [10, None, 30], 20)["tokens"] == pytest.approx(2 * M)
    assert reach([1 * M], [None], 20)["status"] == "no scores"
    assert reach([1 * M], [10], None)["status"] == "no level"


# ------------------------------------------------------------------ the numbers, from results


def result(**scores):
    return {"results": {k: {"score": v, "found": 10, "total": 10} for k, v in scores.items()}}


SPEC = {"sweep": "s", "lines": ["m2v", "m2v_wide"], "crossing": "m2v", "crossing_for": {"x2": "m2v_wide"},
        "paper_tables": {"glove": "semglove_table1"}, "panels": []}
SWEEP = {"id": "s", "bases": ["glove", "x2"], "param": "fraction", "values": [0.5, 0.25, 1.0], "id_key": "scale"}
CORPUS = {"shards": [{"tokens": 100}, {"tokens": 200}, {"tokens": 300}, {"tokens": 400}]}
POINTS = {"glove": {"0.25": "glove~scale0.25", "0.5": "glove~scale0.5", "1": "glove"},
          "x2": {"0.25": "x2~scale0.25", "0.5": "x2~fraction0.5", "1": "x2"}}


def results_of(metric_values: dict) -> dict:
    """{(protocol, id): result} with ws353 and simlex999 from {id: (ws353, simlex999)} (fractions of 1)."""
    return {("web", e): result(ws353=a, simlex999=b) for e, (a, b) in metric_values.items()}


def test_scores_tokens_levels_paper_numbers_and_crossings(repo_root):
    values = {"glove~scale0.25": (0.10, 0.30), "glove~scale0.5": (0.30, 0.10), "glove": (0.50, 0.20),
              "x2~scale0.25": (0.60, 0.0), "x2~fraction0.5": (0.70, 0.0), "x2": (0.80, 0.0),
              "m2v": (0.20, 0.40), "m2v_wide": (0.90, 0.10)}
    panels = [{"metric": "ws353", "protocol": "web", "tables": []},
              {"metric": {"mean": ["ws353", "simlex999"]}, "protocol": "web", "tables": ["wang_table2"],
               "claims": ["c1"], "paper": "SemGloVe"}]
    tables = load_tables_spec(repo_root / "config/tables.yaml", repo_root)["tables"]
    data = corpus_scale_data(SPEC, panels, SWEEP, POINTS, results_of(values), CORPUS, tables, repo_root)
    assert data["fractions"] == [0.25, 0.5, 1.0] and data["tokens"] == [100, 300, 1000]  # first 1, 2, 4 shards
    ws, mean = data["panels"]
    glove, x2 = ws["curves"]
    assert [p["score"] for p in glove["points"]] == pytest.approx([10, 30, 50])
    assert [p["id"] for p in x2["points"]] == ["x2~scale0.25", "x2~fraction0.5", "x2"]
    assert {line["id"]: line["score"] for line in ws["lines"]} == pytest.approx({"m2v": 20, "m2v_wide": 90})
    # GloVe reaches Model2Vec (20) half-way from 10 at 100 tokens to 30 at 300 tokens, in log tokens: 100·√3
    assert glove["reference"] == "m2v" and glove["reach"]["tokens"] == pytest.approx(100 * math.sqrt(3))
    # X2Static is checked against the wide Model2Vec (90), which it never reaches
    assert x2["reference"] == "m2v_wide" and x2["reach"]["status"] == "below"
    # the paper's GloVe: WS353 52.6 (SemGloVe Table 1, the method's table); the 4-set mean of the claim's table
    assert glove["paper"] == {"value": pytest.approx(52.6), "table": "semglove_table1"} and x2["paper"] is None
    assert [p["score"] for p in mean["curves"][0]["points"]] == pytest.approx([20, 20, 35])
    # a claim panel reads its claim's table first (Wang et al. Table 2: GloVe 54.3, 37.0), then the method's own
    assert mean["curves"][0]["paper"] == {"value": pytest.approx((54.3 + 37.0) / 2), "table": "wang_table2"}
    assert mean["claims"] == ["c1"] and mean["label"].startswith("SemGloVe: mean of WS353, SimLex-999")


SCORES = {"glove~scale0.25": (0.10, 0.3), "glove~scale0.5": (0.30, 0.1), "glove": (0.50, 0.2),
          "x2~scale0.25": (0.6, 0.0), "x2~fraction0.5": (0.7, 0.0), "x2": (0.8, 0.0), "m2v": (0.2, 0.4),
          "m2v_wide": (0.9, 0.1)}  # (ws353, simlex999) of each point


def from_files(tmp_path, repo_root, panels):
    """corpus_scale_from_files over SCORES written as result files: (record, {"md"|"csv"|"pdf"|"png": path})."""
    files = {}
    for emb, (a, b) in SCORES.items():
        path = tmp_path / f"{emb}.json"
        path.write_text(json.dumps(result(ws353=a, simlex999=b)))
        files[("web", emb)] = [str(path)]
    sheet = tmp_path / "figures.yaml"
    sheet.write_text(json.dumps({"figures": {}, "labels": {"glove": "GloVe"}, "corpus_scale": SPEC}))
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(CORPUS))
    out = {k: tmp_path / f"out.{k}" for k in ("md", "csv", "pdf", "png")}
    record = corpus_scale_from_files(str(sheet), str(repo_root / "config/tables.yaml"), panels, json.dumps(SWEEP),
                                     POINTS, files, str(corpus), *(str(out[k]) for k in ("md", "csv", "pdf", "png")),
                                     root=str(repo_root))
    return record, out


def test_from_files_writes_the_table_csv_figure_and_manifest(tmp_path, repo_root):
    record, out = from_files(tmp_path, repo_root, [{"metric": "ws353", "protocol": "web"}])
    md = out["md"].read_text()
    assert "| GloVe | 10.0 | 30.0 | 50.0 | 52.6 (semglove_table1) | at 173 tokens |" in md  # 100·√3 = 173.2
    assert "| x2 | 60.0 | 70.0 | 80.0 | — | not within 1k tokens (vs m2v_wide) |" in md
    assert "| GloVe (level)" not in md and "| m2v (level) | 20.0 | 20.0 | 20.0 |" in md
    assert out["pdf"].stat().st_size > 0 and out["png"].stat().st_size > 0
    assert (tmp_path / "out.manifest.json").exists() and record["data"]["tokens"] == [100, 300, 1000]
    assert "reaches m2v" in out["csv"].read_text()


def test_from_files_draws_a_grid_with_hidden_cells(tmp_path, repo_root):
    # the claims scale draws 7 panels in a 3 x 3 grid (2 cells hidden); 4 panels give 2 x 3 with 2 hidden
    panels = [{"metric": m, "protocol": "web"} for m in ("ws353", "simlex999")]
    panels += [{"metric": {"mean": ["ws353", "simlex999"]}, "protocol": "web"}, {"metric": "ws353", "protocol": "web"}]
    record, out = from_files(tmp_path, repo_root, panels)
    assert len(record["data"]["panels"]) == 4 and out["png"].stat().st_size > 0 and out["pdf"].stat().st_size > 0
    assert "| GloVe | 20.0 | 20.0 | 35.0 |" in out["md"].read_text()  # the mean of ws353 and simlex999 per point


# ------------------------------------------------------------------ the planning layer


@pytest.fixture(scope="module")
def default_config(repo_root):
    return load_config([repo_root / "config/config.yaml"])


def test_points_that_repeat_another_entry_are_read_from_it(default_config):
    w = Workflow(copy.deepcopy(default_config))
    points = w.corpus_scale_points()
    assert set(points) == {"glove", "sg", "cbow", "fasttext", "semglove_sd", "semglove_md", "bert_sg", "c2v",
                           "x2static_sent", "x2static_para"}
    assert all(p["1"] == base for base, p in points.items())  # the whole corpus: the main row itself
    assert points["x2static_para"]["0.125"] == "x2static_para~fraction0.125"  # X2Static Figure 1's run
    assert points["bert_sg"]["0.25"] == "bert_sg~window5"  # Wang Figure 4's window 5 (a quarter, window 5)
    assert points["glove"]["0.125"] == "glove~scale0.125"  # Figure 2(b)'s eighth has x_max 1.25: not the same run
    assert points["sg"]["0.5"] == "sg~scale0.5"


def test_panels_are_the_sheets_metrics_and_each_claims_averaged_metric(default_config):
    w = Workflow(copy.deepcopy(default_config))
    panels = w.corpus_scale_panels()
    assert [(p["metric"], p["protocol"]) for p in panels[:2]] == [("ws353", "web"), ("simlex999", "web")]
    means = {(json.dumps(p["metric"]), p["protocol"]): p for p in panels[2:]}
    sg_avg = means[(json.dumps({"mean": ["ws353", "ws353_sim", "ws353_rel", "simlex999"]}), "web")]
    assert "semglove_t1_md_vs_sd" in sg_avg["claims"] and "semglove_m2v" in sg_avg["claims"]
    assert sg_avg["tables"][0] == "semglove_table1"
    assert (json.dumps({"mean": ["rg65", "ws353", "simlex999", "simverb3500", "rw"]}), "muse") in means
    assert len(means) == len(set(means))  # one panel per distinct metric and protocol


def test_the_tour_builds_no_curve_and_the_claims_scale_does(default_config, repo_root):
    tour = Workflow(copy.deepcopy(default_config))
    assert tour.corpus_scale_targets() == [] and not any("scale" in t for t in tour.final_targets())
    config = load_config([repo_root / "config/config.yaml", repo_root / "config/claims10m.yaml"])
    claims = Workflow(config)
    assert claims.corpus_scale_targets() == ["results/claims10m/tables/scale/corpus_scale.md",
                                             "results/claims10m/figures/scale/corpus_scale.pdf"]
    # the readers' sets: a point read only by the curves is scored on the panels' sets in their protocols
    assert set(claims.intrinsic_sets("sg~scale0.125")) >= {"ws353", "simlex999", "rg65", "simverb3500", "rw"}
    keys = [k for k, _ in claims.corpus_scale_results()]
    assert "muse/x2static_para~fraction0.125" in keys and "web/model2vec" in keys and "web/sg~scale1" not in keys
