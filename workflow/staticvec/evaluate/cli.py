"""``staticvec evaluate ...``: score one embedding file.

- ``intrinsic``: similarity, analogy, SemEval-2012, categorization, neighbours
  (:mod:`staticvec.evaluate.intrinsic`), one or several protocols from one load;
- ``classify``: the X2Static sentence CNN on MR, CR, SUBJ, MPQA, TREC, SST-5
  (:mod:`staticvec.evaluate.classification`);
- ``tag``: one BiLSTM-CRF tagger run (chunk, pos, ner) on frozen static or contextual vectors, and
  ``tag-summary``: one embedding's runs, mean ± std over seeds (:mod:`staticvec.evaluate.tagging`).

Building the parser does not import torch; the handlers import the domain modules.
"""

from __future__ import annotations

import argparse
import logging

from staticvec.cli_args import (
    add_device_arg,
    add_format_arg,
    add_group,
    add_out_arg,
    add_seed_arg,
    add_threads_arg,
    json_or_file,
)
from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)


def register(subparsers) -> None:
    sub = add_group(subparsers, "evaluate", help="score an embedding: intrinsic tasks, sentence classification, tagging",
                    dest="evaluate_command")
    _register_intrinsic(sub)
    _register_classify(sub)
    _register_tag(sub)


# ---------------------------------------------------------------- intrinsic


def _register_intrinsic(sub) -> None:
    from staticvec.evaluate import analogy, categorization, relational
    from staticvec.evaluate.datasets import DATASETS
    from staticvec.evaluate.intrinsic import DEFAULT_DATA_DIRS, DEFAULT_NEIGHBOUR_WORDS
    from staticvec.evaluate.lookup import OOV_POLICIES

    p = sub.add_parser(
        "intrinsic",
        help="intrinsic evaluation (similarity, analogy, SemEval-2012, categorization, neighbours) to JSON",
        description="Evaluate a word-embedding file on the intrinsic tasks of the four papers.",
    )
    p.add_argument("vectors", nargs="+",
                   help="word2vec text (.txt/.vec[.gz]) or binary (.bin) file, or the project's .npy; several files "
                        "(the seeds of one embedding) are scored in turn by one process, with --protocol")
    add_out_arg(p, required=False, help="RESULT.json to write (atomically); or --protocol, repeated")
    p.add_argument("--protocol", nargs="+", action="append", metavar="NAME VIEW OUT",
                   help="score protocol NAME with VIEW = OOV,CASE,MAX_VOCAB (e.g. mean,lower,all or drop,lower,200000) "
                        "into OUT (one OUT per vectors file, in their order); repeat it to score several protocols "
                        "from one load of the vectors (instead of --out, --oov, --no-lowercase and --max-vocab)")
    add_format_arg(p)
    p.add_argument("--data-dir", help=f"evaluation data directory (default: first of {', '.join(DEFAULT_DATA_DIRS)})")
    p.add_argument("--oov", choices=OOV_POLICIES, default=None,
                   help="drop: leave out pairs/questions/items with a missing word (MUSE, gensim, Faruqui, GloVe); "
                        "mean: use the mean vector for a missing word (web: SemGloVe, Context-to-Vec)")
    p.add_argument("--tasks", nargs="+", default=["all"],
                   help="task names (similarity analogy relational categorization neighbours), data set names "
                        f"({' '.join(DATASETS)}) or all")
    p.add_argument("--no-lowercase", dest="lowercase", action="store_false", default=None,
                   help="keep case (default: lower-case)")
    p.add_argument("--max-vocab", type=int, help="evaluate only the first N words of the file, counted after lower-casing "
                        "(distinct lower-cased words, as MUSE; MUSE: 200000)")
    p.add_argument("--analogy-method", choices=analogy.METHODS, default="3cosadd",
                   help="analogy objective: 3CosAdd (the papers) or 3CosMul")
    p.add_argument("--relational-score", choices=relational.SCORES, default="cosine",
                   help="SemEval-2012 score: cosine (Wang et al. Eq. 17), dot (web's pair score), web (web's string "
                        "ranks: Context-to-Vec's numbers) or official (mean of per-paradigm-pair cosines); all are saved")
    p.add_argument("--semeval-split", choices=relational.SPLITS, default="all",
                   help="SemEval-2012 relations: all 79 (web), or the 69 test / 10 training ones")
    p.add_argument("--categorization-method", choices=categorization.METHODS, default="all",
                   help="categorization purity: all = best of 5 agglomerative runs and k-means (the web benchmarks'), or only those")
    add_seed_arg(p, default=0, help="seed of the categorization shuffle and k-means")
    p.add_argument("--neighbours", nargs="*", default=list(DEFAULT_NEIGHBOUR_WORDS), metavar="WORD",
                   help="words whose nearest neighbours are listed (default: light while)")
    p.add_argument("--topn", type=int, default=10, help="neighbours per word")
    add_device_arg(p, help="where analogy scoring runs")
    add_threads_arg(p, help="CPU threads (BLAS, torch, k-means); default: all")
    p.add_argument("--memory-mb", type=int, default=1024, help="memory budget of the analogy score matrices")
    p.add_argument("--items", action=argparse.BooleanOptionalAction, default=True,
                   help="keep each similarity pair's cosine and each analogy question's outcome in the result, so "
                        "that a score can be recomputed on a subset of the items (default; the scores do not change)")
    p.set_defaults(handler=_intrinsic, keep_freed_memory=True)  # similarity and analogy blocks reused (staticvec.memory)


def _intrinsic(args) -> int:
    from staticvec.evaluate.intrinsic import evaluate_to_files, parse_view

    if args.max_vocab is not None and args.max_vocab < 1:
        raise StaticvecError("--max-vocab must be a positive number of words")
    if args.protocol:
        given = [flag for flag, value in (("--out", args.out), ("--oov", args.oov), ("--no-lowercase", args.lowercase),
                                          ("--max-vocab", args.max_vocab)) if value is not None]
        if given:
            raise StaticvecError(f"--protocol sets the output and the view; drop {', '.join(given)}")
        files = len(args.vectors)
        for words in args.protocol:
            if len(words) != 2 + files:
                raise StaticvecError(f"--protocol {' '.join(words)}: expected NAME VIEW and one OUT per vectors file "
                                     f"({files} file{'s' if files > 1 else ''}), got {len(words) - 2} OUT")
        names = [words[0] for words in args.protocol]
        if len(set(names)) != len(names):
            raise StaticvecError(f"--protocol names repeat: {' '.join(names)}")
        views = {name: parse_view(view) for name, view, *_ in args.protocol}
        outs = [{words[0]: words[2 + i] for words in args.protocol} for i in range(files)]
    elif args.out is None:
        raise StaticvecError("give --out RESULT.json, or --protocol NAME VIEW OUT")
    elif len(args.vectors) > 1:
        raise StaticvecError(f"--out names one result file, but {len(args.vectors)} vector files are given: "
                             "use --protocol NAME VIEW OUT... (one OUT per file)")
    else:
        views = {None: (args.oov or "drop", True if args.lowercase is None else args.lowercase, args.max_vocab)}
        outs = [{None: args.out}]
    evaluate_to_files(
        args.vectors, views, outs, fmt=args.format, threads=args.threads,
        tasks=args.tasks,
        data_dir=args.data_dir,
        analogy_method=args.analogy_method,
        relational_score=args.relational_score,
        semeval_split=args.semeval_split,
        categorization_method=args.categorization_method,
        seed=args.seed,
        neighbour_words=args.neighbours,
        topn=args.topn,
        device=args.device,
        memory_mb=args.memory_mb,
        items=args.items,
    )
    return 0


# ---------------------------------------------------------------- classify


def _register_classify(sub) -> None:
    from staticvec.evaluate.classification_data import DATASET_NAMES as DATASETS

    p = sub.add_parser(
        "classify",
        help="score an embedding with the X2Static CNN on MR, CR, SUBJ, MPQA, TREC, SST-5",
        description="Train the X2Static sentence CNN on frozen embeddings; write test macro-F1 and "
        "accuracy (mean ± std over seeds) per data set as JSON. Defaults are the paper's protocol.",
    )
    p.add_argument("--vectors", required=True, help="embedding file (word2vec text/binary, .npy + .vocab)")
    add_format_arg(p, help="embedding format (default: from the name)")
    p.add_argument("--data-dir", required=True, help="directory with the data files (rt-polarity.*, custrev.*, ...)")
    p.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS), metavar="NAME",
                   help=f"data sets (default all: {' '.join(DATASETS)})")
    p.add_argument("--seeds", nargs="+", type=int, default=[1], help="one run per seed (default 1)")
    add_out_arg(p, help="result JSON")
    add_device_arg(p, help="where the CNN trains (auto: CUDA when available)")
    add_threads_arg(p)
    p.add_argument("--checkpoint", help="finished runs are kept here to resume an interrupted job (default OUT.partial.jsonl)")
    g = p.add_argument_group("protocol (defaults: X2Static)")
    g.add_argument("--filters", type=int, default=100, help="convolution filters (X2Static: 100)")
    g.add_argument("--kernel-size", type=int, default=3, help="convolution width in tokens (X2Static: 3)")
    g.add_argument("--dropout", type=float, default=0.5, help="dropout before the output layer (X2Static: 0.5)")
    g.add_argument("--batch-size", type=int, default=50, help="sentences per step (X2Static: 50)")
    g.add_argument("--epochs", type=int, nargs="+", default=list(range(8, 17)), help="epoch grid (default 8 … 16)")
    g.add_argument("--learning-rates", type=float, nargs="+", default=[1e-4, 3e-4, 1e-3],
                   help="Adam learning-rate grid (X2Static: 1e-4 3e-4 1e-3)")
    g.add_argument("--select-by", choices=("macro_f1", "accuracy"), default="macro_f1", help="validation metric choosing the grid cell")
    g.add_argument("--refit", action=argparse.BooleanOptionalAction, default=True,
                   help="retrain on train+validation with the chosen cell (paper)")
    g.add_argument("--max-tokens", type=int, default=64, help="sentences are cut to this many tokens")
    g.add_argument("--tokenization", choices=("split_clitics", "whitespace"), default="split_clitics",
                   help="split_clitics: don't -> do n't (the corpus tokenizer's convention); whitespace: as the files are")
    g.add_argument("--trec-labels", choices=("coarse", "fine"), default="coarse", help="TREC: the 6 coarse or the 50 fine question classes")
    g.add_argument("--split", type=float, nargs=3, default=[0.6, 0.2, 0.2], metavar=("TRAIN", "VALID", "TEST"),
                   help="where no split is given")
    g.add_argument("--holdout-fraction", type=float, default=0.1, help="validation share of train where only train/test is given (TREC)")
    p.set_defaults(handler=_classify)


def _classify(args) -> int:
    import torch

    from staticvec.evaluate.classification import ClassifierSettings, classify_to_file
    from staticvec.dag.arguments import SETTING_FLAGS

    if args.threads:
        torch.set_num_threads(args.threads)
    settings = ClassifierSettings(**{key: getattr(args, key) for key in SETTING_FLAGS}, refit=args.refit)
    result = classify_to_file(args.vectors, args.out, args.data_dir, args.datasets, args.seeds, settings, args.device,
                              fmt=args.format, checkpoint=args.checkpoint)
    for name, r in result["datasets"].items():
        print(f"{name:5s} macro-F1 {_fmt(r['macro_f1'])}  accuracy {_fmt(r['accuracy'])}  OOV tokens {100 * r['oov']['token_rate']:.1f}%")
    print(f"average macro-F1 {100 * result['average']['macro_f1']:.1f}  accuracy {100 * result['average']['accuracy']:.1f}")
    return 0


def _fmt(stat: dict) -> str:
    std = "" if stat["std"] is None else f" ± {100 * stat['std']:.1f}"
    return f"{100 * stat['mean']:.1f}{std}"


# ---------------------------------------------------------------- tag, tag-summary


def _register_tag(sub) -> None:
    p = sub.add_parser(
        "tag",
        help="extrinsic evaluation: train a BiLSTM-CRF tagger on frozen embeddings (chunk, pos, ner)",
        description="Train one BiLSTM-CRF tagger with the given frozen input vectors on one task and seed, "
        "with early stopping on dev; write the dev and test scores, the dev curve and the data used as JSON.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--vectors", help="static embedding file (any format staticvec.embeddings reads)")
    source.add_argument("--teacher", help="contextual baseline instead: a teacher spec (minilm, a model directory, a hub "
                        "name in the local cache); its frozen per-token vectors are the input")
    add_format_arg(p, flag="--vectors-format", help="embedding file format (default: from the file name)")
    p.add_argument("--layer", type=int, default=-1, help="teacher hidden layer for --teacher (default: last)")
    p.add_argument("--online", action="store_true", help="--teacher: allow downloading it (default: offline)")
    p.add_argument("--task", required=True, choices=["chunk", "pos", "ner"], help="sequence-labelling task")
    p.add_argument("--data-dir", default=None,
                   help="the task's data directory; omitted (or empty) for NER: records 'not run: data not supplied'")
    p.add_argument("--data-format", default="auto", choices=["auto", "conll2000", "ud", "ptb", "conll2003", "ontonotes"],
                   help="reader of --data-dir (auto: from the files found)")
    p.add_argument("--dev-fraction", type=float, default=0.1, help="CoNLL-2000: share of train held out as dev")
    p.add_argument("--dev-split-seed", type=int, default=2000, help="CoNLL-2000: seed of the dev hold-out (fixed across runs)")
    add_seed_arg(p, default=1, help="seed of the tagger's initialisation, dropout and batch order")
    p.add_argument("--hparams", default=None,
                   help="tagger settings: a JSON object or a .json/.yaml file (keys of TaggerConfig; the config's tagging.tagger)")
    p.add_argument("--name", default=None, help="embedding name recorded in the result (default: the file's stem)")
    add_device_arg(p, help="where the tagger trains (auto: CUDA when available)")
    add_threads_arg(p)
    add_out_arg(p, help="result JSON")
    p.set_defaults(handler=_tag, keep_freed_memory=True)  # the contextual row runs the teacher (staticvec.memory)

    s = sub.add_parser("tag-summary", help="aggregate one embedding's tagger results: mean ± std per task over seeds")
    s.add_argument("results", nargs="+", help="result JSON files of 'staticvec evaluate tag' (one embedding; any tasks and seeds)")
    add_out_arg(s, help="summary JSON: results.<task> as the paper-table builder reads them")
    s.add_argument("--csv", default=None, help="also a long CSV table (scores in %%)")
    s.set_defaults(handler=_tag_summary)


def _tag(args) -> int:
    import torch

    from staticvec.evaluate.tagging.run import tag_to_file
    from staticvec.evaluate.tagging.train import TaggerConfig

    if args.threads:
        torch.set_num_threads(args.threads)
    config = TaggerConfig.from_dict(json_or_file(args.hparams, "--hparams", "tagger settings"))
    tag_to_file(args.out, args.task, config, vectors=args.vectors, vectors_format=args.vectors_format,
                teacher=args.teacher, layer=args.layer, online=args.online, data_dir=args.data_dir,
                data_format=args.data_format, dev_fraction=args.dev_fraction, dev_split_seed=args.dev_split_seed,
                seed=args.seed, name=args.name, device=args.device)
    return 0


def _tag_summary(args) -> int:
    from staticvec.evaluate.tagging.run import summarize_files

    summarize_files(args.results, args.out, args.csv)
    return 0

