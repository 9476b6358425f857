"""The negative-sampling core: sampler, subsampling, windows, row-wise optimisers vs torch,
gradients of gathered rows vs autograd on the full table, clipping, checkpoint/resume."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
scipy_stats = pytest.importorskip("scipy.stats")

from cuda_fixtures import DEVICE, cuda_test  # noqa: E402
from student_fixtures import MemoryBlocks, random_block  # noqa: E402

from staticvec.train.bert_skipgram import BertSGParams, BertSkipGram  # noqa: E402
from staticvec.train.context2vec import C2VParams, ContextToVec  # noqa: E402
from staticvec.train.loop import optimisation_step, train  # noqa: E402
from staticvec.train.negative_sampling import UnigramSampler, context_windows, keep_probabilities  # noqa: E402
from staticvec.train.optimizer import Optimizer, learning_rate  # noqa: E402
from staticvec.train.student import Batch, Student  # noqa: E402
from staticvec.train.x2static import X2Static, X2StaticParams  # noqa: E402

torch.set_num_threads(1)


@pytest.mark.parametrize("power", [0.75, 0.5])
def test_negatives_follow_count_to_the_power(power):
    counts = np.array([5000, 1200, 300, 80, 20, 5, 1, 0])
    sampler = UnigramSampler(counts, power)
    expected = counts ** power / (counts ** power).sum()
    np.testing.assert_allclose(sampler.probabilities, expected)
    draws = sampler.draw(np.random.default_rng(0), 200_000)
    observed = np.bincount(draws, minlength=len(counts))
    assert observed[-1] == 0  # a zero count is never drawn
    _, p = scipy_stats.chisquare(observed[:-1], expected[:-1] * len(draws))
    assert p > 1e-3
    # the other power is rejected: the sampler does not just look uniform-ish
    other = 0.5 if power == 0.75 else 0.75
    wrong = counts[:-1] ** other / (counts[:-1] ** other).sum()
    _, p_wrong = scipy_stats.chisquare(observed[:-1], wrong * len(draws))
    assert p_wrong < 1e-6


def test_subsampling_keep_probabilities():
    counts = np.array([900, 90, 10])  # f = 0.9, 0.09, 0.01
    t = 0.01
    w2v = keep_probabilities(counts, t, "word2vec")
    np.testing.assert_allclose(w2v, [math.sqrt(1 / 90) + 1 / 90, math.sqrt(1 / 9) + 1 / 9, 1.0])
    mik = keep_probabilities(counts, t, "mikolov")
    np.testing.assert_allclose(mik, [math.sqrt(1 / 90), 1 / 3, 1.0])
    np.testing.assert_array_equal(keep_probabilities(counts, 0.0), [1, 1, 1])


def test_x2static_subsampling_rate_matches_the_formula():
    rng = np.random.default_rng(1)
    counts = np.array([4000, 400, 40, 4] + [4] * 26)
    block = random_block(rng, n_sent=3000, vocab=4, oov=False)  # words 0..3 only
    params = X2StaticParams(subsample_t=1e-3, negatives=1, batch_sentences=10_000, shuffle=False)
    model = X2Static(counts, 8, params)
    batch = next(model.batches(block, np.random.default_rng(2)))
    kept = np.bincount(batch.rows["U"][:, 0].numpy(), minlength=4)
    seen = np.bincount(block["word_ids"], minlength=4)
    expected = keep_probabilities(counts, 1e-3)[:4]
    assert expected[0] < 0.2 and expected[3] == 1.0
    np.testing.assert_allclose(kept / seen, expected, atol=0.03)


def test_context_windows_equal_a_loop():
    rng = np.random.default_rng(0)
    sentence_of = np.repeat(np.arange(7), rng.integers(1, 9, 7))
    for w in (1, 2, 5):
        got = context_windows(sentence_of, w)
        offsets = list(range(-w, 0)) + list(range(1, w + 1))
        for i in range(len(sentence_of)):
            for c, o in enumerate(offsets):
                j = i + o
                ok = 0 <= j < len(sentence_of) and sentence_of[j] == sentence_of[i]
                assert got[i, c] == (j if ok else -1)


def test_learning_rate_schedule():
    assert learning_rate(0.025, "linear", 0, 100) == 0.025
    assert learning_rate(0.025, "linear", 50, 100) == pytest.approx(0.0125)
    assert learning_rate(0.025, "linear", 100, 100, 1e-4) == pytest.approx(0.025e-4)
    assert learning_rate(0.001, "none", 99, 100) == 0.001


def test_lazy_adam_equals_torch_sparse_adam_and_dense_adam():
    g = torch.Generator().manual_seed(0)
    W0 = torch.randn(12, 5, generator=g)
    ours = W0.clone()
    emb = torch.nn.Embedding(12, 5, sparse=True)
    emb.weight.data.copy_(W0)
    ref = torch.optim.SparseAdam(emb.parameters(), lr=0.01)
    opt = Optimizer("adam")
    dense0 = torch.randn(3, 4, generator=g)
    dense = dense0.clone()
    dense_ref = dense0.clone().requires_grad_(True)
    ref_dense = torch.optim.Adam([dense_ref], lr=0.01)
    for step in range(6):
        rows = torch.randperm(12, generator=g)[: 3 + step % 3]
        grad = torch.randn(len(rows), 5, generator=g)
        opt.update("t", ours, grad, 0.01, rows=rows)
        emb.weight.grad = torch.sparse_coo_tensor(rows[None], grad, (12, 5), check_invariants=True)
        ref.step()
        dg = torch.randn(3, 4, generator=g)
        opt.update("d", dense, dg, 0.01)
        dense_ref.grad = dg.clone()
        ref_dense.step()
    torch.testing.assert_close(ours, emb.weight.data, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(dense, dense_ref.data, rtol=1e-5, atol=1e-6)


class _Quadratic(Student):
    """A toy model: loss = Σ (table rows · dense)², rows given per batch (with duplicates and padding)."""

    def __init__(self, V=9, d=4):
        g = torch.Generator().manual_seed(3)
        self.tables = {"T": torch.randn(V, d, generator=g)}
        self.dense = {"w": torch.randn(d, generator=g).requires_grad_(True)}
        self.device = "cpu"

    def batches(self, block, rng):  # the test hands it batches itself
        return iter(())

    def loss(self, batch, rows, dense):
        return ((rows["T"] @ dense["w"]) ** 2 * batch.data["scale"]).sum()


@pytest.mark.parametrize("clip, scope", [(None, "all"), (0.5, "all"), (0.5, "dense")])
def test_row_gradients_and_clipping_equal_autograd_on_the_full_table(clip, scope):
    model = _Quadratic()
    ids = torch.tensor([[1, 4, 4, -1], [7, 1, -1, -1]])  # duplicates accumulate, -1 is padding
    scale = torch.tensor([[1.0, 2.0, 0.5, 3.0], [1.5, 1.0, 2.0, 1.0]])
    batch = Batch(rows={"T": ids}, data={"scale": scale}, examples=2, words=2)
    T = model.tables["T"].clone().requires_grad_(True)
    w = model.dense["w"].detach().clone().requires_grad_(True)
    rows = torch.where((ids >= 0).unsqueeze(-1), T[ids.clamp(min=0)], torch.zeros(()))
    ((rows @ w) ** 2 * scale).sum().backward()
    if clip:
        torch.nn.utils.clip_grad_norm_([T, w] if scope == "all" else [w], clip)
    expected_T = T.detach() - 0.1 * T.grad
    expected_w = w.detach() - 0.1 * w.grad
    untouched = [0, 2, 3, 5, 6, 8]
    before = model.tables["T"][untouched].clone()
    optimisation_step(model, Optimizer("sgd"), batch, 0.1, clip, scope)
    torch.testing.assert_close(model.tables["T"], expected_T)
    torch.testing.assert_close(model.dense["w"].detach(), expected_w)
    assert torch.equal(model.tables["T"][untouched], before)


def test_padding_rows_do_not_age_lazy_adam_moments():
    model = _Quadratic()
    opt = Optimizer("adam")
    batch = Batch(rows={"T": torch.tensor([[2, -1]])}, data={"scale": torch.ones(1, 2)}, examples=1, words=1)
    optimisation_step(model, opt, batch, 0.01, None)
    m = opt.state["T"]["exp_avg"]
    assert m[2].abs().sum() > 0 and m[torch.arange(9) != 2].abs().sum() == 0


def _bert_sg(counts, seed=5):
    params = BertSGParams(dim=6, window=2, negatives=3, batch_centres=16)
    return BertSkipGram(counts, 8, params, seed=seed), params


@pytest.mark.parametrize("method", ["bert_sg", "x2static"])
def test_resumed_run_equals_uninterrupted_run(tmp_path, method):
    rng = np.random.default_rng(0)
    blocks = [random_block(rng) for _ in range(5)]
    counts = np.arange(30, 0, -1) * 10

    def make():
        if method == "bert_sg":
            return _bert_sg(counts)
        p = X2StaticParams(negatives=3, batch_sentences=8, subsample_t=1e-2)
        return X2Static(counts, 8, p, seed=5), p

    model, params = make()
    settings = params.loop_settings()
    settings.epochs = 2
    full = train(model, MemoryBlocks(blocks), settings, seed=11, progress=False)
    assert full["words"] == 2 * sum(int((b["word_ids"] >= 0).sum()) for b in blocks)

    ckpt = tmp_path / "ckpt.pt"
    settings.checkpoint_every = 0  # a checkpoint after every block
    interrupted, _ = make()
    with pytest.raises(KeyboardInterrupt):
        train(interrupted, MemoryBlocks(blocks, fail_after=3), settings, seed=11, checkpoint=ckpt, progress=False)
    assert ckpt.exists()
    resumed, _ = make()
    rec = train(resumed, MemoryBlocks(blocks), settings, seed=11, checkpoint=ckpt, progress=False)
    for name in model.tables:
        assert torch.equal(model.tables[name], resumed.tables[name])
    for name in model.dense:
        assert torch.equal(model.dense[name], resumed.dense[name])
    assert rec["steps"] == full["steps"] and rec["words"] == full["words"]
    assert [c["loss_per_step"] for c in rec["curve"]] == [c["loss_per_step"] for c in full["curve"]]
    # a checkpoint of other settings is not resumed from
    settings.lr *= 2
    other, _ = make()
    rec2 = train(other, MemoryBlocks(blocks[:1]), settings, seed=11, checkpoint=ckpt, progress=False)
    assert rec2["curve"][0]["block"] == [0, 0]


def test_progress_counts_every_in_vocabulary_word():
    rng = np.random.default_rng(4)
    blocks = [random_block(rng) for _ in range(2)]
    counts = np.arange(30, 0, -1) * 10
    model, params = _bert_sg(counts)
    rec = train(model, MemoryBlocks(blocks), params.loop_settings(), seed=0, progress=False)
    assert rec["words"] == sum(int((b["word_ids"] >= 0).sum()) for b in blocks)
    assert rec["total_words_per_epoch"] == rec["words"]


CUDA_CASES = [
    ("bert_sg", {}),
    ("bert_sg", {"aggregation": "pairs"}),
    ("bert_sg", {"clip_scope": "all", "clip_norm": 0.5, "projection_bias": True}),
    ("c2v", {}),
    ("c2v", {"variant": "released", "projection_bias": True}),
    ("c2v", {"tie_w1": False, "optimizer": "adam", "lr": 0.01, "phi": "tanh"}),
    ("x2static", {}),
    ("x2static", {"context_mean": "all_pieces", "score_clamp": 0.5}),
]


@cuda_test
@pytest.mark.parametrize("method,options", CUDA_CASES, ids=[f"{m}-{'-'.join(map(str, o.values())) or 'default'}"
                                                            for m, o in CUDA_CASES])
def test_cuda_run_equals_cpu_run(method, options):
    """A student's CUDA run (the autograd engine on the device) against the same engine on the CPU: the same
    batches and draws, so the tables and dense tensors agree to fp32 rounding (CUDA sums a row's gradients
    with atomics, in another order). The fast CPU engine equals the autograd one (test_students_fast.py)."""
    rng = np.random.default_rng(0)
    blocks = [random_block(rng) for _ in range(2)]
    for block in blocks:  # stored features are float16
        block["word_vectors"] = block["word_vectors"].astype(np.float16)
        block["sentence_vectors"] = block["sentence_vectors"].astype(np.float16)
    counts = np.arange(30, 0, -1) * 10
    initial, tables, curves = {}, {}, {}  # by side, not device: the CPU stand-in compares two runs too
    for side, device in (("cpu", "cpu"), ("device", DEVICE)):
        if method == "x2static":
            p = X2StaticParams(negatives=3, batch_sentences=4, subsample_t=1e-2, engine="autograd", **options)
            model = X2Static(counts, 8, p, device=device, seed=5)
        else:
            cls, params_cls = (BertSkipGram, BertSGParams) if method == "bert_sg" else (ContextToVec, C2VParams)
            p = params_cls(dim=6, window=2, negatives=3, batch_centres=16, context_init="uniform", engine="autograd",
                           **options)
            model = cls(counts, 8, p, device=device, seed=5)
        initial[side] = {**{f"t.{k}": v.detach().cpu().clone() for k, v in model.tables.items()},
                           **{f"d.{k}": v.detach().cpu().clone() for k, v in model.dense.items()}}
        rec = train(model, MemoryBlocks(blocks), p.loop_settings(), seed=11, progress=False)
        assert rec["device"] == device and rec["engine"] == "autograd" and rec["steps"] >= 20
        tables[side] = {**{f"t.{k}": v.detach().cpu() for k, v in model.tables.items()},
                          **{f"d.{k}": v.detach().cpu() for k, v in model.dense.items()}}
        curves[side] = [c["loss_per_step"] for c in rec["curve"]]
        if side == "device":
            assert all(v.device.type == device.split(":")[0] for v in [*model.tables.values(), *model.dense.values()])
    for name, value in tables["cpu"].items():
        torch.testing.assert_close(initial["device"][name], initial["cpu"][name])  # the same start on both devices
        assert (value - initial["cpu"][name]).abs().max() > 1e-4, name  # and training moved it
        torch.testing.assert_close(tables["device"][name], value, rtol=1e-4, atol=1e-5, msg=name)
    np.testing.assert_allclose(curves["device"], curves["cpu"], rtol=1e-5)
