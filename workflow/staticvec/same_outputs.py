"""Two runs' outputs compared file by file: the same bytes, apart from what records how the run went.

Every output of the workflow is the same bytes when the same inputs are run again, on one machine or on a
cluster, except:

- the run's ``logs/`` and ``benchmarks/`` directories (Snakemake's per-job timings), skipped whole;
- in JSON files, the one field :data:`staticvec.files.TIMING_KEY` (``"timing"``, at any depth: wall
  seconds, rates, when the job finished), which a comparison skips by name;
- the two runs' own directories, where a file names a path under them (a record's ``"vectors"``): each run's
  root is replaced by ``<RUN>`` before comparing, so that runs in different directories can be compared.

    staticvec report same-outputs RUN_A RUN_B      (exit 1 and one line per differing file)
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from staticvec.files import without_timing

SKIPPED_DIRS = ("logs", "benchmarks")
SKIPPED_SUFFIXES = (".log",)
RUN_PLACEHOLDER = b"<RUN>"


def _files(root: Path) -> set[str]:
    out = set()
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in SKIPPED_DIRS or path.is_dir() or path.name.endswith(SKIPPED_SUFFIXES):
            continue
        if path.name.startswith(".") and path.name.endswith(".tmp"):
            continue  # a temporary file of a job still running (staticvec.files.atomic_path)
        out.add(rel.as_posix())
    return out


def _normalised(data: bytes, roots: tuple[str, ...]) -> bytes:
    found = False
    for root in sorted(roots, key=len, reverse=True):
        found |= os.fsencode(root) in data
        data = data.replace(os.fsencode(root), RUN_PLACEHOLDER)
    # a fixed-size header padded with spaces (the co-occurrence stores') pads a shorter path with more: where a
    # root was replaced, runs of spaces compare as one
    return re.sub(rb" {2,}", b" ", data) if found else data


def _comparable(path: Path, roots: tuple[str, ...]):
    data = _normalised(path.read_bytes(), roots)
    if path.suffix == ".json":
        try:
            return without_timing(json.loads(data))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return data
    return data


def differences(run_a: str | os.PathLike, run_b: str | os.PathLike,
                roots_a: tuple[str, ...] = (), roots_b: tuple[str, ...] = (),
                more_in_a: bool = False) -> list[tuple[str, str]]:
    """[(relative path, why)] of the files that differ between two result directories (module doc). ``roots_a``
    / ``roots_b``: the directories of each run its files may name, replaced by ``<RUN>`` (default: the result
    directory itself; e.g. the run's parent directory, holding its downloads too).
    ``more_in_a``: files only in ``run_a`` are not differences (``run_a`` also holds outputs of other
    commands, e.g. an export or a report of it), every file of ``run_b`` must be in ``run_a``, the same."""
    a, b = Path(run_a).resolve(), Path(run_b).resolve()
    ra = tuple(map(str, roots_a)) or (str(a),)
    rb = tuple(map(str, roots_b)) or (str(b),)
    files_a, files_b = _files(a), _files(b)
    out = [] if more_in_a else [(rel, f"only in {a}") for rel in sorted(files_a - files_b)]
    out += [(rel, f"only in {b}") for rel in sorted(files_b - files_a)]
    for rel in sorted(files_a & files_b):
        if _comparable(a / rel, ra) != _comparable(b / rel, rb):
            out.append((rel, "content differs" + (" (timing aside)" if rel.endswith(".json") else "")))
    return out


def compared_files(run: str | os.PathLike) -> int:
    """How many files of ``run`` a comparison looks at."""
    return len(_files(Path(run).resolve()))
