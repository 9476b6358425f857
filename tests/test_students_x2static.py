"""X2Static: E_ctx of every target (sent and para, the three context means) against a hand
computation with a tiny random BERT and GPT-2, the loss against a loop, planted topics learned."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from student_fixtures import MemoryBlocks, topic_accuracy, topic_blocks, topic_separation  # noqa: E402
from teacher_fixtures import small_shard, small_vocab, tiny_bert, tiny_gpt2  # noqa: E402

from staticvec.corpus.shards import iter_records  # noqa: E402
from staticvec.teacher.align import align  # noqa: E402
from staticvec.teacher.features import FeatureSpec  # noqa: E402
from staticvec.teacher.store import write_shard_features  # noqa: E402
from staticvec.train.loop import train  # noqa: E402
from staticvec.train.teacher_blocks import StoredFeatures  # noqa: E402
from staticvec.train.x2static import X2Static, X2StaticParams  # noqa: E402

torch.set_num_threads(1)
MODES = ("exclude_target", "all_words", "all_pieces")


def run_alone(teacher, words):
    """Brute force: one input through the model; last-layer piece states and piece -> word."""
    al = align(teacher.tokenizer, [words], teacher.family != "gpt2")
    ids, pw = al.pieces(0)
    with torch.inference_mode():
        out = teacher.encoder(torch.as_tensor(ids)[None], output_hidden_states=True)
    return out.hidden_states[-1][0].numpy().astype(np.float64), pw


def hand_contexts(teacher, shard, context, vocab):
    """(target vocabulary id, E_ctx per mode) for every in-vocabulary word of every training sentence."""
    paragraphs, current = [], None
    for r in iter_records(shard):
        if (r.article, r.paragraph) != current:
            paragraphs.append([])
            current = (r.article, r.paragraph)
        paragraphs[-1].append((r.keep, r.tokens))
    out = []
    for para in paragraphs:
        units = [[s] for s in para] if context == "sentence" else [para]
        for unit in units:
            words = [w for _, toks in unit for w in toks]
            h, pw = run_alone(teacher, words)
            start = 0
            for keep, toks in unit:
                idx = range(start, start + len(toks))
                start += len(toks)
                if not keep:
                    continue
                vecs = np.stack([h[pw == k].mean(0) for k in idx])
                own_pieces = np.isin(pw, list(idx))
                if context == "sentence":  # the sentence is the whole input: every piece, specials included
                    pieces_mean = h.mean(0)
                else:
                    pieces_mean = h[own_pieces].mean(0) if len(unit) > 1 else h.mean(0)
                for k, w in enumerate(toks):
                    if w not in vocab.index:
                        continue
                    others = np.delete(vecs, k, axis=0)
                    out.append((vocab.index[w], {"exclude_target": others.mean(0), "all_words": vecs.mean(0),
                                                 "all_pieces": pieces_mean}))
    return out


@pytest.mark.parametrize("family", ["bert", "gpt2"])
@pytest.mark.parametrize("context", ["sentence", "paragraph"])
def test_context_vectors_equal_hand_computation(tmp_path, family, context):
    teacher = tiny_bert() if family == "bert" else tiny_gpt2()
    shard = small_shard(tmp_path / "00000.tsv.gz")
    vocab = small_vocab()
    spec = FeatureSpec(context=context, layers=(-1,), sentence_vectors=True, vector_dtype="float32",
                       special_tokens=family != "gpt2")
    write_shard_features(teacher, shard, tmp_path / "f", spec, vocab=vocab, part_sentences=1000, progress=False)
    expected = hand_contexts(teacher, shard, context, vocab)
    counts = np.asarray(vocab.counts)
    for mode in MODES:
        params = X2StaticParams(context_mean=mode, subsample_t=0, shuffle=False, batch_sentences=10_000, negatives=2)
        model = X2Static(counts, teacher.hidden_size, params)
        source = StoredFeatures([tmp_path / "f"], model.feature_keys)
        (_, block), = list(source.blocks())
        batch = next(model.batches(block, np.random.default_rng(0)))
        targets = batch.rows["U"][:, 0].numpy()
        assert targets.tolist() == [t for t, _ in expected]
        want = np.stack([e[mode] for _, e in expected])
        np.testing.assert_allclose(batch.data["ctx"].numpy(), want, atol=1e-5, err_msg=mode)


def test_default_context_is_eq3_the_mean_over_every_word_of_the_sentence():
    """Eq. 3: E_ctx(S, w_t) = 1/|S| Σ_{w∈S} M(S, w), the target's own vector included (issue 16, item 5)."""
    vectors = np.array([[1.0, 0.0], [0.0, 2.0], [4.0, 4.0], [3.0, -1.0], [1.0, 1.0]], dtype=np.float32)
    block = {"sentence_offsets": np.array([0, 3, 5]), "word_ids": np.array([0, 1, 2, 3, -1]),
             "word_pieces": np.array([1, 1, 1, 1, 1], dtype=np.int16), "word_vectors": vectors}
    params = X2StaticParams(subsample_t=0, shuffle=False, negatives=1)  # context_mean: the default
    model = X2Static(np.full(4, 10), 2, params)
    batch = next(model.batches(block, np.random.default_rng(0)))
    assert batch.rows["U"][:, 0].tolist() == [0, 1, 2, 3]  # the OOV word is context, never a target
    want = np.stack([vectors[:3].mean(0)] * 3 + [vectors[3:].mean(0)])
    np.testing.assert_allclose(batch.data["ctx"].numpy(), want, rtol=1e-6)
    # the named option leaves the target out
    params = X2StaticParams(subsample_t=0, shuffle=False, negatives=1, context_mean="exclude_target")
    batch = next(X2Static(np.full(4, 10), 2, params).batches(block, np.random.default_rng(0)))
    np.testing.assert_allclose(batch.data["ctx"].numpy()[0], vectors[1:3].mean(0), rtol=1e-6)


def test_loss_equals_a_loop():
    rng = np.random.default_rng(0)
    params = X2StaticParams(negatives=3, score_clamp=None)
    model = X2Static(np.ones(6), 4, params)
    rows = torch.as_tensor(rng.standard_normal((5, 4, 4)))  # 5 targets: target row + 3 negatives
    ctx = torch.as_tensor(rng.standard_normal((5, 4)))
    from staticvec.train.student import Batch

    got = model.loss(Batch(rows={}, data={"ctx": ctx}, examples=5, words=5), {"U": rows}, {})
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    per = []
    for n in range(5):
        c = ctx[n].numpy()
        loss = -np.log(sig(rows[n, 0].numpy() @ c))
        loss += sum(-np.log(sig(-(rows[n, k].numpy() @ c))) for k in range(1, 4))
        per.append(loss)
    assert float(got) == pytest.approx(np.mean(per), rel=1e-6)
    # the released code's clamp: scores beyond ±value give constant terms
    clamped = X2Static(np.ones(6), 4, X2StaticParams(negatives=3, score_clamp=0.1))
    assert float(clamped.loss(Batch({}, {"ctx": ctx * 100}, 5, 5), {"U": rows}, {})) == pytest.approx(
        np.log(1 + np.exp(-0.1)) + 3 * np.log(1 + np.exp(-0.1)), rel=0.2)


def test_planted_topics_are_learned():
    rng = np.random.default_rng(0)
    blocks, directions = topic_blocks(rng, topics=4, vocab=40, dim=16)
    counts = np.full(40, 100)
    params = X2StaticParams(negatives=5, subsample_t=0, lr=0.05, epochs=6, batch_sentences=16)
    model = X2Static(counts, 16, params, seed=1)
    rec = train(model, MemoryBlocks(blocks), params.loop_settings(), seed=2, progress=False)
    curve = [c["loss_per_step"] for c in rec["curve"]]
    assert np.mean(curve[-3:]) < 0.75 * curve[0]
    # U_w points to its topic's direction (the only thing a context without the target tells)
    assert topic_accuracy(model.tables["U"].numpy(), directions) >= 0.95
    assert topic_separation(model.tables["U"].numpy(), 4) > 0.15
    untrained = X2Static(counts, 16, params, seed=1)
    assert topic_accuracy(untrained.tables["U"].numpy(), directions) < 0.5
