"""The BiLSTM-CRF: the unpacked BiLSTM equals torch's packed one; a tiny tagger learns a planted rule."""

import numpy as np
import pytest
import torch
from cuda_fixtures import DEVICE, ON_GPU, cuda_test, exact_float32

from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.evaluate.tagging.data import Sentence, TaskData
from staticvec.evaluate.tagging.features import UNK, WordTable, casing_class
from staticvec.evaluate.tagging.inputs import StaticInputs
from staticvec.evaluate.tagging.model import BiLSTM, BiLSTMCRF, cpu_bf16_lstm, reverse_padded
from staticvec.evaluate.tagging.train import TaggerConfig, length_bucketed_batches, tagger_dtype, train_tagger


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_reverse_padded_reverses_within_each_length():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]]).unsqueeze(2)
    out = reverse_padded(x, torch.tensor([3, 2])).squeeze(2)
    assert out.tolist() == [[3, 2, 1, 0], [5, 4, 0, 0]]


def test_reverse_padded_values_and_gradients_are_a_gathers_bit_for_bit():
    torch.manual_seed(3)
    lengths = torch.tensor([9, 1, 5, 9, 7])
    x = torch.randn(5, 9, 4, requires_grad=True)
    weight = torch.randn(5, 9, 4)
    steps = torch.arange(9).unsqueeze(0)
    index = lengths.unsqueeze(1) - 1 - steps
    index = torch.where(index >= 0, index, steps)  # the definition: reverse within the length
    expected = x.gather(1, index.unsqueeze(2).expand_as(x))
    (expected_grad,) = torch.autograd.grad((expected * weight).sum(), x)
    got = reverse_padded(x, lengths)
    (grad,) = torch.autograd.grad((got * weight).sum(), x)
    assert torch.equal(got, expected) and torch.equal(grad, expected_grad)
    assert torch.equal(reverse_padded(got, lengths), x)  # its own inverse


def test_unpacked_bilstm_equals_torch_packed_bidirectional_lstm():
    torch.manual_seed(0)
    reference = torch.nn.LSTM(6, 5, batch_first=True, bidirectional=True)
    ours = BiLSTM(6, 5)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(ours.forward_lstms[0], f"{name}_l0").copy_(getattr(reference, f"{name}_l0"))
            getattr(ours.backward_lstms[0], f"{name}_l0").copy_(getattr(reference, f"{name}_l0_reverse"))
    x = torch.randn(3, 7, 6)
    lengths = torch.tensor([7, 4, 1])
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    expected, _ = torch.nn.utils.rnn.pad_packed_sequence(reference(packed)[0], batch_first=True)
    got = ours(x, lengths)
    for b, n in enumerate(lengths.tolist()):
        assert torch.allclose(got[b, :n], expected[b, :n], atol=1e-6)


def test_word_table_lookup_order_and_coverage():
    emb = Embeddings(["the", "Paris", "(", "paris"], np.arange(12, dtype=np.float32).reshape(4, 3))
    sentences = [Sentence(("The", "Paris", "-LRB-", "zzz"), ("a", "b", "c", "d"))]
    table = WordTable.build(emb, sentences, lowercase=True)
    assert np.array_equal(table.vectors[table.row_of["The"]], emb["the"])
    assert np.array_equal(table.vectors[table.row_of["Paris"]], emb["Paris"])  # exact form first
    assert np.array_equal(table.vectors[table.row_of["-LRB-"]], emb["("])
    assert table.row_of["zzz"] == UNK and table.vectors.shape == (5, 3)  # pad, unk + 3 found words
    assert table.coverage(sentences)["token_coverage"] == 0.75


def test_casing_classes():
    assert [casing_class(w) for w in ["the", "THE", "The", "1984", "1,000", "B52s", "-"]] == [1, 2, 3, 4, 5, 3, 7]


def test_length_buckets_cover_every_sentence_once():
    lengths = list(np.random.default_rng(0).integers(1, 50, 237))
    batches = length_bucketed_batches(lengths, 10, torch.Generator().manual_seed(0), pool_batches=5)
    assert sorted(i for b in batches for i in b) == list(range(237))
    assert max(len(b) for b in batches) == 10


def planted_task(rng, n_sentences):
    """Tag = the class of the PREVIOUS word (first token: 'S'), so a word alone says nothing about its tag."""
    vocab = [f"w{i}" for i in range(12)]
    klass = {w: "AB"[i % 2] for i, w in enumerate(vocab)}
    sentences = []
    for _ in range(n_sentences):
        words = [vocab[i] for i in rng.integers(0, len(vocab), rng.integers(3, 9))]
        sentences.append(Sentence(tuple(words), tuple(["S"] + [klass[w] for w in words[:-1]])))
    return vocab, sentences


def planted_data(seed, n_sentences, n_train, n_dev):
    """A planted task split into train/dev/test and a random 8-d embedding of its words."""
    rng = np.random.default_rng(seed)
    vocab, sentences = planted_task(rng, n_sentences)
    data = TaskData("pos", "ud", sentences[:n_train], sentences[n_train:n_train + n_dev], sentences[n_train + n_dev:])
    return data, Embeddings(vocab, rng.normal(0, 1, (len(vocab), 8)).astype(np.float32))


def test_a_tiny_tagger_learns_a_planted_rule():
    data, emb = planted_data(0, 220, 160, 30)
    inputs = StaticInputs(emb, data)
    before = inputs.vectors.copy()
    config = TaggerConfig(hidden=16, casing_dim=0, optimizer="adam", lr=0.05, batch_size=16, max_epochs=10, patience=3, dropout=0.0)
    result = train_tagger(data, inputs, config, seed=1, device="cpu")
    assert result["test"] > 0.97  # a tagger of the current word alone gets ~0.5 on A/B tokens
    assert result["dev_curve"][0]["dev_score"] < result["dev"]
    assert np.array_equal(inputs.vectors, before)  # the embedding stayed frozen


def test_predicted_tags_do_not_depend_on_the_scoring_batch_size():
    from staticvec.evaluate.tagging.features import encode
    from staticvec.evaluate.tagging.train import predict

    data, emb = planted_data(2, 120, 40, 40)
    inputs = StaticInputs(emb, data)
    torch.manual_seed(0)
    model = BiLSTMCRF(inputs.vectors, 3, hidden=8, casing_dim=2)  # untrained: near-ties everywhere
    encoded = encode(data.test, inputs.rows_for("test"), {"A": 0, "B": 1, "S": 2}, None)
    tags = [predict(model, encoded, TaggerConfig(eval_batch_size=size), "cpu", False, None) for size in (1, 7, 64, 512)]
    assert all(t == tags[0] for t in tags) and [len(t) for t in tags[0]] == [len(s.words) for s in data.test]


def test_frozen_vectors_are_a_buffer_and_unk_is_learnt():
    model = BiLSTMCRF(np.ones((4, 3), dtype=np.float32), n_tags=2, hidden=4, casing_dim=2)
    names = {n for n, _ in model.named_parameters()}
    assert "unk" in names and "vectors" not in names and "vectors" not in model.state_dict()
    with pytest.raises(ValueError):
        BiLSTMCRF(np.ones((4, 3), dtype=np.float32), n_tags=2, oov="mean")


@pytest.mark.parametrize("char_features", ["cnn", "lstm"])
def test_character_features_train_and_see_capitals(char_features):
    """With casing off and lower-cased lookup, only the characters tell 'Paris' from 'paris'."""
    rng = np.random.default_rng(1)
    sentences = []
    for _ in range(120):
        words = [str(w) for w in rng.choice(["paris", "Paris", "rome", "Rome"], rng.integers(2, 5))]
        sentences.append(Sentence(tuple(words), tuple("C" if w[0].isupper() else "l" for w in words)))
    data = TaskData("pos", "ud", sentences[:80], sentences[80:100], sentences[100:])
    emb = Embeddings(["paris", "rome"], rng.normal(0, 1, (2, 4)).astype(np.float32))
    config = TaggerConfig(hidden=8, casing_dim=0, char_features=char_features, char_dim=6, char_hidden=8, optimizer="adam",
                          lr=0.05, batch_size=16, max_epochs=8, patience=8, dropout=0.0)
    result = train_tagger(data, StaticInputs(emb, data), config, seed=0, device="cpu")
    assert result["test"] > 0.95


@pytest.mark.parametrize("p", [0.3, 0.5, 0.25])  # 0.3: torch.rand; 0.5 and 0.25: one random byte per value
def test_dropout_zeroes_p_and_rescales_the_rest_and_is_the_identity_in_eval(p):
    from staticvec.evaluate.tagging.model import Dropout

    torch.manual_seed(0)
    x = torch.full((400, 504), 2.0)
    drop = Dropout(p)
    y = drop(x)
    zeroed = (y == 0).float()
    assert abs(zeroed.mean().item() - p) < 0.01  # 201,600 draws: sd 0.001
    # every byte position of the int64 draws (and every column) is used alike: no biased byte
    assert (zeroed.view(-1, 8).mean(0) - p).abs().max().item() < 0.015
    assert (zeroed.mean(0) - p).abs().max().item() < 0.1
    assert torch.all((y == 0) | torch.isclose(y, torch.tensor(2.0 / (1 - p))))
    assert abs(y.mean().item() - 2.0) < 0.02  # expectation kept
    assert not torch.equal(drop(x), y)  # a fresh mask each call
    drop.eval()
    assert drop(x) is x
    assert Dropout(0.0).train()(x) is x
    assert (Dropout(0.5).byte_threshold, Dropout(0.3).byte_threshold) == (128, None)


@pytest.mark.parametrize("kind", ["sgd", "sgd_momentum", "adam"])
def test_light_optimizers_equal_torch_optim_bit_for_bit(kind):
    """staticvec.evaluate.optim does torch.optim's arithmetic (without importing torch._dynamo): same parameters
    after a run of steps with a changing learning rate and weight decay."""
    from staticvec.evaluate import optim

    torch.manual_seed(3)
    start = [torch.randn(7, 5), torch.randn(5), torch.randn(3)]  # the third has a gradient every other step
    data = [torch.randn(16, 7) for _ in range(6)]
    runs = []
    for module in (torch.optim, optim):
        params = [p.clone().requires_grad_(True) for p in start]
        if kind == "adam":
            opt = module.Adam(params, lr=0.01, weight_decay=1e-3)
        else:
            opt = module.SGD(params, lr=0.05, momentum=0.9 if kind == "sgd_momentum" else 0.0, weight_decay=1e-3)
        for step, x in enumerate(data):
            for group in opt.param_groups:
                group["lr"] = group["lr"] / (1 + 0.05 * step)
            loss = torch.tanh(x @ params[0] + params[1]).pow(2).sum()
            if step % 2:
                loss = loss + params[2].pow(3).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        runs.append([p.detach() for p in params])
    for theirs, ours in zip(*runs):
        assert torch.equal(theirs, ours)
    assert not torch.equal(runs[1][0], start[0])  # it did move


def test_cpu_training_does_not_import_dynamo():
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from staticvec.evaluate.optim import Adam\n"
            "import torch\n"
            "p = torch.zeros(3, requires_grad=True); o = Adam([p], lr=0.1)\n"
            "(p - 1).pow(2).sum().backward(); o.step(); o.zero_grad()\n"
            "print('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_long_epochs_log_their_progress(monkeypatch, caplog):
    import logging

    import staticvec.evaluate.tagging.train as train_module

    monkeypatch.setattr(train_module, "PROGRESS_SECONDS", 0.0)  # every batch: as an epoch of minutes would
    data, emb = planted_data(0, 60, 40, 10)
    config = TaggerConfig(hidden=8, casing_dim=0, optimizer="adam", lr=0.05, batch_size=16, max_epochs=1, patience=1, dropout=0.0)
    with caplog.at_level(logging.INFO, logger=train_module.__name__):
        train_tagger(data, StaticInputs(emb, data), config, seed=1, device="cpu")
    lines = [r.getMessage() for r in caplog.records if "sentences, loss/token" in r.getMessage()]
    assert len(lines) == 3 and lines[-1].startswith("epoch 1: 40/40 sentences")  # 40 sentences in batches of 16


def _bf16_batch():
    data, emb = planted_data(2, 40, 30, 5)
    inputs = StaticInputs(emb, data)
    tag_ids = {t: i for i, t in enumerate(data.tagset())}
    from staticvec.evaluate.tagging.features import collate, encode

    batch = collate(encode(data.train[:8], inputs.rows_for("train"), tag_ids, None), False)
    model = BiLSTMCRF(inputs.vectors, len(tag_ids), hidden=8, casing_dim=2).eval()  # no dropout: same emissions each call
    return model, batch


def test_under_autocast_the_crf_runs_in_float32(monkeypatch):
    """Under a bf16 autocast (the tagger's fast path) the CRF's loss and Viterbi path are exactly those of
    float32 arithmetic on the same emissions; its forward recursion is a matmul, which autocast would
    otherwise compute in bf16 (any CPU: a bf16 matmul runs everywhere, if slowly without AVX-512)."""
    model, batch = _bf16_batch()
    emissions = model.emissions(batch)  # float32, outside autocast
    monkeypatch.setattr(model, "emissions", lambda batch: emissions)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model.loss(batch, reduction="sum")
        path = model.decode(batch)
    assert torch.equal(loss, -model.crf(emissions, batch["tags"], mask=batch["mask"], reduction="sum"))
    assert path == model.crf.decode(emissions, mask=batch["mask"])


@pytest.mark.skipif(not cpu_bf16_lstm()[0], reason="this CPU has no bf16 LSTM (oneDNN needs AVX-512)")
def test_under_bf16_autocast_the_lstm_runs_in_bf16_and_the_emissions_come_back_float32():
    model, batch = _bf16_batch()
    seen = []
    model.lstm.forward_lstms[0].register_forward_hook(lambda module, args, out: seen.append(out[0].dtype))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        emissions = model.emissions(batch)
    assert seen and set(seen) == {torch.bfloat16} and emissions.dtype == torch.float32


def test_tagger_dtype_is_the_shared_policy_less_what_the_cpu_lstm_cannot_do(monkeypatch):
    from staticvec import device as device_module
    from staticvec.evaluate.tagging import model as model_module

    cpu = torch.device("cpu")
    monkeypatch.setattr(device_module, "cpu_native_bf16", lambda flags=None: (True, "cpu flags avx512_bf16"))
    monkeypatch.setattr(device_module, "measured_bf16_speedup", lambda cache_dir=None: 2.9)
    monkeypatch.setattr(model_module, "cpu_bf16_lstm", lambda: (True, "ok"))
    assert tagger_dtype(cpu, "auto") == ("bfloat16", "cpu flags avx512_bf16; bf16 matmul measured 2.90x fp32 (>= 1.15)")
    assert tagger_dtype(cpu, "bfloat16") == ("bfloat16", "forced")
    assert tagger_dtype(cpu, "float32") == ("float32", "forced")
    monkeypatch.setattr(device_module, "measured_bf16_speedup", lambda cache_dir=None: 0.7)
    assert tagger_dtype(cpu, "auto")[0] == "float32"
    monkeypatch.setattr(device_module, "measured_bf16_speedup", lambda cache_dir=None: 2.9)
    monkeypatch.setattr(model_module, "cpu_bf16_lstm", lambda: (False, "no bf16 LSTM here"))
    name, reason = tagger_dtype(cpu, "auto")
    assert name == "float32" and reason.endswith("but no bf16 LSTM here")
    with pytest.raises(StaticvecError, match="tagging.tagger.dtype bfloat16: no bf16 LSTM here; use auto or float32"):
        tagger_dtype(cpu, "bfloat16")
    with pytest.raises(StaticvecError, match="tagging.tagger.dtype float16 is for CUDA only"):
        tagger_dtype(cpu, "float16")


def test_tagger_records_the_dtype_it_used_and_learns_in_bf16_where_the_cpu_has_it():
    data, emb = planted_data(0, 220, 160, 30)
    settings = dict(hidden=16, casing_dim=0, optimizer="adam", lr=0.05, batch_size=16, max_epochs=10, patience=3, dropout=0.0)
    config = TaggerConfig(**settings, dtype="bfloat16")
    if not cpu_bf16_lstm()[0]:  # an AVX2-only CPU: the forced setting is refused before any work, by name
        with pytest.raises(StaticvecError, match="tagging.tagger.dtype bfloat16: torch's CPU LSTM"):
            train_tagger(data, StaticInputs(emb, data), config, seed=1, device="cpu")
        config = TaggerConfig(**settings, dtype="float32")
    result = train_tagger(data, StaticInputs(emb, data), config, seed=1, device="cpu")
    assert result["dtype"] == {"requested": config.dtype, "used": config.dtype, "reason": "forced"}
    assert result["amp"] == (None if config.dtype == "float32" else "bfloat16")
    assert result["test"] > 0.97  # the planted rule is learnt (in bf16 where this CPU computes it)
    with pytest.raises(StaticvecError, match="dtype"):
        TaggerConfig.from_dict({"dtype": "int8"})


# ---------------------------------------------------------------- the CUDA path


def _char_batch(char_features):
    """A CPU model (casing and character features, no dropout) and one training batch of the planted task."""
    from staticvec.evaluate.tagging.features import char_vocabulary, collate, encode

    data, emb = planted_data(3, 40, 30, 5)
    inputs = StaticInputs(emb, data)
    tag_ids = {t: i for i, t in enumerate(data.tagset())}
    chars = char_vocabulary(data.train) if char_features != "none" else None
    batch = collate(encode(data.train[:12], inputs.rows_for("train"), tag_ids, chars), chars is not None)
    torch.manual_seed(1)
    model = BiLSTMCRF(inputs.vectors, len(tag_ids), hidden=8, casing_dim=3, dropout=0.0, char_features=char_features,
                      n_chars=len(chars) + 2 if chars else 0, char_dim=5, char_hidden=6)
    return model, batch


@cuda_test
@pytest.mark.parametrize("char_features", ["none", "cnn", "lstm"])
def test_a_tagger_step_on_cuda_equals_it_on_the_cpu(char_features):
    """Loss, gradients and Viterbi paths of one batch in fp32 (cuDNN's LSTM and convolution in full fp32)."""
    import copy

    cpu, batch = _char_batch(char_features)
    gpu = copy.deepcopy(cpu).to(DEVICE)
    gpu_batch = {k: v.to(DEVICE) for k, v in batch.items()}
    with exact_float32():
        losses = [m.loss(b, reduction="sum") for m, b in ((cpu, batch), (gpu, gpu_batch))]
        for loss in losses:
            loss.backward()
        paths = [m.decode(b) for m, b in ((cpu, batch), (gpu, gpu_batch))]
    torch.testing.assert_close(losses[1].cpu(), losses[0], rtol=1e-5, atol=1e-5)
    for (name, p), q in zip(cpu.named_parameters(), gpu.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, rtol=1e-3, atol=1e-5, msg=name)
    assert paths[1] == paths[0]


@cuda_test
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_under_cuda_autocast_the_lstm_runs_low_and_the_crf_in_float32(dtype, monkeypatch):
    if not ON_GPU:
        pytest.skip("CUDA autocast (the CPU's is tested above)")
    model, batch = _bf16_batch()
    model, batch = model.to(DEVICE), {k: v.to(DEVICE) for k, v in batch.items()}
    with exact_float32():
        fp32 = model.loss(batch, reduction="sum")
    seen = []
    model.lstm.forward_lstms[0].register_forward_hook(lambda module, args, out: seen.append(out[0].dtype))
    with torch.autocast("cuda", dtype=getattr(torch, dtype)):
        emissions = model.emissions(batch)
    # a low precision: torch's autocast wrapper of cuDNN's LSTM (aten/src/ATen/cudnn/AutocastRNN.cpp) has cast to
    # float16 whatever the autocast dtype in the releases read; benchmarks/gpu_check.py records which one it runs
    assert seen and set(seen) <= {torch.float16, torch.bfloat16} and emissions.dtype == torch.float32
    monkeypatch.setattr(model, "emissions", lambda batch: emissions)
    with torch.autocast("cuda", dtype=getattr(torch, dtype)):
        loss = model.loss(batch, reduction="sum")
        path = model.decode(batch)
    # the CRF on those emissions outside autocast: the same loss and path
    assert torch.equal(loss, -model.crf(emissions, batch["tags"], mask=batch["mask"], reduction="sum"))
    assert path == model.crf.decode(emissions, mask=batch["mask"])
    torch.testing.assert_close(loss, fp32, rtol=0.02, atol=0.05)  # a low-precision LSTM, not another model


@cuda_test
@pytest.mark.parametrize("dtype", ["auto", "float16"])
def test_the_tagger_learns_on_cuda(dtype):
    """The whole run on the device: auto is bf16 autocast on a GPU that has it (float16: with loss scaling)."""
    if dtype == "float16" and not ON_GPU:
        pytest.skip("float16 is for CUDA only")
    data, emb = planted_data(0, 220, 160, 30)
    config = TaggerConfig(hidden=16, casing_dim=0, optimizer="adam", lr=0.05, batch_size=16, max_epochs=10, patience=3,
                          dropout=0.0, dtype=dtype)
    result = train_tagger(data, StaticInputs(emb, data), config, seed=1, device=DEVICE)
    assert result["device"].startswith(DEVICE)
    if ON_GPU:
        assert result["amp"] == ("float16" if dtype == "float16" else "bfloat16")
    assert result["test"] > 0.97


@cuda_test
@pytest.mark.parametrize("char_features", ["cnn", "lstm"])
def test_a_tagger_with_dropout_and_characters_trains_on_cuda(char_features):
    """Dropout (its byte mask: p = 0.25) and a character CNN or LSTM on the device, in the dtype a GPU run takes:
    the planted task is still learnt (on the CPU: 0.98-1.0 over four seeds, 7-9 epochs)."""
    data, emb = planted_data(1, 260, 200, 30)
    config = TaggerConfig(hidden=32, casing_dim=0, char_features=char_features, char_dim=6, char_hidden=8,
                          optimizer="adam", lr=0.05, batch_size=16, max_epochs=15, patience=5, dropout=0.25,
                          dtype="auto")
    result = train_tagger(data, StaticInputs(emb, data), config, seed=2, device=DEVICE)
    assert result["test"] > 0.9


@cuda_test
@pytest.mark.parametrize("p", [0.3, 0.5])
def test_dropout_on_cuda_zeroes_p(p):
    from staticvec.evaluate.tagging.model import Dropout

    x = torch.full((400, 504), 2.0, device=DEVICE)
    y = Dropout(p)(x)
    assert y.device == x.device
    zeroed = (y == 0).float()
    assert abs(zeroed.mean().item() - p) < 0.01  # 201,600 draws: sd 0.001
    assert (zeroed.view(-1, 8).mean(0) - p).abs().max().item() < 0.015  # no biased byte of the int64 draws
    assert torch.all((y == 0) | torch.isclose(y, torch.tensor(2.0 / (1 - p), device=DEVICE)))


# ------------------------------------------------------------------ early stopping and the chosen epoch


@pytest.mark.parametrize("curve, patience, max_epochs, best, run, stopped_by", [
    ([0.5, 0.7, 0.6, 0.65, 0.69, 0.8, 0.7, 0.8, 0.79, 0.75, 0.9], 4, 100, 6, 10, "patience"),  # a tie (0.8) is no gain
    ([0.5, 0.6, 0.7, 0.8], 3, 4, 4, 4, "max_epochs"),                          # still rising at the cap
    ([0.9, 0.8, 0.8], 2, 100, 1, 3, "patience"),
    ([0.1, 0.2, 0.2, 0.3, 0.1], 2, 5, 4, 5, "max_epochs"),                     # one stale epoch when the cap came
])
def test_early_stopping_stops_at_the_right_epoch_of_a_planted_dev_curve(curve, patience, max_epochs, best, run, stopped_by):
    from staticvec.evaluate.tagging.train import EarlyStopping

    stopping, kept = EarlyStopping(patience, max_epochs), []
    for epoch, score in enumerate(curve, 1):
        if stopping.update(epoch, score):
            kept.append(epoch)
        if stopping.stop:
            break
    assert (stopping.best_epoch, stopping.epochs_seen, stopping.stopped_by) == (best, run, stopped_by)
    assert kept[-1] == best and stopping.best_score == max(curve[:run])
    assert stopping.describe()["converged"] is (stopped_by == "patience")


def test_the_chosen_epochs_weights_are_the_ones_evaluated():
    """A noisy run whose last epoch is worse than its best: dev scored again after training (with the weights
    that are tested) is the best epoch's point, not the last one's."""
    data, emb = planted_data(1, 220, 160, 30)
    config = TaggerConfig(hidden=16, casing_dim=0, optimizer="adam", lr=0.2, batch_size=8, max_epochs=12, patience=4,
                          dropout=0.3)
    result = train_tagger(data, StaticInputs(emb, data), config, seed=1, device="cpu")
    scores = [p["dev_score"] for p in result["dev_curve"]]
    assert result["best_epoch"] < result["epochs_run"] and scores[-1] < max(scores)  # the case is the one intended
    assert result["best_epoch"] == scores.index(max(scores)) + 1
    assert result["dev_rescored"] == result["dev"] == max(scores)
    assert result["dev_detail"]["score"] == result["dev_rescored"]


def test_the_papers_tagger_settings_converge_on_a_separable_toy_task():
    """Tag = the class of the word itself (separable from its vector alone): NCRF++'s SGD settings (lr 0.015
    decayed, batches of 10, summed loss, dropout 0.5, char CNN) reach a perfect dev score and stop on patience."""
    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(10)]
    klass = {w: "XY"[i % 2] for i, w in enumerate(vocab)}
    sentences = []
    for _ in range(160):
        words = [vocab[i] for i in rng.integers(0, len(vocab), rng.integers(3, 8))]
        sentences.append(Sentence(tuple(words), tuple(klass[w] for w in words)))
    data = TaskData("pos", "toy", sentences[:100], sentences[100:130], sentences[130:])
    emb = Embeddings(vocab, rng.normal(0, 1, (len(vocab), 8)).astype(np.float32))
    config = TaggerConfig(hidden=16, casing_dim=0, char_features="cnn", char_dim=8, char_hidden=8, max_epochs=100,
                          patience=5)
    assert (config.optimizer, config.lr, config.lr_decay, config.momentum, config.batch_size, config.loss_reduction,
            config.dropout) == ("sgd", 0.015, 0.05, 0.0, 10, "sum", 0.5)  # the defaults are NCRF++'s
    result = train_tagger(data, StaticInputs(emb, data), config, seed=3, device="cpu")
    convergence = result["convergence"]
    assert convergence["stopped_by"] == "patience" and convergence["converged"]
    assert convergence["epochs_run"] == convergence["best_epoch"] + 5 < 100
    assert result["dev"] == 1.0 and result["test"] == 1.0
