"""The workflow as a new user runs it: a shell whose PATH has none of the project's commands (after
`make run`, .venv/bin is on the PATH of make's recipes only), and the tiny end-to-end run on the test
config (tests/config/test.yaml), shared by the end-to-end and README-commands tests (conftest's tiny_run)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TEST_CONFIG = REPO / "tests" / "config" / "test.yaml"
PROJECT_COMMANDS = ("snakemake", "staticvec")


def plain_path(path: str | None = None) -> str:
    """``path`` (default: this process's PATH) without the interpreter's directory and without any
    directory holding a project command: the PATH of a shell in which nothing was activated."""
    interpreter_dir = str(Path(sys.executable).parent)
    entries = (os.environ.get("PATH", "") if path is None else path).split(os.pathsep)
    return os.pathsep.join(e for e in entries if e and e != interpreter_dir
                           and not any(shutil.which(c, path=e) for c in PROJECT_COMMANDS))


# set by `make` for its recipes (the suite runs under `make test`): a reader's shell has none of them, and a
# MAKELEVEL above 0 makes a `make` the README shows print "Entering directory" lines into its `make -n` recipe
MAKE_VARIABLES = ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")


def plain_env(**extra: str) -> dict:
    """This process's environment as a reader's plain shell has it: a plain PATH, no variables of an enclosing
    `make`; the jobs import this checkout's package (git worktrees)."""
    inherited = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
    return {**inherited, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO / "workflow"), "PATH": plain_path(), **extra}


def snakemake(*args, configfiles=(TEST_CONFIG,), check=True):
    """Run this interpreter's Snakemake in the repository from a plain shell (the jobs must find `staticvec`
    themselves); config/config.yaml is always the base config."""
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--quiet", "rules",
           "--configfile", *map(str, configfiles), *args]
    result = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=plain_env())
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-8000:]}")
    return result


def run_tiny_workflow(tmp: Path, shared_data: Path) -> dict:
    """The whole workflow on the test config, outputs (results, downloads) under ``tmp``."""
    tmp.mkdir(parents=True, exist_ok=True)
    override = tmp / "paths.yaml"
    override.write_text(yaml.safe_dump({
        "results_dir": str(tmp / "results"),
        "resources": {"download_dir": str(tmp / "data"), "mirror": str(shared_data)},
    }))
    snakemake(configfiles=[TEST_CONFIG, override])
    return {"results": tmp / "results", "override": override, "data": tmp / "data"}

