"""The planning layer owns every path: the rule files name none and run no Python of their own, and
RulePaths gives each rule's log and benchmark one stem."""

import ast
import re
from pathlib import Path

import pytest

from staticvec.dag.paths import LOG_STEMS, RulePaths, fill

REPO = Path(__file__).resolve().parents[1]
RULE_FILES = sorted((REPO / "workflow" / "rules").glob("*.smk"))
SETUP_FILE = "common.smk"  # builds the planning objects and names the conda environments


def code_lines(path: Path):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.split("  #")[0].rstrip()
        if stripped.strip() and not stripped.lstrip().startswith("#"):
            yield number, stripped


def test_fill_replaces_only_the_named_wildcards():
    assert fill("a/{emb}/seed{seed}.{protocol}", protocol="web") == "a/{emb}/seed{seed}.web"
    assert fill("x.{protocol}", protocol=("web", "muse")) == "x.web+muse"
    assert fill("{k}of{n}", k=3) == "3of{n}"


def test_log_and_benchmark_share_a_stem_under_the_results_directory():
    paths = RulePaths("results/x")
    assert paths.log("train") == "results/x/logs/train/{emb}/seed{seed}.log"
    assert paths.benchmark("train") == "results/x/benchmarks/train/{emb}/seed{seed}.tsv"
    assert paths.log("evaluate_intrinsic", protocol=("web", "drop")) == \
        "results/x/logs/eval/{emb}/seed{seed}/intrinsic.web+drop.log"
    with pytest.raises(KeyError):
        paths.log("no_such_rule")


def test_every_log_stem_is_used_by_a_rule_and_every_rule_names_a_known_one():
    text = "\n".join(p.read_text() for p in RULE_FILES)
    named = set(re.findall(r"P\.(?:log|benchmark)\(\"([a-z0-9_]+)\"", text))
    assert named == set(LOG_STEMS), (named ^ set(LOG_STEMS))


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_rule_files_hold_no_path_literal_and_no_python_of_their_own(path):
    problems = []
    for number, line in code_lines(path):
        where = f"{path.name}:{number}: {line.strip()}"
        if re.search(r"\bf[\"']", line):
            problems.append(f"an f-string (a path or flag built in the rule file): {where}")
        if "lambda" in re.sub(r"\"[^\"]*\"", "", line):
            problems.append(f"a lambda (belongs in staticvec.dag.rules.RuleFunctions): {where}")
        if re.search(r"\bconfig\s*[\[.]", line) and path.name != SETUP_FILE:
            problems.append(f"reads config directly (the planning layer does): {where}")
        if re.match(r"\s*(import|from)\s", line) and path.name != SETUP_FILE:
            problems.append(f"an import: {where}")
        # a comprehension; the one loop statement allowed builds a rule per protocol group (evaluate.smk)
        if re.search(r"\bfor\b.+\bin\b.+(\]|\))", line) and not line.lstrip().startswith("for "):
            problems.append(f"a comprehension: {where}")
        strings = re.findall(r"(?<![r\w])\"([^\"]*)\"", line)
        if path.name != SETUP_FILE and "caption=" not in line and "shell" not in line:
            literal_paths = [s for s in strings if "/" in s and not s.startswith("staticvec ") and "{wildcards." not in s]
            if literal_paths:
                problems.append(f"a path literal {literal_paths}: {where}")
    assert not problems, "\n".join(problems)


def test_one_fraction_to_shards_mapping_for_every_planning_object():
    from staticvec.config import load_config
    from staticvec.dag.common import fraction_shard_ids
    from staticvec.dag.semglove import SemgloveRules
    from staticvec.dag.workflow import Workflow
    from staticvec.errors import StaticvecError

    assert fraction_shard_ids("", 3) == ["00000", "00001", "00002"]
    assert fraction_shard_ids(".3of6", 8) == ["00000", "00001", "00002", "00003"]  # 3/6 of 8 shards is whole
    for bad in (".1of3", ".0of8", ".9of8", "half"):
        with pytest.raises(StaticvecError, match="fraction"):
            fraction_shard_ids(bad, 8)
    config = load_config([REPO / "config" / "config.yaml"])
    workflow, semglove = Workflow(config, REPO), SemgloveRules(config)
    for frac in ("", ".1of8", ".2of4", ".3of6"):
        assert workflow.frac_shard_ids(frac) == semglove.shard_ids(frac) == fraction_shard_ids(frac, 8)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, at any depth (function-level imports included)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from staticvec import report` names the package in an alias
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def test_the_planning_layer_imports_nothing_from_the_report():
    """dag/ sits below report/: the sheets both read live in staticvec.sheets, so planning a run never
    loads the rendering code (and a change of rendering cannot change the DAG)."""
    modules = sorted((REPO / "workflow" / "staticvec" / "dag").glob("*.py"))
    assert len(modules) > 5
    offending = [f"{path.name}:{line}: {name}" for path in modules for line, name in imported_modules(path)
                 if name == "staticvec.report" or name.startswith("staticvec.report.")]
    assert not offending, "dag/ imports report/: " + ", ".join(offending)
