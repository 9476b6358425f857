"""Aggregate tagger runs over seeds: mean ± sample standard deviation per embedding × task.

One embedding's summary file (``{results_dir}/eval/{emb}/tagging.json``) has the shape the
table builder reads (``staticvec.report.tables``): ``results.<task>`` holds ``score`` (the
test mean), ``test`` and ``dev`` (``score``, ``sd``, per-seed ``values``), the data ``source``,
and ``found``/``total``: test tokens with an embedding vector / all test tokens, and
``convergence``: per seed the development curve (dev score per epoch), the epoch chosen on it and
why training ended (:class:`~staticvec.evaluate.tagging.train.EarlyStopping`), with ``converged``
true when every seed stopped on patience before the epoch cap. Tasks are keyed as the tables sheet
names them (``chunking``, ``pos``, ``ner``); a task without data has ``score: null`` and its ``status``.

Across rows, :func:`contextual_shortfall` gives the static rows whose test mean is above the frozen
contextual row's (the papers' BERT-base row, above every static row in their Table 3): where there
is one, a tagging verdict that reads the task says so in its cell (:func:`contextual_note`).
"""

from __future__ import annotations

import csv
from collections import defaultdict

from staticvec.errors import StaticvecError
from staticvec.files import TIMING_KEY
from staticvec.stats import describe

NOT_RUN = "not run: data not supplied"
RESULT_KEYS = {"chunk": "chunking", "pos": "pos", "ner": "ner"}  # task -> key of the tables sheet


def mean_std(values: list[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (n − 1; :func:`staticvec.stats.describe`); std is None for
    a single value."""
    d = describe(values)
    return d.mean, d.sd


def summarize(results: list[dict]) -> list[dict]:
    """One summary per (embedding, task) of the given per-seed result records, in first-seen order."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for result in results:
        groups[(result["embedding"], result["task"])].append(result)
    summaries = []
    for (embedding, task), runs in groups.items():
        done = [r for r in runs if r.get("status") == "ok"]
        if not done:
            status = runs[0].get("status", NOT_RUN)
            summaries.append({"embedding": embedding, "task": task, "status": status, "source": runs[0].get("source")})
            continue
        if len(done) != len(runs):
            raise StaticvecError(f"{embedding} / {task}: some seeds ran and some did not ({[r.get('status') for r in runs]})")
        sources = sorted({r["source"] for r in done})
        if len(sources) != 1:
            raise StaticvecError(f"{embedding} / {task}: runs used different data ({', '.join(sources)}); summarise them apart")
        seeds = [r["seed"] for r in done]
        if len(set(seeds)) != len(seeds):
            raise StaticvecError(f"{embedding} / {task}: seed(s) given twice: {sorted(seeds)}")
        summary = {"embedding": embedding, "task": task, "status": "ok", "source": sources[0], "metric": done[0]["metric"], "seeds": seeds}
        for split in ("test", "dev"):
            values = [r[split] for r in done]
            mean, std = mean_std(values)
            summary[split] = {"mean": mean, "std": std, "values": values}
        summary["epochs"] = [r["best_epoch"] for r in done]
        summary["convergence"] = [seed_convergence(r) for r in done]
        summary[TIMING_KEY] = {"train_seconds": [(r.get(TIMING_KEY) or {}).get("train_seconds") for r in done]}
        coverage = (done[0].get("inputs") or {}).get("coverage", {}).get("test")
        if coverage:
            summary["found"], summary["total"] = coverage["found_tokens"], coverage["tokens"]
        summaries.append(summary)
    return summaries


def seed_convergence(record: dict) -> dict:
    """One seed's development curve and chosen epoch, from a ``staticvec evaluate tag`` record. Records
    made before the convergence field (max_epochs unknown) count as not shown to have converged."""
    curve = record.get("dev_curve") or []
    convergence = record.get("convergence") or {}
    return {"seed": record["seed"], "best_epoch": record["best_epoch"], "epochs_run": record.get("epochs_run", len(curve)),
            "stopped_by": convergence.get("stopped_by"), "converged": bool(convergence.get("converged")),
            "patience": convergence.get("patience"), "max_epochs": convergence.get("max_epochs"),
            "dev_curve": [p["dev_score"] for p in curve]}


def contextual_shortfall(tagging: dict, contextual_id: str, task_key: str, rows=None) -> dict | None:
    """Where the frozen contextual row (``contextual_id``) scores below a static row on ``task_key``
    (``chunking``, ``pos``, ``ner``): ``{"task", "contextual": {row, score, converged}, "above": [{row,
    score, converged}, ...]}`` with the static rows whose test mean is higher (scores as fractions,
    best first), or None when none is (or either side has no result). ``tagging``: {row id: its
    :func:`tagging_results` file}; ``rows``: the static rows to compare (default every other row)."""
    def entry(row):
        node = ((tagging.get(row) or {}).get("results") or {}).get(task_key) or {}
        if node.get("score") is None:
            return None
        return {"row": row, "score": node["score"], "converged": bool((node.get("convergence") or {}).get("converged"))}

    contextual = entry(contextual_id)
    if contextual is None:
        return None
    others = [e for e in (entry(r) for r in (rows if rows is not None else tagging) if r != contextual_id) if e]
    above = sorted((e for e in others if e["score"] > contextual["score"]), key=lambda e: -e["score"])
    return {"task": task_key, "contextual": contextual, "above": above} if above else None


def contextual_note(shortfall: dict | None, scale: float = 100.0) -> str | None:
    """The sentence a tagging verdict's cell carries when the contextual row is below a static row."""
    if not shortfall:
        return None
    c = shortfall["contextual"]
    above = ", ".join(f"{e['row']} {scale * e['score']:.1f}" for e in shortfall["above"])
    state = "converged on dev" if c["converged"] and all(e["converged"] for e in shortfall["above"]) else \
        "not shown to have converged on dev"
    return (f"the frozen contextual row ({c['row']}, {scale * c['score']:.1f}) is below {above} on {shortfall['task']} "
            f"(the papers: above every static row; tagger {state}): read this verdict as about the tagger as much as "
            "the embeddings")


def tagging_caveats(tagging: dict, contextual_id: str | None, rows, task_keys, scale: float = 100.0) -> list[str]:
    """What a tagging verdict's cell must say about the tagger, for a claim over ``rows`` (the static rows it
    reads; the contextual row is compared with them whether or not the claim names it) on ``task_keys``: one
    :func:`contextual_note` per task where the frozen contextual row is below one of them, and the rows whose
    tagger is not shown to have converged on dev (``convergence.converged`` false on a seed)."""
    notes, unconverged = [], []
    static = [r for r in dict.fromkeys(rows) if r != contextual_id]
    for task in dict.fromkeys(task_keys):
        if contextual_id:
            note = contextual_note(contextual_shortfall(tagging, contextual_id, task, rows=static), scale)
            if note:
                notes.append(note)
        for row in [*static, *([contextual_id] if contextual_id else [])]:
            node = ((tagging.get(row) or {}).get("results") or {}).get(task) or {}
            if node.get("score") is not None and not (node.get("convergence") or {}).get("converged"):
                unconverged.append(f"{row} ({task})")
    if unconverged:
        notes.append("tagger not shown to have converged on dev (epoch cap reached, or no record): "
                     + ", ".join(dict.fromkeys(unconverged)))
    return notes


def tagging_results(summaries: list[dict]) -> dict:
    """One embedding's summary file (module doc) from its per-task summaries."""
    embeddings = sorted({s["embedding"] for s in summaries})
    if len(embeddings) != 1:
        raise StaticvecError(f"a tagging summary file is for one embedding; got runs of {', '.join(embeddings)}")
    results = {}
    for s in summaries:
        key = RESULT_KEYS.get(s["task"], s["task"])
        if s["status"] != "ok":
            results[key] = {"score": None, "status": s["status"], "source": s.get("source")}
            continue
        node = {"score": s["test"]["mean"], "sd": s["test"]["std"], "status": "ok", "metric": s["metric"], "source": s["source"],
                "runs": len(s["seeds"]), "seeds": s["seeds"]}
        for split in ("test", "dev"):
            node[split] = {"score": s[split]["mean"], "sd": s[split]["std"], "values": s[split]["values"]}
        if "found" in s:
            node["found"], node["total"] = s["found"], s["total"]
        node["best_epochs"], node[TIMING_KEY] = s["epochs"], s[TIMING_KEY]
        runs = s.get("convergence") or []
        node["convergence"] = {"converged": bool(runs) and all(r["converged"] for r in runs), "seeds": runs}
        results[key] = node
    return {"embedding": embeddings[0], "kind": "tagging", "results": results, "summaries": summaries}


def write_csv(summaries: list[dict], path) -> None:
    """Long table: embedding, task, source, metric, test mean/std (in %), dev mean/std, seeds, status."""
    from staticvec.files import atomic_open

    fields = ["embedding", "task", "source", "metric", "test_mean", "test_std", "dev_mean", "dev_std", "n_seeds", "status"]
    with atomic_open(path, "wt") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for s in summaries:
            row = {"embedding": s["embedding"], "task": s["task"], "source": s.get("source") or "", "status": s["status"]}
            if s["status"] == "ok":
                pct = lambda x: "" if x is None else f"{100 * x:.2f}"  # noqa: E731 - papers report percentages
                row.update(metric=s["metric"], test_mean=pct(s["test"]["mean"]), test_std=pct(s["test"]["std"]),
                           dev_mean=pct(s["dev"]["mean"]), dev_std=pct(s["dev"]["std"]), n_seeds=len(s["seeds"]))
            writer.writerow(row)
