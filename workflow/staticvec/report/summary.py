"""The cross-paper summary: every method of the four papers on the same corpus, teacher and evaluation.

No single paper has this table: each compares its method with baselines trained elsewhere. Here
every *main* embedding of the embeddings sheet (sweep variants left out) is scored on the same
intrinsic data sets under each evaluation protocol (the sheet's ``summary.protocols``: ``web`` —
OOV words as the mean vector, SemGloVe / Context-to-Vec / Wang et al. — and ``muse`` — OOV pairs
dropped, first 200k words, X2Static), one block per protocol.

A cell is the mean over seeds and its 95 % confidence interval from the t distribution,
``mean ± t(0.975, n-1) · s / √n`` (s: the sample standard deviation); with one seed there is no
interval (``n=1``; :mod:`staticvec.stats`). Coverage (found / total items) is reported beside every score in the CSV and
in a coverage block of the Markdown. Scores are ×100 like the papers.

Command line (the summary rule)::

    staticvec report summary --spec config/figures.yaml --manifest M.json --rows ROWS.json \\
        --out-csv S.csv --out-md S.md [--out-html S.html]  web/glove=results/.../intrinsic.web.json ...
"""

from __future__ import annotations

import math

from staticvec.errors import StaticvecError

PROTOCOL_NOTES = {
    "web": "OOV words replaced by the mean vector (web benchmarks: SemGloVe, Context-to-Vec, Wang et al.'s baselines)",
    "muse": "pairs with OOV words dropped, first 200,000 words (MUSE: X2Static)",
    "drop": "pairs with OOV words dropped, whole vocabulary",
}


def build_summary(rows: list[dict], results: dict, protocols: list[str], columns: list[str], scale: float = 100.0):
    """Long DataFrame: protocol, embedding, method, column, n, mean, sd, ci95_half, ci95_low, ci95_high,
    found, total, seeds_given. ``rows``: [{"id", "method", "description"}] in display order;
    ``results``: {(protocol, embedding id): [result file or dict, one per seed]}."""
    import pandas as pd

    from staticvec.report.tables import load_result, result_value
    from staticvec.stats import t_interval

    records = []
    for protocol in protocols:
        for row in rows:
            runs = [load_result(r) for r in results.get((protocol, row["id"]), [])]
            for column in columns:
                triples = [result_value(r, column) for r in runs]
                stats = t_interval([None if v is None else v * scale for v, _, _ in triples])  # 95 %
                found = [f for _, f, _ in triples if f is not None]
                totals = [t for _, _, t in triples if t is not None]
                records.append({
                    "protocol": protocol, "embedding": row["id"], "method": row.get("method"), "column": column,
                    "n": stats.n, "mean": stats.mean, "sd": stats.sd, "ci95_half": stats.half_width,
                    "ci95_low": stats.low, "ci95_high": stats.high,
                    # coverage depends on the vocabulary only; seeds of one method share it (min if not)
                    "found": min(found) if found else None, "total": max(totals) if totals else None,
                    "seeds_given": len(runs),
                })
    return pd.DataFrame.from_records(records)


def summary_caption(manifest: dict, protocols: list[str]) -> str:
    made = manifest.get("provenance_caption")
    tokens = manifest.get("tokens")
    size = f"{tokens / 1e6:.1f}M tokens" if isinstance(tokens, (int, float)) else "unknown size"
    return (f"Summary of every method on one corpus ({manifest.get('corpus', 'not recorded')}, {size}), one teacher "
            f"({manifest.get('teacher', 'not recorded')}) and one evaluation; Spearman / accuracy / purity ×100, mean "
            f"± 95 % confidence half-width over seeds (t distribution; n=1: one seed, no interval); "
            f"protocols: {'; '.join(f'{p}: {PROTOCOL_NOTES.get(p, p)}' for p in protocols)}."
            + (f" Made with: {made}." if made else ""))


def _cell(r, best: bool) -> str:
    if r["mean"] is None or (isinstance(r["mean"], float) and math.isnan(r["mean"])):
        return "—"
    text = f"{r['mean']:.1f}"
    if r["ci95_half"] is not None and not (isinstance(r["ci95_half"], float) and math.isnan(r["ci95_half"])):
        text += f" ± {r['ci95_half']:.1f}"
    return f"**{text}**" if best else text


def to_markdown(frame, caption: str) -> str:
    from staticvec.report.figures import metric_label

    lines = [f"**{caption}**", ""]
    if frame.empty:
        return "\n".join(lines + ["(no embeddings)", ""])
    columns = list(dict.fromkeys(frame["column"]))
    for protocol, block in frame.groupby("protocol", sort=False):
        lines += [f"### Protocol `{protocol}`: {PROTOCOL_NOTES.get(protocol, protocol)}", "",
                  "| embedding | method | n | " + " | ".join(metric_label(c) for c in columns) + " |",
                  "| --- | --- | --- | " + " | ".join("---" for _ in columns) + " |"]
        best = {c: block[block["column"] == c]["mean"].max(skipna=True) for c in columns}
        for emb, g in block.groupby("embedding", sort=False):
            by_col = {r["column"]: r for _, r in g.iterrows()}
            n = int(g["n"].max()) if len(g) else 0
            n_text = "—" if n == 0 else "1 (no interval)" if n == 1 else str(n)
            cells = [_cell(by_col[c], _is_best(by_col[c]["mean"], best[c])) for c in columns]
            lines.append(f"| {emb} | {g['method'].iloc[0] or ''} | {n_text} | " + " | ".join(cells) + " |")
        lines += ["", f"Coverage under `{protocol}` (found / total items):", "",
                  "| embedding | " + " | ".join(metric_label(c) for c in columns) + " |",
                  "| --- | " + " | ".join("---" for _ in columns) + " |"]
        for emb, g in block.groupby("embedding", sort=False):
            by_col = {r["column"]: r for _, r in g.iterrows()}
            cells = [f"{int(by_col[c]['found'])}/{int(by_col[c]['total'])}" if _present(by_col[c]["found"])
                     and _present(by_col[c]["total"]) else "—" for c in columns]
            lines.append(f"| {emb} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append("Bold: the best mean of a column within a protocol block.")
    return "\n".join(lines) + "\n"


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _is_best(value, best) -> bool:
    return _present(value) and _present(best) and math.isclose(value, best)


def write_summary(frame, caption: str, csv_path, md_path, html_path=None, claims: dict | None = None) -> None:
    """``claims``: {group: {holds, fails, undecided, not_tested, flagged}} (tables/claims.json's counts:
    each paper, then the claims beyond the papers), one line per group above the table."""
    from staticvec.files import atomic_open
    from staticvec.report.claims import counts_lines, to_html_block

    with atomic_open(csv_path, "wt") as fh:
        fh.write(f"# {caption}\n")
        frame.to_csv(fh, index=False, lineterminator="\n")
    markdown = to_markdown(frame, caption)
    if claims:
        markdown = ("**The papers' claims on this run** (tables/claims.md):\n\n"
                    + "".join(f"- {line}\n" for line in counts_lines(claims)) + "\n" + markdown)
    with atomic_open(md_path, "wt") as fh:
        fh.write(markdown)
    if html_path:
        page = to_html(frame, caption)
        if claims:
            page = page.replace("</style></head><body>", "</style></head><body>" + to_html_block(claims), 1)
        with atomic_open(html_path, "wt") as fh:
            fh.write(page)


def to_html(frame, caption: str) -> str:
    """A self-contained HTML page of the summary (shown inline by `snakemake --report`)."""
    import html

    from staticvec.report.figures import metric_label

    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Summary</title><style>"
             "body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse;margin-bottom:1em}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,td:nth-child(2){text-align:left}"
             "</style></head><body>", f"<p><b>{html.escape(caption)}</b></p>"]
    if frame.empty:
        return "".join(parts) + "<p>(no embeddings)</p></body></html>\n"
    columns = list(dict.fromkeys(frame["column"]))
    for protocol, block in frame.groupby("protocol", sort=False):
        parts.append(f"<h3>Protocol {html.escape(protocol)}: {html.escape(PROTOCOL_NOTES.get(protocol, protocol))}</h3>")
        parts.append("<table><tr><th>embedding</th><th>method</th><th>n</th>"
                     + "".join(f"<th>{html.escape(metric_label(c))}</th>" for c in columns) + "</tr>")
        best = {c: block[block["column"] == c]["mean"].max(skipna=True) for c in columns}
        for emb, g in block.groupby("embedding", sort=False):
            by_col = {r["column"]: r for _, r in g.iterrows()}
            cells = []
            for c in columns:
                r = by_col[c]
                text = html.escape(_cell(r, False))
                if _present(r["found"]) and _present(r["total"]):
                    text += f"<br><small>{int(r['found'])}/{int(r['total'])}</small>"
                cells.append(f"<td>{'<b>' + text + '</b>' if _is_best(r['mean'], best[c]) else text}</td>")
            parts.append(f"<tr><td>{html.escape(emb)}</td><td>{html.escape(g['method'].iloc[0] or '')}</td>"
                         f"<td>{int(g['n'].max())}</td>" + "".join(cells) + "</tr>")
        parts.append("</table>")
    return "".join(parts) + "</body></html>\n"


def summary_from_files(spec: str, rows: list, results: dict[tuple[str, str], list[str]], out_csv: str, out_md: str,
                       out_html: str | None = None, manifest: str | None = None, claims: str | None = None,
                       root: str = ".", reduced: dict | None = None) -> None:
    """The cross-paper summary table from files: ``rows`` = [{"id": ..., "method": ...}] in order,
    ``results`` = {(protocol, id): [files]} (one per seed), the report sheet ``spec`` (its summary
    block), the run ``manifest`` (caption) and the ``claims`` verdicts (count lines on top); what
    ``staticvec report summary`` does."""
    from staticvec.files import read_json
    from staticvec.sheets.figures import load_figures_spec, summary_columns_of

    figures = load_figures_spec(spec, root=root)
    protocols = (figures.get("summary") or {}).get("protocols", ["web"])
    columns = summary_columns_of(figures)
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise StaticvecError("--rows: expected a JSON list of {\"id\": ..., \"method\": ...}")
    unknown = sorted({p for p, _ in results} - set(protocols))
    if unknown:
        raise StaticvecError(f"results given for protocols {unknown}, which the summary does not show ({protocols})")
    from staticvec.report.provenance import reduced_text

    run = read_json(manifest) if manifest else {}
    caption = summary_caption(run, protocols)
    below = reduced_text(reduced, run.get("tokens"))
    caption = f"{caption} {below}" if below else caption
    frame = build_summary(rows, results, protocols, columns, float((figures.get("summary") or {}).get("scale", 100)))
    counts = read_json(claims)["counts"] if claims else None
    write_summary(frame, caption, out_csv, out_md, out_html, counts)
