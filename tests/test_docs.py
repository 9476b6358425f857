"""Documentation that cannot drift from the repository.

- every generated passage (``<!-- generated: NAME -->``) of the README, docs/, config/README.md and the reference
  runs' READMEs is what ``staticvec report docs`` writes from the committed files today (a changed verdict count,
  run time, headline score, plan total or config value makes it stale: rerun the command);
- every repository path those documents name (a code span or a link) exists, and every link's anchor is a heading
  of its target;
- the numbers quoted by hand that come from elsewhere are checked against their source (the download sizes against
  the offline mirror, where it is present);
- the catalog files agree with pyproject.toml and with each other (licence, one Snakemake floor, requires-python).

Fixing a stale passage: ``.venv/bin/staticvec report docs README.md docs/*.md config/README.md
results/reference/README.md results/reference/*/README.md``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from staticvec.report.docblocks import BLOCK, BLOCKS, SLOW, render, stale_blocks

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

DOCS = sorted([REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "config/README.md", *(REPO / "docs").glob("*.md")])
REFERENCE_READMES = sorted([REPO / "results/reference/README.md", *(REPO / "results/reference").glob("*/README.md")])
GENERATED = DOCS + REFERENCE_READMES
PENDING: set[str] = set()  # docs linked before they are committed (none now; a doc another change adds goes here meanwhile)

TOP_LEVEL = {p.split("/")[0] for p in subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                                                     check=True).stdout.split()} | {"docs", "LICENSE", "CITATION.cff"}


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


# ---------------------------------------------------------------- generated passages


def _names(path: Path) -> set[str]:
    return {m.group("name") for m in BLOCK.finditer(path.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("path", GENERATED, ids=_rel)
def test_every_generated_passage_is_current(path):
    names = _names(path) - SLOW
    if not names:
        pytest.skip("no generated passage (or only the plan's: see the slow test)")
    text = path.read_text(encoding="utf-8")
    fast = BLOCK.sub(lambda m: m.group(0) if m.group("name") not in SLOW else "", text)
    stale = [m.group("name") for m, n in zip(BLOCK.finditer(fast), BLOCK.finditer(render(fast, REPO, str(path))))
             if m.group(0) != n.group(0)]
    assert not stale, (f"{_rel(path)}: generated passages out of date with the committed files: {stale}; run "
                       f"`staticvec report docs {_rel(path)}`")


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in GENERATED if _names(p) & SLOW], ids=_rel)
def test_every_plan_passage_is_what_make_plan_gives(path):
    stale = [n for n in stale_blocks(path, REPO) if n in SLOW]
    assert not stale, f"{_rel(path)}: {stale} differ from `make plan` today; run `staticvec report docs {_rel(path)}`"


def test_the_docs_name_known_passages_and_the_readme_leads_with_generated_numbers():
    for path in GENERATED:
        unknown = _names(path) - set(BLOCKS)
        assert not unknown, f"{_rel(path)}: unknown generated passages {unknown}"
    assert {"verdicts-table", "corpus-scale-crossings", "tour-time", "claims-time", "plan-default-totals"} <= _names(
        REPO / "README.md")


def test_a_changed_number_makes_its_passage_stale(tmp_path):
    """The check is not vacuous: a verdict count edited by hand in a copy of the README is caught."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    broken = text.replace("| SemGloVe (Gan et al.) | 3 / 10 / 3 / 0 |", "| SemGloVe (Gan et al.) | 4 / 9 / 3 / 0 |", 1)
    assert broken != text, "the README's verdict table changed: update this test's row"
    copy = tmp_path / "README.md"
    copy.write_text(broken, encoding="utf-8")
    assert stale_blocks(copy, REPO) == ["verdicts-table"]
    assert render(broken, REPO) == render(text, REPO)  # regenerating restores it


# ---------------------------------------------------------------- paths


SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _ignored(rel: str) -> bool:
    return any(subprocess.run(["git", "check-ignore", "-q", p], cwd=REPO).returncode == 0
               for p in (rel.rstrip("/"), rel.rstrip("/") + "/"))


def _candidate(span: str) -> str | None:
    """The repository path a code span names, or None (a command, a module, an output of a run, a placeholder)."""
    word = span.strip().rstrip(".,;:")
    word = re.sub(r":\d+$", "", word)  # FILE:LINE
    if " " in word or "=" in word or word.startswith(("-", "http")) or any(c in word for c in "<>{}*$…"):
        return None
    first = word.split("/")[0]
    if first == "staticvec" and "/" in word:
        return word  # a package path must name its place in the repository (workflow/staticvec/...)
    if first not in TOP_LEVEL or (first == "results" and not word.startswith("results/reference")):
        return None  # a run's outputs (results/default/...) are not in the repository
    return word.split("#")[0].split("::")[0]


def _named_paths(path: Path) -> list[tuple[str, str]]:
    """(how it is named, path) of every repository path a document names."""
    text = path.read_text(encoding="utf-8")
    text_wo_blocks = re.sub(r"^\s*```.*?^\s*```$", "", text, flags=re.S | re.M)
    found = []
    for span in SPAN.findall(text_wo_blocks):
        rel = _candidate(span)
        if rel:
            found.append((f"`{span}`", rel))
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        file = target.split("#")[0]
        if file:
            found.append((f"({target})", str((path.parent / file).resolve().relative_to(REPO))))
    return found


def _broken_paths(path: Path) -> list[str]:
    broken = []
    for how, rel in _named_paths(path):
        if rel.startswith("staticvec/"):
            broken.append(f"{how}: write the repository path, workflow/{rel}")
            continue
        exists = (REPO / rel).exists() or (path.parent / rel).exists()
        if not exists and rel not in PENDING and not _ignored(rel):
            broken.append(f"{how}: {rel} does not exist")
    return broken


@pytest.mark.parametrize("path", DOCS + REFERENCE_READMES, ids=_rel)
def test_every_path_a_document_names_exists(path):
    broken = _broken_paths(path)
    assert not broken, f"{_rel(path)}:\n  " + "\n  ".join(broken)


def test_a_broken_path_is_caught(tmp_path):
    (tmp_path / "x.md").write_text("See `config/no-such-sheet.yaml`, `staticvec/cli.py` and [it](../no/such.md).\n")
    copy = REPO / "docs" / f".probe-{tmp_path.name}.md"
    copy.write_text((tmp_path / "x.md").read_text())
    try:
        broken = _broken_paths(copy)
    finally:
        copy.unlink()
    assert len(broken) == 3 and "config/no-such-sheet.yaml" in broken[0] and "workflow/staticvec/cli.py" in broken[1]


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@pytest.mark.parametrize("path", DOCS + REFERENCE_READMES, ids=_rel)
def test_every_link_anchor_is_a_heading_of_its_target(path):
    bad = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")) or "#" not in target:
            continue
        file, anchor = target.split("#", 1)
        doc = (path.parent / file).resolve() if file else path
        if _rel(doc) in PENDING or not doc.is_file():
            continue
        headings = {_slug(h) for h in re.findall(r"^#+ (.+)$", doc.read_text(encoding="utf-8"), flags=re.M)}
        if anchor not in headings:
            bad.append(target)
    assert not bad, f"{_rel(path)}: anchors that are no heading: {bad}"


def test_every_doc_is_reachable_from_the_readme():
    linked, todo, seen = set(), [REPO / "README.md"], set()
    while todo:
        doc = todo.pop()
        if doc in seen or not doc.is_file():
            continue
        seen.add(doc)
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            file = target.split("#")[0]
            if file.endswith(".md") and not file.startswith("http"):
                linked.add((doc.parent / file).resolve())
                todo.append((doc.parent / file).resolve())
    orphans = [_rel(p) for p in (REPO / "docs").glob("*.md") if p.resolve() not in linked]
    assert not orphans, f"docs no link from the README leads to: {orphans}"
    assert {REPO / p for p in PENDING} <= {p for p in linked}, "link the pending docs from the README or docs/"


# ---------------------------------------------------------------- the README's shape


def test_the_readme_is_short_and_its_first_screen_says_what_it_is_the_headline_and_the_commands():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, f"README.md has {len(lines)} lines; move detail to docs/"
    first_screen = "\n".join(lines[:45])
    assert "make run" in first_screen and "make test" in first_screen
    assert "<!-- generated: verdicts-table -->" in first_screen
    for paper in ("SemGloVe", "Dynamic Embeddings", "Context-to-Vector", "Static Word Embeddings"):
        assert paper in first_screen


# ---------------------------------------------------------------- numbers quoted from elsewhere


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"the offline mirror ({SHARED_DATA}) is not here")
def test_the_download_sizes_are_the_mirror_files_sizes():
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow
    from staticvec.files import open_any
    from staticvec.resources import find_in_mirror

    workflow = Workflow(load_config([REPO / "config/config.yaml"]), REPO)
    members = [i.member for i in workflow.corpus_inputs() if i.member is not None]
    for gid in workflow.input_groups():
        members += workflow.registry.select(gid)
    sizes: dict[str, int] = {}
    for m in members:
        source = find_in_mirror(m, SHARED_DATA)
        assert source is not None, m.rel_path
        with open_any(source, "rb") if m.checksum_of == "content" else open(source, "rb") as fh:
            sizes[m.group] = sizes.get(m.group, 0) + sum(len(b) for b in iter(lambda: fh.read(1 << 20), b""))
    wordnet = sizes.pop("eval-wordnet")
    corpus = sizes["enwiki-2015"]
    mb = {"all": sum(sizes.values()) / 1e6, "corpus": corpus / 1e6, "rest": (sum(sizes.values()) - corpus) / 1e6,
          "wordnet": wordnet / 1e6}
    downloads = (REPO / "docs/downloads.md").read_text(encoding="utf-8").lower()
    readme = (REPO / "README.md").read_text(encoding="utf-8").lower()
    for text in (downloads, readme):
        assert f"about {mb['all']:.0f} mb" in text, "the default's download size"
        assert f"{mb['wordnet']:.0f} mb" in text, "WordNet's size"
    assert f"20 files {mb['corpus']:.1f} mb" in downloads and f"tagging data {mb['rest']:.0f} mb" in downloads


# ---------------------------------------------------------------- the catalog files


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_one_snakemake_floor_everywhere():
    floors = {"pyproject.toml": re.search(r'"snakemake>=([\d.]+)', (REPO / "pyproject.toml").read_text()).group(1),
              "Snakefile": re.search(r'min_version\("([\d.]+)"\)', (REPO / "Snakefile").read_text()).group(1)}
    for env in (REPO / "envs").glob("*.yaml"):
        found = re.search(r"snakemake>=([\d.]+)", env.read_text())
        if found:
            floors[_rel(env)] = found.group(1)
    assert len(set(floors.values())) == 1, floors


def test_requires_python_is_what_the_dependencies_need():
    from importlib.metadata import metadata

    from packaging.specifiers import SpecifierSet

    ours = SpecifierSet(_pyproject()["project"]["requires-python"])
    for package in ("snakemake", "snakemake-executor-plugin-slurm"):
        try:
            needed = SpecifierSet(metadata(package)["Requires-Python"] or "")
        except Exception:  # not installed here
            continue
        lowest = next(v for v in ("3.9", "3.10", "3.11", "3.12", "3.13") if v in ours)
        assert lowest in needed, f"requires-python {ours} admits Python {lowest}, which {package} does not ({needed})"


def test_license_and_citation_agree_with_pyproject():
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["license"] == project["license"]
    assert cff["version"] == project["version"]
    for key in ("message", "title", "authors"):
        assert cff.get(key), key
    types = {"article", "conference-paper", "software"}
    titles = []
    for ref in cff["references"]:
        assert ref["type"] in types and ref["title"] and ref["authors"], ref
        for author in ref["authors"]:
            assert "name" in author or "family-names" in author, ref["title"]
        if ref["type"] != "software":
            assert isinstance(ref["year"], int) and ref.get("url"), ref["title"]
        titles.append(ref["title"])
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    papers = [r for r in cff["references"] if r["type"] != "software"]
    assert len(papers) == 4 and all(r["url"] in readme for r in papers)  # the README links the same four papers
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    assert catalog["usage"]["software-stack-deployment"]["conda"] is True


def test_config_readme_covers_every_top_level_key_and_overlay():
    text = (REPO / "config/README.md").read_text(encoding="utf-8")
    for key in yaml.safe_load((REPO / "config/config.yaml").read_text()):
        assert f"| `{key}` |" in text, key
    for overlay in ("config/paper.yaml", "config/claims10m.yaml", "config/examples/own-corpus.yaml"):
        assert f"`{overlay}`" in text
    for sheet in ("embeddings", "tables", "figures", "claims"):
        assert f"`config/{sheet}.yaml`" in text
