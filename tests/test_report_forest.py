"""The claims' forest plots: the rows drawn from tables/claims.json (one per comparison under its claim,
the part's verdict as the colour, the paper's difference, the tolerance), the files written, the
planning of one plot per paper (and one for the claims beyond the papers)."""

import json

import pytest

from staticvec.errors import StaticvecError
from staticvec.report.claims import Results, evaluate_claims, write_claims
from staticvec.sheets.claims import load_claims_spec
from staticvec.report.forest import COLOURS, forest_from_files, forest_rows

from test_claims import _claim, _intrinsic, _sheet


def _claims_json(tmp_path):
    results = Results(_intrinsic(a=[0.63, 0.64, 0.65], b=[0.60, 0.60, 0.60], c=[0.62, 0.60, 0.61], m=[0.9]),
                      random=["a", "b", "c"])
    sheet = _sheet(tmp_path, {
        "s_order": _claim(order=["a", ["b", "c"]]),
        "s_tie": _claim(tie=["b", "c"], tol=2.0),
        "s_ours": {"paper": "semglove", "origin": "ours", "where": "Table 1", "statement": "s", "protocol": "web",
                   "metric": "ws353", "order": ["a", "m"]},
    })
    records = evaluate_claims(load_claims_spec(sheet), results)
    out = tmp_path / "claims.json"
    write_claims(records, "cap", tmp_path / "c.md", tmp_path / "c.csv", out)
    return out, records


def test_rows_follow_the_claims_with_the_parts_verdicts(tmp_path):
    _, records = _claims_json(tmp_path)
    rows = forest_rows(records, "semglove")
    assert [r["kind"] for r in rows] == ["claim", "comparison", "comparison", "claim", "comparison"]
    assert rows[0]["label"] == "s_order (Table 1): undecided: 1 hold / 1 undecided"
    # a > b: differences 3, 4, 5 (holds); a > c: 1, 4, 4 (straddles)
    assert [r["status"] for r in rows[1:3]] == ["holds", "undecided"]
    assert rows[1]["mean"] == pytest.approx(4.0) and rows[1]["low"] < rows[1]["mean"] < rows[1]["high"]
    assert rows[4]["relation"] == "~" and rows[4]["tol"] == 2.0
    # the claim no paper makes is drawn in its own plot (a seeded row against a deterministic one: 63 − 90 ...)
    [head, row] = forest_rows(records, "beyond")
    assert head["verdict"] == "fails" and row["status"] == "fails" and row["high"] < 0 and not row["exact"]
    assert set(COLOURS) == {"holds", "fails", "undecided", "not tested"}


def test_files_are_written_and_an_unknown_group_is_an_error(tmp_path):
    claims, _ = _claims_json(tmp_path)
    assert forest_from_files(str(claims), "semglove", str(tmp_path / "f.pdf"), str(tmp_path / "f.png")) == 3
    assert (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF" and (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(StaticvecError, match="no claim of group 'wang'; the groups are semglove, beyond"):
        forest_from_files(str(claims), "wang", str(tmp_path / "g.pdf"), str(tmp_path / "g.png"))
    assert json.loads(claims.read_text())["counts"]["beyond"]["fails"] == 1


def test_one_plot_per_paper_and_one_beyond_the_papers_is_planned():
    from staticvec.config import load_yaml
    from staticvec.dag.workflow import Workflow

    w = Workflow(load_yaml("config/config.yaml"))
    assert w.claims_groups() == ["semglove", "wang", "c2v", "x2static", "beyond"]
    targets = w.claims_targets()
    assert targets[0].endswith("tables/claims.md")
    assert [t.split("/")[-2:] for t in targets[1:]] == [[g, "claims.pdf"] for g in w.claims_groups()]
    only = Workflow({**load_yaml("config/config.yaml"), "targets": {"claims": ["wang_t2_google"]}})
    assert only.claims_groups() == ["wang"]
