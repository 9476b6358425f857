r"""Artetxe et al. (2018), "Uncovering divergent linguistic information in word embeddings".

With the eigen-decomposition :math:`X^\top X = Q \Lambda Q^\top` of the d × d second-moment
matrix of the embedding matrix X (n × d), the transformed embeddings are
:math:`X Q \Lambda^\alpha`: α > 0 stretches the directions of large variance (the paper finds
it favours relatedness), α < 0 shrinks them (similarity); α = −1/2 whitens. The released
``post-process.py`` (``artetxem/uncovec``) does exactly this, with no centring and no
normalisation, and its ``evaluate.sh`` sweeps α from −1 to 1 in steps of 0.05.

``basis="eigen"`` (paper and released code) returns :math:`X Q \Lambda^\alpha`, expressed in
the eigenvector basis; ``basis="original"`` rotates back, :math:`X Q \Lambda^\alpha Q^\top =
X (X^\top X)^\alpha`, so that α = 0 is exactly the identity. The two differ by a rotation
only, which no cosine-based evaluation sees. Powers of zero eigenvalues (a rank-deficient X)
are taken as 0 for α ≠ 0 (a pseudo-power) instead of the released code's inf/nan.

The workflow writes one embedding per α of the sweep (``post.artetxe`` in the config; a coarse
step by default, the paper's 0.05 at paper scale). Which α a table reports is the table's choice:
Context-to-Vec's Table 4 gives Artetxe et al.'s best, i.e. the α chosen on the evaluation sets
themselves, as Artetxe et al. report their whole curve.
"""

from __future__ import annotations

import numpy as np

BASES = ("eigen", "original")
_ROWS = 1 << 15  # rows per block when accumulating XᵀX and multiplying


class ArtetxeTransform:
    """The eigen-decomposition of XᵀX, computed once, applied for any α."""

    def __init__(self, vectors: np.ndarray):
        vectors = np.asarray(vectors)
        d = vectors.shape[1]
        gram = np.zeros((d, d), dtype=np.float64)
        for start in range(0, vectors.shape[0], _ROWS):  # float64 without a float64 copy of X
            block = vectors[start : start + _ROWS].astype(np.float64)
            gram += block.T @ block
        self.eigenvalues, self.eigenvectors = np.linalg.eigh(gram)  # ascending, as numpy gives them

    def matrix(self, alpha: float, basis: str = "eigen") -> np.ndarray:
        """The d × d map W with output X·W."""
        if basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}, got {basis!r}")
        values = self.eigenvalues
        if alpha == 0:
            power = np.ones_like(values)
        else:
            tolerance = max(values.max(), 0.0) * len(values) * np.finfo(np.float64).eps
            positive = values > tolerance
            power = np.zeros_like(values)
            power[positive] = values[positive] ** alpha
        w = self.eigenvectors * power[None, :]
        return w @ self.eigenvectors.T if basis == "original" else w

    def transform(self, vectors: np.ndarray, alpha: float, basis: str = "eigen") -> np.ndarray:
        """X·W in the input's float precision (float64 stays float64, anything else float32)."""
        vectors = np.asarray(vectors)
        dtype = np.float64 if vectors.dtype == np.float64 else np.float32
        w = self.matrix(alpha, basis).astype(dtype)
        out = np.empty(vectors.shape, dtype=dtype)
        for start in range(0, vectors.shape[0], _ROWS):
            out[start : start + _ROWS] = vectors[start : start + _ROWS].astype(dtype) @ w
        return out


def artetxe(vectors: np.ndarray, alpha: float, basis: str = "eigen") -> np.ndarray:
    """Artetxe et al.'s post-processing of ``vectors`` (n × d) with exponent ``alpha``."""
    return ArtetxeTransform(vectors).transform(vectors, alpha, basis)


def alpha_grid(start: float = -1.0, stop: float = 1.0, step: float = 0.05) -> list[float]:
    """The α values of a sweep, ``start`` to ``stop`` inclusive, rounded to 1e-6 (no float drift)."""
    if step <= 0 or stop < start:
        raise ValueError(f"need step > 0 and start <= stop, got {start}, {stop}, {step}")
    count = int(np.floor((stop - start) / step + 1e-9)) + 1
    return [round(start + k * step, 6) + 0.0 for k in range(count)]
