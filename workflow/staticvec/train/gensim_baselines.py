"""The classic baselines through gensim: Skip-gram, CBOW (Mikolov et al. 2013) and fastText
(Bojanowski et al. 2017), on the project's sentences and vocabulary.

Every method of the project shares one vocabulary: gensim's vocabulary is built from our
counts file (``build_vocab_from_freq`` with ``min_count=1``, so gensim trims nothing more),
and the output rows follow our vocabulary's order. Out-of-vocabulary tokens are dropped
from a sentence before its windows are formed (gensim's behaviour, and GloVe's).

Defaults are the papers' settings (300-d, window 5, 5 negatives, subsampling 1e-4, 5
epochs); the learning rate follows the reference tools: word2vec.c starts Skip-gram at
0.025 and CBOW at 0.05, fastText's Skip-gram at 0.05.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import numpy as np

from staticvec.errors import StaticvecError
from staticvec.files import TIMING_KEY

log = logging.getLogger(__name__)

DEFAULT_ALPHA = {"skipgram": 0.025, "cbow": 0.05}


@dataclass
class Word2VecConfig:
    arch: str = "skipgram"  # skipgram | cbow
    dim: int = 300
    window: int = 5
    negative: int = 5
    sample: float = 1e-4
    epochs: int = 5
    alpha: float | None = None  # None: 0.025 for Skip-gram, 0.05 for CBOW (word2vec.c)
    min_alpha: float = 1e-4
    ns_exponent: float = 0.75
    cbow_mean: bool = True
    seed: int = 1
    workers: int = 1
    deterministic: bool = True  # same seed, same vectors: one worker whatever `workers` (several race)
    vectors: str = "input"  # input: the word vectors; context: the output vectors of negative sampling (syn1neg)


@dataclass
class FastTextConfig(Word2VecConfig):
    alpha: float | None = 0.05  # fastText's Skip-gram default
    min_n: int = 3
    max_n: int = 6
    bucket: int = 2_000_000


class SentenceCorpus:
    """A restartable iterable of token lists over corpus shards and/or plain text files
    (one sentence per line, whitespace-separated tokens)."""

    def __init__(self, shards: Sequence[str | os.PathLike] = (), texts: Sequence[str | os.PathLike] = ()):
        self.shards = list(shards)
        self.texts = list(texts)
        if not self.shards and not self.texts:
            raise StaticvecError("no training sentences: give corpus shards or text files")

    def __iter__(self) -> Iterator[list[str]]:
        from staticvec.corpus.shards import iter_sentences
        from staticvec.files import open_any

        if self.shards:
            yield from iter_sentences(self.shards)
        for path in self.texts:
            with open_any(path, "rt") as fh:
                for line in fh:
                    yield line.split()

    def count(self) -> tuple[int, int]:
        """(sentences, tokens): gensim needs them for its learning-rate schedule."""
        n_sentences = n_tokens = 0
        for tokens in self:
            n_sentences += 1
            n_tokens += len(tokens)
        return n_sentences, n_tokens


def _common_kwargs(cfg: Word2VecConfig) -> dict:
    if cfg.arch not in DEFAULT_ALPHA:
        raise StaticvecError(f"unknown architecture {cfg.arch!r}; use 'skipgram' or 'cbow'")
    return dict(
        vector_size=cfg.dim,
        window=cfg.window,
        negative=cfg.negative,
        hs=0,
        sample=cfg.sample,
        sg=1 if cfg.arch == "skipgram" else 0,
        cbow_mean=1 if cfg.cbow_mean else 0,
        alpha=cfg.alpha if cfg.alpha is not None else DEFAULT_ALPHA[cfg.arch],
        min_alpha=cfg.min_alpha,
        ns_exponent=cfg.ns_exponent,
        seed=cfg.seed,
        workers=1 if cfg.deterministic else cfg.workers,
        min_count=1,  # our vocabulary is already trimmed; gensim must keep all of it
    )


def _train(model, corpus: SentenceCorpus, vocab, epochs: int):
    n_sentences, n_tokens = corpus.count()
    if n_sentences == 0:
        raise StaticvecError("the training corpus holds no sentences")
    model.build_vocab_from_freq(dict(zip(vocab.words, vocab.counts)), corpus_count=n_sentences)
    if len(model.wv) != len(vocab):
        raise AssertionError(f"gensim kept {len(model.wv)} of {len(vocab)} vocabulary words")
    started = time.time()
    model.train(corpus, total_examples=n_sentences, total_words=n_tokens, epochs=epochs)
    return {"n_sentences": n_sentences, "n_tokens": n_tokens, TIMING_KEY: {"seconds": round(time.time() - started, 2)}}


def _embeddings(kv, vocab):
    from staticvec.embeddings import Embeddings

    rows = [kv.key_to_index[w] for w in vocab.words]
    return Embeddings(vocab.words, np.asarray(kv.vectors[rows], dtype=np.float32), vocab.counts)


def train_word2vec(corpus: SentenceCorpus | Iterable, vocab, cfg: Word2VecConfig):
    """Skip-gram or CBOW with negative sampling. Returns (Embeddings, record dict)."""
    from gensim.models import Word2Vec

    if cfg.vectors not in ("input", "context"):
        raise StaticvecError(f"vectors {cfg.vectors!r}: expected input or context")
    if cfg.vectors == "context" and cfg.negative < 1:
        raise StaticvecError("context vectors are negative sampling's output table: needs negative >= 1")
    model = Word2Vec(**_common_kwargs(cfg))
    record = _train(model, corpus, vocab, cfg.epochs)
    if cfg.vectors == "context":  # Context-to-Vec's Skip-gram(context): the output table, rows as the input's
        rows = [model.wv.key_to_index[w] for w in vocab.words]
        from staticvec.embeddings import Embeddings

        emb = Embeddings(vocab.words, np.asarray(model.syn1neg[rows], dtype=np.float32), vocab.counts)
        return emb, {"hyperparameters": dataclasses.asdict(cfg), **record}
    return _embeddings(model.wv, vocab), {"hyperparameters": dataclasses.asdict(cfg), **record}


def train_fasttext(corpus: SentenceCorpus | Iterable, vocab, cfg: FastTextConfig):
    """fastText (subword n-grams), Skip-gram by default. Returns (Embeddings, record dict)."""
    from gensim.models import FastText

    model = FastText(**_common_kwargs(cfg), min_n=cfg.min_n, max_n=cfg.max_n, bucket=cfg.bucket)
    record = _train(model, corpus, vocab, cfg.epochs)
    return _embeddings(model.wv, vocab), {"hyperparameters": dataclasses.asdict(cfg), **record}
