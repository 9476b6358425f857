"""Throughput of the distillation trainers' static update (X2Static, BERT + Skip-gram, Context-to-Vec).

Synthetic blocks with the real shapes (teacher width, vocabulary, sentence lengths) isolate the
trainer from the teacher; ``--features DIR...`` (stored teacher features) times the real loop,
loading included. Prints one line per configuration: examples (targets/centres) per second of
the whole loop and of the update alone, and the update's share of the time.

    python benchmarks/students_throughput.py                       # synthetic, CPU
    python benchmarks/students_throughput.py --threads 1 2 --methods bert_sg --batch 32 64 128
    python benchmarks/students_throughput.py --features results/default/teacher/minilm/features/sentence/00000 \\
        --vocab results/default/corpus/vocab.min5.tsv

Run ``uptime`` beside it: the figures scale with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "workflow"))


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=["x2static", "bert_sg", "bert_sg:pairs", "c2v", "c2v:released"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--batch", nargs="+", type=int, default=[0], help="batch size (0: the method's default)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--features", nargs="*", default=[], help="stored teacher features (else synthetic blocks)")
    ap.add_argument("--vocab", default=None, help="with --features: the vocabulary they were computed with")
    ap.add_argument("--blocks", type=int, default=2, help="synthetic: blocks of 1024 sentences")
    ap.add_argument("--dim", type=int, default=384, help="synthetic: teacher width")
    ap.add_argument("--vocab-size", type=int, default=21000, help="synthetic: vocabulary size")
    args = ap.parse_args()

    import torch

    from staticvec.train.negative_sampling import train

    if args.features:
        from staticvec.corpus.vocab import Vocabulary
        from staticvec.train.teacher_blocks import StoredFeatures

        vocab = Vocabulary.load(args.vocab)
        counts = np.asarray(vocab.counts)
        d = StoredFeatures(args.features, ["word_ids"]).hidden_size
    else:
        blocks, counts = synthetic_blocks(args.blocks, 1024, args.vocab_size, args.dim)
        d = args.dim
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} load {os.getloadavg()[0]:.1f} torch {torch.__version__} "
          f"device {args.device} {'features ' + ' '.join(args.features) if args.features else 'synthetic'}")
    print(f"{'method':<14} {'threads':>7} {'batch':>6} {'examples':>9} {'ex/s loop':>10} {'ex/s update':>11} "
          f"{'update share':>12} {'load share':>10}")
    for spec in args.methods:
        method, _, option = spec.partition(":")
        extra = {}
        if option == "pairs":
            extra = {"aggregation": "pairs"}
        elif option == "released":
            extra = {"variant": "released"}
        elif option == "all_pieces":
            extra = {"context_mean": "all_pieces"}
        for threads in args.threads:
            torch.set_num_threads(threads)
            for batch in args.batch:
                model, params = make(method, counts, d, batch, args.device, extra)
                if args.features:
                    from staticvec.train.teacher_blocks import StoredFeatures

                    source = StoredFeatures(args.features, model.feature_keys)
                else:
                    source = Memory(blocks)
                rec = train(model, source, params.loop_settings(), seed=0, progress=False)
                t = rec["timing"]
                print(f"{spec:<14} {threads:>7} {batch or '-':>6} {rec['examples']:>9} "
                      f"{rec['throughput']['examples_per_s']:>10.0f} {rec['throughput']['examples_per_update_s']:>11.0f} "
                      f"{t['static_update_share']:>12.2f} {t['teacher_or_loading_share']:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
