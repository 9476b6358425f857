"""Readers and splits of the sentence-classification sets (X2Static Table 4)."""

from pathlib import Path

import numpy as np
import pytest

from staticvec.errors import InputFileError
from staticvec.evaluate.classification_data import (
    LabelledSentences,
    ClassificationDataset,
    load_dataset,
    make_split,
    read_lines,
    stratified_split,
    tokenize,
)

SHARED = Path("../shared/data/eval/classification")
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/eval/classification not available")


# ---------------------------------------------------------------- real files


@needs_shared
@pytest.mark.parametrize(
    "name, sizes, blank",
    [
        # sizes from the data README (MR 10662, SUBJ 10000, TREC 5452 + 500, SST-1 8544 + 1101 + 2210);
        # CR's 3775 and MPQA's 10606 count blank lines: 4 in custrev.*, 3 in mpqa.* (seen with awk 'NF==0').
        ("mr", {"all": 10662}, 0),
        ("cr", {"all": 3775 - 4}, 4),
        ("subj", {"all": 10000}, 0),
        ("mpqa", {"all": 10606 - 3}, 3),
        ("trec", {"train": 5452, "test": 500}, 0),
        ("sst5", {"train": 8544, "dev": 1101, "test": 2210}, 0),
    ],
)
def test_real_files_parse_with_the_expected_sizes(name, sizes, blank):
    dataset = load_dataset(name, SHARED)
    assert {part: len(items) for part, items in dataset.parts.items()} == sizes
    assert dataset.blank_lines == blank
    for part in dataset.parts.values():
        assert all(sentence for sentence in part.sentences)
        assert set(np.unique(part.labels)) == set(range(dataset.n_classes))


@needs_shared
def test_real_polarity_classes_are_balanced_as_distributed():
    mr = load_dataset("mr", SHARED).parts["all"]
    assert np.bincount(mr.labels).tolist() == [5331, 5331]
    subj = load_dataset("subj", SHARED).parts["all"]
    assert np.bincount(subj.labels).tolist() == [5000, 5000]


@needs_shared
def test_trec_fine_labels_are_the_fifty_types():
    trec = load_dataset("trec", SHARED, trec_labels="fine")
    assert trec.n_classes == 50
    assert all(":" in label for label in trec.label_names)


# ---------------------------------------------------------------- reading rules


def test_cp1252_file_is_decoded_and_nel_byte_does_not_break_the_line(tmp_path):
    path = tmp_path / "rt-polarity.pos"
    path.write_bytes(b"caf\xe9 is fine \x85 really\nhmm\x85might work\n")
    lines, encoding, blank = read_lines(path)
    assert encoding == "cp1252"
    assert lines == [(1, "café is fine … really"), (2, "hmm…might work")]
    assert blank == 0


def test_utf8_file_stays_utf8_and_blank_lines_are_counted(tmp_path):
    path = tmp_path / "x"
    path.write_bytes("crème brûlée\n\n  \nsecond\r\n\n".encode("utf-8"))
    lines, encoding, blank = read_lines(path)
    assert encoding == "utf-8"
    assert lines == [(1, "crème brûlée"), (4, "second")]
    assert blank == 3


def _write_polarity(directory, neg, pos):
    (directory / "rt-polarity.neg").write_text("".join(line + "\n" for line in neg))
    (directory / "rt-polarity.pos").write_text("".join(line + "\n" for line in pos))


def test_polarity_labels_follow_the_file(tmp_path):
    _write_polarity(tmp_path, ["bad film .", "awful"], ["Great Film !"])
    dataset = load_dataset("mr", tmp_path)
    part = dataset.parts["all"]
    assert part.sentences == [["bad", "film", "."], ["awful"], ["great", "film", "!"]]
    assert part.labels.tolist() == [0, 0, 1]
    assert dataset.label_names == ("negative", "positive")


def test_control_character_raises_with_file_and_line(tmp_path):
    _write_polarity(tmp_path, ["fine", "bro\x00ken"], ["ok"])
    with pytest.raises(InputFileError) as info:
        load_dataset("mr", tmp_path)
    assert info.value.line == 2
    assert info.value.path.endswith("rt-polarity.neg")


def test_trec_line_without_label_raises_with_file_and_line(tmp_path):
    (tmp_path / "TREC.train").write_text("HUM:ind Who wrote Hamlet ?\nWhat is an atom ?\n")
    (tmp_path / "TREC.test").write_text("DESC:def What is love ?\n")
    with pytest.raises(InputFileError) as info:
        load_dataset("trec", tmp_path)
    assert info.value.line == 2 and info.value.path.endswith("TREC.train")
    assert "TREC.train, line 2" in str(info.value)


def test_trec_unknown_coarse_type_raises(tmp_path):
    (tmp_path / "TREC.train").write_text("HUM:ind Who wrote Hamlet ?\n")
    (tmp_path / "TREC.test").write_text("DESC:def What is love ?\nFOO:bar What ?\n")
    with pytest.raises(InputFileError) as info:
        load_dataset("trec", tmp_path)
    assert info.value.line == 2 and info.value.path.endswith("TREC.test")


def test_trec_coarse_and_fine_labels(tmp_path):
    (tmp_path / "TREC.train").write_text("HUM:ind Who wrote Hamlet ?\nNUM:date When ?\nHUM:gr Which team ?\n")
    (tmp_path / "TREC.test").write_text("NUM:date When did it end ?\n")
    coarse = load_dataset("trec", tmp_path)
    assert [coarse.label_names[i] for i in coarse.parts["train"].labels] == ["HUM", "NUM", "HUM"]
    assert coarse.parts["test"].sentences == [["when", "did", "it", "end", "?"]]
    fine = load_dataset("trec", tmp_path, trec_labels="fine")
    assert fine.label_names == ("HUM:gr", "HUM:ind", "NUM:date")
    assert fine.parts["train"].labels.tolist() == [1, 2, 0]


def test_sst_bad_label_raises_with_file_and_line(tmp_path):
    for part in ("train", "dev"):
        (tmp_path / f"stsa.fine.{part}").write_text("4 a great film\n0 awful\n")
    (tmp_path / "stsa.fine.test").write_text("3 good\n5 too good\n")
    with pytest.raises(InputFileError) as info:
        load_dataset("sst5", tmp_path)
    assert info.value.line == 2 and info.value.path.endswith("stsa.fine.test")


def test_missing_file_names_the_file(tmp_path):
    (tmp_path / "rt-polarity.neg").write_text("bad\n")
    with pytest.raises(InputFileError, match="rt-polarity.pos"):
        load_dataset("mr", tmp_path)


def test_tokenize_splits_clitics_like_spacy():
    assert tokenize("It's a film's end , doesn't it ? I can't") == [
        "it", "'s", "a", "film", "'s", "end", ",", "does", "n't", "it", "?", "i", "ca", "n't",
    ]
    assert tokenize("o'fallon 's n't ' we'll") == ["o'fallon", "'s", "n't", "'", "we", "'ll"]
    assert tokenize("It's  DOESN'T", "whitespace") == ["it's", "doesn't"]


# ---------------------------------------------------------------- splits


def test_stratified_split_is_disjoint_covering_stratified_and_seeded():
    labels = np.array([0] * 50 + [1] * 30 + [2] * 7)
    rng = np.random.default_rng(0)
    labels = labels[rng.permutation(len(labels))]
    parts = stratified_split(labels, (0.6, 0.2, 0.2), seed=3)
    joined = np.concatenate(parts)
    assert len(joined) == len(labels) and set(joined.tolist()) == set(range(len(labels)))  # disjoint + covering
    for c, n in ((0, 50), (1, 30), (2, 7)):
        counts = [int(np.sum(labels[p] == c)) for p in parts]
        for count, fraction in zip(counts, (0.6, 0.2, 0.2)):
            assert abs(count - fraction * n) <= 1
    again = stratified_split(labels, (0.6, 0.2, 0.2), seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))
    other = stratified_split(labels, (0.6, 0.2, 0.2), seed=4)
    assert not np.array_equal(parts[0], other[0])


def test_make_split_uses_given_parts_and_holds_out_validation_from_train():
    def part(n, offset):
        return LabelledSentences([[f"w{offset + i}"] for i in range(n)], np.arange(n) % 2)

    trec_like = ClassificationDataset("trec", ("a", "b"), {"train": part(40, 0), "test": part(10, 100)})
    split = make_split(trec_like, seed=1, holdout_fraction=0.25)
    assert split.test.sentences == trec_like.parts["test"].sentences
    train_words = {s[0] for s in split.train.sentences}
    valid_words = {s[0] for s in split.validation.sentences}
    assert len(valid_words) == 10 and not train_words & valid_words
    assert train_words | valid_words == {f"w{i}" for i in range(40)}
    assert np.bincount(split.validation.labels).tolist() == [5, 5]

    sst_like = ClassificationDataset("sst5", ("a", "b"), {"train": part(8, 0), "dev": part(4, 50), "test": part(4, 90)})
    split = make_split(sst_like, seed=1)
    assert split.validation.sentences == sst_like.parts["dev"].sentences
    assert split.protocol == "given train/dev/test"
