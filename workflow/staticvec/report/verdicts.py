"""Each claim's verdict in two runs side by side (the tour at 1M tokens and the claims scale at 10M): which
verdicts moved, and how far each comparison's paired difference moved.

Reads per claim its ``id`` and ``verdict``, and per comparison its text and the point estimate with its
interval (``mean``, ``low``, ``high``, in points): the comparisons are the alternatives of the claim's ``parts``
(the claims sheet's format since claims are decided part by part) or, in older files, its ``comparisons``; other
fields (tallies, groups, p-values) are ignored. A run is given as its results directory
(``<run>/tables/claims.json``, its size from ``<run>/manifest.json``) or as the claims JSON itself.

Command line::

    staticvec report verdicts --before results/reference/tour-1m --after results/reference/claims-10m \\
        --out-md results/reference/verdicts-1m-10m.md --out-csv results/reference/verdicts-1m-10m.csv
"""

from __future__ import annotations

from pathlib import Path

from staticvec.errors import InputFileError

ORDER = {"fails": 0, "undecided": 1, "holds": 2}
# how a verdict may change without moving: against "not tested" (too few seeds or no result) it has no direction
UNMOVED = ("same", "now tested", "no longer tested")


def load_run(path) -> dict:
    """{"label", "path", "claims": {id: {"verdict", "paper", "statement", "comparisons": [{text, mean, low, high}]}}}
    of a results directory or a claims JSON (its tokens, when the run manifest beside it says, in the label)."""
    from staticvec.files import read_json

    path = Path(path)
    claims_file = path / "tables" / "claims.json" if path.is_dir() else path
    if not claims_file.is_file():
        raise InputFileError(claims_file, "no claims JSON here (tables/claims.json of a finished run)")
    data = read_json(claims_file)
    records = data.get("claims")
    if records is None and isinstance(data.get("verdicts"), dict):  # the verdicts alone (a run manifest's `claims`)
        records = [{"id": k, "verdict": v} for k, v in data["verdicts"].items()]
    if not isinstance(records, list) or not all(isinstance(r, dict) and "id" in r and "verdict" in r for r in records):
        raise InputFileError(claims_file, "expected 'claims': a list of records with 'id' and 'verdict'")
    claims = {}
    for r in records:
        comps = [{"text": c.get("comparison", ""), "mean": c.get("mean"), "low": c.get("low"), "high": c.get("high")}
                 for c in _comparisons(r)]
        claims[r["id"]] = {"verdict": r["verdict"], "paper": r.get("paper"), "statement": r.get("statement"),
                           "comparisons": comps}
    manifest = (claims_file.parent.parent / "manifest.json") if claims_file.parent.name == "tables" else None
    tokens = read_json(manifest).get("tokens") if manifest is not None and manifest.is_file() else None
    return {"path": str(claims_file), "tokens": tokens, "claims": claims}


def _comparisons(record: dict) -> list[dict]:
    """A claim's comparisons: each alternative of each of its parts, or the flat list of older files."""
    parts = record.get("parts")
    if isinstance(parts, list):
        return [a for part in parts if isinstance(part, dict) for a in part.get("alternatives") or []
                if isinstance(a, dict)]
    return [c for c in record.get("comparisons") or [] if isinstance(c, dict)]


def size_label(run: dict, default: str) -> str:
    tokens = run.get("tokens")
    if not isinstance(tokens, (int, float)):
        return default
    return f"{tokens / 1e9:.2g}B" if tokens >= 1e9 else f"{tokens / 1e6:.3g}M" if tokens >= 1e6 else f"{tokens:,}"


def movement(before: str | None, after: str | None) -> str:
    """How a verdict moved: ``same``, ``new`` / ``gone`` (a claim in one run only), ``now tested`` / ``no longer
    tested`` (one run had too few seeds or no result: no direction to read), or the direction on the order
    fails < undecided < holds (``toward holds`` / ``toward fails``)."""
    if before is None:
        return "new"
    if after is None:
        return "gone"
    if before == after:
        return "same"
    if before == "not tested" and after in ORDER:
        return "now tested"
    if after == "not tested" and before in ORDER:
        return "no longer tested"
    if before not in ORDER or after not in ORDER:
        return "changed"
    return "toward holds" if ORDER[after] > ORDER[before] else "toward fails"


def compare(before: dict, after: dict) -> list[dict]:
    """One record per claim (the later run's order, then claims only the earlier run has): both verdicts, how
    the verdict moved, and per comparison both estimates and the shift of the point estimate (after − before)."""
    ids = list(after["claims"]) + [c for c in before["claims"] if c not in after["claims"]]
    rows = []
    for cid in ids:
        b, a = before["claims"].get(cid), after["claims"].get(cid)
        texts = list(dict.fromkeys([c["text"] for c in (a or {}).get("comparisons", [])]
                                   + [c["text"] for c in (b or {}).get("comparisons", [])]))
        comps = []
        for text in texts:
            cb = next((c for c in (b or {}).get("comparisons", []) if c["text"] == text), None)
            ca = next((c for c in (a or {}).get("comparisons", []) if c["text"] == text), None)
            shift = ca["mean"] - cb["mean"] if ca and cb and ca["mean"] is not None and cb["mean"] is not None else None
            comps.append({"comparison": text, "before": cb, "after": ca, "shift": shift})
        rows.append({"id": cid, "paper": (a or b).get("paper"), "statement": (a or b).get("statement"),
                     "before": b and b["verdict"], "after": a and a["verdict"],
                     "moved": movement(b and b["verdict"], a and a["verdict"]), "comparisons": comps})
    return rows


def _estimate(c: dict | None) -> str:
    if not c or c.get("mean") is None:
        return "—"
    if c.get("low") is None or c.get("high") is None:
        return f"{c['mean']:+.2f}"
    if c["low"] == c["high"]:
        return f"{c['mean']:+.2f} (exact)"
    return f"{c['mean']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"


def tally_moves(rows: list[dict]) -> tuple[list[dict], dict[str, int]]:
    """The rows whose verdict moved (not one of UNMOVED), and how many rows each movement has."""
    tally: dict[str, int] = {}
    for r in rows:
        tally[r["moved"]] = tally.get(r["moved"], 0) + 1
    return [r for r in rows if r["moved"] not in UNMOVED], tally


def to_markdown(rows: list[dict], before_label: str, after_label: str, sources: tuple[str, str]) -> str:
    from staticvec.report.markdown import table

    moved, tally = tally_moves(rows)
    lines = [f"**Each claim's verdict at {before_label} and at {after_label} tokens** ({sources[0]} and {sources[1]}). "
             "Differences in points (×100) of left − right, mean over the paired seeds [95 % interval]; shift: the "
             f"{after_label} mean minus the {before_label} mean.", "",
             f"{len(moved)} of {len(rows)} verdicts moved"
             + (": " + ", ".join(f"{n} {k}" for k, n in tally.items() if k not in UNMOVED) if moved else "")
             + f"; {tally.get('same', 0)} the same"
             + "".join(f"; {tally[k]} {k} (too few seeds or no result in one run)" for k in UNMOVED[1:] if tally.get(k))
             + ".", ""]
    body = []
    for r in rows:
        for k, c in enumerate(r["comparisons"] or [{"comparison": "", "before": None, "after": None, "shift": None}]):
            head = [r["id"], r["before"] or "—", r["after"] or "—", r["moved"]] if k == 0 else ["", "", "", ""]
            body.append(head + [c["comparison"], _estimate(c["before"]), _estimate(c["after"]),
                                "—" if c["shift"] is None else f"{c['shift']:+.2f}"])
    lines += table(["claim", f"verdict at {before_label}", f"verdict at {after_label}", "moved", "comparison",
                    f"{before_label}: mean [95 % CI]", f"{after_label}: mean [95 % CI]", "shift"], body,
                   align=["l", "l", "l", "l", "l", "r", "r", "r"])
    return "\n".join(lines) + "\n"


def verdicts_from_files(before, after, out_md, out_csv=None, before_label: str | None = None,
                        after_label: str | None = None) -> list[dict]:
    """What ``staticvec report verdicts`` does: the side-by-side table of two runs' claims."""
    import csv

    from staticvec.files import atomic_open

    b, a = load_run(before), load_run(after)
    bl, al = before_label or size_label(b, "before"), after_label or size_label(a, "after")
    rows = compare(b, a)
    with atomic_open(out_md, "wt") as fh:
        fh.write(to_markdown(rows, bl, al, (b["path"], a["path"])))
    if out_csv:
        with atomic_open(out_csv, "wt") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["claim", "paper", f"verdict_{bl}", f"verdict_{al}", "moved", "comparison",
                             f"mean_{bl}", f"low_{bl}", f"high_{bl}", f"mean_{al}", f"low_{al}", f"high_{al}", "shift"])
            for r in rows:
                for c in r["comparisons"] or [{"comparison": "", "before": None, "after": None, "shift": None}]:
                    cb, ca = c["before"] or {}, c["after"] or {}
                    writer.writerow([r["id"], r["paper"] or "", r["before"] or "", r["after"] or "", r["moved"],
                                     c["comparison"], *("" if x is None else x for x in (
                                         cb.get("mean"), cb.get("low"), cb.get("high"), ca.get("mean"), ca.get("low"),
                                         ca.get("high"), c["shift"]))])
    return rows
