"""The co-occurrence store: round trips, bounded-memory accumulation, merging, corruption."""

import numpy as np
import pytest

from staticvec.cooc.store import (
    CoocAccumulator,
    CoocStore,
    SortedStoreWriter,
    merge_stores,
    sort_reduce,
    write_store,
)
from staticvec.errors import InputFileError, StaticvecError

V = 50


def random_triples(seed, n=3000, v=V):
    rng = np.random.default_rng(seed)
    # Zipf-like ids so that many pairs repeat (duplicates must be summed)
    i = np.minimum(rng.zipf(1.3, n) - 1, v - 1)
    j = rng.integers(0, v, n)
    x = rng.random(n) + 0.01
    return i, j, x


def dense(i, j, x, v=V):
    m = np.zeros((v, v))
    np.add.at(m, (i, j), x)
    return m


def test_sort_reduce_sorts_and_sums_duplicates():
    i = np.array([3, 1, 3, 1, 0, 3])
    j = np.array([2, 4, 2, 0, 0, 1])
    x = np.array([1.0, 2.0, 0.5, 1.5, 4.0, 3.0])
    si, sj, sx = sort_reduce(i, j, x, vocab_size=5)
    assert si.tolist() == [0, 1, 1, 3, 3]
    assert sj.tolist() == [0, 0, 4, 1, 2]
    assert sx.tolist() == [4.0, 1.5, 2.0, 3.0, 1.5]


def test_round_trip_lookup_and_scipy(tmp_path):
    i, j, x = random_triples(0)
    header = write_store(tmp_path / "a.cooc", i, j, x, V, "sha", {"kind": "test"})
    m = dense(i, j, x)
    store = CoocStore(tmp_path / "a.cooc")
    store.verify()
    assert header["n_entries"] == len(store) == np.count_nonzero(m)
    assert store.meta == {"kind": "test"} and store.vocab_sha256 == "sha"
    np.testing.assert_allclose(store.to_scipy().toarray(), m, rtol=1e-6)
    si, sj, _ = store.arrays()
    keys = si.astype(np.int64) * V + sj
    assert (np.diff(keys) > 0).all()
    for a, b in [(0, 0), (0, 7), (3, 49), (49, 2), (10, 10)]:
        assert store.lookup(a, b) == pytest.approx(m[a, b], rel=1e-6)
    qa, qb = np.arange(V), (np.arange(V) * 7) % V
    np.testing.assert_allclose(store.lookup_many(qa, qb), m[qa, qb], rtol=1e-6)
    cols, vals = store.row(0)
    np.testing.assert_array_equal(cols, np.flatnonzero(m[0]))
    chunks = list(store.iter_chunks(size=97))
    assert sum(len(c[0]) for c in chunks) == len(store) and max(len(c[0]) for c in chunks) == 97


def test_accumulator_spills_and_multipass_merge_equal_single_pass(tmp_path):
    i, j, x = random_triples(1, n=5000)
    with CoocAccumulator(V, buffer_entries=300, tmp_dir=tmp_path, max_open=3) as acc:
        for k in range(0, len(i), 170):
            acc.add(i[k : k + 170], j[k : k + 170], x[k : k + 170])
        assert len(acc.runs) > 9  # several merge passes are needed with a fan-in of 3
        acc.finish(tmp_path / "spilled.cooc", meta={"kind": "test"}, block_entries=200)
    write_store(tmp_path / "single.cooc", i, j, x, V, meta={"kind": "test"})
    a, b = CoocStore(tmp_path / "spilled.cooc"), CoocStore(tmp_path / "single.cooc")
    a.verify()
    ai, aj, ax = a.arrays()
    bi, bj, bx = b.arrays()
    np.testing.assert_array_equal(ai, bi)
    np.testing.assert_array_equal(aj, bj)
    np.testing.assert_allclose(ax, bx, rtol=1e-6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["single.cooc", "spilled.cooc"]  # runs removed


def test_merge_sums_stores_and_combines_meta(tmp_path):
    parts, total = [], np.zeros((V, V))
    for seed in range(7):
        i, j, x = random_triples(seed, n=800)
        total += dense(i, j, x)
        path = tmp_path / f"s{seed}.cooc"
        write_store(path, i, j, x, V, "sha", {"kind": "window", "window": 5, "n_tokens": 10, "sources": [f"{seed}"],
                                              "beyond_features": seed})
        parts.append(path)
    header = merge_stores(parts, tmp_path / "all.cooc", max_open=2, block_entries=150)
    merged = CoocStore(tmp_path / "all.cooc")
    merged.verify()
    np.testing.assert_allclose(merged.to_scipy().toarray(), total, rtol=1e-6)
    assert header["meta"] == {"kind": "window", "window": 5, "n_tokens": 70, "sources": [str(s) for s in range(7)],
                              "beyond_features": sum(range(7))}  # a per-shard counter: shards differ, the merge adds
    assert merged.vocab_sha256 == "sha"


def test_merge_refuses_different_windows_or_vocabularies(tmp_path):
    i, j, x = random_triples(0, n=100)
    write_store(tmp_path / "a.cooc", i, j, x, V, "sha", {"window": 5})
    write_store(tmp_path / "b.cooc", i, j, x, V, "sha", {"window": 15})
    write_store(tmp_path / "c.cooc", i, j, x, V, "other", {"window": 5})
    with pytest.raises(StaticvecError, match="'window'"):
        merge_stores([tmp_path / "a.cooc", tmp_path / "b.cooc"], tmp_path / "out.cooc")
    with pytest.raises(StaticvecError, match="different vocabularies"):
        merge_stores([tmp_path / "a.cooc", tmp_path / "c.cooc"], tmp_path / "out.cooc")
    assert not (tmp_path / "out.cooc").exists()


def test_truncated_corrupt_and_foreign_files_are_detected(tmp_path):
    i, j, x = random_triples(0, n=500)
    path = tmp_path / "a.cooc"
    write_store(path, i, j, x, V)
    data = bytearray(path.read_bytes())
    (tmp_path / "short.cooc").write_bytes(data[:-5])
    with pytest.raises(InputFileError, match="truncated"):
        CoocStore(tmp_path / "short.cooc")
    data[-3] ^= 0xFF  # flip bits of the last record's value
    (tmp_path / "flipped.cooc").write_bytes(data)
    with pytest.raises(InputFileError, match="checksum"):
        CoocStore(tmp_path / "flipped.cooc").verify()
    (tmp_path / "text.cooc").write_text("word1 word2 1.0\n")
    with pytest.raises(InputFileError, match="magic"):
        CoocStore(tmp_path / "text.cooc")
    with pytest.raises(InputFileError, match="not found"):
        CoocStore(tmp_path / "missing.cooc")


def test_writer_rejects_unsorted_blocks_and_leaves_no_file(tmp_path):
    with pytest.raises(ValueError, match="increasing"):
        with SortedStoreWriter(tmp_path / "w.cooc", V) as writer:
            writer.write(np.array([0, 1]), np.array([3, 2]), np.array([1.0, 1.0]))
            writer.write(np.array([1]), np.array([1]), np.array([1.0]))  # goes back
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("background", [False, True])
def test_writer_in_blocks_is_the_store_of_one_write_with_or_without_its_thread(tmp_path, background):
    """Blocks written one after another, on the writer's thread or not, make the bytes (records, CRC, header) of
    the whole records written at once; a caller's arrays may change as soon as ``write`` returns (the two pooled
    blocks hold copies), and a block that goes back is refused in either mode, leaving no file."""
    i, j, x = sort_reduce(*random_triples(5, n=4000), V)
    whole = write_store(tmp_path / "whole.cooc", i, j, x, V)
    cuts = [0, 1, 7, 500, 501, 2000, len(i)]
    with SortedStoreWriter(tmp_path / "blocks.cooc", V, background=background) as writer:
        for a, b in zip(cuts, cuts[1:]):
            bi, bj, bx = i[a:b].copy(), j[a:b].copy(), x[a:b].astype(np.float64)
            writer.write(bi, bj, bx)
            bi[:], bj[:], bx[:] = 0, 0, -1.0  # reused by the caller at once
    assert writer.header["checksum"] == whole["checksum"]
    assert (tmp_path / "blocks.cooc").read_bytes() == (tmp_path / "whole.cooc").read_bytes()
    CoocStore(tmp_path / "blocks.cooc").verify()
    with pytest.raises(ValueError, match="increasing"):
        with SortedStoreWriter(tmp_path / "w.cooc", V, background=background) as writer:
            writer.write(i[:10], j[:10], x[:10])
            writer.write(i[5:6], j[5:6], x[5:6])  # a key already written
    assert not (tmp_path / "w.cooc").exists()


def test_a_write_error_on_the_writers_thread_reaches_the_caller_and_leaves_no_file(tmp_path):
    class FullDisk:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            if memoryview(data).nbytes > 100:  # the records' blocks, not the header
                raise OSError(28, "No space left on device")
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

    i, j, x = sort_reduce(*random_triples(6, n=4000), V)
    with pytest.raises(OSError, match="No space left"):
        with SortedStoreWriter(tmp_path / "full.cooc", V, background=True) as writer:
            writer._behind.fh = FullDisk(writer._behind.fh)
            for a in range(0, len(i), 50):
                writer.write(i[a:a + 50], j[a:a + 50], x[a:a + 50])  # raised at a later block, or at the close
    assert [p.name for p in tmp_path.iterdir()] == []


def test_ids_outside_the_vocabulary_are_rejected(tmp_path):
    with CoocAccumulator(V, tmp_dir=tmp_path) as acc:
        with pytest.raises(ValueError, match="outside"):
            acc.add([0, V], [1, 1], 1.0)


def test_subset_store_keeps_the_sub_vocabulary_pairs_with_its_ids(tmp_path):
    """A corpus fraction's store: entries of words of its own vocabulary, remapped to its ids (brute force)."""
    from staticvec.cli import main
    from staticvec.cooc.store import subset_store, vocab_fingerprint
    from staticvec.corpus.vocab import Vocabulary

    full = Vocabulary([f"w{k}" for k in range(V)], list(range(1000, 1000 - V, -1)))
    i, j, x = random_triples(7)
    write_store(tmp_path / "full.cooc", i, j, x, V, vocab_fingerprint(full), {"window": 5})
    # the fraction's vocabulary: its own frequency order, one word the full vocabulary lacks
    rng = np.random.default_rng(3)
    words = [f"w{k}" for k in rng.permutation(V)[:30]] + ["new"]
    sub = Vocabulary(words, list(range(100, 100 - len(words), -1)))
    header = subset_store(tmp_path / "full.cooc", full, sub, tmp_path / "sub.cooc", buffer_entries=64)
    store = CoocStore(tmp_path / "sub.cooc")
    store.verify()
    assert store.vocab_size == len(sub) and store.vocab_sha256 == vocab_fingerprint(sub)
    expected = np.zeros((len(sub), len(sub)))
    d = dense(i, j, x)
    for a, wa in enumerate(words):
        for b, wb in enumerate(words):
            if wa in full and wb in full:
                expected[a, b] = d[full.index[wa], full.index[wb]]
    np.testing.assert_allclose(store.to_scipy().toarray(), expected, rtol=1e-6)
    meta = header["meta"]
    assert meta["window"] == 5 and meta["subset"]["words_not_in_source"] == 1
    assert meta["subset"]["entries_kept"] == store.n_entries
    # the command reads the same files; a store of another vocabulary is refused
    full.save(tmp_path / "full.tsv")
    sub.save(tmp_path / "sub.tsv")
    assert main(["cooc", "subset", str(tmp_path / "full.cooc"), "--source-vocab", str(tmp_path / "full.tsv"),
                 "--vocab", str(tmp_path / "sub.tsv"), "--out", str(tmp_path / "cli.cooc")]) == 0
    assert np.array_equal(np.asarray(CoocStore(tmp_path / "cli.cooc").records), np.asarray(store.records))
    with pytest.raises(InputFileError, match="another vocabulary"):
        subset_store(tmp_path / "full.cooc", sub, full, tmp_path / "bad.cooc")
