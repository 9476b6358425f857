"""The claims on the items every row covers (issue 51): out-of-vocabulary items out of every comparison,
whatever the protocol, scores recomputed from the per-item record (hand-computed Spearman and accuracy), the
coverage printed and flagged, the interval over seeds and items (hand-computed), the tie's doubled p-value,
the replicability count, identical rows left out, the plan-time check that no number is compared twice,
the released-code twins, and the sheet's encodings at the paper's strength."""

import math

import numpy as np
import pytest
import yaml
from scipy.stats import norm, t

from staticvec.errors import StaticvecError
from staticvec.report.claims import Results, evaluate_claims, rule_text, to_markdown
from staticvec.sheets.claims import load_claims_spec


def _sheet(tmp_path, claims, defaults=None, **top):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"defaults": defaults or {}, "claims": claims, **top}, sort_keys=False))
    return path


def _claim(**form):
    return {"paper": "semglove", "where": "Table 1", "at": "§5.4, semglove.txt l. 1", "sentence": "q",
            "statement": "s", "protocol": "web", "metric": "rg65", **form}


def _one(tmp_path, claim, results, defaults=None):
    [record] = evaluate_claims(load_claims_spec(_sheet(tmp_path, {"x_claim": claim}, defaults)), results)
    return record


def _comps(record):
    return [a for part in record["parts"] for a in part["alternatives"]]


def _web(gold, cosines, found, score=0.0):
    """One similarity result under web: every pair scored (an OOV word is the mean vector), `found` flags."""
    return {"results": {"rg65": {"task": "similarity", "score": score, "found": found.count("1"),
                                 "total": len(gold), "scored": len(gold), "oov_policy": "mean",
                                 "items": {"gold": gold, "cosine": cosines, "found": found}}}}


GOLD = [1.0, 2.0, 3.0, 4.0, 5.0]


def test_an_item_oov_in_any_row_is_out_of_the_comparison_under_web(tmp_path):
    # a: pair 4 has an OOV word (its cosine is against the mean vector); b covers every pair. Common: 0-3.
    # a on 0-3: cosines .1 .2 .4 .3 -> ranks 1 2 4 3 against 1 2 3 4: rho = 1 − 6·2/60 = 0.8
    # b on 0-3: .4 .3 .2 .1 -> rho = −1. Difference 1.8 = 180 points (not the stored scores' 0.9 − (−1))
    a = _web(GOLD, [0.1, 0.2, 0.4, 0.3, 0.9], "11110", score=0.9)
    b = _web(GOLD, [0.4, 0.3, 0.2, 0.1, 0.0], "11111", score=-1.0)
    results = Results({("web", "a"): {1: a}, ("web", "b"): {1: b}}, random=[])
    rec = _one(tmp_path, _claim(order=["a", "b"]), results)
    [comp] = _comps(rec)
    assert comp["mean"] == pytest.approx(180.0)
    assert comp["coverage"]["sets"] == {"rg65": "4/5"} and comp["coverage"]["items"] == 4 and not comp["coverage"]["low"]
    assert rec["coverage"]["rg65"]["rows"] == {"a": 4, "b": 5}
    # below the stated coverage (here 90 %): marked in the items cell and in the verdict cell
    rec = _one(tmp_path, _claim(order=["a", "b"]), results, defaults={"min_coverage": 0.9})
    assert _comps(rec)[0]["coverage"]["low"] == ["rg65"]
    assert any("less than 90% of its items" in n for n in rec["notes"])
    md = to_markdown([rec], "cap")
    assert "4/5 ⚠ below coverage on rg65" in md and "less than 90% of its items" in md


def test_a_mean_vector_result_without_oov_flags_is_not_tested(tmp_path):
    old = _web(GOLD, [0.1, 0.2, 0.4, 0.3, 0.9], "11110")
    del old["results"]["rg65"]["items"]["found"]  # written before items.found: which pairs were OOV is unknown
    b = _web(GOLD, [0.4, 0.3, 0.2, 0.1, 0.0], "11111")
    rec = _one(tmp_path, _claim(order=["a", "b"]), Results({("web", "a"): {1: old}, ("web", "b"): {1: b}}))
    assert rec["verdict"] == "not tested" and "out-of-vocabulary items" in rec["verdict_text"]


def _analogy(correct, found):
    return {"results": {"google": {"task": "analogy", "score": correct.count("1") / len(correct),
                                   "found": found.count("1"),
                                   "total": len(correct), "scored": len(correct), "oov_policy": "mean",
                                   "items": {"correct": correct, "found": found}}}}


def test_accuracy_on_the_common_questions_and_its_exact_item_interval(tmp_path):
    # a right on 0, 1, 2 (3 is OOV for b); b right on 0. Common 0, 1, 2, 4, 5:
    # a: 1 1 1 0 1 -> 4/5; b: 1 0 0 0 0 -> 1/5; difference 60 points
    a = _analogy("111101", "111111")
    b = _analogy("100100", "111011")
    results = Results({("web", "a"): {1: a}, ("web", "b"): {1: b}}, random=[])
    rec = _one(tmp_path, _claim(metric="google", order=["a", "b"]), results)
    [comp] = _comps(rec)
    assert comp["mean"] == pytest.approx(60.0) and comp["coverage"]["sets"] == {"google": "5/6"}
    # deterministic rows: the items' sampling only, exactly: d = 0 1 1 0 1 (×100), mean 60,
    # Σ(d − d̄)² = 3·40² + 2·60² = 12,000; / n² = 480
    d = np.array([0, 1, 1, 0, 1]) * 100.0
    var = ((d - d.mean()) ** 2).sum() / 25
    assert var == pytest.approx(480.0) and comp["var_items"] == pytest.approx(480.0)
    half = norm.ppf(0.975) * math.sqrt(480.0)
    assert (comp["low"], comp["high"]) == (pytest.approx(60 - half), pytest.approx(60 + half))
    assert comp["covers"] == "items" and comp["status"] == "holds"  # 60 − 42.9 > 0


def _seeded(correct_by_seed, found):
    return {s: _analogy(c, found) for s, c in enumerate(correct_by_seed, start=1)}


def test_seeds_and_items_together_by_hand(tmp_path):
    # a and b on 4 questions, 3 seeds each; per seed a − b: (3−1)/4, (2−1)/4, (4−2)/4 -> 50, 25, 50 points
    a = _seeded(["1110", "1100", "1111"], "1111")
    b = _seeded(["1000", "1000", "1100"], "1111")
    results = Results({("web", "a"): a, ("web", "b"): b}, random=["a", "b"])
    [comp] = _comps(_one(tmp_path, _claim(metric="google", order=["a", "b"]), results))
    diffs = np.array([50.0, 25.0, 50.0])
    var_seeds = diffs.var(ddof=1) / 3
    # items: per question, the seed-mean of a minus that of b: (1 − 1), (1 − 1/3), (2/3 − 0), (1/3 − 0), ×100:
    # mean 41.67, Σ(d − d̄)² = 41.67² + 2·25² + 8.33² = 3055.6, / n² = 190.97
    d = np.array([0.0, 2 / 3, 2 / 3, 1 / 3]) * 100
    var_items = ((d - d.mean()) ** 2).sum() / 16
    assert var_items == pytest.approx(190.97, abs=0.01)
    df = (var_items + var_seeds) ** 2 / (var_seeds ** 2 / 2)
    half = t.ppf(0.975, df) * math.sqrt(var_items + var_seeds)
    assert comp["mean"] == pytest.approx(diffs.mean()) and comp["var_items"] == pytest.approx(var_items)
    assert comp["df"] == pytest.approx(df) and comp["high"] - comp["mean"] == pytest.approx(half)
    assert comp["covers"] == "seeds and items"


def test_the_similarity_bootstrap_resamples_items_jointly(tmp_path):
    rng = np.random.default_rng(3)
    gold = rng.normal(size=40).tolist()
    a = _web(gold, (np.asarray(gold) + rng.normal(0, 0.5, 40)).tolist(), "1" * 40)
    same = _web(gold, a["results"]["rg65"]["items"]["cosine"], "1" * 40)  # b = a, shifted by a constant
    same["results"]["rg65"]["items"]["cosine"] = [c + 0.01 for c in same["results"]["rg65"]["items"]["cosine"]]
    results = Results({("web", "a"): {1: a}, ("web", "b"): {1: same}}, random=[])
    [comp] = _comps(_one(tmp_path, _claim(order=["a", "b"]), results, defaults={"bootstrap": 200}))
    # the same ranks on every resample: a paired bootstrap sees no difference at all (an unpaired one would)
    assert comp["mean"] == pytest.approx(0.0) and comp["var_items"] == pytest.approx(0.0, abs=1e-12)


def test_a_tie_that_is_outside_alone_needs_the_doubled_p_to_fail(tmp_path):
    # per seed 1.9, 2.0, 2.1 points against tol 0.5: t = (2 − 0.5)/(0.1/√3) = 25.98 on 2 df
    rows = {("web", "a"): {s: {"results": {"rg65": {"score": v, "found": 5, "total": 5, "scored": 5}}}
                           for s, v in zip((1, 2, 3), (0.619, 0.620, 0.621))},
            ("web", "b"): {s: {"results": {"rg65": {"score": 0.60, "found": 5, "total": 5, "scored": 5}}}
                           for s in (1, 2, 3)}}
    rec = _one(tmp_path, _claim(tie=["a", "b"], tol=0.5), Results(rows, random=["a", "b"]))
    [comp] = _comps(rec)
    stat = (2.0 - 0.5) / (0.1 / math.sqrt(3))
    assert comp["p_fail"] == pytest.approx(2 * t.sf(stat, 2)) and rec["verdict"] == "fails"


def test_each_data_set_claim_counts_on_how_many_sets_it_holds(tmp_path):
    sets = ["ws353", "simlex999", "rg65"]

    def res(values):
        return {"results": {k: {"score": v, "found": 5, "total": 5, "scored": 5} for k, v in zip(sets, values)}}

    # a − b per seed: ws353 +10, +11, +12 (holds), simlex999 +5, +5.1, +5.2 (holds), rg65 −1, 0, +2 (undecided)
    a = {1: res([0.70, 0.55, 0.49]), 2: res([0.71, 0.551, 0.50]), 3: res([0.72, 0.552, 0.52])}
    b = {s: res([0.60, 0.50, 0.50]) for s in (1, 2, 3)}
    rec = _one(tmp_path, _claim(metric={"each": sets}, order=["a", "b"]),
               Results({("web", "a"): a, ("web", "b"): b}, random=["a", "b"]))
    rep = rec["replicability"]
    assert rec["verdict"] == "undecided" and rep["n"] == 3 and rep["holds"] == 2 and rep["fails"] == 0
    assert set(rep["holds_sets"]) == {"ws353", "simlex999"} and "holds on 2 (" in rep["text"]


def test_identical_rows_are_left_out_with_the_reason(tmp_path):
    # art0 is c's identity post-processing: the same per-item values. post > c and post > art0 compare the
    # same numbers: the second part is left out of the verdict, and the cell says why
    c = _web(GOLD, [0.1, 0.2, 0.4, 0.3, 0.5], "11111")
    post = _web(GOLD, [0.1, 0.2, 0.3, 0.4, 0.5], "11111")
    art = _web(GOLD, [0.1, 0.2, 0.4, 0.3, 0.5], "11111")
    rec = _one(tmp_path, _claim(order=["post", ["c", "art0"]]),
               Results({("web", "post"): {1: post}, ("web", "c"): {1: c}, ("web", "art0"): {1: art}}))
    assert [p["alternatives"][0]["comparison"] for p in rec["parts"]] == ["post > c"]
    assert rec["identical"] == ["post > art0"] and "1 part left out" in rec["notes"][0]
    # one row under two names compared with itself: not a comparison
    rec = _one(tmp_path, _claim(order=["c", "art0"]), Results({("web", "c"): {1: c}, ("web", "art0"): {1: art}}))
    assert rec["verdict"] == "not tested" and rec["identical"] == ["c > art0"]


def test_no_number_is_compared_twice_at_plan_time(tmp_path):
    ids = ["a", "b", "c"]
    # within a claim: an order and a tie over the same pair
    bad = _sheet(tmp_path, {"x_one": _claim(all_of=[{"order": ["a", "b"]}, {"tie": ["b", "a"]}])})
    with pytest.raises(StaticvecError, match=r"claims.x_one: two parts compare the same numbers \(b − a on rg65\)"):
        load_claims_spec(bad, ids)
    # two claims of a paper: the same comparison is an error naming both, unless one shares the other
    two = {"x_one": _claim(order=["a", ["b", "c"]]), "x_two": _claim(order=["a", "b"])}
    with pytest.raises(StaticvecError, match=r"claims.x_two and claims.x_one .* 1 part \(a − b on rg65\)"):
        load_claims_spec(_sheet(tmp_path, two), ids)
    assert load_claims_spec(_sheet(tmp_path, {**two, "x_two": {**two["x_two"], "shares": ["x_one"]}}), ids)
    # another metric, or another paper's claim, is other numbers
    assert load_claims_spec(_sheet(tmp_path, {**two, "x_two": {**two["x_two"], "metric": "ws353"}}), ids)
    assert load_claims_spec(_sheet(tmp_path, {**two, "x_two": {**two["x_two"], "paper": "wang"}}), ids)


def test_a_released_row_twin_reads_only_the_released_rows_comparisons(tmp_path):
    claims = {"w_best": {**_claim(order=["ours", ["sg", "glove"]]), "paper": "wang"},
              "w_other": {**_claim(order=["sg", "glove"]), "paper": "wang", "metric": "ws353"}}
    spec = load_claims_spec(_sheet(tmp_path, claims, released_rows={"wang": {"ours": "ours_rel"}}),
                            ["ours", "ours_rel", "sg", "glove"])
    assert list(spec["claims"]) == ["w_best", "w_best_released", "w_other"]
    twin = spec["claims"]["w_best_released"]
    assert twin["order"] == ["ours_rel", ["sg", "glove"]] and twin["twin_of"] == "w_best"
    assert "released code" in twin["reading"] and "paper's settings" in spec["claims"]["w_best"]["reading"]
    records = evaluate_claims(spec, Results(), ids=["ours", "ours_rel", "sg", "glove"])
    rec = records[1]
    assert [c["comparison"] for c in _comps(rec)] == ["ours_rel > sg", "ours_rel > glove"]
    md = to_markdown(records, "cap")
    assert "- of which BERT+Skip-gram (Wang et al.) on the released code's row (the `_released` claims): " \
           "0 holds, 0 fails, 0 undecided, 1 not tested" in md
    # a table without the released row: no twin, listed
    tables = {"t2": {"source": "intrinsic", "rows": {"ours": "ours", "sg": "sg", "glove": "glove"}}}
    claims["w_best"]["table"] = "t2"
    spec = load_claims_spec(_sheet(tmp_path, claims, released_rows={"wang": {"ours": "ours_rel"}}), tables=tables)
    assert "w_best_released" not in spec["claims"] and spec["released_skipped"] == {"wang": ["w_best"]}


def test_the_rule_text_says_the_seeds_the_results_had():
    records = [{"source": "tagging", "parts": [{"alternatives": [{"n": 3}]}]},
               {"source": "intrinsic", "parts": [{"alternatives": [{"n": 1}, {"n": 3}]}]}]
    text = rule_text(records, 0.95, {"min_coverage": 0.5, "bootstrap": 1000, "min_seeds": 3})
    assert "the taggers: 3 paired seeds" in text and "the intrinsic rows: 1 or 3 paired seeds" in text
    assert "1000 resamples" in text and "less than 50% of its items" in text and "run one seed" not in text


def test_the_sheets_trend_and_band_claims_are_encoded_at_the_papers_strength():
    spec = yaml.safe_load(open("config/claims.yaml"))["claims"]
    growth = spec["semglove_f2b_growth"]["all_of"]
    fractions = ["1", "0.75", "0.5", "0.25", "0.125"]
    assert [f["order"] for f in growth] == [[f"{m}~fraction{x}" for x in fractions] for m in ("glove", "semglove_sd")]
    dims = spec["semglove_f2a_growth"]["all_of"]
    assert [f["order"] for f in dims] == [[f"{m}~dim{d}" for d in (300, 200, 100, 50)]
                                          for m in ("glove", "semglove_sd", "semglove_md")]
    window8 = spec["wang_f4_window8"]
    assert window8["tie"] == ["bert_sg~window8", "bert_sg~window5"] and "relation" not in window8  # a band
    assert "cr.f1" not in str(spec["x2static_t5_runs"]["metric"])  # its macro-F1 half is x2static_t4_average's


def test_end_to_end_the_harness_results_under_web_are_compared_on_covered_pairs(tmp_path):
    """The evaluation harness's own result files (web: every pair scored, the OOV ones against the mean
    vector) through `staticvec report claims`: the comparison reads the pairs both rows cover."""
    import json

    from staticvec.cli import main
    from staticvec.embeddings import Embeddings
    from staticvec.evaluate.intrinsic import evaluate
    from staticvec.evaluate.items import score_on

    from test_evaluate_intrinsic import royal_embedding, small_data_dir

    data = small_data_dir(tmp_path / "eval")
    a = royal_embedding()
    # b lacks "apple" (king-apple is OOV for b only) and ranks man-king below king-queen (a: above)
    e = np.eye(5, dtype=np.float32)
    words = {"man": e[0] + 0.1 * e[3], "woman": e[1], "king": e[0] + e[2], "queen": e[2], "pear": e[3]}
    b = Embeddings(list(words), np.stack(list(words.values())))
    # c: a with its dimensions reversed, the same cosines: one row under two names
    c = Embeddings(list(a.words), a.vectors[:, ::-1].copy())
    files = []
    for name, emb in (("a", a), ("b", b), ("c", c)):
        result = evaluate(emb, ["ws353"], data, oov="mean", device="cpu")
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(result))
        files.append(f"web/{name}/1={path}")
        entry = result["results"]["ws353"]
        assert entry["scored"] == 4 and entry["found"] == (2 if name == "b" else 3)
    ra, rb = (json.loads((tmp_path / f"{n}.json").read_text())["results"]["ws353"] for n in "ab")
    sheet = _sheet(tmp_path, {"x_claim": _claim(metric="ws353", order=["a", "b"]),
                              "x_same": _claim(metric="ws353", order=["a", "c"])})
    out = {k: tmp_path / f"claims.{k}" for k in ("md", "csv", "json")}
    assert main(["report", "claims", "--spec", str(sheet), "--tables", "", "--random", "[]", "--out-md",
                 str(out["md"]), "--out-csv", str(out["csv"]), "--out-json", str(out["json"]), *files]) == 0
    claims = json.loads(out["json"].read_text())["claims"]
    [comp] = _comps(claims[0])
    # king-queen and man-king: the two pairs both cover (King-Missing is OOV for both, king-apple for b):
    # a ranks them as the gold does (rho 1), b the other way (−1)
    expected = 100 * (score_on(ra, {0, 1}) - score_on(rb, {0, 1}))
    assert expected == pytest.approx(200.0)
    assert comp["coverage"]["sets"] == {"ws353": "2/4"} and comp["mean"] == pytest.approx(expected)
    assert comp["mean"] != pytest.approx(100 * (ra["score"] - rb["score"]))
    assert "| 2/4 |" in out["md"].read_text()
    # the harness's per-item values say c is a under another name
    assert claims[1]["verdict"] == "not tested" and claims[1]["identical"] == ["a > c"]


def test_the_whole_sheet_is_decided_on_synthetic_results():
    """Every claim of config/claims.yaml through the new machinery (items every row covers, the item bootstrap,
    replicability, released twins, identical rows) on synthetic per-item results of every row it names:
    each claim gets a verdict, and every intrinsic interval covers the items."""
    from staticvec.config import load_yaml
    from staticvec.dag.workflow import Workflow
    from staticvec.sheets.claims import claim_metric_items, claim_refs, expand_ref
    from staticvec.sheets.tables import load_tables_spec

    w = Workflow(load_yaml("config/config.yaml"))
    ids = w.sheet.ids()
    tables = load_tables_spec("config/tables.yaml")["tables"]
    spec = load_claims_spec("config/claims.yaml", ids, tables=tables)
    spec["defaults"]["bootstrap"] = 100
    rng = np.random.default_rng(7)
    sizes = {"rg65": 65, "ws353": 120, "ws353_sim": 80, "ws353_rel": 90, "simlex999": 150, "rw": 150, "men": 150,
             "simverb3500": 150, "google": 200, "msr": 150}
    gold = {k: rng.normal(size=n).tolist() for k, n in sizes.items()}
    intrinsic, tagging, classification, records, random = {}, {}, {}, {}, set()
    for claim in spec["claims"].values():
        source, protocol = claim.get("source", "intrinsic"), claim.get("protocol")
        sets = [p.split(".")[0] for p in claim_metric_items(claim)]
        for emb in (e for ref in claim_refs(claim) for e in expand_ref(ref, ids)):
            seeded = w.is_random(emb) if emb in w.sheet else True
            seeds = (1, 2, 3) if seeded else (1,)
            if source == "intrinsic":
                random |= {emb} if seeded else set()
                runs = intrinsic.setdefault((protocol, emb), {s: {"results": {}} for s in seeds})
                for s in seeds:
                    for name in sets:
                        if name in sizes and name not in ("google", "msr"):
                            n = sizes[name]
                            vocab = np.random.default_rng(sum(map(ord, emb.split("~")[0])))  # a method's vocabulary
                            found = "".join("1" if x > 0.03 else "0" for x in vocab.random(n))
                            cos = (np.asarray(gold[name]) + rng.normal(0, 1, n)).tolist()
                            runs[s]["results"][name] = {"task": "similarity", "score": 0.5, "found": found.count("1"),
                                                        "total": n, "scored": n, "oov_policy": "mean",
                                                        "items": {"gold": gold[name], "cosine": cos, "found": found}}
                        elif name in sizes:
                            n = sizes[name]
                            correct = "".join("1" if rng.random() > 0.5 else "0" for _ in range(n))
                            runs[s]["results"][name] = {"task": "analogy", "score": correct.count("1") / n,
                                                        "found": n, "total": n, "scored": n, "oov_policy": "mean",
                                                        "items": {"correct": correct, "found": "1" * n}}
                        else:  # categorization, SemEval-2012: no per-item values
                            runs[s]["results"][name] = {"task": "categorization" if name != "semeval2012" else
                                                        "relational", "score": float(rng.random()), "found": 40,
                                                        "total": 44, "scored": 44,
                                                        "variants": {"web": {"score": float(rng.random())}}}
            elif source == "tagging":
                tagging[emb] = {"results": {k.split(".")[0]: {"score": 0.9, "seeds": [1, 2, 3],
                                                              "test": {"values": rng.uniform(0.8, 0.9, 3).tolist()},
                                                              "dev": {"values": rng.uniform(0.8, 0.9, 3).tolist()}}
                                            for k in claim_metric_items(claim)}}
            elif source == "classification":
                classification[emb] = {"seeds": [1, 2, 3], "datasets": {k.split(".")[0]: {"runs": [
                    {"test": {"macro_f1": float(rng.random()), "accuracy": float(rng.random())}} for _ in range(3)]}
                    for k in claim_metric_items(claim)}}
            else:
                records[emb] = {s: {"dev_curve": {"points": [{"score": float(rng.random())}]}} for s in (1, 2, 3)}
    results = Results(intrinsic, tagging, classification, sorted(random), records=records)
    out = evaluate_claims(spec, results, tables, ids=ids)
    assert len(out) == len(spec["claims"]) and all(r["verdict"] in ("holds", "fails", "undecided", "not tested")
                                                   for r in out)
    comps = [(r, c) for r in out for c in _comps(r)]
    intrinsic_per_item = [c for r, c in comps if r["source"] == "intrinsic" and (c.get("coverage") or {}).get("per_item")]
    bad = [(r["id"], c["comparison"], c.get("status"), c.get("reason"), c.get("covers_why")) for r, c in comps
           if r["source"] == "intrinsic" and (c.get("coverage") or {}).get("per_item") and not c.get("var_items")]
    assert intrinsic_per_item and not bad, bad[:5]
    assert all(c["covers"] == "seeds" for r, c in comps if r["source"] != "intrinsic" and c.get("covers"))
    assert any(r["replicability"] for r in out) and any(r["id"].endswith("_released") for r in out)
    md = to_markdown(out, "cap", defaults=spec["defaults"])
    assert "Seeds read here:" in md and "(not per item)" in md
