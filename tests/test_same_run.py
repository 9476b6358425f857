"""A sweep point whose settings are its base's is that run, copied (``Workflow.same_run``, ``staticvec train same-run``)."""

import copy
import json
import re

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.config import load_config
from staticvec.dag.workflow import Workflow
from staticvec.embeddings import Embeddings


@pytest.fixture(scope="module")
def default_config():
    return load_config(["config/config.yaml"])


def test_exactly_the_points_with_the_base_settings_are_copies(default_config):
    """Brute force over every sweep point of the default sheet: a point is a copy of its base exactly when
    method, parameters, fraction, teacher and what it post-processes are the base's and its rule writes
    nothing else; the default's SemGloVe Figure 2 sweeps give 300-d, x_max 10 and the whole corpus."""
    w = Workflow(default_config)
    expected = {}
    for sweep in w.sheet.sweeps.values():
        for base in sweep.bases:
            for value in sweep.values:
                vid = sweep.variant_id(base, value)
                point, main_row = w.spec(vid), w.spec(base)
                fields = lambda s: (s.method, s.params, s.fraction, s.teacher, s.base)  # noqa: E731
                copyable = point.method in ("glove", "semglove", "x2static", "c2v")  # train_glove's and train_student's
                if fields(point) == fields(main_row) and copyable and w.dev_curve_args(vid) == w.dev_curve_args(base):
                    expected[vid] = base
    found = {e: w.same_run(e) for e in w.sheet.ids() if w.same_run(e) is not None}
    assert found == expected
    assert set(found) == {f"{b}~{p}" for b in ("glove", "semglove_sd", "semglove_md")
                          for p in ("dim300", "xmax10", "fraction1")} | {"x2static_para~fraction1"} | {
        f"{b}~scale1" for b in ("glove", "semglove_sd", "semglove_md", "c2v", "x2static_sent", "x2static_para")}
    assert w.same_run("glove") is None and w.same_run("glove~dim200") is None and w.same_run("glove~xmax100") is None


def test_the_training_rule_leaves_the_copies_to_the_same_run_rule(default_config):
    w = Workflow(default_config)
    train, copies = re.compile(f"^(?:{w.rule_ids('train_glove')})$"), re.compile(f"^(?:{w.same_run_ids()})$")
    assert copies.match("glove~dim300") and not train.match("glove~dim300")
    assert train.match("glove~dim200") and not copies.match("glove~dim200")
    assert train.match("glove") and not copies.match("glove")
    assert w.same_run_inputs("semglove_md~xmax10", 1) == {
        "vectors": w.embedding("semglove_md", 1), "record": w.embedding_record("semglove_md", 1)}


def test_a_point_is_trained_where_the_base_does_not_train_its_seeds_or_the_settings_differ(default_config):
    config = copy.deepcopy(default_config)
    config["seeds_for"] = "all"  # every entry trains every seed: each seed of the point is the base's
    w = Workflow(config)
    assert len(w.seeds("glove~dim300")) == 3 and w.same_run("glove~dim300") == "glove"
    assert w.same_run_inputs("glove~dim300", 3)["vectors"] == w.embedding("glove", 3)
    w = Workflow(copy.deepcopy(default_config))
    trains = w.seeds
    w.seeds = lambda emb: [1, 2] if emb == "glove~dim300" else ([1] if emb == "glove" else trains(emb))
    assert w.same_run("glove~dim300") is None  # seed 2 of the point: a run the base does not make
    w = Workflow(copy.deepcopy(default_config))
    assert w.same_run("x2static_para~fraction1") == "x2static_para"
    w.dev_curve_args = lambda emb: "--dev-set ws353.txt" if emb == "x2static_para" else ""
    assert w.same_run("x2static_para~fraction1") is None  # the base's job also records a development curve
    config = copy.deepcopy(default_config)
    config["methods"]["glove"]["x_max"] = 100  # the main GloVe row at x_max 100: its x_max sweep's 100 is the copy,
    w = Workflow(config)                        # 10 is trained, and so is the whole-corpus point (x_max 10, linked)
    assert (w.same_run("glove~xmax100"), w.same_run("glove~xmax10"), w.same_run("glove~fraction1")) == ("glove", None, None)
    assert w.same_run("glove~dim300") == "glove" and w.same_run("semglove_sd~xmax10") == "semglove_sd"


def test_same_run_copies_the_vectors_and_names_the_run_in_the_record(tmp_path):
    vectors, record = tmp_path / "base.bin", tmp_path / "base.json"
    Embeddings(["a", "b"], np.arange(6, dtype=np.float32).reshape(2, 3)).save(vectors)
    record.write_text(json.dumps({"method": "glove", "hyperparameters": {"dim": 3, "seed": 1}}))
    out, out_record = tmp_path / "point" / "vectors.bin", tmp_path / "point" / "vectors.json"
    assert main(["train", "same-run", "--from-vectors", str(vectors), "--from-record", str(record), "--base", "glove",
                 "--seed", "1", "--out", str(out), "--record", str(out_record)]) == 0
    assert out.read_bytes() == vectors.read_bytes()
    written = json.loads(out_record.read_text())
    same = written.pop("same_run_as")
    assert written == json.loads(record.read_text())
    assert (same["embedding"], same["seed"], same["vectors"]) == ("glove", 1, str(vectors))


def test_same_run_names_a_missing_input_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "point" / "vectors.bin"
    assert main(["train", "same-run", "--from-vectors", str(tmp_path / "nope.bin"), "--from-record",
                 str(tmp_path / "nope.json"), "--base", "glove", "--out", str(out)]) == 2
    assert "nope.bin: no such file" in capsys.readouterr().err
    assert not out.exists()
