"""Figures: t-SNE panels place every listed word once (pairs joined), curves order x and keep gaps, bars,
the attention heat map, the manifest and caption, and the figures sheet's checks against the embeddings sheet."""

import json
import math

import numpy as np
import pytest

from staticvec.embeddings import Embeddings
from staticvec.errors import InputFileError, StaticvecError
from staticvec.report import figures as F
from staticvec.sheets.figures import load_figures_spec
from staticvec.sheets import Sweep

PAIRS = "resources/word_lists/gender_pairs.tsv"


def _result(**scores):
    """An evaluation result with the given data-set scores (None: the set has no score)."""
    return {"results": {k: {"score": v, "found": 10, "total": 12} for k, v in scores.items()}, "oov_policy": "mean"}


def _pairs_embedding(pairs, rng, drop=()):
    """Vectors where every pair differs by one shared 'gender' direction (planted structure)."""
    dim = 16
    gender = rng.normal(size=dim)
    words, vectors = [], []
    for a, b in pairs:
        base = rng.normal(size=dim) * 3
        for w, v in ((a, base), (b, base + gender)):
            if w not in drop:
                words.append(w)
                vectors.append(v)
    words.append("filler")
    vectors.append(rng.normal(size=dim))
    return Embeddings(words, np.array(vectors, dtype=np.float32))


# ------------------------------------------------------------------ t-SNE


def test_gender_pair_list_starts_with_the_papers_pairs_and_is_the_family_section():
    pairs = F.load_word_pairs(PAIRS)
    assert pairs[:3] == [("he", "she"), ("policeman", "policewoman"), ("grandpa", "grandma")]
    assert ("nephew", "niece") in pairs and len(pairs) == 23 and len({w for p in pairs for w in p}) == 46


def test_word_pair_list_errors_name_the_line(tmp_path):
    bad = tmp_path / "p.tsv"
    bad.write_text("# c\nhe\tshe\nking queen\n")
    with pytest.raises(InputFileError, match="line 3"):
        F.load_word_pairs(bad)
    bad.write_text("he\tshe\nshe\ther\n")
    with pytest.raises(InputFileError, match="line 2.*twice"):
        F.load_word_pairs(bad)


def test_tsne_pairs_panel_places_each_found_word_once_and_joins_pairs(tmp_path):
    rng = np.random.default_rng(0)
    pairs = [("he", "she"), ("king", "queen"), ("man", "woman"), ("boy", "girl"), ("son", "daughter")]
    (tmp_path / "p.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in pairs))
    emb = _pairs_embedding(pairs, rng, drop={"queen"})  # the king/queen pair cannot be drawn
    entry = {"kind": "tsne", "title": "t", "embeddings": ["e"], "pairs": "p.tsv", "perplexity": 3}
    panel = F.tsne_panel(emb, entry, root=tmp_path)
    words = [p["word"] for p in panel["points"]]
    assert sorted(words) == sorted(w for p in pairs if p != ("king", "queen") for w in p)
    assert "king" not in words and panel["missing"] == ["queen"]
    assert len(panel["pairs"]) == 4
    for i, j in panel["pairs"]:  # each link joins the two words of one pair
        assert (words[i], words[j]) in pairs
    assert all(len(p["coords"]) == 2 for p in panel["points"])

    fig, _ = F.draw_tsne({"e": panel}, entry, {"e": "E"})
    ax = fig.axes[0]
    drawn = sum(len(c.get_offsets()) for c in ax.collections)
    assert drawn == 8  # every word one marker
    assert sorted(t.get_text() for t in ax.texts) == sorted(words)  # every word one label
    assert len(ax.lines) == 4  # one line per pair
    for line, (i, j) in zip(ax.lines, panel["pairs"]):  # the line ends are the pair's two points
        xs, ys = line.get_data()
        assert np.allclose(xs, [panel["points"][i]["coords"][0], panel["points"][j]["coords"][0]])
        assert np.allclose(ys, [panel["points"][i]["coords"][1], panel["points"][j]["coords"][1]])
    F._pyplot().close(fig)


def test_tsne_word_classes_and_3d(tmp_path):
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(2, 12)) * 5
    lines, words, vectors = [], [], []
    for c, name in enumerate(["animal", "city"]):
        for k in range(5):
            words.append(f"{name}{k}")
            vectors.append(centres[c] + rng.normal(size=12) * 0.3)
            lines.append(f"{name}\t{name}{k}\n")
    lines.append("city\tatlantis\n")  # not in the embedding
    (tmp_path / "w.tsv").write_text("".join(lines))
    emb = Embeddings(words, np.array(vectors, dtype=np.float32))
    entry = {"kind": "tsne", "title": "t", "embeddings": ["e"], "words": "w.tsv"}
    panel = F.tsne_panel(emb, entry, root=tmp_path)
    assert len(panel["points"]) == 10 and panel["missing"] == ["atlantis"]
    xy = np.array([p["coords"] for p in panel["points"]])
    groups = np.array([p["group"] for p in panel["points"]])
    # planted classes stay apart: every point's nearest neighbour on the map is of its own class
    dist = np.linalg.norm(xy[:, None] - xy[None], axis=-1) + np.eye(len(xy)) * 1e9
    assert (groups[dist.argmin(1)] == groups).all()
    entry = {**entry, "kind": "tsne3d"}
    panel = F.tsne_panel(emb, entry, root=tmp_path)
    assert len(panel["points"]) == 10 and all(len(p["coords"]) == 3 for p in panel["points"])
    fig, _ = F.draw_tsne({"e": panel}, entry)
    assert fig.axes[0].name == "3d" and len(fig.axes[0].texts) == 10
    F._pyplot().close(fig)


def test_tsne_perplexity_stays_below_the_number_of_points():
    vectors = np.random.default_rng(2).normal(size=(5, 8))
    assert F.tsne_layout(vectors, 2, seed=0, perplexity=30.0).shape == (5, 2)  # sklearn refuses perplexity >= n
    with pytest.raises(StaticvecError, match="at least 3"):
        F.tsne_layout(vectors[:2])


# ------------------------------------------------------------------ curves and bars


def test_curve_orders_x_keeps_gaps_and_averages_seeds():
    sweep = Sweep("s", ["a", "b"], "dim", [400, 50, 100])
    results = {
        "a~dim400": [_result(ws353=0.70), _result(ws353=0.74)],  # two seeds
        "a~dim50": [_result(ws353=None)],  # the set has no score: a gap
        "a~dim100": [_result(ws353=0.60)],
        "b~dim50": [_result(ws353=0.50)],  # b~dim100 and b~dim400 not given at all
    }
    entry = {"kind": "curve", "metrics": ["ws353"], "protocol": "web", "title": "t",
             "paper": [{"base": "a", "value": 100, "metric": "ws353", "y": 61.0, "source": "Table 1"}]}
    data = F.curve_data(entry, sweep, results, labels={"a": "A"})
    a, b = data["series"]
    assert [p["x"] for p in a["points"]] == [50, 100, 400] and a["label"] == "A"
    assert math.isnan(a["points"][0]["y"]) and a["points"][0]["n"] == 0
    assert a["points"][1]["y"] == pytest.approx(60.0) and a["points"][1]["sd"] is None
    assert a["points"][2]["y"] == pytest.approx(72.0) and a["points"][2]["n"] == 2
    assert a["points"][2]["sd"] == pytest.approx(math.sqrt(((70 - 72) ** 2 + (74 - 72) ** 2) / 1))
    assert b["points"][0]["y"] == pytest.approx(50.0) and all(math.isnan(p["y"]) for p in b["points"][1:])
    assert data["missing"] == ["b~dim100", "b~dim400"]
    assert data["paper"] == [{**entry["paper"][0], "x": 100.0}]

    fig, extra = F.draw_curves(data, entry)
    line_a = fig.axes[0].lines[0]
    assert list(line_a.get_xdata()) == [50, 100, 400]
    ys = line_a.get_ydata()
    assert np.isnan(ys[0]) and ys[1] == pytest.approx(60.0)  # a gap, never a zero
    assert extra["spread"]  # the two-seed point has an error bar
    F._pyplot().close(fig)


def test_curve_x_in_corpus_tokens_and_annotation():
    sweep = Sweep("c", ["g"], "fraction", [0.25, 0.5], linked={"x_max": [2.5, 5.0]})
    manifest = {"shards": [{"tokens": 100}, {"tokens": 110}, {"tokens": 90}, {"tokens": 120}]}
    entry = {"kind": "curve", "metrics": ["simlex999", "rw"], "protocol": "muse", "title": "t", "x": "tokens",
             "annotate": "x_max"}
    data = F.curve_data(entry, sweep, {"g~fraction0.25": [_result(simlex999=0.3, rw=0.2)]}, manifest)
    assert [p["x"] for p in data["series"][0]["points"]] == [100.0, 210.0]  # first 1 and 2 of 4 shards
    assert [p["annotation"] for p in data["series"][0]["points"]] == [2.5, 5.0]
    assert [s["label"] for s in data["series"]] == ["SimLex-999", "RW"]  # one base: metrics name the lines
    with pytest.raises(StaticvecError, match="whole number"):
        F.shard_tokens(manifest, 0.3)


def test_bars_group_metrics_and_place_paper_numbers():
    sweep = Sweep("w", ["bert_sg"], "aggregation", ["attention", "mean"])
    results = {"bert_sg~aggregationattention": [_result(ws353=0.66, simlex999=0.40)],
               "bert_sg~aggregationmean": [_result(ws353=0.65, simlex999=None)]}
    entry = {"kind": "bars", "metrics": ["ws353", "simlex999"], "protocol": "web", "title": "t",
             "value_labels": {"attention": "with", "mean": "without"},
             "paper": [{"base": "bert_sg", "value": "mean", "metric": "ws353", "y": 65.8, "source": "text"}]}
    data = F.bar_data(entry, sweep, results)
    assert [b["label"] for b in data["bars"]] == ["with", "without"]
    assert math.isnan(data["bars"][1]["points"]["simlex999"]["y"])
    fig, _ = F.draw_bars(data, entry)
    ax = fig.axes[0]
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [0.0, 40.0, 65.0, 66.0]
    assert any(t.get_text() == "n/a" for t in ax.texts)  # the missing bar is labelled, not shown as a result
    (marker,) = [line for line in ax.lines if line.get_label() == "paper"]
    assert marker.get_ydata()[0] == 65.8
    without_ws353 = [p for p in ax.patches if round(p.get_height(), 6) == 65.0][0]
    assert marker.get_xdata()[0] == pytest.approx(without_ws353.get_x() + without_ws353.get_width() / 2)
    F._pyplot().close(fig)


# ------------------------------------------------------------------ attention


def test_attention_matrix_from_the_trainer_dump_and_heat_map():
    dump = {"model": "m.pt", "sentences": [
        {"sentence": "other words here", "words": ["other", "words", "here"], "weights": [[None] * 3] * 3},
        {"sentence": "a b c", "words": ["a", "b", "c"], "window": 1,
         "weights": [[None, 1.0, None], [0.25, None, 0.75], [None, 1.0, None]]}]}
    words, matrix = F.attention_matrix(dump, "a b c")
    assert words == ["a", "b", "c"]
    assert np.isnan(matrix[0, 0]) and np.isnan(matrix[0, 2]) and matrix[1, 2] == 0.75
    with pytest.raises(StaticvecError, match="no sentence"):
        F.attention_matrix(dump, "football is")
    with pytest.raises(StaticvecError, match="n × n"):
        F.attention_matrix({"words": ["a", "b"], "weights": [[1.0]]})
    fig, _ = F.draw_attention(words, matrix, {"title": "t"})
    image = fig.axes[0].images[0].get_array()
    assert image.mask[0, 0] and not image.mask[1, 2]  # outside the window: masked, not a zero weight
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["0.25", "0.75", "1.00", "1.00"]
    F._pyplot().close(fig)


# ------------------------------------------------------------------ the figure files and manifest


RUN_MANIFEST = {"config_hash": "abc123def456", "git_commit": "0123456789ab", "seeds": [1, 2], "teacher": "minilm",
                "corpus": "enwiki", "tokens": 2000000,
                "provenance_caption": "corpus enwiki (2.00M tokens); teacher minilm; seeds 1,2; config abc123def456; "
                                      "commit 0123456789ab; 2025-01-01"}


def test_make_figure_writes_pdf_png_and_a_manifest_with_the_provenance(tmp_path):
    sweep = Sweep("semglove_dim", ["glove"], "dim", [50, 100])
    files = {}
    for vid, seed, score in (("glove~dim50", 1, 0.5), ("glove~dim50", 2, 0.52), ("glove~dim100", 1, 0.6)):
        path = tmp_path / "eval" / vid / f"seed{seed}" / "intrinsic.web.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(_result(ws353_sim=score)))
        files.setdefault(vid, []).append(str(path))
    entry = {"kind": "curve", "title": "SemGloVe Figure 2(a)", "metrics": ["ws353_sim"], "protocol": "web",
             "caption": "a note"}
    record = F.make_figure("semglove_figure2a", entry, RUN_MANIFEST, out_pdf=tmp_path / "f" / "figure2a.pdf",
                           out_png=tmp_path / "f" / "figure2a.png", sweep=json.dumps(sweep.__dict__),
                           results=files)
    assert (tmp_path / "f" / "figure2a.pdf").read_bytes()[:4] == b"%PDF"
    assert (tmp_path / "f" / "figure2a.png").read_bytes()[:4] == b"\x89PNG"
    saved = json.loads((tmp_path / "f" / "figure2a.manifest.json").read_text())
    assert saved == json.loads(json.dumps(record))
    assert saved["provenance"]["config_hash"] == "abc123def456" and saved["provenance"]["git_commit"] == "0123456789ab"
    assert saved["provenance_caption"] == RUN_MANIFEST["provenance_caption"]
    assert RUN_MANIFEST["provenance_caption"] in saved["caption"] and "a note" in saved["caption"]
    used = saved["used"]
    assert used["metrics"] == ["ws353_sim"] and used["protocol"] == "web" and used["seeds"] == [1, 2]
    assert used["results"]["glove~dim50"] == files["glove~dim50"]
    assert saved["data"]["series"][0]["points"][0]["y"] == pytest.approx(51.0)


def test_caption_line_is_drawn_under_the_figure():
    fig, _ = F.draw_curves({"series": [], "paper": []}, {"title": "t"})
    F.add_caption(fig, ["", "Made with: corpus x; config abc"])
    texts = [t.get_text() for t in fig.texts]
    assert texts == ["Made with: corpus x; config abc"] and fig.texts[0].get_position()[1] < 0
    F._pyplot().close(fig)


def test_caption_goes_under_the_lowest_visible_panel_of_a_grid_with_hidden_cells():
    # a grid of 7 panels in 3 x 3 hides two cells; matplotlib gives a hidden axis no extent (None)
    plt = F._pyplot()
    fig, axes = plt.subplots(3, 3, squeeze=False)
    for ax in list(axes.flat)[7:]:
        ax.set_visible(False)
    F.add_caption(fig, ["Made with: corpus x"])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    caption_top = fig.texts[0].get_window_extent(renderer).y1
    lowest_panel = min(ax.get_tightbbox(renderer).y0 for ax in list(axes.flat)[:7])
    assert caption_top <= lowest_panel
    plt.close(fig)


def test_caption_does_not_overlap_rotated_tick_labels_or_the_axis_label():
    words = ["football", "is", "the", "most", "popular", "sport", "in", "brazil"]
    matrix = np.full((8, 8), 0.1)
    fig, _ = F.draw_attention(words, matrix, {"title": "t"})
    F.add_caption(fig, ["Made with: corpus x"])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    caption_top = fig.texts[0].get_window_extent(renderer).y1
    ax = fig.axes[0]
    lowest_label = min([t.get_window_extent(renderer).y0 for t in ax.get_xticklabels()]
                       + [ax.xaxis.label.get_window_extent(renderer).y0])
    assert caption_top <= lowest_label  # (before: the caption started at y = -0.01, across the labels)
    F._pyplot().close(fig)


def test_pair_tsne_has_a_legend_naming_the_columns_and_the_pair_line():
    panel = {"points": [{"group": "he/she", "word": w, "coords": c} for w, c in (("he", [0, 0]), ("she", [1, 1]))]
             + [{"group": "king/queen", "word": w, "coords": c} for w, c in (("king", [2, 0]), ("queen", [3, 1]))],
             "pairs": [[0, 1], [2, 3]], "missing": [], "dims": 2}
    fig, _ = F.draw_tsne({"e": panel}, {"kind": "tsne", "title": "t", "pairs": "p.tsv", "pair_labels": ["male", "female"]})
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["male", "female", "one pair"]
    F._pyplot().close(fig)


def test_attention_figure_names_the_words_it_cannot_show(tmp_path):
    dump = {"sentences": [{"sentence": "a zz b", "words": ["a", "b"], "dropped": ["zz"],
                           "weights": [[None, 1.0], [1.0, None]]}]}
    record = F.make_figure("wang_figure7", {"kind": "attention", "title": "t", "embedding": "bert_sg", "sentence": "a zz b"},
                           RUN_MANIFEST, out_pdf=tmp_path / "f.pdf", out_png=tmp_path / "f.png", attention=dump)
    assert "Not in the vocabulary, so not shown: zz." in record["caption"] and record["data"]["dropped"] == ["zz"]


def test_cli_draws_a_tsne_figure(tmp_path):
    from staticvec.cli import main

    rng = np.random.default_rng(3)
    pairs = F.load_word_pairs(PAIRS)[:6]
    vectors = tmp_path / "e" / "seed1" / "vectors.bin"
    vectors.parent.mkdir(parents=True)
    _pairs_embedding(pairs, rng).save(vectors)
    (tmp_path / "m.json").write_text(json.dumps(RUN_MANIFEST))
    sheet = tmp_path / "figures.yaml"
    sheet.write_text(f"figures:\n  wang_figure6:\n    kind: tsne\n    title: pairs\n    embeddings: [sg]\n"
                     f"    pairs: {PAIRS}\n")
    out = tmp_path / "out" / "figure6"
    assert main(["report", "figure", "--spec", str(sheet), "--figure", "wang_figure6", "--manifest",
                 str(tmp_path / "m.json"), "--out-pdf", f"{out}.pdf", "--out-png", f"{out}.png",
                 f"sg={vectors}"]) == 0
    saved = json.loads((tmp_path / "out" / "figure6.manifest.json").read_text())
    assert len(saved["data"]["panels"]["sg"]["points"]) == 12 and saved["used"]["embeddings"]["sg"]["seed"] == 1
    assert saved["used"]["word_list"]["file"] == PAIRS and len(saved["used"]["word_list"]["sha256"]) == 64


# ------------------------------------------------------------------ the sheet


def _config():
    from staticvec.config import load_config

    return load_config(["config/config.yaml"])


def test_the_figures_sheet_matches_the_embeddings_sheet():
    from staticvec.dag.workflow import Workflow

    w = Workflow(_config())
    figures = w.figures
    assert {"semglove_figure2a", "semglove_figure2b", "semglove_figure2c", "semglove_figure3", "wang_figure4",
            "wang_figure5", "wang_figure6", "wang_figure7", "c2v_figure4", "x2static_figure1"} <= set(figures)
    for fid in figures:
        for _, path in w.figure_results(fid):
            assert path.startswith("results/default/")
    assert w.figure_file("semglove_figure2a", "png") == "results/default/figures/semglove/figure2a.png"


def test_a_wrong_id_in_the_figures_sheet_is_a_clear_error(tmp_path):
    from staticvec.sheets import EmbeddingSheet

    config = _config()
    sheet = EmbeddingSheet.load("config/embeddings.yaml", config)
    bad = tmp_path / "figures.yaml"
    bad.write_text("figures:\n"
                   "  semglove_figure2a: {kind: curve, title: t, sweep: semglove_dimm, metrics: [ws353_sim], protocol: web}\n"
                   "  semglove_figure3: {kind: tsne, title: t, embeddings: [glove, semglove_xx], words: " + PAIRS + "}\n"
                   "  wang_figure4: {kind: curve, title: t, sweep: wang_window, metrics: [ws353], protocol: webb,\n"
                   "                 paper: [{base: glove, value: 9, metric: ws353, y: 1, source: s}]}\n")
    with pytest.raises(StaticvecError) as err:
        load_figures_spec(bad, sheet, config["evaluation"]["protocols"])
    text = str(err.value)
    assert "figures.semglove_figure2a: sweep 'semglove_dimm' is not in config/embeddings.yaml" in text
    assert "semglove_dim" in text  # the known sweeps are listed
    assert "embedding 'semglove_xx' is not in" in text
    assert "protocol 'webb'" in text
    assert "base 'glove' is not drawn" in text and "value 9 is not a value of sweep 'wang_window'" in text
    bad.write_text("figures:\n  semglove_fig2: {kind: curve, title: t}\n")
    with pytest.raises(StaticvecError, match="invalid figures sheet"):
        load_figures_spec(bad)
    bad.write_text("figures:\n  wang_figure7: {kind: attention, title: t}\n")
    with pytest.raises(StaticvecError, match="'embedding' is a required property"):
        load_figures_spec(bad)


def test_semglove_figure_2_draws_glove_sd_and_md_lines_with_the_papers_points():
    """SemGloVe Figures 2a-2c have three lines (GloVe, SemGloVe_sd, SemGloVe_md) at every swept value."""
    from staticvec.dag.workflow import Workflow

    w = Workflow(_config())
    for fid in ("semglove_figure2a", "semglove_figure2b", "semglove_figure2c"):
        entry = w.figures[fid]
        sweep = w.sheet.sweeps[entry["sweep"]]
        ids = {i for i, _ in w.figure_results(fid)}
        for base in ("glove", "semglove_sd", "semglove_md"):
            assert {sweep.variant_id(base, v) for v in sweep.values} <= ids, (fid, base)
        results = {i: [_result(ws353_sim=0.5)] for i in ids}
        data = F.curve_data(entry, sweep, results, {"shards": [{"tokens": 10}] * 8})
        assert {s["base"] for s in data["series"]} == {"glove", "semglove_sd", "semglove_md"}
        assert {p["base"] for p in data["paper"]} == {"glove", "semglove_sd", "semglove_md"}


def test_wang_figure5_is_a_curve_over_training_of_each_run(tmp_path):
    """Figure 5: one line per run (with / without attention) of the dev score recorded during training."""
    from staticvec.dag.workflow import Workflow

    w = Workflow(_config())
    entry = w.figures["wang_figure5"]
    assert entry["kind"] == "training"
    sweep = w.sheet.sweeps[entry["sweep"]]
    # the trainers of the sweep's runs score WS353 during training; other students do not
    run = sweep.variant_id("bert_sg", "attention")
    args = w.dev_curve_args(run)
    assert "--dev-set resources/data/eval/similarity/EN-WS-353-ALL.txt" in args and "--dev-points 10" in args
    assert "--dev-oov mean" in args and w.dev_curve_inputs(run)
    assert w.dev_curve_args("bert_sg") == "" and w.dev_curve_inputs("x2static_para") == {}
    assert {i for i, _ in w.figure_results("wang_figure5")} == {sweep.variant_id("bert_sg", v) for v in sweep.values}
    assert all(p.endswith("/vectors.json") for _, p in w.figure_results("wang_figure5"))
    records = {}
    for value, scores in (("attention", [None, 0.40, 0.55, 0.60]), ("mean", [None, 0.30, 0.50, 0.58])):
        vid = sweep.variant_id("bert_sg", value)
        path = tmp_path / vid / "seed1" / "vectors.json"
        path.parent.mkdir(parents=True)
        points = [{"epoch": 0, "words": 100 * k, "score": s, "found": 9, "total": 10} for k, s in enumerate(scores)]
        path.write_text(json.dumps({"dev_curve": {"set": "EN-WS-353-ALL.txt", "points": points}}))
        records[vid] = [str(path)]
    data = F.training_data(entry, sweep, records)
    by_value = {s["value"]: s for s in data["series"]}
    assert [p["x"] for p in by_value["attention"]["points"]] == [0, 100, 200, 300]
    assert math.isnan(by_value["mean"]["points"][0]["y"])  # no ranking yet: a gap, never a zero
    assert by_value["attention"]["best"]["y"] == pytest.approx(60.0) and by_value["mean"]["best"]["x"] == 300
    assert "without attention" in by_value["mean"]["label"] and {p["y"] for p in data["paper"]} == {66.3, 65.8}
    record = F.make_figure("wang_figure5", entry, RUN_MANIFEST, out_pdf=tmp_path / "f5.pdf", out_png=tmp_path / "f5.png",
                           sweep=json.dumps(sweep.__dict__), results=records)
    assert (tmp_path / "f5.pdf").read_bytes()[:4] == b"%PDF"
    assert "best 60.0" in record["caption"] and record["used"]["points"] == 10
