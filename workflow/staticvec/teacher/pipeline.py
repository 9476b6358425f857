"""What keeps a feature pass's device busy: host work overlapped with device work, and few, large copies.

A teacher pass alternates host work (reading a shard, tokenising, building index arrays, writing part
files) with device work (the forward and the poolings). On a GPU the forward of a part takes a tenth of
the host work around it (``benchmarks/README.md``), so the host work is taken off the critical path:

- :class:`OrderedWorkers`: parts are read, tokenised and indexed in worker processes (as many as the
  job's host cores, ``--host-workers``), each preparing every n-th part, and handed to the device in
  order; a part travels as a few flat numpy buffers (pickle protocol 5, out of band), never as Python
  lists of words. The workers also write the finished parts (``consume``): the device's outputs are
  copied into a shared-memory block (:class:`SharedArrays`) that a worker writes the file from, so the
  process driving the device only copies; a worker takes turns between the two jobs (one core's work);
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
import threading
import time
import traceback
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from multiprocessing import shared_memory
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


class _Turns:
    """A worker's two threads (the parts it prepares, the files it writes) take turns on its core: never both
    at once, so that a worker is one core's work, and a write that waits goes before the next part's
    preparation (its block is what the driving process waits for)."""

    def __init__(self):
        self.turn = threading.Condition()
        self.count = threading.Lock()
        self.writes_waiting = 0

    @contextmanager
    def preparing(self):
        with self.turn:
            self.turn.wait_for(lambda: self.writes_waiting == 0)
            yield

    @contextmanager
    def writing(self):
        with self.count:
            self.writes_waiting += 1
        with self.turn:
            try:
                yield
            finally:
                with self.count:
                    self.writes_waiting -= 1
                self.turn.notify_all()


def _failure(exc: BaseException) -> tuple[BaseException, str]:
    """An exception and its traceback as they can cross to the parent (one that does not pickle goes back as its
    message, of its kind)."""
    text = traceback.format_exc()
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any exception that does not round-trip
        exc = (StaticvecError if isinstance(exc, StaticvecError) else RuntimeError)(
            str(exc) if isinstance(exc, StaticvecError) else f"{type(exc).__name__}: {exc}")
    return exc, text


def _consume_jobs(jobs, consume: Callable, consume_args: tuple, turns: _Turns) -> None:
    """A worker's job thread: ``consume(*consume_args, job)`` for each job the parent sends, in order, each
    acknowledged; ``None`` (or the parent gone) ends it; a failure goes back with its traceback and ends it."""
    while True:
        try:
            message = recv_message(jobs)
        except (EOFError, OSError):  # the parent closed its end or is gone
            return
        if message is None:
            return
        try:
            with turns.writing():
                consume(*consume_args, message)
            reply = ("done", None)
        except BaseException as exc:  # noqa: BLE001 - every failure (a full disk, say) goes back to the parent
            reply = ("error", _failure(exc))
        try:
            send_message(jobs, reply)
        except (BrokenPipeError, OSError):
            return
        if reply[0] == "error":
            return


def _worker_main(conn, produce: Callable, args: tuple, worker: int, n_workers: int, jobs=None,
                 consume: Callable | None = None, consume_args: tuple = ()) -> None:
    """A worker process: ``produce(*args, worker, n_workers)``'s items through ``conn``, then ``done``; an
    exception goes back with its traceback (and the worker exits). With ``jobs``, a thread runs the parent's
    jobs meanwhile (:func:`_consume_jobs`), taking turns with the items; the worker ends once the parent says
    there are no more."""
    # one core per worker: the tokenizer's own thread pool would oversubscribe the job's cores (same pieces)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    turns = _Turns() if jobs is not None else None
    consumer = None
    if jobs is not None:
        consumer = threading.Thread(target=_consume_jobs, args=(jobs, consume, consume_args, turns),
                                    name="staticvec-jobs", daemon=True)
        consumer.start()
    end = object()
    try:
        items = iter(produce(*args, worker, n_workers))
        while True:
            with turns.preparing() if turns else nullcontext():
                item = next(items, end)
            if item is end:
                break
            send_message(conn, ("item", item))  # (not in a turn: the jobs go on while the parent is busy)
        send_message(conn, ("done", None))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
        try:
            send_message(conn, ("error", _failure(exc)))
        except (BrokenPipeError, OSError):  # the parent is gone
            pass
    finally:
        conn.close()
    if consumer is not None:  # (after a failure too: the jobs sent before it finish, until the parent closes)
        consumer.join()


class OrderedWorkers:
    """The items of a sequence computed in ``n_workers`` processes and given back in order, one at a time.

    Worker ``k`` runs ``produce(*args, k, n_workers)``, a generator of the sequence's items ``k``, ``k + n``,
    ``k + 2n``… (each worker reads its input itself and skips the others' items); item ``j`` is then read
    from worker ``j mod n``. The sequence ends where a worker has no next item. A worker blocks in its send
    until its item is read, so at most ``n_workers`` items wait (memory stays bounded), and each starts on
    its next item as soon as one is taken. An exception in a worker is raised here, its traceback as the
    cause; a worker that dies raises a :class:`StaticvecError`. Closing (the end of a ``with``, the
    iterator closed, an exception of the caller's) terminates and joins every worker: none outlives it.

    With ``consume``, the workers also run jobs the caller sends back (:meth:`submit`): worker ``k`` runs
    ``consume(*consume_args, job)`` for each of its jobs, in order, taking turns with its items, and
    acknowledges each (:meth:`reply`); the workers then stay until :meth:`finish` says there are no more
    jobs, or :meth:`close` stops them (the end of the ``with``: the iterator's end or an error leaves them
    for their jobs).

    Processes are spawned (not forked): the parent may hold CUDA, OpenMP and tokenizer threads, which a
    fork would copy in an undefined state; ``produce``, ``args``, ``consume`` and ``consume_args`` must
    pickle."""

    def __init__(self, produce: Callable, args: tuple, n_workers: int, name: str = "staticvec-host",
                 consume: Callable | None = None, consume_args: tuple = ()):
        if n_workers < 1:
            raise StaticvecError(f"host workers: {n_workers}, expected at least 1")
        context = multiprocessing.get_context("spawn")
        self.n = n_workers
        self.conns, self.processes, self.jobs = [], [], []
        try:
            for k in range(n_workers):
                parent, child = context.Pipe(duplex=False)
                jobs_here = jobs_there = None
                if consume is not None:
                    jobs_here, jobs_there = context.Pipe(duplex=True)
                process = context.Process(target=_worker_main, name=f"{name}-{k}", daemon=True,
                                          args=(child, produce, args, k, n_workers, jobs_there, consume, consume_args))
                process.start()
                child.close()
                self.conns.append(parent)
                self.processes.append(process)
                if jobs_there is not None:
                    jobs_there.close()
                    self.jobs.append(jobs_here)
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator:
        finished = False
        try:
            j = 0
            while True:
                k = j % self.n
                try:
                    kind, payload = recv_message(self.conns[k])
                except (EOFError, OSError):
                    raise self._died(k, f"before item {j}") from None
                if kind == "done":  # the others are at the end of their input too
                    finished = True
                    if not self.jobs:  # they exit by themselves
                        self.close(grace=10.0)
                    return  # (with jobs, the workers stay for them: finish() or close())
                if kind == "error":
                    exc, text = payload
                    raise exc from RemoteTraceback(f"in host worker {k}:\n{text}")
                yield payload
                j += 1
        finally:
            if not finished and not self.jobs:  # (with jobs, the owner closes: the jobs sent may still finish)
                self.close()

    def _died(self, k: int, when: str) -> StaticvecError:
        self.processes[k].join(5)
        return StaticvecError(f"host worker {k} died (exit code {self.processes[k].exitcode}) {when}: killed for "
                              "memory? see the job's log")

    def submit(self, k: int, job) -> None:
        """Send ``job`` to worker ``k`` (run there after the jobs sent before it)."""
        try:
            send_message(self.jobs[k], job)
        except (BrokenPipeError, OSError):
            raise self._died(k, "with jobs to run") from None

    def reply(self, k: int) -> None:
        """Wait for worker ``k`` to finish its oldest job not yet replied; its exception is raised here."""
        try:
            kind, payload = recv_message(self.jobs[k])
        except (EOFError, OSError):
            raise self._died(k, "with jobs running") from None
        if kind == "error":
            exc, text = payload
            raise exc from RemoteTraceback(f"in host worker {k}'s jobs:\n{text}")

    def replied(self, k: int, timeout: float = 0.0) -> bool:
        """Whether worker ``k`` has a reply waiting (:meth:`reply` would not block), within ``timeout`` seconds."""
        try:
            return self.jobs[k].poll(timeout)
        except (EOFError, OSError):  # gone: reply() says so
            return True

    def finish(self, grace: float = 60.0) -> None:
        """No more jobs: the workers end once theirs are done (replies the caller has not read are dropped); those
        still running after ``grace`` seconds are terminated."""
        for conn in self.jobs:
            try:
                send_message(conn, None)
            except (BrokenPipeError, OSError):  # that worker is gone: close() reports nothing more of it
                pass
        self.close(grace)

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
        for conn in self.conns + self.jobs:
            conn.close()
        self.processes, self.conns, self.jobs = [], [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------- shared memory


def shared_memory_free(folder: str = "/dev/shm") -> int | None:
    """Bytes free for shared memory (``/dev/shm`` on Linux; None where it cannot be told)."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


class SharedMemoryShort(StaticvecError):
    """Less shared memory free than a block needs (a container's 64 MB ``/dev/shm``, say)."""


class SharedArrays:
    """Numpy arrays copied into one named shared-memory block, for another process to read where they lie
    (:func:`shared_arrays`): the block is reused from one put to the next and replaced by a larger one (a
    quarter more than asked) when a put needs more. The caller puts again only once the reader is done with
    the last put. :meth:`release` unlinks it (a reader's mapping stays valid until the reader closes it)."""

    ALIGN = 64  # each array's start (cache lines; every dtype's alignment)

    def __init__(self):
        self.block: shared_memory.SharedMemory | None = None

    def put(self, arrays: dict[str, np.ndarray]) -> tuple[str, list]:
        """Copy ``arrays`` in; returns the block's name and the layout :func:`shared_arrays` reads."""
        arrays = {name: np.asarray(array) for name, array in arrays.items()}
        layout, end = [], 0
        for name, array in arrays.items():
            if array.dtype.hasobject:
                raise ValueError(f"{name}: object arrays do not go into shared memory")
            layout.append((name, end, array.shape, array.dtype))
            end += -(-array.nbytes // self.ALIGN) * self.ALIGN
        if self.block is None or self.block.size < end:
            self.release()
            size = max(end + end // 4, 1 << 16)
            free = shared_memory_free()
            if free is not None and free < size:
                raise SharedMemoryShort(f"shared memory: a block of {size / 1e6:.1f} MB is asked, {free / 1e6:.1f} MB "
                                        "are free in /dev/shm")
            self.block = shared_memory.SharedMemory(create=True, size=size)
        for (_, start, shape, dtype), array in zip(layout, arrays.values()):
            view = np.ndarray(shape, dtype, buffer=self.block.buf, offset=start)
            view[...] = array
            del view  # (a view left would keep the block from closing)
        return self.block.name, layout

    def release(self) -> None:
        if self.block is not None:
            self.block.close()
            self.block.unlink()
            self.block = None


_OPEN_BLOCKS: dict[str, shared_memory.SharedMemory] = {}  # a reader's mapped blocks, oldest first


@contextmanager
def shared_arrays(name: str, layout: list, keep: int = 4) -> Iterator[dict[str, np.ndarray]]:
    """The arrays a :meth:`SharedArrays.put` gave ``name`` and ``layout`` for, read where they lie (valid inside
    the ``with`` only). The reader keeps the last ``keep`` blocks mapped (a writer reuses its blocks)."""
    block = _OPEN_BLOCKS.pop(name, None) or shared_memory.SharedMemory(name=name)
    _OPEN_BLOCKS[name] = block  # (now the newest)
    arrays = {array: np.ndarray(shape, dtype, buffer=block.buf, offset=start) for array, start, shape, dtype in layout}
    try:
        yield arrays
    finally:
        arrays.clear()
        while len(_OPEN_BLOCKS) > keep:
            _OPEN_BLOCKS.pop(next(iter(_OPEN_BLOCKS))).close()
