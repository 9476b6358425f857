"""GloVe's window co-occurrence counts, in bounded memory.

Definition (GloVe's ``cooccur``, symmetric mode): out-of-vocabulary tokens are removed from
a sentence first; then every pair of tokens at distance 1 ≤ d ≤ S within the same sentence
(line) adds 1/d to both X[w, c] and X[c, w]. A word paired with itself at distance d thus
adds 2/d to X[w, w], as in the reference code. Windows never cross sentence boundaries.

How it counts (the reference code's layout, with half the work): a pair is stored once, as
(lo, hi) with lo ≤ hi. Pairs whose frequency ranks have a product (lo+1)(hi+1) ≤ P go to a
triangular table of float64 (GloVe's Zipf trick: frequent pairs are dense); the rest
go to an overflow buffer that is sorted, reduced, mirrored and spilled as a sorted run when
full. At the end the table (mirrored on the fly) and the runs are merged into one store.
P is the largest product whose table fits the memory budget.

The table is held in two parts: its cells of rank product ≤ P_dense (the first twelfth of its cells: the
frequent pairs, most of them non-zero) as a dense array, and its other cells, mostly zero (on 13.4M tokens
at 4 GB, 7 % of the table's 242M cells are non-zero), in an open-addressing hash of (cell, float64 sum).
Each cell is still the float64 sum of its 1/d in the order the text gives them, wherever it lives, so the
store is byte for byte the one table would give (tests); only the memory differs (on that text 0.42 GB
instead of 1.8 GB, benchmarks/README.md). Should the hash outgrow a quarter of the whole table's bytes, the
counter moves every cell into the whole dense table and goes on as before.
"""

from __future__ import annotations

import logging
import mmap
import os
import time
from itertools import repeat
from pathlib import Path
from typing import Iterable, Iterator

import numba
import numpy as np

from staticvec.background import prefetched
from staticvec.cooc.store import ArraySource, CoocAccumulator, _merge_two_kernel, sort_reduce, vocab_fingerprint
from staticvec.errors import InputFileError, StaticvecError

log = logging.getLogger(__name__)

# Shares of the memory budget: the dense table, and the overflow buffer together with the
# scratch space its spill needs (about 64 bytes per buffered pair at the peak).
_TABLE_SHARE = 0.45
_OVERFLOW_SHARE = 0.35
_BYTES_PER_OVERFLOW_ENTRY = 64
_DENSE_FRACTION = 12  # 1 / this of the table's cells are held dense (the lowest rank products); the rest in a hash
_HASH_LOAD = 0.7  # the hash grows (doubles) beyond this share of its slots
_HASH_FIRST_BITS = 16
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of key × 2^64/φ
_EMPTY = 0  # a free slot: slots hold key + 1, so that a fresh (zeroed, lazily mapped) array is an empty hash


# ---------------------------------------------------------------- dense table layout


def _table_layout(vocab_size: int, max_product: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Row starts and column limits of the triangular table for rank products ≤ max_product.

    Row a (0-based id) holds columns a ≤ b < limit[a], limit[a] = min(V, P // (a+1)).
    """
    a = np.arange(vocab_size, dtype=np.int64)
    limit = np.minimum(vocab_size, max_product // (a + 1))
    n_rows = int(np.count_nonzero(limit > a))  # limit is non-increasing, so rows form a prefix
    limit = limit[:n_rows]
    lengths = limit - a[:n_rows]
    start = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    return start, limit, n_rows


def _table_size(vocab_size: int, max_product: int) -> int:
    start, _, _ = _table_layout(vocab_size, max_product)
    return int(start[-1])


def choose_max_product(vocab_size: int, table_entries: int) -> int:
    """The largest rank product P whose triangular table has at most ``table_entries`` cells."""
    full = vocab_size * vocab_size
    if _table_size(vocab_size, full) <= table_entries:
        return full
    lo, hi = 0, full
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _table_size(vocab_size, mid) <= table_entries:
            lo = mid
        else:
            hi = mid - 1
    return lo


# ---------------------------------------------------------------- compiled kernels


@numba.njit(cache=True, nogil=True)
def _hash_slot(keys, tag, shift):
    """The slot of ``tag`` (key + 1) in the open-addressing hash (linear probing): where it is, or the empty slot
    it takes."""
    mask = keys.shape[0] - 1
    q = np.int64((np.uint64(tag) * _HASH_MULTIPLIER) >> np.uint64(shift))
    while keys[q] != tag and keys[q] != _EMPTY:
        q = (q + 1) & mask
    return q


@numba.njit(cache=True, nogil=True)
def _count_kernel(ids, offsets, s, k, window, inv_dist, table, row_start, row_limit, n_rows, full_limit, full_rows,
                  keys, vals, shift, n_hash, hash_limit, vocab_size, oi, oj, ox, n_over):
    """Count sentences from sentence s, token k on; stop when the overflow buffer or the hash might
    not hold the next token's pairs. Returns (s, k, n_over, n_hash, why): why 1 = overflow buffer
    full, 2 = hash full, 0 = done. A table cell (full_limit, full_rows: the table's layout) is in
    the dense part (table, row_start, row_limit, n_rows) or in the hash (keys lo·V + hi, vals)."""
    cap = oi.shape[0]
    n_sent = offsets.shape[0] - 1
    while s < n_sent:
        a0 = offsets[s]
        a1 = offsets[s + 1]
        if k < a0:
            k = a0
        while k < a1:
            if n_over + window > cap:
                return s, k, n_over, n_hash, 1
            if n_hash + window > hash_limit:
                return s, k, n_over, n_hash, 2
            b = ids[k]
            first = k - window
            if first < a0:
                first = a0
            for m in range(first, k):
                a = ids[m]
                w = inv_dist[k - m]
                if a <= b:
                    lo = a
                    hi = b
                else:
                    lo = b
                    hi = a
                if lo < n_rows and hi < row_limit[lo]:
                    table[row_start[lo] + hi - lo] += w
                elif lo < full_rows and hi < full_limit[lo]:
                    tag = np.int64(lo) * vocab_size + hi + 1
                    q = _hash_slot(keys, tag, shift)
                    if keys[q] == _EMPTY:
                        keys[q] = tag
                        vals[q] = w
                        n_hash += 1
                    else:
                        vals[q] += w
                else:
                    oi[n_over] = lo
                    oj[n_over] = hi
                    ox[n_over] = w
                    n_over += 1
            k += 1
        s += 1
    return s, k, n_over, n_hash, 0


@numba.njit(cache=True, nogil=True)
def _rehash(keys, vals, new_keys, new_vals, shift):
    for p in range(keys.shape[0]):
        if keys[p] != _EMPTY:
            q = _hash_slot(new_keys, keys[p], shift)
            new_keys[q] = keys[p]
            new_vals[q] = vals[p]


@numba.njit(cache=True, nogil=True)
def _to_full_table(table, row_start, row_limit, n_rows, keys, vals, vocab_size, full, full_start):
    """The dense part and the hash's cells moved into the whole table (``full``, layout ``full_start``)."""
    for a in range(n_rows):
        for c in range(a, row_limit[a]):
            full[full_start[a] + c - a] = table[row_start[a] + c - a]
    for p in range(keys.shape[0]):
        if keys[p] != _EMPTY:
            key = keys[p] - 1
            lo = key // vocab_size
            hi = key - lo * vocab_size
            full[full_start[lo] + hi - lo] = vals[p]


@numba.njit(cache=True, nogil=True)
def _hash_by_column(keys, vals, vocab_size):
    """The hash's cells as (lo, hi, value) ordered by hi (a counting sort: one pass to count, one to place;
    the first of the two stable passes of :func:`_by_row`)."""
    start = np.zeros(vocab_size + 1, np.int64)
    for p in range(keys.shape[0]):
        if keys[p] != _EMPTY:
            start[(keys[p] - 1) % vocab_size + 1] += 1
    for c in range(vocab_size):
        start[c + 1] += start[c]
    n = start[vocab_size]
    lo = np.empty(n, np.int32)
    hi = np.empty(n, np.int32)
    x = np.empty(n, np.float64)
    for p in range(keys.shape[0]):
        if keys[p] != _EMPTY:
            key = keys[p] - 1
            a = key // vocab_size
            b = key - a * vocab_size
            q = start[b]
            start[b] = q + 1
            lo[q] = a
            hi[q] = b
            x[q] = vals[p]
    return lo, hi, x


@numba.njit(cache=True, nogil=True)
def _by_row(lo, hi, x, vocab_size):
    """(lo, hi, value) ordered by hi, stably re-ordered by lo: sorted by (lo, hi) in O(n + V), no comparison sort."""
    n = lo.shape[0]
    start = np.zeros(vocab_size + 1, np.int64)
    for p in range(n):
        start[lo[p] + 1] += 1
    for r in range(vocab_size):
        start[r + 1] += start[r]
    out_lo = np.empty(n, np.int32)
    out_hi = np.empty(n, np.int32)
    out_x = np.empty(n, np.float64)
    for p in range(n):
        q = start[lo[p]]
        start[lo[p]] = q + 1
        out_lo[q] = lo[p]
        out_hi[q] = hi[p]
        out_x[q] = x[p]
    return out_lo, out_hi, out_x


@numba.njit(cache=True, nogil=True)
def _mirror_kernel(lo, hi, x, vocab_size, out_i, out_j, out_x):
    """From sorted unique canonical pairs (lo ≤ hi), the sorted symmetric records:
    (lo, hi) and (hi, lo) with the same value, the diagonal doubled. Within a row r the
    entries (r, c < r) arrive first in increasing c, then (r, c ≥ r), so no sort is needed."""
    n = lo.shape[0]
    start = np.zeros(vocab_size + 1, np.int64)
    for p in range(n):
        start[lo[p] + 1] += 1
        if hi[p] != lo[p]:
            start[hi[p] + 1] += 1
    for r in range(vocab_size):
        start[r + 1] += start[r]
    fill = start[:-1].copy()
    for p in range(n):
        a = lo[p]
        b = hi[p]
        q = fill[a]
        fill[a] = q + 1
        out_i[q] = a
        out_j[q] = b
        if a == b:
            out_x[q] = 2.0 * x[p]
        else:
            out_x[q] = x[p]
            q = fill[b]
            fill[b] = q + 1
            out_i[q] = b
            out_j[q] = a
            out_x[q] = x[p]
    return start[vocab_size]


@numba.njit(cache=True, nogil=True)
def _table_row_nnz(table, row_start, row_limit, n_rows, vocab_size):
    """Non-zero records per output row of the mirrored table."""
    total = np.zeros(vocab_size, np.int64)
    for a in range(n_rows):
        base = row_start[a]
        for b in range(a, row_limit[a]):
            if table[base + b - a] != 0.0:
                total[a] += 1
                if b != a:
                    total[b] += 1
    return total


_EMIT_ROWS = 512  # output rows per pass over the table rows: keeps reads and writes page-local


@numba.njit(cache=True, nogil=True)
def _table_emit(table, row_start, row_limit, n_rows, r0, r1, total, out_i, out_j, out_x):
    """Records of rows r0 ≤ r < r1 of the mirrored table, in (i, j) order.

    Output row r holds (r, a) for a < r, read from table row a at column r, then (r, c ≥ r)
    from table row r. The first part is a transpose: it is done for a few hundred output
    rows at a time, reading each table row's short contiguous segment, so that memory is
    touched page by page rather than one page per cell.
    """
    pos = np.empty(_EMIT_ROWS, np.int64)
    base_out = 0
    for b0 in range(r0, r1, _EMIT_ROWS):
        b1 = min(b0 + _EMIT_ROWS, r1)
        p = base_out
        for r in range(b0, b1):
            pos[r - b0] = p
            p += total[r]
        # below the diagonal: (c, a) for table rows a < c, columns c in [b0, b1)
        top = min(b1, n_rows)
        for a in range(top):
            c_hi = min(b1, row_limit[a])
            c_lo = max(b0, a + 1)
            if c_lo >= c_hi:
                if row_limit[a] <= b0:
                    break  # limits are non-increasing: no later row reaches b0 either
                continue
            base = row_start[a] - a
            for c in range(c_lo, c_hi):
                v = table[base + c]
                if v != 0.0:
                    q = pos[c - b0]
                    pos[c - b0] = q + 1
                    out_i[q] = c
                    out_j[q] = a
                    out_x[q] = v
        # on and above the diagonal: table row r itself
        for r in range(b0, min(b1, n_rows)):
            q = pos[r - b0]
            base = row_start[r] - r
            for c in range(r, row_limit[r]):
                v = table[base + c]
                if v != 0.0:
                    out_i[q] = r
                    out_j[q] = c
                    out_x[q] = 2.0 * v if c == r else v
                    q += 1
        base_out = p
    return base_out


class _TableSource:
    """The table as a sorted merge source: its dense part mirrored on the fly, with its hashed cells (sorted
    symmetric records, ``hashed``) merged in row by row (the two hold different pairs). The arrays returned by
    :meth:`rows` are reused by the call after the next (two sets in turn: the merge reads a block ahead while it
    consumes the one before): a block's output is not fresh memory to fault in every time."""

    def __init__(self, counter: "WindowCounter", hashed=None):
        self.c = counter
        self.total = _table_row_nnz(
            counter.table, counter.row_start, counter.row_limit, counter.n_rows, counter.vocab_size
        )
        self.hashed = hashed if hashed is not None and len(hashed[0]) else None
        self.cum = np.zeros(counter.vocab_size + 1, np.int64)
        np.cumsum(self.total, out=self.cum[1:])
        if self.hashed is not None:
            self.cum[1:] += np.cumsum(np.bincount(self.hashed[0], minlength=counter.vocab_size))
        self._buffers = {}
        self._turn = 0

    def __len__(self) -> int:
        return int(self.cum[-1])

    def count_before(self, row: int) -> int:
        return int(self.cum[min(row, self.c.vocab_size)])

    def _arrays(self, name: str, n: int):
        arrays = self._buffers.get((name, self._turn))
        if arrays is None or len(arrays[0]) < n:
            arrays = (np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.float32))
            self._buffers[(name, self._turn)] = arrays
        return tuple(a[:n] for a in arrays)

    def rows(self, r0: int, r1: int):
        self._turn ^= 1
        n = self.count_before(r1) - self.count_before(r0)
        c = self.c
        if self.hashed is None:
            h0 = h1 = 0
        else:
            h0, h1 = np.searchsorted(self.hashed[0], np.array([r0, r1], np.int32))  # (CoocStore.count_before)
        out_i, out_j, out_x = self._arrays("dense" if h0 == h1 else "emit", n - (h1 - h0))
        m = _table_emit(c.table, c.row_start, c.row_limit, c.n_rows, r0, r1, self.total, out_i, out_j, out_x)
        assert m == n - (h1 - h0)
        if h0 == h1:
            return out_i, out_j, out_x
        mi, mj, mx = self._arrays("merged", n)
        hi, hj, hx = (a[h0:h1] for a in self.hashed)
        m = _merge_two_kernel(out_i, out_j, out_x, hi, hj, hx, c.vocab_size, mi, mj, mx)
        assert m == n  # no pair in both
        return mi, mj, mx


# ---------------------------------------------------------------- counter


def zeros_hugepages(n: int, dtype=np.float64) -> np.ndarray:
    """A zeroed array in anonymous memory advised for transparent huge pages: random
    updates over gigabytes then miss the TLB far less often. Plain zeros elsewhere."""
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes < (64 << 20) or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros(n, dtype)
    mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        mm.madvise(mmap.MADV_HUGEPAGE)
    except OSError:
        pass
    return np.frombuffer(mm, dtype=dtype, count=n)


class WindowCounter:
    """Accumulate window co-occurrences of id sentences; write them as one store.

    ``memory_gb`` bounds the dense table plus the overflow buffer and its spill scratch
    (as GloVe's ``-memory``); spilled runs go to ``tmp_dir`` and are merged with at most
    ``max_open`` files open. Use as a context manager (removes the runs).
    """

    def __init__(
        self,
        vocab_size: int,
        window: int,
        memory_gb: float = 4.0,
        tmp_dir: str | os.PathLike | None = None,
        max_open: int = 64,
        max_product: int | None = None,
        overflow_entries: int | None = None,
        dense_max_product: int | None = None,
    ):
        if window < 1:
            raise StaticvecError(f"window must be at least 1, got {window}")
        if vocab_size < 1:
            raise StaticvecError("the vocabulary is empty")
        self.vocab_size = int(vocab_size)
        self.window = int(window)
        budget = memory_gb * 2**30
        if max_product is None:
            max_product = choose_max_product(self.vocab_size, int(_TABLE_SHARE * budget / 8))
        self.max_product = int(max_product)
        # the table's layout (which pairs it holds), and its dense part's (module docstring)
        self.full_start, self.full_limit, self.full_rows = _table_layout(self.vocab_size, self.max_product)
        full_cells = int(self.full_start[-1])
        if dense_max_product is None:
            dense_max_product = choose_max_product(self.vocab_size, full_cells // _DENSE_FRACTION)
        self.dense_max_product = min(int(dense_max_product), self.max_product)
        self.row_start, self.row_limit, self.n_rows = _table_layout(self.vocab_size, self.dense_max_product)
        self.table = zeros_hugepages(int(self.row_start[-1]), np.float64)
        self.hash_max_bytes = full_cells * 8 // 4  # beyond: the whole table, dense
        self._new_hash(_HASH_FIRST_BITS if self.dense_max_product < self.max_product else 0)
        if overflow_entries is None:
            overflow_entries = int(_OVERFLOW_SHARE * budget / _BYTES_PER_OVERFLOW_ENTRY)
        overflow_entries = max(int(overflow_entries), 4 * self.window)
        self.oi = np.empty(overflow_entries, np.int32)
        self.oj = np.empty(overflow_entries, np.int32)
        self.ox = np.empty(overflow_entries, np.float32)
        self.n_over = 0
        self.inv_dist = np.array([0.0] + [1.0 / d for d in range(1, self.window + 1)], np.float64)
        # holds the spilled runs and merges them (its own buffer stays unused)
        self.runs = CoocAccumulator(self.vocab_size, buffer_entries=1, tmp_dir=tmp_dir, max_open=max_open)
        self.n_tokens = 0
        self.n_sentences = 0
        self.n_spills = 0
        log.info(
            "window %d, %d words: table of %d cells (rank product ≤ %d, %.2f GB if dense), %d of them dense (rank "
            "product ≤ %d, %.2f GB), the others in a hash; overflow buffer of %d pairs",
            self.window, self.vocab_size, full_cells, self.max_product, full_cells * 8 / 2**30, len(self.table),
            self.dense_max_product, self.table.nbytes / 2**30, overflow_entries,
        )

    def _new_hash(self, bits: int) -> None:
        """An empty hash of 2^bits slots (bits 0: none, every table cell is dense)."""
        self.hash_bits = bits
        self.hash_peak_bits = max(getattr(self, "hash_peak_bits", 0), bits)  # the largest the hash has been
        self.keys = zeros_hugepages(1 << bits, np.int64)  # all _EMPTY
        self.vals = zeros_hugepages(1 << bits, np.float64)
        self.n_hash = 0
        self.hash_limit = int(_HASH_LOAD * (1 << bits)) if bits else 1 << 62  # no hash: never full

    def _grow_hash(self) -> None:
        """Double the hash, or, past ``hash_max_bytes``, move every cell into the whole dense table."""
        bits = self.hash_bits + 1
        if 16 << bits > self.hash_max_bytes:
            full = zeros_hugepages(int(self.full_start[-1]), np.float64)
            _to_full_table(self.table, self.row_start, self.row_limit, self.n_rows, self.keys, self.vals,
                           self.vocab_size, full, self.full_start)
            log.info("%d table cells outgrew the hash: the whole table is dense from here on (%.2f GB)",
                     self.n_hash, full.nbytes / 2**30)
            self.table, self.row_start, self.row_limit, self.n_rows = full, self.full_start, self.full_limit, self.full_rows
            self.dense_max_product = self.max_product
            self._new_hash(0)
            return
        keys, vals, n = self.keys, self.vals, self.n_hash
        self._new_hash(bits)
        _rehash(keys, vals, self.keys, self.vals, 64 - bits)
        self.n_hash = n

    def add(self, ids: np.ndarray, offsets: np.ndarray) -> None:
        """Count sentences given as in-vocabulary ids (OOV already removed) with sentence
        boundaries ``offsets`` (length n_sentences + 1)."""
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"word ids outside the vocabulary (0..{self.vocab_size - 1})")
        if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(ids) or (np.diff(offsets) < 0).any():
            raise ValueError("offsets must run from 0 to len(ids), non-decreasing")
        s, k = 0, 0
        while True:
            s, k, self.n_over, self.n_hash, why = _count_kernel(
                ids, offsets, s, k, self.window, self.inv_dist, self.table, self.row_start, self.row_limit,
                self.n_rows, self.full_limit, self.full_rows, self.keys, self.vals, 64 - self.hash_bits, self.n_hash,
                self.hash_limit, self.vocab_size, self.oi, self.oj, self.ox, self.n_over,
            )
            if why == 0:
                break
            if why == 1:
                self._spill()
            else:
                self._grow_hash()
        self.n_tokens += len(ids)
        self.n_sentences += len(offsets) - 1

    def _spill(self) -> None:
        if self.n_over == 0:
            return
        i, j, x = self._reduced_overflow()
        self.runs.write_run(i, j, x)
        self.n_spills += 1
        log.info("spilled %d overflow pairs as %d records (run %d)", self.n_over, len(i), self.n_spills)
        self.n_over = 0

    def _reduced_overflow(self):
        lo, hi, x = sort_reduce(self.oi[: self.n_over], self.oj[: self.n_over], self.ox[: self.n_over], self.vocab_size)
        n = 2 * len(lo)
        out_i, out_j, out_x = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.float32)
        m = _mirror_kernel(lo, hi, x, self.vocab_size, out_i, out_j, out_x)
        return out_i[:m], out_j[:m], out_x[:m]

    def _hashed_cells(self):
        """The hash's cells as sorted symmetric records (mirrored as the table's are); the hash is freed."""
        lo, hi, vals = _hash_by_column(self.keys, self.vals, self.vocab_size)
        self._new_hash(0)
        lo, hi, vals = _by_row(lo, hi, vals, self.vocab_size)
        n = 2 * len(lo)
        out_i, out_j, out_x = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.float32)
        m = _mirror_kernel(lo, hi, vals, self.vocab_size, out_i, out_j, out_x)
        return out_i[:m], out_j[:m], out_x[:m]

    def finish(self, out: str | os.PathLike, vocab_sha256: str | None = None, meta: dict | None = None,
               block_entries: int = 1 << 20) -> dict:
        """Merge the table, the buffer and the spilled runs into the store ``out`` (in blocks of rows of at most
        ``block_entries`` records, :func:`staticvec.cooc.store.merge_sources`)."""
        sources = [_TableSource(self, self._hashed_cells() if self.n_hash else None)]
        if self.n_over:
            sources.append(ArraySource(*self._reduced_overflow()))
            self.n_over = 0
        self.oi = self.oj = self.ox = None  # the buffer's memory back before the merge
        meta = {
            "kind": "window",
            "window": self.window,
            "weighting": "1/d",
            "symmetric": True,
            **(meta or {}),
            "n_tokens": self.n_tokens,
            "n_sentences": self.n_sentences,
        }
        return self.runs.finish(out, vocab_sha256, meta, extra_sources=sources, block_entries=block_entries)

    def close(self) -> None:
        self.runs.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ---------------------------------------------------------------- token → id chunks
#
# The counter reads ids, not strings. Turning text into ids is the only per-token Python
# work, so it is done on large byte blocks: bytes.split() finds the tokens (ASCII
# whitespace, as GloVe's reader) and one dict lookup per token gives its id.

_CHUNK_BYTES = 1 << 24
_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True


def byte_index(vocab) -> dict[bytes, int]:
    """word (UTF-8 bytes) → id, for the byte-level readers."""
    return {word.encode("utf-8"): i for i, word in enumerate(vocab.words)}


def lines_to_ids(block: bytes, index: dict[bytes, int]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, offsets) of a block of sentences, one per line; OOV tokens removed."""
    if block.endswith(b"\n"):
        block = block[:-1]
    arr = np.frombuffer(block, dtype=np.uint8)
    space = _WHITESPACE[arr]
    starts = np.flatnonzero(~space & np.concatenate(([True], space[:-1])))
    newlines = np.flatnonzero(arr == 10)
    lengths = np.bincount(np.searchsorted(newlines, starts), minlength=len(newlines) + 1)
    tokens = block.split()
    ids = np.fromiter(map(index.get, tokens, repeat(-1)), dtype=np.int32, count=len(tokens))
    keep = ids >= 0
    kept_before = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(keep, out=kept_before[1:])
    bounds = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return ids[keep], kept_before[bounds]


def text_id_chunks(
    paths: str | os.PathLike | Iterable[str | os.PathLike], index: dict[bytes, int], chunk_bytes: int = _CHUNK_BYTES
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Plain text files, one sentence per line (GloVe's input), as (ids, offsets) chunks."""
    from staticvec.files import open_any

    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        rest = b""
        try:
            with open_any(path, "rb") as fh:
                while True:
                    data = fh.read(chunk_bytes)
                    if not data:
                        break
                    data = rest + data
                    cut = data.rfind(b"\n") + 1
                    if cut == 0:
                        rest = data
                        continue
                    rest = data[cut:]
                    yield lines_to_ids(data[:cut], index)
        except (EOFError, OSError) as exc:
            if isinstance(exc, FileNotFoundError):
                raise InputFileError(path, "text file not found") from None
            raise InputFileError(path, f"corrupt or truncated file ({exc})") from None
        if rest:
            yield lines_to_ids(rest, index)


def shard_id_chunks(
    paths: str | os.PathLike | Iterable[str | os.PathLike], index: dict[bytes, int], chunk_bytes: int = _CHUNK_BYTES
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The training sentences (keep = 1) of corpus shards as (ids, offsets) chunks.

    Reads the shard format of :mod:`staticvec.corpus.shards` at the byte level; a line that
    is not well formed is reported by that module's parser (file and line number).
    """
    from staticvec.corpus.shards import parse_line
    from staticvec.files import open_any

    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        kept: list[bytes] = []
        size = 0
        try:
            with open_any(path, "rb") as fh:
                for lineno, line in enumerate(fh, start=1):
                    parts = line.split(b"\t", 3)
                    if len(parts) != 4 or parts[2] not in (b"0", b"1") or not parts[1].isdigit():
                        parse_line(line.decode("utf-8", "replace"), path, lineno)  # raises with the reason
                    if parts[2] == b"1":
                        kept.append(parts[3].rstrip(b"\n"))
                        size += len(parts[3])
                        if size >= chunk_bytes:
                            yield lines_to_ids(b"\n".join(kept), index)
                            kept, size = [], 0
        except (EOFError, OSError) as exc:
            if isinstance(exc, FileNotFoundError):
                raise InputFileError(path, "shard not found") from None
            raise InputFileError(path, f"corrupt or truncated shard ({exc})") from None
        if kept:
            yield lines_to_ids(b"\n".join(kept), index)


def token_id_chunks(
    sentences: Iterable[list[str]], index: dict[str, int], chunk_tokens: int = 1 << 22
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Sentences given as token lists (in memory) as (ids, offsets) chunks."""
    flat: list[str] = []
    lengths: list[int] = []
    for tokens in sentences:
        flat.extend(tokens)
        lengths.append(len(tokens))
        if len(flat) >= chunk_tokens:
            yield _tokens_to_ids(flat, lengths, index)
            flat, lengths = [], []
    if lengths:
        yield _tokens_to_ids(flat, lengths, index)


def _tokens_to_ids(flat: list[str], lengths: list[int], index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.fromiter(map(index.get, flat, repeat(-1)), dtype=np.int32, count=len(flat))
    keep = ids >= 0
    kept_before = np.zeros(len(flat) + 1, np.int64)
    np.cumsum(keep, out=kept_before[1:])
    bounds = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return ids[keep], kept_before[bounds]


def count_window_store(
    chunks: Iterable[tuple[np.ndarray, np.ndarray]],
    vocab,
    window: int,
    out: str | os.PathLike,
    memory_gb: float = 4.0,
    tmp_dir: str | os.PathLike | None = None,
    max_open: int = 64,
    meta: dict | None = None,
    progress: bool = False,
) -> dict:
    """Count the window co-occurrences of (ids, offsets) ``chunks`` into the store ``out``."""
    start = time.time()
    out = Path(out)
    with WindowCounter(len(vocab), window, memory_gb, tmp_dir or out.parent, max_open) as counter:
        chunks = prefetched(chunks)  # reading and id lookup overlap with the (GIL-free) counting
        if progress:
            from tqdm import tqdm

            chunks = tqdm(chunks, desc="counting", unit=" chunks", mininterval=10)
        for ids, offsets in chunks:
            counter.add(ids, offsets)
        header = counter.finish(out, vocab_fingerprint(vocab), meta)
    log.info(
        "%s: %d entries from %d sentences / %d in-vocabulary tokens in %.1f s (%d spills)",
        out, header["n_entries"], counter.n_sentences, counter.n_tokens, time.time() - start, counter.n_spills,
    )
    return header
