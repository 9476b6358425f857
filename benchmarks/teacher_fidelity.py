"""How close the bf16 teacher's features are to the fp32 ones, on a real corpus shard.

    python benchmarks/teacher_fidelity.py --shard results/default/corpus/shards/00000.tsv.gz --sentences 2000

One part of the shard through MiniLM twice, ``--dtype float32`` and ``bfloat16`` (this checkout's code,
same batches), with every feature the workflow reads: last-layer word vectors and sentence vectors
(students), the attention window ±10 and the MLM top-11 of a fitted head (SemGloVe's builders).
Prints: cosine of each word vector / sentence vector to its fp32 twin (mean, 1st percentile, minimum),
agreement of the attention window's top-S positions (S = 5, SemGloVe's window), overlap of the MLM
top-11 (and top-1 agreement). Quality, not speed: valid on a loaded machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from staticvec.teacher.features import FeatureExtractor, FeatureSpec, iter_parts  # noqa: E402
from staticvec.teacher.load import load_teacher  # noqa: E402


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-30)


def top_positions(weights: np.ndarray, s: int) -> list[set]:
    """Per word, the window positions of its ``s`` largest attention weights (NaN / 0 = no word there)."""
    out = []
    for row in weights:
        valid = np.flatnonzero(np.isfinite(row) & (row > 0))
        out.append(set(valid[np.argsort(-row[valid], kind="stable")[:s]].tolist()) if len(valid) >= s else None)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shard", default=str(ROOT / "results/default/corpus/shards/00000.tsv.gz"))
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--head", default=str(ROOT / "benchmarks/work/minilm_mlm_head.pt"),
                    help="a fitted MLM head (benchmarks/teacher_dtype.py fits and caches one)")
    ap.add_argument("--window", type=int, default=10, help="attention window stored (raw ±2S)")
    ap.add_argument("--top-s", type=int, default=5, help="S: the attention positions compared")
    ap.add_argument("--mlm-topk", type=int, default=11)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(2)
    part = next(iter_parts(args.shard, "sentence", args.sentences))
    spec = FeatureSpec(layers=(-1,), sentence_vectors=True, attention_window=args.window, mlm_topk=args.mlm_topk,
                       mlm_mode="unmasked", vector_dtype="float32")
    arrays = {}
    for dtype in ("float32", "bfloat16"):
        teacher = load_teacher("minilm", device="cpu", dtype=dtype, attention=True, mlm_head=args.head)
        arrays[dtype] = FeatureExtractor(teacher, spec, None, batch_tokens=8192).extract(part)
    a, b = arrays["float32"], arrays["bfloat16"]
    layer = next(k for k in a if k.startswith("word_vectors."))
    for key in ("sentence_offsets", "word_ids", "word_pieces", "mlm_piece_word", "mlm_piece_ids"):
        assert np.array_equal(a[key], b[key]), key  # same words, pieces, alignment
    words = len(a[layer])
    print(f"{len(part.sentences)} sentences, {words} words, {len(a['mlm_piece_ids'])} pieces; MiniLM, fp32 vs bf16 weights")
    print("| feature | measure | value |")
    print("| --- | --- | ---: |")
    for name, key in (("last-layer word vectors", layer), ("sentence vectors", "sentence_vectors")):
        c = cosines(a[key], b[key])
        print(f"| {name} | cosine to fp32: mean / 1st percentile / min | {c.mean():.5f} / {np.percentile(c, 1):.5f} / {c.min():.5f} |")
    ta, tb = top_positions(a["attention_window"], args.top_s), top_positions(b["attention_window"], args.top_s)
    agree = [len(x & y) / args.top_s for x, y in zip(ta, tb) if x is not None and y is not None]
    same = np.mean([x == y for x, y in zip(ta, tb) if x is not None and y is not None])
    print(f"| attention window ±{args.window} | top-{args.top_s} positions: mean overlap / identical sets "
          f"({len(agree)} words) | {np.mean(agree):.4f} / {same:.4f} |")
    diff = np.nanmax(np.abs(np.nan_to_num(a["attention_window"]) - np.nan_to_num(b["attention_window"])))
    print(f"| attention window ±{args.window} | largest absolute difference of a weight | {diff:.4f} |")
    ka, kb = a["mlm_topk_ids"], b["mlm_topk_ids"]
    overlap = np.mean([len(set(x) & set(y)) / ka.shape[1] for x, y in zip(ka, kb)])
    print(f"| MLM top-{ka.shape[1]} | overlap / top-1 agreement | {overlap:.4f} / {np.mean(ka[:, 0] == kb[:, 0]):.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
