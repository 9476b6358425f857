"""The cross-paper summary: one seed without an interval, coverage, the CLI (the t interval itself:
tests/test_stats.py)."""

import json
import math

import pytest

from staticvec.errors import StaticvecError
from staticvec.report.cli import protocol_results
from staticvec.report.summary import build_summary, to_markdown


def _result(found=300, total=353, **scores):
    return {"results": {k: {"score": v, "found": found, "total": total} for k, v in scores.items()}}


def test_summary_table_rows_blocks_coverage_and_markdown():
    rows = [{"id": "glove", "method": "glove"}, {"id": "bert_sg", "method": "bert_sg"}]
    results = {
        ("web", "glove"): [_result(ws353=0.60), _result(ws353=0.62), _result(ws353=0.67)],
        ("web", "bert_sg"): [_result(found=350, ws353=0.70, rw=None)],
        ("muse", "glove"): [_result(found=290, ws353=0.61)],
    }
    frame = build_summary(rows, results, ["web", "muse"], ["ws353", "rw"])
    assert len(frame) == 2 * 2 * 2  # protocols × rows × columns
    glove = frame[(frame.protocol == "web") & (frame.embedding == "glove") & (frame.column == "ws353")].iloc[0]
    assert glove.n == 3 and glove["mean"] == pytest.approx(63.0)
    assert glove.ci95_half == pytest.approx(4.302652729911275 * math.sqrt(13) / math.sqrt(3))
    rw = frame[(frame.protocol == "web") & (frame.embedding == "bert_sg") & (frame.column == "rw")].iloc[0]
    assert rw.n == 0 and math.isnan(rw["mean"])  # no score: missing, not zero
    missing = frame[(frame.protocol == "muse") & (frame.embedding == "bert_sg")]
    assert (missing.seeds_given == 0).all()
    md = to_markdown(frame, "CAPTION")
    assert md.startswith("**CAPTION**")
    assert "| glove | glove | 3 | 63.0 ± 9.0 | — |" in md
    assert "| bert_sg | bert_sg | 1 (no interval) | **70.0** | — |" in md  # best of the web block, bold
    assert "| bert_sg | 350/353 | 350/353 |" in md and "| glove | 290/353 | — |" in md and "### Protocol `muse`" in md


def test_results_arguments_are_protocol_and_id():
    assert protocol_results(["web/glove=a.json", "web/glove=b.json", "muse/sg=c.json"]) == {
        ("web", "glove"): ["a.json", "b.json"], ("muse", "sg"): ["c.json"]}
    with pytest.raises(StaticvecError, match="PROTOCOL/ID=FILE"):
        protocol_results(["glove=a.json"])


def test_summary_cli_writes_csv_markdown_html(tmp_path):
    from staticvec.cli import main

    files = []
    for seed, score in ((1, 0.5), (2, 0.56)):
        path = tmp_path / f"sg{seed}.json"
        path.write_text(json.dumps(_result(ws353=score)))
        files.append(f"web/sg={path}")
    (tmp_path / "m.json").write_text(json.dumps({"corpus": "enwiki", "tokens": 2_000_000, "teacher": "minilm",
                                                 "provenance_caption": "config abc; commit def"}))
    out = tmp_path / "t" / "summary"
    argv = ["report", "summary", "--rows", json.dumps([{"id": "sg", "method": "skipgram"}]), "--manifest",
            str(tmp_path / "m.json"), "--out-csv", f"{out}.csv", "--out-md", f"{out}.md", "--out-html", f"{out}.html",
            *files]
    assert main(argv) == 0
    csv_text = (tmp_path / "t" / "summary.csv").read_text()
    assert csv_text.startswith("# Summary of every method") and "Made with: config abc; commit def" in csv_text
    md = (tmp_path / "t" / "summary.md").read_text()
    assert "enwiki, 2.0M tokens" in md and "| sg | skipgram | 2 |" in md
    assert "<table>" in (tmp_path / "t" / "summary.html").read_text()
    assert main([*argv[:-2], "drop/sg=x.json"]) == 2  # a protocol the summary does not show: a clear error


def test_summary_rows_are_every_main_embedding_or_the_listed_ones(repo_root):
    from staticvec.config import deep_merge, load_config
    from staticvec.dag.workflow import Workflow

    base = load_config([repo_root / "config" / "config.yaml"])
    every = Workflow(base, repo_root)
    main = [e for e, s in every.sheet.entries.items() if s.sweep is None]
    assert [r["id"] for r in every.summary_rows()] == main and len(main) > 10

    def plan(summary):
        return Workflow(deep_merge(base, {"targets": {"summary": summary}}), repo_root)

    subset = plan(["tokenlearn", "glove", "sg"])  # sheet order, whatever the list's
    assert [r["id"] for r in subset.summary_rows()] == [e for e in main if e in {"tokenlearn", "glove", "sg"}]
    assert {rid.split("/")[1] for rid, _ in subset.summary_results()} == {"tokenlearn", "glove", "sg"}
    assert subset.summary_targets() == every.summary_targets() == [every.summary_file("md")]
    assert plan(False).summary_targets() == [] == plan([]).summary_targets()
    with pytest.raises(StaticvecError, match=r"targets.summary: \['ase~layer3'\] are not main embeddings"):
        plan(["glove", "ase~layer3"]).summary_rows()
