"""Lexicon files: Faruqui's word normalisation, duplicate heads, the graph over a vocabulary."""

import gzip
from pathlib import Path

import numpy as np
import pytest

from staticvec.errors import InputFileError
from staticvec.post.lexicon import lexicon_graph, merge_lexicons, norm_word, read_lexicon, write_lexicon

LEXICONS = Path("../shared/data/eval/lexicons")


@pytest.mark.parametrize(
    "word,expected",
    [("Car", "car"), ("1990s", "---num---"), ("b2b", "---num---"), ("...", "---punc---"), ("--", "---punc---"),
     ("re-allocations", "re-allocations"), ("o'clock", "o'clock"), ("Éclair", "éclair"), ("_", "_")],
)
def test_norm_word(word, expected):
    assert norm_word(word) == expected


def test_read_lexicon_normalises_and_merges_duplicate_heads(tmp_path):
    path = tmp_path / "lex.txt"
    path.write_text("Abandon quit halt\n\nsource\nabandon leave quit 1990\n!! car\n", encoding="utf-8")
    merged = read_lexicon(path)
    assert merged == {"abandon": ["quit", "halt", "leave", "---num---"], "source": [], "---punc---": ["car"]}
    last = read_lexicon(path, duplicate_heads="last")  # the released code's dict: the last line wins
    assert last["abandon"] == ["leave", "quit", "---num---"]


def test_read_lexicon_reports_bad_files(tmp_path):
    with pytest.raises(InputFileError, match="not found"):
        read_lexicon(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"car auto\nfa\xffn crawl\n")
    with pytest.raises(InputFileError, match=r"bad.txt, line 2: invalid UTF-8"):
        read_lexicon(bad)


def test_write_read_round_trip_and_compressed(tmp_path):
    lexicon = {"car": ["auto", "automobile"], "auto": ["car"], "alone": []}
    write_lexicon(lexicon, tmp_path / "l.txt")
    assert read_lexicon(tmp_path / "l.txt") == lexicon
    assert (tmp_path / "l.txt").read_text().splitlines()[0] == "alone"  # sorted heads
    with gzip.open(tmp_path / "l.gz", "wt") as fh:
        fh.write("car auto\n")
    assert read_lexicon(tmp_path / "l.gz") == {"car": ["auto"]}


def test_merge_lexicons():
    merged = merge_lexicons([{"a": ["b", "c"]}, {"a": ["c", "d"], "e": ["a"]}])
    assert merged == {"a": ["b", "c", "d"], "e": ["a"]}


def test_lexicon_graph_keeps_directed_in_vocabulary_edges_only():
    index = {"car": 0, "auto": 1, "truck": 2, "banana": 3}
    lexicon = {"car": ["auto", "truck", "lorry", "car", "auto"], "auto": ["car"], "lorry": ["truck"], "banana": ["zz"]}
    graph = lexicon_graph(lexicon, index)
    dense = graph.toarray()
    expected = np.zeros((4, 4))
    expected[0, [1, 2]] = 1  # no self-loop, no repeat, no OOV "lorry"
    expected[1, 0] = 1  # not symmetrised: truck has no row
    np.testing.assert_array_equal(dense, expected)


def test_real_framenet_lexicon_parses():
    """FrameNet repeats heads: merging keeps every line's neighbours."""
    for name in ("framenet.txt",):
        path = LEXICONS / name
        if not path.exists():
            pytest.skip(f"{path} not available")
        lines = [line.split() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        merged = read_lexicon(path)
        last = read_lexicon(path, duplicate_heads="last")
        heads = {norm_word(words[0]) for words in lines}
        assert set(merged) == set(last) == heads
        # Every neighbour listed on any line of a head is kept when merging.
        for words in lines[:: max(1, len(lines) // 500)]:
            assert {norm_word(w) for w in words[1:]} <= set(merged[norm_word(words[0])])
        assert sum(map(len, merged.values())) >= sum(map(len, last.values()))
