"""SemEval-2012 relational similarity: hand-computed correlations, policies, web's string ranking."""

import numpy as np
import pytest
from scipy import stats

from staticvec.embeddings import Embeddings
from staticvec.evaluate.datasets import Relation, RelationalData
from staticvec.evaluate.lookup import VectorLookup
from staticvec.evaluate.relational import evaluate_relational, web_string_spearman


def lookup(oov="drop"):
    # x* words at the origin side, y* words on a circle: offsets x - y have known angles to the prototype
    words = {"p": [1, 0, 0], "q": [0, 0, 1], "a": [1, 0, 0], "b": [0, 1, 0], "c": [0, 0, 1]}
    return VectorLookup(Embeddings(list(words), np.array(list(words.values()), dtype=np.float32)), oov=oov)


def relation(rid, pairs, gold, prototypes=(("p", "q"),), split="test"):
    gold = np.asarray(gold, dtype=float)
    return Relation(rid, "BROAD", rid, split, list(prototypes), list(pairs), gold, [f"{g:.1f}" for g in gold])


def test_hand_computed_scores_and_mean_over_relations():
    # prototype offset p - q = (1, 0, -1). Pair offsets: a-q = (1,0,-1) cos 1; a-b = (1,-1,0) cos 0.5;
    # c-b = (0,-1,1) cos -0.5
    pairs = [("a", "q"), ("a", "b"), ("c", "b")]
    agree = relation("1a", pairs, [30, 20, 10])
    disagree = relation("1b", pairs, [10, 20, 30])
    result = evaluate_relational(lookup(), RelationalData([agree, disagree]))
    assert result["variants"]["cosine"] == pytest.approx(0.0)  # (1 + -1) / 2
    single = evaluate_relational(lookup(), RelationalData([agree]))
    assert single["score"] == pytest.approx(1.0) and single["variants"]["dot"] == pytest.approx(1.0)
    assert (single["found"], single["total"], single["relations_scored"]) == (3, 3, 1)


def test_cosine_and_dot_differ_when_offset_lengths_differ():
    # under the mean policy ("zzz" -> the mean vector, not unit length) a-b and zzz-q have the same dot
    # product with the prototype offset (1) but cosines 0.5 and 0.94, so the two scores rank differently
    lk = lookup(oov="mean")
    m = lk.mean.astype(float)
    p = np.array([1.0, 0, -1])
    offs = {"a-b": np.array([1.0, -1, 0]), "zzz-q": m - np.array([0, 0, 1.0])}
    cos = {k: v @ p / np.linalg.norm(v) / np.linalg.norm(p) for k, v in offs.items()}
    dot = {k: v @ p for k, v in offs.items()}
    rel = relation("1a", [("a", "b"), ("zzz", "q"), ("c", "b")], [3, 2, 1])
    result = evaluate_relational(lk, RelationalData([rel]))
    expected_cos = stats.spearmanr([cos["a-b"], cos["zzz-q"], -0.5], [3, 2, 1]).statistic
    expected_dot = stats.spearmanr([dot["a-b"], dot["zzz-q"], -1.0], [3, 2, 1]).statistic
    assert result["variants"]["cosine"] == pytest.approx(expected_cos)
    assert result["variants"]["dot"] == pytest.approx(expected_dot)
    assert expected_cos == pytest.approx(0.5) and expected_dot == pytest.approx(np.sqrt(3) / 2)
    assert result["found"] == 2 and result["scored"] == 3


def test_drop_policy_skips_pairs_prototypes_and_relations():
    pairs = [("a", "q"), ("a", "b"), ("b", "zzz"), ("c", "b")]
    rel = relation("1a", pairs, [40, 30, 20, 10], prototypes=[("p", "q"), ("p", "nope")])
    hopeless = relation("1b", [("a", "b"), ("c", "b")], [1, 2], prototypes=[("nope", "q")])
    result = evaluate_relational(lookup(), RelationalData([rel, hopeless]))
    assert result["relations_scored"] == 1 and result["relations"] == 2
    assert (result["found"], result["total"], result["scored"]) == (5, 6, 3)
    assert result["score"] == pytest.approx(1.0)


def test_split_selection():
    data = RelationalData([relation("1a", [("a", "q"), ("a", "b")], [2, 1], split="train"),
                           relation("1b", [("a", "q"), ("a", "b")], [1, 2])])
    assert evaluate_relational(lookup(), data, split="train")["score"] == pytest.approx(1.0)
    assert evaluate_relational(lookup(), data, split="test")["score"] == pytest.approx(-1.0)


def test_web_string_ranking_is_what_scipy_does_with_string_ratings():
    # web passes the ratings as strings: scipy ranks both columns lexicographically
    scores = np.array([0.1, -0.2, 0.3, 0.05, -0.03], dtype=np.float32)
    gold = ["10.0", "-2.0", "9.0", "-30.0", "-4.0"]
    assert web_string_spearman(scores, gold) == pytest.approx(stats.spearmanr(scores, gold).statistic)
    numeric = stats.spearmanr(scores, [float(g) for g in gold]).statistic
    # lexicographic: "-0.03" < "-0.2" < "0.05" < "0.1" < "0.3" gives ranks (4, 2, 5, 3, 1);
    # "-2.0" < "-30.0" < "-4.0" < "10.0" < "9.0" gives (4, 1, 5, 2, 3): rho = 1 - 6*6/120 = 0.7,
    # where the numeric ranks (4, 1, 5, 3, 2) and (5, 3, 4, 1, 2) give 1 - 6*10/120 = 0.5
    assert web_string_spearman(scores, gold) == pytest.approx(0.7)
    assert numeric == pytest.approx(0.5)


def test_official_variant_averages_per_paradigm_cosines_by_hand():
    """official: each pair's score is the mean of its cosines with every paradigm offset x_k - y_k, not
    the cosine with the averaged offset (the ``cosine`` variant); both by explicit loops here."""
    rng = np.random.default_rng(0)  # a draw on which the two scores rank the pairs differently
    words = [f"w{i}" for i in range(10)]
    vectors = rng.standard_normal((10, 5)).astype(np.float32)
    lk = VectorLookup(Embeddings(words, vectors))
    unit = {w: v / np.linalg.norm(v) for w, v in zip(words, vectors.astype(np.float64))}
    paradigms = [("w0", "w1"), ("w2", "w3")]
    pairs = [("w4", "w5"), ("w6", "w7"), ("w8", "w9"), ("w5", "w6"), ("w7", "w8"), ("w9", "w4")]
    gold = [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    rel = relation("1a", pairs, gold, prototypes=paradigms)
    result = evaluate_relational(lk, RelationalData([rel]), score="official")

    def cos(u, v):
        return u @ v / np.linalg.norm(u) / np.linalg.norm(v)

    official = [np.mean([cos(unit[x] - unit[y], unit[a] - unit[b]) for a, b in paradigms]) for x, y in pairs]
    prototype = np.mean([unit[a] for a, _ in paradigms], 0) - np.mean([unit[b] for _, b in paradigms], 0)
    averaged = [cos(unit[x] - unit[y], prototype) for x, y in pairs]
    assert result["variants"]["official"] == pytest.approx(stats.spearmanr(official, gold).statistic)
    assert result["variants"]["cosine"] == pytest.approx(stats.spearmanr(averaged, gold).statistic)
    assert result["score"] == result["variants"]["official"] and result["score_function"] == "official"
    assert abs(result["variants"]["official"] - result["variants"]["cosine"]) > 0.05  # two different scores


def test_score_may_name_any_variant_and_context_to_vec_reads_web():
    import yaml

    pairs = [("a", "q"), ("a", "b"), ("c", "b")]
    rel = relation("1a", pairs, [30, 20, 10])
    for name in ("cosine", "dot", "web", "official"):
        result = evaluate_relational(lookup(), RelationalData([rel]), score=name)
        assert result["score"] == result["variants"][name] and result["score_function"] == name
    with open("config/tables.yaml", encoding="utf-8") as fh:
        sheet = yaml.safe_load(fh)["tables"]
    assert sheet["c2v_table1"]["columns"]["semeval2012"] == "semeval2012.variants.web"  # the paper's numbers: web
    assert sheet["wang_table2"]["columns"]["semeval2012"] == "semeval2012"  # the score: Eq. 17's cosine
