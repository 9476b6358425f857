"""The trainers' commands end to end on a tiny teacher: stored and recomputed features give the
same vectors, vocabulary remapping (X2Static's min count 10 over min-5 features), records, the
Figure 7 dump, resumable runs through the CLI and clear errors."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from teacher_fixtures import small_shard, small_vocab, tiny_bert, wordpiece_tokenizer  # noqa: E402

from staticvec.cli import main  # noqa: E402
from staticvec.corpus.vocab import Vocabulary  # noqa: E402
from staticvec.embeddings import Embeddings  # noqa: E402
from staticvec.teacher.features import FeatureSpec  # noqa: E402
from staticvec.teacher.store import write_shard_features  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("students")
    bert = tiny_bert(seed=2)
    model_dir = tmp / "tiny"
    bert.model.save_pretrained(model_dir)
    wordpiece_tokenizer().save_pretrained(model_dir)
    shards = [small_shard(tmp / "00000.tsv.gz"), small_shard(tmp / "00001.tsv.gz")]
    vocab_path = tmp / "vocab.min1.tsv"
    small_vocab().save(vocab_path)
    features = []
    for context in ("sentence", "paragraph"):
        spec = FeatureSpec(context=context, layers=(-1,), sentence_vectors=True, vector_dtype="float32")
        for shard in shards:
            out = tmp / "features" / context / shard.name.split(".")[0]
            write_shard_features(bert, shard, out, spec, vocab=small_vocab(), vocab_path=vocab_path,
                                 part_sentences=8, progress=False)
            features.append(out)
    return {"tmp": tmp, "teacher": str(model_dir), "shards": [str(s) for s in shards], "vocab": str(vocab_path),
            "sentence": [str(f) for f in features[:2]], "paragraph": [str(f) for f in features[2:]]}


def run(*args):
    return main(["train", *map(str, args), "--no-progress", "--device", "cpu", "--threads", "1"])


def test_stored_and_recomputed_features_train_the_same_vectors(setup, tmp_path):
    params = {"negatives": 3, "min_count": 1, "lr": 0.01, "context": "paragraph"}
    common = ["--vocab", setup["vocab"], "--params", json.dumps(params)]
    assert run("x2static", "--features", *setup["paragraph"], *common, "--out", tmp_path / "a.bin") == 0
    assert run("x2static", "--shards", *setup["shards"], "--teacher", setup["teacher"],  # context from the params
               "--part-sentences", 8, *common, "--out", tmp_path / "b.bin") == 0
    a, b = Embeddings.load(tmp_path / "a.bin"), Embeddings.load(tmp_path / "b.bin")
    assert a.words == b.words == small_vocab().words
    np.testing.assert_allclose(a.vectors, b.vectors, atol=1e-5)
    record = json.loads((tmp_path / "a.bin.json").read_text())
    assert record["source"]["spec"]["context"] == "paragraph" and record["train"]["words"] > 0
    assert record["options"]["context_mean"] == {"used": "all_words", "paper": "all_words",
                                                 "released_code": "all_pieces", "follows": "paper"}
    timing = record["train"]["timing"]
    assert 0 < timing["static_update_share"] < 1 and timing["update_s"] > 0
    assert json.loads((tmp_path / "b.bin.json").read_text())["source"]["cache"] == "recompute"


def test_x2static_min_count_remaps_feature_ids(setup, tmp_path):
    counts = dict(zip(small_vocab().words, small_vocab().counts))
    min10 = Vocabulary.from_counts(counts, min_count=8)
    assert 0 < len(min10) < len(small_vocab())
    path = tmp_path / "vocab.min8.tsv"
    min10.save(path)
    out = tmp_path / "x.txt"
    assert run("x2static", "--features", *setup["sentence"], "--vocab", path, "--feature-vocab", setup["vocab"],
               "--min-count", 8, "--negatives", 2, "--out", out) == 0
    emb = Embeddings.load(out)
    assert emb.words == min10.words and emb.dim == 16
    # without the feature vocabulary the ids cannot be read: a clear error
    assert run("x2static", "--features", *setup["sentence"], "--vocab", path, "--min-count", 8, "--out", out) == 2


def test_bert_sg_model_attention_dump_and_c2v(setup, tmp_path):
    model = tmp_path / "model.pt"
    assert run("bert-sg", "--features", *setup["sentence"], "--vocab", setup["vocab"], "--min-count", 1,
               "--dim", 6, "--window", 3, "--model", model, "--out", tmp_path / "v.bin") == 0
    emb = Embeddings.load(tmp_path / "v.bin")
    assert emb.dim == 6 and np.abs(emb.vectors).sum() > 0  # V' starts at zero: it was trained
    assert main(["train", "bert-sg-attention", "--model", str(model), "--teacher", setup["teacher"], "--device", "cpu",
                 "--sentence", "the king and the queen ruled the country .", "--out", str(tmp_path / "a.json")]) == 0
    dump = json.loads((tmp_path / "a.json").read_text())["sentences"][0]
    n = len(dump["words"])
    assert n == 9 and dump["window"] == 3
    for i, row in enumerate(dump["weights"]):
        inside = [w for j, w in enumerate(row) if w is not None]
        assert len(inside) == min(i, 3) + min(n - 1 - i, 3) and sum(inside) == pytest.approx(1.0, abs=1e-5)
    assert run("c2v", "--features", *setup["sentence"], "--vocab", setup["vocab"], "--min-count", 1, "--dim", 6,
               "--params", '{"variant": "released"}', "--out", tmp_path / "c.bin", "--record", tmp_path / "c.json") == 0
    rec = json.loads((tmp_path / "c.json").read_text())
    assert rec["options"]["variant"]["follows"] == "released code" and rec["output"]["dim"] == 6


def test_cli_checkpoint_is_resumed_and_removed(setup, tmp_path):
    args = ["bert-sg", "--features", *setup["sentence"], "--vocab", setup["vocab"], "--min-count", 1, "--dim", 4]
    assert run(*args, "--out", tmp_path / "full.bin") == 0
    # a checkpoint of the first shard's blocks, written by an interrupted run of the same settings
    from staticvec.train import bert_skipgram as bs
    from staticvec.train import loop as ns

    # the autograd engine's step, the fast engine's block
    real, real_fast = ns.optimisation_step, bs.ContextualSkipGram.run_block
    calls = {"n": 0}

    def failing(real, after):
        def step(*a, **k):
            calls["n"] += 1
            if calls["n"] > after:
                raise KeyboardInterrupt
            return real(*a, **k)
        return step

    ns.optimisation_step, bs.ContextualSkipGram.run_block = failing(real, 3), failing(real_fast, 1)
    try:
        with pytest.raises(KeyboardInterrupt):
            run(*args, "--out", tmp_path / "r.bin", "--checkpoint", tmp_path / "ck.pt", "--checkpoint-every", 0)
    finally:
        ns.optimisation_step, bs.ContextualSkipGram.run_block = real, real_fast
    assert (tmp_path / "ck.pt").exists()
    assert run(*args, "--out", tmp_path / "r.bin", "--checkpoint", tmp_path / "ck.pt") == 0
    assert not (tmp_path / "ck.pt").exists()
    np.testing.assert_array_equal(Embeddings.load(tmp_path / "full.bin").vectors, Embeddings.load(tmp_path / "r.bin").vectors)


def test_bad_arguments_are_clear_errors(setup, tmp_path, capsys):
    base = ["--vocab", setup["vocab"], "--out", tmp_path / "x.bin"]
    assert run("bert-sg", *base) == 2  # neither features nor shards
    assert run("bert-sg", "--features", *setup["sentence"], *base, "--params", '{"windw": 3}') == 2
    assert "windw" in capsys.readouterr().err
    assert run("bert-sg", "--features", *setup["sentence"], *base, "--aggregation", "max") == 2
    assert run("x2static", "--features", str(tmp_path / "nowhere"), *base) == 2
    assert run("x2static", "--features", *setup["paragraph"], *base, "--min-count", 1) == 2  # context: sentence
    assert "paragraph inputs" in capsys.readouterr().err


def test_the_python_api_trains_what_the_command_line_writes(setup, tmp_path):
    """`staticvec train` wraps staticvec.train.api.train_student: the same call gives the same vectors,
    output table and record (timings aside), by the method's registry name or its command name."""
    from staticvec.errors import StaticvecError
    from staticvec.train.api import train_student

    params = {"dim": 4, "min_count": 1, "window": 2}
    assert run("bert-sg", "--features", *setup["sentence"], "--vocab", setup["vocab"], "--params", json.dumps(params),
               "--seed", 3, "--out", tmp_path / "cli.bin") == 0
    api = train_student("bert_sg", features=setup["sentence"], vocab=setup["vocab"], params=params, seed=3,
                        device="cpu", threads=1, progress=False)
    cli = Embeddings.load(tmp_path / "cli.bin")
    assert api.embeddings.words == cli.words
    np.testing.assert_array_equal(api.embeddings.vectors, cli.vectors)
    np.testing.assert_array_equal(api.embeddings.vectors, api.model.tables["ctx"].numpy())  # V', not U
    record = json.loads((tmp_path / "cli.bin.json").read_text())
    assert api.record["output"]["table"] == record["output"]["table"] == "V' / u' (static context table)"
    for key in ("method", "params", "vocab_sha256", "source", "options", "seed"):
        assert api.record[key] == record[key], key
    assert api.record["train"]["curve"] == record["train"]["curve"]
    api.save(tmp_path / "api.txt")  # the record beside it, the output's path in it
    assert json.loads((tmp_path / "api.txt.json").read_text())["output"]["embeddings"] == str(tmp_path / "api.txt")
    with pytest.raises(StaticvecError, match="not a distillation student"):
        train_student("glove", features=setup["sentence"], vocab=setup["vocab"])
