"""One tagger run (embedding × task × seed → result JSON) and one embedding's summary over runs:
what ``staticvec evaluate tag`` and ``staticvec evaluate tag-summary`` do."""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path

from staticvec.errors import StaticvecError

log = logging.getLogger(__name__)


def tag_to_file(
    out: str | os.PathLike,
    task: str,
    config,
    *,
    vectors: str | None = None,
    vectors_format: str | None = None,
    teacher: str | None = None,
    layer: int = -1,
    online: bool = False,
    data_dir: str | None = None,
    data_format: str = "auto",
    dev_fraction: float = 0.1,
    dev_split_seed: int = 2000,
    seed: int = 1,
    name: str | None = None,
    device: str = "auto",
) -> dict:
    """Train one BiLSTM-CRF tagger (:class:`~staticvec.evaluate.tagging.train.TaggerConfig` ``config``)
    on ``task`` with frozen inputs: a static embedding file (``vectors``) or a teacher's contextual
    vectors (``teacher``, hidden layer ``layer``); write the dev and test scores, the dev curve and
    the data used to ``out``. Without ``data_dir`` (NER only) the record says the task was not run."""
    import torch

    from staticvec.evaluate.tagging.data import load_task
    from staticvec.evaluate.tagging.summary import NOT_RUN
    from staticvec.evaluate.tagging.train import train_tagger
    from staticvec.files import write_json

    input_path = vectors or teacher
    name = name or (Path(vectors).name.split(".")[0] if vectors else f"contextual-{Path(teacher).name}")
    record = {"embedding": name, "task": task, "seed": seed, "input": input_path}
    if not data_dir:
        if task != "ner":
            raise StaticvecError(f"task {task!r} needs --data-dir")
        record = {**record, "status": NOT_RUN, "source": None, "metric": "f1"}
        write_json(out, record)
        log.info("NER not run: no CoNLL-2003 / OntoNotes data supplied")
        return record
    data = load_task(task, data_dir, data_format, dev_fraction, dev_split_seed)
    log.info("%s: %s", data.source, data.describe()["sentences"])
    if vectors:
        from staticvec.embeddings import Embeddings
        from staticvec.evaluate.tagging.inputs import StaticInputs

        inputs = StaticInputs(Embeddings.load(vectors, fmt=vectors_format), data, config.lowercase, config.normalize)
        log.info("embedding coverage of test tokens: %.1f%%", 100 * inputs.coverage["test"]["token_coverage"])
    else:
        from staticvec.evaluate.tagging.contextual import contextual_inputs

        inputs = contextual_inputs(teacher, data, layer=layer, device=device, offline=not online,
                                   max_train_sentences=config.max_train_sentences)
    result = train_tagger(data, inputs, config, seed=seed, device=device)
    log.info("%s %s: dev %.4f, test %.4f (best epoch %d of %d)", task, data.metric, result["dev"], result["test"],
             result["best_epoch"], result["epochs_run"])
    record = {
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
    }
    write_json(out, record)
    return record


def summarize_files(paths, out: str | os.PathLike, csv: str | os.PathLike | None = None) -> list[dict]:
    """Aggregate one embedding's tagger results (``tag_to_file`` outputs): mean ± std per task over
    seeds, written to ``out`` as ``results.<task>`` (the paper-table builder's shape), and to ``csv``."""
    from staticvec.evaluate.tagging.summary import summarize, tagging_results, write_csv
    from staticvec.files import read_json, write_json

    results = []
    for path in paths:
        record = read_json(path)
        for key in ("embedding", "task", "status"):
            if key not in record:
                raise StaticvecError(f"{path}: not a 'staticvec evaluate tag' result (no {key!r})")
        results.append(record)
    summaries = summarize(results)
    write_json(out, tagging_results(summaries))
    if csv:
        write_csv(summaries, csv)
    for s in summaries:
        if s["status"] == "ok":
            std = s["test"]["std"]
            log.info("%s / %s (%s): test %s %.2f%s over %d seed(s)", s["embedding"], s["task"], s["source"], s["metric"],
                     100 * s["test"]["mean"], "" if std is None else f" ± {100 * std:.2f}", len(s["seeds"]))
        else:
            log.info("%s / %s: %s", s["embedding"], s["task"], s["status"])
    return summaries
