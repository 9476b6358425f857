"""Paper-comparison tables: our numbers beside the papers', with the difference and our coverage.

Inputs:

- a transcribed paper table (``resources/paper_tables/<paper>_table<N>.csv``; format in that
  folder's README), read by :func:`staticvec.sheets.tables.load_paper_table`;
- our results: ``{result id: RESULT.json path or dict, or a list of them (seeds)}``; any JSON
  with ``{"results": {key: {"score": x, "found": n, "total": m, ...}}}`` (``staticvec evaluate intrinsic``
  writes these; the extrinsic stages follow the same shape);
- ``row_map`` (paper row → result id, None for a paper row we do not reproduce) and
  ``column_map`` (paper column → result path, or ``{"mean": [paper columns]}``), normally one
  entry of the tables sheet ``config/tables.yaml``;
- ``meta``: what our column was obtained on (corpus, token count, teacher; the run manifest);
- ``record_columns`` (the sheet's key): counts read from the row embeddings' training records
  (result ids ``<embedding>@record``), beside the paper's info column of that name (SemGloVe
  Table 4's total word pairs = the store header's distinct entries).

:func:`build_comparison` returns a long DataFrame (one line per row × column: paper, ours, diff,
found/total, runs); :func:`write_comparison` writes it as CSV and as Markdown (a wide table of
``ours / paper (±diff)`` cells, then a coverage table), under a caption naming the corpus, its
token count, the teacher and the evaluation policy. Our fractions are converted to the paper's
printed units with the table's ``scale`` (100 where the paper prints ×100); the difference is in
those units. Several results for one row (seeds) give the mean and the standard deviation.

Command line (the table rule)::

    staticvec report table --spec config/tables.yaml --table c2v_table1 --out-csv T.csv --out-md T.md \\
                           [--meta manifest.json] sg=results/.../sg/intrinsic.web.json c2v=... ...
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from staticvec.errors import InputFileError, StaticvecError
from staticvec.sheets.tables import PaperTable, load_paper_table, load_tables_spec

# result ids <embedding>@record: the embedding's training record (vectors.json), for record_columns
RECORD_SUFFIX = "@record"
HEAD_SUFFIX = "@head"  # a row's fitted MLM head record (teacher/<t>/mlm_head.json): its quality goes in the caption
_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMB]?)\s*$")
_COUNT_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9}


# ------------------------------------------------------------------ results


def load_result(item) -> dict:
    if isinstance(item, dict):
        return item
    data = json.loads(Path(item).read_text(encoding="utf-8")) if Path(item).exists() else None
    if data is None:
        raise InputFileError(item, "result file not found")
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise InputFileError(item, "not a result file: no 'results' mapping")
    return data


def result_value(result: dict, target: str) -> tuple[float | None, int | None, int | None]:
    """(value, found, total) of a result path such as ``ws353``, ``google.semantic``,
    ``semeval2012.variants.web`` or ``pos.test``."""
    parts = target.split(".")
    node = result["results"].get(parts[0])
    if node is None:
        return None, None, None
    coverage = node
    for part in parts[1:]:
        if isinstance(node, dict) and isinstance(node.get("groups"), dict) and part in node["groups"]:
            coverage = node["groups"][part]  # google.semantic: the group's own coverage
        node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and "found" in node:
            coverage = node
    if isinstance(node, dict):
        node = node.get("score")
    value = None if node is None else float(node)
    return value, coverage.get("found") if isinstance(coverage, dict) else None, \
        coverage.get("total") if isinstance(coverage, dict) else None


def _mean_sd(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample sd of the finite values (:func:`staticvec.stats.describe`)."""
    from staticvec.stats import describe

    d = describe(values)
    return d.mean, d.sd


# ------------------------------------------------------------------ comparison


def parse_count(text) -> float:
    """A count as papers print it: 0.3B, 12M, 5K or a plain number; NaN when empty."""
    if text is None or not str(text).strip():
        return math.nan
    m = _COUNT.match(str(text))
    if not m:
        raise StaticvecError(f"{text!r} is not a count (a number, optionally followed by K, M or B)")
    return float(m.group(1)) * _COUNT_UNITS[m.group(2)]


def count_text(value) -> str:
    """A count printed like the papers' (0.3B, 2.41M, 950K, 12)."""
    if _missing(value):
        return "—"
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.0f}"


def _record_value(record: dict, path: str):
    node = record
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None


def _load_record(item) -> dict:
    if isinstance(item, dict):
        return item
    if not Path(item).exists():
        raise InputFileError(item, "training record not found")
    try:
        return json.loads(Path(item).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputFileError(item, f"not a JSON training record ({exc})") from None


def build_comparison(paper_table_csv, our_results: dict, row_map: dict, column_map: dict, meta: dict | None = None,
                     record_columns: dict | None = None):
    """Long DataFrame: row, label, embedding, column, paper, paper_note, ours, ours_sd, runs, diff,
    found, total, oov_policy (see the module doc). ``meta`` is kept in ``df.attrs``.

    ``record_columns`` ({column: dotted path}) adds counts read from each row embedding's training
    record (result id ``<embedding>@record``), beside the paper's info column of that name."""
    import pandas as pd

    paper = paper_table_csv if isinstance(paper_table_csv, PaperTable) else load_paper_table(paper_table_csv)
    if paper.kind == "neighbours":
        raise StaticvecError(f"{paper.path}: a neighbours table; use build_neighbours")
    scale = paper.scale
    record_columns = dict(record_columns or {})
    records = {
        emb[: -len(RECORD_SUFFIX)]: [_load_record(r) for r in (items if isinstance(items, (list, tuple)) else [items])]
        for emb, items in our_results.items() if emb.endswith(RECORD_SUFFIX)
    }
    loaded = {
        emb: [load_result(r) for r in (items if isinstance(items, (list, tuple)) else [items])]
        for emb, items in our_results.items() if not emb.endswith((RECORD_SUFFIX, HEAD_SUFFIX))
    }
    rows = list(paper.rows) + [r for r in row_map if r not in paper.rows]  # extra rows: ours only
    rows_out = []
    for row in rows:
        emb, runs, ours = _row_results(row, row_map.get(row), loaded, column_map, scale)
        oov = sorted({r.get("oov_policy") for r in runs if r.get("oov_policy")})
        for column in paper.columns + [c for c in column_map if c not in paper.columns]:
            value = paper.values.get((row, column), math.nan)
            entry = ours.get(column, {})
            mine = entry.get("ours")
            rows_out.append({
                "row": row,
                "label": paper.labels[row] if row in paper.labels else f"{emb or row} (ours; not in the paper)",
                "embedding": emb,
                "column": column,
                "paper": value,
                "paper_note": paper.notes.get((row, column)),
                "ours": mine,
                "ours_sd": entry.get("ours_sd"),
                "runs": entry.get("runs", 0),
                "diff": None if mine is None or math.isnan(value) else mine - value,
                "found": entry.get("found"),
                "total": entry.get("total"),
                "oov_policy": ",".join(oov) or None,
            })
        mapping = row_map.get(row)
        for column, path in record_columns.items():
            values = [v for v in (_record_value(r, path) for r in records.get(mapping, []) if isinstance(mapping, str))
                      if v is not None]
            mine, sd = _mean_sd(values)
            rows_out.append({
                "row": row, "label": paper.labels[row] if row in paper.labels else f"{emb or row} (ours; not in the paper)",
                "embedding": emb, "column": column,
                "paper": parse_count(paper.info.get(row, {}).get(column)), "paper_note": None, "ours": mine,
                "ours_sd": sd, "runs": len(values), "diff": None, "found": None, "total": None, "oov_policy": None,
            })
    frame = pd.DataFrame.from_records(rows_out)
    columns = paper.columns + [c for c in column_map if c not in paper.columns]
    columns = [c for c in record_columns if c not in columns] + columns  # after the model, as the paper prints it
    frame.attrs.update({"table": paper.title, "meta": meta or {}, "paper_meta": paper.meta, "policy": _policy(loaded),
                        "columns": columns, "decimals": {c: max(1, paper.decimals(c)) for c in columns if c in paper.columns
                                                         or c in column_map},
                        "counts": list(record_columns)})
    frame.attrs["caption"] = caption(paper, meta or {}, frame.attrs["policy"])
    return frame


def _columns_of(row: str, runs: list[dict], column_map: dict, scale: float) -> dict[str, dict]:
    """Our value (mean and sd over runs, coverage) of every mapped column for one result id."""
    ours: dict[str, dict] = {}
    for column, target in column_map.items():
        if not isinstance(target, str):
            continue
        triples = [result_value(r, target.format(row=row)) for r in runs]
        mean, sd = _mean_sd([t[0] for t in triples])
        ours[column] = {
            "ours": None if mean is None else mean * scale,
            "ours_sd": None if sd is None else sd * scale,
            "runs": sum(t[0] is not None for t in triples),
            "found": next((t[1] for t in triples if t[1] is not None), None),
            "total": next((t[2] for t in triples if t[2] is not None), None),
        }
    for column, target in column_map.items():
        if isinstance(target, dict):
            parts = [ours.get(c, {}) for c in target["mean"]]
            complete = parts and all(p.get("ours") is not None for p in parts)
            ours[column] = {
                "ours": sum(p["ours"] for p in parts) / len(parts) if complete else None,
                "ours_sd": None,
                "runs": min((p.get("runs", 0) for p in parts), default=0) if complete else 0,
                "found": sum(p["found"] for p in parts) if complete and all(p.get("found") is not None for p in parts) else None,
                "total": sum(p["total"] for p in parts) if complete and all(p.get("total") is not None for p in parts) else None,
            }
    return ours


def _row_results(row: str, mapping, loaded: dict, column_map: dict, scale: float):
    """(embedding label, runs, our columns) of a table row.

    ``mapping`` is a result id, None, or ``{"best_of": "glob", "per": "column"|"overall"}``: the
    best of several results, as the papers report a swept parameter (ASE's best layer per task or
    overall, Artetxe's best alpha). ``per: column`` takes each column's best candidate;
    ``overall`` the candidate with the best mean over the directly mapped columns. The label
    names the chosen candidate(s).
    """
    import fnmatch

    if not isinstance(mapping, dict):
        runs = loaded.get(mapping, []) if mapping else []
        return mapping, runs, _columns_of(row, runs, column_map, scale)
    candidates = sorted(c for c in loaded if fnmatch.fnmatchcase(c, mapping["best_of"]))
    if not candidates:
        return mapping["best_of"], [], {}
    per_candidate = {c: _columns_of(row, loaded[c], column_map, scale) for c in candidates}
    direct = [c for c, t in column_map.items() if isinstance(t, str)]
    if mapping.get("per", "column") == "overall":
        by = mapping.get("by")

        def overall(c):
            if by:  # one (mean) column decides: X2Static Table 4's best average macro-F1
                value = per_candidate[c].get(by, {}).get("ours")
                return -math.inf if value is None else value
            values = [per_candidate[c][col]["ours"] for col in direct if per_candidate[c][col]["ours"] is not None]
            return sum(values) / len(values) if values else -math.inf
        best = max(candidates, key=overall)
        how = f"best {by}" if by else "best overall"
        return f"{best} ({how} of {mapping['best_of']})", loaded[best], per_candidate[best]
    ours, chosen = {}, []
    for column in column_map:
        scored = [c for c in candidates if per_candidate[c].get(column, {}).get("ours") is not None]
        if scored:
            best = max(scored, key=lambda c: per_candidate[c][column]["ours"])
            ours[column] = per_candidate[best][column]
            if isinstance(column_map[column], str):
                chosen.append(f"{column}: {best}")
    runs = [r for c in candidates for r in loaded[c]]
    return f"best of {mapping['best_of']} per column ({'; '.join(chosen)})", runs, ours


def build_neighbours(paper_table_csv, our_results: dict, row_map: dict, meta: dict | None = None, queries=None):
    """Long DataFrame of a nearest-neighbour table: row, label, embedding, query, rank, paper, ours,
    ours_cosine, plus per (row, query) the overlap of our list with the paper's."""
    import pandas as pd

    paper = paper_table_csv if isinstance(paper_table_csv, PaperTable) else load_paper_table(paper_table_csv)
    if paper.kind != "neighbours":
        raise StaticvecError(f"{paper.path}: not a neighbours table")
    loaded = {emb: load_result(r[0] if isinstance(r, (list, tuple)) else r) for emb, r in our_results.items()}
    records = []
    for (row, query), words in paper.neighbours.items():
        if queries and query not in queries:
            continue
        emb = row_map.get(row)
        lists = loaded[emb]["results"].get("neighbours", {}).get("neighbours", {}) if emb in loaded else {}
        mine = (lists.get(query) or [])[: len(words)]
        overlap = len({w for w, _ in mine} & set(words)) if mine else None
        for rank in range(1, len(words) + 1):
            ours = mine[rank - 1] if rank <= len(mine) else (None, None)
            records.append({"row": row, "label": paper.labels[row], "embedding": emb, "query": query, "rank": rank,
                            "paper": words[rank - 1], "ours": ours[0], "ours_cosine": ours[1], "overlap": overlap})
    frame = pd.DataFrame.from_records(records)
    frame.attrs.update({"table": paper.title, "meta": meta or {}, "paper_meta": paper.meta, "policy": _policy(
        {e: [r] for e, r in loaded.items()})})
    frame.attrs["caption"] = caption(paper, meta or {}, frame.attrs["policy"])
    return frame


def _policy(loaded: dict) -> str:
    """How our numbers were evaluated, from the results' recorded settings."""
    seen = []
    for runs in loaded.values():
        for r in runs:
            if "oov_policy" not in r:
                continue
            oov = {"mean": "OOV words replaced by the mean vector", "drop": "pairs/questions with OOV words dropped"}
            parts = [oov.get(r["oov_policy"], r["oov_policy"])]
            parts.append("lower-cased" if r.get("lowercase") else "case kept")
            parts.append(f"first {r['max_vocab']:,} words" if r.get("max_vocab") else "whole vocabulary")
            text = ", ".join(parts)
            if text not in seen:
                seen.append(text)
    return "; ".join(seen) or "not recorded"


def caption(paper: PaperTable, meta: dict, policy: str) -> str:
    """One line: which paper table, and what our column was obtained on."""
    tokens = meta.get("tokens")
    if isinstance(tokens, (int, float)):
        tokens = f"{tokens / 1e9:.2f}B" if tokens >= 1e9 else f"{tokens / 1e6:.1f}M" if tokens >= 1e6 else f"{tokens:,}"
    if any(k in meta for k in ("corpus", "tokens", "teacher")):
        ours = (f"Ours: corpus {meta.get('corpus', 'not recorded')} ({tokens or 'unknown number of'} tokens), "
                f"teacher {meta.get('teacher', 'not recorded')}; evaluation: {policy}.")
    else:
        ours = f"Ours: corpus, tokens and teacher not recorded (no run manifest); evaluation: {policy}."
    head = f"{paper.title}: {paper.meta.get('title', '')} ({paper.meta.get('units', '')})."
    extra = f" Note: {meta['caption']}" if meta.get("caption") else ""
    made = f" Made with: {meta['provenance_caption']}." if meta.get("provenance_caption") else ""
    return f"{head} {ours}{extra}{made}"


def fitted_heads(results: dict) -> dict[str, dict]:
    """{row: its fitted MLM head's record} from the ``<row>@head`` items of a table's or claim's results."""
    out = {}
    for rid, items in results.items():
        if rid.endswith(HEAD_SUFFIX):
            first = items[0] if isinstance(items, (list, tuple)) else items
            out[rid[: -len(HEAD_SUFFIX)]] = _load_record(first)
    return out


def fitted_head_caption(heads: dict[str, dict]) -> str | None:
    """The caption hook of every table and verdict that reads a row built on a fitted MLM head (SemGloVe_md,
    _mr, _md5 on a teacher that ships no head): the head's held-out top-1/top-10 against the unigram baseline
    (:func:`staticvec.teacher.mlm_head.head_quality_text`), one sentence per head, naming its rows. ``heads``:
    {row: the head's record}; None when no row reads one."""
    from staticvec.teacher.mlm_head import head_quality, head_quality_text

    by_head: dict[str, tuple[dict, list[str]]] = {}
    for row, record in sorted(heads.items()):
        quality = head_quality(record)
        if quality is None:
            continue
        key = json.dumps(quality, sort_keys=True)
        by_head.setdefault(key, (quality, []))[1].append(row)
    texts = [head_quality_text(quality, ", ".join(rows)) for quality, rows in by_head.values()]
    return " ".join(f"{t}." for t in texts) or None


# ------------------------------------------------------------------ output


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _fmt(value, decimals: int) -> str:
    return "—" if _missing(value) else f"{value:.{decimals}f}"


def to_markdown(frame) -> str:
    """Markdown of a comparison (wide: ``ours / paper (±diff)``) or a neighbours frame."""
    if frame.empty:
        return f"{frame.attrs.get('caption', '')}\n\n(empty table)\n"
    lines = [f"**{frame.attrs.get('caption', '')}**", ""]
    if "query" in frame.columns:
        for query, group in frame.groupby("query", sort=False):
            lines += [f"Nearest neighbours of *{query}*", "", "| model | ours | paper's list | our list | overlap |",
                      "| --- | --- | --- | --- | --- |"]
            for _, g in group.groupby("row", sort=False):
                ours = ", ".join(w for w in g["ours"] if isinstance(w, str)) or "—"
                overlap = g["overlap"].iloc[0]
                overlap = "—" if _missing(overlap) else f"{int(overlap)}/{len(g)}"
                emb = g["embedding"].iloc[0]
                lines.append(f"| {g['label'].iloc[0]} | {'—' if _missing(emb) else emb} | "
                             f"{', '.join(g['paper'])} | {ours} | {overlap} |")
            lines.append("")
        return "\n".join(lines)
    columns = frame.attrs.get("columns") or list(dict.fromkeys(frame["column"]))
    decimals = frame.attrs.get("decimals", {})
    lines += ["| model | ours | " + " | ".join(columns) + " |", "| --- | --- | " + " | ".join("---" for _ in columns) + " |"]
    for _, g in frame.groupby("row", sort=False):
        cells = []
        by_col = {r["column"]: r for _, r in g.iterrows()}
        for c in columns:
            r = by_col.get(c)
            if r is None:
                cells.append("")
                continue
            d = decimals.get(c, 1)
            mine = None if _missing(r["ours"]) else r["ours"]
            if c in frame.attrs.get("counts", ()):
                cells.append(f"{count_text(mine)} / {count_text(r['paper'])}")
                continue
            text = f"{_fmt(mine, d)} / {_fmt(r['paper'], d)}"
            if isinstance(r["paper_note"], str) and r["paper_note"]:
                text += f"[{r['paper_note']}]"  # e.g. X2Static's ASE layer, printed in parentheses
            if mine is not None and not _missing(r["diff"]):
                text += f" ({r['diff']:+.{d}f})"
            if r["runs"] and r["runs"] > 1 and not _missing(r["ours_sd"]):
                text += f" ±{r['ours_sd']:.{d}f} (n={int(r['runs'])})"
            cells.append(text)
        emb = g["embedding"].iloc[0]
        lines.append(f"| {g['label'].iloc[0]} | {'—' if _missing(emb) else emb} | " + " | ".join(cells) + " |")
    covered = [c for c in columns if c not in frame.attrs.get("counts", ())]
    lines += ["", "Cells: ours / paper (ours − paper). Coverage of ours (found / total):", "",
              "| model | " + " | ".join(covered) + " |", "| --- | " + " | ".join("---" for _ in covered) + " |"]
    for _, g in frame.groupby("row", sort=False):
        if g["ours"].map(_missing).all():
            continue  # no result of ours in this row
        by_col = {r["column"]: r for _, r in g.iterrows()}
        cells = []
        for c in columns:
            if c in frame.attrs.get("counts", ()):
                continue
            r = by_col.get(c)
            ok = r is not None and not _missing(r["found"]) and not _missing(r["total"])
            cells.append(f"{int(r['found'])}/{int(r['total'])}" if ok else "—")
        lines.append(f"| {g['label'].iloc[0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_comparison(frame, csv_path, md_path) -> None:
    """Write the long frame as CSV (caption as a leading comment) and the Markdown rendering."""
    from staticvec.files import atomic_open

    with atomic_open(csv_path, "wt") as fh:
        fh.write(f"# {frame.attrs.get('caption', '')}\n")
        frame.to_csv(fh, index=False, lineterminator="\n")
    with atomic_open(md_path, "wt") as fh:
        fh.write(to_markdown(frame))


# ------------------------------------------------------------------ from files


def table_from_files(spec: str | os.PathLike, table: str, results: dict[str, list[str]], out_csv, out_md,
                     meta: str | os.PathLike | None = None, root: str | os.PathLike = ".", reduced: dict | None = None) -> None:
    """Table ``table`` of the tables sheet ``spec`` from our result files (``{result id: [files]}``,
    one per seed) and the run manifest ``meta`` (JSON or YAML): CSV and Markdown; ``reduced``: the inputs made
    below the run's scale (``Workflow.reduced_inputs``), stated in the caption; what ``staticvec report table``
    does."""
    from staticvec.config import load_yaml
    from staticvec.report.provenance import reduced_text

    sheet = load_tables_spec(spec, root)
    if table not in sheet["tables"]:
        raise StaticvecError(f"{spec}: no table {table!r}; known: {', '.join(sheet['tables'])}")
    entry = sheet["tables"][table]
    meta = dict(load_yaml(meta) or {}) if meta else {}
    if entry.get("caption"):
        meta["caption"] = (meta.get("caption", "") + " " + entry["caption"]).strip()
    below = reduced_text(reduced, meta.get("tokens"))
    if below:
        meta["caption"] = (meta.get("caption", "") + " " + below).strip()
    head_note = fitted_head_caption(fitted_heads(results))
    if head_note:
        meta["caption"] = (meta.get("caption", "") + " " + head_note).strip()
    results = {rid: items for rid, items in results.items() if not rid.endswith(HEAD_SUFFIX)}
    paper = load_paper_table(Path(root) / entry["paper_file"])
    if paper.kind == "neighbours":
        frame = build_neighbours(paper, results, entry["rows"], meta, entry.get("queries"))
    else:
        frame = build_comparison(paper, results, entry["rows"], entry.get("columns", {}), meta,
                                 entry.get("record_columns"))
    write_comparison(frame, out_csv, out_md)
