"""GloVe: the update's gradient against autograd, recovery of a planted log-bilinear matrix,
and resuming from a checkpoint."""

import dataclasses
import json

import numpy as np
import pytest
import torch
from cuda_fixtures import DEVICE, ON_GPU, cuda_test

from staticvec.cli import main
from staticvec.cooc.store import vocab_fingerprint, write_store
from staticvec.corpus.vocab import Vocabulary
from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.train.glove import GloveConfig, init_state, train_glove, weighting

ENGINES = ["numba", "torch"]
# The fused CUDA kernel runs on the GPU where there is one (the tests marked cuda, in benchmarks/gpu_check.sh), else in
# numba's CUDA simulator on the CPU: the same kernel source, thread by thread (slow: small problems below).
KERNEL_DEVICE = "cuda" if ON_GPU and torch.cuda.is_available() else "cpu"
kernel_test = pytest.mark.cuda


def engine_device(engine):
    return KERNEL_DEVICE if engine == "kernel" else "cpu"


def make_vocab(n):
    return Vocabulary([f"w{k}" for k in range(n)], [1000 - k for k in range(n)])


def store_of(tmp_path, vocab, i, j, x, name="x.cooc"):
    write_store(tmp_path / name, i, j, x, len(vocab), vocab_fingerprint(vocab))
    return tmp_path / name


def autograd_step(state, i, j, x, cfg):
    """Gradients of 0.5·f(x)(w_i·w̃_j + b_i + b̃_j − log x)² by torch autograd."""
    v = state.vocab_size
    w = torch.tensor(state.W[i], dtype=torch.float64, requires_grad=True)
    c = torch.tensor(state.W[v + j], dtype=torch.float64, requires_grad=True)
    bw = torch.tensor(float(state.b[i]), dtype=torch.float64, requires_grad=True)
    bc = torch.tensor(float(state.b[v + j]), dtype=torch.float64, requires_grad=True)
    f = float(weighting(x, cfg.x_max, cfg.alpha))
    loss = 0.5 * f * (w @ c + bw + bc - np.log(x)) ** 2
    loss.backward()
    return w.grad.numpy(), c.grad.numpy(), float(bw.grad), float(bc.grad)


@pytest.mark.parametrize("engine", [*ENGINES, pytest.param("kernel", marks=kernel_test)])
@pytest.mark.parametrize("bias_lr_scaled", [True, False])
@pytest.mark.parametrize("x_value", [0.7, 3.0, 25.0])  # below and above x_max (f < 1 and f = 1)
def test_one_step_is_adagrad_on_the_autograd_gradient(tmp_path, engine, bias_lr_scaled, x_value):
    vocab = make_vocab(6)
    cfg = GloveConfig(dim=5, iterations=1, x_max=10.0, lr=0.05, bias_lr_scaled=bias_lr_scaled, seed=7, batch_size=8,
                      device=engine_device(engine))
    i, j = 2, 4
    before = init_state(len(vocab), cfg.dim, cfg.seed)
    gw, gc, gbw, gbc = autograd_step(before, i, j, x_value, cfg)
    after = train_glove(store_of(tmp_path, vocab, [i], [j], [x_value]), vocab, cfg, engine=engine)
    v, lr = len(vocab), cfg.lr
    bias_lr = lr if bias_lr_scaled else 1.0
    if engine in ("numba", "kernel"):  # glove.c: the step uses the accumulator before this gradient (= 1)
        step = lambda g, scale: scale * g  # noqa: E731
    else:  # torch engine: the accumulator includes this batch's squared gradient
        step = lambda g, scale: scale * g / np.sqrt(1 + (scale * g) ** 2)  # noqa: E731
    np.testing.assert_allclose(before.W[i] - after.W[i], step(gw, lr), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(before.W[v + j] - after.W[v + j], step(gc, lr), rtol=1e-4, atol=1e-7)
    assert before.b[i] - after.b[i] == pytest.approx(step(gbw, bias_lr), rel=1e-4)
    assert before.b[v + j] - after.b[v + j] == pytest.approx(step(gbc, bias_lr), rel=1e-4)
    np.testing.assert_allclose(after.gW[i], 1 + (lr * gw) ** 2, rtol=1e-5)
    assert after.gb[v + j] == pytest.approx(1 + (bias_lr * gbc) ** 2, rel=1e-5)
    untouched = [k for k in range(2 * v) if k not in (i, v + j)]
    np.testing.assert_array_equal(after.W[untouched], before.W[untouched])
    assert after.losses[0] == pytest.approx(0.5 * float(weighting(x_value, 10, 0.75)) * (
        before.W[i] @ before.W[v + j] + before.b[i] + before.b[v + j] - np.log(x_value)) ** 2, rel=1e-4)


def test_gradient_clipping_bounds_each_component(tmp_path):
    vocab = make_vocab(3)
    cfg = GloveConfig(dim=4, iterations=1, x_max=1.0, lr=0.05, grad_clip=1e-4, seed=1)
    before = init_state(3, 4, 1)
    after = train_glove(store_of(tmp_path, vocab, [0], [1], [1e6]), vocab, cfg, engine="numba")
    np.testing.assert_allclose(np.abs(before.W[0] - after.W[0]), 0.05 * 1e-4, atol=2e-8)  # float32 steps


def planted(n_words=30, rank=4, seed=0):
    """X = exp(U Ũᵀ + c + c̃) on every pair: a log-bilinear matrix GloVe can fit exactly."""
    rng = np.random.default_rng(seed)
    u, ut = rng.normal(0, 0.6, (n_words, rank)), rng.normal(0, 0.6, (n_words, rank))
    log_x = u @ ut.T + rng.normal(0, 0.3, n_words)[:, None] + rng.normal(0, 0.3, n_words)[None, :] + 1.5
    i, j = np.meshgrid(np.arange(n_words), np.arange(n_words), indexing="ij")
    return i.ravel(), j.ravel(), np.exp(log_x).ravel(), log_x.ravel()


@pytest.mark.parametrize("engine", ENGINES)
def test_planted_low_rank_matrix_is_recovered(tmp_path, engine):
    i, j, x, log_x = planted()
    vocab = make_vocab(30)
    cfg = GloveConfig(dim=8, iterations=150, x_max=10.0, seed=3, batch_size=128)
    state = train_glove(store_of(tmp_path, vocab, i, j, x), vocab, cfg, engine=engine)
    v = state.vocab_size
    fitted = np.einsum("nd,nd->n", state.W[i], state.W[v + j]) + state.b[i] + state.b[v + j]
    f = weighting(x, cfg.x_max, cfg.alpha)
    assert state.losses[-1] < 0.02 * state.losses[0]
    assert np.sqrt(np.sum(f * (fitted - log_x) ** 2) / np.sum(f)) < 0.05  # weighted RMS error in log X
    assert np.corrcoef(fitted, log_x)[0, 1] > 0.999


@cuda_test
def test_planted_low_rank_matrix_on_cuda(tmp_path):
    i, j, x, log_x = planted()
    vocab = make_vocab(30)
    cfg = GloveConfig(dim=8, iterations=150, seed=3, batch_size=128, device=DEVICE)
    state = train_glove(store_of(tmp_path, vocab, i, j, x), vocab, cfg, engine="torch")
    v = state.vocab_size
    fitted = np.einsum("nd,nd->n", state.W[i], state.W[v + j]) + state.b[i] + state.b[v + j]
    assert state.losses[-1] < 0.02 * state.losses[0]
    assert np.corrcoef(fitted, log_x)[0, 1] > 0.999


@cuda_test
@pytest.mark.parametrize("bias_lr_scaled,grad_clip", [(True, None), (False, 0.05)])
def test_cuda_engine_equals_the_torch_engine_on_the_cpu(tmp_path, bias_lr_scaled, grad_clip):
    """The CUDA engine is the torch engine on another device. With the whole store in one batch the batch's
    permutation (drawn by the device's generator) changes nothing but the order of the index_add_ sums (CUDA:
    atomics), so both devices must agree to fp32 rounding, iteration after iteration; grad_clip 0.05 bites."""
    i, j, x, _ = planted(n_words=40, seed=2)
    vocab = make_vocab(40)
    path = store_of(tmp_path, vocab, i, j, x)
    runs = {}  # by side, not device: the CPU stand-in compares two runs too
    for side, device in (("cpu", "cpu"), ("device", DEVICE)):
        cfg = GloveConfig(dim=12, iterations=6, seed=4, batch_size=len(i), bias_lr_scaled=bias_lr_scaled,
                          grad_clip=grad_clip, device=device)
        runs[side] = train_glove(path, vocab, cfg, engine="torch", work_dir=tmp_path / side)
    cpu, gpu = runs["cpu"], runs["device"]
    start = init_state(len(vocab), 12, 4)
    assert np.abs(cpu.W - start.W).max() > 1e-2  # training moved the vectors: not two initialisations compared
    for name in ("W", "b", "gW", "gb"):
        np.testing.assert_allclose(getattr(gpu, name), getattr(cpu, name), rtol=1e-4, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(gpu.losses, cpu.losses, rtol=1e-5)


@pytest.mark.parametrize("engine", ENGINES)
def test_resumed_run_equals_uninterrupted_run(tmp_path, engine):
    i, j, x, _ = planted(n_words=20, seed=1)
    vocab = make_vocab(20)
    path = store_of(tmp_path, vocab, i, j, x)
    cfg = GloveConfig(dim=6, iterations=7, seed=5, threads=1, batch_size=64, checkpoint_every=2)
    whole = train_glove(path, vocab, cfg, engine=engine)
    ckpt = tmp_path / "run.ckpt.npz"
    interrupted = train_glove(path, vocab, cfg, checkpoint_path=ckpt, engine=engine, stop_after=3)
    assert interrupted.iteration == 3 and ckpt.exists()
    resumed = train_glove(path, vocab, cfg, checkpoint_path=ckpt, engine=engine)
    assert resumed.iteration == 7
    np.testing.assert_array_equal(resumed.W, whole.W)
    np.testing.assert_array_equal(resumed.gb, whole.gb)
    assert resumed.losses == whole.losses
    # a checkpoint of other settings is not resumed: the run starts afresh
    other = GloveConfig(dim=6, iterations=7, seed=5, threads=1, batch_size=64, lr=0.1)
    fresh = train_glove(path, vocab, other, engine=engine)
    again = train_glove(path, vocab, other, checkpoint_path=ckpt, engine=engine)
    np.testing.assert_array_equal(again.W, fresh.W)


def test_vocabulary_must_match_the_store(tmp_path):
    vocab = make_vocab(5)
    path = store_of(tmp_path, vocab, [0, 1], [1, 0], [1.0, 1.0])
    with pytest.raises(StaticvecError, match="counted over 5 words"):
        train_glove(path, make_vocab(6), GloveConfig(dim=3, iterations=1))
    renamed = Vocabulary(["z"] + vocab.words[1:], vocab.counts)
    with pytest.raises(StaticvecError, match="different vocabulary"):
        train_glove(path, renamed, GloveConfig(dim=3, iterations=1))


def test_cli_writes_vectors_and_record(tmp_path):
    i, j, x, _ = planted(n_words=25, seed=2)
    vocab = make_vocab(25)
    vocab.save(tmp_path / "vocab.tsv")
    store_of(tmp_path, vocab, i, j, x)
    out = tmp_path / "glove" / "vectors.bin"
    assert main(["train", "glove", "--cooc", str(tmp_path / "x.cooc"), "--vocab", str(tmp_path / "vocab.tsv"),
                 "--out", str(out), "--dim", "6", "--iterations", "12", "--threads", "2", "--device", "cpu",
                 "--grad-clip", "100", "--no-bias-lr-scaled", "--checkpoint-every", "5"]) == 0
    emb = Embeddings.load(out)
    assert emb.words == vocab.words and emb.dim == 6 and np.isfinite(emb.vectors).all()
    record = json.loads((tmp_path / "glove" / "vectors.json").read_text())
    assert record["hyperparameters"]["grad_clip"] == 100 and record["hyperparameters"]["bias_lr_scaled"] is False
    costs = record["cost_per_iteration"]
    assert len(costs) == 12 and costs[-1] < costs[0]
    assert not (tmp_path / "glove" / "vectors.bin.ckpt.npz").exists()  # removed once the run is complete


def test_out_of_core_shuffle_is_a_permutation_and_trains_the_same_model(tmp_path):
    from staticvec.cooc.store import CoocStore
    from staticvec.train.glove import shuffle_store

    i, j, x, log_x = planted(n_words=60, seed=4)  # 3,600 entries
    vocab = make_vocab(60)
    path = store_of(tmp_path, vocab, i, j, x)
    store = CoocStore(path)
    small = shuffle_store(store, tmp_path / "small.cooc", seed=2, memory_gb=1e-6)  # 1,024-entry buckets
    assert small.meta["shuffle"]["buckets"] == 4 and not small.sorted
    small.verify()
    rec, orig = np.asarray(small.records), np.asarray(store.records)
    assert not np.array_equal(rec, orig)
    np.testing.assert_array_equal(np.sort(rec, order=["i", "j"]), orig)
    with pytest.raises(StaticvecError, match="shuffled"):
        small.lookup(0, 0)
    cfg = GloveConfig(dim=8, iterations=60, seed=3, shuffle_memory_gb=1e-6)
    state = train_glove(path, vocab, cfg, work_dir=tmp_path / "work")
    fitted = np.einsum("nd,nd->n", state.W[i], state.W[60 + j]) + state.b[i] + state.b[60 + j]
    assert np.corrcoef(fitted, log_x)[0, 1] > 0.99
    assert list((tmp_path / "work").iterdir()) == []  # the shuffled copy is removed after the run


def _train_cli(tmp_path, name, *flags):
    out = tmp_path / name / "vectors.bin"
    assert main(["train", "glove", "--cooc", str(tmp_path / "x.cooc"), "--vocab", str(tmp_path / "vocab.tsv"),
                 "--out", str(out), "--dim", "8", "--iterations", "3", "--threads", "2", "--device", "cpu",
                 "--seed", "7", *flags]) == 0
    return out.read_bytes(), json.loads(out.with_name("vectors.json").read_text())


def test_same_seed_gives_the_same_vectors_byte_for_byte(tmp_path):
    # 120 x 120 pairs = 14,400 entries = 4 blocks: with two threads both would run (Hogwild) and race
    i, j, x, _ = planted(n_words=120, seed=5)
    vocab = make_vocab(120)
    vocab.save(tmp_path / "vocab.tsv")
    store_of(tmp_path, vocab, i, j, x)
    first, record = _train_cli(tmp_path, "a")
    second, _ = _train_cli(tmp_path, "b")
    assert first == second
    assert record["threads"] == 1 and record["deterministic"] is True  # --threads 2 asked, one used
    _, fast = _train_cli(tmp_path, "c", "--no-deterministic")
    assert fast["threads"] == 2 and fast["deterministic"] is False


def test_every_vocabulary_word_is_written_as_glove_c_does(tmp_path):
    # w3 and w4 have no co-occurrence entry: glove.c still writes their (initial) vectors
    vocab = make_vocab(5)
    vocab.save(tmp_path / "vocab.tsv")
    store_of(tmp_path, vocab, [0, 1, 1, 2], [1, 0, 2, 1], [3.0, 3.0, 1.0, 1.0])
    out = tmp_path / "all" / "vectors.bin"
    common = ["train", "glove", "--cooc", str(tmp_path / "x.cooc"), "--vocab", str(tmp_path / "vocab.tsv"),
              "--dim", "4", "--iterations", "2", "--device", "cpu"]
    assert main([*common, "--out", str(out)]) == 0
    assert Embeddings.load(out).words == vocab.words
    assert json.loads(out.with_name("vectors.json").read_text())["vocab"]["written"] == 5
    seen = tmp_path / "seen" / "vectors.bin"
    assert main([*common, "--out", str(seen), "--only-seen"]) == 0
    assert Embeddings.load(seen).words == ["w0", "w1", "w2"]


def test_figure_2a_trains_fewer_than_300_dimensions_for_50_iterations():
    """SemGloVe §5.3: 'For dimensions smaller than 300, the iteration number is set to 50, otherwise 100'
    (paper.yaml); the laptop default keeps one iteration count for every size."""
    from pathlib import Path

    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    repo = Path(__file__).resolve().parents[1]
    paper = Workflow(load_config([repo / "config" / "config.yaml", repo / "config" / "paper.yaml"]), repo)
    default = Workflow(load_config([repo / "config" / "config.yaml"]), repo)
    sweep = paper.sheet.sweeps["semglove_dim"]
    for base in sweep.bases:
        for dim in sweep.values:
            vid = sweep.variant_id(base, dim)
            got = paper.params(vid)  # the resolved row: what the rule passes as --params
            assert got["dim"] == dim and got["iterations"] == (50 if dim < 300 else 100), vid
            assert "small_dim_iterations" not in got
            assert default.params(vid)["iterations"] == default.config["methods"][default.spec(vid).method]["iterations"]
    assert paper.params("glove")["iterations"] == 100


def test_params_json_builds_the_dataclass_and_flags_override_it(tmp_path):
    """--params (the rule's resolved row) builds GloveParams; a flag overrides a key; an unknown key is an error naming it."""
    import pytest

    from staticvec.cli import build_parser
    from staticvec.errors import StaticvecError

    vocab = make_vocab(5)
    vocab.save(tmp_path / "vocab.tsv")
    store_of(tmp_path, vocab, [0, 1, 1, 2], [1, 0, 2, 1], [3.0, 3.0, 1.0, 1.0])
    common = ["train", "glove", "--cooc", str(tmp_path / "x.cooc"), "--vocab", str(tmp_path / "vocab.tsv"), "--device", "cpu"]
    (tmp_path / "p.json").write_text('{"dim": 4, "iterations": 2, "x_max": 5}')
    out = tmp_path / "a" / "vectors.bin"
    assert main([*common, "--params", "@" + str(tmp_path / "p.json"), "--iterations", "3", "--out", str(out)]) == 0
    hp = json.loads(out.with_name("vectors.json").read_text())["hyperparameters"]
    assert (hp["dim"], hp["iterations"], hp["x_max"], hp["lr"]) == (4, 3, 5.0, 0.05)  # lr: the dataclass's default
    args = build_parser().parse_args([*common, "--params", '{"dim": 4, "window": 5}', "--out", str(out)])
    with pytest.raises(StaticvecError, match="unknown hyper-parameter.*window"):  # a workflow key: not the trainer's
        args.handler(args)


def glove_c_epoch(i, j, x, state, x_max, alpha, lr, bias_scale, clip):
    """glove.c's per-entry loop written out in float64, one entry after another (the reference
    for the compiled kernel, which computes the same in float32 with prefetching)."""
    v = state.vocab_size
    W, b, gW, gb = (a.astype(np.float64) for a in (state.W, state.b, state.gW, state.gb))
    cost = 0.0
    for l1, l2, xe in zip(i, np.asarray(j) + v, x):
        diff = W[l1] @ W[l2] + b[l1] + b[l2] - np.log(xe)
        fdiff = diff * min(1.0, (xe / x_max) ** alpha)
        cost += 0.5 * fdiff * diff
        g1, g2 = fdiff * W[l2], fdiff * W[l1]
        if clip:
            g1, g2 = np.clip(g1, -clip, clip), np.clip(g2, -clip, clip)
        g1, g2 = lr * g1, lr * g2
        u1, u2 = g1 / np.sqrt(gW[l1]), g2 / np.sqrt(gW[l2])
        gW[l1] += g1 * g1
        gW[l2] += g2 * g2
        W[l1] -= u1
        W[l2] -= u2
        gbias = fdiff * bias_scale
        b[l1] -= gbias / np.sqrt(gb[l1])
        b[l2] -= gbias / np.sqrt(gb[l2])
        gb[l1] += gbias * gbias
        gb[l2] += gbias * gbias
    return W, b, gW, gb, cost


def fused_kernel_epoch(i, j, x, order, state, x_max, alpha, lr, bias_scale, clip, workers=1, span=4096):
    """One launch of the fused CUDA kernel over the entries (one worker: one entry after another), the state updated
    in place as the CPU kernel does; returns (cost, entries updated)."""
    from staticvec.train.glove_cuda import FusedGlove

    records = np.empty(len(i), [("i", "<i4"), ("j", "<i4"), ("x", "<f4")])
    records["i"], records["j"], records["x"] = i, j, x
    engine = FusedGlove(state, KERNEL_DEVICE, workers=workers)
    result = engine.run(engine.entries(records), order, span, x_max, alpha, lr, bias_scale, clip)
    state.W[:], state.b[:], state.gW[:], state.gb[:] = engine.to_host()
    return result


@pytest.mark.parametrize("kernel", ["numba", pytest.param("cuda", marks=kernel_test)])
@pytest.mark.parametrize("clip", [0.0, 0.02])
def test_compiled_epoch_equals_glove_c_entry_by_entry(clip, kernel):
    """A whole epoch over entries that revisit the same rows (each step reads the previous ones'
    updates), in a dimension that is not a multiple of the SIMD width (nor of the CUDA kernel's lanes),
    with and without clipping: the CPU kernel on one thread, the fused CUDA kernel with one worker."""
    from staticvec.train.glove import _epoch_kernel

    rng = np.random.default_rng(11)
    n_words, n, dim = 7, 500, 37
    i = rng.integers(0, n_words, n).astype(np.int32)
    j = rng.integers(0, n_words, n).astype(np.int32)
    x = rng.choice([0.5, 2.0, 9.0, 40.0], n).astype(np.float32)
    state = init_state(n_words, dim, seed=3)
    state.W *= 30  # large enough that some gradient components pass the clip
    W, b, gW, gb, cost = glove_c_epoch(i, j, x, state, 10.0, 0.75, 0.05, 0.05, clip)
    if clip:
        assert np.abs(np.sqrt(gW - 1) / 0.05).max() > clip  # the clip was reached
    costs, counts = np.zeros(1), np.zeros(1, np.int64)
    if kernel == "numba":
        _epoch_kernel(i, j, x, np.zeros(1, np.int64), 1, state.W, state.b, state.gW, state.gb, n_words,
                      10.0, 0.75, 0.05, 0.05, clip, costs, counts)
    else:
        costs[0], counts[0] = fused_kernel_epoch(i, j, x, np.zeros(1, np.int64), state, 10.0, 0.75, 0.05, 0.05, clip)
    assert counts[0] == n and costs[0] == pytest.approx(cost, rel=1e-4)
    np.testing.assert_allclose(state.W, W, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.b, b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.gW, gW, rtol=1e-4)
    np.testing.assert_allclose(state.gb, gb, rtol=1e-4)


# ---------------------------------------------------------------- shuffle: chunks (no shuffled copy)


def _small_runs(monkeypatch, records=256):
    """Runs of 256 records, so that a few thousand entries make several runs and chunks."""
    from staticvec.train import glove

    monkeypatch.setattr(glove, "_SOURCE_BLOCK", records)
    return glove


def test_chunks_visit_every_entry_once_an_iteration_in_whole_runs_and_a_fresh_order(tmp_path, monkeypatch):
    from staticvec.cooc.store import CoocStore

    glove = _small_runs(monkeypatch)
    i, j, x, _ = planted(n_words=60, seed=4)  # 3,600 entries: 15 runs of 256 (the last one 16)
    store = CoocStore(store_of(tmp_path, make_vocab(60), i, j, x))
    records = np.asarray(store.records)
    orders = {}
    for iteration in (0, 1):
        chunks = [(c, part) for c, part in glove.shuffled_chunks(store.records, 1024, seed=2, iteration=iteration)]
        assert [c for c, _ in chunks] == [0, 1, 2, 3] and all(len(part) <= 1024 for _, part in chunks)
        for _, part in chunks:  # each chunk is whole runs of the sorted store, permuted
            position = np.searchsorted(records["i"] * 60 + records["j"], part["i"] * 60 + part["j"])
            runs = np.unique(position // 256)
            assert len(part) == sum(min(256, len(records) - r * 256) for r in runs)
            assert not np.all(np.diff(position) > 0)
        order = np.concatenate([part for _, part in chunks])
        np.testing.assert_array_equal(np.sort(order, order=["i", "j"]), records)  # every entry exactly once
        again = np.concatenate([part for _, part in glove.shuffled_chunks(store.records, 1024, 2, iteration)])
        np.testing.assert_array_equal(again, order)  # a function of (seed, iteration): a resumed run repeats it
        orders[iteration] = order
    assert not np.array_equal(orders[0], orders[1])  # a fresh order every iteration


def test_chunks_iteration_is_glove_c_over_the_chunks_order(tmp_path, monkeypatch):
    """One thread, one iteration: the kernel updates entry after entry in exactly the chunks' order (the
    reference loop over that order gives the same parameters), and no shuffled copy is written."""
    from staticvec.cooc.store import CoocStore

    glove = _small_runs(monkeypatch)
    i, j, x, _ = planted(n_words=40, seed=6)  # 1,600 entries
    vocab = make_vocab(40)
    path = store_of(tmp_path, vocab, i, j, x)
    cfg = GloveConfig(dim=9, iterations=1, seed=8, threads=1, shuffle="chunks", shuffle_memory_gb=40000 * 2**-30)
    chunk = glove.chunk_records(cfg, 12)
    assert chunk == 512  # 40,000 bytes for two chunks of (2 x 12 + 8) bytes a record = 625 records: 2 runs of 256
    order = np.concatenate([part for _, part in glove.shuffled_chunks(CoocStore(path).records, chunk, cfg.seed, 0)])
    W, b, gW, gb, cost = glove_c_epoch(order["i"], order["j"], order["x"], init_state(40, 9, 8), cfg.x_max,
                                       cfg.alpha, cfg.lr, cfg.lr, 0.0)
    state = train_glove(path, vocab, cfg, work_dir=tmp_path / "work")
    np.testing.assert_allclose(state.W, W, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.b, b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.gW, gW, rtol=1e-4)
    assert state.losses[0] == pytest.approx(cost / len(order), rel=1e-4)
    assert not (tmp_path / "work").exists() or list((tmp_path / "work").iterdir()) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_chunks_recover_the_planted_matrix_and_resume_exactly(tmp_path, monkeypatch, engine):
    _small_runs(monkeypatch)
    i, j, x, log_x = planted()
    vocab = make_vocab(30)
    path = store_of(tmp_path, vocab, i, j, x)
    cfg = GloveConfig(dim=8, iterations=150, x_max=10.0, seed=3, batch_size=128, shuffle="chunks",
                      shuffle_memory_gb=8192 * 2**-30, checkpoint_every=50)
    state = train_glove(path, vocab, cfg, engine=engine, work_dir=tmp_path / "work")
    v = state.vocab_size
    fitted = np.einsum("nd,nd->n", state.W[i], state.W[v + j]) + state.b[i] + state.b[v + j]
    assert state.losses[-1] < 0.02 * state.losses[0]
    assert np.corrcoef(fitted, log_x)[0, 1] > 0.999
    ckpt = tmp_path / "run.ckpt.npz"
    train_glove(path, vocab, cfg, checkpoint_path=ckpt, engine=engine, stop_after=70, work_dir=tmp_path / "work")
    resumed = train_glove(path, vocab, cfg, checkpoint_path=ckpt, engine=engine, work_dir=tmp_path / "work")
    np.testing.assert_array_equal(resumed.W, state.W)
    assert resumed.losses == state.losses
    copy = train_glove(path, vocab, dataclasses.replace(cfg, shuffle="copy"), engine=engine)
    assert not np.array_equal(copy.W, state.W)  # another order of the updates: other vectors


def test_shuffle_is_checked_and_the_copy_fingerprint_is_the_one_before_the_option():
    import hashlib

    with pytest.raises(StaticvecError, match="shuffle must be one of copy, chunks"):
        GloveConfig(shuffle="in-place")
    cfg = GloveConfig(dim=7, seed=2)
    before = {"dim": 7, "x_max": 10.0, "alpha": 0.75, "lr": 0.05, "bias_lr_scaled": True, "grad_clip": None,
              "seed": 2, "device": "cpu", "batch_size": 1 << 16, "store": "abc"}  # GloveConfig's keys before `shuffle`
    assert cfg.fingerprint("abc") == hashlib.sha256(json.dumps(before, sort_keys=True).encode()).hexdigest()[:16]
    chunks = dataclasses.replace(cfg, shuffle="chunks")
    assert chunks.fingerprint("abc") != cfg.fingerprint("abc")
    assert chunks.fingerprint("abc") != dataclasses.replace(chunks, shuffle_memory_gb=1.0).fingerprint("abc")


def test_made_ahead_keeps_the_order_with_several_threads_and_no_more_than_workers_plus_one_results():
    import threading
    import time

    from staticvec.background import made_ahead

    lock, alive, most, makers = threading.Lock(), [0], [0], []

    def call(k):
        def make():
            makers.append(threading.get_ident())
            time.sleep(0.02 * (5 - k))  # later items finish first: the order must still be the calls'
            with lock:
                alive[0] += 1
                most[0] = max(most[0], alive[0])
            return k
        return make

    out = []
    for k in made_ahead((call(k) for k in range(6)), workers=3):
        out.append(k)
        time.sleep(0.01)
        with lock:
            alive[0] -= 1  # the caller is done with this result
    assert out == [0, 1, 2, 3, 4, 5] and most[0] <= 3 + 1
    assert threading.get_ident() not in makers and len(set(makers)) > 1  # made beside the caller, on several threads
    assert list(made_ahead(iter(()), workers=2)) == []

    def failing():
        raise ValueError("chunk 1")

    got = made_ahead(iter([lambda: 0, failing, lambda: 2]), workers=2)
    assert next(got) == 0
    with pytest.raises(ValueError, match="chunk 1"):
        next(got)


def test_chunks_prepared_on_several_threads_are_the_same_chunks_and_the_same_vectors(tmp_path, monkeypatch):
    """prepare_threads changes only the speed: the chunks (and, on one kernel thread, the trained parameters) are
    byte for byte those made one at a time; it is no part of the checkpoint's fingerprint."""
    from staticvec.cooc.store import CoocStore

    glove = _small_runs(monkeypatch)
    i, j, x, _ = planted(n_words=40, seed=6)
    vocab = make_vocab(40)
    path = store_of(tmp_path, vocab, i, j, x)
    records = CoocStore(path).records
    for iteration in (0, 3):
        one = list(glove.shuffled_chunks(records, 512, seed=2, iteration=iteration))
        for workers in (1, 3):
            many = list(glove.shuffled_chunks(records, 512, seed=2, iteration=iteration, workers=workers))
            assert [c for c, _ in many] == [c for c, _ in one] and len(one) > 2
            assert all(a.tobytes() == b.tobytes() for (_, a), (_, b) in zip(many, one))
    cfg = GloveConfig(dim=9, iterations=3, seed=8, threads=1, shuffle="chunks", shuffle_memory_gb=40000 * 2**-30)
    trained = [train_glove(path, vocab, dataclasses.replace(cfg, prepare_threads=p), work_dir=tmp_path / f"w{p}")
               for p in (1, 3)]
    assert trained[0].W.tobytes() == trained[1].W.tobytes() and trained[0].losses == trained[1].losses
    assert cfg.fingerprint("s") == dataclasses.replace(cfg, prepare_threads=4).fingerprint("s")
    with pytest.raises(StaticvecError, match="prepare_threads must be at least 1"):
        dataclasses.replace(cfg, prepare_threads=0)


# ---------------------------------------------------------------- the fused CUDA kernel (cuda_engine: kernel)


def kernel_cfg(**options):
    return GloveConfig(**{"device": KERNEL_DEVICE, "threads": 1, **options})


@kernel_test
def test_kernel_with_one_worker_equals_the_cpu_engine_on_the_planted_problem(tmp_path):
    """Same visiting order, one worker: the fused kernel's three iterations are the CPU engine's on one thread, to
    float32 rounding (the dot product is summed lane by lane); the cost of each iteration too."""
    i, j, x, _ = planted(n_words=12, seed=7)
    vocab = make_vocab(12)
    path = store_of(tmp_path, vocab, i, j, x)
    cfg = kernel_cfg(dim=6, iterations=3, seed=2, gpu_workers=1)
    cpu = train_glove(path, vocab, dataclasses.replace(cfg, device="cpu"), engine="numba", work_dir=tmp_path / "a")
    gpu = train_glove(path, vocab, cfg, engine="kernel", work_dir=tmp_path / "b")
    assert np.abs(cpu.W - init_state(12, 6, 2).W).max() > 1e-2  # the vectors moved
    for name in ("W", "b", "gW", "gb"):
        np.testing.assert_allclose(getattr(gpu, name), getattr(cpu, name), rtol=1e-4, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(gpu.losses, cpu.losses, rtol=1e-5)


@kernel_test
def test_kernel_iteration_is_glove_c_over_the_block_order_in_pieces(tmp_path, monkeypatch):
    """A store larger than the device's share (shuffle_memory_gb) goes up in pieces of the visiting order, gathered
    on the host: one iteration is glove.c's loop over the shuffled copy's blocks in the iteration's seeded order, and
    equals the run that holds the whole store on the device."""
    from staticvec.cooc.store import CoocStore
    from staticvec.train import glove

    monkeypatch.setattr(glove, "_BLOCK", 32)  # the visiting order's blocks (the CPU kernel's is compiled in)
    i, j, x, _ = planted(n_words=12, seed=8)  # 144 entries: 5 blocks, the last one short
    vocab = make_vocab(12)
    path = store_of(tmp_path, vocab, i, j, x)
    cfg = kernel_cfg(dim=5, iterations=1, seed=4, gpu_workers=1)
    shuffled = glove.shuffle_store(CoocStore(path), tmp_path / "order.cooc", cfg.seed, cfg.shuffle_memory_gb)
    records = np.asarray(shuffled.records)
    blocks = glove._block_order(len(records), cfg.seed, 0)
    assert not np.array_equal(blocks, np.sort(blocks))
    order = np.concatenate([records[k * 32 : (k + 1) * 32] for k in blocks])
    W, b, gW, gb, cost = glove_c_epoch(order["i"], order["j"], order["x"], init_state(12, 5, 4), cfg.x_max,
                                       cfg.alpha, cfg.lr, cfg.lr, 0.0)
    pieces = train_glove(path, vocab, dataclasses.replace(cfg, shuffle_memory_gb=64 * 12 * 2**-30), engine="kernel",
                         work_dir=tmp_path / "p")  # 64 entries a piece: 3 pieces
    whole = train_glove(path, vocab, cfg, engine="kernel", work_dir=tmp_path / "w")
    np.testing.assert_allclose(pieces.W, W, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(pieces.b, b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(pieces.gW, gW, rtol=1e-4)
    np.testing.assert_allclose(pieces.gb, gb, rtol=1e-4)
    assert pieces.losses[0] == pytest.approx(cost / len(order), rel=1e-4)
    for name in ("W", "b", "gW", "gb"):  # the same updates in the same order: the same bits
        assert getattr(pieces, name).tobytes() == getattr(whole, name).tobytes(), name


@kernel_test
def test_kernel_chunks_iteration_is_glove_c_over_the_chunks_order(tmp_path, monkeypatch):
    """``shuffle: chunks`` on the kernel: each permuted chunk goes up in turn, one worker updates in its order."""
    from staticvec.cooc.store import CoocStore

    glove = _small_runs(monkeypatch, records=64)
    i, j, x, _ = planted(n_words=16, seed=6)  # 256 entries: 4 runs of 64
    vocab = make_vocab(16)
    path = store_of(tmp_path, vocab, i, j, x)
    cfg = kernel_cfg(dim=5, iterations=1, seed=8, shuffle="chunks", shuffle_memory_gb=13000 * 2**-30, gpu_workers=1)
    chunk = glove.chunk_records(cfg, 12)
    assert chunk == 3 * 64  # 13,000 bytes for two chunks of 32 bytes a record: 3 runs a chunk, two chunks
    order = np.concatenate([part for _, part in glove.shuffled_chunks(CoocStore(path).records, chunk, cfg.seed, 0)])
    W, b, gW, gb, cost = glove_c_epoch(order["i"], order["j"], order["x"], init_state(16, 5, 8), cfg.x_max,
                                       cfg.alpha, cfg.lr, cfg.lr, 0.0)
    state = train_glove(path, vocab, cfg, engine="kernel", work_dir=tmp_path / "work")
    np.testing.assert_allclose(state.W, W, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.b, b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.gW, gW, rtol=1e-4)
    assert state.losses[0] == pytest.approx(cost / len(order), rel=1e-4)


@kernel_test
def test_kernel_workers_visit_every_entry_once_in_the_block_order(tmp_path):
    """Several workers (more than one thread block's, and a last block with spare warps): entries on disjoint rows
    make the result independent of how the workers interleave, so it must be glove.c's loop over them exactly."""
    n = 11
    i = np.arange(n, dtype=np.int32)
    j = ((np.arange(n) + 3) % n).astype(np.int32)
    x = np.linspace(0.5, 30.0, n).astype(np.float32)
    state = init_state(n, 5, seed=9)
    W, b, gW, gb, cost = glove_c_epoch(i, j, x, state, 10.0, 0.75, 0.05, 0.05, 0.0)
    order = np.array([2, 0, 1], np.int64)  # blocks of 4 entries, the last one short (3 entries)
    cost_kernel, seen = fused_kernel_epoch(i, j, x, order, state, 10.0, 0.75, 0.05, 0.05, 0.0, workers=5, span=4)
    assert seen == n and cost_kernel == pytest.approx(cost, rel=1e-5)
    np.testing.assert_allclose(state.W, W, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(state.b, b, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(state.gW, gW, rtol=1e-5)
    np.testing.assert_allclose(state.gb, gb, rtol=1e-5)


@kernel_test
@pytest.mark.skipif(KERNEL_DEVICE == "cpu", reason="150 iterations of Hogwild workers: minutes in numba's simulator")
def test_kernel_workers_recover_the_planted_matrix(tmp_path):
    """Hogwild: 32 workers update the shared rows at once and still fit the planted log-bilinear matrix."""
    i, j, x, log_x = planted()
    vocab = make_vocab(30)
    cfg = kernel_cfg(dim=8, iterations=150, seed=3, gpu_workers=32)
    state = train_glove(store_of(tmp_path, vocab, i, j, x), vocab, cfg, engine="kernel", work_dir=tmp_path)
    v = state.vocab_size
    fitted = np.einsum("nd,nd->n", state.W[i], state.W[v + j]) + state.b[i] + state.b[v + j]
    assert state.losses[-1] < 0.02 * state.losses[0]
    assert np.corrcoef(fitted, log_x)[0, 1] > 0.999


@kernel_test
def test_kernel_run_resumes_exactly(tmp_path):
    i, j, x, _ = planted(n_words=6, seed=1)
    vocab = make_vocab(6)
    path = store_of(tmp_path, vocab, i, j, x)
    cfg = kernel_cfg(dim=4, iterations=5, seed=5, gpu_workers=1, checkpoint_every=2)
    whole = train_glove(path, vocab, cfg, engine="kernel")
    ckpt = tmp_path / "run.ckpt.npz"
    train_glove(path, vocab, cfg, checkpoint_path=ckpt, engine="kernel", stop_after=2)
    resumed = train_glove(path, vocab, cfg, checkpoint_path=ckpt, engine="kernel")
    assert resumed.iteration == 5 and resumed.losses == whole.losses
    np.testing.assert_array_equal(resumed.W, whole.W)


@pytest.mark.skipif(KERNEL_DEVICE != "cpu", reason="numba's CUDA simulator only (the stand-in of the kernel tests)")
def test_simulated_threads_of_a_block_get_one_shared_array():
    """The kernel's lanes sum their partial dots through one shared array; numba's simulator allocated it unlocked,
    and lanes asking at once could get one each (the kernel test's lanes then stepped with different dots, once in
    CI). Here 16 threads ask at once, released together by a barrier with the GIL handed over every 10 µs, as in a
    launch: in each of 60 tries all must get the same array, and arrays asked for on two lines are two arrays.
    (numba 0.68's own method gave two or three arrays in about 3 tries of 10.)"""
    import sys
    import threading

    from staticvec.train.glove_cuda import cuda_module

    cuda_module("cpu")
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    def one_try(threads=16):
        shared, start, got = FakeCUDAShared(0), threading.Barrier(threads), [None] * threads

        def lane(k):
            start.wait()
            got[k] = (shared.array((3, 4), np.float32),
                      shared.array(4, np.int64))
        workers = [threading.Thread(target=lane, args=(k,)) for k in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return {id(a) for a, _ in got}, {id(c) for _, c in got}, got[0]

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        tries = [one_try() for _ in range(60)]
    finally:
        sys.setswitchinterval(switch)
    assert all(len(first) == 1 and len(second) == 1 for first, second, _ in tries)
    a, c = tries[0][2]
    assert (a.shape, a.dtype, c.shape, c.dtype) == ((3, 4), np.float32, (4,), np.int64)


def test_cuda_engine_is_a_named_option_and_not_part_of_the_fingerprint():
    from staticvec.train.glove import GloveParams

    with pytest.raises(StaticvecError, match="cuda_engine must be one of kernel, torch"):
        GloveConfig(cuda_engine="cublas")
    cfg = GloveConfig(dim=7)
    assert cfg.cuda_engine == "kernel" and GloveParams().config(1, 1, "cuda").cuda_engine == "kernel"
    torch_cfg = GloveParams(cuda_engine="torch", gpu_workers=64).config(1, 1, "cuda")
    assert (torch_cfg.cuda_engine, torch_cfg.gpu_workers) == ("torch", 64)
    # the engine is the fingerprint's suffix (train_glove): the old runs' checkpoints keep their fingerprint
    assert dataclasses.replace(cfg, cuda_engine="torch", gpu_workers=3).fingerprint("s") == cfg.fingerprint("s")


def test_bandwidth_limit_counts_the_bytes_an_update_moves():
    from staticvec.train.glove_cuda import bytes_per_entry, entries_per_s_limit

    # 4 rows of 300 float32 and 4 float32 scalars, each read and written, and the 12-byte entry
    assert bytes_per_entry(300) == 2 * (4 * 300 * 4 + 4 * 4) + 12 == 9644
    assert entries_per_s_limit(300, 4.8e12) == pytest.approx(4.977e8, rel=1e-3)
