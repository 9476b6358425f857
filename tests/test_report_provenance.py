"""The tables' and figures' provenance depends on the settings their captions state, not on the whole
config (the run manifest keeps the whole config and its hash)."""

import json

from staticvec.cli import main
from staticvec.files import read_json


def _corpus(tmp_path):
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"description": {"source": "enwiki-2015"}, "totals": {"tokens": 1_000_000}}))
    return path


def test_provenance_caption_names_corpus_teacher_seeds_without_config_hash(tmp_path):
    out = tmp_path / "provenance.json"
    assert main(["report", "provenance", "--corpus-manifest", str(_corpus(tmp_path)), "--teacher", "minilm (minilm)",
                 "--seeds", "1", "2", "3", "--out", str(out)]) == 0
    record = read_json(out)
    assert record["config_hash"] is None and record["tokens"] == 1_000_000 and record["seeds"] == [1, 2, 3]
    caption = record["provenance_caption"]
    assert "enwiki-2015 (1.00M tokens)" in caption and "teacher minilm (minilm)" in caption and "seeds 1,2,3" in caption
    assert "config " not in caption


def test_run_manifest_keeps_the_config_hash(tmp_path):
    out = tmp_path / "manifest.json"
    config = {"seeds": [1], "teacher": {"default": "minilm", "models": {"minilm": "minilm"}}, "methods": {}}
    assert main(["report", "manifest", "--config-json", json.dumps(config), "--corpus-manifest", str(_corpus(tmp_path)),
                 "--out", str(out)]) == 0
    record = read_json(out)
    assert len(record["config_hash"]) == 12 and f"config {record['config_hash']}" in record["provenance_caption"]
    assert record["teachers"] == {"minilm": "minilm"} and record["tokens"] == 1_000_000
