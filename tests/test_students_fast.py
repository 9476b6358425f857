"""The students' fast CPU engine (hand-written gradients in numba kernels) against the autograd
engine (torch autograd on the gathered rows, the reference): same batches and draws, so whole runs
must agree to float rounding for every method and option; runs are repeatable for a thread
count; a resumed fast run equals an uninterrupted one; float16 features are read exactly."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
numba = pytest.importorskip("numba")

from student_fixtures import MemoryBlocks, random_block  # noqa: E402

from staticvec.train.bert_skipgram import BertSGParams, BertSkipGram  # noqa: E402
from staticvec.train.context2vec import C2VParams, ContextToVec  # noqa: E402
from staticvec.train.kernels import _F16_TO_F32, fast_engine_threads, feature_view, gather_rows  # noqa: E402
from staticvec.train.loop import train  # noqa: E402
from staticvec.train.x2static import X2Static, X2StaticParams  # noqa: E402

torch.set_num_threads(1)
COUNTS = np.arange(30, 0, -1) * 10

SG = dict(dim=6, window=2, negatives=3, batch_centres=16, context_init="uniform")
CASES = [
    ("bert_sg", {"aggregation": "attention", "attention_scale": 0.7}),
    ("bert_sg", {"aggregation": "mean"}),
    ("bert_sg", {"aggregation": "pairs"}),  # clip_norm 5 on U bites here (dense scope)
    ("bert_sg", {"clip_scope": "all", "clip_norm": 0.5}),
    ("bert_sg", {"optimizer": "adam", "projection_bias": True, "loss_reduction": "mean", "lr": 0.01}),
    ("c2v", {}),
    ("c2v", {"contextualized_target": "centre"}),
    ("c2v", {"variant": "released"}),
    ("c2v", {"contextualized_target": "static", "semantic_context": "mean", "phi": "tanh"}),
    ("c2v", {"tie_w1": False, "optimizer": "adam", "lr": 0.01}),
    ("c2v", {"clip_scope": "all", "clip_norm": 0.5, "eta1": 0.3, "lam": 0.7, "contextualized_target": "static"}),
    ("x2static", {}),
    ("x2static", {"context_mean": "exclude_target"}),
    ("x2static", {"context_mean": "all_pieces", "score_clamp": 0.5}),
    ("x2static", {"optimizer": "sgd", "lr": 0.05}),
]


def make(method, options, engine, seed=3):
    if method == "x2static":
        p = X2StaticParams(negatives=3, batch_sentences=8, subsample_t=0.01, engine=engine, **options)
        return X2Static(COUNTS, 8, p, seed=seed), p
    if method == "bert_sg":
        p = BertSGParams(**SG, engine=engine, **options)
        return BertSkipGram(COUNTS, 8, p, seed=seed), p
    p = C2VParams(**SG, engine=engine, **options)
    return ContextToVec(COUNTS, 8, p, seed=seed), p


def blocks(n=3, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    out = [random_block(rng, n_sent=60) for _ in range(n)]
    for b in out:
        b["word_vectors"] = b["word_vectors"].astype(dtype)
        b["sentence_vectors"] = b["sentence_vectors"].astype(dtype)
    return out


def run(method, options, engine, data, seed=5, **kw):
    model, params = make(method, options, engine)
    settings = params.loop_settings()
    for k, v in kw.items():
        setattr(settings, k, v)
    record = train(model, MemoryBlocks(data), settings, seed=seed, progress=False)
    return model, record


def params_of(model):
    return {**{f"t.{k}": v.detach().clone() for k, v in model.tables.items()},
            **{f"d.{k}": v.detach().clone() for k, v in model.dense.items()}}


@pytest.mark.parametrize("method,options", CASES, ids=[f"{m}-{'-'.join(map(str, o.values())) or 'default'}"
                                                        for m, o in CASES])
def test_fast_engine_equals_autograd(method, options):
    data = blocks()
    ref, rec_ref = run(method, options, "autograd", data)
    fast, rec_fast = run(method, options, "fast", data)
    assert rec_ref["engine"] == "autograd" and rec_fast["engine"] == "fast"
    assert rec_fast["steps"] == rec_ref["steps"] > 20 and rec_fast["words"] == rec_ref["words"]
    a, b = params_of(ref), params_of(fast)
    for name in a:
        moved = (a[name] - params_of(make(method, options, "autograd")[0])[name]).abs().max()
        assert moved > 1e-4, name  # training moved it: the comparison is not between two initialisations
        torch.testing.assert_close(b[name], a[name], rtol=1e-4, atol=2e-6, msg=name)
    np.testing.assert_allclose([c["loss_per_step"] for c in rec_fast["curve"]],
                               [c["loss_per_step"] for c in rec_ref["curve"]], rtol=1e-5)


def test_the_fast_engine_reads_float16_features_exactly():
    bits = np.arange(65536, dtype=np.uint16)
    finite = np.isfinite(bits.view(np.float16))
    np.testing.assert_array_equal(_F16_TO_F32[finite], bits.view(np.float16)[finite].astype(np.float32))
    rng = np.random.default_rng(1)
    vec = rng.standard_normal((50, 7)).astype(np.float16)
    idx = rng.integers(0, 50, 20)
    out = np.empty((20, 7), np.float32)
    gather_rows(feature_view(vec), idx, out)
    np.testing.assert_array_equal(out, vec[idx].astype(np.float32))
    # a whole run on float16 features equals the autograd engine on the same features
    data = blocks(2, np.float16)
    for method, options in [("bert_sg", {}), ("c2v", {}), ("x2static", {})]:
        ref, _ = run(method, options, "autograd", data)
        fast, _ = run(method, options, "fast", data)
        for name, value in params_of(ref).items():
            torch.testing.assert_close(params_of(fast)[name], value, rtol=1e-4, atol=2e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_fast_runs_repeat_bit_for_bit_for_a_thread_count(threads):
    before = fast_engine_threads()
    try:
        fast_engine_threads(threads)
        data = blocks(2)
        for method in ("bert_sg", "c2v", "x2static"):
            first, _ = run(method, {}, "fast", data)
            second, _ = run(method, {}, "fast", data)
            other_seed, _ = run(method, {}, "fast", data, seed=6)
            for name, value in params_of(first).items():
                assert torch.equal(params_of(second)[name], value), (method, name)
            assert any(not torch.equal(params_of(other_seed)[n], v) for n, v in params_of(first).items())
    finally:
        fast_engine_threads(before)


@pytest.mark.parametrize("method", ["bert_sg", "c2v", "x2static"])
def test_resumed_fast_run_equals_uninterrupted_run(tmp_path, method):
    data = blocks(4)
    full, rec_full = run(method, {}, "fast", data, epochs=2)
    model, params = make(method, {}, "fast")
    settings = params.loop_settings()
    settings.epochs, settings.checkpoint_every = 2, 0
    ckpt = tmp_path / "ckpt.pt"
    with pytest.raises(KeyboardInterrupt):
        train(model, MemoryBlocks(data, fail_after=3), settings, seed=5, checkpoint=ckpt, progress=False)
    resumed, _ = make(method, {}, "fast")
    rec = train(resumed, MemoryBlocks(data), settings, seed=5, checkpoint=ckpt, progress=False)
    for name, value in params_of(full).items():
        assert torch.equal(params_of(resumed)[name], value), name
    assert rec["steps"] == rec_full["steps"]
    assert [c["loss_per_step"] for c in rec["curve"]] == [c["loss_per_step"] for c in rec_full["curve"]]


def test_unknown_engine_is_an_error():
    from staticvec.errors import StaticvecError

    for cls in (BertSGParams, C2VParams, X2StaticParams):
        with pytest.raises(StaticvecError, match="engine"):
            cls(engine="gpu")


def test_fast_lazy_adam_equals_torch_sparse_adam():
    """The kernels' row update (update_rows) against torch.optim.SparseAdam, rows repeating across steps."""
    from staticvec.train.kernels import update_rows

    rng = np.random.default_rng(3)
    table = rng.standard_normal((10, 4)).astype(np.float32)
    weight = torch.nn.Parameter(torch.tensor(table))
    opt = torch.optim.SparseAdam([weight], lr=0.01, betas=(0.9, 0.999), eps=1e-8)
    m, v = np.zeros_like(table), np.zeros_like(table)
    for step in range(1, 6):
        rows = np.unique(rng.integers(0, 10, 4)).astype(np.int64)
        grads = rng.standard_normal((len(rows), 4)).astype(np.float32)
        opt.zero_grad()
        weight.grad = torch.sparse_coo_tensor(torch.tensor(rows)[None], torch.tensor(grads), (10, 4))
        opt.step()
        update_rows(table, rows, grads, 0.01, 1.0, True, m, v, step, 0.9, 0.999, 1e-8)
        np.testing.assert_allclose(table, weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    untouched = np.setdiff1d(np.arange(10), np.flatnonzero(m.any(1)))
    assert len(untouched) and (m[untouched] == 0).all()  # rows never in a step keep no moments (lazy)
