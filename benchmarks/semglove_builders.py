"""SemGloVe co-occurrence builders vs the teacher pass they read, and masked vs unmasked MLM extraction.

    PYTHONPATH=workflow python benchmarks/semglove_builders.py --shard SHARD --vocab VOCAB \\
        --teacher minilm --mlm-head HEAD.pt [--sentences 400] [--masked-sentences 100]

On the first ``--sentences`` training sentences of a corpus shard:

1. teacher: ``FeatureExtractor.extract`` with the features the builders read (attention window S=5,
   MLM top-11, unmasked) — the cost the builders sit on (paid once, stored);
2. builders: ``build_shard`` for the six builder variants of the default config (sd, sr, sd10,
   md, mr, md5) from those arrays, stores written — the cost beyond the teacher pass
   (target: ≤ 20 % of the teacher's time);
3. pieces→words: the md piece store mapped to words (eq. 14), once per corpus, not per shard;
4. masked vs unmasked MLM (MLM features only) on ``--masked-sentences``: the masked mode runs one
   masked copy of the input per piece (batched under the token budget), the unmasked mode one pass.

Prints one JSON object; ``--out`` also writes it. Note the machine load (``uptime``) beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from staticvec.cooc.semantic import PieceVocabulary, Variant, build_shard, pieces_to_words  # noqa: E402
from staticvec.corpus.vocab import Vocabulary  # noqa: E402
from staticvec.teacher.features import FeatureExtractor, FeatureSpec, Part, iter_parts  # noqa: E402
from staticvec.teacher.load import load_teacher  # noqa: E402

VARIANTS = [("sd", "attention", 5, "divide"), ("sr", "attention", 5, "rank"), ("sd10", "attention", 10, "divide"),
            ("md", "mlm", 10, "divide"), ("mr", "mlm", 10, "rank"), ("md5", "mlm", 5, "divide")]


def first_sentences(shard, n: int) -> Part:
    part = next(iter_parts(shard, "sentence", part_sentences=n))
    k = min(n, len(part.sentences))
    return Part(0, part.sentences[:k], part.records[:k], part.paragraphs[:k])


def timed(fn, repeats=1):
    best, result = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shard", required=True)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--min-count", type=int, default=1)
    ap.add_argument("--teacher", default="minilm")
    ap.add_argument("--mlm-head", default=None, help="fitted head (teachers without an MLM head)")
    ap.add_argument("--sentences", type=int, default=400)
    ap.add_argument("--masked-sentences", type=int, default=100)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    vocab = Vocabulary.load(args.vocab, args.min_count)
    teacher = load_teacher(args.teacher, device=args.device, attention=True, mlm_head=args.mlm_head)
    part = first_sentences(args.shard, args.sentences)
    n_words = sum(len(s) for s in part.sentences)
    report = {"teacher": teacher.describe(), "sentences": len(part.sentences), "words": n_words,
              "load_avg_start": os.getloadavg()}

    # 1. the teacher pass the builders read
    spec = FeatureSpec(layers=(), attention_window=5, mlm_topk=11, mlm_mode="unmasked")
    extractor = FeatureExtractor(teacher, spec, vocab, args.batch_tokens)
    extractor.extract(first_sentences(args.shard, 8))  # warm-up
    t_teacher, arrays = timed(lambda: extractor.extract(part))
    report["teacher_seconds"] = round(t_teacher, 3)
    report["pieces"] = int(arrays["word_pieces"].sum())

    # 2. the builders (all six variants from one read), stores written
    pieces = PieceVocabulary.from_tokenizer(teacher.tokenizer, teacher.describe()["vocab_size"])
    meta = {"spec": spec.to_dict(), "teacher": teacher.describe(), "mlm_head": {"kind": teacher.mlm_head_kind}}
    with tempfile.TemporaryDirectory() as tmp:
        variants = [Variant(n, s, t, w, Path(tmp) / f"{n}.cooc") for n, s, t, w in VARIANTS]
        build_shard([arrays], vocab, variants[:1], meta, pieces, tmp_dir=tmp)  # warm-up (numba kernels)
        t_build, result = timed(lambda: build_shard([arrays], vocab, variants, meta, pieces, tmp_dir=tmp), repeats=3)
        report["builders_seconds"] = round(t_build, 3)
        report["builders_compute_seconds"] = round(result["builder_seconds"], 3)
        report["builders_share_of_teacher_pct"] = round(100 * t_build / t_teacher, 2)
        report["entries"] = {n: h["n_entries"] for n, h in result["headers"].items()}
        t_words, header = timed(lambda: pieces_to_words(Path(tmp) / "md.cooc", teacher.tokenizer, vocab,
                                                        Path(tmp) / "md.words.cooc"))
        report["pieces_to_words_seconds"] = round(t_words, 3)
        report["md_word_pairs"] = header["n_entries"]

    # 4. masked vs unmasked MLM extraction (MLM features only)
    small = first_sentences(args.shard, args.masked_sentences)
    for mode in ("unmasked", "masked"):
        ex = FeatureExtractor(teacher, FeatureSpec(layers=(), mlm_topk=11, mlm_mode=mode), vocab, args.batch_tokens)
        ex.extract(first_sentences(args.shard, 4))
        t, a = timed(lambda: ex.extract(small))
        report[f"mlm_{mode}_seconds"] = round(t, 3)
        report["mlm_pieces"] = int(a["word_pieces"].sum())
    report["masked_over_unmasked"] = round(report["mlm_masked_seconds"] / report["mlm_unmasked_seconds"], 2)
    report["load_avg_end"] = os.getloadavg()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
