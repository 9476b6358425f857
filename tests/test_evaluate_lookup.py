"""The evaluation view of an embedding (cut, case, unit rows, mean vector) and nearest neighbours."""

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.evaluate.lookup import VectorLookup
from staticvec.evaluate.neighbours import nearest_neighbours


def test_lowercasing_before_the_cut_and_first_case_variant_wins():
    emb = Embeddings(["The", "the", "cat", "Dog"], np.array([[3, 0], [0, 1], [1, 1], [0, 2]], dtype=np.float32))
    lk = VectorLookup(emb, lowercase=True, max_vocab=3)
    # MUSE: lower-case first, keep the first 3 distinct words ("the" counted once), so "dog" is in;
    # "the" row is "The"'s (cutting 3 rows first, as before issue 16, lost "dog")
    assert lk.words == ["the", "cat", "dog"]
    np.testing.assert_allclose(lk.unit[0], [1, 0])
    assert lk.describe()["vocab_size_file"] == 4 and lk.describe()["vocab_size"] == 3
    # the mean vector is the mean of the unit rows
    np.testing.assert_allclose(lk.mean, [(1 + 2**-0.5) / 3, (2**-0.5 + 1) / 3], rtol=1e-6)
    assert list(lk.indices(["THE", "dog", "Cat", "bird"])) == [0, 2, 1, -1]
    assert list(VectorLookup(emb, lowercase=False).indices(["the", "The", "dog"])) == [1, 0, -1]


def test_rows_follow_the_policy():
    emb = Embeddings(["a", "b"], np.array([[2, 0], [0, 3]], dtype=np.float32))
    np.testing.assert_allclose(VectorLookup(emb, oov="mean").rows(np.array([1, -1])), [[0, 1], [0.5, 0.5]])
    np.testing.assert_allclose(VectorLookup(emb, oov="drop").rows(np.array([-1])), [[0, 0]])
    with pytest.raises(StaticvecError, match="OOV policy"):
        VectorLookup(emb, oov="zero")


def test_nearest_neighbours_by_hand():
    angles = {"light": 0.0, "lights": 0.1, "glow": 0.3, "dark": 3.0, "while": 1.5}
    emb = Embeddings(list(angles), np.array([[np.cos(t), np.sin(t)] for t in angles.values()], dtype=np.float32))
    result = nearest_neighbours(VectorLookup(emb), ["light", "Light", "absent"], topn=2)
    lists = result["neighbours"]
    assert [w for w, _ in lists["light"]] == ["lights", "glow"]
    assert lists["light"][0][1] == pytest.approx(np.cos(0.1), abs=1e-6)
    assert lists["Light"] == lists["light"] and lists["absent"] is None
    assert (result["found"], result["total"]) == (2, 3)


def _muse_read(words, max_vocab):
    """MUSE's read_txt_embeddings loop (src/utils.py, full_vocab=False), word by word."""
    word2id, rows = {}, []
    for i, word in enumerate(words):
        word = word.lower()
        if word not in word2id:
            word2id[word] = len(word2id)
            rows.append(i)
        if max_vocab > 0 and len(word2id) >= max_vocab:
            break
    return list(word2id), rows


@pytest.mark.parametrize("max_vocab", [1, 3, 7, 12, 40])
def test_cut_keeps_muses_first_distinct_lowercased_words(max_vocab):
    rng = np.random.default_rng(max_vocab)
    base = ["apple", "Bank", "bank", "BANK", "cat", "Cat", "dog", "Eel", "eel", "fox", "gnu", "Hat", "hat", "ice", "jam"]
    words = [base[i] for i in rng.permutation(len(base))]
    words = list(dict.fromkeys(words))  # a file holds each exact form once
    vectors = rng.standard_normal((len(words), 4)).astype(np.float32)
    lk = VectorLookup(Embeddings(words, vectors), lowercase=True, max_vocab=max_vocab)
    expected_words, expected_rows = _muse_read(words, max_vocab)
    assert lk.words == expected_words
    unit = vectors[expected_rows] / np.linalg.norm(vectors[expected_rows], axis=1, keepdims=True)
    np.testing.assert_allclose(lk.unit, unit, rtol=1e-6)
