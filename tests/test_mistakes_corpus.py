"""Your own corpus read in the wrong format, or empty, is refused when the workflow is planned (issue 55, item 3):
the first lines of each input of corpus.local_files are read in corpus.format, and the error names the input,
what its first lines are and the corpus.format that reads them; nothing is written."""

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from staticvec.config import deep_merge, load_config, validate_config
from staticvec.corpus.formats import SourceFormat
from staticvec.dag.workflow import Workflow
from staticvec.errors import StaticvecError

REPO = Path(__file__).resolve().parents[1]
TEXTS = REPO / "tests" / "data" / "own-corpus"


def _plan(tmp_path, corpus: dict) -> Workflow:
    base = load_config([REPO / "config/config.yaml"])
    base["corpus"].pop("members", None)
    config = validate_config(deep_merge(base, {"results_dir": str(tmp_path / "run"), "corpus": corpus}))
    return Workflow(config, REPO)


def _jsonl(path: Path) -> Path:
    path.write_text("".join(json.dumps({"id": p.stem, "text": p.read_text()}) + "\n" for p in sorted(TEXTS.iterdir())))
    return path


def test_json_lines_read_as_text_are_refused_naming_corpus_format(tmp_path):
    data = _jsonl(tmp_path / "docs.jsonl")
    with pytest.raises(StaticvecError, match=re.escape(f"{data}: line 1 is a JSON object, but corpus.format is "
                                                       "'text'")) as caught:
        _plan(tmp_path, {"format": "text", "local_files": [str(data)]}).check_corpus_inputs()
    assert "set corpus.format: jsonl" in str(caught.value)
    _plan(tmp_path, {"format": "jsonl", "local_files": [str(data)]}).check_corpus_inputs()  # the right format: fine
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]  # nothing written


def test_local_files_without_a_format_are_refused_naming_corpus_format(tmp_path):
    """corpus.format is then config.yaml's wikiextractor: text files have no <doc> line."""
    with pytest.raises(StaticvecError, match=r"a directory of 5 file\(s\) and no wiki_\* file, but corpus.format is "
                                             r"'wikiextractor' .*: for your own files set corpus.format: text"):
        _plan(tmp_path, {"local_files": [str(TEXTS)]}).check_corpus_inputs()
    with pytest.raises(StaticvecError, match=r"no <doc \.\.\.> line in its first \d+ non-blank lines \(text\), but "
                                             r"corpus.format is 'wikiextractor' .*: set corpus.format: text"):
        _plan(tmp_path, {"local_files": [str(TEXTS / "bakery.txt")]}).check_corpus_inputs()
    data = _jsonl(tmp_path / "docs.jsonl")
    with pytest.raises(StaticvecError, match=r"\(JSON objects\), but corpus.format is 'wikiextractor'.*set corpus.format: jsonl"):
        _plan(tmp_path, {"local_files": [str(data)]}).check_corpus_inputs()


def test_an_empty_file_or_directory_is_named_as_such(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "nothing").mkdir()
    (tmp_path / "blanks.txt").write_text("\n\n  \n")
    with gzip.open(tmp_path / "void.txt.gz", "wt") as fh:
        fh.write("")
    files = ["empty.txt", "nothing", "blanks.txt", "void.txt.gz"]
    with pytest.raises(StaticvecError) as caught:
        _plan(tmp_path, {"format": "text", "local_files": [str(tmp_path / f) for f in files]}).check_corpus_inputs()
    message = str(caught.value)
    assert f"{tmp_path / 'empty.txt'}: an empty file: nothing to tokenize" in message
    assert f"{tmp_path / 'nothing'}: an input directory without a file to read (corpus.format: text)" in message
    assert f"{tmp_path / 'blanks.txt'}: only blank lines: nothing to tokenize" in message
    assert f"{tmp_path / 'void.txt.gz'}: only blank lines" in message  # empty once decompressed


def test_the_sniff_tells_each_format_from_the_others(tmp_path):
    from staticvec.corpus.formats import format_problem

    wiki = tmp_path / "wiki_00"
    wiki.write_text('<doc id="1" url="u" title="T">\nT\n\nSome text here.\n</doc>\n')
    data = _jsonl(tmp_path / "d.jsonl")
    text = TEXTS / "bakery.txt"
    ok = {("wikiextractor", wiki), ("jsonl", data), ("text", text)}
    for kind in ("wikiextractor", "jsonl", "text"):
        for path in (wiki, data, text):
            problem = format_problem(path, SourceFormat(kind))
            assert (problem is None) == ((kind, path) in ok), (kind, path, problem)
            if problem is not None:
                assert "corpus.format" in problem


def test_snakemake_refuses_the_wrong_format_before_any_job(tmp_path):
    data = _jsonl(tmp_path / "docs.jsonl")
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"results_dir": str(tmp_path / "run"), "teacher": {"models": {"own": "minilm"}},
                                       "corpus": {"format": "text", "local_files": [str(data)]}}))
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile",
                           "config/examples/own-corpus.yaml", str(overlay)], cwd=REPO, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO / "workflow"),
                               "HOME": str(tmp_path)})
    assert done.returncode != 0
    assert f"{data}: line 1 is a JSON object, but corpus.format is 'text'" in done.stdout + done.stderr
    assert not (tmp_path / "run").exists()
