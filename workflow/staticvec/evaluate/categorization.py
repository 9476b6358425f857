"""Concept categorization: cluster the words into the gold number of classes, report purity.

Protocol of the ``web`` benchmarks (``evaluate_categorization(method="all")``), which the papers use:

- the items' unit vectors (``mean`` policy: a missing word is the mean vector; ``drop``: it is
  left out and the number of clusters is the number of gold classes still present) are put in a
  random order (``RandomState(seed).choice(n, n, replace=False)``, as ``web``), then clustered
  into k = number of gold classes clusters by
  agglomerative clustering with Ward linkage on Euclidean distance, with average and complete
  linkage on cosine and on Euclidean distance (5 runs), and by k-means
  (``sklearn.cluster.KMeans(n_clusters=k, n_init=10, random_state=seed)``);
- purity = (1/n) Σ_clusters max_class |cluster ∩ class| of each clustering;
- the reported score is the *best* purity of the six (``method="all"``; an optimistic choice made
  on the test data itself, as ``web`` does). ``method="agglomerative"`` takes the best of the
  five agglomerative runs, ``method="kmeans"`` the k-means one; every run's purity is in the
  result under ``methods``.

Agglomerative clustering is computed with SciPy's ``linkage`` on a distance matrix obtained
from one Gram matrix (``web`` calls scikit-learn's ``AgglomerativeClustering``, which merges the
same pairs; only exact ties could be broken differently), and the tree is cut after n − k merges.
``web`` passes no seed (its scores vary from run to run); ours is ``seed`` (default 0).

k-means is scikit-learn's ``KMeans`` with its own Lloyd iterations; only the k-means++ seeding is
ours (``KMeansPlusPlus``, passed as ``init``): the same draws and the same arithmetic, with the
float64 copy of the data and its squared norms made once per fit instead of once per candidate
draw (scikit-learn re-makes them in every distance call: two thirds of k-means' time on Battig).
"""

from __future__ import annotations

import warnings

import numpy as np

from staticvec.evaluate.datasets import CategorizationData
from staticvec.evaluate.lookup import VectorLookup

METHODS = ("all", "agglomerative", "kmeans")
AGGLOMERATIVE_RUNS = (
    ("ward", "euclidean"),
    ("average", "cosine"),
    ("complete", "cosine"),
    ("average", "euclidean"),
    ("complete", "euclidean"),
)


def purity(true_labels, predicted) -> float:
    """Fraction of items whose cluster's majority class is their class."""
    _, t = np.unique(np.asarray(true_labels), return_inverse=True)
    _, p = np.unique(np.asarray(predicted), return_inverse=True)
    table = np.zeros((p.max() + 1, t.max() + 1), dtype=np.int64)
    np.add.at(table, (p, t), 1)
    return float(table.max(axis=1).sum() / len(t))


def cut_tree(linkage_matrix: np.ndarray, n: int, k: int) -> np.ndarray:
    """Cluster labels after the first n - k merges of a SciPy linkage matrix (exactly k clusters)."""
    parent = np.arange(2 * n - 1)

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for step in range(n - k):
        left, right = int(linkage_matrix[step, 0]), int(linkage_matrix[step, 1])
        parent[find(left)] = n + step
        parent[find(right)] = n + step
    roots = np.array([find(i) for i in range(n)])
    return np.unique(roots, return_inverse=True)[1]


def distances(x: np.ndarray) -> dict[str, np.ndarray]:
    """Condensed cosine and Euclidean distance matrices of the rows of ``x`` from one Gram matrix.

    Condensed order as SciPy's ``squareform`` (the upper triangle row by row). Each entry is the
    same floating-point expression as on the full matrix (``(g_ij * -2 + sq_i) + sq_j`` then
    ``sqrt(max(., 0))``; ``max(1 - (g_ij * inv_i) * inv_j, 0)``), evaluated on the upper triangle
    only, row by row: no n x n copies, half the arithmetic, and bit for bit the values of the full
    matrices (tests/test_evaluate_categorization.py compares with the full-matrix computation).
    """
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    gram = x @ x.T
    sq = np.diag(gram).copy()
    norms = np.sqrt(sq)
    inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)  # zero vector: cosine 0
    size = n * (n - 1) // 2
    euclidean = np.empty(size)
    cosine = np.empty(size)
    start = 0
    for i in range(n - 1):
        g = gram[i, i + 1 :]
        stop = start + len(g)
        e = euclidean[start:stop]
        np.multiply(g, -2.0, out=e)
        e += sq[i]
        e += sq[i + 1 :]
        c = cosine[start:stop]
        np.multiply(g, inverse[i], out=c)
        c *= inverse[i + 1 :]
        start = stop
    np.maximum(euclidean, 0.0, out=euclidean)
    np.sqrt(euclidean, out=euclidean)
    np.subtract(1.0, cosine, out=cosine)
    np.maximum(cosine, 0.0, out=cosine)
    return {"cosine": cosine, "euclidean": euclidean}


class KMeansPlusPlus:
    """scikit-learn's k-means++ seeding (``sklearn.cluster._kmeans._kmeans_plusplus``, unit weights)
    as a ``KMeans(init=...)`` callable, bit for bit, for float32 data.

    For float32 data scikit-learn computes each distance to the candidate centres in float64 on
    chunks of the data (``_euclidean_distances_upcast``): every call converts each chunk to float64
    and recomputes its squared norms, i.e. the whole data set once per candidate draw — k × n_init
    times per fit. Here the chunks (same slices, same conversions, same ``row_norms``) are made once
    for the data array ``KMeans`` passes to all its ``n_init`` seedings, and each distance is the
    same expression on the same operands (``-2 * (x_chunk @ y_chunk.T) + xx + yy`` in float64, cast
    to float32, clipped at 0). The random draws are scikit-learn's, in its order.
    tests/test_evaluate_categorization.py compares centres, labels and distances with
    scikit-learn's own path, so a change there is caught rather than followed silently.
    """

    def __init__(self):
        self._data = None
        self._chunks = None
        self._batch = None

    @staticmethod
    def batch_size(n_x: int, n_y: int, n_features: int) -> int:
        """``_euclidean_distances_upcast``'s chunk size for dense data (10 % more memory, ≥ 10 MiB)."""
        import math

        maxmem = max(((n_x + n_y) * n_features + n_x * n_y) / 10, 10 * 2**17)
        tmp = 2 * n_features
        return max(int((-tmp + math.sqrt(tmp**2 + 4 * maxmem)) / 2), 1)

    def _upcast_chunks(self, y: np.ndarray, batch: int) -> list:
        from sklearn.utils import gen_batches
        from sklearn.utils.extmath import row_norms

        if self._data is not y or self._batch != batch:
            chunks = []
            for piece in gen_batches(len(y), batch):
                y_chunk = y[piece, :].astype(np.float64)
                chunks.append((piece, y_chunk, row_norms(y_chunk, squared=True)[None, :]))
            self._data, self._batch, self._chunks = y, batch, chunks
        return self._chunks

    def squared_distances(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``sklearn.metrics.pairwise._euclidean_distances(x, y, squared=True)`` for float32 x, y."""
        from sklearn.utils import gen_batches
        from sklearn.utils.extmath import row_norms, safe_sparse_dot

        batch = self.batch_size(len(x), len(y), x.shape[1])
        out = np.empty((len(x), len(y)), dtype=np.float32)
        for x_piece in gen_batches(len(x), batch):
            x_chunk = x[x_piece, :].astype(np.float64)
            xx = row_norms(x_chunk, squared=True)[:, None]
            for y_piece, y_chunk, yy in self._upcast_chunks(y, batch):
                d = -2 * safe_sparse_dot(x_chunk, y_chunk.T, dense_output=True)
                d += xx
                d += yy
                out[x_piece, y_piece] = d.astype(np.float32, copy=False)
        np.maximum(out, np.float32(0), out=out)
        return out

    def __call__(self, x: np.ndarray, n_clusters: int, random_state) -> np.ndarray:
        if x.dtype != np.float32 or x.ndim != 2:
            raise ValueError(f"KMeansPlusPlus reproduces scikit-learn for 2-d float32 data, got {x.dtype} {x.shape}")
        n_samples = len(x)
        weight = np.ones(n_samples, dtype=x.dtype)  # KMeans' unit sample weights
        centers = np.empty((n_clusters, x.shape[1]), dtype=x.dtype)
        n_local_trials = 2 + int(np.log(n_clusters))
        center_id = random_state.choice(n_samples, p=weight / weight.sum())
        centers[0] = x[center_id]
        closest_dist_sq = self.squared_distances(x[center_id, np.newaxis], x)
        current_pot = closest_dist_sq @ weight
        for c in range(1, n_clusters):
            rand_vals = random_state.uniform(size=n_local_trials) * current_pot
            candidate_ids = np.searchsorted(np.cumsum(weight * closest_dist_sq), rand_vals)
            np.clip(candidate_ids, None, closest_dist_sq.size - 1, out=candidate_ids)
            distance_to_candidates = self.squared_distances(x[candidate_ids], x)
            np.minimum(closest_dist_sq, distance_to_candidates, out=distance_to_candidates)
            candidates_pot = distance_to_candidates @ weight.reshape(-1, 1)
            best = np.argmin(candidates_pot)
            current_pot = candidates_pot[best]
            closest_dist_sq = distance_to_candidates[best]
            centers[c] = x[candidate_ids[best]]
        return centers


def cluster(x: np.ndarray, k: int, method: str = "all", seed: int = 0) -> dict[str, np.ndarray]:
    """Cluster labels of each run of ``method`` (keys like ``ward_euclidean``, ``kmeans``)."""
    from scipy.cluster.hierarchy import linkage
    from sklearn.cluster import KMeans

    if method not in METHODS:
        raise ValueError(f"unknown clustering method {method!r}; known: {', '.join(METHODS)}")
    n = len(x)
    k = min(k, n)
    runs = {}
    if method in ("all", "agglomerative"):
        dist = distances(x)
        for link, metric in AGGLOMERATIVE_RUNS:
            tree = linkage(dist[metric], method=link)
            runs[f"{link}_{metric}"] = cut_tree(tree, n, k)
    if method in ("all", "kmeans"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # duplicate points (mean-vector OOVs) give fewer distinct clusters
            kmeans = KMeans(n_clusters=k, n_init=10, random_state=seed, init=KMeansPlusPlus())
            runs["kmeans"] = kmeans.fit_predict(np.asarray(x, dtype=np.float32))
    return runs


def evaluate_categorization(lookup: VectorLookup, data: CategorizationData, method: str = "all", seed: int = 0) -> dict:
    idx = lookup.indices(data.words)
    found = idx >= 0
    keep = found if lookup.oov == "drop" else np.ones_like(found)
    order = np.random.RandomState(seed).choice(len(idx), len(idx), replace=False)  # web's shuffle
    order = order[keep[order]]
    labels = np.asarray(data.labels, dtype=object)[order]
    result = {
        "task": "categorization",
        "metric": "purity",
        "score": None,
        "method": method,
        "found": int(found.sum()),
        "total": len(idx),
        "scored": len(order),
        "classes": len(set(data.labels)),
        "clusters": len(set(labels)),
    }
    if len(order) < 2 or len(set(labels)) < 2:
        return result
    runs = cluster(lookup.rows(idx[order]), len(set(labels)), method, seed)
    purities = {name: purity(labels, pred) for name, pred in runs.items()}
    result["score"] = max(purities.values())
    result["methods"] = purities
    return result
