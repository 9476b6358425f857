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


def _ase_stores(bert, tmp_path, ase_words=None, part_sentences=4):
    vocab = small_vocab()
    no_book = [t for t in TEXT if "book" not in t]
    halves = [no_book[:12], no_book[12:]]
    stores, vectors, ids = [], {0: [], 2: []}, []
    for k, texts in enumerate(halves):
        shard = write_shard(tmp_path / f"{k}.tsv.gz", [[(True, t)] for t in texts])
        spec = FeatureSpec(layers=(0, -1), ase=True, special_tokens=False, vector_dtype="float32")
        write_shard_features(bert, shard, tmp_path / f"f{k}", spec, vocab, part_sentences=part_sentences,
                             ase_words=ase_words, progress=False)
        store = FeatureStore(tmp_path / f"f{k}")
        stores.append(store)
        for p in store.parts():
            ids.append(p["word_ids"])
            for layer in vectors:
                vectors[layer].append(p[f"word_vectors.{layer}"])
    return vocab, stores, np.concatenate(ids), {k: np.concatenate(v) for k, v in vectors.items()}


def test_ase_is_occurrence_mean_per_layer_merged_over_shards(bert, tmp_path):
    vocab = small_vocab()
    ase_words = np.array([vocab.index[w] for w in ("the", "cat", "queen", "book")])
    vocab, stores, ids, vectors = _ase_stores(bert, tmp_path, ase_words)

    def fallback(words):
        return baselines.WordAlone(bert, words, (0, 1, 2), scratch=tmp_path)

    tables = dict(baselines.ase_embeddings(stores, vocab, fallback=fallback))
    assert sorted(tables) == [0, 1, 2]
    alone = baselines.word_alone(bert, ["book"], layers=(0, 1, 2))
    # 'book' never occurs in these shards: it falls back to the word alone; words off the list are left out
    for layer in (0, 2):
        assert tables[layer].words == sorted(["the", "cat", "queen", "book"], key=vocab.index.get)  # vocabulary order
        for w in ("the", "cat", "queen"):
            np.testing.assert_allclose(tables[layer][w], vectors[layer][ids == vocab.index[w]].mean(0), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(tables[layer]["book"], alone[layer]["book"], atol=1e-6)
    assert not list(tmp_path.glob("*.scratch.npy"))  # the fallback's scratch file is removed
    only_first = dict(baselines.ase_embeddings(stores[:1], vocab, layers=[-1]))
    assert list(only_first) == [2]
    assert "book" not in only_first[2]
    report = baselines.ase_report(stores, vocab)
    assert report["shards"] == 2 and report["sentences"] == 20 and report["words_seen"] == 3 and report["words"] == 4


def test_ase_covers_every_vocabulary_word_and_the_extra_words(bert, tmp_path):
    vocab, stores, ids, vectors = _ase_stores(bert, tmp_path)
    met = set(np.unique(ids[ids >= 0]).tolist())
    never = [w for i, w in enumerate(vocab.words) if i not in met]
    assert "book" in never and len(met) > 20
    called = []

    def fallback(words):
        called.append(list(words))
        return baselines.WordAlone(bert, words, (0, 1, 2), scratch=tmp_path, part_words=2)

    tables = dict(baselines.ase_embeddings(stores, vocab, fallback=fallback,
                                           extra_words=["zebra", "cat", "zebra", "new york", ""], block_words=5))
    assert called == [never + ["zebra", "new york", ""]]  # the word-alone pass runs only for the words that need it
    emb = tables[2]
    assert emb.words == list(vocab.words) + ["zebra"]  # every vocabulary word, then the extra ones
    by_block = dict(baselines.ase_embeddings(stores, vocab, layers=[2], block_words=10**6))[2]
    for w in by_block.words:  # small blocks of fp64 sums give the same means as one block
        np.testing.assert_allclose(emb[w], by_block[w], rtol=1e-6, atol=1e-7)
    for i in sorted(met)[:10]:
        np.testing.assert_allclose(emb[vocab.words[i]], vectors[2][ids == i].mean(0), rtol=1e-4, atol=1e-5)
    alone = baselines.word_alone(bert, ["zebra", never[0]], layers=(2,))[2]
    np.testing.assert_allclose(emb["zebra"], alone["zebra"], atol=1e-6)
    np.testing.assert_allclose(emb[never[0]], alone[never[0]], atol=1e-6)
    assert emb.counts[-1] == 0 and emb.counts[0] == (ids == 0).sum()


def test_ase_of_stores_with_other_word_lists_is_an_error(bert, tmp_path):
    vocab = small_vocab()
    _, a, _, _ = _ase_stores(bert, tmp_path / "a", np.array([vocab.index["the"]]))
    _, b, _, _ = _ase_stores(bert, tmp_path / "b")
    with pytest.raises(Exception, match="word list"):
        list(baselines.ase_embeddings([a[0], b[0]], vocab))


def test_ase_recomputed_over_shards_equals_the_stored_passes(bert, tmp_path):
    """teacher.cache: recompute — the same tables from sums added in memory as from the stored passes' sums,
    and a job killed after its first shard resumes from its checkpoint to the same tables."""
    vocab, stores, _, _ = _ase_stores(bert, tmp_path / "stored")
    shards = [tmp_path / "stored" / f"{k}.tsv.gz" for k in range(2)]
    stored = dict(baselines.ase_embeddings(stores, vocab))
    source = baselines.RecomputedAse(bert, shards, vocab, special_tokens=False, part_sentences=4)
    recomputed = dict(baselines.ase_embeddings([source], vocab))
    assert sorted(recomputed) == sorted(stored) == [0, 1, 2]
    for layer in stored:
        assert recomputed[layer].words == stored[layer].words
        np.testing.assert_array_equal(recomputed[layer].counts, stored[layer].counts)
        np.testing.assert_allclose(recomputed[layer].vectors, stored[layer].vectors, rtol=1e-5, atol=1e-6)
    assert baselines.ase_report([source], vocab) | {"shards": 2} == baselines.ase_report(stores, vocab)
    # resumed: the checkpoint of the first shard (written at once: checkpoint_every 0), then the second shard
    checkpoint = tmp_path / "ase.ckpt.npz"
    first = baselines.RecomputedAse(bert, shards[:1], vocab, special_tokens=False, part_sentences=4)
    partial = first.ase()
    np.savez(checkpoint, fingerprint=baselines.RecomputedAse(bert, shards, vocab, special_tokens=False, part_sentences=4)
             ._fingerprint(), next_shard=1, sentences=first.meta["sentences"], counts=partial["counts"], sums=partial["sums"])
    resumed = baselines.RecomputedAse(bert, shards, vocab, special_tokens=False, part_sentences=4, checkpoint=checkpoint)
    again = dict(baselines.ase_embeddings([resumed], vocab, layers=[2]))[2]
    np.testing.assert_allclose(again.vectors, recomputed[2].vectors, rtol=1e-6, atol=1e-7)
    resumed.close()
    assert not checkpoint.exists()
