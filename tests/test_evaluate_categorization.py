"""Categorization: purity by hand, the tree cut against scikit-learn, planted classes, OOV policies."""

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.evaluate.categorization import AGGLOMERATIVE_RUNS, cluster, distances, evaluate_categorization, purity
from staticvec.evaluate.datasets import CategorizationData
from staticvec.evaluate.lookup import VectorLookup


def test_purity_by_hand():
    # clusters {a, a, b} and {b, b}: majorities 2 + 2 of 5 items
    assert purity(["a", "a", "b", "b", "b"], [0, 0, 0, 1, 1]) == pytest.approx(0.8)
    assert purity(["a", "b", "c"], [5, 5, 5]) == pytest.approx(1 / 3)
    assert purity(["x", "y"], ["p", "q"]) == 1.0


def same_partition(p, q) -> bool:
    pairs = set(zip(p, q))
    return len(pairs) == len(set(p)) == len(set(q))


@pytest.mark.parametrize("link, metric", AGGLOMERATIVE_RUNS)
def test_tree_cut_equals_scikit_learn(link, metric):
    from sklearn.cluster import AgglomerativeClustering

    rng = np.random.default_rng(5)
    x = rng.standard_normal((120, 10))  # no structure: every merge decision matters
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ours = cluster(x, 7, method="agglomerative")[f"{link}_{metric}"]
    theirs = AgglomerativeClustering(n_clusters=7, metric=metric, linkage=link).fit_predict(x)
    assert len(set(ours)) == 7 and same_partition(ours, theirs)


def test_distances_match_scipy():
    from scipy.spatial.distance import pdist

    x = np.random.default_rng(0).standard_normal((30, 6))
    d = distances(x)
    np.testing.assert_allclose(d["cosine"], pdist(x, "cosine"), atol=1e-12)
    np.testing.assert_allclose(d["euclidean"], pdist(x, "euclidean"), atol=1e-12)


def planted(n_per=8, classes=4, dim=12, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, dim)) * 5
    words, labels, rows = [], [], []
    for k in range(classes):
        for i in range(n_per):
            words.append(f"w{k}_{i}")
            labels.append(f"class{k}")
            rows.append(centres[k] + 0.3 * rng.standard_normal(dim))
    return Embeddings(words, np.asarray(rows, dtype=np.float32)), CategorizationData(words, labels)


def test_planted_classes_are_recovered_by_every_method():
    emb, data = planted()
    result = evaluate_categorization(VectorLookup(emb), data)
    assert result["score"] == 1.0
    assert set(result["methods"]) == {f"{link}_{m}" for link, m in AGGLOMERATIVE_RUNS} | {"kmeans"}
    assert all(v == 1.0 for v in result["methods"].values())
    assert evaluate_categorization(VectorLookup(emb), data, method="kmeans")["methods"].keys() == {"kmeans"}


def test_oov_policies():
    emb, data = planted()
    words = data.words + ["missing1", "missing2"]
    labels = data.labels + ["class0", "class1"]
    data = CategorizationData(words, labels)
    drop = evaluate_categorization(VectorLookup(emb, oov="drop"), data)
    assert (drop["found"], drop["total"], drop["scored"]) == (32, 34, 32) and drop["score"] == 1.0
    mean = evaluate_categorization(VectorLookup(emb, oov="mean"), data)
    assert (mean["found"], mean["total"], mean["scored"]) == (32, 34, 34)
    # the two mean-vector items share one vector (and so one cluster): at most one of them is in the
    # cluster of its class, and the 32 planted items are still perfectly clustered
    assert mean["score"] in (pytest.approx(32 / 34), pytest.approx(33 / 34))


def _full_matrix_distances(x):
    """The distances as computed before the condensed form: on the full n x n matrices, then squareform."""
    from scipy.spatial.distance import squareform

    x = np.asarray(x, dtype=np.float64)
    gram = x @ x.T
    sq = np.diag(gram).copy()
    norms = np.sqrt(sq)
    euclidean = gram * -2.0
    euclidean += sq[:, None]
    euclidean += sq[None, :]
    np.maximum(euclidean, 0.0, out=euclidean)
    np.sqrt(euclidean, out=euclidean)
    inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    cosine = gram
    cosine *= inverse[:, None]
    cosine *= inverse[None, :]
    np.subtract(1.0, cosine, out=cosine)
    np.maximum(cosine, 0.0, out=cosine)
    return {"cosine": squareform(cosine, checks=False), "euclidean": squareform(euclidean, checks=False)}


def test_condensed_distances_equal_the_full_matrix_ones_bit_for_bit():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((200, 16)).astype(np.float32)
    x[3] = 0.0  # a zero row (cosine 0 by convention)
    x[10] = x[11]  # duplicates: Euclidean 0, clipped
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30)
    ours, full = distances(x), _full_matrix_distances(x)
    for metric in ("cosine", "euclidean"):
        assert ours[metric].shape == (200 * 199 // 2,)
        assert np.array_equal(ours[metric], full[metric]), metric
