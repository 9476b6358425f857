"""``staticvec corpus ...``: extract-dump, tokenize, prepare, vocab."""

from __future__ import annotations

import argparse

from staticvec.cli_args import add_group, add_out_arg
from staticvec.corpus.formats import FORMATS, PARAGRAPH_STYLES


def register(subparsers) -> None:
    sub = add_group(subparsers, "corpus", help="Wikipedia or your own text → tokenized sentence shards, vocabulary, manifest",
                    dest="corpus_command")

    p = sub.add_parser("extract-dump", help="clean a pages-articles XML dump (.bz2) with wikiextractor")
    p.add_argument("dump")
    add_out_arg(p, help="output directory of <doc> files")
    p.add_argument("--processes", type=int, default=1, help="WikiExtractor worker processes (default 1)")
    p.add_argument("--index", default=None,
                   help="the multistream dump's index (offset:page_id:title); with --part/--parts, extract one part")
    p.add_argument("--part", type=int, default=None, help="which part to extract (0-based; needs --index and --parts)")
    p.add_argument("--parts", type=int, default=None, help="number of equal-size parts the dump's page streams are split into")
    p.set_defaults(handler=_extract_dump)

    p = sub.add_parser("tokenize", help="split and tokenize one corpus input: a file, or a directory of files")
    p.add_argument("source", help="a file, or a directory (every file under it; wiki_* files for wikiextractor)")
    p.add_argument("--format", choices=FORMATS, default="wikiextractor",
                   help="wikiextractor: <doc> files (default); text: one document per file; jsonl: one JSON object "
                        "per line, the document in its text field")
    p.add_argument("--paragraphs", choices=PARAGRAPH_STYLES, default="blank_lines",
                   help="text and jsonl: paragraphs separated by blank lines (default) or one paragraph per line")
    p.add_argument("--text-field", default="text", help="jsonl: the field holding the document (default text)")
    p.add_argument("--id-field", default="id",
                   help="jsonl: the optional field holding the document's id (default id; else FILE:LINE)")
    p.add_argument("--language", default="en", help="spaCy language code of the blank tokenizer (default en)")
    add_out_arg(p, help="tokenized shard (.tsv.gz)")
    p.add_argument("--stats", required=True, help="JSON counts of the tokenized file")
    p.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True,
                   help="lower-case the tokens (default; the papers' vocabularies are uncased)")
    p.add_argument("--keep-punctuation", action=argparse.BooleanOptionalAction, default=True,
                   help="keep punctuation tokens (default, as GloVe's and word2vec's corpora do)")
    p.add_argument("--min-sentence-tokens", type=int, default=10,
                   help="shortest training sentence in tokens (default 10; shorter ones are kept with keep=0)")
    p.add_argument("--max-sentence-tokens", type=int, default=40,
                   help="longest training sentence in tokens (default 40)")
    p.add_argument("--split-hyphens", action=argparse.BooleanOptionalAction, default=False,
                   help="split intra-word hyphens (spaCy default); off keeps 'self-governed' whole")
    p.add_argument("--min-paragraph-sentences", type=int, default=0,
                   help="X2Static's paragraph filter: drop paragraphs of fewer sentences (paper: 3; default 0: none)")
    p.add_argument("--min-paragraph-chars", type=int, default=0,
                   help="X2Static's paragraph filter: drop paragraphs of fewer characters (paper: 140; default 0: none)")
    p.add_argument("--processes", type=int, default=1, help="spaCy worker processes")
    p.set_defaults(handler=_tokenize)

    p = sub.add_parser("prepare", help="apply the token budget, deal paragraphs into equal shards, count words")
    p.add_argument("--tokenized", nargs="+", required=True, help="tokenized files, in corpus order")
    p.add_argument("--stats", nargs="+", required=True, help="their stats JSON files, same order")
    p.add_argument("--out-dir", required=True, help="directory of the shards (NNNNN.tsv.gz) and manifest.json")
    p.add_argument("--shards", type=int, required=True,
                   help="number of equal shards (corpus fractions k/shards are exact)")
    p.add_argument("--max-tokens", type=int, default=None, help="token budget (default: everything)")
    p.add_argument("--min-count", type=int, default=5, help="for the vocabulary size in the manifest")
    p.add_argument("--describe", default="{}", help="JSON description of the source recorded in the manifest")
    p.set_defaults(handler=_prepare)

    p = sub.add_parser("vocab", help="vocabulary (word TAB count) from count files, with min count and max size")
    p.add_argument("--counts", nargs="+", required=True, help="per-shard word counts to add up")
    p.add_argument("--min-count", type=int, required=True, help="keep words seen at least this often")
    p.add_argument("--max-size", type=int, default=None, help="keep at most this many words, most frequent first (default: no cap)")
    add_out_arg(p, help="vocabulary file to write (word TAB count)")
    p.set_defaults(handler=_vocab)

    p = sub.add_parser("restrict-embeddings",
                       help="keep an embedding's rows of a vocabulary's words (a corpus fraction's own vocabulary)")
    p.add_argument("vectors", help="input vectors (.bin word2vec binary, .txt, .npy)")
    p.add_argument("--vocab", required=True, help="vocabulary file (word TAB count)")
    add_out_arg(p, help="output vectors (format from the name)")
    p.set_defaults(handler=_restrict_embeddings)


def _extract_dump(args) -> int:
    from staticvec.corpus.sources import extract_dump

    if (args.index is None) != (args.part is None) or (args.part is None) != (args.parts is None):
        raise SystemExit("staticvec corpus extract-dump: --index, --part and --parts go together")
    files = extract_dump(args.dump, args.out, processes=args.processes, index=args.index, part=args.part, parts=args.parts)
    what = f" (part {args.part} of {args.parts})" if args.part is not None else ""
    print(f"{args.dump}{what}: {len(files)} file(s) of articles in {args.out}")
    return 0


def _tokenize(args) -> int:
    from staticvec.corpus.formats import SourceFormat
    from staticvec.corpus.prepare import tokenize_file
    from staticvec.corpus.tokenize import TokenizerSettings

    settings = TokenizerSettings(args.lowercase, args.keep_punctuation, args.min_sentence_tokens, args.max_sentence_tokens,
                                 args.split_hyphens, args.min_paragraph_sentences, args.min_paragraph_chars,
                                 args.language)
    source_format = SourceFormat(args.format, args.paragraphs, args.text_field, args.id_field)
    stats = tokenize_file(args.source, args.out, args.stats, settings, n_process=args.processes,
                          source_format=source_format)
    removed = stats["paragraph_filter_removed"]
    print(f"{args.source}: {stats['articles']} articles, {stats['sentences']} training sentences, {stats['tokens']} tokens"
          f" ({removed['paragraphs']} paragraphs, {removed['tokens']} tokens removed by the paragraph filter)")
    return 0


def _prepare(args) -> int:
    from staticvec.cli_args import json_arg
    from staticvec.corpus.prepare import prepare_corpus
    from staticvec.errors import StaticvecError

    if len(args.tokenized) != len(args.stats):
        raise StaticvecError("--tokenized and --stats must list the same number of files")
    manifest = prepare_corpus(args.tokenized, args.stats, args.out_dir, args.shards, args.max_tokens, args.min_count,
                              json_arg(args.describe, "--describe"))
    t = manifest["totals"]
    print(f"corpus: {t['articles']} articles, {t['paragraphs']} paragraphs, {t['sentences']} sentences, "
          f"{t['tokens']} tokens, vocabulary {t['vocabulary']} (min count {t['min_count']}) in {args.shards} shards")
    return 0


def _vocab(args) -> int:
    from staticvec.corpus.prepare import build_vocabulary

    vocab = build_vocabulary(args.counts, args.out, args.min_count, args.max_size)
    print(f"{args.out}: {len(vocab)} words (min count {args.min_count})")
    return 0


def _restrict_embeddings(args) -> int:
    import logging

    from staticvec.corpus.vocab import Vocabulary, restrict_embeddings
    from staticvec.embeddings import Embeddings

    emb = Embeddings.load(args.vectors)
    vocab = Vocabulary.load(args.vocab)
    kept, missing = restrict_embeddings(emb, vocab)
    if missing:
        logging.getLogger(__name__).warning("%s: %d of the %d vocabulary words have no vector (e.g. %s)",
                                            args.vectors, len(missing), len(vocab), ", ".join(missing[:5]))
    kept.save(args.out)
    print(f"{args.out}: {len(kept)} of {len(emb)} words (the vocabulary of {args.vocab})")
    return 0
