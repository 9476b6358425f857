"""The contextual row: a teacher's per-token vectors reach the tagger, one row per token occurrence."""

import json

import numpy as np
import pytest

pytest.importorskip("staticvec.teacher.features", reason="needs the teacher package (staticvec.teacher)")
fixtures = pytest.importorskip("teacher_fixtures", reason="needs tests/teacher_fixtures.py (teacher tests)")

from staticvec.cli import main  # noqa: E402
from staticvec.evaluate.tagging.contextual import contextual_inputs, sentence_vectors  # noqa: E402
from staticvec.evaluate.tagging.data import Sentence, TaskData  # noqa: E402


pytestmark = pytest.mark.usefixtures("one_torch_thread")

SENTENCES = [("The", "cat", "sat", "-LRB-", "unbelievable", "-RRB-"), ("Paris", "is", "the", "capital"), ("a", "dog")]


def test_word_vectors_are_means_of_their_pieces_in_context():
    import torch

    teacher = fixtures.tiny_bert()
    vectors, missing = sentence_vectors(teacher, SENTENCES)
    assert missing == 0 and [len(v) for v in vectors] == [6, 4, 2]
    # by hand for the first sentence: pieces of "the cat sat ( unbelievable )" → mean per word
    enc = teacher.tokenizer("The cat sat ( unbelievable )", return_tensors="pt")
    with torch.inference_mode():
        states = teacher.encoder(**enc).last_hidden_state[0]
    word_ids = enc.word_ids(0)
    for w in range(6):
        rows = [i for i, k in enumerate(word_ids) if k == w]
        assert np.allclose(vectors[0][w], states[rows].mean(0).numpy(), atol=2e-3)  # float16 storage
    # context matters: "the" in sentences 0 and 1 differ
    assert not np.allclose(vectors[0][0], vectors[1][2], atol=1e-3)


def test_contextual_inputs_give_each_token_its_own_row():
    teacher = fixtures.tiny_bert()
    sents = [Sentence(words, ("X",) * len(words)) for words in SENTENCES]
    data = TaskData("pos", "ud", sents[:1], sents[1:2], sents[2:])
    inputs = contextual_inputs(teacher, data)
    rows = inputs.rows_for("dev")(0, sents[1])
    direct, _ = sentence_vectors(teacher, [SENTENCES[1]])
    assert np.array_equal(inputs.vectors[rows], direct[0])
    assert inputs.vectors.shape == (2 + 12, teacher.hidden_size) and not inputs.has_unk


def test_the_teacher_encodes_only_the_training_sentences_the_tagger_uses():
    from staticvec.errors import StaticvecError

    teacher = fixtures.tiny_bert()
    sents = [Sentence(words, ("X",) * len(words)) for words in SENTENCES]
    data = TaskData("pos", "ud", sents, sents[1:2], sents[2:])
    inputs = contextual_inputs(teacher, data, max_train_sentences=2)
    assert inputs.describe()["sentences"] == {"train": 2, "dev": 1, "test": 1}
    assert inputs.vectors.shape[0] == 2 + 6 + 4 + 4 + 2  # pad and unk rows, train 6 + 4 tokens, dev 4, test 2
    whole = contextual_inputs(teacher, data)
    for i in range(2):  # the rows it has are the whole pass's rows
        assert np.array_equal(inputs.vectors[inputs.rows_for("train")(i, sents[i])],
                              whole.vectors[whole.rows_for("train")(i, sents[i])])
    with pytest.raises(StaticvecError, match="train sentence 3"):
        inputs.rows_for("train")(2, sents[2])


def test_tag_with_a_teacher_directory(tmp_path):
    teacher = fixtures.tiny_bert()
    model_dir = tmp_path / "tiny-bert"
    teacher.model.save_pretrained(model_dir)
    teacher.tokenizer.save_pretrained(model_dir)
    data = tmp_path / "conll2000"
    data.mkdir()
    rows = "the DT B-NP\ncat NN I-NP\nsat VBD B-VP\n. . O\n\n"
    (data / "train.txt").write_text(rows * 20)
    (data / "test.txt").write_text(rows * 4)
    out = tmp_path / "r.json"
    hparams = json.dumps({"hidden": 8, "casing_dim": 0, "max_epochs": 2, "batch_size": 5, "max_train_sentences": 12})
    assert main(["evaluate", "tag", "--teacher", str(model_dir), "--task", "chunk", "--data-dir", str(data), "--hparams", hparams,
                 "--device", "cpu", "--out", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["status"] == "ok" and r["embedding"] == "contextual-tiny-bert" and r["inputs"]["kind"] == "contextual"
    assert r["inputs"]["dim"] == 16
    assert r["inputs"]["sentences"]["train"] == r["train_sentences"] == 12  # of 18 (20 less the held-out dev)
