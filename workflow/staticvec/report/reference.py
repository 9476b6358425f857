"""The committed reference run (``results/reference/``): per-stage wall times from Snakemake's
benchmark files, and the copy of a finished run's tables, figures and manifests.

A stage is the first directory under ``<run>/benchmarks/`` (corpus, teacher, cooc, train, post, eval,
...); a job's time is the ``s`` column of its benchmark file (wall seconds of the job's command).
Summed per stage this is the *work* of the stage; with ``--cores N`` jobs overlap, so the run's wall
time (first job start to last job end, from the benchmark files' modification times) is given too.

Per rule, the same sums and the job time per million corpus tokens (so the cost of another corpus
size can be predicted): a benchmark file is attributed to its job's rule through Snakemake's job
records (``.snakemake/metadata``: each output's rule and log), as every rule here writes its log and
its benchmark under the same relative name (``logs/X.log`` ↔ ``benchmarks/X.tsv``).
"""

from __future__ import annotations

import csv
import json
import shutil
from collections import defaultdict
from pathlib import Path

from staticvec.errors import InputFileError
from staticvec.files import atomic_open, read_json, write_json

# what a reader of results/reference/ needs; big artefacts (vectors, features, stores) never go there
PUBLISHED = ("tables/**/*.md", "tables/**/*.csv", "tables/**/*.html", "tables/claims.json", "figures/**/*.pdf",
             "figures/**/*.png", "figures/**/*.manifest.json", "manifest.json", "corpus/manifest.json")


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


def timings_markdown(timings: dict) -> str:
    lines = ["| stage | jobs | work (sum of job wall times) | CPU | longest job | peak RSS |",
             "| --- | ---: | ---: | ---: | --- | ---: |"]
    for stage, v in timings["stages"].items():
        lines.append(f"| {stage} | {v['jobs']} | {_hms(v['wall_s'])} | {_hms(v['cpu_s'])} | "
                     f"{v['longest_job']} ({_hms(v['longest_job_s'])}) | {v['max_rss_mb']:.0f} MB |")
    lines.append(f"| **all** | {timings['jobs']} | {_hms(timings['work_s'])} | | | |")
    lines.append("")
    lines.append(f"Run wall time (first job start to last job end): **{_hms(timings['run_wall_s'])}**.")
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


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def publish(run: str | Path, out: str | Path, metadata_dir: str | Path = ".snakemake/metadata") -> dict:
    """Copy a finished run's tables, figures and manifests to ``out`` and write its stage and rule
    timings into ``out/manifest.json`` (under ``timings``) and ``out/timings.md``. Returns the manifest."""
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
    manifest["timings"] = timings
    claims = run / "tables" / "claims.json"
    if claims.exists():  # the claims' verdicts (the run manifest is an input of the claims rule, so they land here)
        verdicts = read_json(claims)
        manifest["claims"] = {"counts": verdicts["counts"], "verdicts": verdicts["verdicts"]}
    manifest["published"] = sorted(copied)
    write_json(out / "manifest.json", manifest)
    with atomic_open(out / "timings.md") as fh:
        fh.write(timings_markdown(timings))
    return manifest
