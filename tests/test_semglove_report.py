"""SemGloVe report data: Table 5 pair counts from stores (OOV stated), Figure 3 word classes and t-SNE."""

import numpy as np
import pytest

from staticvec.cooc.store import vocab_fingerprint, write_store
from staticvec.corpus.vocab import Vocabulary
from staticvec.embeddings import Embeddings
from staticvec.errors import InputFileError
from staticvec.report.figures import tsne_layout
from staticvec.report.word_lists import class_vectors, load_word_classes
from staticvec.cooc.pair_counts import pair_counts, pairs_of_paper_table
from staticvec.report.tables import build_comparison

FIGURE3 = "resources/word_lists/semglove_figure3.tsv"
TABLE5 = "resources/paper_tables/semglove_table5.csv"


def test_table5_pairs_are_the_papers_nine():
    pairs = pairs_of_paper_table(TABLE5)
    assert len(pairs) == 9
    assert pairs["egyptologist_egyptian"] == ("egyptologist", "egyptian")
    assert pairs["paris_french"] == ("paris", "french")


def test_pair_counts_feed_the_table_builder(tmp_path):
    words = ["man", "woman", "paris", "french", "cat", "cats"]
    vocab = Vocabulary(words, [60, 50, 40, 30, 20, 10])
    sha = vocab_fingerprint(vocab)
    ix = vocab.index
    write_store(tmp_path / "g.cooc", [ix["paris"], ix["man"]], [ix["french"], ix["woman"]], [823.0, 1480.0], 6, sha, {})
    write_store(tmp_path / "m.cooc", [ix["cat"], ix["french"]], [ix["cats"], ix["paris"]], [3.5e4, 7.0], 6, sha, {})
    result = pair_counts({"glove": tmp_path / "g.cooc", "semglove_md": tmp_path / "m.cooc"}, vocab,
                         pairs_of_paper_table(TABLE5))
    r = result["results"]
    assert r["paris_french"]["glove"]["score"] == 823.0  # X[paris, french]: the target first
    assert r["paris_french"]["semglove_md"]["score"] == 0.0  # only X[french, paris] is stored
    assert r["cat_cats"]["semglove_md"]["score"] == 3.5e4
    assert r["himself_oneself"]["glove"] == {"score": None, "found": 0, "total": 1, "oov": ["himself", "oneself"]}
    frame = build_comparison(TABLE5, {"cooccurrence": result}, {row: "cooccurrence" for row in r},
                             {"glove": "{row}.glove", "semglove_md": "{row}.semglove_md"})
    cell = frame[(frame.row == "man_woman") & (frame.column == "glove")].iloc[0]
    assert cell.ours == 1480.0 and cell.paper == 1480.0 and cell.found == 1
    assert frame[(frame.row == "himself_oneself") & (frame.column == "glove")].iloc[0].found == 0
    write_store(tmp_path / "other.cooc", [0], [1], [1.0], 6, "0" * 64, {})
    with pytest.raises(InputFileError, match="another vocabulary"):
        pair_counts({"x": tmp_path / "other.cooc"}, vocab, {"a": ("man", "woman")})


def test_figure3_word_list_has_the_papers_eight_classes():
    pairs = load_word_classes(FIGURE3)
    classes = list(dict.fromkeys(c for c, _ in pairs))
    assert classes == ["time", "city", "game", "astronomy", "animal", "politics", "clothing", "creator"]
    assert all(sum(c == k for c, _ in pairs) == 10 for k in classes)
    assert ("time", "daybreak") in pairs  # the one word the paper's text names


def test_bad_word_list_lines_are_located(tmp_path):
    bad = tmp_path / "w.tsv"
    bad.write_text("# header\ntime\ttoday\ncity paris\n")
    with pytest.raises(InputFileError, match="line 3"):
        load_word_classes(bad)


def test_tsne_keeps_planted_classes_apart_and_reports_missing_words():
    rng = np.random.default_rng(0)
    classes = [(f"c{k}", f"w{k}_{i}") for k in range(3) for i in range(8)]
    centres = rng.normal(size=(3, 20)) * 5
    vectors = np.stack([centres[int(c[1])] + 0.5 * rng.normal(size=20) for c, _ in classes])
    emb = Embeddings([w for _, w in classes[:-1]], vectors[:-1].astype(np.float32))
    found, unit, missing = class_vectors(emb, classes)
    assert missing == ["w2_7"] and len(found) == 23 == len(unit)
    xy = tsne_layout(unit, 2, seed=0, max_iter=500)
    labels = np.array([c for c, _ in found])
    d = ((xy[:, None] - xy[None]) ** 2).sum(-1) + np.eye(len(xy)) * 1e9
    assert (labels[d.argmin(1)] == labels).mean() > 0.95  # each point's nearest neighbour is in its class
