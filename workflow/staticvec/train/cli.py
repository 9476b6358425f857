"""``staticvec train METHOD``: one sub-command per training method, all defined here.

Every trainer takes its hyper-parameters one way: ``--params JSON`` (or ``@file.json``), the sheet
entry's resolved row less the keys that steer the workflow (``staticvec.methods``: ``workflow_keys``),
from which the command builds the method's dataclass (:class:`~staticvec.train.glove.GloveParams`,
``Word2VecConfig``/``FastTextConfig``, ``Model2VecParams``, the students' ``*Params``). An unknown key
is an error naming it; a key left out takes the dataclass's default. One flag per hyper-parameter
(``--dim 50``), generated from the dataclass's fields, overrides the JSON. The other flags are the
job's: inputs, outputs, seed, threads, device, checkpoint.

Each writes its vectors with ``Embeddings.save`` (format from the file name; ``.bin`` in the
pipeline) and a JSON record beside them (``--record``): the hyper-parameters, the training curve
and the time.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import time
import typing
from pathlib import Path

import numpy as np

from staticvec.cli_args import (add_group, add_out_arg, add_record_arg, add_seed_arg, add_vocab_args, json_or_file,
                                load_vocab_of)
from staticvec.device import default_threads
from staticvec.errors import StaticvecError
from staticvec.files import TIMING_KEY

log = logging.getLogger(__name__)

SEED_HELP = "random seed (initialisation, sampling, shuffling; default 1)"



# ---------------------------------------------------------------- parsers


def register(subparsers) -> None:
    sub = add_group(subparsers, "train", help="train static embeddings", dest="train_command", metavar="METHOD")
    _register_glove(sub)
    _register_gensim(sub)
    _register_model2vec(sub)
    _register_tokenlearn(sub)
    _register_students(sub)
    _register_same_run(sub)


def _register_glove(sub) -> None:
    from staticvec.train.glove import GloveParams

    p = sub.add_parser("glove", help="GloVe on a co-occurrence store")
    p.add_argument("--cooc", required=True, help="co-occurrence store (staticvec cooc window/merge)")
    add_vocab_args(p)
    _output_args(p)
    add_seed_arg(p, default=1, help=SEED_HELP)
    p.add_argument("--threads", type=int, default=default_threads(),
                   help="CPU threads when the parameters say deterministic: false (default: all allotted cores)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto: CUDA when available")
    p.add_argument("--engine", choices=["numba", "kernel", "torch"], default=None,
                   help="default: numba on CPU, the parameters' cuda_engine (kernel: the fused kernel) on CUDA")
    p.add_argument("--checkpoint", default=None,
                   help="checkpoint file (default: <out>.ckpt.npz when checkpoint_every is set)")
    p.add_argument("--tmp-dir", default=None, help="where the shuffled copy of the store goes (default: beside --out)")
    p.add_argument("--only-seen", action=argparse.BooleanOptionalAction, default=False,
                   help="write only words that have co-occurrence entries; default --no-only-seen writes every "
                        "vocabulary word, as glove.c does (a corpus fraction has its own vocabulary, so every "
                        "word of it is trained)")
    add_params_args(p, GloveParams)
    p.set_defaults(handler=_glove)


def _register_gensim(sub) -> None:
    from staticvec.train.gensim_baselines import FastTextConfig, Word2VecConfig

    commands = {  # command -> (help, dataclass, fields that are not hyper-parameters of the command)
        "skipgram": ("Skip-gram (gensim word2vec)", Word2VecConfig, ("arch", "seed", "workers")),
        "cbow": ("CBOW (gensim word2vec)", Word2VecConfig, ("arch", "seed", "workers")),
        "fasttext": ("fastText (gensim)", FastTextConfig, ("seed", "workers", "vectors")),
    }
    for name, (help_text, params_cls, not_params) in commands.items():
        p = sub.add_parser(name, help=help_text)
        src = p.add_argument_group("sentences (one or both)")
        src.add_argument("--shards", nargs="+", default=[], metavar="SHARD", help="corpus shards")
        src.add_argument("--text", nargs="+", default=[], metavar="FILE", help="plain text, one sentence per line")
        add_vocab_args(p)
        _output_args(p)
        add_seed_arg(p, default=1, help=SEED_HELP)
        p.add_argument("--threads", type=int, default=default_threads(),
                       help="gensim worker threads when the parameters say deterministic: false "
                            "(default: all allotted cores)")
        add_params_args(p, params_cls, exclude=not_params)
        p.set_defaults(handler=_gensim, method=name)


def _register_model2vec(sub) -> None:
    from staticvec.train.model2vec import Model2VecParams

    p = sub.add_parser("model2vec", help="Model2Vec (model2vec library) from a teacher, over the run's vocabulary",
                       description="Model2Vec (the model2vec library) distilled from a teacher; each vocabulary word "
                                   "encoded by the model.")
    _model2vec_job_args(p)
    add_params_args(p, Model2VecParams)
    p.set_defaults(handler=_model2vec)


def _model2vec_job_args(p) -> None:
    """The flags of a job writing a Model2Vec model of a teacher (model2vec): the teacher, the
    vocabulary the vectors are written over, the outputs, the library's model directory, device, threads."""
    p.add_argument("--teacher", required=True, help="teacher spec: minilm, a model directory, a Hugging Face name")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher (default: offline)")
    add_vocab_args(p, help="the words written (word TAB count, by decreasing count): each one encoded by the model")
    _output_args(p)
    _library_model_args(p)


def _library_model_args(p) -> None:
    """The library's own model directory, the device and torch's threads: the flags every job writing a Model2Vec
    model of a teacher shares (model2vec, tokenlearn)."""
    p.add_argument("--model-dir", required=True, help="where the library's own model goes (save_pretrained)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--threads", type=int, default=default_threads(), help="torch CPU threads (default: all allotted cores)")


def _register_tokenlearn(sub) -> None:
    from staticvec.train.tokenlearn import TokenlearnParams

    def data_args(p):
        data = p.add_argument_group("the corpus and its stored teacher pass")
        data.add_argument("--shards", nargs="+", required=True, metavar="SHARD", help="corpus shards (the sentences' text)")
        data.add_argument("--features", nargs="+", required=True, metavar="DIR",
                          help="each shard's stored sentence-context features (directories or features.json), same order")

    p = sub.add_parser("tokenlearn", help="Tokenlearn (tokenlearn library): a Model2Vec model of a teacher fitted to "
                                          "its sentence embeddings over the corpus",
                       description="Tokenlearn (the tokenlearn library, how the POTION models are trained): a Model2Vec "
                                   "model of the teacher fitted to the teacher's sentence embeddings of the corpus's "
                                   "training sentences, read from the stored teacher pass; each vocabulary word "
                                   "encoded by the model. The starting point is distilled here (--teacher) or read "
                                   "from 'staticvec train tokenlearn-distill' (--distilled: once for every seed).")
    data_args(p)
    start = p.add_mutually_exclusive_group(required=True)
    start.add_argument("--distilled", default=None, metavar="DIR",
                       help="the distilled model of 'staticvec train tokenlearn-distill' on the same inputs")
    start.add_argument("--teacher", default=None, help="distil here: teacher spec (minilm, a model directory, a hub name)")
    p.add_argument("--online", action="store_true", help="with --teacher: allow downloading it (default: offline)")
    add_vocab_args(p, help="the words written (word TAB count, by decreasing count): each one encoded by the model")
    _output_args(p)
    _library_model_args(p)
    add_seed_arg(p, default=1, help=SEED_HELP)
    add_params_args(p, TokenlearnParams)
    p.set_defaults(handler=_tokenlearn)

    p = sub.add_parser("tokenlearn-distill", help="Tokenlearn's starting point, once for every seed: the corpus's "
                                                  "vocabulary and Model2Vec's distillation of the teacher with it",
                       description="Tokenlearn's seed-free steps (no random number is drawn): the vocabulary_size most "
                                   "frequent words of the training sentences and the teacher distilled by Model2Vec "
                                   "with them at width dim, written as a directory that 'staticvec train tokenlearn "
                                   "--distilled' trains each seed from. Run it with the training's --threads and "
                                   "--device: the forward passes' floating point depends on them.")
    data_args(p)
    p.add_argument("--teacher", required=True, help="teacher spec: minilm, a model directory, a Hugging Face name")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher (default: offline)")
    p.add_argument("--out", required=True, metavar="DIR", help="the distilled model's directory (written whole)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--threads", type=int, default=default_threads(), help="torch CPU threads (default: all allotted cores)")
    add_params_args(p, TokenlearnParams, exclude=("max_epochs",))  # the training's own: each seed's job
    p.set_defaults(handler=_tokenlearn_distill)


def _register_students(sub) -> None:
    from staticvec.methods import REGISTRY, student_trainer

    for method in (m for m in REGISTRY.values() if m.student):
        command, help_text = method.command, method.summary
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
        data.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"],
                          help="recompute: the teacher's compute precision (auto: the teacher stage's policy)")
        data.add_argument("--max-length", type=int, default=None, help="recompute: longest teacher input in pieces")
        data.add_argument("--all-sentences", action="store_true",
                          help="recompute: every sentence of the shards' paragraphs is a training sentence, not only the "
                               "corpus's kept ones (10-40 tokens): X2Static §4.1 names only the paragraph filter")
        p.add_argument("--vocab", required=True, help="the method's vocabulary (word TAB count, by frequency)")
        p.add_argument("--feature-vocab", default=None,
                       help="the vocabulary the stored features' word ids come from (default: --vocab)")
        p.add_argument("--out", required=True, help="embedding file (.bin word2vec binary, .txt, .npy)")
        p.add_argument("--record", default=None, help="JSON record (default: <out>.json)")
        p.add_argument("--model", default=None, help="also save the model parameters (.pt; bert-sg: for the attention dump)")
        p.add_argument("--checkpoint", default=None, help="checkpoint file: resume from it, write it during training")
        p.add_argument("--checkpoint-every", type=float, default=600.0, help="seconds between checkpoints (default 600)")
        p.add_argument("--device", default="auto", help="auto (CUDA when available) | cpu | cuda[:N]")
        data.add_argument("--teacher-device", default=None,
                          help="recompute: where the teacher runs (default: --device); e.g. --device cpu "
                               "--teacher-device auto: the teacher on the GPU, the fast CPU engine trains")
        add_seed_arg(p, default=1, help=SEED_HELP)
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
        add_params_args(p, student_trainer(command)[1])
        p.set_defaults(handler=_student, method=command)

    p = sub.add_parser("bert-sg-attention", help="Figure 7: attention weights a_j of a trained BERT + Skip-gram model")
    p.add_argument("--model", required=True, help="model file written by 'staticvec train bert-sg --model'")
    p.add_argument("--teacher", required=True, help="the teacher the model was trained with")
    p.add_argument("--sentence", action="append", required=True,
                   help="a sentence (lower-cased, space-separated tokens as in the corpus); repeatable")
    p.add_argument("--out", required=True, help="JSON file")
    p.add_argument("--device", default="auto", help="auto (CUDA when available) | cpu | cuda[:N]")
    p.add_argument("--online", action="store_true", help="allow downloading the teacher (default: offline)")
    p.set_defaults(handler=_attention)


# ---------------------------------------------------------------- shared arguments


def _register_same_run(sub) -> None:
    p = sub.add_parser("same-run", help="a sweep point whose settings are its base's: that run's files, copied",
                       description="Write the vectors and training record of a run already trained under another "
                                   "id (the workflow's sweep points whose settings equal their base's), with the "
                                   "record naming the run it repeats.")
    p.add_argument("--from-vectors", required=True, help="the base run's vectors")
    p.add_argument("--from-record", required=True, help="the base run's training record (JSON)")
    p.add_argument("--base", required=True, help="the base run's embedding id (written in the record)")
    add_seed_arg(p, default=1, help="the base run's seed (written in the record)")
    _output_args(p)
    p.set_defaults(handler=_same_run)


def _same_run(args) -> int:
    import shutil

    from staticvec.errors import InputFileError
    from staticvec.files import atomic_path, read_json, sha256_of, write_json

    source = Path(args.from_vectors)
    for path in (source, Path(args.from_record)):
        if not path.is_file():
            raise InputFileError(path, "no such file (the base run's output)")
    record = read_json(args.from_record)
    if not isinstance(record, dict):
        raise InputFileError(args.from_record, "not a training record (a JSON object)")
    with atomic_path(args.out) as tmp:
        shutil.copyfile(source, tmp)
    record["same_run_as"] = {"embedding": args.base, "seed": args.seed, "vectors": str(source),
                             "sha256": sha256_of(args.out)}
    write_json(_record_path(args), record)
    log.info("%s: the run of %s seed %d (%s), copied", args.out, args.base, args.seed, source)
    return 0


def _output_args(p) -> None:
    add_out_arg(p, help="output vectors (.bin word2vec binary, .txt, .npy)")
    add_record_arg(p)


def _record_path(args) -> Path:
    out = Path(args.out)
    return Path(args.record) if args.record else out.with_name(out.name.split(".")[0] + ".json")


def add_params_args(p, params_cls, exclude=()) -> None:
    """``--params`` and one override flag per field of ``params_cls`` (less ``exclude``: fields the job
    sets). The flags have no default of their own (an absent flag leaves the JSON's value or the
    dataclass's default); :func:`build_params` reads them."""
    p.add_argument("--params", default=None, metavar="JSON",
                   help="hyper-parameters as a JSON object (the sheet entry's resolved row), or @file.json; "
                        "keys left out take the defaults below")
    group = p.add_argument_group("hyper-parameters (override --params)")
    hints = typing.get_type_hints(params_cls)
    for f in dataclasses.fields(params_cls):
        if f.name in exclude:
            continue
        flag, dest, default = "--" + f.name.replace("_", "-"), f"hp_{f.name}", _field_default(f)
        if hints[f.name] is bool:
            group.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                               help=f"(default {default})")
        else:
            group.add_argument(flag, dest=dest, type=_flag_type(hints[f.name]), default=argparse.SUPPRESS,
                               metavar="V", help=f"(default {default})")
    p.set_defaults(params_exclude=tuple(exclude))


def build_params(args, params_cls, fixed: dict | None = None):
    """``params_cls`` from ``--params`` and the override flags; ``fixed``: the fields the job sets."""
    exclude = getattr(args, "params_exclude", ())
    given = _read_params(args.params)
    for f in dataclasses.fields(params_cls):
        if hasattr(args, f"hp_{f.name}"):
            given[f.name] = getattr(args, f"hp_{f.name}")
    known = [f.name for f in dataclasses.fields(params_cls) if f.name not in exclude]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise StaticvecError(f"{params_cls.__name__}: unknown hyper-parameter(s) {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
    hints = typing.get_type_hints(params_cls)
    for key, value in list(given.items()):  # JSON/YAML ints where floats are meant
        if isinstance(value, int) and not isinstance(value, bool) and _is_float(hints.get(key)):
            given[key] = float(value)
    given.update(fixed or {})
    return params_cls.from_dict(given) if hasattr(params_cls, "from_dict") else params_cls(**given)


def _read_params(text: str | None) -> dict:
    return json_or_file(text, "--params", "hyper-parameters")


def _field_default(f):
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else None


def _is_float(hint) -> bool:
    return hint is float or (typing.get_origin(hint) in (typing.Union, _UnionType)
                             and set(typing.get_args(hint)) == {float, type(None)})


_UnionType = type(int | None)


def _flag_type(hint):
    """A flag's value: none/null for a field that may be None, the text itself for a string field, else YAML."""
    types = set(typing.get_args(hint)) if typing.get_origin(hint) in (typing.Union, _UnionType) else {hint}
    nullable = type(None) in types

    def parse(text: str):
        from staticvec.yaml_files import parse_yaml

        if nullable and text.strip().lower() in ("none", "null", ""):
            return None
        if types - {type(None)} == {str}:
            return text
        try:
            return parse_yaml(text, repr(text))
        except StaticvecError as exc:  # argparse's own "invalid value" usage error, naming the flag
            raise ValueError(str(exc)) from None

    parse.__name__ = getattr(hint, "__name__", str(hint))
    return parse


# ---------------------------------------------------------------- handlers


def _glove(args) -> int:
    from staticvec.cooc.store import CoocStore
    from staticvec.embeddings import Embeddings
    from staticvec.files import write_json
    from staticvec.device import resolve_device
    from staticvec.train.glove import GloveParams, train_glove

    vocab = load_vocab_of(args)
    params = build_params(args, GloveParams)
    cfg = params.config(seed=args.seed, threads=args.threads, device=args.device)
    checkpoint = args.checkpoint or (f"{args.out}.ckpt.npz" if cfg.checkpoint_every else None)
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
        "threads": cfg.threads,
        "deterministic": params.deterministic,
        "engine": args.engine or ("numba" if resolve_device(cfg.device) == "cpu" else cfg.cuda_engine),
        "cooc": {"path": str(args.cooc), "n_entries": store.n_entries, "checksum": store.header["checksum"], "meta": store.meta},
        "vocab": {"path": str(args.vocab), "size": len(vocab), "min_count": args.min_count, "written": int(len(keep))},
        "cost_per_iteration": state.losses,
        TIMING_KEY: {"seconds": round(seconds, 2)},
    })
    if checkpoint and Path(checkpoint).exists():
        Path(checkpoint).unlink()  # the run is complete: its vectors supersede the checkpoint
    log.info("wrote %s (%d words × %d) in %.1f s", args.out, len(vocab), cfg.dim, seconds)
    return 0


def _gensim(args) -> int:
    from staticvec.files import write_json
    from staticvec.train.gensim_baselines import (
        FastTextConfig, SentenceCorpus, Word2VecConfig, train_fasttext, train_word2vec,
    )

    if not args.shards and not args.text:
        raise StaticvecError("give the training sentences with --shards and/or --text")
    vocab = load_vocab_of(args)
    corpus = SentenceCorpus(args.shards, args.text)
    fixed = {"seed": args.seed, "workers": args.threads}
    if args.method == "fasttext":
        cfg, train = build_params(args, FastTextConfig, fixed), train_fasttext
    else:
        cfg, train = build_params(args, Word2VecConfig, {**fixed, "arch": args.method}), train_word2vec
    cfg.workers = 1 if cfg.deterministic else cfg.workers  # recorded as used
    emb, record = train(corpus, vocab, cfg)
    emb.save(args.out)
    import gensim

    write_json(_record_path(args), {"method": args.method, "gensim": gensim.__version__,
                                    "threads": cfg.workers, "deterministic": cfg.deterministic,
                                    "vocab": {"path": str(args.vocab), "size": len(vocab), "min_count": args.min_count},
                                    **record})
    log.info("wrote %s (%d words × %d) in %.1f s", args.out, len(emb), emb.dim, record[TIMING_KEY]["seconds"])
    return 0


def _model2vec(args) -> int:
    from staticvec.train.model2vec import Model2VecParams, distill_teacher, versions

    params, vocab, offline = _library_job_start(args, "model2vec", Model2VecParams)
    started = time.time()
    teacher = _library_teacher(args, offline)
    loaded = time.time()
    model = distill_teacher(teacher, params, vocab.words, offline=offline)
    distilled = time.time()
    emb = _write_library_model(args, model, vocab, _teacher_record(args.teacher, teacher), str(teacher.device),
                               versions(), params, lambda outputs: {
        **outputs["head"],
        "seeded": False,  # PCA by eigendecomposition, no sampling: the same inputs give the same vectors
        **outputs["job"], **outputs["written"],
        TIMING_KEY: {"seconds_load": round(loaded - started, 2), "seconds_distill": round(distilled - loaded, 2),
                     "seconds_encode": round(outputs["seconds_encode"], 2), "seconds": round(time.time() - started, 2)},
    })
    log.info("wrote %s (%d of %d words × %d; %d tokens in %s) in %.1f s", args.out, len(emb), len(vocab), emb.dim,
             len(model.tokens), args.model_dir, time.time() - started)
    return 0


# the packages a library-backed method imports, and how to install them (pyproject.toml: installed without
# the libraries' own pins, which would downgrade transformers)
_LIBRARY_PACKAGES = {
    "model2vec": (("model2vec", "skeletoken"), "'model2vec>=0.10,<0.11' 'skeletoken>=0.6,<0.7'"),
    "tokenlearn": (("tokenlearn", "model2vec", "skeletoken", "regex"),
                   "--no-deps 'tokenlearn>=0.2.1,<0.3' and 'model2vec>=0.10,<0.11' 'skeletoken>=0.6,<0.7' regex"),
}


def _library_job_start(args, method: str, params_cls):
    """The start of a job writing a Model2Vec model of a teacher (model2vec, tokenlearn): its packages checked,
    its parameters, torch's threads, the vocabulary written over; (params, vocabulary, offline)."""
    import importlib

    import torch

    from staticvec.files import check_replaceable
    from staticvec.train.model2vec import MODEL_DIR_KIND

    if getattr(args, "model_dir", None) is not None:  # the distillation job writes no library model of its own
        check_replaceable(args.model_dir, MODEL_DIR_KIND)  # before the teacher is read, not after the fit
    modules, install = _LIBRARY_PACKAGES[method]
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError as exc:
        raise StaticvecError(f"{method} needs the packages {', '.join(modules)} ({exc}); pip install {install}") from None
    params = build_params(args, params_cls)
    torch.set_num_threads(max(1, args.threads))
    return params, load_vocab_of(args) if hasattr(args, "vocab") else None, not args.online


def _library_teacher(args, offline: bool):
    from staticvec.teacher.load import load_teacher

    return load_teacher(args.teacher, device=args.device, offline=offline, dtype="float32")


def _teacher_record(spec: str, teacher) -> dict:
    """The record's ``teacher``: the spec, its local path, and the loaded teacher's description."""
    from staticvec.teacher.load import resolve_teacher

    source = resolve_teacher(spec)
    return {"spec": spec, "path": source.path if source.local else None, **teacher.describe()}


def _write_library_model(args, model, vocab, teacher: dict, device: str, versions: dict, params, record):
    """Each vocabulary word encoded by the library's ``model`` (words it cannot encode left out), written with
    the model's directory and the training record ``record(outputs)``: ``outputs`` holds the record's shared
    parts (head: method, versions, teacher, hyperparameters; job: device, threads; written: model, vocab) and
    the encoding's seconds; ``teacher``: :func:`_teacher_record`. Returns the vectors."""
    import torch

    from staticvec.files import write_json
    from staticvec.train.model2vec import encode_words, save_model_dir

    started = time.time()
    emb, dropped = encode_words(model, vocab.words, vocab.counts)
    if len(emb) == 0:
        raise StaticvecError(f"{args.train_command}: no word of {args.vocab} could be encoded by the model of "
                             f"{args.teacher!r}")
    seconds_encode = time.time() - started
    emb.save(args.out)
    save_model_dir(model, args.model_dir)
    write_json(_record_path(args), record({
        "head": {"method": args.train_command, "versions": versions, "teacher": teacher,
                 "hyperparameters": dataclasses.asdict(params)},
        "job": {"device": device, "threads": torch.get_num_threads()},
        "written": {
            "model": {"dir": str(args.model_dir), "tokens": len(model.tokens), "dim": int(model.dim),
                      "dtype": model.embedding_dtype, "normalize": bool(model.normalize)},
            "vocab": {"path": str(args.vocab), "size": len(vocab), "min_count": args.min_count,
                      "written": len(emb), "not_encoded": len(dropped), "not_encoded_examples": dropped[:20]}},
        "seconds_encode": seconds_encode,
    }))
    return emb


def _tokenlearn_targets(args, params):
    """The texts and targets of a Tokenlearn job (the same in the distillation and in each seed's job)."""
    from staticvec.train.tokenlearn import read_targets

    texts, targets, read = read_targets(args.shards, args.features, params.targets, params.max_sentences)
    log.info("%d sentences with their %s targets (%d × %d) from %d shard(s)", len(texts), params.targets,
             *targets.shape, len(args.shards))
    return texts, targets, read


def _tokenlearn_teacher(args, offline: bool, targets):
    teacher = _library_teacher(args, offline)
    if teacher.hidden_size != targets.shape[1]:
        raise StaticvecError(f"tokenlearn: the features are {targets.shape[1]}-d but teacher {args.teacher!r} is "
                             f"{teacher.hidden_size}-d (features of another teacher)")
    return teacher


def _tokenlearn_distill(args) -> int:
    """``staticvec train tokenlearn-distill``: the seed-free start, written for every seed's job."""
    import torch

    from staticvec.files import check_replaceable
    from staticvec.train.tokenlearn import DISTILLED_KIND, TokenlearnParams, distill, save_distilled, texts_digest, versions

    params, _, offline = _library_job_start(args, "tokenlearn", TokenlearnParams)
    check_replaceable(args.out, DISTILLED_KIND)  # before the teacher is read, not after the distillation
    started = time.time()
    texts, targets, read = _tokenlearn_targets(args, params)
    teacher = _tokenlearn_teacher(args, offline, targets)
    loaded = time.time()
    model, distilled = distill(teacher, texts, targets, params, offline=offline)
    save_distilled(model, args.out, {
        "method": "tokenlearn", "step": "distillation", "versions": versions(),
        "teacher": _teacher_record(args.teacher, teacher), "distillation": params.distillation(),
        "device": str(teacher.device), "threads": torch.get_num_threads(),
        "data": read, "texts_sha256": texts_digest(texts), **distilled,
        TIMING_KEY: {**distilled[TIMING_KEY], "seconds_read": round(loaded - started, 2),
                     "seconds": round(time.time() - started, 2)},
    })
    log.info("wrote %s (%d tokens × %d, %d corpus words) in %.1f s", args.out, len(model.tokens), model.dim,
             distilled["vocabulary_words"], time.time() - started)
    return 0


def _tokenlearn(args) -> int:
    """``staticvec train tokenlearn``: one seed, from a distillation (--distilled) or distilling here (--teacher)."""
    from staticvec.device import resolve_device
    from staticvec.train.tokenlearn import (TokenlearnParams, distill, fit, library_training_settings, load_distilled,
                                            merge_steps, versions)

    if args.distilled and args.online:
        raise StaticvecError("tokenlearn: --online is for --teacher (a distilled model loads no teacher)")
    params, vocab, offline = _library_job_start(args, "tokenlearn", TokenlearnParams)
    started = time.time()
    texts, targets, read = _tokenlearn_targets(args, params)
    if args.distilled:  # the distillation's job distilled, with these threads and device
        model, record = load_distilled(args.distilled, params, texts)
        if record["teacher"]["hidden_size"] != targets.shape[1]:
            raise StaticvecError(f"tokenlearn: the features are {targets.shape[1]}-d but {args.distilled} was distilled "
                                 f"from a {record['teacher']['hidden_size']}-d teacher (features of another teacher)")
        teacher, device = record["teacher"], resolve_device(args.device)
        distilled = {"vocabulary_words": record["vocabulary_words"], "tokens": record["tokens"],
                     "distilled": str(args.distilled),
                     TIMING_KEY: {"seconds_distill": (record.get(TIMING_KEY) or {}).get("seconds_distill")}}
        loaded = time.time()
    else:
        loaded_teacher = _tokenlearn_teacher(args, offline, targets)
        teacher, device = _teacher_record(args.teacher, loaded_teacher), str(loaded_teacher.device)
        loaded = time.time()
        model, distilled = distill(loaded_teacher, texts, targets, params, offline=offline)
    model, trained = fit(model, texts, targets, params, args.seed, device)
    fitted = time.time()
    emb = _write_library_model(args, model, vocab, teacher, device, versions(), params, lambda outputs: {
        **outputs["head"],
        "library_training": library_training_settings(),
        "seed": args.seed,
        **outputs["job"],
        "data": read,
        "training": merge_steps(distilled, trained),
        **outputs["written"],
        TIMING_KEY: {"seconds_read": round(loaded - started, 2), "seconds_fit": round(fitted - loaded, 2),
                     "seconds": round(time.time() - started, 2)},
    })
    log.info("wrote %s (%d of %d words × %d; %d tokens in %s; %d epochs, %s) in %.1f s", args.out, len(emb), len(vocab),
             emb.dim, len(model.tokens), args.model_dir, trained["epochs"], trained["stopped"], time.time() - started)
    return 0


def _student(args) -> int:
    """``staticvec train <student>``: :func:`staticvec.train.api.train_student` behind its flags."""
    from staticvec.train.api import student_class, train_student

    _, _, model_cls = student_class(args.method)
    run = train_student(args.method, vocab=args.vocab, features=args.features, params=build_params(args, model_cls.params_class),
                        seed=args.seed, feature_vocab=args.feature_vocab, shards=args.shards, teacher=args.teacher,
                        online=args.online, batch_tokens=args.batch_tokens, part_sentences=args.part_sentences,
                        dtype=args.dtype, max_length=args.max_length, all_sentences=args.all_sentences,
                        device=args.device, teacher_device=args.teacher_device, threads=args.threads,
                        checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every, dev_set=args.dev_set,
                        dev_points=args.dev_points, dev_oov=args.dev_oov, progress=args.progress)
    run.save(args.out, args.record, args.model)
    log.info("%s: written to %s", args.method, args.out)
    return 0


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
