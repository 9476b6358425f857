"""The statistics module (staticvec.stats) on hand-computed cases: the t interval, missing values,
paired differences by seed, one-sided t tests against the interval, Holm's adjustment; and every
caller (summary, tables, figures, claims, tagging and classification summaries) gives its numbers."""

import math

import pytest

from staticvec.stats import describe, holm, one_sided_p, paired_differences, t_interval

T_975_2 = 4.302652729911275  # Student t, 2 degrees of freedom, 97.5 % quantile (tables: 4.303)
T_975_3 = 3.182446305284263  # 3 degrees of freedom (tables: 3.182)


def test_t_interval_for_three_seeds_equals_a_hand_computation():
    values = [60.0, 62.0, 67.0]
    sd = math.sqrt(((60 - 63) ** 2 + (62 - 63) ** 2 + (67 - 63) ** 2) / 2)  # sqrt(13)
    half = T_975_2 * sd / math.sqrt(3)
    out = t_interval(values)
    assert out.n == 3 and out.mean == 63.0 and out.sd == pytest.approx(sd)
    assert out.half_width == pytest.approx(half) and half == pytest.approx(8.956, abs=1e-3)
    assert (out.low, out.high) == (pytest.approx(63.0 - half), pytest.approx(63.0 + half))


def test_a_pinned_interval_and_its_level():
    # 1, 2, 3, 4: mean 2.5, sd √(5/3) = 1.29099; 95 %: 2.5 ± 3.18245 · 1.29099 / 2 = 2.5 ± 2.05426
    out = t_interval([1.0, 2.0, 3.0, 4.0])
    assert out.sd == pytest.approx(math.sqrt(5 / 3))
    assert out.half_width == pytest.approx(T_975_3 * math.sqrt(5 / 3) / 2)
    assert (round(out.low, 5), round(out.high, 5)) == (0.44574, 4.55426)
    # 90 %: t(0.95, 3) = 2.353363 -> half 2.353363 · 1.290994 / 2 = 1.51909
    assert t_interval([1.0, 2.0, 3.0, 4.0], level=0.9).half_width == pytest.approx(1.51909, abs=1e-5)


def test_one_value_has_no_interval_and_missing_values_are_left_out():
    assert t_interval([55.0]).as_dict() == {"n": 1, "mean": 55.0, "sd": None, "half_width": None, "low": None,
                                            "high": None, "level": 0.95}
    assert t_interval([None, float("nan")]).n == 0 and describe([]).mean is None
    assert describe([50.0, None, 52.0, float("nan")]) == describe([50.0, 52.0])
    assert describe([50.0, 52.0]).sd == pytest.approx(math.sqrt(2))


def test_paired_differences_by_seed_with_a_deterministic_side():
    a = {1: 0.63, 2: 0.64, 3: 0.65, 4: 0.70}
    b = {1: 0.60, 2: 0.62, 3: 0.61}  # no seed 4: left out of the pairs
    seeds, diffs = paired_differences([(a, 1.0, True), (b, -1.0, True)])
    assert seeds == [1, 2, 3] and diffs == pytest.approx([0.03, 0.02, 0.04])
    # a deterministic side (one value) pairs with every seed; a contrast with weights
    seeds, diffs = paired_differences([(a, 1.0, True), ({1: 0.5}, -2.0, False)])
    assert seeds == [1, 2, 3, 4] and diffs == pytest.approx([-0.37, -0.36, -0.35, -0.30])
    # nothing seeded: one exact difference
    assert paired_differences([({1: 0.5}, 1.0, False), ({1: 0.2}, -1.0, False)]) == ([None], [pytest.approx(0.3)])


def test_one_sided_p_agrees_with_the_interval():
    values = [3.0, 4.0, 5.0]  # mean 4, sd 1: 95 % interval [1.516, 6.484]
    d = describe(values)
    low = t_interval(values).low
    # the interval's low end is the bound at which the one-sided test sits exactly at 2.5 %
    assert one_sided_p(d.mean, d.sd, d.n, low, "above") == pytest.approx(0.025)
    assert one_sided_p(d.mean, d.sd, d.n, 0.0, "above") < 0.025 < one_sided_p(d.mean, d.sd, d.n, 2.0, "above")
    # by hand: t = 4 / (1/√3) = 6.928 on 2 df: P(T >= t) = 0.0101
    assert one_sided_p(d.mean, d.sd, d.n, 0.0, "above") == pytest.approx(0.01010, abs=1e-5)
    assert one_sided_p(d.mean, d.sd, d.n, 0.0, "below") == pytest.approx(1 - 0.01010, abs=1e-5)
    # exact differences (no spread): 0 or 1
    assert one_sided_p(0.3, None, 1, 0.0, "above") == 0.0 and one_sided_p(0.3, 0.0, 3, 0.0, "below") == 1.0


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, max(0.06, 1·0.04) = 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5] and holm([]) == [] and holm([0.4, 0.6]) == [0.8, 0.8]
    assert holm([0.9, 0.9, 0.9]) == [1.0, 1.0, 1.0]  # capped at 1


def test_every_caller_gives_the_modules_numbers():
    """The places that report a mean, an sd or an interval over seeds read them from staticvec.stats (the
    claims' paired intervals: tests/test_claims.py)."""
    from staticvec.evaluate.classification import _mean_std
    from staticvec.evaluate.tagging.summary import mean_std
    from staticvec.report.figures import _stats
    from staticvec.report.summary import build_summary
    from staticvec.report.tables import _mean_sd

    values = [1.0, 2.0, 3.0, 4.0]
    ref = t_interval(values)
    assert _mean_sd(values) == (ref.mean, ref.sd) and _stats(values) == (ref.mean, ref.sd, 4)
    assert mean_std(values) == (ref.mean, ref.sd) and _mean_std(values) == {"mean": ref.mean, "std": ref.sd}
    runs = [{"results": {"ws353": {"score": v / 100}}} for v in values]
    row = build_summary([{"id": "a"}], {("web", "a"): runs}, ["web"], ["ws353"]).iloc[0]
    assert (row["ci95_low"], row["ci95_high"]) == (pytest.approx(0.44574, abs=1e-5), pytest.approx(4.55426, abs=1e-5))


# ------------------------------------------------------------------ seeds and items (docs/statistics.md)


def test_satterthwaite_and_the_interval_over_seeds_and_items_by_hand():
    from scipy.stats import norm, t

    from staticvec.stats import satterthwaite_df, seeds_and_items_interval

    # (4 on 2 df) + (1 on ∞ df): 5² / (4² / 2) = 3.125; nothing finite: ∞
    assert satterthwaite_df([(4.0, 2), (1.0, math.inf)]) == pytest.approx(3.125)
    assert satterthwaite_df([(0.0, 2), (1.0, math.inf)]) == math.inf
    # mean 4, item variance 1, three seeds of sd 1: V = 1 + 1/3, df = (4/3)² / ((1/3)² / 2) = 32
    ci = seeds_and_items_interval(4.0, 1.0, 1.0, 3)
    assert ci.var_seeds == pytest.approx(1 / 3) and ci.df == pytest.approx(32.0)
    half = t.ppf(0.975, 32) * math.sqrt(4 / 3)
    assert (ci.low, ci.high) == (pytest.approx(4 - half), pytest.approx(4 + half))
    # deterministic rows: the items alone, normal quantile
    ci = seeds_and_items_interval(4.0, 1.0, None, 1)
    assert ci.df == math.inf and ci.high - ci.mean == pytest.approx(norm.ppf(0.975))
    # no per-item record: the seeds' t interval of old, unchanged
    ref = t_interval([3.0, 4.0, 5.0])
    ci = seeds_and_items_interval(4.0, None, 1.0, 3)
    assert (ci.low, ci.high, ci.df) == (pytest.approx(ref.low), pytest.approx(ref.high), 2)


def test_the_one_sided_p_agrees_with_the_combined_interval():
    from staticvec.stats import one_sided_p_se, seeds_and_items_interval

    ci = seeds_and_items_interval(4.0, 1.0, 1.0, 3)
    assert one_sided_p_se(ci.mean, ci.se, ci.df, ci.low, "above") == pytest.approx(0.025)
    assert one_sided_p_se(ci.mean, ci.se, ci.df, ci.high, "below") == pytest.approx(0.025)
    assert one_sided_p_se(1.0, 0.0, math.inf, 0.0, "above") == 0.0  # no spread: exact


def test_a_ties_fail_p_value_is_the_smaller_one_sided_p_doubled():
    from scipy.stats import norm

    from staticvec.report.claims import p_values
    from staticvec.stats import one_sided_p_se

    # δ̂ = 3, se 1, normal, tol 0.5: P(Z ≥ 2.5) = 0.00621 is the evidence for δ > tol; doubled 0.01242
    hold, fail = p_values(3.0, 1.0, math.inf, "~", 0.5, one_sided_p_se)
    assert fail == pytest.approx(2 * norm.sf(2.5)) and fail == pytest.approx(0.012419, abs=1e-6)
    # TOST: the larger of P(δ > −tol) and P(δ < tol) tests: P(Z ≤ (3 − 0.5)) ... = 1 − 0.00621
    assert hold == pytest.approx(norm.cdf(2.5))
    # inside the band: hold is the larger of the two one-sided p-values; fail capped at 1
    hold, fail = p_values(0.0, 0.1, math.inf, "~", 0.5, one_sided_p_se)
    assert hold == pytest.approx(norm.sf(5.0)) and fail == 1.0


def test_the_item_variance_of_a_mean_is_the_ideal_bootstrap_by_enumeration():
    import itertools

    import numpy as np

    from staticvec.stats import mean_item_variance

    values = np.array([0.0, 1.0, 1.0, 3.0])
    means = [values[list(idx)].mean() for idx in itertools.product(range(4), repeat=4)]  # all 256 resamples
    assert mean_item_variance(values) == pytest.approx(np.var(means))


def test_the_bootstrap_spearman_is_spearman_on_each_resample():
    import numpy as np
    from scipy.stats import spearmanr

    from staticvec.stats import bootstrap_indices, bootstrap_spearman

    rng = np.random.default_rng(0)
    gold = rng.integers(0, 5, size=12).astype(float)  # ties in gold, and duplicated items in each resample
    cosines = rng.normal(size=(2, 12))
    index = bootstrap_indices(12, 20, "rg65:test")
    got = bootstrap_spearman(gold, cosines, index)
    for r in range(2):
        for b in range(20):
            assert got[r, b] == pytest.approx(spearmanr(gold[index[b]], cosines[r][index[b]]).statistic)
    # the same key draws the same items (every row, every claim); another key others
    assert (bootstrap_indices(12, 20, "rg65:test") == index).all()
    assert not (bootstrap_indices(12, 20, "rg65:other") == index).all()


def test_partial_conjunction_is_holm_across_u():
    import numpy as np

    from staticvec.stats import partial_conjunction

    # sorted 0.001, 0.01, 0.03, 0.5: 4·0.001 = 0.004, 3·0.01 = 0.03, 2·0.03 = 0.06, 0.5 -> one set at 2.5 %
    rep = partial_conjunction({"a": 0.03, "b": 0.001, "c": 0.5, "d": 0.01}, 0.025)
    assert rep.pc == pytest.approx([0.004, 0.03, 0.06, 0.5]) and rep.count == 1 and rep.sets == ["b"]
    assert partial_conjunction({"a": 0.03, "b": 0.001, "c": 0.5, "d": 0.01}, 0.05).count == 2
    rng = np.random.default_rng(1)
    for _ in range(50):  # the count is the number of Holm rejections, the pc values Holm's sorted
        p = rng.uniform(0, 0.06, size=6).tolist()
        rep = partial_conjunction(dict(enumerate(p)), 0.025)
        assert rep.count == sum(a <= 0.025 for a in holm(p)) and rep.pc == pytest.approx(sorted(holm(p)))
