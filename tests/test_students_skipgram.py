"""BERT + Skip-gram and Context-to-Vec: windows, attention weights, aggregated context and the
losses against loops on a tiny case; the Figure 7 dump; planted topics learned."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from student_fixtures import MemoryBlocks, topic_accuracy, topic_blocks, topic_separation  # noqa: E402

from staticvec.train.bert_skipgram import BertSGParams, BertSkipGram, attention_weights, load_model  # noqa: E402
from staticvec.train.context2vec import C2VParams, ContextToVec  # noqa: E402
from staticvec.train.loop import _gather, train  # noqa: E402

torch.set_num_threads(1)
sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
D, DIM, V = 5, 4, 12


def tiny_block():
    """Two sentences; word id -1 is out of the vocabulary (it leaves the window); one word has no pieces."""
    rng = np.random.default_rng(0)
    ids = np.array([3, 1, -1, 4, 1, 5, 9, 2, 6, 5, 3], dtype=np.int64)
    offsets = np.array([0, 7, 11])
    pieces = np.ones(len(ids), np.int16)
    pieces[9] = 0  # no teacher vector: context only, never a centre
    return {"sentence_offsets": offsets, "word_ids": ids, "word_pieces": pieces,
            "word_vectors": rng.standard_normal((len(ids), D)).astype(np.float32)}


def expected_windows(block, window):
    """Per centre (block index): its context block indices, by a loop over in-vocabulary words."""
    ids, off = block["word_ids"], block["sentence_offsets"]
    out = {}
    for s in range(len(off) - 1):
        words = [i for i in range(off[s], off[s + 1]) if ids[i] >= 0]
        for p, i in enumerate(words):
            ctx = [words[q] for q in range(p - window, p + window + 1) if q != p and 0 <= q < len(words)]
            if block["word_pieces"][i] > 0 and ctx:
                out[i] = ctx
    return out


def one_batch(model, block):
    batch = next(model.batches(block, np.random.default_rng(1)))
    _, views = _gather(model, batch)
    return batch, views


def with_random_table(model, seed=2):
    g = torch.Generator().manual_seed(seed)
    model.tables["ctx"] = torch.randn(V, DIM, generator=g)  # zeros would make every attention uniform
    return model


def centres_of(batch, block):
    """Map the batch's rows back to block positions via the teacher vectors."""
    o = batch.data["o"].numpy()
    vecs = block["word_vectors"]
    return [int(np.flatnonzero((vecs == row).all(1))[0]) for row in o]


@pytest.mark.parametrize("aggregation", ["attention", "mean", "pairs"])
def test_bert_sg_loss_equals_a_loop(aggregation):
    block, window, k = tiny_block(), 2, 3
    params = BertSGParams(dim=DIM, window=window, negatives=k, aggregation=aggregation, shuffle=False,
                          batch_centres=100, attention_scale=0.7)
    model = with_random_table(BertSkipGram(np.arange(V, 0, -1), D, params, seed=0))
    batch, views = one_batch(model, block)
    centres = centres_of(batch, block)
    windows = expected_windows(block, window)
    assert sorted(centres) == sorted(windows) and 2 not in centres and 9 not in centres
    U = model.dense["U"].detach().numpy().astype(np.float64)
    Vt = model.tables["ctx"].numpy().astype(np.float64)
    rows = batch.rows["ctx"].numpy()
    total = 0.0
    for b, i in enumerate(centres):
        ctx_ids = [block["word_ids"][j] for j in windows[i]]
        assert sorted(rows[b, : 2 * window][rows[b, : 2 * window] >= 0]) == sorted(ctx_ids)
        u = U @ block["word_vectors"][i].astype(np.float64)
        s = np.array([Vt[c] @ u for c in ctx_ids])
        if aggregation == "pairs":
            negs = rows[b, 2 * window:].reshape(2 * window, k)
            valid = rows[b, : 2 * window] >= 0
            total += sum(-np.log(sig(Vt[c] @ u)) for c in ctx_ids)
            total += sum(-np.log(sig(-(Vt[n] @ u))) for n in negs[valid].ravel())
            continue
        a = np.exp(0.7 * s) / np.exp(0.7 * s).sum() if aggregation == "attention" else np.full(len(s), 1 / len(s))
        v = sum(a_j * Vt[c] for a_j, c in zip(a, ctx_ids))
        total += -np.log(sig(v @ u)) + sum(-np.log(sig(-(Vt[n] @ u))) for n in rows[b, 2 * window:])
    got = model.loss(batch, views, model.dense)
    assert float(got.detach()) == pytest.approx(total, rel=1e-5)


def test_attention_gradient_flows_into_the_context_table_and_projection():
    block = tiny_block()
    params = BertSGParams(dim=DIM, window=2, negatives=2, shuffle=False, batch_centres=100)
    model = with_random_table(BertSkipGram(np.arange(V, 0, -1), D, params, seed=0))
    batch, _ = one_batch(model, block)
    # finite differences of the loss w.r.t. one table entry vs autograd through the attention
    leaves, views = _gather(model, batch)
    loss = model.loss(batch, views, model.dense)
    loss.backward()
    uniq, leaf = leaves["ctx"]
    r = int(uniq[0])
    eps = 1e-3
    plus, minus = model.tables["ctx"].clone(), model.tables["ctx"].clone()
    plus[r, 1] += eps
    minus[r, 1] -= eps
    numeric = []
    for table in (plus, minus):
        model.tables["ctx"] = table
        _, v = _gather(model, batch)
        numeric.append(float(model.loss(batch, v, model.dense).detach()))
    assert float(leaf.grad[0, 1]) == pytest.approx((numeric[0] - numeric[1]) / (2 * eps), rel=1e-2, abs=1e-4)
    assert model.dense["U"].grad.abs().sum() > 0


@pytest.mark.parametrize("options", [
    {},
    {"contextualized_target": "centre"},
    {"contextualized_target": "static", "tie_w1": False, "phi": "tanh", "semantic_context": "mean"},
])
def test_c2v_losses_equal_a_loop(options):
    block, window, k = tiny_block(), 2, 3
    eta = (0.7, 1.3, 0.9)
    params = C2VParams(dim=DIM, window=window, negatives=k, shuffle=False, batch_centres=100, lam=0.4,
                       eta1=eta[0], eta2=eta[1], eta3=eta[2], **options)
    model = with_random_table(ContextToVec(np.arange(V, 0, -1), D, params, seed=0))
    batch, views = one_batch(model, block)
    centres = centres_of(batch, block)
    windows = expected_windows(block, window)
    Wo = model.dense["U"].detach().numpy().astype(np.float64)
    W2 = model.dense["W2"].detach().numpy().astype(np.float64)
    W1 = model.dense["W1"].detach().numpy().astype(np.float64) if "W1" in model.dense else Wo
    phi = np.tanh if options.get("phi") == "tanh" else (lambda x: x)
    Ut = model.tables["ctx"].numpy().astype(np.float64)
    rows = batch.rows["ctx"].numpy()
    vec = block["word_vectors"].astype(np.float64)
    total = 0.0
    for b, i in enumerate(centres):
        ctx = windows[i]
        o = vec[i]
        u = Wo @ o
        summed = sum(Ut[block["word_ids"][j]] for j in ctx)
        if options.get("semantic_context") == "mean":
            summed = summed / len(ctx)
        L1 = -np.log(sig(summed @ u))
        o_bar = np.mean([vec[j] for j in ctx], axis=0)
        v_context = 0.4 * (W1 @ o) + 0.4 * (W2 @ phi(o_bar))
        target = Ut[block["word_ids"][i]] if params.contextualized_target == "static" else u
        L2 = -np.log(sig(v_context @ target))
        negs = rows[b, 2 * window: 2 * window + k]
        L3 = sum(-np.log(sig(-(Ut[n] @ u))) for n in negs)
        total += eta[0] * L1 + eta[1] * L2 + eta[2] * L3
    got = model.loss(batch, views, model.dense)
    assert float(got.detach()) == pytest.approx(total, rel=1e-5)


@pytest.mark.parametrize("engine", ["autograd", "fast"])
def test_c2v_default_contextualized_loss_shapes_the_output_table(engine):
    """Issue 16, item 1: with the defaults every loss reaches u' (the evaluated table): dL2/du' != 0.

    L2 alone (eta1 = eta3 = 0) trains; the centre words' rows of u' must move. With
    ``contextualized_target: centre`` (Eq. 6 as printed, tied W1) L2 involves W_o and W2 only."""
    block = tiny_block()
    moved = {}
    for target in (None, "centre"):
        options = {} if target is None else {"contextualized_target": target}
        params = C2VParams(dim=DIM, window=2, negatives=2, batch_centres=4, eta1=0.0, eta3=0.0, engine=engine,
                           **options)
        model = with_random_table(ContextToVec(np.arange(V, 0, -1), D, params, seed=0))
        before = model.tables["ctx"].clone()
        batch, views = one_batch(model, block)
        loss = model.loss(batch, views, model.dense)
        grad, = torch.autograd.grad(loss, views["ctx"])
        if target is None:
            assert float(grad.abs().sum()) > 1e-6  # dL2/du' != 0 at the default
        else:
            assert float(grad.abs().sum()) == 0.0
        train(model, MemoryBlocks([block]), params.loop_settings(), seed=1, progress=False)
        moved[target] = float((model.tables["ctx"] - before).abs().sum())
    assert moved[None] > 1e-4 and moved["centre"] == 0.0


def test_c2v_released_variant_mixes_centre_and_context():
    block, window, k = tiny_block(), 2, 2
    params = C2VParams(variant="released", dim=DIM, window=window, negatives=k, shuffle=False, batch_centres=100,
                       projection_bias=True)
    model = with_random_table(ContextToVec(np.arange(V, 0, -1), D, params, seed=0))
    assert set(model.dense) == {"U", "b"}
    with torch.no_grad():
        model.dense["b"] += 0.3
    batch, views = one_batch(model, block)
    centres = centres_of(batch, block)
    windows = expected_windows(block, window)
    W = model.dense["U"].detach().numpy().astype(np.float64)
    b_ = model.dense["b"].detach().numpy().astype(np.float64)
    Ut = model.tables["ctx"].numpy().astype(np.float64)
    rows = batch.rows["ctx"].numpy()
    vec = block["word_vectors"].astype(np.float64)
    total = 0.0
    for b, i in enumerate(centres):
        ctx = windows[i]
        u = W @ (0.5 * vec[i] + 0.5 * np.mean([vec[j] for j in ctx], axis=0)) + b_
        total += sum(-np.log(sig(Ut[block["word_ids"][j]] @ u)) for j in ctx)
        negs = rows[b, 2 * window:].reshape(2 * window, k)[rows[b, : 2 * window] >= 0]
        total += sum(-np.log(sig(-(Ut[n] @ u))) for n in negs.ravel())
    assert float(model.loss(batch, views, model.dense).detach()) == pytest.approx(total, rel=1e-5)


def test_attention_dump_of_a_saved_model(tmp_path):
    params = BertSGParams(dim=DIM, window=2, negatives=2, attention_scale=0.5)
    model = with_random_table(BertSkipGram(np.arange(V, 0, -1), D, params, seed=0))
    words = [f"w{i}" for i in range(V)]
    model.save_model(tmp_path / "model.pt", words, {"name": "tiny"})
    saved = load_model(tmp_path / "model.pt")
    sentence = ["w3", "w1", "zzz", "w4", "w7"]  # zzz: out of the vocabulary, dropped like in training
    vectors = np.random.default_rng(3).standard_normal((5, D)).astype(np.float32)
    out = attention_weights(saved, sentence, vectors)
    assert out["words"] == ["w3", "w1", "w4", "w7"] and out["dropped"] == ["zzz"]
    U = model.dense["U"].detach().numpy()
    Vt = model.tables["ctx"].numpy()
    kept = [0, 1, 3, 4]
    for i, wi in enumerate(kept):
        u = U @ vectors[wi]
        ctx = [j for j in range(4) if j != i and abs(j - i) <= 2]
        s = np.array([0.5 * Vt[int(sentence[kept[j]][1:])] @ u for j in ctx])
        a = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        for j in range(4):
            if j in ctx:
                assert out["weights"][i][j] == pytest.approx(a[ctx.index(j)], rel=1e-5)
            else:
                assert out["weights"][i][j] is None


@pytest.mark.parametrize("cls, params", [
    (BertSkipGram, BertSGParams(dim=8, window=3, negatives=5, batch_centres=32, lr=0.02, epochs=4)),
    (ContextToVec, C2VParams(dim=8, window=3, negatives=5, batch_centres=32, lr=0.02, epochs=4)),
])
def test_planted_topics_are_learned(cls, params):
    rng = np.random.default_rng(0)
    blocks, directions = topic_blocks(rng, topics=4, vocab=40, dim=16, noise=0.3)
    model = cls(np.full(40, 100), 16, params, seed=1)
    rec = train(model, MemoryBlocks(blocks), params.loop_settings(), seed=2, progress=False)
    curve = [c["loss_per_step"] for c in rec["curve"]]
    assert np.mean(curve[-3:]) < 0.8 * curve[0]
    # the context table's rows of a topic's words point the same way: project the topic directions
    # through the learned centre map and check each word's nearest projected topic
    # (the table starts at zero: no structure before training)
    table = model.tables["ctx"].numpy()
    assert topic_separation(table, 4) > 0.15
    U = model.dense["U"].detach().numpy()
    assert topic_accuracy(table, directions @ U.T) >= 0.7  # chance: 0.25
