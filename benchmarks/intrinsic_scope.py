"""The default run's intrinsic jobs, old against new: every set for every embedding (``--old``, before
``evaluation.scope``) against the sets each embedding's readers read (``scope: read``, this checkout).

    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/intrinsic_scope.py [--old 4911005] [--config config/config.yaml]

The jobs come from the planning layer (``W.intrinsic_groups``: protocols per embedding, times its seeds;
``W.intrinsic_sets``: the data sets of each). Jobs with the same protocols and sets cost the same, so
one of each kind is run, old and new in turn, each in a fresh process on one thread as a workflow job
(``staticvec evaluate intrinsic``), on the default run's vocabulary with random 300-d vectors
(evaluation cost depends on the vocabulary, not on the training), and multiplied by its number of
jobs. Every score the new result holds must equal the old one's to the last bit. ``uptime`` before
and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from staticvec.config import load_config  # noqa: E402
from staticvec.dag import arguments  # noqa: E402
from staticvec.dag.workflow import Workflow  # noqa: E402


def timed(cmd, env) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="4911005")
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--vocab-file", default="results/default/corpus/vocab.min5.tsv")
    parser.add_argument("--data-dir", default="../shared/data/eval")
    args = parser.parse_args()
    w = Workflow(load_config([ROOT / args.config]), ROOT)
    kinds: Counter = Counter()
    for protocols, embeddings in w.intrinsic_groups().items():
        for emb in embeddings:
            sets = w.intrinsic_sets(emb)
            kinds[(protocols, tuple(sets) if sets is not None else None)] += len(w.seeds(emb))
    print(f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    from staticvec.embeddings import Embeddings

    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="intrinsic_scope.") as tmp:
        tmp = Path(tmp)
        (tmp / "old").mkdir()
        archive = subprocess.run(["git", "archive", args.old, "workflow"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tmp / "old")], input=archive.stdout, check=True)
        words = [line.split("\t", 1)[0] for line in (ROOT / args.vocab_file).read_text().splitlines() if line]
        vectors = tmp / "vectors.bin"
        Embeddings(words, np.random.default_rng(0).standard_normal((len(words), 300), dtype=np.float32)).save(vectors)
        print(f"{len(words):,} words x 300 (random vectors), 1 thread; old = {args.old} (every set), "
              f"new = this checkout (the sets read)")
        rows, total = [], {"old": 0.0, "new": 0.0}
        for k, ((protocols, sets), jobs) in enumerate(sorted(kinds.items(), key=lambda kv: -kv[1])):
            cpu = {}
            for side in ("old", "new"):
                outs = {p: str(tmp / f"{side}.{k}.{p}.json") for p in protocols}
                tasks = ["all"] if side == "old" else (list(sets) if sets is not None else None)
                options = arguments.multi_cli_options(w.config, outs, tasks)
                options = [o if o != "auto" else "cpu" for o in options]
                code = tmp / "old" / "workflow" if side == "old" else ROOT / "workflow"
                cmd = [sys.executable, "-m", "staticvec", "evaluate", "intrinsic", str(vectors), "--threads", "1", *options]
                cmd[cmd.index("--data-dir") + 1] = args.data_dir
                cpu[side] = timed(cmd, {**env, "PYTHONPATH": str(code)})
                total[side] += jobs * cpu[side]
            for p in protocols:
                old = json.loads((tmp / f"old.{k}.{p}.json").read_text())["results"]
                new = json.loads((tmp / f"new.{k}.{p}.json").read_text())["results"]
                for key, entry in new.items():
                    strip = lambda e: {f: v for f, v in e.items() if f != "seconds"}  # noqa: E731
                    if strip(entry) != strip(old[key]):
                        raise SystemExit(f"{p}/{key}: the new score differs from the old one")
            label = "every set" if sets is None else (f"{len(sets)} sets" if len(sets) > 2 else " ".join(sets))
            rows.append(("+".join(protocols), label, jobs, cpu["old"], cpu["new"]))
    print("scores: every set the new jobs score equals the old job's to the last bit\n")
    print("| protocols | sets scored (new) | jobs | old CPU s per job | new CPU s per job |")
    print("| --- | --- | ---: | ---: | ---: |")
    for protocols, label, jobs, old, new in rows:
        print(f"| {protocols} | {label} | {jobs} | {old:.2f} | {new:.2f} |")
    n = sum(kinds.values())
    print(f"| **all intrinsic jobs** | | {n} | {total['old']:.0f} s in all | {total['new']:.0f} s in all "
          f"(**{total['old'] / total['new']:.2f}x**) |")
    print(f"\nuptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
