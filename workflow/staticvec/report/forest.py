"""A forest plot of the claims, one figure per paper (and one for the claims beyond the papers).

Every comparison of every claim of the group is a row, under its claim's id and verdict: ours as the
paired difference (points) with its interval (a diamond for an exact difference of deterministic
results, an open circle for a difference that was not tested, e.g. one seed), the paper's own
difference from its printed table (×), the tolerance band of the comparison shaded (±tol for a tie,
[−tol, 0] for "not worse by more than tol"), and the part's verdict as the colour (after Holm's
adjustment, as in ``tables/claims.md``). So "fails by 30 points" and "fails by a hair" look different.

Drawn from ``tables/claims.json`` (:mod:`staticvec.report.claims`), which holds every number plotted;
the figure adds nothing to it. Command line (the claims_figure rule)::

    staticvec report claims-figure --claims C.json --group semglove --out-pdf F.pdf --out-png F.png
"""

from __future__ import annotations

import math
import textwrap

from staticvec.errors import StaticvecError

#: the part's verdict -> marker colour (colour-blind safe: blue / vermilion / orange / grey)
COLOURS = {"holds": "#0072B2", "fails": "#D55E00", "undecided": "#E69F00", "not tested": "#9E9E9E"}
ROW_INCHES = 0.2


def forest_rows(records: list[dict], group: str) -> list[dict]:
    """The rows of one group's plot, top to bottom: a header per claim, then one row per comparison."""
    rows = []
    for r in (x for x in records if x["group"] == group):
        rows.append({"kind": "claim", "label": f"{r['id']} ({r['where']}): {r['verdict_text']}", "verdict": r["verdict"]})
        for part in r["parts"]:
            for c in part["alternatives"]:
                label = c["comparison"] + (f" [{c['chosen'].split(': ')[-1]}]" if c.get("chosen") else "")
                if len(part["alternatives"]) > 1:
                    label = "either " + label
                rows.append({"kind": "comparison", "label": label, "status": part["status"],
                             "relation": c["relation"], "tol": c["tol"], "mean": c.get("mean"), "low": c.get("low"),
                             "high": c.get("high"), "exact": c.get("exact", False),
                             "tested": c.get("p_hold") is not None, "paper": c.get("paper_value")})
    return rows


def _limits(rows: list[dict]) -> tuple[float, float]:
    values = [0.0]
    for row in rows:
        for key in ("mean", "low", "high", "paper"):
            if row.get(key) is not None and math.isfinite(row[key]):
                values.append(row[key])
        if row.get("tol"):
            values += [-row["tol"], row["tol"]]
    low, high = min(values), max(values)
    pad = 0.06 * (high - low or 1.0)
    return low - pad, high + pad


def draw_forest(rows: list[dict], title: str):
    from staticvec.report.figures import _pyplot

    plt = _pyplot()
    height = max(2.5, ROW_INCHES * len(rows) + 1.2)
    fig, ax = plt.subplots(figsize=(10.0, height))
    # margins in inches, whatever the height: the x label ends near the bottom edge, where the caption starts
    fig.subplots_adjust(bottom=0.5 / height, top=1 - 0.75 / height, left=0.38, right=0.98)
    left, right = _limits(rows)
    ax.set_xlim(left, right)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.axvline(0.0, color="black", linewidth=0.8)
    labels = []
    for y, row in enumerate(rows):
        if row["kind"] == "claim":
            if y:
                ax.axhline(y - 0.5, color="#DDDDDD", linewidth=0.5)
            labels.append(textwrap.shorten(row["label"], 95, placeholder="…"))
            continue
        labels.append(textwrap.shorten(row["label"], 70, placeholder="…"))
        tol = row["tol"] or 0.0
        if row["relation"] == "~" and tol:
            ax.fill_betweenx([y - 0.4, y + 0.4], -tol, tol, color="#CCCCCC", alpha=0.6, linewidth=0)
        elif row["relation"] == ">=" and tol:
            ax.fill_betweenx([y - 0.4, y + 0.4], -tol, 0.0, color="#CCCCCC", alpha=0.6, linewidth=0)
        colour = COLOURS[row["status"]]
        if row["mean"] is not None:
            if row["low"] is not None and not row["exact"]:
                ax.plot([row["low"], row["high"]], [y, y], color=colour, linewidth=1.6)
            marker = "D" if row["exact"] else "o"
            face = colour if row["tested"] else "none"
            ax.plot([row["mean"]], [y], marker=marker, markersize=4.5, color=colour, markerfacecolor=face,
                    linestyle="none")
        else:
            ax.text(0.0, y, "  no result", fontsize=6, color=COLOURS["not tested"], va="center")
        if row["paper"] is not None:
            ax.plot([row["paper"]], [y], marker="x", markersize=5, color="black", linestyle="none")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=6.5)
    for tick, row in zip(ax.get_yticklabels(), rows):
        if row["kind"] == "claim":
            tick.set_fontweight("bold")
            tick.set_color(COLOURS.get(row["verdict"], "black"))
    ax.tick_params(axis="y", length=0)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_xlabel("difference left − right, points (×100): ours, mean and 95 % interval over paired seeds; ×: the paper's",
                  fontsize=8)
    ax.set_title(title, fontsize=10, pad=24)
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="-", label=s) for s, c in COLOURS.items()]
    handles += [plt.Line2D([], [], color="grey", marker="D", linestyle="none", label="exact (deterministic)"),
                plt.Line2D([], [], color="grey", marker="o", markerfacecolor="none", linestyle="none",
                           label="not tested (no interval)"),
                plt.Line2D([], [], color="black", marker="x", linestyle="none", label="the paper's difference"),
                plt.Rectangle((0, 0), 1, 1, color="#CCCCCC", alpha=0.6, label="tolerance band")]
    # between the axes and the title (the caption goes under the axes)
    ax.legend(handles=handles, fontsize=6.5, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=8, frameon=False,
              handlelength=1.5, columnspacing=1.0, borderaxespad=0.2)
    return fig


def forest_from_files(claims: str, group: str, out_pdf: str, out_png: str) -> int:
    """Draw ``group``'s forest plot from ``tables/claims.json``; returns the number of comparisons drawn."""
    from staticvec.files import read_json
    from staticvec.sheets.claims import GROUPS
    from staticvec.report.figures import add_caption, save_figure

    data = read_json(claims)
    records = data.get("claims") or []
    known = list(dict.fromkeys(r["group"] for r in records))
    if group not in known:
        raise StaticvecError(f"{claims}: no claim of group {group!r}; the groups are {', '.join(known) or 'none'}")
    rows = forest_rows(records, group)
    title = f"{GROUPS.get(group, group)}: the claims on this run"
    fig = draw_forest(rows, title)
    add_caption(fig, [data.get("caption", ""), data.get("rule", "").replace("**", "")], width=170)
    save_figure(fig, title, out_pdf, out_png, dpi=200 if len(rows) <= 60 else 110)
    return sum(row["kind"] == "comparison" for row in rows)
