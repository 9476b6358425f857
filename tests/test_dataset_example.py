"""CONTRIBUTING.md's worked example "a new similarity data set", run: its blocks (the description, the
test's record count) and its checksum step are applied to a copy of the repository, with a synthetic
file in place of the real MC-30; the copy scores it with `staticvec evaluate intrinsic`, shows it in the
summary's columns, labels it, and plans the workflow.

What this pins: a new data set of an existing task is three files (its description, its checksum, its
test) and no edit of shared code or of a sheet."""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from example_fixtures import (REPO, apply_example, changed_files, env_of, example_blocks, only_gains_its_blocks,
                              override_file, snakemake)

from staticvec.config import load_yaml
from staticvec.dag.dryrun import planned_jobs

SECTION = "## Worked example 3: a new similarity data set"
NAME, FILE = "mc30", "similarity/EN-MC-30.txt"
WORDS = [f"w{i}" for i in range(12)]


def checksum_step() -> tuple[str, str]:
    """(the checksum file, the path of the line) the example's sha256sum command appends."""
    text = (REPO / "CONTRIBUTING.md").read_text()
    section = text[text.index(SECTION):text.index("\n## ", text.index(SECTION) + 1)]
    member, target = re.search(r"sha256sum (\S+)\) >> (\S+)", section).groups()
    return target, member


def synthetic_set(rng) -> str:
    """30 distinct pairs of the tiny vocabulary (no tied cosines) with distinct random scores, one pair with a
    word no embedding has."""
    pairs = [(a, b) for a in range(len(WORDS)) for b in range(a + 1, len(WORDS))]
    chosen = rng.choice(len(pairs), 29, replace=False)
    scores = rng.permutation(1000)[:29] / 100
    lines = [f"{WORDS[pairs[k][0]]}\t{WORDS[pairs[k][1]]}\t{score:.2f}" for k, score in zip(chosen, scores)]
    return "\n".join(lines + ["w0\tunseen\t5.00"]) + "\n"


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """The repository with the example applied, and its data directory holding the synthetic file."""
    base = tmp_path_factory.mktemp("dataset")
    root = apply_example(base / "repo", example_blocks(SECTION))
    data = base / "data"
    (data / "eval" / FILE).parent.mkdir(parents=True)
    (data / "eval" / FILE).write_text(synthetic_set(np.random.default_rng(0)))
    target, member = checksum_step()
    digest = hashlib.sha256((data / member).read_bytes()).hexdigest()
    with open(root / target, "a", encoding="utf-8") as fh:  # what the example's command appends
        fh.write(f"{digest}  {member}\n")
    return root, data


def run_python(root: Path, code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=env_of(root))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_example_is_three_files_and_no_edit_of_shared_code(copy):
    root, _ = copy
    blocks = example_blocks(SECTION)
    target, member = checksum_step()
    assert member == f"eval/{FILE}"
    files = {path for path, _, _ in blocks} | {target}
    assert files == {"workflow/staticvec/evaluate/datasets.py", "config/checksums/eval.sha256",
                     "tests/test_evaluate_datasets.py"}
    assert all(anchor in ("DATASETS", "EXPECTED") for _, anchor, _ in blocks)  # entries of the registry and the test
    only_gains_its_blocks(root, blocks)
    assert changed_files(root) == files
    # the checksum file is its group's: the group of the description, which lists and fetches the file
    group = load_yaml(REPO / "config" / "resources.yaml")["eval-similarity"]
    assert group["checksums"] == target and member.startswith(group["prefix"])


def test_it_is_scored_by_evaluate_intrinsic(copy, tmp_path):
    root, data = copy
    rng = np.random.default_rng(1)
    vectors = {w: rng.standard_normal(8) for w in WORDS}
    path = tmp_path / "tiny.txt"
    path.write_text(f"{len(WORDS)} 8\n" + "".join(f"{w} {' '.join(f'{x:.6f}' for x in v)}\n" for w, v in vectors.items()))
    out = tmp_path / "result.json"
    done = subprocess.run(["staticvec", "evaluate", "intrinsic", str(path), "--data-dir", str(data / "eval"),
                           "--tasks", NAME, "--oov", "drop", "--out", str(out)],
                          cwd=root, capture_output=True, text=True, env=env_of(root))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())["results"][NAME]
    # by hand: Spearman's rho of the cosines (of the 6-decimal vectors) against the scores, the OOV pair dropped
    rows = [line.split("\t") for line in (data / "eval" / FILE).read_text().splitlines()]
    read = {w: np.array([float(f"{x:.6f}") for x in v]) for w, v in vectors.items()}
    kept = [(a, b, float(s)) for a, b, s in rows if a in read and b in read]
    cos = [read[a] @ read[b] / np.linalg.norm(read[a]) / np.linalg.norm(read[b]) for a, b, _ in kept]

    def ranks(x):
        order = np.argsort(x, kind="stable")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        return r

    rho = np.corrcoef(ranks(np.array(cos)), ranks(np.array([s for _, _, s in kept])))[0, 1]
    assert result["found"] == len(kept) == 29 and result["total"] == 30
    assert result["score"] == pytest.approx(rho, abs=1e-9)


def test_it_is_labelled_in_the_summary_and_its_own_test_passes(copy):
    root, _ = copy
    got = run_python(root, "import json; from staticvec.evaluate.datasets import DATASETS, eval_groups; "
                           "from staticvec.report.figures import metric_label; "
                           "from staticvec.sheets.figures import load_figures_spec, summary_columns_of; "
                           "print(json.dumps({'label': metric_label('mc30'), 'groups': list(eval_groups()), "
                           "'columns': summary_columns_of(load_figures_spec('config/figures.yaml'))}))")
    assert got["label"] == "MC-30" and got["columns"][-1] == NAME and "eval-similarity" in got["groups"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_evaluate_datasets.py",
                           "-k", f"resource_group and {NAME}"], cwd=root, capture_output=True, text=True, env=env_of(root))
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:]


def test_the_workflow_plans_its_evaluation(copy, tmp_path, shared_data):
    root, _ = copy
    results = tmp_path / "results"
    shell = snakemake(root, override_file(root, results, shared_data), "-n", "--forceall", "--printshellcmds",
                      f"{results}/eval/glove/seed1/intrinsic.web.json").stdout
    assert any(j.rule and j.rule.startswith("evaluate_intrinsic") for j in planned_jobs(shell))
    # the summary reads it (evaluation.scope: read), so GloVe's evaluation job scores it
    command = next(line for line in shell.splitlines() if "staticvec evaluate intrinsic" in line)
    assert NAME in command.split("--tasks", 1)[1].split("--")[0].split(), command
