"""The ``staticvec`` command the jobs run: the one installed for the Python that runs Snakemake.

Every rule's shell command calls ``staticvec``. A job's shell inherits the PATH of the Snakemake process,
which has the project's command only when the user put it there (``make``'s recipes, ``source
.venv/bin/activate``); ``.venv/bin/snakemake`` started from a plain shell would plan the jobs and then
fail in each with "staticvec: command not found". So when the workflow is parsed, the directory of the
command that belongs to the interpreter running Snakemake goes first on the PATH:

- beside the interpreter (``Path(sys.executable).parent``: a venv's or a conda environment's ``bin/``;
  not resolved, since a venv's ``python`` is a link to the base interpreter), else
- where the installed ``staticvec`` distribution recorded its script (``pip install --user``: ``~/.local/bin``).

Remote executors (SLURM) run each job as ``<that interpreter> -m snakemake`` on the node, which parses the
workflow again and so computes the PATH there, from the interpreter's path on the node (the shared file
system that Snakemake's remote execution requires), never from a path baked in at submission. With
``--software-deployment-method conda`` the activated environment's ``bin/`` still goes before it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import sys
from pathlib import Path

COMMAND = "staticvec"
DISTRIBUTION = "staticvec"
SETUP_HINT = ("run `make setup` in the repository, then use the Makefile's targets (`make target T=FILE`), "
              "`.venv/bin/snakemake`, or `source .venv/bin/activate` first")


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _recorded_script(distribution: str) -> Path | None:
    """The ``staticvec`` script the installed distribution lists in its RECORD, if any."""
    try:
        files = importlib.metadata.distribution(distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == COMMAND and file.parent.name in ("bin", "Scripts"):
            return Path(os.path.normpath(file.locate()))
    return None


def command_dir(executable: str = sys.executable, distribution: str = DISTRIBUTION) -> Path | None:
    """The directory holding the ``staticvec`` command of the interpreter ``executable``, or None."""
    beside = Path(executable).parent / COMMAND
    if _executable(beside):
        return beside.parent
    recorded = _recorded_script(distribution)
    if recorded is not None and _executable(recorded):
        return recorded.parent
    return None


def put_command_first_on_path(environ=os.environ, executable: str = sys.executable,
                              distribution: str = DISTRIBUTION) -> Path:
    """Put the directory of this interpreter's ``staticvec`` first on ``environ['PATH']`` (the jobs'
    PATH) and return it; stop Snakemake with one line saying what to do where there is none."""
    directory = command_dir(executable, distribution)
    if directory is None:
        # SystemExit: Snakemake prints its message alone (any other exception comes with a traceback)
        raise SystemExit(f"no `{COMMAND}` command installed for {executable}, the Python running this Snakemake: "
                         f"{SETUP_HINT}")
    path = environ.get("PATH", "")
    if path.split(os.pathsep)[0] != str(directory):
        environ["PATH"] = f"{directory}{os.pathsep}{path}" if path else str(directory)
    return directory


def use_checkout_package(basedir: str | os.PathLike, environ=os.environ) -> Path:
    """Make the jobs import the package of the checkout whose Snakefile runs (``basedir``/workflow), as the
    planning does (common.smk puts it first on ``sys.path``): its folder goes first on the jobs'
    ``PYTHONPATH``. Stop with one line where this process imported ``staticvec`` from elsewhere."""
    import staticvec

    package = (Path(basedir) / "workflow").resolve()
    imported = Path(staticvec.__file__).resolve().parent.parent
    if imported != package:
        raise SystemExit(f"this Snakefile is in {Path(basedir).resolve()}, but the workflow imported staticvec from "
                         f"{imported}: run Snakemake from the checkout whose package it should use, or "
                         f"`pip install -e {Path(basedir).resolve()}`")
    entries = [e for e in environ.get("PYTHONPATH", "").split(os.pathsep) if e and Path(e).resolve() != package]
    environ["PYTHONPATH"] = os.pathsep.join([str(package), *entries])
    return package


@contextlib.contextmanager
def plan_time_checks():
    """Around the workflow's plan-time checks: a :class:`~staticvec.errors.StaticvecError` stops Snakemake with its
    message alone (SystemExit: no traceback, no file and line of common.smk), before any job."""
    from staticvec.errors import StaticvecError

    try:
        yield
    except StaticvecError as exc:
        raise SystemExit(f"staticvec: error: {exc}") from None
