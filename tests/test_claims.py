"""The claims sheet and its verdicts, on hand-made result files: the paired interval, holds / fails /
undecided / not tested, ties and ">=", deterministic results, the pairing by seed, every pair of an order,
Holm's adjustment of "fails" and the intersection-union "holds" on hand-computed p-values, disjunctions,
the common ground of an OOV-dropping protocol, each_of and best_of, development curves, the paper-number
check with print precision, the "beyond the papers" line, the schema and plan-time checks, and the CLI."""

import json
import math
from pathlib import Path

import pytest
import yaml

from staticvec.errors import StaticvecError
from staticvec.report.claims import Results, caption, counts, decide, evaluate_claims, parse_results, verdict_of
from staticvec.sheets.claims import load_claims_spec

T_975_2 = 4.302652729911275  # Student t, 2 degrees of freedom, 97.5 % quantile (tables: 4.303)


def t2_cdf(t):
    """Student t with 2 degrees of freedom, in closed form: F(t) = 1/2 + t / (2 √(2 + t²))."""
    return 0.5 + t / (2 * math.sqrt(2 + t * t))


def _result(**scores):
    return {"results": {k: {"score": v, "found": 10, "total": 10, "scored": 10} for k, v in scores.items()}}


def _intrinsic(protocol="web", **by_id):
    """{(protocol, id): {seed: result}} from id=[ws353 fraction per seed 1, 2, ...]."""
    return {(protocol, emb): {s + 1: _result(ws353=v) for s, v in enumerate(values)} for emb, values in by_id.items()}


def _sheet(tmp_path, claims, defaults=None, not_encoded=None):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"defaults": defaults or {}, "claims": claims,
                                    **({"not_encoded": not_encoded} if not_encoded else {})}))
    return path


def _claim(**form):
    return {"paper": "semglove", "where": "Table 1", "at": "§5.4, semglove.txt l. 1", "sentence": "q",
            "statement": "s", "protocol": "web", "metric": "ws353", **form}


def _one(tmp_path, claim, results, tables=None, defaults=None, ids=None):
    spec = load_claims_spec(_sheet(tmp_path, {"x_claim": claim}, defaults), tables=tables)
    [record] = evaluate_claims(spec, results, tables, ids=ids)
    return record


def _comps(record):
    return [a for part in record["parts"] for a in part["alternatives"]]


# ------------------------------------------------------------------ one comparison


def test_holds_with_the_hand_computed_paired_interval(tmp_path):
    # a − b per seed: 3, 4, 5 points -> mean 4, sd 1, half-width t(2) · 1 / √3 = 2.484 -> [1.52, 6.48]: holds
    results = Results(_intrinsic(a=[0.63, 0.64, 0.65], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)
    [comp] = _comps(record)
    half = T_975_2 * 1.0 / math.sqrt(3)
    assert comp["n"] == 3 and comp["seeds"] == [1, 2, 3]
    assert comp["mean"] == pytest.approx(4.0)
    assert comp["low"] == pytest.approx(4.0 - half) and comp["high"] == pytest.approx(4.0 + half)
    assert comp["status"] == "holds" and record["verdict"] == "holds" and record["verdict_text"] == "holds: 1 hold"
    # the one-sided p-values behind the verdicts: t = 4√3 = 6.93 on 2 df
    assert comp["p_hold"] == pytest.approx(t2_cdf(-4 * math.sqrt(3))) and comp["p_fail"] == pytest.approx(
        1 - t2_cdf(-4 * math.sqrt(3)))


def test_fails_when_the_interval_is_on_the_other_side(tmp_path):
    results = Results(_intrinsic(a=[0.60, 0.60, 0.60], b=[0.63, 0.64, 0.65]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)
    assert _comps(record)[0]["high"] == pytest.approx(-4.0 + T_975_2 / math.sqrt(3))
    assert record["verdict"] == "fails" and record["verdict_text"] == "fails: 1 fail"
    assert "other side of 0" in record["parts"][0]["reason"]


def test_undecided_when_the_interval_straddles_zero(tmp_path):
    # differences 3, 1, 2: [2 − 2.484, 2 + 2.484]
    results = Results(_intrinsic(a=[0.63, 0.61, 0.62], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)
    comp = _comps(record)[0]
    assert comp["low"] == pytest.approx(2 - T_975_2 / math.sqrt(3)) and comp["low"] < 0 < comp["high"]
    assert record["verdict"] == "undecided" and "straddles 0" in record["parts"][0]["reason"]


def test_too_few_seeds_is_not_tested_whatever_the_difference(tmp_path):
    results = Results(_intrinsic(a=[0.90, 0.91], b=[0.10, 0.11]), random=["a", "b"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)  # min_seeds 3 by default
    comp = _comps(record)[0]
    assert comp["n"] == 2 and comp["mean"] == pytest.approx(80.0) and comp["p_fail"] is None
    assert record["verdict"] == "not tested" and record["verdict_text"] == "not tested (2 seeds, 3 needed)"
    # the same two seeds are tested with min_seeds 2
    assert _one(tmp_path, _claim(order=["a", "b"], min_seeds=2), results)["verdict"] == "holds"


def test_one_seed_by_design_reads_not_tested_one_seed(tmp_path):
    results = Results(_intrinsic(a=[0.9], b=[0.1]), random=["a"])
    record = _one(tmp_path, _claim(order=["a", "b"]), results)
    comp = _comps(record)[0]
    assert comp["n"] == 1 and comp["low"] is None
    assert record["verdict"] == "not tested" and record["verdict_text"] == "not tested (1 seed)"


def test_tie_within_and_outside_the_tolerance(tmp_path):
    # differences 0.1, 0.2, 0.3 points: mean 0.2, sd 0.1 -> half 0.248 -> [−0.048, 0.448] within ±0.5: holds
    within = Results(_intrinsic(a=[0.601, 0.602, 0.603], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    assert _one(tmp_path, _claim(tie=["a", "b"], tol=0.5), within)["verdict"] == "holds"
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
    comp = _comps(record)[0]
    assert record["verdict"] == "holds" and comp["exact"] and comp["low"] == comp["high"] == pytest.approx(1.0)
    assert "exact difference" in comp["reason"]
    # one seeded side: its seeds pair with the deterministic value (a_s − 0.60)
    mixed = Results(_intrinsic(a=[0.63, 0.64, 0.65], b=[0.60]), random=["a"])
    comp = _comps(_one(tmp_path, _claim(order=["a", "b"]), mixed))[0]
    assert comp["n"] == 3 and comp["mean"] == pytest.approx(4.0) and comp["status"] == "holds"


def test_differences_are_paired_by_seed(tmp_path):
    # seed effects of ±10 points shared by both methods; a is 1 point better on every seed. Paired: d = 1, 1, 1
    # (zero spread: holds); an unpaired comparison of the means would straddle 0.
    intrinsic = _intrinsic(a=[0.51, 0.71, 0.61, 0.41], b=[0.50, 0.70, 0.60, 0.40])
    del intrinsic[("web", "a")][4]  # seed 4 only for b: left out of the pairs
    comp = _comps(_one(tmp_path, _claim(order=["a", "b"]), Results(intrinsic, random=["a", "b"])))[0]
    assert comp["seeds"] == [1, 2, 3] and comp["mean"] == pytest.approx(1.0)
    assert comp["high"] - comp["low"] == pytest.approx(0.0, abs=1e-9) and comp["status"] == "holds"


# ------------------------------------------------------------------ forms


def _two_sets():
    def res(ws, sl):
        return {"results": {"ws353": {"score": ws, "total": 5, "scored": 5},
                            "simlex999": {"score": sl, "total": 5, "scored": 5}}}

    intrinsic = {("web", e): {s: res(*v) for s, v in zip((1, 2, 3), vals)} for e, vals in {
        "a": [(0.60, 0.40), (0.62, 0.40), (0.64, 0.40)],
        "b": [(0.50, 0.42), (0.50, 0.42), (0.50, 0.42)],
        "c": [(0.40, 0.30), (0.40, 0.30), (0.40, 0.30)],
    }.items()}
    return Results(intrinsic, random=["a", "b", "c"])


def test_an_order_tests_every_pair_not_only_neighbours(tmp_path):
    results = _two_sets()
    # mean of the two sets: a − b = (10 − 2)/2, (12 − 2)/2, (14 − 2)/2 = 4, 5, 6; a − c = 15, 16, 17; b − c = 11
    rec = _one(tmp_path, _claim(metric={"mean": ["ws353", "simlex999"]}, order=["a", "b", "c"]), results)
    assert [c["comparison"] for c in _comps(rec)] == ["a > b", "a > c", "b > c"]
    assert [c["mean"] for c in _comps(rec)] == pytest.approx([5.0, 16.0, 11.0])
    # a list in the order: a > each of b and c
    rec = _one(tmp_path, _claim(order=["a", ["b", "c"]]), results)
    assert [c["comparison"] for c in _comps(rec)] == ["a > b", "a > c"]


def test_each_metric_all_of_and_contrast(tmp_path):
    results = _two_sets()
    # each: a > b holds on ws353 and fails on simlex999 (−2 on every seed: exact), so the claim fails
    rec = _one(tmp_path, _claim(metric={"each": ["ws353", "simlex999"]}, order=["a", "b"]), results)
    assert [p["status"] for p in rec["parts"]] == ["holds", "fails"]
    assert rec["verdict"] == "fails" and rec["verdict_text"] == "fails: 1 fail / 1 hold"
    # all_of: forms with their own relation and metric
    rec = _one(tmp_path, _claim(all_of=[{"order": ["a", "c"]},
                                        {"order": ["b", "a"], "relation": ">=", "tol": 3.0, "metric": "simlex999"}]),
               results)
    assert [c["comparison"] for c in _comps(rec)] == ["a > c", "b >= a"] and rec["verdict"] == "holds"
    # contrast (a − b) − (b − c) on ws353 = (10 + 2k) − 10 = 0, 2, 4 -> mean 2, straddles (half 4.97)
    rec = _one(tmp_path, _claim(contrast=[{"embedding": "a", "weight": 1}, {"embedding": "b", "weight": -2},
                                          {"embedding": "c", "weight": 1}]), results)
    assert _comps(rec)[0]["mean"] == pytest.approx(2.0) and rec["verdict"] == "undecided"


# ------------------------------------------------------------------ the aggregation (hand-computed p-values)


def _diffs(**by_id):
    """Results whose differences from the zero row `z` are the given points per seed (ws353)."""
    return Results(_intrinsic(z=[0.0, 0.0, 0.0], **{k: [v / 100 for v in d] for k, d in by_id.items()}),
                   random=["z", *by_id])


def test_holm_keeps_two_parts_that_fail_together(tmp_path):
    # p(fails) of "x > z" is F(t) with t = mean √3 / sd (2 df): [−3, −4, −5] -> t = −4√3, p = 0.010102;
    # [−2, −3, −4] -> t = −3√3, p = 0.017549. Holm: 2 · 0.010102 = 0.020204, then max(0.020204, 0.017549):
    # both adjusted p-values 0.0202 <= 0.025 -> both fail.
    p1, p2 = t2_cdf(-4 * math.sqrt(3)), t2_cdf(-3 * math.sqrt(3))
    assert (round(p1, 6), round(p2, 6)) == (0.010102, 0.017549)
    rec = _one(tmp_path, _claim(order=[["x", "y"], "z"]), _diffs(x=[-3, -4, -5], y=[-2, -3, -4]))
    assert [p["p_fail_holm"] for p in rec["parts"]] == pytest.approx([2 * p1, 2 * p1])
    assert [p["status"] for p in rec["parts"]] == ["fails", "fails"] and rec["verdict_text"] == "fails: 2 fail"


def test_holm_undoes_fails_that_only_hold_one_at_a_time(tmp_path):
    # two parts at p = 0.017549 each: alone each interval is below 0 ([−5.48, −0.52]), but Holm gives
    # 2 · 0.017549 = 0.0351 > 0.025 for both: neither fails, the claim is undecided
    p = t2_cdf(-3 * math.sqrt(3))
    rec = _one(tmp_path, _claim(order=[["x", "y"], "z"]), _diffs(x=[-2, -3, -4], y=[-4, -3, -2]))
    assert all(c["status"] == "fails" for c in _comps(rec))  # each interval alone
    assert [part["p_fail_holm"] for part in rec["parts"]] == pytest.approx([2 * p, 2 * p])
    assert [part["status"] for part in rec["parts"]] == ["undecided", "undecided"]
    assert rec["verdict"] == "undecided" and "not after Holm's adjustment over 2 tested parts" in rec["parts"][0]["reason"]
    # the case: 18 parts, two of them alone on the other side, 2 holding, 14 straddling
    rec = _one(tmp_path, _claim(order=[[f"x{k}" for k in range(18)], "z"]),
               _diffs(**{"x0": [-2, -3, -4], "x1": [-4, -3, -2], "x2": [3, 4, 5], "x3": [5, 4, 3],
                         **{f"x{k}": [-1, 0, 2 + k / 10] for k in range(4, 18)}}))  # 14 distinct rows
    assert rec["verdict_text"] == "undecided: 2 hold / 16 undecided"


def test_an_exact_part_fails_whatever_the_others_and_holds_need_every_part(tmp_path):
    # a deterministic difference on the other side has p 0: Holm keeps it failing among straddling parts
    results = Results(_intrinsic(z=[0.5], d=[0.4], x=[0.49, 0.50, 0.52], y=[0.60, 0.61, 0.62]),
                      random=["x", "y"])
    rec = _one(tmp_path, _claim(order=[["d", "x", "y"], "z"]), results)
    assert [p["status"] for p in rec["parts"]] == ["fails", "undecided", "holds"]
    assert rec["verdict_text"] == "fails: 1 fail / 1 hold / 1 undecided"
    # holds: every part holds (no correction: an intersection-union test)
    rec = _one(tmp_path, _claim(order=["y", "z"]), results)
    assert rec["verdict"] == "holds"


def test_verdict_cell_text_from_the_tally():
    parts = [{"status": s, "alternatives": [{"short": "1 seed"}]} for s in
             ["fails"] * 2 + ["holds"] * 2 + ["undecided"] * 14]
    assert verdict_of(parts)[2] == "fails: 2 fail / 2 hold / 14 undecided"
    untested = [{"status": "not tested", "alternatives": [{"short": "1 seed"}]},
                {"status": "not tested", "alternatives": [{"short": "ner: not run: data not supplied"}]}]
    assert verdict_of(untested)[:1] == ("not tested",)
    assert verdict_of(untested)[2] == "not tested (1 seed; ner: not run: data not supplied)"
    assert verdict_of([{"status": "holds", "alternatives": []}, *untested[:1]])[2] == "undecided: 1 hold / 1 not tested"


def test_a_disjunction_holds_on_one_alternative_and_fails_only_when_all_do(tmp_path):
    claim = _claim(metric={"each": ["ws353"]}, any_of=[{"order": ["x", "z"]}, {"order": ["y", "z"]}])
    # x holds ([+3,+4,+5]: p(hold) = F(−4√3) = 0.0101, Bonferroni 2 · 0.0101 = 0.0202 <= 0.025), y straddles
    rec = _one(tmp_path, claim, _diffs(x=[3, 4, 5], y=[-1, 0, 2]))
    [part] = rec["parts"]
    assert part["p_hold"] == pytest.approx(2 * t2_cdf(-4 * math.sqrt(3))) and part["status"] == "holds"
    # x on the other side, y straddling (mean 1/3, sd √(7/3): t = 0.378): not every alternative fails ->
    # undecided; the part's p(fail) is the larger of the two, y's F(0.378) = 0.629
    rec = _one(tmp_path, claim, _diffs(x=[-3, -4, -5], y=[-1, 0, 2]))
    assert rec["parts"][0]["status"] == "undecided" and rec["parts"][0]["p_fail"] == pytest.approx(
        t2_cdf((1 / 3) / (math.sqrt(7 / 3) / math.sqrt(3))))
    # both on the other side: p(fail) of the part is the larger one, 0.017549
    rec = _one(tmp_path, claim, _diffs(x=[-3, -4, -5], y=[-2, -3, -4]))
    assert rec["parts"][0]["p_fail"] == pytest.approx(t2_cdf(-3 * math.sqrt(3))) and rec["verdict"] == "fails"


# ------------------------------------------------------------------ common ground


def _muse(gold, cosines, score):
    scored = sum(c is not None for c in cosines)  # dropping: the pairs found are the pairs scored
    return {"results": {"rg65": {"task": "similarity", "score": score, "found": scored, "total": len(gold),
                                 "scored": scored,
                                 "items": {"gold": gold, "cosine": cosines}}}}


def test_rows_are_compared_on_the_items_all_of_them_scored(tmp_path):
    gold = [1.0, 2.0, 3.0, 4.0]
    # a scored all four pairs (its stored rho over them: 0.4), b only pairs 0, 1, 2; common: 0, 1, 2.
    # a on 0, 1, 2: cosines 0.1 0.3 0.2 -> ranks 1 3 2 against 1 2 3 -> rho = 1 − 6 · 2 / 24 = 0.5
    # b on 0, 1, 2: cosines 0.3 0.2 0.1 -> ranks 3 2 1 -> rho = −1
    a = _muse(gold, [0.1, 0.3, 0.2, 0.0], 0.4)
    b = _muse(gold, [0.3, 0.2, 0.1, None], -1.0)
    results = Results({("muse", "a"): {1: a}, ("muse", "b"): {1: b}}, random=[])
    rec = _one(tmp_path, _claim(protocol="muse", metric="rg65", order=["a", "b"]), results)
    comp = _comps(rec)[0]
    assert comp["mean"] == pytest.approx(150.0)  # 0.5 − (−1), not 0.4 − (−1)
    assert comp["covers"] == "items" and not comp["exact"]  # deterministic rows: the items' sampling only
    assert comp["coverage"] == {"items": 3, "total": 4, "full": False, "sets": {"rg65": "3/4"}, "low": [],
                                "per_item": True}
    assert rec["coverage"]["rg65"]["common"] == 3 and rec["coverage"]["rg65"]["rows"] == {"a": 4, "b": 3}
    # every row of the claim counts: adding c, which scored pairs 1, 2, 3, leaves 1, 2 for a > b as well
    c = _muse(gold, [None, 0.5, 0.6, 0.7], 1.0)
    results.intrinsic[("muse", "c")] = {1: c}
    rec = _one(tmp_path, _claim(protocol="muse", metric="rg65", order=["a", "b", "c"]), results)
    a_b = _comps(rec)[0]
    # on pairs 1, 2: a 0.3 0.2 (against gold 2 3: rho −1); b 0.2 0.1 (−1): difference 0
    assert a_b["mean"] == pytest.approx(0.0) and a_b["coverage"]["sets"] == {"rg65": "2/4"}
    # the same items for every row: the stored scores, as they are
    same = Results({("muse", "a"): {1: _muse(gold, [0.1, 0.3, 0.2, None], 0.123)},
                    ("muse", "b"): {1: _muse(gold, [0.2, 0.1, 0.3, None], 0.1)}}, random=[])
    comp = _comps(_one(tmp_path, _claim(protocol="muse", metric="rg65", order=["a", "b"]), same))[0]
    assert comp["mean"] == pytest.approx(2.3) and comp["coverage"]["full"]


def test_unknown_common_ground_is_not_tested(tmp_path):
    # a result that left items out and keeps no per-item record (written before the record existed)
    old = {"results": {"rg65": {"task": "similarity", "score": 0.5, "total": 4, "scored": 3}}}
    new = _muse([1.0, 2.0, 3.0, 4.0], [0.1, 0.3, 0.2, 0.0], 0.4)
    results = Results({("muse", "a"): {1: new}, ("muse", "b"): {1: old}}, random=[])
    rec = _one(tmp_path, _claim(protocol="muse", metric="rg65", order=["a", "b"]), results)
    assert rec["verdict"] == "not tested" and "kept no record of its out-of-vocabulary items" in rec["verdict_text"]


# ------------------------------------------------------------------ best_of, each_of, development curves


def test_best_of_takes_the_best_deterministic_candidate(tmp_path):
    results = Results(_intrinsic(**{"ase~layer0": [0.50], "ase~layer3": [0.58], "ase~layer6": [0.55], "b": [0.57]}))
    rec = _one(tmp_path, _claim(order=[{"best_of": "ase~layer*", "per": "overall"}, "b"]), results)
    comp = _comps(rec)[0]
    assert "ase~layer3" in comp["chosen"] and comp["mean"] == pytest.approx(1.0) and rec["verdict"] == "holds"
    # seeded candidates: the pick on the test scores would favour the row, so it is not made
    seeded = Results(results.intrinsic, random=["ase~layer0", "ase~layer3", "ase~layer6"])
    rec = _one(tmp_path, _claim(order=[{"best_of": "ase~layer*"}, "b"]), seeded)
    assert rec["verdict"] == "not tested" and "each_of" in rec["verdict_text"]


def test_each_of_compares_every_candidate_and_finds_its_paper_row(tmp_path):
    paper = tmp_path / "t4.csv"
    paper.write_text("# paper: P\n# table: 4\n# units: x 100\n# scale: 100\nrow,label,ws353\nours,Ours,78.9\nart,Artetxe,78.3\n")
    tables = {"c_table4": {"paper_file": str(paper), "source": "intrinsic", "protocol": "web",
                           "rows": {"ours": "p", "art": {"best_of": "art~alpha*", "per": "overall"}},
                           "columns": {"ws353": "ws353"}}}
    results = Results(_intrinsic(p=[0.70, 0.71, 0.72], **{"art~alpha0": [0.60] * 3, "art~alpha1": [0.69, 0.71, 0.73]}),
                      random=["p", "art~alpha0", "art~alpha1"])
    rec = _one(tmp_path, _claim(table="c_table4", order=["p", {"each_of": "art~alpha*"}]), results, tables)
    assert [c["comparison"] for c in _comps(rec)] == ["p > art~alpha0", "p > art~alpha1"]
    assert [c["paper_value"] for c in _comps(rec)] == pytest.approx([0.6, 0.6])  # each printed as the Artetxe row
    assert [p["status"] for p in rec["parts"]] == ["holds", "undecided"]


def test_development_curve_best_and_final(tmp_path):
    def record(*scores):
        return {"dev_curve": {"points": [{"score": s} for s in scores]}}

    records = {"att": {s: record(0.60, 0.66 + s / 100, 0.65) for s in (1, 2, 3)},
               "mean": {s: record(0.60, 0.64, 0.655 + s / 100) for s in (1, 2, 3)}}
    claim = {"paper": "wang", "where": "Figure 5", "at": "l. 192", "sentence": "q", "statement": "s",
             "source": "dev_curve", "metric": "best", "order": ["att", "mean"]}
    comp = _comps(_one(tmp_path, claim, Results(records=records)))[0]
    assert comp["mean"] == pytest.approx(0.5)  # best 66+s vs 65.5+s
    comp = _comps(_one(tmp_path, {**claim, "metric": "final"}, Results(records=records)))[0]
    assert comp["mean"] == pytest.approx(-2.5)  # final 65 vs 65.5 + s: −1.5, −2.5, −3.5


def test_tagging_and_classification_values_per_seed(tmp_path):
    def tagging(values):
        return {"results": {"chunking": {"score": sum(values) / len(values), "seeds": [1, 2, 3],
                                         "test": {"values": values}, "dev": {"values": values}},
                            "ner": {"score": None, "status": "not run: data not supplied"}}}

    results = Results(tagging={"contextual-minilm": tagging([0.95, 0.951, 0.952]), "glove": tagging([0.949, 0.95, 0.951])},
                      contextual_id="contextual-minilm")
    claim = {"paper": "wang", "where": "Table 3", "at": "l. 1", "sentence": "q", "statement": "s", "source": "tagging",
             "metric": {"each": ["chunking.test", "ner"]}, "tie": ["contextual", "glove"], "tol": 0.5}
    rec = _one(tmp_path, claim, results)
    chunk, ner = rec["parts"]
    assert chunk["alternatives"][0]["mean"] == pytest.approx(0.1) and chunk["status"] == "holds"
    assert ner["status"] == "not tested" and "not run: data not supplied" in ner["reason"]
    assert rec["verdict_text"] == "undecided: 1 hold / 1 not tested"

    def classification(f1s):
        return {"seeds": [1, 2, 3], "datasets": {"mr": {"runs": [{"test": {"macro_f1": f, "accuracy": f}} for f in f1s]}}}

    results = Results(classification={"x": classification([0.80, 0.81, 0.82]), "y": classification([0.70, 0.70, 0.70])})
    claim = {"paper": "x2static", "where": "Table 4", "at": "l. 1", "sentence": "q", "statement": "s",
             "source": "classification", "metric": "mr.f1", "order": ["x", "y"]}
    comp = _comps(_one(tmp_path, claim, results))[0]
    assert comp["mean"] == pytest.approx(11.0) and comp["status"] == "holds"


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
    ab, ac, bc = _comps(rec)
    # the mean of the printed columns: (69.7 + 46.5)/2 − (56.0 + 31.9)/2 = 14.15; (56.0 + 31.9)/2 − (52.6 + 48.2)/2 = −6.45
    assert ab["paper_value"] == pytest.approx(14.15) and ab["paper_check"] == "supported"
    assert ac["paper_value"] == pytest.approx(7.7) and ac["paper_check"] == "supported"
    assert bc["paper_value"] == pytest.approx(-6.45) and bc["paper_check"].startswith("NOT supported")
    # rounding: each printed number is within 0.05 of the paper's own, so a mean of two within 0.05, a difference 0.1
    assert ab["paper_precision"] == pytest.approx(0.1)
    assert rec["paper_flag"] and "b > c" in rec["paper_flag"]
    assert counts([rec])["semglove"]["flagged"] == 1
    # a row the paper does not print (one of ours: extra_rows), and a fraction-scaled table (X2Static prints ρ
    # to 4 decimals, scale 1)
    frac = tmp_path / "t3.csv"
    frac.write_text("# paper: P\n# table: 3\n# units: rho\n# scale: 1\nrow,label,ws353\nx,X,0.7598\ns,S,0.7297\n")
    tables["t_table3"] = {"paper_file": str(frac), "source": "intrinsic", "protocol": "muse",
                          "rows": {"x": "a", "s": "b", "ours": "d"}, "columns": {"ws353": "ws353"}}
    rec = _one(tmp_path, _claim(table="t_table3", order=["a", "b", "d"]), results, tables)
    assert _comps(rec)[0]["paper_value"] == pytest.approx(3.01) and _comps(rec)[0]["paper_precision"] == pytest.approx(0.01)
    assert _comps(rec)[1]["paper_check"].startswith("not printed") and not rec["paper_flag"]


def test_a_printed_difference_within_print_precision(tmp_path):
    # 97.25 vs 97.24, two decimals: each within 0.005 of the paper's own number, so +0.01 may be 0 or −0.0
    paper = tmp_path / "t3.csv"
    paper.write_text("# paper: P\n# table: 3\n# units: x 100\n# scale: 100\nrow,label,pos\nours,Ours,97.25\nsg,SG,97.24\n"
                     "glove,GloVe,97.21\nase,ASE,.5429\nskip,SG,.5407\n")
    tables = {"t_table3": {"paper_file": str(paper), "source": "intrinsic", "protocol": "web",
                           "rows": {"ours": "a", "sg": "b", "glove": "c"}, "columns": {"pos": "ws353"}}}
    rec = _one(tmp_path, _claim(table="t_table3", order=["a", ["b", "c"]]), Results(), tables)
    a_b, a_c = _comps(rec)
    assert a_b["paper_value"] == pytest.approx(0.01) and a_b["paper_check"] == "within print precision"
    assert a_c["paper_value"] == pytest.approx(0.04) and a_c["paper_check"] == "supported"
    assert not rec["paper_flag"]  # rounding is not a contradiction


def test_every_claim_of_the_sheet_is_supported_by_the_papers_tables():
    """The transcribed tables support every comparison the sheet draws from them (a flag here is a
    transcription error or a claim the paper does not make); none is within print precision either."""
    from staticvec.config import load_yaml
    from staticvec.dag.workflow import Workflow
    from staticvec.sheets.tables import load_tables_spec

    ids = Workflow(load_yaml("config/config.yaml")).sheet.ids()
    tables = load_tables_spec("config/tables.yaml")["tables"]
    spec = load_claims_spec("config/claims.yaml", ids, tables=tables)
    records = evaluate_claims(spec, Results(), tables, ids=ids)
    checks = [(r["id"], c["comparison"], c["paper_check"]) for r in records if r["table"] for c in _comps(r)]
    assert len(checks) > 300 and all(check == "supported" for _, _, check in checks), \
        [c for c in checks if c[2] != "supported"]
    # every paper claim names its sentence; the ours ones are counted apart
    assert all(r["at"] and r["sentence"] for r in records if r["origin"] == "paper")
    # Model2Vec and Tokenlearn against each paper's own method, at the same strength (a strict order)
    beyond = [r for r in records if r["group"] == "beyond"]
    assert {r["id"] for r in beyond} == {f"{p}_{row}" for p in ("semglove", "wang", "c2v", "x2static") for row in ("m2v", "tl")} \
        | {"wang_m2v_released", "wang_tl_released"}  # Wang et al.'s released-code row too
    assert all(c["relation"] == ">" for r in beyond for c in _comps(r))
    assert set(spec["not_encoded"]) == {"semglove", "wang", "c2v", "x2static"}


def test_claims_no_paper_makes_are_counted_in_their_own_line(tmp_path):
    results = Results(_intrinsic(a=[0.63, 0.64, 0.65], b=[0.60, 0.60, 0.60]), random=["a", "b"])
    sheet = _sheet(tmp_path, {"s_paper": _claim(order=["a", "b"]),
                              "s_ours": {"paper": "semglove", "origin": "ours", "where": "Table 1", "statement": "s",
                                         "protocol": "web", "metric": "ws353", "order": ["b", "a"]}})
    records = evaluate_claims(load_claims_spec(sheet), results)
    summary = counts(records)
    assert list(summary) == ["semglove", "beyond"]
    assert summary["semglove"] == {"holds": 1, "fails": 0, "undecided": 0, "not_tested": 0, "flagged": 0}
    assert summary["beyond"] == {"holds": 0, "fails": 1, "undecided": 0, "not_tested": 0, "flagged": 0}


# ------------------------------------------------------------------ the sheet


def test_schema_and_plan_time_checks_name_the_sheet_and_the_claim(tmp_path):
    ids = ["a", "b", "ase~layer1"]
    bad = {
        "p_unknown_emb": _claim(order=["a", "nope"]),
        "p_unknown_metric": _claim(order=["a", "b"], metric={"mean": ["ws353", "wordsim"]}),
        "p_bad_glob": _claim(order=[{"best_of": "bert~layer*"}, "a"]),
        "p_bad_each": _claim(order=[{"each_of": "art~*"}, "a"]),
        "p_protocol": _claim(order=["a", "b"], protocol="nope"),
        "p_tag_split": {**_claim(order=["a", "b"], metric="chunking.final", source="tagging")},
        "p_dev": {**_claim(order=["a", "b"], metric="last", source="dev_curve")},
        "p_any": _claim(any_of=[{"order": ["a", "b", "ase~layer1"]}, {"order": ["a", "b"]}]),
    }
    for key in ("p_tag_split", "p_dev"):
        del bad[key]["protocol"]
    path = _sheet(tmp_path, bad)
    with pytest.raises(StaticvecError) as err:
        load_claims_spec(path, ids, ["web", "muse"])
    text = str(err.value)
    assert f"{path}: claims.p_unknown_emb: 'nope' is not an embedding of the embeddings sheet" in text
    assert f"{path}: claims.p_unknown_metric.metric: 'wordsim' is not a result of intrinsic evaluation" in text
    assert "claims.p_bad_glob: best_of 'bert~layer*' matches no embedding" in text
    assert "claims.p_bad_each: each_of 'art~*' matches no embedding" in text
    assert "claims.p_protocol.protocol: 'nope' is not one of config evaluation.protocols" in text
    assert "claims.p_tag_split.metric: 'chunking.final': a tagging result has the fields dev, test" in text
    assert "claims.p_dev.metric: 'last': a development curve gives best or final" in text
    assert "claims.p_any.any_of: form 1: an alternative is one comparison" in text
    # the schema: two machine forms, an unknown key, an unknown relation, a paper claim without its sentence
    no_sentence = _claim(order=["a", "b"])
    del no_sentence["at"]
    path = _sheet(tmp_path, {"p_two": _claim(order=["a", "b"], tie=["a", "b"]), "p_key": _claim(order=["a", "b"], colour=1),
                             "p_rel": _claim(order=["a", "b"], relation="<"), "p_where": no_sentence})
    with pytest.raises(StaticvecError, match="invalid claims sheet") as err:
        load_claims_spec(path, ids)
    for key in ("p_two", "p_key", "p_rel", "p_where"):
        assert f"claims/{key}" in str(err.value)


def test_the_sheet_plans_with_the_default_config_and_seeds_follow_the_claims():
    from staticvec.config import load_yaml
    from staticvec.dag.workflow import Workflow

    config = load_yaml("config/config.yaml")
    w = Workflow({**config, "seeds": [1, 2, 3]})
    assert w.selected_claims() and w.claims_file("md").endswith("tables/claims.md")
    assert w.seeds("semglove_md") == [1, 2, 3]  # named by a claim
    assert w.seeds("fasttext") == [1, 2, 3]  # Wang et al.'s "best on every similarity set" names it
    assert w.seeds("c2v_post") == w.seeds("c2v") == [1, 2, 3]  # post-processing follows its base
    assert w.seeds("bert_sg_released") == [1, 2, 3]  # Wang et al.'s claims are decided on it too
    assert w.seeds("c2v_released") == [1]  # no claim names it
    assert w.seeds("ase") == [1]  # deterministic
    assert w.seeds("bert_sg~window5") == [1]  # a sweep point: one seed unless seed_sweeps
    assert Workflow({**config, "seeds": [1, 2, 3], "seed_sweeps": True}).seeds("bert_sg~window5") == [1, 2, 3]
    assert Workflow({**config, "seeds": [1, 2, 3], "seeds_for": "all"}).seeds("c2v_released") == [1, 2, 3]
    keys = dict(w.claims_results())
    assert keys["web/semglove_md/3"].endswith("eval/semglove_md/seed3/intrinsic.web.json")
    assert keys["tagging/contextual"].endswith(f"eval/{w.contextual_id}/tagging.json")
    assert "classification/x2static_para" in keys and "muse/ase~layer1/1" in keys
    assert keys["record/bert_sg~aggregationmean/1"].endswith("embeddings/bert_sg~aggregationmean/seed1/vectors.json")
    assert "web/c2v_artetxe~alpham0.25/3" in keys  # each_of: every alpha, every seed
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
    manifest = tmp_path / "provenance.json"
    manifest.write_text(json.dumps({"corpus_stats": {"source": "enwiki-2015", "tokens": 1_000_000},
                                    "teacher": "minilm (minilm)", "provenance_caption": "corpus enwiki-2015"}))
    sheet = _sheet(tmp_path, {"s_holds": _claim(order=["a", "b"]), "s_fails": _claim(order=["b", "a"], shares=["s_holds"]),
                              "w_few": {**_claim(order=["a", "b"], min_seeds=5), "paper": "wang"}},
                   not_encoded={"semglove": [{"at": "§9, l. 2", "sentence": "a picture", "why": "qualitative"}]})
    out = {k: tmp_path / f"claims.{k}" for k in ("md", "csv", "json")}
    assert main(["report", "claims", "--spec", str(sheet), "--tables", "", "--random", '["a", "b"]',
                 "--manifest", str(manifest), "--out-md", str(out["md"]), "--out-csv", str(out["csv"]),
                 "--out-json", str(out["json"]), *files]) == 0
    data = json.loads(out["json"].read_text())
    assert data["verdicts"] == {"s_holds": "holds", "s_fails": "fails", "w_few": "not tested"}
    assert data["counts"]["semglove"] == {"holds": 1, "fails": 1, "undecided": 0, "not_tested": 0, "flagged": 0}
    md = out["md"].read_text()
    assert "SemGloVe (Gan et al.): 1 hold, 1 fail, 0 undecided" in md and "not tested (3 seeds, 5 needed)" in md
    assert "1.00M tokens of enwiki-2015" in md and "teacher minilm (minilm)" in md  # the scale in the caption
    assert "both the training seeds and the sampling of the evaluation items" in md and "Holm" in md  # the rule
    assert "Seeds read here: the intrinsic rows: 3 paired seeds." in md  # from the results it read
    assert "- §9, l. 2: “a picture” — qualitative" in md  # the sentences not decided here
    assert "2 sentences of the paper encoded, one claim each" in md and "; 1 not decided here, listed after" in md
    assert "1 sentence of the paper encoded" in md and "; 0 not decided here.\n" in md  # Wang's: none skipped
    assert "| not tested: 3 paired seeds; 5 needed to test |" in md
    assert "§5.4, semglove.txt l. 1: “q”" in md
    assert out["csv"].read_text().count("\n") == 1 + 1 + 3  # caption, header, one line per comparison
    frame = build_summary([{"id": "a", "method": "glove"}], {("web", "a"): [_result(ws353=0.6)]}, ["web"], ["ws353"])
    write_summary(frame, "cap", tmp_path / "s.csv", tmp_path / "s.md", tmp_path / "s.html", data["counts"])
    assert (tmp_path / "s.md").read_text().startswith("**The papers' claims on this run**")
    assert "BERT+Skip-gram (Wang et al.): 0 hold, 0 fail, 0 undecided, 1 not tested" in (tmp_path / "s.md").read_text()
    assert "SemGloVe (Gan et al.): 1 hold, 1 fail" in (tmp_path / "s.html").read_text()


def test_caption_carries_the_scale_and_the_teacher():
    text = caption({"corpus_stats": {"source": "enwiki-2015", "tokens": 1_234_567}, "teacher": "minilm (minilm)",
                    "provenance_caption": "made"})
    assert "1.23M tokens of enwiki-2015" in text and "teacher minilm (minilm)" in text and text.endswith("Made with: made.")
    assert caption({}) == "The papers' claims, decided from this run's results (config/claims.yaml)."


def test_result_arguments_are_parsed_or_rejected(tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps(_result(ws353=0.5)))
    intrinsic, tagging, classification, records, _ = parse_results(
        [f"web/glove~dim50/2={f}", f"tagging/glove={f}", f"record/bert_sg~aggregationmean/1={f}"])
    assert list(intrinsic) == [("web", "glove~dim50")] and list(intrinsic[("web", "glove~dim50")]) == [2]
    assert list(tagging) == ["glove"] and classification == {} and list(records["bert_sg~aggregationmean"]) == [1]
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
    counts_ = {"wang": {"holds": 1, "fails": 0, "undecided": 0, "not_tested": 0, "flagged": 0}}
    write_json(run / "tables/claims.json", {"counts": counts_, "verdicts": {"w_a": "holds"}, "claims": []})
    publish(run, tmp_path / "ref")
    saved = read_json(tmp_path / "ref/manifest.json")
    assert saved["claims"] == {"counts": counts_, "verdicts": {"w_a": "holds"}}
    assert (tmp_path / "ref/tables/claims.json").exists()


def test_a_claims_embeddings_must_be_rows_of_its_table(tmp_path):
    """A claim on a table compares that table's rows: an embedding it names that no row of the table names
    (a row re-pointed at a variant, the claim left on the old id) is a plan-time error naming the sheet,
    the claim, the embedding and the table; each_of globs are expanded over the embeddings sheet."""
    tables = {"t_table1": {"paper_file": "p.csv", "source": "intrinsic", "protocol": "web",
                           "rows": {"ours": "a_w10", "base": "b", "layer": {"best_of": "ase~layer*"}}, "columns": {}}}
    ids = ["a", "a_w10", "b", "ase~layer1", "ase~layer2", "old~layer1"]
    good = {"x_on_rows": _claim(table="t_table1", order=["a_w10", {"each_of": "ase~layer*"}, "b"]),
            "x_no_table": _claim(order=["a", "b"])}  # a claim without a table is not checked against one
    assert set(load_claims_spec(_sheet(tmp_path, good), ids, tables=tables)["claims"]) == set(good)
    path = _sheet(tmp_path, {"x_stale": _claim(table="t_table1", order=["a", "b"]),
                             "x_stale_glob": _claim(table="t_table1", order=[{"each_of": "*~layer1"}, "b"])})
    with pytest.raises(StaticvecError) as err:
        load_claims_spec(path, ids, tables=tables)
    text = str(err.value)
    assert f"{path}: claims.x_stale: embedding 'a' is not a row of table t_table1 (its rows name a_w10, ase~layer1, " \
           "ase~layer2, b)" in text
    assert f"{path}: claims.x_stale_glob: embedding 'old~layer1' is not a row of table t_table1" in text
    assert "'ase~layer1' is not a row" not in text


def test_re_pointing_a_shipped_tables_row_strands_its_claims(tmp_path):
    """The shipped sheets agree (every claim on a table names its rows); re-pointing Wang et al.'s Table 2
    row `ours` at another embedding makes each claim on that table naming bert_sg an error."""
    from staticvec.config import load_yaml
    from staticvec.dag.workflow import Workflow
    from staticvec.sheets.tables import load_tables_spec

    sheet = Workflow(load_yaml("config/config.yaml")).sheet
    ids, rows = sheet.ids(), sheet.ids() + list(sheet.disabled)  # a table may name a disabled optional row
    load_claims_spec("config/claims.yaml", ids, tables=load_tables_spec("config/tables.yaml", ".", rows)["tables"])
    data = yaml.safe_load(Path("config/tables.yaml").read_text())
    assert data["tables"]["wang_table2"]["rows"]["ours"] == "bert_sg"
    data["tables"]["wang_table2"]["rows"]["ours"] = "bert_sg_released"
    moved = tmp_path / "tables.yaml"
    moved.write_text(yaml.safe_dump(data))
    with pytest.raises(StaticvecError) as err:
        load_claims_spec("config/claims.yaml", ids, tables=load_tables_spec(moved, ".", rows)["tables"])
    stranded = sorted(line.split(": ")[1] for line in str(err.value).splitlines()[1:])
    claims = yaml.safe_load(Path("config/claims.yaml").read_text())["claims"]
    on_table = [cid for cid, c in claims.items() if c.get("table") == "wang_table2"]
    forms = {cid: [claims[cid].get(k) for k in ("order", "tie", "all_of", "any_of", "contrast")] for cid in on_table}
    naming = sorted(f"claims.{cid}" for cid in on_table if "'bert_sg'" in repr(forms[cid]))
    assert len(naming) >= 4 and len(naming) < len(on_table) and stranded == naming, str(err.value)
    assert "config/claims.yaml: claims.wang_t2_similarity: embedding 'bert_sg' is not a row of table wang_table2" in str(err.value)
