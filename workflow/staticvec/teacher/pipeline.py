"""What keeps a feature pass's device busy: host work overlapped with device work, and few, large copies.

A teacher pass alternates host work (reading a shard, tokenising, building index arrays, writing part
files) with device work (the forward and the poolings). On a GPU the forward of a part takes a tenth of
the host work around it (``benchmarks/README.md``), so the host work is taken off the critical path:

- :func:`lookahead`: the next part is read, tokenised and indexed in a background thread while the
  current one runs (the Rust tokenizer and numpy release the GIL);
- :class:`BackgroundWriter`: a finished part is written in a background thread, in order, while the
  next one runs;
- :class:`HostArrays`: a batch's index arrays go to the device in one non-blocking copy from pinned
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

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Iterable, Iterator

import numpy as np


def on_accelerator(device) -> bool:
    """Whether ``device`` is not the CPU (host work can then overlap the device's)."""
    return str(device).split(":")[0] != "cpu"


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
    """Runs write jobs in order in one background thread, at most one pending (its arrays are the only
    extra memory); a job's exception is raised by the next :meth:`submit` or by :meth:`close`.
    Without ``background`` a job runs at once."""

    def __init__(self, background: bool = True):
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="staticvec-writer") if background else None
        self.pending: Future | None = None

    def submit(self, job: Callable, *args) -> None:
        if self.pool is None:
            job(*args)
            return
        self.wait()
        self.pending = self.pool.submit(job, *args)

    def wait(self) -> None:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.result()

    def close(self) -> None:
        """Wait for the last job (raising its exception) and stop the thread."""
        try:
            self.wait()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        else:  # the caller's exception wins; the job under way still finishes (its file is atomic)
            try:
                self.close()
            except Exception:  # noqa: BLE001 - secondary to the one being raised
                pass


class HostArrays:
    """Integer arrays of the host bound for the device together: packed into one int64 buffer (pinned
    when the device is CUDA) on the host side, sent in one copy by :meth:`to`, unpacked into views."""

    def __init__(self, arrays: dict[str, np.ndarray], pin: bool = False):
        import torch

        self.layout = []
        flat = np.empty(sum(array.size for array in arrays.values()), dtype=np.int64)
        start = 0
        for name, array in arrays.items():
            self.layout.append((name, start, array.shape))
            flat[start:start + array.size] = array.reshape(-1)
            start += array.size
        self.buffer = torch.from_numpy(flat)
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
