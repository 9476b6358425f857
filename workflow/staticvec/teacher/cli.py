"""``staticvec teacher …``: feature extraction, MLM-head fitting and the contextual baselines."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from staticvec.cli_args import (
    add_device_arg,
    add_format_arg,
    add_group,
    add_out_arg,
    add_seed_arg,
    add_vocab_args,
    load_vocab_of,
)
from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)


def _layers(text: str) -> list[int] | str:
    """``last`` | ``all`` | ``none`` | comma-separated ints (negative counts from the last)."""
    text = text.strip().lower()
    if text == "last":
        return [-1]
    if text == "all":
        return "all"
    if text in ("none", ""):
        return []
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"layers: expected last, all, none or integers, got {text!r}") from None


def _host_workers(text: str) -> int | str:
    if text.strip().lower() == "auto":
        return "auto"
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"host workers: expected auto or an integer >= 0, got {text!r}")
    return n


def _add_teacher_args(p) -> None:
    p.add_argument("--teacher", required=True,
                   help="minilm | smollm2 | a hub name (bert-base-uncased) | a local model directory | a .gguf file")
    add_device_arg(p, choices=None, help="auto (CUDA when available) | cpu | cuda[:N]")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"],
                   help="compute dtype (auto: bf16 weights on CPUs with native bf16, else fp32; "
                        "on CUDA bf16 autocast where supported, else fp16)")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher (default: offline)")
    p.add_argument("--max-length", type=int, default=None, help="cap on input pieces (default: the model's, ≤ 512)")
    p.add_argument("--batch-tokens", type=int, default=8192, help="padded pieces per batch")


def _add_vocab_args(p) -> None:
    add_vocab_args(p, help="vocabulary file (word TAB count, by frequency)",
                   min_count_help="vocabulary words seen at least this often (word ids; others -1)",
                   max_vocab_help="keep at most this many vocabulary words, most frequent first")


def register(subparsers) -> None:
    sub = add_group(subparsers, "teacher", help="contextual features from a transformer teacher, and baselines",
                    dest="teacher_command")

    p = sub.add_parser("features", help="one teacher pass over a corpus shard: word vectors, attention, MLM top-k, ASE sums")
    _add_teacher_args(p)
    _add_vocab_args(p)
    p.add_argument("--shard", required=True, help="corpus shard (.tsv.gz)")
    add_out_arg(p, help="output directory (features.json is written last)")
    p.add_argument("--context", choices=["sentence", "paragraph"], default="sentence",
                   help="model input: one sentence, or its whole paragraph (X2Static para)")
    p.add_argument("--layers", type=_layers, default=[-1], help="word-vector layers: last | all | none | 0,6,-1")
    p.add_argument("--sentence-vectors", action="store_true", help="mean of all pieces of each sentence (X2Static)")
    p.add_argument("--attention-window", type=int, default=0, metavar="S", help="attention weights for offsets ±1..S")
    p.add_argument("--mlm-topk", type=int, default=0, metavar="K", help="top-K MLM predictions per piece")
    p.add_argument("--mlm-mode", choices=["masked", "unmasked", "auto"], default="auto",
                   help="auto: masked for a native MLM head, unmasked for a fitted one")
    p.add_argument("--mlm-masking", choices=["whole_word", "piece"], default="whole_word",
                   help="masked mode: all pieces of the target word in one copy (the paper's whole-word-masking "
                        "teacher) or one piece per copy")
    p.add_argument("--mlm-head", default=None, help="MLM head file from fit-mlm-head (teachers without a head)")
    p.add_argument("--ase", action="store_true", help="keep per-layer sums of the ASE words")
    p.add_argument("--ase-words", default=None, help="file of words (one per line) for ASE; default the vocabulary")
    p.add_argument("--ase-max-words", type=int, default=None, help="only the N most frequent ASE words")
    p.add_argument("--no-special-tokens", dest="special_tokens", action="store_false",
                   help="no [CLS]/[SEP] (<s>/</s>) around inputs (the released ASE code's BERT input)")
    p.add_argument("--part-sentences", type=int, default=4096, help="sentences per resumable part file")
    p.add_argument("--ase-checkpoint-minutes", type=float, default=10.0,
                   help="ASE sums: a checkpoint (to resume from) after at most this much work, and at the end")
    p.add_argument("--overlap", choices=["auto", "on", "off"], default="auto",
                   help="read and tokenise the next part and write the last one in background threads while a part "
                        "is computed (auto: on a GPU); the files are the same either way")
    p.add_argument("--host-workers", type=_host_workers, default="auto", metavar="N|auto",
                   help="worker processes that read, tokenise and index the shard, feeding the teacher in order, "
                        "and write the part files from shared memory "
                        "(auto: on a GPU the job's threads, OMP_NUM_THREADS as Snakemake sets it, else the usable "
                        "cores; on the CPU 0, all in this process); the files are the same whatever the number")
    p.add_argument("--vector-dtype", choices=["float16", "float32"], default="float16",
                   help="storage dtype of the word and sentence vectors")
    p.set_defaults(handler=_features, keep_freed_memory=True)  # staticvec.memory: per-batch buffers reused

    p = sub.add_parser("fit-mlm-head", help="fit an MLM head on a frozen encoder that has none (MiniLM)")
    _add_teacher_args(p)
    p.add_argument("--shards", nargs="+", required=True, help="corpus shards to fit on")
    add_out_arg(p, help="head file (.pt)")
    p.add_argument("--report", default=None, help="JSON report: held-out top-1/top-10 vs unigram")
    p.add_argument("--mode", choices=["unmasked", "masked"], default="unmasked",
                   help="fit on the unmasked states (the released SemGloVe code's predictions) or on masked copies")
    p.add_argument("--train-positions", type=int, default=50_000, help="piece positions the head is fitted on")
    p.add_argument("--heldout-positions", type=int, default=10_000, help="piece positions kept out to report top-1/top-10 accuracy")
    p.add_argument("--select-prob", type=float, default=0.15, help="share of pieces sampled as positions (BERT: 15 %%)")
    p.add_argument("--epochs", type=int, default=6, help="passes over the training positions")
    p.add_argument("--lr", type=float, default=2e-3, help="Adam learning rate")
    p.add_argument("--batch-positions", type=int, default=1024, help="positions per Adam step")
    add_seed_arg(p, default=0, help="seed of the position sample and the head's initialisation")
    p.set_defaults(handler=_fit_head, keep_freed_memory=True)

    p = sub.add_parser("plan", help="which teacher passes a config runs, what each computes, who reads it")
    p.add_argument("--config", dest="configs", action="append", default=None,
                   help="config file(s), merged in order (default: config/config.yaml)")
    p.add_argument("--by-method", action="store_true", help="name readers by method, not by the embeddings sheet")
    p.set_defaults(handler=_plan)

    p = sub.add_parser("baseline", help="contextual baselines as static embeddings: token | word | ase")
    p.add_argument("kind", choices=["token", "word", "ase"])
    p.add_argument("--teacher", default=None, help="teacher (token, word; ase with --fallback-word)")
    add_device_arg(p, choices=None, help="auto (CUDA when available) | cpu | cuda[:N]")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"],
                   help="compute dtype, as for `teacher features` (the same policy for every teacher pass)")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher (default: offline)")
    p.add_argument("--max-length", type=int, default=None, help="cap on input pieces (default: the model's, ≤ 512)")
    p.add_argument("--batch-tokens", type=int, default=8192, help="padded pieces per batch")
    _add_vocab_args(p)
    p.add_argument("--features", nargs="*", default=[], help="ase: the shards' features (features.json or dirs)")
    rec = p.add_argument_group("ase computed now (teacher.cache: recompute): no stored passes")
    rec.add_argument("--shards", nargs="+", default=[], metavar="SHARD",
                     help="ase: corpus shards run through --teacher now, their sums added in memory")
    rec.add_argument("--part-sentences", type=int, default=4096, help="ase --shards: sentences per batch of parts")
    rec.add_argument("--no-pass-special-tokens", dest="pass_special_tokens", action="store_false",
                     help="ase --shards: the corpus sentences without [CLS]/[SEP] (the released ASE code's input); "
                          "the word-alone fallback keeps --no-special-tokens")
    rec.add_argument("--ase-max-words", type=int, default=None, help="ase --shards: only the N most frequent words")
    rec.add_argument("--checkpoint", default=None, help="ase --shards: running sums saved here (resumable job)")
    rec.add_argument("--checkpoint-every", type=float, default=1800.0, help="ase --shards: seconds between checkpoints")
    p.add_argument("--layers", type=_layers, default=None, help="word: default last; ase: default all")
    p.add_argument("--no-special-tokens", dest="special_tokens", action="store_false", help="word: no [CLS]/[SEP] around the word")
    p.add_argument("--fallback-word", action="store_true", help="ase: unseen words get their word-alone vector")
    p.add_argument("--evaluation-data", metavar="DIR",
                   help="ase with --fallback-word: also embed (word alone) the intrinsic evaluation sets' words that "
                        "are outside the vocabulary, read from this evaluation data directory")
    p.add_argument("--evaluation-tasks", nargs="+", default=["all"], help="ase: the evaluation sets read for those words")
    p.add_argument("--lowercase-evaluation-words", action="store_true", help="ase: lower-case the evaluation words "
                   "(a lower-cased corpus)")
    add_out_arg(p, help="token/word with one layer: embedding file; word with several layers and ase: directory")
    add_format_arg(p, default="word2vec", help="embedding file format")
    p.set_defaults(handler=_baseline)


# ---------------------------------------------------------------- handlers


def _load(args, attention=False, mlm_head=None):
    from staticvec.teacher.load import load_teacher

    return load_teacher(args.teacher, device=args.device, offline=not args.online, attention=attention,
                        mlm_head=mlm_head, dtype=args.dtype, max_length=args.max_length)


def _features(args) -> int:
    import numpy as np

    from staticvec.teacher.features import FeatureSpec
    from staticvec.teacher.pipeline import host_workers_for
    from staticvec.teacher.store import write_shard_features

    vocab = load_vocab_of(args)
    teacher = _load(args, attention=args.attention_window > 0, mlm_head=args.mlm_head)
    mode = args.mlm_mode
    if mode == "auto":
        mode = "unmasked" if teacher.mlm_head_kind == "fitted" else "masked"
    layers = list(range(teacher.n_layers + 1)) if args.layers == "all" else args.layers
    spec = FeatureSpec(context=args.context, special_tokens=args.special_tokens, layers=tuple(layers),
                       sentence_vectors=args.sentence_vectors, attention_window=args.attention_window,
                       mlm_topk=args.mlm_topk, mlm_mode=mode, mlm_masking=args.mlm_masking, ase=args.ase, vector_dtype=args.vector_dtype)
    ase_words = None
    if args.ase:
        ids = np.arange(len(vocab))
        if args.ase_words:
            from staticvec.files import open_any

            with open_any(args.ase_words, "rt") as fh:
                wanted = {line.strip().split("\t")[0] for line in fh if line.strip()}
            ids = np.array(sorted(vocab.index[w] for w in wanted if w in vocab), dtype=np.int64)
            log.info("ASE words: %d of %d listed are in the vocabulary", len(ids), len(wanted))
        if args.ase_max_words is not None:
            ids = ids[: args.ase_max_words]
        ase_words = ids
    sidecar = write_shard_features(teacher, args.shard, args.out, spec, vocab, args.vocab, args.part_sentences,
                                   args.batch_tokens, ase_words, overlap={"auto": None, "on": True, "off": False}[args.overlap],
                                   ase_checkpoint_seconds=60 * args.ase_checkpoint_minutes,
                                   host_workers=host_workers_for(teacher.device, args.host_workers))
    rate = sidecar["timing"]["word_pieces_per_second"]
    done_now = f"{rate} word pieces/s" if rate is not None else "no part left to compute (all were finished before)"
    log.info("%s: %d sentences, %d words, %s", args.out, sidecar["sentences"], sidecar["words"], done_now)
    return 0


def _fit_head(args) -> int:
    from staticvec.files import write_json
    from staticvec.teacher.mlm_head import fit_head, save_head

    teacher = _load(args)
    if teacher.mlm_head_kind == "native":
        log.warning("teacher %s ships an MLM head; a fitted head replaces it only where passed with --mlm-head",
                    teacher.name)
    head, report = fit_head(teacher, args.shards, args.mode, args.train_positions, args.heldout_positions,
                            args.select_prob, args.epochs, args.lr, args.batch_positions, args.batch_tokens,
                            args.seed)
    save_head(head, args.out)
    if args.report:
        write_json(args.report, report)
    log.info("MLM head (%s): held-out top-1 %.3f, top-10 %.3f (unigram %.3f / %.3f)", args.mode,
             report["heldout_top1"], report["heldout_top10"], report["unigram_top1"], report["unigram_top10"])
    return 0


def _plan(args) -> int:
    from staticvec.config import load_config, resolve_path
    from staticvec.sheets import EmbeddingSheet
    from staticvec.teacher.load import dtype_policy
    from staticvec.dag.teacher import TeacherPlan

    config = load_config(args.configs or ["config/config.yaml"])
    sheet = None
    if not args.by_method:
        path = config.get("sheets", {}).get("embeddings", "config/embeddings.yaml")
        sheet = EmbeddingSheet.load(resolve_path(path), config)
    policy = dtype_policy(config)
    print(f"teacher dtype {policy['requested']} on this machine: {policy['dtype']} ({policy['reason']})")
    print(TeacherPlan(config).describe_passes(sheet))
    return 0


def _baseline(args) -> int:
    from staticvec.files import write_json
    from staticvec.teacher import baselines

    vocab = load_vocab_of(args)
    out = Path(args.out)
    if args.kind in ("token", "word") or args.fallback_word or args.shards:
        if not args.teacher:
            raise StaticvecError(f"baseline {args.kind}: --teacher is required")
        teacher = _load(args)
    if args.kind == "token":
        baselines.token_table(teacher, vocab.words, vocab.counts).save(out, args.format)
        return 0
    if args.kind == "word":
        layers = [-1] if args.layers is None else args.layers
        if layers == "all":
            layers = list(range(teacher.n_layers + 1))
        tables = baselines.word_alone(teacher, vocab.words, layers, args.special_tokens, args.batch_tokens,
                                      vocab.counts)
        if len(tables) == 1:
            next(iter(tables.values())).save(out, args.format)
        else:
            for layer, emb in tables.items():
                emb.save(out / f"layer-{layer:02d}{_suffix(args.format)}", args.format)
        return 0
    from staticvec.teacher.store import FeatureStore

    if bool(args.features) == bool(args.shards):
        raise StaticvecError("baseline ase: give the shards' stored features (--features) or the corpus shards to "
                             "run the teacher on now (--shards)")
    if args.shards:
        stores = [baselines.RecomputedAse(teacher, args.shards, vocab, args.pass_special_tokens, args.part_sentences,
                                          args.batch_tokens, args.ase_max_words, args.checkpoint, args.checkpoint_every)]
    else:
        stores = [FeatureStore(f) for f in args.features]
    import tempfile

    fallback, extra = None, []
    if args.evaluation_data and not args.fallback_word:
        raise StaticvecError("baseline ase: --evaluation-data embeds words alone: it needs --fallback-word")
    if args.evaluation_data:
        from staticvec.evaluate.datasets import datasets_for, evaluation_words

        extra = evaluation_words(datasets_for(args.evaluation_tasks), args.evaluation_data,
                                 args.lowercase_evaluation_words)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    # the word-alone fallback's scratch file lives beside the outputs and goes with the directory, failed or not
    with tempfile.TemporaryDirectory(prefix=".word-alone-", dir=out) as scratch:
        if args.fallback_word:
            n = stores[0].meta["teacher"]["layers"]

            def fallback(words):
                return baselines.WordAlone(teacher, words, list(range(n + 1)), args.special_tokens,
                                           args.batch_tokens, scratch)
        tables = baselines.ase_embeddings(stores, vocab, None if args.layers in (None, "all") else args.layers,
                                          fallback, extra)
        for layer, emb in tables:
            name = f"layer-{layer:02d}{_suffix(args.format)}"
            emb.save(out / name, args.format)
            files[str(layer)] = name
            rows = len(emb)
    report = baselines.ase_report(stores, vocab) | {
        "files": files, "fallback_word": args.fallback_word, "rows": rows,
        "evaluation_words": len(extra), "evaluation_words_outside_vocabulary": sum(w not in vocab.index for w in extra),
        "teacher": stores[0].meta["teacher"], "special_tokens": stores[0].meta["spec"]["special_tokens"]}
    write_json(out / "ase.json", report)
    for store in stores:
        if hasattr(store, "close"):  # a recomputed source's checkpoint, now that the tables are written
            store.close()
    return 0


def _suffix(fmt: str) -> str:
    return {"word2vec": ".txt", "glove": ".txt", "binary": ".bin", "npy": ".npy"}[fmt]
