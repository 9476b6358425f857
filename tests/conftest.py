import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()

# use this checkout's package even when another copy is installed (git worktrees)
sys.path.insert(0, str(REPO / "workflow"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"offline data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch):
    # Config paths are relative to the repository root, as when Snakemake runs.
    monkeypatch.chdir(REPO)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models gain nothing from more threads, and spinning OpenMP threads crawl on a busy 2-core machine."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, shared_data) -> dict:
    """The whole workflow on tests/config/test.yaml, run once for the session (minutes) from a plain shell:
    {"results", "override" (the paths config), "data"}. Tests that change it say so. $STATICVEC_TINY_RUN_DIR
    keeps it in that directory between sessions: Snakemake still runs, redoing only what is out of date."""
    from workflow_fixtures import run_tiny_workflow

    kept = os.environ.get("STATICVEC_TINY_RUN_DIR")
    return run_tiny_workflow(Path(kept) if kept else tmp_path_factory.mktemp("e2e"), shared_data)
