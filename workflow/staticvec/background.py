"""Work made ahead on background threads while the caller uses what was made before, in the original order.

Both helpers pay off where the work releases the GIL (numpy's copies and permutations, file reads, numba kernels
compiled ``nogil``): reading and preparing the next items overlaps the caller's use of the current one instead of
adding to it. The window counter reads its next sentences with :func:`prefetched`; GloVe's ``shuffle: chunks``
prepares its next chunks with :func:`made_ahead`.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator


class _Failure:
    def __init__(self, exc: BaseException):
        self.exc = exc


def prefetched(iterable: Iterable, depth: int = 2) -> Iterator:
    """Iterate ``iterable`` on one background thread, up to ``depth`` items ahead of the caller (an exception it
    raises is raised in the caller, after the items before it)."""
    items: queue.Queue = queue.Queue(depth)
    done = object()

    def produce():
        try:
            for item in iterable:
                items.put(item)
        except BaseException as exc:  # handed to the consumer
            items.put(_Failure(exc))
        items.put(done)

    threading.Thread(target=produce, daemon=True).start()
    while True:
        item = items.get()
        if item is done:
            return
        if isinstance(item, _Failure):
            raise item.exc
        yield item


def made_ahead(calls: Iterable[Callable[[], object]], workers: int = 1) -> Iterator:
    """The results of ``calls`` in their order, each made on one of ``workers`` threads: ``workers`` calls run
    ahead of the caller while it uses a result, so at most ``workers`` + 1 results exist at once (one call per
    item: no iterator is shared between threads). An exception of a call is raised in the caller at its turn."""
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, int(workers))
    calls = iter(calls)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="made-ahead") as pool:
        pending: deque = deque()
        for call in calls:
            pending.append(pool.submit(call))
            if len(pending) == workers:
                break
        while pending:
            result = pending.popleft().result()
            following = next(calls, None)
            if following is not None:
                pending.append(pool.submit(following))
            yield result
