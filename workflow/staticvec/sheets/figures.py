"""The figures sheet (``config/figures.yaml``), read and checked against the embeddings sheet's sweeps and
embeddings, the evaluation data sets and protocols. Drawing the figures is :mod:`staticvec.report.figures`'s.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from staticvec.errors import StaticvecError
from staticvec.sheets.schema import load_sheet

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "figures.schema.yaml"
FIGURE_ID = re.compile(r"^([a-z0-9]+)_(figure[0-9]+[a-z]?)$")


def figure_parts(fid: str) -> tuple[str, str]:
    """``semglove_figure2a`` -> (``semglove``, ``figure2a``): the figure's folder and file name."""
    match = FIGURE_ID.match(fid)
    if not match:
        raise StaticvecError(f"figure id {fid!r} is not <paper>_figure<N>[a-z]")
    return match.group(1), match.group(2)


def summary_columns_of(spec: dict) -> list[str]:
    """The run summary's columns: the figures sheet's ``summary.columns`` where it lists them, else every
    data set the registry puts in the summary (a new data set shows without a sheet edit)."""
    from staticvec.evaluate.datasets import summary_columns

    summary = spec.get("summary") or {}
    return list(summary["columns"]) if "columns" in summary else summary_columns()


def load_figures_spec(path, sheet=None, protocols=None, root=".") -> dict:
    """Read and validate the report sheet.

    ``sheet`` (an :class:`~staticvec.sheets.EmbeddingSheet`) and ``protocols`` (config
    ``evaluation.protocols``), when given, are checked against every reference; all problems are
    reported at once.
    """
    from staticvec.evaluate.datasets import DATASETS

    path = Path(path)
    spec = load_sheet(path, SCHEMA, "figures sheet")
    problems = []
    root = Path(root)

    def check_metrics(where, metrics):
        unknown = [m for m in metrics if m.split(".")[0] not in DATASETS]
        if unknown:
            problems.append(f"{where}: {unknown} are not evaluation data sets ({', '.join(DATASETS)})")

    def check_protocol(where, protocol):
        if protocols is not None and protocol not in protocols:
            problems.append(f"{where}: protocol {protocol!r} is not in config evaluation.protocols ({', '.join(protocols)})")

    def check_sweep(where, entry):
        """The entry's sweep of the sheet (None, with the problem noted, if it is not there)."""
        if sheet is None:
            return None
        sweep = sheet.sweeps.get(entry["sweep"])
        if sweep is None:
            problems.append(f"{where}: sweep {entry['sweep']!r} is not in {sheet.source} (known: {', '.join(sheet.sweeps)})")
            return None
        problems.extend(_check_sweep_use(where, entry, sweep))
        return sweep

    def check_embedding(where, emb):
        if sheet is not None and emb not in sheet:
            known = ", ".join(e for e in sheet.ids() if "~" not in e)
            problems.append(f"{where}: embedding {emb!r} is not in {sheet.source} (known: {known})")

    for fid, entry in spec["figures"].items():
        where = f"{path}: figures.{fid}"
        kind = entry["kind"]
        if kind in ("curve", "bars"):
            check_metrics(where + ".metrics", entry["metrics"])
            check_protocol(where, entry["protocol"])
            check_sweep(where, entry)
        elif kind == "training":
            check_metrics(where + ".metrics", entry["metrics"])
            check_protocol(where, entry["protocol"])
            if any(DATASETS[m].task != "similarity" for m in entry["metrics"] if m in DATASETS):
                problems.append(f"{where}.metrics: a development curve scores a word-similarity set")
            sweep = check_sweep(where, entry)
            if sweep is not None:
                from staticvec.methods import student_methods

                methods = {sheet[b].method for b in sweep.bases if b in sheet}
                if methods - set(student_methods()):
                    problems.append(f"{where}: development curves are recorded by the distillation trainers "
                                    f"({', '.join(student_methods())}), not {sorted(methods)}")
        elif kind in ("tsne", "tsne3d"):
            for emb in entry["embeddings"]:
                check_embedding(where + ".embeddings", emb)
            listed = entry.get("words") or entry.get("pairs")
            if not (root / listed).is_file():
                problems.append(f"{where}: word list {listed} not found")
        elif kind == "attention":
            check_embedding(where + ".embedding", entry["embedding"])
            if sheet is not None and entry["embedding"] in sheet and sheet[entry["embedding"]].method != "bert_sg":
                problems.append(f"{where}: attention weights exist only for method bert_sg, "
                                f"not {sheet[entry['embedding']].method!r}")
    scale = spec.get("corpus_scale")
    if scale:
        where = f"{path}: corpus_scale"
        for k, panel in enumerate(scale["panels"]):
            check_metrics(f"{where}.panels[{k}]", [panel["metric"]])
            check_protocol(f"{where}.panels[{k}]", panel["protocol"])
        sweep = sheet.sweeps.get(scale["sweep"]) if sheet is not None else None
        if sheet is not None and sweep is None:
            problems.append(f"{where}: sweep {scale['sweep']!r} is not in {sheet.source} (known: {', '.join(sheet.sweeps)})")
        elif sweep is not None and sweep.param != "fraction":
            problems.append(f"{where}: sweep {sweep.id!r} varies {sweep.param!r}, not the corpus fraction")
        for emb in scale["lines"]:
            check_embedding(f"{where}.lines", emb)
        reached = [scale["crossing"], *(scale.get("crossing_for") or {}).values()]
        if any(e not in scale["lines"] for e in reached):
            problems.append(f"{where}: crossing {sorted(set(reached) - set(scale['lines']))} must be among its lines")
        for key in ("crossing_for", "paper_tables"):
            extra = sorted(set(scale.get(key) or {}) - set(sweep.bases)) if sweep is not None else []
            if extra:
                problems.append(f"{where}.{key}: {extra} are not bases of sweep {sweep.id!r}")
    summary = spec.get("summary") or {}
    check_metrics(f"{path}: summary.columns", summary_columns_of(spec))
    for protocol in summary.get("protocols", []):
        check_protocol(f"{path}: summary", protocol)
    if problems:
        raise StaticvecError("invalid figures sheet:\n  - " + "\n  - ".join(problems))
    return spec


def _check_sweep_use(where: str, entry: dict, sweep) -> list[str]:
    problems = []
    bases = entry.get("bases") or sweep.bases
    extra = [b for b in bases if b not in sweep.bases]
    if extra:
        problems.append(f"{where}.bases: {extra} are not bases of sweep {sweep.id!r} ({', '.join(sweep.bases)})")
    x = entry.get("x", "value")
    if x in ("fraction", "tokens") and sweep.param != "fraction":
        problems.append(f"{where}: x {x!r} needs a sweep over the corpus fraction; {sweep.id!r} sweeps {sweep.param!r}")
    if x == "value" and entry["kind"] == "curve" and not all(_is_number(v) for v in sweep.values):
        problems.append(f"{where}: sweep {sweep.id!r} has non-numeric values {sweep.values}; draw it as kind: bars")
    if entry.get("annotate") and entry["annotate"] not in sweep.linked:
        problems.append(f"{where}: annotate {entry['annotate']!r} is not a linked parameter of sweep {sweep.id!r} "
                        f"({', '.join(sweep.linked) or 'none'})")
    for k, point in enumerate(entry.get("paper") or []):
        if point["base"] not in bases:
            problems.append(f"{where}.paper[{k}]: base {point['base']!r} is not drawn ({', '.join(bases)})")
        if not any(_same_value(point["value"], v) for v in sweep.values):
            problems.append(f"{where}.paper[{k}]: value {point['value']!r} is not a value of sweep {sweep.id!r}")
        if point["metric"] not in entry["metrics"]:
            problems.append(f"{where}.paper[{k}]: metric {point['metric']!r} is not drawn ({', '.join(entry['metrics'])})")
    return problems


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_value(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    try:
        return math.isclose(float(a), float(b))
    except (TypeError, ValueError):
        return str(a) == str(b)
