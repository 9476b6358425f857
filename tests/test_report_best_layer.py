"""X2Static's best task-independent ASE layer: chosen by the mean over Table 3's tasks on the whole
corpus, then used at every corpus fraction (Figure 1's ASE line)."""

import os
from pathlib import Path

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.files import read_json
from staticvec.report.best_layer import pick_layer, select_best_layer

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["rg65", "ws353", "simlex999", "simverb3500", "rw"]


def result(**scores):
    return {"results": {k: {"score": v, "found": 1, "total": 1} for k, v in scores.items()}}


def test_the_best_layer_has_the_best_mean_over_the_tasks():
    results = {
        0: [result(rg65=0.9, ws353=0.1, simlex999=0.1, simverb3500=0.1, rw=0.1)],  # best on one task only
        3: [result(rg65=0.6, ws353=0.5, simlex999=0.4, simverb3500=0.3, rw=0.4),
            result(rg65=0.6, ws353=0.5, simlex999=0.4, simverb3500=0.3, rw=0.2)],  # two seeds: mean 0.42
        5: [result(rg65=0.6, ws353=0.5, simlex999=0.4, simverb3500=0.3, rw=0.25)],  # 0.41
        6: [result(rg65=0.99, ws353=0.99, simlex999=0.99, simverb3500=0.99)],  # no RW score: not comparable
    }
    chosen = select_best_layer(results, TASKS)
    assert chosen["layer"] == 3 and chosen["scores"][3] == pytest.approx(0.42)
    assert chosen["scores"][6] is None and chosen["scores"][0] == pytest.approx(0.26)
    tie = select_best_layer({4: [result(rg65=0.5)], 2: [result(rg65=0.5)]}, ["rg65"])
    assert tie["layer"] == 2  # equal means: the lower layer
    with pytest.raises(StaticvecError, match="no ASE layer"):
        select_best_layer({1: [result(rg65=0.5)]}, ["rw"])
    with pytest.raises(StaticvecError, match="no ASE layer has a score on every one of"):
        select_best_layer({1: [result(rg65=0.5)], 2: [result(rw=0.4)]}, ["rg65", "rw"])


def test_a_set_no_layer_covers_is_left_out_and_named():
    """A tiny corpus may cover none of an evaluation set's words: every layer lacks it, so it says nothing
    about the layers and is dropped (before: no layer could be chosen and the run stopped)."""
    results = {1: [result(ws353=0.3, rg65=None)], 2: [result(ws353=0.5, rg65=None)]}
    chosen = select_best_layer(results, ["rg65", "ws353"])
    assert chosen["layer"] == 2 and chosen["metrics"] == ["ws353"] and chosen["dropped"] == ["rg65"]


def test_the_chosen_layer_is_linked_or_cut_to_a_fraction_vocabulary(tmp_path):
    from staticvec.corpus.vocab import Vocabulary

    ase = tmp_path / "ase-2of8"
    ase.mkdir()
    for layer in (0, 1):
        Embeddings(["a", "b", "c"], np.full((3, 2), layer, np.float32)).save(ase / f"layer-{layer:02d}.bin")
    (ase / "ase.json").write_text("{}")
    for k in range(2):
        path = tmp_path / f"l{k}.json"
        path.write_text(__import__("json").dumps(result(rg65=0.1 + 0.5 * k, rw=0.3)))
    assert main(["report", "best-layer", f"0={tmp_path / 'l0.json'}", f"1={tmp_path / 'l1.json'}",
                 "--metrics", "rg65", "rw", "--out", str(tmp_path / "sel.json")]) == 0
    assert read_json(tmp_path / "sel.json")["layer"] == 1
    out = pick_layer(tmp_path / "sel.json", ase / "ase.json", tmp_path / "e" / "vectors.bin")
    assert os.path.islink(out) and Embeddings.load(out).vectors[0, 0] == 1.0
    Vocabulary(["c", "a"], [3, 2]).save(tmp_path / "frac.tsv")
    cut = pick_layer(tmp_path / "sel.json", ase, tmp_path / "f" / "vectors.bin", tmp_path / "frac.tsv")
    assert not os.path.islink(cut) and Embeddings.load(cut).words == ["c", "a"]


def test_figure1_ase_line_is_the_best_layer_at_every_corpus_size():
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    w = Workflow(load_config([ROOT / "config" / "config.yaml"]), ROOT)
    sweep = w.sheet.sweeps[w.figures["x2static_figure1"]["sweep"]]
    assert "ase_best" in sweep.bases and w.params("ase_best")["layer"] == "best"
    layers = [layer for layer, _ in w.ase_best_results()]
    assert layers == w.config["methods"]["ase"]["layers"]
    assert all(p.endswith("intrinsic.muse.json") for _, p in w.ase_best_results())
    small = sweep.variant_id("ase_best", 0.125)
    command = w.ase_embedding_command(small, "OUT")
    assert command.startswith("staticvec report pick-layer") and "ase-1of8" in command
    assert "--vocab results/default/corpus/vocab.min5.1of8.tsv" in command
    assert w.ase_embedding_inputs(small)["selection"] == w.ase_best_selection(small)
    # a fixed layer stays a link (or the fraction's words)
    assert w.ase_embedding_command("bert_avg", "OUT").startswith("ln -sfr")
