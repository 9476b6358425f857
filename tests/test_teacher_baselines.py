"""Contextual baselines: token table, word alone, ASE (per layer, merged over shards)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from teacher_fixtures import TEXT, small_vocab, tiny_bert, write_shard  # noqa: E402

from staticvec.teacher import baselines  # noqa: E402
from staticvec.teacher.features import FeatureSpec  # noqa: E402
from staticvec.teacher.store import FeatureStore, write_shard_features  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def bert():
    return tiny_bert(seed=5)


def test_token_table_is_mean_of_input_embedding_rows(bert):
    words = ["cat", "unbelievable", "xyz", "\x07"]
    emb = baselines.token_table(bert, words)
    table = bert.input_embeddings().detach()
    tok = bert.tokenizer
    assert emb.words == ["cat", "unbelievable", "xyz"]  # the control character has no piece
    for w in emb.words:
        ids = tok(w, add_special_tokens=False)["input_ids"]
        np.testing.assert_allclose(emb[w], table[ids].mean(0).numpy(), atol=1e-6)
    assert len(tok("unbelievable", add_special_tokens=False)["input_ids"]) == 3


def test_word_alone_is_one_word_input(bert):
    words = ["cat", "unbelievable", "paris"]
    tables = baselines.word_alone(bert, words, layers=(0, -1))
    assert sorted(tables) == [0, 2]
    for w in words:
        enc = bert.tokenizer(w, return_tensors="pt")
        with torch.inference_mode():
            out = bert.model(**enc, output_hidden_states=True)
        for layer in (0, 2):
            np.testing.assert_allclose(tables[layer][w], out.hidden_states[layer][0, 1:-1].mean(0).numpy(), atol=1e-5)


def test_ase_is_occurrence_mean_per_layer_merged_over_shards(bert, tmp_path):
    vocab = small_vocab()
    no_book = [t for t in TEXT if "book" not in t]
    halves = [no_book[:12], no_book[12:]]
    stores, vectors, ids = [], {0: [], 2: []}, []
    for k, texts in enumerate(halves):
        shard = write_shard(tmp_path / f"{k}.tsv.gz", [[(True, t)] for t in texts])
        spec = FeatureSpec(layers=(0, -1), ase=True, special_tokens=False, vector_dtype="float32")
        ase_words = np.array([vocab.index[w] for w in ("the", "cat", "queen", "book")])
        write_shard_features(bert, shard, tmp_path / f"f{k}", spec, vocab, part_sentences=4,
                             ase_words=ase_words, progress=False)
        store = FeatureStore(tmp_path / f"f{k}")
        stores.append(store)
        for p in store.parts():
            ids.append(p["word_ids"])
            for layer in vectors:
                vectors[layer].append(p[f"word_vectors.{layer}"])
    ids = np.concatenate(ids)
    fallback = baselines.word_alone(bert, ["book", "cat"], layers=(0, 1, 2))
    tables = baselines.ase_embeddings(stores, vocab, fallback=fallback)
    assert sorted(tables) == [0, 1, 2]
    # 'book' never occurs in these shards: it falls back to the word alone
    for layer in (0, 2):
        v = np.concatenate(vectors[layer])
        for w in ("the", "cat", "queen"):
            np.testing.assert_allclose(tables[layer][w], v[ids == vocab.index[w]].mean(0), rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(tables[layer]["book"], fallback[layer]["book"])
    only_first = baselines.ase_embeddings(stores[:1], vocab, layers=[-1])
    assert list(only_first) == [2]
    assert "book" not in only_first[2]
    report = baselines.ase_report(stores)
    assert report["shards"] == 2 and report["sentences"] == 20 and report["words_seen"] == 3
