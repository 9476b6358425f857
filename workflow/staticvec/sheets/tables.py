"""The tables sheet (``config/tables.yaml``) and the transcribed paper tables it maps, read and checked.

A tables-sheet entry maps a transcribed paper table (``resources/paper_tables/<paper>_table<N>.csv``; format in
that folder's README) onto our results: ``rows`` (paper row -> embedding id, ``{best_of: glob}`` or null),
``columns`` (paper column -> result path, or ``{"mean": [paper columns]}``), ``source`` and ``protocol``.
:func:`load_tables_spec` checks every row and column against its paper file and the results its source writes,
and, given the embeddings sheet's ids, every row against the embeddings the workflow builds. Rendering the
comparison is :mod:`staticvec.report.tables`'s.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from staticvec.errors import InputFileError, StaticvecError
from staticvec.sheets.schema import load_sheet

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "tables.schema.yaml"

_VALUE = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:\((.*)\))?\s*$")


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
    path = Path(path)
    root = Path(root) if root is not None else Path(".")
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
