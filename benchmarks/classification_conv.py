"""CPU time of one training step: SentenceCNN (packed windows, per-batch word projection) vs nn.Conv1d.

The reference is the textbook model: gather the batch's padded embeddings, nn.Conv1d(d, 100, 3,
padding=1), ReLU, masked max-pool. Batches are real MR sentences (batch 50), embeddings random.

    PYTHONPATH=workflow python benchmarks/classification_conv.py --dims 300 768 --threads 1
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from staticvec.evaluate.classification import EncodedSentences, SentenceCNN, WordTable
from staticvec.embeddings import Embeddings
from staticvec.evaluate.classification_data import load_dataset


class ConvReference(nn.Module):
    def __init__(self, vectors, n_classes, filters=100):
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(vectors, freeze=True, padding_idx=0)
        self.conv = nn.Conv1d(vectors.shape[1], filters, 3, padding=1)
        self.dropout = nn.Dropout(0.5)
        self.output = nn.Linear(filters, n_classes)

    def forward(self, ids, lengths):
        hidden = torch.relu(self.conv(self.embed(ids).transpose(1, 2)))
        inside = torch.arange(ids.shape[1])[None, :] < lengths[:, None]
        return self.output(self.dropout(hidden.masked_fill(~inside[:, None, :], 0.0).amax(dim=2)))


def cpu_ms_per_step(step, n: int = 40) -> float:
    for _ in range(5):
        step()
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(n):
            step()
        best = min(best, (time.process_time() - start) / n * 1e3)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="../shared/data/eval/classification")
    p.add_argument("--dims", type=int, nargs="+", default=[300, 768])
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    part = load_dataset("mr", args.data_dir).parts["all"]
    rng = np.random.default_rng(0)
    batch = rng.choice(len(part), 50, replace=False)
    sentences = part.subset(batch)
    print(f"| dim | nn.Conv1d ms/step | SentenceCNN ms/step | load |  ({args.threads} thread(s), CPU time, MR batch of 50)")
    print("| --- | --- | --- | --- |")
    for dim in args.dims:
        words = sorted({t for s in part.sentences for t in s})
        emb = Embeddings(words, rng.normal(size=(len(words), dim)).astype(np.float32))
        table = WordTable(emb, part.sentences)
        vectors = torch.from_numpy(table.vectors)
        labels = torch.from_numpy(sentences.labels)
        encoded = EncodedSentences(sentences, table.index, 64, 3, "cpu")
        windows, owner, _ = encoded.batch(torch.arange(50))
        lengths = encoded.lengths
        ids = torch.zeros(50, int(lengths.max()), dtype=torch.long)
        for i, s in enumerate(sentences.sentences):
            row = [table.index.get(t, 0) for t in s[:64]]
            ids[i, : len(row)] = torch.tensor(row)
        timings = []
        for model, inputs in ((ConvReference(vectors, 2), (ids, lengths)), (SentenceCNN(vectors, 2), (windows, owner, 50))):
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

            def step():
                loss = F.cross_entropy(model(*inputs), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

            timings.append(cpu_ms_per_step(step))
        print(f"| {dim} | {timings[0]:.1f} | {timings[1]:.1f} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
