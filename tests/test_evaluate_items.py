"""Per-item records of the intrinsic results and scores on a subset of the items (the claims' common
ground), on hand-computed cases: Spearman and accuracy on a subset, the stored score kept on the full
set, and the full-coverage scores unchanged by the record."""

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.evaluate.intrinsic import evaluate
from staticvec.evaluate.items import NotRescorable, covered_items, recompute, score_on, scored_items

from test_evaluate_intrinsic import royal_embedding, small_data_dir


def _similarity(gold, cosine, score):
    return {"task": "similarity", "score": score, "total": len(gold), "scored": sum(c is not None for c in cosine),
            "items": {"gold": gold, "cosine": cosine}}


def test_spearman_on_a_subset_by_hand():
    # pairs 0..3, gold 1 2 3 4; cosines 0.1 0.3 0.2 and pair 3 left out (an OOV word under `drop`)
    entry = _similarity([1.0, 2.0, 3.0, 4.0], [0.1, 0.3, 0.2, None], score=0.123)
    assert scored_items(entry) == {0, 1, 2}
    # on the pairs it scored: the stored score, as stored (not a recomputation)
    assert score_on(entry, {0, 1, 2}) == 0.123
    # pairs 0, 1 only: gold ranks 1 2, cosine ranks 1 2 -> rho 1
    assert score_on(entry, {0, 1}) == pytest.approx(1.0)
    # pairs 1, 2: gold 2 < 3 but cosine 0.3 > 0.2 -> rho −1
    assert score_on(entry, {1, 2}) == pytest.approx(-1.0)
    # a pair it did not score cannot be asked for
    with pytest.raises(NotRescorable, match="did not score every item"):
        score_on(entry, {0, 3})
    # four pairs 0 1 2 4 of five, gold 1..5, cosines 0.4 0.1 0.3 (0.9) 0.2: rank differences 3, −1, 0, −2 ->
    # rho = 1 − 6 · (9 + 1 + 0 + 4) / (4 · 15) = −0.4
    entry = _similarity([1.0, 2.0, 3.0, 4.0, 5.0], [0.4, 0.1, 0.3, 0.9, 0.2], score=None)
    assert score_on(entry, {0, 1, 2, 4}) == pytest.approx(-0.4)


def test_accuracy_on_a_subset_by_hand():
    entry = {"task": "analogy", "score": 2 / 3, "total": 4, "scored": 3, "items": {"correct": "10-1"}}
    assert scored_items(entry) == {0, 1, 3}
    assert score_on(entry, {0, 1}) == 0.5 and score_on(entry, {3}) == 1.0 and score_on(entry, {0, 1, 3}) == 2 / 3


def test_results_without_a_record_or_without_a_decomposition():
    # every item scored (web's mean vector): the full set is known without a record
    relational = {"task": "relational", "score": 0.2, "total": 10, "scored": 10}
    assert scored_items(relational) == frozenset(range(10)) and score_on(relational, range(10)) == 0.2
    with pytest.raises(NotRescorable, match="relational score cannot be recomputed"):
        score_on(relational, {1, 2})
    # some left out and no record: which ones is unknown
    old = {"task": "similarity", "score": 0.5, "total": 10, "scored": 8}
    assert scored_items(old) is None
    with pytest.raises(NotRescorable, match="no per-item record"):
        score_on(old, {1, 2})


def test_the_harness_keeps_the_items_and_the_scores_do_not_change(tmp_path):
    data = small_data_dir(tmp_path / "eval")
    emb = royal_embedding()
    with_items = evaluate(emb, ["ws353", "google"], data, oov="drop", device="cpu")
    without = evaluate(emb, ["ws353", "google"], data, oov="drop", device="cpu", items=False)
    for name in ("ws353", "google"):
        a, b = with_items["results"][name], without["results"][name]
        assert "items" in a and "items" not in b
        assert {k: v for k, v in a.items() if k not in ("items", "timing")} == \
            {k: v for k, v in b.items() if k != "timing"}
    ws = with_items["results"]["ws353"]
    # king-queen 8, man-king 9, king-apple 1, King-Missing 5 (dropped): cosines 1/2, 1/√2, 0
    assert ws["items"]["gold"] == [8.0, 9.0, 1.0, 5.0]
    assert ws["items"]["cosine"][:3] == pytest.approx([0.5, 1 / np.sqrt(2), 0.0]) and ws["items"]["cosine"][3] is None
    assert scored_items(ws) == {0, 1, 2} and score_on(ws, {0, 1, 2}) == ws["score"]
    # recomputed on the full scored set from the record: the same number as the harness's
    assert recompute(ws, {0, 1, 2}) == ws["score"]
    # google: man king woman queen (right), man king woman princess (princess OOV: left out)
    assert with_items["results"]["google"]["items"] == {"correct": "1-", "found": "10"}
    assert ws["items"]["found"] == "1110" and covered_items(ws) == {0, 1, 2}
    # under `mean` every pair is scored, and the record says which ones had an OOV word (the claims leave it out)
    web = evaluate(emb, ["ws353"], data, oov="mean", device="cpu")["results"]["ws353"]
    assert None not in web["items"]["cosine"] and scored_items(web) == {0, 1, 2, 3}
    assert web["items"]["found"] == "1110" and covered_items(web) == {0, 1, 2}
    analogy = evaluate(emb, ["google"], data, oov="mean", device="cpu")["results"]["google"]
    assert analogy["items"]["found"] == "10" and covered_items(analogy) == {0}
    # a mean-vector result written before the flags, with OOV items: which ones is unknown
    del web["items"]["found"]
    assert covered_items(web) is None


def test_common_ground_of_two_vocabularies(tmp_path):
    """Two embeddings, one missing a word: each scored on the pairs both cover."""
    data = small_data_dir(tmp_path / "eval")
    full = royal_embedding()
    keep = [w for w in full.words if w != "apple"]
    partial = Embeddings(keep, np.stack([full.vectors[full.words.index(w)] for w in keep]))
    a = evaluate(full, ["ws353"], data, oov="drop", device="cpu")["results"]["ws353"]
    b = evaluate(partial, ["ws353"], data, oov="drop", device="cpu")["results"]["ws353"]
    common = scored_items(a) & scored_items(b)
    assert common == {0, 1}
    # pairs king-queen (8, cos 1/2) and man-king (9, cos 1/√2): same order -> 1 for both
    assert score_on(a, common) == pytest.approx(1.0) and score_on(b, common) == pytest.approx(1.0)
