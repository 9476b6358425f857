"""Each claim's verdict in two runs side by side: which moved, and by how much (hand-computed)."""

import json

import pytest

from staticvec.cli import main
from staticvec.errors import InputFileError
from staticvec.report.verdicts import compare, load_run, movement, verdicts_from_files


def write_run(root, tokens, claims, extra=None):
    (root / "tables").mkdir(parents=True)
    (root / "tables/claims.json").write_text(json.dumps({"caption": "c", "claims": claims, **(extra or {})}))
    (root / "manifest.json").write_text(json.dumps({"tokens": tokens}))
    return root


def claim(cid, verdict, *comps, **more):
    return {"id": cid, "verdict": verdict, "paper": "semglove", "statement": "s",
            "comparisons": [{"comparison": t, "mean": m, "low": lo, "high": hi, "n": 3, "extra": 1}
                            for t, m, lo, hi in comps], **more}


@pytest.fixture
def runs(tmp_path):
    tour = write_run(tmp_path / "tour", 1_000_133, [
        claim("order", "undecided", ("md > sd", 0.85, -1.54, 3.25), ("sd > glove", 2.27, 1.49, 3.04)),
        claim("tie", "fails", ("a ≈ b", -2.91, -3.26, -2.57)),
        claim("old", "holds", ("x > y", 1.0, 1.0, 1.0)),
    ])
    # the claims machinery may add fields (tallies, groups): they are ignored
    scale = write_run(tmp_path / "scale", 10_000_412, [
        claim("order", "holds", ("md > sd", 3.10, 1.20, 5.00), ("sd > glove", 4.77, 3.00, 6.54), group="papers"),
        claim("tie", "fails", ("a ≈ b", -1.41, -2.00, -0.82)),
        claim("new", "undecided", ("p > q", 0.5, None, None)),
    ], extra={"tallies": {"holds": 1}, "groups": ["beyond the papers"]})
    return tour, scale


def test_movement_on_the_order_fails_undecided_holds():
    assert movement("undecided", "holds") == "toward holds" and movement("holds", "fails") == "toward fails"
    assert movement("fails", "fails") == "same" and movement(None, "holds") == "new" and movement("holds", None) == "gone"
    # too few seeds in one run: the verdict has no direction to move from
    assert movement("not tested", "fails") == "now tested" and movement("holds", "not tested") == "no longer tested"


def test_reads_the_comparisons_of_the_claims_machinerys_own_records(tmp_path):
    # the records the claims report writes (each comparison an alternative of a part), for a − b per seed:
    # 3, 4, 5 points at 1M (mean 4) and 10, 11, 12 at 10M (mean 11): shift +7
    import yaml

    from staticvec.files import write_json
    from staticvec.report.claims import Results, evaluate_claims
    from staticvec.sheets.claims import load_claims_spec

    sheet = tmp_path / "claims.yaml"
    sheet.write_text(yaml.safe_dump({"defaults": {}, "claims": {"a_over_b": {
        "paper": "semglove", "where": "Table 1", "at": "§5.4, semglove.txt l. 1", "sentence": "q", "statement": "s",
        "protocol": "web", "metric": "ws353", "order": ["a", "b"]}}}))
    spec = load_claims_spec(sheet)

    def run(name, tokens, a_scores):
        scores = {"a": a_scores, "b": [0.60, 0.60, 0.60]}
        results = Results({("web", emb): {k + 1: {"results": {"ws353": {"score": v, "found": 10, "total": 10,
                                                                          "scored": 10}}} for k, v in enumerate(vals)}
                           for emb, vals in scores.items()}, random=["a", "b"])
        root = write_run(tmp_path / name, tokens, [])
        write_json(root / "tables/claims.json", {"caption": "c", "claims": evaluate_claims(spec, results)})
        return root

    before, after = run("tour", 1_000_133, [0.63, 0.64, 0.65]), run("scale", 10_000_412, [0.70, 0.71, 0.72])
    [row] = compare(load_run(before), load_run(after))
    out_md = tmp_path / "v.md"
    verdicts_from_files(before, after, out_md)
    assert "0 of 1 verdicts moved; 1 the same." in out_md.read_text()
    assert "| a_over_b | holds | holds | same | a > b | +4.00 [" in out_md.read_text()
    assert (row["before"], row["after"], row["moved"]) == ("holds", "holds", "same")
    [comp] = row["comparisons"]
    assert comp["comparison"] == "a > b"
    assert comp["before"]["mean"] == pytest.approx(4.0) and comp["after"]["mean"] == pytest.approx(11.0)
    assert comp["before"]["low"] < 4.0 < comp["before"]["high"] and comp["shift"] == pytest.approx(7.0)


def test_shifts_are_the_later_mean_minus_the_earlier(runs):
    rows = {r["id"]: r for r in compare(load_run(runs[0]), load_run(runs[1]))}
    assert list(rows) == ["order", "tie", "new", "old"]  # the later run's order, then claims it lost
    order = rows["order"]
    assert (order["before"], order["after"], order["moved"]) == ("undecided", "holds", "toward holds")
    assert [c["shift"] for c in order["comparisons"]] == pytest.approx([3.10 - 0.85, 4.77 - 2.27])
    assert rows["tie"]["moved"] == "same" and rows["tie"]["comparisons"][0]["shift"] == pytest.approx(1.50)
    assert rows["new"]["moved"] == "new" and rows["new"]["comparisons"][0]["shift"] is None
    assert rows["old"]["moved"] == "gone" and rows["old"]["after"] is None


def test_the_table_labels_runs_by_their_tokens(runs, tmp_path):
    out_md, out_csv = tmp_path / "v.md", tmp_path / "v.csv"
    assert main(["report", "verdicts", "--before", str(runs[0]), "--after", str(runs[1] / "tables/claims.json"),
                 "--out-md", str(out_md), "--out-csv", str(out_csv)]) == 0
    md = out_md.read_text()
    assert "**Each claim's verdict at 1M and at 10M tokens**" in md
    assert "3 of 4 verdicts moved: 1 toward holds, 1 new, 1 gone; 1 the same." in md
    assert "| order | undecided | holds | toward holds | md > sd | +0.85 [-1.54, +3.25] | +3.10 [+1.20, +5.00] | +2.25 |" in md
    assert "| old | holds | — | gone | x > y | +1.00 (exact) | — | — |" in md
    assert "| new | — | undecided | new | p > q | — | +0.50 | — |" in md
    lines = out_csv.read_text().splitlines()
    assert lines[0].startswith("claim,paper,verdict_1M,verdict_10M,moved,comparison,mean_1M") and len(lines) == 1 + 5


def test_a_run_without_claims_is_an_error_naming_the_file(tmp_path):
    with pytest.raises(InputFileError, match="claims.json"):
        verdicts_from_files(tmp_path, tmp_path, tmp_path / "v.md")
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables/claims.json").write_text(json.dumps({"claims": [{"verdict": "holds"}]}))
    with pytest.raises(InputFileError, match="'id' and 'verdict'"):
        load_run(tmp_path)
