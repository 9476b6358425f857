"""Aggregate tagger runs over seeds: mean ± sample standard deviation per embedding × task.

One embedding's summary file (``{results_dir}/eval/{emb}/tagging.json``) has the shape the
table builder reads (``staticvec.report.tables``): ``results.<task>`` holds ``score`` (the
test mean), ``test`` and ``dev`` (``score``, ``sd``, per-seed ``values``), the data ``source``,
and ``found``/``total``: test tokens with an embedding vector / all test tokens. Tasks are
keyed as the tables sheet names them (``chunking``, ``pos``, ``ner``); a task without data
has ``score: null`` and its ``status``.
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
        summary[TIMING_KEY] = {"train_seconds": [(r.get(TIMING_KEY) or {}).get("train_seconds") for r in done]}
        coverage = (done[0].get("inputs") or {}).get("coverage", {}).get("test")
        if coverage:
            summary["found"], summary["total"] = coverage["found_tokens"], coverage["tokens"]
        summaries.append(summary)
    return summaries


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
