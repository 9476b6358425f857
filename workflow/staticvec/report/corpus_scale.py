"""Each method trained from the corpus, over corpus size: what no paper shows and what a user choosing a
method for a corpus of a given size needs.

The report sheet's ``corpus_scale`` block (``config/figures.yaml``) names a sweep of the embeddings sheet over
the corpus fraction (each main row retrained on the first 1/8, 1/4, 1/2 and all of the corpus shards; seed 1),
the rows that need no corpus statistics (Model2Vec, ASE, the teacher's token table), drawn as levels, and the
panels: WS353, SimLex-999 and each claim's averaged metric, each in its protocol. For every method and panel:
its score at each corpus size (the tokens of the shards it trained on, from the corpus manifest), its number in
its paper's table, and the corpus size at which it reaches Model2Vec (:func:`reach`).

One table (``tables/scale/corpus_scale.md`` + ``.csv``) and one figure (``figures/scale/corpus_scale.pdf`` +
``.png`` + ``.manifest.json``) of the same numbers. Command line (the corpus_scale rule)::

    staticvec report corpus-scale --spec config/figures.yaml --tables config/tables.yaml --manifest P.json \\
        --corpus-manifest C.json --sweep '{...}' --points '{base: {fraction: id}}' --panels '[...]' \\
        --out-md T.md --out-csv T.csv --out-pdf F.pdf --out-png F.png  web/glove=results/.../intrinsic.web.json ...
"""

from __future__ import annotations

import math
import textwrap

from staticvec.errors import StaticvecError


# ------------------------------------------------------------------ where a curve reaches a level


def reach(tokens: list[float], scores: list[float | None], level: float | None) -> dict:
    """Where a curve (scores at increasing corpus sizes ``tokens``) reaches ``level`` for good: the corpus size
    from which on every measured score is at or above it.

    - ``above``: every score is (no crossing inside the measured range; ``tokens`` = the smallest size);
    - ``reaches``: the last score below the level is followed by one at or above it; ``tokens`` is where the
      straight line between the two, in log tokens, meets the level:
      ``exp(ln t_i + (level − s_i) / (s_{i+1} − s_i) · (ln t_{i+1} − ln t_i))``;
    - ``below``: the score at the largest size is below the level (``tokens`` = that size: "not within");
    - ``no scores`` / ``no level``: nothing to compare.

    Sizes without a score are left out. ``crossings`` counts the upward crossings (more than one: the curve
    dipped below the level again)."""
    points = sorted((t, s) for t, s in zip(tokens, scores) if s is not None and not math.isnan(s))
    if level is None or (isinstance(level, float) and math.isnan(level)):
        return {"status": "no level", "tokens": None, "crossings": 0}
    if not points:
        return {"status": "no scores", "tokens": None, "crossings": 0}
    below = [i for i, (_, s) in enumerate(points) if s < level]
    crossings = sum(1 for i in range(len(points) - 1) if points[i][1] < level <= points[i + 1][1])
    if not below:
        return {"status": "above", "tokens": points[0][0], "crossings": 0}
    last = below[-1]
    if last == len(points) - 1:
        return {"status": "below", "tokens": points[-1][0], "crossings": crossings}
    (t0, s0), (t1, s1) = points[last], points[last + 1]
    share = (level - s0) / (s1 - s0)  # s1 >= level > s0, so s1 > s0 and 0 < share <= 1
    return {"status": "reaches", "tokens": math.exp(math.log(t0) + share * (math.log(t1) - math.log(t0))),
            "crossings": crossings}


def reach_text(result: dict, reference: str) -> str:
    tokens = result["tokens"]
    if result["status"] == "above":
        return f"above {reference} from the smallest size ({token_text(tokens)})"
    if result["status"] == "reaches":
        again = " (after dipping below again)" if result["crossings"] > 1 else ""
        return f"at {token_text(tokens)} tokens{again}"
    if result["status"] == "below":
        return f"not within {token_text(tokens)} tokens"
    return f"— ({result['status']})"


def token_text(tokens: float) -> str:
    if tokens >= 1e9:
        return f"{tokens / 1e9:.2f}B"
    if tokens >= 1e6:
        return f"{tokens / 1e6:.2f}M"
    return f"{tokens / 1e3:.3g}k" if tokens >= 1e3 else f"{tokens:.0f}"


# ------------------------------------------------------------------ data


def metric_key(metric) -> str:
    """A panel's metric as one string: ``ws353`` or ``mean(ws353, simlex999)``."""
    return metric if isinstance(metric, str) else "mean(" + ", ".join(metric["mean"]) + ")"


def panel_label(panel: dict) -> str:
    from staticvec.report.figures import metric_label

    metric = panel["metric"]
    if isinstance(metric, str):
        return f"{metric_label(metric)} ({panel['protocol']})"
    names = ", ".join(metric_label(m) for m in metric["mean"])
    paper = panel.get("paper")
    return f"{paper + ': ' if paper else ''}mean of {names} ({panel['protocol']})"


def score(result: dict | None, metric, scale: float) -> float | None:
    """A result's value of a data set key, or the mean of several (None if one is missing), × ``scale``."""
    from staticvec.report.tables import result_value

    if result is None:
        return None
    values = []
    for item in [metric] if isinstance(metric, str) else metric["mean"]:
        value = result_value(result, item)[0]
        if value is None or math.isnan(value):
            return None
        values.append(value * scale)
    return sum(values) / len(values)


def corpus_scale_data(spec: dict, panels: list[dict], sweep, points: dict, results: dict, corpus_manifest: dict,
                      tables: dict | None = None, root=".", labels: dict | None = None) -> dict:
    """Everything the table and the figure show.

    ``spec``: the report sheet's ``corpus_scale`` block; ``panels``: [{metric, protocol, tables, claims}]
    (the planning layer's, claim panels included); ``sweep``: the sweep (its bases and fractions); ``points``:
    {base: {fraction text: the embedding whose result is that point}}; ``results``: {(protocol, id): result
    dict}; ``tables``: the tables sheet's tables (the papers' numbers)."""
    from staticvec.report.claims import paper_numbers
    from staticvec.report.figures import _as_sweep, shard_tokens

    sweep = _as_sweep(sweep)
    factor = float(spec.get("scale", 100))
    labels = labels or {}
    fractions = sorted(float(v) for v in sweep.values)
    tokens = {f: float(shard_tokens(corpus_manifest, f)) for f in fractions}
    paper_cache: dict = {}

    def paper_value(base: str, panel: dict):
        wanted = list(panel.get("tables") or []) + [t for t in [(spec.get("paper_tables") or {}).get(base)] if t]
        for table in dict.fromkeys(wanted):
            entry = (tables or {}).get(table)
            if entry is None or entry.get("source", "intrinsic") != "intrinsic":
                continue
            if table not in paper_cache:
                paper_cache[table] = paper_numbers(entry, root)
            value, _, _ = paper_cache[table].value(base, panel["metric"], factor)
            if value is not None:
                return {"value": value, "table": table}
        return None

    out = []
    for panel in panels:
        protocol, metric = panel["protocol"], panel["metric"]
        levels = {line: score(results.get((protocol, line)), metric, factor) for line in spec["lines"]}
        curves = []
        for base in sweep.bases:
            ids = points.get(base) or {}
            pts = [{"fraction": f, "tokens": tokens[f], "id": ids.get(f"{f:g}"),
                    "score": score(results.get((protocol, ids.get(f"{f:g}"))), metric, factor)} for f in fractions]
            reference = (spec.get("crossing_for") or {}).get(base, spec["crossing"])
            reached = reach([p["tokens"] for p in pts], [p["score"] for p in pts], levels.get(reference))
            curves.append({"base": base, "label": labels.get(base, base), "points": pts, "reference": reference,
                           "reference_label": labels.get(reference, reference),
                           "reach": reached, "reach_text": reach_text(reached, labels.get(reference, reference)),
                           "paper": paper_value(base, panel)})
        out.append({"metric": metric_key(metric), "protocol": protocol, "label": panel_label(panel),
                    "claims": list(panel.get("claims") or []), "curves": curves,
                    "lines": [{"id": line, "label": labels.get(line, line), "score": levels[line]} for line in spec["lines"]]})
    return {"fractions": fractions, "tokens": [tokens[f] for f in fractions], "panels": out, "crossing": spec["crossing"]}


# ------------------------------------------------------------------ table


def _num(value) -> str:
    return "—" if value is None else f"{value:.1f}"


def to_markdown(data: dict, caption: str) -> str:
    from staticvec.report.markdown import table

    lines = [f"**{caption}**", ""]
    sizes = [token_text(t) for t in data["tokens"]]
    for panel in data["panels"]:
        claims = f" — the metric of {', '.join(panel['claims'])}" if panel["claims"] else ""
        lines += [f"### {panel['label']}{claims}", ""]
        rows = []
        for curve in panel["curves"]:
            paper = curve["paper"]
            rows.append([curve["label"], *(_num(p["score"]) for p in curve["points"]),
                         f"{paper['value']:.1f} ({paper['table']})" if paper else "—",
                         curve["reach_text"] if curve["reference"] == data["crossing"]
                         else f"{curve['reach_text']} (vs {curve['reference_label']})"])
        for line in panel["lines"]:
            rows.append([f"{line['label']} (level)", *(_num(line["score"]) for _ in sizes), "", ""])
        lines += table(["method", *(f"{s} tokens" for s in sizes), "paper (table)", "reaches Model2Vec"], rows,
                       align=["l", *("r" for _ in sizes), "r", "l"])
        lines.append("")
    return "\n".join(lines)


def csv_rows(data: dict) -> list[dict]:
    rows = []
    for panel in data["panels"]:
        head = {"panel": panel["label"], "metric": panel["metric"], "protocol": panel["protocol"]}
        for curve in panel["curves"]:
            for p in curve["points"]:
                rows.append({**head, "row": curve["base"], "kind": "curve", "embedding": p["id"], "fraction": p["fraction"],
                             "tokens": int(p["tokens"]), "score": p["score"]})
            if curve["paper"]:
                rows.append({**head, "row": curve["base"], "kind": "paper", "embedding": curve["paper"]["table"],
                             "score": curve["paper"]["value"]})
            rows.append({**head, "row": curve["base"], "kind": f"reaches {curve['reference']}",
                         "reach_status": curve["reach"]["status"],
                         "tokens": None if curve["reach"]["tokens"] is None else round(curve["reach"]["tokens"])})
        for line in panel["lines"]:
            rows.append({**head, "row": line["id"], "kind": "level", "embedding": line["id"], "score": line["score"]})
    return rows


# ------------------------------------------------------------------ figure


def draw(data: dict, title: str):
    from staticvec.report.figures import _COLOURS, _LINESTYLES, _pyplot

    plt = _pyplot()
    panels = data["panels"]
    cols = min(3, len(panels)) or 1
    rows = math.ceil(len(panels) / cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(5.0 * cols, 3.9 * rows + 0.8), squeeze=False)
    xs = data["tokens"]
    x_paper = xs[-1] * 2.4  # the papers' numbers: a column right of the measured range (their corpora are ~100x larger)
    for ax, panel in zip(axes.flat, panels):
        for k, curve in enumerate(panel["curves"]):
            colour = _COLOURS[k % len(_COLOURS)]
            ys = [math.nan if p["score"] is None else p["score"] for p in curve["points"]]
            ax.plot(xs, ys, "-", marker="o", markersize=3.5, color=colour, label=curve["label"])
            if curve["paper"]:
                ax.plot([x_paper], [curve["paper"]["value"]], linestyle="none", marker="D", markerfacecolor="none",
                        markersize=6, color=colour)
        for k, line in enumerate(panel["lines"]):
            if line["score"] is not None:
                ax.axhline(line["score"], color="0.25", linewidth=1.1, linestyle=_LINESTYLES[(k + 1) % len(_LINESTYLES)],
                           label=f"{line['label']} (level)")
        ax.axvline(math.sqrt(xs[-1] * x_paper), color="0.6", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xticks([*xs, x_paper])
        ax.set_xticklabels([token_text(x) for x in xs] + ["paper"], fontsize=7)
        ax.minorticks_off()
        ax.set_title(textwrap.fill(panel["label"], 60), fontsize=8)
        ax.set_xlabel("corpus tokens", fontsize=8)
        ax.set_ylabel("score ×100", fontsize=8)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles, names = axes.flat[0].get_legend_handles_labels()
    from matplotlib.lines import Line2D

    handles.append(Line2D([], [], marker="D", markerfacecolor="none", linestyle="none", color="black"))
    names.append("paper's number (its corpus and teacher)")
    fig.legend(handles, names, loc="upper center", ncol=5, fontsize=7, bbox_to_anchor=(0.5, 1.0))
    fig.suptitle(title, fontsize=10, y=1.04)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


# ------------------------------------------------------------------ files


def caption(spec: dict, data: dict, manifest: dict, labels: dict) -> str:
    from fractions import Fraction

    lines = ", ".join(labels.get(e, e) for e in spec["lines"])
    made = manifest.get("provenance_caption")
    shares = [str(Fraction(f).limit_denominator(1000)) if f < 1 else "all" for f in data["fractions"]]
    return ("Each method trained from the corpus, over corpus size (not in any paper): each method's main row "
            "retrained on the first " + ", ".join(shares) + " of the corpus shards (x: the tokens of the shards it "
            "read), seed 1; levels: " + lines + " (the rows that learn nothing from corpus statistics; ASE averages "
            "the teacher over the whole corpus). \"Reaches Model2Vec\": the corpus size from which on the curve stays at or above the "
            "Model2Vec level (X2Static: Model2Vec at the teacher's width), interpolated linearly in log tokens "
            "between the measured sizes. Paper: the method's number in its paper's table (the paper's own corpus of "
            "about 1.1–1.3B tokens and teacher)." + (f" Made with: {made}." if made else ""))


def corpus_scale_from_files(spec: str, tables: str, panels: list, sweep: str, points: dict,
                            results: dict[tuple[str, str], list[str]], corpus_manifest: str, out_md: str, out_csv: str,
                            out_pdf: str, out_png: str, out_manifest: str | None = None, manifest: str | None = None,
                            root: str = ".") -> dict:
    """The table and the figure from files (what ``staticvec report corpus-scale`` does); ``results``:
    {(protocol, id): [files]} (the first file of each is read: the curves are seed 1)."""
    import csv
    import re

    from staticvec.files import atomic_open, atomic_path, read_json, write_json
    from staticvec.report.figures import _jsonable, _pyplot, add_caption
    from staticvec.report.tables import load_result
    from staticvec.sheets.figures import load_figures_spec
    from staticvec.sheets.tables import load_tables_spec

    sheet = load_figures_spec(spec, root=root)
    block = sheet.get("corpus_scale")
    if not block:
        raise StaticvecError(f"{spec}: no corpus_scale block")
    if not isinstance(panels, list) or not all(isinstance(p, dict) and "metric" in p and "protocol" in p for p in panels):
        raise StaticvecError("--panels: expected a JSON list of {\"metric\": ..., \"protocol\": ...}")
    loaded = {key: load_result(files[0]) for key, files in results.items()}
    labels = sheet.get("labels") or {}
    run = read_json(manifest) if manifest else {}
    data = corpus_scale_data(block, panels, sweep, points, loaded, read_json(corpus_manifest),
                             load_tables_spec(tables, root)["tables"] if tables else None, root, labels)
    text = caption(block, data, run, labels)
    with atomic_open(out_md, "wt") as fh:
        fh.write(to_markdown(data, text))
    rows = csv_rows(data)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with atomic_open(out_csv, "wt") as fh:
        fh.write(f"# {text}\n")
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if row.get(k) is None else row[k] for k in fields})
    title = "Each method trained from the corpus, over corpus size"
    fig = draw(data, title)
    add_caption(fig, [text])
    from staticvec.report.figures import figure_metadata

    try:
        for out, fmt in ((out_pdf, "pdf"), (out_png, "png")):
            with atomic_path(out) as tmp:
                fig.savefig(tmp, format=fmt, bbox_inches="tight", dpi=200 if fmt == "png" else None,
                            metadata=figure_metadata(fmt, title))
    finally:
        _pyplot().close(fig)
    record = {"figure": "corpus_scale", "title": title, "caption": text, "spec": block, "panels": panels,
              "files": {"md": str(out_md), "csv": str(out_csv), "pdf": str(out_pdf), "png": str(out_png)},
              "results": {f"{p}/{e}": [str(f) for f in files] for (p, e), files in results.items()},
              "provenance": {k: v for k, v in run.items() if k != "provenance_caption"}, "data": _jsonable(data)}
    write_json(out_manifest or re.sub(r"\.pdf$", "", str(out_pdf)) + ".manifest.json", record)
    return record
