"""``staticvec cooc semglove …``: SemGloVe's co-occurrence builders (see :mod:`staticvec.cooc.semantic`).

- ``cooc semglove``: one shard's features → one store per variant (attention: word store; MLM:
  piece store), all variants from one read of the features (or one teacher pass: ``--shard``);
- ``cooc semglove-words``: a merged MLM piece store → word store (eq. 14; ``--gate`` = released code);
- ``cooc restrict``: one store's values on another store's pairs (SemGloVe_sdR);
- ``cooc pair-counts``: X_ij of listed word pairs in several stores (the paper's Table 5).
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)


def register(sub) -> None:
    p = sub.add_parser("semglove", help="SemGloVe co-occurrences of a shard from teacher attention and MLM predictions")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--features", nargs="+", metavar="DIR",
                     help="stored teacher features (directory or features.json) of the shard(s)")
    src.add_argument("--shard", nargs="+", metavar="SHARD",
                     help="corpus shard(s): features computed now with --teacher (teacher.cache: recompute)")
    _vocab_args(p)
    p.add_argument("--attention", nargs=3, action="append", default=[], metavar=("TOP", "WEIGHT", "OUT"),
                   help="an attention variant: top TOP of the ±S window, weight divide|rank, word store OUT (repeatable)")
    p.add_argument("--mlm", nargs=3, action="append", default=[], metavar=("TOP", "WEIGHT", "OUT"),
                   help="an MLM variant: first TOP predictions, weight divide|rank, piece store OUT (repeatable)")
    p.add_argument("--window", type=int, default=None,
                   help="attention candidates: the in-vocabulary words within ±WINDOW after deleting out-of-vocabulary "
                        "words, as GloVe's window (default: the features' stored width); with --shard the teacher "
                        "pass stores ±2·WINDOW raw positions")
    p.add_argument("--drop-target", choices=["auto", "yes", "no"], default="auto",
                   help="drop the target piece from its MLM predictions (auto: in unmasked mode, as the released code)")
    p.add_argument("--teacher", default=None, help="teacher spec (MLM variants: its tokenizer; --shard: the model)")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher")
    rec = p.add_argument_group("teacher pass (--shard only)")
    rec.add_argument("--mlm-head", default=None, help="fitted MLM head (teachers without one)")
    rec.add_argument("--mlm-topk", type=int, default=11, help="predictions kept per piece (2S+1)")
    rec.add_argument("--mlm-mode", choices=["masked", "unmasked", "auto"], default="auto",
                     help="MLM predictions with the word masked (paper) or unmasked (released code); auto: masked for a shipped head")
    rec.add_argument("--mlm-masking", choices=["whole_word", "piece"], default="whole_word",
                     help="masked mode: all pieces of the word in one copy (the paper's whole-word-masking teacher) or one per copy")
    rec.add_argument("--device", default="auto", help="torch device of the teacher (auto: CUDA when available)")
    rec.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"],
                     help="teacher compute precision (auto: the teacher stage's policy)")
    rec.add_argument("--max-length", type=int, default=None, help="longest teacher input in pieces (default: the model's)")
    rec.add_argument("--batch-tokens", type=int, default=8192, help="pieces per teacher batch (default 8192)")
    rec.add_argument("--part-sentences", type=int, default=4096, help="sentences per resumable part file (default 4096)")
    _memory_args(p, 2.0)
    p.set_defaults(handler=_cli_semglove)

    p = sub.add_parser("semglove-words", help="SemGloVe MLM: map a piece store to words (X = A M Aᵀ, the paper's eq. 14)")
    p.add_argument("pieces", help="merged MLM piece store (staticvec cooc semglove --mlm …, then merge)")
    _vocab_args(p)
    p.add_argument("--teacher", required=True, help="teacher spec (its tokenizer spells the words)")
    p.add_argument("--online", action="store_true", help="map pieces to words while reading (no piece store on disk)")
    p.add_argument("--gate", default=None, metavar="WINDOW_STORE",
                   help="released code: keep pairs with a window count ≥ --gate-min (plus single-piece word pairs)")
    p.add_argument("--gate-min", type=float, default=1.0, help="keep MLM word pairs whose window count is at least this (with a gate)")
    p.add_argument("--memory-gb", type=float, default=2.0, help="memory of the in-memory runs before spilling (default 2)")
    p.add_argument("--out", required=True, help="co-occurrence store to write")
    p.set_defaults(handler=_cli_words)

    p = sub.add_parser("restrict", help="one store's values on another store's pairs (SemGloVe_sdR)")
    p.add_argument("--values", required=True, help="store giving the values (GloVe's window counts)")
    p.add_argument("--pairs", required=True, help="store giving the pairs (SemGloVe_sd)")
    p.add_argument("--memory-gb", type=float, default=2.0, help="memory of the in-memory runs before spilling (default 2)")
    p.add_argument("--out", required=True, help="co-occurrence store to write")
    p.set_defaults(handler=_cli_restrict)

    p = sub.add_parser("pair-counts", help="X_ij of listed word pairs in several stores (SemGloVe Table 5)")
    p.add_argument("--store", nargs=2, action="append", required=True, metavar=("NAME", "STORE"),
                   help="a column name and its merged store (repeatable)")
    _vocab_args(p)
    pairs = p.add_mutually_exclusive_group(required=True)
    pairs.add_argument("--paper-table", help="transcribed paper table with word1/word2 columns (its rows are the pairs)")
    pairs.add_argument("--pair", nargs=2, action="append", metavar=("WORD1", "WORD2"), help="a word pair to count (repeatable)")
    p.add_argument("--out", required=True, help="result JSON ({'results': {pair: {store: {'score': X, …}}}})")
    p.set_defaults(handler=_cli_pair_counts)


def _vocab_args(p) -> None:
    p.add_argument("--vocab", required=True, help="vocabulary file (the features' and stores' word ids)")
    p.add_argument("--min-count", type=int, default=1, help="vocabulary: keep words seen at least this often (default 1)")
    p.add_argument("--max-vocab", type=int, default=None, help="vocabulary: at most this many words (default: no cap)")


def _memory_args(p, default_gb: float) -> None:
    p.add_argument("--memory-gb", type=float, default=default_gb, help=f"memory budget in GiB (default {default_gb})")
    p.add_argument("--max-open", type=int, default=64, help="files merged at once")
    p.add_argument("--tmp-dir", default=None, help="directory for spilled runs (default: beside the first output)")


def _block(memory_gb: float) -> int:
    return max(1 << 16, int(memory_gb * 2**30 / 64))  # ~64 bytes per record in flight


def _cli_semglove(args) -> int:
    from staticvec.cooc.cli import load_vocab_of
    from staticvec.cooc.semantic import PieceVocabulary, Variant, build_shard, load_tokenizer, stored_parts
    from staticvec.errors import StaticvecError

    variants = [Variant(f"attention-{top}-{weight}", "attention", int(top), weight, out, args.window)
                for top, weight, out in args.attention]
    variants += [Variant(f"mlm-{top}-{weight}", "mlm", int(top), weight, out) for top, weight, out in args.mlm]
    if not variants:
        raise StaticvecError("nothing to build: give at least one --attention or --mlm variant")
    for v in variants:
        if v.top < 1:
            raise StaticvecError(f"{v.name}: TOP must be ≥ 1")
        if v.weight not in ("divide", "rank"):
            raise StaticvecError(f"{v.name}: WEIGHT must be divide or rank, not {v.weight!r}")
    vocab = load_vocab_of(args)
    needs_pieces = any(v.source == "mlm" for v in variants)
    tmp_dir = args.tmp_dir or os.path.dirname(os.path.abspath(variants[0].out))
    if args.features:
        parts, meta = stored_parts(args.features, vocab, args.vocab)
        sources = [os.path.basename(os.path.dirname(os.path.abspath(f)) if f.endswith(".json") else os.path.abspath(f))
                   for f in args.features]
        pieces = None
        if needs_pieces:
            if not args.teacher:
                raise StaticvecError("MLM variants need --teacher (its tokenizer names the predicted pieces)")
            pieces = PieceVocabulary.from_tokenizer(load_tokenizer(args.teacher, not args.online),
                                                    meta["teacher"].get("vocab_size"))
    else:
        parts, meta, pieces, sources = _recompute(args, vocab, variants, needs_pieces)
    result = build_shard(parts, vocab, variants, meta, pieces, args.drop_target, args.memory_gb, tmp_dir,
                         args.max_open, sources, progress=True)
    for v in variants:
        log.info("%s → %s: %d entries", v.name, v.out, result["headers"][v.name]["n_entries"])
    log.info("builders: %.1f s for %d sentences", result["builder_seconds"], result["n_sentences"])
    return 0


def _recompute(args, vocab, variants, needs_pieces):
    """Features computed now (one teacher pass for every variant): the cache: recompute path."""
    from staticvec.cooc.semantic import PieceVocabulary
    from staticvec.errors import StaticvecError
    from staticvec.teacher.features import FeatureSpec, iter_features
    from staticvec.teacher.load import load_teacher

    if not args.teacher:
        raise StaticvecError("--shard needs --teacher (the features are computed now)")
    # raw positions ±2S: the S in-vocabulary words on each side (OOV deleted first) lie within them
    # unless more than S out-of-vocabulary words intervene (counted in the store's beyond_features)
    S = 2 * (args.window or 5) if any(v.source == "attention" for v in variants) else 0
    teacher = load_teacher(args.teacher, device=args.device, offline=not args.online, attention=S > 0,
                           mlm_head=args.mlm_head if needs_pieces else None, dtype=args.dtype,
                           max_length=args.max_length)
    mode = args.mlm_mode
    if mode == "auto":
        mode = "unmasked" if teacher.mlm_head_kind == "fitted" else "masked"
    spec = FeatureSpec(context="sentence", layers=(), attention_window=S, mlm_topk=args.mlm_topk if needs_pieces else 0,
                       mlm_mode=mode, mlm_masking=args.mlm_masking)
    head = getattr(teacher, "fitted_head", None)
    meta = {"spec": spec.to_dict(), "teacher": teacher.describe(), "vocab_size": len(vocab),
            "mlm_head": {"kind": teacher.mlm_head_kind} if needs_pieces else None}
    if head is not None:
        meta["mlm_head"].update(head.meta)

    def parts():
        for shard in args.shard:
            for _, arrays in iter_features(teacher, shard, spec, vocab, args.part_sentences, args.batch_tokens):
                yield arrays

    pieces = PieceVocabulary.from_tokenizer(teacher.tokenizer, meta["teacher"]["vocab_size"]) if needs_pieces else None
    return parts(), meta, pieces, [os.path.basename(s) for s in args.shard]


def _cli_words(args) -> int:
    from staticvec.cooc.cli import load_vocab_of
    from staticvec.cooc.semantic import load_tokenizer, pieces_to_words

    vocab = load_vocab_of(args)
    tokenizer = load_tokenizer(args.teacher, not args.online)
    pieces_to_words(args.pieces, tokenizer, vocab, args.out, args.gate, args.gate_min, _block(args.memory_gb),
                    {"min_count": args.min_count, "max_vocab": args.max_vocab})
    return 0


def _cli_restrict(args) -> int:
    from staticvec.cooc.semantic import restrict_values

    header = restrict_values(args.values, args.pairs, args.out, _block(args.memory_gb))
    log.info("%s: %d pairs", args.out, header["n_entries"])
    return 0


def _cli_pair_counts(args) -> int:
    from staticvec.cooc.cli import load_vocab_of
    from staticvec.files import write_json
    from staticvec.report.semglove_table5 import pair_counts, pairs_of_paper_table

    vocab = load_vocab_of(args)
    pairs = pairs_of_paper_table(args.paper_table) if args.paper_table else \
        {f"{a}_{b}": (a, b) for a, b in args.pair}
    result = pair_counts(dict(args.store), vocab, pairs)
    write_json(args.out, result)
    for pid, row in result["results"].items():
        log.info("%s: %s", pid, ", ".join(f"{k}={v['score']}" for k, v in row.items() if isinstance(v, dict)))
    return 0
