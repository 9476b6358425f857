"""``staticvec train ...``: one sub-command per training method.

Each writes its vectors with ``Embeddings.save`` (format from the file name; ``.bin`` in the
pipeline) and a JSON record beside them (``--record``, default ``<out>.json``): the
hyper-parameters, the training curve and the time. Other trainers register under the same
group: add their module to ``TRAIN_COMMAND_MODULES`` (each defines ``register(train_subparsers)``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import time
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

TRAIN_COMMAND_MODULES: list[str] = ["staticvec.train.model2vec"]


def default_threads() -> int:
    """The cores this process may use (Snakemake/SLURM restrict the affinity mask)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def register(subparsers) -> None:
    parser = subparsers.add_parser("train", help="train static embeddings")
    sub = parser.add_subparsers(dest="train_command", metavar="METHOD", required=True)

    p = sub.add_parser("glove", help="GloVe on a co-occurrence store")
    p.add_argument("--cooc", required=True, help="co-occurrence store (staticvec cooc window/merge)")
    _vocab_args(p)
    _output_args(p)
    p.add_argument("--dim", type=int, default=300, help="vector dimension (default 300)")
    p.add_argument("--iterations", type=int, default=100, help="passes over the entries: paper 100; released script 15")
    p.add_argument("--x-max", type=float, default=10.0, help="weighting cutoff x_max of f(x) = min(1, (x/x_max)^alpha)")
    p.add_argument("--alpha", type=float, default=0.75, help="weighting exponent alpha of f(x) (default 0.75)")
    p.add_argument("--lr", type=float, default=0.05, help="AdaGrad initial learning rate")
    p.add_argument("--bias-lr-scaled", action=argparse.BooleanOptionalAction, default=True,
                   help="scale bias gradients by the learning rate (2014 code, SemGloVe); "
                        "--no-bias-lr-scaled = current stanfordnlp/GloVe")
    p.add_argument("--grad-clip", type=_optional_float, default=None,
                   help="clip vector gradient components to ±VALUE (current stanfordnlp/GloVe: 100; default none)")
    p.add_argument("--threads", type=int, default=default_threads(),
                   help="CPU threads with --no-deterministic (default: all allotted cores)")
    _deterministic_arg(p)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto: CUDA when available")
    p.add_argument("--engine", choices=["numba", "torch"], default=None,
                   help="default: numba on CPU, torch on CUDA")
    p.add_argument("--batch-size", type=int, default=1 << 16, help="entries per step of the torch engine")
    p.add_argument("--seed", type=int, default=1, help="random seed (initialisation, shuffling; default 1)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="save a checkpoint every N iterations (0: never)")
    p.add_argument("--checkpoint", default=None, help="checkpoint file (default: <out>.ckpt.npz when --checkpoint-every)")
    p.add_argument("--shuffle-memory-gb", type=float, default=2.0,
                   help="memory of the out-of-core shuffle and of a torch chunk of entries (default 2)")
    p.add_argument("--tmp-dir", default=None, help="where the shuffled copy of the store goes (default: beside --out)")
    p.add_argument("--only-seen", action=argparse.BooleanOptionalAction, default=False,
                   help="write only words that have co-occurrence entries; default --no-only-seen writes every "
                        "vocabulary word, as glove.c does (a corpus fraction has its own vocabulary, so every "
                        "word of it is trained)")
    p.set_defaults(handler=_cli_glove)

    for name, help_text in (("word2vec", "Skip-gram or CBOW (gensim)"), ("fasttext", "fastText (gensim)")):
        p = sub.add_parser(name, help=help_text)
        src = p.add_argument_group("sentences (one or both)")
        src.add_argument("--shards", nargs="+", default=[], metavar="SHARD", help="corpus shards")
        src.add_argument("--text", nargs="+", default=[], metavar="FILE", help="plain text, one sentence per line")
        _vocab_args(p)
        _output_args(p)
        p.add_argument("--arch", choices=["skipgram", "cbow"], default="skipgram", help="Skip-gram (default) or CBOW")
        p.add_argument("--dim", type=int, default=300, help="vector dimension (default 300)")
        p.add_argument("--window", type=int, default=5, help="maximum context window (word2vec samples 1..window; default 5)")
        p.add_argument("--negative", type=int, default=5, help="negative samples per positive (default 5)")
        p.add_argument("--sample", type=float, default=1e-4, help="sub-sampling threshold of frequent words (default 1e-4)")
        p.add_argument("--epochs", type=int, default=5, help="passes over the corpus (default 5)")
        p.add_argument("--alpha", type=float, default=None,
                       help="initial learning rate (default: word2vec 0.025 Skip-gram / 0.05 CBOW; fastText 0.05)")
        p.add_argument("--min-alpha", type=float, default=1e-4, help="final learning rate of the linear decay (default 1e-4)")
        p.add_argument("--cbow-mean", action=argparse.BooleanOptionalAction, default=True,
                       help="CBOW: average the context vectors (word2vec.c) or sum them")
        p.add_argument("--seed", type=int, default=1, help="random seed (initialisation, shuffling; default 1)")
        p.add_argument("--workers", type=int, default=default_threads(),
                       help="gensim worker threads with --no-deterministic (default: all allotted cores)")
        _deterministic_arg(p)
        if name == "word2vec":
            p.add_argument("--vectors", choices=["input", "context"], default="input",
                           help="the table written: input word vectors (default) or the context (output) vectors "
                                "of negative sampling (Context-to-Vec's Skip-gram(context))")
        if name == "fasttext":
            p.add_argument("--min-n", type=int, default=3, help="shortest character n-gram (default 3)")
            p.add_argument("--max-n", type=int, default=6, help="longest character n-gram (default 6)")
            p.add_argument("--bucket", type=int, default=2_000_000, help="hash buckets of the n-grams (default 2,000,000)")
        p.set_defaults(handler=_cli_gensim, method=name)

    for name in TRAIN_COMMAND_MODULES:
        importlib.import_module(name).register(sub)


# Config keys of methods.<name> that are not training flags (they choose inputs or job sizes).
_NOT_FLAGS = {"window": ("glove",), "threads": ("glove", "skipgram", "cbow", "fasttext"),
              "small_dim_iterations": ("glove",)}  # resolved into --iterations by glove_training_params
_FLAG_NAMES = {"gpu_batch_size": "batch-size"}


def glove_training_params(params: dict) -> dict:
    """A glove/semglove entry's training parameters with ``small_dim_iterations`` applied:
    SemGloVe §5.3 (Figure 2a) trains vectors of fewer than 300 dimensions for 50 iterations,
    the others for the paper's 100 (config ``methods.glove|semglove.small_dim_iterations``)."""
    params = dict(params)
    rule = params.pop("small_dim_iterations", None)
    if rule and int(params.get("dim", 300)) < int(rule["below_dim"]):
        params["iterations"] = int(rule["iterations"])
    return params


def method_flags(method: str, settings: dict) -> str:
    """The command-line flags of ``staticvec train`` for a ``methods.<method>`` config
    section (so a rule passes the config through without listing every key)."""
    import shlex

    flags = []
    if method in ("skipgram", "cbow"):
        flags += ["--arch", method]
    for key, value in settings.items():
        if method in _NOT_FLAGS.get(key, ()):
            continue
        flag = "--" + _FLAG_NAMES.get(key, key.replace("_", "-"))
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        else:
            flags += [flag, "none" if value is None else str(value)]
    return " ".join(shlex.quote(f) for f in flags)


def _deterministic_arg(p) -> None:
    p.add_argument("--deterministic", action=argparse.BooleanOptionalAction, default=True,
                   help="same seed, same vectors: one thread (default); --no-deterministic uses every thread, whose "
                        "asynchronous (Hogwild) updates make the vectors depend on thread timing")


def _optional_float(text: str):
    return None if text.lower() in ("none", "null", "0", "") else float(text)


def _vocab_args(p) -> None:
    p.add_argument("--vocab", required=True, help="vocabulary file (word TAB count, by decreasing count)")
    p.add_argument("--min-count", type=int, default=1, help="keep vocabulary words seen at least this often (default 1)")
    p.add_argument("--max-vocab", type=int, default=None, help="keep at most this many words (default: no cap)")


def _output_args(p) -> None:
    p.add_argument("--out", required=True, help="output vectors (.bin word2vec binary, .txt, .npy)")
    p.add_argument("--record", default=None, help="training record JSON (default: <out without suffix>.json)")


def _record_path(args) -> Path:
    out = Path(args.out)
    return Path(args.record) if args.record else out.with_name(out.name.split(".")[0] + ".json")


def _cli_glove(args) -> int:
    from staticvec.cooc.cli import load_vocab_of
    from staticvec.cooc.store import CoocStore
    from staticvec.embeddings import Embeddings
    from staticvec.files import write_json
    from staticvec.device import resolve_device
    from staticvec.train.glove import GloveConfig, train_glove

    vocab = load_vocab_of(args)
    threads = 1 if args.deterministic else args.threads
    cfg = GloveConfig(
        dim=args.dim, iterations=args.iterations, x_max=args.x_max, alpha=args.alpha, lr=args.lr,
        bias_lr_scaled=args.bias_lr_scaled, grad_clip=args.grad_clip, seed=args.seed, threads=threads,
        device=args.device, batch_size=args.batch_size, checkpoint_every=args.checkpoint_every,
        shuffle_memory_gb=args.shuffle_memory_gb,
    )
    checkpoint = args.checkpoint or (f"{args.out}.ckpt.npz" if args.checkpoint_every else None)
    started = time.time()
    state = train_glove(args.cooc, vocab, cfg, checkpoint_path=checkpoint, engine=args.engine,
                        work_dir=args.tmp_dir or Path(args.out).parent)
    seconds = time.time() - started
    store = CoocStore(args.cooc)
    vectors = state.vectors()
    keep = np.arange(len(vocab))
    if args.only_seen:
        # words with no entry were never trained: leave them out rather than write their random
        # initial vectors (glove.c writes them; this is the named option)
        seen = np.zeros(len(vocab), dtype=bool)
        for i, j, _ in store.iter_chunks():
            seen[i] = True
            seen[j] = True
        keep = np.flatnonzero(seen)
    Embeddings([vocab.words[k] for k in keep], vectors[keep], [vocab.counts[k] for k in keep]).save(args.out)
    import dataclasses

    write_json(_record_path(args), {
        "method": "glove",
        "hyperparameters": dataclasses.asdict(cfg),
        "device": resolve_device(cfg.device),
        "threads": threads,
        "deterministic": bool(args.deterministic),
        "engine": args.engine or ("numba" if resolve_device(cfg.device) == "cpu" else "torch"),
        "cooc": {"path": str(args.cooc), "n_entries": store.n_entries, "checksum": store.header["checksum"], "meta": store.meta},
        "vocab": {"path": str(args.vocab), "size": len(vocab), "min_count": args.min_count, "written": int(len(keep))},
        "cost_per_iteration": state.losses,
        "seconds": round(seconds, 2),
    })
    if checkpoint and Path(checkpoint).exists():
        Path(checkpoint).unlink()  # the run is complete: its vectors supersede the checkpoint
    log.info("wrote %s (%d words × %d) in %.1f s", args.out, len(vocab), cfg.dim, seconds)
    return 0


def _cli_gensim(args) -> int:
    from staticvec.cooc.cli import load_vocab_of
    from staticvec.errors import StaticvecError
    from staticvec.files import write_json
    from staticvec.train.gensim_baselines import (
        FastTextConfig, SentenceCorpus, Word2VecConfig, train_fasttext, train_word2vec,
    )

    if not args.shards and not args.text:
        raise StaticvecError("give the training sentences with --shards and/or --text")
    vocab = load_vocab_of(args)
    corpus = SentenceCorpus(args.shards, args.text)
    workers = 1 if args.deterministic else args.workers
    common = dict(arch=args.arch, dim=args.dim, window=args.window, negative=args.negative, sample=args.sample,
                  epochs=args.epochs, min_alpha=args.min_alpha, cbow_mean=args.cbow_mean, seed=args.seed,
                  workers=workers)
    if args.alpha is not None:
        common["alpha"] = args.alpha
    if args.method == "fasttext":
        emb, record = train_fasttext(corpus, vocab, FastTextConfig(**common, min_n=args.min_n, max_n=args.max_n, bucket=args.bucket))
        method = "fasttext"
    else:
        emb, record = train_word2vec(corpus, vocab, Word2VecConfig(**common, vectors=args.vectors))
        method = args.arch
    emb.save(args.out)
    import gensim

    write_json(_record_path(args), {"method": method, "gensim": gensim.__version__,
                                    "threads": workers, "deterministic": bool(args.deterministic),
                                    "vocab": {"path": str(args.vocab), "size": len(vocab), "min_count": args.min_count},
                                    **record})
    log.info("wrote %s (%d words × %d) in %.1f s", args.out, len(emb), emb.dim, record["seconds"])
    return 0
