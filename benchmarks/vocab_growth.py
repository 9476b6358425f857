"""How the vocabulary, the types and the words met per shard grow with the corpus: the growth laws of the
planning model (config/unit_costs.yaml, laws:), measured on the enwiki-2015 text of ../shared in corpus order.

The corpus stage's spaCy tokenization of all 400 files takes hours on a shared 2-core machine, so this
reads them with the simple regex tokenizer of benchmarks/glove_prepare_text.py (lower-cased words and
punctuation, regex sentence split) with the corpus stage's filters (X2Static's paragraph filter, sentences
of 10-40 tokens). The laws take their exponents from these counts and their scale from the workflow's own
measured points (the 1M-token reference corpus, the 10M-token run); the script prints both so that the
proxy can be checked where they overlap.

    PYTHONPATH=workflow python benchmarks/vocab_growth.py ../shared/data/corpus/enwiki-2015 --json vocab_growth.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from glove_prepare_text import SENTENCE_END, TOKEN, paragraphs  # noqa: E402  (one regex tokenizer for the benchmarks)

CHECKPOINTS = [250_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 40_000_000]
SHARD_SIZES = [125_000, 500_000, 1_000_000, 5_000_000]


def training_sentences(files, min_paragraph_sentences=3, min_paragraph_chars=140, lo=10, hi=40):
    for path in files:
        for text in paragraphs(path):
            sentences = [TOKEN.findall(s.lower()) for s in SENTENCE_END.split(text)]
            if len(sentences) < min_paragraph_sentences or len(text) < min_paragraph_chars:
                continue
            for tokens in sentences:
                if lo <= len(tokens) <= hi:
                    yield tokens


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source", type=Path, help="the enwiki-2015 directory (AA..AD/wiki_NN.xz)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    files = sorted(args.source.glob("A?/wiki_*"))
    counts: Counter = Counter()
    chunks: dict[int, list[Counter]] = {n: [] for n in SHARD_SIZES}
    current = {n: Counter() for n in SHARD_SIZES}
    filled = dict.fromkeys(SHARD_SIZES, 0)
    points, tokens = [], 0
    next_checkpoint = iter(CHECKPOINTS)
    checkpoint = next(next_checkpoint)
    for sentence in training_sentences(files):
        counts.update(sentence)
        tokens += len(sentence)
        for n in SHARD_SIZES:  # the first few shards of each size, for the words a shard meets
            if len(chunks[n]) < 4:
                current[n].update(sentence)
                filled[n] += len(sentence)
                if filled[n] >= n:
                    chunks[n].append(current[n])
                    current[n], filled[n] = Counter(), 0
        if checkpoint is not None and tokens >= checkpoint:
            points.append(_point(tokens, counts))
            checkpoint = next(next_checkpoint, None)
    points.append(_point(tokens, counts))
    vocab5 = {w for w, c in counts.items() if c >= 5}
    # words a shard meets: those of this corpus's min-count-5 vocabulary, and every type (at paper scale,
    # where a word needs 5 occurrences in ~1B tokens, nearly every type a shard meets is in the vocabulary)
    shard_words = [[n, sum(len(vocab5.intersection(c)) for c in chunks[n]) / len(chunks[n]),
                    sum(len(c) for c in chunks[n]) / len(chunks[n])] for n in SHARD_SIZES if chunks[n]]
    result = {"files": len(files), "tokens": tokens, "points": points,
              "shard_words": {"columns": ["shard tokens", "vocabulary words", "types"], "rows": shard_words}}
    for key in ("vocabulary_min5", "vocabulary_min10", "types"):
        result[f"exponent_{key}"] = _slope([(p["tokens"], p[key]) for p in points if p["tokens"] >= 10_000_000])
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


def _point(tokens: int, counts: Counter) -> dict:
    return {"tokens": tokens, "types": len(counts), "vocabulary_min5": sum(1 for c in counts.values() if c >= 5),
            "vocabulary_min10": sum(1 for c in counts.values() if c >= 10)}


def _slope(points) -> float | None:
    if len(points) < 2:
        return None
    xs, ys = [math.log(x) for x, _ in points], [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


if __name__ == "__main__":
    raise SystemExit(main())
