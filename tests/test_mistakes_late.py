"""The mistakes a newcomer used to meet late or unnamed, answered before any job in one line naming the key or
file and the fix (issue 55, item 5): export ids and seeds, the disk budget, teacher folders, subcommand usage,
the failed job's error on the console, and one `staticvec` package for planning and running."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from staticvec.cli import main
from staticvec.config import load_config
from staticvec.dag.workflow import Workflow
from staticvec.errors import StaticvecError

REPO = Path(__file__).resolve().parents[1]


def snakemake(tmp_path, *args, configfiles=()) -> subprocess.CompletedProcess:
    """This checkout's Snakemake, its results in ``tmp_path/run``; its stdout and stderr together."""
    overlay = tmp_path / "where.yaml"
    overlay.write_text(yaml.safe_dump({"results_dir": str(tmp_path / "run")}))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO / "workflow")}
    return subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--configfile", *map(str, configfiles),
                           str(overlay), *args], cwd=REPO, capture_output=True, text=True, env=env)


# ---------------------------------------------------------------- export


@pytest.mark.parametrize("emb, seed, message", [
    ("glove", 5, "results/export/glove/seed5/: seed 5 is not one of config key 'seeds' = [1, 2, 3] (an export of it "
                 "would train glove anew): export one of those, or add 5 to seeds"),
    ("model2vec", 2, "model2vec (model2vec) is deterministic, its one run is seed 1 (the first of config key "
                     "'seeds'): export "),
    ("glov", 1, "'glov' is not an embedding of config/embeddings.yaml (did you mean 'glove'?); an export takes one "
                "of its entries: glove, sg,"),
])
def test_an_export_of_an_unknown_id_or_an_untrained_seed_is_refused_before_any_job(tmp_path, emb, seed, message):
    done = snakemake(tmp_path, "-n", "--", str(tmp_path / "run" / "export" / emb / f"seed{seed}" / "vectors.kv"))
    assert done.returncode != 0
    assert message.replace("results/export", str(tmp_path / "run" / "export")) in done.stdout + done.stderr
    assert "No rule to produce" not in done.stdout + done.stderr
    assert not (tmp_path / "run").exists()


def test_an_export_of_a_trained_seed_plans(tmp_path):
    w = Workflow(load_config([REPO / "config/config.yaml"]), REPO)
    w.check_export("glove", "2")
    w.check_export("model2vec", "1")
    with pytest.raises(StaticvecError, match="deterministic"):
        w.check_export("bert_token", "3")


# ---------------------------------------------------------------- the disk budget


def test_a_plan_over_its_disk_budget_exits_non_zero_with_a_line_of_its_own(tmp_path, capsys):
    overlay = tmp_path / "budget.yaml"
    overlay.write_text("plan: {disk_budget_gb: 0.001}\n")
    code = main(["plan", "costs", "--configfile", "config/config.yaml", str(overlay)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "**Total:" in out  # the whole plan printed first
    line = err.strip().splitlines()[-1]
    assert re.fullmatch(r"staticvec plan costs: error: the plan's peak disk, [\d,]+ GB, is over config key "
                        r"'plan.disk_budget_gb' = 0 GB: .*", line), line


# ---------------------------------------------------------------- teachers


def _config_with_teacher(path: str) -> dict:
    config = load_config([REPO / "config/config.yaml"])
    config["teacher"]["models"]["minilm"] = path
    return config


def test_a_teacher_folder_without_weights_is_refused_at_plan_time(tmp_path):
    folder = tmp_path / "teacher"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (folder / "tokenizer.json").write_text("{}")
    with pytest.raises(StaticvecError, match=re.escape(f"{folder} has config.json but no weights (model.safetensors, "
                                                       "pytorch_model.bin): save the model itself there")):
        Workflow(_config_with_teacher(str(folder)), REPO).check_teachers()
    (folder / "model.safetensors").write_bytes(b"")
    problems = _teacher_problem(folder)
    assert "no weights" not in problems and "cannot load its tokenizer" in problems  # the next check speaks


def _teacher_problem(path) -> str:
    try:
        Workflow(_config_with_teacher(str(path)), REPO).check_teachers()
    except StaticvecError as exc:
        return str(exc)
    return ""


def test_a_teacher_path_that_is_a_file_is_named_as_such(tmp_path):
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\x00")
    assert f"{weights} is a file, not a model folder: give the folder holding config.json" in _teacher_problem(weights)


def test_a_missing_relative_teacher_path_is_not_sent_to_the_hub():
    problem = _teacher_problem("resources/models/own-teacher-not-here")
    assert f"no such file or directory: {REPO / 'resources/models/own-teacher-not-here'}" in problem
    assert "Hugging Face" not in problem and "download" not in problem
    assert "not a local directory and not in the Hugging Face cache" in _teacher_problem("some-org/not-cached")


# ---------------------------------------------------------------- the command line


def test_a_wrong_subcommand_flag_gets_the_subcommands_usage_and_a_close_flag(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["export", "--vectors", "v.npy", "--modle2vec", "out"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: staticvec export ")
    assert "staticvec export: error: unrecognized arguments: --modle2vec out (--modle2vec: did you mean --model2vec?)" \
        in err


# ---------------------------------------------------------------- a failed job's error on the console


def test_a_failed_jobs_error_line_is_shown_on_the_console(tmp_path):
    """A corpus error past the lines the plan reads: the tokenize job fails, its message is in its log, and the
    console shows it (Snakefile's onerror: staticvec.dag.failures)."""
    data = tmp_path / "docs.jsonl"
    good = [json.dumps({"id": str(i), "text": "A plain sentence of this corpus, long enough to be kept."})
            for i in range(30)]
    data.write_text("\n".join(good + ['{"id": "30", "text": 7}']) + "\n")
    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(yaml.safe_dump({"corpus": {"format": "jsonl", "local_files": [str(data)]}}))
    target = tmp_path / "run" / "corpus" / "tokenized" / "docs-jsonl.tsv.gz"
    done = snakemake(tmp_path, "--", str(target), configfiles=[corpus])
    assert done.returncode != 0
    console = done.stdout + done.stderr
    assert "Failed job tokenize (" in console
    assert f"staticvec corpus tokenize: error: {data}, line 31: field 'text' is a number, not a string" in console
    assert not target.exists()


def test_the_error_of_a_failed_jobs_log(tmp_path):
    from staticvec.dag.failures import failed_job_logs, first_error

    log = tmp_path / "job.log"
    log.write_text("12:00:00 INFO progress 1\nstaticvec train glove: error: invalid configuration:\n  - a\n  - b\n"
                   "after\n")
    assert first_error(log) == ["staticvec train glove: error: invalid configuration:", "  - a", "  - b"]
    log.write_text("Traceback (most recent call last):\n  File \"x\", line 1\nValueError: bad\n")
    assert first_error(log) == ["ValueError: bad"]
    assert first_error(tmp_path / "absent.log") == []
    text = ("Error in rule tokenize:\n    jobid: 3\n    log: a.log, b.log (check log file(s) for error details)\n"
            "Error in rule vocabulary:\n    jobid: 4\n    log: c.log (check log file(s) for error details)\n")
    assert failed_job_logs(text) == [("tokenize", ["a.log", "b.log"]), ("vocabulary", ["c.log"])]


# ---------------------------------------------------------------- one staticvec


def test_the_jobs_import_the_checkout_that_plans(tmp_path):
    from staticvec.dag.command import use_checkout_package

    environ = {"PYTHONPATH": f"/elsewhere{os.pathsep}{REPO / 'workflow'}"}
    assert use_checkout_package(REPO, environ) == (REPO / "workflow").resolve()
    assert environ["PYTHONPATH"].split(os.pathsep) == [str((REPO / "workflow").resolve()), "/elsewhere"]
    other = tmp_path / "other-checkout"
    (other / "workflow").mkdir(parents=True)
    with pytest.raises(SystemExit, match=re.escape(f"this Snakefile is in {other.resolve()}, but the workflow imported "
                                                   f"staticvec from {(REPO / 'workflow').resolve()}")):
        use_checkout_package(other, {})


def test_snakemake_plans_with_this_checkouts_package_whatever_is_installed(tmp_path):
    """Without PYTHONPATH the venv's installed checkout could be another one: the plan must still be this one's
    (here: this checkout's refusal of a results_dir inside results/reference/)."""
    overlay = tmp_path / "ref.yaml"
    overlay.write_text("results_dir: results/reference/tour-1m\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(overlay)],
                          cwd=REPO, capture_output=True, text=True, env={**env, "HF_HUB_OFFLINE": "1"})
    assert done.returncode != 0
    assert "is inside results/reference/, the committed reference runs" in done.stdout + done.stderr
