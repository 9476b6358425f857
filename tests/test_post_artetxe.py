"""Artetxe et al. (2018): X·Q·Λ^α from the eigen-decomposition of XᵀX."""

import numpy as np
import pytest
from scipy import linalg

from staticvec.post.artetxe import ArtetxeTransform, alpha_grid, artetxe


@pytest.fixture
def x():
    rng = np.random.default_rng(0)
    return rng.normal(size=(50, 6)) @ np.diag([3.0, 2.0, 1.0, 0.5, 0.2, 0.1])


def test_alpha_zero_is_the_identity(x):
    np.testing.assert_allclose(artetxe(x, 0.0, basis="original"), x, atol=1e-12)
    y = artetxe(x, 0.0)  # eigen basis: a rotation of X, all inner products kept
    np.testing.assert_allclose(y @ y.T, x @ x.T, atol=1e-10)
    assert np.abs(y - x).max() > 1e-3


@pytest.mark.parametrize("alpha", [-1.0, -0.5, 0.25, 1.0])
def test_output_gram_is_eigenvalues_to_the_power_one_plus_two_alpha(x, alpha):
    eigenvalues = np.linalg.eigvalsh(x.T @ x)
    y = artetxe(x, alpha)
    # (X Q Λ^α)ᵀ (X Q Λ^α) = Λ^α Qᵀ XᵀX Q Λ^α = Λ^(1+2α): diagonal, columns in eigenvalue order
    np.testing.assert_allclose(y.T @ y, np.diag(eigenvalues ** (1 + 2 * alpha)), rtol=1e-8,
                               atol=1e-8 * eigenvalues.max() ** (1 + 2 * alpha))


def test_alpha_one_multiplies_by_the_second_moment_matrix(x):
    np.testing.assert_allclose(artetxe(x, 1.0, basis="original"), x @ (x.T @ x), rtol=1e-10)
    expected = x @ np.linalg.eigh(x.T @ x)[1] @ np.diag(np.linalg.eigvalsh(x.T @ x))
    np.testing.assert_allclose(artetxe(x, 1.0) ** 2, expected ** 2, rtol=1e-8)
    # alpha = 1/2 is the matrix square root; alpha = -1/2 whitens
    np.testing.assert_allclose(artetxe(x, 0.5, basis="original"), x @ linalg.sqrtm(x.T @ x).real, rtol=1e-8)
    white = artetxe(x, -0.5)
    np.testing.assert_allclose(white.T @ white, np.eye(6), atol=1e-10)


def test_float32_and_large_inputs_use_blocks(x, monkeypatch):
    import staticvec.post.artetxe as module

    monkeypatch.setattr(module, "_ROWS", 7)  # several blocks
    transform = ArtetxeTransform(x.astype(np.float32))
    np.testing.assert_allclose(transform.eigenvalues, np.linalg.eigvalsh(x.T @ x), rtol=1e-5)
    y = transform.transform(x.astype(np.float32), -0.3)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, artetxe(x, -0.3), rtol=1e-4, atol=1e-5)


def test_rank_deficient_input_gives_finite_output(x):
    x = x.copy()
    x[:, 5] = x[:, 0]  # rank 5: one zero eigenvalue
    for alpha in (-1.0, -0.5, 0.5):
        y = artetxe(x, alpha)
        assert np.isfinite(y).all()
        np.testing.assert_allclose(y[:, 0], 0, atol=1e-6)  # the null direction is dropped (pseudo-power)


def test_alpha_grid():
    grid = alpha_grid(-1.0, 1.0, 0.05)
    assert len(grid) == 41 and grid[0] == -1.0 and grid[-1] == 1.0 and 0.0 in grid and 0.35 in grid
    assert alpha_grid(-1, 1, 0.25) == [-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(ValueError):
        alpha_grid(1, -1, 0.1)
