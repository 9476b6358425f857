"""The papers' claims, decided from this run's results (``config/claims.yaml``; ``tables/claims.md``).

**The sheet.** One claim per sentence of a paper: where it stands (``where``: its table or figure;
``at``: section and lines of ``../shared/papers/<paper>.txt``), the sentence (``sentence``), what is
tested in the sheet's words (``statement``) and a machine form over one metric (a data set, the
per-seed mean of several, or each of several):

- ``order: [a, b, c]`` — a > b > c: *every* earlier item against *every* later one (a > b, a > c,
  b > c); ``relation: ">="`` makes each "not worse by more than ``tol``";
- ``tie: [a, b]`` — ``|a − b| <= tol``;
- ``contrast: [{embedding, weight}, ...]`` — ``Σ weight · metric > 0`` (a trend);
- ``all_of: [form, ...]`` — several forms, each with its own relation, tolerance or metric, all
  claimed; ``any_of: [form, ...]`` — a disjunction: on each metric item, at least one form holds.

An embedding may be ``{best_of: glob}`` (the best candidate on the claim's metric — deterministic
candidates only: among seeded ones the pick on the test scores would favour that row) or
``{each_of: glob}`` (one comparison per candidate: "better than the best α" is "better than every
α"). ``origin: ours`` marks a comparison no paper makes (Model2Vec and other baselines from the same
teacher): counted in the "beyond the papers" line, not in its paper's.

**Per seed, the paired difference, on the items every row covers** (:mod:`staticvec.stats`;
docs/statistics.md states the procedure with its references). Seed ``s`` of every seeded result is its
run ``s`` (taggers and classifiers: their seed ``s``); a deterministic result (ASE, the teacher's
token table, Model2Vec) is the same number for every seed. An intrinsic comparison is scored on the items
(pairs, analogy questions) that every run of every row of the claim covers — an item with an
out-of-vocabulary word in any of them is out, also under ``web`` (whose tables score it against the mean
vector) — recomputed from the per-item record (:mod:`staticvec.evaluate.items`); the coverage is shown
and a data set read on less than ``min_coverage`` of its items is marked. The interval of the mean
difference covers the training seeds and the sampling of the items: the item variance from a paired
bootstrap over items (:class:`ItemBank`: the same resamples for every row and seed), the seed variance
from the per-seed differences, Welch–Satterthwaite degrees of freedom
(:func:`staticvec.stats.seeds_and_items_interval`). Results without per-item values (tagging,
classification, SemEval-2012, categorization) have the seeds' interval only, said in the cell.

**Verdicts.** Each comparison is a *part* of its claim (an ``any_of`` part has several alternatives).

- A part **holds** when its interval lies on the claimed side (> 0; ≥ −tol; within ±tol): a one-sided
  test at ``α = (1 − level)/2`` (2.5 %). A claim holds when every part holds: an intersection-union
  test, whose error is at most α without any correction.
- A part **fails** when the one-sided test of "the part is true" (e.g. ``mean > 0``) rejects it after
  Holm's step-down adjustment over the claim's tested parts (:func:`staticvec.stats.holm`); a tie's
  fail p-value is the smaller one-sided p doubled (:func:`staticvec.stats.tie_p_values`). A claim fails
  when one part fails.
- An ``any_of`` part holds when one alternative holds (Bonferroni over its alternatives) and fails when
  every alternative fails (its p-value is the largest of theirs).
- A claim on each of several data sets also counts on how many it holds and fails
  (:func:`replicability_of`: partial conjunction, Holm across u).
- **not tested**: fewer paired seeds than ``min_seeds``, no result (data not supplied), or a part whose
  rows are one row under two names (identical per-item values: an identity post-processing), left out
  of the verdict with the reason; **undecided** otherwise, its cell saying why.

The verdict cell carries the tally ("fails: 2 fail / 2 hold / 14 undecided") and the notes.

**The paper's own numbers.** Each comparison is also checked on the paper's printed table (the claim's
``table`` of the tables sheet): supported, **within print precision** (the rounding of the printed
numbers alone could reverse it), or not supported (⚑: a transcription error or a loose paraphrase).

Command line (the claims rule)::

    staticvec report claims --spec config/claims.yaml --tables config/tables.yaml --random '[...]' \\
        --out-md C.md --out-csv C.csv --out-json C.json  web/glove/1=RESULT.json  tagging/glove=T.json ...
"""

from __future__ import annotations

import fnmatch
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from staticvec.errors import StaticvecError
from staticvec.sheets.claims import (BEYOND, GROUPS, PAPERS, claim_forms, claim_metric_items, expand_ref, group_of,
                                     is_each, load_claims_spec, metric_items, metric_parts)
from staticvec.sheets.tables import CONTEXTUAL

STATUSES = ("fails", "holds", "undecided", "not tested")
SETTINGS = ("level", "min_seeds", "tol", "scale", "min_coverage", "bootstrap", "bootstrap_seed")
VERDICTS = ("holds", "fails", "undecided", "not tested")


# ------------------------------------------------------------------ the sheet's refs


def ref_key(ref, default_per: str) -> str:
    """A hashable key of a ref: the id, or best_of:<glob>:<per>."""
    if isinstance(ref, dict):
        return f"best_of:{ref['best_of']}:{ref.get('per', default_per)}"
    return ref


def ref_label(ref) -> str:
    return f"best of {ref['best_of']}" if isinstance(ref, dict) else ref


# ------------------------------------------------------------------ comparisons


@dataclass
class Comparison:
    terms: list  # [(ref, weight)]: a ref is an id or {best_of: ...}
    relation: str  # ">", ">=", "~"
    tol: float
    metric: object  # a path or {"mean": [...]}
    text: str

    def refs(self):
        return [r for r, _ in self.terms]


def _level(item, ids) -> list:
    """The refs of one item of an order (a list: each of its refs); each_of expanded over ``ids``."""
    out = []
    for ref in item if isinstance(item, list) else [item]:
        out += expand_ref(ref, ids) if is_each(ref) else [ref]
    return out


def form_comparisons(form: dict, metric, ids, tol: float, suffix: str = "") -> list[Comparison]:
    """The comparisons of one form on one metric (a path or {"mean": ...})."""
    tol = form["tol"] if form.get("tol") is not None else tol
    out = []
    if "order" in form:
        levels = [_level(item, ids) for item in form["order"]]
        relation = form.get("relation", ">")
        for i in range(len(levels)):
            for j in range(i + 1, len(levels)):
                for a in levels[i]:
                    for b in levels[j]:
                        out.append(Comparison([(a, 1.0), (b, -1.0)], relation, tol, metric,
                                              f"{ref_label(a)} {relation} {ref_label(b)}{suffix}"))
    elif "tie" in form:
        refs = _level(form["tie"], ids)
        for i in range(len(refs)):
            for j in range(i + 1, len(refs)):
                out.append(Comparison([(refs[i], 1.0), (refs[j], -1.0)], "~", tol, metric,
                                      f"{ref_label(refs[i])} ≈ {ref_label(refs[j])}{suffix}"))
    else:
        relation = form.get("relation", ">")
        terms = [(t["embedding"], float(t["weight"])) for t in form["contrast"]]
        text = " ".join(f"{'+' if w >= 0 else '−'} {abs(w):g}·{ref_label(r)}" for r, w in terms).lstrip("+ ")
        out.append(Comparison(terms, relation, tol, metric, f"{text} {relation} 0{suffix}"))
    return out


def claim_parts(claim: dict, ids, tol: float) -> list[list[Comparison]]:
    """The claim as parts, each a list of alternatives (one, except in an ``any_of`` claim)."""
    forms = claim_forms(claim)

    def suffix(form, metric):
        items = form["metric"]
        each = isinstance(items, dict) and "each" in items
        return f" on {metric}" if each else ""

    if "any_of" in claim:
        per_form = [[form_comparisons(f, m, ids, tol, suffix(f, m)) for m in metric_parts(f["metric"])] for f in forms]
        return [[alt for comps in (per_form[f][k] for f in range(len(forms))) for alt in comps]
                for k in range(len(per_form[0]))]
    parts = []
    only = set(claim.get("only_rows") or [])  # a released-row twin: the comparisons of that row only
    for form in forms:
        for metric in metric_parts(form["metric"]):
            parts += [[c] for c in form_comparisons(form, metric, ids, tol, suffix(form, metric))
                      if not only or only & {r for r in c.refs() if isinstance(r, str)}]
    return parts


def decide(low: float, high: float, relation: str, tol: float) -> str:
    """holds / fails / undecided for an interval [low, high] of ``left − right`` (points)."""
    if relation == ">":
        return "holds" if low > 0 else "fails" if high <= 0 else "undecided"
    if relation == ">=":
        return "holds" if low >= -tol else "fails" if high < -tol else "undecided"
    if relation == "~":
        return "holds" if -tol <= low and high <= tol else "fails" if low > tol or high < -tol else "undecided"
    raise StaticvecError(f"unknown relation {relation!r}")


def p_values(mean: float, se: float, df: float, relation: str, tol: float, one_sided=None) -> tuple[float, float]:
    """(p of "holds", p of "fails") of a comparison whose estimate ``mean`` has standard error ``se`` on
    ``df`` degrees of freedom: one-sided tests that reject at α exactly when the two-sided 1 − 2α interval
    is on the claimed side (holds) or on the other side (fails). A tie's "fails" is two-sided: the smaller
    one-sided p doubled (:func:`staticvec.stats.tie_p_values`)."""
    from staticvec.stats import one_sided_p_se, tie_p_values

    p = one_sided or one_sided_p_se
    if relation == ">":
        return p(mean, se, df, 0.0, "above"), p(mean, se, df, 0.0, "below")
    if relation == ">=":
        return p(mean, se, df, -tol, "above"), p(mean, se, df, -tol, "below")
    if relation == "~":
        return tie_p_values(p(mean, se, df, -tol, "above"), p(mean, se, df, tol, "below"),
                            p(mean, se, df, tol, "above"), p(mean, se, df, -tol, "below"))
    raise StaticvecError(f"unknown relation {relation!r}")


def point_check(value: float, relation: str, tol: float) -> bool:
    return decide(value, value, relation, tol) == "holds"


# ------------------------------------------------------------------ results


@dataclass
class Series:
    """One embedding's values of one metric: {seed: points}; ``random`` False = the same for every seed."""

    values: dict
    random: bool
    reason: str | None = None  # why there is no value


@dataclass
class Ground:
    """The items of one data set that every run of every row of a claim covers (their words all in its
    vocabulary, :func:`staticvec.evaluate.items.covered_items`), whatever the protocol does with the others."""

    dataset: str
    total: int | None = None
    items: frozenset | None = None  # None: unknown (a run keeps no record of its out-of-vocabulary items)
    full: bool = True  # every run's stored score is on exactly these items: used as it is
    rows: dict = field(default_factory=dict)  # row -> items it covers (fewest over its seeds)
    problem: str | None = None
    decomposable: bool = True  # False: a score without per-item values (SemEval-2012, categorization)
    found: int | None = None  # not decomposable: the fewest items a run covered (its OOV items stay in)

    def text(self) -> str:
        if not self.decomposable:
            return f"{self.found}/{self.total} (not per item)" if self.found is not None else "—"
        if self.items is None:
            return "—"
        return f"{len(self.items)}/{self.total}"

    def share(self) -> float | None:
        """The share of the data set compared."""
        count = len(self.items) if self.decomposable and self.items is not None else self.found
        return None if count is None or not self.total else count / self.total


class Results:
    """Our results by source: intrinsic ``{(protocol, id): {seed: result}}``, tagging and classification
    ``{id: result}`` (the per-seed values are inside), development curves ``{id: {seed: training
    record}}``; ``random``: the ids whose intrinsic results depend on the training seed."""

    def __init__(self, intrinsic=None, tagging=None, classification=None, random=(), contextual_id=None,
                 records=None, heads=None):
        self.intrinsic = intrinsic or {}
        self.tagging = tagging or {}
        self.classification = classification or {}
        self.records = records or {}
        self.random = set(random)
        self.contextual_id = contextual_id
        self.heads = heads or {}  # {row: its fitted MLM head's record} (report.tables.fitted_head_caption)

    def ids(self, source: str, protocol=None) -> list[str]:
        if source == "intrinsic":
            return [e for (p, e) in self.intrinsic if p == protocol]
        return list({"tagging": self.tagging, "classification": self.classification,
                     "dev_curve": self.records}[source])

    def is_random(self, emb: str, source: str) -> bool:
        """Whether ``emb``'s results depend on a seed (taggers, classifiers and training runs always do)."""
        return emb in self.random if source == "intrinsic" else True

    def series(self, emb: str, path: str, source: str, protocol=None, scale: float = 100.0,
               grounds: dict | None = None) -> Series:
        if source == "intrinsic":
            return self._intrinsic(emb, path, protocol, scale, grounds or {})
        if source == "dev_curve":
            runs = self.records.get(emb)
            if not runs:
                return Series({}, True, f"no training record of {emb}")
            values = {}
            for seed, record in runs.items():
                points = [p["score"] for p in (record.get("dev_curve") or {}).get("points") or [] if p["score"] is not None]
                if not points:
                    return Series({}, True, f"{emb} (seed {seed}) recorded no development curve")
                values[seed] = (max(points) if path == "best" else points[-1]) * scale
            return Series(values, True)
        if source == "tagging":
            result = self.tagging.get(emb)
            if result is None and emb == CONTEXTUAL:
                result = self.tagging.get(self.contextual_id)
            if result is None:
                return Series({}, True, f"no tagging result of {emb}")
            key, _, split = path.partition(".")
            node = result["results"].get(key) or {}
            if node.get("score") is None:
                return Series({}, True, f"{key}: {node.get('status', 'no result')}")
            values = node[split or "test"]["values"]
            return Series({s: v * scale for s, v in zip(node["seeds"], values)}, True)
        result = self.classification.get(emb)
        if result is None:
            return Series({}, True, f"no classification result of {emb}")
        name, _, field_ = path.partition(".")
        node = result.get("datasets", {}).get(name)
        if node is None:
            return Series({}, True, f"{emb} was not scored on {name}")
        key = "macro_f1" if field_ == "f1" else "accuracy"
        return Series({s: r["test"][key] * scale for s, r in zip(result["seeds"], node["runs"])}, True)

    def _intrinsic(self, emb: str, path: str, protocol, scale: float, grounds: dict) -> Series:
        from staticvec.evaluate.items import NotRescorable, score_on, scored_items
        from staticvec.report.tables import result_value

        random = emb in self.random
        runs = self.intrinsic.get((protocol, emb))
        if not runs:
            return Series({}, random, f"no {protocol} result of {emb}")
        dataset = path.split(".")[0]
        ground = grounds.get(dataset)
        if ground is not None and ground.problem:
            return Series({}, random, ground.problem)
        values = {}
        for seed, result in runs.items():
            entry = result["results"].get(dataset)
            if ground is None or ground.full or entry is None or not ground.decomposable \
                    or scored_items(entry) == ground.items:
                value = result_value(result, path)[0]
            elif path != dataset:
                return Series({}, random, f"{path} of {emb} cannot be rescored on the common items")
            else:
                try:
                    value = score_on(entry, ground.items)
                except NotRescorable as err:
                    return Series({}, random, f"{emb} {dataset}: {err}")
            if value is not None:
                values[seed] = value * scale
        return Series(values, random, None if values else f"{emb} has no {path} score")


def metric_series(results: Results, emb: str, metric, source: str, protocol, scale: float, grounds=None) -> Series:
    """A metric (a path, or the per-seed mean of several) of one embedding."""
    if isinstance(metric, str):
        return results.series(emb, metric, source, protocol, scale, grounds)
    parts = [results.series(emb, p, source, protocol, scale, grounds) for p in metric["mean"]]
    missing = list(dict.fromkeys(p.reason for p in parts if not p.values))
    if missing:
        return Series({}, any(p.random for p in parts), "; ".join(missing))
    seeds = set.intersection(*(set(p.values) for p in parts))
    return Series({s: sum(p.values[s] for p in parts) / len(parts) for s in sorted(seeds)},
                  any(p.random for p in parts))


def common_grounds(rows: list[str], datasets: list[str], results: Results, protocol) -> dict[str, Ground]:
    """Per data set, the items every run (every row, every seed) of ``rows`` covers: an item with an
    out-of-vocabulary word in any run is out of the comparison, also where the protocol scored it against
    the mean vector (``web``). A task without per-item values keeps its protocol's score (``decomposable``
    False; its coverage is shown)."""
    from staticvec.evaluate.items import DECOMPOSABLE, covered_items, scored_items

    grounds = {}
    for dataset in datasets:
        ground, sets, stored, unknown = Ground(dataset), [], [], []
        for emb in rows:
            for seed, result in sorted((results.intrinsic.get((protocol, emb)) or {}).items()):
                entry = result["results"].get(dataset)
                if entry is None:
                    continue
                ground.total = entry.get("total", ground.total)
                if entry.get("task") is not None and entry["task"] not in DECOMPOSABLE:
                    ground.decomposable = False
                    if entry.get("found") is not None:
                        ground.found = min(ground.found if ground.found is not None else entry["found"], entry["found"])
                    continue
                covered = covered_items(entry)
                if covered is None:
                    unknown.append(f"{emb} (seed {seed})")
                    continue
                sets.append(covered)
                stored.append(scored_items(entry))
                ground.rows[emb] = min(ground.rows.get(emb, len(covered)), len(covered))
        if not ground.decomposable:
            ground.full = True
        elif unknown:
            ground.problem = (f"{dataset}: {', '.join(unknown)} kept no record of its out-of-vocabulary items, so the "
                              "items every row covers are unknown (rerun its evaluation: evaluation.items)")
        elif sets:
            ground.items = frozenset.intersection(*sets)
            ground.full = all(s == ground.items for s in stored)
        grounds[dataset] = ground
    return grounds


def resolve_ref(ref, comp_metric, results: Results, claim: dict, scale: float) -> tuple[str | None, str | None]:
    """(embedding id, problem): the id, or the best candidate of a best_of ref on the claim's metric
    (``per: overall``, the default: the mean over all of the claim's items) or on the comparison's own
    metric (``per: column``), by the mean over seeds of the stored scores."""
    source, protocol = claim.get("source", "intrinsic"), claim.get("protocol")
    if not isinstance(ref, dict):
        return ref, None
    candidates = expand_ref(ref, results.ids(source, protocol))
    if not candidates:
        return None, f"no result matches {ref_label(ref)}"
    seeded = [c for c in candidates if results.is_random(c, source)]
    if seeded:
        return None, (f"{ref_label(ref)}: {len(seeded)} candidate(s) depend on the seed, so picking the best on "
                      "these scores would favour that row; the sheet should compare each_of")
    if ref.get("per", "overall") == "column":
        items = [comp_metric]
    else:
        metric = claim["metric"]
        items = [metric] if isinstance(metric, str) or "mean" in metric else list(metric["each"])
    best, best_score = None, -math.inf
    for cand in candidates:
        scores = []
        for item in items:
            s = metric_series(results, cand, item, source, protocol, scale)
            if not s.values:
                break
            scores.append(sum(s.values.values()) / len(s.values))
        else:
            score = sum(scores) / len(scores)
            if score > best_score:
                best, best_score = cand, score
    return (best, None) if best is not None else (None, f"no candidate of {ref_label(ref)} has a score")


# ------------------------------------------------------------------ the paper's printed numbers


@dataclass
class PaperNumbers:
    """The paper's printed numbers of one table, addressed by our embedding refs and result paths."""

    table: object  # PaperTable
    rows: dict  # ref key -> paper row
    globs: dict  # best_of glob -> paper row (an each_of candidate is printed as that row)
    columns: dict  # result path -> paper column

    def row_of(self, ref) -> str | None:
        row = self.rows.get(ref_key(ref, "overall"))
        if row is None and isinstance(ref, str):
            row = next((r for glob, r in self.globs.items() if fnmatch.fnmatchcase(ref, glob)), None)
        return row

    def value(self, ref, metric, scale: float):
        """(value in points, half a unit of its print precision in points, problem)."""
        row = self.row_of(ref)
        if row is None:
            return None, None, f"{ref_label(ref)} is not a row of {self.table.title}"
        paths = [metric] if isinstance(metric, str) else metric["mean"]
        values, precision = [], []
        for p in paths:
            col = self.columns.get(p)
            v = None if col is None else self.table.values.get((row, col))
            if v is None or math.isnan(v):
                return None, None, f"{self.table.title} prints no {p} for {row}"
            values.append(v * scale / self.table.scale)
            precision.append(self.table.half_unit(row, col) * scale / self.table.scale)
        return sum(values) / len(values), sum(precision) / len(precision), None


def paper_numbers(entry: dict, root: str | Path = ".", aliases: dict | None = None) -> PaperNumbers:
    """The table's printed numbers by our refs; ``aliases``: {our row: the row whose printed numbers it reads}
    (a released-code twin is checked on the paper's own row of its method)."""
    from staticvec.sheets.tables import load_paper_table

    table = load_paper_table(Path(root) / entry["paper_file"])
    rows, globs = {}, {}
    for row, mapping in entry["rows"].items():
        if mapping is None:
            continue
        rows.setdefault(ref_key(mapping, "column"), row)  # the tables sheet's best_of is per column by default
        if isinstance(mapping, dict):
            globs.setdefault(mapping["best_of"], row)
    for ours, theirs in (aliases or {}).items():
        if theirs in rows:
            rows[ours] = rows[theirs]
    columns = {}
    for column, target in (entry.get("columns") or {}).items():
        if isinstance(target, str):
            columns.setdefault(target, column)
            if entry["source"] == "tagging" and "." not in target:
                columns.setdefault(f"{target}.test", column)
    return PaperNumbers(table, rows, globs, columns)


def paper_check(comp: Comparison, paper: PaperNumbers | None, scale: float) -> dict:
    """The comparison on the paper's printed numbers: its difference and how far rounding could move it."""
    if paper is None:
        return {"paper_value": None, "paper_precision": None, "paper_check": "no printed numbers"}
    total, bound, notes = 0.0, 0.0, []
    for ref, weight in comp.terms:
        value, half, note = paper.value(ref, comp.metric, scale)
        if value is None:
            notes.append(note)
        else:
            total += weight * value
            bound += abs(weight) * half
    if notes:
        return {"paper_value": None, "paper_precision": None, "paper_check": "not printed: " + "; ".join(notes)}
    reach = bound + 1e-9 * max(1.0, abs(total))  # 97.25 − 97.24 is 0.0100000000000051 in floating point
    low, high = point_check(total - reach, comp.relation, comp.tol), point_check(total + reach, comp.relation, comp.tol)
    check = "supported" if low and high else "within print precision" if low or high else \
        "NOT supported by the paper's table"
    return {"paper_value": total, "paper_precision": bound, "paper_check": check}


# ------------------------------------------------------------------ evaluation


def _seed_text(n: int, needed: int) -> str:
    return "1 seed" if n == 1 else "no common seed" if n == 0 else f"{n} seeds, {needed} needed"


class ItemBank:
    """The per-item numbers of one claim's runs on its common items, and their bootstrap over items: the same
    resampled items for every row and every seed (a paired bootstrap), drawn once per data set and items
    (:func:`staticvec.stats.bootstrap_indices`), each run's replicate scores computed once."""

    def __init__(self, results: Results, protocol, grounds: dict, replicates: int, seed: int = 0,
                 shared: dict | None = None):
        self.results, self.protocol, self.grounds = results, protocol, grounds
        self.replicates, self.seed = replicates, seed
        self._index = {}
        self._boot = {} if shared is None else shared  # shared by the claims: keys name the data set's items

    def _entry(self, emb: str, seed, dataset: str) -> dict:
        return self.results.intrinsic[(self.protocol, emb)][seed]["results"][dataset]

    def _key(self, dataset: str) -> str:
        import hashlib

        items = ",".join(map(str, sorted(self.grounds[dataset].items)))
        return f"{self.protocol}:{dataset}:{hashlib.sha256(items.encode()).hexdigest()[:16]}"

    def index(self, dataset: str):
        from staticvec.stats import bootstrap_indices

        if dataset not in self._index:
            n = len(self.grounds[dataset].items)
            self._index[dataset] = bootstrap_indices(n, self.replicates, self._key(dataset), self.seed)
        return self._index[dataset]

    def values(self, emb: str, seed, dataset: str):
        from staticvec.evaluate.items import item_values

        return item_values(self._entry(emb, seed, dataset), self.grounds[dataset].items)

    def boot(self, emb: str, seed, dataset: str):
        """The run's score on each bootstrap sample of the common items (fractions): one per replicate."""
        from staticvec.evaluate.items import NotRescorable, gold_values
        from staticvec.stats import bootstrap_counts, bootstrap_spearman, resample_ranks

        items = (self._key(dataset), self.replicates, self.seed)
        key = (emb, seed, items)
        if key not in self._boot:
            values = self.values(emb, seed, dataset)
            if ("gold", items) not in self._boot:  # the draws and the gold ranks: once per data set and items
                gold = gold_values(self._entry(emb, seed, dataset), self.grounds[dataset].items)
                if gold is None:
                    raise NotRescorable(f"{dataset}: no gold scores in the per-item record")
                counts = bootstrap_counts(self.index(dataset))
                self._boot[("gold", items)] = (counts, resample_ranks(gold, counts))
            counts, gold_ranks = self._boot[("gold", items)]
            self._boot[key] = bootstrap_spearman(None, [values], None, gold_ranks, counts)[0]
        return self._boot[key]

    def variance(self, terms: list[tuple[str, float, bool]], seeds: list, metric, scale: float):
        """(variance of the seed-averaged difference Σ weight · score under resampling of the items, in
        points², or None; why not). ``terms``: (embedding, weight, seeded); a seeded row is averaged over
        ``seeds`` (the comparison's paired seeds), a deterministic one read at its one run. Data sets of a
        mean are resampled independently (Σ V_k / K²); an accuracy's variance is exact
        (:func:`staticvec.stats.mean_item_variance`), a correlation's is the bootstrap's (Spearman
        recomputed on each sample)."""
        import numpy as np

        from staticvec.evaluate.items import NotRescorable
        from staticvec.stats import mean_item_variance

        paths = metric_items(metric)
        total = 0.0
        for path in paths:
            ground = self.grounds.get(path)
            if ground is None:
                return None, f"{path}: a part of a score has no per-item values"
            if not ground.decomposable:
                return None, f"{path}: its score has no per-item values"
            if ground.items is None or len(ground.items) < 3:
                return None, f"{path}: too few common items"
            try:
                task = self._entry(terms[0][0], self._first_seed(terms[0], seeds), path).get("task")
                if task == "analogy":
                    d = sum(w * np.mean([self.values(e, s, path) for s in self._seeds(e, r, seeds)], axis=0)
                            for e, w, r in terms)
                    var = mean_item_variance(d)
                else:
                    rep = sum(w * np.mean([self.boot(e, s, path) for s in self._seeds(e, r, seeds)], axis=0)
                              for e, w, r in terms)
                    rep = rep[np.isfinite(rep)]
                    if rep.size < 2:
                        return None, f"{path}: the bootstrap samples gave no correlation"
                    var = float(np.var(rep, ddof=1))
            except (NotRescorable, KeyError) as err:
                return None, f"{path}: {err}"
            total += var * scale * scale
        return total / (len(paths) ** 2), None

    def _seeds(self, emb: str, seeded: bool, seeds: list) -> list:
        runs = self.results.intrinsic[(self.protocol, emb)]
        return [s for s in seeds if s in runs] if seeded and seeds and seeds[0] is not None else [min(runs)]

    def _first_seed(self, term, seeds):
        return self._seeds(term[0], term[2], seeds)[0]


def evaluate_comparison(comp: Comparison, claim: dict, results: Results, settings: dict,
                        resolved: dict, grounds: dict, bank: ItemBank | None = None) -> dict:
    """One comparison: ours (per-seed paired differences; the interval over seeds and items; p-values) and
    its interval verdict."""
    from staticvec.stats import describe, one_sided_p_se, paired_differences, seeds_and_items_interval

    scale, level = settings["scale"], settings["level"]
    source, protocol = claim.get("source", "intrinsic"), claim.get("protocol")
    record = {"comparison": comp.text, "metric": _metric_text(comp.metric), "relation": comp.relation,
              "tol": comp.tol, "chosen": None, "n": 0, "seeds": [], "mean": None, "sd": None, "low": None,
              "high": None, "exact": False, "p_hold": None, "p_fail": None, "coverage": None, "se": None,
              "df": None, "var_items": None, "var_seeds": None, "covers": None}
    series, chosen, missing, names = [], [], [], []
    for ref, weight in comp.terms:
        emb, problem = resolved[(ref_key(ref, "overall"), _metric_text(comp.metric))]
        if emb is None:
            missing.append(problem)
            continue
        if isinstance(ref, dict):
            chosen.append(f"{ref_label(ref)}: {emb}")
        s = metric_series(results, emb, comp.metric, source, protocol, scale, grounds)
        if not s.values:
            missing.append(s.reason)
        series.append((s, weight))
        names.append(emb)
        # each row's per-seed values, so that a reader re-derives the paired difference (tables/claims_seeds.csv)
        record.setdefault("row_values", []).append({"row": emb, "weight": weight, "values": dict(s.values)})
    record["chosen"] = "; ".join(chosen) or None
    record["rows"] = names
    if source == "intrinsic":
        record["coverage"] = _coverage(comp.metric, grounds, settings.get("min_coverage", 0.0))
    if missing:
        reasons = list(dict.fromkeys(missing))
        record.update(status="not tested", short="; ".join(reasons), reason="no result: " + "; ".join(reasons))
        return record
    if len(series) == 2 and len(set(names)) == 2 and series[0][0].values == series[1][0].values and (
            source != "intrinsic" and len(series[0][0].values) >= 2 or source == "intrinsic" and
            _item_fingerprint(results, names[0], comp.metric, protocol, grounds) is not None and
            _item_fingerprint(results, names[0], comp.metric, protocol, grounds) ==
            _item_fingerprint(results, names[1], comp.metric, protocol, grounds)):
        why = (f"{names[0]} and {names[1]} give the same numbers on every seed: one row under two names, "
               "not a comparison")
        record.update(status="not tested", short="identical rows", reason=why, identical=True)
        return record
    signature = {}
    for emb, (s, w) in zip(names, series):
        key = (tuple(sorted(s.values.items())), _item_fingerprint(results, emb, comp.metric, protocol, grounds)
               if source == "intrinsic" else None)
        signature[key] = signature.get(key, 0.0) + w
    record["_numbers"] = (record["metric"], frozenset((k, w) for k, w in signature.items() if w))
    # per-item digests (intrinsic) or per-seed values of seeded extrinsic runs say "the same numbers";
    # hand-made scores without either are never taken for one row
    record["_fingerprinted"] = all(k[1] is not None for k in signature) if source == "intrinsic" else \
        all(len(k[0]) >= 2 for k in signature)
    random = any(s.random for s, _ in series)
    seeds, diffs = paired_differences([(s.values, w, s.random) for s, w in series])
    n = len(diffs) if random else 1
    d = describe(diffs)
    record.update(n=n, seeds=[s for s in seeds if s is not None], mean=d.mean, sd=d.sd)
    if random and n < settings["min_seeds"]:
        from staticvec.stats import t_interval

        interval = t_interval(diffs, level)
        record.update(low=interval.low, high=interval.high, status="not tested",
                      short=_seed_text(n, settings["min_seeds"]),
                      reason=f"{_count(n, 'paired seed')}; {settings['min_seeds']} needed to test")
        return record
    var_items, why_not = (None, f"{source} results keep no per-item outputs") if bank is None else \
        bank.variance([(e, w, s.random) for e, (s, w) in zip(names, series)], seeds, comp.metric, scale)
    ci = seeds_and_items_interval(d.mean, var_items, d.sd if random else None, n, level)
    exact = ci.se == 0
    covers = ("exact" if exact and var_items is None else
              "seeds and items" if var_items is not None and random else
              "items" if var_items is not None else "seeds")
    low, high = (d.mean, d.mean) if exact else (ci.low, ci.high)
    status = decide(low, high, comp.relation, comp.tol)
    if exact:  # one exact number: on a side of the bound or not (a difference of 0 is not "better")
        p_hold, p_fail = float(status != "holds"), float(status != "fails")
    else:
        p_hold, p_fail = p_values(d.mean, ci.se, ci.df, comp.relation, comp.tol, one_sided_p_se)
    record.update(low=low, high=high, exact=exact, status=status, p_hold=p_hold, p_fail=p_fail, se=ci.se,
                  df=None if math.isinf(ci.df) else ci.df, var_items=var_items, var_seeds=ci.var_seeds,
                  covers=covers, covers_why=why_not if var_items is None else None,
                  reason=_reason(status, comp.relation, comp.tol, covers))
    return record


def _item_fingerprint(results: Results, emb: str, metric, protocol, grounds: dict):
    """A digest of a row's per-item values on the claim's items (every seed, every data set of the metric),
    or None where there are none: two rows with the same digest are one row (an identity post-processing,
    one vector file under two names), however the claim names them; equal scores alone are not enough."""
    import hashlib

    from staticvec.evaluate.items import NotRescorable, item_values

    digest = hashlib.sha256()
    for path in metric_items(metric):
        ground = grounds.get(path)
        if ground is None or not ground.decomposable or ground.items is None:
            return None
        for _seed, result in sorted((results.intrinsic.get((protocol, emb)) or {}).items()):
            entry = result["results"].get(path)
            try:
                digest.update(item_values(entry, ground.items).tobytes())
            except (NotRescorable, TypeError, AttributeError):
                return None
    return digest.hexdigest()


def _coverage(metric, grounds: dict, min_share: float = 0.0) -> dict | None:
    """What the comparison read of its data sets: {items, total, full, sets: {set: 'n/N'}, low: [sets read
    below ``min_share`` of their items]}."""
    chosen = [grounds[p.split(".")[0]] for p in metric_items(metric) if p.split(".")[0] in grounds]
    if not chosen or any(g.decomposable and g.items is None for g in chosen):
        return None
    count = sum(len(g.items) if g.decomposable else (g.found or 0) for g in chosen)
    low = [g.dataset for g in chosen if g.share() is not None and g.share() < min_share]
    return {"items": count, "total": sum(g.total or 0 for g in chosen),
            "full": all(g.full for g in chosen), "sets": {g.dataset: g.text() for g in chosen}, "low": low,
            "per_item": all(g.decomposable for g in chosen)}


def _metric_text(metric) -> str:
    return metric if isinstance(metric, str) else "mean(" + ", ".join(metric["mean"]) + ")"


def _bound(relation: str, tol: float) -> str:
    return {">": "0", ">=": f"−{tol:g}", "~": f"±{tol:g}"}[relation]


def _reason(status: str, relation: str, tol: float, covers: str) -> str:
    what = {"exact": "exact difference (deterministic results, no per-item record)",
            "seeds": "interval (seeds only: no per-item outputs)", "items": "interval (items)",
            "seeds and items": "interval"}[covers]
    if status == "holds":
        return f"{what} on the claimed side of {_bound(relation, tol)}"
    if status == "fails":
        return f"{what} on the other side of {_bound(relation, tol)}"
    return f"{what} straddles {_bound(relation, tol)}"


def decide_parts(parts: list[list[dict]], alpha: float) -> list[dict]:
    """Each part's status from its alternatives: holds on the claimed side (Bonferroni over several
    alternatives), fails after Holm's adjustment over the tested parts (an ``any_of`` part fails
    when all its alternatives do: its p-value is the largest), else undecided or not tested."""
    from staticvec.stats import holm

    out = []
    for alternatives in parts:
        tested = [a for a in alternatives if a["p_hold"] is not None]
        if not tested:
            out.append({"alternatives": alternatives, "status": "not tested", "p_hold": None, "p_fail": None,
                        "p_fail_holm": None})
            continue
        if len(alternatives) == 1:
            p_hold = tested[0]["p_hold"]
        else:
            p_hold = min(1.0, len(tested) * min(a["p_hold"] for a in tested))
        p_fail = max(a["p_fail"] for a in tested) if len(tested) == len(alternatives) else None
        out.append({"alternatives": alternatives, "status": None, "p_hold": p_hold, "p_fail": p_fail,
                    "p_fail_holm": None})
    family = [p for p in out if p["p_fail"] is not None]
    for part, adjusted in zip(family, holm([p["p_fail"] for p in family])):
        part["p_fail_holm"] = adjusted
    m = len(family)
    for part in out:
        if part["status"] == "not tested":
            part["reason"] = "; ".join(dict.fromkeys(a["reason"] for a in part["alternatives"]))
            continue
        alternatives = part["alternatives"]
        single = alternatives[0] if len(alternatives) == 1 else None
        holds = single["status"] == "holds" if single is not None else part["p_hold"] <= alpha
        if part["p_fail_holm"] is not None and part["p_fail_holm"] <= alpha:
            part["status"] = "fails"
            part["reason"] = ((single["reason"] if single else "every alternative on the other side")
                              + (f"; Holm-adjusted p {part['p_fail_holm']:.2g} over {m} tested parts" if m > 1 else ""))
        elif holds:
            part["status"] = "holds"
            part["reason"] = single["reason"] if single else \
                f"one alternative holds (Bonferroni over {len(alternatives)}: p {part['p_hold']:.2g})"
        else:
            part["status"] = "undecided"
            if part["p_fail"] is not None and part["p_fail"] <= alpha:
                part["reason"] = (f"on the other side alone (one-sided p {part['p_fail']:.2g}) but not after Holm's "
                                  f"adjustment over {m} tested parts (p {part['p_fail_holm']:.2g}): too weak "
                                  "for this many parts")
            elif single is not None and single["status"] == "fails" and single["relation"] == "~":
                part["reason"] = (f"{single['reason']}, but a tie fails on its two-sided test only (the smaller "
                                  f"one-sided p doubled: {part['p_fail']:.2g} > {alpha:g})")
            elif single is not None:
                part["reason"] = single["reason"]
            else:
                part["reason"] = "; ".join(f"{a['comparison']}: {a.get('reason', '')}" for a in alternatives)
    return out


def tally_text(tally: dict) -> str:
    names = {"fails": "fail", "holds": "hold", "undecided": "undecided", "not tested": "not tested"}
    return " / ".join(f"{tally[s]} {names[s]}" for s in STATUSES if tally.get(s))


def verdict_of(parts: list[dict]) -> tuple[str, dict, str]:
    """(verdict, tally, the verdict cell's text) of a claim from its parts' statuses."""
    tally = Counter(p["status"] for p in parts)
    if tally["fails"]:
        verdict = "fails"
    elif tally["holds"] == len(parts):
        verdict = "holds"
    elif tally["not tested"] == len(parts):
        verdict = "not tested"
    else:
        verdict = "undecided"
    tally = {s: tally.get(s, 0) for s in STATUSES}
    if verdict == "not tested":
        shorts = dict.fromkeys(a["short"] for p in parts for a in p["alternatives"] if a.get("short"))
        return verdict, tally, f"not tested ({'; '.join(shorts)})"
    return verdict, tally, f"{verdict}: {tally_text(tally)}"


def evaluate_claims(spec: dict, results: Results, tables: dict | None = None, root=".", selected=None,
                    ids=None) -> list[dict]:
    """One record per claim: its parts (comparisons: ours, the paper's), verdict and tally. ``ids``:
    the embedding ids ``each_of`` expands over (default: those the results hold)."""
    out = []
    shared = {}  # the bootstrap's replicate scores, by run and data set's items, shared by the claims
    for cid, claim in spec["claims"].items():
        if selected is not None and cid not in selected:
            continue
        settings = {k: claim.get(k, spec["defaults"][k]) for k in SETTINGS}
        source, protocol = claim.get("source", "intrinsic"), claim.get("protocol")
        expand_over = ids if ids is not None else results.ids(source, protocol)
        parts = claim_parts(claim, expand_over, settings["tol"])
        resolved = {}
        for comp in (c for p in parts for c in p):
            for ref in comp.refs():
                key = (ref_key(ref, "overall"), _metric_text(comp.metric))
                if key not in resolved:
                    resolved[key] = resolve_ref(ref, comp.metric, results, claim, settings["scale"])
        rows = list(dict.fromkeys(emb for emb, _ in resolved.values() if emb is not None))
        datasets = list(dict.fromkeys(p.split(".")[0] for p in claim_metric_items(claim)))
        grounds = common_grounds(rows, datasets, results, protocol) if source == "intrinsic" else {}
        bank = ItemBank(results, protocol, grounds, settings["bootstrap"], settings["bootstrap_seed"], shared) \
            if source == "intrinsic" else None
        entry = (tables or {}).get(claim.get("table")) if claim.get("table") else None
        paper = paper_numbers(entry, root, claim.get("aliases")) if entry else None
        alpha = (1 - settings["level"]) / 2
        part_records = []
        for alternatives in parts:
            records = []
            for comp in alternatives:
                rec = evaluate_comparison(comp, claim, results, settings, resolved, grounds, bank)
                rec.update(paper_check(comp, paper, settings["scale"]))
                records.append(rec)
            part_records.append(records)
        seen = {}
        for k, p in enumerate(part_records, start=1):  # a part whose numbers another part already compares
            if len(p) == 1 and p[0].get("_numbers") is not None and p[0].get("_fingerprinted"):
                first = seen.setdefault(p[0]["_numbers"], k)
                if first != k:
                    p[0].update(status="not tested", identical=True, short="repeats a part",
                                reason=f"{p[0]['comparison']} gives the numbers of part {first} "
                                       "(a row identical to another: an identity post-processing, one row under two names)")
        for p in part_records:
            for a in p:
                a.pop("_numbers", None)
                a.pop("_fingerprinted", None)
        identical = [p for p in part_records if all(a.get("identical") for a in p)]
        part_records = [p for p in part_records if not all(a.get("identical") for a in p)]
        decided = decide_parts(part_records, alpha)
        verdict, tally, text = verdict_of(decided) if decided else \
            ("not tested", {s: 0 for s in STATUSES}, "not tested (no comparison: no embedding matches)")
        replicability = replicability_of(claim, decided, alpha)
        notes = []
        if replicability:
            notes.append(replicability["text"])
        low = sorted({d for p in decided for a in p["alternatives"] for d in (a.get("coverage") or {}).get("low", [])})
        if low:
            notes.append(f"reads {', '.join(low)} on less than {settings['min_coverage']:.0%} of its items "
                         "(the items every row covers)")
        if identical:
            notes.append(f"{_count(len(identical), 'part')} left out: " + "; ".join(p[0]["reason"] for p in identical))
        if claim.get("shares"):
            notes.append("shares parts with " + ", ".join(claim["shares"]) + " (the same numbers, decided in both: "
                         "each sentence makes that comparison)")
        flagged = [a["comparison"] for p in decided for a in p["alternatives"] if a["paper_check"].startswith("NOT")]
        caveats = []
        if source == "tagging":  # the tagger, not only the embeddings, may decide it (issue 51)
            from staticvec.evaluate.tagging.summary import tagging_caveats

            contextual = CONTEXTUAL if CONTEXTUAL in results.tagging else results.contextual_id
            caveats = tagging_caveats(results.tagging, contextual, rows,
                                      [p.split(".")[0] for p in claim_metric_items(claim)], settings["scale"])
        from staticvec.report.tables import fitted_head_caption

        head_note = fitted_head_caption({r: results.heads[r] for r in rows if r in results.heads})
        if head_note:  # a row built on a head we fitted (SemGloVe_md on MiniLM): how good that head is
            caveats.append(head_note.rstrip("."))
        out.append({"id": cid, "group": group_of(claim), "paper": claim["paper"], "origin": claim.get("origin", "paper"),
                    "where": claim["where"], "at": claim.get("at"), "sentence": claim.get("sentence"),
                    "statement": claim["statement"], "source": source, "protocol": protocol,
                    "table": claim.get("table"), "note": claim.get("note"), "settings": settings, "alpha": alpha,
                    "verdict": verdict, "tally": tally, "verdict_text": text,
                    "coverage": {d: {"common": None if g.items is None else len(g.items), "total": g.total,
                                     "full": g.full, "rows": g.rows, "problem": g.problem,
                                     "per_item": g.decomposable, "found": g.found}
                                 for d, g in grounds.items()},
                    "paper_flag": ("the paper's table does not support: " + "; ".join(flagged)) if flagged else None,
                    "reading": claim.get("reading"), "replicability": replicability, "notes": notes,
                    "caveats": caveats, "identical": [p[0]["comparison"] for p in identical], "parts": decided})
    return out


def replicability_of(claim: dict, parts: list[dict], alpha: float) -> dict | None:
    """For a claim "on each of N data sets": on how many of them it holds, and fails, with family-wise
    error at most α (:func:`staticvec.stats.partial_conjunction`, Dror et al. 2017). The claim holds on a
    set when every part on that set holds (its p-value: the largest of theirs, intersection–union) and
    fails on it when one part does (the smallest p-value times the set's parts, Bonferroni). Sets with an
    untested part are left out of N."""
    from staticvec.stats import partial_conjunction

    sets = [m for f in claim_forms(claim) if isinstance(f["metric"], dict) and "each" in f["metric"]
            for m in f["metric"]["each"]]
    sets = list(dict.fromkeys(sets))
    if len(sets) < 2:
        return None
    hold, fail = {}, {}
    for name in sets:
        mine = [p for p in parts if p["alternatives"][0]["metric"] == name]
        if not mine or any(p["p_hold"] is None for p in mine):
            continue
        hold[name] = max(p["p_hold"] for p in mine)
        fails = [p["p_fail"] for p in mine if p["p_fail"] is not None]
        fail[name] = min(1.0, len(mine) * min(fails)) if fails else 1.0
    if len(hold) < 2:
        return None
    h, f = partial_conjunction(hold, alpha), partial_conjunction(fail, alpha)
    text = (f"replicability over the {h.n} sets (partial conjunction, Holm across u, family-wise {alpha:.1%}): "
            f"holds on {h.count}" + (f" ({', '.join(h.sets)})" if 0 < h.count < h.n else "")
            + f", fails on {f.count}" + (f" ({', '.join(f.sets)})" if 0 < f.count < f.n else ""))
    return {"n": h.n, "holds": h.count, "holds_sets": h.sets, "holds_pc": h.pc, "fails": f.count,
            "fails_sets": f.sets, "fails_pc": f.pc, "text": text}


def counts(records: list[dict]) -> dict:
    """{group: {holds, fails, undecided, not_tested, flagged}}: the papers' lines in the papers' order,
    then "beyond the papers" (the claims no paper makes)."""
    out = {}
    present = {r["group"] for r in records}
    for group in [g for g in GROUPS if g in present] + sorted(present - set(GROUPS)):
        mine = [r for r in records if r["group"] == group]
        out[group] = {v.replace(" ", "_"): sum(r["verdict"] == v for r in mine) for v in VERDICTS}
        out[group]["flagged"] = sum(bool(r["paper_flag"]) for r in mine)
    return out


def counts_lines(summary: dict) -> list[str]:
    """One line per group: 'SemGloVe (Gan et al.): 2 hold, 1 fail, 3 undecided, 1 not tested'."""
    lines = []
    for group, c in summary.items():
        text = (f"{GROUPS.get(group, group)}: {c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided"
                + (f", {c['not_tested']} not tested" if c.get("not_tested") else ""))
        if c.get("flagged"):
            text += f" ({c['flagged']} not supported by the paper's own table)"
        lines.append(text)
    return lines


# ------------------------------------------------------------------ output


def seeds_read(records: list[dict]) -> dict:
    """{source: sorted distinct numbers of paired seeds} of the tested comparisons (1: a deterministic
    result): what the run's results gave, for the rule text."""
    out = {}
    for r in records:
        for p in r["parts"]:
            for a in p["alternatives"]:
                if a.get("n"):
                    sweep = r["source"] == "intrinsic" and any("~" in e for e in a.get("rows") or [])
                    out.setdefault("sweep" if sweep else r["source"], set()).add(a["n"])
    return {k: sorted(v) for k, v in out.items()}


SOURCE_NAMES = {"intrinsic": "the intrinsic rows", "sweep": "the sweep points", "tagging": "the taggers",
                "classification": "the classifiers", "dev_curve": "the development curves"}


def rule_text(records: list[dict], level: float = 0.95, defaults: dict | None = None) -> str:
    """The rule printed at the top of claims.md, from the settings the claims were decided with and the seeds
    the results had (docs/statistics.md states it with its references)."""
    alpha = 100 * (1 - level) / 2
    d = {**{"min_seeds": 3, "min_coverage": 0.5, "bootstrap": 1000}, **(defaults or {})}
    seeds = seeds_read(records)
    seen = "; ".join(f"{SOURCE_NAMES.get(k, k)}: {' or '.join(map(str, v))} paired seed{'s' if v != [1] else ''}"
                     for k, v in seeds.items()) or "none tested"
    return (
        "Each comparison is left − right in points (×100), paired by training seed, on the items (word pairs, "
        "analogy questions) every row of the claim covers: an item with an out-of-vocabulary word in any row is "
        "out of that claim's comparison, whatever the protocol does with it (items: compared/total; the paper "
        f"tables keep their protocols); a data set read on less than {d['min_coverage']:.0%} of its items is "
        f"marked so. The interval is the two-sided {100 * level:g} % interval of the mean paired difference over "
        "both the training seeds and the sampling of the evaluation items: the items' variance from a paired "
        f"bootstrap ({d['bootstrap']} resamples of the items, the same for every row; Spearman recomputed on each, "
        "an accuracy's exactly), the seeds' from the per-seed differences, added, with Welch–Satterthwaite "
        "degrees of freedom (docs/statistics.md); a score without per-item values (SemEval-2012, "
        "categorization, tagging, classification) has the seeds' interval only, said in its cell. It says "
        "nothing about another corpus or teacher. A part **holds** when its interval lies on the claimed side "
        f"(> 0; ≥ −tol; within ±tol); a claim holds when every part holds (intersection–union: at most {alpha:g} % "
        f"wrong). A part **fails** when its one-sided test rejects it at {alpha:g} % after Holm's adjustment over "
        f"the claim's tested parts (a tie's: the smaller one-sided p doubled), so a claim reads \"fails\" while all "
        f"its parts are true at most {alpha:g} % of the time; a claim fails when one part fails. An any-of part "
        "holds when one alternative does (Bonferroni) and fails when all do. A claim on each of several data "
        "sets also says on how many it holds and fails (partial conjunction, Holm across u: Dror et al. 2017). "
        f"**not tested**: fewer paired seeds than {d['min_seeds']}, no result, or two names of one row; "
        "**undecided**: tested, neither — its cell says why (an interval across the bound, or one on the wrong "
        f"side that Holm's adjustment or a tie's two-sided test does not let fail). Seeds read here: {seen}. "
        "Paper: the paper's own difference from its printed table; *within print precision*: the rounding of "
        "the printed numbers alone could reverse it; ⚑: the printed numbers contradict it."
    )


def _num(value, digits=2) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def _ours(c: dict) -> str:
    if c.get("mean") is None:
        return "—"
    if c.get("exact"):
        return f"{c['mean']:+.2f} (exact)"
    if c.get("low") is None:
        return f"{c['mean']:+.2f} (no interval)"
    text = f"{c['mean']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"
    if c.get("covers") in ("seeds", "items"):
        text += f" ({c['covers']} only)"
    return text


def _items(c: dict) -> str:
    cov = c.get("coverage")
    if not cov:
        return "—"
    text = " + ".join(cov["sets"].values()) if not cov.get("per_item", True) else f"{cov['items']}/{cov['total']}"
    if cov.get("low"):
        text += f" ⚠ below coverage on {', '.join(cov['low'])}"
    return text


def _paper_cell(c: dict) -> str:
    if c["paper_value"] is None:
        return "—"
    text = _num(c["paper_value"])
    if c["paper_check"] == "within print precision":
        text += " (within print precision)"
    elif c["paper_check"].startswith("NOT"):
        text += " ⚑ not supported"
    return text


def to_rows(records: list[dict]) -> list[dict]:
    rows = []
    for r in records:
        for k, part in enumerate(r["parts"], start=1):
            for c in part["alternatives"]:
                cov = c.get("coverage") or {}
                rows.append({
                    "claim": r["id"], "group": r["group"], "paper": r["paper"], "origin": r["origin"],
                    "where": r["where"], "at": r["at"], "statement": r["statement"], "claim_verdict": r["verdict"],
                    "claim_tally": r["verdict_text"], "part": k, "part_verdict": part["status"],
                    "part_p_fail_holm": part["p_fail_holm"], "comparison": c["comparison"], "metric": c["metric"],
                    "protocol": r["protocol"] or r["source"], "relation": c["relation"], "tol": c["tol"],
                    "paper_value": c["paper_value"], "paper_precision": c["paper_precision"],
                    "paper_check": c["paper_check"], "chosen": c["chosen"], "ours_mean": c["mean"],
                    "ours_low": c["low"], "ours_high": c["high"], "n_seeds": c["n"],
                    "seeds": " ".join(map(str, c.get("seeds") or [])), "items_common": cov.get("items"),
                    "items_total": cov.get("total"),
                    "items_sets": " ".join(f"{k}:{v}" for k, v in (cov.get("sets") or {}).items()) or None,
                    "comparison_verdict": c["status"], "p_hold": c["p_hold"], "p_fail": c["p_fail"],
                    "se": c.get("se"), "df": c.get("df"), "var_items": c.get("var_items"),
                    "var_seeds": c.get("var_seeds"), "interval_covers": c.get("covers"),
                    "items_below_coverage": " ".join(cov.get("low") or []) or None,
                    "reason": part["reason"] if len(part["alternatives"]) == 1 else c.get("reason"),
                })
    return rows


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(records: list[dict], caption: str, not_encoded: dict | None = None, level: float = 0.95,
                defaults: dict | None = None, readings: str | None = None) -> str:
    lines = [f"**{caption}**", "", rule_text(records, level, defaults), ""]
    if readings:
        lines += [readings, ""]
    summary = counts(records)
    for line in counts_lines(summary):
        lines.append(f"- {line}")
    twins = [r for r in records if (r.get("reading") or "").startswith("the released code")]
    for paper in dict.fromkeys(r["paper"] for r in twins):
        mine = [r for r in twins if r["paper"] == paper]
        tally = Counter(r["verdict"] for r in mine)
        lines.append(f"- of which {PAPERS.get(paper, paper)} on the released code's row (the `_released` claims): "
                     + ", ".join(f"{tally.get(v, 0)} {v}" for v in VERDICTS if tally.get(v) or v != "not tested"))
    lines.append("")
    for group in summary:
        mine = [r for r in records if r["group"] == group]
        skipped = (not_encoded or {}).get(group) or []
        lines += [f"### {GROUPS.get(group, group)}", ""]
        if group == BEYOND:
            lines += [f"{_count(len(mine), 'claim')} that no paper makes (origin: ours), counted apart from the "
                      "papers'.", ""]
        else:
            lines += [f"{_count(len(mine), 'sentence')} of the paper encoded, one claim each (its place and words in "
                      f"the second column); {len(skipped)} not decided here"
                      + (", listed after the table with the reason." if skipped else "."), ""]
        lines += ["| claim | in the paper | tested | verdict | comparison (points) | paper | ours: mean [CI] | seeds "
                  "| items | part |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in mine:
            first = True
            for part in r["parts"]:
                for c in part["alternatives"]:
                    if first:
                        if r["origin"] == "ours":
                            source = f"not in the paper (beside {PAPERS.get(r['paper'], r['paper'])}, {r['where']})"
                        else:
                            source = f"{r['where']}, {r['at']}: “{r['sentence']}”"
                        head = [r["id"], source, r["statement"] + (f" ({r['note']})" if r.get("note") else ""),
                                f"**{r['verdict_text']}**" + (" ⚑" if r["paper_flag"] else "")
                                + "".join(f"; {n}" for n in (r.get("notes") or []) + (r.get("caveats") or []))]
                        first = False
                    else:
                        head = ["", "", "", ""]
                    comp = c["comparison"] + (f" ({c['chosen']})" if c.get("chosen") else "") + \
                        (f", tol {c['tol']:g}" if c["relation"] in ("~", ">=") else "")
                    if len(part["alternatives"]) > 1:
                        comp = f"either: {comp}"
                    verdict = part["status"] if len(part["alternatives"]) == 1 or c is part["alternatives"][0] else "〃"
                    why = part["reason"] if c is part["alternatives"][0] else c.get("reason", "")
                    cells = head + [comp, _paper_cell(c), _ours(c), str(c["n"]), _items(c), f"{verdict}: {why}"]
                    lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
        lines.append("")
        if skipped:
            lines += ["Sentences of the paper not decided here:", ""]
            lines += [f"- {s['at']}: “{s['sentence']}” — {s['why']}" for s in skipped]
            lines.append("")
    return "\n".join(lines)


def readings_text(sheet: dict) -> str | None:
    """Which verdict reads which row, where the sheet decides a paper's claims on its released code's row too."""
    released = sheet.get("released_rows") or {}
    if not released:
        return None
    out = []
    for paper, rows in released.items():
        pairs = ", ".join(f"{a} (the paper's settings) and {b} (the authors' released code)" for a, b in rows.items())
        twins = [c for c, claim in sheet["claims"].items() if claim.get("twin_of") and claim["paper"] == paper]
        out.append(f"**{PAPERS.get(paper, paper)}: two readings.** Each claim naming {pairs} is decided on both rows: "
                   f"the claim's own id reads the paper-settings row, `<id>_released` the released-code row "
                   f"({len(twins)} such claims), both counted in the paper's line.")
        skipped = sheet.get("released_skipped", {}).get(paper) or []
        if skipped:
            out.append(f"Not decided on the released row: {', '.join(skipped)} (its table has no released-code row; "
                       "add it under the table's extra_rows in config/tables.yaml to decide them).")
    return " ".join(out)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def to_html_block(summary: dict) -> str:
    import html

    items = "".join(f"<li>{html.escape(line)}</li>" for line in counts_lines(summary))
    return f"<p><b>The papers' claims on this run</b> (tables/claims.md):</p><ul>{items}</ul>"


def write_claims(records: list[dict], caption: str, md_path, csv_path, json_path, not_encoded=None,
                 level: float = 0.95, defaults: dict | None = None, readings: str | None = None) -> None:
    import csv

    from staticvec.files import atomic_open, write_json

    rows = to_rows(records)
    fields = list(rows[0]) if rows else ["claim"]
    with atomic_open(csv_path, "wt") as fh:
        fh.write(f"# {caption}\n")
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    with atomic_open(md_path, "wt") as fh:
        fh.write(to_markdown(records, caption, not_encoded, level, defaults, readings))
    write_json(json_path, {"caption": caption, "rule": rule_text(records, level, defaults), "readings": readings,
                           "counts": counts(records), "verdicts": {r["id"]: r["verdict"] for r in records},
                           "claims": records, "not_encoded": not_encoded or {}})


# ------------------------------------------------------------------ CLI


def parse_results(items) -> tuple[dict, dict, dict, dict, dict]:
    """``PROTOCOL/ID/SEED=FILE`` (intrinsic), ``tagging/ID=FILE``, ``classification/ID=FILE``,
    ``record/ID/SEED=FILE`` (a training record: its development curve), ``head/ID=FILE`` (the record of the
    MLM head fitted for row ID)."""
    from staticvec.files import read_json
    from staticvec.report.tables import load_result

    intrinsic, tagging, classification, records, heads = {}, {}, {}, {}, {}
    expected = ("expected PROTOCOL/ID/SEED=FILE, record/ID/SEED=FILE, tagging/ID=FILE, classification/ID=FILE or "
                "head/ID=FILE")
    for item in items or []:
        key, sep, path = item.partition("=")
        parts = key.split("/")
        if not sep or not path or not all(parts):
            raise StaticvecError(f"{expected}, got {item!r}")
        if parts[0] == "head" and len(parts) == 2:
            heads[parts[1]] = read_json(path)
        elif parts[0] in ("tagging", "classification") and len(parts) == 2:
            (tagging if parts[0] == "tagging" else classification)[parts[1]] = load_result(path)
        elif len(parts) == 3 and parts[2].isdigit() and parts[0] == "record":
            records.setdefault(parts[1], {})[int(parts[2])] = read_json(path)
        elif len(parts) == 3 and parts[2].isdigit():
            intrinsic.setdefault((parts[0], parts[1]), {})[int(parts[2])] = load_result(path)
        else:
            raise StaticvecError(f"{expected}, got {item!r}")
    return intrinsic, tagging, classification, records, heads


def _tokens_text(tokens) -> str:
    if not tokens:
        return "an unknown number of"
    return f"{tokens / 1e9:.2f}B" if tokens >= 1e9 else f"{tokens / 1e6:.2f}M" if tokens >= 1e6 else f"{tokens:,}"


def caption(manifest: dict) -> str:
    """The table's caption: the run's scale and teacher first (the verdicts are about them), then its provenance."""
    made = manifest.get("provenance_caption")
    stats = manifest.get("corpus_stats") or {}
    text = "The papers' claims, decided from this run's results (config/claims.yaml)"
    if stats or manifest.get("teacher"):
        corpus = stats.get("source") or manifest.get("corpus") or "the corpus"
        text += (f", at this run's scale and teacher: {_tokens_text(stats.get('tokens'))} tokens of {corpus} "
                 f"(the papers: 1.1-1.28B), teacher {manifest.get('teacher') or 'unknown'}. A claim that fails "
                 "here fails at this scale with this teacher; it is not a verdict on the paper")
    return text + (f". Made with: {made}." if made else ".")


def claims_from_files(spec: str, results: tuple, out_md: str, out_csv: str, out_json: str,
                      tables: str | None = "config/tables.yaml", random: list | None = None,
                      contextual_id: str | None = None, selected: list | None = None, manifest: str | None = None,
                      root: str = ".") -> list[dict]:
    """Decide the claims of the sheet ``spec`` on ``results`` (:func:`parse_results`' dicts) and write
    them; ``random``: the embedding ids whose intrinsic results depend on the seed; ``selected``: the
    claim ids to decide (default all); what ``staticvec report claims`` does."""
    from staticvec.files import read_json
    from staticvec.sheets.tables import load_tables_spec

    sheet_tables = load_tables_spec(tables, root)["tables"] if tables else None
    sheet = load_claims_spec(spec, tables=sheet_tables)
    intrinsic, tagging, classification, *rest = results
    loaded = Results(intrinsic, tagging, classification, list(random or []), contextual_id,
                     records=rest[0] if rest else None, heads=rest[1] if len(rest) > 1 else None)
    records = evaluate_claims(sheet, loaded, sheet_tables, root, selected)
    write_claims(records, caption(read_json(manifest) if manifest else {}), out_md, out_csv, out_json,
                 sheet.get("not_encoded"), sheet["defaults"]["level"], sheet["defaults"], readings_text(sheet))
    return records
