"""The claims sheet and its verdicts, on hand-made result files: holds, fails, undecided, too few seeds,
a tie within / outside the tolerance, deterministic results, the pairing by seed, the paper-number check,
the schema and plan-time checks, and the CLI with the summary's count lines."""

import json
import math

import pytest
import yaml

from staticvec.errors import StaticvecError
from staticvec.report.claims import (Results, counts, decide, evaluate_claims, load_claims_spec,
                                     parse_results)

T_975_2 = 4.302652729911275  # Student t, 2 degrees of freedom, 97.5 % quantile (tables: 4.303)


def _result(**scores):
    return {"results": {k: {"score": v, "found": 10, "total": 10} for k, v in scores.items()}}


def _intrinsic(protocol="web", **by_id):
    """{(protocol, id): {seed: result}} from id=[ws353 fraction per seed 1, 2, ...]."""
    return {(protocol, emb): {s + 1: _result(ws353=v) for s, v in enumerate(values)} for emb, values in by_id.items()}


def _sheet(tmp_path, claims, defaults=None):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"defaults": defaults or {}, "claims": claims}))
    return path


def _claim(**form):
    return {"paper": "semglove", "where": "Table 1", "statement": "s", "protocol": "web", "metric": "ws353", **form}


def _one(tmp_path, claim, results, tables=None, defaults=None):
    spec = load_claims_spec(_sheet(tmp_path, {"x_claim": claim}, defaults), tables=tables)
    [record] = evaluate_claims(spec, results, tables)
    return record


# ------------------------------------------------------------------ verdicts


def test_holds_with_the_hand_computed_paired_interval(tmp_path):
    # a − b per seed: 3, 1, 2 points -> mean 2, sd 1, half-width t(2) · 1 / √3 = 2.484 -> [−0.48, 4.48]: straddles 0
    # a − b per seed: 3, 4, 5 -> mean 4, sd 1 -> [1.52, 6.48]: holds
    results = Results(_intrinsic(a=[0.63, 0.64, 0.65], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)
    [comp] = record["comparisons"]
    half = T_975_2 * 1.0 / math.sqrt(3)
    assert comp["n"] == 3 and comp["seeds"] == [1, 2, 3]
    assert comp["mean"] == pytest.approx(4.0)
    assert comp["low"] == pytest.approx(4.0 - half) and comp["high"] == pytest.approx(4.0 + half)
    assert comp["verdict"] == "holds" and record["verdict"] == "holds" and record["reasons"] == []


def test_fails_when_the_interval_is_on_the_other_side(tmp_path):
    results = Results(_intrinsic(a=[0.60, 0.60, 0.60], b=[0.63, 0.64, 0.65]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)
    assert record["comparisons"][0]["high"] == pytest.approx(-4.0 + T_975_2 / math.sqrt(3))
    assert record["verdict"] == "fails"
    assert "other side of 0" in record["reasons"][0]


def test_undecided_when_the_interval_straddles_zero(tmp_path):
    # differences 3, 1, 2: [2 − 2.484, 2 + 2.484]
    results = Results(_intrinsic(a=[0.63, 0.61, 0.62], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)
    comp = record["comparisons"][0]
    assert comp["low"] == pytest.approx(2 - T_975_2 / math.sqrt(3)) and comp["low"] < 0 < comp["high"]
    assert record["verdict"] == "undecided" and "straddles 0" in record["reasons"][0]


def test_too_few_seeds_is_undecided_whatever_the_difference(tmp_path):
    results = Results(_intrinsic(a=[0.90, 0.91], b=[0.10, 0.11]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)  # min_seeds 3 by default
    comp = record["comparisons"][0]
    assert comp["n"] == 2 and comp["mean"] == pytest.approx(80.0)
    assert record["verdict"] == "undecided" and "too few seeds: 2 paired, 3 needed" in comp["reason"]
    # the same two seeds decide with min_seeds 2
    record = _one(tmp_path, _claim(order=["a", "b"], min_seeds=2), results)
    assert record["verdict"] == "holds"


def test_one_seed_of_a_seeded_embedding_has_no_interval(tmp_path):
    results = Results(_intrinsic(a=[0.9], b=[0.1]), random=["a"])
    comp = _one(tmp_path, _claim(order=["a", "b"]), results)["comparisons"][0]
    assert comp["n"] == 1 and comp["low"] is None and comp["verdict"] == "undecided"


def test_tie_within_and_outside_the_tolerance(tmp_path):
    # differences 0.1, 0.2, 0.3 points: mean 0.2, sd 0.1 -> half 0.248 -> [−0.048, 0.448] within ±0.5: holds
    within = Results(_intrinsic(a=[0.601, 0.602, 0.603], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    record = _one(tmp_path, _claim(tie=["a", "b"], tol=0.5), within)
    assert record["verdict"] == "holds"
    # the same interval with tol 0.3 straddles 0.3: undecided
    assert _one(tmp_path, _claim(tie=["a", "b"], tol=0.3), within)["verdict"] == "undecided"
    # differences 2.1, 2.2, 2.3: [1.95, 2.45] entirely above 0.5: fails
    outside = Results(_intrinsic(a=[0.621, 0.622, 0.623], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    assert _one(tmp_path, _claim(tie=["a", "b"], tol=0.5), outside)["verdict"] == "fails"


def test_at_least_as_good_allows_the_tolerance_below_zero(tmp_path):
    # differences −0.1, −0.2, −0.3: [−0.448, 0.048] -> above −0.5: holds for ">=", straddles 0 for ">"
    results = Results(_intrinsic(a=[0.599, 0.598, 0.597], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    assert _one(tmp_path, _claim(order=["a", "b"], relation=">="), results)["verdict"] == "holds"
    assert _one(tmp_path, _claim(order=["a", "b"]), results)["verdict"] == "undecided"
    # differences −1.1, −1.2, −1.3: entirely below −0.5: fails
    worse = Results(_intrinsic(a=[0.589, 0.588, 0.587], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    assert _one(tmp_path, _claim(order=["a", "b"], relation=">="), worse)["verdict"] == "fails"


def test_decide_bounds():
    assert decide(0.1, 2.0, ">", 0.5) == "holds" and decide(-0.1, 2.0, ">", 0.5) == "undecided"
    assert decide(-2.0, 0.0, ">", 0.5) == "fails"  # no better at all is not 'better'
    assert decide(-0.5, 1.0, ">=", 0.5) == "holds" and decide(-0.6, 1.0, ">=", 0.5) == "undecided"
    assert decide(-3.0, -0.6, ">=", 0.5) == "fails"
    assert decide(-0.5, 0.5, "~", 0.5) == "holds" and decide(0.6, 3, "~", 0.5) == "fails"


def test_deterministic_results_are_exact_and_broadcast_over_seeds(tmp_path):
    # both deterministic: one exact difference decides, whatever min_seeds
    exact = Results(_intrinsic(a=[0.61], b=[0.60]), random=[])
    record = _one(tmp_path, _claim(order=["a", "b"]), exact)
    comp = record["comparisons"][0]
    assert record["verdict"] == "holds" and comp["low"] == comp["high"] == pytest.approx(1.0)
    assert "exact difference" in comp["reason"]
    # one seeded side: its seeds pair with the deterministic value (a_s − 0.60)
    mixed = Results(_intrinsic(a=[0.63, 0.64, 0.65], b=[0.60]), random=["a"])
    comp = _one(tmp_path, _claim(order=["a", "b"]), mixed)["comparisons"][0]
    assert comp["n"] == 3 and comp["mean"] == pytest.approx(4.0) and comp["verdict"] == "holds"


def test_differences_are_paired_by_seed(tmp_path):
    # seed effects of ±10 points shared by both methods; a is 1 point better on every seed. Paired: d = 1, 1, 1
    # (zero spread: holds); an unpaired comparison of the means would straddle 0.
    a = [0.51, 0.71, 0.61, 0.41]
    b = [0.50, 0.70, 0.60, 0.40]
    intrinsic = _intrinsic(a=a, b=b)
    del intrinsic[("web", "a")][4]  # seed 4 only for b: left out of the pairs
    comp = _one(tmp_path, _claim(order=["a", "b"]), Results(intrinsic, random=["a", "b"]))["comparisons"][0]
    assert comp["seeds"] == [1, 2, 3] and comp["mean"] == pytest.approx(1.0)
    assert comp["high"] - comp["low"] == pytest.approx(0.0, abs=1e-9) and comp["verdict"] == "holds"


def test_mean_metric_each_metric_order_and_contrast(tmp_path):
    def res(ws, sl):
        return {"results": {"ws353": {"score": ws}, "simlex999": {"score": sl}}}

    intrinsic = {("web", e): {s: res(*v) for s, v in zip((1, 2, 3), vals)} for e, vals in {
        "a": [(0.60, 0.40), (0.62, 0.40), (0.64, 0.40)],
        "b": [(0.50, 0.42), (0.50, 0.42), (0.50, 0.42)],
        "c": [(0.40, 0.30), (0.40, 0.30), (0.40, 0.30)],
    }.items()}
    results = Results(intrinsic, random=["a", "b", "c"])
    # mean: a − b per seed = (10 − 2)/2, (12 − 2)/2, (14 − 2)/2 = 4, 5, 6
    rec = _one(tmp_path, _claim(metric={"mean": ["ws353", "simlex999"]}, order=["a", "b", "c"]), results)
    assert [c["mean"] for c in rec["comparisons"]] == pytest.approx([5.0, 11.0])
    # each: a > b holds on ws353 and fails on simlex999 (−2 every seed): the claim fails
    rec = _one(tmp_path, _claim(metric={"each": ["ws353", "simlex999"]}, order=["a", "b"]), results)
    assert [c["verdict"] for c in rec["comparisons"]] == ["holds", "fails"] and rec["verdict"] == "fails"
    # a list in the order: a > each of b and c
    rec = _one(tmp_path, _claim(order=["a", ["b", "c"]]), results)
    assert [c["comparison"] for c in rec["comparisons"]] == ["a > b", "a > c"]
    # contrast (a − b) − (b − c) on ws353 = (10 + 2k) − 10 = 0, 2, 4 -> mean 2, straddles (half 4.97)
    rec = _one(tmp_path, _claim(contrast=[{"embedding": "a", "weight": 1}, {"embedding": "b", "weight": -2},
                                          {"embedding": "c", "weight": 1}]), results)
    assert rec["comparisons"][0]["mean"] == pytest.approx(2.0) and rec["verdict"] == "undecided"


def test_best_of_takes_the_best_candidate_on_the_claims_metric(tmp_path):
    results = Results(_intrinsic(**{"ase~layer0": [0.50], "ase~layer3": [0.58], "ase~layer6": [0.55], "b": [0.57]}))
    rec = _one(tmp_path, _claim(order=[{"best_of": "ase~layer*", "per": "overall"}, "b"]), results)
    comp = rec["comparisons"][0]
    assert "ase~layer3" in comp["chosen"] and comp["mean"] == pytest.approx(1.0) and rec["verdict"] == "holds"


def test_tagging_and_classification_values_per_seed(tmp_path):
    def tagging(values):
        return {"results": {"chunking": {"score": sum(values) / len(values), "seeds": [1, 2, 3],
                                         "test": {"values": values}, "dev": {"values": values}},
                            "ner": {"score": None, "status": "not run: data not supplied"}}}

    results = Results(tagging={"contextual-minilm": tagging([0.95, 0.951, 0.952]), "glove": tagging([0.949, 0.95, 0.951])},
                      contextual_id="contextual-minilm")
    claim = {"paper": "wang", "where": "Table 3", "statement": "s", "source": "tagging",
             "metric": {"each": ["chunking.test", "ner"]}, "tie": ["contextual", "glove"], "tol": 0.5}
    rec = _one(tmp_path, claim, results)
    chunk, ner = rec["comparisons"]
    assert chunk["mean"] == pytest.approx(0.1) and chunk["verdict"] == "holds"
    assert ner["verdict"] == "undecided" and "not run: data not supplied" in ner["reason"]

    def classification(f1s):
        return {"seeds": [1, 2, 3], "datasets": {"mr": {"runs": [{"test": {"macro_f1": f, "accuracy": f}} for f in f1s]}}}

    results = Results(classification={"x": classification([0.80, 0.81, 0.82]), "y": classification([0.70, 0.70, 0.70])})
    claim = {"paper": "x2static", "where": "Table 4", "statement": "s", "source": "classification",
             "metric": "mr.f1", "order": ["x", "y"]}
    comp = _one(tmp_path, claim, results)["comparisons"][0]
    assert comp["mean"] == pytest.approx(11.0) and comp["verdict"] == "holds"


# ------------------------------------------------------------------ the paper's printed numbers


def test_paper_numbers_are_checked_and_a_contradicting_table_is_flagged(tmp_path):
    paper = tmp_path / "t1.csv"
    paper.write_text("# paper: P\n# table: 1\n# units: x 100\n# scale: 100\n"
                     "row,label,ws353,simlex999,avg\nmd,MD,69.7,46.5,58.1\nsd,SD,56.0,31.9,44.0\nglove,GloVe,52.6,48.2,50.4\n")
    tables = {"t_table1": {"paper_file": str(paper), "source": "intrinsic", "protocol": "web",
                           "rows": {"md": "a", "sd": "b", "glove": "c"},
                           "columns": {"ws353": "ws353", "simlex999": "simlex999",
                                       "avg": {"mean": ["ws353", "simlex999"]}}}}
    results = Results(_intrinsic(a=[0.7, 0.7, 0.7]), random=["a"])
    claim = _claim(table="t_table1", metric={"mean": ["ws353", "simlex999"]}, order=["a", "b", "c"])
    rec = _one(tmp_path, claim, results, tables)
    ab, bc = rec["comparisons"]
    # the mean of the printed columns: (69.7 + 46.5)/2 − (56.0 + 31.9)/2 = 14.15; (56.0 + 31.9)/2 − (52.6 + 48.2)/2 = −6.45
    assert ab["paper_value"] == pytest.approx(14.15) and ab["paper_check"] == "supported"
    assert bc["paper_value"] == pytest.approx(-6.45) and bc["paper_check"].startswith("NOT supported")
    assert rec["paper_flag"] and "b > c" in rec["paper_flag"]
    assert counts([rec])["semglove"]["flagged"] == 1
    # a row the table does not print, and a fraction-scaled table (X2Static prints ρ, scale 1)
    frac = tmp_path / "t3.csv"
    frac.write_text("# paper: P\n# table: 3\n# units: rho\n# scale: 1\nrow,label,ws353\nx,X,0.7598\ns,S,0.7297\n")
    tables["t_table3"] = {"paper_file": str(frac), "source": "intrinsic", "protocol": "muse",
                          "rows": {"x": "a", "s": "b"}, "columns": {"ws353": "ws353"}}
    rec = _one(tmp_path, _claim(table="t_table3", order=["a", "b", "d"]), results, tables)
    assert rec["comparisons"][0]["paper_value"] == pytest.approx(3.01)
    assert rec["comparisons"][1]["paper_check"].startswith("not printed") and not rec["paper_flag"]


def test_every_claim_of_the_sheet_is_supported_by_the_papers_tables():
    """The transcribed tables support every comparison the sheet draws from them (a flag here is a
    transcription error or a claim the paper does not make)."""
    from staticvec.report.tables import load_tables_spec

    tables = load_tables_spec("config/tables.yaml")["tables"]
    spec = load_claims_spec("config/claims.yaml", tables=tables)
    records = evaluate_claims(spec, Results(), tables)
    checks = [(r["id"], c["comparison"], c["paper_check"]) for r in records for c in r["comparisons"] if r["table"]]
    assert checks and all(check == "supported" for _, _, check in checks), [c for c in checks if c[2] != "supported"]


# ------------------------------------------------------------------ the sheet


def test_schema_and_plan_time_checks_name_the_sheet_and_the_claim(tmp_path):
    ids = ["a", "b", "ase~layer1"]
    bad = {
        "p_unknown_emb": _claim(order=["a", "nope"]),
        "p_unknown_metric": _claim(order=["a", "b"], metric={"mean": ["ws353", "wordsim"]}),
        "p_bad_glob": _claim(order=[{"best_of": "bert~layer*"}, "a"]),
        "p_protocol": _claim(order=["a", "b"], protocol="nope"),
        "p_tag_split": {**_claim(order=["a", "b"], metric="chunking.final", source="tagging"), "protocol": None},
    }
    del bad["p_tag_split"]["protocol"]
    path = _sheet(tmp_path, bad)
    with pytest.raises(StaticvecError) as err:
        load_claims_spec(path, ids, ["web", "muse"])
    text = str(err.value)
    assert f"{path}: claims.p_unknown_emb: 'nope' is not an embedding of the embeddings sheet" in text
    assert f"{path}: claims.p_unknown_metric.metric: 'wordsim' is not a result of intrinsic evaluation" in text
    assert "claims.p_bad_glob: best_of 'bert~layer*' matches no embedding" in text
    assert "claims.p_protocol.protocol: 'nope' is not one of config evaluation.protocols" in text
    assert "claims.p_tag_split.metric: 'chunking.final': a tagging result has the fields dev, test" in text
    # the schema: two machine forms, an unknown key, an unknown relation
    path = _sheet(tmp_path, {"p_two": _claim(order=["a", "b"], tie=["a", "b"]), "p_key": _claim(order=["a", "b"], colour=1),
                             "p_rel": _claim(order=["a", "b"], relation="<")})
    with pytest.raises(StaticvecError, match="invalid claims sheet") as err:
        load_claims_spec(path, ids)
    assert "claims/p_two" in str(err.value) and "claims/p_key" in str(err.value) and "claims/p_rel" in str(err.value)


def test_the_sheet_plans_with_the_default_config_and_seeds_follow_the_claims():
    from staticvec.config import load_yaml
    from staticvec.dag.workflow import Workflow

    config = load_yaml("config/config.yaml")
    w = Workflow({**config, "seeds": [1, 2, 3]})
    assert w.selected_claims() and w.claims_file("md").endswith("tables/claims.md")
    assert w.seeds("semglove_md") == [1, 2, 3]  # named by a claim
    assert w.seeds("c2v_post") == w.seeds("c2v") == [1, 2, 3]  # post-processing follows its base
    assert w.seeds("fasttext") == [1]  # no claim names it
    assert w.seeds("ase") == [1]  # deterministic
    assert w.seeds("bert_sg~window5") == [1]  # a sweep point: one seed unless seed_sweeps
    assert Workflow({**config, "seeds": [1, 2, 3], "seed_sweeps": True}).seeds("bert_sg~window5") == [1, 2, 3]
    assert Workflow({**config, "seeds": [1, 2, 3], "seeds_for": "all"}).seeds("fasttext") == [1, 2, 3]
    keys = dict(w.claims_results())
    assert keys["web/semglove_md/3"].endswith("eval/semglove_md/seed3/intrinsic.web.json")
    assert keys["tagging/contextual"].endswith(f"eval/{w.contextual_id}/tagging.json")
    assert "classification/x2static_para" in keys and "muse/ase~layer1/1" in keys
    # no claim selected: no target, every seeded embedding at the first seed only
    none = Workflow({**config, "seeds": [1, 2, 3], "targets": {**config["targets"], "claims": []}})
    assert none.claims_targets() == [] and none.seeds("semglove_md") == [1]


# ------------------------------------------------------------------ command line and summary


def test_cli_writes_the_table_and_the_summary_counts(tmp_path):
    from staticvec.cli import main
    from staticvec.report.summary import build_summary, write_summary

    files = []
    for emb, values in {"a": [0.63, 0.64, 0.65], "b": [0.60, 0.60, 0.60]}.items():
        for seed, v in enumerate(values, start=1):
            f = tmp_path / f"{emb}.{seed}.json"
            f.write_text(json.dumps(_result(ws353=v)))
            files.append(f"web/{emb}/{seed}={f}")
    sheet = _sheet(tmp_path, {"s_holds": _claim(order=["a", "b"]), "s_fails": _claim(order=["b", "a"]),
                              "w_few": {**_claim(order=["a", "b"], min_seeds=5), "paper": "wang"}})
    out = {k: tmp_path / f"claims.{k}" for k in ("md", "csv", "json")}
    assert main(["report", "claims", "--spec", str(sheet), "--tables", "", "--random", '["a", "b"]',
                 "--out-md", str(out["md"]), "--out-csv", str(out["csv"]), "--out-json", str(out["json"]), *files]) == 0
    data = json.loads(out["json"].read_text())
    assert data["verdicts"] == {"s_holds": "holds", "s_fails": "fails", "w_few": "undecided"}
    assert data["counts"]["semglove"] == {"holds": 1, "fails": 1, "undecided": 0, "flagged": 0}
    md = out["md"].read_text()
    assert "SemGloVe (Gan et al.): 1 hold, 1 fail, 0 undecided" in md and "too few seeds: 3 paired, 5 needed" in md
    assert out["csv"].read_text().count("\n") == 1 + 1 + 3  # caption, header, one line per comparison
    frame = build_summary([{"id": "a", "method": "glove"}], {("web", "a"): [_result(ws353=0.6)]}, ["web"], ["ws353"])
    write_summary(frame, "cap", tmp_path / "s.csv", tmp_path / "s.md", tmp_path / "s.html", data["counts"])
    assert (tmp_path / "s.md").read_text().startswith("**The papers' claims on this run**")
    assert "BERT+Skip-gram (Wang et al.): 0 hold, 0 fail, 1 undecided" in (tmp_path / "s.md").read_text()
    assert "SemGloVe (Gan et al.): 1 hold, 1 fail" in (tmp_path / "s.html").read_text()


def test_result_arguments_are_parsed_or_rejected(tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps(_result(ws353=0.5)))
    intrinsic, tagging, classification = parse_results([f"web/glove~dim50/2={f}", f"tagging/glove={f}"])
    assert list(intrinsic) == [("web", "glove~dim50")] and list(intrinsic[("web", "glove~dim50")]) == [2]
    assert list(tagging) == ["glove"] and classification == {}
    for bad in (f"web/glove={f}", f"web/glove/x={f}", "web/glove/1"):
        with pytest.raises(StaticvecError, match="expected PROTOCOL/ID/SEED=FILE"):
            parse_results([bad])


def test_the_published_reference_manifest_carries_the_verdicts(tmp_path):
    from staticvec.files import read_json, write_json
    from staticvec.report.reference import publish

    run = tmp_path / "run"
    bench = run / "benchmarks/train/glove/seed1.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "1.0\t0:00:01\t1\t0\t0\t0\t0\t0\t0\t1.0\n")
    write_json(run / "manifest.json", {"config_hash": "abc"})
    counts_ = {"wang": {"holds": 1, "fails": 0, "undecided": 0, "flagged": 0}}
    write_json(run / "tables/claims.json", {"counts": counts_, "verdicts": {"w_a": "holds"}, "claims": []})
    publish(run, tmp_path / "ref")
    saved = read_json(tmp_path / "ref/manifest.json")
    assert saved["claims"] == {"counts": counts_, "verdicts": {"w_a": "holds"}}
    assert (tmp_path / "ref/tables/claims.json").exists()
