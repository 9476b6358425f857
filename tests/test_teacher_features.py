"""The extraction path against brute force: word means, attention blocks, masked/unmasked top-k,
paragraph context, batching, and resumed shards."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from teacher_fixtures import TEXT, small_shard, small_vocab, tiny_bert, tiny_gpt2, write_shard  # noqa: E402

from staticvec.teacher.align import align  # noqa: E402
from staticvec.teacher.features import FeatureExtractor, FeatureSpec, Part, build_units, iter_parts  # noqa: E402
from staticvec.teacher.store import FeatureStore, iter_word_vectors, write_shard_features  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def bert():
    return tiny_bert()


def part_of(sentences):
    n = len(sentences)
    return Part(0, sentences=[s.split() for s in sentences], records=list(range(n)), paragraphs=list(range(n)))


def run_alone(teacher, words, masked_at=None, special=True):
    """Brute force: one input through the full model."""
    al = align(teacher.tokenizer, [words], special)
    ids, pw = al.pieces(0)
    ids_t = torch.as_tensor(ids)[None]
    if masked_at is not None:
        ids_t = ids_t.clone()
        ids_t[0, masked_at] = teacher.mask_id
    with torch.inference_mode():
        out = teacher.model(ids_t, output_hidden_states=True, output_attentions=True)
    return ids, pw, out


def test_word_vectors_are_piece_means_at_each_layer(bert):
    sentences = TEXT[:4] + ["unbelievable , xyz !"]
    spec = FeatureSpec(layers=(0, 1, -1), vector_dtype="float32")
    arrays = FeatureExtractor(bert, spec, small_vocab(), batch_tokens=40).extract(part_of(sentences))
    offsets = arrays["sentence_offsets"]
    for s, text in enumerate(sentences):
        words = text.split()
        ids, pw, out = run_alone(bert, words)
        for layer in (0, 1, 2):
            h = out.hidden_states[layer][0]
            expected = np.stack([h[torch.as_tensor(pw == k)].mean(0).numpy() for k in range(len(words))])
            got = arrays[f"word_vectors.{layer}"][offsets[s]:offsets[s + 1]]
            np.testing.assert_allclose(got, expected, atol=1e-5)
    assert arrays["word_pieces"][offsets[4]:offsets[5]].tolist() == [3, 1, 3, 1]
    vocab = small_vocab()
    assert arrays["word_ids"][offsets[4]] == -1  # 'unbelievable' is out of the vocabulary
    assert arrays["word_ids"][0] == vocab.index["the"]


def test_attention_window_equals_brute_force_loop(bert):
    S = 3
    sentences = TEXT[:3] + ["unbelievable , the cats sat"]
    spec = FeatureSpec(layers=(), attention_window=S)
    arrays = FeatureExtractor(bert, spec, None, batch_tokens=48).extract(part_of(sentences))
    offsets = arrays["sentence_offsets"]
    for s, text in enumerate(sentences):
        words = text.split()
        ids, pw, out = run_alone(bert, words)
        A = sum(a[0].sum(0) for a in out.attentions).numpy()  # summed over layers and heads
        got = arrays["attention_window"][offsets[s]:offsets[s + 1]]
        for i in range(len(words)):
            for col, o in enumerate(list(range(-S, 0)) + list(range(1, S + 1))):
                j = i + o
                if 0 <= j < len(words):
                    block = [A[p, q] for p in np.flatnonzero(pw == i) for q in np.flatnonzero(pw == j)]
                    assert got[i, col] == pytest.approx(np.mean(block), rel=1e-5)
                else:
                    assert np.isnan(got[i, col])


@pytest.mark.parametrize("mode,masking", [("masked", "whole_word"), ("masked", "piece"), ("unmasked", "whole_word")])
def test_mlm_topk_equals_per_position_brute_force(bert, mode, masking):
    k = 4
    # 'unbelievable' is three pieces: whole-word masking masks all three in one input
    sentences = ["the cats sat on the mat .", "unbelievable , the king", "the unbelievable cats"]
    spec = FeatureSpec(layers=(), mlm_topk=k, mlm_mode=mode, mlm_masking=masking)
    arrays = FeatureExtractor(bert, spec, None, batch_tokens=30).extract(part_of(sentences))
    offsets = arrays["sentence_offsets"]
    row = 0
    for s, text in enumerate(sentences):
        words = text.split()
        ids, pw, unmasked = run_alone(bert, words)
        for p in np.flatnonzero(pw >= 0):
            masked_at = np.flatnonzero(pw == pw[p]) if masking == "whole_word" else p
            logits = (run_alone(bert, words, masked_at=masked_at)[2] if mode == "masked" else unmasked).logits[0, p]
            top = logits.topk(k)
            assert arrays["mlm_piece_word"][row] == offsets[s] + pw[p]
            assert arrays["mlm_piece_ids"][row] == ids[p]
            assert arrays["mlm_topk_ids"][row].tolist() == top.indices.tolist()
            np.testing.assert_allclose(arrays["mlm_topk_logits"][row], top.values.numpy(), rtol=1e-5, atol=1e-5)
            row += 1
    assert row == len(arrays["mlm_piece_word"])


def test_whole_word_masking_differs_from_piece_masking_on_a_split_word(bert):
    """The two readings are not the same computation: on a word of several pieces they predict differently."""
    part = part_of(["unbelievable , the king"])
    got = {m: FeatureExtractor(bert, FeatureSpec(layers=(), mlm_topk=4, mlm_masking=m), None).extract(part)
           for m in ("whole_word", "piece")}
    first_three = slice(0, 3)  # the pieces of 'unbelievable'
    assert not np.allclose(got["whole_word"]["mlm_topk_logits"][first_three], got["piece"]["mlm_topk_logits"][first_three])
    np.testing.assert_allclose(got["whole_word"]["mlm_topk_logits"][3:], got["piece"]["mlm_topk_logits"][3:], rtol=1e-5)


def test_sentence_vectors_include_special_tokens(bert):
    spec = FeatureSpec(layers=(), sentence_vectors=True, vector_dtype="float32")
    arrays = FeatureExtractor(bert, spec, None).extract(part_of(TEXT[:3]))
    for s, text in enumerate(TEXT[:3]):
        _, _, out = run_alone(bert, text.split())
        np.testing.assert_allclose(arrays["sentence_vectors"][s], out.hidden_states[-1][0].mean(0).numpy(), atol=1e-5)


def test_paragraph_of_one_sentence_equals_sentence_context(tmp_path, bert):
    shard = write_shard(tmp_path / "s.tsv.gz", [[(True, t)] for t in TEXT[:5]])
    fields = dict(layers=(-1,), sentence_vectors=True, attention_window=2, mlm_topk=3, vector_dtype="float32")
    got = {}
    for context in ("sentence", "paragraph"):
        ex = FeatureExtractor(bert, FeatureSpec(context=context, **fields), small_vocab())
        got[context] = ex.extract(next(iter_parts(shard, context, 100)))
    assert got["sentence"].keys() == got["paragraph"].keys()
    for key in got["sentence"]:
        np.testing.assert_allclose(got["sentence"][key], got["paragraph"][key], atol=1e-5, err_msg=key)


def test_paragraph_context_runs_the_whole_paragraph(tmp_path, bert):
    # two kept sentences around a non-kept one: the kept ones' vectors come from the paragraph pass
    para = [(True, TEXT[0]), (False, TEXT[1]), (True, TEXT[2])]
    shard = write_shard(tmp_path / "p.tsv.gz", [para, [(True, TEXT[3])]])
    spec = FeatureSpec(context="paragraph", layers=(-1,), sentence_vectors=True, vector_dtype="float32")
    arrays = FeatureExtractor(bert, spec, None).extract(next(iter_parts(shard, "paragraph", 100)))
    words = " ".join(t for _, t in para).split()
    _, pw, out = run_alone(bert, words)
    h = out.hidden_states[-1][0]
    n0, n1 = len(TEXT[0].split()), len(TEXT[1].split())
    kept = list(range(n0)) + list(range(n0 + n1, len(words)))
    expected = np.stack([h[torch.as_tensor(pw == k)].mean(0).numpy() for k in kept])
    offsets = arrays["sentence_offsets"]
    np.testing.assert_allclose(arrays["word_vectors.2"][: offsets[2]], expected, atol=1e-5)
    # a kept sentence's vector is the mean of its own pieces inside the paragraph
    first = np.concatenate([np.flatnonzero(pw == k) for k in range(n0)])
    np.testing.assert_allclose(arrays["sentence_vectors"][0], h[torch.as_tensor(first)].mean(0).numpy(), atol=1e-5)
    assert arrays["sentence_records"].tolist() == [0, 2, 3]
    assert arrays["sentence_paragraphs"].tolist() == [0, 0, 1]


def test_long_paragraph_is_chunked_at_sentence_boundaries(bert):
    part = Part(0)
    sentences = [t.split() for t in TEXT[:6]]
    part.sentences = sentences
    part.context = [(sentences, list(range(6)))]
    units = build_units(part, "paragraph", bert.tokenizer, budget=24)
    assert len(units.words) > 1
    assert sum(len(u) for u in units.words) == sum(len(s) for s in sentences)
    assert sorted(units.word_out.tolist()) == list(range(sum(len(s) for s in sentences)))
    al = align(bert.tokenizer, units.words, True)
    for i in range(len(units.words)):
        assert al.lengths[i] <= 24 + 2
    # no sentence is cut: every unit starts at the start of a sentence
    starts = np.cumsum([0] + [len(s) for s in sentences])
    offset = 0
    for words in units.words:
        assert offset in starts
        offset += len(words)


def test_batching_does_not_change_features(bert):
    spec = FeatureSpec(layers=(-1,), attention_window=2, mlm_topk=3, sentence_vectors=True, vector_dtype="float32")
    part = part_of(TEXT[:8])
    a = FeatureExtractor(bert, spec, None, batch_tokens=10_000).extract(part)
    b = FeatureExtractor(bert, spec, None, batch_tokens=16).extract(part)
    for key in a:
        np.testing.assert_allclose(a[key], b[key], atol=1e-5, err_msg=key)


def test_one_shared_pass_equals_the_students_and_the_builders_passes(bert):
    """The default config runs the students' features and the SemGloVe builders' attention/MLM in one
    pass: its arrays are the two separate passes' (attention and MLM exactly; vectors up to the
    attention kernel's rounding: the shared pass runs eager attention to return the weights)."""
    part = part_of(TEXT[:8])
    students = FeatureSpec(layers=(-1,), sentence_vectors=True, vector_dtype="float32")
    builders = FeatureSpec(layers=(), attention_window=2, mlm_topk=3)
    shared = FeatureSpec(layers=(-1,), sentence_vectors=True, vector_dtype="float32", attention_window=2, mlm_topk=3)
    a = FeatureExtractor(bert, students, small_vocab(), batch_tokens=40).extract(part)
    b = FeatureExtractor(bert, builders, small_vocab(), batch_tokens=40).extract(part)
    both = FeatureExtractor(bert, shared, small_vocab(), batch_tokens=40).extract(part)
    assert set(both) == set(a) | set(b)
    for key in b:
        np.testing.assert_array_equal(both[key], b[key], err_msg=key)
    for key in a:
        np.testing.assert_allclose(both[key], a[key], atol=1e-5, err_msg=key)
    assert {"attention_window", "mlm_topk_ids", "word_vectors.2", "sentence_vectors"} <= set(both)


def test_causal_teacher_byte_level(tmp_path):
    gpt = tiny_gpt2()
    sentences = ["the cats sat on the mat .", "paris , naïve"]
    spec = FeatureSpec(layers=(-1,), attention_window=2, vector_dtype="float32")
    arrays = FeatureExtractor(gpt, spec, None, batch_tokens=20).extract(part_of(sentences))
    offsets = arrays["sentence_offsets"]
    for s, text in enumerate(sentences):
        words = text.split()
        _, pw, out = run_alone(gpt, words)
        h = out.hidden_states[-1][0]
        expected = np.stack([h[torch.as_tensor(pw == k)].mean(0).numpy() for k in range(len(words))])
        np.testing.assert_allclose(arrays["word_vectors.2"][offsets[s]:offsets[s + 1]], expected, atol=1e-5)
    with pytest.raises(Exception, match="causal"):
        FeatureExtractor(gpt, FeatureSpec(mlm_topk=3), None)


def test_ase_sums_are_sums_of_word_vectors(bert, tmp_path):
    vocab = small_vocab()
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(layers=(0, -1), ase=True, vector_dtype="float32")
    write_shard_features(bert, shard, tmp_path / "f", spec, vocab, part_sentences=5, progress=False)
    store = FeatureStore(tmp_path / "f")
    ids = np.concatenate([p["word_ids"] for p in store.parts()])
    vecs = {layer: np.concatenate([p[f"word_vectors.{layer}"] for p in store.parts()]) for layer in (0, 2)}
    ase = store.ase()
    met = np.unique(ids[ids >= 0])
    assert len(met) < len(vocab)  # some vocabulary words never occur: they get no row (memory ∝ words met)
    np.testing.assert_array_equal(ase["word_ids"], met)
    np.testing.assert_array_equal(ase["word_list"], np.arange(len(vocab)))
    assert ase["sums"].shape == (3, len(met), 16)  # layer-major
    assert (ids < 0).any()  # OOV words are counted for no vocabulary word
    np.testing.assert_array_equal(ase["counts"], np.bincount(ids[ids >= 0])[met])
    for row, v in enumerate(met):
        for layer in (0, 2):
            np.testing.assert_allclose(ase["sums"][layer, row], vecs[layer][ids == v].sum(0), rtol=1e-4, atol=1e-4)


def assert_same_stores(a, b):
    assert a.meta["parts"] == b.meta["parts"] and a.meta["sentences"] == b.meta["sentences"] == 20
    for pa, pb in zip(a.parts(), b.parts()):
        assert pa.keys() == pb.keys()
        for key in pa:
            np.testing.assert_array_equal(pa[key], pb[key], err_msg=key)
    for key, value in a.ase().items():
        np.testing.assert_array_equal(value, b.ase()[key], err_msg=key)


def test_resumed_shard_equals_uninterrupted(bert, tmp_path):
    vocab = small_vocab()
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(layers=(-1,), attention_window=2, mlm_topk=3, ase=True)
    full = write_shard_features(bert, shard, tmp_path / "full", spec, vocab, part_sentences=4, progress=False)
    # ASE sums checkpointed after every part: the resumed job starts after the two finished parts
    assert write_shard_features(bert, shard, tmp_path / "cut", spec, vocab, part_sentences=4, max_parts=2,
                                progress=False, ase_checkpoint_seconds=0) == {}
    assert not (tmp_path / "cut" / "features.json").exists()
    resumed = write_shard_features(bert, shard, tmp_path / "cut", spec, vocab, part_sentences=4, progress=False)
    assert resumed["this_run"]["parts"] == full["this_run"]["parts"] - 2
    assert sorted(f.name for f in (tmp_path / "full/parts").glob("ase-*")) == [f"ase-{len(full['parts']) - 1:05d}.npz"]
    assert_same_stores(FeatureStore(tmp_path / "full"), FeatureStore(tmp_path / "cut"))


def test_parts_after_the_newest_ase_checkpoint_are_computed_again(bert, tmp_path):
    vocab = small_vocab()
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(layers=(-1,), ase=True)
    write_shard_features(bert, shard, tmp_path / "full", spec, vocab, part_sentences=4, progress=False)
    # part 0 checkpointed; parts 1 and 2 written without a checkpoint (the next was minutes away)
    write_shard_features(bert, shard, tmp_path / "cut", spec, vocab, part_sentences=4, max_parts=1, progress=False,
                         ase_checkpoint_seconds=0)
    write_shard_features(bert, shard, tmp_path / "cut", spec, vocab, part_sentences=4, max_parts=2, progress=False)
    assert sorted(f.name for f in (tmp_path / "cut/parts").iterdir()) == [
        "ase-00000.npz", "part-00000.npz", "part-00001.npz", "part-00002.npz"]
    resumed = write_shard_features(bert, shard, tmp_path / "cut", spec, vocab, part_sentences=4, progress=False)
    assert resumed["this_run"]["parts"] == len(resumed["parts"]) - 1  # on from part 1, not from part 3
    assert_same_stores(FeatureStore(tmp_path / "full"), FeatureStore(tmp_path / "cut"))


def test_iter_word_vectors_stored_equals_recomputed(bert, tmp_path):
    shard = small_shard(tmp_path / "s.tsv.gz")
    vocab = small_vocab()
    spec = FeatureSpec(layers=(-1,))
    write_shard_features(bert, shard, tmp_path / "f", spec, vocab, part_sentences=7, progress=False)
    stored = list(iter_word_vectors(tmp_path / "f" / "features.json"))
    fresh = list(iter_word_vectors(shard, teacher=bert, spec=spec, vocab=vocab))
    assert len(stored) == len(fresh) == 20
    for (ia, va), (ib, vb) in zip(stored, fresh):
        np.testing.assert_array_equal(ia, ib)
        np.testing.assert_array_equal(va, vb)


def test_progress_has_a_total_and_a_resumed_job_starts_at_its_finished_parts(bert, tmp_path, monkeypatch):
    import staticvec.teacher.store as store

    bars = []

    class Bar:
        def __init__(self, *a, **k):
            self.k, self.n = k, k.get("initial", 0)
            bars.append(self)

        def update(self, n):
            self.n += n

        def close(self):
            pass

    monkeypatch.setattr(store, "_tqdm", lambda enabled: Bar)
    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(layers=(-1,))
    write_shard_features(bert, shard, tmp_path / "cut", spec, small_vocab(), part_sentences=4, max_parts=2, progress=True)
    write_shard_features(bert, shard, tmp_path / "cut", spec, small_vocab(), part_sentences=4, progress=True)
    first, resumed = bars
    assert first.k["total"] == resumed.k["total"] == 20  # the shard's training sentences: an ETA from the start
    assert 0 < first.n == resumed.k["initial"] < 20 and resumed.n == 20  # parts end at paragraph ends


def test_format_1_features_are_read_but_their_ase_sums_refused(bert, tmp_path):
    import json

    shard = small_shard(tmp_path / "s.tsv.gz")
    spec = FeatureSpec(layers=(-1,), ase=True)
    write_shard_features(bert, shard, tmp_path / "f", spec, small_vocab(), part_sentences=8, progress=False)
    meta = json.loads((tmp_path / "f" / "features.json").read_text())
    meta["format"] = 1  # a store written before the sparse ASE sums
    (tmp_path / "f" / "features.json").write_text(json.dumps(meta))
    store = FeatureStore(tmp_path / "f")
    assert sum(len(p["word_ids"]) for p in store.parts()) == store.meta["words"]
    with pytest.raises(Exception, match="format 1"):
        store.ase()
    meta["format"] = 0
    (tmp_path / "f" / "features.json").write_text(json.dumps(meta))
    with pytest.raises(Exception, match="feature format 0"):
        FeatureStore(tmp_path / "f")


def test_shards_written_before_a_new_spec_field_still_train_with_newer_ones(bert, tmp_path):
    import json

    from staticvec.train.teacher_blocks import StoredFeatures

    spec = FeatureSpec(layers=(-1,), sentence_vectors=True)
    for k in range(2):
        shard = small_shard(tmp_path / f"s{k}.tsv.gz")
        write_shard_features(bert, shard, tmp_path / f"f{k}", spec, small_vocab(), part_sentences=8, progress=False)
    meta = json.loads((tmp_path / "f1" / "features.json").read_text())
    del meta["spec"]["mlm_masking"]  # written before the field existed: its default
    (tmp_path / "f1" / "features.json").write_text(json.dumps(meta))
    StoredFeatures([tmp_path / "f0", tmp_path / "f1"], ["word_vectors"])
    meta["spec"]["sentence_vectors"] = False  # a real difference is still refused
    (tmp_path / "f1" / "features.json").write_text(json.dumps(meta))
    with pytest.raises(Exception, match="spec differs"):
        StoredFeatures([tmp_path / "f0", tmp_path / "f1"], ["word_vectors"])
