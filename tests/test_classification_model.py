"""The X2Static sentence CNN: convolution equivalence, metrics, OOV accounting, planted tasks."""

import numpy as np
import pytest
import torch
from cuda_fixtures import DEVICE, cuda_test, exact_float32
from torch.nn import functional as F

from staticvec.embeddings import Embeddings
from staticvec.evaluate.classification import (
    ClassifierSettings,
    EncodedSentences,
    SentenceCNN,
    WordTable,
    accuracy,
    lookup_embeddings,
    macro_f1,
    predict,
    run_seed,
    train,
)
from staticvec.evaluate.classification_data import LabelledSentences, stratified_split


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------- the convolution


@pytest.mark.parametrize("kernel", [3, 2, 5])
def test_features_equal_conv1d_on_each_unpadded_sentence(kernel):
    torch.manual_seed(0)
    table = torch.randn(30, 8)
    table[0] = 0.0
    model = SentenceCNN(table, n_classes=3, filters=6, kernel_size=kernel)
    rng = np.random.default_rng(0)
    sentences = [[str(i) for i in rng.integers(1, 30, n)] for n in (5, 1, 3, 7, 2)]
    encoded = EncodedSentences(
        LabelledSentences(sentences, np.zeros(len(sentences), dtype=np.int64)), {str(i): i for i in range(30)}, 64, kernel, "cpu"
    )
    order = torch.tensor([3, 0, 4, 1, 2])  # any batch composition and order
    got = model.features(*encoded.batch(order)[:2], len(order))
    conv_weight = model.weight.detach().permute(2, 0, 1)  # (filters, dim, kernel) as nn.Conv1d
    left = (kernel - 1) // 2
    for row, i in enumerate(order.tolist()):
        x = table[[int(w) for w in sentences[i]]].T[None]  # (1, dim, n): the sentence alone
        x = F.pad(x, (left, kernel - 1 - left))
        expected = torch.relu(F.conv1d(x, conv_weight, model.bias.detach())).amax(dim=2)[0]
        torch.testing.assert_close(got[row], expected, rtol=1e-5, atol=1e-5)


def test_gradient_reaches_weights_but_not_the_frozen_table():
    table = torch.randn(10, 4)
    model = SentenceCNN(table, n_classes=2, filters=3)
    assert all(p is not model.vectors for p in model.parameters())
    loss = model(torch.tensor([[0, 1, 2], [1, 2, 3], [2, 3, 0]]), torch.tensor([0, 0, 0]), 1).sum()
    loss.backward()
    assert model.weight.grad is not None and model.weight.grad.abs().sum() > 0
    assert not model.vectors.requires_grad


# ---------------------------------------------------------------- metrics and words


def test_macro_f1_by_hand_and_against_sklearn():
    from sklearn.metrics import f1_score

    gold = np.array([0, 0, 1, 1, 2, 2])
    pred = np.array([0, 1, 1, 1, 2, 0])
    # per class: 0 → 2·1/(2+2) = 0.5; 1 → 2·2/(2+3) = 0.8; 2 → 2·1/(2+1) = 2/3
    assert macro_f1(gold, pred) == pytest.approx((0.5 + 0.8 + 2 / 3) / 3)
    assert macro_f1(gold, pred) == pytest.approx(f1_score(gold, pred, average="macro"))
    assert accuracy(gold, pred) == pytest.approx(4 / 6)
    # a predicted class absent from the gold labels counts with F1 0, as in scikit-learn
    gold, pred = np.array([0, 0, 1, 1]), np.array([0, 3, 1, 1])
    assert macro_f1(gold, pred) == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)
    assert macro_f1(gold, pred) == pytest.approx(f1_score(gold, pred, average="macro"))
    rng = np.random.default_rng(0)
    gold, pred = rng.integers(0, 5, 200), rng.integers(0, 5, 200)
    assert macro_f1(gold, pred) == pytest.approx(f1_score(gold, pred, average="macro"))


def test_word_table_maps_oov_to_zero_and_counts_it():
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    emb = Embeddings(["a", "b", "c"], vectors)
    words = WordTable(emb, [["a", "x"], ["b", "b", "y"]])
    assert words.oov == {"tokens": 5, "oov_tokens": 2, "token_rate": 0.4, "types": 4, "oov_types": 2, "type_rate": 0.5}
    assert "x" not in words.index and "c" not in words.index
    np.testing.assert_array_equal(words.vectors[0], 0.0)
    np.testing.assert_array_equal(words.vectors[words.index["b"]], vectors[1])
    encoded = EncodedSentences(LabelledSentences([["a", "x", "b"], ["y"]], np.array([0, 1])), words.index, 2, 3, "cpu")
    a = words.index["a"]
    assert encoded.windows.tolist() == [[0, a, 0], [a, 0, 0], [0, 0, 0]]  # "b" cut off; x, y → 0
    assert encoded.lengths.tolist() == [2, 1] and encoded.truncated == 1


def test_upper_case_embeddings_are_looked_up_lower_cased_keeping_the_first_row():
    emb = Embeddings(["The", "the", "Cat"], np.eye(3, dtype=np.float32))
    table = lookup_embeddings(emb)
    assert table.words == ["the", "cat"]
    np.testing.assert_array_equal(table["the"], [1, 0, 0])


# ---------------------------------------------------------------- planted tasks


def _planted(n, seed, make_sentence):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    return LabelledSentences([make_sentence(rng, int(y)) for y in labels], labels)


def _fit_and_score(data, embeddings, settings, lr, epochs):
    words = WordTable(embeddings, data.sentences)
    table = torch.from_numpy(words.vectors)
    train_idx, test_idx = stratified_split(data.labels, (0.75, 0.25), seed=0)
    train_set = EncodedSentences(data.subset(train_idx), words.index, settings.max_tokens, settings.kernel_size, "cpu")
    test_set = EncodedSentences(data.subset(test_idx), words.index, settings.max_tokens, settings.kernel_size, "cpu")
    model = train(table, 2, train_set, lr=lr, epochs=epochs, seed=1, settings=settings)
    return accuracy(test_set.labels_np, predict(model, test_set))


def _random_embeddings(words, dim=16, seed=0):
    rng = np.random.default_rng(seed)
    return Embeddings(words, rng.normal(size=(len(words), dim)).astype(np.float32))


FILLER = [f"f{i}" for i in range(40)]


def test_learns_a_class_marked_by_its_words():
    # The class is the sign of a direction shared by the class words (distinct embeddings);
    # filler words are noise. Chance is 1/2.
    signal = {0: [f"neg{i}" for i in range(5)], 1: [f"pos{i}" for i in range(5)]}
    emb = _random_embeddings(FILLER + signal[0] + signal[1])
    direction = np.random.default_rng(3).normal(size=emb.dim)
    direction *= 3.0 / np.linalg.norm(direction)
    emb.vectors[len(FILLER) : len(FILLER) + 5] += -direction
    emb.vectors[len(FILLER) + 5 :] += direction

    def sentence(rng, label):
        words = list(rng.choice(FILLER, rng.integers(4, 12)))
        words.insert(int(rng.integers(0, len(words) + 1)), str(rng.choice(signal[label])))
        return words

    data = _planted(480, 0, sentence)
    settings = ClassifierSettings(filters=16, batch_size=16)
    assert _fit_and_score(data, emb, settings, lr=1e-2, epochs=8) >= 0.95


def test_learns_word_order_which_a_bag_of_words_cannot():
    # Both classes contain "x" and "y" once each, adjacent; only their order tells the class,
    # so the classifier must use the convolution's neighbouring positions.
    emb = _random_embeddings(FILLER + ["x", "y"], seed=1)

    def sentence(rng, label):
        words = list(rng.choice(FILLER, rng.integers(3, 10)))
        at = int(rng.integers(0, len(words) + 1))
        words[at:at] = ["x", "y"] if label == 0 else ["y", "x"]
        return words

    data = _planted(480, 1, sentence)
    settings = ClassifierSettings(filters=16, batch_size=16)
    assert _fit_and_score(data, emb, settings, lr=1e-2, epochs=15) >= 0.95


def test_a_long_run_passes_through_the_short_run_of_the_same_seed():
    # The epoch grid scores one 16-epoch run after each epoch: that is only right if the run
    # stopped at epoch e equals the run trained for e epochs.
    emb = _random_embeddings(FILLER, seed=4)
    data = _planted(100, 4, lambda rng, label: list(rng.choice(FILLER, 5 + label)))
    words = WordTable(emb, data.sentences)
    table = torch.from_numpy(words.vectors)
    encoded = EncodedSentences(data, words.index, 64, 3, "cpu")
    settings = ClassifierSettings(filters=4, batch_size=16)
    snapshots = {}
    train(table, 2, encoded, 1e-2, 4, 7, settings, lambda e, m: snapshots.__setitem__(e, {k: v.clone() for k, v in m.state_dict().items()}))
    short = train(table, 2, encoded, 1e-2, 2, 7, settings)
    for key, value in short.state_dict().items():
        torch.testing.assert_close(value, snapshots[2][key], rtol=0, atol=0)
    assert not torch.equal(snapshots[2]["weight"], snapshots[4]["weight"])


def test_run_seed_picks_a_grid_cell_and_is_reproducible():
    signal = {0: ["bad", "awful"], 1: ["good", "great"]}
    emb = _random_embeddings(FILLER + signal[0] + signal[1], seed=2)

    def sentence(rng, label):
        words = list(rng.choice(FILLER, rng.integers(3, 8)))
        words.insert(0, str(rng.choice(signal[label])))
        return words

    data = _planted(300, 2, sentence)
    words = WordTable(emb, data.sentences)
    table = torch.from_numpy(words.vectors)
    split = stratified_split(data.labels, (0.6, 0.2, 0.2), 0)
    parts = [EncodedSentences(data.subset(i), words.index, 64, 3, "cpu") for i in split]
    refit = EncodedSentences(data.subset(np.concatenate(split[:2])), words.index, 64, 3, "cpu")
    settings = ClassifierSettings(filters=8, batch_size=16, epochs=[2, 3], learning_rates=[1e-3, 1e-2])
    first = run_seed(table, 2, *parts, refit, seed=5, settings=settings)
    assert len(first["grid"]) == 4
    assert (first["learning_rate"], first["epochs"]) in {(g["learning_rate"], g["epochs"]) for g in first["grid"]}
    best = max(first["grid"], key=lambda g: (g["validation_macro_f1"], g["validation_accuracy"]))
    assert first["validation"]["macro_f1"] == best["validation_macro_f1"]
    assert first["test"]["accuracy"] >= 0.9
    second = run_seed(table, 2, *parts, refit, seed=5, settings=settings)
    assert first["test"] == second["test"] and first["grid"] == second["grid"]


# ---------------------------------------------------------------- the CUDA path


@cuda_test
def test_training_on_cuda_equals_it_on_the_cpu():
    """The same seed trains the same model on both devices (no dropout: its mask is the device's random
    stream), to fp32 rounding; embedding_bag's backward sums on CUDA in another order."""
    signal = {0: ["bad", "awful"], 1: ["good", "great"]}
    emb = _random_embeddings(FILLER + signal[0] + signal[1], seed=2)

    def sentence(rng, label):
        words = list(rng.choice(FILLER, rng.integers(3, 8)))
        words.insert(int(rng.integers(0, len(words) + 1)), str(rng.choice(signal[label])))
        return words

    data = _planted(200, 2, sentence)
    words = WordTable(emb, data.sentences)
    settings = ClassifierSettings(filters=8, batch_size=16, dropout=0.0)
    states, predictions = {}, {}
    with exact_float32():
        for side, device in (("cpu", "cpu"), ("device", DEVICE)):  # by side: the CPU stand-in compares two runs
            table = torch.from_numpy(words.vectors).to(device)
            encoded = EncodedSentences(data, words.index, 64, 3, device)
            model = train(table, 2, encoded, 1e-2, 4, 7, settings)
            assert all(p.device.type == device.split(":")[0] for p in model.parameters())
            states[side] = {k: v.cpu() for k, v in model.state_dict().items()}
            predictions[side] = predict(model, encoded)
    torch.manual_seed(7)  # the initialisation train() starts from
    start = SentenceCNN(torch.from_numpy(words.vectors), 2, 8, 3, 0.0).state_dict()
    for key, value in states["cpu"].items():
        assert (value - start[key]).abs().max() > 1e-3, key  # training moved it
        torch.testing.assert_close(states["device"][key], value, rtol=1e-4, atol=1e-5, msg=key)
    np.testing.assert_array_equal(predictions["device"], predictions["cpu"])
    assert accuracy(data.labels, predictions["cpu"]) > 0.9  # it learnt the task: a comparison of trained models
