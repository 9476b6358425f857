"""The default run's intrinsic jobs, older code's jobs against this checkout's, over the whole DAG.

    OMP_NUM_THREADS=1 PYTHONPATH=workflow python benchmarks/evaluate_speed.py [--old fd12b22 6f5bba4] [--config config/config.yaml]

The jobs come from this checkout's planning layer (``W.intrinsic_groups``: per embedding, the protocols
and seeds its readers read; ``W.intrinsic_sets``: the data sets). Each ``--old`` commit (``git archive``
into a temporary directory) runs the same results as its own workflow ran them: one process per seed
and protocol (before issue 15's one-load jobs, e.g. fd12b22), one per seed for all protocols (to
6f5bba4), or one per embedding for all its seeds and protocols (3f0f768 on); every data set (before
``evaluation.scope``, e.g. 4911005) or the sets read. This checkout runs one process per embedding.
Groups of the same protocols, seed count and sets cost the same, so one of each kind is run, each
side in fresh processes on one thread as a workflow job
(``staticvec evaluate intrinsic``), on the default run's vocabulary with random 300-d vectors (one
file per seed; evaluation cost depends on the vocabulary, not on the training), and multiplied by its
number of embeddings. Every score the new results hold must equal the old ones to the last bit (the
new results may hold more, e.g. issue 16's SemEval-2012 ``official`` variant). ``uptime`` before and after.
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


def cpu_seconds(cmds, env) -> float:
    """User + system seconds of running ``cmds`` one after another (each a fresh process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for cmd in cmds:
        done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def same_scores(old, new) -> bool:
    """Every value of the old result is in the new one, equal (timings left out); the new may add keys."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and same_scores(v, new[k]) for k, v in old.items()
                                             if k not in ("seconds", "timing", "vectors"))
    if isinstance(old, list):
        return isinstance(new, list) and len(old) == len(new) and all(same_scores(a, b) for a, b in zip(old, new))
    return old == new


def unpack(commit: str, into: Path) -> dict:
    """The old code's workflow tree and what its intrinsic command and planning layer could do."""
    into.mkdir()
    archive = subprocess.run(["git", "archive", commit, "workflow"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    code = into / "workflow" / "staticvec"
    text = lambda rel: (code / rel).read_text() if (code / rel).exists() else ""  # noqa: E731
    return {"path": into / "workflow",
            "one_load": '"--protocol"' in "".join(p.read_text() for p in code.rglob("*.py")),
            "scoped": "def intrinsic_sets" in text("dag/workflow.py"),
            "seeds_together": 'add_argument("vectors", nargs="+"' in text("evaluate/cli.py"),
            "command": ["evaluate", "intrinsic"] if '"intrinsic"' in text("evaluate/cli.py") else ["evaluate"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", nargs="+", default=["fd12b22", "6f5bba4"])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--vocab-file", default="results/default/corpus/vocab.min5.tsv")
    parser.add_argument("--data-dir", default="../shared/data/eval")
    args = parser.parse_args()
    w = Workflow(load_config([ROOT / args.config]), ROOT)
    kinds: Counter = Counter()
    for (protocols, seeds), embeddings in w.intrinsic_groups().items():
        for emb in embeddings:
            sets = w.intrinsic_sets(emb)
            kinds[(protocols, len(seeds), tuple(sets) if sets is not None else None)] += 1
    print(f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    from staticvec.embeddings import Embeddings

    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="evaluate_speed.") as tmp:
        tmp = Path(tmp)
        trees = {commit: unpack(commit, tmp / f"old-{commit}") for commit in args.old}
        trees["new"] = {"path": ROOT / "workflow", "one_load": True, "scoped": True, "seeds_together": True,
                        "command": ["evaluate", "intrinsic"]}
        vocab_file = ROOT / args.vocab_file
        if not vocab_file.is_file():
            raise SystemExit(f"{vocab_file}: no vocabulary (build it: snakemake --cores 2 {args.vocab_file})")
        words = [line.split("\t", 1)[0] for line in vocab_file.read_text().splitlines() if line]
        files = []
        for seed in (1, 2, 3):
            files.append(tmp / f"seed{seed}.bin")
            vectors = np.random.default_rng(seed).standard_normal((len(words), 300), dtype=np.float32)
            Embeddings(words, vectors).save(files[-1])
        print(f"{len(words):,} words x 300 (random vectors, one file per seed), 1 thread; new = this checkout")
        sides = [*args.old, "new"]
        rows, total = [], Counter()
        for k, ((protocols, n_seeds, sets), embeddings) in enumerate(sorted(kinds.items(), key=lambda kv: -kv[1])):
            vectors = files[:n_seeds]
            cpu = {}
            for side in sides:
                out = lambda p, i: str(tmp / f"{side}.{k}.{p}.seed{i}.json")  # noqa: E731
                tree = trees[side]
                tasks = (list(sets) if sets is not None else None) if tree["scoped"] else ["all"]
                cmds = []
                if tree["seeds_together"]:  # one process for the embedding's seeds (3f0f768 on)
                    per_file = [{p: out(p, i) for p in protocols} for i in range(n_seeds)]
                    cmds.append([*tree["command"], *map(str, vectors),
                                 *arguments.multi_cli_options(w.config, per_file, tasks)])
                else:
                    for i, v in enumerate(vectors):
                        if tree["one_load"]:
                            cmds.append([*tree["command"], str(v),
                                         *arguments.multi_cli_options(w.config, {p: out(p, i) for p in protocols}, tasks)])
                        else:
                            for p in protocols:  # the protocol's view flags, then the shared ones
                                view = arguments.cli_options(w.config, p)[: -len(arguments._shared_options(w.config))]
                                cmds.append([*tree["command"], str(v), "--out", out(p, i), *view,
                                             *arguments._shared_options(w.config, tasks)])
                full = []
                for cmd in cmds:
                    cmd = [sys.executable, "-m", "staticvec", *cmd, "--threads", "1"]
                    cmd = [o if o != "auto" else "cpu" for o in cmd]
                    cmd[cmd.index("--data-dir") + 1] = args.data_dir
                    full.append(cmd)
                cpu[side] = cpu_seconds(full, {**env, "PYTHONPATH": str(tree["path"])})
                total[side] += embeddings * cpu[side]
            for side in args.old:
                for p in protocols:
                    for i in range(n_seeds):
                        before = json.loads((tmp / f"{side}.{k}.{p}.seed{i}.json").read_text())["results"]
                        after = json.loads((tmp / f"new.{k}.{p}.seed{i}.json").read_text())["results"]
                        for key, entry in after.items():
                            if not same_scores(before[key], entry):
                                raise SystemExit(f"{p}/seed{i + 1}/{key}: the new score differs from {side}'s")
            label = "every set" if sets is None else (f"{len(sets)} sets" if len(sets) > 2 else " ".join(sets))
            rows.append(("+".join(protocols), n_seeds, label, embeddings, cpu))
    print("scores: every set the new jobs score equals the old jobs' to the last bit\n")
    print("| protocols | seeds | sets scored (new) | embeddings | " + " | ".join(f"{s} CPU s" for s in sides) + " |")
    print("| --- | ---: | --- | ---: | " + " | ".join("---:" for _ in sides) + " |")
    for protocols, n_seeds, label, embeddings, cpu in rows:
        print(f"| {protocols} | {n_seeds} | {label} | {embeddings} | " + " | ".join(f"{cpu[s]:.2f}" for s in sides) + " |")
    print(f"| **the default DAG's intrinsic jobs** | | | {sum(kinds.values())} | "
          + " | ".join(f"{total[s]:.0f} s" for s in sides) + " |")
    for side in args.old:
        print(f"{side} / new: {total[side] / total['new']:.2f}x")
    print(f"\nuptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
