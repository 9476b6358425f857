"""The numba kernels of the students' fast engine (as gensim keeps ``word2vec_inner.pyx`` apart from
``word2vec.py``): what every method's kernels share.

The fast engine computes each method's loss and gradients by hand (see the methods' modules) in
numba kernels that run a whole block of batches per call; the batches, the random draws and the
update rule are the autograd engine's, so both engines give the same result up to float rounding
(tests/test_students_fast.py). What is shared: a step's sparse gradient is a list of *slots*
(row id, scalar coefficient, index of a vector), the row's gradient being Σ coef · vector over
its slots. The slots are sorted by row (stable) and every unique row is summed in slot order by
one thread, so the result does not depend on the thread count; then SGD or lazy Adam
(torch.optim.SparseAdam's rule, as :class:`staticvec.train.optimizer.Optimizer`) updates those rows
only (:func:`staticvec.train.optimizer.fast_update`).

A method's module imports this one before it defines its own kernels: importing it sets numba's
cache directory, which a kernel's cache locator reads when the kernel is defined.
"""

from __future__ import annotations

import os

import numba
import numpy as np
from numba import njit, prange

from staticvec.errors import StaticvecError

def _numba_cache_dir() -> str:
    """Where compiled kernels are cached: $NUMBA_CACHE_DIR, else the user's cache directory (never
    the source tree); a temporary directory when that is not writable."""
    import tempfile

    path = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "staticvec", "numba")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return os.path.join(tempfile.gettempdir(), f"staticvec-numba-{os.getuid()}")


if not numba.config.CACHE_DIR:  # set before the kernels below are defined (their cache locator is chosen then)
    numba.config.CACHE_DIR = _numba_cache_dir()


def fast_engine_threads(threads: int | None = None) -> int:
    """Set (when given) and return the fast engine's thread count (numba's).

    The kernels split a step's matrix products across their own threads, so the BLAS they call
    runs on one thread (as threadpoolctl would set it), never threads within threads."""
    if threads:
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
        _single_threaded_openblas()
    return numba.get_num_threads()


def _single_threaded_openblas() -> None:
    import ctypes

    try:
        import scipy.linalg.cython_blas  # noqa: F401  (the BLAS numba's np.dot calls: load it now)

        maps = open("/proc/self/maps").read().split("\n")  # the loaded libraries (Linux)
    except (ImportError, OSError):
        return
    libs = {line.split()[-1] for line in maps if "openblas" in line.lower() and line.split()[-1].startswith("/")}
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("openblas_set_num_threads", "scipy_openblas_set_num_threads",
                       "openblas_set_num_threads64_", "scipy_openblas_set_num_threads64_"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                fn(1)
                break


@njit(cache=True)
def lr_at(lr0, decay_linear, min_fraction, done, total):
    """:func:`staticvec.train.optimizer.learning_rate` in a kernel (``decay_linear``: 1 linear, 0 none)."""
    if decay_linear == 0 or total <= 0:
        return lr0
    return lr0 * max(min_fraction, 1.0 - done / total)


@njit(cache=True)
def softplus(x):
    """log(1 + e^x), stable: ℓ(x) = softplus(-x)."""
    if x > 0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(cache=True)
def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + np.exp(-x))
    e = np.exp(x)
    return e / (1.0 + e)


@njit(cache=True, parallel=True)
def row_gradients(slot_row, slot_coef, slot_vec, vectors):
    """Unique rows of the valid slots (row >= 0) and their summed gradients (float32).

    Row r's gradient is Σ slot_coef[s] · vectors[slot_vec[s]] over its slots s, summed in slot
    order by one thread: the result does not depend on the thread count.
    """
    order = np.argsort(slot_row, kind="mergesort")
    n = len(order)
    first = 0
    while first < n and slot_row[order[first]] < 0:
        first += 1
    starts = np.empty(n - first + 1, np.int64)
    n_rows = 0
    for k in range(first, n):
        if k == first or slot_row[order[k]] != slot_row[order[k - 1]]:
            starts[n_rows] = k
            n_rows += 1
    starts[n_rows] = n
    rows = np.empty(n_rows, np.int64)
    dim = vectors.shape[1]
    grads = np.zeros((n_rows, dim), np.float32)
    for r in prange(n_rows):
        rows[r] = slot_row[order[starts[r]]]
        for k in range(starts[r], starts[r + 1]):
            s = order[k]
            c = np.float32(slot_coef[s])
            j = slot_vec[s]
            for e in range(dim):
                grads[r, e] += c * vectors[j, e]
    return rows, grads


def sq_norm(a) -> float:
    """Σ a² (a float32 array; BLAS dot)."""
    flat = np.ascontiguousarray(a).reshape(-1)
    return float(np.dot(flat, flat))


# Teacher vectors are stored as float16, which numba cannot read: kernels take them as their uint16
# bits (a view, no copy) and convert each value through a 65,536-entry table; float32 features
# pass through. feature_view() gives the array a kernel takes, value() reads one element.
_F16_TO_F32 = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)


def feature_view(a: np.ndarray) -> np.ndarray:
    """A stored vector array as a kernel reads it: float16 as its uint16 bits, else float32."""
    if a.dtype == np.float16:
        return np.ascontiguousarray(a).view(np.uint16)
    return np.ascontiguousarray(a, dtype=np.float32)


def value(x):  # pragma: no cover - replaced in kernels by the overload below
    raise NotImplementedError


@numba.extending.overload(value, inline="always")
def _value(x):
    if isinstance(x, numba.types.Integer):
        return lambda x: _F16_TO_F32[x]
    return lambda x: np.float32(x)


@njit(cache=True, parallel=True)
def gather_rows(vec, idx, out):
    """out[i] = vec[idx[i]] as float32 (vec: feature_view of stored vectors)."""
    for i in prange(len(idx)):
        for e in range(out.shape[1]):
            out[i, e] = value(vec[idx[i], e])


@njit(cache=True, parallel=True)
def update_rows(table, rows, grads, lr, scale, adam, m, v, step, b1, b2, eps):
    """``table[rows] -= lr · scale · grads`` (SGD) or lazy Adam at the table's ``step`` (>= 1)."""
    dim = table.shape[1]
    if not adam:
        a = np.float32(-lr * scale)
        for r in prange(len(rows)):
            w = rows[r]
            for e in range(dim):
                table[w, e] += a * grads[r, e]
        return
    step_size = np.float32(lr * np.sqrt(1.0 - b2 ** step) / (1.0 - b1 ** step))
    c1, c2, fb1, fb2, feps = np.float32(1.0 - b1), np.float32(1.0 - b2), np.float32(b1), np.float32(b2), np.float32(eps)
    for r in prange(len(rows)):
        w = rows[r]
        for e in range(dim):
            g = grads[r, e] * np.float32(scale)
            mm = m[w, e] * fb1 + c1 * g
            vv = v[w, e] * fb2 + c2 * g * g
            m[w, e] = mm
            v[w, e] = vv
            table[w, e] += -step_size * (mm / (np.sqrt(vv) + feps))


@njit(cache=True, parallel=True)
def update_dense(weight, grad, lr, scale, adam, m, v, step, b1, b2, eps):
    """The same rules over a whole tensor (any shape, C-contiguous)."""
    flat_w, flat_g = weight.reshape(-1), grad.reshape(-1)
    n = flat_w.size
    if not adam:
        a = np.float32(-lr * scale)
        for i in prange(n):
            flat_w[i] += a * flat_g[i]
        return
    flat_m, flat_v = m.reshape(-1), v.reshape(-1)
    step_size = np.float32(lr * np.sqrt(1.0 - b2 ** step) / (1.0 - b1 ** step))
    c1, c2, fb1, fb2, feps = np.float32(1.0 - b1), np.float32(1.0 - b2), np.float32(b1), np.float32(b2), np.float32(eps)
    for i in prange(n):
        g = flat_g[i] * np.float32(scale)
        mm = flat_m[i] * fb1 + c1 * g
        vv = flat_v[i] * fb2 + c2 * g * g
        flat_m[i] = mm
        flat_v[i] = vv
        flat_w[i] += -step_size * (mm / (np.sqrt(vv) + feps))


@njit(cache=True, parallel=True)
def matmul_nt(a, b, nthreads):
    """a @ b.T (a: n × k, b: m × k, float32); the rows of ``a`` split over ``nthreads`` BLAS calls."""
    n = a.shape[0]
    out = np.empty((n, b.shape[0]), np.float32)
    bt = b.T
    chunk = (n + nthreads - 1) // nthreads
    for t in prange(nthreads):
        lo, hi = t * chunk, min(n, (t + 1) * chunk)
        if hi > lo:
            out[lo:hi] = np.dot(a[lo:hi], bt)
    return out


@njit(cache=True, parallel=True)
def matmul_tn(a, b, nthreads):
    """a.T @ b (a: n × m, b: n × k, float32); the m output rows split over ``nthreads`` BLAS calls."""
    m = a.shape[1]
    out = np.empty((m, b.shape[1]), np.float32)
    chunk = (m + nthreads - 1) // nthreads
    for t in prange(nthreads):
        lo, hi = t * chunk, min(m, (t + 1) * chunk)
        if hi > lo:
            out[lo:hi] = np.dot(np.ascontiguousarray(a[:, lo:hi].T), b)
    return out


def as_numpy(tensor) -> np.ndarray:
    """A CPU float32 tensor's storage as a numpy array (shared: kernels update the tensor in place)."""
    arr = tensor.detach().numpy()
    if not arr.flags.c_contiguous:
        raise StaticvecError("fast engine: parameters must be contiguous CPU tensors")
    return arr

