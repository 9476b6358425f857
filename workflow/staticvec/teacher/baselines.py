"""Contextual baselines as static embeddings (evaluated by the harness like any trained table).

- **token table** (``BERT-base/large`` rows of Wang et al., ``BERT_token`` of Context-to-Vec): a word's
  vector is the mean of its pieces' rows in the model's input embedding matrix;
- **word alone** (``BERT_word``): the word fed as a one-word input (with the family's special tokens),
  mean of its pieces' states at a layer (last by default);
- **ASE** (Bommasani et al.; ``BERT_avg``; X2Static Table 3): a word's contextual vectors averaged
  over its corpus occurrences, for *every* layer, from the per-shard sums the feature pass keeps
  (no second pass). Summing the first k of N shards gives the corpus-size curve (X2Static Fig. 1) at
  fractions k/N. Words never seen fall back to their word-alone vector when one is given (as the
  released ASE code does), else they are left out.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from staticvec.embeddings import Embeddings
from staticvec.errors import InputFileError
from staticvec.teacher.align import align
from staticvec.teacher.features import FeatureExtractor, FeatureSpec, Part

log = logging.getLogger(__name__)


def token_table(teacher, words: Sequence[str], counts: Sequence[int] | None = None) -> Embeddings:
    """Mean of each word's pieces' input-embedding rows (the word tokenized alone, no special tokens)."""
    import torch

    al = align(teacher.tokenizer, [[w] for w in words], add_special_tokens=False)
    g = al.global_piece_word()
    keep = g >= 0
    with torch.inference_mode():
        table = teacher.input_embeddings().detach().float().cpu()
        rows = table[torch.as_tensor(al.input_ids[keep])]
        sums = torch.zeros(len(words), table.shape[1]).index_add_(0, torch.as_tensor(g[keep]), rows)
    n = np.bincount(g[keep], minlength=len(words))
    return _drop_empty(words, sums.numpy() / np.maximum(n, 1)[:, None], n, counts, "token table")


def word_alone(teacher, words: Sequence[str], layers: Sequence[int] = (-1,), special_tokens: bool = True,
               batch_tokens: int = 8192, counts: Sequence[int] | None = None) -> dict[int, Embeddings]:
    """Each word as a one-word input: {absolute layer: embeddings} (mean of the word's pieces)."""
    spec = FeatureSpec(context="sentence", special_tokens=special_tokens, layers=tuple(layers),
                       vector_dtype="float32")
    extractor = FeatureExtractor(teacher, spec, None, batch_tokens)
    part = Part(0, sentences=[[w] for w in words], records=list(range(len(words))), paragraphs=list(range(len(words))))
    arrays = extractor.extract(part)
    n = arrays["word_pieces"].astype(np.int64)
    return {layer: _drop_empty(words, arrays[f"word_vectors.{layer}"], n, counts, f"word-alone layer {layer}")
            for layer in extractor.layers}


def _drop_empty(words, vectors, n_pieces, counts, what) -> Embeddings:
    keep = np.flatnonzero(n_pieces > 0)
    if len(keep) < len(words):
        log.warning("%s: %d word(s) have no piece and no vector, left out", what, len(words) - len(keep))
    return Embeddings([words[i] for i in keep], np.asarray(vectors)[keep],
                      None if counts is None else np.asarray(counts)[keep])


def merge_ase(stores) -> dict[str, np.ndarray]:
    """Sum the ASE sums and counts of several shards' features (same word list)."""
    total = None
    for store in stores:
        state = store.ase()
        if total is None:
            total = {k: np.array(v, copy=True) for k, v in state.items()}
            total["sums"] = total["sums"].astype(np.float64)
            continue
        if not np.array_equal(state["word_ids"], total["word_ids"]):
            raise InputFileError(store.dir / "ase.npz", "ASE word list differs from the first shard's")
        total["sums"] += state["sums"]
        total["counts"] += state["counts"]
    if total is None:
        raise ValueError("no feature stores given")
    return total


def ase_embeddings(stores, vocab, layers: Sequence[int] | None = None,
                   fallback: dict[int, Embeddings] | None = None) -> dict[int, Embeddings]:
    """{layer: embeddings} of occurrence-averaged vectors over the given shards' features."""
    state = merge_ase(stores)
    sums, counts, word_ids = state["sums"], state["counts"], state["word_ids"]
    all_layers = [int(x) for x in state.get("layers", np.arange(sums.shape[1]))]
    chosen = all_layers if layers is None else [all_layers[x] if x < 0 else x for x in layers]
    seen = counts > 0
    out = {}
    for layer in chosen:
        means = sums[:, layer, :] / np.maximum(counts, 1)[:, None]
        words = [vocab.words[i] for i in word_ids]
        vec_counts = [vocab.counts[i] for i in word_ids]
        keep = seen.copy()
        vectors = means.astype(np.float32)
        if fallback is not None and layer in fallback:
            back = fallback[layer]
            for row in np.flatnonzero(~seen):
                if words[row] in back:
                    vectors[row] = back[words[row]]
                    keep[row] = True
        idx = np.flatnonzero(keep)
        out[layer] = Embeddings([words[i] for i in idx], vectors[idx], [vec_counts[i] for i in idx])
    return out


def ase_report(stores) -> dict:
    state = merge_ase(stores)
    counts = state["counts"]
    return {
        "shards": len(stores),
        "sentences": int(sum(s.meta["sentences"] for s in stores)),
        "words": int(len(counts)),
        "words_seen": int((counts > 0).sum()),
        "occurrences": int(counts.sum()),
        "layers": int(state["sums"].shape[1]),
    }
