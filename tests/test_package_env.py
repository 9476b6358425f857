"""Importing the package points numba's kernel cache outside the source tree."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _cache_dir(env: dict) -> str:
    code = "import staticvec, numba.core.config as c; print(c.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_numba_cache_is_outside_the_source_tree(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(REPO / "workflow"))
    assert _cache_dir(env) == str(tmp_path / "staticvec" / "numba")
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")  # the user's choice wins
    assert _cache_dir(env) == str(tmp_path / "mine")
