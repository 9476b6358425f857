"""``staticvec cooc ...``: count co-occurrences into stores, merge stores, inspect a store, and SemGloVe's
builders (:mod:`staticvec.cooc.semantic`):

- ``window``: GloVe's window counts; ``merge``, ``subset``, ``info``: stores;
- ``semglove``: one shard's features → one store per variant (attention: word store; MLM: piece
  store), all variants from one read of the features (or one teacher pass: ``--shard``);
- ``semglove-words``: a merged MLM piece store → word store (eq. 14; ``--gate`` = released code);
- ``restrict``: one store's values on another store's pairs (SemGloVe_sdR);
- ``pair-counts``: X_ij of listed word pairs in several stores (the paper's Table 5).
"""

from __future__ import annotations

import logging
import os

from staticvec.cli_args import add_group, add_memory_args, add_out_arg, add_vocab_args, load_vocab_of

log = logging.getLogger(__name__)


def register(subparsers) -> None:
    sub = add_group(subparsers, "cooc", help="co-occurrence stores: count, merge, inspect; SemGloVe's builders",
                    dest="cooc_command")

    p = sub.add_parser("window", help="GloVe window counts (1/d, symmetric, per line) of corpus shards or text")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--shards", nargs="+", metavar="SHARD", help="corpus shards (training sentences: keep=1)")
    src.add_argument("--text", nargs="+", metavar="FILE", help="plain text, one tokenized sentence per line")
    add_vocab_args(p)
    p.add_argument("--window", type=int, required=True, help="window size S (GloVe demo 15, SemGloVe 5)")
    add_out_arg(p, help="output store")
    add_memory_args(p, default_gb=4.0)
    p.set_defaults(handler=_cli_window)

    p = sub.add_parser("merge", help="merge stores (e.g. one per corpus shard) into one, summing counts")
    p.add_argument("inputs", nargs="+", help="stores over the same vocabulary")
    add_out_arg(p, help="merged co-occurrence store to write")
    add_memory_args(p, default_gb=2.0)
    p.add_argument("--no-verify", action="store_true", help="skip the inputs' checksum verification")
    p.set_defaults(handler=_cli_merge)

    p = sub.add_parser("subset", help="a store on a sub-vocabulary (a corpus fraction's own): entries of its words, "
                                      "with its ids")
    p.add_argument("store", help="store counted over --source-vocab")
    p.add_argument("--source-vocab", required=True, help="the store's vocabulary file")
    add_vocab_args(p)
    add_out_arg(p, help="output store, over --vocab's ids")
    add_memory_args(p, default_gb=2.0)
    p.set_defaults(handler=_cli_subset)

    p = sub.add_parser("info", help="print a store's header; optionally verify it and look up word pairs")
    p.add_argument("store")
    p.add_argument("--verify", action="store_true", help="check the records' checksum")
    add_vocab_args(p, required=False, help="vocabulary file (needed for --pair)")
    p.add_argument("--pair", nargs=2, action="append", metavar=("WORD", "CONTEXT"), default=[], help="print X[word, context]")
    p.set_defaults(handler=_cli_info)

    _register_semglove(sub)


def _cli_window(args) -> int:
    from staticvec.cooc.window import byte_index, count_window_store, shard_id_chunks, text_id_chunks

    vocab = load_vocab_of(args)
    index = byte_index(vocab)
    paths = args.shards or args.text
    chunks = shard_id_chunks(paths, index) if args.shards else text_id_chunks(paths, index)
    meta = {
        "sources": [os.path.basename(p) for p in paths],
        "min_count": args.min_count,
        "max_vocab": args.max_vocab,
    }
    count_window_store(chunks, vocab, args.window, args.out, args.memory_gb, args.tmp_dir, args.max_open, meta, progress=True)
    return 0


def _cli_merge(args) -> int:
    from staticvec.cooc.store import merge_stores

    block = max(1 << 20, int(args.memory_gb * 2**30 / 64))  # ~64 bytes per record in flight
    header = merge_stores(args.inputs, args.out, args.max_open, block, args.tmp_dir, verify=not args.no_verify)
    log.info("%s: %d entries from %d stores", args.out, header["n_entries"], len(args.inputs))
    return 0


def _cli_subset(args) -> int:
    from staticvec.cooc.store import subset_store

    vocab = load_vocab_of(args)
    source_vocab = load_vocab_of(args, path=args.source_vocab)
    header = subset_store(args.store, source_vocab, vocab, args.out, max(1 << 16, int(args.memory_gb * 2**30 / 64)),
                          args.tmp_dir, args.max_open)
    log.info("%s: %d of %d entries on %d of %d words", args.out, header["n_entries"],
             header["meta"]["subset"]["entries_in"], len(vocab), len(source_vocab))
    return 0


def _cli_info(args) -> int:
    import json

    from staticvec.cooc.store import CoocStore
    from staticvec.errors import StaticvecError

    store = CoocStore(args.store)
    print(json.dumps(store.header, indent=2, ensure_ascii=False))
    if args.verify:
        store.verify()
        print("checksum ok")
    if args.pair:
        if not args.vocab:
            raise StaticvecError("--pair needs --vocab")
        vocab = load_vocab_of(args)
        for word, context in args.pair:
            missing = [w for w in (word, context) if w not in vocab]
            value = "OOV: " + ", ".join(missing) if missing else f"{store.lookup(vocab.index[word], vocab.index[context]):.6g}"
            print(f"{word}\t{context}\t{value}")
    return 0


# ---------------------------------------------------------------- SemGloVe


def _register_semglove(sub) -> None:
    p = sub.add_parser("semglove", help="SemGloVe co-occurrences of a shard from teacher attention and MLM predictions")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--features", nargs="+", metavar="DIR",
                     help="stored teacher features (directory or features.json) of the shard(s)")
    src.add_argument("--shard", nargs="+", metavar="SHARD",
                     help="corpus shard(s): features computed now with --teacher (teacher.cache: recompute)")
    add_vocab_args(p, help="vocabulary file (the features' and stores' word ids)")
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
    add_memory_args(p, 2.0, tmp_help="directory for spilled runs (default: beside the first output)")
    p.set_defaults(handler=_cli_semglove)

    p = sub.add_parser("semglove-words", help="SemGloVe MLM: map a piece store to words (X = A M Aᵀ, the paper's eq. 14)")
    p.add_argument("pieces", help="merged MLM piece store (staticvec cooc semglove --mlm …, then merge)")
    add_vocab_args(p, help="vocabulary file (the features' and stores' word ids)")
    p.add_argument("--teacher", required=True, help="teacher spec (its tokenizer spells the words)")
    p.add_argument("--online", action="store_true", help="map pieces to words while reading (no piece store on disk)")
    p.add_argument("--gate", default=None, metavar="WINDOW_STORE",
                   help="released code: keep pairs with a window count ≥ --gate-min (plus single-piece word pairs)")
    p.add_argument("--gate-min", type=float, default=1.0, help="keep MLM word pairs whose window count is at least this (with a gate)")
    p.add_argument("--memory-gb", type=float, default=2.0, help="memory of the in-memory runs before spilling (default 2)")
    add_out_arg(p, help="co-occurrence store to write")
    p.set_defaults(handler=_cli_words)

    p = sub.add_parser("restrict", help="one store's values on another store's pairs (SemGloVe_sdR)")
    p.add_argument("--values", required=True, help="store giving the values (GloVe's window counts)")
    p.add_argument("--pairs", required=True, help="store giving the pairs (SemGloVe_sd)")
    p.add_argument("--memory-gb", type=float, default=2.0, help="memory of the in-memory runs before spilling (default 2)")
    add_out_arg(p, help="co-occurrence store to write")
    p.set_defaults(handler=_cli_restrict)

    p = sub.add_parser("pair-counts", help="X_ij of listed word pairs in several stores (SemGloVe Table 5)")
    p.add_argument("--store", nargs=2, action="append", required=True, metavar=("NAME", "STORE"),
                   help="a column name and its merged store (repeatable)")
    add_vocab_args(p, help="vocabulary file (the features' and stores' word ids)")
    pairs = p.add_mutually_exclusive_group(required=True)
    pairs.add_argument("--paper-table", help="transcribed paper table with word1/word2 columns (its rows are the pairs)")
    pairs.add_argument("--pair", nargs=2, action="append", metavar=("WORD1", "WORD2"), help="a word pair to count (repeatable)")
    add_out_arg(p, help="result JSON ({'results': {pair: {store: {'score': X, …}}}})")
    p.set_defaults(handler=_cli_pair_counts)


def _block(memory_gb: float) -> int:
    return max(1 << 16, int(memory_gb * 2**30 / 64))  # ~64 bytes per record in flight


def _cli_semglove(args) -> int:
    from staticvec.cooc.semantic import semglove_shard

    semglove_shard(load_vocab_of(args), args.vocab, args.attention, args.mlm, features=args.features, shards=args.shard,
                   window=args.window, drop_target=args.drop_target, teacher=args.teacher, online=args.online,
                   mlm_head=args.mlm_head, mlm_topk=args.mlm_topk, mlm_mode=args.mlm_mode, mlm_masking=args.mlm_masking,
                   device=args.device, dtype=args.dtype, max_length=args.max_length, batch_tokens=args.batch_tokens,
                   part_sentences=args.part_sentences, memory_gb=args.memory_gb, max_open=args.max_open,
                   tmp_dir=args.tmp_dir)
    return 0


def _cli_words(args) -> int:
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
    from staticvec.files import write_json
    from staticvec.cooc.pair_counts import pair_counts, pairs_of_paper_table

    vocab = load_vocab_of(args)
    pairs = pairs_of_paper_table(args.paper_table) if args.paper_table else \
        {f"{a}_{b}": (a, b) for a, b in args.pair}
    result = pair_counts(dict(args.store), vocab, pairs)
    write_json(args.out, result)
    for pid, row in result["results"].items():
        log.info("%s: %s", pid, ", ".join(f"{k}={v['score']}" for k, v in row.items() if isinstance(v, dict)))
    return 0
