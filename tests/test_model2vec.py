"""Model2Vec from the run's teacher (staticvec.train.model2vec): on a tiny random BERT saved to disk, the
written vectors are the library's own encoding of each vocabulary word; the offline path never asks the
hub; the method is seedless and deterministic; its sheet entry plans (rule, evaluations, tables, summary)."""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.errors import StaticvecError

pytest.importorskip("model2vec")
pytest.importorskip("skeletoken")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from teacher_fixtures import wordpiece_tokenizer  # noqa: E402

# frequency order; 'unbelievable' is three pieces of the tiny tokenizer, 'жж' only unknown pieces
VOCAB = [("the", 50), ("cat", 20), ("cats", 12), ("sat", 9), ("unbelievable", 7), ("king", 6), ("paris", 6),
         ("xq", 5), ("жж", 5), ("dogs", 5)]


@pytest.fixture(scope="module")
def teacher_dir(tmp_path_factory, one_torch_thread):
    """A random 2-layer BERT (hidden 16) with its WordPiece tokenizer, saved as a model directory."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    path = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = wordpiece_tokenizer()
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id)
    BertForMaskedLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.tsv"
    path.write_text("".join(f"{w}\t{c}\n" for w, c in VOCAB), encoding="utf-8")
    return path


def _train(teacher_dir, vocab_file, out_dir: Path, *flags) -> tuple[Path, Path, Path]:
    out, model = out_dir / "vectors.bin", out_dir / "model2vec"
    code = main(["train", "model2vec", "--teacher", str(teacher_dir), "--vocab", str(vocab_file), "--pca-dims", "8",
                 "--threads", "1", "--device", "cpu", "--model-dir", str(model), "--out", str(out), *flags])
    assert code == 0
    return out, out_dir / "vectors.json", model


@pytest.fixture(scope="module")
def trained(teacher_dir, vocab_file, tmp_path_factory):
    return _train(teacher_dir, vocab_file, tmp_path_factory.mktemp("m2v"))


def test_each_word_is_the_library_encoding_of_that_word(trained):
    from model2vec import StaticModel

    from staticvec.embeddings import Embeddings

    out, record_path, model_dir = trained
    emb = Embeddings.load(out)
    # one vector per vocabulary word, in vocabulary order, except the word made of unknown pieces only
    assert emb.words == [w for w, _ in VOCAB if w != "жж"]
    assert emb.dim == 8
    model = StaticModel.from_pretrained(model_dir)  # the library's own model, as saved beside the vectors
    for word in emb.words:
        np.testing.assert_array_equal(emb[word], np.asarray(model.encode([word])[0], dtype=np.float32))
    assert not model.encode(["жж"]).any()  # it encodes to the zero vector: left out, not written as zeros
    # the library's encoding is the unit-length mean of the word's token rows (SIF weights already applied)
    ids = model.tokenize(["unbelievable"])[0]
    assert len(ids) == 3  # un ##believ ##able
    mean = model.embedding[ids].astype(np.float32).mean(axis=0)
    np.testing.assert_allclose(emb["unbelievable"], mean / np.linalg.norm(mean), rtol=2e-3, atol=2e-3)

    record = json.loads(record_path.read_text())
    assert record["method"] == "model2vec" and record["seeded"] is False
    assert record["versions"]["model2vec"].startswith("0.10")
    assert record["vocab"]["size"] == len(VOCAB) and record["vocab"]["written"] == len(VOCAB) - 1
    assert record["vocab"]["not_encoded_examples"] == ["жж"]
    assert record["hyperparameters"]["pca_dims"] == 8 and record["model"]["tokens"] == len(model.tokens)
    assert record["timing"]["seconds"] >= record["timing"]["seconds_distill"] > 0
    # the model directory is complete (written in a temporary directory, then renamed)
    assert {"model.safetensors", "tokenizer.json", "config.json"} <= {p.name for p in model_dir.iterdir()}
    assert not [p for p in model_dir.parent.iterdir() if p.name.endswith(".tmp")]


def test_same_inputs_give_the_same_vectors(trained, teacher_dir, vocab_file, tmp_path):
    """No seed: PCA by eigendecomposition, no sampling; a second run reproduces the vectors."""
    from staticvec.embeddings import Embeddings

    again, _, _ = _train(teacher_dir, vocab_file, tmp_path)
    np.testing.assert_array_equal(Embeddings.load(again).vectors, Embeddings.load(trained[0]).vectors)


def test_options_reach_the_library(trained, teacher_dir, vocab_file, tmp_path):
    from model2vec import StaticModel

    from staticvec.embeddings import Embeddings

    base = StaticModel.from_pretrained(trained[2])
    # vocabulary run: the run's words become tokens of their own (one forward pass each)
    out, record, model_dir = _train(teacher_dir, vocab_file, tmp_path / "run", "--vocabulary", "run",
                                    "--sif-coefficient", "none", "--quantize-to", "float32")
    model = StaticModel.from_pretrained(model_dir)
    assert len(model.tokenize(["unbelievable"])[0]) == 1
    # the run's words the teacher has no token for, and only those, are new tokens
    assert set(model.tokens) - set(base.tokens) == {"unbelievable", "xq", "жж"}
    assert model.embedding.dtype == np.float32 and model.weights is None
    emb = Embeddings.load(out)
    for word in emb.words:
        np.testing.assert_array_equal(emb[word], model.encode([word])[0])
    assert not np.allclose(emb["unbelievable"], Embeddings.load(trained[0])["unbelievable"], atol=1e-2)
    # pca none, and auto (PCA without reduction): the teacher's width
    out, _, _ = _train(teacher_dir, vocab_file, tmp_path / "nopca", "--pca-dims", "none")
    assert Embeddings.load(out).dim == 16
    out, _, _ = _train(teacher_dir, vocab_file, tmp_path / "auto", "--pca-dims", "auto")
    assert Embeddings.load(out).dim == 16


def test_offline_distillation_never_queries_the_hub(teacher_dir, monkeypatch, one_torch_thread):
    """The library asks the hub for the model card's language when the model's name is not a local path."""
    from model2vec.distill import distillation

    from staticvec.teacher.load import load_teacher
    from staticvec.train.model2vec import Model2VecParams, distill_teacher

    calls = []
    monkeypatch.setattr(distillation, "model_info", lambda *a, **k: calls.append(a) or None)
    teacher = load_teacher(str(teacher_dir), device="cpu")
    teacher.encoder.name_or_path = "some-org/some-hub-model"  # what a teacher given by hub name carries
    params = Model2VecParams(pca_dims=4)
    model = distill_teacher(teacher, params, offline=True)
    assert calls == [] and model.dim == 4
    assert distillation.model_info.__name__ == "<lambda>"  # restored after the call
    distill_teacher(teacher, params, offline=False)
    assert calls == [("some-org/some-hub-model",)]  # online: the library's own lookup (the test can fail)


def test_parameters_are_checked():
    from staticvec.train.model2vec import Model2VecParams, parse_pca_dims

    assert parse_pca_dims("300") == 300 and parse_pca_dims(256.0) == 256 and parse_pca_dims("0.9") == 0.9
    assert parse_pca_dims("auto") == "auto" and parse_pca_dims("none") is None and parse_pca_dims(None) is None
    for bad in ("0", "-3", "1.5", "big", True):
        with pytest.raises(StaticvecError, match="pca_dims"):
            parse_pca_dims(bad)
    with pytest.raises(StaticvecError, match="sif_coefficient"):
        Model2VecParams(sif_coefficient=1.5)
    with pytest.raises(StaticvecError, match="pooling 'max'"):
        Model2VecParams(pooling="max")


def test_config_and_sheet(tmp_path):
    import copy

    from staticvec.config import ConfigError, load_config, validate_config
    from staticvec.dag.workflow import Workflow

    config = load_config([REPO / "config" / "config.yaml"])
    block = config["methods"]["model2vec"]
    assert block["pca_dims"] == config["methods"]["glove"]["dim"] == 300  # the 300-d rows' width
    assert block["variants"]["library"] == {"pca_dims": 256}
    config["seeds"] = [1, 2, 3]
    workflow = Workflow(config, REPO)
    spec = workflow.spec("model2vec")
    assert spec.teacher == config["teacher"]["default"] and not spec.seeded
    assert workflow.seeds("model2vec") == [1]  # seedless: one run, whatever the seeds
    assert workflow.params("model2vec")["pca_dims"] == 300
    assert workflow.params("model2vec_teacher_dim")["pca_dims"] == "auto"  # the teacher's width
    bad = copy.deepcopy(config)
    bad["methods"]["model2vec"]["pca_dims"] = 0
    with pytest.raises(ConfigError, match="pca_dims"):
        validate_config(bad)
    # a sheet entry's parameters are checked against the same schema at plan time, presets resolved
    import yaml

    from staticvec.sheets import EmbeddingSheet

    sheet = tmp_path / "embeddings.yaml"
    sheet.write_text(yaml.safe_dump({"embeddings": {
        "m_lib": {"method": "model2vec", "preset": "library"},
        "m_pool": {"method": "model2vec", "params": {"pooling": "max"}},
        "m_dims": {"method": "model2vec", "params": {"pca_dims": 1.5}}}}))
    with pytest.raises(ConfigError) as error:
        EmbeddingSheet.load(sheet, config)
    assert "embedding 'm_pool'" in str(error.value) and "pooling = 'max'" in str(error.value)
    assert "embedding 'm_dims'" in str(error.value) and "pca_dims = 1.5" in str(error.value)
    assert "m_lib" not in str(error.value)
    sheet.write_text(yaml.safe_dump({"embeddings": {"m_typo": {"method": "model2vec", "params": {"pca_dim": 300}}}}))
    with pytest.raises(ConfigError, match=r"embedding 'm_typo': unknown parameter\(s\) \['pca_dim'\]"):
        EmbeddingSheet.load(sheet, config)
    sheet.write_text(yaml.safe_dump({"embeddings": {"m_lib": {"method": "model2vec", "preset": "library"}}}))
    assert EmbeddingSheet.load(sheet, config)["m_lib"].params["pca_dims"] == 256


def test_main_tables_have_a_model2vec_row_of_ours_only(tmp_path):
    from staticvec.report.tables import build_comparison
    from staticvec.sheets.tables import load_paper_table, load_tables_spec

    tables = load_tables_spec(REPO / "config" / "tables.yaml", REPO)["tables"]
    widths = {"semglove_table1": "model2vec", "wang_table2": "model2vec", "c2v_table1": "model2vec",
              "x2static_table3": "model2vec_teacher_dim"}  # X2Static's rows are at the teacher's width
    for table_id, emb in widths.items():
        assert tables[table_id]["rows"]["model2vec"] == emb, table_id
        assert "model2vec" not in load_paper_table(REPO / tables[table_id]["paper_file"]).rows
    entry = tables["semglove_table1"]
    result = {"results": {k: {"score": 0.5, "found": 1, "total": 2} for k in ("ws353", "ws353_sim", "ws353_rel",
                                                                              "simlex999")}}
    frame = build_comparison(REPO / entry["paper_file"], {"model2vec": result}, entry["rows"], entry["columns"])
    row = frame[(frame["row"] == "model2vec") & (frame["column"] == "ws353")].iloc[0]
    assert row["ours"] == pytest.approx(50.0) and math.isnan(row["paper"])
    assert row["label"] == "model2vec (ours; not in the paper)"
    assert frame["row"].drop_duplicates().tolist()[-2:] == ["model2vec", "tokenlearn"]  # after the paper's rows
    # an extra row may not shadow a paper row
    sheet = tmp_path / "tables.yaml"
    sheet.write_text("tables:\n  semglove_table1:\n    paper_file: resources/paper_tables/semglove_table1.csv\n"
                     "    source: intrinsic\n    protocol: web\n    rows: {glove: glove}\n"
                     "    extra_rows: {glove6b: model2vec}\n")
    with pytest.raises(StaticvecError, match=r"extra_rows: \['glove6b'\] are rows of"):
        load_tables_spec(sheet, REPO)
    # an extra row goes through the same plan-time check as the paper's rows: an unknown embedding is an error
    sheet.write_text("tables:\n  semglove_table1:\n    paper_file: resources/paper_tables/semglove_table1.csv\n"
                     "    source: intrinsic\n    protocol: web\n    rows: {glove: glove}\n"
                     "    extra_rows: {model2vec: model2vce}\n")
    load_tables_spec(sheet, REPO)  # without the embeddings sheet: nothing to check the id against
    with pytest.raises(StaticvecError, match=r"semglove_table1\.extra_rows\.model2vec: 'model2vce' is not an embedding"):
        load_tables_spec(sheet, REPO, embedding_ids=["glove", "model2vec"])
    spec = load_tables_spec(sheet, REPO, embedding_ids=["glove", "model2vce"])
    assert spec["tables"]["semglove_table1"]["rows"] == {"glove": "glove", "model2vec": "model2vce"}


def test_the_default_run_plans_the_model2vec_row(shared_data):
    """`snakemake -n` of the default config: one model2vec job, its evaluations, tables and summary."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    targets = ["results/default/tables/summary.md", "results/default/tables/x2static/table3.md",
               "results/default/tables/c2v/table1.md"]
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", *targets],
                            capture_output=True, text=True, env=env, cwd=REPO)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    assert re.search(r"^train_model2vec\s+2$", out, re.M)  # 300-d and the teacher's width
    commands = [line for line in out.splitlines() if "staticvec train model2vec" in line]
    command = next(c for c in commands if "embeddings/model2vec/" in c)
    assert "--teacher minilm" in command and '"pca_dims": 300' in command and '"vocabulary": "teacher"' in command
    assert '"pca_dims": "auto"' in next(c for c in commands if "embeddings/model2vec_teacher_dim/" in c)
    assert "--model-dir results/default/embeddings/model2vec/seed1/model2vec" in command
    assert "--out results/default/embeddings/model2vec/seed1/vectors.bin" in command
    for protocol in ("web", "muse"):  # the summary and the C2V table read web, X2Static's table muse
        assert f"results/default/eval/model2vec/seed1/intrinsic.{protocol}.json" in out
    summary = next(line for line in out.splitlines() if "staticvec report summary" in line)
    for protocol in ("web", "muse"):  # the cross-paper summary has the row
        assert f"model2vec=results/default/eval/model2vec/seed1/intrinsic.{protocol}.json" in summary
    table3 = next(line for line in out.splitlines() if "staticvec report table" in line and "--table x2static_table3" in line)
    assert "model2vec_teacher_dim=results/default/eval/model2vec_teacher_dim/seed1/intrinsic.muse.json" in table3
    assert "benchmark: results/default/benchmarks/train/model2vec/seed1.tsv" in out  # its seconds in the timings


def test_an_added_word_is_the_mean_over_its_own_pieces_when_the_tokenizer_pads_to_a_fixed_length(one_torch_thread):
    """all-MiniLM-L6-v2's tokenizer pads every text to 128; the library encodes an added word with the tokenizer
    as given and masks by sequence length, so without `unpadded` the word's mean runs over [PAD] states."""
    import types

    import torch
    from transformers import BertConfig, BertModel

    from staticvec.train.model2vec import Model2VecParams, distill_teacher, unpadded

    tokenizer = wordpiece_tokenizer()
    torch.manual_seed(0)
    encoder = BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
                                   pad_token_id=tokenizer.pad_token_id)).eval()
    tokenizer.backend_tokenizer.enable_padding(pad_id=tokenizer.pad_token_id, pad_token="[PAD]", length=24)
    assert len(tokenizer.backend_tokenizer.encode("unbelievable").ids) == 24  # the padding the test is about
    assert len(unpadded(tokenizer).backend_tokenizer.encode("unbelievable").ids) == 5  # [CLS] un ##believ ##able [SEP]
    assert tokenizer.backend_tokenizer.padding["length"] == 24  # the teacher's own tokenizer is left as it was
    teacher = types.SimpleNamespace(encoder=encoder, tokenizer=tokenizer, device="cpu")
    params = Model2VecParams(pca_dims=None, sif_coefficient=None, vocabulary="run", quantize_to="float32")
    model = distill_teacher(teacher, params, ["unbelievable", "cat"])

    ids = torch.tensor([tokenizer.convert_tokens_to_ids(["[CLS]", "un", "##believ", "##able", "[SEP]"])])
    with torch.no_grad():
        expected = encoder(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state[0].mean(0).numpy()
    row = model.embedding[model.tokenizer.token_to_id("unbelievable")]
    np.testing.assert_allclose(row, expected, rtol=1e-5, atol=1e-6)
