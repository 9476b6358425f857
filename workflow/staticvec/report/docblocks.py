"""The numbers the README, docs/ and the reference runs' READMEs quote, generated from the committed files they
come from, so that prose cannot drift from the results.

A generated passage sits between two HTML comments (invisible on GitHub), inline or over several lines::

    <!-- generated: verdicts-table -->
    | paper | ... |
    <!-- /generated -->

``staticvec report docs FILE...`` rewrites every such passage from its source (``--check``: writes nothing, exits
1 naming each stale passage; ``tests/test_docs.py`` runs it on every document). Each block's generator reads only
committed files (the reference runs' manifests, claims, tables and segments; the resource registry), so the
check needs no run and no network. A passage's name says what it is; an unknown name is an error naming the file.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from pathlib import Path

from staticvec.errors import InputFileError

BLOCK = re.compile(r"<!-- generated: (?P<name>[\w-]+) -->(?P<body>.*?)<!-- /generated -->", re.S)

TOUR = "results/reference/tour-1m"
CLAIMS = "results/reference/claims-10m"
VERDICTS_CSV = "results/reference/verdicts-1m-10m.csv"
CORPUS_SCALE = f"{CLAIMS}/tables/scale/corpus_scale.csv"

PAPERS = (  # the claims sheet's groups, in the order the tables print them
    ("semglove", "SemGloVe (Gan et al.)"),
    ("wang", "BERT+Skip-gram (Wang et al.)"),
    ("c2v", "Context-to-Vec (Zheng et al.)"),
    ("x2static", "X2Static (Gupta & Jaggi)"),
    ("beyond", "beyond the papers: each proposed method against Model2Vec and Tokenlearn"),
)
VERDICT_KEYS = ("holds", "fails", "undecided", "not_tested")


def _json(root: Path, rel: str) -> dict:
    path = root / rel
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputFileError(path, "not found: a generated passage of the docs reads it") from None


def _counts(root: Path, run: str) -> dict:
    return _json(root, f"{run}/tables/claims.json")["counts"]


def duration(seconds: float) -> str:
    """``1 h 12 min`` / ``50 min`` (rounded to the minute)."""
    minutes = int(round(seconds / 60))
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def _tally(counts: dict) -> str:
    return " / ".join(str(counts.get(k, 0)) for k in VERDICT_KEYS)


# ---------------------------------------------------------------- the blocks


def verdicts_table(root: Path) -> str:
    """Per paper: holds / fails / undecided / not tested at 10M (the claims scale) and at 1M (the tour)."""
    at10, at1 = _counts(root, CLAIMS), _counts(root, TOUR)
    lines = ["| paper | 10M tokens: holds / fails / undecided / not tested | 1M (the tour) |", "| --- | --- | --- |"]
    lines += [f"| {label} | {_tally(at10.get(key, {}))} | {_tally(at1.get(key, {}))} |" for key, label in PAPERS]
    return "\n" + "\n".join(lines) + "\n"


def claims_counts_table(root: Path) -> str:
    """The claims scale's counts, one column per verdict (results/reference/claims-10m/README.md)."""
    at10 = _counts(root, CLAIMS)
    lines = ["| paper | holds | fails | undecided | not tested |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {label} | " + " | ".join(str(at10.get(key, {}).get(k, 0)) for k in VERDICT_KEYS) + " |"
              for key, label in PAPERS]
    return "\n" + "\n".join(lines) + "\n"


def claims_total(root: Path) -> str:
    """``44 claims of the four papers and 8 beyond them``."""
    at10 = _counts(root, CLAIMS)
    papers = sum(sum(at10.get(key, {}).get(k, 0) for k in VERDICT_KEYS) for key, _ in PAPERS[:4])
    beyond = sum(at10.get("beyond", {}).get(k, 0) for k in VERDICT_KEYS)
    return f"{papers} claims of the four papers and {beyond} beyond them"


def tour_not_tested(root: Path) -> str:
    """``19 of 52``: the tour's claims (the papers' and those beyond them) read "not tested"."""
    at1 = _counts(root, TOUR)
    total = sum(sum(c.get(k, 0) for k in VERDICT_KEYS) for c in at1.values())
    not_tested = sum(c.get("not_tested", 0) for c in at1.values())
    return f"{not_tested} of {total}"


def verdicts_moved(root: Path) -> str:
    """How the verdicts moved from 1M to 10M, from results/reference/verdicts-1m-10m.csv (one row per comparison)."""
    path = root / VERDICTS_CSV
    if not path.is_file():
        raise InputFileError(path, "not found: a generated passage of the docs reads it")
    moved: dict[str, str] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(line for line in fh if not line.startswith("#")):
            moved.setdefault(row["claim"], row["moved"])
    tally: dict[str, int] = {}
    for how in moved.values():
        tally[how] = tally.get(how, 0) + 1
    total = len(moved)
    n_moved = tally.get("toward fails", 0) + tally.get("toward holds", 0)
    return (f"{n_moved} of {total} verdicts moved ({tally.get('toward fails', 0)} toward fails, "
            f"{tally.get('toward holds', 0)} toward holds), {tally.get('now tested', 0)} are tested at 10M only, "
            f"{tally.get('same', 0)} are the same")


def tour_time(root: Path) -> str:
    """The tour's measured time: its jobs' span and job time, on the machine its manifest records."""
    t = _json(root, f"{TOUR}/manifest.json")["timings"]
    m = t.get("machine", {})
    return (f"{duration(t['run_wall_s'])} from its first job to its last ({duration(t['work_s'])} of job time, "
            f"{t['jobs']} jobs, on {m.get('cores', '?')} cores of an {m.get('cpu', '?')} VM)")


TOUR_RUNS = (TOUR, "benchmarks/results/tour-1m-2026-11-26", "benchmarks/results/tour-1m-2026-11-27")


def tour_hosts(root: Path) -> str:
    """The committed tours on their hosts: date, commit, CPU, teacher precision, jobs, job time, first-to-last span."""
    lines = ["| run | date | commit | CPU | teacher | jobs | job time | first job to last |",
             "| --- | --- | --- | --- | --- | ---: | ---: | ---: |"]
    for run in TOUR_RUNS:
        m = _json(root, f"{run}/manifest.json")
        t = m["timings"]
        cpu = (t.get("machine") or {}).get("cpu", "AMD EPYC (not recorded)")
        dtype = (m.get("teacher_dtype") or {}).get("dtype", "?")
        lines.append(f"| `{run}/` | {m['date'][:10]} | {m['git_commit'][:7]} | {cpu} | {dtype} | {t['jobs']} | "
                     f"{duration(t['work_s'])} | {duration(t['run_wall_s'])} |")
    return "\n" + "\n".join(lines) + "\n"


def tour_peak_memory(root: Path) -> str:
    """The largest peak RSS of a job in the committed tour, and which stage's job it was."""
    stages = _json(root, f"{TOUR}/manifest.json")["timings"]["stages"]
    stage, top = max(stages.items(), key=lambda kv: kv[1]["max_rss_mb"])
    return f"{top['max_rss_mb'] / 1000:.1f} GB (a {stage} job)"


def claims_time(root: Path) -> str:
    """The claims run's measured time: sittings, their wall time, the job time and its ratio to the tour's."""
    t = _json(root, f"{CLAIMS}/manifest.json")["timings"]
    segments = t.get("segments", [])
    wall = sum(float(s["wall_s"]) for s in segments)
    tour = t.get("compared", {}).get("tour", {}).get("work_s") or _json(root, f"{TOUR}/manifest.json")["timings"]["work_s"]
    return (f"{len(segments)} sittings, {duration(wall)} of wall time, {duration(t['work_s'])} of job time "
            f"({t['work_s'] / tour:.2f}x the tour's on the same VM)")


def _scale_rows(root: Path) -> list[dict]:
    path = root / CORPUS_SCALE
    if not path.is_file():
        raise InputFileError(path, "not found: a generated passage of the docs reads it")
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def corpus_scale_crossings(root: Path) -> str:
    """Which corpus-trained method reaches Model2Vec within the measured range, on which panel, at what size, and
    its score at the largest size against the level (results/reference/claims-10m/tables/scale/corpus_scale.csv)."""
    rows = _scale_rows(root)
    reached = [r for r in rows if r["kind"].startswith("reaches") and r["reach_status"] == "reaches"]
    panels = list(dict.fromkeys(r["panel"] for r in rows))
    if not reached:
        return f"no corpus-trained method reaches Model2Vec on any of the {len(panels)} panels within the measured range"
    labels = _yaml(root, "config/figures.yaml").get("labels", {})
    parts = []
    for r in reached:
        level_id = r["kind"].removeprefix("reaches ")
        curve = [c for c in rows if c["panel"] == r["panel"] and c["row"] == r["row"] and c["kind"] == "curve"]
        top = max(curve, key=lambda c: float(c["tokens"]))
        level = next(c for c in rows if c["panel"] == r["panel"] and c["kind"] == "level" and c["row"] == level_id)
        parts.append(f"{labels.get(r['row'], r['row'])} on {r['panel']} from {float(r['tokens']) / 1e6:.1f}M tokens "
                     f"({float(top['score']):.1f} at {float(top['tokens']) / 1e6:.0f}M against {float(level['score']):.1f})")
    return (f"one method reaching Model2Vec in the {len(panels)} panels: " if len(reached) == 1 else
            f"{len(reached)} curves reaching Model2Vec in the {len(panels)} panels: ") + "; ".join(parts)


def skipgram_ws353(root: Path) -> str:
    """Skip-gram's WS353 at 1M (the tour's summary) and 10M (the claims run's curve) against its paper's number."""
    rows = _scale_rows(root)
    curve = [r for r in rows if r["panel"] == "WS353 (web)" and r["row"] == "sg" and r["kind"] == "curve"]
    top = max(curve, key=lambda r: float(r["tokens"]))
    paper = next(r for r in rows if r["panel"] == "WS353 (web)" and r["row"] == "sg" and r["kind"] == "paper")
    tour = _summary_score(root, TOUR, "sg", "ws353")
    return (f"{tour} at 1M tokens (the tour, seed mean), {float(top['score']):.1f} at "
            f"{float(top['tokens']) / 1e6:.0f}M (seed 1), {float(paper['score']):.1f} in its paper at 1.1B")


def _summary_score(root: Path, run: str, embedding: str, metric: str, protocol: str = "web") -> str:
    """A seed mean of a run's summary (tables/summary.csv: one row per protocol, embedding and column), as the
    summary prints it (one decimal)."""
    path = root / run / "tables" / "summary.csv"
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(line for line in fh if not line.startswith("#")):
            if (row["protocol"], row["embedding"], row["column"]) == (protocol, embedding, metric):
                return f"{float(row['mean']):.1f}"
    raise InputFileError(path, f"no {protocol} row for {embedding} on {metric}")


def default_downloads(root: Path) -> str:
    """What the default config reads from the resource registry: per group, the files, where from, and how checked."""
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow
    from staticvec.resources import Registry

    config = load_config([root / "config/config.yaml"])
    workflow = Workflow(config, root)
    registry = Registry.load(root / config["resources"]["registry"], root)
    corpus = [i.member for i in workflow.corpus_inputs() if i.member is not None]
    groups = [(corpus[0].group, corpus)] if corpus else []
    groups += [(gid, registry.select(gid)) for gid in workflow.input_groups()]
    lines = ["| resource group | files | from | checked against |", "| --- | ---: | --- | --- |"]
    for gid, members in groups:
        hosts = sorted({re.sub(r"^https?://([^/]+)/.*$", r"\1", u) for m in members for u in m.urls[:1]})
        manual = sum(1 for m in members if not m.urls)
        where = ", ".join(hosts) + (f"; {manual} by hand (see the message)" if manual and hosts else "")
        where = where or "by hand only (the start-up check says how)"
        check = "sha256 of the uncompressed content" if members[0].checksum_of == "content" else "sha256 of the file"
        lines.append(f"| `{gid}` | {len(members)} | {where} | {check} |")
    return "\n" + "\n".join(lines) + "\n"


BLOCKS: dict[str, Callable[[Path], str]] = {
    "verdicts-table": verdicts_table,
    "claims-counts-table": claims_counts_table,
    "claims-total": claims_total,
    "tour-not-tested": tour_not_tested,
    "verdicts-moved": verdicts_moved,
    "tour-time": tour_time,
    "claims-time": claims_time,
    "tour-peak-memory": tour_peak_memory,
    "tour-hosts": tour_hosts,
    "corpus-scale-crossings": corpus_scale_crossings,
    "skipgram-ws353": skipgram_ws353,
    "default-downloads": default_downloads,
}


# ---------------------------------------------------------------- rewriting and checking


def render(text: str, root: Path, source: str = "document") -> str:
    """``text`` with every generated passage rewritten from its source files."""
    cache: dict[str, str] = {}

    def body(match: re.Match) -> str:
        name = match.group("name")
        if name not in BLOCKS:
            raise InputFileError(source, f"unknown generated passage '{name}'; known: {', '.join(sorted(BLOCKS))}")
        if name not in cache:
            cache[name] = BLOCKS[name](Path(root))
        return f"<!-- generated: {name} -->{cache[name]}<!-- /generated -->"

    return BLOCK.sub(body, text)


def stale_blocks(path: Path, root: Path) -> list[str]:
    """The names of ``path``'s generated passages whose text differs from what their sources give."""
    text = Path(path).read_text(encoding="utf-8")
    fresh = render(text, root, str(path))
    old = {m.start(): (m.group("name"), m.group(0)) for m in BLOCK.finditer(text)}
    new = [m.group(0) for m in BLOCK.finditer(fresh)]
    return [name for (name, was), now in zip(old.values(), new) if was != now]


def repository_of(path: Path) -> Path:
    """The repository holding a document (the nearest directory above it with a Snakefile), links resolved."""
    for folder in Path(path).resolve().parents:
        if (folder / "Snakefile").is_file():
            return folder
    raise InputFileError(path, "not inside the workflow's repository (no Snakefile above it): give --root")


def update(paths, root: Path | None = None, check: bool = False) -> list[str]:
    """Rewrite (or, with ``check``, only list) the stale passages of ``paths``: ``["FILE: name", ...]``; ``root``:
    the repository whose files they quote (default: the one holding each document)."""
    stale = []
    for path in map(Path, paths):
        root_of = root or repository_of(path)
        names = stale_blocks(path, root_of)
        stale += [f"{path}: {name}" for name in names]
        if names and not check:
            from staticvec.files import atomic_path

            fresh = render(path.read_text(encoding="utf-8"), root_of, str(path))
            with atomic_path(path) as tmp:
                Path(tmp).write_text(fresh, encoding="utf-8")
    return stale


# ---------------------------------------------------------------- the plans (slow: each runs the planning layer)

PLANS = {"default": ("config/config.yaml",), "paper": ("config/config.yaml", "config/paper.yaml")}
SLOW = {"plan-default-totals", "plan-paper-totals", "plan-paper-routing", "plan-paper-gpu-rules"}
_PLAN_CACHE: dict[tuple[str, str], dict] = {}


def plan_of(root: Path, which: str) -> dict:
    """``staticvec plan costs --stand-ins --json`` of a config (what ``make plan`` prints), run once per process."""
    import os
    import subprocess
    import sys
    import tempfile

    key = (str(Path(root).resolve()), which)
    if key not in _PLAN_CACHE:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "plan.json"
            env = {**os.environ, "PYTHONPATH": str(Path(root).resolve() / "workflow"), "HF_HUB_OFFLINE": "1"}
            done = subprocess.run([sys.executable, "-m", "staticvec", "plan", "costs", "--configfile", *PLANS[which],
                                   "--stand-ins", "--json", str(out)], cwd=root, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise InputFileError(PLANS[which][-1], f"`staticvec plan costs` failed:\n{done.stderr[-2000:]}")
            _PLAN_CACHE[key] = json.loads(out.read_text())
    return _PLAN_CACHE[key]


def _plan_totals(t: dict, schedule: bool = True) -> str:
    gpu = f"; {t['gpu_hours']:,.1f} GPU-hours in {t['gpu_jobs']} GPU jobs" if t["gpu_jobs"] else ""
    hours = f", a schedule of {t['peak_disk']['makespan_hours']:,.1f} hours" if schedule else ""
    return (f"{t['jobs']:,} jobs, {t['cpu_hours']:,.0f} CPU core-hours{gpu}, peak disk {t['peak_disk_gb']:,.0f} GB "
            f"(kept outputs {t['kept_disk_gb']:,.0f} GB), largest memory request {t['largest_mem_mb'] / 1000:.1f} GB "
            f"({t['largest_mem_job'].split()[0]}){hours}")


def plan_default_totals(root: Path) -> str:
    """The default's plan (its schedule, every job at once on unlimited cores, says nothing of a laptop: left out)."""
    return _plan_totals(plan_of(root, "default")["totals"], schedule=False)


def plan_paper_totals(root: Path) -> str:
    return _plan_totals(plan_of(root, "paper")["totals"])


def plan_paper_routing(root: Path) -> str:
    """Each rule with a CUDA path, costed on GPUs and on CPU nodes (the paper config's plan)."""
    lines = ["| rule | jobs | routed to | on GPUs: GPU-hours | on CPU nodes: core-hours | GPU cheaper below (core-h per GPU-h) |",
             "| --- | ---: | --- | ---: | ---: | ---: |"]
    for r in plan_of(root, "paper")["routing"]:
        below = "never" if r["break_even"] is None or r["break_even"] <= 0 else f"{r['break_even']:,.0f}"
        lines.append(f"| `{r['rule']}` | {r['jobs']} | {r['routed']} | {r['gpu_hours']:,.1f} | {r['cpu_core_hours']:,.0f} "
                     f"| {below} |")
    return "\n" + "\n".join(lines) + "\n"


def plan_paper_gpu_rules(root: Path) -> str:
    """The GPU-hours of each rule the paper config runs on GPUs, and what its model counts."""
    lines = ["| rule | GPU jobs | GPU-hours | CPU core-hours of their cores |", "| --- | ---: | ---: | ---: |"]
    for r in sorted(plan_of(root, "paper")["rules"], key=lambda r: (-(r.get("gpu_h") or 0), r["rule"])):
        if r.get("gpu_h"):  # (the model's `basis` text names one job of the rule, not all: left out)
            lines.append(f"| `{r['rule']}` | {r['jobs']} | {r['gpu_h']:,.1f} | {r['cpu_h']:,.0f} |")
    return "\n" + "\n".join(lines) + "\n"


def verdicts_moved_list(root: Path) -> str:
    """The claims whose verdict moved from 1M to 10M, by direction (results/reference/verdicts-1m-10m.csv)."""
    path = root / VERDICTS_CSV
    moved: dict[str, str] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(line for line in fh if not line.startswith("#")):
            moved.setdefault(row["claim"], row["moved"])
    parts = []
    for how in ("toward fails", "toward holds"):
        ids = [f"`{c}`" for c, m in moved.items() if m == how]
        if ids:
            parts.append(f"{how}: {', '.join(ids)}")
    return "; ".join(parts) or "none moved"


BLOCKS.update({"plan-default-totals": plan_default_totals, "plan-paper-totals": plan_paper_totals,
               "plan-paper-routing": plan_paper_routing, "plan-paper-gpu-rules": plan_paper_gpu_rules,
               "verdicts-moved-list": verdicts_moved_list})


# ---------------------------------------------------------------- every paper table and figure


def _paper_outputs(root: Path) -> list[tuple[str, str, str]]:
    """(sheet id, title, path under a run's results) of every table of config/tables.yaml and every figure of
    config/figures.yaml, in sheet order (the workflow's naming: <paper>_<name> -> tables|figures/<paper>/<name>)."""
    import yaml

    out = []
    tables = yaml.safe_load((root / "config/tables.yaml").read_text(encoding="utf-8"))["tables"]
    for tid, entry in tables.items():
        paper, _, number = tid.partition("_")
        title = ""
        paper_file = root / entry.get("paper_file", "")
        if paper_file.is_file():
            for line in paper_file.read_text(encoding="utf-8").splitlines():
                if line.startswith("# title:"):
                    title = line.removeprefix("# title:").strip()
                    break
        out.append((tid, title, f"tables/{paper}/{number}.md"))
    figures = yaml.safe_load((root / "config/figures.yaml").read_text(encoding="utf-8"))["figures"]
    for fid, entry in figures.items():
        paper, _, name = fid.partition("_")
        out.append((fid, entry.get("title", ""), f"figures/{paper}/{name}.pdf"))
    return out


def paper_map(root: Path) -> str:
    """Every paper table and figure: its file in the committed tour (1M) and claims run (10M), and its target."""
    lines = ["| sheet id | what | 1M (the tour) | 10M (the claims scale) | target (`make target T=...`) |",
             "| --- | --- | --- | --- | --- |"]
    for sid, title, rel in _paper_outputs(root):
        cells = []
        for run in (TOUR, CLAIMS):
            cells.append(f"[{rel}](../{run}/{rel})" if (root / run / rel).is_file() else "not in this run")
        lines.append(f"| `{sid}` | {title.replace('|', '/')} | {cells[0]} | {cells[1]} | `results/default/{rel}` |")
    return "\n" + "\n".join(lines) + "\n"


BLOCKS["paper-map"] = paper_map


# ---------------------------------------------------------------- the config (config/README.md)


def _yaml(root: Path, rel: str) -> dict:
    import yaml

    return yaml.safe_load((root / rel).read_text(encoding="utf-8")) or {}


def _short(value, width: int = 70) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = text.replace("|", "/").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _leaves(tree: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_leaves(value, path + "."))
        else:
            out[path] = value
    return out


def _lookup(tree: dict, dotted: str):
    node = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return "(not set)"
        node = node[part]
    return node


def config_keys(root: Path) -> str:
    """Every top-level key of config/config.yaml, in its order, with its schema's description."""
    from staticvec.config import config_schema

    properties = config_schema().get("properties", {})
    lines = ["| key | what it sets (its schema's description) | default |", "| --- | --- | --- |"]
    for key, value in _yaml(root, "config/config.yaml").items():
        described = " ".join(str(properties.get(key, {}).get("description", "")).split())
        default = "(a section)" if isinstance(value, dict) else f"`{_short(value, 40)}`"
        lines.append(f"| `{key}` | {described.replace('|', '/') or '—'} | {default} |")
    return "\n" + "\n".join(lines) + "\n"


def _overlay(root: Path, rel: str) -> str:
    """Every value an overlay sets, beside the default's (config/config.yaml)."""
    default = _yaml(root, "config/config.yaml")
    lines = ["| key | default (`config/config.yaml`) | this overlay |", "| --- | --- | --- |"]
    for key, value in _leaves(_yaml(root, rel)).items():
        lines.append(f"| `{key}` | `{_short(_lookup(default, key))}` | `{_short(value)}` |")
    return "\n" + "\n".join(lines) + "\n"


BLOCKS.update({
    "config-keys": config_keys,
    "overlay-paper": lambda root: _overlay(root, "config/paper.yaml"),
    "overlay-claims10m": lambda root: _overlay(root, "config/claims10m.yaml"),
    "overlay-own-corpus": lambda root: _overlay(root, "config/examples/own-corpus.yaml"),
})
