"""A data set's score recomputed on a subset of its items, from the per-item record of an intrinsic
result (``staticvec evaluate intrinsic --items``, the default).

Under an OOV-dropping protocol (MUSE: the first 200,000 words, pairs with a missing word left out)
two embeddings with different vocabularies score different pairs of the same data set: X2Static at
min count 10 covers fewer RG-65 pairs than Skip-gram at min count 5, so their two Spearman
correlations are not measured on the same pairs. A fair comparison recomputes both on the items
both scored, the *common ground*:

- similarity: Spearman's rho between the gold scores and the cosines of the common pairs
  (:func:`staticvec.evaluate.similarity.spearman`, as the full score);
- analogy: the share of the common questions answered right.

:func:`scored_items` says which items a result scored; :func:`score_on` gives its score on a subset
of them. On exactly the items it scored, the score is the stored one (the same number, not a
recomputation). A task without a per-item decomposition (SemEval-2012's per-relation correlations,
categorization's clusterings) or a result written without ``items`` has a score on its full scored
set only (:class:`NotRescorable` otherwise); a result that scored every item of its data set needs
no record (under ``web``'s mean-vector policy every item is scored).
"""

from __future__ import annotations

import numpy as np

from staticvec.errors import StaticvecError


class NotRescorable(StaticvecError):
    """The score of a data set cannot be recomputed on the subset asked for."""


def scored_items(entry: dict) -> frozenset[int] | None:
    """Indices (data set order) of the items ``entry`` (one data set of an intrinsic result) scored;
    None when the result does not say (no per-item record and some items left out)."""
    record = entry.get("items")
    if record is not None and entry.get("task") == "similarity":
        return frozenset(i for i, c in enumerate(record["cosine"]) if c is not None)
    if record is not None and entry.get("task") == "analogy":
        return frozenset(i for i, c in enumerate(record["correct"]) if c != "-")
    total, scored = entry.get("total"), entry.get("scored")
    if total is not None and scored == total:
        return frozenset(range(total))
    return None


def score_on(entry: dict, items: frozenset[int] | set[int]) -> float | None:
    """The score of ``entry`` on ``items`` (indices it scored; see the module doc)."""
    items = frozenset(items)
    mine = scored_items(entry)
    if mine is not None and items == mine:
        return entry.get("score")
    if mine is None or not items <= mine:
        raise NotRescorable(f"{entry.get('task', 'this')} result did not score every item asked for"
                            + ("" if mine is not None else " (it keeps no per-item record)"))
    return recompute(entry, items)


def recompute(entry: dict, items) -> float | None:
    """The score of ``entry`` on ``items`` computed from its per-item record (on the full scored set:
    the harness's own number, bit for bit)."""
    record = entry.get("items")
    task = entry.get("task")
    if record is None or task not in ("similarity", "analogy"):
        raise NotRescorable(f"a {task} score cannot be recomputed on a subset of its items")
    chosen = sorted(items)
    if task == "similarity":
        from staticvec.evaluate.similarity import spearman

        gold = np.asarray(record["gold"], dtype=np.float64)[chosen]
        cosine = np.asarray([record["cosine"][i] for i in chosen], dtype=np.float64)
        return spearman(gold, cosine)
    if not chosen:
        return None
    return sum(record["correct"][i] == "1" for i in chosen) / len(chosen)


DECOMPOSABLE = ("similarity", "analogy")


def covered_items(entry: dict) -> frozenset[int] | None:
    """Indices of the items whose words are all in the vocabulary of the result ``entry`` (one data set of
    an intrinsic result), whatever its OOV policy; None when the result does not say (a task without a
    per-item record, or a mean-vector result written before ``items.found`` that has out-of-vocabulary
    items). Under a dropping policy the covered items are the scored ones."""
    record = entry.get("items")
    if record is not None and "found" in record:
        return frozenset(i for i, f in enumerate(record["found"]) if f == "1")
    total, found, scored = entry.get("total"), entry.get("found"), entry.get("scored")
    if total is not None and found == total:
        return frozenset(range(total))
    if entry.get("oov_policy", "drop") == "drop" and (found is None or found == scored):
        return scored_items(entry)  # dropping: what was scored is what was covered
    return None


def item_values(entry: dict, items) -> np.ndarray:
    """Per item of ``items`` (sorted indices), the run's number: a pair's cosine (similarity) or 1/0 for a
    question answered right or wrong (analogy)."""
    record = entry.get("items")
    chosen = sorted(items)
    if record is None or entry.get("task") not in DECOMPOSABLE:
        raise NotRescorable(f"a {entry.get('task')} result keeps no per-item values")
    if entry["task"] == "similarity":
        values = [record["cosine"][i] for i in chosen]
        if any(v is None for v in values):
            raise NotRescorable("a pair asked for was not scored")
        return np.asarray(values, dtype=np.float64)
    marks = [record["correct"][i] for i in chosen]
    if "-" in marks:
        raise NotRescorable("a question asked for was not scored")
    return np.asarray([m == "1" for m in marks], dtype=np.float64)


def gold_values(entry: dict, items) -> np.ndarray | None:
    """The human scores of the pairs ``items`` (similarity); None for an analogy."""
    record = entry.get("items") or {}
    if entry.get("task") != "similarity" or "gold" not in record:
        return None
    return np.asarray(record["gold"], dtype=np.float64)[sorted(items)]
