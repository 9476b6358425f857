"""The claims scale (config/claims10m.yaml): every embedding, tagger and classifier a claim reads runs the run's
seeds at the sheet's scale; a sweep no claim reads may go on a development subset, and the captions say so."""

import copy

import pytest

from staticvec.config import load_config, validate_config
from staticvec.dag.workflow import Workflow
from staticvec.errors import StaticvecError
from staticvec.sheets.claims import claim_refs, expand_ref
from staticvec.sheets.tables import CONTEXTUAL
from staticvec.report.provenance import reduced_text


@pytest.fixture(scope="module")
def claims10m(repo_root):
    return load_config([repo_root / "config/config.yaml", repo_root / "config/claims10m.yaml"])


@pytest.fixture(scope="module")
def tour(repo_root):
    return load_config([repo_root / "config/config.yaml"])


def shortfalls(w: Workflow) -> list[str]:
    """Every (claim, row) whose seeds are fewer than the claim's min_seeds: intrinsic rows by their training seeds
    (deterministic ones count as decided), tagging and classification rows by their taggers'/classifiers' seeds."""
    spec = w.claims_spec
    out = []
    for cid in w.selected_claims():
        claim = spec["claims"][cid]
        need = claim.get("min_seeds", spec["defaults"]["min_seeds"])
        source = claim.get("source", "intrinsic")
        for ref in claim_refs(claim):
            for emb in expand_ref(ref, w.sheet.ids()):
                if source == "intrinsic":
                    n = len(w.seeds(emb)) if w.is_random(emb) else need
                else:
                    n = len(w.extrinsic_seeds(w.contextual_id if emb == CONTEXTUAL else emb, source))
                if n < need:
                    out.append(f"{cid}: {emb} ({source}) {n} seeds")
    return out


def test_no_claim_of_the_claims_scale_is_short_of_seeds(claims10m):
    validate_config(copy.deepcopy(claims10m))
    w = Workflow(copy.deepcopy(claims10m))
    assert shortfalls(w) == []
    assert w.corpus_scale_targets()  # and the curves over corpus size are built


def test_the_tour_is_short_of_seeds_exactly_on_its_tagging_classification_and_sweep_claims(tour):
    """The check above can fail: the tour's taggers and classifiers run seed 1, its sweep points one seed."""
    found = {line.split(":")[0] for line in shortfalls(Workflow(copy.deepcopy(tour)))}
    tagging = {"semglove_t2_vs_glove", "semglove_t2_vs_bert", "wang_t3_tagging", "wang_t3_contextual", "c2v_t3_tagging",
               "c2v_t3_second"}
    classification = {"x2static_t4_average", "x2static_t5_runs"}
    sweeps = {"wang_f4_window", "wang_f4_window8", "x2static_f1_corpus", "semglove_f2a_vs_glove", "semglove_f2a_growth",
              "semglove_f2a_400", "semglove_f2b_vs_glove", "semglove_f2b_growth", "semglove_f2c_vs_glove",
              "semglove_f2c_xmax10"}
    assert found == tagging | classification | sweeps


def test_extrinsic_seeds_follow_the_claims_only_when_the_config_lists_none(claims10m, tour):
    w = Workflow(copy.deepcopy(claims10m))
    assert w.extrinsic_seeds("glove", "tagging") == [1, 2, 3]
    assert w.extrinsic_seeds(w.contextual_id, "tagging") == [1, 2, 3]  # the claims' `contextual`
    assert w.extrinsic_seeds("bert_avg", "tagging") == [1, 2, 3]  # C2V "best in every task" reads each baseline
    assert w.extrinsic_seeds("ase~layer4", "classification") == [1, 2, 3]  # each_of ase~layer*
    assert w.extrinsic_seeds("cbow_teacher_dim", "classification") == [1, 2, 3]  # X2Static above CBOW
    assert w.extrinsic_seeds("x2static_para_released", "classification") == [1]  # Table 4's row, no claim reads it
    assert w.extrinsic_seeds("glove", "classification") == [1]  # no classification claim names GloVe
    everyone = Workflow({**copy.deepcopy(claims10m), "seeds_for": "all"})
    assert everyone.extrinsic_seeds("x2static_para_released", "classification") == [1, 2, 3]
    listed = Workflow(copy.deepcopy(tour))  # tagging.seeds: [1] is a list: every row
    assert listed.extrinsic_seeds("glove", "tagging") == [1] == listed.extrinsic_seeds("sg_teacher_dim", "classification")


def test_the_classify_flags_carry_each_rows_seeds(claims10m, repo_root):
    from staticvec.dag.rules import RuleFunctions
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.teacher import TeacherPlan

    w = Workflow(copy.deepcopy(claims10m), repo_root)
    rf = RuleFunctions(w.config, w, TeacherPlan(w.config), SemgloveRules(w.config))
    def seed_words(emb):
        words = rf.classification_args(type("W", (), {"emb": emb})).split()
        out = []
        for w in words[words.index("--seeds") + 1:]:
            if not w.isdigit():
                break
            out.append(int(w))
        return out

    assert seed_words("x2static_para") == [1, 2, 3] and seed_words("x2static_para_released") == [1]
    wildcards = type("W", (), {"emb": "glove"})
    assert rf.tag_runs(wildcards)[-1].endswith("ner.seed3.json") and len(rf.tag_runs(wildcards)) == 9


def test_a_sweep_a_claim_reads_cannot_be_put_on_a_subset(claims10m):
    config = {**copy.deepcopy(claims10m), "sweep_fractions": {"semglove_dim": 0.125, "wang_window": 0.125}}
    with pytest.raises(StaticvecError, match=r"'sweep_fractions': claim\(s\) .*wang_f4_window.* read .*"
                                             r"bert_sg~window5 \(sweep wang_window\)"):
        Workflow(config).seeds("glove")


def test_the_reduced_sweeps_train_on_an_eighth_and_their_captions_say_so(claims10m):
    """claims10m reduces no sweep (every sweep but the corpus-size curves is claimed); without SemGloVe Figure
    2(a)'s claims, its sweep may go on a development eighth, and the captions say so."""
    assert not claims10m.get("sweep_fractions")
    unclaimed = [c for c in Workflow(copy.deepcopy(claims10m)).selected_claims() if not c.startswith("semglove_f2a")]
    w = Workflow({**copy.deepcopy(claims10m), "sweep_fractions": {"semglove_dim": 0.125},
                  "targets": {**claims10m["targets"], "claims": unclaimed}})
    assert w.spec("glove~dim300").fraction == 0.125 and w.same_run("glove~dim300") is None  # no longer the main row
    assert w.spec("glove~fraction0.5").fraction == 0.5  # Figure 2(b) keeps the whole corpus' fractions
    reduced = w.reduced_inputs(rid for rid, _ in w.figure_results("semglove_figure2a"))
    text = reduced_text(reduced, 10_000_000)
    assert text == ("Below the run's scale: on 1/8 of the corpus, about 1.2M tokens: the 15 points of sweep "
                    "semglove_dim; seed 1 only (the run: 1, 2, 3): the 15 points of sweep semglove_dim.")
    # Figure 2(b)'s fractions are its x axis, not a reduction; Wang's claimed points now run every seed
    assert "on " not in reduced_text(w.reduced_inputs(r for r, _ in w.figure_results("semglove_figure2b")), 10**7)
    wang = w.reduced_inputs(r for r, _ in w.figure_results("wang_figure4"))["items"]
    assert {i["id"]: i.get("seeds") for i in wang}["bert_sg~window5"] is None
    assert {i["id"]: i.get("seeds") for i in wang}["bert_sg~window3"] is None  # Figure 4's every window is claimed


def test_a_tagging_tables_caption_names_the_rows_with_one_tagger(tour, claims10m):
    w = Workflow(copy.deepcopy(tour))
    ids = [rid for rid, _ in w.table_results("c2v_table3")]
    assert reduced_text(w.reduced_inputs(ids, "tagging")) == (
        "Below the run's scale: taggers of seed 1 only (the run: 1, 2, 3): sg, glove, bert_avg, bert_sg, c2v_post.")
    w = Workflow(copy.deepcopy(claims10m))  # every row of the table is read by a claim: no reduction to name
    assert reduced_text(w.reduced_inputs(ids, "tagging")) == ""


def test_every_glove_trained_row_a_claim_reads_runs_the_papers_iterations(claims10m, tour):
    """Issue 51: at the claims scale GloVe and every SemGloVe row (GloVe-trained too: like for like) train the
    paper's 100 iterations, 50 below 300-d (SemGloVe §5.3), as paper.yaml; the tour keeps the released scripts' 15."""
    w, t = Workflow(copy.deepcopy(claims10m)), Workflow(copy.deepcopy(tour))
    read = {emb for cid in w.selected_claims() for ref in claim_refs(w.claims_spec["claims"][cid])
            for emb in expand_ref(ref, w.sheet.ids())}
    trained = sorted(e for e in read if e in w.sheet and w.spec(e).method in ("glove", "semglove"))
    assert "glove" in trained and "semglove_md" in trained and any("~dim" in e for e in trained)
    for emb in trained:
        expected = 50 if int(w.params(emb)["dim"]) < 300 else 100
        assert w.params(emb)["iterations"] == expected, emb
        assert t.params(emb)["iterations"] == 15, emb
