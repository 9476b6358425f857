"""Contextual baselines as static embeddings (evaluated by the harness like any trained table).

- **token table** (``BERT-base/large`` rows of Wang et al., ``BERT_token`` of Context-to-Vec): a word's
  vector is the mean of its pieces' rows in the model's input embedding matrix;
- **word alone** (``BERT_word``): the word fed as a one-word input (with the family's special tokens),
  mean of its pieces' states at a layer (last by default);
- **ASE** (Bommasani et al.; ``BERT_avg``; X2Static Table 3): a word's contextual vectors averaged
  over its corpus occurrences, for *every* layer, from the per-shard sums the feature pass keeps
  (no second pass). Summing the first k of N shards gives the corpus-size curve (X2Static Fig. 1) at
  fractions k/N. Every vocabulary word met is covered; words never met, and the evaluation sets'
  words outside the vocabulary, fall back to their word-alone vector when asked (as the released ASE
  code does: it embeds the evaluation words), else they are left out. Memory is bounded: one layer's
  table at a time, the shards' sums memory-mapped, the word-alone fallback computed in parts.
  With ``teacher.cache: recompute`` (:class:`RecomputedAse`) the sums are computed by this job over
  the corpus shards instead of read from stored passes: nothing per shard is written, the running sums
  of every word met are held in memory (vocabulary x layers x width float32) and checkpointed.
"""

from __future__ import annotations

import logging
from typing import Iterator, Sequence

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


class WordAlone:
    """Word-alone vectors of ``words`` at every layer, computed ``part_words`` words at a time into a
    memory-mapped scratch file (``scratch``: a directory; the file is removed by :meth:`close`), so the
    fallback of ASE costs memory for one part, whatever the number of words."""

    def __init__(self, teacher, words: Sequence[str], layers: Sequence[int], special_tokens: bool = True,
                 batch_tokens: int = 8192, scratch=".", part_words: int = 4096):
        from pathlib import Path

        spec = FeatureSpec(context="sentence", special_tokens=special_tokens, layers=tuple(layers),
                           vector_dtype="float32")
        extractor = FeatureExtractor(teacher, spec, None, batch_tokens)
        self.layers = list(extractor.layers)
        self.path = Path(scratch) / "word-alone.scratch.npy"
        self.table = np.lib.format.open_memmap(self.path, mode="w+", dtype=np.float32,
                                               shape=(len(self.layers), len(words), teacher.hidden_size))
        has = np.zeros(len(words), dtype=bool)
        # a "word" with white space in it (an evaluation set's phrase) is not one input word: no vector
        single = np.flatnonzero([bool(w) and not any(c.isspace() for c in w) for w in words])
        for a in range(0, len(single), part_words):
            rows = single[a:a + part_words]
            chunk = [[words[r]] for r in rows]
            arrays = extractor.extract(Part(0, sentences=chunk, records=list(range(len(chunk))),
                                            paragraphs=list(range(len(chunk)))))
            has[rows] = arrays["word_pieces"] > 0
            for i, layer in enumerate(self.layers):
                self.table[i, rows] = arrays[f"word_vectors.{layer}"]
        self.index = {w: i for i, w in enumerate(words) if has[i]}
        if len(self.index) < len(words):
            log.warning("word alone: %d word(s) have no piece and no vector, left out", len(words) - len(self.index))

    def vectors(self, layer: int) -> np.ndarray:
        return self.table[self.layers.index(layer)]

    def close(self) -> None:
        del self.table
        self.path.unlink(missing_ok=True)


class RecomputedAse:
    """ASE sums computed now: the corpus ``shards`` through the teacher (every layer, the vocabulary's
    words), added shard by shard into running sums over the whole vocabulary — the stored passes'
    ``ase()`` state of all the shards at once, for :func:`ase_embeddings`. Resumable: with ``checkpoint``
    the sums and the next shard are saved every ``checkpoint_every`` seconds (atomically)."""

    def __init__(self, teacher, shards: Sequence, vocab, special_tokens: bool = True, part_sentences: int = 4096,
                 batch_tokens: int = 8192, max_words: int | None = None, checkpoint=None,
                 checkpoint_every: float = 1800.0):
        from pathlib import Path

        self.teacher, self.shards, self.vocab = teacher, [str(s) for s in shards], vocab
        self.spec = FeatureSpec(context="sentence", special_tokens=special_tokens, layers=(), ase=True)
        self.part_sentences, self.batch_tokens = int(part_sentences), int(batch_tokens)
        self.words = None if max_words is None else np.arange(min(int(max_words), len(vocab)))
        self.checkpoint = Path(checkpoint) if checkpoint else None
        self.checkpoint_every = float(checkpoint_every)
        self.dir = Path(self.shards[0]).parent if self.shards else Path(".")
        self._state = None
        self.meta = {"teacher": teacher.describe(), "spec": self.spec.to_dict(), "sentences": 0}

    def _fingerprint(self) -> str:
        import hashlib
        import json

        key = {"shards": self.shards, "teacher": self.teacher.name, "spec": self.spec.to_dict(),
               "vocab": len(self.vocab), "words": None if self.words is None else len(self.words)}
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()

    def ase(self) -> dict:
        if self._state is None:
            self._state = self._compute()
        return self._state

    def _compute(self) -> dict:
        import time

        from staticvec.files import atomic_path
        from staticvec.teacher.features import iter_parts

        n_layers = self.teacher.n_layers + 1
        counts = np.zeros(len(self.vocab), dtype=np.int64)
        sums = np.zeros((n_layers, len(self.vocab), self.teacher.hidden_size), dtype=np.float32)
        start, sentences = 0, 0
        fingerprint = self._fingerprint()
        if self.checkpoint is not None and self.checkpoint.exists():
            with np.load(self.checkpoint, allow_pickle=False) as saved:
                if str(saved["fingerprint"]) == fingerprint:
                    start, sentences = int(saved["next_shard"]), int(saved["sentences"])
                    counts[:], sums[:] = saved["counts"], saved["sums"]
                    log.info("ASE: resuming at shard %d of %d", start, len(self.shards))
                else:
                    log.warning("%s: written for other settings; starting again", self.checkpoint)
        last = time.time()
        for index in range(start, len(self.shards)):
            extractor = FeatureExtractor(self.teacher, self.spec, self.vocab, self.batch_tokens, self.words)
            for part in iter_parts(self.shards[index], "sentence", self.part_sentences):
                extractor.extract(part)
                sentences += len(part.sentences)
            state = extractor.ase_state()
            counts[state["word_ids"]] += state["counts"]
            sums[:, state["word_ids"]] += state["sums"]
            log.info("ASE: shard %d of %d (%s) added, %d words met so far", index + 1, len(self.shards),
                     self.shards[index], int((counts > 0).sum()))
            if self.checkpoint is not None and index + 1 < len(self.shards) and time.time() - last >= self.checkpoint_every:
                with atomic_path(self.checkpoint) as tmp, open(tmp, "wb") as fh:
                    np.savez(fh, fingerprint=fingerprint, next_shard=index + 1, sentences=sentences, counts=counts, sums=sums)
                last = time.time()
        self.meta["sentences"] = sentences
        listed = np.arange(len(self.vocab)) if self.words is None else self.words
        return {"word_ids": np.arange(len(self.vocab)), "counts": counts, "sums": sums,
                "layers": np.arange(n_layers), "word_list": listed}

    def close(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint.unlink(missing_ok=True)


def ase_state(stores, n_words: int) -> dict:
    """Occurrence counts per vocabulary id over several shards' features (or one :class:`RecomputedAse`),
    the words listed for ASE (every one unless the pass was given a list), the hidden-state layers, and
    each source's own state (``shards``: its word ids and memory-mapped sums, which stay on disk)."""
    counts = np.zeros(n_words, dtype=np.int64)
    listed, layers, shards = None, None, []
    for store in stores:
        state = store.ase()
        shards.append(state)
        ids = state["word_ids"]
        if len(ids) and ids.max() >= n_words:
            raise InputFileError(store.dir / "ase.npz", f"word id {ids.max()} beyond the vocabulary ({n_words} words)")
        counts[ids] += state["counts"]
        if layers is None:
            listed, layers = state["word_list"], state["layers"]
        elif not (np.array_equal(state["word_list"], listed) and np.array_equal(state["layers"], layers)):
            raise InputFileError(store.dir / "ase.npz", "ASE word list or layers differ from the first shard's")
    if layers is None:
        raise ValueError("no feature stores given")
    return {"counts": counts, "word_list": listed, "layers": layers, "shards": shards}


def ase_embeddings(stores, vocab, layers: Sequence[int] | None = None, fallback=None,
                   extra_words: Sequence[str] = (), block_words: int = 65536) -> Iterator[tuple[int, Embeddings]]:
    """(layer, embeddings) of occurrence-averaged vectors over the given shards' features, one layer at
    a time (memory: one layer's table plus ``block_words`` rows of fp64 sums).

    Rows: every listed vocabulary word met in the shards (its mean), in vocabulary order; then, when
    ``fallback`` is given (a callable: words -> :class:`WordAlone`), the listed words never met and the
    ``extra_words`` outside the vocabulary (the evaluation sets' words), from their word-alone vectors
    — computed only for those words. Words with neither are left out.
    """
    state = ase_state(stores, len(vocab))
    counts, all_layers = state["counts"], [int(x) for x in state["layers"]]
    chosen = all_layers if layers is None else [all_layers[x] if x < 0 else x for x in layers]
    listed = np.zeros(len(vocab), dtype=bool)
    listed[state["word_list"]] = True
    seen = counts > 0
    unseen = np.flatnonzero(listed & ~seen)
    extra = [w for w in dict.fromkeys(extra_words) if w not in vocab.index]
    back = None
    if fallback is not None and (len(unseen) or extra):
        back = fallback([vocab.words[i] for i in unseen] + extra)
        log.info("ASE: %d vocabulary word(s) never met and %d extra word(s) take their word-alone vectors",
                 sum(vocab.words[i] in back.index for i in unseen), sum(w in back.index for w in extra))
    has_back = np.zeros(len(vocab), dtype=bool)
    if back is not None:
        has_back[[i for i in unseen if vocab.words[i] in back.index]] = True
        extra = [w for w in extra if w in back.index]
    else:
        extra = []
    rows = np.flatnonzero(listed & (seen | has_back))
    position = np.full(len(vocab), -1, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    words = [vocab.words[i] for i in rows] + extra
    word_counts = [int(counts[i]) for i in rows] + [0] * len(extra)
    sums = state["shards"]
    width = sums[0]["sums"].shape[2]
    try:
        for layer in chosen:
            at = all_layers.index(layer)
            table = np.empty((len(words), width), dtype=np.float32)
            for a in range(0, len(vocab), block_words):
                b = min(len(vocab), a + block_words)
                acc = np.zeros((b - a, width), dtype=np.float64)
                for state_k in sums:
                    ids = state_k["word_ids"]
                    lo, hi = np.searchsorted(ids, [a, b])
                    acc[ids[lo:hi] - a] += state_k["sums"][at, lo:hi]
                met = a + np.flatnonzero(seen[a:b] & listed[a:b])
                table[position[met]] = acc[met - a] / counts[met][:, None]
            if back is not None:
                table_back = back.vectors(layer)
                for i in np.flatnonzero(has_back):
                    table[position[i]] = table_back[back.index[vocab.words[i]]]
                for j, w in enumerate(extra):
                    table[len(rows) + j] = table_back[back.index[w]]
            yield layer, Embeddings(words, table, word_counts)
    finally:
        if back is not None:
            back.close()


def ase_report(stores, vocab) -> dict:
    state = ase_state(stores, len(vocab))
    counts = state["counts"]
    return {
        "shards": len(stores),
        "sentences": int(sum(s.meta["sentences"] for s in stores)),
        "words": int(len(state["word_list"])),
        "words_seen": int((counts > 0).sum()),
        "occurrences": int(counts.sum()),
        "layers": int(len(state["layers"])),
    }
