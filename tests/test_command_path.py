"""The jobs find the `staticvec` of the Python running Snakemake, whatever the PATH it was started with
(staticvec.dag.command), and a Snakemake that cannot import staticvec stops with one line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from staticvec.dag.command import command_dir, put_command_first_on_path

REPO = Path(__file__).resolve().parents[1]


def script(path: Path, mode=0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_the_command_beside_the_interpreter_goes_first_once(tmp_path):
    venv_bin = script(tmp_path / "venv" / "bin" / "staticvec").parent
    environ = {"PATH": "/usr/bin:/bin"}
    python = str(venv_bin / "python")  # a venv's python is a link; its directory is what counts
    assert put_command_first_on_path(environ, python) == venv_bin
    assert environ["PATH"] == f"{venv_bin}:/usr/bin:/bin"
    put_command_first_on_path(environ, python)  # parsed again (a remote job's Snakemake): not added twice
    assert environ["PATH"] == f"{venv_bin}:/usr/bin:/bin"
    empty = {}
    put_command_first_on_path(empty, python)
    assert empty["PATH"] == str(venv_bin)


def test_a_file_that_is_not_executable_is_not_a_command(tmp_path):
    python = tmp_path / "bin" / "python"
    script(tmp_path / "bin" / "staticvec", mode=0o644)
    assert command_dir(str(python), distribution="no-such-distribution") is None


def test_otherwise_the_script_the_installed_distribution_recorded(tmp_path, monkeypatch):
    # pip install --user: the interpreter in /usr/bin, the script in ~/.local/bin, listed in the RECORD
    site = tmp_path / "home" / "lib" / "site-packages"
    info = site / "fakevec-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakevec\nVersion: 1.0\n")
    (info / "RECORD").write_text("../../bin/staticvec,,\nfakevec/__init__.py,,\n")
    user_bin = script(tmp_path / "home" / "bin" / "staticvec").parent
    monkeypatch.syspath_prepend(str(site))
    environ = {"PATH": "/usr/bin"}
    assert put_command_first_on_path(environ, str(tmp_path / "usr" / "bin" / "python3"), "fakevec") == user_bin
    assert environ["PATH"] == f"{user_bin}:/usr/bin"


def test_no_command_stops_with_one_line_saying_what_to_do(tmp_path):
    environ = {"PATH": "/usr/bin"}
    python = str(tmp_path / "bin" / "python")
    with pytest.raises(SystemExit) as stop:
        put_command_first_on_path(environ, python, distribution="no-such-distribution")
    message = str(stop.value)
    assert "\n" not in message and python in message and "make setup" in message
    assert environ == {"PATH": "/usr/bin"}


def test_the_installed_command_is_found_for_this_interpreter():
    found = command_dir(sys.executable)
    assert found is not None and (found / "staticvec").is_file()


def test_a_snakemake_without_staticvec_stops_before_any_job_with_one_line():
    # `import staticvec` fails in this Snakemake's interpreter (None in sys.modules: ModuleNotFoundError)
    start = ("import sys; sys.modules['staticvec'] = None; sys.argv = ['snakemake', '-n', '--cores', '1']; "
             "from snakemake.cli import main; main()")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", start], cwd=REPO, capture_output=True, text=True, env=env)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 1
    assert len(lines) == 1 and "staticvec is not installed for" in lines[0] and "make setup" in lines[0], lines
