"""Teacher feature extraction vs a bare forward pass of the same model on the same batches.

    PYTHONPATH=workflow python benchmarks/teacher_throughput.py --teacher minilm --sentences 2000

Measures, on one part of a corpus shard (the same length-sorted batches for both):
- bare: the encoder's forward pass alone (tensors built beforehand), under inference_mode;
- full: ``FeatureExtractor.extract`` (tokenization, alignment, forward, piece→word means,
  the requested features) plus writing the part file (``np.savez``).
Reports word tokens/s, pieces/s and the overhead of full over bare (``overhead_pct``, best of
``--repeats`` each), and the overhead measured inside one full run (``overhead_in_run_pct``: time
outside the forward passes over time inside them), which a shared machine's load disturbs less. On CUDA it also reports the
achieved FLOP/s (dense matmul FLOPs of the padded batches) as a share of ``--peak-tflops``.

Without ``--shard`` a benchmark shard is built under ``benchmarks/work/`` from the first
WikiExtractor file of ``../shared/data/corpus/enwiki-2015`` (regex tokens, lower-cased, sentences
of 10–40 tokens): the corpus stage's spaCy tokens differ slightly, the throughput does not.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import lzma
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# --code DIR: import staticvec from DIR (an older checkout's workflow/, for side-by-side runs)
_code = sys.argv[sys.argv.index("--code") + 1] if "--code" in sys.argv else str(ROOT / "workflow")
sys.path.insert(0, _code)

from staticvec.corpus.shards import Sentence  # noqa: E402
from staticvec.teacher.align import align  # noqa: E402
from staticvec.teacher.features import FeatureExtractor, FeatureSpec, iter_parts, length_batches, pad_batch  # noqa: E402
from staticvec.teacher.load import load_teacher  # noqa: E402

TOKEN = re.compile(r"\w+|[^\w\s]")
SPLIT = re.compile(r"(?<=[.!?])\s+")


def build_shard(path: Path, source: Path, max_sentences: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = 0
    with lzma.open(source, "rt", encoding="utf-8") as src, gzip.open(path, "wt", encoding="utf-8") as out:
        article, para = "0", 0
        for line in src:
            line = line.strip()
            if line.startswith("<doc"):
                article, para = re.search(r'id="(\d+)"', line).group(1), 0
                next(src, None)  # the title line
                continue
            if not line or line.startswith("</doc"):
                continue
            for sentence in SPLIT.split(line):
                tokens = TOKEN.findall(sentence.lower())
                if not tokens:
                    continue
                keep = 10 <= len(tokens) <= 40
                out.write(Sentence(article, para, keep, tokens).to_line())
                kept += keep
            para += 1
            if kept >= max_sentences:
                break
    return path


def flops_of(teacher, batches, al) -> float:
    """Dense FLOPs of the padded batches: 2·params per position + attention (QKᵀ and AV)."""
    n_params = sum(p.numel() for n, p in teacher.encoder.named_parameters() if "embeddings" not in n)
    total = 0.0
    for batch in batches:
        B, L = len(batch), int(al.lengths[batch].max())
        total += 2.0 * n_params * B * L + 4.0 * teacher.n_layers * teacher.hidden_size * B * L * L
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--teacher", default="minilm")
    ap.add_argument("--shard", default=None)
    ap.add_argument("--corpus-file", default=str(ROOT / "../shared/data/corpus/enwiki-2015/AA/wiki_00.xz"))
    ap.add_argument("--sentences", type=int, default=2000, help="sentences in the measured part")
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3, help="best of N (the machine may be shared)")
    ap.add_argument("--attention-window", type=int, default=0)
    ap.add_argument("--mlm-topk", type=int, default=0)
    ap.add_argument("--mlm-head", default=None)
    ap.add_argument("--mlm-mode", default="unmasked")
    ap.add_argument("--ase", action="store_true")
    ap.add_argument("--peak-tflops", type=float, default=None, help="the card's dense bf16 peak (H100 SXM: 989)")
    ap.add_argument("--json", default=None, help="also write the figures here")
    ap.add_argument("--code", default=None, help="import staticvec from this workflow/ directory (default: this checkout)")
    ap.add_argument("--dtype", default=None, help="teacher dtype (default: the code's own default, auto)")
    ap.add_argument("--context", default="sentence", choices=["sentence", "paragraph"], help="model input unit")
    ap.add_argument("--sentence-vectors", action="store_true", help="also the sentence vectors (X2Static's features)")
    args = ap.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    shard = Path(args.shard) if args.shard else build_shard(
        ROOT / "benchmarks/work/teacher_bench.tsv.gz", Path(args.corpus_file), args.sentences + 100)
    extra = {"dtype": args.dtype} if args.dtype else {}
    teacher = load_teacher(args.teacher, device=args.device, attention=args.attention_window > 0,
                           mlm_head=args.mlm_head, **extra)
    layers = () if args.attention_window or args.mlm_topk else (-1,)  # SemGloVe's pass stores no vectors
    spec = FeatureSpec(layers=layers, attention_window=args.attention_window, mlm_topk=args.mlm_topk,
                       mlm_mode=args.mlm_mode, ase=args.ase, context=args.context,
                       sentence_vectors=args.sentence_vectors)
    vocab = None
    if args.ase:
        from collections import Counter

        from staticvec.corpus.shards import iter_sentences
        from staticvec.corpus.vocab import Vocabulary

        vocab = Vocabulary.from_counts(Counter(w for s in iter_sentences(shard) for w in s), min_count=2)
    part = next(iter_parts(shard, args.context, args.sentences))
    extractor = FeatureExtractor(teacher, spec, vocab, args.batch_tokens)

    # the same batches for the bare pass, built beforehand
    units = extractor.units(part)
    al = align(teacher.tokenizer, units.words, spec.special_tokens, teacher.max_length)
    batches = length_batches(al.lengths, args.batch_tokens)
    tensors = []
    for batch in batches:
        ids, _, valid = pad_batch(al, batch, teacher.pad_id)
        tensors.append((torch.as_tensor(ids, device=teacher.device),
                        torch.as_tensor(valid, device=teacher.device).long()))
    sync = torch.cuda.synchronize if teacher.device.startswith("cuda") else (lambda: None)

    def bare():
        with torch.inference_mode():
            for ids, mask in tensors:
                teacher.forward(ids, mask, hidden_states=False)
        sync()

    # time spent inside the forward passes during `full`: the rest is the extraction's own work,
    # measured in the same run (robust to a shared machine's changing load)
    inner = {"forward": 0.0}
    plain_forward = teacher.forward

    def timed_forward(*a, **k):
        sync()
        t0 = time.perf_counter()
        out = plain_forward(*a, **k)
        sync()
        inner["forward"] += time.perf_counter() - t0
        return out

    def full():
        inner["forward"] = 0.0
        teacher.forward = timed_forward
        try:
            arrays = extractor.extract(part)
            sync()
            buf = io.BytesIO()
            np.savez(buf, **arrays)
        finally:
            teacher.forward = plain_forward
        return arrays

    bare()  # warm-up
    full()
    times = {"bare": [], "full": []}
    own = []  # (full - its forward time) / its forward time
    for _ in range(args.repeats):
        for name, fn in (("bare", bare), ("full", full)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
        own.append(times["full"][-1] / inner["forward"] - 1)
    words = sum(len(s) for s in part.sentences)
    pieces = int(al.lengths.sum())
    best = {k: min(v) for k, v in times.items()}
    result = {
        "teacher": args.teacher,
        "device": teacher.device,
        "dtype": str(getattr(teacher, "dtype", None) or "float32").replace("torch.", ""),
        "code": _code,
        "threads": torch.get_num_threads(),
        "sentences": len(part.sentences),
        "words": words,
        "pieces": pieces,
        "batches": len(batches),
        "features": {k: v for k, v in spec.to_dict().items() if k in ("attention_window", "mlm_topk", "mlm_mode", "ase")},
        "bare_s": round(best["bare"], 3),
        "full_s": round(best["full"], 3),
        "bare_words_per_s": round(words / best["bare"]),
        "full_words_per_s": round(words / best["full"]),
        "bare_pieces_per_s": round(pieces / best["bare"]),
        "full_pieces_per_s": round(pieces / best["full"]),
        "overhead_pct": round(100 * (best["full"] / best["bare"] - 1), 1),
        "overhead_in_run_pct": round(100 * min(own), 1),
        "all_times": {k: [round(x, 3) for x in v] for k, v in times.items()},
        "loadavg": os.getloadavg(),
    }
    if teacher.device.startswith("cuda"):
        flops = flops_of(teacher, batches, al)
        result["gpu"] = torch.cuda.get_device_name()
        result["bare_tflops"] = round(flops / best["bare"] / 1e12, 2)
        if args.peak_tflops:
            result["bare_share_of_peak_pct"] = round(100 * flops / best["bare"] / 1e12 / args.peak_tflops, 1)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
