r"""Retrofitting word vectors to a lexicon graph: one sparse solver, two weightings.

Both methods move each word ``i`` that has neighbours in the lexicon towards its neighbours
while keeping it close to its original vector :math:`\hat q_i`:

.. math::  q_i \leftarrow \frac{\alpha\,\hat q_i + \sum_j B_{ij}\, q_j}{\alpha + \sum_j B_{ij}}

- **Faruqui et al. (2015)**: :math:`B_{ij} = \beta/\deg(i)`; with the paper's α = 1, β = 1 this
  is ``(deg·q̂_i + Σ_j q_j) / (2·deg)``, the released ``retrofit.py`` update.
- **Context-to-Vec (Zheng et al., 2022)**: :math:`B_{ij} = \beta\,\gamma_{ij}` with the
  Student-t kernel :math:`\gamma_{ij} \propto (1 + d_{ij}^2/(\sigma\nu))^{-(\nu+1)}` normalised
  over i's neighbours (:func:`student_t_weights`); with α = β = 0.5 this is
  ``0.5·q̂_i + 0.5·Σ_j γ_ij q_j``, the released ``retrofit_tsne.py`` update. The weights depend
  on the vectors and are recomputed at every update. ``distance="original"`` (released code)
  measures :math:`d_{ij} = \lVert \hat q_i - q_j\rVert` from i's *original* vector to the
  neighbour's *current* one; ``"current"`` uses i's current vector instead (the paper's eq. 13
  writes :math:`q_i`, which does not say which).

The paper's eq. 10 writes the Student-t update without the denominator; with normalised weights
and α + β = 1 (the defaults) the two are identical. We keep the denominator so that the update
is, for every α and β, the exact minimiser over :math:`q_i` of word i's own terms
:math:`\alpha\lVert q_i-\hat q_i\rVert^2 + \sum_j B_{ij}\lVert q_i - q_j\rVert^2`. Words without a
neighbour in the vocabulary keep their vector.

**What the iteration converges to.** With constant weights (Faruqui) the update is linear and
its fixed point solves :math:`(D_\alpha + D_B - B)\,Q = D_\alpha \hat Q`, with
:math:`D_B = \mathrm{diag}(\sum_j B_{ij})`. This matrix is strictly diagonally dominant
(α > 0), so Jacobi and Gauss-Seidel sweeps both converge to it, geometrically, at rate at most
β/(α+β) per sweep in the max norm (1/2 for both methods' defaults: 10 sweeps leave an error
below 2^-10 of the initial distance). It is *not* the minimiser of the papers' objective
:math:`\Psi = \sum_i \alpha\lVert q_i-\hat q_i\rVert^2 + \sum_{i,j} B_{ij}\lVert q_i-q_j\rVert^2`:
setting Ψ's gradient to zero gives :math:`(D_\alpha + D_B + D_{B^\top} - B - B^\top)\,Q =
D_\alpha\hat Q`, because every edge term also pulls on :math:`q_j`. In general the fixed
point is the point where every word minimises its own terms given its neighbours; when ``B``
is symmetric (β/deg is symmetric only when linked words have equal degrees) it is exactly the
minimiser of Ψ with every edge weight halved (each undirected edge counted once). That fixed
point is what both released codes compute, so it is what we compute
(``tests/test_post_retrofit.py`` checks all of this on small graphs).

**Jacobi or Gauss-Seidel.** The released scripts update words one at a time in place
(Gauss-Seidel, in Python's arbitrary ``set`` order). ``solver="jacobi"`` (default) updates all
words from the previous sweep with one sparse matrix product: seconds for a 100k-word
vocabulary. ``solver="gauss-seidel"`` reproduces the in-place sweep exactly, for the order
"one colour class after another" of a colouring of the graph (:func:`colour_classes`): words of
one class share no edge, so each class is updated at once from the current vectors, which is
what a word-by-word loop in that order computes. Both reach the same fixed point.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger(__name__)

METHODS = ("faruqui", "student-t")
SOLVERS = ("jacobi", "gauss-seidel")
DISTANCES = ("original", "current")
DEFAULT_WEIGHTS = {"faruqui": (1.0, 1.0), "student-t": (0.5, 0.5)}  # (alpha, beta) of each paper
_CHUNK = 1 << 16  # edges per block when computing edge distances (bounds memory)


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows divided by ``sqrt(‖v‖² + 1e-6)``, as both released scripts do on read (zero rows stay 0)."""
    vectors = np.asarray(vectors)
    return vectors / np.sqrt(np.einsum("ij,ij->i", vectors, vectors) + 1e-6)[:, None]


# ------------------------------------------------------------------ Student-t weights


def student_t_kernel(sq_dist: np.ndarray, nu: float = 100.0, sigma: float = 1.0, as_log: bool = False) -> np.ndarray:
    r"""Context-to-Vec's kernel :math:`(1 + d^2/(\sigma\nu))^{-(\nu+1)}` of squared distances.

    The paper's eq. 11 multiplies it by :math:`C_\nu = 2\pi(\Gamma(\frac{\nu+1}2)/(\sqrt{\nu\pi}
    \Gamma(\frac\nu2)))^2` (the square of the Student-t density, hence the exponent −(ν+1));
    the constant cancels when the weights are normalised over a word's neighbours, so it is
    left out. ``as_log=True`` returns the logarithm (no underflow for far neighbours).
    """
    out = -(nu + 1.0) * np.log1p(np.asarray(sq_dist, dtype=np.float64) / (sigma * nu))
    return out if as_log else np.exp(out)


def edge_sq_distances(centres: np.ndarray, neighbours: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``‖centres[rows[e]] − neighbours[cols[e]]‖²`` for every edge ``e``, in blocks of edges."""
    out = np.empty(len(rows), dtype=np.float64)
    for start in range(0, len(rows), _CHUNK):
        stop = start + _CHUNK
        diff = centres[rows[start:stop]] - neighbours[cols[start:stop]]
        out[start:stop] = np.einsum("ij,ij->i", diff, diff)
    return out


def student_t_weights(graph, centres: np.ndarray, neighbours: np.ndarray, nu: float = 100.0, sigma: float = 1.0):
    """The graph with each edge ``(i, j)`` weighted by the Student-t kernel of
    ``‖centres[i] − neighbours[j]‖``, normalised to sum to 1 over each row's edges."""
    graph = graph.tocsr()
    counts = np.diff(graph.indptr)
    rows = np.repeat(np.arange(graph.shape[0]), counts)
    logk = student_t_kernel(edge_sq_distances(centres, neighbours, rows, graph.indices), nu, sigma, as_log=True)
    weights = np.exp(logk - _segment_reduce(np.maximum, logk, graph.indptr, counts))  # max-shifted: no underflow
    weights /= _segment_reduce(np.add, weights, graph.indptr, counts)
    out = graph.copy()
    out.data = weights
    return out


def _segment_reduce(ufunc, values: np.ndarray, indptr: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``ufunc`` over each CSR row's values, broadcast back to the row's entries."""
    nonempty = counts > 0
    if not nonempty.any():
        return values
    return np.repeat(ufunc.reduceat(values, indptr[:-1][nonempty]), counts[nonempty])


# ------------------------------------------------------------------ Gauss-Seidel order


def colour_classes(graph, seed: int = 0) -> list[np.ndarray]:
    """Split the nodes with out-edges (the words retrofitting updates) into classes with no edge
    (either direction) between two nodes of one class.

    Rounds of Luby's independent-set selection, vectorised: a node joins the current class when
    its random priority beats those of all its uncoloured neighbours. Classes are returned in
    order; updating them one after another is a Gauss-Seidel sweep in that order. Nodes without
    out-edges never change, so they constrain nothing and are left out.
    """
    from scipy import sparse

    graph = graph.tocsr()
    nodes = np.flatnonzero(np.diff(graph.indptr) > 0)
    sym = (graph + graph.T).tocsr()[nodes][:, nodes].tocsr()
    sym.setdiag(0)
    sym.eliminate_zeros()
    sym.data[:] = 1.0  # a pattern: edges in both directions must not count twice
    priority = np.random.default_rng(seed).permutation(len(nodes)) + 1.0
    remaining = np.ones(len(nodes), dtype=bool)
    classes = []
    while remaining.any():
        live = np.where(remaining, priority, 0.0)
        best_neighbour = (sym @ sparse.diags(live)).max(axis=1).toarray().ravel()
        chosen = remaining & (priority > best_neighbour)
        classes.append(nodes[chosen])
        remaining &= ~chosen
    return classes


# ------------------------------------------------------------------ the solver


@dataclass
class RetrofitReport:
    """What a run did: sizes, and the largest change of any coordinate at each sweep."""

    words: int
    updated: int  # words with at least one neighbour in the vocabulary
    edges: int
    classes: int = 0  # colour classes (Gauss-Seidel only)
    max_change: list = field(default_factory=list)


def retrofit(
    vectors: np.ndarray,
    graph,
    method: str = "faruqui",
    alpha: float | None = None,
    beta: float | None = None,
    iterations: int = 10,
    solver: str = "jacobi",
    nu: float = 100.0,
    sigma: float = 1.0,
    distance: str = "original",
    seed: int = 0,
    return_report: bool = False,
):
    """Retrofit ``vectors`` (n × d, used as given: normalise first if wanted) to ``graph``.

    ``graph`` is an n × n sparse matrix whose row i has non-zeros at i's neighbours (see
    :func:`staticvec.post.lexicon.lexicon_graph`; values are ignored, self-loops dropped).
    ``alpha``/``beta`` default to the method's paper values (Faruqui 1, 1; Student-t 0.5, 0.5).
    Returns the retrofitted matrix (float64 if the input is, else float32), and with
    ``return_report`` a :class:`RetrofitReport` too.
    """
    from scipy import sparse

    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if distance not in DISTANCES:
        raise ValueError(f"distance must be one of {DISTANCES}, got {distance!r}")
    default_alpha, default_beta = DEFAULT_WEIGHTS[method]
    alpha = default_alpha if alpha is None else float(alpha)
    beta = default_beta if beta is None else float(beta)
    if alpha <= 0 or beta < 0:
        raise ValueError(f"need alpha > 0 and beta >= 0, got alpha={alpha}, beta={beta}")
    if nu <= 0 or sigma <= 0:
        raise ValueError(f"need nu > 0 and sigma > 0, got nu={nu}, sigma={sigma}")
    vectors = np.asarray(vectors)
    n = vectors.shape[0]
    if graph.shape != (n, n):
        raise ValueError(f"graph of shape {graph.shape} for {n} vectors")

    # Only the words in the graph ever change: work on them alone (a large vocabulary costs nothing).
    adjacency = graph.tocsr().astype(np.float64)
    adjacency.setdiag(0)
    adjacency.eliminate_zeros()
    adjacency.sum_duplicates()
    adjacency.data[:] = 1.0
    updated = np.flatnonzero(np.diff(adjacency.indptr) > 0)
    report = RetrofitReport(words=n, updated=len(updated), edges=int(adjacency.nnz))
    if solver == "jacobi":
        blocks = [updated]  # one block: every word from the previous sweep
    else:
        blocks = colour_classes(adjacency, seed=seed)
        report.classes = len(blocks)
    # Rows in block order, then the neighbours that are never updated: every block is a slice.
    order = np.concatenate([*blocks, np.setdiff1d(adjacency.indices, updated)]).astype(np.int64)
    bounds = np.cumsum([0, *map(len, blocks)])
    sub = adjacency[order][:, order].tocsr()
    dtype = np.float64 if vectors.dtype == np.float64 else np.float32
    original = vectors[order].astype(dtype)
    current = original.copy()
    # new = (alpha * q̂ + B q) / (alpha + beta): B's rows sum to beta in both weightings.
    anchor = original * (alpha / (alpha + beta))
    patterns = [sub[start:stop] for start, stop in zip(bounds[:-1], bounds[1:])]
    if method == "faruqui":  # constant weights beta/deg(i), scaled by 1/(alpha+beta)
        scale = beta / (alpha + beta)
        fixed = [(sparse.diags(scale / np.diff(p.indptr)) @ p).astype(dtype) for p in patterns]

    for sweep in range(iterations):
        change = 0.0
        for b, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
            if method == "faruqui":
                weights = fixed[b]
            else:
                centres = (original if distance == "original" else current)[start:stop]
                weights = student_t_weights(patterns[b], centres, current, nu, sigma)
                weights.data *= beta / (alpha + beta)
                weights = weights.astype(dtype)
            new = weights @ current
            new += anchor[start:stop]
            change = max(change, float(np.abs(new - current[start:stop]).max(initial=0.0)))
            current[start:stop] = new
        report.max_change.append(change)
        log.info("retrofit %s sweep %d/%d (%s): largest coordinate change %.3g", method, sweep + 1, iterations, solver, change)

    out = np.array(vectors, dtype=dtype, copy=True)
    out[order] = current
    return (out, report) if return_report else out


def retrofit_embeddings(embeddings, lexicon, lowercase: bool = True, normalize: bool = True, **options):
    """Retrofit an :class:`~staticvec.embeddings.Embeddings` to a lexicon (head -> neighbours).

    As both released scripts read their input: ``lowercase`` lower-cases the words (keeping the
    first, i.e. most frequent, of words that collide) and ``normalize`` L2-normalises every
    vector first. ``options`` go to :func:`retrofit`. Returns the new embeddings (every word,
    retrofitted or not) and a :class:`RetrofitReport`.
    """
    from staticvec.embeddings import Embeddings
    from staticvec.post.lexicon import lexicon_graph

    if lowercase:
        embeddings = embeddings.lowercased()
    vectors = normalize_rows(embeddings.vectors) if normalize else embeddings.vectors
    graph = lexicon_graph(lexicon, embeddings.index, len(embeddings))
    out, report = retrofit(vectors, graph, return_report=True, **options)
    return Embeddings(embeddings.words, out, embeddings.counts), report
