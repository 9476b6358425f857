"""The evaluation view of an embedding (cut, case, unit rows, mean vector) and nearest neighbours."""

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.evaluate.lookup import VectorLookup
from staticvec.evaluate.neighbours import nearest_neighbours


def test_cut_before_lowercasing_and_first_case_variant_wins():
    emb = Embeddings(["The", "the", "cat", "Dog"], np.array([[3, 0], [0, 1], [1, 1], [0, 2]], dtype=np.float32))
    lk = VectorLookup(emb, lowercase=True, max_vocab=3)
    assert lk.words == ["the", "cat"]  # "Dog" cut before lower-casing; "the" row is "The"'s
    np.testing.assert_allclose(lk.unit[0], [1, 0])
    assert lk.describe()["vocab_size_file"] == 4 and lk.describe()["vocab_size"] == 2
    # the mean vector is the mean of the unit rows
    np.testing.assert_allclose(lk.mean, [(1 + 2**-0.5) / 2, (2**-0.5) / 2], rtol=1e-6)
    assert list(lk.indices(["THE", "dog", "Cat"])) == [0, -1, 1]
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
