"""SemGloVe end to end on a tiny random BERT: teacher features → per-shard stores (stored features and
the on-the-fly path give the same stores) → merge → pieces to words → sdR → Table 5 pair counts."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from teacher_fixtures import TEXT, small_shard, small_vocab, tiny_bert, write_shard  # noqa: E402

from staticvec.cli import main  # noqa: E402
from staticvec.cooc.semantic import attention_pairs  # noqa: E402
from staticvec.cooc.store import CoocStore, vocab_fingerprint  # noqa: E402
from staticvec.teacher.features import FeatureSpec  # noqa: E402
from staticvec.teacher.store import FeatureStore, write_shard_features  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("semglove")
    teacher = tiny_bert()
    model_dir = tmp / "tiny-bert"
    teacher.model.save_pretrained(model_dir)
    teacher.tokenizer.save_pretrained(model_dir)
    vocab = small_vocab()
    vocab.save(tmp / "vocab.tsv")
    shards = [small_shard(tmp / "shards" / "00000.tsv.gz"),
              write_shard(tmp / "shards" / "00001.tsv.gz", [[(True, t)] for t in TEXT[:6]])]
    spec = FeatureSpec(layers=(), attention_window=3, mlm_topk=7, mlm_mode="masked")
    features = []
    for shard in shards:
        out = tmp / "features" / shard.name.split(".")[0]
        write_shard_features(teacher, shard, out, spec, vocab, tmp / "vocab.tsv", part_sentences=8,
                             batch_tokens=512, progress=False)
        features.append(out)
    return {"tmp": tmp, "model": model_dir, "vocab": vocab, "shards": shards, "features": features,
            "pieces": len(teacher.tokenizer)}


def run(*argv):
    assert main([str(a) for a in argv]) == 0


def test_shard_stores_merge_map_restrict_and_pair_counts(setup):
    tmp, vocab = setup["tmp"], setup["vocab"]
    V = len(vocab)
    for k, feat in enumerate(setup["features"]):
        run("cooc", "semglove", "--features", feat, "--vocab", tmp / "vocab.tsv", "--teacher", setup["model"],
            "--attention", 3, "divide", tmp / f"sd/{k}.cooc", "--attention", 3, "rank", tmp / f"sr/{k}.cooc",
            "--mlm", 6, "divide", tmp / f"md/{k}.cooc", "--window", 3)
    for name in ("sd", "sr", "md"):
        run("cooc", "merge", tmp / f"{name}/0.cooc", tmp / f"{name}/1.cooc", "--out", tmp / f"{name}.cooc")
    sd = CoocStore(tmp / "sd.cooc")
    sd.verify()
    assert sd.vocab_size == V and sd.vocab_sha256 == vocab_fingerprint(vocab)
    assert sd.meta["kind"] == "semglove-attention" and sd.meta["top"] == 3 and sd.meta["window"] == 3
    assert sd.meta["sources"] == ["00000", "00001"]
    # the merged store is the sum of the stored parts' pairs (computed here directly)
    expected = np.zeros((V, V))
    for feat in setup["features"]:
        for arrays in FeatureStore(feat).parts():
            i, j, x = attention_pairs(arrays["word_ids"], arrays["attention_window"], 3, "divide")
            np.add.at(expected, (i, j), x)
    np.testing.assert_allclose(sd.to_scipy().toarray(), expected, rtol=1e-5)
    assert sd.meta["n_pairs"] >= sd.n_entries  # occurrences counted, summed over the shards
    # sr weights are 1, 1/2 and 1/3: every value is a whole number of sixths
    sr = CoocStore(tmp / "sr.cooc").to_scipy()
    np.testing.assert_allclose(sr.data * 6, np.round(sr.data * 6), atol=1e-4)

    md_pieces = CoocStore(tmp / "md.cooc")
    assert md_pieces.meta["kind"] == "semglove-mlm-pieces" and md_pieces.vocab_size == setup["pieces"]
    assert md_pieces.meta["drop_target"] is False  # masked mode keeps the target (the paper's top 2S)
    run("cooc", "semglove-words", tmp / "md.cooc", "--vocab", tmp / "vocab.tsv", "--teacher", setup["model"],
        "--out", tmp / "md.words.cooc")
    md = CoocStore(tmp / "md.words.cooc")
    md.verify()
    assert md.meta["kind"] == "semglove-mlm" and md.vocab_size == V and md.n_entries > 0

    run("cooc", "window", "--shards", *setup["shards"], "--vocab", tmp / "vocab.tsv", "--window", 3,
        "--out", tmp / "window3.cooc")
    run("cooc", "restrict", "--values", tmp / "window3.cooc", "--pairs", tmp / "sd.cooc", "--out", tmp / "sdR.cooc")
    sdr = CoocStore(tmp / "sdR.cooc")
    assert sdr.n_entries == sd.n_entries and sdr.meta["n_pairs_without_value"] == 0

    run("cooc", "pair-counts", "--vocab", tmp / "vocab.tsv", "--store", "glove", tmp / "window3.cooc",
        "--store", "semglove_sd", tmp / "sd.cooc", "--store", "semglove_md", tmp / "md.words.cooc",
        "--pair", "the", "cat", "--pair", "king", "queen", "--pair", "unbelievable", "the", "--out", tmp / "t5.json")
    result = json.loads((tmp / "t5.json").read_text())["results"]
    window = CoocStore(tmp / "window3.cooc")
    assert result["the_cat"]["glove"]["score"] == pytest.approx(window.lookup(vocab.index["the"], vocab.index["cat"]))
    assert result["king_queen"]["semglove_sd"]["score"] == pytest.approx(
        sd.lookup(vocab.index["king"], vocab.index["queen"]))
    assert result["unbelievable_the"]["semglove_md"] == {"score": None, "found": 0, "total": 1, "oov": ["unbelievable"]}


def test_on_the_fly_features_give_the_stored_features_stores(setup):
    tmp = setup["tmp"]
    shard, feat = setup["shards"][0], setup["features"][0]
    common = ["--vocab", tmp / "vocab.tsv", "--teacher", setup["model"], "--window", 3]
    run("cooc", "semglove", "--features", feat, *common, "--attention", 2, "divide", tmp / "fly/a.cooc",
        "--mlm", 5, "rank", tmp / "fly/b.cooc")
    # same dtype as the stored features (fp32): in bf16 the batch layout moves values by bf16 rounding
    run("cooc", "semglove", "--shard", shard, *common, "--mlm-topk", 7, "--mlm-mode", "masked", "--dtype", "float32",
        "--part-sentences", 8, "--batch-tokens", 512, "--attention", 2, "divide", tmp / "fly/a2.cooc",
        "--mlm", 5, "rank", tmp / "fly/b2.cooc")
    for a, b in (("a", "a2"), ("b", "b2")):
        x, y = CoocStore(tmp / f"fly/{a}.cooc"), CoocStore(tmp / f"fly/{b}.cooc")
        xi, xj, xx = x.arrays()
        yi, yj, yx = y.arrays()
        np.testing.assert_array_equal(xi, yi)
        np.testing.assert_array_equal(xj, yj)
        np.testing.assert_allclose(xx, yx, rtol=1e-4)


def test_bad_inputs_are_reported(setup, capsys):
    tmp = setup["tmp"]
    other = tmp / "other_vocab.tsv"
    other.write_text("the\t99\ncat\t5\n")
    assert main(["cooc", "semglove", "--features", str(setup["features"][0]), "--vocab", str(other),
                 "--attention", "2", "divide", str(tmp / "x.cooc")]) == 2
    assert "vocabulary" in capsys.readouterr().err
    assert main(["cooc", "semglove", "--features", str(setup["features"][0]), "--vocab", str(tmp / "vocab.tsv"),
                 "--mlm", "2", "divide", str(tmp / "x.cooc")]) == 2
    assert "--teacher" in capsys.readouterr().err
    assert main(["cooc", "semglove", "--features", str(setup["features"][0]), "--vocab", str(tmp / "vocab.tsv"),
                 "--attention", "2", "max", str(tmp / "x.cooc")]) == 2
    assert "divide or rank" in capsys.readouterr().err
