"""CONTRIBUTING.md's worked example "a new method", run: its code blocks are applied to a copy of the
repository (each block names its file: a new file, or the place of an existing one it goes into), and
the new student is planned, tested and — on the tests' tiny config — trained and evaluated there.

What this pins: a distillation student with its own table and loss is five files (its module, its
registry entry, its config block, its sheet row, its test) and no edit to shared code; the workflow
plans its training from the registry, the rule trains it through the student interface, and the
evaluation harness reads its vectors.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from staticvec.dag.dryrun import planned_jobs
from staticvec.embeddings import Embeddings

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Worked example 2: a new method"
BLOCK = re.compile(r"^```(?:python|yaml)\n# (\S+?)(?:, (in|under) (\S+):)?\n(.*?)^```$", re.M | re.S)
TEST_CONFIG = REPO / "tests" / "config" / "test.yaml"
METHOD = "mystudent"


def example_blocks() -> list[tuple[str, str | None, str]]:
    """(file, where in it or None for a new file, text) of each code block of the worked example."""
    text = (REPO / "CONTRIBUTING.md").read_text()
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ", 1)]
    return [(path, anchor or None, body) for path, _, anchor, body in BLOCK.findall(section)]


def insert(text: str, anchor: str, block: str, path: str) -> str:
    """``block`` into ``text`` as the first entry under the YAML key ``anchor`` (``methods``), or as the
    last entry of the Python list assigned to ``anchor`` (``REGISTRY``)."""
    lines = text.splitlines(keepends=True)
    if path.endswith(".py"):
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{anchor}:") or line.startswith(f"{anchor} ="))
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("]"))
        return "".join(lines[:end] + [block] + lines[end:])
    start = next(i for i, line in enumerate(lines) if re.match(rf"^{anchor}:(\s|$)", line))
    return "".join(lines[:start + 1] + [block] + lines[start + 1:])


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if done.returncode == 0:
        return [f for f in done.stdout.split("\0") if f and (REPO / f).is_file()]
    skip = {".git", ".snakemake", ".venv", "results", "resources/data"}  # not a git checkout: the source tree
    return [str(p.relative_to(REPO)) for p in REPO.rglob("*")
            if p.is_file() and not any(str(p.relative_to(REPO)).startswith(s) for s in skip) and "__pycache__" not in p.parts]


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The repository with the example's blocks applied."""
    root = tmp_path_factory.mktemp("new-method") / "repo"
    for rel in tracked_files():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    for path, anchor, body in example_blocks():
        target = root / path
        if anchor is None:
            assert not target.exists(), f"{path}: the example's new file exists already"
            target.write_text(body)
        else:
            target.write_text(insert(target.read_text(), anchor, body, path))
    return root


def env_of(root: Path) -> dict:
    # the copy's package first; `staticvec` (the rules' command) is installed beside this interpreter
    return {**os.environ, "PYTHONPATH": str(root / "workflow"), "HF_HUB_OFFLINE": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def snakemake(root: Path, override: Path, *args) -> subprocess.CompletedProcess:
    quiet = [] if "-n" in args else ["--quiet", "rules"]  # a dry run prints each job's block
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *quiet, "--configfile",
           str(root / "tests" / "config" / "test.yaml"), str(override), *args]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env_of(root))
    assert done.returncode == 0, f"snakemake failed:\n{done.stdout[-4000:]}\n{done.stderr[-6000:]}"
    return done


def override_file(root: Path, results: Path, shared_data: Path) -> Path:
    path = root / "paths.yaml"
    path.write_text(yaml.safe_dump({"results_dir": str(results),
                                    "resources": {"download_dir": str(results.parent / "data"), "mirror": str(shared_data)}}))
    return path


def test_the_example_is_five_files_and_no_edit_of_shared_code(copy):
    blocks = example_blocks()
    files = {path for path, _, _ in blocks}
    assert len(files) == len(blocks) == 5, files
    new = {path for path, anchor, _ in blocks if anchor is None}
    assert new == {f"workflow/staticvec/train/{METHOD}.py", f"tests/test_{METHOD}.py"}
    # the existing files it edits only gain the block: the registry, the config's defaults, the sheet
    assert files - new == {"workflow/staticvec/methods.py", "config/config.yaml", "config/embeddings.yaml"}
    for path, anchor, body in blocks:
        if anchor is not None:
            before, after = (REPO / path).read_text(), (copy / path).read_text()
            assert len(after) == len(before) + len(body) and after.replace(body, "", 1) == before
    changed = {rel for rel in tracked_files() if (copy / rel).read_bytes() != (REPO / rel).read_bytes()}
    assert changed == files - new


def test_its_own_test_passes_in_the_copy(copy):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/test_{METHOD}.py"],
                          cwd=copy, capture_output=True, text=True, env=env_of(copy))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


def test_the_workflow_plans_its_training_and_evaluation(copy, tmp_path, shared_data):
    """The registry entry alone wires it in: the training rule's wildcard constraint, its teacher
    features (the sentence set), its `staticvec train` command, its evaluation and the summary row."""
    results = tmp_path / "results"
    done = snakemake(copy, override_file(copy, results, shared_data), "-n", "--forceall")
    jobs = planned_jobs(done.stdout)
    train = [j for j in jobs if j.rule == "train_student" and f"emb={METHOD}," in j.wildcards]
    assert [j.output.split(", ")[0] for j in train] == [f"{results}/embeddings/{METHOD}/seed1/vectors.bin"]
    assert any(j.rule and j.rule.startswith("evaluate_intrinsic") and f"emb={METHOD}" in j.wildcards for j in jobs)
    shell = snakemake(copy, override_file(copy, results, shared_data), "-n", "--forceall", "--printshellcmds",
                      f"{results}/embeddings/{METHOD}/seed1/vectors.bin").stdout
    command = next(line for line in shell.splitlines() if f"staticvec train {METHOD} " in line)
    assert "/features/sentence/" in command and '"batch_words": 512' in command and "--threads 1" in command


@pytest.mark.slow  # minutes: the tiny corpus, its teacher features, the training and the evaluation
def test_it_trains_and_is_evaluated_on_the_tiny_config(copy, tmp_path, shared_data):
    results = tmp_path / "results"
    target = results / "eval" / METHOD / "seed1" / "intrinsic.web.json"
    snakemake(copy, override_file(copy, results, shared_data), "--", str(target))
    vectors = results / "embeddings" / METHOD / "seed1" / "vectors.bin"
    record = json.loads(vectors.with_name("vectors.json").read_text())
    emb = Embeddings.load(vectors)
    # the output table is the method's own (W, the teacher's width), over its min-count-5 vocabulary
    assert record["method"] == METHOD and record["output"]["table"] == "W (static word table)"
    assert emb.dim == record["source"]["teacher"]["hidden_size"] == 384
    vocab = [line.split("\t") for line in (results / "corpus" / "vocab.min3.tsv").read_text().splitlines()]
    assert emb.words == [w for w, c in vocab if int(c) >= 5] and record["params"]["min_count"] == 5
    assert record["train"]["engine"] == "autograd" and record["train"]["steps"] > 0
    assert record["options"]["negatives"]["follows"] == "paper"
    assert np_std(emb.vectors) > 0 and record["train"]["curve"][-1]["loss_per_step"] < record["train"]["curve"][0]["loss_per_step"]
    scores = json.loads(target.read_text())
    scored = {k: v for k, v in scores["results"].items() if isinstance(v, dict) and v.get("score") is not None}
    assert "ws353" in scored and scored["ws353"]["found"] > 0, sorted(scores["results"])


def np_std(a) -> float:
    import numpy as np

    return float(np.std(a))
