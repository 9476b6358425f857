"""The one extraction path: contextual features of a corpus shard's training sentences.

A shard's training sentences (``keep`` = 1) are read in order and grouped into *parts* (about
``part_sentences`` sentences; whole paragraphs in paragraph context). Each part is turned into
model inputs (*units*): one per sentence (``context="sentence"``), or one per paragraph chunk
(``context="paragraph"``: every sentence of the paragraph, kept or not, in chunks cut at sentence
boundaries to fit the model's maximum length; a single sentence longer than that is processed
alone, truncated with a warning). Units are sorted by length into batches of about
``batch_tokens`` padded pieces, run once through the encoder (``torch.inference_mode``, in the
teacher's dtype: bf16 weights on CPUs with native bf16, bf16/fp16 autocast on CUDA, else fp32), and
every feature asked for is computed from that one pass:

============================ =====================================================================
feature (arrays of a part)   what
============================ =====================================================================
``word_ids``                 vocabulary id of each word of each sentence (-1: not in vocabulary)
``sentence_offsets``         sentence i's words are ``sentence_offsets[i]:sentence_offsets[i+1]``
``word_pieces``              pieces of each word (0: no vector, e.g. a deleted control character)
``word_vectors.<layer>``     per word, the mean of its pieces' states at hidden layer ``layer``
                             (0 = embeddings, L = last) — flair/bert2vec "mean" pooling
``sentence_vectors``         per sentence, the mean of all its pieces' last-layer states, special
                             tokens included when the sentence is its input's only sentence (as
                             X2Static's code does; inside a paragraph, its own pieces only)
``attention_window``         (n_words, 2S): attention summed over layers and heads, averaged over
                             the piece block (target = query, context = key), for offsets
                             -S..-1, +1..+S within the sentence (NaN where no word)
``mlm_*``                    per piece of each word: its id, its word, the top-k predicted piece
                             ids and logits — masked (one copy per word with all its pieces
                             masked, ``mlm_masking: whole_word``, or one copy per piece, ``piece``;
                             batched) or on the unmasked input (SemGloVe's released code)
============================ =====================================================================

and, for ASE, per-layer running sums of the vectors of selected vocabulary words (all layers),
with occurrence counts. Nothing loops over words or pieces in Python: pieces map to words by
index arrays, and means are ``index_add_`` segment sums. Whatever the teacher's dtype, every sum
(word and sentence means, ASE occurrence sums, attention over layers and heads) accumulates in fp32,
and the MLM top-k is re-scored in fp32 (:meth:`Teacher.mlm_topk`).

A part is *prepared* on the host (word ids, units, tokenisation and alignment, and for each batch
every index its features need) and then *computed* where the teacher runs: per batch one copy of
the indices to the device, one forward, then gathers, segment sums and scatters into the part's
output arrays on the device, converted to the storage dtype there; each array comes back to the
host once per part. Nothing on the device waits for the host, and on a GPU the next part is
prepared while this one computes (:mod:`.pipeline`). The arithmetic is the same on every device
and in every mode (the CPU pass's files are byte for byte those of the per-batch code before it).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from itertools import chain, repeat
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from staticvec.corpus.shards import iter_lines, parse_line
from staticvec.errors import StaticvecError
from staticvec.teacher.align import Alignment, PieceEncoder, align, count_pieces
from staticvec.teacher.pipeline import HostArrays, OrderedWorkers, PackedArrays, PartOutputs, lookahead, on_accelerator

log = logging.getLogger(__name__)

CONTEXTS = ("sentence", "paragraph")
MLM_MODES = ("masked", "unmasked")
MLM_MASKINGS = ("whole_word", "piece")
SENTENCE_SELECTIONS = ("kept", "all")
# the index arrays of the MLM predictions that the device reads (FeatureExtractor._mlm_indices)
MLM_DEVICE_ARRAYS = ("rows", "cols", "copy_rows", "copy_words", "by_copy", "piece_rows", "piece_cols")


@dataclass
class FeatureSpec:
    """Which features one teacher pass produces (the flags a Snakemake rule sets)."""

    context: str = "sentence"
    special_tokens: bool = True
    layers: tuple[int, ...] = (-1,)  # word vectors of these hidden layers; () = none
    sentence_vectors: bool = False
    attention_window: int = 0  # S; 0 = no attention features
    mlm_topk: int = 0  # k; 0 = no MLM predictions
    mlm_mode: str = "masked"
    mlm_masking: str = "whole_word"  # masked mode: whole_word (all the word's pieces in one copy) | piece
    ase: bool = False  # per-layer sums of the ASE words (all layers)
    vector_dtype: str = "float16"
    # which sentences are training sentences: "kept", the corpus's (keep = 1: 10-40 tokens, the papers' filter),
    # or "all", every sentence of the shard's paragraphs (X2Static §4.1 names only the paragraph filter)
    sentences: str = "kept"

    def __post_init__(self):
        self.layers = tuple(int(x) for x in self.layers)
        if self.context not in CONTEXTS:
            raise StaticvecError(f"feature context {self.context!r}: expected one of {', '.join(CONTEXTS)}")
        if self.mlm_mode not in MLM_MODES:
            raise StaticvecError(f"MLM mode {self.mlm_mode!r}: expected one of {', '.join(MLM_MODES)}")
        if self.mlm_masking not in MLM_MASKINGS:
            raise StaticvecError(f"MLM masking {self.mlm_masking!r}: expected one of {', '.join(MLM_MASKINGS)}")
        if self.attention_window < 0 or self.mlm_topk < 0:
            raise StaticvecError("attention window and MLM top-k must be >= 0")
        if self.sentences not in SENTENCE_SELECTIONS:
            raise StaticvecError(f"training sentences {self.sentences!r}: expected one of {', '.join(SENTENCE_SELECTIONS)}")

    def to_dict(self) -> dict:
        out = asdict(self)
        if out["sentences"] == "kept":  # the default: stored features written before the field read the same
            del out["sentences"]
        return out

    def absolute_layers(self, n_layers: int) -> list[int]:
        """Hidden-state indices 0..n_layers (0 = embedding output) of the requested layers."""
        out = []
        for layer in self.layers:
            index = layer if layer >= 0 else n_layers + 1 + layer
            if not 0 <= index <= n_layers:
                raise StaticvecError(f"layer {layer} does not exist: the teacher has layers 0..{n_layers}")
            out.append(index)
        return out


# ---------------------------------------------------------------- reading a shard into parts


@dataclass
class Part:
    """A block of a shard's training sentences, and the model inputs (units) that cover them."""

    index: int
    sentences: list[list[str]] = field(default_factory=list)  # training sentences, in order
    records: list[int] = field(default_factory=list)  # their line index in the shard
    paragraphs: list[int] = field(default_factory=list)  # their paragraph ordinal in the shard
    # paragraph context: per paragraph, all its sentences and which of them are training ones
    context: list[tuple[list[list[str]], list[int]]] = field(default_factory=list)


def iter_parts(shard, context: str = "sentence", part_sentences: int = 4096, start_part: int = 0,
               sentences: str = "kept", select: Callable[[int], bool] | None = None,
               stop_part: int | None = None) -> Iterator[Part]:
    """Parts of a shard, in order; parts before ``start_part``, from ``stop_part`` on and those ``select``
    (part index -> bool) leaves out are not built (their lines are checked and counted, not split into words;
    reading stops at ``stop_part``). Training sentences: the corpus's kept ones (``sentences`` "kept"), or
    every sentence of the paragraphs ("all")."""
    def wanted(index: int) -> bool:
        return index >= start_part and (select is None or select(index))

    part = Part(0)
    building = wanted(0)
    n_sentences = 0  # training sentences of the current part (built or not)
    paragraph_sentences: list[list[str]] = []
    paragraph_out: list[int] = []  # per paragraph sentence: index among the part's sentences, or -1
    current = None
    ordinal = -1
    every = sentences == "all"

    def close_paragraph():
        if building and paragraph_sentences and any(i >= 0 for i in paragraph_out):
            part.context.append((list(paragraph_sentences), list(paragraph_out)))
        paragraph_sentences.clear()
        paragraph_out.clear()

    for lineno, line in enumerate(iter_lines(shard)):
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 4 or fields[2] not in ("0", "1") or not fields[1].isdigit():
            parse_line(line, shard, lineno + 1)  # raises the shard format's error
        key = (fields[0], int(fields[1]))
        if key != current:
            close_paragraph()
            current = key
            ordinal += 1
            # parts end at paragraph boundaries (always, so parts do not depend on the context)
            if n_sentences >= part_sentences:
                if building:
                    yield part
                part = Part(part.index + 1)
                n_sentences = 0
                if stop_part is not None and part.index >= stop_part:
                    return
                building = wanted(part.index)
        training = (fields[2] == "1" or every) and fields[3] != ""
        if not building:
            n_sentences += training
            continue
        tokens = fields[3].split(" ") if fields[3] else []
        if training:
            paragraph_out.append(len(part.sentences))
            part.sentences.append(tokens)
            part.records.append(lineno)
            part.paragraphs.append(ordinal)
            n_sentences += 1
        else:
            paragraph_out.append(-1)
        if context == "paragraph":
            paragraph_sentences.append(tokens)
    close_paragraph()
    if n_sentences and building:
        yield part


@dataclass
class Units:
    """Model inputs of a part: words, and for each word its output position (-1: context only)."""

    words: list[list[str]]
    word_out: np.ndarray  # (total unit words,) index into the part's concatenated sentence words
    word_sentence: np.ndarray  # (total unit words,) part sentence of the word, -1 = context only
    unit_sentence: np.ndarray  # (n_units,) the sentence a unit holds when it holds only one, else -1


def build_units(part: Part, context: str, tokenizer=None, budget: int | None = None, slack: int = 0) -> Units:
    """Sentence context: one unit per sentence. Paragraph context: paragraph chunks within ``budget``."""
    sent_len = np.fromiter((len(s) for s in part.sentences), dtype=np.int64, count=len(part.sentences))
    sent_start = np.concatenate([[0], np.cumsum(sent_len)[:-1]]) if len(sent_len) else sent_len
    if context == "sentence":
        n = len(part.sentences)
        word_sentence = np.repeat(np.arange(n), sent_len)
        return Units(list(part.sentences), np.arange(int(sent_len.sum())), word_sentence, np.arange(n))
    # the pieces of every paragraph sentence of the part, in one tokenizer call
    context = [tokens for sentences, _ in part.context for tokens in sentences]
    pieces = count_pieces(tokenizer, context) if budget is not None else np.zeros(len(context), np.int64)
    pieces, at = pieces.tolist(), 0
    units, single = [], []
    emitted_sentence, emitted_words = [], []  # per sentence of a unit, in unit order: part sentence (-1), words

    def close(words, chunk):
        units.append(words)
        sentences = {o for o, n in chunk if n}
        # a unit holding a single kept sentence (a one-sentence paragraph or chunk) is that sentence
        single.append(sentences.pop() if len(sentences) == 1 else -1)
        emitted_sentence.extend(o for o, _ in chunk)
        emitted_words.extend(n for _, n in chunk)

    for sentences, out in part.context:
        chunk_words, chunk, used = [], [], 0
        for tokens, o, n_pieces in zip(sentences, out, pieces[at:at + len(sentences)]):
            if chunk_words and used + n_pieces + slack > budget:
                close(chunk_words, chunk)
                chunk_words, chunk, used = [], [], 0
            chunk_words.extend(tokens)
            chunk.append((o, len(tokens)))
            used += n_pieces
        if chunk_words:
            close(chunk_words, chunk)
        at += len(sentences)
    # every unit word's part sentence (-1: context only) and its index among the part's words
    o = np.asarray(emitted_sentence, dtype=np.int64)
    n = np.asarray(emitted_words, dtype=np.int64)
    word_sentence = np.repeat(o, n)
    within = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)  # word's position in its sentence
    word_out = np.where(word_sentence >= 0, sent_start[np.maximum(word_sentence, 0)] + within, -1) \
        if len(sent_start) else np.full(len(word_sentence), -1)
    return Units(units, word_out.astype(np.int64), word_sentence, np.asarray(single, dtype=np.int64))


# ---------------------------------------------------------------- batching


def length_batches(lengths: np.ndarray, batch_tokens: int, max_batch: int = 1024) -> list[np.ndarray]:
    """Unit indices grouped by length (longest first), each batch ≤ ``batch_tokens`` padded pieces."""
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        longest = max(int(lengths[order[start]]), 1)
        size = max(1, min(max_batch, batch_tokens // longest))
        batches.append(order[start:start + size])
        start += size
    return batches


def pad_batch(al: Alignment, units: np.ndarray, pad_id: int):
    """Padded (B, L) piece ids, piece→word (within unit, -1 special/pad) and attention mask."""
    lengths = al.lengths[units]
    width = int(lengths.max())
    pos = al.offsets[units][:, None] + np.arange(width)[None, :]
    valid = np.arange(width)[None, :] < lengths[:, None]
    pos = np.where(valid, pos, 0)
    ids = np.where(valid, al.input_ids[pos], pad_id)
    piece_word = np.where(valid, al.piece_word[pos], -1)
    return ids, piece_word, valid


@dataclass
class Batch:
    """One batch of a part, prepared on the host: its inputs and every index its features need, so that
    the device side only gathers, sums and scatters (no index is computed there, no value read back).

    *Local* words are the words of the batch's units, concatenated (context-only words included)."""

    shape: tuple[int, int]  # (B, L): units, padded pieces
    n_local: int
    max_words: int  # words of the batch's longest unit (in words)
    out: np.ndarray  # (n_local,) part word of each local word, -1: context only
    word_sentence: np.ndarray  # (n_local,) part sentence of each local word, -1: context only
    local: np.ndarray  # (B, L) local word of each piece, -1: special token or padding
    piece_ids: np.ndarray  # (B, L) piece ids (padding: the pad id)
    n_sentences: int = 0  # sentences with pieces in this batch (sentence vectors)
    mlm: dict | None = None  # host-side arrays of the MLM predictions
    device: PackedArrays | None = None  # the int64 arrays the device reads (see PartPreparer._batch)


@dataclass
class PreparedPart:
    """A part's host work done: the arrays that need no teacher, and its batches."""

    part: Part  # from a worker process: its index only (sentences and context stay there)
    arrays: dict[str, np.ndarray]
    n_words: int
    batches: list[Batch]
    n_truncated: int

    @property
    def n_sentences(self) -> int:
        return len(self.arrays["sentence_records"])

    def light(self) -> "PreparedPart":
        """What the device needs of it: the part's words (Python lists) and the batches' host-only arrays left
        out (what crosses from a worker process is flat numpy buffers)."""
        for batch in self.batches:
            batch.local = batch.piece_ids = batch.word_sentence = None
        return PreparedPart(Part(self.part.index), self.arrays, self.n_words, self.batches, self.n_truncated)


# ---------------------------------------------------------------- the extraction


class PartPreparer:
    """The host work of a part (word ids, units, tokenisation and alignment, batches and every index their
    features need), with no teacher and no torch: what a worker process runs (:func:`prepared_parts`).

    Holds what that work reads of the teacher (its tokenizer as a :class:`PieceEncoder`, maximum length,
    special tokens, pad id), the spec, the vocabulary's index and the batch size; it pickles."""

    def __init__(self, teacher, spec: FeatureSpec, vocab=None, batch_tokens: int = 8192):
        self.spec = spec
        self.word_index = None if vocab is None else vocab.index
        self.batch_tokens = int(batch_tokens)
        self.encoder = PieceEncoder(teacher.tokenizer)
        self.max_length = teacher.max_length
        self.budget = teacher.max_length - teacher.n_special if spec.special_tokens else teacher.max_length
        self.slack = 0 if teacher.family == "bert" else 4  # BPE: a chunk's first word may gain pieces
        self.pad_id = teacher.pad_id

    def word_ids(self, words: list[str]) -> np.ndarray:
        if self.word_index is None:
            return np.full(len(words), -1, dtype=np.int32)
        return np.fromiter(map(self.word_index.get, words, repeat(-1)), dtype=np.int32, count=len(words))

    def units(self, part: Part) -> Units:
        return build_units(part, self.spec.context, self.encoder, self.budget, self.slack)

    def prepare(self, part: Part) -> PreparedPart:
        """The host work of a part: word ids, units, tokenisation and alignment, batches and their indices."""
        spec = self.spec
        n_sent = len(part.sentences)
        sent_len = np.fromiter((len(s) for s in part.sentences), dtype=np.int64, count=n_sent)
        n_words = int(sent_len.sum())
        arrays: dict[str, np.ndarray] = {
            "sentence_offsets": np.concatenate([[0], np.cumsum(sent_len)]).astype(np.int64),
            "word_ids": self.word_ids(list(chain.from_iterable(part.sentences))),
            "sentence_records": np.asarray(part.records, dtype=np.int64),
            "sentence_paragraphs": np.asarray(part.paragraphs, dtype=np.int64),
        }
        units = self.units(part)
        al = align(self.encoder, units.words, spec.special_tokens, self.max_length)
        pieces_per_word = al.pieces_per_word()
        word_pieces = np.zeros(n_words, dtype=np.int64)
        target = units.word_out >= 0
        word_pieces[units.word_out[target]] = pieces_per_word[target]
        arrays["word_pieces"] = np.minimum(word_pieces, np.iinfo(np.int16).max).astype(np.int16)
        unit_word_start = al.word_offsets()
        batches = [self._batch(al, units, unit_word_start, batch)
                   for batch in length_batches(al.lengths, self.batch_tokens)]
        return PreparedPart(part, arrays, n_words, batches, int(al.truncated.sum()))

    def _batch(self, al: Alignment, units: Units, unit_word_start: np.ndarray, batch: np.ndarray) -> Batch:
        """A batch's inputs and indices (the names of ``device`` are read by :meth:`FeatureExtractor.compute` and its helpers)."""
        spec = self.spec
        ids, pw, valid = pad_batch(al, batch, self.pad_id)
        nw = al.n_words[batch]
        local_start = np.concatenate([[0], np.cumsum(nw)[:-1]])
        local = np.where(pw >= 0, pw + local_start[:, None], -1)
        n_local = int(nw.sum())
        unit_words = np.repeat(unit_word_start[batch] - local_start, nw) + np.arange(n_local)  # local -> unit word
        out = units.word_out[unit_words]
        word_sentence = units.word_sentence[unit_words]
        flat = local.reshape(-1)
        piece_pos = np.flatnonzero(flat >= 0)  # the pieces of words, in (unit, position) order
        piece_word = flat[piece_pos]
        target = np.flatnonzero(out >= 0)
        host = {"ids": ids, "mask": valid, "piece_pos": piece_pos, "piece_word": piece_word,
                # a word's pieces, at least 1 (a word without pieces gets 0 / 1 = a zero vector)
                "word_counts": np.maximum(np.bincount(piece_word, minlength=n_local), 1)[:, None],
                "target": target, "dest": out[target]}
        b = Batch(ids.shape, n_local, int(nw.max(initial=0)), out, word_sentence, local, ids)
        if spec.sentence_vectors:
            host.update(self._sentence_indices(b, valid, units.unit_sentence[batch]))
            b.n_sentences = len(host["sentence_dest"])
        if spec.attention_window and b.max_words:
            host.update(self._attention_indices(b, nw, local_start))
        if spec.mlm_topk:
            b.mlm = self._mlm_indices(b)
            if b.mlm is not None:
                host.update({f"mlm_{k}": b.mlm.pop(k) for k in list(b.mlm) if k in MLM_DEVICE_ARRAYS})
                if "mlm_copy_words" in host:
                    host["mlm_local"] = local
        b.device = PackedArrays(host)
        return b

    @staticmethod
    def _sentence_indices(batch: Batch, valid: np.ndarray, unit_sentence: np.ndarray) -> dict[str, np.ndarray]:
        """A sentence's pieces; in sentence context its special tokens count too (X2Static)."""
        local = batch.local
        piece_sent = np.where(local >= 0, batch.word_sentence[np.maximum(local, 0)], -1)
        # special tokens count for the sentence when it is its input's only sentence
        piece_sent = np.where(valid & (local < 0), unit_sentence[:, None], piece_sent).reshape(-1)
        pos = np.flatnonzero(piece_sent >= 0)
        present, index = np.unique(piece_sent[pos], return_inverse=True)
        return {"sentence_pos": pos, "sentence_index": index.reshape(-1), "sentence_dest": present,
                "sentence_counts": np.maximum(np.bincount(index.reshape(-1), minlength=len(present)), 1)[:, None]}

    def _attention_indices(self, batch: Batch, nw: np.ndarray, local_start: np.ndarray) -> dict[str, np.ndarray]:
        """The block-mean matrix's entries, and the ±S window's gather indices and validity."""
        S = self.spec.attention_window
        B, L = batch.shape
        local, n_local = batch.local, batch.n_local
        # M[b, w, p] = 1/|pieces(w)| for the pieces p of unit word w: W = M A Mᵀ is the block mean
        in_unit = np.where(local >= 0, local - local_start[:, None], -1)
        b_idx, p_idx = np.nonzero(in_unit >= 0)
        # window gather: word i of unit b, offsets -S..-1, +1..+S, same sentence only
        offs = np.array(list(range(-S, 0)) + list(range(1, S + 1)), dtype=np.int64)
        unit_of = np.repeat(np.arange(B), nw)
        pos = np.arange(n_local) - np.repeat(local_start, nw)
        j = pos[:, None] + offs[None, :]  # (n_local, 2S)
        inside = (j >= 0) & (j < nw[unit_of][:, None])
        jc = j.clip(min=0, max=batch.max_words - 1)
        j_global = np.minimum(local_start[unit_of][:, None] + jc, n_local - 1)
        same = batch.word_sentence[j_global] == batch.word_sentence[:, None]
        has = np.bincount(local[local >= 0], minlength=n_local) > 0
        return {"attn_m": np.stack([b_idx, in_unit[b_idx, p_idx], p_idx]), "attn_unit": unit_of[:, None],
                "attn_pos": pos[:, None], "attn_j": jc, "attn_ok": inside & same & has[:, None] & has[j_global]}

    def _mlm_indices(self, batch: Batch) -> dict | None:
        """The pieces of the batch's target words, and for masked mode the masked copies (one per word with
        all its pieces masked, ``whole_word``, or one per piece) in groups under the token budget."""
        local, out = batch.local, batch.out
        piece_target = (local >= 0) & (out[np.maximum(local, 0)] >= 0) if batch.n_local else np.zeros_like(local, bool)
        b_idx, p_idx = np.nonzero(piece_target)  # row-major: by unit, then position = word order
        if not len(b_idx):
            return None
        m = {"words": out[local[b_idx, p_idx]], "piece_ids": batch.piece_ids[b_idx, p_idx], "rows": b_idx,
             "cols": p_idx}
        if self.spec.mlm_mode == "unmasked":
            return m
        # Masked copies, batched under the token budget: whole_word (the paper's teacher,
        # bert-large-uncased-whole-word-masking, and SemGloVe's "mask the target word") masks every
        # piece of the word in one copy and reads each piece's prediction from it; piece masks one
        # piece per copy.
        per = max(1, self.batch_tokens // batch.shape[1])
        if self.spec.mlm_masking == "whole_word":
            key = b_idx.astype(np.int64) * (int(local.max()) + 1) + local[b_idx, p_idx]
            _, first, copy_of_piece = np.unique(key, return_index=True, return_inverse=True)
            copy_of_piece = copy_of_piece.reshape(-1)
            m["copy_rows"], m["copy_words"] = b_idx[first], local[b_idx[first], p_idx[first]]
        else:
            copy_of_piece = np.arange(len(b_idx))
            m["copy_rows"] = b_idx
        n_copies = len(m["copy_rows"])
        by_copy = np.argsort(copy_of_piece, kind="stable")  # the pieces of copies s..s+per: one slice
        m.update(per=per, n_copies=n_copies, by_copy=by_copy, piece_rows=copy_of_piece[by_copy],
                 piece_cols=p_idx[by_copy],
                 bounds=np.searchsorted(copy_of_piece[by_copy], np.arange(0, n_copies + per, per)))
        return m


class FeatureExtractor:
    """Runs a teacher over parts and returns each part's feature arrays (see module doc).

    A part is :meth:`prepare`\\ d on the host (words, tokenisation, alignment, batches and their
    indices), then :meth:`compute`\\ d where the teacher runs; :meth:`extract_parts` overlaps the next
    part's preparation with the current part's computation on an accelerator (:mod:`.pipeline`)."""

    def __init__(self, teacher, spec: FeatureSpec, vocab=None, batch_tokens: int = 8192,
                 ase_words: Sequence[int] | None = None):
        import torch

        self.torch = torch
        self.teacher = teacher
        self.spec = spec
        self.vocab = vocab
        self.batch_tokens = int(batch_tokens)
        self.layers = spec.absolute_layers(teacher.n_layers)
        self.n_truncated = 0  # inputs cut at the maximum length in the last part computed
        if spec.mlm_topk and teacher.causal:
            raise StaticvecError(f"teacher {teacher.name!r} is a causal LM: it has no masked-LM predictions")
        if spec.mlm_topk and not teacher.has_mlm_head:
            why = getattr(teacher, "head_problem", None)
            raise StaticvecError(
                f"teacher {teacher.name!r} " + (f"cannot use its own MLM head: {why}; " if why else "ships no MLM head: ")
                + "fit one with 'staticvec teacher fit-mlm-head' and pass it with --mlm-head"
                + (" (in the workflow: config teacher.mlm_head.fit: always)" if why else "")
            )
        if spec.mlm_topk and spec.mlm_mode == "masked" and teacher.mask_id is None:
            raise StaticvecError(f"teacher {teacher.name!r} has no mask token: use MLM mode 'unmasked'")
        if spec.attention_window:
            teacher.use_eager_attention()
        # ASE: running sums for the words met so far only (a row is allocated at a word's first
        # occurrence), so memory grows with the shard's distinct words, never with the vocabulary:
        # vocabulary id -> row (-1: not met yet; -2: not an ASE word)
        self.ase_rows = None
        if spec.ase:
            if vocab is None:
                raise StaticvecError("ASE sums need a vocabulary")
            self.ase_rows = np.full(len(vocab), -1 if ase_words is None else -2, dtype=np.int64)
            if ase_words is not None:
                self.ase_rows[np.asarray(ase_words, dtype=np.int64)] = -1
            self._ase_reset(np.zeros(0, np.int64))
        self.preparer = PartPreparer(teacher, spec, vocab, batch_tokens)

    # --------------------------------------------------------- helpers
    def word_ids(self, words: list[str]) -> np.ndarray:
        return self.preparer.word_ids(words)

    def units(self, part: Part) -> Units:
        return self.preparer.units(part)

    @property
    def on_accelerator(self) -> bool:
        return on_accelerator(self.teacher.device)

    def _to_device(self, array: np.ndarray):
        """An index array on the teacher's device without waiting for it (pinned, non-blocking on CUDA)."""
        return HostArrays({"a": array}, pin=self._pin).to(self.teacher.device)["a"]

    @property
    def _pin(self) -> bool:
        return str(self.teacher.device).startswith("cuda")

    # --------------------------------------------------------- parts
    def prepare(self, part: Part) -> PreparedPart:
        """The host work of a part (:meth:`PartPreparer.prepare`)."""
        return self.preparer.prepare(part)

    def extract(self, part: Part) -> dict[str, np.ndarray]:
        """The feature arrays of one part."""
        return self.compute(self.prepare(part))

    def extract_parts(self, parts: Iterable[Part], overlap: bool | None = None
                      ) -> Iterator[tuple[Part, dict[str, np.ndarray]]]:
        """``(part, arrays)`` for each part, in order. With ``overlap`` (default: on an accelerator), the
        next part is read, tokenised and indexed in a background thread while this one is computed."""
        overlap = self.on_accelerator if overlap is None else overlap
        for prepared in lookahead(self.prepare, parts, background=overlap):
            yield prepared.part, self.compute(prepared)

    def extract_shard(self, shard, part_sentences: int = 4096, start_part: int = 0, stop_part: int | None = None,
                      host_workers: int = 0, overlap: bool | None = None
                      ) -> Iterator[tuple[Part, dict[str, np.ndarray]]]:
        """``(part, arrays)`` for the parts ``start_part`` … ``stop_part`` (excluded; None: to the end) of a
        shard, in order. ``host_workers`` >= 1: the parts are read and prepared in that many worker processes
        (:meth:`prepare_in_workers`; the parts then hold their index only), else here (``overlap``: in a thread,
        :meth:`extract_parts`). The arrays are the same either way, byte for byte."""
        spec = self.spec
        if host_workers < 1:
            parts = iter_parts(shard, spec.context, part_sentences, start_part, spec.sentences, stop_part=stop_part)
            yield from self.extract_parts(parts, overlap)
            return
        with self.prepare_in_workers(shard, part_sentences, start_part, stop_part, host_workers) as workers:
            for prepared in workers:
                yield prepared.part, self.compute(prepared)

    def prepare_in_workers(self, shard, part_sentences: int, start_part: int, stop_part: int | None, n_workers: int,
                           consume=None, consume_args: tuple = ()) -> OrderedWorkers:
        """The shard's parts ``start_part`` … ``stop_part`` prepared in ``n_workers`` processes
        (:func:`prepared_parts`), in order, for :meth:`compute`; ``consume`` runs there on the jobs sent back
        (the finished parts' files: :class:`~staticvec.teacher.store.WorkerPartWriter`)."""
        args = (self.preparer, str(shard), part_sentences, start_part, stop_part)
        return OrderedWorkers(prepared_parts, args, n_workers, name="staticvec-prepare", consume=consume,
                              consume_args=consume_args)

    # --------------------------------------------------------- device side
    def compute(self, prepared: PreparedPart) -> dict[str, np.ndarray]:
        """The teacher's part of the work: one forward per batch, every feature from it."""
        torch = self.torch
        spec, teacher = self.spec, self.teacher
        d = teacher.hidden_size
        n_words, n_sent = prepared.n_words, prepared.n_sentences
        vdtype = np.dtype(spec.vector_dtype)
        outputs = PartOutputs(teacher.device)
        word_vec = {layer: outputs.new(f"word_vectors.{layer}", (n_words, d), vdtype) for layer in self.layers}
        sent_vec = outputs.new("sentence_vectors", (n_sent, d), vdtype) if spec.sentence_vectors else None
        S = spec.attention_window
        attn = outputs.new("attention_window", (n_words, 2 * S), np.float32, float("nan")) if S else None
        mlm_chunks = []
        need_hidden = spec.ase or bool(self.layers)  # all layers' states; else the last one suffices
        self.n_truncated = prepared.n_truncated
        with torch.inference_mode():
            for batch in prepared.batches:
                t = HostArrays(batch.device, pin=self._pin).to(teacher.device)
                B, L = batch.shape
                result = teacher.forward(t["ids"], t["mask"], hidden_states=need_hidden, attentions=bool(S))
                n_local = batch.n_local

                def word_means(states):  # (B, L, d) -> (n_local, d) mean over each word's pieces
                    h = states.reshape(B * L, -1).index_select(0, t["piece_pos"]).float()
                    return torch.zeros(n_local, h.shape[-1], device=h.device).index_add_(0, t["piece_word"], h) \
                        / t["word_counts"]

                hidden = result.hidden_states
                last = result.last_hidden_state
                for layer in self.layers:
                    vec = word_means(hidden[layer])
                    word_vec[layer].index_copy_(0, t["dest"], vec.index_select(0, t["target"]).to(word_vec[layer].dtype))
                if spec.ase and n_local:
                    self._ase_add(hidden, word_means, batch, prepared.arrays["word_ids"])
                if sent_vec is not None and batch.n_sentences:
                    self._sentence_means(sent_vec, last, t)
                if S and batch.max_words:
                    self._attention(attn, result.attentions, batch, t)
                if spec.mlm_topk:
                    mlm_chunks.append(self._mlm(t, last, batch))
                del result, hidden, last
        out = dict(prepared.arrays)
        out.update(outputs.host())
        if spec.mlm_topk:
            out.update(self._mlm_arrays(mlm_chunks))
        return out

    # --------------------------------------------------------- feature pieces
    def _ase_add(self, hidden, word_means, batch: Batch, part_word_ids: np.ndarray):
        torch = self.torch
        # OOV words (id -1), context-only words and words outside the ASE list (row -2) get no row
        vocab_of_local = part_word_ids[np.maximum(batch.out, 0)].astype(np.int64)
        keep = (vocab_of_local >= 0) & (batch.out >= 0)
        keep &= self.ase_rows[np.maximum(vocab_of_local, 0)] >= -1
        if not keep.any():
            return
        self._ase_allocate(vocab_of_local[keep])
        index = self._to_device(np.stack([np.flatnonzero(keep), self.ase_rows[vocab_of_local[keep]]]))
        keep_dev, rows_dev = index[0], index[1]
        stacked = torch.stack([word_means(h).index_select(0, keep_dev) for h in hidden], dim=1)  # (n, layers+1, d)
        self.ase_sums.index_add_(0, rows_dev, stacked)
        self.ase_counts.index_add_(0, rows_dev, torch.ones_like(rows_dev))

    def _sentence_means(self, sent_vec, last, t):
        """Mean of each sentence's pieces' last-layer states (indices: :meth:`_sentence_indices`)."""
        torch = self.torch
        h = last.reshape(-1, last.shape[-1]).index_select(0, t["sentence_pos"]).float()
        sums = torch.zeros(len(t["sentence_dest"]), h.shape[-1], device=h.device).index_add_(0, t["sentence_index"], h)
        sent_vec.index_copy_(0, t["sentence_dest"], (sums / t["sentence_counts"]).to(sent_vec.dtype))

    def _attention(self, attn, attentions, batch: Batch, t):
        """Word × word attention (sum over layers and heads; block mean, target as query) in ±S."""
        torch = self.torch
        device = attentions[0].device
        A = torch.zeros_like(attentions[0][:, 0], dtype=torch.float32)
        for layer_attn in attentions:
            A += layer_attn.sum(dim=1, dtype=torch.float32)  # (B, L, L), fp32 sum without an fp32 copy
        B, L = batch.shape
        M = torch.zeros(B, batch.max_words, L, device=device)
        m = t["attn_m"]
        M[m[0], m[1], m[2]] = 1.0
        M = M / M.sum(dim=-1, keepdim=True).clamp(min=1)
        Wm = M @ A @ M.transpose(1, 2)  # (B, W_max, W_max)
        vals = Wm[t["attn_unit"], t["attn_pos"], t["attn_j"]]
        vals = torch.where(t["attn_ok"].bool(), vals, torch.full_like(vals, float("nan")))
        attn.index_copy_(0, t["dest"], vals.index_select(0, t["target"]))

    def _mlm(self, t, last, batch: Batch):
        """Top-k MLM predictions for every piece of every target word of the batch."""
        torch = self.torch
        teacher, k, m = self.teacher, self.spec.mlm_topk, batch.mlm
        if m is None:
            return None
        if self.spec.mlm_mode == "unmasked":
            states = last[t["mlm_rows"], t["mlm_cols"]]
        else:
            states = torch.empty(len(m["words"]), last.shape[-1], dtype=last.dtype, device=last.device)
            per, bounds = m["per"], m["bounds"]
            for c, s in enumerate(range(0, m["n_copies"], per)):
                bb = t["mlm_copy_rows"][s:s + per]
                copy = t["ids"][bb].clone()
                if "mlm_copy_words" in t:
                    copy.masked_fill_(t["mlm_local"][bb] == t["mlm_copy_words"][s:s + per, None], teacher.mask_id)
                else:
                    copy[torch.arange(len(bb), device=copy.device), t["mlm_cols"][s:s + per]] = teacher.mask_id
                res = teacher.forward(copy, t["mask"][bb], hidden_states=False, attentions=False)
                pieces = slice(int(bounds[c]), int(bounds[c + 1]))
                states[t["mlm_by_copy"][pieces]] = res.last_hidden_state[
                    t["mlm_piece_rows"][pieces] - s, t["mlm_piece_cols"][pieces]].to(states.dtype)
        top_ids, top_logits = [], []
        for chunk in torch.split(states, 1024):
            v, i = teacher.mlm_topk(chunk, k)
            top_ids.append(i)
            top_logits.append(v)
        return m["words"], m["piece_ids"], torch.cat(top_ids).cpu().numpy(), torch.cat(top_logits).cpu().numpy()

    def _mlm_arrays(self, chunks):
        k = self.spec.mlm_topk
        chunks = [c for c in chunks if c is not None]
        if not chunks:
            return {"mlm_piece_word": np.zeros(0, np.int64), "mlm_piece_ids": np.zeros(0, np.int32),
                    "mlm_topk_ids": np.zeros((0, k), np.int32), "mlm_topk_logits": np.zeros((0, k), np.float32)}
        words = np.concatenate([c[0] for c in chunks])
        order = np.argsort(words, kind="stable")  # batches are length-sorted: restore word order
        return {
            "mlm_piece_word": words[order].astype(np.int64),
            "mlm_piece_ids": np.concatenate([c[1] for c in chunks])[order].astype(np.int32),
            "mlm_topk_ids": np.concatenate([c[2] for c in chunks])[order].astype(np.int32),
            "mlm_topk_logits": np.concatenate([c[3] for c in chunks])[order].astype(np.float32),
        }

    # --------------------------------------------------------- ASE state
    def _ase_reset(self, word_ids: np.ndarray, sums=None, counts=None) -> None:
        torch, t = self.torch, self.teacher
        n = len(word_ids)
        self.ase_word_ids = np.asarray(word_ids, dtype=np.int64)
        self.ase_rows[self.ase_rows >= 0] = -1
        self.ase_rows[self.ase_word_ids] = np.arange(n)
        capacity = max(1024, 2 * n)
        self.ase_sums = torch.zeros(capacity, t.n_layers + 1, t.hidden_size, dtype=torch.float32, device=t.device)
        self.ase_counts = torch.zeros(capacity, dtype=torch.int64, device=t.device)
        if n:
            self.ase_sums[:n] = torch.as_tensor(np.ascontiguousarray(np.moveaxis(sums, 0, 1)), device=t.device)
            self.ase_counts[:n] = torch.as_tensor(counts, device=t.device)

    def _ase_allocate(self, vocab_ids: np.ndarray) -> None:
        """Rows for the words met for the first time (capacity doubles when full)."""
        new = np.unique(vocab_ids[self.ase_rows[vocab_ids] == -1])
        if not len(new):
            return
        n = len(self.ase_word_ids)
        self.ase_rows[new] = np.arange(n, n + len(new))
        self.ase_word_ids = np.concatenate([self.ase_word_ids, new])
        if n + len(new) > len(self.ase_counts):
            torch = self.torch
            capacity = max(2 * len(self.ase_counts), n + len(new))
            sums = torch.zeros(capacity, *self.ase_sums.shape[1:], dtype=torch.float32, device=self.ase_sums.device)
            counts = torch.zeros(capacity, dtype=torch.int64, device=self.ase_counts.device)
            sums[:n], counts[:n] = self.ase_sums[:n], self.ase_counts[:n]
            self.ase_sums, self.ase_counts = sums, counts

    def ase_state(self) -> dict[str, np.ndarray]:
        """The words met so far, by vocabulary id: word_ids (n,), counts (n,), sums (layers+1, n, d)
        float32 — layer-major, so that a reader maps one layer's rows from disk."""
        n = len(self.ase_word_ids)
        order = np.argsort(self.ase_word_ids, kind="stable")
        sums = self.ase_sums[:n].cpu().numpy()[order]
        return {"word_ids": self.ase_word_ids[order], "counts": self.ase_counts[:n].cpu().numpy()[order],
                "sums": np.ascontiguousarray(np.moveaxis(sums, 1, 0))}

    def load_ase_state(self, state: dict[str, np.ndarray]) -> None:
        ids = np.asarray(state["word_ids"], dtype=np.int64)
        if len(ids) and (ids.max() >= len(self.ase_rows) or (self.ase_rows[ids] == -2).any()):
            raise StaticvecError("ASE checkpoint was written for another word list")
        self._ase_reset(ids, state["sums"], state["counts"])


def iter_features(teacher, shard, spec: FeatureSpec, vocab=None, part_sentences: int = 4096,
                  batch_tokens: int = 8192, start_part: int = 0, extractor: FeatureExtractor | None = None
                  ) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """``(part index, arrays)`` of a shard, computed now: the on-the-fly path methods can call."""
    extractor = extractor or FeatureExtractor(teacher, spec, vocab, batch_tokens)
    for part, arrays in extractor.extract_parts(iter_parts(shard, spec.context, part_sentences, start_part,
                                                           spec.sentences)):
        yield part.index, arrays


def prepared_parts(preparer: PartPreparer, shard: str, part_sentences: int, start_part: int, stop_part: int | None,
                   worker: int = 0, n_workers: int = 1) -> Iterator[PreparedPart]:
    """A worker's share of a shard's parts, prepared (:class:`~staticvec.teacher.pipeline.OrderedWorkers`):
    parts ``start_part + worker``, ``start_part + worker + n_workers``… before ``stop_part``, the others' lines
    only counted; each light (:meth:`PreparedPart.light`)."""
    spec = preparer.spec

    def mine(index: int) -> bool:
        return (index - start_part) % n_workers == worker

    for part in iter_parts(shard, spec.context, part_sentences, start_part, spec.sentences, select=mine,
                           stop_part=stop_part):
        yield preparer.prepare(part).light()
