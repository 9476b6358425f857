"""Chunk-level precision, recall and F1 as the CoNLL ``conlleval`` script defines them, and token accuracy.

A chunk is a maximal run (type, first token, last token) read from IOB1/IOB2/IOBES tags the
way conlleval reads them: a chunk starts at B- or S-, at an I-/E- that follows O or a
chunk of another type, and ends before O, B-, S-, or a tag of another type. So an I- after O
starts a chunk, and a type change inside a run splits it. A predicted chunk counts as correct
only if its type and both boundaries match a gold chunk. Chunks never cross sentences.

The boundary rules below are conlleval's ``startOfChunk`` / ``endOfChunk`` (as seqeval's
default mode also implements them; tests/test_tagging_chunk_f1.py checks the two agree).
They are written out here rather than imported because seqeval pulls in scikit-learn, which
costs seconds at every start. Scores are micro-averaged over all chunk types, as
conlleval's "overall" line.
"""

from __future__ import annotations

import functools
from typing import Sequence


def _split(tag: str) -> tuple[str, str]:
    """'B-NP' → ('B', 'NP'); 'O' → ('O', '')."""
    prefix, _, kind = tag.partition("-")
    return prefix, kind


def _ends(prev: str, prev_type: str, tag: str, kind: str) -> bool:
    """conlleval's endOfChunk: a chunk ended at the previous token."""
    if prev in ("E", "S"):
        return True
    if prev in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev not in ("O", ".") and prev_type != kind


def _starts(prev: str, prev_type: str, tag: str, kind: str) -> bool:
    """conlleval's startOfChunk: a chunk starts at this token."""
    if tag in ("B", "S"):
        return True
    if tag in ("I", "E") and prev in ("E", "S", "O"):
        return True
    return tag not in ("O", ".") and prev_type != kind


def chunks(tags: Sequence[str]) -> frozenset[tuple[str, int, int]]:
    """The set of (type, start, end) chunks of one sentence's tags (end inclusive).

    Memoised per tag sequence: a tagger scores the same gold sentences after every epoch, and
    many of its predictions repeat from one epoch to the next."""
    return _chunks(tuple(tags))


@functools.lru_cache(maxsize=1 << 16)
def _chunks(tags: tuple[str, ...]) -> frozenset[tuple[str, int, int]]:
    found = set()
    prev, prev_type, begin = "O", "", 0
    for i, tag in enumerate([*tags, "O"]):  # the final O closes a chunk open at the end
        cur, kind = _split(tag)
        if _ends(prev, prev_type, cur, kind):
            found.add((prev_type, begin, i - 1))
        if _starts(prev, prev_type, cur, kind):
            begin = i
        prev, prev_type = cur, kind
    return frozenset(found)


def chunk_scores(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict:
    """conlleval's overall precision, recall and F1 (as fractions in [0, 1]) over sentences."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    n_gold = n_pred = n_correct = 0
    for i, (g, p) in enumerate(zip(gold, predicted)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold tags but {len(p)} predicted")
        gold_chunks, pred_chunks = chunks(g), chunks(p)
        n_gold += len(gold_chunks)
        n_pred += len(pred_chunks)
        n_correct += len(gold_chunks & pred_chunks)
    precision = n_correct / n_pred if n_pred else 0.0
    recall = n_correct / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall, "gold_chunks": n_gold, "predicted_chunks": n_pred,
            "correct_chunks": n_correct}


def token_accuracy(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict:
    """The fraction of tokens whose tag is right (POS tagging's measure)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    total = correct = 0
    for i, (g, p) in enumerate(zip(gold, predicted)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold tags but {len(p)} predicted")
        total += len(g)
        correct += sum(a == b for a, b in zip(g, p))
    return {"accuracy": correct / total if total else 0.0, "tokens": total, "correct_tokens": correct}


def score(metric: str, gold, predicted) -> dict:
    """``{"score": ..., ...details}`` for metric 'f1' (chunks) or 'accuracy' (tokens)."""
    if metric == "f1":
        result = chunk_scores(gold, predicted)
        return {"score": result["f1"], **result}
    if metric == "accuracy":
        result = token_accuracy(gold, predicted)
        return {"score": result["accuracy"], **result}
    raise ValueError(f"unknown metric {metric!r}")
