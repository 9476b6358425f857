"""Throughput of the distillation trainers (X2Static, BERT + Skip-gram, Context-to-Vec): old code vs new.

One command prints, side by side, the examples (targets / centres) per second of the code at
main's commit fd12b22 (the autograd trainer: ``--old-commit``, unpacked with ``git archive`` into
a temporary directory) and of this checkout (the fast engine), on the same stored teacher
features, with 1 and 2 threads, and the share of time spent loading, batching and updating;
``uptime`` before and after. Each configuration runs in its own process (kernels compiled and
warmed up on a small synthetic block first, outside the timing).

    python benchmarks/students_throughput.py \
        --features /work/main/results/default/teacher/minilm/features/sentence/00000 \
        --vocab /work/main/results/default/corpus/vocab.min5.tsv

Without ``--features``: synthetic blocks with the real shapes (teacher width 384, vocabulary 21k).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def synthetic_blocks(n_blocks, n_sent, vocab, d, seed=0):
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, vocab + 1)
    zipf = (1 / ranks) / (1 / ranks).sum()
    blocks = []
    for _ in range(n_blocks):
        lens = rng.integers(10, 41, n_sent)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        n = int(offsets[-1])
        ids = rng.choice(vocab, n, p=zipf)
        ids[rng.random(n) < 0.03] = -1  # out-of-vocabulary words
        blocks.append({"sentence_offsets": offsets, "word_ids": ids.astype(np.int64),
                       "word_pieces": np.ones(n, np.int16),
                       "word_vectors": rng.standard_normal((n, d)).astype(np.float16),
                       "sentence_vectors": rng.standard_normal((n_sent, d)).astype(np.float16)})
    return blocks, (1e6 * zipf).astype(np.int64) + 1


class Memory:
    def __init__(self, blocks):
        self.list = blocks

    def blocks(self, start=(0, 0)):
        for i, b in enumerate(self.list):
            if (0, i) >= tuple(start):
                yield (0, i), dict(b)

    @staticmethod
    def next_position(p):
        return (p[0], p[1] + 1)

    def word_ids(self):
        for b in self.list:
            yield b["word_ids"]


def make(method, counts, d, batch, device, extra):
    from staticvec.train.bert_skipgram import BertSGParams, BertSkipGram
    from staticvec.train.context2vec import C2VParams, ContextToVec
    from staticvec.train.x2static import X2Static, X2StaticParams

    if method == "x2static":
        p = X2StaticParams(**({"batch_sentences": batch} if batch else {}), **extra)
        return X2Static(counts, d, p, device), p
    if method == "bert_sg":
        p = BertSGParams(**({"batch_centres": batch} if batch else {}), **extra)
        return BertSkipGram(counts, d, p, device), p
    p = C2VParams(**({"batch_centres": batch} if batch else {}), **extra)
    return ContextToVec(counts, d, p, device), p


OPTIONS = {"pairs": {"aggregation": "pairs"}, "released": {"variant": "released"},
           "all_pieces": {"context_mean": "all_pieces"}, "all_words": {"context_mean": "all_words"}}


def worker(args) -> None:
    """One configuration in this process (PYTHONPATH chooses the code); prints a JSON line."""
    import torch

    try:
        from staticvec.train.loop import train
    except ImportError:  # the code before the core was split by idea
        from staticvec.train.negative_sampling import train

    method, _, option = args.methods[0].partition(":")
    extra = dict(OPTIONS.get(option, {}))
    threads = args.threads[0]
    torch.set_num_threads(threads)
    try:
        from staticvec.train.kernels import fast_engine_threads
    except ImportError:
        try:
            from staticvec.train.negative_sampling import fast_engine_threads
        except ImportError:  # the old code: torch only
            fast_engine_threads = None
    if fast_engine_threads is not None:
        fast_engine_threads(threads)
    if args.features:
        from staticvec.corpus.vocab import Vocabulary
        from staticvec.train.teacher_blocks import StoredFeatures

        counts = np.asarray(Vocabulary.load(args.vocab).counts)
        d = StoredFeatures(args.features, ["word_ids"]).hidden_size
    else:
        blocks, counts = synthetic_blocks(args.blocks, 1024, args.vocab_size, args.dim)
        d = args.dim
    batch = args.batch[0]
    # warm-up: compile (or load the cached) kernels outside the timing
    warm, _ = synthetic_blocks(1, 64, len(counts), d, seed=1)
    model, params = make(method, counts, d, batch, "cpu", extra)
    train(model, Memory(warm), params.loop_settings(), seed=0, progress=False)
    model, params = make(method, counts, d, batch, "cpu", extra)
    if args.features:
        source = StoredFeatures(args.features, model.feature_keys)
    else:
        source = Memory(blocks)
    rec = train(model, source, params.loop_settings(), seed=0, progress=False)
    t = rec["timing"]
    busy = t["teacher_or_loading_s"] + t["batching_s"] + t["update_s"]
    print(json.dumps({"examples": rec["examples"], "ex_s": rec["timing"]["throughput"]["examples_per_s"],
                      "wall_s": t["wall_s"], "load": t["teacher_or_loading_s"] / busy,
                      "batching": t["batching_s"] / busy, "update": t["update_s"] / busy,
                      "engine": rec.get("engine", "autograd")}))


def features_for(code: str, features: list[str], tmp: str) -> list[str]:
    """The feature directories as the code at ``code`` reads them: where its store format is older than
    a directory's (fd12b22 reads format 1; format 2 differs only in the ASE sums, which no student
    reads), a view of it — links to its files, the sidecar's format number set to the old one."""
    import re

    found = re.search(r"^FORMAT_VERSION = (\d+)", Path(code, "staticvec/teacher/store.py").read_text(), re.M)
    views = []
    for i, directory in enumerate(features):
        meta = json.loads(Path(directory, "features.json").read_text())
        if found is None or meta.get("format") == int(found.group(1)):
            views.append(directory)
            continue
        view = Path(tmp, f"features-{i}")
        view.mkdir(exist_ok=True)
        for item in Path(directory).iterdir():
            if item.name != "features.json" and not (view / item.name).exists():
                (view / item.name).symlink_to(item.resolve())
        (view / "features.json").write_text(json.dumps({**meta, "format": int(found.group(1))}))
        views.append(str(view))
    return views


def run_one(code: str, spec: str, threads: int, args, features: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": code, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    env.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(), "staticvec-numba-cache"))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--methods", spec, "--threads", str(threads),
           "--batch", str(args.batch[0]), "--blocks", str(args.blocks), "--dim", str(args.dim),
           "--vocab-size", str(args.vocab_size)]
    if features:
        cmd += ["--features", *features, "--vocab", args.vocab]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode:
        sys.stderr.write(out.stderr[-3000:])
        return {}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=["bert_sg", "c2v", "x2static"],
                    help="method[:option] (options: pairs, released, all_pieces, all_words)")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2], help="thread counts of the new code")
    ap.add_argument("--old-threads", nargs="+", type=int, default=[1], help="thread counts of the old code")
    ap.add_argument("--batch", nargs="+", type=int, default=[0], help="batch size (0: the method's default)")
    ap.add_argument("--features", nargs="*", default=[], help="stored teacher features (else synthetic blocks)")
    ap.add_argument("--vocab", default=None, help="with --features: the vocabulary they were computed with")
    ap.add_argument("--blocks", type=int, default=2, help="synthetic: blocks of 1024 sentences")
    ap.add_argument("--dim", type=int, default=384, help="synthetic: teacher width")
    ap.add_argument("--vocab-size", type=int, default=21000, help="synthetic: vocabulary size")
    ap.add_argument("--old-commit", default="fd12b22", help="the old code (git commit of this repository)")
    ap.add_argument("--no-old", action="store_true", help="time the new code only")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    root = os.path.dirname(HERE)
    new_code = os.path.join(root, "workflow")
    tmp = tempfile.mkdtemp(prefix="students-old-")
    if not args.no_old:
        archive = subprocess.run(["git", "-C", root, "archive", args.old_commit, "workflow"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    old_code = os.path.join(tmp, "workflow")
    print("# uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    source = "features " + " ".join(args.features) if args.features else "synthetic"
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {source}"
          f"; old = {args.old_commit} (autograd), new = this checkout (fast engine)")
    print(f"{'method':<18} {'code':<4} {'thr':>3} {'examples':>9} {'ex/s':>9} {'× old':>6} {'× 1 thr':>7} "
          f"{'load':>5} {'batch':>5} {'update':>6}")
    for spec in args.methods:
        base = None
        runs = ([] if args.no_old else [("old", old_code, t) for t in args.old_threads]) + \
               [("new", new_code, t) for t in args.threads]
        one_thread = None
        for name, code, threads in runs:
            r = run_one(code, spec, threads, args, features_for(code, args.features, tmp) if args.features else [])
            if not r:
                print(f"{spec:<18} {name:<4} {threads:>3} failed")
                continue
            if name == "old" and threads == 1:
                base = r["ex_s"]
            if name == "new" and threads == 1:
                one_thread = r["ex_s"]
            ratio = f"{r['ex_s'] / base:.1f}" if base and name == "new" else ""
            scale = f"{r['ex_s'] / one_thread:.2f}" if one_thread and name == "new" and threads > 1 else ""
            print(f"{spec:<18} {name:<4} {threads:>3} {r['examples']:>9} {r['ex_s']:>9.0f} {ratio:>6} {scale:>7} "
                  f"{r['load']:>5.2f} {r['batching']:>5.2f} {r['update']:>6.2f}", flush=True)
    print("# uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
