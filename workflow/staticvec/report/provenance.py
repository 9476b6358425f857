"""How a table or figure was made: config hash, code version, corpus, teacher, seeds, date.

Every table and figure carries a caption line built from this record and has the full
record written beside it (``<name>.manifest.json``), so a result can be traced to the
exact configuration, corpus size and code that produced it.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from staticvec import __version__
from staticvec.files import TIMING_KEY


def config_hash(config: dict) -> str:
    """Stable short hash of a (validated, merged) configuration."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def git_commit(root: str | Path = ".") -> str:
    """The checkout's commit, with '+dirty' when tracked files differ; 'unknown' outside git."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def provenance(config: dict | None, corpus_manifest: dict | None = None, teacher: str | None = None,
               seeds: list[int] | None = None, extra: dict | None = None) -> dict:
    """The record of how something was made; ``config`` None: without the config hash (a table's
    provenance, which must not change with settings the table does not read)."""
    totals = (corpus_manifest or {}).get("totals", {})
    desc = (corpus_manifest or {}).get("description", {})
    import numpy
    record = {
        "config_hash": config_hash(config) if config is not None else None,
        "git_commit": git_commit(),
        "staticvec": __version__,
        "corpus_stats": {
            "source": desc.get("source"),
            "tokens": totals.get("tokens"),
            "sentences": totals.get("sentences"),
            "vocabulary": totals.get("vocabulary"),
            "min_count": totals.get("min_count"),
        },
        "teacher": teacher,
        "seeds": seeds if seeds is not None else (config or {}).get("seeds"),
        # when it was made: not a result (two runs of the same inputs agree byte for byte but here), so under
        # the field comparisons of two runs skip (staticvec.files.TIMING_KEY), and in no caption
        TIMING_KEY: {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")},
        "python": platform.python_version(),
        "numpy": numpy.__version__,
    }
    try:
        import torch

        record["torch"] = torch.__version__
    except ImportError:  # pragma: no cover
        pass
    if (config or {}).get("teacher"):
        from staticvec.teacher.load import dtype_policy

        record["teacher_dtype"] = dtype_policy(config)  # what teacher passes compute in here (features.json: per shard)
    if extra:
        record.update(extra)
    return record


def training_modes(config: dict) -> dict:
    """Per method of config `methods`: the threads its training jobs use and whether a seed fixes
    its vectors (`deterministic`; absent = the trainer is deterministic for its thread count)."""
    modes = {}
    for method, settings in sorted((config.get("methods") or {}).items()):
        if not isinstance(settings, dict) or "threads" not in settings:
            continue
        deterministic = settings.get("deterministic")
        modes[method] = {"threads": 1 if deterministic else int(settings["threads"]), "deterministic": deterministic}
    return modes


def caption(record: dict) -> str:
    """One line naming corpus, teacher, seeds, config and code version, for tables and figures."""
    corpus = record.get("corpus_stats") or {}
    tokens = corpus.get("tokens")
    size = f"{tokens / 1e6:.2f}M tokens" if tokens else "? tokens"
    source = corpus.get("source")
    source = ", ".join(source) if isinstance(source, list) else source
    parts = [f"corpus {source} ({size})"]
    if record.get("teacher"):
        parts.append(f"teacher {record['teacher']}")
    seeds = record.get("seeds")
    if seeds:
        parts.append(f"seeds {','.join(map(str, seeds))}")
    if record.get("config_hash"):
        parts.append(f"config {record['config_hash']}")
    parts.append(f"commit {record['git_commit']}")
    return "; ".join(parts)


def reduced_text(reduced: dict | None, tokens: int | None = None) -> str:
    """A caption's sentence on the inputs made below the run's scale (the planning layer's
    ``Workflow.reduced_inputs``): which embeddings were trained on a fraction of the corpus (a development
    subset; about how many tokens), which with fewer seeds than the run's, which scored by fewer taggers or
    classifiers; the points of one sweep are counted, not listed. '' when there are none."""
    from fractions import Fraction

    items = (reduced or {}).get("items") or []
    if not items:
        return ""
    run = ", ".join(map(str, reduced.get("run_seeds") or []))

    def names(group: list[dict]) -> str:
        by_sweep: dict = {}
        for item in group:
            by_sweep.setdefault(item.get("sweep"), []).append(item["id"])
        parts = [f"the {len(ids)} points of sweep {sweep}" if sweep and len(ids) > 1 else ", ".join(ids)
                 for sweep, ids in by_sweep.items()]
        return "; ".join(parts)

    parts = []
    for fraction in sorted({i["fraction"] for i in items if "fraction" in i}):
        size = f", about {fraction * tokens / 1e6:.2g}M tokens" if tokens else ""
        share = Fraction(fraction).limit_denominator(1000)
        parts.append(f"on {share} of the corpus{size}: " + names([i for i in items if i.get("fraction") == fraction]))
    for seeds in sorted({tuple(i["seeds"]) for i in items if "seeds" in i}):
        label = f"seed {seeds[0]}" if len(seeds) == 1 else "seeds " + ", ".join(map(str, seeds))
        parts.append(f"{label} only (the run: {run}): " + names([i for i in items if tuple(i.get("seeds", ())) == seeds]))
    what = {"tagging": "taggers", "classification": "classifiers"}.get(reduced.get("source"), "runs")
    for seeds in sorted({tuple(i["extrinsic_seeds"]) for i in items if "extrinsic_seeds" in i}):
        label = f"seed {seeds[0]}" if len(seeds) == 1 else "seeds " + ", ".join(map(str, seeds))
        group = [i for i in items if tuple(i.get("extrinsic_seeds", ())) == seeds]
        parts.append(f"{what} of {label} only (the run: {run}): " + names(group))
    return "Below the run's scale: " + "; ".join(parts) + "."
