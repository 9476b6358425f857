"""In-memory teacher-feature blocks for the trainer tests: random or with planted topic structure."""

from __future__ import annotations

import numpy as np


class MemoryBlocks:
    """The source interface of staticvec.train.teacher_blocks over a list of blocks (one shard).

    ``fail_after``: raise after yielding that many blocks (a simulated interruption).
    """

    def __init__(self, blocks, fail_after: int | None = None):
        self.list = blocks
        self.fail_after = fail_after

    def blocks(self, start=(0, 0)):
        yielded = 0
        for i, block in enumerate(self.list):
            if (0, i) < tuple(start):
                continue
            if self.fail_after is not None and yielded >= self.fail_after:
                raise KeyboardInterrupt("simulated interruption")
            yielded += 1
            yield (0, i), {k: v.copy() for k, v in block.items()}

    @staticmethod
    def next_position(position):
        return (position[0], position[1] + 1)

    def word_ids(self):
        for block in self.list:
            yield block["word_ids"]


def random_block(rng, n_sent=40, vocab=30, dim=8, oov=True, min_len=4, max_len=12):
    lens = rng.integers(min_len, max_len + 1, n_sent)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n = int(offsets[-1])
    ids = rng.integers(-1 if oov else 0, vocab, n)
    pieces = rng.integers(1, 3, n).astype(np.int16)
    return {"sentence_offsets": offsets, "word_ids": ids, "word_pieces": pieces,
            "word_vectors": rng.standard_normal((n, dim)).astype(np.float32),
            "sentence_vectors": rng.standard_normal((n_sent, dim)).astype(np.float32)}


def topic_blocks(rng, n_blocks=3, n_sent=120, vocab=40, topics=4, dim=16, noise=0.3):
    """Sentences about one topic each: words w with w % topics == topic; teacher vectors = topic
    direction + a word-specific part + noise. Trained tables should group words by topic.
    Returns the blocks and the topic directions."""
    directions = rng.standard_normal((topics, dim)) * 2
    word_part = rng.standard_normal((vocab, dim)) * 0.5
    blocks = []
    for _ in range(n_blocks):
        lens = rng.integers(6, 12, n_sent)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        sent_topic = rng.integers(0, topics, n_sent)
        ids = np.concatenate([rng.integers(0, vocab // topics, n) * topics + t for n, t in zip(lens, sent_topic)])
        topic_of_word = np.repeat(sent_topic, lens)
        vecs = directions[topic_of_word] + word_part[ids] + noise * rng.standard_normal((len(ids), dim))
        blocks.append({"sentence_offsets": offsets, "word_ids": ids.astype(np.int64),
                       "word_pieces": np.ones(len(ids), np.int16), "word_vectors": vecs.astype(np.float32),
                       "sentence_vectors": np.stack([vecs[a:b].mean(0) for a, b in zip(offsets[:-1], offsets[1:])]).astype(np.float32)})
    return blocks, directions


def topic_accuracy(table: np.ndarray, directions: np.ndarray) -> float:
    """Share of words whose row is closest (cosine) to their own topic's direction."""
    unit = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)
    nearest = np.argmax(unit @ directions.T, axis=1)
    return float((nearest == np.arange(len(table)) % len(directions)).mean())


def topic_separation(table: np.ndarray, topics: int) -> float:
    """Mean cosine of same-topic word pairs minus that of different-topic pairs."""
    unit = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)
    cos = unit @ unit.T
    topic = np.arange(len(table)) % topics
    same = topic[:, None] == topic[None, :]
    off = ~np.eye(len(table), dtype=bool)
    return float(cos[same & off].mean() - cos[~same].mean())
