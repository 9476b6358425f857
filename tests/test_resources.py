"""Resource registry: mirror lookup, checksum verification, downloads with retries and resume."""

import hashlib
import http.server
import lzma
import threading
from pathlib import Path

import pytest
import yaml

from staticvec.resources import MissingResourcesError, Registry, ResourceError, fetch, fetch_group


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def files(tmp_path):
    """A mirror with one plain file, one xz-compressed file (checksum of its content), and a registry."""
    mirror = tmp_path / "mirror"
    (mirror / "corpus").mkdir(parents=True)
    (mirror / "eval").mkdir()
    plain = b"alpha beta\n" * 10
    content = b"<doc id=\"1\">\nx\n</doc>\n" * 20
    (mirror / "eval" / "a.txt").write_bytes(plain)
    with lzma.open(mirror / "corpus" / "wiki_00.xz", "wb") as fh:
        fh.write(content)
    (tmp_path / "sums").write_text(f"{sha(content)}  corpus/wiki_00\n{sha(b'missing')}  corpus/wiki_01\n")
    registry = {
        "corp": {"path": "corpus", "checksums": "sums", "checksum_of": "content", "fetch": "member",
                 "url": "http://127.0.0.1:9/{member}"},
        "ev": {"path": "eval", "members": {"a.txt": {"sha256": sha(plain)}}, "checksum_of": "file", "url": None},
    }
    (tmp_path / "registry.yaml").write_text(yaml.safe_dump(registry))
    return {"root": tmp_path, "mirror": mirror, "plain": plain, "content": content,
            "registry": Registry.load(tmp_path / "registry.yaml", root=tmp_path)}


def test_members_and_checksums_are_read_from_the_registry(files):
    corp = files["registry"].group("corp")
    assert list(corp.members) == ["wiki_00", "wiki_01"]
    assert corp.members["wiki_00"].sha256 == sha(files["content"])
    assert corp.members["wiki_00"].urls == ["http://127.0.0.1:9/wiki_00"]
    assert [m.name for m in files["registry"].select("corp", ["wiki_0[0]"])] == ["wiki_00"]
    with pytest.raises(ResourceError, match="match no member"):
        files["registry"].select("corp", ["nothing*"])


def test_compressed_mirror_copy_is_verified_on_its_content_and_linked(files, tmp_path):
    member = files["registry"].group("corp").members["wiki_00"]
    target = fetch(member, files["mirror"], tmp_path / "data", allow_download=False)
    assert target == tmp_path / "data" / "corpus" / "wiki_00"
    assert target.is_symlink()
    with lzma.open(target) as fh:
        assert fh.read() == files["content"]


def test_corrupt_mirror_file_is_named_with_the_mismatch(files, tmp_path):
    (files["mirror"] / "eval" / "a.txt").write_bytes(files["plain"][:-3])  # truncated
    member = files["registry"].group("ev").members["a.txt"]
    with pytest.raises(ResourceError, match=r"a\.txt: sha256 mismatch.*corrupt, truncated"):
        fetch(member, files["mirror"], tmp_path / "data", allow_download=False)
    assert not (tmp_path / "data" / "eval" / "a.txt").exists()


def test_truncated_compressed_mirror_file_is_reported(files, tmp_path):
    path = files["mirror"] / "corpus" / "wiki_00.xz"
    path.write_bytes(path.read_bytes()[:40])
    member = files["registry"].group("corp").members["wiki_00"]
    with pytest.raises(ResourceError, match="wiki_00.xz: corrupt or truncated"):
        fetch(member, files["mirror"], tmp_path / "data", allow_download=False)


def test_every_missing_file_is_listed_in_one_error(files, tmp_path):
    (files["mirror"] / "corpus" / "wiki_00.xz").unlink()
    with pytest.raises(MissingResourcesError) as err:
        fetch_group("corp", files["registry"], files["mirror"], tmp_path / "data", allow_download=False)
    message = str(err.value)
    assert "2 input file(s) are missing" in message
    assert f"{files['mirror']}/corpus/wiki_00" in message and f"{files['mirror']}/corpus/wiki_01" in message


class _FlakyHandler(http.server.BaseHTTPRequestHandler):
    """Serves one payload; the first request fails mid-body, later ones honour Range."""
    payload = b""
    requests = []

    def do_GET(self):  # noqa: N802
        type(self).requests.append(self.headers.get("Range"))
        data = type(self).payload
        start = 0
        if self.headers.get("Range"):
            start = int(self.headers["Range"].split("=")[1].rstrip("-"))
            self.send_response(206)
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if len(type(self).requests) == 1:
            self.wfile.write(data[: len(data) // 3])  # connection drops
            self.wfile.flush()
            self.connection.close()
            return
        self.wfile.write(data[start:])

    def log_message(self, *args):
        pass


def test_download_retries_resumes_and_verifies(tmp_path):
    payload = bytes(range(256)) * 400
    _FlakyHandler.payload, _FlakyHandler.requests = payload, []
    server = http.server.HTTPServer(("127.0.0.1", 0), _FlakyHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        registry = {"g": {"path": "d", "members": {"f.bin": {"sha256": sha(payload)}},
                          "url": f"http://127.0.0.1:{server.server_port}/{{member}}"}}
        (tmp_path / "r.yaml").write_text(yaml.safe_dump(registry))
        member = Registry.load(tmp_path / "r.yaml", root=tmp_path).group("g").members["f.bin"]
        target = fetch(member, None, tmp_path / "data", allow_download=True, retries=2)
    finally:
        server.shutdown()
    assert target.read_bytes() == payload
    assert _FlakyHandler.requests[0] is None and _FlakyHandler.requests[1].startswith("bytes=")  # resumed
    assert not Path(f"{target}.part").exists()


def test_project_registry_matches_the_offline_mirror(repo_root, shared_data):
    registry = Registry.load(repo_root / "config" / "resources.yaml", root=repo_root)
    corpus = registry.group("enwiki-2015")
    assert len(corpus.members) == 400
    eval_groups = [g for g in registry.groups if g.startswith("eval-")]
    listed = sum(len(registry.group(g).members) for g in eval_groups)
    assert listed == sum(1 for _ in open(repo_root / "config" / "checksums" / "eval.sha256"))
    from staticvec.resources import find_in_mirror

    missing = [m.rel_path for g in registry.groups.values() for m in g.members.values()
               if g.id != "enwiki-20240601" and find_in_mirror(m, shared_data) is None]
    assert missing == []


def _mirror_without(tmp_path, shared_data, missing: str):
    """A mirror linking every top-level directory of the shared data except ``missing``."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for entry in shared_data.iterdir():
        if entry.name != missing:
            (mirror / entry.name).symlink_to(entry.resolve())
    return mirror


def _workflow(repo_root, mirror, download_dir, **targets):
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    config = load_config([repo_root / "config/config.yaml"])
    config["resources"].update(mirror=str(mirror), allow_download=False, download_dir=str(download_dir))
    if targets:
        config["targets"] = targets
    return Workflow(config, repo_root)


def test_plan_time_check_names_a_missing_evaluation_set(repo_root, shared_data, tmp_path):
    """An offline run whose mirror lacks the evaluation sets fails before any job, naming them
    (before, only the corpus was checked and the run died at the first evaluation job)."""
    w = _workflow(repo_root, _mirror_without(tmp_path, shared_data, "eval"), tmp_path / "dl")
    with pytest.raises(MissingResourcesError) as err:
        w.check_resources()
    assert "eval/" in str(err.value) and "corpus/" not in str(err.value)
    # the same mirror with the evaluation sets present passes
    _workflow(repo_root, shared_data, tmp_path / "dl").check_resources()


def test_input_groups_follow_the_selected_tables(repo_root, shared_data, tmp_path):
    everything = _workflow(repo_root, shared_data, tmp_path / "dl").input_groups()
    assert {"eval-similarity", "eval-classification"} <= set(everything)
    assert {"eval-lexicons", "eval-wordnet", "eval-conll2000", "eval-ud-ewt"} <= set(everything)  # retrofit rows, tagging tables
    intrinsic_only = _workflow(repo_root, shared_data, tmp_path / "dl", tables=["semglove_table1"]).input_groups()
    assert "eval-similarity" in intrinsic_only
    assert not {"eval-classification", "eval-conll2000", "eval-ud-ewt"} & set(intrinsic_only)
    assert len(intrinsic_only) < len(everything)
