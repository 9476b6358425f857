"""`staticvec post ...`: files in, files out, clear errors."""

import json

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.embeddings import Embeddings
from staticvec.post.artetxe import artetxe


@pytest.fixture
def vectors(tmp_path):
    rng = np.random.default_rng(0)
    words = ["car", "Auto", "automobile", "banana", "fruit", "zebra"]
    emb = Embeddings(words, rng.normal(size=(6, 4)))
    path = tmp_path / "in.txt"
    emb.save(path)
    return path, emb


@pytest.fixture
def lexicons(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("car auto automobile\nauto car\nautomobile car\n")
    b = tmp_path / "b.txt"
    b.write_text("banana fruit\nfruit banana\n")
    return a, b


@pytest.mark.parametrize("method", ["faruqui", "student-t"])
def test_retrofit_command(tmp_path, vectors, lexicons, method):
    path, emb = vectors
    out = tmp_path / "out.npy"
    args = ["post", "retrofit", "--vectors", str(path), "--lexicon", str(lexicons[0]), "--lexicon", str(lexicons[1])]
    assert main([*args, "--method", method, "--out", str(out), "--report", str(tmp_path / "r.json")]) == 0
    got = Embeddings.load(out)
    assert got.words == ["car", "auto", "automobile", "banana", "fruit", "zebra"]
    unit = emb.vectors / np.sqrt((emb.vectors**2).sum(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(got["zebra"], unit[5], atol=1e-6)  # not in a lexicon
    for word in ("car", "banana"):
        assert not np.allclose(got[word], unit[emb.words.index(word)], atol=1e-3)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["updated"] == 5 and report["edges"] == 6 and len(report["max_change"]) == 10
    # One lexicon only: banana is untouched.
    assert main([*args[:-2], "--method", method, "--iterations", "3", "--no-normalize", "--out", str(out)]) == 0
    np.testing.assert_allclose(Embeddings.load(out)["banana"], emb["banana"], atol=1e-6)


def test_artetxe_command(tmp_path, vectors):
    path, emb = vectors
    out = tmp_path / "out.txt"
    assert main(["post", "artetxe", "--vectors", str(path), "--alpha", "-0.5", "--out", str(out)]) == 0
    got = Embeddings.load(out)
    assert got.words == emb.words
    np.testing.assert_allclose(got.vectors, artetxe(emb.vectors, -0.5), rtol=1e-4, atol=1e-5)


def test_wordnet_lexicon_command(tmp_path):
    wn = tmp_path / "wn"
    wn.mkdir()
    for name in ("data.verb", "data.adj", "data.adv"):
        (wn / name).write_text("")
    (wn / "data.noun").write_text("00000001 06 n 02 car 0 auto 0 000 | a motor vehicle\n")
    assert main(["post", "wordnet-lexicon", "--wordnet-dir", str(wn), "--out", str(tmp_path / "l.txt")]) == 0
    assert (tmp_path / "l.txt").read_text() == "auto car\ncar auto\n"


def test_errors_name_the_problem(tmp_path, vectors, lexicons, capsys):
    path, _ = vectors
    out = str(tmp_path / "o.npy")
    assert main(["post", "retrofit", "--vectors", str(path), "--lexicon", str(tmp_path / "none.txt"), "--out", out]) == 2
    assert "none.txt: lexicon file not found" in capsys.readouterr().err
    assert main(["post", "retrofit", "--vectors", str(path), "--lexicon", str(lexicons[0]), "--alpha", "0", "--out", out]) == 2
    assert "alpha" in capsys.readouterr().err
    assert main(["post", "artetxe", "--vectors", str(tmp_path / "nope.vec"), "--alpha", "1", "--out", out]) == 2
    assert "nope.vec: embedding file not found" in capsys.readouterr().err
    assert main(["post", "wordnet-lexicon", "--wordnet-dir", str(tmp_path), "--out", out]) == 2
    assert "data.noun" in capsys.readouterr().err
