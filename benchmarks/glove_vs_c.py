"""GloVe side by side: the reference C tools (stanfordnlp/GloVe) and ours, on the same text.

Runs, on one tokenized text file (one sentence per line; see glove_prepare_text.py):
  C:    cooccur (window W) → shuffle → glove (D-d, I iterations, T threads)
  ours: staticvec cooc window --text → staticvec train glove (same settings)
with the same vocabulary file (ours, min count 5), each step under /usr/bin/time -v
(wall time, peak RSS), then scores both vector sets on WS353 and SimLex-999 (Spearman ×100,
OOV pairs dropped). Our trainer runs with the current C code's variant (bias step not scaled
by the learning rate, gradient clipping 100) so that both optimise the same thing.

The C source is not part of this repository: build it beside the project, e.g.
    git clone https://github.com/stanfordnlp/GloVe ../bench-glove-c && make -C ../bench-glove-c

Usage (from the repository root)::

    python benchmarks/glove_prepare_text.py ../shared/data/corpus/enwiki-2015/AA benchmarks/work/aa.txt
    python benchmarks/glove_vs_c.py --text benchmarks/work/aa.txt --glove-c ../bench-glove-c/build

``--old-code REV``: our counting at an older revision too (its ``workflow/`` from ``git archive``), run
between C's and ours, and its store compared with ours byte for byte (``old_store_identical``);
``--counting-only``: no training (``cooccur`` against ``staticvec cooc window``, the memory comparison; run it
twice and take the second run, whose numba caches are warm for both revisions)::

    python benchmarks/glove_vs_c.py --text benchmarks/work/aa.txt --counting-only --old-code main --work benchmarks/work/count

``--repeat N`` (with ``--counting-only``): the counters N times in turn, medians with their range, and the ratio of
our wall time to C's (and the old code's) round by round: the figure to quote on a noisy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

from staticvec.corpus.vocab import Vocabulary, count_tokens  # noqa: E402
from staticvec.embeddings import Embeddings  # noqa: E402


def timed(cmd: list[str], log: Path, stdin=None, stdout=None, env=None) -> dict:
    """Run under /usr/bin/time -v; return wall seconds and peak RSS (MB)."""
    stats = log.with_suffix(".time")
    with open(log, "w") as err:
        fin = open(stdin, "rb") if stdin else None
        fout = open(stdout, "wb") if stdout else err
        try:
            subprocess.run(["/usr/bin/time", "-v", "-o", str(stats), *cmd], stdin=fin, stdout=fout, stderr=err,
                           check=True, env=env)
        finally:
            for fh in (fin, fout if stdout else None):
                if fh:
                    fh.close()
    text = stats.read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    parts = [float(p) for p in wall.split(":")]
    seconds = sum(p * 60 ** k for k, p in enumerate(reversed(parts)))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): (\S+)", text).group(1)) for kind in ("User", "System"))
    # CPU time (user + system) beside wall time: on a shared machine it is the steadier figure
    return {"seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "peak_rss_mb": round(rss)}


def similarity(emb: Embeddings, path: Path) -> float:
    from scipy.stats import spearmanr

    unit = emb.unit_vectors()
    gold, pred = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        a, b = parts[0].lower(), parts[1].lower()
        if a in emb.index and b in emb.index:
            gold.append(float(parts[2]))
            pred.append(float(unit[emb.index[a]] @ unit[emb.index[b]]))
    return round(100 * spearmanr(gold, pred).correlation, 1)


def compare_counts(c_file: Path, ours_file: Path) -> dict:
    """Are both co-occurrence matrices the same? (C records: int32 i, int32 j, float64 x, 1-based ids.)"""
    from staticvec.cooc.store import CoocStore

    c = np.memmap(c_file, dtype=[("i", "<i4"), ("j", "<i4"), ("x", "<f8")], mode="r")
    ours = CoocStore(ours_file)
    same_pairs = len(c) == len(ours)
    max_rel = 0.0
    for start in range(0, len(c) if same_pairs else 0, 1 << 22):
        a, b = np.asarray(c[start : start + (1 << 22)]), np.asarray(ours.records[start : start + (1 << 22)])
        same_pairs &= bool(np.array_equal(a["i"] - 1, b["i"]) and np.array_equal(a["j"] - 1, b["j"]))
        max_rel = max(max_rel, float(np.max(np.abs(a["x"] - b["x"]) / a["x"])))
    return {"same_pairs": same_pairs, "max_relative_difference": max_rel}


def median_run(runs: list[dict]) -> dict:
    """Each figure's median over repeated runs (one run: itself), with its min and max beside it."""
    if len(runs) == 1:
        return runs[0]
    out = {}
    for key in runs[0]:
        values = [r[key] for r in runs]
        out[key] = round(statistics.median(values), 1)
        out[f"{key}_min"], out[f"{key}_max"] = min(values), max(values)
    return out


def spread(values: list[float]) -> dict:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "max": round(max(values), 3),
            "n": len(values)}


def load_average() -> str:
    return os.getloadavg().__repr__()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--text", type=Path, default=REPO / "benchmarks/work/aa.txt")
    parser.add_argument("--glove-c", type=Path, default=REPO.parent / "bench-glove-c/build")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks/work/glove_vs_c")
    parser.add_argument("--eval", type=Path, default=REPO.parent / "shared/data/eval/similarity")
    parser.add_argument("--window", type=int, default=15)
    parser.add_argument("--dim", type=int, default=50)
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--memory", type=float, default=4.0, help="GB, for cooccur/shuffle and our counter")
    parser.add_argument("--device", default="cpu", help="our trainer's device (cuda: report throughput)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip", nargs="*", default=[], choices=["c", "ours"], help="reuse a previous run's results")
    parser.add_argument("--counting-only", action="store_true", help="count only: no shuffle, no training, no scores")
    parser.add_argument("--old-code", default=None, metavar="REV", help="also count with this revision's code")
    parser.add_argument("--repeat", type=int, default=1,
                        help="--counting-only: run the counters N times in turn; medians, their range and each "
                             "round's ratio of our wall time to the others'")
    args = parser.parse_args(argv)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    results_path = work / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    # what the work folder's vocabulary and results were made from: another text (or min count) starts them anew,
    # else a run on a small text would lend its vocabulary to the next one's (and its figures be quietly wrong)
    stat = args.text.stat()
    source = {"text": str(args.text.resolve()), "bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns,
              "min_count": args.min_count}
    source_path = work / "source.json"
    if not source_path.exists() or json.loads(source_path.read_text()) != source:
        for stale in ("vocab.tsv", "vocab.c.txt", "results.json"):
            (work / stale).unlink(missing_ok=True)
        results = {}
        source_path.write_text(json.dumps(source, indent=2))
    if set(args.skip) != {"c", "ours"}:
        results["load_before"] = load_average()

    vocab_path, vocab_c = work / "vocab.tsv", work / "vocab.c.txt"
    if not vocab_path.exists():
        with open(args.text, encoding="utf-8") as fh:
            vocab = Vocabulary.from_counts(count_tokens(line.split() for line in fh), min_count=args.min_count)
        vocab.save(vocab_path)
        vocab_c.write_text("".join(f"{w} {c}\n" for w, c in zip(vocab.words, vocab.counts)), encoding="utf-8")
    vocab = Vocabulary.load(vocab_path)

    def count_ours(workflow: Path, out: Path, log_name: str) -> dict:
        env = {**os.environ, "PYTHONPATH": str(workflow)}
        return timed([sys.executable, "-m", "staticvec", "cooc", "window", "--text", str(args.text), "--vocab",
                      str(vocab_path), "--window", str(args.window), "--memory-gb", str(args.memory), "--out", str(out)],
                     work / log_name, env=env)

    if args.counting_only:
        c = args.glove_c
        old = None
        if args.old_code:  # kept in --work: numba's cache beside it is warm from the second run on, as ours is
            old = work / f"old-code-{args.old_code}"
            if not (old / "workflow").exists():
                old.mkdir(parents=True, exist_ok=True)
                archive = subprocess.run(["git", "archive", args.old_code, "workflow"], cwd=REPO, check=True,
                                         capture_output=True).stdout
                subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        runs = {"c": [], "ours_old": [], "ours": []}
        for _ in range(args.repeat):  # in turn (C, old, ours, C, ...): a drift of the machine reaches all three
            runs["c"].append(timed([str(c / "cooccur"), "-memory", str(args.memory), "-vocab-file", str(vocab_c),
                                    "-verbose", "0", "-window-size", str(args.window), "-overflow-file",
                                    str(work / "overflow")], work / "c_cooccur.log", stdin=args.text,
                                   stdout=work / "c.cooc.bin"))
            if old is not None:
                runs["ours_old"].append(count_ours(old / "workflow", work / "ours_old.cooc", "ours_old_cooc.log"))
            runs["ours"].append(count_ours(REPO / "workflow", work / "ours.cooc", "ours_cooc.log"))
        results["c"] = {"cooccur": median_run(runs["c"]), "n_entries": (work / "c.cooc.bin").stat().st_size // 16}
        if old is not None:
            results["ours_old"] = {"revision": args.old_code, "cooccur": median_run(runs["ours_old"])}
        results["ours"] = {"cooccur": median_run(runs["ours"])}
        if args.repeat > 1:
            results["runs"] = {k: v for k, v in runs.items() if v}
            results["wall_ratios"] = {f"ours/{k}": spread([o["seconds"] / b["seconds"] for o, b in zip(runs["ours"], v)])
                                      for k, v in runs.items() if v and k != "ours"}
        results["counts_compared"] = compare_counts(work / "c.cooc.bin", work / "ours.cooc")
        if args.old_code:
            results["old_store_identical"] = (work / "ours_old.cooc").read_bytes() == (work / "ours.cooc").read_bytes()
        results["load_after"] = load_average()
        results["settings"] = {k: str(v) for k, v in vars(args).items()}
        results_path.write_text(json.dumps(results, indent=2))
        print("| counting | time | peak RSS |\n| --- | --- | --- |")
        for name in ("c", "ours_old", "ours"):
            if name in results:
                r = results[name]["cooccur"]
                print(f"| {name} | {r['seconds']} s (CPU {r['cpu_seconds']} s) | {r['peak_rss_mb']} MB |")
        for name, r in results.get("wall_ratios", {}).items():
            print(f"wall time {name}, round by round over {r['n']} rounds: median {r['median']} [{r['min']}-{r['max']}]")
        print(f"counts compared with C: {results['counts_compared']}; old store identical: "
              f"{results.get('old_store_identical')}; load: before {results.get('load_before')}, after {results['load_after']}")
        return 0

    if "c" not in args.skip:
        c = args.glove_c
        results["c"] = {
            "cooccur": timed([str(c / "cooccur"), "-memory", str(args.memory), "-vocab-file", str(vocab_c), "-verbose", "0",
                              "-window-size", str(args.window), "-overflow-file", str(work / "overflow")],
                             work / "c_cooccur.log", stdin=args.text, stdout=work / "c.cooc.bin"),
            "shuffle": timed([str(c / "shuffle"), "-memory", str(args.memory), "-verbose", "0", "-seed", str(args.seed),
                              "-temp-file", str(work / "temp_shuffle")],
                             work / "c_shuffle.log", stdin=work / "c.cooc.bin", stdout=work / "c.shuf.bin"),
            "glove": timed([str(c / "glove"), "-save-file", str(work / "c_vectors"), "-threads", str(args.threads),
                            "-input-file", str(work / "c.shuf.bin"), "-x-max", "10", "-iter", str(args.iterations),
                            "-vector-size", str(args.dim), "-binary", "0", "-vocab-file", str(vocab_c), "-verbose", "2",
                            "-seed", str(args.seed), "-model", "2"], work / "c_glove.log"),
            "n_entries": (work / "c.cooc.bin").stat().st_size // 16,
        }
        results_path.write_text(json.dumps(results, indent=2))
    if "ours" not in args.skip:
        env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
        staticvec = [sys.executable, "-m", "staticvec"]
        results["ours"] = {
            "cooccur": timed([*staticvec, "cooc", "window", "--text", str(args.text), "--vocab", str(vocab_path),
                              "--window", str(args.window), "--memory-gb", str(args.memory), "--out", str(work / "ours.cooc")],
                             work / "ours_cooc.log", env=env),
            "glove": timed([*staticvec, "train", "glove", "--cooc", str(work / "ours.cooc"), "--vocab", str(vocab_path),
                            "--out", str(work / "ours_vectors.bin"), "--params", json.dumps({
                                "dim": args.dim, "iterations": args.iterations, "x_max": 10, "bias_lr_scaled": False,
                                "grad_clip": 100}), "--threads", str(args.threads),
                            "--device", args.device, "--seed", str(args.seed)], work / "ours_glove.log", env=env),
        }
        record = json.loads((work / "ours_vectors.json").read_text())
        results["ours"]["n_entries"] = record["cooc"]["n_entries"]
        results["ours"]["cost_per_iteration"] = record["cost_per_iteration"]
        results_path.write_text(json.dumps(results, indent=2))

    sets = {"WS353": "EN-WS-353-ALL.txt", "SimLex-999": "EN-SIMLEX-999.txt"}
    for name, loader in (("c", lambda: Embeddings.load(work / "c_vectors.txt", fmt="glove")),
                         ("ours", lambda: Embeddings.load(work / "ours_vectors.bin"))):
        if name in results and ((work / "c_vectors.txt").exists() if name == "c" else True):
            emb = loader()
            results[name]["scores"] = {k: similarity(emb, args.eval / f) for k, f in sets.items()}
            train = results[name]["glove"]["seconds"]
            results[name]["train_entries_per_second"] = round(results[name]["n_entries"] * args.iterations / train)
    if (work / "c.cooc.bin").exists() and (work / "ours.cooc").exists():
        results["counts_compared"] = compare_counts(work / "c.cooc.bin", work / "ours.cooc")
    if set(args.skip) != {"c", "ours"}:
        results["load_after"] = load_average()
    results["settings"] = {k: str(v) for k, v in vars(args).items()}
    results_path.write_text(json.dumps(results, indent=2))

    print("| step | C (stanfordnlp/GloVe) | ours |\n| --- | --- | --- |")
    c, o = results.get("c", {}), results.get("ours", {})

    def cell(r, key):
        return f"{r[key]['seconds']} s (CPU {r[key]['cpu_seconds']} s), {r[key]['peak_rss_mb']} MB" if key in r else "–"

    c_train = (c["shuffle"]["seconds"] + c["glove"]["seconds"]) if c else None
    print(f"| counting | cooccur {cell(c, 'cooccur')} | {cell(o, 'cooccur')} |")
    print(f"| training (shuffle + train) | shuffle {cell(c, 'shuffle')} + glove {cell(c, 'glove')} = {c_train} s | {cell(o, 'glove')} |")
    print(f"| entries | {c.get('n_entries')} | {o.get('n_entries')} |")
    for k in sets:
        print(f"| {k} | {c.get('scores', {}).get(k)} | {o.get('scores', {}).get(k)} |")
    print(f"counts compared: {results.get('counts_compared')}")
    print(f"load: before {results.get('load_before')}, after {results.get('load_after')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
