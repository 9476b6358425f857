"""Every output is the same bytes when the workflow runs again (logs, benchmarks and the JSON field `timing`
aside: staticvec.same_outputs), so that two runs, or a local and a cluster run, can be compared file by file.

The unit tests pin each cause found once in two runs of the tiny config (gzip headers with a name and an mtime,
torch archives named after their temporary file, PDFs with their creation date, Model2Vec cards named after a
temporary directory, timings beside the results); the slow test runs the tiny config a second time beside the
session's run (conftest.tiny_run) and compares every file."""

import gzip
import json
import time

import numpy as np
import pytest

from staticvec.files import TIMING_KEY, atomic_open, torch_save, without_timing
from staticvec.same_outputs import differences


def test_a_gzip_file_written_twice_is_the_same_bytes(tmp_path):
    a, b = tmp_path / "a" / "00000.tsv.gz", tmp_path / "b" / "00000.tsv.gz"
    with atomic_open(a, "wt") as fh:
        fh.write("the\tcat\n")
    time.sleep(1.1)  # gzip's mtime field has a resolution of one second
    with atomic_open(b, "wt") as fh:
        fh.write("the\tcat\n")
    assert a.read_bytes() == b.read_bytes()
    header = a.read_bytes()[:10]
    assert header[3] & 0x08 == 0 and header[4:8] == b"\0\0\0\0"  # no FNAME flag, mtime 0
    assert gzip.decompress(a.read_bytes()) == b"the\tcat\n"


def test_a_torch_file_is_the_same_bytes_whatever_its_temporary_name(tmp_path):
    torch = pytest.importorskip("torch")
    state = {"w": torch.arange(6.0).reshape(2, 3), "meta": {"epochs": 1}}
    torch_save(state, tmp_path / "one.pt")
    torch_save(state, tmp_path / "two" / "mlm_head.pt")
    assert (tmp_path / "one.pt").read_bytes() == (tmp_path / "two" / "mlm_head.pt").read_bytes()
    assert torch.equal(torch.load(tmp_path / "one.pt", weights_only=True)["w"], state["w"])


def test_a_pdf_figure_carries_no_creation_date(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from staticvec.report.figures import save_figure  # the writer of every figure (claims' forest plots too)

    outs = []
    for name in ("a", "b"):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3])
        save_figure(fig, "claims", tmp_path / f"{name}.pdf", tmp_path / f"{name}.png")
        outs.append(((tmp_path / f"{name}.pdf").read_bytes(), (tmp_path / f"{name}.png").read_bytes()))
        time.sleep(1.1)
    assert outs[0] == outs[1]
    assert b"/CreationDate" not in outs[0][0] and b"claims" in outs[0][0]


def test_a_model2vec_card_names_the_target_not_the_temporary_directory(tmp_path):
    pytest.importorskip("model2vec")
    from staticvec.embeddings import Embeddings

    Embeddings(["king", "queen"], np.eye(2, 4, dtype=np.float32)).save(tmp_path / "my_model", "model2vec")
    card = (tmp_path / "my_model" / "README.md").read_text()
    assert "my_model" in card and ".tmp" not in card


def test_timing_is_skipped_by_name_at_any_depth_and_nothing_else_is(tmp_path):
    record = {"score": 0.5, TIMING_KEY: {"seconds": 3.2}, "runs": [{"lr": 1, TIMING_KEY: {"seconds": 1}}]}
    assert without_timing(record) == {"score": 0.5, "runs": [{"lr": 1}]}
    for run, seconds, score in (("a", 3.2, 0.5), ("b", 9.9, 0.5)):
        (tmp_path / run / "logs").mkdir(parents=True)
        (tmp_path / run / "logs" / "x.log").write_text(f"took {seconds} s")
        (tmp_path / run / "eval.json").write_text(json.dumps({"score": score, "vectors": str(tmp_path / run / "v.bin"),
                                                              TIMING_KEY: {"seconds": seconds}}))
    assert differences(tmp_path / "a", tmp_path / "b") == []  # timings, logs and the runs' own paths aside
    (tmp_path / "b" / "eval.json").write_text(json.dumps({"score": 0.6, "vectors": str(tmp_path / "b" / "v.bin")}))
    assert differences(tmp_path / "a", tmp_path / "b") == [("eval.json", "content differs (timing aside)")]
    (tmp_path / "b" / "extra.tsv").write_text("x\n")
    assert ("extra.tsv", f"only in {tmp_path / 'b'}") in differences(tmp_path / "a", tmp_path / "b")


@pytest.mark.slow  # a second run of the tiny config: minutes
def test_two_runs_of_the_tiny_config_are_the_same_bytes_file_by_file(tiny_run, tmp_path_factory, shared_data):
    from workflow_fixtures import run_tiny_workflow

    second = run_tiny_workflow(tmp_path_factory.mktemp("e2e-again"), shared_data)
    # the session's run may also hold what other tests made of it (README commands: exports, a report); every
    # file of the second run must be in it, the same bytes
    # each run's directory (results, downloads, the paths config) read as <RUN>
    found = differences(tiny_run["results"], second["results"], roots_a=(str(tiny_run["results"].parent),),
                        roots_b=(str(second["results"].parent),), more_in_a=True)
    # the run manifest's config hash covers the config's paths (results_dir, download_dir), which differ between
    # two runs in two directories: that hash (and the caption quoting it) aside, the manifest is the same too
    if ("manifest.json", "content differs (timing aside)") in found:
        strip = lambda p: {k: v for k, v in without_timing(json.loads(p.read_text())).items()  # noqa: E731
                           if k not in ("config_hash", "provenance_caption")}
        assert strip(tiny_run["results"] / "manifest.json") == strip(second["results"] / "manifest.json")
        found.remove(("manifest.json", "content differs (timing aside)"))
    assert not found, f"{len(found)} files differ: {found[:30]}"
