"""The chunk scorer against hand-made cases of the conlleval definition."""

import random

import pytest

from staticvec.evaluate.tagging.chunk_f1 import chunk_scores, chunks, score, token_accuracy
from staticvec.evaluate.tagging.data import to_iob2


def test_chunks_are_read_as_conlleval_reads_them():
    assert chunks(["B-NP", "I-NP", "O", "B-VP"]) == {("NP", 0, 1), ("VP", 3, 3)}
    # an I- after O starts a chunk
    assert chunks(["O", "I-NP", "I-NP"]) == {("NP", 1, 2)}
    # IOB1: B- only separates two adjacent chunks of one type
    assert chunks(["I-NP", "I-NP", "B-NP"]) == {("NP", 0, 1), ("NP", 2, 2)}
    # a type change inside a run ends one chunk and starts another
    assert chunks(["B-NP", "I-VP", "I-VP"]) == {("NP", 0, 0), ("VP", 1, 2)}
    # IOBES
    assert chunks(["S-NP", "B-VP", "E-VP", "O"]) == {("NP", 0, 0), ("VP", 1, 2)}
    assert chunks(["O", "O"]) == set()


def test_perfect_prediction():
    gold = [["B-NP", "I-NP", "O", "B-VP"], ["B-PP", "B-NP"]]
    result = chunk_scores(gold, gold)
    assert result["f1"] == result["precision"] == result["recall"] == 1.0
    assert result["gold_chunks"] == 4


def test_hand_counted_precision_recall_f1():
    gold = [["B-NP", "I-NP", "O", "B-VP", "B-PP", "B-NP"]]  # NP(0,1) VP(3,3) PP(4,4) NP(5,5)
    pred = [["B-NP", "I-NP", "O", "B-VP", "B-NP", "I-NP"]]  # NP(0,1) VP(3,3) NP(4,5)
    result = chunk_scores(gold, pred)
    assert (result["gold_chunks"], result["predicted_chunks"], result["correct_chunks"]) == (4, 3, 2)
    assert result["precision"] == pytest.approx(2 / 3)
    assert result["recall"] == pytest.approx(1 / 2)
    assert result["f1"] == pytest.approx(4 / 7)


def test_i_after_o_in_prediction_counts_as_a_correct_chunk():
    result = chunk_scores([["O", "B-NP", "I-NP"]], [["O", "I-NP", "I-NP"]])
    assert result["f1"] == 1.0


def test_wrong_type_or_boundary_is_wrong():
    # boundaries right, type wrong in the second token's chunk
    assert chunk_scores([["B-NP", "I-NP"]], [["B-NP", "I-VP"]])["correct_chunks"] == 0
    # chunk cut in two
    result = chunk_scores([["B-NP", "I-NP", "I-NP"]], [["B-NP", "I-NP", "B-NP"]])
    assert result["correct_chunks"] == 0 and result["predicted_chunks"] == 2
    # type right, one boundary off
    assert chunk_scores([["B-NP", "I-NP", "O"]], [["B-NP", "I-NP", "I-NP"]])["f1"] == 0.0


def test_chunks_do_not_cross_sentences():
    result = chunk_scores([["B-NP"], ["I-NP"]], [["B-NP"], ["I-NP"]])
    assert result["gold_chunks"] == 2


def test_no_prediction_gives_zero_not_an_error():
    result = chunk_scores([["B-NP", "O"]], [["O", "O"]])
    assert result["f1"] == 0.0 and result["precision"] == 0.0 and result["recall"] == 0.0


def test_token_accuracy_and_score_dispatch():
    gold = [["DT", "NN", "VBZ"], ["NN"]]
    pred = [["DT", "NN", "VBD"], ["NNS"]]
    assert token_accuracy(gold, pred)["accuracy"] == 0.5
    assert score("accuracy", gold, pred)["score"] == 0.5
    with pytest.raises(ValueError):
        token_accuracy(gold, [["DT"], ["NN"]])


def test_to_iob2_conversions():
    assert to_iob2(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"]) == ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG"]
    assert to_iob2(["S-X", "B-Y", "I-Y", "E-Y", "O"]) == ["B-X", "B-Y", "I-Y", "I-Y", "O"]
    iob2 = ["B-NP", "I-NP", "B-NP", "O", "B-VP"]
    assert to_iob2(iob2) == iob2


def test_to_iob2_keeps_every_chunk_of_random_iob1_sequences():
    rng = random.Random(0)
    for _ in range(300):
        tags = [rng.choice(["O", "I-A", "I-B", "B-A", "B-B"]) for _ in range(rng.randint(1, 12))]
        converted = to_iob2(tags)
        assert chunks(converted) == chunks(tags)
        assert all(not t.startswith("I-") or (i > 0 and converted[i - 1][2:] == t[2:] and converted[i - 1] != "O")
                   for i, t in enumerate(converted))


def test_chunk_reading_agrees_with_seqeval_default_mode():
    sequence_labeling = pytest.importorskip("seqeval.metrics.sequence_labeling")
    rng = random.Random(1)
    tags = ["O", "B-NP", "I-NP", "B-VP", "I-VP", "E-NP", "S-VP", "E-VP", "S-NP"]
    for _ in range(500):
        seq = [rng.choice(tags) for _ in range(rng.randint(1, 10))]
        assert chunks(seq) == set(sequence_labeling.get_entities(seq)), seq
