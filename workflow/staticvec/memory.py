"""Keep the memory a job frees for its next batch instead of handing it back to the kernel (glibc).

A teacher pass allocates and frees the same large activation buffers batch after batch: the
feed-forward block of a batch of 8,192 pieces alone is 8,192 × 1,536 floats (50 MB), the fitted
MLM head's logits 1,024 × 30,522 (125 MB). glibc's malloc serves blocks above its mmap threshold
(128 KiB, raised dynamically only up to 32 MiB) with a fresh ``mmap`` and returns them with
``munmap`` when freed, and trims the top of its heap beyond the trim threshold: each batch then
page-faults its buffers in again, 4 KiB at a time, and the kernel zeroes every page. On the default
corpus's `sentence` pass that was 3.7 million minor faults and 9–10 s of system time in a 35 s job
(benchmarks/README.md, "Teacher jobs keep their freed memory").

:func:`keep_freed_memory` sets ``M_MMAP_MAX = 0`` (every block from the heap) and a 2 GiB trim
threshold, so freed buffers stay mapped and are reused: system time falls by 80–96 % on the teacher
jobs, the numbers computed are the same (benchmarks/allocator.py compares the outputs), and the peak
resident memory grows by what the heap cannot reuse (32–79 % on the feature passes, 1.85× on the
MLM-head fit: 3.1 GB; the rules' ``mem_mb`` allow it). It is applied by the commands that run the
teacher model and by the intrinsic evaluation (its similarity and analogy blocks; no memory cost
there): their parsers set ``keep_freed_memory``. Jobs with few large allocations gain nothing from it (measured: the
students, GloVe, the classifier) and keep glibc's defaults.

``STATICVEC_MALLOC=system`` turns it off (glibc's defaults). Elsewhere than glibc (macOS, musl) it
does nothing.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform

from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)

ENV = "STATICVEC_MALLOC"
POLICIES = ("keep", "system")
# mallopt parameters (glibc <malloc.h>)
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
TRIM_THRESHOLD = 2**31 - 1  # mallopt takes an int: 2 GiB of free heap top before any is returned


def policy() -> str:
    """The allocator policy asked for by ``$STATICVEC_MALLOC`` (default ``keep``)."""
    value = os.environ.get(ENV, "keep").strip().lower() or "keep"
    if value not in POLICIES:
        raise StaticvecError(f"${ENV}={os.environ[ENV]!r}: expected one of {', '.join(POLICIES)}")
    return value


def _glibc():
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") else None
    except OSError:
        return None


def keep_freed_memory() -> bool:
    """Make glibc keep freed memory mapped for reuse (see the module's text); True when applied."""
    if policy() == "system":
        return False
    libc = _glibc()
    if libc is None:
        return False
    applied = libc.mallopt(M_MMAP_MAX, 0) == 1 and libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    log.debug("allocator: freed memory kept for reuse (%s)", "applied" if applied else "refused by mallopt")
    return applied
