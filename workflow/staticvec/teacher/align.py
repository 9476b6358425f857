"""Align a tokenizer's pieces with the corpus's words, by character offsets.

The corpus gives words (spaCy tokens, never containing whitespace); a teacher sees the text
``" ".join(words)``. The fast tokenizer reports each piece's character span; a piece belongs
to the word that holds its first character, where a space belongs to the word it precedes.
That one rule covers the three piece families:

- WordPiece (BERT): ``un ##believ ##able``: spans inside the word;
- byte-level BPE (GPT-2, RoBERTa, Llama): ``Ġworld`` spans the leading space (→ the next word),
  a lone ``Ġ`` before an unknown byte goes with that byte's word, and pieces of one multi-byte
  character may share a character span;
- SentencePiece: ``▁world`` (the ``▁`` stands for the space, → the next word).

Special tokens ([CLS], [SEP], <s>, </s>…) are recognised by the tokenizer's special-token
mask and get word -1. A word that yields no piece at all (a control character the normaliser
deletes, or a word cut off by truncation) has zero pieces: its vector is zero and
``n_pieces`` says so, so consumers can skip it. Everything is vectorised over a whole list of
inputs (no Python loop per word or per piece).

Word of a character ``c`` of text ``t``: the number of spaces in ``t[:c+1]`` (a character of
word ``k`` has ``k`` spaces before it; the space before word ``k`` is itself the ``k``-th).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import chain

import numpy as np

log = logging.getLogger(__name__)


@dataclass
class Alignment:
    """Pieces of several inputs, flattened, with each piece's word (-1: special token)."""

    input_ids: np.ndarray  # (n_pieces,) int64, all inputs concatenated
    piece_word: np.ndarray  # (n_pieces,) int64, word index within its input; -1 = special
    offsets: np.ndarray  # (n_inputs + 1,) int64, input i's pieces are offsets[i]:offsets[i+1]
    n_words: np.ndarray  # (n_inputs,) int64
    truncated: np.ndarray  # (n_inputs,) bool: the input was cut at max_length

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.n_words)

    def pieces(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Piece ids and piece→word map of input ``i``."""
        s, e = self.offsets[i], self.offsets[i + 1]
        return self.input_ids[s:e], self.piece_word[s:e]

    def word_offsets(self) -> np.ndarray:
        """(n_inputs + 1,) start of each input's words in the concatenated word list."""
        return np.concatenate([[0], np.cumsum(self.n_words)])

    def global_piece_word(self) -> np.ndarray:
        """Piece → word index in the concatenated word list of all inputs (-1 for specials)."""
        base = np.repeat(self.word_offsets()[:-1], self.lengths)
        return np.where(self.piece_word >= 0, self.piece_word + base, -1)

    def pieces_per_word(self) -> np.ndarray:
        """(total words,) number of pieces of each word (0: the word has no vector)."""
        g = self.global_piece_word()
        return np.bincount(g[g >= 0], minlength=int(self.n_words.sum()))


class PieceEncoder:
    """A tokenizer's pieces, ids, character spans and special-token mask as flat numpy arrays.

    A fast (Rust-backed) transformers tokenizer is called through its backend, set up as the transformers call
    sets it up (truncation at ``max_length`` from its ``truncation_side``, no padding, its
    ``split_special_tokens``; tested equal to the call): the same encodings, without the per-input
    dictionaries and lists the transformers call builds and this module would only flatten again (a fifth of a
    pass's host work, measured). It pickles as the backend alone, so that a worker process (:mod:`.pipeline`)
    imports neither transformers nor torch. Any other tokenizer (or ``direct`` False) goes through its ``__call__``."""

    def __init__(self, tokenizer, direct: bool = True):
        self.tokenizer, self.backend = tokenizer, None
        if direct and _plain_fast_tokenizer(tokenizer):
            self.tokenizer = None
            self.backend = tokenizer.backend_tokenizer
            self.truncation_side = tokenizer.truncation_side
            self.split_special_tokens = bool(tokenizer.split_special_tokens)

    def encode(self, texts: list[str], add_special_tokens: bool = True, max_length: int | None = None,
               spans: bool = True):
        """(lengths, ids, spans (n, 2), special) over ``texts``, each input's pieces one after the other
        (``spans`` False: no spans and no special mask, None for both)."""
        if self.backend is None:
            return self._encode_with_call(texts, add_special_tokens, max_length, spans)
        encodings = self._configured(max_length).encode_batch(texts, add_special_tokens=add_special_tokens)
        ids = [e.ids for e in encodings]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        total = int(lengths.sum())
        flat_ids = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=total)
        if not spans:
            return lengths, flat_ids, None, None
        span = np.fromiter(chain.from_iterable(chain.from_iterable(e.offsets for e in encodings)), dtype=np.int64,
                           count=2 * total).reshape(total, 2)
        special = np.fromiter(chain.from_iterable(e.special_tokens_mask for e in encodings), dtype=bool, count=total)
        return lengths, flat_ids, span, special

    def _configured(self, max_length: int | None = None):
        """The backend set up for one call (every call: the transformers tokenizer may share it and set it up
        its own way in between), as TokenizersBackend.set_truncation_and_padding does."""
        backend = self.backend
        if max_length is None:
            if backend.truncation is not None:
                backend.no_truncation()
        else:
            target = {"max_length": max_length, "stride": 0, "strategy": "longest_first",
                      "direction": self.truncation_side}
            current = backend.truncation
            if current is None or {k: current.get(k) for k in target} != target:
                backend.enable_truncation(**target)
        if backend.padding is not None:
            backend.no_padding()
        if backend.encode_special_tokens != self.split_special_tokens:
            backend.encode_special_tokens = self.split_special_tokens
        return backend

    def _encode_with_call(self, texts, add_special_tokens, max_length, spans):
        enc = self.tokenizer(
            texts,
            add_special_tokens=add_special_tokens,
            return_offsets_mapping=spans,
            return_special_tokens_mask=spans,
            return_attention_mask=False,
            truncation=max_length is not None,
            max_length=max_length,
        )
        lengths = np.fromiter((len(ids) for ids in enc["input_ids"]), dtype=np.int64, count=len(texts))
        total = int(lengths.sum())
        ids = np.fromiter(chain.from_iterable(enc["input_ids"]), dtype=np.int64, count=total)
        if not spans:
            return lengths, ids, None, None
        span = np.fromiter(chain.from_iterable(chain.from_iterable(enc["offset_mapping"])), dtype=np.int64,
                           count=2 * total).reshape(total, 2)
        special = np.fromiter(chain.from_iterable(enc["special_tokens_mask"]), dtype=bool, count=total)
        return lengths, ids, span, special


def _plain_fast_tokenizer(tokenizer) -> bool:
    """A transformers fast tokenizer whose encoding is the base class's: its backend's encodings are its own."""
    try:
        from transformers.tokenization_utils_tokenizers import TokenizersBackend
    except ImportError:  # pragma: no cover - another transformers layout: the tokenizer's own call
        return False
    return isinstance(tokenizer, TokenizersBackend) and type(tokenizer)._encode_plus is TokenizersBackend._encode_plus


def piece_encoder(tokenizer) -> PieceEncoder:
    return tokenizer if isinstance(tokenizer, PieceEncoder) else PieceEncoder(tokenizer)


def align(tokenizer, inputs: list[list[str]], add_special_tokens: bool = True,
          max_length: int | None = None) -> Alignment:
    """Tokenize ``inputs`` (lists of words) and map every piece to its word (``tokenizer``: a tokenizer or its
    :class:`PieceEncoder`)."""
    texts = [" ".join(words) for words in inputs]
    n_words = np.fromiter((len(words) for words in inputs), dtype=np.int64, count=len(inputs))
    if not texts:
        empty = np.zeros(0, dtype=np.int64)
        return Alignment(empty, empty, np.zeros(1, dtype=np.int64), empty, np.zeros(0, dtype=bool))
    lengths, input_ids, spans, special = piece_encoder(tokenizer).encode(texts, add_special_tokens, max_length)
    total = int(lengths.sum())

    # Character -> word over all texts at once: inclusive running count of spaces.
    text_len = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    text_start = np.concatenate([[0], np.cumsum(text_len)[:-1]])
    codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    spaces = np.cumsum(codes == 32, dtype=np.int64)
    spaces_before_text = np.where(text_start > 0, spaces[np.maximum(text_start - 1, 0)], 0)

    piece_text = np.repeat(np.arange(len(texts)), lengths)
    # A zero-length span (some SentencePiece '▁' pieces) at the very end points past the text.
    start = np.minimum(spans[:, 0], np.maximum(text_len[piece_text] - 1, 0))
    if len(codes):
        at = np.minimum(text_start[piece_text] + start, len(codes) - 1)
        word = spaces[at] - spaces_before_text[piece_text]
    else:
        word = np.zeros(total, dtype=np.int64)
    empty_text = text_len[piece_text] == 0
    piece_word = np.where(special | empty_text, -1, word).astype(np.int64)

    offsets = np.concatenate([[0], np.cumsum(lengths)])
    truncated = np.zeros(len(texts), dtype=bool)
    if max_length is not None:
        # Cut inputs: at the length limit, and their last word has no piece.
        full = np.flatnonzero(lengths >= max_length)
        for i in full:
            pw = piece_word[offsets[i]:offsets[i + 1]]
            truncated[i] = pw.max(initial=-1) < n_words[i] - 1
        if truncated.any():
            log.warning("%d input(s) longer than %d pieces were truncated", int(truncated.sum()), max_length)
    return Alignment(input_ids, piece_word, offsets, n_words, truncated)


def count_pieces(tokenizer, inputs: list[list[str]]) -> np.ndarray:
    """Pieces (without special tokens) of each input: what length bucketing and chunking need."""
    if not inputs:
        return np.zeros(0, dtype=np.int64)
    return piece_encoder(tokenizer).encode([" ".join(w) for w in inputs], False, None, spans=False)[0]
