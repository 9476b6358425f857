"""SemGloVe's semantic co-occurrences (Gan et al.): from a teacher's self-attention and masked-LM
predictions into the shared sparse store, for the GloVe trainer.

Both builders read the teacher's per-shard feature parts (:mod:`staticvec.teacher.features`:
``attention_window``, ``mlm_*``), stored or computed on the fly, and write one store per shard;
``staticvec cooc merge`` sums the shards.

**Self-attention (SemGloVe_sd, _sr; paper §4.1).** ``AW_ij`` is the attention summed over all layers
and heads (eq. 8), averaged over the piece block of target word i (query) × context word j (key)
(eq. 9); the feature pass stores it for the raw positions ±1..±R of each word (R ≥ S; 2S by
default). Per target word, the candidates are the 2S words of GloVe's window: out-of-vocabulary
words are deleted first (as GloVe's counter does; the teacher still reads the whole sentence) and
the S in-vocabulary words on each side in the sentence are the window, so the window words are
GloVe's and sdR's pairs are GloVe's pairs. The ``top`` of them by decreasing ``AW_ij`` form C(w_i)
(paper: top S; the released code keeps top S+1; sd10: top 2S = all). Ties are broken by distance
in that OOV-deleted sequence, nearer first, then left before right. Weights: ``divide`` = AW_ij / AW_i(1), the largest
selected weight (eq. 10); ``rank`` = 1/r for the r-th selected word (SemGloVe_sr, §5.5). Then
X_ij += weight (eq. 11): i is the target, j the context (X is not symmetric).

**Masked LM (SemGloVe_md, _mr; §4.2).** For every piece t of an in-vocabulary word, the teacher's
top-k predicted pieces at t (masked input: the paper; unmasked: the released code) with their
logits g. Special tokens are never context; the target piece itself is dropped in unmasked mode
(``drop_target: auto``; there it is trivially the top prediction, and the released code drops it),
kept in masked mode (the paper keeps all of the top 2S). The first ``top`` remaining predictions
(paper: 2S) are C(t), weighted ``divide`` = g_j / g_1 (eq. 12; g_1 the first remaining logit; a
position whose g_1 ≤ 0 has no meaningful ratio and is skipped, and negative ratios are dropped) or
``rank`` = 1/r. They add into a piece × piece table M (eq. 13) over the teacher's piece vocabulary:
the shard stores of this builder are *piece* stores (ids = teacher piece ids), merged like word
stores, then mapped to words once (:func:`pieces_to_words`).

**Pieces to words (eq. 14).** X_ij = (1 / m n) Σ_{k ∈ pieces(w_i)} Σ_{l ∈ pieces(w_j)} M_kl, i.e.
X = A M Aᵀ with A[w, p] = (times p occurs in w's pieces) / (number of w's pieces), pieces(w) being
the teacher's tokenization of w as a word inside a sentence. So a predicted piece that is a whole
vocabulary word (a single-piece word) maps to that word directly; a predicted piece that is part of
multi-piece words (``##ologist``) counts, with weight 1/(m n), for every word that contains it —
the averaging that gives ⟨egyptologist, archaeologist⟩ its count in the paper's Table 5; a piece
in no vocabulary word's tokenization is dropped. The released code computes the same mean but only
for word pairs that co-occur (count ≥ 1) in GloVe's window counts, plus all pairs of single-piece
words taken straight from the piece table: option ``gate`` (``gate_by_window`` in the config).

**SemGloVe_sdR (§5.5, Table 4).** sd's word pairs with GloVe's window counts as values:
:func:`restrict_values` (values of one store on the pairs of another).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import numpy as np

from staticvec.cooc.store import CoocAccumulator, CoocStore, SortedStoreWriter, vocab_fingerprint
from staticvec.errors import InputFileError, StaticvecError

log = logging.getLogger(__name__)

WEIGHTS = ("divide", "rank")
DROP_TARGET = ("auto", "yes", "no")
TIE_RULE = "equal weights: nearer word first, then left before right"
WINDOW_OVER = "in-vocabulary words (out-of-vocabulary words deleted first, as GloVe's window)"
_BYTES_PER_ENTRY = 64  # accumulator buffer plus the scratch of its sort (as the window counter)
_RESERVED = 10**20  # placeholder for a count known only after writing: the store header is sized at the start


# ---------------------------------------------------------------- selection and weights


def window_offsets(S: int) -> np.ndarray:
    """Offsets of the columns of the ``attention_window`` feature: -S..-1, +1..+S."""
    return np.array(list(range(-S, 0)) + list(range(1, S + 1)), dtype=np.int64)


def tie_order(offsets: np.ndarray) -> np.ndarray:
    """Column order that breaks weight ties: nearer first, then left before right."""
    return np.lexsort((offsets, np.abs(offsets)))


def select_top(weights: np.ndarray, valid: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the columns of the ``top`` largest valid weights, in decreasing order.

    Equal weights keep their column order (a stable sort), so the caller orders the columns by
    its tie rule first. Returns (columns (n, t), selected (n, t)) with t = min(top, width);
    ``selected`` is False where a row has fewer than ``top`` valid entries.
    """
    t = min(int(top), weights.shape[1])
    key = np.where(valid, -weights.astype(np.float64), np.inf)
    order = np.argsort(key, axis=1, kind="stable")[:, :t]
    return order, np.take_along_axis(valid, order, axis=1)


def rank_weights(selected: np.ndarray) -> np.ndarray:
    """1/r for the r-th selected entry of each row (rows are in decreasing order)."""
    return np.broadcast_to(1.0 / np.arange(1, selected.shape[1] + 1), selected.shape)


def divide_weights(values: np.ndarray, selected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """value / the row's first selected value; rows whose first value is ≤ 0 are dropped.

    Returns (weights, still selected): negative ratios are dropped too (no co-occurrence count
    is negative).
    """
    first = values[:, :1].astype(np.float64)
    ok = selected[:, :1] & (first > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(ok, values / np.where(ok, first, 1.0), 0.0)
    return w, selected & ok & (w > 0)


# ---------------------------------------------------------------- attention (sd, sr)


def attention_pairs(word_ids: np.ndarray, attention: np.ndarray, top: int, weight: str,
                    window: int | None = None, sentence_offsets: np.ndarray | None = None,
                    stats: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(target ids, context ids, weights) of one feature part's attention window (see module doc).

    ``attention`` is (n_words, 2R) for the raw offsets -R..-1, +1..+R of each word in its sentence
    (NaN: no word there, another sentence, or a word without pieces); ``word_ids`` the vocabulary
    ids (-1: out of vocabulary); ``sentence_offsets`` the part's sentence boundaries (default: one
    sentence). The window is GloVe's: out-of-vocabulary words are deleted first, and the candidates
    of a target are the in-vocabulary words at most ``window`` (default R) *in-vocabulary* positions
    away in its sentence — the pairs GloVe's window counts, so sd10 (top 2S) is every window word
    and sdR's pairs are GloVe's. The teacher still reads the whole sentence. A candidate whose raw
    offset exceeds the features' R (more than R − window out-of-vocabulary words in between) is
    missing: their number is added to ``stats['beyond_features']`` (features with R = 2S miss
    almost none; R = S misses every window that spans an out-of-vocabulary word).
    """
    if weight not in WEIGHTS:
        raise StaticvecError(f"attention weight {weight!r}: expected one of {', '.join(WEIGHTS)}")
    n, width = attention.shape
    R = width // 2
    window = R if window is None else int(window)
    if window < 1:
        raise StaticvecError(f"attention window {window}: must be at least 1")
    ids = np.asarray(word_ids, dtype=np.int64)
    if sentence_offsets is None:
        sentence_offsets = np.array([0, n], dtype=np.int64)
    bounds = np.asarray(sentence_offsets, dtype=np.int64)
    if len(bounds) < 1 or bounds[0] != 0 or bounds[-1] != n or (np.diff(bounds) < 0).any():
        raise StaticvecError(f"sentence offsets must run from 0 to the {n} words, non-decreasing")
    sentence = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    inv = ids >= 0
    kept = np.zeros(n + 1, np.int64)
    np.cumsum(inv, out=kept[1:])
    rank = kept[1:] - 1  # index of each in-vocabulary word in the OOV-deleted sequence
    offsets = window_offsets(R)
    position = np.arange(n)[:, None] + offsets[None, :]
    clipped = np.clip(position, 0, max(n - 1, 0))
    if n:
        inside = (position >= 0) & (position < n) & (sentence[clipped] == sentence[:, None])
        distance = rank[clipped] - rank[:, None]  # signed distance after deleting OOV words
        candidate = inside & inv[clipped] & inv[:, None] & (np.abs(distance) <= window)
        context = ids[clipped]
    else:
        distance = context = np.zeros((0, 2 * R), np.int64)
        candidate = np.zeros((0, 2 * R), bool)
    if stats is not None and n:
        # in-vocabulary words within ±window of each target in its sentence, against those the features hold
        s_first, s_count = kept[bounds[:-1]], kept[bounds[1:]] - kept[bounds[:-1]]
        before = rank - s_first[sentence]
        after = s_count[sentence] - before - 1
        expected = np.minimum(before, window) + np.minimum(after, window)
        stats["beyond_features"] = stats.get("beyond_features", 0) + int((expected - candidate.sum(axis=1))[inv].sum())
    # tie rule: nearer (in the OOV-deleted sequence) first, then left before right
    tie = np.where(candidate, 2 * np.abs(distance) + (distance > 0), np.iinfo(np.int64).max)
    perm = np.argsort(tie, axis=1, kind="stable")
    A = np.take_along_axis(attention, perm, axis=1)
    context = np.take_along_axis(context, perm, axis=1)
    valid = np.take_along_axis(candidate, perm, axis=1) & ~np.isnan(A)
    order, selected = select_top(A, valid, top)
    values = np.take_along_axis(A, order, axis=1)
    if weight == "divide":
        w, selected = divide_weights(values, selected)
    else:
        w = rank_weights(selected)
    rows, cols = np.nonzero(selected)
    ctx = np.take_along_axis(context, order, axis=1)
    return ids[rows], ctx[rows, cols], np.asarray(w)[rows, cols]


# ---------------------------------------------------------------- masked LM (md, mr)


def resolve_drop_target(drop_target: str, mlm_mode: str) -> bool:
    if drop_target not in DROP_TARGET:
        raise StaticvecError(f"drop_target {drop_target!r}: expected one of {', '.join(DROP_TARGET)}")
    return mlm_mode == "unmasked" if drop_target == "auto" else drop_target == "yes"


def mlm_piece_pairs(arrays: dict, top: int, weight: str, drop_target: bool, not_context: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(target piece ids, predicted piece ids, weights, positions skipped) of one feature part.

    ``not_context``: boolean over the piece vocabulary, True for ids that are never context
    (special tokens; ids past the tokenizer's vocabulary). Targets are the pieces of
    in-vocabulary words; ``skipped`` counts positions dropped for a non-positive top logit.
    """
    if weight not in WEIGHTS:
        raise StaticvecError(f"MLM weight {weight!r}: expected one of {', '.join(WEIGHTS)}")
    word = arrays["mlm_piece_word"]
    pieces = arrays["mlm_piece_ids"].astype(np.int64)
    rows = arrays["word_ids"][word] >= 0 if len(word) else np.zeros(0, bool)
    rows &= ~_never_context(pieces, not_context)  # an [UNK] target stands for no particular word
    target = pieces[rows]
    ids = arrays["mlm_topk_ids"][rows].astype(np.int64)
    logits = arrays["mlm_topk_logits"][rows]
    keep = ~_never_context(ids, not_context)
    if drop_target:
        keep &= ids != target[:, None]
    # the first `top` kept predictions, in the teacher's order (already by decreasing logit)
    order, selected = select_top(np.zeros(ids.shape, np.float32), keep, top)
    ids = np.take_along_axis(ids, order, axis=1)
    skipped = 0
    if weight == "divide":
        values = np.take_along_axis(logits, order, axis=1)
        w, now = divide_weights(values, selected)
        skipped = int((selected[:, 0] & ~now[:, 0]).sum()) if selected.shape[1] else 0
        selected = now
    else:
        w = rank_weights(selected)
    rows, cols = np.nonzero(selected)
    return target[rows], ids[rows, cols], np.asarray(w)[rows, cols], skipped


def _never_context(ids: np.ndarray, not_context: np.ndarray) -> np.ndarray:
    return (ids < 0) | (ids >= len(not_context)) | not_context[np.clip(ids, 0, len(not_context) - 1)]


# ---------------------------------------------------------------- the teacher's piece vocabulary


@dataclass
class PieceVocabulary:
    """The teacher's pieces: size, fingerprint, and which ids are never context."""

    size: int
    sha256: str
    not_context: np.ndarray
    tokenizer: object = field(default=None, repr=False)

    @classmethod
    def from_tokenizer(cls, tokenizer, model_vocab_size: int | None = None) -> "PieceVocabulary":
        n = len(tokenizer)
        size = max(n, int(model_vocab_size or 0))
        tokens = tokenizer.convert_ids_to_tokens(list(range(n)))
        sha = hashlib.sha256("\n".join(f"{i}\t{t}" for i, t in enumerate(tokens)).encode("utf-8")).hexdigest()
        not_context = np.zeros(size, dtype=bool)
        not_context[n:] = True  # rows of the output layer past the tokenizer (padding)
        specials = [i for i in tokenizer.all_special_ids if i is not None and 0 <= i < size]
        not_context[specials] = True
        return cls(size, sha, not_context, tokenizer)


def load_tokenizer(spec: str, offline: bool = True):
    """The teacher's tokenizer alone (no weights), resolved like :func:`staticvec.teacher.load.load_teacher`."""
    from staticvec.teacher.load import resolve_teacher

    source = resolve_teacher(spec)
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
    kwargs = {"local_files_only": offline or source.local}
    if source.gguf_file:
        kwargs["gguf_file"] = source.gguf_file
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source.path, **kwargs)
    except OSError as exc:
        raise StaticvecError(f"teacher {spec!r}: cannot load its tokenizer ({exc})") from None


def word_piece_matrix(tokenizer, words: Sequence[str]):
    """A (V × P) CSR: A[w, p] = (times piece p is in w) / (pieces of w); rows of words without pieces are 0.

    Each word is tokenized as the second word of a two-word input, so that it gets the pieces it
    has inside a sentence (byte-level BPE marks the leading space; WordPiece and SentencePiece
    give the same pieces alone or inside). Special pieces ([UNK]) are no piece of any word: a word
    the tokenizer cannot spell has no pieces and no MLM co-occurrences.
    """
    import scipy.sparse as sp

    from staticvec.teacher.align import align

    al = align(tokenizer, [[".", w] for w in words], add_special_tokens=False)
    g = al.global_piece_word()
    specials = np.array(sorted(i for i in tokenizer.all_special_ids if i is not None), dtype=np.int64)
    mine = (g >= 0) & (g % 2 == 1) & ~np.isin(al.input_ids, specials)  # word 1 of each input, no [UNK]
    rows = g[mine] // 2
    cols = al.input_ids[mine]
    n_pieces = np.bincount(rows, minlength=len(words))
    values = 1.0 / n_pieces[rows]
    size = max(len(tokenizer), int(cols.max()) + 1 if len(cols) else 0)
    A = sp.csr_matrix((values, (rows, cols)), shape=(len(words), size))  # duplicates summed: count/m
    A.sum_duplicates()
    return A, n_pieces


# ---------------------------------------------------------------- one shard: all variants at once


@dataclass
class Variant:
    """One builder configuration: ``source`` attention (word store) or mlm (piece store)."""

    name: str
    source: str
    top: int
    weight: str
    out: str | os.PathLike
    window: int | None = None  # attention: ±window (default: the features' S)


def check_features(meta: dict, path, vocab=None, vocab_path=None) -> None:
    """The features were computed with this vocabulary (their word ids are its ids)."""
    if vocab is not None and meta.get("vocab_size") is not None and meta["vocab_size"] != len(vocab):
        raise InputFileError(path, f"features were computed with a vocabulary of {meta['vocab_size']} words, "
                                   f"not the {len(vocab)} given (check --vocab/--min-count/--max-vocab)")
    if vocab_path is not None and meta.get("vocab_sha256"):
        from staticvec.files import sha256_of

        if sha256_of(vocab_path) != meta["vocab_sha256"]:
            raise InputFileError(path, f"features were computed with another vocabulary file than {vocab_path}")


def build_shard(parts: Iterable[dict], vocab, variants: Sequence[Variant], feature_meta: dict,
                pieces: PieceVocabulary | None = None, drop_target: str = "auto", memory_gb: float = 2.0,
                tmp_dir: str | os.PathLike | None = None, max_open: int = 64, sources: Sequence[str] = (),
                progress: bool = False) -> dict:
    """Read feature parts once and write every variant's store; returns {name: header} and timing.

    ``feature_meta`` is the features' sidecar (its ``spec`` says S, k and the MLM mode).
    """
    spec = feature_meta["spec"]
    S, k, mode = int(spec.get("attention_window") or 0), int(spec.get("mlm_topk") or 0), spec.get("mlm_mode")
    drop = resolve_drop_target(drop_target, mode)
    for v in variants:
        if v.source == "attention" and not S:
            raise StaticvecError(f"variant {v.name}: the features hold no attention window (feature set without attention_window)")
        if v.source == "mlm":
            if not k:
                raise StaticvecError(f"variant {v.name}: the features hold no MLM predictions (mlm_topk = 0)")
            if pieces is None:
                raise StaticvecError(f"variant {v.name}: MLM pairs need the teacher's piece vocabulary (--teacher)")
            if k < v.top + int(drop):
                log.warning("variant %s: top %d of %d stored predictions%s: fewer context pieces than asked",
                            v.name, v.top, k, " with the target dropped" if drop else "")
        if v.source not in ("attention", "mlm"):
            raise StaticvecError(f"variant {v.name}: unknown source {v.source!r}")
    common = {"teacher": feature_meta.get("teacher", {}).get("name"), "sources": list(sources)}
    per_variant = max(1 << 16, int(memory_gb * 2**30 / _BYTES_PER_ENTRY / max(len(variants), 1)))
    accumulators = {}
    counters = {v.name: {"n_pairs": 0, "n_tokens": 0, "skipped": 0} for v in variants}
    n_sentences = 0
    seconds = 0.0
    try:
        for v in variants:
            size = len(vocab) if v.source == "attention" else pieces.size
            accumulators[v.name] = CoocAccumulator(size, per_variant, tmp_dir, max_open)
        iterator = parts
        if progress:
            from tqdm import tqdm

            iterator = tqdm(parts, desc="semglove", unit=" parts", mininterval=30)
        for arrays in iterator:
            started = time.perf_counter()
            n_sentences += len(arrays["sentence_offsets"]) - 1
            for v in variants:
                c = counters[v.name]
                if v.source == "attention":
                    i, j, x = attention_pairs(arrays["word_ids"], arrays["attention_window"], v.top, v.weight,
                                              v.window, arrays["sentence_offsets"], c)
                    c["n_tokens"] += int((arrays["word_ids"] >= 0).sum())
                else:
                    i, j, x, skipped = mlm_piece_pairs(arrays, v.top, v.weight, drop, pieces.not_context)
                    c["skipped"] += skipped
                    w = arrays["mlm_piece_word"]
                    c["n_tokens"] += int((arrays["word_ids"][w] >= 0).sum()) if len(w) else 0
                c["n_pairs"] += len(i)
                accumulators[v.name].add(i, j, x)
            seconds += time.perf_counter() - started
        headers = {}
        started = time.perf_counter()
        for v in variants:
            c = counters[v.name]
            meta = dict(common, n_pairs=c["n_pairs"], n_tokens=c["n_tokens"], n_sentences=n_sentences)
            if v.source == "attention":
                meta.update(kind="semglove-attention", window=v.window or S, top=v.top, weight=v.weight,
                            tie_rule=TIE_RULE, aggregation="attention summed over layers and heads, piece-block mean",
                            window_over=WINDOW_OVER, feature_window=S, beyond_features=c.get("beyond_features", 0))
                sha = vocab_fingerprint(vocab)
                if c.get("beyond_features"):
                    log.warning("variant %s: %d window words lie beyond the features' ±%d positions (out-of-vocabulary "
                                "words in between): store teacher.feature_sets.*.attention_window ≥ 2S to keep them",
                                v.name, c["beyond_features"], S)
            else:
                meta.update(kind="semglove-mlm-pieces", ids="teacher pieces", top=v.top, weight=v.weight,
                            mlm_mode=mode, mlm_topk=k, drop_target=drop, mlm_head=(feature_meta.get("mlm_head") or {}).get("kind"))
                sha = pieces.sha256
            headers[v.name] = accumulators[v.name].finish(v.out, sha, meta)
            if c["skipped"]:
                log.warning("variant %s: %d positions skipped (top logit ≤ 0: no division distance)", v.name, c["skipped"])
        seconds += time.perf_counter() - started
    finally:
        for acc in accumulators.values():
            acc.close()
    return {"headers": headers, "builder_seconds": seconds, "n_sentences": n_sentences}


def stored_parts(features: Sequence[str | os.PathLike], vocab=None, vocab_path=None) -> tuple[Iterator[dict], dict]:
    """Parts of several stored shards' features in order, and the first sidecar (all must agree,
    and match the vocabulary when given)."""
    from staticvec.teacher.store import FeatureStore

    stores = [FeatureStore(f) for f in features]
    first = stores[0].meta
    for s in stores:
        check_features(s.meta, s.dir / "features.json", vocab, vocab_path)
        if s.spec != stores[0].spec or s.meta["teacher"]["name"] != first["teacher"]["name"]:  # as FeatureSpec: defaults fill new fields
            raise InputFileError(s.dir / "features.json", f"features computed with other settings than {stores[0].dir}")

    def parts():
        for s in stores:
            yield from s.parts()

    return parts(), first


# ---------------------------------------------------------------- pieces → words


def _row_blocks(store: CoocStore, block_entries: int) -> Iterator[tuple[int, int]]:
    """Consecutive row ranges [r0, r1) holding at most ``block_entries`` records (or one row)."""
    n = store.n_entries
    start = 0
    while start < n:
        r0 = int(store.records["i"][start])
        r1 = int(store.records["i"][min(start + block_entries, n) - 1]) + 1  # whole rows: may pass by one row
        yield r0, r1
        start = store.count_before(r1)


def _lookup_block(store: CoocStore | None, r0: int, r1: int, keys: np.ndarray, V: int):
    """Values of ``store`` at the sorted int64 keys i*V+j of rows [r0, r1) (0 where absent), and found."""
    if store is None or store.n_entries == 0:
        return np.zeros(len(keys)), np.zeros(len(keys), bool)
    gi, gj, gx = store.rows(r0, r1)
    gkeys = gi.astype(np.int64) * V + gj
    pos = np.searchsorted(gkeys, keys)
    pos_c = np.minimum(pos, max(len(gkeys) - 1, 0))
    found = (pos < len(gkeys)) & (gkeys[pos_c] == keys) if len(gkeys) else np.zeros(len(keys), bool)
    return np.where(found, gx[pos_c] if len(gkeys) else 0.0, 0.0), found


def pieces_to_words(piece_store: str | os.PathLike, tokenizer, vocab, out: str | os.PathLike,
                    gate: str | os.PathLike | None = None, gate_min: float = 1.0,
                    block_entries: int = 1 << 23, meta: dict | None = None) -> dict:
    """Write X = A M Aᵀ (module doc, eq. 14) as a word store, in blocks of rows of bounded size.

    ``gate`` (a window store over the same vocabulary; the released code's behaviour) keeps only
    pairs whose window count is ≥ ``gate_min``, plus every pair of two single-piece words.
    """
    import scipy.sparse as sp

    pstore = CoocStore(piece_store)
    pmeta = pstore.meta
    if pmeta.get("kind") != "semglove-mlm-pieces":
        raise InputFileError(piece_store, f"not a SemGloVe MLM piece store (kind {pmeta.get('kind')!r})")
    pv = PieceVocabulary.from_tokenizer(tokenizer, pstore.vocab_size)
    if pv.sha256 != pstore.vocab_sha256 or pv.size != pstore.vocab_size:
        raise InputFileError(piece_store, "piece store was counted with another teacher tokenizer")
    V = len(vocab)
    sha = vocab_fingerprint(vocab)
    gate_store = None
    if gate is not None:
        gate_store = CoocStore(gate)
        if gate_store.vocab_size != V or (gate_store.vocab_sha256 and gate_store.vocab_sha256 != sha):
            raise InputFileError(gate, "gate store is over another vocabulary than --vocab")
    started = time.time()
    A, n_pieces = word_piece_matrix(tokenizer, vocab.words)
    P = pstore.vocab_size
    if A.shape[1] < P:
        A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=(V, P))
    elif A.shape[1] > P:
        raise StaticvecError(f"the tokenizer yields piece ids ≥ {P}, the piece store's vocabulary size")
    M = pstore.to_scipy()  # P × P, float64
    At = A.T.tocsr()
    single = n_pieces == 1
    # upper bound of each output row's entries: Σ_k [A_ik≠0] Σ_l [M_kl≠0] · #words containing l
    words_with = np.diff(At.indptr).astype(np.float64)
    Mb = M.copy()
    Mb.data[:] = 1.0
    Ab = A.copy()
    Ab.data[:] = 1.0
    bound = Ab @ (Mb @ words_with)
    log.info("pieces → words: %d words (%d single-piece, %d without pieces), piece table %d entries, "
             "at most %.3g word pairs", V, int(single.sum()), int((n_pieces == 0).sum()), pstore.n_entries, bound.sum())
    n_gated = 0
    meta = {
        **{k: v for k, v in pmeta.items() if k not in ("ids", "kind")},
        **(meta or {}),
        "kind": "semglove-mlm",
        "piece_to_word": "X = A M A^T: mean over the piece pairs of the two words (paper eq. 14)",
        "gate_by_window": gate is not None,
        "gate_min": gate_min if gate is not None else None,
        "gate_store": None if gate is None else {"path": str(gate), "checksum": gate_store.header.get("checksum")},
        "n_gated_pairs": _RESERVED,  # known at the end; the header is sized for the widest value
        "pieces_checksum": pstore.header.get("checksum"),
        "words_single_piece": int(single.sum()),
        "words_without_pieces": int((n_pieces == 0).sum()),
    }
    with SortedStoreWriter(out, V, sha, meta) as writer:
        r0 = 0
        cum = np.concatenate([[0.0], np.cumsum(bound)])
        while r0 < V:
            r1 = int(np.searchsorted(cum, cum[r0] + block_entries, side="right")) - 1
            r1 = min(max(r1, r0 + 1), V)
            X = (A[r0:r1] @ M @ At).tocsr()
            X.sort_indices()
            rows = np.repeat(np.arange(r0, r1), np.diff(X.indptr))
            cols = X.indices.astype(np.int64)
            vals = X.data
            keep = vals > 0
            if gate_store is not None:
                keys = rows.astype(np.int64) * V + cols
                g, found = _lookup_block(gate_store, r0, r1, keys, V)
                passed = (found & (g >= gate_min)) | (single[rows] & single[cols])
                n_gated += int((keep & ~passed).sum())
                keep &= passed
            writer.write(rows[keep], cols[keep], vals[keep].astype(np.float32))
            r0 = r1
        writer.header["meta"]["n_gated_pairs"] = n_gated
    log.info("%s: %d word pairs in %.1f s%s", out, writer.header["n_entries"], time.time() - started,
             f" ({n_gated} removed by the window gate)" if gate is not None else "")
    return writer.header


# ---------------------------------------------------------------- sdR: one store's values on another's pairs


def restrict_values(values: str | os.PathLike, pairs: str | os.PathLike, out: str | os.PathLike,
                    block_entries: int = 1 << 23, meta: dict | None = None) -> dict:
    """Write ``values``' X_ij for every pair (i, j) of ``pairs`` (SemGloVe_sdR: sd's pairs, GloVe's counts).

    Pairs absent from ``values`` are left out (and counted in the header's meta).
    """
    vstore, pstore = CoocStore(values), CoocStore(pairs)
    if vstore.vocab_size != pstore.vocab_size or (vstore.vocab_sha256 and pstore.vocab_sha256
                                                    and vstore.vocab_sha256 != pstore.vocab_sha256):
        raise StaticvecError(f"{values} and {pairs} are over different vocabularies")
    V = pstore.vocab_size
    missing = 0
    meta = {
        **(meta or {}),
        "kind": "semglove-restricted",
        "values": {"path": str(values), "checksum": vstore.header.get("checksum"), "meta": vstore.meta},
        "pairs": {"path": str(pairs), "checksum": pstore.header.get("checksum"), "meta": pstore.meta},
        "n_pairs_without_value": _RESERVED,
    }
    with SortedStoreWriter(out, V, pstore.vocab_sha256 or vstore.vocab_sha256, meta) as writer:
        for r0, r1 in _row_blocks(pstore, block_entries):
            pi, pj, _ = pstore.rows(r0, r1)
            keys = pi.astype(np.int64) * V + pj
            x, found = _lookup_block(vstore, r0, r1, keys, V)
            missing += int((~found).sum())
            writer.write(pi[found], pj[found], x[found].astype(np.float32))
        writer.header["meta"]["n_pairs_without_value"] = missing
    if missing:
        log.warning("%s: %d of %d pairs have no value in %s (left out)", out, missing, pstore.n_entries, values)
    return writer.header


# ---------------------------------------------------------------- one shard's stores, from stored or fresh features


def semglove_shard(vocab, vocab_path, attention=(), mlm=(), *, features=None, shards=None, window: int | None = None,
                   drop_target: str = "auto", teacher: str | None = None, online: bool = False,
                   mlm_head: str | None = None, mlm_topk: int = 11, mlm_mode: str = "auto",
                   mlm_masking: str = "whole_word", device: str = "auto", dtype: str = "auto",
                   max_length: int | None = None, batch_tokens: int = 8192, part_sentences: int = 4096,
                   memory_gb: float = 2.0, max_open: int = 64, tmp_dir: str | None = None) -> dict:
    """Every variant's store of one shard from one read of its ``features`` (stored teacher features),
    or from one teacher pass over the corpus ``shards`` now (``teacher.cache: recompute``).

    ``attention``/``mlm``: ``(TOP, WEIGHT, OUT)`` triples, one per variant (attention: word store;
    MLM: piece store); ``window``: the attention candidates' ±window (default: the features' S).
    Returns :func:`build_shard`'s result."""
    variants = [Variant(f"attention-{top}-{weight}", "attention", int(top), weight, out, window)
                for top, weight, out in attention]
    variants += [Variant(f"mlm-{top}-{weight}", "mlm", int(top), weight, out) for top, weight, out in mlm]
    if not variants:
        raise StaticvecError("nothing to build: give at least one --attention or --mlm variant")
    for v in variants:
        if v.top < 1:
            raise StaticvecError(f"{v.name}: TOP must be ≥ 1")
        if v.weight not in WEIGHTS:
            raise StaticvecError(f"{v.name}: WEIGHT must be divide or rank, not {v.weight!r}")
    needs_pieces = any(v.source == "mlm" for v in variants)
    tmp_dir = tmp_dir or os.path.dirname(os.path.abspath(variants[0].out))
    if features:
        parts, meta = stored_parts(features, vocab, vocab_path)
        sources = [os.path.basename(os.path.dirname(os.path.abspath(f)) if str(f).endswith(".json") else os.path.abspath(f))
                   for f in features]
        pieces = None
        if needs_pieces:
            if not teacher:
                raise StaticvecError("MLM variants need --teacher (its tokenizer names the predicted pieces)")
            pieces = PieceVocabulary.from_tokenizer(load_tokenizer(teacher, not online), meta["teacher"].get("vocab_size"))
    else:
        if not teacher:
            raise StaticvecError("--shard needs --teacher (the features are computed now)")
        parts, meta, pieces = _teacher_parts(shards, vocab, variants, needs_pieces, window, teacher, online, mlm_head,
                                             mlm_topk, mlm_mode, mlm_masking, device, dtype, max_length, batch_tokens,
                                             part_sentences)
        sources = [os.path.basename(s) for s in shards]
    result = build_shard(parts, vocab, variants, meta, pieces, drop_target, memory_gb, tmp_dir, max_open, sources,
                         progress=True)
    for v in variants:
        log.info("%s → %s: %d entries", v.name, v.out, result["headers"][v.name]["n_entries"])
    log.info("builders: %.1f s for %d sentences", result["builder_seconds"], result["n_sentences"])
    return result


def _teacher_parts(shards, vocab, variants, needs_pieces, window, teacher_spec, online, mlm_head, mlm_topk, mlm_mode,
                   mlm_masking, device, dtype, max_length, batch_tokens, part_sentences):
    """Features computed now, one teacher pass for every variant: (parts, feature meta, piece vocabulary)."""
    from staticvec.teacher.features import FeatureSpec, iter_features
    from staticvec.teacher.load import load_teacher

    # raw positions ±2S: the S in-vocabulary words on each side (OOV deleted first) lie within them
    # unless more than S out-of-vocabulary words intervene (counted in the store's beyond_features)
    S = 2 * (window or 5) if any(v.source == "attention" for v in variants) else 0
    teacher = load_teacher(teacher_spec, device=device, offline=not online, attention=S > 0,
                           mlm_head=mlm_head if needs_pieces else None, dtype=dtype, max_length=max_length)
    mode = mlm_mode
    if mode == "auto":
        mode = "unmasked" if teacher.mlm_head_kind == "fitted" else "masked"
    spec = FeatureSpec(context="sentence", layers=(), attention_window=S, mlm_topk=mlm_topk if needs_pieces else 0,
                       mlm_mode=mode, mlm_masking=mlm_masking)
    head = getattr(teacher, "fitted_head", None)
    meta = {"spec": spec.to_dict(), "teacher": teacher.describe(), "vocab_size": len(vocab),
            "mlm_head": {"kind": teacher.mlm_head_kind} if needs_pieces else None}
    if head is not None:
        meta["mlm_head"].update(head.meta)

    def parts():
        for shard in shards:
            for _, arrays in iter_features(teacher, shard, spec, vocab, part_sentences, batch_tokens):
                yield arrays

    pieces = PieceVocabulary.from_tokenizer(teacher.tokenizer, meta["teacher"]["vocab_size"]) if needs_pieces else None
    return parts(), meta, pieces
