"""CONTRIBUTING.md's worked example "a new method", run: its code blocks are applied to a copy of the
repository (each block names its file: a new file, or the place of an existing one it goes into), and
the new student is planned, tested and — on the tests' tiny config — trained and evaluated there.

What this pins: a distillation student with its own table and loss is five files (its module, its
registry entry, its config block, its sheet row, its test) and no edit to shared code; the workflow
plans its training from the registry, the rule trains it through the student interface, and the
evaluation harness reads its vectors.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from example_fixtures import apply_example, changed_files, env_of, only_gains_its_blocks, override_file, snakemake
from example_fixtures import example_blocks as blocks_of

from staticvec.dag.dryrun import planned_jobs
from staticvec.embeddings import Embeddings

SECTION = "## Worked example 2: a new method"
METHOD = "mystudent"


def example_blocks() -> list[tuple[str, str | None, str]]:
    return blocks_of(SECTION)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The repository with the example's blocks applied."""
    return apply_example(tmp_path_factory.mktemp("new-method") / "repo", example_blocks())


def test_the_example_is_five_files_and_no_edit_of_shared_code(copy):
    blocks = example_blocks()
    files = {path for path, _, _ in blocks}
    assert len(files) == len(blocks) == 5, files
    new = {path for path, anchor, _ in blocks if anchor is None}
    assert new == {f"workflow/staticvec/train/{METHOD}.py", f"tests/test_{METHOD}.py"}
    # the existing files it edits only gain the block: the registry, the config's defaults, the sheet
    assert files - new == {"workflow/staticvec/methods.py", "config/config.yaml", "config/embeddings.yaml"}
    only_gains_its_blocks(copy, blocks)
    assert changed_files(copy) == files - new


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
