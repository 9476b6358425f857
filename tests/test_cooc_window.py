"""GloVe window counts equal a brute-force count of the definition, in every memory layout."""

import gzip

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.cooc.store import CoocStore, merge_stores, vocab_fingerprint
from staticvec.cooc.window import (
    WindowCounter,
    byte_index,
    count_window_store,
    shard_id_chunks,
    text_id_chunks,
    token_id_chunks,
)
from staticvec.corpus.shards import Sentence
from staticvec.corpus.vocab import Vocabulary, count_tokens
from staticvec.errors import InputFileError


def brute_force(sentences, vocab, window):
    """X[w, c] += 1/d for every ordered pair at distance d ≤ window, OOV removed first."""
    x = np.zeros((len(vocab), len(vocab)))
    for tokens in sentences:
        ids = [vocab.index[t] for t in tokens if t in vocab.index]
        for q in range(len(ids)):
            for p in range(max(0, q - window), q):
                x[ids[q], ids[p]] += 1.0 / (q - p)
                x[ids[p], ids[q]] += 1.0 / (q - p)
    return x


def count(sentences, vocab, window, tmp_path, name="w.cooc", **layout):
    with WindowCounter(len(vocab), window, memory_gb=0.01, tmp_dir=tmp_path, **layout) as counter:
        for ids, offsets in token_id_chunks(sentences, vocab.index, chunk_tokens=50):
            counter.add(ids, offsets)
        counter.finish(tmp_path / name, vocab_fingerprint(vocab))
    store = CoocStore(tmp_path / name)
    store.verify()
    return store.to_scipy().toarray()


def zipf_sentences(seed, n=300, n_words=200):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_words + 1)
    p /= p.sum()
    return [[f"w{t}" for t in rng.choice(n_words, size=rng.integers(0, 30), p=p)] for _ in range(n)]


def test_hand_computed_weights_symmetry_line_reset_and_oov_removal(tmp_path):
    vocab = Vocabulary(["a", "b", "c"], [9, 9, 9])
    sentences = [
        ["a", "b", "c"],  # a-b 1, b-c 1, a-c 1/2
        ["c", "zzz", "zzz", "a"],  # OOV removed first: c-a at distance 1
        ["a", "a"],  # a word with itself: both orders, 2 × 1
        ["b"],  # nothing; and no pair across the line break to the next "c"
        ["c"],
    ]
    x = count(sentences, vocab, window=2, tmp_path=tmp_path)
    expected = np.array([
        [2.0, 1.0, 1.5],
        [1.0, 0.0, 1.0],
        [1.5, 1.0, 0.0],
    ])
    np.testing.assert_allclose(x, expected)
    np.testing.assert_allclose(count([["a", "b", "c"]], vocab, window=1, tmp_path=tmp_path, name="w1.cooc")[0, 2], 0.0)


@pytest.mark.parametrize(
    "layout",
    [
        {},  # everything in the dense table
        {"max_product": 60, "overflow_entries": 90},  # mixed, with many spills
        {"max_product": 1, "overflow_entries": 400},  # everything through the overflow runs
        {"max_product": 1, "overflow_entries": 600, "max_open": 2},  # ... and multi-pass merges
        {"max_product": 400, "dense_max_product": 20, "overflow_entries": 300},  # dense part, hash and overflow
        {"dense_max_product": 1},  # the whole table but its first cell in the hash
    ],
)
def test_counts_equal_brute_force(tmp_path, layout):
    sentences = zipf_sentences(0)
    vocab = Vocabulary.from_counts(count_tokens(sentences), min_count=3)  # some words are OOV
    assert len(vocab) < 200
    for window in (1, 5):
        x = count(sentences, vocab, window, tmp_path, name=f"w{window}.cooc", **layout)
        np.testing.assert_allclose(x, brute_force(sentences, vocab, window), rtol=1e-6)


def write_shard(path, sentences, skip_every=0):
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for k, tokens in enumerate(sentences):
            fh.write(Sentence(f"art{k // 5}", k % 5, True, tokens).to_line())
            if skip_every and k % skip_every == 0:  # a sentence outside the length filter: never counted
                fh.write(Sentence(f"art{k // 5}", k % 5, False, ["w0", "w1", "w0", "w1"]).to_line())


def test_shard_merge_equals_single_pass_and_text_input(tmp_path):
    sentences = zipf_sentences(1, n=400)
    vocab = Vocabulary.from_counts(count_tokens(sentences), min_count=2)
    index = byte_index(vocab)
    halves = [sentences[:170], sentences[170:]]
    for k, half in enumerate(halves):
        write_shard(tmp_path / f"{k:05d}.tsv.gz", half, skip_every=7)
        count_window_store(shard_id_chunks(tmp_path / f"{k:05d}.tsv.gz", index, chunk_bytes=300), vocab, 4,
                           tmp_path / f"{k:05d}.cooc", memory_gb=0.01, meta={"sources": [f"{k:05d}"]})
    merge_stores([tmp_path / "00000.cooc", tmp_path / "00001.cooc"], tmp_path / "merged.cooc")
    (tmp_path / "all.txt").write_text("".join(" ".join(s) + "\n" for s in sentences))
    count_window_store(text_id_chunks(tmp_path / "all.txt", index, chunk_bytes=256), vocab, 4, tmp_path / "single.cooc",
                       memory_gb=0.01)
    merged, single = CoocStore(tmp_path / "merged.cooc"), CoocStore(tmp_path / "single.cooc")
    np.testing.assert_allclose(merged.to_scipy().toarray(), single.to_scipy().toarray(), rtol=1e-6)
    np.testing.assert_allclose(single.to_scipy().toarray(), brute_force(sentences, vocab, 4), rtol=1e-6)
    assert merged.meta["n_sentences"] == single.meta["n_sentences"] == len(sentences)
    assert merged.meta["sources"] == ["00000", "00001"] and merged.meta["window"] == 4


def test_malformed_shard_line_names_file_and_line(tmp_path):
    vocab = Vocabulary(["a"], [5])
    path = tmp_path / "bad.tsv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(Sentence("1", 0, True, ["a", "a"]).to_line())
        fh.write("just some text without tabs\n")
    with pytest.raises(InputFileError, match=r"bad.tsv.gz, line 2"):
        list(shard_id_chunks(path, byte_index(vocab)))


def test_cli_count_merge_and_lookup(tmp_path, capsys):
    sentences = zipf_sentences(2, n=200)
    vocab = Vocabulary.from_counts(count_tokens(sentences), min_count=1)
    vocab.save(tmp_path / "vocab.tsv")
    write_shard(tmp_path / "00000.tsv.gz", sentences[:100])
    write_shard(tmp_path / "00001.tsv.gz", sentences[100:])
    for k in range(2):
        assert main(["cooc", "window", "--shards", str(tmp_path / f"{k:05d}.tsv.gz"), "--vocab", str(tmp_path / "vocab.tsv"),
                     "--min-count", "3", "--window", "3", "--memory-gb", "0.01", "--out", str(tmp_path / f"{k}.cooc")]) == 0
    assert main(["cooc", "merge", str(tmp_path / "0.cooc"), str(tmp_path / "1.cooc"), "--out", str(tmp_path / "m.cooc")]) == 0
    small = Vocabulary.load(tmp_path / "vocab.tsv", min_count=3)
    expected = brute_force(sentences, small, 3)
    capsys.readouterr()
    assert main(["cooc", "info", str(tmp_path / "m.cooc"), "--verify", "--vocab", str(tmp_path / "vocab.tsv"),
                 "--min-count", "3", "--pair", "w0", "w1", "--pair", "w0", "nope"]) == 0
    out = capsys.readouterr().out
    assert "checksum ok" in out
    assert f"w0\tw1\t{expected[small.index['w0'], small.index['w1']]:.6g}" in out
    assert "w0\tnope\tOOV: nope" in out
    # the store belongs to the min-count-3 vocabulary: a GloVe run over another one is refused
    assert main(["train", "glove", "--cooc", str(tmp_path / "m.cooc"), "--vocab", str(tmp_path / "vocab.tsv"),
                 "--out", str(tmp_path / "v.bin"), "--iterations", "1", "--dim", "4"]) == 2


def count_bytes(sentences, vocab, window, path, **layout):
    with WindowCounter(len(vocab), window, memory_gb=0.01, tmp_dir=path.parent, **layout) as counter:
        for ids, offsets in token_id_chunks(sentences, vocab.index, chunk_tokens=500):
            counter.add(ids, offsets)
        counter.finish(path, vocab_fingerprint(vocab))
    return path.read_bytes(), counter


def test_table_cells_in_the_hash_give_the_dense_tables_store_byte_for_byte(tmp_path, monkeypatch):
    """The table's sparse cells live in a hash, each still the float64 sum of its 1/d in the text's order: the store
    is the one of the whole table held dense (the layout before the hash), byte for byte, while the hash doubles
    from a few slots, and after it has outgrown its share and moved every cell into the whole dense table."""
    from staticvec.cooc import window as window_module

    sentences = zipf_sentences(3, n=1500, n_words=400)
    vocab = Vocabulary.from_counts(count_tokens(sentences), min_count=2)
    layout = {"max_product": 3000, "overflow_entries": 700}  # table, hash and spilled runs all hold pairs
    dense, counter = count_bytes(sentences, vocab, 7, tmp_path / "dense.cooc", dense_max_product=3000, **layout)
    assert counter.hash_peak_bits == 0 and counter.n_spills > 0
    monkeypatch.setattr(window_module, "_HASH_FIRST_BITS", 3)  # 8 slots: the hash doubles many times
    new_hash = WindowCounter._new_hash
    monkeypatch.setattr(WindowCounter, "_new_hash", _capped(new_hash, 1 << 40))  # (this table is small)
    hashed, counter = count_bytes(sentences, vocab, 7, tmp_path / "hashed.cooc", dense_max_product=100, **layout)
    assert counter.hash_peak_bits > 8 and counter.dense_max_product == 100  # it grew, and stayed a hash
    assert hashed == dense
    monkeypatch.setattr(WindowCounter, "_new_hash", _capped(new_hash, 16 << 6))  # 64 slots at most
    moved, counter = count_bytes(sentences, vocab, 7, tmp_path / "moved.cooc", dense_max_product=100, **layout)
    assert counter.dense_max_product == 3000 and counter.hash_peak_bits == 6  # it moved to the whole dense table
    assert moved == dense
    assert brute_force(sentences, vocab, 7)[vocab.index["w0"], vocab.index["w1"]] > 0  # not an empty store compared


def _capped(new_hash, max_bytes):
    def capped(self, bits):
        self.hash_max_bytes = max_bytes
        return new_hash(self, bits)
    return capped


def test_a_merge_in_many_blocks_read_ahead_is_the_store_of_one_block(tmp_path):
    """The table (dense part and hash), the buffer and the spilled runs merged in blocks of a few records, each
    read a block ahead of the merge on another thread while the writer's thread writes the one before (the
    table's block arrays reused every other block), give the store of one block, byte for byte."""
    sentences = zipf_sentences(4, n=1500, n_words=400)
    vocab = Vocabulary.from_counts(count_tokens(sentences), min_count=2)
    stores = {}
    for block_entries in (1 << 20, 7, 64):
        path = tmp_path / f"b{block_entries}.cooc"
        with WindowCounter(len(vocab), 5, memory_gb=0.01, tmp_dir=tmp_path, max_product=3000,
                           dense_max_product=100, overflow_entries=700) as counter:
            for ids, offsets in token_id_chunks(sentences, vocab.index, chunk_tokens=50):
                counter.add(ids, offsets)
            assert counter.n_hash > 0 and counter.n_spills > 0  # the three sources hold pairs
            counter.finish(path, vocab_fingerprint(vocab), block_entries=block_entries)
        CoocStore(path).verify()
        stores[block_entries] = path.read_bytes()
    assert stores[7] == stores[1 << 20] == stores[64]
    assert len(CoocStore(tmp_path / "b7.cooc")) > 20 * 7  # many blocks
