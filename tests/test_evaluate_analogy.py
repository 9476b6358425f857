"""Analogy: hand-computed cases, brute force, OOV policies, and equality with gensim."""

import logging
from pathlib import Path

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.evaluate.analogy import evaluate_analogy, solve_analogies
from staticvec.evaluate.datasets import AnalogyData, parse_google
from staticvec.evaluate.lookup import VectorLookup

GOOGLE = Path("../shared/data/eval/analogy/questions-words.txt")
e = np.eye(4, dtype=np.float32)
r2 = np.float32(np.sqrt(0.5))


def royal(with_queen=True):
    words = ["man", "woman", "king", "apple"] + (["queen"] if with_queen else [])
    rows = [e[0], e[1], (e[0] + e[2]) * r2, e[3]] + ([(e[1] + e[2]) * r2] if with_queen else [])
    return VectorLookup(Embeddings(words, np.stack(rows)))


def ask(lookup, a, b, c, method="3cosadd"):
    idx = [lookup.indices([w]) for w in (a, b, c)]
    return lookup.words[solve_analogies(lookup, *idx, method=method, device="cpu")[0]]


def test_hand_computed_3cosadd_and_3cosmul():
    # q = king - man + woman: q.queen = (1 + 1/sqrt2)/sqrt2 = 1.21 beats q.woman = 1, q.apple = 0
    assert ask(royal(), "man", "king", "woman") == "queen"
    # 3CosMul: queen (0.75 * 0.854 / 0.501 = 1.28) beats apple (0.25 / 0.501)
    assert ask(royal(), "man", "king", "woman", method="3cosmul") == "queen"


def test_question_words_are_never_the_answer():
    # without queen the best candidate is woman (score 1), then king (0.29): both are question words,
    # so the answer is apple (0) rather than man (-0.29)
    assert ask(royal(with_queen=False), "man", "king", "woman") == "apple"


@pytest.mark.parametrize("method", ["3cosadd", "3cosmul"])
@pytest.mark.parametrize("tile, memory_mb", [(None, 1024), (7, 1024), (16, 0)])
def test_matches_brute_force(method, tile, memory_mb):
    rng = np.random.default_rng(3)
    V, n = 60, 200
    lookup = VectorLookup(Embeddings([f"w{i}" for i in range(V)], rng.standard_normal((V, 8)).astype(np.float32)))
    a, b, c = (rng.integers(0, V, n) for _ in range(3))
    U = lookup.unit.astype(np.float64)
    if method == "3cosadd":
        scores = (U[b] - U[a] + U[c]) @ U.T
    else:
        def cos(rows):
            return (U[rows] @ U.T + 1) / 2

        scores = cos(b) * cos(c) / (cos(a) + 1e-3)
    for q in (a, b, c):
        scores[np.arange(n), q] = -np.inf
    got = solve_analogies(lookup, a, b, c, method=method, device="cpu", memory_mb=memory_mb, tile=tile, batch=32)
    np.testing.assert_array_equal(got, scores.argmax(axis=1))


def test_oov_policies_on_questions():
    lookup_drop, lookup_mean = royal(), VectorLookup(royal().embeddings, oov="mean")
    data = AnalogyData(
        [("man", "king", "woman", "queen"), ("man", "king", "girl", "queen"), ("man", "king", "woman", "princess")],
        ["s", "s", "s"], ["semantic"] * 3)
    drop = evaluate_analogy(lookup_drop, data, device="cpu")
    assert (drop["found"], drop["total"], drop["scored"], drop["correct"]) == (1, 3, 1, 1)
    assert drop["score"] == 1.0
    mean = evaluate_analogy(lookup_mean, data, device="cpu")
    # all three scored; the third can never be right (its answer is missing)
    assert (mean["found"], mean["total"], mean["scored"]) == (1, 3, 3)
    assert mean["correct"] in (1, 2) and mean["score"] == mean["correct"] / 3
    # the mean-vector question solved by hand: q = king - man + mean
    U, m = lookup_mean.unit.astype(np.float64), lookup_mean.mean.astype(np.float64)
    s = U @ (U[2] - U[0] + m)
    s[[0, 2]] = -np.inf
    expected = lookup_mean.words[int(np.argmax(s))]
    assert mean["correct"] == 1 + (expected == "queen")


@pytest.mark.skipif(not GOOGLE.exists(), reason="../shared/data/eval not available")
def test_equals_gensim_evaluate_word_analogies(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    # every 3rd question of every section, to keep gensim's per-question loop short
    lines, kept = GOOGLE.read_text().splitlines(), []
    for i, line in enumerate(lines):
        if line.startswith(":") or i % 3 == 0:
            kept.append(line)
    subset = tmp_path / "questions.txt"
    subset.write_text("\n".join(kept) + "\n")
    data = parse_google(subset)
    # planted structure: within a section, b = a + r_section + noise, so some questions are right
    rng = np.random.default_rng(0)
    dim, vecs = 30, {}
    relation = {}
    for (a, b, c, d), section in zip(data.questions, data.sections):
        r = relation.setdefault(section, rng.standard_normal(dim))
        for x, y in ((a, b), (c, d)):
            x, y = x.lower(), y.lower()
            vecs.setdefault(x, rng.standard_normal(dim))
            vecs.setdefault(y, vecs[x] + r + 0.8 * rng.standard_normal(dim))
    words = [w for w in vecs if rng.random() > 0.03] + [f"filler{i}" for i in range(300)]
    rows = [vecs.get(w, rng.standard_normal(dim)) for w in words]
    emb = Embeddings(words, np.asarray(rows, dtype=np.float32))
    ours = evaluate_analogy(VectorLookup(emb, oov="drop", lowercase=True), data, device="cpu")
    kv = emb.to_gensim()
    score, sections = kv.evaluate_word_analogies(str(subset), restrict_vocab=len(kv), case_insensitive=True)
    total = sections[-1]
    assert 0.2 < score < 0.9  # a non-trivial accuracy, so the comparison means something
    assert ours["correct"] == len(total["correct"])
    assert ours["scored"] == len(total["correct"]) + len(total["incorrect"]) == ours["found"]
    assert ours["score"] == pytest.approx(score)
    per_section = {s["section"]: len(s["correct"]) for s in sections[:-1]}
    assert {name: s["correct"] for name, s in ours["sections"].items()} == per_section
