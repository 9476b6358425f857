"""Word similarity: hand-computed cases, the OOV policies, and equality with gensim."""

import logging
from pathlib import Path

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.evaluate.datasets import SimilarityData, parse_similarity
from staticvec.evaluate.lookup import VectorLookup
from staticvec.evaluate.similarity import evaluate_similarity

DATA = Path("../shared/data/eval/similarity")


def tiny():
    # cos(a, b) = 1, cos(a, c) = 0.6, cos(a, d) = 0, cos(b, c) = 0.6
    words = ["a", "b", "c", "d"]
    vectors = np.array([[1, 0], [2, 0], [3, 4], [0, 5]], dtype=np.float32)
    return Embeddings(words, vectors)


def test_hand_computed_spearman():
    # model cosines 1, 0.6, 0 for the pairs; gold 3, 1, 2 -> ranks (3,2,1) vs (3,1,2): rho = 1 - 6*2/(3*8) = 0.5
    data = SimilarityData([("a", "b"), ("a", "c"), ("a", "d")], np.array([3.0, 1.0, 2.0]))
    result = evaluate_similarity(VectorLookup(tiny()), data)
    assert result["score"] == pytest.approx(0.5)
    assert (result["found"], result["total"], result["scored"]) == (3, 3, 3)


def test_drop_and_mean_policies():
    emb = tiny()
    data = SimilarityData([("a", "b"), ("a", "c"), ("a", "zzz"), ("b", "d")], np.array([4.0, 3.0, 2.0, 1.0]))
    drop = evaluate_similarity(VectorLookup(emb, oov="drop"), data)
    # drop: pairs (a,b)=1, (a,c)=0.6, (b,d)=0 against gold 4, 3, 1: perfectly monotone
    assert drop["score"] == pytest.approx(1.0)
    assert (drop["found"], drop["total"], drop["scored"], drop["missing_words"]) == (3, 4, 3, 1)
    # mean: zzz gets the mean of the unit rows m = ((1+1+0.6+0)/4, (0+0+0.8+1)/4) = (0.65, 0.45)
    # cos(a, m) = 0.65 / |m| = 0.8222, which ranks it above (a, c) = 0.6: model ranks (4,2,3,1) vs gold (4,3,2,1)
    mean = evaluate_similarity(VectorLookup(emb, oov="mean"), data)
    assert mean["score"] == pytest.approx(1 - 6 * 2 / (4 * 15))
    assert (mean["found"], mean["total"], mean["scored"]) == (3, 4, 4)


def test_lowercase_uses_the_most_frequent_case_variant():
    emb = Embeddings(["Apple", "apple", "pear"], np.array([[1, 0], [0, 1], [1, 0.1]], dtype=np.float32))
    data = SimilarityData([("APPLE", "pear"), ("apple", "pear")], np.array([1.0, 2.0]))
    lookup = VectorLookup(emb, lowercase=True)
    assert lookup.indices(["apple"])[0] == 0  # the first row ("Apple") wins
    cased = VectorLookup(emb, lowercase=False)
    assert evaluate_similarity(cased, data)["found"] == 1  # "APPLE" is not in a cased vocabulary


def random_embedding(words, dim=16, seed=0):
    rng = np.random.default_rng(seed)
    return Embeddings(list(words), rng.standard_normal((len(words), dim)).astype(np.float32))


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/eval not available")
@pytest.mark.parametrize("name", ["EN-WS-353-ALL.txt", "EN-SIMLEX-999.txt", "EN-RW-STANFORD.txt", "EN-MEN-TR-3k.txt"])
def test_equals_gensim_evaluate_word_pairs(name, caplog):
    caplog.set_level(logging.WARNING)
    path = DATA / name
    data = parse_similarity(path)
    words = sorted({w for pair in data.pairs for w in pair})
    rng = np.random.default_rng(1)
    kept = [w for w in words if rng.random() > 0.1]  # ~10% of the words out of vocabulary
    # mixed case: a capitalised variant placed first must win over the lower-case row in both tools
    caps = [w.capitalize() for w in kept if w.islower() and w.capitalize() not in kept][:20]
    vocab = caps + kept + [f"filler{i}" for i in range(200)]
    emb = random_embedding(vocab)
    ours = evaluate_similarity(VectorLookup(emb, oov="drop", lowercase=True), data)
    kv = emb.to_gensim()
    _, spearman, oov_ratio = kv.evaluate_word_pairs(str(path), restrict_vocab=len(kv), case_insensitive=True)
    assert ours["score"] == pytest.approx(spearman.statistic, abs=1e-6)
    assert 100 * (ours["total"] - ours["found"]) / ours["total"] == pytest.approx(oov_ratio)
    assert ours["found"] < ours["total"]


def _scipy_spearman(x, y):
    import warnings

    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = stats.spearmanr(x, y).statistic
    return None if np.isnan(rho) else float(rho)


@pytest.mark.parametrize("seed", range(6))
def test_spearman_is_scipys_bit_for_bit(seed):
    """spearman() replaces scipy.stats.spearmanr (no scipy.stats import): same value to the last bit, ties included."""
    from staticvec.evaluate.similarity import spearman

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    gold = rng.integers(0, 10, n).astype(np.float64) if seed % 2 else rng.random(n) * 10  # heavy ties / none
    model = np.round(rng.standard_normal(n), 1 + seed % 3)  # ties in the model scores too
    assert spearman(gold, model) == _scipy_spearman(gold, model)


def test_spearman_undefined_cases_are_none():
    from staticvec.evaluate.similarity import spearman

    assert spearman([1.0], [2.0]) is None
    assert spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None  # constant side
    assert spearman([1.0, 2.0, 3.0], [4.0, 4.0, 4.0]) is None
    assert spearman([1.0, np.nan, 3.0], [1.0, 2.0, 3.0]) is None  # scipy: nan


def test_rankdata_is_scipys_on_numbers_and_strings():
    from scipy import stats

    from staticvec.evaluate.similarity import rankdata

    rng = np.random.default_rng(3)
    x = rng.integers(0, 7, 50).astype(np.float64)
    assert np.array_equal(rankdata(x), stats.rankdata(x))
    text = np.asarray(["10", "9", "-3.5", "9", "b", "10", "a"])  # web ranks SemEval ratings as strings
    assert np.array_equal(rankdata(text), stats.rankdata(text))
    # by hand: 9 < b; "-3.5" < "10" = "10" < "9" = "9" < "a" < "b"
    assert rankdata(text).tolist() == [2.5, 4.5, 1.0, 4.5, 7.0, 2.5, 6.0]
