"""Retrofitting: closed-form fixed points, Student-t weights, Gauss-Seidel vs Jacobi, released updates."""

import math

import numpy as np
import pytest
from scipy import sparse, special, stats

from staticvec.embeddings import Embeddings
from staticvec.post.retrofit import (
    colour_classes,
    normalize_rows,
    retrofit,
    retrofit_embeddings,
    student_t_kernel,
    student_t_weights,
)


def random_graph(n=10, p=0.3, seed=0, symmetric=False, isolated=(3,)):
    rng = np.random.default_rng(seed)
    a = (rng.random((n, n)) < p).astype(float)
    if symmetric:
        a = np.maximum(a, a.T)
    np.fill_diagonal(a, 0)
    for i in isolated:  # a word without neighbours (it may still be someone's neighbour)
        a[i] = 0
        if symmetric:
            a[:, i] = 0
    return a


def fixed_point(a, x, alpha, beta):
    """Fixed point of q_i = (alpha q̂_i + sum_j B_ij q_j)/(alpha + sum_j B_ij), B_ij = beta a_ij/deg_i."""
    deg = a.sum(1)
    b = beta * a / np.maximum(deg, 1)[:, None]
    m = np.diag(np.where(deg > 0, alpha + b.sum(1), 1.0)) - b
    rhs = np.where(deg[:, None] > 0, alpha * x, x)
    return np.linalg.solve(m, rhs)


@pytest.mark.parametrize("solver", ["jacobi", "gauss-seidel"])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (2.0, 0.5)])
def test_faruqui_converges_to_closed_form_fixed_point(solver, alpha, beta):
    a = random_graph(seed=1)
    x = np.random.default_rng(2).normal(size=(10, 4))
    got = retrofit(x, sparse.csr_matrix(a), method="faruqui", alpha=alpha, beta=beta, iterations=200, solver=solver)
    np.testing.assert_allclose(got, fixed_point(a, x, alpha, beta), atol=1e-12)
    np.testing.assert_array_equal(got[3], x[3])  # no neighbours: unchanged


def test_fixed_point_minimises_objective_with_halved_symmetric_weights():
    """Symmetric weights B (here a symmetric lexicon whose words all have degree 4, so that
    B_ij = 1/deg_i = B_ji): the update's fixed point is the minimiser of
    sum_i alpha||q_i - q̂_i||² + 1/2 sum_ij B_ij ||q_i - q_j||², not of the objective with full B."""
    a = np.zeros((10, 10))
    for i in range(10):
        a[i, [(i + 1) % 10, (i - 1) % 10, (i + 3) % 10, (i - 3) % 10]] = 1
    x = np.random.default_rng(4).normal(size=(10, 3))
    alpha, beta = 1.0, 1.0
    q = retrofit(x, sparse.csr_matrix(a), alpha=alpha, beta=beta, iterations=300)
    deg = a.sum(1)
    b = beta * a / np.maximum(deg, 1)[:, None]
    alphas = np.where(deg > 0, alpha, 1.0)

    def gradient(q, edge_scale):  # of sum alpha||q-q̂||² + edge_scale * sum_ij b_ij ||q_i-q_j||²
        edge = (b.sum(1) + b.sum(0))[:, None] * q - (b + b.T) @ q
        return 2 * alphas[:, None] * (q - x) + 2 * edge_scale * edge

    np.testing.assert_allclose(gradient(q, 0.5), 0, atol=1e-12)
    assert np.abs(gradient(q, 1.0)).max() > 1e-2  # the full objective's minimiser is elsewhere


def test_directional_fixed_point_is_not_the_objective_minimiser():
    a = random_graph(seed=5)
    assert not np.array_equal(a, a.T)
    x = np.random.default_rng(6).normal(size=(10, 3))
    q = retrofit(x, sparse.csr_matrix(a), iterations=300)
    deg = a.sum(1)
    b = a / np.maximum(deg, 1)[:, None]
    # Each word minimises its own terms given its neighbours: (q_i - q̂_i) + sum_j b_ij (q_i - q_j) = 0.
    own = np.where(deg[:, None] > 0, (q - x) + b.sum(1)[:, None] * q - b @ q, 0)
    np.testing.assert_allclose(own, 0, atol=1e-12)
    # The minimiser of the objective solves (D_a + D_b + D_bᵀ - B - Bᵀ) Q = Q̂ instead.
    m = np.eye(10) + np.diag(b.sum(1) + b.sum(0)) - b - b.T
    assert np.abs(np.linalg.solve(m, x) - q).max() > 1e-3


def test_one_sweep_is_the_released_faruqui_update():
    a = random_graph(seed=7)
    x = np.random.default_rng(8).normal(size=(10, 5))
    got = retrofit(x, sparse.csr_matrix(a), iterations=1)
    for i in range(10):
        nbrs = np.flatnonzero(a[i])
        expected = x[i] if len(nbrs) == 0 else (len(nbrs) * x[i] + x[nbrs].sum(0)) / (2 * len(nbrs))
        np.testing.assert_allclose(got[i], expected, atol=1e-14)


def test_student_t_kernel_matches_the_formula_and_the_t_density():
    d = np.array([0.0, 0.5, 1.0, 2.0])
    for nu, sigma in [(1.0, 1.0), (1.0, 2.0), (100.0, 1.0), (5.0, 0.3)]:
        k = student_t_kernel(d**2, nu, sigma)
        np.testing.assert_allclose(k, (1 + d**2 / (sigma * nu)) ** (-(nu + 1)), rtol=1e-12)
        # The paper's gamma_ij = C_nu (1 + d²/(sigma nu))^-(nu+1) is the squared t density (scale √sigma) up to a constant.
        c_nu = 2 * math.pi * (special.gamma((nu + 1) / 2) / (math.sqrt(nu * math.pi) * special.gamma(nu / 2))) ** 2
        density_sq = stats.t.pdf(d, df=nu, scale=math.sqrt(sigma)) ** 2
        np.testing.assert_allclose(density_sq / (c_nu * k), (density_sq / (c_nu * k))[0], rtol=1e-9)
    # Hand values: nu = 1, sigma = 1: (1 + d²)^-2.
    np.testing.assert_allclose(student_t_kernel(np.array([0.0, 1.0, 4.0]), 1.0, 1.0), [1.0, 0.25, 1 / 25])


def test_student_t_weights_normalised_over_neighbours():
    centres = np.array([[0.0, 0.0], [10.0, 10.0]])
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [10.0, 11.0]])
    pattern = sparse.csr_matrix(np.array([[0, 1, 1, 0], [1, 0, 0, 1.0]]))
    w = student_t_weights(pattern, centres, points, nu=1.0, sigma=1.0).toarray()
    np.testing.assert_allclose(w[0], np.array([0, 0.25, 1 / 25, 0]) / (0.25 + 1 / 25))
    far = (1 + 200.0) ** -2
    np.testing.assert_allclose(w[1], np.array([far, 0, 0, 0.25]) / (far + 0.25))
    # Far neighbours in high dimension: no underflow to 0/0 (the log-domain shift keeps them finite).
    w = student_t_weights(sparse.csr_matrix(np.ones((1, 2))), np.zeros((1, 1)), np.array([[1e3], [2e3]]), nu=100.0).toarray()
    assert np.isfinite(w).all() and w.sum() == pytest.approx(1.0)


def test_student_t_sweep_uses_original_centre_and_current_neighbours():
    """One Jacobi sweep by hand; then a second sweep, where the two distance choices differ."""
    a = np.array([[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 0]], dtype=float)
    x = np.random.default_rng(9).normal(size=(4, 3))
    nu, sigma = 3.0, 0.5

    def step(q, centres):
        new = q.copy()
        for i in range(4):
            nbrs = np.flatnonzero(a[i])
            if len(nbrs):
                k = (1 + ((centres[i] - q[nbrs]) ** 2).sum(1) / (sigma * nu)) ** (-(nu + 1))
                new[i] = 0.5 * x[i] + 0.5 * (k / k.sum()) @ q[nbrs]
        return new

    one = step(x, x)
    np.testing.assert_allclose(retrofit(x, sparse.csr_matrix(a), "student-t", iterations=1, nu=nu, sigma=sigma), one, atol=1e-14)
    g = sparse.csr_matrix(a)
    original = retrofit(x, g, "student-t", iterations=2, nu=nu, sigma=sigma, distance="original")
    current = retrofit(x, g, "student-t", iterations=2, nu=nu, sigma=sigma, distance="current")
    np.testing.assert_allclose(original, step(one, x), atol=1e-14)
    np.testing.assert_allclose(current, step(one, one), atol=1e-14)
    assert np.abs(original - current).max() > 1e-6


def released_loop(vectors, neighbours, order, method, iterations, nu=100.0):
    """The released scripts' in-place loops, transcribed (with their constants) for a given order."""
    original = vectors.copy()
    new = vectors.copy()
    gamma = special.gamma((nu + 1) / 2) / (math.sqrt(nu * math.pi) * special.gamma(nu / 2))
    for _ in range(iterations):
        for i in order:
            nbrs = neighbours[i]
            if not nbrs:
                continue
            if method == "faruqui":
                vec = len(nbrs) * original[i]
                for j in nbrs:
                    vec = vec + new[j]
                new[i] = vec / (2 * len(nbrs))
            else:
                d2 = ((original[i] - new[nbrs]) ** 2).sum(1)
                p = (gamma * (1 + d2 / nu) ** (-(nu + 1) / 2) * math.sqrt(2 * 3.14)) ** 2
                p = p / p.sum()
                new[i] = ((p[:, None] * new[nbrs]).sum(0) + original[i]) / 2
    return new


@pytest.mark.parametrize("method", ["faruqui", "student-t"])
def test_gauss_seidel_is_the_released_in_place_loop(method):
    a = random_graph(n=30, p=0.15, seed=10, isolated=(0, 7))
    x = normalize_rows(np.random.default_rng(11).normal(size=(30, 6)))
    g = sparse.csr_matrix(a)
    classes = colour_classes(g, seed=4)
    neighbours = [list(np.flatnonzero(row)) for row in a]
    expected = released_loop(x, neighbours, np.concatenate(classes), method, iterations=3, nu=2.0 if method == "student-t" else 100.0)
    got = retrofit(x, g, method, iterations=3, solver="gauss-seidel", seed=4, nu=2.0)
    np.testing.assert_allclose(got, expected, atol=1e-13)
    # Jacobi is a different iteration: it differs after a few sweeps but not at the fixed point.
    assert np.abs(retrofit(x, g, method, iterations=3, nu=2.0) - got).max() > 1e-6


def test_colour_classes_are_independent_sets_covering_updated_words():
    a = random_graph(n=60, p=0.1, seed=12, isolated=(5, 6))
    classes = colour_classes(sparse.csr_matrix(a), seed=1)
    covered = np.sort(np.concatenate(classes))
    np.testing.assert_array_equal(covered, np.flatnonzero(a.sum(1) > 0))
    for rows in classes:
        assert a[np.ix_(rows, rows)].sum() == 0


def test_student_t_jacobi_and_gauss_seidel_reach_the_same_fixed_point():
    a = random_graph(n=25, p=0.2, seed=13)
    x = normalize_rows(np.random.default_rng(14).normal(size=(25, 5)))
    g = sparse.csr_matrix(a)
    jac = retrofit(x, g, "student-t", iterations=200, nu=2.0)
    gs, report = retrofit(x, g, "student-t", iterations=200, nu=2.0, solver="gauss-seidel", return_report=True)
    assert report.max_change[-1] < 1e-13
    np.testing.assert_allclose(jac, gs, atol=1e-12)


def test_graph_values_duplicates_and_self_loops_are_ignored():
    a = random_graph(seed=15)
    x = np.random.default_rng(16).normal(size=(10, 3))
    noisy = sparse.coo_matrix(a * 3.0)  # weights are ignored
    rows, cols = np.nonzero(a)
    extra = sparse.coo_matrix((np.ones(len(rows) + 10), (np.r_[rows, np.arange(10)], np.r_[cols, np.arange(10)])), shape=(10, 10))
    for g in (noisy, (noisy + extra).tocsr()):
        np.testing.assert_allclose(retrofit(x, g, iterations=4), retrofit(x, sparse.csr_matrix(a), iterations=4), atol=1e-14)


@pytest.mark.parametrize("solver", ["jacobi", "gauss-seidel"])
def test_empty_graph_changes_nothing(solver):
    x = np.arange(6.0).reshape(3, 2)
    for method in ("faruqui", "student-t"):
        np.testing.assert_array_equal(retrofit(x, sparse.csr_matrix((3, 3)), method, solver=solver), x)


def test_float32_input_gives_float32_close_to_float64():
    a = random_graph(seed=17)
    x = np.random.default_rng(18).normal(size=(10, 4))
    out32 = retrofit(x.astype(np.float32), sparse.csr_matrix(a), "student-t")
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, retrofit(x, sparse.csr_matrix(a), "student-t"), atol=1e-5)


def test_bad_hyper_parameters_are_rejected():
    g = sparse.csr_matrix(np.zeros((2, 2)))
    x = np.zeros((2, 2))
    with pytest.raises(ValueError, match="alpha"):
        retrofit(x, g, alpha=0.0)
    with pytest.raises(ValueError, match="nu"):
        retrofit(x, g, "student-t", nu=-1)
    with pytest.raises(ValueError, match="method"):
        retrofit(x, g, "mean")
    with pytest.raises(ValueError, match="graph of shape"):
        retrofit(np.zeros((3, 2)), g)


def test_retrofit_embeddings_lowercases_normalises_and_keeps_every_word():
    words = ["Car", "auto", "car", "banana", "zebra"]
    vectors = np.array([[3.0, 0], [0, 2.0], [1.0, 1.0], [5.0, 5.0], [0, 0]])
    emb = Embeddings(words, vectors)
    lexicon = {"car": ["auto", "truck"], "auto": ["car"], "truck": ["car"]}
    out, report = retrofit_embeddings(emb, lexicon, iterations=1)
    assert out.words == ["car", "auto", "banana", "zebra"]  # "Car" (first) wins over "car"
    unit = vectors / np.sqrt((vectors**2).sum(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(out["car"], (unit[0] + unit[1]) / 2, atol=1e-6)
    np.testing.assert_allclose(out["auto"], (unit[1] + unit[0]) / 2, atol=1e-6)
    np.testing.assert_allclose(out["banana"], unit[3], atol=1e-6)
    np.testing.assert_array_equal(out["zebra"], [0, 0])
    assert (report.updated, report.edges) == (2, 2)
    raw, _ = retrofit_embeddings(emb, lexicon, lowercase=False, normalize=False, iterations=1)
    np.testing.assert_allclose(raw["car"], (vectors[2] + vectors[1]) / 2)
    np.testing.assert_allclose(raw["Car"], vectors[0])
