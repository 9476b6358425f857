"""What keeps a feature pass's device busy: host work overlapped with device work, and few, large copies.

A teacher pass alternates host work (reading a shard, tokenising, building index arrays, writing part
files) with device work (the forward and the poolings). On a GPU the forward of a part takes a tenth of
the host work around it (``benchmarks/README.md``), so the host work is taken off the critical path:

- :class:`OrderedWorkers`: parts are read, tokenised and indexed in worker processes (as many as the
  job's host cores, ``--host-workers``), each preparing every n-th part, and handed to the device in
  order; a part travels as a few flat numpy buffers (pickle protocol 5, out of band), never as Python
  lists of words;
- :func:`lookahead` (without workers): the next part is prepared in a background thread while the
  current one runs (the Rust tokenizer and numpy release the GIL);
- :class:`BackgroundWriter`: a finished part is written in a background thread, in order, while the
  next one runs;
- :class:`PackedArrays` / :class:`HostArrays`: a batch's index arrays are packed into one int64 buffer
  on the host (in a worker, without torch) and go to the device in one non-blocking copy from pinned
  memory (a copy from pageable memory would wait for the device's queue to drain);
- :class:`PartOutputs`: a part's feature arrays are filled on the device (results scattered to their
  word and sentence rows there, converted to the storage dtype there) and come back in one pinned copy
  each, with one synchronisation per part.

On the CPU the device *is* the host: nothing is copied (:class:`PartOutputs` fills the returned numpy
arrays in place) and nothing is overlapped by default (the CPU is then the bottleneck, and a teacher
job's threads are what its rule reserves). None of this changes a value: the same operations run on
the same tensors whatever overlaps.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import time
import traceback
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Iterable, Iterator

import numpy as np

from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)


def on_accelerator(device) -> bool:
    """Whether ``device`` is not the CPU (host work can then overlap the device's)."""
    return str(device).split(":")[0] != "cpu"


def host_workers_for(device, requested: int | str = "auto") -> int:
    """Worker processes of a pass's host work: ``requested``, or for ``auto`` on an accelerator the job's
    threads (``OMP_NUM_THREADS``, which Snakemake sets to a job's ``threads``; else the cores this process may
    use), on the CPU 0 (the forward takes the job's cores; the host work stays in the process)."""
    if requested != "auto":
        return int(requested)
    if not on_accelerator(device):
        return 0
    from staticvec.device import default_threads

    threads = os.environ.get("OMP_NUM_THREADS", "")
    return int(threads) if threads.isdigit() and int(threads) > 0 else default_threads()


def lookahead(function: Callable, items: Iterable, background: bool = True) -> Iterator:
    """``function(item)`` for each item, in order; in ``background``, the next item's call runs in a
    thread while the caller works on the current result (one call ahead: memory stays bounded).

    ``items`` is advanced in that thread only. Closing the iterator early waits for the call under way,
    so that nothing of it (a tokenizer, say) is still in use when the caller goes on."""
    items = iter(items)
    if not background:
        for item in items:
            yield function(item)
        return
    done = object()

    def next_result():
        item = next(items, done)
        return done if item is done else function(item)

    with ThreadPoolExecutor(1, thread_name_prefix="staticvec-lookahead") as pool:
        pending = pool.submit(next_result)
        while (result := pending.result()) is not done:
            pending = pool.submit(next_result)
            yield result


class BackgroundWriter:
    """Runs write jobs in ``threads`` background threads, started in order, at most ``threads`` pending (their
    arrays are the only extra memory); a job submitted ``after_all`` starts once every earlier one has finished
    (an ASE checkpoint after the parts it covers). A job's exception is raised by a later :meth:`submit` or by
    :meth:`close`. Without ``background`` a job runs at once. Several threads write in parallel: a part file's
    CRC and its writes release the GIL."""

    def __init__(self, background: bool = True, threads: int = 1):
        self.threads = max(1, int(threads))
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="staticvec-writer") if background else None
        self.pending: deque[Future] = deque()

    def submit(self, job: Callable, *args, after_all: bool = False) -> None:
        if self.pool is None:
            job(*args)
            return
        while len(self.pending) >= self.threads or (after_all and self.pending):
            self.pending.popleft().result()
        self.pending.append(self.pool.submit(job, *args))

    def wait(self) -> None:
        while self.pending:
            self.pending.popleft().result()

    def close(self) -> None:
        """Wait for the jobs (raising the first exception) and stop the threads."""
        try:
            self.wait()
        finally:
            if self.pool is not None:
                for pending in self.pending:  # after an exception: the others still finish (their files are atomic)
                    pending.exception()
                self.pool.shutdown(wait=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        else:  # the caller's exception wins; the jobs under way still finish (their files are atomic)
            try:
                self.close()
            except Exception:  # noqa: BLE001 - secondary to the one being raised
                pass


class PackedArrays:
    """Integer arrays packed into one flat int64 buffer (numpy only: built where no torch is imported, in a
    worker process, and sent as one buffer), with each array's place and shape."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.layout = []
        self.flat = np.empty(sum(array.size for array in arrays.values()), dtype=np.int64)
        start = 0
        for name, array in arrays.items():
            self.layout.append((name, start, array.shape))
            self.flat[start:start + array.size] = array.reshape(-1)
            start += array.size

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays (int64 views of the buffer)."""
        return {name: self.flat[begin:begin + int(np.prod(shape, dtype=np.int64))].reshape(shape)
                for name, begin, shape in self.layout}


class HostArrays:
    """Integer arrays of the host bound for the device together: one int64 buffer (:class:`PackedArrays`;
    pinned when the device is CUDA) on the host side, sent in one copy by :meth:`to`, unpacked into views."""

    def __init__(self, arrays: dict[str, np.ndarray] | PackedArrays, pin: bool = False):
        import torch

        packed = arrays if isinstance(arrays, PackedArrays) else PackedArrays(arrays)
        self.layout = packed.layout
        self.buffer = torch.from_numpy(packed.flat)
        if pin:
            self.buffer = self.buffer.pin_memory()

    def to(self, device) -> dict:
        """The arrays as int64 tensors on ``device`` (on the CPU: views of the host buffer)."""
        flat = self.buffer.to(device, non_blocking=True)
        return {name: flat[begin:begin + int(np.prod(shape, dtype=np.int64))].view(shape)
                for name, begin, shape in self.layout}


class PartOutputs:
    """A part's output arrays, filled where the teacher runs and brought to the host once.

    :meth:`new` gives a tensor on the device to scatter batch results into; :meth:`host` returns the numpy
    arrays. On the CPU (``in_place``) the tensor *is* the numpy array: nothing is copied. Elsewhere each
    array comes back in one copy, on CUDA non-blocking into pinned memory, with one synchronisation."""

    def __init__(self, device, in_place: bool | None = None):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.in_place = self.device.type == "cpu" if in_place is None else in_place
        self.pinned = self.device.type == "cuda"
        self.tensors: dict[str, object] = {}
        self.arrays: dict[str, np.ndarray] = {}

    def new(self, name: str, shape: tuple, dtype, fill=0):
        torch = self.torch
        dtype = np.dtype(dtype)
        if self.in_place:
            self.arrays[name] = np.full(shape, fill, dtype=dtype)
            tensor = torch.from_numpy(self.arrays[name])
        else:
            tensor = torch.full(shape, fill, dtype=torch.from_numpy(np.empty(0, dtype)).dtype, device=self.device)
        self.tensors[name] = tensor
        return tensor

    def host(self) -> dict[str, np.ndarray]:
        torch = self.torch
        if self.in_place:
            return dict(self.arrays)
        out = {}
        for name, tensor in self.tensors.items():
            out[name] = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=self.pinned)
            out[name].copy_(tensor, non_blocking=self.pinned)
        if self.pinned:
            torch.cuda.current_stream(self.device).synchronize()
        return {name: host.numpy() for name, host in out.items()}


# ---------------------------------------------------------------- worker processes


def send_message(conn, obj) -> None:
    """``obj`` through a pipe: its pickle (protocol 5) with numpy buffers sent out of band, each as written in
    memory (no copy into the pickle, none out of it: the receiver reads each into its own buffer)."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    raw = [b.raw() for b in buffers]
    conn.send_bytes(pickle.dumps((head, [r.nbytes for r in raw]), protocol=5))
    for r in raw:
        conn.send_bytes(r)


def recv_message(conn):
    head, sizes = pickle.loads(conn.recv_bytes())
    buffers = []
    for size in sizes:
        buffer = bytearray(size)  # writable: the arrays built on it are writable (torch.from_numpy)
        if size:
            conn.recv_bytes_into(buffer)
        else:
            conn.recv_bytes()
        buffers.append(buffer)
    return pickle.loads(head, buffers=buffers)


class RemoteTraceback(Exception):
    """A worker process's traceback, as the cause of the exception it raised."""

    def __str__(self):
        return self.args[0]


def _worker_main(conn, produce: Callable, args: tuple, worker: int, n_workers: int) -> None:
    """A worker process: ``produce(*args, worker, n_workers)``'s items through ``conn``, then ``done``; an
    exception goes back with its traceback (and the worker exits)."""
    # one core per worker: the tokenizer's own thread pool would oversubscribe the job's cores (same pieces)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        for item in produce(*args, worker, n_workers):
            send_message(conn, ("item", item))
        send_message(conn, ("done", None))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
        text = traceback.format_exc()
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - one that does not round-trip goes back as its message, of its kind
            exc = (StaticvecError if isinstance(exc, StaticvecError) else RuntimeError)(
                str(exc) if isinstance(exc, StaticvecError) else f"{type(exc).__name__}: {exc}")
        try:
            send_message(conn, ("error", (exc, text)))
        except (BrokenPipeError, OSError):  # the parent is gone
            pass
    finally:
        conn.close()


class OrderedWorkers:
    """The items of a sequence computed in ``n_workers`` processes and given back in order, one at a time.

    Worker ``k`` runs ``produce(*args, k, n_workers)``, a generator of the sequence's items ``k``, ``k + n``,
    ``k + 2n``… (each worker reads its input itself and skips the others' items); item ``j`` is then read
    from worker ``j mod n``. The sequence ends where a worker has no next item. A worker blocks in its send
    until its item is read, so at most ``n_workers`` items wait (memory stays bounded), and each starts on
    its next item as soon as one is taken. An exception in a worker is raised here, its traceback as the
    cause; a worker that dies raises a :class:`StaticvecError`. Closing (the end of a ``with``, the
    iterator closed, an exception of the caller's) terminates and joins every worker: none outlives it.

    Processes are spawned (not forked): the parent may hold CUDA, OpenMP and tokenizer threads, which a
    fork would copy in an undefined state; ``produce`` and ``args`` must pickle."""

    def __init__(self, produce: Callable, args: tuple, n_workers: int, name: str = "staticvec-host"):
        if n_workers < 1:
            raise StaticvecError(f"host workers: {n_workers}, expected at least 1")
        context = multiprocessing.get_context("spawn")
        self.n = n_workers
        self.conns, self.processes = [], []
        try:
            for k in range(n_workers):
                parent, child = context.Pipe(duplex=False)
                process = context.Process(target=_worker_main, args=(child, produce, args, k, n_workers),
                                          name=f"{name}-{k}", daemon=True)
                process.start()
                child.close()
                self.conns.append(parent)
                self.processes.append(process)
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator:
        try:
            j = 0
            while True:
                k = j % self.n
                try:
                    kind, payload = recv_message(self.conns[k])
                except (EOFError, OSError):
                    self.processes[k].join(5)
                    raise StaticvecError(f"host worker {k} died (exit code {self.processes[k].exitcode}) before "
                                         f"item {j}: killed for memory? see the job's log") from None
                if kind == "done":  # the others are at the end of their input too: they exit by themselves
                    self.close(grace=10.0)
                    return
                if kind == "error":
                    exc, text = payload
                    raise exc from RemoteTraceback(f"in host worker {k}:\n{text}")
                yield payload
                j += 1
        finally:
            self.close()

    def close(self, grace: float = 0.0) -> None:
        """Stop every worker (those still running after ``grace`` seconds are terminated) and wait for them."""
        deadline = time.monotonic() + grace
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(10)
            if process.is_alive():  # pragma: no cover - ignored SIGTERM
                process.kill()
                process.join()
        for conn in self.conns:
            conn.close()
        self.processes, self.conns = [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
