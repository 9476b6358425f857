"""The papers' claims, decided from this run's results (``config/claims.yaml``; ``tables/claims.md``).

A claim is an ordering of embeddings (``a > b > c``, ``a >= b``), a tie (``|a − b| <= tol``) or a
contrast (``Σ w · metric(e) > 0``: a gain that grows with the corpus) over one metric (a data set, the
per-seed mean of several, or each of several). Every claim becomes comparisons: linear combinations
of embeddings (``a − b``) with a relation.

**Per seed, the paired difference.** Seed ``s`` of every seeded embedding is its training run ``s``
(taggers and classifiers: their seed ``s``); a deterministic result (ASE, the teacher's token table)
is the same number for every seed. The differences ``d_s`` over the common seeds give the mean and
its two-sided t interval ``mean ± t(1 − α/2, n − 1) · sd / √n``. Verdicts, in points (×100):

- ``a > b``: **holds** when the whole interval is above 0; **fails** when it is at or below 0;
- ``a >= b`` (not worse by more than ``tol``): holds when the interval is above ``−tol``; fails when
  it is entirely below ``−tol``;
- ``a ≈ b`` (``|a − b| <= tol``): holds when the interval lies within ``[−tol, tol]``; fails when it lies
  entirely outside;
- otherwise **undecided** (the interval straddles the bound), and undecided too when fewer seeds than
  the claim's ``min_seeds`` pair up (the interval, if any, is still shown). A comparison of two
  deterministic results is exact (no interval is needed).

A claim holds when every comparison holds, fails when any fails, and is undecided otherwise (every
reason listed). Each comparison is also checked on the paper's printed numbers (the claim's
``table`` of the tables sheet, whose row and column mappings say where each embedding and data set
is printed): a claim the paper's own table does not support is flagged, so transcription errors
and loose paraphrases surface.

Command line (the claims rule)::

    staticvec report claims --spec config/claims.yaml --tables config/tables.yaml --random '[...]' \\
        --out-md C.md --out-csv C.csv --out-json C.json  web/glove/1=RESULT.json  tagging/glove=T.json ...
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from pathlib import Path

from staticvec.errors import StaticvecError

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "claims.schema.yaml"
DEFAULTS = {"level": 0.95, "min_seeds": 3, "tol": 0.5, "scale": 100.0}
PAPERS = {"semglove": "SemGloVe (Gan et al.)", "wang": "BERT+Skip-gram (Wang et al.)",
          "c2v": "Context-to-Vec (Zheng et al.)", "x2static": "X2Static (Gupta & Jaggi)"}
CONTEXTUAL = "contextual"  # tagging claims: the teacher's frozen vectors (the tables sheet's keyword)
SPLITS = {"tagging": {"test", "dev"}, "classification": {"f1", "accuracy"}}
VERDICTS = ("holds", "fails", "undecided")


# ------------------------------------------------------------------ the sheet


def load_claims_spec(path, embedding_ids=None, protocols=None, tables=None) -> dict:
    """Read the claims sheet, check it against its schema and, where given, against the embeddings
    sheet's ids, the evaluation protocols and the tables sheet's tables: every problem in one error
    naming the sheet and the claim."""
    from staticvec.sheets import load_sheet

    spec = load_sheet(path, SCHEMA, "claims sheet")
    spec["defaults"] = {**DEFAULTS, **(spec.get("defaults") or {})}
    known = None if embedding_ids is None else set(embedding_ids)
    problems = []
    for cid, claim in spec["claims"].items():
        where = f"{path}: claims.{cid}"
        source = claim.get("source", "intrinsic")
        for ref in claim_refs(claim):
            problem = _ref_problem(ref, source, known)
            if problem:
                problems.append(f"{where}: {problem}")
        for item in metric_items(claim["metric"]):
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
        if "order" in claim and isinstance(claim.get("relation"), list) \
                and len(claim["relation"]) != len(claim["order"]) - 1:
            problems.append(f"{where}.relation: {len(claim['order']) - 1} steps of the order need as many relations")
        if "tie" in claim and claim.get("relation"):
            problems.append(f"{where}: a tie has no 'relation' (it is |a − b| <= tol)")
        if tables is not None and claim.get("table"):
            entry = tables.get(claim["table"])
            if entry is None:
                problems.append(f"{where}.table: {claim['table']!r} is not a table of the tables sheet")
            elif entry["source"] != source:
                problems.append(f"{where}.table: {claim['table']} is a {entry['source']} table, the claim is {source}")
    if problems:
        raise StaticvecError("invalid claims sheet:\n  - " + "\n  - ".join(problems))
    return spec


def _ref_problem(ref, source: str, known) -> str | None:
    if known is None:
        return None
    if isinstance(ref, dict):
        if not any(fnmatch.fnmatchcase(k, ref["best_of"]) for k in known):
            return f"best_of {ref['best_of']!r} matches no embedding of the embeddings sheet"
        return None
    if ref == CONTEXTUAL and source == "tagging":
        return None
    if ref not in known:
        return f"{ref!r} is not an embedding of the embeddings sheet"
    return None


def metric_items(metric) -> list[str]:
    if isinstance(metric, str):
        return [metric]
    return list(metric.get("mean") or metric.get("each"))


def metric_problem(path: str, source: str) -> str | None:
    """Why ``path`` is not a result of ``source`` (None when it is)."""
    from staticvec.report.tables import result_keys

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


def claim_refs(claim: dict) -> list:
    refs = []
    for item in claim.get("order") or []:
        refs += item if isinstance(item, list) else [item]
    refs += claim.get("tie") or []
    refs += [t["embedding"] for t in claim.get("contrast") or []]
    return refs


def expand_ref(ref, ids) -> list[str]:
    if isinstance(ref, dict):
        return sorted(i for i in ids if fnmatch.fnmatchcase(i, ref["best_of"]))
    return [ref]


def ref_key(ref, default_per: str) -> str:
    """A hashable key of a ref: the id, or best_of:<glob>:<per>."""
    if isinstance(ref, dict):
        return f"best_of:{ref['best_of']}:{ref.get('per', default_per)}"
    return ref


def ref_label(ref) -> str:
    return f"best of {ref['best_of']}" if isinstance(ref, dict) else ref


def claimed_embeddings(spec: dict, ids, selected=None) -> list[str]:
    """Embedding ids the (selected) claims name, best_of globs expanded over ``ids``, first-seen order."""
    out = []
    for cid, claim in spec["claims"].items():
        if selected is not None and cid not in selected:
            continue
        for ref in claim_refs(claim):
            out += [e for e in expand_ref(ref, ids) if e != CONTEXTUAL or claim.get("source") != "tagging"]
    return list(dict.fromkeys(out))


# ------------------------------------------------------------------ comparisons


@dataclass
class Comparison:
    terms: list  # [(ref, weight)]
    relation: str  # ">", ">=", "~"
    metric: object  # a path or {"mean": [...]}
    text: str

    def refs(self):
        return [r for r, _ in self.terms]


def comparisons(claim: dict) -> list[Comparison]:
    """The claim as comparisons (a linear combination of embeddings, a relation, one metric)."""
    metric = claim["metric"]
    metrics = [{"mean": metric["mean"]}] if isinstance(metric, dict) and "mean" in metric else \
        (metric_items(metric))
    out = []
    for m in metrics:
        suffix = f" on {m}" if isinstance(metric, dict) and "each" in metric else ""
        if "order" in claim:
            steps = claim["order"]
            relations = claim.get("relation", ">")
            relations = relations if isinstance(relations, list) else [relations] * (len(steps) - 1)
            for k in range(len(steps) - 1):
                lefts = steps[k] if isinstance(steps[k], list) else [steps[k]]
                rights = steps[k + 1] if isinstance(steps[k + 1], list) else [steps[k + 1]]
                for a in lefts:
                    for b in rights:
                        out.append(Comparison([(a, 1.0), (b, -1.0)], relations[k], m,
                                              f"{ref_label(a)} {relations[k]} {ref_label(b)}{suffix}"))
        elif "tie" in claim:
            refs = claim["tie"]
            for i in range(len(refs)):
                for j in range(i + 1, len(refs)):
                    out.append(Comparison([(refs[i], 1.0), (refs[j], -1.0)], "~", m,
                                          f"{ref_label(refs[i])} ≈ {ref_label(refs[j])}{suffix}"))
        else:
            relation = claim.get("relation", ">")
            relation = relation[0] if isinstance(relation, list) else relation
            terms = [(t["embedding"], float(t["weight"])) for t in claim["contrast"]]
            text = " ".join(f"{'+' if w >= 0 else '−'} {abs(w):g}·{ref_label(r)}" for r, w in terms).lstrip("+ ")
            out.append(Comparison(terms, relation, m, f"{text} {relation} 0{suffix}"))
    return out


def t_interval(values, level: float):
    """(mean, low, high) of the values (:func:`staticvec.stats.t_interval`); low = high = mean for one value."""
    from staticvec.stats import t_interval as interval

    got = interval(values, level)
    if got.n < 2:
        return got.mean, got.mean, got.mean
    return got.mean, got.low, got.high


def decide(low: float, high: float, relation: str, tol: float) -> str:
    """holds / fails / undecided for an interval [low, high] of ``left − right`` (points)."""
    if relation == ">":
        return "holds" if low > 0 else "fails" if high <= 0 else "undecided"
    if relation == ">=":
        return "holds" if low >= -tol else "fails" if high < -tol else "undecided"
    if relation == "~":
        return "holds" if -tol <= low and high <= tol else "fails" if low > tol or high < -tol else "undecided"
    raise StaticvecError(f"unknown relation {relation!r}")


def point_check(value: float, relation: str, tol: float) -> bool:
    return decide(value, value, relation, tol) == "holds"


# ------------------------------------------------------------------ results


@dataclass
class Series:
    """One embedding's values of one metric path: {seed: points}; ``random`` False = the same for every seed."""

    values: dict
    random: bool
    reason: str | None = None  # why there is no value


class Results:
    """Our results by source: intrinsic ``{(protocol, id): {seed: result}}``, tagging and classification
    ``{id: result}`` (the per-seed values are inside); ``random``: the ids whose intrinsic results
    depend on the training seed."""

    def __init__(self, intrinsic=None, tagging=None, classification=None, random=(), contextual_id=None):
        self.intrinsic = intrinsic or {}
        self.tagging = tagging or {}
        self.classification = classification or {}
        self.random = set(random)
        self.contextual_id = contextual_id

    def ids(self, source: str, protocol=None) -> list[str]:
        if source == "intrinsic":
            return [e for (p, e) in self.intrinsic if p == protocol]
        return list(self.tagging if source == "tagging" else self.classification)

    def series(self, emb: str, path: str, source: str, protocol=None, scale: float = 100.0) -> Series:
        from staticvec.report.tables import result_value

        if source == "intrinsic":
            runs = self.intrinsic.get((protocol, emb))
            if not runs:
                return Series({}, emb in self.random, f"no {protocol} result of {emb}")
            values = {}
            for seed, result in runs.items():
                value = result_value(result, path)[0]
                if value is not None:
                    values[seed] = value * scale
            return Series(values, emb in self.random, None if values else f"{emb} has no {path} score")
        if source == "tagging":
            result = self.tagging.get(emb)
            if result is None and emb == CONTEXTUAL:
                result = self.tagging.get(self.contextual_id)
            if result is None:
                return Series({}, True, f"no tagging result of {emb}")
            key, _, split = path.partition(".")
            node = result["results"].get(key) or {}
            if node.get("score") is None:
                return Series({}, True, f"{emb} {key}: {node.get('status', 'no result')}")
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


def metric_series(results: Results, emb: str, metric, source: str, protocol, scale: float) -> Series:
    """A metric (a path, or the per-seed mean of several) of one embedding."""
    if isinstance(metric, str):
        return results.series(emb, metric, source, protocol, scale)
    parts = [results.series(emb, p, source, protocol, scale) for p in metric["mean"]]
    missing = list(dict.fromkeys(p.reason for p in parts if not p.values))
    if missing:
        return Series({}, any(p.random for p in parts), "; ".join(missing))
    seeds = set.intersection(*(set(p.values) for p in parts))
    return Series({s: sum(p.values[s] for p in parts) / len(parts) for s in sorted(seeds)},
                  any(p.random for p in parts))


def resolve_ref(ref, results: Results, claim: dict, scale: float):
    """(embedding id, its series of the claim's metric) — the best candidate for a best_of ref (mean over
    seeds of the claim's metric; of every item for an `each` metric)."""
    source, protocol = claim.get("source", "intrinsic"), claim.get("protocol")
    if not isinstance(ref, dict):
        return ref
    candidates = expand_ref(ref, results.ids(source, protocol))
    best, best_score = None, -math.inf
    metric = claim["metric"]
    items = [metric] if isinstance(metric, str) or "mean" in metric else [m for m in metric["each"]]
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
    return best


# ------------------------------------------------------------------ evaluation


@dataclass
class PaperNumbers:
    """The paper's printed numbers of one table, addressed by our embedding refs and result paths."""

    table: object  # PaperTable
    rows: dict  # json(ref) -> paper row
    columns: dict  # result path -> paper column

    def value(self, ref, metric, scale: float):
        row = self.rows.get(ref_key(ref, "overall"))
        if row is None:
            return None, f"{ref_label(ref)} is not a row of {self.table.title}"
        paths = [metric] if isinstance(metric, str) else metric["mean"]
        values = []
        for p in paths:
            col = self.columns.get(p)
            v = None if col is None else self.table.values.get((row, col))
            if v is None or math.isnan(v):
                return None, f"{self.table.title} prints no {p} for {row}"
            values.append(v * scale / self.table.scale)
        return sum(values) / len(values), row


def paper_numbers(entry: dict, root: str | Path = ".") -> PaperNumbers:
    from staticvec.report.tables import load_paper_table

    table = load_paper_table(Path(root) / entry["paper_file"])
    rows = {}
    for row, mapping in entry["rows"].items():
        if mapping is None:
            continue
        rows.setdefault(ref_key(mapping, "column"), row)  # the tables sheet's best_of is per column by default
    columns = {}
    for column, target in (entry.get("columns") or {}).items():
        if isinstance(target, str):
            columns.setdefault(target, column)
            if entry["source"] == "tagging" and "." not in target:
                columns.setdefault(f"{target}.test", column)
    return PaperNumbers(table, rows, columns)


def evaluate_comparison(comp: Comparison, claim: dict, results: Results, settings: dict, paper: PaperNumbers | None):
    scale, tol, level = settings["scale"], settings["tol"], settings["level"]
    source, protocol = claim.get("source", "intrinsic"), claim.get("protocol")
    record = {"comparison": comp.text, "metric": _metric_text(comp.metric), "relation": comp.relation, "tol": tol}
    # ours
    series, chosen, missing = [], [], []
    for ref, weight in comp.terms:
        emb = resolve_ref(ref, results, claim, scale)
        if emb is None:
            missing.append(f"no result matches {ref_label(ref)}")
            continue
        if isinstance(ref, dict):
            chosen.append(f"{ref_label(ref)}: {emb}")
        s = metric_series(results, emb, comp.metric, source, protocol, scale)
        if not s.values:
            missing.append(s.reason)
        series.append((s, weight))
    record["chosen"] = "; ".join(chosen) or None
    random = any(s.random for s, _ in series)
    if missing:
        record.update(n=0, mean=None, low=None, high=None, verdict="undecided",
                      reason="no result: " + "; ".join(dict.fromkeys(missing)))
    else:
        seeded = [set(s.values) for s, _ in series if s.random]
        seeds = sorted(set.intersection(*seeded)) if seeded else [None]
        if not seeds:
            seeds = []
        diffs = []
        for seed in seeds:
            diffs.append(sum(w * (s.values[seed] if s.random else next(iter(s.values.values())))
                             for s, w in series))
        mean, low, high = t_interval(diffs, level) if diffs else (None, None, None)
        n = len(diffs) if random else 1
        record.update(n=n, seeds=[s for s in seeds if s is not None], mean=mean,
                      low=low if (n >= 2 or not random) else None, high=high if (n >= 2 or not random) else None)
        if random and n < settings["min_seeds"]:
            record.update(verdict="undecided", reason=f"too few seeds: {n} paired, {settings['min_seeds']} needed"
                          + (" (no common seed)" if not diffs else ""))
        else:
            verdict = decide(low, high, comp.relation, tol)
            record["verdict"] = verdict
            record["reason"] = _reason(verdict, comp.relation, tol, random)
    # the paper's printed numbers
    if paper is None:
        record.update(paper_value=None, paper_check="no printed numbers")
    else:
        total, notes = 0.0, []
        for ref, weight in comp.terms:
            value, note = paper.value(ref, comp.metric, scale)
            if value is None:
                notes.append(note)
            else:
                total += weight * value
        if notes:
            record.update(paper_value=None, paper_check="not printed: " + "; ".join(notes))
        else:
            ok = point_check(total, comp.relation, tol)
            record.update(paper_value=total, paper_check="supported" if ok else "NOT supported by the paper's table")
    return record


def _metric_text(metric) -> str:
    return metric if isinstance(metric, str) else "mean(" + ", ".join(metric["mean"]) + ")"


def _reason(verdict: str, relation: str, tol: float, random: bool) -> str:
    bound = {">": "0", ">=": f"−{tol:g}", "~": f"±{tol:g}"}[relation]
    what = "interval" if random else "exact difference (deterministic results)"
    if verdict == "holds":
        return f"{what} on the claimed side of {bound}"
    if verdict == "fails":
        return f"{what} on the other side of {bound}"
    return f"interval straddles {bound}"


def evaluate_claims(spec: dict, results: Results, tables: dict | None = None, root=".", selected=None) -> list[dict]:
    """One record per claim: its comparisons (ours, the paper's), verdict and reasons."""
    out = []
    for cid, claim in spec["claims"].items():
        if selected is not None and cid not in selected:
            continue
        settings = {k: claim.get(k, spec["defaults"][k]) for k in ("level", "min_seeds", "tol", "scale")}
        entry = (tables or {}).get(claim.get("table")) if claim.get("table") else None
        paper = paper_numbers(entry, root) if entry else None
        comps = [evaluate_comparison(c, claim, results, settings, paper) for c in comparisons(claim)]
        verdicts = [c["verdict"] for c in comps]
        verdict = "fails" if "fails" in verdicts else "holds" if all(v == "holds" for v in verdicts) else "undecided"
        reasons = list(dict.fromkeys(f"{c['comparison']}: {c['reason']}" for c in comps if c["verdict"] != "holds"))
        flagged = [c["comparison"] for c in comps if c["paper_check"].startswith("NOT")]
        out.append({"id": cid, "paper": claim["paper"], "where": claim["where"], "statement": claim["statement"],
                    "source": claim.get("source", "intrinsic"), "protocol": claim.get("protocol"),
                    "table": claim.get("table"), "note": claim.get("note"), "settings": settings,
                    "verdict": verdict, "reasons": reasons if verdict != "holds" else [],
                    "paper_flag": ("the paper's table does not support: " + "; ".join(flagged)) if flagged else None,
                    "comparisons": comps})
    return out


def counts(records: list[dict]) -> dict:
    """{paper: {holds, fails, undecided, flagged}} in the papers' order."""
    out = {}
    for paper in list(PAPERS) + sorted({r["paper"] for r in records} - set(PAPERS)):
        mine = [r for r in records if r["paper"] == paper]
        if mine:
            out[paper] = {v: sum(r["verdict"] == v for r in mine) for v in VERDICTS}
            out[paper]["flagged"] = sum(bool(r["paper_flag"]) for r in mine)
    return out


def counts_lines(summary: dict) -> list[str]:
    """One line per paper: 'SemGloVe (Gan et al.): 2 hold, 1 fails, 3 undecided'."""
    lines = []
    for paper, c in summary.items():
        text = f"{PAPERS.get(paper, paper)}: {c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided"
        if c.get("flagged"):
            text += f" ({c['flagged']} not supported by the paper's own table)"
        lines.append(text)
    return lines


# ------------------------------------------------------------------ output


def _num(value, digits=1) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def _ours(c: dict) -> str:
    if c.get("mean") is None:
        return "—"
    if c.get("low") is None:
        return f"{c['mean']:+.2f} (no interval)"
    if c["low"] == c["high"]:
        return f"{c['mean']:+.2f} (exact)"
    return f"{c['mean']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"


def to_rows(records: list[dict]) -> list[dict]:
    rows = []
    for r in records:
        for c in r["comparisons"]:
            rows.append({"claim": r["id"], "paper": r["paper"], "where": r["where"], "statement": r["statement"],
                         "claim_verdict": r["verdict"], "comparison": c["comparison"], "metric": c["metric"],
                         "protocol": r["protocol"] or r["source"], "tol": c["tol"],
                         "paper_value": c["paper_value"], "paper_check": c["paper_check"], "chosen": c["chosen"],
                         "ours_mean": c["mean"], "ours_low": c["low"], "ours_high": c["high"], "n_seeds": c["n"],
                         "seeds": " ".join(map(str, c.get("seeds") or [])), "verdict": c["verdict"],
                         "reason": c["reason"]})
    return rows


def to_markdown(records: list[dict], caption: str) -> str:
    lines = [f"**{caption}**", ""]
    for line in counts_lines(counts(records)):
        lines.append(f"- {line}")
    lines.append("")
    for paper in counts(records):
        lines += [f"### {PAPERS.get(paper, paper)}", "",
                  "| claim | where | statement | verdict | comparison (points) | paper | ours: mean [95 % CI] | seeds | why |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in (x for x in records if x["paper"] == paper):
            for k, c in enumerate(r["comparisons"]):
                head = [r["id"], r["where"], r["statement"] + (f" ({r['note']})" if r.get("note") else ""),
                        f"**{r['verdict']}**" + (" ⚑" if r["paper_flag"] else "")] if k == 0 else ["", "", "", ""]
                paper_text = _num(c["paper_value"], 2) if c["paper_value"] is not None else "—"
                if c["paper_check"].startswith("NOT"):
                    paper_text += " ⚑ not supported"
                comp = c["comparison"] + (f" ({c['chosen']})" if c.get("chosen") else "") + \
                    (f", tol {c['tol']:g}" if c["relation"] in ("~", ">=") else "")
                cells = head + [comp, paper_text, _ours(c), str(c["n"]), f"{c['verdict']}: {c['reason']}"]
                lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
        lines.append("")
    lines += ["Differences in points (×100) of left − right, per seed paired; 95 % t interval over the paired seeds. "
              "holds: the interval is on the claimed side; fails: on the other; undecided: it straddles the bound, "
              "or fewer seeds than the claim needs. ⚑: the paper's own printed numbers do not support the comparison.",
              ""]
    return "\n".join(lines)


def to_html_block(summary: dict) -> str:
    import html

    items = "".join(f"<li>{html.escape(line)}</li>" for line in counts_lines(summary))
    return f"<p><b>The papers' claims on this run</b> (tables/claims.md):</p><ul>{items}</ul>"


def write_claims(records: list[dict], caption: str, md_path, csv_path, json_path) -> None:
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
        fh.write(to_markdown(records, caption))
    write_json(json_path, {"caption": caption, "counts": counts(records),
                           "verdicts": {r["id"]: r["verdict"] for r in records}, "claims": records})


# ------------------------------------------------------------------ CLI


def parse_results(items) -> tuple[dict, dict, dict]:
    """``PROTOCOL/ID/SEED=FILE`` (intrinsic), ``tagging/ID=FILE``, ``classification/ID=FILE``."""
    from staticvec.report.tables import load_result

    intrinsic, tagging, classification = {}, {}, {}
    for item in items or []:
        key, sep, path = item.partition("=")
        parts = key.split("/")
        if not sep or not path or not all(parts):
            raise StaticvecError(f"expected PROTOCOL/ID/SEED=FILE, tagging/ID=FILE or classification/ID=FILE, got {item!r}")
        if parts[0] in ("tagging", "classification") and len(parts) == 2:
            (tagging if parts[0] == "tagging" else classification)[parts[1]] = load_result(path)
        elif len(parts) == 3 and parts[2].isdigit():
            intrinsic.setdefault((parts[0], parts[1]), {})[int(parts[2])] = load_result(path)
        else:
            raise StaticvecError(f"expected PROTOCOL/ID/SEED=FILE, tagging/ID=FILE or classification/ID=FILE, got {item!r}")
    return intrinsic, tagging, classification


def caption(manifest: dict) -> str:
    made = manifest.get("provenance_caption")
    return ("The papers' claims, decided from this run's results (config/claims.yaml)" +
            (f". Made with: {made}." if made else "."))


def claims_from_files(spec: str, results: tuple[dict, dict, dict], out_md: str, out_csv: str, out_json: str,
                      tables: str | None = "config/tables.yaml", random: list | None = None,
                      contextual_id: str | None = None, selected: list | None = None, manifest: str | None = None,
                      root: str = ".") -> list[dict]:
    """Decide the claims of the sheet ``spec`` on ``results`` (:func:`parse_results`' three dicts) and
    write them; ``random``: the embedding ids whose intrinsic results depend on the seed; ``selected``:
    the claim ids to decide (default all); what ``staticvec report claims`` does."""
    from staticvec.files import read_json
    from staticvec.report.tables import load_tables_spec

    sheet_tables = load_tables_spec(tables, root)["tables"] if tables else None
    sheet = load_claims_spec(spec, tables=sheet_tables)
    intrinsic, tagging, classification = results
    loaded = Results(intrinsic, tagging, classification, list(random or []), contextual_id)
    records = evaluate_claims(sheet, loaded, sheet_tables, root, selected)
    write_claims(records, caption(read_json(manifest) if manifest else {}), out_md, out_csv, out_json)
    return records
