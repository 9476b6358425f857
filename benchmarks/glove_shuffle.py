"""GloVe's two shuffles side by side: `copy` (glove.c's shuffle step: a permuted copy of the store, written
once, as large as the store) against `chunks` (no copy: every iteration reads the sorted store in runs taken
in a fresh seeded order and permutes chunks of them in memory).

    python benchmarks/glove_shuffle.py [--entries 50000000] [--words 400000] [--memory-gb 2] [--prepare-threads 1 2]
    python benchmarks/glove_shuffle.py --train [--iterations 2] [--threads 2] [--entries ...]
    python benchmarks/glove_shuffle.py --store STORE --vocab VOCAB [--iterations 15] [--dim 300]

Synthetic store (the first form): the one-off time and disk of `copy`'s shuffle step against the time one
iteration of `chunks` spends reading and permuting (entries/s, one thread; then made ahead on each of
--prepare-threads preparing threads, `prepare_threads`), to set beside the kernel's entry updates per second
per thread (config/unit_costs.yaml: glove_entries_per_s). With --train both shuffles
train on it (300-d, --threads Hogwild threads): the seconds per iteration once the chunks' preparation runs
beside the kernel. A real store (the last form): both shuffles train the same run (one thread, the default's
settings), and the objective per entry after each iteration is printed for both: the training cost the order
changes, not a test score.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from staticvec.cooc.store import CoocStore, write_store  # noqa: E402
from staticvec.train import glove  # noqa: E402


def cpu_line() -> str:
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor())
    flags = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")), [])
    wide = sorted(f for f in flags if f.startswith(("avx512", "amx")) or f == "avx2")
    return f"{model}; {' '.join(wide) or 'no avx2/avx512/amx'}; {os.cpu_count()} cpus; load {os.getloadavg()[0]:.2f}"


def synthetic(directory: Path, entries: int, words: int, seed: int = 0) -> Path:
    """A sorted store of `entries` distinct pairs over `words` words, rows Zipf-like (a word's contexts are
    contiguous, as in a real store)."""
    rng = np.random.default_rng(seed)
    keys = np.zeros(0, np.int64)
    while len(keys) < entries:  # distinct pairs: draw until there are enough
        more = rng.zipf(1.3, size=entries) % words * words + rng.integers(0, words, entries)
        keys = np.unique(np.concatenate([keys, more]))
    keys = np.sort(rng.choice(keys, entries, replace=False))
    path = directory / "synthetic.cooc"
    write_store(path, (keys // words).astype(np.int32), (keys % words).astype(np.int32),
                rng.gamma(0.5, 4.0, len(keys)).astype(np.float32) + 0.5, words, "")
    return path


def time_shuffles(path: Path, memory_gb: float, work: Path, prepare_threads=(1, 2)) -> None:
    store = CoocStore(path)
    n = store.n_entries
    size_gb = path.stat().st_size / 2**30
    started = time.perf_counter()
    copy = glove.shuffle_store(store, work / "copy.cooc", seed=1, memory_gb=memory_gb)
    copy_s = time.perf_counter() - started
    copy_gb = Path(copy.path).stat().st_size / 2**30
    del copy
    (work / "copy.cooc").unlink()
    cfg = glove.GloveConfig(shuffle="chunks", shuffle_memory_gb=memory_gb)
    chunk = glove.chunk_records(cfg, store.records.dtype.itemsize)
    rates = {}
    for workers in (0, *prepare_threads):  # 0: made on demand by the caller; n: made ahead on n threads
        started = time.perf_counter()
        seen = 0
        for _, part in glove.shuffled_chunks(store.records, chunk, seed=1, iteration=0, workers=workers):
            seen += len(part)
        rates[workers] = time.perf_counter() - started
        assert seen == n
    chunks_s = rates[0]
    print(f"store: {n:,} entries, {size_gb:.2f} GB (page cache: read once before)")
    print(f"copy:   shuffle step once {copy_s:.1f} s ({n / copy_s:,.0f} entries/s), a copy of {copy_gb:.2f} GB on disk "
          "while the run trains")
    print(f"chunks: one iteration's reads and permutations {chunks_s:.1f} s ({n / chunks_s:,.0f} entries/s, "
          f"chunks of {chunk:,} entries), no copy")
    for workers in prepare_threads:
        print(f"chunks made ahead on {workers} preparing thread(s): {rates[workers]:.1f} s ({n / rates[workers]:,.0f} "
              f"entries/s, {rates[0] / rates[workers]:.2f}x the caller's own)")


def train_both(store, vocab, iterations: int, dim: int, work: Path, threads: int = 1) -> None:
    for shuffle in glove.SHUFFLES:
        cfg = glove.GloveConfig(dim=dim, iterations=iterations, seed=1, threads=threads, shuffle=shuffle)
        started = time.perf_counter()
        state = glove.train_glove(store, vocab, cfg, work_dir=work)
        print(f"{shuffle:6s}: {time.perf_counter() - started:.1f} s for {iterations} iteration(s) on {threads} "
              f"thread(s), the copy's shuffle step included; objective per entry after each iteration "
              f"{[round(c, 5) for c in state.losses]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, default=50_000_000)
    ap.add_argument("--words", type=int, default=400_000)
    ap.add_argument("--memory-gb", type=float, default=2.0)
    ap.add_argument("--store")
    ap.add_argument("--vocab")
    ap.add_argument("--iterations", type=int, default=15)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prepare-threads", type=int, nargs="+", default=[1, 2],
                    help="preparing threads to time the chunks' preparation with (beside the caller's own)")
    ap.add_argument("--train", action="store_true", help="train on the synthetic store with both shuffles")
    args = ap.parse_args(argv)
    print(cpu_line())
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        work = Path(tmp)
        from staticvec.corpus.vocab import Vocabulary

        if args.store:
            train_both(args.store, Vocabulary.load(args.vocab, min_count=5), args.iterations, args.dim, work,
                       args.threads)
        else:
            path = synthetic(work, args.entries, args.words)
            CoocStore(path).verify()  # reads it once: both shuffles start from the page cache
            if args.train:
                vocab = Vocabulary([f"w{k}" for k in range(args.words)], [args.words - k for k in range(args.words)])
                train_both(path, vocab, args.iterations, args.dim, work, args.threads)
            else:
                time_shuffles(path, args.memory_gb, work, args.prepare_threads)
    print(cpu_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
