"""The code passes the project's ruff configuration (pyproject.toml [tool.ruff])."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_code_passes_ruff():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    done = subprocess.run([ruff, "check", "workflow", "tests", "benchmarks"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout[-4000:]
