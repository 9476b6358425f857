"""A newcomer without ../shared: what `make run` meets first (docs/downloads.md says the same), and the Makefile's
HF_HUB_OFFLINE for a config whose teachers download by name (docs/paper-scale.md).

The default config runs with no mirror and with every URL of the resource registry pointing at a local HTTP server
(loopback, stopped when the test ends) that stands in for the sources: the start-up check that Snakemake runs before
any job (`W.check_resources()` in workflow/rules/common.smk) must stop the run naming exactly the inputs no source
serves, where to put them and how to obtain them; with those supplied, a group downloads from the stand-in and is
verified against the registry's checksums, and a corrupted download is refused naming the file.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from workflow_fixtures import REPO, plain_env

SHARED_DATA = REPO.parent / "shared" / "data"
# the inputs of the default config that no source serves (config/resources.yaml's `manual` notes)
BY_HAND = {"eval-wordnet": 18, "eval-categorization": 1}


class _Sources(http.server.BaseHTTPRequestHandler):
    """Serves ``files`` (URL path -> bytes); 404 for anything else; records each path asked for."""

    files: dict[str, bytes] = {}
    asked: list[str] = []

    def do_GET(self):  # noqa: N802
        type(self).asked.append(self.path)
        data = type(self).files.get(self.path)
        if data is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture
def sources():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sources)
    _Sources.files, _Sources.asked = {}, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Sources
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _local_registry(base: str, tmp: Path) -> Path:
    """config/resources.yaml with every https:// URL moved under ``base`` (host kept as the first path part)."""
    text = (REPO / "config/resources.yaml").read_text(encoding="utf-8")
    moved = re.sub(r"https://", f"{base}/", text)
    assert moved != text
    path = tmp / "resources.yaml"
    path.write_text(moved, encoding="utf-8")
    return path


def _newcomer_overlay(tmp: Path, registry: Path, mirror) -> Path:
    overlay = tmp / "newcomer.yaml"
    overlay.write_text(yaml.safe_dump({"resources": {"registry": str(registry), "mirror": mirror,
                                                      "download_dir": str(tmp / "data")},
                                       "results_dir": str(tmp / "results")}))
    return overlay


def test_the_default_without_a_mirror_stops_at_start_up_naming_what_to_supply(sources, tmp_path):
    base, handler = sources
    registry = _local_registry(base, tmp_path)
    overlay = _newcomer_overlay(tmp_path, registry, str(tmp_path / "no-such-mirror"))
    done = subprocess.run([sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1",
                           "--configfile", "config/config.yaml", str(overlay)],
                          cwd=REPO, env=plain_env(), capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert f"{sum(BY_HAND.values())} input file(s) are missing" in out, out[-3000:]
    # WordNet: one line for its 18 files, where (the download directory, since the mirror does not exist) and how
    assert f"eval-wordnet, {BY_HAND['eval-wordnet']} files" in out
    assert f"put them under {tmp_path / 'data'}/eval/wordnet/" in out
    assert "wordnet-base and wordnet-sense-index" in out
    assert f"eval-categorization/esslli2008_1a_nouns.tsv: put it at {tmp_path / 'data'}/eval/categorization/" in out
    assert "cran/wordspace" in out
    assert "does not exist here" in out and "resources.mirror" in out
    # nothing downloadable is reported missing, and the check itself downloads nothing
    assert "eval-similarity" not in out and "enwiki-2015" not in out
    assert handler.asked == []
    assert not (tmp_path / "data").exists()


def _served(base: str, registry_path: Path, group: str, mirror: Path) -> dict[str, bytes]:
    """URL path -> the mirror's bytes of each member of ``group`` (the stand-in serves what the source serves)."""
    from staticvec.files import open_any
    from staticvec.resources import Registry, find_in_mirror

    registry = Registry.load(registry_path, REPO)
    files = {}
    for member in registry.select(group):
        source = find_in_mirror(member, mirror)
        assert source is not None, member.rel_path
        with open_any(source, "rb") as fh:  # the corpus files are xz in the mirror, plain at the source
            data = fh.read()
        for url in member.urls:
            files[url.removeprefix(base)] = data
    return files


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"the real files to serve are in {SHARED_DATA}")
def test_with_the_manual_files_supplied_a_group_downloads_from_the_sources_and_verifies(sources, tmp_path):
    base, handler = sources
    registry = _local_registry(base, tmp_path)
    handler.files = _served(base, registry, "eval-similarity", SHARED_DATA)
    data = tmp_path / "data"
    command = [sys.executable, "-m", "staticvec", "resources", "fetch", "--registry", str(registry),
               "--group", "eval-similarity", "--download-dir", str(data), "--allow-download", "--retries", "0"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    fetched = sorted(p.name for p in (data / "eval" / "similarity").iterdir())
    assert len(fetched) == len(handler.files) and all(not (data / "eval/similarity" / n).is_symlink() for n in fetched)
    assert len(handler.asked) == len(handler.files)  # each file once: no mirror was consulted, nothing retried

    # the start-up check passes once the by-hand files are where its message said (a hand-placed file is verified)
    for rel in ("eval/wordnet", "eval/categorization/esslli2008_1a_nouns.tsv"):
        source = SHARED_DATA / rel
        target = data / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    config = load_config([REPO / "config/config.yaml", _newcomer_overlay(tmp_path, registry, None)])
    Workflow(config, REPO).check_resources()  # raises, listing what is missing, if anything is

    # a corrupted download is refused, naming the file and what to do; nothing is left in its place
    shutil.rmtree(data / "eval" / "similarity")
    first = next(iter(handler.files))
    handler.files[first] = handler.files[first][:-10]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "sha256 mismatch" in done.stderr and "delete it and fetch again" in done.stderr, done.stderr[-2000:]


def _hub_offline_under_make(*make_args: str) -> str:
    """The HF_HUB_OFFLINE a recipe of the Makefile sees for these make arguments (environment without one)."""
    show = "show-hub-offline:\n\t@echo $$HF_HUB_OFFLINE\n"
    env = {k: v for k, v in plain_env().items() if k != "HF_HUB_OFFLINE"}
    done = subprocess.run(["make", "-s", "-f", "Makefile", "-f", "-", "show-hub-offline", f"VENV={sys.prefix}",
                           *make_args], input=show, cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the Makefile runs the .venv's Python")
def test_make_lets_a_config_that_downloads_its_teachers_reach_the_hub():
    assert _hub_offline_under_make() == "1"  # the default: PyPI and local teachers, the hub never asked
    assert _hub_offline_under_make("CONFIG=config/paper.yaml") == "0"  # teacher.offline: false
    assert _hub_offline_under_make("SNAKEMAKE_ARGS=--configfile config/paper.yaml") == "0"
    assert _hub_offline_under_make("CONFIG=config/claims10m.yaml") == "1"
    # an air-gapped node with a mirrored HF_HOME says so, and wins
    assert _hub_offline_under_make("CONFIG=config/paper.yaml", "HF_HUB_OFFLINE=1") == "1"


def test_the_hub_setting_reads_the_merged_config_in_snakemakes_order(tmp_path):
    from staticvec.hub_offline import configfiles_of, main

    assert configfiles_of(["--cores", "2", "--configfile", "a.yaml", "b.yaml", "-n"]) == ["a.yaml", "b.yaml"]
    assert configfiles_of(["--configfile=a.yaml", "t.pdf"]) == ["a.yaml"]
    online = tmp_path / "online.yaml"
    online.write_text("teacher: {offline: false}\n")
    offline = tmp_path / "offline.yaml"
    offline.write_text("teacher: {offline: true}\n")
    for args, want in (([str(REPO / "config/config.yaml")], "1"),
                       ([str(REPO / "config/config.yaml"), str(online)], "0"),
                       ([str(REPO / "config/config.yaml"), str(online), "--", "--configfile", str(offline)], "1"),
                       ([str(REPO / "config/config.yaml"), "", "--", "--configfile", str(online)], "0")):
        import contextlib
        import io

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            main(args)
        assert printed.getvalue().strip() == want, args
