"""SemEval-2012 Task 2 relational similarity, scored as the papers and the ``web`` benchmarks do.

Protocol (one number per embedding):

1. For each of the 79 relations (``split="all"``: the 10 training and 69 test relations, as
   ``web``'s ``evaluate_on_semeval_2012_2`` uses; ``"test"`` gives the 69 of the official test),
   the *prototype offset* is ``p = mean_k(x_k) - mean_k(y_k)`` over the paradigm pairs
   ``x_k:y_k`` of the relation (3 for 72 relations, 4 or 5 for seven; unit vectors), and each
   rated pair ``x:y`` has the offset ``q = x - y``.
2. The pair's score is ``cos(p, q)`` (``score="cosine"``, Wang et al.'s Eq. 17,
   cos(y − x, y* − x*), with the paradigms averaged as ``web`` does), or the plain dot
   product ``p · q`` (``score="dot"``, what ``web`` computes), or the mean over the paradigm
   pairs of ``cos(x_k − y_k, q)`` (``score="official"``: the SemEval-2012 package's way of
   comparing a pair with the relation's paradigms, one cosine per paradigm pair, averaged).
3. Spearman's rho between the scores and the gold ratings of the relation; an undefined rho
   (constant scores) counts as 0, as in ``web``.
4. The result is the mean of rho over the relations (``web``'s ``all``). Means per broad category
   (CLASS-INCLUSION, PART-WHOLE, …) are reported too.

OOV: under ``mean`` a missing word is the mean vector (``web``). Under ``drop`` rated pairs with a
missing word are left out, paradigm pairs with a missing word are left out of the prototype, and a
relation with no paradigm pair or fewer than two rated pairs left is not scored (``relations_scored``
says how many were).

Released-code quirk (``variants["web"]``): ``web`` passes the gold ratings to
``scipy.stats.spearmanr`` as the *strings* read from its files; ``spearmanr`` then stacks them with
the float scores into one string array and ranks both columns *lexicographically* ("-10.0" <
"-2.0" < "10.0" < "9.0"). The numbers the papers report through ``web`` (Context-to-Vec, SynGCN,
and the baseline rows Wang et al. copy from SynGCN) are therefore correlations of string ranks.
``variants["web"]`` reproduces that computation (dot scores, numpy's float → string conversion,
gold strings as printed in the gold-rating files; ``web``'s own copies of the files may print
the ratings differently, which we could not check). The default score is the correct numeric
Spearman; every variant is in the result so a table can pick the one its paper used
(``config/tables.yaml``: Context-to-Vec's Table 1 reads ``variants.web``, as its numbers come from
``web``; Wang et al.'s Table 2 reads the cosine of their Eq. 17; ``score`` may name any of the four).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from staticvec.evaluate.datasets import RelationalData
from staticvec.evaluate.lookup import VectorLookup
from staticvec.evaluate.similarity import rankdata, spearman

SCORES = ("cosine", "dot", "web", "official")
SPLITS = ("all", "train", "test")


def web_string_spearman(scores: np.ndarray, gold_text: list[str]) -> float:
    """Spearman's rho as ``web`` gets it: both columns ranked as strings (see module doc)."""
    table = np.column_stack((np.asarray(scores), np.asarray(gold_text)))  # numpy turns floats into strings
    ranks = [rankdata(table[:, j]) for j in range(2)]  # = scipy.stats.rankdata (tested), without its import
    with np.errstate(invalid="ignore", divide="ignore"):  # constant ranks: undefined, counted as 0
        rho = np.corrcoef(ranks[0], ranks[1])[0, 1]
    return 0.0 if np.isnan(rho) else float(rho)


def evaluate_relational(lookup: VectorLookup, data: RelationalData, score: str = "cosine", split: str = "all") -> dict:
    if score not in SCORES:
        raise ValueError(f"unknown relational score {score!r}; known: {', '.join(SCORES)}")
    if split not in SPLITS:
        raise ValueError(f"unknown SemEval-2012 split {split!r}; known: {', '.join(SPLITS)}")
    relations = [r for r in data.relations if split == "all" or r.split == split]
    rhos: dict[str, list[float]] = {"cosine": [], "dot": [], "web": [], "official": []}
    broad: dict[str, list[float]] = defaultdict(list)
    found = scored = total = 0
    for rel in relations:
        total += len(rel.pairs)
        px, py = (lookup.indices([p[k] for p in rel.prototypes]) for k in (0, 1))
        qx, qy = (lookup.indices([p[k] for p in rel.pairs]) for k in (0, 1))
        pair_found = (qx >= 0) & (qy >= 0)
        found += int(pair_found.sum())
        if lookup.oov == "drop":
            proto_keep, pair_keep = (px >= 0) & (py >= 0), pair_found
            if not proto_keep.any() or pair_keep.sum() < 2:
                continue
        else:
            proto_keep, pair_keep = np.ones(len(px), bool), np.ones(len(qx), bool)
        scored += int(pair_keep.sum())
        proto_x = lookup.rows(px[proto_keep]).astype(np.float64)
        proto_y = lookup.rows(py[proto_keep]).astype(np.float64)
        prototype = proto_x.mean(axis=0) - proto_y.mean(axis=0)
        offsets = lookup.rows(qx[pair_keep]).astype(np.float64) - lookup.rows(qy[pair_keep]).astype(np.float64)
        dots = offsets @ prototype
        norms = np.linalg.norm(offsets, axis=1) * np.linalg.norm(prototype)
        cosines = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        paradigms = proto_x - proto_y  # one offset per paradigm pair
        pair_dots = offsets @ paradigms.T
        pair_norms = np.linalg.norm(offsets, axis=1)[:, None] * np.linalg.norm(paradigms, axis=1)[None, :]
        official = np.divide(pair_dots, pair_norms, out=np.zeros_like(pair_dots), where=pair_norms > 0).mean(axis=1)
        gold = rel.gold[pair_keep]
        rho = {"cosine": spearman(cosines, gold) or 0.0, "dot": spearman(dots, gold) or 0.0,
               "official": spearman(official, gold) or 0.0}
        # web computes in float32 and stringifies float32 scores
        rho["web"] = web_string_spearman(dots.astype(np.float32), [t for t, k in zip(rel.gold_text, pair_keep) if k])
        for key, value in rho.items():
            rhos[key].append(value)
        broad[rel.broad].append(rho[score])
    variants = {key: (float(np.mean(v)) if v else None) for key, v in rhos.items()}
    return {
        "task": "relational",
        "metric": "spearman",
        "score": variants[score],
        "score_function": score,
        "split": split,
        "found": found,
        "total": total,
        "scored": scored,
        "relations": len(relations),
        "relations_scored": len(rhos[score]),
        "variants": variants,
        "broad": {name: float(np.mean(v)) for name, v in broad.items()},
    }
