"""Embedding I/O: round trips of every format, and every bad-input case named by file and line."""

import gzip

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.errors import InputFileError


def sample():
    words = ["the", "café", "naïve", "x"]
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3) / 7 - 0.5
    return Embeddings(words, vectors, counts=[10, 5, 3, 1])


@pytest.mark.parametrize("name, fmt", [("v.txt", None), ("v.vec.gz", None), ("v.bin", None), ("v.npy", None), ("v.glove", "glove")])
def test_round_trip(tmp_path, name, fmt):
    emb = sample()
    emb.save(tmp_path / name, fmt=fmt)
    back = Embeddings.load(tmp_path / name, fmt=fmt)
    assert back.words == emb.words
    np.testing.assert_allclose(back.vectors, emb.vectors, rtol=1e-5, atol=1e-6)
    assert Embeddings.load(tmp_path / name, fmt=fmt, max_words=2).words == emb.words[:2]


def test_gensim_round_trip_and_word2vec_c_binary(tmp_path):
    emb = sample()
    kv = emb.to_gensim()
    kv.save_word2vec_format(str(tmp_path / "g.bin"), binary=True)  # gensim's binary layout
    back = Embeddings.load(tmp_path / "g.bin")
    assert back.words == emb.words
    np.testing.assert_array_equal(back.vectors, emb.vectors)
    # word2vec.c ends each record with a newline: also accepted
    with open(tmp_path / "c.bin", "wb") as fh:
        fh.write(b"2 3\n")
        for word, row in zip(emb.words[:2], emb.vectors[:2]):
            fh.write(word.encode() + b" " + row.astype("<f4").tobytes() + b"\n")
    assert Embeddings.load(tmp_path / "c.bin").words == emb.words[:2]


def test_save_refuses_words_that_would_break_the_file(tmp_path):
    with pytest.raises(ValueError, match="whitespace"):
        Embeddings(["ice cream"], np.zeros((1, 2), np.float32)).save(tmp_path / "v.txt")


TEXT_CASES = [
    ("wrong header", b"3\nthe 1 2\n", 1, "header"),
    ("header not integers", b"two 2\nthe 1 2\n", 1, "header"),
    ("too few values", b"2 3\nthe 1 2 3\nof 1 2\n", 3, "expected 3 values"),
    ("too many values", b"2 2\nthe 1 2\nof 1 2 3\n", 3, "expected 2 values"),
    ("duplicate word", b"2 2\nthe 1 2\nthe 3 4\n", 3, "duplicate word 'the' (first on line 2)"),
    ("non-numeric", b"1 2\nthe 1 abc\n", 2, "non-numeric value 'abc'"),
    ("non-finite", b"1 2\nthe 1 nan\n", 2, "non-finite value 'nan'"),
    ("invalid UTF-8", b"2 2\nthe 1 2\nca\xfft 3 4\n", 3, "invalid UTF-8"),
    ("empty line", b"2 2\nthe 1 2\n\nof 3 4\n", 3, "empty line"),
    ("empty word", b"1 2\n 1 2\n", 2, "empty word"),
]


@pytest.mark.parametrize("case, content, line, problem", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_bad_text_file_names_file_and_line(tmp_path, case, content, line, problem):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as err:
        Embeddings.load(path)
    assert err.value.line == line and problem in str(err.value) and str(path) in str(err.value)


def test_bad_gzip_text_and_count_mismatch(tmp_path):
    path = tmp_path / "bad.txt.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b"1 2\nthe 1 x\n")
    with pytest.raises(InputFileError, match="line 2"):
        Embeddings.load(path)
    short = tmp_path / "short.txt"
    short.write_bytes(b"3 2\nthe 1 2\n")
    with pytest.raises(InputFileError, match="announces 3 words but the file has 1"):
        Embeddings.load(short)
    glove = tmp_path / "g.txt"
    glove.write_bytes(b"the 1 2\nof 1\n")
    with pytest.raises(InputFileError) as err:
        Embeddings.load(glove, fmt="glove")
    assert err.value.line == 2


def binary(words, dim=2, count=None, extra=b""):
    data = f"{count if count is not None else len(words)} {dim}\n".encode()
    for w in words:
        data += w + b" " + np.arange(dim, dtype="<f4").tobytes()
    return data + extra


BINARY_CASES = [
    ("header", b"x y\n" + b"the " + bytes(8), "header"),
    ("truncated", binary([b"the", b"of"])[:-3], "truncated"),
    ("duplicate", binary([b"the", b"the"]), "record 2: duplicate word 'the'"),
    ("invalid UTF-8", binary([b"the", b"c\xffa"]), "record 2: word is invalid UTF-8"),
    ("more data", binary([b"the"], extra=b"of " + bytes(8)), "more data follows"),
    ("non-finite", b"1 2\nthe " + np.array([1, np.inf], dtype="<f4").tobytes(), "non-finite"),
]


@pytest.mark.parametrize("case, content, problem", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_bad_binary_file_names_file_and_record(tmp_path, case, content, problem):
    path = tmp_path / "bad.bin"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as err:
        Embeddings.load(path)
    assert problem in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize("vocab, rows, line, problem", [
    ("the\t3\nthe\t2\n", 2, 2, "duplicate word 'the'"),
    ("the\tmany\nof\t2\n", 2, 1, "not a non-negative integer"),
    ("the\nof\n", 3, None, "2 words for a matrix of 3 rows"),
    ("the\n\n", 2, 2, "empty word"),
    ("th\xe9\nof\n", 2, 1, "invalid UTF-8"),
])
def test_bad_npy_vocabulary_names_file_and_line(tmp_path, vocab, rows, line, problem):
    np.save(tmp_path / "v.npy", np.zeros((rows, 2), dtype=np.float32))
    (tmp_path / "v.vocab").write_bytes(vocab.encode("latin-1"))
    with pytest.raises(InputFileError) as err:
        Embeddings.load(tmp_path / "v.npy")
    assert err.value.line == line and problem in str(err.value) and "v.vocab" in str(err.value)


def test_npy_errors(tmp_path):
    with pytest.raises(InputFileError, match="word list"):
        np.save(tmp_path / "a.npy", np.zeros((1, 2)))
        Embeddings.load(tmp_path / "a.npy")
    np.save(tmp_path / "b.npy", np.array([[1.0, np.nan]], dtype=np.float32))
    (tmp_path / "b.vocab").write_text("the\n")
    with pytest.raises(InputFileError, match="non-finite"):
        Embeddings.load(tmp_path / "b.npy")
    with pytest.raises(InputFileError, match="not found"):
        Embeddings.load(tmp_path / "missing.txt")
