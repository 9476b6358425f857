"""``staticvec train x2static | bert-sg | c2v | bert-sg-attention``: the distillation trainers' commands.

Each trainer reads teacher features (``--features``: the teacher rule's per-shard directories) or,
with ``--shards`` and ``--teacher``, computes them now (the recompute path), trains, and writes the
static table with ``Embeddings.save`` (``--out``; format from the name, ``.bin`` in the pipeline)
and a JSON record (``--record``): hyper-parameters, the paper-vs-released-code options used, the
loss curve, timing (the static update's share of the time), throughput, inputs.

Hyper-parameters: ``--params '{"window": 3}'`` (JSON, or ``@file.json``) and/or one flag per
hyper-parameter (``--window 3``); flags win. Defaults are the papers' values.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import time
import typing
from pathlib import Path

from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)

METHODS = {  # command -> (module, params class, model class, help)
    "x2static": ("staticvec.train.x2static", "X2StaticParams", "X2Static",
                 "X2Static (Gupta & Jaggi 2021): CBOW-style distillation; sent/para from the features given"),
    "bert-sg": ("staticvec.train.bert_skipgram", "BertSGParams", "BertSkipGram",
                "BERT + Skip-gram (Wang, Cui & Zhang): contextual centre, attention over static context words"),
    "c2v": ("staticvec.train.context2vec", "C2VParams", "ContextToVec",
            "Context-to-Vec (Zheng et al. 2022): BERT + Skip-gram with the tied contextualized attention losses"),
}

# The released code's values of the options where it differs from the paper (recorded beside each run).
RELEASED_CODE = {
    "x2static": {"context_mean": "all_pieces", "negative_power": 0.5, "score_clamp": 20.0},
    "bert-sg": {"lr": 0.08, "min_lr_fraction": 0.0, "attention_scale": 300 ** -0.5, "projection_bias": True,
                "clip_scope": "all", "batch_centres": "5 pairs"},
    "c2v": {"variant": "released", "lr": 0.08, "min_lr_fraction": 0.0, "projection_bias": True,
            "clip_scope": "all", "batch_centres": "1000 pairs"},
}


# ---------------------------------------------------------------- parsers


def register(subparsers) -> None:
    """Add the commands under ``staticvec train`` (created here when no other module made it)."""
    train = subparsers.choices.get("train") if hasattr(subparsers, "choices") else None
    if train is None:
        train = subparsers.add_parser("train", help="train static embeddings")
        sub = train.add_subparsers(dest="train_command", metavar="METHOD", required=True)
    else:
        sub = next(a for a in train._actions if isinstance(a, argparse._SubParsersAction))
    register_methods(sub)


def register_methods(sub) -> None:
    import importlib

    for command, (module, params_name, _, help_text) in METHODS.items():
        p = sub.add_parser(command, help=help_text, description=help_text)
        data = p.add_argument_group("teacher features (stored, or computed now)")
        data.add_argument("--features", nargs="+", default=[], metavar="DIR",
                          help="the shards' stored features (directories or features.json), in corpus order")
        data.add_argument("--shards", nargs="+", default=[], metavar="SHARD",
                          help="recompute: corpus shards run through --teacher now")
        data.add_argument("--teacher", default=None, help="recompute: teacher spec (minilm, smollm2, a directory, a hub name)")
        data.add_argument("--online", action="store_true", help="recompute: allow downloading the teacher")
        data.add_argument("--batch-tokens", type=int, default=8192, help="recompute: padded pieces per teacher batch")
        data.add_argument("--part-sentences", type=int, default=4096, help="recompute: sentences per block")
        p.add_argument("--vocab", required=True, help="the method's vocabulary (word TAB count, by frequency)")
        p.add_argument("--feature-vocab", default=None,
                       help="the vocabulary the stored features' word ids come from (default: --vocab)")
        p.add_argument("--params", default=None, help="hyper-parameters as JSON, or @file.json")
        p.add_argument("--out", required=True, help="embedding file (.bin word2vec binary, .txt, .npy)")
        p.add_argument("--record", default=None, help="JSON record (default: <out>.json)")
        p.add_argument("--model", default=None, help="also save the model parameters (.pt; bert-sg: for the attention dump)")
        p.add_argument("--checkpoint", default=None, help="checkpoint file: resume from it, write it during training")
        p.add_argument("--checkpoint-every", type=float, default=600.0, help="seconds between checkpoints (default 600)")
        p.add_argument("--device", default="auto", help="auto (CUDA when available) | cpu | cuda[:N]")
        p.add_argument("--seed", type=int, default=1, help="random seed (initialisation, negatives, shuffling; default 1)")
        p.add_argument("--threads", type=int, default=None,
                       help="CPU threads of the trainer (the fast engine's kernels and torch; default: 1 with "
                            "stored features — Snakemake runs two jobs side by side —, the cores allotted when the "
                            "teacher runs here)")
        p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress lines (examples/s, loss) in the log")
        dev = p.add_argument_group("development curve over training (Wang et al. Figure 5)")
        dev.add_argument("--dev-set", default=None, help="word-similarity file scored on the output table during training")
        dev.add_argument("--dev-points", type=int, default=0, help="score it after every 1/N of the run (0: never)")
        dev.add_argument("--dev-oov", choices=["mean", "drop"], default="mean",
                         help="OOV policy of the dev score (mean: the web benchmarks', as the figure's protocol)")
        hyper = p.add_argument_group("hyper-parameters (override --params)")
        params_cls = getattr(importlib.import_module(module), params_name)
        for f in dataclasses.fields(params_cls):
            _param_flag(hyper, f, params_cls)
        p.set_defaults(handler=_run, method=command)

    p = sub.add_parser("bert-sg-attention", help="Figure 7: attention weights a_j of a trained BERT + Skip-gram model")
    p.add_argument("--model", required=True, help="model file written by 'staticvec train bert-sg --model'")
    p.add_argument("--teacher", required=True, help="the teacher the model was trained with")
    p.add_argument("--sentence", action="append", required=True,
                   help="a sentence (lower-cased, space-separated tokens as in the corpus); repeatable")
    p.add_argument("--out", required=True, help="JSON file")
    p.add_argument("--device", default="auto", help="auto (CUDA when available) | cpu | cuda[:N]")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher (default: offline)")
    p.set_defaults(handler=_attention)


def _param_flag(group, f, params_cls) -> None:
    default = f.default
    flag = "--" + f.name.replace("_", "-")
    if isinstance(default, bool):
        group.add_argument(flag, dest=f"hp_{f.name}", action=argparse.BooleanOptionalAction, default=None,
                           help=f"(default {default})")
    else:
        group.add_argument(flag, dest=f"hp_{f.name}", type=_yaml_value, default=None, metavar="V",
                           help=f"(default {default})")


def _yaml_value(text: str):
    import yaml

    return yaml.safe_load(text)


def _params(args, params_cls):
    given = {}
    if args.params:
        text = args.params
        if text.startswith("@"):
            text = Path(text[1:]).read_text(encoding="utf-8")
        try:
            given = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StaticvecError(f"--params: not valid JSON ({exc.msg})") from None
        if not isinstance(given, dict):
            raise StaticvecError("--params: expected a JSON object")
    for f in dataclasses.fields(params_cls):
        value = getattr(args, f"hp_{f.name}", None)
        if value is not None:
            given[f.name] = value
    hints = typing.get_type_hints(params_cls)
    for key, value in list(given.items()):  # JSON/YAML ints where floats are meant are fine; tuples are not used
        if hints.get(key) is float and isinstance(value, int) and not isinstance(value, bool):
            given[key] = float(value)
    return params_cls.from_dict(given)


# ---------------------------------------------------------------- handlers


def _run(args) -> int:
    import importlib

    import numpy as np
    import torch

    from staticvec.corpus.vocab import Vocabulary
    from staticvec.embeddings import Embeddings
    from staticvec.files import sha256_of, write_json
    from staticvec.device import resolve_device
    from staticvec.train.negative_sampling import train
    from staticvec.train.teacher_blocks import RecomputedFeatures, StoredFeatures, vocabulary_remap

    module_name, params_name, model_name, _ = METHODS[args.method]
    module = importlib.import_module(module_name)
    params = _params(args, getattr(module, params_name))
    from staticvec.train.cli import default_threads

    threads = args.threads or (default_threads() if args.shards else 1)
    torch.set_num_threads(threads)
    from staticvec.train.negative_sampling import fast_engine_threads

    fast_engine_threads(threads)  # the fast engine's kernels (numba) run on as many threads
    device = resolve_device(args.device)
    vocab = Vocabulary.load(args.vocab, params.min_count, params.max_vocab)
    if not len(vocab):
        raise StaticvecError(f"{args.vocab}: no word with count >= {params.min_count}")
    model_cls = getattr(module, model_name)
    keys = model_cls.feature_keys_for(params)

    if bool(args.features) == bool(args.shards):
        raise StaticvecError("give either --features (stored teacher features) or --shards with --teacher (recompute)")
    if args.features:
        source = StoredFeatures(args.features, keys)
        feature_vocab_path = args.feature_vocab or args.vocab
        feature_vocab = Vocabulary.load(feature_vocab_path, max_size=source.meta.get("vocab_size"))
        source.check_vocabulary(feature_vocab_path, feature_vocab)
        wanted = getattr(params, "context", "sentence")
        if source.context != wanted:
            raise StaticvecError(f"{args.features[0]}: features computed with {source.context} inputs, but the "
                                 f"{args.method} run asks for context {wanted!r}")
        if feature_vocab.words[: len(vocab)] != vocab.words or len(feature_vocab) != len(vocab):
            source.remap = vocabulary_remap(feature_vocab.words, vocab.index)
            log.info("feature word ids remapped: %d feature words -> %d method words", len(feature_vocab), len(vocab))
    else:
        if not args.teacher:
            raise StaticvecError("--shards needs --teacher (the recompute path runs the teacher now)")
        from staticvec.teacher.load import load_teacher

        teacher = load_teacher(args.teacher, device=args.device, offline=not args.online)
        context = getattr(params, "context", "sentence")  # x2static's sentence/paragraph inputs
        source = RecomputedFeatures(args.shards, teacher, vocab, keys, context=context,
                                    part_sentences=args.part_sentences, batch_tokens=args.batch_tokens)

    model = model_cls(np.asarray(vocab.counts), source.hidden_size, params, device, args.seed)
    settings = params.loop_settings()
    settings.checkpoint_every = args.checkpoint_every
    run = {"method": args.method, "params": dataclasses.asdict(params), "vocab_sha256": sha256_of(args.vocab),
           "vocab_size": len(vocab), "source": source.describe()}
    table_name = "U" if args.method == "x2static" else "ctx"
    dev = None
    if args.dev_set and args.dev_points > 0:
        from staticvec.train.dev_curve import DevCurve

        dev = source = DevCurve(source, model, table_name, vocab.words, args.dev_set, args.dev_points, args.dev_oov,
                                settings.epochs)
    started = time.time()
    record = train(model, source, settings, seed=args.seed, checkpoint=args.checkpoint, fingerprint=run,
                   name=args.method, progress=args.progress)
    table = model.tables[table_name].detach().cpu().numpy()
    Embeddings(vocab.words, table.astype(np.float32), vocab.counts).save(args.out)
    if args.model and hasattr(model, "save_model"):
        model.save_model(args.model, vocab.words, source.describe().get("teacher"))
    out = {
        **run,
        "output": {"embeddings": str(args.out), "table": "U (target table)" if args.method == "x2static" else
                   "V' / u' (static context table)", "words": len(vocab), "dim": int(table.shape[1]),
                   "model": args.model},
        "options": _options(args.method, params),
        "seed": args.seed,
        "device": device,
        "threads": torch.get_num_threads(),
        "fast_engine_threads": fast_engine_threads(),
        "torch": torch.__version__,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": round(time.time() - started, 3),
        "train": record,
    }
    if dev is not None:
        out["dev_curve"] = dev.finish()
    write_json(args.record or f"{args.out}.json", out)
    if args.checkpoint and Path(args.checkpoint).exists():
        Path(args.checkpoint).unlink()  # the run is complete: its outputs replace the checkpoint
    log.info("%s: %d words × %d written to %s (%.1f s; static update %.0f%% of the time)", args.method, len(vocab),
             table.shape[1], args.out, out["seconds"], 100 * (record["timing"]["static_update_share"] or 0))
    return 0


def _options(method: str, params) -> dict:
    """For each option where the released code differs: the value used, the paper default, the released one."""
    defaults = type(params)()
    return {key: {"used": getattr(params, key), "paper": getattr(defaults, key), "released_code": released,
                  "follows": "paper" if getattr(params, key) == getattr(defaults, key) else
                  ("released code" if getattr(params, key) == released else "neither")}
            for key, released in RELEASED_CODE[method].items()}


def _attention(args) -> int:
    from staticvec.files import write_json
    from staticvec.teacher.load import load_teacher
    from staticvec.train.bert_skipgram import attention_weights, load_model, teacher_word_vectors

    model = load_model(args.model)
    if model.get("method") != "bert_sg":
        raise StaticvecError(f"{args.model}: not a BERT + Skip-gram model (method {model.get('method')!r})")
    teacher = load_teacher(args.teacher, device=args.device, offline=not args.online)
    trained_with = (model.get("teacher") or {}).get("name")
    if trained_with and trained_with != teacher.name:
        log.warning("model trained with teacher %s, attention computed with %s", trained_with, teacher.name)
    results = []
    for sentence in args.sentence:
        words = sentence.split()
        vectors, _ = teacher_word_vectors(teacher, words)
        results.append({"sentence": sentence, **attention_weights(model, words, vectors)})
    write_json(args.out, {"model": str(args.model), "teacher": teacher.describe(), "sentences": results})
    return 0
