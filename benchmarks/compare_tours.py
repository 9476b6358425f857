"""Two runs of the same config side by side: job time from each run's own Snakemake benchmark files, and its
vectors compared byte for byte.

For two results directories (``results_dir`` of two runs, e.g. ``make run`` on fresh clones of two revisions,
one after the other on one quiet machine)::

    python benchmarks/compare_tours.py OLD/results/default NEW/results/default --out benchmarks/results/tour-X

Job time: every ``benchmarks/**/*.tsv`` (Snakemake's ``benchmark:`` file of one job; its ``s`` column, summed
over its rows) keyed by its path, which names the job. The table gives all jobs, the jobs only one run has
(listed, with their time), and the jobs both ran, per stage (the first folder under ``benchmarks/``) and in
all. Vectors: every file under ``embeddings/`` and ``post/`` whose suffix is a vector format
(``VECTOR_SUFFIXES``: the embedding tables and the library models), by sha256; any that differ or that one run
lacks are listed. Writes ``comparison.json`` and ``comparison.md`` under ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

VECTOR_SUFFIXES = {".bin", ".npy", ".npz", ".safetensors", ".vec", ".txt.gz"}
VECTOR_TREES = ("embeddings", "post")


def job_times(results: Path) -> dict[str, float]:
    """Job (its benchmark file's path under benchmarks/, without .tsv) → seconds (the ``s`` column, summed)."""
    root = results / "benchmarks"
    if not root.is_dir():
        sys.exit(f"{root}: no benchmarks folder (is {results} a run's results_dir?)")
    times = {}
    for path in sorted(root.rglob("*.tsv")):
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if not rows or "s" not in rows[0]:
            sys.exit(f"{path}: not a Snakemake benchmark file (no 's' column)")
        times[str(path.relative_to(root).with_suffix(""))] = sum(float(r["s"]) for r in rows)
    return times


def _vector_suffix(path: Path) -> str:
    name = path.name
    return ".txt.gz" if name.endswith(".txt.gz") else path.suffix


def vector_files(results: Path) -> dict[str, str]:
    """Path under the results → sha256, for the vector files of ``VECTOR_TREES``."""
    found = {}
    for tree in VECTOR_TREES:
        for path in sorted((results / tree).rglob("*")):
            if path.is_file() and _vector_suffix(path) in VECTOR_SUFFIXES:
                digest = hashlib.sha256()
                with open(path, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 22), b""):
                        digest.update(block)
                found[str(path.relative_to(results))] = digest.hexdigest()
    return found


def compare(old: Path, new: Path) -> dict:
    t_old, t_new = job_times(old), job_times(new)
    common = sorted(set(t_old) & set(t_new))
    stages = defaultdict(lambda: [0, 0.0, 0.0])
    for job in common:
        row = stages[job.split("/")[0]]
        row[0] += 1
        row[1] += t_old[job]
        row[2] += t_new[job]
    v_old, v_new = vector_files(old), vector_files(new)
    return {
        "old": str(old), "new": str(new),
        "all": {"old_jobs": len(t_old), "old_s": round(sum(t_old.values()), 1),
                "new_jobs": len(t_new), "new_s": round(sum(t_new.values()), 1)},
        "only_old": {j: round(t_old[j], 2) for j in sorted(set(t_old) - set(t_new))},
        "only_new": {j: round(t_new[j], 2) for j in sorted(set(t_new) - set(t_old))},
        "common": {"jobs": len(common), "old_s": round(sum(t_old[j] for j in common), 1),
                   "new_s": round(sum(t_new[j] for j in common), 1)},
        "stages": {s: {"jobs": n, "old_s": round(a, 1), "new_s": round(b, 1)} for s, (n, a, b) in sorted(stages.items())},
        "vectors": {"files": len(set(v_old) | set(v_new)),
                    "identical": sum(1 for f in v_old if v_new.get(f) == v_old[f]),
                    "differ": sorted(f for f in v_old if f in v_new and v_new[f] != v_old[f]),
                    "only_old": sorted(set(v_old) - set(v_new)), "only_new": sorted(set(v_new) - set(v_old))},
    }


def _ratio(a: float, b: float) -> str:
    return f"{b / a:.3f}" if a else "—"


def markdown(c: dict) -> str:
    a, m = c["all"], c["common"]
    lines = ["| | old | new | new / old |", "| --- | ---: | ---: | ---: |",
             f"| all jobs | {a['old_jobs']} jobs, {a['old_s']:,.1f} s | {a['new_jobs']} jobs, {a['new_s']:,.1f} s | "
             f"{_ratio(a['old_s'], a['new_s'])} |",
             f"| the {m['jobs']} jobs both ran | {m['old_s']:,.1f} s | {m['new_s']:,.1f} s | {_ratio(m['old_s'], m['new_s'])} |"]
    for stage, s in c["stages"].items():
        lines.append(f"| {stage} ({s['jobs']} jobs of both) | {s['old_s']:,.1f} s | {s['new_s']:,.1f} s | "
                     f"{_ratio(s['old_s'], s['new_s'])} |")
    for side in ("only_old", "only_new"):
        jobs = c[side]
        lines += ["", f"Jobs {side.replace('_', ' in ')} ({len(jobs)}, {sum(jobs.values()):,.1f} s):", ""]
        lines += [f"- `{j}`: {s:,.1f} s" for j, s in jobs.items()]
    v = c["vectors"]
    lines += ["", f"Vector files: {v['files']}, byte-identical {v['identical']}; differ {len(v['differ'])}; "
                  f"only in old {len(v['only_old'])}; only in new {len(v['only_new'])}."]
    lines += [f"- differs: `{f}`" for f in v["differ"]]
    lines += [f"- only in old: `{f}`" for f in v["only_old"]] + [f"- only in new: `{f}`" for f in v["only_new"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="the first run's results_dir")
    parser.add_argument("new", type=Path, help="the second run's results_dir")
    parser.add_argument("--out", type=Path, help="folder for comparison.json and comparison.md (default: print)")
    args = parser.parse_args(argv)
    result = compare(args.old, args.new)
    text = markdown(result)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "comparison.json").write_text(json.dumps(result, indent=1) + "\n")
        (args.out / "comparison.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
