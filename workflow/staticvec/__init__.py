"""staticvec: static word embeddings distilled from contextual language models.

The package behind the Snakemake workflow: one module per idea (corpus, teacher,
co-occurrence, trainers, post-processing, evaluation, report). Every Snakemake rule
calls one ``staticvec`` sub-command.
"""

__version__ = "0.1.0"

import os as _os

# numba's compiled-kernel cache (cache=True) goes to the user's cache directory, not into the source
# tree (a read-only install, a clean git status); NUMBA_CACHE_DIR set by the user still wins.
_os.environ.setdefault(
    "NUMBA_CACHE_DIR",
    _os.path.join(_os.environ.get("XDG_CACHE_HOME") or _os.path.expanduser("~/.cache"), "staticvec", "numba"),
)
