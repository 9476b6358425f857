"""The claims sheet (``config/claims.yaml``), read and checked, and what a claim names: its forms, the result
paths its metric reads, the embeddings it compares. Deciding and writing the verdicts is
:mod:`staticvec.report.claims`'s.
"""

from __future__ import annotations

import copy
import fnmatch
from pathlib import Path

from staticvec.errors import StaticvecError
from staticvec.sheets.schema import load_sheet
from staticvec.sheets.tables import CONTEXTUAL, result_keys, table_result_ids

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "claims.schema.yaml"
DEFAULTS = {"level": 0.95, "min_seeds": 3, "tol": 0.5, "scale": 100.0, "min_coverage": 0.5, "bootstrap": 1000,
            "bootstrap_seed": 0}
PAPERS = {"semglove": "SemGloVe (Gan et al.)", "wang": "BERT+Skip-gram (Wang et al.)",
          "c2v": "Context-to-Vec (Zheng et al.)", "x2static": "X2Static (Gupta & Jaggi)"}
BEYOND = "beyond"  # the group of the claims no paper makes (origin: ours)
GROUPS = {**PAPERS, BEYOND: "Beyond the papers (ours)"}
SPLITS = {"tagging": {"test", "dev"}, "classification": {"f1", "accuracy"}}
DEV_CURVE_METRICS = {"best": "the best development score over the run", "final": "the score at the end of the run"}
FORMS = ("order", "tie", "contrast")


def load_claims_spec(path, embedding_ids=None, protocols=None, tables=None) -> dict:
    """Read the claims sheet, check it against its schema and, where given, against the embeddings
    sheet's ids, the evaluation protocols and the tables sheet's tables: every problem in one error
    naming the sheet and the claim."""
    spec = load_sheet(path, SCHEMA, "claims sheet")
    spec["defaults"] = {**DEFAULTS, **(spec.get("defaults") or {})}
    spec.setdefault("not_encoded", {})
    known = None if embedding_ids is None else set(embedding_ids)
    problems = _released_twins(spec, tables, path)
    for cid, claim in spec["claims"].items():
        where = f"{path}: claims.{cid}"
        source = claim.get("source", "intrinsic")
        for ref in claim_refs(claim):
            problem = _ref_problem(ref, source, known)
            if problem:
                problems.append(f"{where}: {problem}")
        for item in claim_metric_items(claim):
            problem = metric_problem(item, source)
            if problem:
                problems.append(f"{where}.metric: {problem}")
        if source == "intrinsic":
            if "protocol" not in claim:
                problems.append(f"{where}: an intrinsic claim needs a 'protocol'")
            elif protocols is not None and claim["protocol"] not in protocols:
                problems.append(f"{where}.protocol: {claim['protocol']!r} is not one of config evaluation.protocols "
                                f"({', '.join(protocols)})")
        elif "protocol" in claim:
            problems.append(f"{where}: a {source} claim has no 'protocol'")
        for form in claim.get("all_of") or claim.get("any_of") or [claim]:
            if "tie" in form and ("relation" in form or "relation" in claim):
                problems.append(f"{where}: a tie has no 'relation' (it is |a − b| <= tol)")
            if "contrast" in form and any(is_each(t["embedding"]) for t in form["contrast"]):
                problems.append(f"{where}: a contrast names single embeddings (no each_of)")
        if "any_of" in claim:
            problems += [f"{where}.any_of: {p}" for p in _any_of_problems(claim)]
        if tables is not None and claim.get("table"):
            entry = tables.get(claim["table"])
            if entry is None:
                problems.append(f"{where}.table: {claim['table']!r} is not a table of the tables sheet")
            elif entry["source"] != source:
                problems.append(f"{where}.table: {claim['table']} is a {entry['source']} table, the claim is {source}")
            else:
                problems += [f"{where}: {p}" for p in _off_table_refs(claim, entry, known)]
    if not problems:
        problems += duplicate_problems(spec, known, path)
    if problems:
        raise StaticvecError("invalid claims sheet:\n  - " + "\n  - ".join(problems))
    return spec


# ------------------------------------------------------------------ the released code's row


def _substitute(form: dict, rows: dict) -> dict:
    def swap(ref):
        return rows.get(ref, ref) if isinstance(ref, str) else ref

    if "order" in form:
        form["order"] = [[swap(r) for r in item] if isinstance(item, list) else swap(item) for item in form["order"]]
    if "tie" in form:
        form["tie"] = [swap(r) for r in form["tie"]]
    for term in form.get("contrast") or []:
        term["embedding"] = swap(term["embedding"])
    return form


def _released_twins(spec: dict, tables, path) -> list[str]:
    """Every claim of a paper with ``released_rows`` that names a paper-settings row gets a twin
    ``<id>_released`` reading the released-code row instead (a claim on a table without that row gets
    none: listed in ``released_skipped``). Returns the problems found."""
    released = spec.get("released_rows") or {}
    spec["released_skipped"] = {}
    problems, claims = [], {}
    for cid, claim in spec["claims"].items():
        claims[cid] = claim
        rows = released.get(claim["paper"]) or {}
        named = list(dict.fromkeys(r for r in claim_refs(claim) if isinstance(r, str) and r in rows))
        if not named:
            continue
        if tables is not None and claim.get("table") in tables:
            have = set(table_result_ids(tables[claim["table"]]))
            if not all(rows[r] in have for r in named):
                spec["released_skipped"].setdefault(claim["paper"], []).append(cid)
                continue
        twin = copy.deepcopy(claim)
        for key in ("all_of", "any_of"):
            if key in twin:
                twin[key] = [_substitute(f, rows) for f in twin[key]]
        _substitute(twin, rows)
        reading = ", ".join(rows[r] for r in named)
        claim["reading"] = "the paper's settings (" + ", ".join(named) + ")"
        twin.update(twin_of=cid, reading=f"the released code ({reading})", only_rows=[rows[r] for r in named],
                    aliases={rows[r]: r for r in named},
                    statement=f"{claim['statement']} — read on the released code's row ({reading})")
        tid = f"{cid}_released"
        if tid in spec["claims"]:
            problems.append(f"{path}: claims.{tid}: the id of claims.{cid}'s released-row twin is taken; rename it")
        claims[tid] = twin
    for claim in claims.values():
        if claim.get("twin_of") and claim.get("shares"):
            claim["shares"] = [f"{c}_released" if f"{c}_released" in claims else c for c in claim["shares"]]
    spec["claims"] = claims
    return problems


# ------------------------------------------------------------------ no number compared twice


def _ref_token(ref) -> str:
    if isinstance(ref, dict):
        return f"best_of:{ref['best_of']}:{ref.get('per', 'overall')}"
    return ref


def _metric_token(metric) -> str:
    if isinstance(metric, str):
        return metric
    return "mean(" + ",".join(sorted(metric["mean"])) + ")"


def _form_terms(form: dict, ids) -> list[list[tuple[str, float]]]:
    """The comparisons of one form as term lists (the report's expansion: every pair of an order, of a tie)."""
    def level(item):
        out = []
        for ref in item if isinstance(item, list) else [item]:
            out += expand_ref(ref, ids) if is_each(ref) and ids is not None else [ref]
        return [_ref_token(r) if not is_each(r) else f"each_of:{r['each_of']}" for r in out]

    if "order" in form:
        levels = [level(item) for item in form["order"]]
        return [[(a, 1.0), (b, -1.0)] for i in range(len(levels)) for j in range(i + 1, len(levels))
                for a in levels[i] for b in levels[j]]
    if "tie" in form:
        refs = level(form["tie"])
        return [[(refs[i], 1.0), (refs[j], -1.0)] for i in range(len(refs)) for j in range(i + 1, len(refs))]
    return [[(_ref_token(t["embedding"]), float(t["weight"])) for t in form["contrast"]]]


def _canonical(terms) -> tuple:
    """The same numbers whatever the direction: a − b and b − a (an order and its reverse, a tie) are one."""
    merged = {}
    for ref, weight in terms:
        merged[ref] = merged.get(ref, 0.0) + weight
    plus = tuple(sorted((r, w) for r, w in merged.items() if w))
    minus = tuple(sorted((r, -w) for r, w in merged.items() if w))
    return min(plus, minus)


def comparison_keys(claim: dict, ids=None) -> list[tuple[tuple, str]]:
    """(key, text) of every part of a claim: the numbers it compares (its rows and weights, up to sign; its
    metric; its results' source and protocol). An ``any_of`` part is the set of its alternatives."""
    base = (claim.get("source", "intrinsic"), claim.get("protocol"))
    if "any_of" in claim:  # (a released-row twin keeps every alternative: only_rows filters orders)
        per = [[(_metric_token(m), [_canonical(t) for t in _form_terms(f, ids)]) for m in metric_parts(f["metric"])]
               for f in claim_forms(claim)]
        out = []
        for k in range(len(per[0])):
            alts = frozenset((m, c) for form in per for m, cs in [form[k]] for c in cs)
            out.append(((*base, "any", alts), f"any of {len(alts)} alternatives on {per[0][k][0]}"))
        return out
    out = []
    only = set(claim.get("only_rows") or [])
    for form in claim_forms(claim):
        for metric in metric_parts(form["metric"]):
            for terms in _form_terms(form, ids):
                if only and not only & {r for r, _ in terms}:
                    continue
                canon = _canonical(terms)
                text = " − ".join(r for r, _ in terms) + f" on {_metric_token(metric)}"
                out.append(((*base, _metric_token(metric), canon), text))
    return out


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def duplicate_problems(spec: dict, known, path) -> list[str]:
    """No two parts of a claim, and no two claims of a paper, compare the same numbers (the same rows, data
    sets and metric): one result would count twice. Two claims of a paper may share a comparison when
    each sentence makes it and one lists the other under ``shares``."""
    problems, seen = [], {}
    ids = None if known is None else sorted(known)
    for cid, claim in spec["claims"].items():
        mine = {}
        for key, text in comparison_keys(claim, ids):
            if key in mine:
                problems.append(f"{path}: claims.{cid}: two parts compare the same numbers ({text}): remove the "
                                "repeat (an identity row, or a row listed twice)")
                continue
            mine[key] = text
        allowed = set(claim.get("shares") or [])
        shared = {}
        for key, text in mine.items():
            other = seen.get((group_of(claim), key))
            if other is not None and other not in allowed and cid not in set(spec["claims"][other].get("shares") or []):
                shared.setdefault(other, []).append(text)
            seen.setdefault((group_of(claim), key), cid)
        for other, texts in shared.items():
            problems.append(f"{path}: claims.{cid} and claims.{other} ({GROUPS.get(group_of(claim))}) compare the same "
                            f"numbers in {_plural(len(texts), 'part')} ({'; '.join(texts[:3])}"
                            f"{'; …' if len(texts) > 3 else ''}): one result would count in two claims; merge them, "
                            f"remove the repeat, or, if both sentences make that comparison, list {other} under "
                            f"claims.{cid}.shares")
    return problems


def _ref_problem(ref, source: str, known) -> str | None:
    if known is None:
        return None
    if isinstance(ref, dict):
        glob = ref.get("best_of") or ref.get("each_of")
        if not any(fnmatch.fnmatchcase(k, glob) for k in known):
            return f"{'best_of' if 'best_of' in ref else 'each_of'} {glob!r} matches no embedding of the embeddings sheet"
        return None
    if ref == CONTEXTUAL and source == "tagging":
        return None
    if ref not in known:
        return f"{ref!r} is not an embedding of the embeddings sheet"
    return None


def _off_table_refs(claim: dict, table: dict, known) -> list[str]:
    """The embeddings a claim on a table compares that are not rows of that table: the claim would read
    another run than the table prints (a row re-pointed at a variant, the claim left on the old id).
    A glob is checked where the embeddings sheet's ids are given to expand it. Claims without `table:`
    (sweep points, figures, rows of several tables) are not checked here: they name no table."""
    rows = set(table_result_ids(table, known or ()))
    off = []
    for ref in claim_refs(claim):
        if isinstance(ref, dict) and known is None:
            continue
        off += [e for e in expand_ref(ref, known or ()) if e not in rows and e not in off]
    return [f"embedding {e!r} is not a row of table {claim['table']} (its rows name {', '.join(sorted(rows)) or 'none'}); "
            "point the claim at the embedding the table's row names" for e in off]


def _any_of_problems(claim: dict) -> list[str]:
    """An ``any_of`` form gives one comparison per metric item, and every form has as many items."""
    problems = []
    sizes = set()
    for k, form in enumerate(claim["any_of"]):
        levels = form.get("order") or []
        if any(isinstance(x, list) or is_each(x) for x in levels) or len(levels) > 2 or len(form.get("tie") or []) > 2:
            problems.append(f"form {k + 1}: an alternative is one comparison (two single embeddings, or a contrast)")
        sizes.add(len(metric_parts(form.get("metric", claim["metric"]))))
    if len(sizes) > 1:
        problems.append("every alternative needs as many metric items")
    return problems


def metric_parts(metric) -> list:
    """The metric of each comparison: a path, or ``{"mean": [...]}`` (one), or each path of ``{"each": [...]}``."""
    if isinstance(metric, str):
        return [metric]
    if "mean" in metric:
        return [{"mean": list(metric["mean"])}]
    return list(metric["each"])


def metric_items(metric) -> list[str]:
    """The result paths a metric reads."""
    if isinstance(metric, str):
        return [metric]
    return list(metric.get("mean") or metric.get("each"))


def claim_forms(claim: dict) -> list[dict]:
    """The claim's machine forms, each with its relation, tolerance (None: the claim's) and metric."""
    base = {"metric": claim["metric"], "relation": claim.get("relation", ">"), "tol": claim.get("tol")}
    forms = claim.get("all_of") or claim.get("any_of")
    if forms:
        return [{**base, **form} for form in forms]
    return [{**base, **{k: claim[k] for k in FORMS if k in claim}}]


def claim_metric_items(claim: dict) -> list[str]:
    """Every result path the claim reads (all of its forms)."""
    return list(dict.fromkeys(item for form in claim_forms(claim) for item in metric_items(form["metric"])))


def metric_problem(path: str, source: str) -> str | None:
    """Why ``path`` is not a result of ``source`` (None when it is)."""
    if source == "dev_curve":
        if path not in DEV_CURVE_METRICS:
            return f"{path!r}: a development curve gives {' or '.join(DEV_CURVE_METRICS)}"
        return None
    head, _, rest = path.partition(".")
    keys = result_keys(source)
    if keys is not None and head not in keys:
        return f"{path!r} is not a result of {source} evaluation; known: {', '.join(sorted(keys))}"
    allowed = SPLITS.get(source)
    if allowed is not None and rest and rest not in allowed:
        return f"{path!r}: a {source} result has the fields {', '.join(sorted(allowed))}"
    if source == "classification" and not rest:
        return f"{path!r}: name the field (<set>.f1 or <set>.accuracy)"
    return None


def is_each(ref) -> bool:
    return isinstance(ref, dict) and "each_of" in ref


def _form_refs(form: dict) -> list:
    refs = []
    for item in form.get("order") or []:
        refs += item if isinstance(item, list) else [item]
    refs += form.get("tie") or []
    refs += [t["embedding"] for t in form.get("contrast") or []]
    return refs


def claim_refs(claim: dict) -> list:
    return [ref for form in claim_forms(claim) for ref in _form_refs(form)]


def expand_ref(ref, ids) -> list[str]:
    """The embedding ids a ref may name: the id, or every id its glob matches."""
    if isinstance(ref, dict):
        glob = ref.get("best_of") or ref.get("each_of")
        return sorted(i for i in ids if fnmatch.fnmatchcase(i, glob))
    return [ref]


def claimed_embeddings(spec: dict, ids, selected=None) -> list[str]:
    """Embedding ids the (selected) claims name, globs expanded over ``ids``, first-seen order."""
    out = []
    for cid, claim in spec["claims"].items():
        if selected is not None and cid not in selected:
            continue
        for ref in claim_refs(claim):
            out += [e for e in expand_ref(ref, ids) if e != CONTEXTUAL or claim.get("source") != "tagging"]
    return list(dict.fromkeys(out))


def group_of(claim: dict) -> str:
    """The line a claim is counted in: its paper's, or "beyond the papers" (origin: ours)."""
    return BEYOND if claim.get("origin") == "ours" else claim["paper"]
