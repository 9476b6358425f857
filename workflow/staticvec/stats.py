"""Statistics over seeds, written once: mean, sample standard deviation, the t interval, paired
differences by seed, one-sided t tests and Holm's step-down adjustment.

Every table, figure, summary and claim that reports a mean over seeds, a standard deviation or an
interval gets it from here, so the same values give the same digits everywhere:

- :func:`describe` — ``(n, mean, sd)`` of the values given, ``None`` and NaN left out; ``sd`` is the
  sample standard deviation (divisor ``n − 1``), ``None`` for fewer than two values;
- :func:`t_interval` — the two-sided Student t interval ``mean ± t(½ + level/2, n − 1) · sd / √n``;
- :func:`paired_differences` — per seed, ``Σ weight · value`` over the sides of a comparison; a side
  whose value does not depend on the seed (a deterministic result) is the same number for every seed;
- :func:`one_sided_p` — the one-sided p-value of a t test of the mean against a bound;
- :func:`holm` — Holm's (1979) step-down adjusted p-values (family-wise error control);
- :func:`seeds_and_items_interval` — the interval of a difference that covers both the training seeds and
  the sampling of the evaluation items: the item-sampling variance from a paired bootstrap over items
  (:func:`bootstrap_spearman`, :func:`mean_item_variance`), the seed variance from the per-seed paired
  differences, combined with Welch–Satterthwaite degrees of freedom (docs/statistics.md);
- :func:`one_sided_p_se` — the one-sided p-value against a bound of that interval's t statistic;
- :func:`tie_p_values` — a tie's two tests: equivalence (TOST, Schuirmann 1987) and its negation, whose
  p-value is the smaller one-sided p doubled;
- :func:`partial_conjunction` — Benjamini & Heller's (2008) partial-conjunction p-values with Bonferroni's
  combination, tested in order of u (Dror et al., TACL 2017): on how many of N data sets an effect holds,
  with family-wise control.

Sums run left to right in plain floating point (no compensated summation), the arithmetic every
caller used before it was collected here. Only the t and normal distributions and the ranks come from
scipy (imported on first use: planning and evaluation never import it).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass
from typing import Iterable


def finite(values: Iterable) -> list[float]:
    """The values as floats, ``None`` and NaN left out (a missing score is no score, never a zero)."""
    return [float(v) for v in values if v is not None and not math.isnan(v)]


@dataclass(frozen=True)
class Description:
    n: int
    mean: float | None  # None when there is no value
    sd: float | None  # sample standard deviation (n − 1); None when n < 2


def describe(values: Iterable) -> Description:
    """``n``, mean and sample standard deviation of the finite values (see the module doc)."""
    values = finite(values)
    n = len(values)
    if n == 0:
        return Description(0, None, None)
    mean = sum(values) / n
    if n < 2:
        return Description(n, mean, None)
    return Description(n, mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)))


@dataclass(frozen=True)
class Interval:
    n: int
    mean: float | None
    sd: float | None
    half_width: float | None  # None when n < 2 (no interval)
    low: float | None
    high: float | None
    level: float = 0.95

    def as_dict(self) -> dict:
        return asdict(self)


def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf(probability, df))


def t_interval(values: Iterable, level: float = 0.95) -> Interval:
    """The two-sided ``level`` t interval of the mean of the finite values; no interval below two."""
    d = describe(values)
    if d.n < 2:
        return Interval(d.n, d.mean, d.sd, None, None, None, level)
    half = t_quantile(0.5 + level / 2, d.n - 1) * d.sd / math.sqrt(d.n)
    return Interval(d.n, d.mean, d.sd, half, d.mean - half, d.mean + half, level)


def paired_differences(sides: list[tuple[dict, float, bool]]) -> tuple[list, list[float]]:
    """Per seed, ``Σ weight · value`` over ``sides``: ``[(values by seed, weight, seeded), ...]``.

    The seeds are those every seeded side has (a seed only one side ran is left out: the pairing is
    the point); a side that is not seeded (a deterministic result, one value) enters every seed with
    that value. No seeded side: one difference, under the seed ``None``. Returns (seeds, differences)."""
    seeded = [set(values) for values, _, is_seeded in sides if is_seeded]
    seeds = sorted(set.intersection(*seeded)) if seeded else [None]
    fixed = [None if is_seeded else next(iter(values.values())) for values, _, is_seeded in sides]
    diffs = []
    for seed in seeds:
        total = 0.0
        for (values, weight, is_seeded), value in zip(sides, fixed):
            total += weight * (values[seed] if is_seeded else value)
        diffs.append(total)
    return seeds, diffs


def one_sided_p(mean: float, sd: float | None, n: int, bound: float, side: str) -> float:
    """One-sided p-value of a t test of the mean of ``n`` values against ``bound``.

    ``side="above"``: the evidence that the true mean is above ``bound`` (small when the values lie
    well above it), P(T ≥ t); ``side="below"``: P(T ≤ t), with ``t = (mean − bound) / (sd / √n)`` and T
    Student's t with ``n − 1`` degrees of freedom. A difference without spread (one deterministic
    value, or ``sd == 0``) is exact: 0 when it is on that side of the bound, 1 otherwise. The test
    rejects at ``α`` exactly when the two-sided ``1 − 2α`` t interval lies on that side of the bound
    (``p <= α`` ⇔ ``low >= bound`` for "above")."""
    from scipy.stats import t

    if side not in ("above", "below"):
        raise ValueError(f"side must be 'above' or 'below', not {side!r}")
    if not sd or n < 2:
        exact = mean > bound if side == "above" else mean < bound
        return 0.0 if exact else 1.0
    stat = (mean - bound) / (sd / math.sqrt(n))
    return float(t.sf(stat, n - 1) if side == "above" else t.cdf(stat, n - 1))


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: with ``p_(1) <= … <= p_(m)``,
    ``adj_(i) = max_{j <= i} min(1, (m − j + 1) · p_(j))``. Rejecting every hypothesis whose adjusted
    p-value is at most ``α`` keeps the chance of one or more false rejections at most ``α``, whatever
    the dependence between the tests."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# ------------------------------------------------------------------ seeds and items together


def t_or_normal_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile of Student's t with ``df`` degrees of freedom (normal for ``df = ∞``)."""
    from scipy.stats import norm, t

    return float(norm.ppf(probability) if math.isinf(df) else t.ppf(probability, df))


def satterthwaite_df(components: list[tuple[float, float]]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of independent variance estimates
    ``[(variance, its df), ...]`` (Satterthwaite 1946): ``(Σ v)² / Σ v² / df``; a component with
    ``df = ∞`` (the item bootstrap over hundreds of items) adds nothing to the denominator. ∞ when every
    finite-df component is zero."""
    total = sum(v for v, _ in components)
    denominator = sum(v * v / df for v, df in components if v > 0 and not math.isinf(df))
    return math.inf if denominator == 0 else total * total / denominator


@dataclass(frozen=True)
class CombinedInterval:
    """A difference's interval over seeds and items: ``mean ± q(½ + level/2, df) · se`` with
    ``se² = var_items + var_seeds``."""

    mean: float
    se: float
    df: float
    low: float
    high: float
    var_items: float | None  # None: the items' sampling is not covered (no per-item record)
    var_seeds: float
    level: float = 0.95


def seeds_and_items_interval(mean: float, var_items: float | None, seed_sd: float | None, n_seeds: int,
                             level: float = 0.95) -> CombinedInterval:
    """The interval of a difference estimated on the items of an evaluation set and averaged over ``n_seeds``
    paired training seeds (docs/statistics.md).

    ``var_items``: the variance of the seed-averaged difference under resampling of the items (the paired
    bootstrap; None when there is no per-item record: the seeds' part alone, Student's t on ``n − 1``
    df, the old interval); ``seed_sd``: the sample sd of the per-seed paired differences on the fixed
    items (None or 0: deterministic results), whose mean has variance ``sd²/n`` on ``n − 1`` df. The
    two are added (the seed noise of a run and the choice of the items are independent) and the quantile
    is Student's t on the Welch–Satterthwaite df (normal when the seeds add nothing)."""
    var_seeds = 0.0 if not seed_sd or n_seeds < 2 else seed_sd * seed_sd / n_seeds
    var = var_seeds + (var_items or 0.0)
    df = satterthwaite_df([(var_seeds, n_seeds - 1 if n_seeds > 1 else math.inf), (var_items or 0.0, math.inf)])
    se = math.sqrt(var)
    half = t_or_normal_quantile(0.5 + level / 2, df) * se if se > 0 else 0.0
    return CombinedInterval(mean, se, df, mean - half, mean + half, var_items, var_seeds, level)


def one_sided_p_se(mean: float, se: float, df: float, bound: float, side: str) -> float:
    """One-sided p-value of ``(mean − bound) / se`` on ``df`` degrees of freedom (normal for ∞); ``side``
    as :func:`one_sided_p`. No spread (``se == 0``): 0 on that side of the bound, 1 otherwise. Rejects at
    ``α`` exactly when the two-sided ``1 − 2α`` interval of :func:`seeds_and_items_interval` lies on that
    side of ``bound``."""
    from scipy.stats import norm, t

    if side not in ("above", "below"):
        raise ValueError(f"side must be 'above' or 'below', not {side!r}")
    if not se:
        exact = mean > bound if side == "above" else mean < bound
        return 0.0 if exact else 1.0
    stat = (mean - bound) / se
    if math.isinf(df):
        return float(norm.sf(stat) if side == "above" else norm.cdf(stat))
    return float(t.sf(stat, df) if side == "above" else t.cdf(stat, df))


def tie_p_values(p_at_least_minus_tol: float, p_at_most_tol: float, p_above_tol: float,
                 p_below_minus_tol: float) -> tuple[float, float]:
    """(p of "the tie holds", p of "the tie fails") of ``|δ| <= tol`` from the four one-sided p-values.

    Holds: two one-sided tests (TOST; Schuirmann 1987), ``δ > −tol`` and ``δ < tol`` both rejected — the
    larger p, at level α (the two-sided ``1 − 2α`` interval inside ``±tol``). Fails: ``δ > tol`` or
    ``δ < −tol``, a two-sided alternative: the smaller one-sided p is doubled (Bonferroni over the two
    directions), so the test's size is at most α wherever the tie is true, also when ``tol`` is small
    and both directions are close (without doubling, up to 2α)."""
    hold = max(p_at_least_minus_tol, p_at_most_tol)
    fail = min(1.0, 2.0 * min(p_above_tol, p_below_minus_tol))
    return hold, fail


def bootstrap_indices(n: int, replicates: int, key: str, seed: int = 0):
    """``replicates`` × ``n`` item indices drawn with replacement, from a generator seeded by ``key``
    (the data set and its items) and ``seed``: every row of a comparison, and every claim reading the
    same items, is resampled with the same draws (the pairing over items)."""
    import numpy as np

    digest = int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "little")
    return np.random.default_rng(digest).integers(0, n, size=(replicates, n), dtype=np.int64)


def bootstrap_counts(index):
    """How many times each item is drawn in each resample: replicates × n (from :func:`bootstrap_indices`)."""
    import numpy as np

    replicates, n = index.shape
    flat = index + n * np.arange(replicates)[:, None]
    return np.bincount(flat.ravel(), minlength=replicates * n).reshape(replicates, n).astype(np.float64)


def resample_ranks(values, counts):
    """The average rank (ties share their mean rank, as ``scipy.stats.rankdata``) each item would have in each
    resample, from how many times it is drawn (``counts``: replicates × n), without sorting a resample: the
    items are sorted once, and an item's rank is the count of draws of smaller values plus half its own tie
    group's draws (+ ½). Only meaningful where the item is drawn."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, ordered.size]))
    drawn = np.add.reduceat(counts[:, order], starts, axis=1)  # draws per tie group
    rank = np.cumsum(drawn, axis=1) - drawn + (drawn + 1) / 2
    out = np.empty_like(counts)
    out[:, order] = rank[:, group]
    return out


def weighted_pearson(x, y, counts):
    """Pearson's r of each resample given as ranks and draw counts (the Pearson of the expanded sample)."""
    import numpy as np

    total = counts.sum(axis=1, keepdims=True)
    dx = x - (counts * x).sum(axis=1, keepdims=True) / total
    dy = y - (counts * y).sum(axis=1, keepdims=True) / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts * dx * dy).sum(axis=1) / np.sqrt((counts * dx * dx).sum(axis=1) * (counts * dy * dy).sum(axis=1))


def bootstrap_spearman(gold, cosines, index, gold_ranks=None, counts=None):
    """Spearman's rho of ``cosines`` (one row per run, one column per item) against ``gold`` on each
    bootstrap sample of items (``index``: replicates × n, :func:`bootstrap_indices`): runs × replicates.
    The items are resampled jointly (the same sample for every run) and the correlation recomputed on
    the sample, ties (duplicated items) at average ranks (Efron & Tibshirani 1993, ch. 6); NaN where a
    sample is constant. ``counts`` and ``gold_ranks`` may be passed to reuse them across runs."""
    import numpy as np

    counts = bootstrap_counts(index) if counts is None else counts
    gold_ranks = resample_ranks(gold, counts) if gold_ranks is None else gold_ranks
    return np.stack([weighted_pearson(gold_ranks, resample_ranks(row, counts), counts)
                     for row in np.atleast_2d(np.asarray(cosines, dtype=np.float64))])


def mean_item_variance(values) -> float:
    """The variance of the mean of ``values`` (one per item) under resampling of the items with
    replacement, exactly (the ideal bootstrap, B → ∞): ``Σ (v − v̄)² / n²``. An accuracy is such a mean
    (each question right or wrong), so its bootstrap needs no Monte Carlo."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    n = values.size
    return 0.0 if n == 0 else float(((values - values.mean()) ** 2).sum() / (n * n))


# ------------------------------------------------------------------ replicability over data sets


@dataclass(frozen=True)
class Replicability:
    """On how many of ``n`` data sets an effect is declared (``count``), with family-wise error at most
    ``alpha``; ``pc``: the partial-conjunction p-value of u = 1 … n (monotone in u)."""

    n: int
    count: int
    pc: list[float]
    alpha: float
    sets: list  # the data sets counted: the ``count`` smallest p-values


def partial_conjunction(pvalues: dict, alpha: float) -> Replicability:
    """Benjamini & Heller's (2008) partial-conjunction test over data sets, as Dror, Baumer, Bogomolov &
    Reichart (TACL 2017) propose for NLP: with the data sets' p-values sorted, ``p_(1) <= … <= p_(N)``,
    the null "the effect holds on fewer than u of them" has Bonferroni's p-value ``(N − u + 1) · p_(u)``;
    made monotone in u and tested in order (the nulls are nested, so each at α keeps the family-wise error
    at most α), the count is the largest u rejected. This is Holm's procedure across u: the count equals
    the number of Holm rejections among the N p-values, whatever their dependence (Fisher's combination
    would need independent data sets; ours share the training runs, so Bonferroni's is used)."""
    names = sorted(pvalues, key=lambda k: pvalues[k])
    n = len(names)
    pc, running = [], 0.0
    for u, name in enumerate(names, start=1):
        running = max(running, min(1.0, (n - u + 1) * pvalues[name]))
        pc.append(running)
    count = sum(p <= alpha for p in pc)
    return Replicability(n, count, pc, alpha, names[:count])
