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
- :func:`holm` — Holm's (1979) step-down adjusted p-values (family-wise error control).

Sums run left to right in plain floating point (no compensated summation), the arithmetic every
caller used before it was collected here. Only the t distribution comes from scipy (imported on
first use: planning and evaluation never import it).
"""

from __future__ import annotations

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
