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
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Iterator, Sequence

import numpy as np

from staticvec.corpus.shards import iter_records
from staticvec.errors import StaticvecError
from staticvec.teacher.align import Alignment, align, count_pieces

log = logging.getLogger(__name__)

CONTEXTS = ("sentence", "paragraph")
MLM_MODES = ("masked", "unmasked")
MLM_MASKINGS = ("whole_word", "piece")
SENTENCE_SELECTIONS = ("kept", "all")


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
               sentences: str = "kept") -> Iterator[Part]:
    """Parts of a shard, in order; parts before ``start_part`` are skipped without being built. Training
    sentences: the corpus's kept ones (``sentences`` "kept"), or every sentence of the paragraphs ("all")."""
    part = Part(0)
    paragraph_sentences: list[list[str]] = []
    paragraph_out: list[int] = []  # per paragraph sentence: index among the part's sentences, or -1
    current = None
    ordinal = -1

    def close_paragraph():
        if paragraph_sentences and any(i >= 0 for i in paragraph_out):
            part.context.append((list(paragraph_sentences), list(paragraph_out)))
        paragraph_sentences.clear()
        paragraph_out.clear()

    for lineno, record in enumerate(iter_records(shard)):
        key = (record.article, record.paragraph)
        if key != current:
            close_paragraph()
            current = key
            ordinal += 1
            # parts end at paragraph boundaries (always, so parts do not depend on the context)
            if len(part.sentences) >= part_sentences:
                if part.index >= start_part:
                    yield part
                part = Part(part.index + 1)
        if (record.keep or sentences == "all") and record.tokens:
            paragraph_out.append(len(part.sentences))
            part.sentences.append(record.tokens)
            part.records.append(lineno)
            part.paragraphs.append(ordinal)
        else:
            paragraph_out.append(-1)
        if context == "paragraph":
            paragraph_sentences.append(record.tokens)
    close_paragraph()
    if part.sentences and part.index >= start_part:
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
    units, outs, sents = [], [], []
    for sentences, out in part.context:
        pieces = count_pieces(tokenizer, sentences) if budget is not None else np.zeros(len(sentences), np.int64)
        chunk_words, chunk_out, chunk_sent, used = [], [], [], 0
        for tokens, o, n_pieces in zip(sentences, out, pieces):
            if chunk_words and used + n_pieces + slack > budget:
                units.append(chunk_words)
                outs.append(np.concatenate(chunk_out))
                sents.append(np.concatenate(chunk_sent))
                chunk_words, chunk_out, chunk_sent, used = [], [], [], 0
            chunk_words = chunk_words + tokens
            n = len(tokens)
            chunk_out.append(sent_start[o] + np.arange(n) if o >= 0 else np.full(n, -1))
            chunk_sent.append(np.full(n, o))
            used += int(n_pieces)
        if chunk_words:
            units.append(chunk_words)
            outs.append(np.concatenate(chunk_out))
            sents.append(np.concatenate(chunk_sent))
    cat = (lambda xs: np.concatenate(xs).astype(np.int64)) if units else (lambda xs: np.zeros(0, np.int64))
    # a unit holding a single kept sentence (a one-sentence paragraph or chunk) is that sentence
    single = np.array([s[0] if len(s) and s[0] >= 0 and (s == s[0]).all() else -1 for s in sents], dtype=np.int64)
    return Units(units, cat(outs), cat(sents), single)


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


# ---------------------------------------------------------------- the extraction


class FeatureExtractor:
    """Runs a teacher over parts and returns each part's feature arrays (see module doc)."""

    def __init__(self, teacher, spec: FeatureSpec, vocab=None, batch_tokens: int = 8192,
                 ase_words: Sequence[int] | None = None):
        import torch

        self.torch = torch
        self.teacher = teacher
        self.spec = spec
        self.vocab = vocab
        self.batch_tokens = int(batch_tokens)
        self.layers = spec.absolute_layers(teacher.n_layers)
        if spec.mlm_topk and teacher.causal:
            raise StaticvecError(f"teacher {teacher.name!r} is a causal LM: it has no masked-LM predictions")
        if spec.mlm_topk and not teacher.has_mlm_head:
            raise StaticvecError(
                f"teacher {teacher.name!r} ships no MLM head: fit one with 'staticvec teacher fit-mlm-head' "
                "and pass it with --mlm-head"
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

    # --------------------------------------------------------- helpers
    def word_ids(self, words: list[str]) -> np.ndarray:
        if self.vocab is None:
            return np.full(len(words), -1, dtype=np.int32)
        index = self.vocab.index
        return np.fromiter((index.get(w, -1) for w in words), dtype=np.int32, count=len(words))

    def units(self, part: Part) -> Units:
        budget = self.teacher.max_length - self.teacher.n_special if self.spec.special_tokens else self.teacher.max_length
        slack = 0 if self.teacher.family == "bert" else 4  # BPE: a chunk's first word may gain pieces
        return build_units(part, self.spec.context, self.teacher.tokenizer, budget, slack)

    # --------------------------------------------------------- one part
    def extract(self, part: Part) -> dict[str, np.ndarray]:
        torch = self.torch
        spec, teacher = self.spec, self.teacher
        d = teacher.hidden_size
        n_sent = len(part.sentences)
        sent_len = np.fromiter((len(s) for s in part.sentences), dtype=np.int64, count=n_sent)
        n_words = int(sent_len.sum())
        flat_words = [w for s in part.sentences for w in s]
        out: dict[str, np.ndarray] = {
            "sentence_offsets": np.concatenate([[0], np.cumsum(sent_len)]).astype(np.int64),
            "word_ids": self.word_ids(flat_words),
            "sentence_records": np.asarray(part.records, dtype=np.int64),
            "sentence_paragraphs": np.asarray(part.paragraphs, dtype=np.int64),
        }
        units = self.units(part)
        al = align(teacher.tokenizer, units.words, spec.special_tokens, teacher.max_length)
        unit_word_start = al.word_offsets()
        pieces_per_word = al.pieces_per_word()
        word_pieces = np.zeros(n_words, dtype=np.int64)
        target = units.word_out >= 0
        word_pieces[units.word_out[target]] = pieces_per_word[target]
        out["word_pieces"] = np.minimum(word_pieces, np.iinfo(np.int16).max).astype(np.int16)
        self.n_truncated = int(al.truncated.sum())

        vdtype = np.dtype(spec.vector_dtype)
        word_vec = {layer: np.zeros((n_words, d), dtype=vdtype) for layer in self.layers}
        sent_vec = np.zeros((n_sent, d), dtype=vdtype) if spec.sentence_vectors else None
        S = spec.attention_window
        attn = np.full((n_words, 2 * S), np.nan, dtype=np.float32) if S else None
        mlm_chunks = []

        unit_word_out = torch.as_tensor(units.word_out)
        unit_word_sent = torch.as_tensor(units.word_sentence)
        vocab_ids = torch.as_tensor(out["word_ids"].astype(np.int64))
        need_hidden = spec.ase or bool(self.layers)  # all layers' states; else the last one suffices
        with torch.inference_mode():
            for batch in length_batches(al.lengths, self.batch_tokens):
                ids_np, pw_np, valid_np = pad_batch(al, batch, teacher.pad_id)
                B, L = ids_np.shape
                ids = torch.as_tensor(ids_np, device=teacher.device)
                mask = torch.as_tensor(valid_np, device=teacher.device).long()
                result = teacher.forward(ids, mask, hidden_states=need_hidden, attentions=bool(S))
                # piece -> batch-local word index (the batch units' words concatenated)
                nw = al.n_words[batch]
                local_start = np.concatenate([[0], np.cumsum(nw)[:-1]])
                local = np.where(pw_np >= 0, pw_np + local_start[:, None], -1)
                n_local = int(nw.sum())
                # batch-local word -> unit word (global in the part's units)
                unit_words = torch.as_tensor(np.concatenate(
                    [np.arange(unit_word_start[u], unit_word_start[u + 1]) for u in batch]) if n_local else
                    np.zeros(0, np.int64))
                b_out = unit_word_out[unit_words]  # part word index, -1 context only
                b_target = b_out >= 0
                flat = torch.as_tensor(local.reshape(-1), device=teacher.device)
                sel = flat >= 0
                sel_idx = flat[sel]
                counts = torch.bincount(sel_idx, minlength=n_local).clamp(min=1).unsqueeze(-1)

                def word_means(states):  # (B, L, d) -> (n_local, d) mean over each word's pieces
                    h = states.reshape(B * L, -1)[sel].float()
                    return torch.zeros(n_local, h.shape[-1], device=h.device).index_add_(0, sel_idx, h) / counts

                hidden = result.hidden_states
                last = result.last_hidden_state
                dest = b_out[b_target].numpy()
                for layer in self.layers:
                    vec = word_means(hidden[layer])
                    word_vec[layer][dest] = vec[b_target.to(vec.device)].cpu().numpy().astype(vdtype)
                if spec.ase and n_local:
                    self._ase_add(hidden, word_means, vocab_ids[b_out.clamp(min=0)], b_target)
                if sent_vec is not None:
                    self._sentence_means(sent_vec, last, valid_np, local, units, batch, b_out, unit_words)
                if S:
                    self._attention(attn, result.attentions, local, nw, b_out, unit_word_sent[unit_words], S)
                if spec.mlm_topk:
                    mlm_chunks.append(self._mlm(ids, mask, last, local, b_out, pw_np))
                del result, hidden, last
        for layer, arr in word_vec.items():
            out[f"word_vectors.{layer}"] = arr
        if sent_vec is not None:
            out["sentence_vectors"] = sent_vec
        if attn is not None:
            out["attention_window"] = attn
        if spec.mlm_topk:
            out.update(self._mlm_arrays(mlm_chunks))
        return out

    # --------------------------------------------------------- feature pieces
    def _ase_add(self, hidden, word_means, vocab_of_local, b_target):
        torch = self.torch
        vocab_of_local = vocab_of_local.cpu()
        # OOV words (id -1) and words outside the ASE list (row -2) get no row
        keep = (vocab_of_local >= 0) & b_target
        keep &= torch.as_tensor(self.ase_rows)[vocab_of_local.clamp(min=0)] >= -1
        if not bool(keep.any()):
            return
        self._ase_allocate(vocab_of_local[keep].numpy())
        rows = torch.as_tensor(self.ase_rows)[vocab_of_local.clamp(min=0)]
        keep_dev = keep.to(self.teacher.device)
        rows_dev = rows[keep].to(self.teacher.device)
        stacked = torch.stack([word_means(h)[keep_dev] for h in hidden], dim=1)  # (n, layers+1, d)
        self.ase_sums.index_add_(0, rows_dev, stacked)
        self.ase_counts.index_add_(0, rows_dev, torch.ones_like(rows_dev))

    def _sentence_means(self, sent_vec, last, valid_np, local, units, batch, b_out, unit_words):
        """Mean of a sentence's pieces; in sentence context its special tokens count too (X2Static)."""
        torch = self.torch
        B, L = valid_np.shape
        word_sent = torch.as_tensor(units.word_sentence)[unit_words].numpy()  # local word -> sentence
        piece_sent = np.where(local >= 0, word_sent[np.maximum(local, 0)], -1)
        # special tokens count for the sentence when it is its input's only sentence
        piece_sent = np.where(valid_np & (local < 0), units.unit_sentence[batch][:, None], piece_sent)
        flat = torch.as_tensor(piece_sent.reshape(-1), device=last.device)
        sel = flat >= 0
        present = np.unique(piece_sent[piece_sent >= 0])
        if not len(present):
            return
        remap = torch.full((len(sent_vec),), -1, dtype=torch.long, device=last.device)
        remap[torch.as_tensor(present, device=last.device)] = torch.arange(len(present), device=last.device)
        idx = remap[flat[sel]]
        h = last.reshape(B * L, -1)[sel].float()
        sums = torch.zeros(len(present), h.shape[-1], device=h.device).index_add_(0, idx, h)
        n = torch.bincount(idx, minlength=len(present)).clamp(min=1).unsqueeze(-1)
        sent_vec[present] = (sums / n).cpu().numpy().astype(sent_vec.dtype)

    def _attention(self, attn, attentions, local, nw, b_out, word_sent, S):
        """Word × word attention (sum over layers and heads; block mean, target as query) in ±S."""
        torch = self.torch
        device = attentions[0].device
        A = torch.zeros_like(attentions[0][:, 0], dtype=torch.float32)
        for layer_attn in attentions:
            A += layer_attn.sum(dim=1, dtype=torch.float32)  # (B, L, L), fp32 sum without an fp32 copy
        B, L = local.shape
        W_max = int(nw.max()) if len(nw) else 0
        if W_max == 0:
            return
        # M[b, w, p] = 1/|pieces(w)| for the pieces p of unit word w: W = M A Mᵀ is the block mean.
        local_start = np.concatenate([[0], np.cumsum(nw)[:-1]])
        in_unit = np.where(local >= 0, local - local_start[:, None], -1)
        b_idx, p_idx = np.nonzero(in_unit >= 0)
        w_idx = in_unit[b_idx, p_idx]
        M = torch.zeros(B, W_max, L, device=device)
        M[torch.as_tensor(b_idx, device=device), torch.as_tensor(w_idx, device=device),
          torch.as_tensor(p_idx, device=device)] = 1.0
        M = M / M.sum(dim=-1, keepdim=True).clamp(min=1)
        Wm = M @ A @ M.transpose(1, 2)  # (B, W_max, W_max)
        # window gather: word i of unit b, offsets -S..-1, +1..+S, same sentence only
        offs = torch.as_tensor(list(range(-S, 0)) + list(range(1, S + 1)), device=device)
        n_local = int(nw.sum())
        unit_of = torch.as_tensor(np.repeat(np.arange(B), nw), device=device)
        pos = torch.as_tensor(np.arange(n_local) - np.repeat(local_start, nw), device=device)
        j = pos[:, None] + offs[None, :]  # (n_local, 2S)
        n_unit = torch.as_tensor(nw, device=device)[unit_of][:, None]
        inside = (j >= 0) & (j < n_unit)
        jc = j.clamp(min=0, max=W_max - 1)
        vals = Wm[unit_of[:, None], pos[:, None], jc]
        sent = word_sent.to(device)
        j_global = (torch.as_tensor(local_start, device=device)[unit_of][:, None] + jc).clamp(max=n_local - 1)
        same = sent[j_global] == sent[:, None]
        has = torch.as_tensor(np.bincount(local[local >= 0], minlength=n_local) > 0, device=device)
        ok = inside & same & has[:, None] & has[j_global]
        vals = torch.where(ok, vals, torch.full_like(vals, float("nan")))
        tgt = b_out >= 0
        attn[b_out[tgt].numpy()] = vals[tgt.to(device)].cpu().numpy()

    def _mlm(self, ids, mask, last, local, b_out, pw_np):
        """Top-k MLM predictions for every piece of every target word of the batch."""
        torch = self.torch
        teacher, k = self.teacher, self.spec.mlm_topk
        b_out_np = b_out.numpy()
        piece_target = (local >= 0) & (b_out_np[np.maximum(local, 0)] >= 0)
        b_idx, p_idx = np.nonzero(piece_target)  # row-major: by unit, then position = word order
        if not len(b_idx):
            return None
        words = b_out_np[local[b_idx, p_idx]]
        piece_ids = ids[torch.as_tensor(b_idx, device=ids.device), torch.as_tensor(p_idx, device=ids.device)].cpu().numpy()
        top_ids, top_logits = [], []
        if self.spec.mlm_mode == "unmasked":
            states = last[torch.as_tensor(b_idx, device=last.device), torch.as_tensor(p_idx, device=last.device)]
            for chunk in torch.split(states, 1024):
                v, i = teacher.mlm_topk(chunk, k)
                top_ids.append(i.cpu())
                top_logits.append(v.cpu())
        else:
            # Masked copies, batched under the token budget: whole_word (the paper's teacher,
            # bert-large-uncased-whole-word-masking, and SemGloVe's "mask the target word") masks every
            # piece of the word in one copy and reads each piece's prediction from it; piece masks one
            # piece per copy.
            L = ids.shape[1]
            per = max(1, self.batch_tokens // L)
            if self.spec.mlm_masking == "whole_word":
                key = b_idx.astype(np.int64) * (int(local.max()) + 1) + local[b_idx, p_idx]
                _, first, copy_of_piece = np.unique(key, return_index=True, return_inverse=True)
                copy_rows, copy_words = b_idx[first], local[b_idx[first], p_idx[first]]
            else:
                copy_of_piece = np.arange(len(b_idx))
                copy_rows, copy_words = b_idx, None
            local_t = torch.as_tensor(local, device=ids.device)
            states = torch.empty(len(b_idx), last.shape[-1], dtype=last.dtype, device=last.device)
            by_copy = np.argsort(copy_of_piece, kind="stable")  # the pieces of copies s..s+per: one slice
            bounds = np.searchsorted(copy_of_piece[by_copy], np.arange(0, len(copy_rows) + per, per))
            for c, s in enumerate(range(0, len(copy_rows), per)):
                bb = torch.as_tensor(copy_rows[s:s + per], device=ids.device)
                copy = ids[bb].clone()
                if copy_words is None:
                    copy[torch.arange(len(bb), device=ids.device), torch.as_tensor(p_idx[s:s + per], device=ids.device)] = teacher.mask_id
                else:
                    word = torch.as_tensor(copy_words[s:s + per], device=ids.device)
                    copy[local_t[bb] == word[:, None]] = teacher.mask_id
                res = teacher.forward(copy, mask[bb], hidden_states=False, attentions=False)
                pieces = by_copy[bounds[c]:bounds[c + 1]]
                rows = torch.as_tensor(copy_of_piece[pieces] - s, device=ids.device)
                cols = torch.as_tensor(p_idx[pieces], device=ids.device)
                states[torch.as_tensor(pieces, device=last.device)] = res.last_hidden_state[rows, cols].to(states.dtype)
            for chunk in torch.split(states, 1024):
                v, i = teacher.mlm_topk(chunk, k)
                top_ids.append(i.cpu())
                top_logits.append(v.cpu())
        return (words, piece_ids, torch.cat(top_ids).numpy(), torch.cat(top_logits).numpy())

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
    for part in iter_parts(shard, spec.context, part_sentences, start_part, spec.sentences):
        yield part.index, extractor.extract(part)
