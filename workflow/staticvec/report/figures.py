"""The papers' figures, redrawn from our results: development curves, bars, t-SNE maps (2-D and 3-D)
and the attention heat map, each a PDF + PNG with a manifest beside it.

The report sheet (``config/figures.yaml``, schema ``workflow/schemas/figures.schema.yaml``) lists the
figures; :func:`staticvec.sheets.figures.load_figures_spec` validates it and, given the embeddings sheet, checks every sweep,
embedding and word-list reference (a wrong id is an error naming the figure and the known ids).

Data and drawing are separate: ``curve_data`` / ``bar_data`` / ``tsne_panels`` / ``attention_matrix``
compute what is plotted (plain dicts, also written to the manifest), ``draw_*`` turn it into a
matplotlib figure (headless Agg backend), and :func:`make_figure` writes
``<figure>.pdf``, ``<figure>.png`` and ``<figure>.manifest.json`` (the run manifest's provenance plus
what the figure used: embeddings, seeds, result files, metric, protocol, and the plotted numbers).
The provenance caption line (corpus, teacher, seeds, config hash, commit, date) is drawn under
every figure.

Conventions: scores are multiplied by the figure's ``scale`` (100: the papers' Spearman ×100);
several seeds give the mean and a ±1 s.d. bar; a value a result does not have (an OOV-only set, a
missing run) is a gap in the line, never a zero.

Command line (the figure rule)::

    staticvec report figure --spec config/figures.yaml --figure semglove_figure2a --manifest M.json \\
        --sweep '{"id": ..., "bases": ..., "param": ..., "values": ...}' \\
        --out-pdf F.pdf --out-png F.png  glove~dim50=results/.../intrinsic.web.json ...
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import numpy as np

from staticvec.errors import InputFileError, StaticvecError
from staticvec.evaluate.datasets import dataset_label
from staticvec.sheets.figures import load_figures_spec

_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
            "#bcbd22"]
_LINESTYLES = ["-", "--", ":", "-."]


def metric_label(metric: str) -> str:
    """A result path as printed: the data set's label (:data:`staticvec.evaluate.datasets.DATASETS`), then the field."""
    head, _, rest = metric.partition(".")
    return dataset_label(head) + (f" ({rest})" if rest else "")


# ------------------------------------------------------------------ swept values


def value_text(value) -> str:
    """A swept value as the sheet's ``value_labels`` keys write it (booleans lower-case)."""
    return str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)


# ------------------------------------------------------------------ data: curves and bars


def _stats(values: list[float]) -> tuple[float, float | None, int]:
    """(mean, sample s.d. or None, n) of the non-missing values (:func:`staticvec.stats.describe`);
    mean NaN when there are none (a gap in the line)."""
    from staticvec.stats import describe

    d = describe(values)
    return (math.nan if d.mean is None else d.mean), d.sd, d.n


def shard_tokens(corpus_manifest: dict, fraction: float) -> int:
    """Training tokens of the first ``fraction`` of the corpus shards (the corpus manifest's counts)."""
    shards = corpus_manifest.get("shards") or []
    if not shards:
        raise StaticvecError("the corpus manifest lists no shards; cannot convert a corpus fraction to tokens")
    k = round(fraction * len(shards))
    if k < 1 or abs(k - fraction * len(shards)) > 1e-9:
        raise StaticvecError(f"corpus fraction {fraction} is not a whole number of the {len(shards)} shards")
    return int(sum(s["tokens"] for s in shards[:k]))


def _load_runs(results: dict) -> dict[str, list[tuple[str | None, dict]]]:
    """{result id: [(file or None, result dict), ...]} from ids mapped to files, dicts or lists of them."""
    from staticvec.report.tables import load_result

    out = {}
    for rid, items in results.items():
        items = items if isinstance(items, (list, tuple)) else [items]
        out[rid] = [(None if isinstance(i, dict) else str(i), load_result(i)) for i in items]
    return out


def _value_of(run: dict, metric: str, scale: float) -> float | None:
    from staticvec.report.tables import result_value

    value = result_value(run, metric)[0]
    return None if value is None or math.isnan(value) else value * scale


def _point(runs: list[tuple[str | None, dict]], metric: str, scale: float) -> dict:
    values = [_value_of(r, metric, scale) for _, r in runs]
    mean, sd, n = _stats(values)
    return {"y": mean, "sd": sd, "n": n, "runs": len(runs), "files": [f for f, _ in runs if f]}


def curve_data(entry: dict, sweep, results: dict, corpus_manifest: dict | None = None, labels=None) -> dict:
    """The lines of a development curve.

    ``sweep``: the :class:`~staticvec.sheets.Sweep` (or its dict); ``results``: {variant id: result
    file(s) or dict(s)}, one per seed. Returns {"series": [{base, metric, label, points: [{value, x, y,
    sd, n, annotation, files}]}], "paper": [{base, metric, x, y, source}], "missing": [variant ids]}.
    Points are in increasing x; y is NaN where no run has the metric (a gap).
    """
    sweep = _as_sweep(sweep)
    scale = float(entry.get("scale", 100))
    x_kind = entry.get("x", "value")
    bases = entry.get("bases") or sweep.bases
    metrics = entry["metrics"]
    runs = _load_runs(results)
    labels = labels or {}

    def x_of(value) -> float:
        if x_kind == "tokens":
            if corpus_manifest is None:
                raise StaticvecError("x: tokens needs the corpus manifest (--corpus-manifest)")
            return float(shard_tokens(corpus_manifest, float(value)))
        return float(value)

    series, missing = [], []
    for b, base in enumerate(bases):
        for m, metric in enumerate(metrics):
            points = []
            for i, value in enumerate(sweep.values):
                vid = sweep.variant_id(base, value)
                if vid not in runs:
                    missing.append(vid)
                point = _point(runs.get(vid, []), metric, scale)
                note = sweep.linked[entry["annotate"]][i] if entry.get("annotate") else None
                points.append({"id": vid, "value": value, "x": x_of(value), "annotation": note, **point})
            points.sort(key=lambda p: p["x"])
            name = labels.get(base, base)
            label = name if len(metrics) == 1 else metric_label(metric) if len(bases) == 1 else f"{name}, {metric_label(metric)}"
            series.append({"base": base, "metric": metric, "label": label, "colour": b, "style": m, "points": points})
    paper = [{**p, "x": x_of(p["value"])} for p in entry.get("paper") or []
             if p["base"] in bases and p["metric"] in metrics]
    return {"series": series, "paper": paper, "missing": sorted(set(missing))}


def bar_data(entry: dict, sweep, results: dict, labels=None) -> dict:
    """Grouped bars: one group per metric, one bar per (base, swept value); same point fields as curves."""
    sweep = _as_sweep(sweep)
    scale = float(entry.get("scale", 100))
    bases = entry.get("bases") or sweep.bases
    names = entry.get("value_labels") or {}
    labels = labels or {}
    runs = _load_runs(results)
    bars, missing = [], []
    for base in bases:
        for value in sweep.values:
            vid = sweep.variant_id(base, value)
            if vid not in runs:
                missing.append(vid)
            name = names.get(value_text(value), f"{sweep.param} = {value_text(value)}")
            label = name if len(bases) == 1 else f"{labels.get(base, base)}, {name}"
            bars.append({"id": vid, "base": base, "value": value, "label": label,
                         "points": {m: _point(runs.get(vid, []), m, scale) for m in entry["metrics"]}})
    paper = [p for p in entry.get("paper") or [] if p["base"] in bases]
    return {"metrics": list(entry["metrics"]), "bars": bars, "paper": paper, "missing": sorted(set(missing))}


def training_data(entry: dict, sweep, records: dict, labels=None) -> dict:
    """Development curves over training: one line per (base, swept value), from the runs' training
    records (``dev_curve``; several seeds: the mean at each point). x: words trained so far."""
    sweep = _as_sweep(sweep)
    scale = float(entry.get("scale", 100))
    bases = entry.get("bases") or sweep.bases
    names = entry.get("value_labels") or {}
    labels = labels or {}
    series, missing = [], []
    for b, base in enumerate(bases):
        for v, value in enumerate(sweep.values):
            vid = sweep.variant_id(base, value)
            curves = []
            for item in records.get(vid, []):
                rec = item if isinstance(item, dict) else json.loads(Path(item).read_text(encoding="utf-8"))
                if rec.get("dev_curve", {}).get("points"):
                    curves.append(rec["dev_curve"]["points"])
            if not curves:
                missing.append(vid)
                continue
            n = min(len(c) for c in curves)
            points = []
            for k in range(n):
                ys = [None if c[k]["score"] is None else c[k]["score"] * scale for c in curves]
                mean, sd, count = _stats(ys)
                points.append({"x": float(curves[0][k]["words"]), "y": mean, "sd": sd, "n": count,
                               "epoch": curves[0][k].get("epoch")})
            name = names.get(value_text(value), f"{sweep.param} = {value_text(value)}")
            label = name if len(bases) == 1 else f"{labels.get(base, base)}, {name}"
            best = max((p for p in points if not math.isnan(p["y"])), key=lambda p: p["y"], default=None)
            series.append({"id": vid, "base": base, "value": value, "label": label, "colour": b * len(sweep.values) + v,
                           "points": points, "best": best, "seeds": len(curves)})
    paper = [p for p in entry.get("paper") or [] if p["base"] in bases]
    return {"series": series, "paper": paper, "missing": sorted(set(missing))}


def draw_training(data: dict, entry: dict):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colour_of = {}
    for s in data["series"]:
        colour = _COLOURS[s["colour"] % len(_COLOURS)]
        colour_of[(s["base"], value_text(s["value"]))] = colour
        xs = np.array([p["x"] for p in s["points"]], dtype=float)
        ys = np.array([p["y"] for p in s["points"]], dtype=float)
        ax.plot(xs, ys, "-", marker="o", markersize=3, color=colour, label=s["label"])
        if s["best"] is not None:  # the paper reports each run's best development result
            ax.plot([s["best"]["x"]], [s["best"]["y"]], marker="*", markersize=10, color=colour, linestyle="none")
    for p in data["paper"]:  # the paper's best development results: dashed levels
        ax.axhline(p["y"], linestyle="--", linewidth=1, color=colour_of.get((p["base"], value_text(p["value"])), "black"),
                   label=f"paper, best: {p['y']:g}")
    ax.set_xlabel(entry.get("x_label", "words trained"))
    ax.set_ylabel(entry.get("y_label", "score ×100"))
    ax.grid(True, alpha=0.3)
    if data["series"] or data["paper"]:
        ax.legend(fontsize=8)
    ax.set_title(entry["title"], fontsize=10)
    return fig, {}


def _as_sweep(sweep):
    from staticvec.sheets import Sweep

    if isinstance(sweep, Sweep):
        return sweep
    data = json.loads(sweep) if isinstance(sweep, str) else dict(sweep)
    return Sweep(data["id"], list(data["bases"]), data["param"], list(data["values"]), dict(data.get("linked") or {}),
                 data.get("fraction"), data.get("description", ""), data.get("id_key"))


# ------------------------------------------------------------------ data: t-SNE


def load_word_pairs(path) -> list[tuple[str, str]]:
    """(first, second) word pairs in file order (``first TAB second``, ``#`` comments); errors name the line."""
    from staticvec.report.word_lists import iter_tab_pairs

    pairs, seen = [], set()
    for lineno, pair in iter_tab_pairs(path):
        if any(" " in p for p in pair) or pair[0] == pair[1]:
            raise InputFileError(path, "expected 'word TAB word' (two different words)", lineno)
        for word in pair:
            if word in seen:
                raise InputFileError(path, f"word {word!r} is listed twice", lineno)
            seen.add(word)
        pairs.append(pair)
    if not pairs:
        raise InputFileError(path, "no pairs listed")
    return pairs


def tsne_layout(vectors: np.ndarray, n_components: int = 2, seed: int = 0, perplexity: float = 10.0,
                max_iter: int = 1000) -> np.ndarray:
    """t-SNE coordinates (cosine distance, PCA start, exact gradient, fixed random state).

    The perplexity is capped at (n - 1) / 3 so that it stays below the number of points, as
    scikit-learn requires (its effective neighbourhood is about 3 × perplexity points).
    """
    from inspect import signature

    from sklearn.manifold import TSNE

    n = len(vectors)
    if n < 3:
        raise StaticvecError(f"t-SNE needs at least 3 points, got {n}")
    iters = {"max_iter" if "max_iter" in signature(TSNE).parameters else "n_iter": max_iter}  # sklearn < 1.5
    tsne = TSNE(n_components=n_components, perplexity=min(perplexity, (n - 1) / 3), metric="cosine", init="pca",
                random_state=seed, method="exact", n_jobs=1, **iters)
    return tsne.fit_transform(np.asarray(vectors, dtype=np.float64))


def tsne_panel(emb, entry: dict, root=".") -> dict:
    """One panel's points: {"points": [{"word", "group", "coords"}], "pairs": [[i, j]], "missing": [...]}.

    With ``words`` (class TAB word) the group is the class; with ``pairs`` each pair is a group and is
    drawn only when both words are in the embedding (a lone word has no partner to join).
    """
    from staticvec.report.word_lists import class_vectors, load_word_classes

    dims = 3 if entry["kind"] == "tsne3d" else 2
    if entry.get("words"):
        found, vectors, missing = class_vectors(emb, load_word_classes(Path(root) / entry["words"]))
        items, links = [(c, w) for c, w in found], []
    else:
        pairs = load_word_pairs(Path(root) / entry["pairs"])
        complete = [(a, b) for a, b in pairs if a in emb and b in emb]
        missing = [w for a, b in pairs for w in (a, b) if w not in emb]
        items = [(f"{a}/{b}", w) for a, b in complete for w in (a, b)]
        links = [[2 * k, 2 * k + 1] for k in range(len(complete))]
        unit = emb.unit_vectors()
        rows = np.array([emb.get_index(w) for _, w in items], dtype=np.int64)
        vectors = unit[rows] if len(rows) else np.zeros((0, emb.dim), np.float32)
    if len(items) < 3:
        return {"points": [], "pairs": [], "missing": missing, "dims": dims}
    coords = tsne_layout(vectors, dims, int(entry.get("seed", 0)), float(entry.get("perplexity", 10.0)))
    points = [{"group": g, "word": w, "coords": [float(c) for c in xyz]} for (g, w), xyz in zip(items, coords)]
    return {"points": points, "pairs": links, "missing": missing, "dims": dims}


# ------------------------------------------------------------------ data: attention


def attention_matrix(data: dict, sentence: str | None = None) -> tuple[list[str], np.ndarray]:
    """(words, n × n weights with NaN outside the window) from an attention dump.

    Accepts ``{"words": [...], "weights": [[...]]}`` (row: centre word, column: context word; null
    outside the window) or the trainer's ``{"sentences": [{"sentence", "words", "weights"}, ...]}``,
    from which the entry of ``sentence`` is taken.
    """
    if "sentences" in data:
        entries = data["sentences"]
        chosen = [e for e in entries if sentence is None or e.get("sentence") == sentence]
        if not chosen:
            have = "; ".join(repr(e.get("sentence")) for e in entries)
            raise StaticvecError(f"the attention dump has no sentence {sentence!r} (it has: {have})")
        data = chosen[0]
    words, weights = data.get("words"), data.get("weights")
    if not isinstance(words, list) or not isinstance(weights, list) or len(weights) != len(words) \
            or any(not isinstance(r, list) or len(r) != len(words) for r in weights):
        raise StaticvecError("attention dump: expected 'words' (n) and 'weights' (n × n, null outside the window)")
    matrix = np.array([[math.nan if v is None else float(v) for v in row] for row in weights], dtype=np.float64)
    return list(words), matrix


def attention_dropped(data: dict, sentence: str | None = None) -> list[str]:
    """Words of the sentence the dump leaves out (not in the student's vocabulary), in order."""
    if "sentences" in data:
        data = next((e for e in data["sentences"] if sentence is None or e.get("sentence") == sentence), {})
    return [str(w) for w in data.get("dropped") or []]


def _pair_column_names(entry: dict) -> tuple[str, str]:
    """Legend names of a pair list's two columns (figure sheet `pair_labels`, default first/second word)."""
    names = entry.get("pair_labels") or ["first word of a pair", "second word of a pair"]
    return str(names[0]), str(names[1])


# ------------------------------------------------------------------ drawing


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # headless: no display on cluster nodes
    import matplotlib.pyplot as plt

    return plt


def draw_curves(data: dict, entry: dict):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    any_spread = False
    for s in data["series"]:
        xs = np.array([p["x"] for p in s["points"]], dtype=float)
        ys = np.array([p["y"] for p in s["points"]], dtype=float)
        sds = np.array([p["sd"] if p["sd"] is not None else 0.0 for p in s["points"]], dtype=float)
        colour = _COLOURS[s["colour"] % len(_COLOURS)]
        style = _LINESTYLES[s["style"] % len(_LINESTYLES)]
        # NaN breaks the line: a missing value is a gap, never a zero
        ax.plot(xs, ys, style, marker="o", color=colour, label=s["label"])
        if any(p["sd"] is not None for p in s["points"]):
            any_spread = True
            ax.errorbar(xs, ys, yerr=sds, fmt="none", ecolor=colour, capsize=3, linewidth=1)
        for p in s["points"]:
            if p["annotation"] is not None and not math.isnan(p["y"]):
                ax.annotate(f"{entry['annotate']}={p['annotation']:g}", (p["x"], p["y"]), textcoords="offset points",
                            xytext=(4, -11), fontsize=7, color=colour)
    colour_of = {s["base"]: _COLOURS[s["colour"] % len(_COLOURS)] for s in data["series"]}
    for k, p in enumerate(data["paper"]):
        ax.plot([p["x"]], [p["y"]], linestyle="none", marker="D", markerfacecolor="none", markersize=8,
                color=colour_of.get(p["base"], "black"), label="paper" if k == 0 else None)
    if entry.get("x_log"):
        ax.set_xscale("log")
    xs = sorted({p["x"] for s in data["series"] for p in s["points"]})
    if xs and len(xs) <= 10:
        ax.set_xticks(xs)
        ax.set_xticklabels([_tick(x, entry.get("x", "value")) for x in xs])
        ax.minorticks_off()
    ax.set_xlabel(entry.get("x_label", ""))
    ax.set_ylabel(entry.get("y_label", "score ×100"))
    ax.grid(True, alpha=0.3)
    if data["series"]:
        ax.legend(fontsize=8)
    ax.set_title(entry["title"], fontsize=10)
    return fig, {"spread": "±1 s.d. over seeds" if any_spread else None}


def _tick(x: float, kind: str) -> str:
    if kind == "tokens":
        return f"{x / 1e9:.2g}B" if x >= 1e9 else f"{x / 1e6:.3g}M" if x >= 1e6 else f"{x / 1e3:.3g}k"
    return f"{x:g}"


def draw_bars(data: dict, entry: dict):
    plt = _pyplot()
    metrics, bars = data["metrics"], data["bars"]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.6 * len(metrics) + 2), 4.2))
    width = 0.8 / max(1, len(bars))
    centres = {}
    for k, bar in enumerate(bars):
        xs = np.arange(len(metrics)) + (k - (len(bars) - 1) / 2) * width
        ys = [bar["points"][m]["y"] for m in metrics]
        err = [bar["points"][m]["sd"] or 0.0 for m in metrics]
        has_sd = any(bar["points"][m]["sd"] is not None for m in metrics)
        ax.bar(xs, np.nan_to_num(ys, nan=0.0), width, yerr=err if has_sd else None, capsize=3,
               color=_COLOURS[k % len(_COLOURS)], label=bar["label"])
        for x, y in zip(xs, ys):
            if math.isnan(y):  # no number: say so instead of drawing a zero-height bar as a result
                ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=7)
        for m, x in zip(metrics, xs):
            centres[(bar["base"], value_text(bar["value"]), m)] = x
    for k, p in enumerate(data["paper"]):
        x = centres.get((p["base"], value_text(p["value"]), p["metric"]))
        if x is not None:
            ax.plot([x], [p["y"]], linestyle="none", marker="D", markerfacecolor="none", markersize=8, color="black",
                    label="paper" if k == 0 else None)
    ax.set_xticks(np.arange(len(metrics)))
    ax.set_xticklabels([metric_label(m) for m in metrics])
    ax.set_ylabel(entry.get("y_label", "score ×100"))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(entry["title"], fontsize=10)
    return fig, {}


def draw_tsne(panels: dict, entry: dict, labels=None):
    """One panel per embedding; class colours (word lists) or pairs joined by a line (pair lists)."""
    plt = _pyplot()
    labels = labels or {}
    three_d = entry["kind"] == "tsne3d"
    n = len(panels)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = plt.figure(figsize=(4.6 * cols, 4.4 * rows + 0.6))
    by_pairs = bool(entry.get("pairs"))
    groups = list(dict.fromkeys(p["group"] for panel in panels.values() for p in panel["points"]))
    colour_of = {g: _COLOURS[k % len(_COLOURS)] for k, g in enumerate(groups)}
    for k, (name, panel) in enumerate(panels.items()):
        ax = fig.add_subplot(rows, cols, k + 1, projection="3d" if three_d else None)
        pts = panel["points"]
        coords = np.array([p["coords"] for p in pts]) if pts else np.zeros((0, 3 if three_d else 2))
        if by_pairs:
            # first word of a pair (male) blue, second (female) red, joined by a grey line
            for i, j in panel["pairs"]:
                ax.plot(*[[coords[i, d], coords[j, d]] for d in range(coords.shape[1])], color="0.6", linewidth=0.8)
            for pos in (0, 1):
                idx = [pair[pos] for pair in panel["pairs"]]
                if idx:
                    ax.scatter(*[coords[idx, d] for d in range(coords.shape[1])], s=14,
                               color=_COLOURS[0] if pos == 0 else _COLOURS[1])
        else:
            for g in groups:
                idx = [i for i, p in enumerate(pts) if p["group"] == g]
                if idx:
                    ax.scatter(*[coords[idx, d] for d in range(coords.shape[1])], s=14, color=colour_of[g],
                               label=g if k == 0 else None)
        for i, p in enumerate(pts):
            ax.text(*coords[i], p["word"], fontsize=6)
        title = labels.get(name, name)
        if panel["missing"]:
            title += f"\n({len(panel['missing'])} listed words not in the vocabulary)"
        if not pts:
            title += "\n(fewer than 3 words found: no map)"
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        if three_d:
            ax.set_zticks([])
    if not by_pairs and groups:
        fig.legend(loc="upper right", fontsize=7, ncol=1)
    elif by_pairs:
        # what the colours and lines mean: the pair list's first / second column, and a pair
        from matplotlib.lines import Line2D

        first, second = _pair_column_names(entry)
        handles = [Line2D([], [], marker="o", linestyle="", color=_COLOURS[0], label=first),
                   Line2D([], [], marker="o", linestyle="", color=_COLOURS[1], label=second),
                   Line2D([], [], color="0.6", linewidth=0.8, label="one pair")]
        fig.legend(handles=handles, loc="upper right", fontsize=7, ncol=1)
    fig.suptitle(entry["title"], fontsize=10)
    return fig, {}


def draw_attention(words: list[str], matrix: np.ndarray, entry: dict):
    plt = _pyplot()
    n = len(words)
    fig, ax = plt.subplots(figsize=(0.6 * n + 2.2, 0.55 * n + 1.8))
    masked = np.ma.masked_invalid(matrix)
    cmap = plt.get_cmap("Blues").with_extremes(bad="0.92")  # grey: outside the window / the centre itself
    image = ax.imshow(masked, cmap=cmap, vmin=0.0, vmax=max(1e-9, float(np.nanmax(matrix)) if np.isfinite(matrix).any() else 1.0))
    for i in range(n):
        for j in range(n):
            if np.isfinite(matrix[i, j]):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if matrix[i, j] > 0.6 * np.nanmax(matrix) else "black")
    ax.set_xticks(range(n))
    ax.set_xticklabels(words, rotation=45, ha="right")
    ax.set_yticks(range(n))
    ax.set_yticklabels(words)
    ax.set_xlabel("context word")
    ax.set_ylabel("centre word")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="a_j")
    ax.set_title(entry["title"], fontsize=9)
    return fig, {}


def add_caption(fig, lines: list[str], width: int = 130) -> None:
    """Write the caption lines under everything drawn (axis labels and rotated tick labels included),
    so that they never overlap; ``bbox_inches='tight'`` keeps them in the saved file."""
    text = "\n".join(textwrap.fill(line, width) for line in lines if line)
    fig.canvas.draw()  # lay out the text so that its extent is known
    renderer = fig.canvas.get_renderer()
    # an axis with no extent (a hidden cell of a grid of panels) gives None
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
    lowest = min([0.0] + [box.y0 / fig.bbox.height for box in boxes if box is not None])
    fig.text(0.01, lowest - 0.02, text, ha="left", va="top", fontsize=6.5, family="sans-serif")


# ------------------------------------------------------------------ one figure


def save_figure(fig, title: str, out_pdf, out_png, dpi: int = 200) -> None:
    """Write ``fig`` as PDF and PNG (each atomically, the caption kept by ``bbox_inches='tight'``), then close it."""
    from staticvec.files import atomic_path

    try:
        for out, fmt in ((out_pdf, "pdf"), (out_png, "png")):
            with atomic_path(out) as tmp:
                fig.savefig(tmp, format=fmt, bbox_inches="tight", dpi=dpi if fmt == "png" else None,
                            metadata=figure_metadata(fmt, title))
    finally:
        _pyplot().close(fig)


def figure_metadata(fmt: str, title: str | None = None) -> dict | None:
    """savefig's metadata: a PDF without its creation date (matplotlib writes the time of the call otherwise), so
    that the same figure is the same bytes on a rerun; PNG metadata carries no date."""
    if fmt != "pdf":
        return None
    return {"CreationDate": None, **({"Title": title} if title else {})}


def _seed_of(path: str | None):
    match = re.search(r"/seed(\d+)/", path or "")
    return int(match.group(1)) if match else None


def make_figure(fid: str, entry: dict, manifest: dict, *, out_pdf, out_png, out_manifest=None, sweep=None,
                results: dict | None = None, embeddings: dict | None = None, attention=None,
                corpus_manifest: dict | None = None, labels: dict | None = None, root=".",
                reduced: dict | None = None) -> dict:
    """Draw figure ``fid`` of the sheet and write PDF, PNG and the manifest; returns the manifest record.

    ``results``: {variant id: [result files]} (curves, bars); ``embeddings``: {embedding id: vectors
    file} (t-SNE, one seed); ``attention``: the attention dump (file or dict); ``manifest``: the run
    manifest (provenance).
    """
    from staticvec.embeddings import Embeddings
    from staticvec.files import sha256_of, write_json

    labels = {**(labels or {}), **(entry.get("labels") or {})}
    kind = entry["kind"]
    used: dict = {"kind": kind}
    if kind in ("curve", "bars"):
        results = results or {}
        data = curve_data(entry, sweep, results, corpus_manifest, labels) if kind == "curve" \
            else bar_data(entry, sweep, results, labels)
        fig, extra = (draw_curves if kind == "curve" else draw_bars)(data, entry)
        files = {rid: [str(f) for f in (v if isinstance(v, (list, tuple)) else [v])] for rid, v in results.items()}
        seeds = sorted({s for fs in files.values() for s in map(_seed_of, fs) if s is not None})
        used.update({"sweep": _as_sweep(sweep).id, "metrics": entry["metrics"], "protocol": entry["protocol"],
                     "results": files, "seeds": seeds, "spread": extra.get("spread")})
        seed_text = f" {','.join(map(str, seeds))}" if seeds else ""
        how = f"mean ± 1 s.d. over seeds{seed_text}" if extra.get("spread") else f"seed{seed_text}" if seeds else ""
        ours = f"Ours: {', '.join(metric_label(m) for m in entry['metrics'])}, protocol {entry['protocol']}"
        ours += (f", {how}" if how else "") + (
            f"; no result for {', '.join(data['missing'])} (gaps)" if data["missing"] else "") + "."
        if data["paper"]:
            ours += " Open diamonds: the paper's numbers (" + "; ".join(sorted({p["source"] for p in data["paper"]})) + ")."
    elif kind == "training":
        results = results or {}
        data = training_data(entry, sweep, results, labels)
        fig, _ = draw_training(data, entry)
        files = {rid: [str(f) for f in (v if isinstance(v, (list, tuple)) else [v])] for rid, v in results.items()}
        seeds = sorted({s for fs in files.values() for s in map(_seed_of, fs) if s is not None})
        used.update({"sweep": _as_sweep(sweep).id, "metrics": entry["metrics"], "protocol": entry["protocol"],
                     "records": files, "seeds": seeds, "points": entry["points"]})
        best = "; ".join(f"{s['label']}: best {s['best']['y']:.1f}" for s in data["series"] if s["best"] is not None)
        ours = (f"Ours: {metric_label(entry['metrics'][0])} (protocol {entry['protocol']}) of the output table scored "
                f"{entry['points']} times over each run, during training; x: in-vocabulary words trained"
                + (f"; mean over seeds {','.join(map(str, seeds))}" if len(seeds) > 1 else "")
                + (f"; {best} (stars)" if best else "")
                + (f"; no development curve for {', '.join(data['missing'])}" if data["missing"] else "") + ".")
        if data["paper"]:
            ours += " Dashed: the paper's best development results (" + \
                "; ".join(sorted({p["source"] for p in data["paper"]})) + ")."
    elif kind in ("tsne", "tsne3d"):
        embeddings = embeddings or {}
        missing = [e for e in entry["embeddings"] if e not in embeddings]
        if missing:
            raise StaticvecError(f"figure {fid}: no vectors given for {missing}")
        panels = {e: tsne_panel(Embeddings.load(embeddings[e]), entry, root) for e in entry["embeddings"]}
        data = {"panels": panels}
        fig, _ = draw_tsne(panels, entry, labels)
        listed = entry.get("words") or entry.get("pairs")
        used.update({"embeddings": {e: {"file": str(embeddings[e]), "seed": _seed_of(str(embeddings[e]))}
                                    for e in entry["embeddings"]},
                     "word_list": {"file": listed, "sha256": sha256_of(Path(root) / listed)},
                     "tsne": {"seed": int(entry.get("seed", 0)), "perplexity": float(entry.get("perplexity", 10.0)),
                              "metric": "cosine", "dims": 3 if kind == "tsne3d" else 2}})
        seeds = sorted({s["seed"] for s in used["embeddings"].values() if s["seed"] is not None})
        ours = (f"Ours: t-SNE (cosine, perplexity ≤ {float(entry.get('perplexity', 10.0)):g}, random state "
                f"{int(entry.get('seed', 0))}) of the words of {listed}"
                + (f"; vectors of seed {','.join(map(str, seeds))}." if seeds else "."))
    elif kind == "attention":
        if attention is None:
            raise StaticvecError(f"figure {fid}: no attention dump given (--attention)")
        raw = json.loads(Path(attention).read_text(encoding="utf-8")) if not isinstance(attention, dict) else attention
        words, matrix = attention_matrix(raw, entry["sentence"])
        dropped = attention_dropped(raw, entry["sentence"])
        data = {"words": words, "weights": [[None if math.isnan(v) else v for v in row] for row in matrix.tolist()],
                "dropped": dropped}
        fig, _ = draw_attention(words, matrix, entry)
        used.update({"embedding": entry["embedding"], "sentence": entry["sentence"],
                     "attention": None if isinstance(attention, dict) else str(attention),
                     "seed": _seed_of(None if isinstance(attention, dict) else str(attention))})
        seed = f" (seed {used['seed']})" if used["seed"] is not None else ""
        ours = (f"Ours: a_j of {entry['embedding']}{seed} for \"{entry['sentence']}\"; "
                "grey: outside the window or the centre word."
                + (f" Not in the vocabulary, so not shown: {', '.join(dropped)}." if dropped else ""))
    else:  # pragma: no cover - the schema allows no other kind
        raise StaticvecError(f"figure {fid}: unknown kind {kind!r}")
    from staticvec.report.provenance import reduced_text

    made = manifest.get("provenance_caption")
    lines = [entry.get("caption", "").strip(), ours, reduced_text(reduced, manifest.get("tokens")),
             f"Made with: {made}." if made else "Made with: (no run manifest)."]
    add_caption(fig, lines)
    save_figure(fig, entry["title"], out_pdf, out_png)
    record = {
        "figure": fid,
        "title": entry["title"],
        "caption": " ".join(line for line in lines if line),
        "files": {"pdf": str(out_pdf), "png": str(out_png)},
        "spec": entry,
        "used": used,
        "provenance": {k: v for k, v in manifest.items() if k != "provenance_caption"},
        "provenance_caption": made,
        "data": _jsonable(data),
    }
    if out_manifest is None:
        out_manifest = re.sub(r"\.pdf$", "", str(out_pdf)) + ".manifest.json"
    write_json(out_manifest, record)
    return record


def _jsonable(value):
    """NaN -> None so the manifest is strict JSON."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    return value


def figure_from_files(spec: str, figure: str, results: dict[str, list[str]], out_pdf: str, out_png: str,
                      out_manifest: str | None = None, manifest: str | None = None, sweep: str | None = None,
                      corpus_manifest: str | None = None, attention: str | None = None, root: str = ".",
                      reduced: dict | None = None) -> dict:
    """Draw figure ``figure`` of the report sheet ``spec`` from files: ``results`` = {id: [files]}
    (curves/bars: evaluation results by variant id, one per seed; t-SNE: vectors by embedding id),
    the run ``manifest`` (provenance caption), the ``sweep``'s definition (JSON), the corpus
    manifest and the attention dump; what ``staticvec report figure`` does."""
    from staticvec.files import read_json

    sheet = load_figures_spec(spec, root=root)
    if figure not in sheet["figures"]:
        raise StaticvecError(f"{spec}: no figure {figure!r}; known: {', '.join(sheet['figures'])}")
    entry = sheet["figures"][figure]
    kind = entry["kind"]
    if kind in ("curve", "bars", "training") and not sweep:
        raise StaticvecError(f"figure {figure} ({kind}) needs --sweep (the sweep's definition as JSON)")
    embeddings = {k: v[0] for k, v in results.items()} if kind in ("tsne", "tsne3d") else None
    return make_figure(
        figure, entry, read_json(manifest) if manifest else {}, out_pdf=out_pdf, out_png=out_png,
        out_manifest=out_manifest, sweep=sweep, results=results if kind in ("curve", "bars", "training") else None,
        embeddings=embeddings, attention=attention,
        corpus_manifest=read_json(corpus_manifest) if corpus_manifest else None,
        labels=sheet.get("labels"), root=root, reduced=reduced,
    )
