"""int8 dynamic quantization of the teacher's Linear layers, against fp32 and bf16 weights, on a real shard.

    PYTHONPATH=workflow python benchmarks/teacher_int8.py --shard results/default/corpus/shards/00000.tsv.gz

Issue 13 leaves ``int8`` as a forced ``teacher.dtype`` "if you find it worth it, measured". This measures
it: the teacher's bare forward (last hidden state) on the first ``--sentences`` sentences of the shard,
length-sorted batches of 64, one process, each variant timed ``--repeats`` times after a warm-up (best
taken), and its fidelity to fp32 on the same batches: the cosine of every real piece's last-layer vector
to the fp32 one (mean and 1st percentile). Variants (``torch.ao.quantization.quantize_dynamic``, int8
weights, activations quantized per batch):

- every Linear layer, weights per tensor (PyTorch's default dynamic qconfig);
- every Linear layer, weights per output channel;
- per channel, all but the FFN's output projection (its input, after GELU, carries the outliers);
- per channel, only the FFN's input projection;
- bf16 weights (``model.to(torch.bfloat16)``: what ``teacher.dtype: bfloat16`` runs on a CPU).

``uptime`` is printed before and after: a figure counts only on a quiet machine.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))


def read_sentences(shard: Path, n: int) -> list[str]:
    """The first ``n`` sentences of a corpus shard, kept for training or not, as text."""
    from staticvec.corpus.shards import iter_records

    return [" ".join(record.tokens) for record in itertools.islice(iter_records(shard), n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shard", default=str(ROOT / "results/default/corpus/shards/00000.tsv.gz"))
    ap.add_argument("--teacher", default="minilm")
    ap.add_argument("--sentences", type=int, default=600)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the feature pass's teacher.threads)")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig, quantize_dynamic

    from staticvec.teacher.load import load_teacher

    warnings.filterwarnings("ignore")  # torch.ao.quantization's deprecation notice
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    torch.set_num_threads(args.threads)
    teacher = load_teacher(args.teacher, device="cpu", dtype="float32")
    model = teacher.model.eval()
    sentences = sorted(read_sentences(Path(args.shard), args.sentences), key=len)
    batches = [teacher.tokenizer(sentences[i:i + 64], padding=True, return_tensors="pt")
               for i in range(0, len(sentences), 64)]
    pieces = sum(int(b["attention_mask"].sum()) for b in batches)

    def timed(m):
        best, outs = float("inf"), None
        with torch.inference_mode():
            for r in range(args.repeats + 1):  # the first is a warm-up
                t0 = time.perf_counter()
                outs = [m(**b).last_hidden_state.float() for b in batches]
                if r:
                    best = min(best, time.perf_counter() - t0)
        return best, outs

    base_s, base = timed(model)
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    ffn_out = {n for n in linears if n.endswith("output.dense") and ".attention." not in n}
    variants = {
        "int8, every Linear, per tensor": lambda m: quantize_dynamic(m, {torch.nn.Linear: default_dynamic_qconfig}),
        "int8, every Linear, per channel": lambda m: quantize_dynamic(m, {torch.nn.Linear: per_channel_dynamic_qconfig}),
        "int8 per channel, not the FFN output": lambda m: quantize_dynamic(
            m, {n: per_channel_dynamic_qconfig for n in linears if n not in ffn_out}),
        "int8 per channel, FFN input only": lambda m: quantize_dynamic(
            m, {n: per_channel_dynamic_qconfig for n in linears if n.endswith("intermediate.dense")}),
        "bf16 weights": lambda m: m.to(torch.bfloat16),
    }
    print(f"{args.teacher}, {len(sentences)} sentences, {pieces} pieces, {len(batches)} batches, "
          f"{args.threads} thread(s), best of {args.repeats}")
    print("| variant | pieces/s | × fp32 | cosine to fp32, mean | 1st percentile |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| fp32 | {pieces / base_s:,.0f} | 1.00 | | |")
    for name, make in variants.items():
        secs, outs = timed(make(copy.deepcopy(model)))
        cos = torch.cat([torch.nn.functional.cosine_similarity(a[m], b[m], dim=-1)
                         for a, b, m in ((a, b, bt["attention_mask"].bool()) for a, b, bt in zip(base, outs, batches))])
        print(f"| {name} | {pieces / secs:,.0f} | {base_s / secs:.2f} | {cos.mean():.5f} | {cos.quantile(0.01):.5f} |")
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
