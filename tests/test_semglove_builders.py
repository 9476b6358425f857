"""SemGloVe builders: division/rank weights by hand, top-S with ties, attention and MLM selection vs a
brute-force loop, piece→word averaging (eq. 14) vs brute force, the window gate, and sdR."""

import numpy as np
import pytest

from staticvec.cooc.semantic import (
    PieceVocabulary,
    attention_pairs,
    mlm_piece_pairs,
    pieces_to_words,
    restrict_values,
    select_top,
    tie_order,
    window_offsets,
    word_piece_matrix,
)
from staticvec.cooc.store import CoocStore, vocab_fingerprint, write_store
from staticvec.cooc.window import count_window_store, token_id_chunks
from staticvec.corpus.vocab import Vocabulary
from staticvec.errors import InputFileError

NAN = np.nan


def triples(i, j, x):
    return {(int(a), int(b)): float(c) for a, b, c in zip(i, j, x)}


# ---------------------------------------------------------------- attention: hand examples


def test_division_and_rank_weights_by_hand():
    # one sentence of 4 words, S = 2: columns are offsets -2, -1, +1, +2
    ids = np.array([10, 11, 12, 13])
    att = np.array([
        [NAN, NAN, 0.5, 0.25],   # word 0: +1 (0.5), +2 (0.25)
        [NAN, 0.2, 0.8, 0.4],    # word 1: -1 (0.2), +1 (0.8), +2 (0.4)
        [0.1, 0.6, 0.3, NAN],    # word 2: -2, -1, +1
        [0.9, 0.3, NAN, NAN],    # word 3: -2 (0.9), -1 (0.3)
    ])
    got = triples(*attention_pairs(ids, att, top=2, weight="divide"))
    assert got == pytest.approx({
        (10, 11): 1.0, (10, 12): 0.5,
        (11, 12): 1.0, (11, 13): 0.5,          # 0.4 / 0.8; the third candidate (0.2) is not in the top 2
        (12, 11): 1.0, (12, 13): 0.5,          # 0.3 / 0.6
        (13, 11): 1.0, (13, 12): 0.3 / 0.9,
    })
    got = triples(*attention_pairs(ids, att, top=2, weight="rank"))
    assert got == pytest.approx({
        (10, 11): 1.0, (10, 12): 0.5, (11, 12): 1.0, (11, 13): 0.5,
        (12, 11): 1.0, (12, 13): 0.5, (13, 11): 1.0, (13, 12): 0.5,
    })
    # top 2S = every window word (SemGloVe_sd10)
    got = triples(*attention_pairs(ids, att, top=4, weight="divide"))
    assert got[(11, 10)] == pytest.approx(0.25) and got[(12, 10)] == pytest.approx(0.1 / 0.6)
    assert len(got) == 10


def test_top_s_ties_nearer_first_then_left():
    assert window_offsets(2)[tie_order(window_offsets(2))].tolist() == [-1, 1, -2, 2]
    ids = np.arange(5)
    att = np.full((5, 4), 0.5)
    att[0, :2] = att[1, :1] = NAN
    att[4, 2:] = att[3, 3:] = NAN
    i, j, x = attention_pairs(ids, att, top=2, weight="rank")
    got = triples(i, j, x)
    assert got[(2, 1)] == 1.0 and got[(2, 3)] == 0.5  # -1 before +1; -2 and +2 left out
    assert (2, 0) not in got and (2, 4) not in got
    assert got[(0, 1)] == 1.0 and got[(0, 2)] == 0.5  # only right neighbours: nearer first
    i, j, x = attention_pairs(ids, att, top=3, weight="rank")
    assert triples(i, j, x)[(2, 0)] == pytest.approx(1 / 3)  # -2 before +2
    # the order ties are broken in is the order of the output (a stable sort)
    order, sel = select_top(np.array([[1.0, 2.0, 2.0, 1.0]]), np.ones((1, 4), bool), 3)
    assert order.tolist() == [[1, 2, 0]] and sel.all()


def test_out_of_vocabulary_words_are_deleted_before_the_window_as_in_glove():
    ids = np.array([0, -1, 1, 2])
    att = np.array([
        [NAN, NAN, 0.9, 0.1],  # +1 is the OOV word; +2 (id 1) is its nearest in-vocabulary neighbour
        [NAN, 0.5, 0.5, 0.5],  # an OOV word is never a target
        [0.3, 0.8, 0.2, NAN],  # -1 is the OOV word: the candidates are -2 (0.3) and +1 (0.2)
        [0.4, 0.2, NAN, NAN],  # -2 is the OOV word; id 0 (3 raw positions away) is beyond the features
    ])
    stats = {}
    got = triples(*attention_pairs(ids, att, top=1, weight="divide", stats=stats))
    assert got == {(0, 1): 1.0, (1, 0): 1.0, (2, 1): 1.0}
    assert stats["beyond_features"] == 2  # (0, 2) and (2, 0): in GloVe's ±2 window, past the features' ±2
    # ±1 after deleting the OOV word: word 0's right neighbour is id 1 (two raw positions away)
    stats = {}
    got = triples(*attention_pairs(ids, att, top=2, weight="divide", window=1, stats=stats))
    assert got == pytest.approx({(0, 1): 1.0, (1, 0): 1.0, (1, 2): 0.2 / 0.3, (2, 1): 1.0})
    assert stats["beyond_features"] == 0
    # sentences end the window: two sentences [0, OOV] and [1, 2]
    got = triples(*attention_pairs(ids, att, top=2, weight="divide", sentence_offsets=[0, 2, 4]))
    assert got == pytest.approx({(1, 2): 1.0, (2, 1): 1.0})


def test_window_words_are_glove_window_pairs_with_oov_deleted(tmp_path):
    """top 2S with weight 1/d (d counted after deleting OOV words) = GloVe's window counts exactly."""
    rng = np.random.default_rng(11)
    words = [f"w{k}" for k in range(12)]
    vocab = Vocabulary(words, list(range(120, 0, -10)))
    S, R = 3, 12
    sentences, ids_all, att_all, offsets = [], [], [], [0]
    for _ in range(60):
        n = int(rng.integers(2, 16))
        tokens = [words[t] if t < 12 else "oov" for t in rng.integers(0, 18, n)]  # a third OOV
        ids = np.array([vocab.index.get(t, -1) for t in tokens])
        rank = np.cumsum(ids >= 0) - 1
        att = np.full((n, 2 * R), NAN)
        for p in range(n):
            for c, o in enumerate(window_offsets(R)):
                if 0 <= p + o < n and ids[p] >= 0 and ids[p + o] >= 0:
                    att[p, c] = 1.0 / abs(rank[p + o] - rank[p])
        sentences.append(tokens)
        ids_all.append(ids)
        att_all.append(att)
        offsets.append(offsets[-1] + n)
    stats = {}
    i, j, x = attention_pairs(np.concatenate(ids_all), np.concatenate(att_all), top=2 * S, weight="divide",
                              window=S, sentence_offsets=offsets, stats=stats)
    assert stats["beyond_features"] == 0
    write_store(tmp_path / "sd10.cooc", i, j, x, len(vocab), vocab_fingerprint(vocab), {})
    count_window_store(token_id_chunks(sentences, vocab.index, chunk_tokens=64), vocab, S, tmp_path / "win.cooc")
    sd10, win = (CoocStore(tmp_path / f).to_scipy().toarray() for f in ("sd10.cooc", "win.cooc"))
    np.testing.assert_allclose(sd10, win, rtol=1e-6)
    assert (win > 0).sum() > 50


def brute_attention(ids, att, top, weight, window=None):
    """One sentence: candidates are the in-vocabulary words within ±window after deleting OOV words."""
    n, width = att.shape
    R = width // 2
    window = window or R
    offs = window_offsets(R)
    rank = np.cumsum(ids >= 0) - 1
    out = {}
    for p in range(n):
        if ids[p] < 0:
            continue
        cands = []
        for c, o in enumerate(offs):
            q = p + o
            if not 0 <= q < n or ids[q] < 0 or np.isnan(att[p, c]):
                continue
            d = int(rank[q] - rank[p])
            if abs(d) > window:
                continue
            cands.append((-att[p, c], abs(d), d, ids[q], att[p, c]))
        cands.sort()
        for r, (_, _, _, ctx, w) in enumerate(cands[:top], start=1):
            value = w / cands[0][4] if weight == "divide" else 1.0 / r
            out[(int(ids[p]), int(ctx))] = out.get((int(ids[p]), int(ctx)), 0.0) + value
    return out


@pytest.mark.parametrize("top,weight,window", [(5, "divide", None), (5, "rank", None), (10, "divide", None),
                                               (6, "divide", None), (2, "rank", 3)])
def test_attention_pairs_equal_brute_force(top, weight, window):
    rng = np.random.default_rng(top + len(weight))
    n, S = 300, 5
    ids = rng.integers(-1, 40, n)
    att = rng.integers(1, 6, (n, 2 * S)).astype(np.float32) / 4  # few values: many ties
    att[rng.random((n, 2 * S)) < 0.15] = NAN
    i, j, x = attention_pairs(ids, att, top, weight, window)
    got = {}
    for a, b, c in zip(i, j, x):
        got[(int(a), int(b))] = got.get((int(a), int(b)), 0.0) + float(c)
    assert got == pytest.approx(brute_attention(ids, att, top, weight, window))


# ---------------------------------------------------------------- MLM selection


def mlm_arrays(word_ids, piece_word, piece_ids, topk_ids, topk_logits):
    return {"word_ids": np.asarray(word_ids), "mlm_piece_word": np.asarray(piece_word),
            "mlm_piece_ids": np.asarray(piece_ids), "mlm_topk_ids": np.asarray(topk_ids),
            "mlm_topk_logits": np.asarray(topk_logits, dtype=np.float32)}


def test_mlm_division_rank_target_and_special_tokens_by_hand():
    not_context = np.zeros(20, bool)
    not_context[[0, 1]] = True  # e.g. [PAD], [UNK]
    arrays = mlm_arrays(
        word_ids=[3, -1, 4],
        piece_word=[0, 1, 2, 2],
        piece_ids=[7, 8, 9, 10],
        topk_ids=[[7, 11, 1, 12, 13], [8, 5, 6, 7, 9], [15, 9, 16, 17, 18], [10, 19, 0, 11, 12]],
        topk_logits=[[20, 10, 9, 5, 4], [9, 8, 7, 6, 5], [8, 6, 4, 2, 1], [12, 6, 5, 3, -3]],
    )
    i, j, x, skipped = mlm_piece_pairs(arrays, top=3, weight="divide", drop_target=True, not_context=not_context)
    # piece 7 (word 0): drop itself and [UNK] (id 1): 11, 12, 13 with 10/10, 5/10, 4/10
    # piece 8 belongs to an OOV word: no pairs; piece 9: 15, 16, 17 (itself dropped): 8/8, 4/8, 2/8
    # piece 10: 19, 11, 12 (itself and [PAD] dropped): 6/6, 3/6, -3/6 → negative dropped
    assert triples(i, j, x) == pytest.approx({(7, 11): 1.0, (7, 12): 0.5, (7, 13): 0.4,
                                              (9, 15): 1.0, (9, 16): 0.5, (9, 17): 0.25,
                                              (10, 19): 1.0, (10, 11): 0.5})
    assert skipped == 0
    i, j, x, _ = mlm_piece_pairs(arrays, top=3, weight="rank", drop_target=False, not_context=not_context)
    assert triples(i, j, x) == pytest.approx({(7, 7): 1.0, (7, 11): 0.5, (7, 12): 1 / 3,
                                              (9, 15): 1.0, (9, 9): 0.5, (9, 16): 1 / 3,
                                              (10, 10): 1.0, (10, 19): 0.5, (10, 11): 1 / 3})
    # a non-positive top logit has no division distance: the position is skipped
    arrays["mlm_topk_logits"][0] = [-1, -2, -3, -4, -5]
    i, j, x, skipped = mlm_piece_pairs(arrays, top=3, weight="divide", drop_target=True, not_context=not_context)
    assert skipped == 1 and not any(a == 7 for a in i)


def brute_mlm(arrays, top, weight, drop_target, not_context):
    out = {}
    for r in range(len(arrays["mlm_piece_word"])):
        if arrays["word_ids"][arrays["mlm_piece_word"][r]] < 0:
            continue
        t = int(arrays["mlm_piece_ids"][r])
        if not_context[t]:
            continue
        kept = [(int(c), float(g)) for c, g in zip(arrays["mlm_topk_ids"][r], arrays["mlm_topk_logits"][r])
                if not not_context[c] and not (drop_target and c == t)][:top]
        for rank, (c, g) in enumerate(kept, start=1):
            if weight == "divide":
                if kept[0][1] <= 0 or g / kept[0][1] <= 0:
                    continue
                value = g / kept[0][1]
            else:
                value = 1.0 / rank
            out[(t, c)] = out.get((t, c), 0.0) + value
    return out


@pytest.mark.parametrize("weight,drop", [("divide", True), ("rank", True), ("divide", False)])
def test_mlm_pairs_equal_brute_force(weight, drop):
    rng = np.random.default_rng(7)
    P, n_words, n = 30, 50, 400
    not_context = np.zeros(P, bool)
    not_context[:3] = True
    topk = np.stack([rng.permutation(P)[:11] for _ in range(n)])
    logits = -np.sort(-rng.normal(5, 4, (n, 11)), axis=1)
    arrays = mlm_arrays(rng.integers(-1, 9, n_words), rng.integers(0, n_words, n), rng.integers(0, P, n), topk, logits)
    i, j, x, _ = mlm_piece_pairs(arrays, 10, weight, drop, not_context)
    got = {}
    for a, b, c in zip(i, j, x):
        got[(int(a), int(b))] = got.get((int(a), int(b)), 0.0) + float(c)
    assert got == pytest.approx(brute_mlm(arrays, 10, weight, drop, not_context), rel=1e-6)


# ---------------------------------------------------------------- pieces → words (eq. 14)


@pytest.fixture(scope="module")
def tokenizer():
    pytest.importorskip("transformers")
    from teacher_fixtures import wordpiece_tokenizer

    return wordpiece_tokenizer()


WORDS = ["the", "cat", "cats", "king", "unbelievable", "kix", "queen", "xq", "☃", "dogs"]


def test_word_piece_matrix_is_the_tokenizers_piece_mean(tokenizer):
    A, n_pieces = word_piece_matrix(tokenizer, WORDS)
    for w, word in enumerate(WORDS):
        pieces = [p for p in tokenizer.tokenize(word) if p != tokenizer.unk_token]
        assert n_pieces[w] == len(pieces)
        expected = np.zeros(A.shape[1])
        for p in tokenizer.convert_tokens_to_ids(pieces):
            expected[p] += 1.0 / len(pieces)
        np.testing.assert_allclose(A[w].toarray()[0], expected)
    assert n_pieces[WORDS.index("☃")] == 0  # [UNK] is no piece of any word
    assert n_pieces[WORDS.index("unbelievable")] == 3


def piece_store(tmp_path, tokenizer, seed=0, density=0.05):
    rng = np.random.default_rng(seed)
    pv = PieceVocabulary.from_tokenizer(tokenizer)
    P = pv.size
    mask = rng.random((P, P)) < density
    i, j = np.nonzero(mask)
    x = rng.random(len(i)) + 0.01
    path = tmp_path / f"pieces{seed}.cooc"
    write_store(path, i, j, x, P, pv.sha256, {"kind": "semglove-mlm-pieces", "top": 10, "weight": "divide"})
    M = np.zeros((P, P))
    M[i, j] = x.astype(np.float32)
    return path, M


def brute_words(tokenizer, words, M):
    ids = [[p for p in tokenizer.convert_tokens_to_ids(tokenizer.tokenize(w)) if p != tokenizer.unk_token_id]
           for w in words]
    X = np.zeros((len(words), len(words)))
    for a, pa in enumerate(ids):
        for b, pb in enumerate(ids):
            if pa and pb:
                X[a, b] = sum(M[k, q] for k in pa for q in pb) / (len(pa) * len(pb))
    return X, ids


def test_pieces_to_words_equals_brute_force_mean_over_piece_pairs(tmp_path, tokenizer):
    vocab = Vocabulary(WORDS, list(range(len(WORDS) * 10, 0, -10)))
    path, M = piece_store(tmp_path, tokenizer, density=0.3)
    header = pieces_to_words(path, tokenizer, vocab, tmp_path / "words.cooc", block_entries=7)  # many blocks
    store = CoocStore(tmp_path / "words.cooc")
    store.verify()
    X, _ = brute_words(tokenizer, WORDS, M)
    np.testing.assert_allclose(store.to_scipy().toarray(), X, rtol=1e-5)
    assert header["meta"]["kind"] == "semglove-mlm" and header["meta"]["gate_by_window"] is False
    assert header["vocab_sha256"] == vocab_fingerprint(vocab)


def test_window_gate_keeps_counted_pairs_and_single_piece_pairs(tmp_path, tokenizer):
    vocab = Vocabulary(WORDS, list(range(len(WORDS) * 10, 0, -10)))
    path, M = piece_store(tmp_path, tokenizer, seed=1, density=0.4)
    V = len(vocab)
    rng = np.random.default_rng(3)
    gi, gj = np.nonzero(rng.random((V, V)) < 0.5)
    gx = rng.choice([0.5, 1.0, 3.0], len(gi))
    write_store(tmp_path / "window.cooc", gi, gj, gx, V, vocab_fingerprint(vocab), {"kind": "window"})
    pieces_to_words(path, tokenizer, vocab, tmp_path / "gated.cooc", gate=tmp_path / "window.cooc", gate_min=1.0)
    X, ids = brute_words(tokenizer, WORDS, M)
    G = np.zeros((V, V))
    G[gi, gj] = gx
    single = np.array([len(p) == 1 for p in ids])
    expected = np.where((G >= 1.0) | (single[:, None] & single[None, :]), X, 0.0)
    got = CoocStore(tmp_path / "gated.cooc").to_scipy().toarray()
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert (expected != X).any()  # the gate removed something


def test_piece_store_of_another_tokenizer_is_refused(tmp_path, tokenizer):
    vocab = Vocabulary(WORDS, list(range(len(WORDS) * 10, 0, -10)))
    write_store(tmp_path / "p.cooc", [0], [1], [1.0], 500, "0" * 64, {"kind": "semglove-mlm-pieces"})
    with pytest.raises(InputFileError, match="another teacher tokenizer"):
        pieces_to_words(tmp_path / "p.cooc", tokenizer, vocab, tmp_path / "w.cooc")


# ---------------------------------------------------------------- sdR


def test_sdR_has_sd_pairs_with_glove_window_counts(tmp_path):
    rng = np.random.default_rng(5)
    words = [f"w{k}" for k in range(30)]
    vocab = Vocabulary(words, list(range(300, 0, -10)))
    S = 3
    sentences, ids_all, att_all = [], [], []
    for _ in range(40):
        n = int(rng.integers(4, 15))
        tokens = [words[t] if t < 30 else "oov" for t in rng.integers(0, 33, n)]
        sentences.append(tokens)
        ids = np.array([vocab.index.get(t, -1) for t in tokens])
        att = rng.random((n, 2 * S))
        for c, o in enumerate(window_offsets(S)):
            att[np.flatnonzero((np.arange(n) + o < 0) | (np.arange(n) + o >= n)), c] = NAN
        ids_all.append(ids)
        att_all.append(att)
    i, j, x = attention_pairs(np.concatenate(ids_all), np.concatenate(att_all), top=S, weight="divide")
    sha = vocab_fingerprint(vocab)
    write_store(tmp_path / "sd.cooc", i, j, x, len(vocab), sha, {"kind": "semglove-attention"})
    count_window_store(token_id_chunks(sentences, vocab.index, chunk_tokens=64), vocab, S, tmp_path / "win.cooc")
    header = restrict_values(tmp_path / "win.cooc", tmp_path / "sd.cooc", tmp_path / "sdR.cooc", block_entries=5)
    sd, win, sdr = (CoocStore(tmp_path / f).to_scipy().toarray() for f in ("sd.cooc", "win.cooc", "sdR.cooc"))
    np.testing.assert_array_equal(sdr != 0, sd != 0)  # sd's pairs: all within GloVe's window too
    np.testing.assert_allclose(sdr[sd != 0], win[sd != 0], rtol=1e-6)  # GloVe's values
    assert header["meta"]["n_pairs_without_value"] == 0 and (sdr != win).any()


def test_restrict_leaves_out_pairs_without_value(tmp_path):
    write_store(tmp_path / "v.cooc", [0, 1], [1, 2], [2.0, 3.0], 4, None, {})
    write_store(tmp_path / "p.cooc", [0, 1, 3], [1, 1, 3], [0.1, 0.2, 0.3], 4, None, {})
    header = restrict_values(tmp_path / "v.cooc", tmp_path / "p.cooc", tmp_path / "r.cooc")
    assert triples(*CoocStore(tmp_path / "r.cooc").arrays()) == {(0, 1): 2.0}
    assert header["meta"]["n_pairs_without_value"] == 2
