"""The committed reference runs (``results/reference/tour-1m/``, ``claims-10m/``): per-stage wall times from Snakemake's
benchmark files, and the copy of a finished run's tables, figures and manifests.

A stage is the first directory under ``<run>/benchmarks/`` (corpus, teacher, cooc, train, post, eval,
...); a job's time is the ``s`` column of its benchmark file (wall seconds of the job's command).
Summed per stage this is the *work* of the stage; with ``--cores N`` jobs overlap, so the run's wall
time (first job start to last job end, from the benchmark files' modification times) is given too.

Per rule, the same sums and the job time per million corpus tokens (so the cost of another corpus
size can be predicted): a benchmark file is attributed to its job's rule through Snakemake's job
records (``.snakemake/metadata``: each output's rule and log), as every rule here writes its log and
its benchmark under the same relative name (``logs/X.log`` ↔ ``benchmarks/X.tsv``).

Beside the tables, what a reader needs to re-derive a verdict without the run (small files, written
from the run when publishing): ``tables/claims_seeds.csv``, the per-seed value of every row of every
compared part (:func:`claims_seed_rows`, from ``claims.json``); ``tables/tagging_dev_curves.csv`` and
``tables/tagging_convergence.md``, each tagger's development curve and the epoch chosen on it
(:func:`tagging_convergence_rows`, from ``eval/*/tagging.json``); and each fitted MLM head's record
(``teacher/*/mlm_head.json``: its held-out top-1/top-10 against the unigram baseline); and
``tables/claims_items.json.gz``, the per-item record of every (row, data set, seed) an intrinsic claim
compares (:func:`claims_item_records`: each pair's cosine beside the gold scores, each analogy
question's outcome), from which a claim's score on its common items, or a bootstrap over items,
is recomputed (``staticvec.evaluate.items``). At 10M tokens that is about 1.7M item values (341
row-set pairs x 3 seeds; Google's questions a third of them), a few MB compressed.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections import defaultdict
from pathlib import Path

from staticvec.errors import InputFileError
from staticvec.files import atomic_open, atomic_path, read_json, write_json
from staticvec.report.markdown import hms as _hms

# what a reader of a committed reference run needs; big artefacts (vectors, features, stores) never go there
PUBLISHED = ("tables/**/*.md", "tables/**/*.csv", "tables/**/*.html", "tables/claims.json", "figures/**/*.pdf",
             "figures/**/*.png", "figures/**/*.manifest.json", "manifest.json", "corpus/manifest.json", "segments.tsv",
             "teacher/*/mlm_head.json")
CLAIMS_SEEDS = "tables/claims_seeds.csv"
CLAIMS_SEEDS_FIELDS = ("claim", "part", "comparison", "row", "weight", "set", "metric", "seed", "value")
DEV_CURVES = "tables/tagging_dev_curves.csv"
DEV_CURVES_FIELDS = ("row", "task", "seed", "epoch", "dev_score", "chosen")
CONVERGENCE_MD = "tables/tagging_convergence.md"
CLAIMS_ITEMS = "tables/claims_items.json.gz"
COSINE_DIGITS = 7  # significant digits kept of a cosine: float32's precision, so the ranks are the stored ones


# How a rule's work grows with the corpus (measured at 1M and 10M tokens: benchmarks/README.md, and
# projected by benchmarks/scale_projection.py). Every other rule (evaluation, extrinsic tasks,
# post-processing, tables, figures, downloads) costs the same at any corpus size.
PER_SHARD_RULES = frozenset({"teacher_features", "cooc_window_shard", "semglove_cooc_shard"})  # more shards
PER_INPUT_RULES = frozenset({"tokenize", "extract_dump"})  # one job per corpus input file: more files
WHOLE_CORPUS_RULES = frozenset({  # jobs reading the whole corpus (or a fraction): longer jobs
    "prepare_corpus", "vocabulary", "cooc_window_merge", "semglove_merge_pieces", "semglove_words",
    "semglove_merge_attention", "semglove_merge_attention_fraction", "semglove_restrict", "train_glove",
    "train_gensim_baseline", "train_student", "train_bert_sg", "train_tokenlearn", "teacher_ase", "same_run"})


def grows_with_corpus(rule: str) -> bool:
    return rule in PER_SHARD_RULES or rule in PER_INPUT_RULES or rule in WHOLE_CORPUS_RULES


def read_benchmark(path: Path) -> dict:
    """One Snakemake benchmark file (a TSV header + one row per repeat); the first repeat."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows or "s" not in rows[0]:
        raise InputFileError(path, "not a Snakemake benchmark file (no 's' column)")
    row = rows[0]
    return {"s": float(row["s"]), "cpu_time": _float(row.get("cpu_time")), "max_rss": _float(row.get("max_rss"))}


def _float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def stage_timings(benchmarks: str | Path) -> dict:
    """Per stage: jobs, summed wall and CPU seconds, the longest job, the largest peak RSS."""
    root = Path(benchmarks)
    files = sorted(root.rglob("*.tsv"))
    if not files:
        raise InputFileError(root, "no benchmark files (run the workflow first)")
    stages: dict[str, dict] = defaultdict(lambda: {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0,
                                                   "longest_job_s": 0.0, "longest_job": None, "max_rss_mb": 0.0})
    ends, starts = [], []
    for path in files:
        bench = read_benchmark(path)
        rel = path.relative_to(root)
        stage = rel.parts[0] if len(rel.parts) > 1 else "other"
        entry = stages[stage]
        entry["jobs"] += 1
        entry["wall_s"] += bench["s"]
        entry["cpu_s"] += bench["cpu_time"] or 0.0
        entry["max_rss_mb"] = max(entry["max_rss_mb"], bench["max_rss"] or 0.0)
        if bench["s"] >= entry["longest_job_s"]:
            entry["longest_job_s"], entry["longest_job"] = bench["s"], str(rel.with_suffix(""))
        end = path.stat().st_mtime
        ends.append(end)
        starts.append(end - bench["s"])
    out = {k: {**v, "wall_s": round(v["wall_s"], 1), "cpu_s": round(v["cpu_s"], 1)} for k, v in sorted(stages.items())}
    return {"stages": out,
            "jobs": sum(v["jobs"] for v in out.values()),
            "work_s": round(sum(v["wall_s"] for v in out.values()), 1),
            "run_wall_s": round(max(ends) - min(starts), 1)}


def rules_of_benchmarks(metadata_dir: str | Path, results: str | Path) -> dict[str, str]:
    """{benchmark name relative to ``<results>/benchmarks`` without suffix: rule} from Snakemake's job
    records (one JSON per output file: its rule and log files)."""
    root, logs = Path(metadata_dir), (Path(results) / "logs").resolve()  # records: relative to the working dir
    rules: dict[str, str] = {}
    if not root.is_dir():
        return rules
    for record in root.iterdir():
        try:
            meta = json.loads(record.read_text())
        except (OSError, ValueError):
            continue  # a record being written or from another Snakemake version: that job stays unattributed
        for log in meta.get("log") or []:
            log = Path(log).resolve()
            try:
                rel = log.relative_to(logs)
            except ValueError:
                continue
            rules[str(rel.with_suffix(""))] = meta.get("rule", "?")
    return rules


def rule_timings(benchmarks: str | Path, rules: dict[str, str], corpus_tokens: int | None) -> dict:
    """Per rule: jobs, summed job (wall) and CPU seconds, the largest peak RSS, and for a rule whose work
    grows with the corpus (:func:`grows_with_corpus`) job seconds per million corpus tokens (None for the
    others: their cost does not depend on the corpus size). Benchmarks of no known rule count under
    ``(stage)/?``."""
    root = Path(benchmarks)
    out: dict[str, dict] = defaultdict(lambda: {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0, "max_rss_mb": 0.0})
    for path in sorted(root.rglob("*.tsv")):
        bench = read_benchmark(path)
        rel = str(path.relative_to(root).with_suffix(""))
        rule = rules.get(rel) or f"{Path(rel).parts[0]}/?"
        entry = out[rule]
        entry["jobs"] += 1
        entry["wall_s"] += bench["s"]
        entry["cpu_s"] += bench["cpu_time"] or 0.0
        entry["max_rss_mb"] = max(entry["max_rss_mb"], bench["max_rss"] or 0.0)
    per_million = (1e6 / corpus_tokens) if corpus_tokens else None
    return {rule: {**v, "wall_s": round(v["wall_s"], 1), "cpu_s": round(v["cpu_s"], 1),
                   "wall_s_per_million_tokens": round(v["wall_s"] * per_million, 1)
                   if per_million is not None and grows_with_corpus(rule) else None}
            for rule, v in sorted(out.items(), key=lambda kv: -kv[1]["wall_s"])}


def compared_timings(timings: dict, projection: dict | None = None, tour: dict | None = None) -> dict:
    """The run's job time per stage beside a projection's (``benchmarks/scale_projection.py --json``: its
    ``stages``) and a tour run's (its reference manifest's ``timings``): {stage: {jobs, job_s, projected_s,
    tour_s}} and the totals under ``all``."""
    stages = list(timings["stages"])
    for other in (projection or {}).get("stages", {}), ((tour or {}).get("timings") or {}).get("stages", {}):
        stages += [k for k in other if k not in stages and k != "(no benchmark)"]
    rows = {}
    for stage in stages:
        mine = timings["stages"].get(stage) or {}
        rows[stage] = {"jobs": mine.get("jobs", 0), "job_s": mine.get("wall_s", 0.0),
                       "projected_s": ((projection or {}).get("stages") or {}).get(stage, {}).get("projected_s"),
                       "tour_s": (((tour or {}).get("timings") or {}).get("stages") or {}).get(stage, {}).get("wall_s")}
    total = {"jobs": timings["jobs"], "job_s": timings["work_s"],
             "projected_s": (projection or {}).get("job_s"), "tour_s": ((tour or {}).get("timings") or {}).get("work_s")}
    return {"stages": rows, "all": total}


def _ratio(a, b) -> str:
    return "—" if a is None or not b else f"{a / b:.2f}×"


def comparison_markdown(compared: dict, projection: dict | None, tour: dict | None, machine: dict | None) -> list[str]:
    """The per-stage table of job time against the projection and the tour, with what each was made from."""
    from staticvec.report.markdown import table

    body = []
    for stage, v in [*compared["stages"].items(), ("**all**", compared["all"])]:
        body.append([stage, v["jobs"], _hms(v["job_s"]),
                     "—" if v["projected_s"] is None else _hms(v["projected_s"]), _ratio(v["job_s"], v["projected_s"]),
                     "—" if v["tour_s"] is None else _hms(v["tour_s"]), _ratio(v["job_s"], v["tour_s"])])
    lines = ["Job time per stage beside the projection made before the run and beside the tour's job time "
             "(measured / projected: how close the projection came; ratio to the tour: this run's cost in tours):", "",
             *table(["stage", "jobs", "job time", "projected", "measured / projected", "tour's job time",
                     "ratio to the tour"], body, align=["l", "r", "r", "r", "r", "r", "r"]), ""]
    if projection:
        lines.append(f"Projection: `{projection.get('file')}` (benchmarks/scale_projection.py: "
                     f"{projection.get('target_tokens', 0):,} tokens from {projection.get('base_tokens', 0):,}-token "
                     f"job times; {projection.get('job_s', 0):,.0f} s of job time, {projection.get('core_s', 0):,.0f} core-s).")
    if tour:
        here = (machine or {}).get("cpu")
        there = (tour.get("machine") or {}).get("cpu")
        same = "the same CPU" if here and there and here == there else \
            f"CPU {there or 'not recorded'} (this run: {here or 'not recorded'}): compare ratios only on the same machine"
        lines.append(f"Tour: `{tour.get('file')}` ({(tour.get('tokens') or 0):,} tokens, commit "
                     f"{tour.get('git_commit', '?')}, {same}).")
    return lines


def timings_markdown(timings: dict, segments: list[dict] | None = None) -> str:
    from staticvec.report.segments import segments_markdown

    lines = ["| stage | jobs | work (sum of job wall times) | CPU | longest job | peak RSS |",
             "| --- | ---: | ---: | ---: | --- | ---: |"]
    for stage, v in timings["stages"].items():
        lines.append(f"| {stage} | {v['jobs']} | {_hms(v['wall_s'])} | {_hms(v['cpu_s'])} | "
                     f"{v['longest_job']} ({_hms(v['longest_job_s'])}) | {v['max_rss_mb']:.0f} MB |")
    lines.append(f"| **all** | {timings['jobs']} | {_hms(timings['work_s'])} | | | |")
    lines.append("")
    if segments:
        lines += [f"First job start to last job end: {_hms(timings['run_wall_s'])} (across the segments, the time "
                  "between sittings included).", "", *segments_markdown(segments)]
    else:
        lines.append(f"Run wall time (first job start to last job end): **{_hms(timings['run_wall_s'])}**.")
    if timings.get("compared"):
        lines += ["", *comparison_markdown(timings["compared"], timings.get("projection"), timings.get("tour"),
                                           timings.get("machine"))]
    if timings.get("rules"):
        tokens = timings.get("corpus_tokens")
        lines += ["", f"Per rule, by job time (corpus: {tokens:,} tokens; job time per million tokens for the "
                      "rules whose work grows with the corpus, — for those whose cost does not; "
                      "benchmarks/scale_projection.py projects a whole run):" if tokens else "Per rule, by job time:", "",
                  "| rule | jobs | job time | CPU | peak RSS | job time per 1M tokens |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for rule, v in timings["rules"].items():
            per = v.get("wall_s_per_million_tokens")
            lines.append(f"| {rule} | {v['jobs']} | {_hms(v['wall_s'])} | {_hms(v['cpu_s'])} | "
                         f"{v['max_rss_mb']:.0f} MB | {'—' if per is None else _hms(per)} |")
    return "\n".join(lines) + "\n"


def claims_seed_rows(claims: dict) -> list[dict]:
    """One row per (claim, part, compared row, seed) of ``claims.json``: the value each row of a part's comparison
    had at that seed (the scale the verdicts use), its weight in the paired difference and the part's metric, so
    that a part's mean difference is Σ weight · value over its rows, averaged over the seeds they share. Read from
    each alternative's ``row_values`` (``[{row, weight, values: {seed: value}}]``, written by the claims evaluation);
    a part without them (a claims file made before they were recorded, or a part not tested) gives no row."""
    out = []
    for claim in claims.get("claims") or []:
        for k, part in enumerate(claim.get("parts") or [], 1):
            for alt in part.get("alternatives") or []:
                for entry in alt.get("row_values") or []:
                    metric = alt.get("metric") or ""
                    for seed, value in sorted((entry.get("values") or {}).items(), key=lambda kv: int(kv[0])):
                        out.append({"claim": claim["id"], "part": k, "comparison": alt.get("comparison"),
                                    "row": entry["row"], "weight": entry.get("weight", 1.0),
                                    "set": _sets_of(metric),
                                    "metric": metric, "seed": int(seed), "value": value})
    return out


def _sets_of(metric: str) -> str:
    """The data sets (or tasks) of a part's metric text: ``ws353``, ``chunking.test`` → ``chunking``; a mean of
    several → ``ws353+simlex999``."""
    if metric.startswith("mean(") and metric.endswith(")"):
        return "+".join(dict.fromkeys(p.strip().split(".")[0] for p in metric[5:-1].split(",")))
    return metric.split(".")[0]


def tagging_convergence_rows(run: str | Path) -> list[dict]:
    """Every tagger's development curve in a run (``eval/<row>/tagging.json``: per task and seed the dev score of
    each epoch, the chosen epoch and why training ended), one dict per (row, task, seed)."""
    out = []
    for path in sorted(Path(run).glob("eval/*/tagging.json")):
        result = read_json(path)
        for task, node in sorted((result.get("results") or {}).items()):
            for seed in (node.get("convergence") or {}).get("seeds") or []:
                out.append({"row": result.get("embedding", path.parent.name), "task": task, **seed})
    return out


def claims_item_records(run: str | Path, claims: dict) -> dict:
    """The per-item records the intrinsic claims of ``claims.json`` compare, read from the run's results:
    ``{"gold": {set: [gold score per pair]}, "items": {protocol: {row: {seed: {set: {"cosine": [...]} or
    {"correct": "10-..."}}}}}}`` (a similarity set's cosines rounded to ``COSINE_DIGITS`` significant digits,
    None for a pair not scored; an analogy set's outcomes, one character a question: 1 right, 0 wrong, - not
    asked). The rows and sets are those of each claim's ``coverage``; a result without a per-item record
    (categorization, SemEval-2012) is left out."""
    run = Path(run)
    wanted: dict[tuple[str, str], set[str]] = {}
    for claim in claims.get("claims") or []:
        if claim.get("source", "intrinsic") != "intrinsic" or not claim.get("protocol"):
            continue
        for dataset, ground in (claim.get("coverage") or {}).items():
            for row in ground.get("rows") or {}:
                wanted.setdefault((claim["protocol"], row), set()).add(dataset)
    gold: dict[str, list] = {}
    items: dict = {}
    for (protocol, row), datasets in sorted(wanted.items()):
        for path in sorted(run.glob(f"eval/{row}/seed*/intrinsic.{protocol}.json"), key=lambda p: p.parent.name):
            seed = path.parent.name.removeprefix("seed")
            results = read_json(path).get("results") or {}
            for dataset in sorted(datasets):
                record = (results.get(dataset) or {}).get("items")
                if not record:
                    continue
                if "cosine" in record:
                    gold.setdefault(dataset, record.get("gold"))
                    kept = {"cosine": [None if c is None else float(f"{c:.{COSINE_DIGITS}g}") for c in record["cosine"]]}
                else:
                    kept = {"correct": record["correct"]}
                items.setdefault(protocol, {}).setdefault(row, {}).setdefault(seed, {})[dataset] = kept
    return {"cosine_digits": COSINE_DIGITS, "gold": gold, "items": items}


def _write_csv(path: Path, fields, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wt") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(fields), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def convergence_markdown(rows: list[dict]) -> str:
    """Per tagger (row, task, seed): epochs run, the epoch chosen on dev and its score, why it stopped."""
    from staticvec.report.markdown import table

    body = [[r["row"], r["task"], r["seed"], r["epochs_run"], r["best_epoch"],
             "—" if not r["dev_curve"] else f"{100 * r['dev_curve'][r['best_epoch'] - 1]:.2f}",
             r.get("stopped_by") or "not recorded", "yes" if r.get("converged") else "no"] for r in rows]
    n_conv = sum(bool(r.get("converged")) for r in rows)
    lines = ["**The taggers' development curves: each run is chosen on dev (the best epoch's weights are the ones "
             "tested), never on test; converged = dev had not improved for `patience` epochs before the epoch cap "
             f"({n_conv} of {len(rows)} runs). Every epoch's dev score: tagging_dev_curves.csv.**", "",
             *table(["row", "task", "seed", "epochs run", "chosen epoch", "dev at it", "stopped by", "converged"], body,
                    align=["l", "l", "r", "r", "r", "r", "l", "l"]), ""]
    return "\n".join(lines)


def publish_readers_files(run: Path, out: Path) -> list[str]:
    """The small per-seed files of :func:`claims_seed_rows` and :func:`tagging_convergence_rows`, written into
    ``out``; returns the paths written (relative to ``out``)."""
    import gzip

    written = []
    claims = run / "tables" / "claims.json"
    if claims.exists():
        verdicts = read_json(claims)
        rows = claims_seed_rows(verdicts)
        if rows:
            _write_csv(out / CLAIMS_SEEDS, CLAIMS_SEEDS_FIELDS, rows)
            written.append(CLAIMS_SEEDS)
        per_item = claims_item_records(run, verdicts)
        if per_item["items"]:
            (out / CLAIMS_ITEMS).parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(out / CLAIMS_ITEMS) as tmp, open(tmp, "wb") as fh:  # mtime 0: same records, same bytes
                with gzip.GzipFile(filename="", fileobj=fh, mode="wb", mtime=0) as gz:
                    gz.write(json.dumps(per_item, sort_keys=True, separators=(",", ":")).encode())
            written.append(CLAIMS_ITEMS)
    runs = tagging_convergence_rows(run)
    if runs:
        _write_csv(out / DEV_CURVES, DEV_CURVES_FIELDS,
                   [{"row": r["row"], "task": r["task"], "seed": r["seed"], "epoch": epoch, "dev_score": score,
                     "chosen": int(epoch == r["best_epoch"])}
                    for r in runs for epoch, score in enumerate(r["dev_curve"], 1)])
        with atomic_open(out / CONVERGENCE_MD) as fh:
            fh.write(convergence_markdown(runs))
        written += [DEV_CURVES, CONVERGENCE_MD]
    return written


def publish(run: str | Path, out: str | Path, metadata_dir: str | Path = ".snakemake/metadata",
            projection: str | Path | None = None, tour: str | Path | None = None) -> dict:
    """Copy a finished run's tables, figures and manifests to ``out`` and write its stage and rule
    timings into ``out/manifest.json`` (under ``timings``) and ``out/timings.md``; with the run's segments
    (``segments.tsv``, ``make claims``) listed, and its job time per stage beside a ``projection``
    (``benchmarks/scale_projection.py --json``) and a ``tour`` run (its published ``manifest.json``).
    Returns the manifest."""
    from staticvec.report.segments import machine, read_segments

    run, out = Path(run), Path(out)
    manifest_path = run / "manifest.json"
    if not manifest_path.exists():
        raise InputFileError(manifest_path, "missing; run the workflow to the end first")
    copied = []
    for pattern in PUBLISHED:
        for src in sorted(run.glob(pattern)):
            rel = src.relative_to(run)
            dst = out / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            with atomic_open(dst, "wb") as fh, open(src, "rb") as fin:
                shutil.copyfileobj(fin, fh)
            copied.append(str(rel))
    timings = stage_timings(run / "benchmarks")
    manifest = read_json(manifest_path)
    corpus = run / "corpus" / "manifest.json"
    tokens = read_json(corpus).get("totals", {}).get("tokens") if corpus.exists() else None
    timings["corpus_tokens"] = tokens
    timings["rules"] = rule_timings(run / "benchmarks", rules_of_benchmarks(metadata_dir, run), tokens)
    segments = read_segments(run / "segments.tsv")
    timings["segments"] = segments
    last = segments[-1] if segments else None  # the machine of the last sitting, else the one publishing
    timings["machine"] = {"host": last["host"], "cpu": last["cpu"], "cores": last["cores"]} if last else \
        {**machine(), "note": "recorded when publishing (no segments.tsv)"}
    manifest["machine"] = timings["machine"]
    loaded_projection = {**read_json(projection), "file": str(projection)} if projection else None
    loaded_tour = {**read_json(tour), "file": str(tour)} if tour else None
    if loaded_projection or loaded_tour:
        timings["compared"] = compared_timings(timings, loaded_projection, loaded_tour)
        timings["projection"] = {k: v for k, v in (loaded_projection or {}).items()
                                 if k in ("file", "job_s", "core_s", "base_tokens", "target_tokens", "target_config",
                                          "base")} or None
        timings["tour"] = {"file": str(tour), "tokens": loaded_tour.get("tokens"),
                           "git_commit": loaded_tour.get("git_commit"), "machine": loaded_tour.get("machine"),
                           "work_s": (loaded_tour.get("timings") or {}).get("work_s")} if loaded_tour else None
    manifest["timings"] = timings
    claims = run / "tables" / "claims.json"
    if claims.exists():  # the claims' verdicts (the run manifest is an input of the claims rule, so they land here)
        verdicts = read_json(claims)
        manifest["claims"] = {"counts": verdicts["counts"], "verdicts": verdicts["verdicts"]}
    manifest["published"] = sorted(copied + publish_readers_files(run, out))
    write_json(out / "manifest.json", manifest)
    with atomic_open(out / "timings.md") as fh:
        fh.write(timings_markdown(timings, segments))
    return manifest
