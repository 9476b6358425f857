"""Pieces → words by character offsets: hand examples for WordPiece, byte-level BPE and SentencePiece."""

import numpy as np
import pytest

pytest.importorskip("transformers")

from teacher_fixtures import bytelevel_tokenizer, sentencepiece_tokenizer, wordpiece_tokenizer  # noqa: E402

from staticvec.teacher.align import align, count_pieces  # noqa: E402


def pieces_with_words(tok, al, i):
    ids, pw = al.pieces(i)
    return list(zip(tok.convert_ids_to_tokens(ids.tolist()), pw.tolist()))


def test_wordpiece_multi_piece_words_punctuation_and_specials():
    tok = wordpiece_tokenizer()
    al = align(tok, [["the", "cats", "sat", "unbelievable", ","]])
    assert pieces_with_words(tok, al, 0) == [
        ("[CLS]", -1), ("the", 0), ("cats", 1), ("sat", 2),
        ("un", 3), ("##believ", 3), ("##able", 3), (",", 4), ("[SEP]", -1),
    ]
    assert al.pieces_per_word().tolist() == [1, 1, 1, 3, 1]


def test_wordpiece_unknown_and_deleted_characters():
    tok = wordpiece_tokenizer()
    # 'xyz' splits into letters; '€' is unknown ([UNK]); the control character \x07 is deleted by
    # the normaliser and leaves its word without pieces; 'Naïve' is lower-cased and de-accented.
    al = align(tok, [["xyz", "\x07", "€", "Naïve", "."]])
    assert pieces_with_words(tok, al, 0) == [
        ("[CLS]", -1), ("x", 0), ("##y", 0), ("##z", 0), ("[UNK]", 2),
        ("n", 3), ("##a", 3), ("##i", 3), ("##v", 3), ("##e", 3), (".", 4), ("[SEP]", -1),
    ]
    assert al.pieces_per_word().tolist() == [3, 0, 1, 5, 1]


def test_wordpiece_without_special_tokens():
    tok = wordpiece_tokenizer()
    al = align(tok, [["the", "cat"]], add_special_tokens=False)
    assert pieces_with_words(tok, al, 0) == [("the", 0), ("cat", 1)]


@pytest.mark.parametrize("trim", [False, True])
def test_bytelevel_leading_spaces_go_to_the_next_word(trim):
    tok = bytelevel_tokenizer(trim_offsets=trim)
    words = ["the", "cats", "sat", ",", "naïve", "\x07", "ü"]
    al = align(tok, [words])
    pairs = pieces_with_words(tok, al, 0)
    assert pairs[0] == ("the", 0)
    assert ("Ġcats", 1) in pairs and ("Ġsat", 2) in pairs and ("Ġ,", 3) in pairs
    # every word's pieces decode to " word" (the byte pieces of ï, ü and \x07 included)
    ids, pw = al.pieces(0)
    for k, word in enumerate(words):
        text = tok.decode(ids[pw == k].tolist())
        assert text == (word if k == 0 else " " + word)
    assert (al.pieces_per_word() > 0).all()


def test_sentencepiece_metaspace():
    tok = sentencepiece_tokenizer()
    words = ["the", "cats", "sat", "unbelievable", ","]
    al = align(tok, [words])
    ids, pw = al.pieces(0)
    tokens = tok.convert_ids_to_tokens(ids.tolist())
    assert tokens[0] == "<s>" and tokens[-1] == "</s>" and pw[0] == -1 and pw[-1] == -1
    for k, word in enumerate(words):
        assert "".join(tokens[i] for i in np.flatnonzero(pw == k)).replace("▁", "") == word
    assert pw[1:-1].tolist() == sorted(pw[1:-1].tolist())


def test_several_inputs_and_global_word_index():
    tok = wordpiece_tokenizer()
    al = align(tok, [["the", "cat"], [], ["unbelievable", "dog"]])
    assert al.n_words.tolist() == [2, 0, 2]
    assert al.word_offsets().tolist() == [0, 2, 2, 4]
    g = al.global_piece_word()
    assert g.tolist() == [-1, 0, 1, -1, -1, -1, -1, 2, 2, 2, 3, -1]
    assert al.pieces_per_word().tolist() == [1, 1, 3, 1]


def test_truncation_marks_input_and_cut_words():
    tok = wordpiece_tokenizer()
    words = ["the", "cat", "sat", "on", "the", "mat", "unbelievable", "dog"]
    al = align(tok, [words, ["the", "cat"]], max_length=8)
    assert al.truncated.tolist() == [True, False]
    n = al.pieces_per_word()[:8]
    assert n.tolist() == [1, 1, 1, 1, 1, 1, 0, 0]  # [CLS] + 6 words + [SEP] fill the 8 places


def test_count_pieces_matches_alignment():
    tok = wordpiece_tokenizer()
    inputs = [["the", "cats"], ["unbelievable", ",", "xyz"]]
    assert count_pieces(tok, inputs).tolist() == (align(tok, inputs, add_special_tokens=False).lengths).tolist()
