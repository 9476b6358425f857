"""Nothing a command writes removes what it did not write (issue 55, item 1): every atomic-directory writer
(``staticvec.files.atomic_directory`` / ``replace_directory``: the export's Model2Vec directory, the library
model of ``staticvec train model2vec|tokenlearn``, the wikiextractor folder) refuses an existing folder unless it
is a previous output of the same kind holding only its own files, and a file planted beside the target survives."""

import json
from pathlib import Path

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError

WORDS = ["the", "cat", "sat", "mat"]
OUTPUT_MARKER = ".staticvec-output.json"  # staticvec.files.OUTPUT_MARKER, spelled out: the tests pin its name


def _tree(folder: Path) -> dict:
    """Every file under ``folder`` with its bytes: what a command must leave as it was."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def vectors(tmp_path) -> Path:
    pytest.importorskip("model2vec")
    path = tmp_path / "in" / "vectors.npy"
    Embeddings(WORDS, np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)).save(path)
    return path


def _export(vectors: Path, model2vec, keyedvectors=None) -> int:
    argv = ["export", "--vectors", str(vectors), "--model2vec", str(model2vec)]
    return main(argv + (["--keyedvectors", str(keyedvectors)] if keyedvectors else []))


def test_export_onto_a_users_folder_is_refused_and_removes_nothing(vectors, tmp_path, capsys):
    models = tmp_path / "models"
    (models / "mine").mkdir(parents=True)
    (models / "notes.txt").write_text("my notes")
    (models / "mine" / "weights.bin").write_bytes(b"\x00\x01")
    before = _tree(tmp_path)
    assert _export(vectors, models, keyedvectors=tmp_path / "vectors.kv") == 2
    err = capsys.readouterr().err
    assert f"{models}: folder exists and was not written by staticvec" in err
    assert "give a new or empty folder" in err
    assert _tree(tmp_path) == before  # nothing removed, and nothing written (not even the .kv, checked first)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "models"]  # no temporary folder left


def test_export_onto_the_working_directory_is_refused(vectors, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(vectors.parent)
    before = _tree(vectors.parent)
    assert _export(Path("vectors.npy"), ".") == 2
    assert "refusing to replace" in capsys.readouterr().err
    assert _tree(vectors.parent) == before


def test_export_replaces_its_own_previous_export_and_nothing_beside_it(vectors, tmp_path, capsys):
    out = tmp_path / "out" / "model2vec"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "beside.txt").write_text("keep me")
    assert _export(vectors, out) == 0
    marker = json.loads((out / OUTPUT_MARKER).read_text())
    assert marker["kind"] == "model2vec export" and "model.safetensors" in marker["files"]
    first = _tree(out)
    assert _export(vectors, out) == 0  # a previous export of the same kind: replaced
    assert _tree(out).keys() == first.keys()
    assert (tmp_path / "out" / "beside.txt").read_text() == "keep me"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["beside.txt", "model2vec"]
    (out / "my_eval.csv").write_text("a,b\n")  # a user's file inside the previous export: now refused
    capsys.readouterr()
    assert _export(vectors, out) == 2
    assert "also holds files staticvec did not write ('my_eval.csv')" in capsys.readouterr().err
    assert (out / "my_eval.csv").read_text() == "a,b\n"


def test_export_onto_an_empty_folder_is_fine(vectors, tmp_path):
    (tmp_path / "empty").mkdir()
    assert _export(vectors, tmp_path / "empty") == 0
    assert (tmp_path / "empty" / "model.safetensors").is_file()


def test_library_model_dir_refuses_a_users_folder_and_keeps_files_beside_it(tmp_path):
    from staticvec.train.model2vec import MODEL_DIR_KIND, save_model_dir

    class Model:  # what save_model_dir needs of a StaticModel
        def save_pretrained(self, folder, **kwargs):
            (Path(folder) / "model.safetensors").write_bytes(b"weights")

    (tmp_path / "beside.txt").write_text("keep me")
    save_model_dir(Model(), tmp_path / "model")
    save_model_dir(Model(), tmp_path / "model")  # its own previous output: replaced
    assert (tmp_path / "beside.txt").read_text() == "keep me"
    assert json.loads((tmp_path / "model" / OUTPUT_MARKER).read_text())["kind"] == MODEL_DIR_KIND
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "thesis.tex").write_text("\\section{}")
    with pytest.raises(StaticvecError, match="user: folder exists and was not written by staticvec"):
        save_model_dir(Model(), tmp_path / "user")
    assert (tmp_path / "user" / "thesis.tex").read_text() == "\\section{}"
    # an export's folder is not a library model's: another kind is refused too
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / OUTPUT_MARKER).write_text(json.dumps({"kind": "model2vec export", "files": []}))
    (tmp_path / "export" / "x").write_text("x")
    with pytest.raises(StaticvecError, match="holds a staticvec 'model2vec export' output"):
        save_model_dir(Model(), tmp_path / "export")


@pytest.mark.parametrize("job", [
    lambda tmp: ["train", "model2vec", "--teacher", "minilm", "--vocab", str(tmp / "absent.tsv"),
                 "--out", str(tmp / "v.npy"), "--model-dir", str(tmp / "mine")],
    lambda tmp: ["train", "tokenlearn-distill", "--teacher", "minilm", "--shards", str(tmp / "absent.tsv.gz"),
                 "--features", str(tmp / "absent"), "--out", str(tmp / "mine")],
], ids=["model2vec --model-dir", "tokenlearn-distill --out"])
def test_a_library_job_refuses_its_folder_before_reading_anything(tmp_path, capsys, job):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "a.txt").write_text("a")
    code = main(job(tmp_path))
    assert code == 2
    assert "mine: folder exists and was not written by staticvec" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]
    assert _tree(tmp_path / "mine") == {"a.txt": b"a"}


def test_wikiextractor_folder_refuses_a_users_folder_before_extracting(tmp_path):
    from staticvec.corpus.sources import EXTRACT_KIND, extract_dump
    from staticvec.files import check_replaceable

    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "wiki_00").write_text("mine")
    with pytest.raises(StaticvecError, match="texts: folder exists and was not written by staticvec"):
        extract_dump(tmp_path / "absent.xml.bz2", tmp_path / "texts")  # refused before the dump is read
    assert _tree(tmp_path) == {"texts/wiki_00": b"mine"}
    check_replaceable(tmp_path / "new", EXTRACT_KIND)  # an absent folder is fine


def test_wikiextractor_replaces_its_own_output_and_keeps_files_beside_it(tmp_path, shared_data):
    pytest.importorskip("wikiextractor")
    from staticvec.corpus.sources import extract_dump

    dump = shared_data / "corpus" / "enwiki-sample-pages-articles.xml.bz2"
    (tmp_path / "beside.txt").write_text("keep me")
    first = extract_dump(dump, tmp_path / "extract")
    again = extract_dump(dump, tmp_path / "extract")  # its own previous output: replaced
    assert [p.name for p in first] == [p.name for p in again] and again
    assert (tmp_path / "beside.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beside.txt", "extract"]


def test_a_failed_write_leaves_the_previous_output(tmp_path):
    from staticvec.files import atomic_directory

    with atomic_directory(tmp_path / "out", kind="test") as tmp:
        (tmp / "a").write_text("first")
    with pytest.raises(RuntimeError), atomic_directory(tmp_path / "out", kind="test") as tmp:
        (tmp / "a").write_text("second")
        raise RuntimeError("the library failed")
    assert (tmp_path / "out" / "a").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_tokenlearn_distillation_refuses_a_users_folder_and_keeps_files_beside_it(tmp_path):
    from staticvec.train.tokenlearn import DISTILLATION_RECORD, DISTILLED_KIND, save_distilled

    class Model:  # what save_distilled needs of a StaticModel
        def save_pretrained(self, folder, **kwargs):
            (Path(folder) / "model.safetensors").write_bytes(b"rows")

    (tmp_path / "beside.txt").write_text("keep me")
    save_distilled(Model(), tmp_path / "distilled", {"step": "distillation"})
    save_distilled(Model(), tmp_path / "distilled", {"step": "distillation"})  # its own previous output: replaced
    assert (tmp_path / "beside.txt").read_text() == "keep me"
    assert (tmp_path / "distilled" / DISTILLATION_RECORD).exists()
    assert json.loads((tmp_path / "distilled" / OUTPUT_MARKER).read_text())["kind"] == DISTILLED_KIND
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "notes.md").write_text("mine")
    with pytest.raises(StaticvecError, match="user: folder exists and was not written by staticvec"):
        save_distilled(Model(), tmp_path / "user", {"step": "distillation"})
    assert _tree(tmp_path / "user") == {"notes.md": b"mine"}
