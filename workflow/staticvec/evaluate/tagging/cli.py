"""``staticvec tag`` (one tagger run: embedding × task × seed → JSON) and ``staticvec tag-summary``."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "tag",
        help="extrinsic evaluation: train a BiLSTM-CRF tagger on frozen embeddings (chunk, pos, ner)",
        description="Train one BiLSTM-CRF tagger with the given frozen input vectors on one task and seed, "
        "with early stopping on dev; write the dev and test scores, the dev curve and the data used as JSON.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--vectors", help="static embedding file (any format staticvec.embeddings reads)")
    source.add_argument("--teacher", help="contextual baseline instead: a teacher spec (minilm, a model directory, a hub "
                        "name in the local cache); its frozen per-token vectors are the input")
    p.add_argument("--vectors-format", default=None, choices=["word2vec", "glove", "binary", "npy"],
                   help="embedding file format (default: from the file name)")
    p.add_argument("--layer", type=int, default=-1, help="teacher hidden layer for --teacher (default: last)")
    p.add_argument("--online", action="store_true", help="--teacher: allow downloading it (default: offline)")
    p.add_argument("--task", required=True, choices=["chunk", "pos", "ner"], help="sequence-labelling task")
    p.add_argument("--data-dir", default=None,
                   help="the task's data directory; omitted (or empty) for NER: records 'not run: data not supplied'")
    p.add_argument("--data-format", default="auto", choices=["auto", "conll2000", "ud", "ptb", "conll2003", "ontonotes"],
                   help="reader of --data-dir (auto: from the files found)")
    p.add_argument("--dev-fraction", type=float, default=0.1, help="CoNLL-2000: share of train held out as dev")
    p.add_argument("--dev-split-seed", type=int, default=2000, help="CoNLL-2000: seed of the dev hold-out (fixed across runs)")
    p.add_argument("--seed", type=int, default=1, help="seed of the tagger's initialisation, dropout and batch order")
    p.add_argument("--hparams", default=None,
                   help="tagger settings: a JSON object or a .json/.yaml file (keys of TaggerConfig; the config's tagging.tagger)")
    p.add_argument("--name", default=None, help="embedding name recorded in the result (default: the file's stem)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="where the tagger trains (auto: CUDA when available)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--out", required=True, help="result JSON")
    p.set_defaults(handler=_tag)

    s = subparsers.add_parser("tag-summary", help="aggregate one embedding's tagger results: mean ± std per task over seeds")
    s.add_argument("results", nargs="+", help="result JSON files of 'staticvec tag' (one embedding; any tasks and seeds)")
    s.add_argument("--out", required=True, help="summary JSON: results.<task> as the paper-table builder reads them")
    s.add_argument("--csv", default=None, help="also a long CSV table (scores in %%)")
    s.set_defaults(handler=_summary)


def parse_hparams(text: str | None) -> dict:
    """The tagger settings from a JSON object string or a JSON/YAML file."""
    if not text:
        return {}
    if text.lstrip().startswith("{"):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StaticvecError(f"--hparams is not a valid JSON object ({exc.msg})") from None
    else:
        path = Path(text)
        if not path.exists():
            raise StaticvecError(f"--hparams {text}: file not found")
        if path.suffix in (".yaml", ".yml"):
            from staticvec.config import load_yaml

            values = load_yaml(path)
        else:
            from staticvec.files import read_json

            values = read_json(path)
    if not isinstance(values, dict):
        raise StaticvecError("--hparams must be a mapping of tagger settings")
    return values


def _tag(args) -> int:
    import torch

    from staticvec.evaluate.tagging.data import load_task
    from staticvec.evaluate.tagging.summary import NOT_RUN
    from staticvec.evaluate.tagging.train import TaggerConfig, train_tagger
    from staticvec.files import write_json

    if args.threads:
        torch.set_num_threads(args.threads)
    config = TaggerConfig.from_dict(parse_hparams(args.hparams))
    input_path = args.vectors or args.teacher
    name = args.name or (Path(args.vectors).name.split(".")[0] if args.vectors else f"contextual-{Path(args.teacher).name}")
    record = {"embedding": name, "task": args.task, "seed": args.seed, "input": input_path}
    if not args.data_dir:
        if args.task != "ner":
            raise StaticvecError(f"task {args.task!r} needs --data-dir")
        write_json(args.out, {**record, "status": NOT_RUN, "source": None, "metric": "f1"})
        log.info("NER not run: no CoNLL-2003 / OntoNotes data supplied")
        return 0
    data = load_task(args.task, args.data_dir, args.data_format, args.dev_fraction, args.dev_split_seed)
    log.info("%s: %s", data.source, data.describe()["sentences"])
    if args.vectors:
        from staticvec.embeddings import Embeddings
        from staticvec.evaluate.tagging.inputs import StaticInputs

        inputs = StaticInputs(Embeddings.load(args.vectors, fmt=args.vectors_format), data, config.lowercase, config.normalize)
        log.info("embedding coverage of test tokens: %.1f%%", 100 * inputs.coverage["test"]["token_coverage"])
    else:
        from staticvec.evaluate.tagging.contextual import contextual_inputs

        inputs = contextual_inputs(args.teacher, data, layer=args.layer, device=args.device, offline=not args.online)
    result = train_tagger(data, inputs, config, seed=args.seed, device=args.device)
    log.info("%s %s: dev %.4f, test %.4f (best epoch %d of %d)", args.task, data.metric, result["dev"], result["test"],
             result["best_epoch"], result["epochs_run"])
    write_json(args.out, {
        **record,
        "status": result.pop("status"),
        "source": data.source,
        "metric": result.pop("metric"),
        "test": result.pop("test"),
        "dev": result.pop("dev"),
        "data": data.describe(),
        "inputs": inputs.describe(),
        "hparams": dataclasses.asdict(config),
        **result,
        "torch": torch.__version__,
    })
    return 0


def _summary(args) -> int:
    from staticvec.evaluate.tagging.summary import summarize, tagging_results, write_csv
    from staticvec.files import read_json, write_json

    results = []
    for path in args.results:
        record = read_json(path)
        for key in ("embedding", "task", "status"):
            if key not in record:
                raise StaticvecError(f"{path}: not a 'staticvec tag' result (no {key!r})")
        results.append(record)
    summaries = summarize(results)
    write_json(args.out, tagging_results(summaries))
    if args.csv:
        write_csv(summaries, args.csv)
    for s in summaries:
        if s["status"] == "ok":
            std = s["test"]["std"]
            log.info("%s / %s (%s): test %s %.2f%s over %d seed(s)", s["embedding"], s["task"], s["source"], s["metric"],
                     100 * s["test"]["mean"], "" if std is None else f" ± {100 * std:.2f}", len(s["seeds"]))
        else:
            log.info("%s / %s: %s", s["embedding"], s["task"], s["status"])
    return 0

