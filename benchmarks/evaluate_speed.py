"""Intrinsic evaluation, old against new: the default run's jobs for one embedding, side by side.

    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/evaluate_speed.py [--old fd12b22] [--repeats 1]

The embedding is the default run's vocabulary (``--vocab-file``, the 13,689 words of its min-count-5
corpus vocabulary, frequency order) with random ``--dim``-d vectors; without that file, every
evaluation word (85 % of them, shuffled) plus fillers up to ``--vocab`` words. Intrinsic scores do
not depend on training for speed, only on the vocabulary size and coverage.

The default DAG asks, per embedding and seed, for ``web`` and ``muse`` (24 of 88), ``web`` only (49)
or ``muse`` only (15) (``W.intrinsic_groups``). For each of the three cases this runs, as the
workflow does (``staticvec evaluate intrinsic`` in a fresh process, 1 thread):

* old: the code at ``--old`` (``git archive`` into a temporary directory), one process per protocol;
* new: this checkout, one process for all the case's protocols (``--protocol``).

It prints wall and CPU seconds (user + system of the child processes) of each, the ratio, the
default DAG's total (24·web+muse + 49·web + 15·muse) and checks that the scores of both are
identical to the last bit (every value of the old result file equal in the new one, but for the
timings; the new file may hold more, e.g. issue 16's SemEval-2012 ``official`` variant). ``uptime`` before and after.
(Issue 16's MUSE cut — lower-case first, then the first N distinct words — changes ``muse`` scores only
for files with case variants inside the cut; the default run's vocabulary is lower-cased, so both agree.)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

PROTOCOLS = {"web": ("mean", "lower", "all"), "muse": ("drop", "lower", "200000")}
CASES = {"web+muse": ("web", "muse"), "web": ("web",), "muse": ("muse",)}
DEFAULT_DAG = {"web+muse": 24, "web": 49, "muse": 15}  # jobs of each case in the default run (config/*.yaml)
COMMON = ["--tasks", "all", "--analogy-method", "3cosadd", "--memory-mb", "1024", "--relational-score", "cosine",
          "--semeval-split", "all", "--categorization-method", "all", "--seed", "0", "--topn", "10",
          "--device", "cpu", "--neighbours", "light", "while", "--threads", "1"]


def make_embedding(path: Path, args) -> int:
    from staticvec.embeddings import Embeddings

    rng = np.random.default_rng(0)
    vocab_file = Path(args.vocab_file)
    if vocab_file.is_file():
        words = [line.split("\t", 1)[0] for line in vocab_file.read_text(encoding="utf-8").splitlines() if line]
    else:
        from staticvec.evaluate.datasets import DATASETS, load_dataset

        seen: dict[str, None] = {}
        for name in DATASETS:
            data = load_dataset(name, args.data_dir)
            for attr in ("pairs", "questions", "words"):
                for item in getattr(data, attr, []):
                    for w in (item,) if isinstance(item, str) else item:
                        seen.setdefault(w.lower())
            for rel in getattr(data, "relations", []):
                for x, y in rel.prototypes + rel.pairs:
                    seen.setdefault(x.lower())
                    seen.setdefault(y.lower())
        words = [w for w in seen if " " not in w and rng.random() < 0.85]
        rng.shuffle(words)
        words += [f"filler{i}" for i in range(max(0, args.vocab - len(words)))]
    Embeddings(words, rng.standard_normal((len(words), args.dim), dtype=np.float32)).save(path)
    return len(words)


def timed(commands: list[tuple[list[str], dict]]) -> tuple[float, float]:
    """Run the commands one after the other; wall and child CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    for cmd, env in commands:
        done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def without_seconds(value):
    if isinstance(value, dict):
        return {k: without_seconds(v) for k, v in value.items() if k not in ("seconds", "same_view_as")}
    if isinstance(value, list):
        return [without_seconds(v) for v in value]
    return value


def same_scores(old, new) -> bool:
    """Every value of the old result is in the new one, equal; the new may add keys (issue 16's
    SemEval-2012 ``official`` variant)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and same_scores(v, new[k]) for k, v in old.items())
    if isinstance(old, list):
        return isinstance(new, list) and len(old) == len(new) and all(same_scores(a, b) for a, b in zip(old, new))
    return old == new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="fd12b22", help="commit of the old code (default: fd12b22, before issue 15)")
    parser.add_argument("--vocab-file", default="/work/main/results/default/corpus/vocab.min5.tsv")
    parser.add_argument("--vocab", type=int, default=14000, help="vocabulary size without --vocab-file")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--data-dir", default=str(ROOT / "../shared/data/eval"))
    parser.add_argument("--repeats", type=int, default=1, help="runs of each side; the fastest is kept")
    args = parser.parse_args()

    print(f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory(prefix="evaluate_speed.") as tmp:
        tmp = Path(tmp)
        old_tree = tmp / "old"
        old_tree.mkdir()
        archive = subprocess.run(["git", "archive", args.old, "workflow"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive.stdout, check=True)
        vectors = tmp / "vectors.bin"
        n = make_embedding(vectors, args)
        print(f"embedding: {n} words x {args.dim} (random vectors); 1 thread; old = {args.old}, new = this checkout")
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        old_env = {**env, "PYTHONPATH": str(old_tree / "workflow")}
        new_env = {**env, "PYTHONPATH": str(ROOT / "workflow")}
        base = [sys.executable, "-m", "staticvec", "evaluate", "intrinsic", str(vectors), "--data-dir", args.data_dir, *COMMON]

        def old_cmds(protocols, tag):
            cmds = []
            for p in protocols:
                oov, case, cut = PROTOCOLS[p]
                view = ["--oov", oov] + ([] if case == "lower" else ["--no-lowercase"])
                view += [] if cut == "all" else ["--max-vocab", cut]
                cmds.append(([*base, "--out", str(tmp / f"old.{tag}.{p}.json"), *view], old_env))
            return cmds

        def new_cmds(protocols, tag):
            spec = [x for p in protocols for x in ("--protocol", p, ",".join(PROTOCOLS[p]), str(tmp / f"new.{tag}.{p}.json"))]
            return [([*base, *spec], new_env)]

        rows, totals = [], {"old": [0.0, 0.0], "new": [0.0, 0.0]}
        for tag, protocols in CASES.items():
            timing = {}
            for side, cmds in (("old", old_cmds(protocols, tag)), ("new", new_cmds(protocols, tag))):
                runs = [timed(cmds) for _ in range(args.repeats)]
                timing[side] = min(runs, key=lambda r: r[1])
            for p in protocols:
                old = without_seconds(json.loads((tmp / f"old.{tag}.{p}.json").read_text()))
                new = without_seconds(json.loads((tmp / f"new.{tag}.{p}.json").read_text()))
                if not same_scores(old, new):
                    raise SystemExit(f"{tag}/{p}: the new scores differ from the old ones")
            for side in ("old", "new"):
                totals[side][0] += DEFAULT_DAG[tag] * timing[side][0]
                totals[side][1] += DEFAULT_DAG[tag] * timing[side][1]
            rows.append((tag, DEFAULT_DAG[tag], timing["old"], timing["new"]))

    print("scores: identical to the last bit (every data set, every protocol)")
    print(f"{'job (protocols)':18s} {'jobs':>4s} | {'old wall':>8s} {'old CPU':>8s} | {'new wall':>8s} {'new CPU':>8s} | "
          f"{'CPU ratio':>9s}")
    for tag, jobs, (ow, oc), (nw, nc) in rows:
        print(f"{tag:18s} {jobs:4d} | {ow:8.2f} {oc:8.2f} | {nw:8.2f} {nc:8.2f} | {oc / nc:8.2f}x")
    (ow, oc), (nw, nc) = totals["old"], totals["new"]
    print(f"{'default DAG total':18s} {sum(DEFAULT_DAG.values()):4d} | {ow:8.1f} {oc:8.1f} | {nw:8.1f} {nc:8.1f} | "
          f"{oc / nc:8.2f}x  (new/old wall {nw / ow:.2f})")
    print(f"uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
