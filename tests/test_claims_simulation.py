"""The claims' statistical procedure checked by simulation (docs/statistics.md, "Measured by simulation").

Synthetic scores with known true differences: per item and per training seed, as an evaluation produces them
(an item effect shared by the rows, one of each row's own, a seed effect per run, noise per run and item).
Each simulated claim is decided by the module's own functions (the interval of
:func:`staticvec.stats.seeds_and_items_interval`, the p-values of :func:`staticvec.report.claims.p_values`, the
verdicts of :func:`staticvec.report.claims.decide_parts` and :func:`~staticvec.report.claims.verdict_of`), and
the test checks that

- the 95 % interval covers the true difference about 95 % of the time, whether the items or the seeds dominate
  the noise;
- a claim whose parts are all true reads "fails" at most α = 2.5 % of the time (Holm over its parts);
- a claim with one false part (at the bound, the hardest case) reads "holds" at most α of the time;
- a tie that is true reads "fails" at most α of the time (the doubled p-value);

and that the same checks FAIL on procedures without that control (the test is parametrised over deliberately
broken variants: Holm removed, the interval ignoring the item sampling, the tie's p-value not doubled), so the
checks have teeth. The figures it measures are the ones docs/statistics.md prints (the test compares them;
STATICVEC_UPDATE_DOCS=1 rewrites the block). Vectorised numpy with a fixed seed: a few seconds.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from staticvec.report.claims import decide, decide_parts, p_values, verdict_of
from staticvec.stats import mean_item_variance, one_sided_p_se, seeds_and_items_interval

ALPHA = 0.025
LEVEL = 0.95
DOC = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"

#: the noise regimes: (items, seeds, sd of the rows' own item effects, sd of a run's seed effect, per-run noise)
REGIMES = {
    "items dominate (61 items, 3 seeds)": dict(items=61, seeds=3, item_sd=0.30, seed_sd=0.005, noise=0.10),
    "seeds dominate (999 items, 3 seeds)": dict(items=999, seeds=3, item_sd=0.05, seed_sd=0.03, noise=0.05),
    "both (353 items, 3 seeds)": dict(items=353, seeds=3, item_sd=0.20, seed_sd=0.012, noise=0.10),
}


def simulate_scores(rng, sims: int, parts: int, deltas, items: int, seeds: int, item_sd: float, seed_sd: float,
                    noise: float):
    """Per simulation, part, seed and item, the item-level score of row A and row B (B is A's comparator):
    arrays (sims, parts, seeds, items). The true difference of part k is ``deltas[k]`` (fractions): the mean
    over the population of items and runs of A − B."""
    shape = (sims, parts, 1, items)
    shared = rng.normal(0, 0.3, size=shape)  # an item's difficulty: the same for both rows (cancels when paired)
    a = shared + rng.normal(0, item_sd, size=shape) + rng.normal(0, seed_sd, size=(sims, parts, seeds, 1)) \
        + rng.normal(0, noise, size=(sims, parts, seeds, items))
    b = shared + rng.normal(0, item_sd, size=shape) + rng.normal(0, seed_sd, size=(sims, parts, seeds, 1)) \
        + rng.normal(0, noise, size=(sims, parts, seeds, items))
    return a + np.asarray(deltas, dtype=float)[None, :, None, None], b


def part_records(a, b, relation: str, tol: float, variant: str) -> list[list[dict]]:
    """One simulated claim's parts as the report's records (scores scaled to points as the report does)."""
    scale = 100.0
    out = []
    for k in range(a.shape[0]):
        per_seed = (a[k].mean(axis=1) - b[k].mean(axis=1)) * scale  # each seed's score difference
        mean = float(per_seed.mean())
        sd = float(per_seed.std(ddof=1))
        var_items = mean_item_variance((a[k].mean(axis=0) - b[k].mean(axis=0)) * scale)
        if variant == "seeds only":  # the interval ignores the sampling of the items
            var_items = None
        ci = seeds_and_items_interval(mean, var_items, sd, a.shape[1], LEVEL)
        if variant == "items only":  # ... or the training seeds
            ci = seeds_and_items_interval(mean, var_items, None, a.shape[1], LEVEL)
        p_hold, p_fail = p_values(mean, ci.se, ci.df, relation, tol, one_sided_p_se)
        if variant == "tie not doubled" and relation == "~":
            p_fail = min(one_sided_p_se(mean, ci.se, ci.df, tol, "above"),
                         one_sided_p_se(mean, ci.se, ci.df, -tol, "below"))
        out.append([{"comparison": f"part {k}", "relation": relation, "tol": tol, "mean": mean, "low": ci.low,
                     "high": ci.high, "status": decide(ci.low, ci.high, relation, tol), "p_hold": p_hold,
                     "p_fail": p_fail, "reason": "", "metric": "m"}])
    return out


def claim_verdict(parts: list[list[dict]], variant: str) -> str:
    if variant == "no Holm":  # each part failing on its own one-sided test at α: no adjustment
        return "fails" if any(p[0]["p_fail"] <= ALPHA for p in parts) else \
            verdict_of(decide_parts(parts, ALPHA))[0]
    return verdict_of(decide_parts(parts, ALPHA))[0]


FIGURES = ("coverage", "fails", "holds", "tie")
SIMS = {"coverage": 800, "fails": 600, "holds": 600, "tie": 1500}
PARTS = 5
SPEARMAN_SIMS = 300


def spearman_coverage(rng, variant: str, population: int = 20000, n: int = 100) -> float:
    """Two deterministic rows' cosines on a population of word pairs, each the gold score plus its own error;
    the truth is the difference of their Spearman correlations on the whole population. Each simulation
    samples ``n`` pairs and builds the interval from the paired bootstrap over the sample's items
    (:func:`staticvec.stats.bootstrap_spearman`, the claims' ItemBank), as the report does."""
    from staticvec.evaluate.similarity import spearman
    from staticvec.stats import bootstrap_indices, bootstrap_spearman

    gold = rng.normal(size=population)
    rows = np.stack([gold + rng.normal(0, 1.0, population), gold + rng.normal(0, 1.3, population)])
    truth = 100 * (spearman(gold, rows[0]) - spearman(gold, rows[1]))
    sims, covered = SPEARMAN_SIMS, 0
    for s in range(sims):
        pick = rng.choice(population, size=n, replace=False)
        g, x = gold[pick], rows[:, pick]
        estimate = 100 * (spearman(g, x[0]) - spearman(g, x[1]))
        index = bootstrap_indices(n, 200, f"simulation:{s}")
        reps = bootstrap_spearman(g, x, index)
        var_items = float(np.var(100 * (reps[0] - reps[1]), ddof=1))
        if variant == "seeds only":
            var_items = None
        ci = seeds_and_items_interval(estimate, var_items, None, 1, LEVEL)
        covered += ci.low <= truth <= ci.high
    return 100 * covered / sims


def measure(variant: str = "correct", which=FIGURES, seed: int = 20261201) -> dict:
    """The figures docs/statistics.md prints (in %): the interval's coverage in each regime, and the verdicts'
    family-wise error rates; ``which``: the kinds of figure to measure."""
    rng = np.random.default_rng(seed)
    figures = {}
    both = REGIMES["both (353 items, 3 seeds)"]
    if "coverage" in which:
        for name, regime in REGIMES.items():
            delta, sims = 0.02, SIMS["coverage"]  # 2 points
            a, b = simulate_scores(rng, sims, 1, [delta], **regime)
            covered = 0
            for s in range(sims):
                [[rec]] = part_records(a[s], b[s], ">", 0.0, variant)
                covered += rec["low"] <= 100 * delta <= rec["high"]
            figures[f"coverage of the 95 % interval: {name}"] = 100 * covered / sims
    if "coverage" in which:  # a correlation: Spearman on a sample of pairs from a population, paired bootstrap
        figures["coverage of the 95 % interval: Spearman, 100 pairs of a population, deterministic rows"] = \
            spearman_coverage(rng, variant)
    if "fails" in which:  # every part true, at the bound (δ → 0+): how often does the claim read "fails"?
        sims = SIMS["fails"]
        a, b = simulate_scores(rng, sims, PARTS, [1e-9] * PARTS, **both)
        figures[f"false 'fails': {PARTS} true parts at the bound"] = 100 * np.mean(
            [claim_verdict(part_records(a[s], b[s], ">", 0.0, variant), variant) == "fails" for s in range(sims)])
    if "holds" in which:  # one part false at the bound (δ = 0), the others clearly true: "holds"?
        sims = SIMS["holds"]
        a, b = simulate_scores(rng, sims, PARTS, [0.0] + [0.10] * (PARTS - 1), **both)
        figures[f"false 'holds': 1 of {PARTS} parts false, at the bound"] = 100 * np.mean(
            [claim_verdict(part_records(a[s], b[s], ">", 0.0, variant), variant) == "holds" for s in range(sims)])
    if "tie" in which:  # a true tie with a tolerance far below the noise (δ = 0, tol 0.01 point): "fails"?
        sims = SIMS["tie"]
        a, b = simulate_scores(rng, sims, 1, [0.0], **both)
        figures["false 'fails': a true tie (tol 0.01 point)"] = 100 * np.mean(
            [claim_verdict(part_records(a[s], b[s], "~", 0.01, variant), variant) == "fails" for s in range(sims)])
    return figures


def within_claims(figures: dict) -> list[str]:
    """What each figure must be: coverage near the level, error rates at most α, each up to three binomial
    sds of the simulation's own sampling error; coverage also 1 point for the Welch–Satterthwaite degrees of
    freedom being an approximation (docs/statistics.md)."""
    wrong = []
    for key, value in figures.items():
        kind = "coverage" if key.startswith("coverage") else "tie" if "tie" in key else \
            "fails" if "'fails'" in key else "holds"
        sims = SPEARMAN_SIMS if "Spearman" in key else SIMS[kind]
        if kind == "coverage":
            sd = 100 * np.sqrt(LEVEL * (1 - LEVEL) / sims)
            if not 100 * LEVEL - 3 * sd - 1.0 <= value <= 100 * LEVEL + 3 * sd:
                wrong.append(f"{key}: {value:.1f} % (should be about {100 * LEVEL:g} %)")
        elif value > 100 * ALPHA + 3 * 100 * np.sqrt(ALPHA * (1 - ALPHA) / sims):
            wrong.append(f"{key}: {value:.1f} % (should be at most {100 * ALPHA:g} %)")
    return wrong


@pytest.fixture(scope="module")
def measured():
    return measure()


def test_the_procedure_covers_and_controls_what_the_docs_say(measured):
    assert not within_claims(measured), within_claims(measured)


@pytest.mark.parametrize("variant, which", [("no Holm", ["fails"]), ("seeds only", ["coverage"]),
                                            ("items only", ["coverage"]), ("tie not doubled", ["tie"])])
def test_the_check_catches_a_procedure_without_control(variant, which):
    """Each broken procedure breaks the figure it should: the simulation check has teeth."""
    figures = measure(variant, which)
    assert within_claims(figures), f"{variant}: the check did not notice ({figures})"


def _draws(key: str) -> int:
    kind = "coverage" if key.startswith("coverage") else "tie" if "tie" in key else \
        "fails" if "'fails'" in key else "holds"
    return SPEARMAN_SIMS if "Spearman" in key else SIMS[kind]


def doc_block(figures: dict) -> str:
    lines = ["| what | measured (%) | draws | its sampling sd (points) | should be |", "| --- | --- | --- | --- | --- |"]
    for key, value in figures.items():
        coverage = key.startswith("coverage")
        target = LEVEL if coverage else ALPHA
        sd = 100 * np.sqrt(target * (1 - target) / _draws(key))
        text = f"about {100 * LEVEL:g}" if coverage else f"at most {100 * ALPHA:g}"
        lines.append(f"| {key} | {value:.1f} | {_draws(key)} | {sd:.1f} | {text} |")
    return "\n".join(lines)


def test_the_docs_print_the_measured_figures(measured):
    text = DOC.read_text()
    begin, end = "<!-- simulation:begin -->", "<!-- simulation:end -->"
    block = f"{begin}\n{doc_block(measured)}\n{end}"
    if os.environ.get("STATICVEC_UPDATE_DOCS"):
        DOC.write_text(re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S))
        text = DOC.read_text()
    assert block in text, "docs/statistics.md's simulation table is stale: STATICVEC_UPDATE_DOCS=1 pytest " \
                          "tests/test_claims_simulation.py rewrites it"
