"""The sparse co-occurrence store: one on-disk format for window, attention and MLM counts.

A store is a single file::

    bytes 0..7    magic b"SVCOOC\\x00\\x01"
    bytes 8..15   data offset (uint64, little-endian; a multiple of 4096)
    bytes 16..    JSON header, padded with spaces up to the data offset
    data offset.. n records (int32 i, int32 j, float32 x), little-endian, 12 bytes each

Records are sorted by (i, j) and hold each pair once; ``i`` is the target (row) and ``j`` the
context word id, both ids of the vocabulary file named in the header (id = row of the
vocabulary = frequency rank, 0-based). The header holds ``n_entries``, ``vocab_size``,
``vocab_sha256``, a CRC-32 of the record bytes and a free ``meta`` mapping (kind of counts,
window, sources...). Readers memory-map the records; a truncated file is detected from
its size, a corrupt one by :meth:`CoocStore.verify`.

Writing arbitrary triples in bounded memory: :class:`CoocAccumulator` buffers ``(i, j, x)``,
and when the buffer is full sorts it, sums duplicates and spills a sorted *run* (itself a
store) to a temporary directory. :func:`merge_sources` combines sorted sources (stores,
in-memory arrays, the dense table of the window counter) block of rows by block of rows,
summing duplicates, with at most ``max_open`` inputs at once (more inputs are merged in
several passes). Values are accumulated in float64 and stored as float32.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import queue
import shutil
import struct
import tempfile
import threading
import zlib
from pathlib import Path
from typing import Iterator, Sequence

import numba
import numpy as np

from staticvec.errors import InputFileError, StaticvecError
from staticvec.files import atomic_path

log = logging.getLogger(__name__)

RECORD = np.dtype([("i", "<i4"), ("j", "<i4"), ("x", "<f4")])
MAGIC = b"SVCOOC\x00\x01"
FORMAT = "staticvec-cooc"
VERSION = 1
_ALIGN = 4096
# Meta keys that add up when stores are merged, and keys whose lists are concatenated;
# every other meta key must agree between the merged stores.
# counters of the shards: they add up (beyond_features: SemGloVe window words past the stored ±2S positions)
SUMMED_META = ("n_tokens", "n_sentences", "n_pairs", "beyond_features")
LISTED_META = ("sources",)


# ---------------------------------------------------------------- writing


def vocab_fingerprint(vocab) -> str:
    """sha256 of the vocabulary as used (``word TAB count`` lines): the id mapping a store
    relies on. Equals the file's sha256 when the whole file is used."""
    digest = hashlib.sha256()
    for word, count in zip(vocab.words, vocab.counts):
        digest.update(f"{word}\t{count}\n".encode("utf-8"))
    return digest.hexdigest()


@numba.njit(cache=True, nogil=True)
def _pack_increasing(i, j, x, n_cols, last_key, out_i, out_j, out_x):
    """Copy (i, j, x) into a record block's columns, checking on the way that the keys i * n_cols + j increase
    from ``last_key``: the last key copied, or -1 at the first key that does not increase."""
    prev = last_key
    for p in range(i.shape[0]):
        key = np.int64(i[p]) * n_cols + np.int64(j[p])
        if key <= prev:
            return -1
        prev = key
        out_i[p] = i[p]
        out_j[p] = j[p]
        out_x[p] = x[p]
    return prev


class _WriteBehind:
    """A store file's CRC and writes done on one thread, in order, while the caller makes the next block (both
    release the GIL): the merge of a store overlaps its writing. The caller fills one of two record blocks in
    turn (:meth:`block`), so memory stays two blocks however long the file; an error of the thread (a full disk)
    is raised in the caller at its next block or at :meth:`close`."""

    def __init__(self, fh):
        self.fh = fh
        self.crc = 0
        self.error: BaseException | None = None
        self._todo: queue.Queue = queue.Queue(1)
        self._free: queue.Queue = queue.Queue()
        for _ in range(2):
            self._free.put(np.empty(0, RECORD))
        self._thread = threading.Thread(target=self._run, name="store-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._todo.get()
            if item is None:
                return
            block, n, pooled = item
            if self.error is None:
                try:
                    data = block[:n]
                    self.crc = zlib.crc32(data, self.crc)
                    self.fh.write(data)
                except BaseException as exc:  # raised in the caller
                    self.error = exc
            if pooled:
                self._free.put(block)

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error

    def block(self, n: int) -> np.ndarray:
        """A free record block of at least ``n`` rows (waits for the one being written)."""
        block = self._free.get()
        self._raise()
        return block if len(block) >= n else np.empty(n, RECORD)

    def put(self, block: np.ndarray, n: int, pooled: bool = True) -> None:
        """Write the first ``n`` rows of ``block`` after the blocks put before; a block of :meth:`block` goes back
        to the pool once written (``pooled``), any other must stay unchanged until :meth:`close`."""
        self._todo.put((block, n, pooled))

    def close(self) -> int:
        """Wait for every block put; the CRC of all of them (a write error raised)."""
        self._todo.put(None)
        self._thread.join()
        self._raise()
        return self.crc


class SortedStoreWriter:
    """Stream sorted, duplicate-free blocks of records into a store file (atomically).

    ``write`` checks that each block is sorted and continues after the previous one; the
    header (entry count, checksum) is completed by ``close``. With ``ordered=False`` the
    records are written as given (a shuffled copy for training) and the header says so.
    With ``background=True`` the CRC and the file writes run on a thread of their own
    (:class:`_WriteBehind`), overlapping whatever the caller does between its writes.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        vocab_size: int,
        vocab_sha256: str | None = None,
        meta: dict | None = None,
        ordered: bool = True,
        background: bool = False,
    ):
        self.path = Path(path)
        self.vocab_size = int(vocab_size)
        self.header = {
            "format": FORMAT,
            "version": VERSION,
            "n_entries": 0,
            "vocab_size": self.vocab_size,
            "vocab_sha256": vocab_sha256,
            "checksum": "crc32:00000000",
            "sorted": ordered,
            "meta": dict(meta or {}),
        }
        self.ordered = ordered
        # Reserve room for the final header: the entry count may grow to 20 digits.
        text = self._header_bytes(n_entries=10**20)
        self.data_offset = -(-(16 + len(text) + 256) // _ALIGN) * _ALIGN
        self._atomic = atomic_path(self.path)
        self._tmp = self._atomic.__enter__()
        self._fh = open(self._tmp, "wb")
        self._fh.write(b"\0" * self.data_offset)
        self._crc = 0
        self._n = 0
        self._last_key = -1
        self._closed = False
        self._behind = _WriteBehind(self._fh) if background else None

    def _header_bytes(self, n_entries: int | None = None) -> bytes:
        header = dict(self.header)
        if n_entries is not None:
            header["n_entries"] = n_entries
        return json.dumps(header, ensure_ascii=False, sort_keys=False).encode("utf-8")

    def write(self, i: np.ndarray, j: np.ndarray, x: np.ndarray) -> None:
        n = len(i)
        if n == 0:
            return
        if not (len(j) == n == len(x)):
            raise ValueError("i, j and x differ in length")
        block = self._behind.block(n) if self._behind else np.empty(n, dtype=RECORD)
        if self.ordered:
            last = _pack_increasing(np.asarray(i), np.asarray(j), np.asarray(x), self.vocab_size, self._last_key,
                                    block["i"], block["j"], block["x"])
            if last < 0:
                if self._behind:
                    self._behind.put(block, 0)  # back to the pool, nothing written
                raise ValueError("store records must be written in increasing (i, j) order without duplicates")
            self._last_key = int(last)
        else:
            block["i"][:n], block["j"][:n], block["x"][:n] = i, j, x
        if self._behind:
            self._behind.put(block, n)
            self._n += n
        else:
            self.write_records(block)

    def write_records(self, block: np.ndarray) -> None:
        """Append records given as a RECORD array (order checked only by :meth:`write`); with ``background``,
        ``block`` must stay unchanged until :meth:`close` (it is written later, on the writer's thread)."""
        data = np.ascontiguousarray(block, dtype=RECORD)
        if self._behind:
            self._behind.put(data, len(data), pooled=False)
        else:
            self._crc = zlib.crc32(data, self._crc)
            self._fh.write(data)  # the buffer itself: no bytes copy
        self._n += len(data)

    def close(self) -> dict:
        """Finish the file: write the header and move it into place. Returns the header."""
        if self._closed:
            return self.header
        if self._behind:
            behind, self._behind = self._behind, None
            try:
                self._crc = behind.close()
            except BaseException:
                self.abort()  # the temporary file removed, nothing in place
                raise
        self.header["n_entries"] = self._n
        self.header["checksum"] = f"crc32:{self._crc:08x}"
        text = self._header_bytes()
        if 16 + len(text) > self.data_offset:  # cannot happen: room reserved for 20 digits
            raise AssertionError("store header outgrew its reserved space")
        self._fh.seek(0)
        self._fh.write(MAGIC + struct.pack("<Q", self.data_offset) + text.ljust(self.data_offset - 16, b" "))
        self._fh.close()
        self._closed = True
        self._atomic.__exit__(None, None, None)
        return self.header

    def abort(self) -> None:
        if not self._closed:
            if self._behind:
                behind, self._behind = self._behind, None
                with contextlib.suppress(BaseException):
                    behind.close()
            self._fh.close()
            self._closed = True
            with contextlib.suppress(BaseException):
                self._atomic.__exit__(RuntimeError, RuntimeError("aborted"), None)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


def write_store(
    path: str | os.PathLike,
    i: np.ndarray,
    j: np.ndarray,
    x: np.ndarray,
    vocab_size: int,
    vocab_sha256: str | None = None,
    meta: dict | None = None,
) -> dict:
    """Write in-memory triples (any order, duplicates summed) as a store. Returns the header."""
    i, j, x = sort_reduce(i, j, x, vocab_size)
    with SortedStoreWriter(path, vocab_size, vocab_sha256, meta) as writer:
        writer.write(i, j, x)
    return writer.header


# ---------------------------------------------------------------- reading


class CoocStore:
    """Read a store: memory-mapped records, chunked iteration, pair lookups."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.exists():
            raise InputFileError(self.path, "co-occurrence store not found")
        size = self.path.stat().st_size
        with open(self.path, "rb") as fh:
            prefix = fh.read(16)
            if len(prefix) < 16 or prefix[:8] != MAGIC:
                raise InputFileError(self.path, "not a staticvec co-occurrence store (bad magic bytes)")
            (self.data_offset,) = struct.unpack("<Q", prefix[8:])
            if self.data_offset < 16 or self.data_offset > size:
                raise InputFileError(self.path, "truncated or corrupt store: header extends past the end of the file")
            raw = fh.read(self.data_offset - 16)
        try:
            self.header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputFileError(self.path, f"corrupt store header ({exc})") from None
        if self.header.get("format") != FORMAT or self.header.get("version") != VERSION:
            raise InputFileError(self.path,
                                 f"unsupported store format {self.header.get('format')!r} version {self.header.get('version')!r}")
        self.n_entries = int(self.header["n_entries"])
        self.vocab_size = int(self.header["vocab_size"])
        expected = self.data_offset + self.n_entries * RECORD.itemsize
        if size != expected:
            raise InputFileError(
                self.path,
                f"truncated or corrupt store: header announces {self.n_entries} entries "
                f"({expected} bytes) but the file has {size} bytes",
            )
        if self.n_entries:
            self.records = np.memmap(self.path, dtype=RECORD, mode="r", offset=self.data_offset, shape=(self.n_entries,))
        else:
            self.records = np.zeros(0, dtype=RECORD)

    # -- header
    @property
    def meta(self) -> dict:
        return self.header.get("meta", {})

    @property
    def vocab_sha256(self) -> str | None:
        return self.header.get("vocab_sha256")

    def __len__(self) -> int:
        return self.n_entries

    def __repr__(self) -> str:
        return f"CoocStore({str(self.path)!r}, n_entries={self.n_entries}, vocab_size={self.vocab_size})"

    def verify(self, chunk: int = 1 << 22) -> None:
        """Check the records' CRC-32 against the header; raise InputFileError when they differ."""
        crc = 0
        for start in range(0, self.n_entries, chunk):
            crc = zlib.crc32(np.ascontiguousarray(self.records[start : start + chunk]).tobytes(), crc)
        if f"crc32:{crc:08x}" != self.header.get("checksum"):
            raise InputFileError(self.path,
                                 f"corrupt store: checksum crc32:{crc:08x} differs from the header's {self.header.get('checksum')}")

    # -- access
    def iter_chunks(self, size: int = 1 << 22) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Records in order, as (i, j, x) arrays of at most ``size`` entries."""
        for start in range(0, self.n_entries, size):
            block = np.asarray(self.records[start : start + size])
            yield block["i"].copy(), block["j"].copy(), block["x"].copy()

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All records as contiguous (i int32, j int32, x float32) arrays."""
        i = np.empty(self.n_entries, np.int32)
        j = np.empty(self.n_entries, np.int32)
        x = np.empty(self.n_entries, np.float32)
        pos = 0
        for bi, bj, bx in self.iter_chunks():
            n = len(bi)
            i[pos : pos + n], j[pos : pos + n], x[pos : pos + n] = bi, bj, bx
            pos += n
        return i, j, x

    @property
    def sorted(self) -> bool:
        return bool(self.header.get("sorted", True))

    def count_before(self, row: int) -> int:
        """Number of records with i < row."""
        if not self.sorted:
            raise StaticvecError(f"{self.path}: a shuffled store has no row index (look pairs up in the sorted store)")
        # the row as the column's own type: a Python int makes numpy cast the whole column first (40 ms at 15M)
        return int(np.searchsorted(self.records["i"], np.int32(row), side="left")) if self.n_entries else 0

    def rows(self, r0: int, r1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Records of rows r0 ≤ i < r1 as (i, j, x) arrays."""
        block = np.asarray(self.records[self.count_before(r0) : self.count_before(r1)])
        return block["i"], block["j"], block["x"]

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The context ids and values of target ``i``."""
        _, j, x = self.rows(i, i + 1)
        return j.copy(), x.copy()

    def lookup(self, i: int, j: int) -> float:
        """X[i, j] (0.0 when the pair is absent), by binary search."""
        cols, vals = self.row(i)
        pos = int(np.searchsorted(cols, j))
        return float(vals[pos]) if pos < len(cols) and cols[pos] == j else 0.0

    def lookup_many(self, i: Sequence[int], j: Sequence[int]) -> np.ndarray:
        """X for many pairs at once (vectorised binary search over the (i, j) keys)."""
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        if self.n_entries == 0:
            return np.zeros(len(i), np.float64)
        lo = np.searchsorted(self.records["i"], i, side="left")
        hi = np.searchsorted(self.records["i"], i, side="right")
        out = np.zeros(len(i), np.float64)
        for k in range(len(i)):  # one binary search per queried pair
            cols = self.records["j"][lo[k] : hi[k]]
            pos = int(np.searchsorted(cols, j[k]))
            if pos < len(cols) and cols[pos] == j[k]:
                out[k] = self.records["x"][lo[k] + pos]
        return out

    def to_scipy(self):
        """The whole matrix as a scipy CSR matrix (small stores only)."""
        import scipy.sparse as sp

        i, j, x = self.arrays()
        return sp.csr_matrix((x.astype(np.float64), (i, j)), shape=(self.vocab_size, self.vocab_size))


# ---------------------------------------------------------------- sort + reduce kernel


@numba.njit(cache=True, nogil=True)
def _sort_reduce_kernel(i, j, x, row_lo, row_hi, n_cols, out_i, out_j, out_x):
    """Sort (i, j, x) by (i, j) and sum duplicates: bucket by row, then accumulate each
    row in a dense scratch vector and emit its touched columns in order. O(n + Σ u log u)."""
    n = i.shape[0]
    n_rows = row_hi - row_lo
    start = np.zeros(n_rows + 1, np.int64)
    for p in range(n):
        start[i[p] - row_lo + 1] += 1
    for r in range(n_rows):
        start[r + 1] += start[r]
    fill = start[:-1].copy()
    bj = np.empty(n, np.int32)
    bx = np.empty(n, np.float64)
    for p in range(n):
        r = i[p] - row_lo
        q = fill[r]
        fill[r] = q + 1
        bj[q] = j[p]
        bx[q] = x[p]
    acc = np.zeros(n_cols, np.float64)
    mark = np.full(n_cols, -1, np.int64)
    touched = np.empty(n_cols, np.int32)
    m = 0
    for r in range(n_rows):
        t = 0
        in_order = True
        for q in range(start[r], start[r + 1]):
            c = bj[q]
            if mark[c] != r:
                mark[c] = r
                acc[c] = bx[q]
                if t > 0 and c < touched[t - 1]:
                    in_order = False
                touched[t] = c
                t += 1
            else:
                acc[c] += bx[q]
        if t == 0:
            continue
        if not in_order:
            if t * 16 > n_cols:  # dense row: a scan is cheaper than a sort
                t = 0
                for c in range(n_cols):
                    if mark[c] == r:
                        touched[t] = c
                        t += 1
            else:
                touched[:t] = np.sort(touched[:t])
        for k in range(t):
            c = touched[k]
            out_i[m] = r + row_lo
            out_j[m] = c
            out_x[m] = acc[c]
            m += 1
    return m


def sort_reduce(
    i: np.ndarray, j: np.ndarray, x: np.ndarray, vocab_size: int, row_lo: int = 0, row_hi: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Triples sorted by (i, j) with duplicates summed (sum in float64, result float32)."""
    row_hi = vocab_size if row_hi is None else row_hi
    i = np.ascontiguousarray(i, dtype=np.int32)
    j = np.ascontiguousarray(j, dtype=np.int32)
    x = np.ascontiguousarray(x)
    if not (len(i) == len(j) == len(x)):
        raise ValueError("i, j and x differ in length")
    if len(i) == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32)
    if i.min() < row_lo or i.max() >= row_hi or j.min() < 0 or j.max() >= vocab_size:
        raise ValueError(f"word ids outside the vocabulary (0..{vocab_size - 1}) or the row range")
    out_i = np.empty(len(i), np.int32)
    out_j = np.empty(len(i), np.int32)
    out_x = np.empty(len(i), np.float64)
    m = _sort_reduce_kernel(i, j, x, row_lo, row_hi, vocab_size, out_i, out_j, out_x)
    return out_i[:m], out_j[:m], out_x[:m].astype(np.float32)


@numba.njit(cache=True, nogil=True)
def _merge_two_kernel(ai, aj, ax, bi, bj, bx, n_cols, out_i, out_j, out_x):
    """Merge two (i, j)-sorted duplicate-free record lists, summing shared pairs."""
    p = 0
    q = 0
    m = 0
    na = ai.shape[0]
    nb = bi.shape[0]
    while p < na and q < nb:
        ka = np.int64(ai[p]) * n_cols + aj[p]
        kb = np.int64(bi[q]) * n_cols + bj[q]
        if ka < kb:
            out_i[m] = ai[p]
            out_j[m] = aj[p]
            out_x[m] = ax[p]
            p += 1
        elif kb < ka:
            out_i[m] = bi[q]
            out_j[m] = bj[q]
            out_x[m] = bx[q]
            q += 1
        else:
            out_i[m] = ai[p]
            out_j[m] = aj[p]
            out_x[m] = ax[p] + bx[q]
            p += 1
            q += 1
        m += 1
    while p < na:
        out_i[m] = ai[p]
        out_j[m] = aj[p]
        out_x[m] = ax[p]
        p += 1
        m += 1
    while q < nb:
        out_i[m] = bi[q]
        out_j[m] = bj[q]
        out_x[m] = bx[q]
        q += 1
        m += 1
    return m


def merge_sorted_parts(parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], vocab_size: int):
    """Merge sorted, duplicate-free (i, j, x) parts into one, summing shared pairs (float64
    sums), by a balanced tree of two-way merges: O(n log k), sequential memory access."""
    parts = [(np.ascontiguousarray(i, np.int32), np.ascontiguousarray(j, np.int32), np.asarray(x, np.float64))
             for i, j, x in parts if len(i)]
    if not parts:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32)
    while len(parts) > 1:
        merged = []
        for k in range(0, len(parts) - 1, 2):
            (ai, aj, ax), (bi, bj, bx) = parts[k], parts[k + 1]
            n = len(ai) + len(bi)
            oi, oj, ox = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.float64)
            m = _merge_two_kernel(ai, aj, ax, bi, bj, bx, vocab_size, oi, oj, ox)
            merged.append((oi[:m], oj[:m], ox[:m]))
        if len(parts) % 2:
            merged.append(parts[-1])
        parts = merged
    i, j, x = parts[0]
    return i, j, x.astype(np.float32)


# ---------------------------------------------------------------- sources and merging


class ArraySource:
    """Sorted in-memory records as a merge source."""

    def __init__(self, i: np.ndarray, j: np.ndarray, x: np.ndarray):
        self.i, self.j, self.x = i, j, x

    def __len__(self) -> int:
        return len(self.i)

    def count_before(self, row: int) -> int:
        return int(np.searchsorted(self.i, self.i.dtype.type(row), side="left"))  # (CoocStore.count_before)

    def rows(self, r0: int, r1: int):
        a, b = self.count_before(r0), self.count_before(r1)
        return self.i[a:b], self.j[a:b], self.x[a:b]


def merge_meta(metas: Sequence[dict], names: Sequence[str]) -> dict:
    """Combine the ``meta`` of merged stores: counters add up, source lists concatenate,
    every other key must agree (merging counts of different windows is an error)."""
    if not metas:
        return {}
    merged: dict = {}
    for key in dict.fromkeys(k for m in metas for k in m):
        values = [m.get(key) for m in metas]
        if key in SUMMED_META:
            merged[key] = sum(v or 0 for v in values)
        elif key in LISTED_META:
            merged[key] = [s for v in values for s in (v or [])]
        else:
            for name, value in zip(names, values):
                if value != values[0]:
                    raise StaticvecError(
                        f"cannot merge co-occurrence stores with different '{key}': "
                        f"{names[0]} has {values[0]!r}, {name} has {value!r}"
                    )
            merged[key] = values[0]
    return merged


def _row_blocks(sources: Sequence, vocab_size: int, block_entries: int) -> list[tuple[int, int]]:
    """The merge's blocks of rows [r0, r1): each holds the rows whose records (over all sources) number at most
    ``block_entries`` (or one row, if a single row has more); the rows past the last record are left out."""
    blocks = []
    total = sum(len(s) for s in sources)
    r0 = 0
    while r0 < vocab_size:
        base = [s.count_before(r0) for s in sources]
        if total == sum(base):
            break

        def load(r1: int) -> int:
            return sum(s.count_before(r1) - b for s, b in zip(sources, base))

        lo, hi = r0 + 1, vocab_size  # largest r1 in [r0+1, V] with load(r1) <= block
        if load(hi) <= block_entries:
            lo = hi
        else:
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if load(mid) <= block_entries:
                    lo = mid
                else:
                    hi = mid - 1
        blocks.append((r0, lo))
        r0 = lo
    return blocks


def merge_sources(
    sources: Sequence,
    out: str | os.PathLike,
    vocab_size: int,
    vocab_sha256: str | None = None,
    meta: dict | None = None,
    block_entries: int = 1 << 20,
) -> dict:
    """Merge sorted sources into one store, block of rows by block of rows.

    Each block holds the rows whose records (over all sources) number at most
    ``block_entries`` (or one row, if a single row has more), so memory stays bounded.
    Blocks are kept small (arrays of a few MB) so that the allocator reuses their memory
    instead of mapping and faulting in fresh pages for every block. Three threads share the work: one reads
    the sources' next block (:func:`staticvec.background.made_ahead`: a source's ``rows`` may reuse the arrays of
    its call before the last, as the window counter's table does), this one merges the block, and the writer's
    thread checksums and writes the block before (``SortedStoreWriter(background=True)``).
    """
    from functools import partial

    from staticvec.background import made_ahead

    def read(r0: int, r1: int):
        return [p for p in (s.rows(r0, r1) for s in sources) if len(p[0])]

    with SortedStoreWriter(out, vocab_size, vocab_sha256, meta, background=True) as writer:
        for parts in made_ahead(partial(read, r0, r1) for r0, r1 in _row_blocks(sources, vocab_size, block_entries)):
            if parts:
                i, j, x = parts[0] if len(parts) == 1 else merge_sorted_parts(parts, vocab_size)
                writer.write(i, j, x)
    return writer.header


def merge_stores(
    inputs: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    max_open: int = 64,
    block_entries: int = 1 << 20,
    tmp_dir: str | os.PathLike | None = None,
    meta: dict | None = None,
    verify: bool = True,
) -> dict:
    """Merge store files (same vocabulary) into one, summing shared pairs.

    At most ``max_open`` files are open at once: with more inputs, groups of ``max_open``
    are merged into temporary stores first (several passes if needed). ``meta`` defaults
    to :func:`merge_meta` of the inputs. Inputs are checksum-verified unless ``verify`` is off.
    """
    if not inputs:
        raise StaticvecError("no co-occurrence stores to merge")
    if max_open < 2:
        raise ValueError("max_open must be at least 2")
    stores = [CoocStore(p) for p in inputs]  # header checks only; records are not mapped twice
    sizes = {s.vocab_size for s in stores}
    shas = {s.vocab_sha256 for s in stores}
    if len(sizes) > 1 or len(shas) > 1:
        raise StaticvecError(
            "cannot merge co-occurrence stores over different vocabularies: "
            + ", ".join(f"{s.path} ({s.vocab_size} words, sha {str(s.vocab_sha256)[:12]})" for s in stores)
        )
    vocab_size, vocab_sha = sizes.pop(), shas.pop()
    if meta is None:
        meta = merge_meta([s.meta for s in stores], [str(s.path) for s in stores])
    if verify:
        for s in stores:
            s.verify()
    del stores
    paths = [Path(p) for p in inputs]
    out = Path(out)
    with _temporary_dir(tmp_dir or out.parent, prefix=f".{out.name}.merge.") as tmp:
        pass_no = 0
        while len(paths) > max_open:
            pass_no += 1
            groups = [paths[k : k + max_open] for k in range(0, len(paths), max_open)]
            log.info("merge pass %d: %d stores in %d groups of at most %d", pass_no, len(paths), len(groups), max_open)
            next_paths = []
            for g, group in enumerate(groups):
                target = Path(tmp) / f"pass{pass_no}-{g:05d}.cooc"
                merge_sources([CoocStore(p) for p in group], target, vocab_size, vocab_sha, {}, block_entries)
                next_paths.append(target)
            paths = next_paths
        return merge_sources([CoocStore(p) for p in paths], out, vocab_size, vocab_sha, meta, block_entries)


@contextlib.contextmanager
def _temporary_dir(parent: str | os.PathLike, prefix: str):
    Path(parent).mkdir(parents=True, exist_ok=True)
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------- bounded-memory accumulator


class CoocAccumulator:
    """Accumulate (i, j, x) triples in bounded memory and write them as one store.

    Triples go to a buffer of ``buffer_entries``; a full buffer is sorted, reduced and
    spilled as a run file under ``tmp_dir``; :meth:`finish` merges the runs (and what is
    left in the buffer) into the output with at most ``max_open`` files open at once.
    Use as a context manager so the runs are removed even on failure.
    """

    def __init__(
        self,
        vocab_size: int,
        buffer_entries: int = 1 << 24,
        tmp_dir: str | os.PathLike | None = None,
        max_open: int = 64,
    ):
        self.vocab_size = int(vocab_size)
        self.buffer_entries = int(buffer_entries)
        self.max_open = max_open
        self._tmp_ctx = _temporary_dir(tmp_dir or tempfile.gettempdir(), prefix="staticvec-cooc-runs.")
        self.tmp_dir = Path(self._tmp_ctx.__enter__())
        self._i = np.empty(self.buffer_entries, np.int32)
        self._j = np.empty(self.buffer_entries, np.int32)
        self._x = np.empty(self.buffer_entries, np.float64)
        self._n = 0
        self.runs: list[Path] = []

    def add(self, i, j, x) -> None:
        i = np.asarray(i, dtype=np.int64).ravel()
        j = np.asarray(j, dtype=np.int64).ravel()
        x = np.broadcast_to(np.asarray(x, dtype=np.float64), i.shape).ravel()
        if len(j) != len(i):
            raise ValueError("i and j differ in length")
        if len(i) and (i.min() < 0 or j.min() < 0 or i.max() >= self.vocab_size or j.max() >= self.vocab_size):
            raise ValueError(f"word ids outside the vocabulary (0..{self.vocab_size - 1})")
        pos = 0
        while pos < len(i):
            take = min(len(i) - pos, self.buffer_entries - self._n)
            sl = slice(self._n, self._n + take)
            self._i[sl], self._j[sl], self._x[sl] = i[pos : pos + take], j[pos : pos + take], x[pos : pos + take]
            self._n += take
            pos += take
            if self._n == self.buffer_entries:
                self.spill()

    def _reduced_buffer(self):
        n, self._n = self._n, 0
        return sort_reduce(self._i[:n], self._j[:n], self._x[:n], self.vocab_size)

    def spill(self) -> None:
        """Write the buffer as a sorted run (a store) under tmp_dir."""
        if self._n:
            self.write_run(*self._reduced_buffer())

    def write_run(self, i: np.ndarray, j: np.ndarray, x: np.ndarray) -> None:
        """Write sorted, duplicate-free records as one more run."""
        run = self.tmp_dir / f"run{len(self.runs):06d}.cooc"
        with SortedStoreWriter(run, self.vocab_size) as writer:
            writer.write(i, j, x)
        self.runs.append(run)
        log.debug("spilled run %s (%d entries)", run.name, len(i))

    def finish(
        self,
        out: str | os.PathLike,
        vocab_sha256: str | None = None,
        meta: dict | None = None,
        extra_sources: Sequence = (),
        block_entries: int = 1 << 20,
    ) -> dict:
        """Write the store: the runs, the buffer and ``extra_sources`` (sorted), merged."""
        sources = list(extra_sources)
        if self._n:
            sources.append(ArraySource(*self._reduced_buffer()))
        runs = list(self.runs)
        budget = max(self.max_open - len(sources), 2)
        if len(runs) > budget:  # fold the runs down so that runs + in-memory sources fit the fan-in
            folded = self.tmp_dir / "runs-merged.cooc"
            merge_stores(runs, folded, max_open=self.max_open, block_entries=block_entries, tmp_dir=self.tmp_dir, meta={}, verify=False)
            runs = [folded]
        sources += [CoocStore(r) for r in runs]
        return merge_sources(sources, out, self.vocab_size, vocab_sha256, meta, block_entries)

    def close(self) -> None:
        self._tmp_ctx.__exit__(None, None, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ---------------------------------------------------------------- a store on a sub-vocabulary


def subset_store(
    source: str | os.PathLike,
    source_vocab,
    vocab,
    out: str | os.PathLike,
    buffer_entries: int = 1 << 24,
    tmp_dir: str | os.PathLike | None = None,
    max_open: int = 64,
) -> dict:
    """The entries of ``source`` (ids of ``source_vocab``) whose two words are in ``vocab``, with
    ``vocab``'s ids — a corpus fraction's own vocabulary (its words counted in the fraction only).

    Words of ``vocab`` missing from ``source_vocab`` have no entry; their number is in the
    header (``meta.words_not_in_source``). Bounded memory: the remapped ids are no longer in
    row order, so the entries go through :class:`CoocAccumulator`'s external sort.
    """
    store = CoocStore(source)
    if store.vocab_size != len(source_vocab) or (
        store.vocab_sha256 and store.vocab_sha256 != vocab_fingerprint(source_vocab)
    ):
        raise InputFileError(source, f"store was counted over another vocabulary than the {len(source_vocab)} words given")
    remap = np.full(len(source_vocab), -1, dtype=np.int64)
    index = vocab.index
    for k, word in enumerate(source_vocab.words):
        remap[k] = index.get(word, -1)
    missing = len(vocab) - int((remap >= 0).sum())
    n_in = n_kept = 0
    with CoocAccumulator(len(vocab), buffer_entries, tmp_dir or Path(out).parent, max_open) as acc:
        for i, j, x in store.iter_chunks():
            n_in += len(i)
            a, b = remap[i], remap[j]
            keep = (a >= 0) & (b >= 0)
            n_kept += int(keep.sum())
            acc.add(a[keep], b[keep], x[keep])
        meta = dict(store.meta, subset={"source": str(source), "source_vocab_size": len(source_vocab),
                                        "vocab_size": len(vocab), "entries_in": n_in, "entries_kept": n_kept,
                                        "words_not_in_source": missing})
        header = acc.finish(out, vocab_fingerprint(vocab), meta)
    if missing:
        log.warning("%s: %d words of the vocabulary are not in the store's vocabulary: no entries", out, missing)
    return header
