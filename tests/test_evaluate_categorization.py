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


def kmeans_data(n, dim, seed, duplicates=0):
    """float32 rows with some exact duplicates (the mean-vector OOVs of the ``web`` protocol)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    if duplicates:
        x[rng.choice(n, duplicates, replace=False)] = x.mean(axis=0)
    return x


@pytest.mark.parametrize(
    "n, dim, k, duplicates",
    [(40, 7, 3, 0), (300, 50, 13, 120), (2500, 300, 56, 1600), (1200, 301, 1, 0), (5, 4, 5, 2)],
)
def test_kmeans_plusplus_is_scikit_learns_bit_for_bit(n, dim, k, duplicates):
    from sklearn.cluster import KMeans
    from sklearn.cluster._kmeans import _kmeans_plusplus

    from staticvec.evaluate.categorization import KMeansPlusPlus

    x = kmeans_data(n, dim, seed=n, duplicates=duplicates)
    x -= x.mean(axis=0)
    ours = KMeansPlusPlus()
    for seed in (0, 7):
        theirs, _ = _kmeans_plusplus(x, k, x_squared_norms=(x * x).sum(1), sample_weight=np.ones(n, np.float32),
                                     random_state=np.random.RandomState(seed))
        mine = ours(x, k, random_state=np.random.RandomState(seed))
        assert mine.dtype == np.float32 and mine.tobytes() == theirs.tobytes()
    # the whole fit: 10 seedings from one random stream, Lloyd, the best inertia
    x = kmeans_data(n, dim, seed=n + 1, duplicates=duplicates)
    for seed in (0, 3):
        reference = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(x)
        fitted = KMeans(n_clusters=k, n_init=10, random_state=seed, init=KMeansPlusPlus()).fit(x)
        assert np.array_equal(fitted.labels_, reference.labels_)
        assert fitted.cluster_centers_.tobytes() == reference.cluster_centers_.tobytes()
        assert fitted.inertia_ == reference.inertia_


@pytest.mark.parametrize("n_x, n_y, dim", [(1, 900, 300), (5, 2000, 30), (3, 7000, 2000), (1000, 1500, 20)])
def test_kmeans_plusplus_distances_are_scikit_learns(n_x, n_y, dim):
    # (3, 7000, 2000): large enough that the chunk size leaves scikit-learn's 10 MiB floor
    from sklearn.metrics.pairwise import _euclidean_distances

    from staticvec.evaluate.categorization import KMeansPlusPlus

    y = kmeans_data(n_y, dim, seed=dim) * 3
    x = kmeans_data(n_x, dim, seed=dim + 1)
    x[: (n_x + 1) // 2] = y[:: 2][: (n_x + 1) // 2]  # rows of the data itself, as k-means++'s candidates:
    seeding = KMeansPlusPlus()  # distance ~0 by cancellation, clipped at 0
    theirs = _euclidean_distances(x, y, Y_norm_squared=(y * y).sum(1), squared=True)
    assert seeding.squared_distances(x, y).tobytes() == theirs.tobytes()
    assert seeding.squared_distances(x, y).tobytes() == theirs.tobytes()  # from the cached chunks


def test_kmeans_plusplus_refuses_data_it_does_not_reproduce():
    from staticvec.evaluate.categorization import KMeansPlusPlus

    with pytest.raises(ValueError, match="float32"):
        KMeansPlusPlus()(np.zeros((4, 3)), 2, np.random.RandomState(0))
