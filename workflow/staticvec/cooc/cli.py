"""``staticvec cooc ...``: count co-occurrences into stores, merge stores, inspect a store.

Counting commands of other co-occurrence sources register under the same group: add
their module to ``COOC_COMMAND_MODULES`` (each defines ``register(cooc_subparsers)``).
"""

from __future__ import annotations

import importlib
import logging
import os

log = logging.getLogger(__name__)

COOC_COMMAND_MODULES: list[str] = ["staticvec.cooc.semglove_cli"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("cooc", help="co-occurrence stores: count, merge, inspect")
    sub = parser.add_subparsers(dest="cooc_command", metavar="COOC_COMMAND", required=True)

    p = sub.add_parser("window", help="GloVe window counts (1/d, symmetric, per line) of corpus shards or text")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--shards", nargs="+", metavar="SHARD", help="corpus shards (training sentences: keep=1)")
    src.add_argument("--text", nargs="+", metavar="FILE", help="plain text, one tokenized sentence per line")
    _vocab_args(p)
    p.add_argument("--window", type=int, required=True, help="window size S (GloVe demo 15, SemGloVe 5)")
    p.add_argument("--out", required=True, help="output store")
    _memory_args(p, default_gb=4.0)
    p.set_defaults(handler=_cli_window)

    p = sub.add_parser("merge", help="merge stores (e.g. one per corpus shard) into one, summing counts")
    p.add_argument("inputs", nargs="+", help="stores over the same vocabulary")
    p.add_argument("--out", required=True, help="merged co-occurrence store to write")
    _memory_args(p, default_gb=2.0)
    p.add_argument("--no-verify", action="store_true", help="skip the inputs' checksum verification")
    p.set_defaults(handler=_cli_merge)

    p = sub.add_parser("subset", help="a store on a sub-vocabulary (a corpus fraction's own): entries of its words, "
                                      "with its ids")
    p.add_argument("store", help="store counted over --source-vocab")
    p.add_argument("--source-vocab", required=True, help="the store's vocabulary file")
    _vocab_args(p)
    p.add_argument("--out", required=True, help="output store, over --vocab's ids")
    _memory_args(p, default_gb=2.0)
    p.set_defaults(handler=_cli_subset)

    p = sub.add_parser("info", help="print a store's header; optionally verify it and look up word pairs")
    p.add_argument("store")
    p.add_argument("--verify", action="store_true", help="check the records' checksum")
    p.add_argument("--vocab", help="vocabulary file (needed for --pair)")
    p.add_argument("--min-count", type=int, default=1, help="vocabulary: keep words seen at least this often (default 1)")
    p.add_argument("--max-vocab", type=int, default=None, help="vocabulary: at most this many words (default: no cap)")
    p.add_argument("--pair", nargs=2, action="append", metavar=("WORD", "CONTEXT"), default=[], help="print X[word, context]")
    p.set_defaults(handler=_cli_info)

    for name in COOC_COMMAND_MODULES:
        importlib.import_module(name).register(sub)


def _vocab_args(p) -> None:
    p.add_argument("--vocab", required=True, help="vocabulary file (word TAB count, by decreasing count)")
    p.add_argument("--min-count", type=int, default=1, help="keep words with at least this count")
    p.add_argument("--max-vocab", type=int, default=None, help="keep at most this many words")


def _memory_args(p, default_gb: float) -> None:
    p.add_argument("--memory-gb", type=float, default=default_gb, help=f"memory budget in GiB (default {default_gb})")
    p.add_argument("--max-open", type=int, default=64, help="files merged at once (default 64)")
    p.add_argument("--tmp-dir", default=None, help="directory for spilled runs (default: beside the output)")


def load_vocab_of(args):
    """The vocabulary of a command's --vocab, --min-count and --max-vocab flags."""
    from staticvec.corpus.vocab import load_vocabulary

    return load_vocabulary(args.vocab, args.min_count, args.max_vocab)


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
    import argparse

    from staticvec.cooc.store import subset_store

    vocab = load_vocab_of(args)
    source_vocab = load_vocab_of(argparse.Namespace(vocab=args.source_vocab, min_count=args.min_count,
                                                  max_vocab=args.max_vocab))
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
