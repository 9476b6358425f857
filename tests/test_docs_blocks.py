"""The generators of the docs' passages (staticvec.report.docblocks) on small hand-made inputs."""

from __future__ import annotations

import json

import pytest

from staticvec.errors import InputFileError
from staticvec.report import docblocks
from staticvec.report.docblocks import corpus_scale_crossings, duration, render, stale_blocks, verdicts_moved


def test_durations_round_to_the_minute():
    assert duration(3007.4) == "50 min"
    assert duration(35088.6) == "9 h 45 min"
    assert duration(3600) == "1 h 00 min"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_verdicts_moved_counts_claims_not_comparison_rows(tmp_path):
    _write(tmp_path / docblocks.VERDICTS_CSV, "# caption\nclaim,moved,comparison\n"
           "a,toward fails,x\na,toward fails,y\nb,toward holds,x\nc,same,x\nd,now tested,x\nd,now tested,y\ne,same,z\n")
    assert verdicts_moved(tmp_path) == ("2 of 5 verdicts moved (1 toward fails, 1 toward holds), 1 are tested at 10M "
                                        "only, 2 are the same")
    assert docblocks.verdicts_moved_list(tmp_path) == "toward fails: `a`; toward holds: `b`"


SCALE_HEADER = "# caption\npanel,metric,protocol,row,kind,embedding,fraction,tokens,score,reach_status\n"


def test_the_crossing_names_the_method_its_size_and_its_last_score_against_the_level(tmp_path):
    _write(tmp_path / "config/figures.yaml", "labels: {c2v: Context-to-Vec}\n")
    rows = ("P,m,web,c2v,curve,c2v~s0.5,0.5,5000000,60.0,\n"
            "P,m,web,c2v,curve,c2v~s1,1.0,10000000,70.94,\n"
            "P,m,web,model2vec,level,model2vec,,,67.91,\n"
            "P,m,web,c2v,reaches model2vec,,,6419776,,reaches\n"
            "Q,m,web,glove,reaches model2vec,,,10000000,,below\n")
    _write(tmp_path / docblocks.CORPUS_SCALE, SCALE_HEADER + rows)
    assert corpus_scale_crossings(tmp_path) == ("one method reaching Model2Vec in the 2 panels: Context-to-Vec on P "
                                                "from 6.4M tokens (70.9 at 10M against 67.9)")
    _write(tmp_path / docblocks.CORPUS_SCALE, SCALE_HEADER + rows.replace(",reaches\n", ",below\n"))
    assert corpus_scale_crossings(tmp_path).startswith("no corpus-trained method reaches Model2Vec on any of the 2")


def test_the_verdict_table_reads_each_runs_counts(tmp_path):
    for run, holds in ((docblocks.CLAIMS, 3), (docblocks.TOUR, 1)):
        counts = {key: {"holds": holds, "fails": 2, "undecided": 0, "not_tested": 1} for key, _ in docblocks.PAPERS}
        _write(tmp_path / run / "tables/claims.json", json.dumps({"counts": counts}))
    table = docblocks.verdicts_table(tmp_path)
    assert "| SemGloVe (Gan et al.) | 3 / 2 / 0 / 1 | 1 / 2 / 0 / 1 |" in table
    assert docblocks.tour_not_tested(tmp_path) == "5 of 20"


def test_an_overlay_table_sets_each_leaf_beside_the_default(tmp_path):
    _write(tmp_path / "config/config.yaml", "a: 1\nb: {c: x, d: [1, 2]}\n")
    _write(tmp_path / "o.yaml", "b: {c: y, e: true}\n")
    table = docblocks._overlay(tmp_path, "o.yaml")
    assert "| `b.c` | `x` | `y` |" in table and "| `b.e` | `(not set)` | `true` |" in table and "`a`" not in table


def test_render_rewrites_inline_and_block_passages_and_refuses_unknown_names(tmp_path, monkeypatch):
    monkeypatch.setitem(docblocks.BLOCKS, "probe", lambda root: "NEW")
    text = "x <!-- generated: probe -->old<!-- /generated --> y\n<!-- generated: probe -->\nold\n<!-- /generated -->\n"
    fresh = "x <!-- generated: probe -->NEW<!-- /generated --> y\n<!-- generated: probe -->NEW<!-- /generated -->\n"
    assert render(text, tmp_path) == fresh
    doc = tmp_path / "d.md"
    doc.write_text(text)
    assert stale_blocks(doc, tmp_path) == ["probe", "probe"]
    with pytest.raises(InputFileError, match="unknown generated passage 'nope'"):
        render("<!-- generated: nope --><!-- /generated -->", tmp_path, "d.md")
