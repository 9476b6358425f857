"""Paper-comparison tables: our numbers beside the papers', with the difference and our coverage.

Inputs:

- a transcribed paper table (``resources/paper_tables/<paper>_table<N>.csv``; format in that
  folder's README), read by :func:`load_paper_table`;
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

import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from staticvec.errors import InputFileError, StaticvecError

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "tables.schema.yaml"
# result ids <embedding>@record: the embedding's training record (vectors.json), for record_columns
RECORD_SUFFIX = "@record"
_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMB]?)\s*$")
_COUNT_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9}
_VALUE = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:\((.*)\))?\s*$")


# ------------------------------------------------------------------ paper tables


@dataclass
class PaperTable:
    """One transcribed paper table."""

    path: Path
    meta: dict
    rows: list[str]
    labels: dict[str, str]
    columns: list[str]                         # value columns (not row/label/info)
    values: dict[tuple[str, str], float]       # (row, column) -> value as printed (NaN: not given)
    printed: dict[tuple[str, str], str]        # (row, column) -> cell text as printed
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    info: dict[str, dict[str, str]] = field(default_factory=dict)
    neighbours: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (row, query) -> words

    @property
    def kind(self) -> str:
        return self.meta.get("kind", "scores")

    @property
    def scale(self) -> float:
        return float(self.meta.get("scale", 1))

    @property
    def title(self) -> str:
        return f"{self.meta.get('paper', '?')}, Table {self.meta.get('table', '?')}"

    def decimals(self, column: str) -> int:
        """Decimals the paper prints in ``column`` (the most common count), to format ours alike."""
        counts: dict[int, int] = {}
        for row in self.rows:
            match = _VALUE.match(self.printed.get((row, column), ""))
            if match and "e" not in match.group(1).lower():
                n = len(match.group(1).split(".")[1]) if "." in match.group(1) else 0
                counts[n] = counts.get(n, 0) + 1
        return max(counts, key=lambda n: (counts[n], n)) if counts else 1

    def half_unit(self, row: str, column: str) -> float:
        """Half a unit of the last digit printed in the cell (``72.8``: 0.05, ``.5429``: 0.00005), in the
        table's units: how far the true value may lie from the printed one by rounding alone."""
        match = _VALUE.match(self.printed.get((row, column), ""))
        if not match or "e" in match.group(1).lower():
            return 0.0
        number = match.group(1)
        return 0.5 * 10.0 ** -(len(number.split(".")[1]) if "." in number else 0)


def load_paper_table(path: str | os.PathLike) -> PaperTable:
    """Read a paper table file (``# key: value`` header, then CSV); errors name file and line."""
    path = Path(path)
    if not path.exists():
        raise InputFileError(path, "paper table not found")
    meta, body, first_line = {}, [], None
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.startswith("#"):
                key, sep, value = line[1:].partition(":")
                if not sep:
                    raise InputFileError(path, "header line must be '# key: value'", lineno)
                meta[key.strip()] = value.strip()
                continue
            if first_line is None:
                first_line = lineno
            body.append(line)
    for key in ("paper", "table", "units"):
        if key not in meta:
            raise InputFileError(path, f"header key '# {key}:' missing")
    reader = csv.reader(io.StringIO("".join(body)))
    header = next(reader, None)
    if header is None or header[:2] != ["row", "label"]:
        raise InputFileError(path, "the table must start with the columns 'row,label'", first_line)
    info = [c.strip() for c in meta.get("info_columns", "").split(",") if c.strip()]
    missing = [c for c in info if c not in header]
    if missing:
        raise InputFileError(path, f"info_columns {missing} are not columns of the table", first_line)
    table = PaperTable(path, meta, [], {}, [], {}, {})
    if meta.get("kind") == "neighbours":
        if header != ["row", "label", "query", "rank", "neighbour"]:
            raise InputFileError(path, "a neighbours table has the columns row,label,query,rank,neighbour", first_line)
        for record in reader:
            lineno = first_line + reader.line_num - 1
            if not record:
                continue
            if len(record) != 5 or not record[3].isdigit():
                raise InputFileError(path, "expected row,label,query,rank,neighbour with an integer rank", lineno)
            row, label, query, rank, word = record
            if row not in table.labels:
                table.rows.append(row)
                table.labels[row] = label
            words = table.neighbours.setdefault((row, query), [])
            if int(rank) != len(words) + 1:
                raise InputFileError(path, f"rank {rank} out of order for {row}/{query}", lineno)
            words.append(word)
        return table
    table.columns = [c for c in header[2:] if c not in info]
    for record in reader:
        lineno = first_line + reader.line_num - 1
        if not record:
            continue
        if len(record) != len(header):
            raise InputFileError(path, f"expected {len(header)} fields, found {len(record)}", lineno)
        row, label = record[0], record[1]
        if not re.fullmatch(r"[A-Za-z0-9_]+", row) or row in table.labels:
            raise InputFileError(path, f"row id {row!r} is not a unique identifier", lineno)
        table.rows.append(row)
        table.labels[row] = label
        table.info[row] = {c: v for c, v in zip(header, record) if c in info}
        for column, text in zip(header, record):
            if column in ("row", "label") or column in info:
                continue
            table.printed[(row, column)] = text
            if not text.strip():
                table.values[(row, column)] = math.nan
                continue
            match = _VALUE.match(text)
            if not match:
                raise InputFileError(path, f"value {text!r} in column {column!r} is not a number", lineno)
            table.values[(row, column)] = float(match.group(1))
            if match.group(2):
                table.notes[(row, column)] = match.group(2)
    return table


# ------------------------------------------------------------------ tables sheet


# The tagging tables' row keyword for the run's teacher, frozen, through the same tagger (the papers' BERT-base row).
CONTEXTUAL = "contextual"
# Row ids of the tables sheet that are not embeddings of the embeddings sheet.
ROW_KEYWORDS = {"tagging": {CONTEXTUAL}, "cooccurrence": {"cooccurrence"}}


def result_keys(source: str) -> set[str] | None:
    """The first segment a column path of ``source`` may start with (a result's data set key);
    None where the key is a pattern (cooccurrence: ``{row}.<store>``)."""
    if source == "intrinsic":
        from staticvec.evaluate.datasets import DATASETS

        return set(DATASETS)
    if source == "tagging":
        from staticvec.evaluate.tagging.summary import RESULT_KEYS

        return set(RESULT_KEYS.values())
    if source == "classification":
        from staticvec.evaluate.classification_data import DATASET_NAMES

        return set(DATASET_NAMES)
    return None


def load_tables_spec(path: str | os.PathLike, root: str | os.PathLike | None = None,
                     embedding_ids: Iterable[str] | None = None) -> dict:
    """Read and validate the tables sheet; check every row and column against its paper file,
    every column path against the results its source writes and, given ``embedding_ids`` (the
    embeddings sheet), every row against the embeddings the workflow builds: a typo is an error
    naming the sheet, the table and the key, never a silent empty cell."""
    import fnmatch

    path = Path(path)
    root = Path(root) if root is not None else Path(".")
    from staticvec.sheets import load_sheet

    spec = load_sheet(path, SCHEMA, "tables sheet")
    known_ids = None if embedding_ids is None else set(embedding_ids)
    problems = []
    for table_id, entry in spec["tables"].items():
        paper = load_paper_table(root / entry["paper_file"])
        where = f"{path}: tables.{table_id}"
        # extra rows (ours only, no paper number) are rows like the others once they pass the same checks
        extra = entry.pop("extra_rows", None) or {}
        clash = [r for r in extra if r in paper.rows or r in entry["rows"]]
        if clash:
            problems.append(f"{where}.extra_rows: {clash} are rows of {entry['paper_file']} (map them under 'rows')")
        missing_rows = [r for r in entry["rows"] if r not in paper.rows]
        if missing_rows:
            problems.append(f"{where}.rows: {missing_rows} are not rows of {entry['paper_file']}")
        entry["rows"] = {**entry["rows"], **{r: e for r, e in extra.items() if r not in clash}}
        extra_ids = {r for r in extra if r not in clash}
        keys = result_keys(entry["source"])
        for column, target in (entry.get("columns") or {}).items():
            if isinstance(target, str) and keys is not None and target.split(".")[0] not in keys:
                problems.append(f"{where}.columns.{column}: {target!r} is not a result of a {entry['source']} "
                                f"table; known keys: {', '.join(sorted(keys))}")
        if known_ids is not None:
            allowed = known_ids | ROW_KEYWORDS.get(entry["source"], set())
            for row, mapping in entry["rows"].items():
                if isinstance(mapping, dict):
                    if mapping.get("by") and mapping["by"] not in (entry.get("columns") or {}):
                        problems.append(f"{where}.rows.{row}: by {mapping['by']!r} is not a column of the table")
                    if not any(fnmatch.fnmatchcase(k, mapping["best_of"]) for k in known_ids):
                        problems.append(f"{where}.rows.{row}: best_of {mapping['best_of']!r} matches no embedding "
                                        f"of the embeddings sheet")
                elif mapping is not None and mapping not in allowed:
                    key = "extra_rows" if row in extra_ids else "rows"
                    problems.append(f"{where}.{key}.{row}: {mapping!r} is not an embedding of the embeddings sheet"
                                    + ("" if row in extra_ids else " (null shows the paper's numbers only)"))
        if entry["source"] == "intrinsic" and paper.kind != "neighbours" and "protocol" not in entry:
            problems.append(f"{where}: an intrinsic table needs a 'protocol'")
        if paper.kind == "neighbours":
            if entry.get("columns"):
                problems.append(f"{where}: a neighbours table has no 'columns'")
            continue
        unknown = [c for c in entry.get("columns", {}) if c not in paper.columns]
        if unknown:
            problems.append(f"{where}.columns: {unknown} are not columns of {entry['paper_file']} ({paper.columns})")
        for column, target in entry.get("columns", {}).items():
            if isinstance(target, dict):
                bad = [c for c in target["mean"] if c not in entry["columns"] or isinstance(entry["columns"][c], dict)]
                if bad:
                    problems.append(f"{where}.columns.{column}: mean of {bad}, which are not mapped result columns")
    if problems:
        raise StaticvecError("invalid tables sheet:\n  - " + "\n  - ".join(problems))
    return spec


def table_result_ids(entry: dict, known_ids=()) -> list[str]:
    """Our result ids a table needs (its non-null row mappings, first occurrence order); a
    ``best_of`` glob is expanded over ``known_ids``."""
    import fnmatch

    ids = []
    for mapping in entry["rows"].values():
        if isinstance(mapping, dict):
            ids += [k for k in known_ids if fnmatch.fnmatchcase(k, mapping["best_of"])]
        elif mapping:
            ids.append(mapping)
    return list(dict.fromkeys(ids))


def table_result_paths(entry: dict, pattern: str, available=None, **fields) -> dict[str, str]:
    """``{result id: path}`` for a table: ``pattern`` is formatted with ``emb`` (the id),
    the table's ``protocol`` and ``fields``; ids not in ``available`` (when given) are left out."""
    ids = table_result_ids(entry)
    if available is not None:
        ids = [i for i in ids if i in set(available)]
    return {i: pattern.format(emb=i, protocol=entry.get("protocol", ""), **fields) for i in ids}


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
        for emb, items in our_results.items() if not emb.endswith(RECORD_SUFFIX)
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
    paper = load_paper_table(Path(root) / entry["paper_file"])
    if paper.kind == "neighbours":
        frame = build_neighbours(paper, results, entry["rows"], meta, entry.get("queries"))
    else:
        frame = build_comparison(paper, results, entry["rows"], entry.get("columns", {}), meta,
                                 entry.get("record_columns"))
    write_comparison(frame, out_csv, out_md)
