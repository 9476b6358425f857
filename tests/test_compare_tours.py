"""benchmarks/compare_tours.py, the side-by-side of two runs' job time and vectors: on two hand-made results
folders, the sums, the jobs only one run has and the vector files that differ are the ones made."""

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def compare_tours():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import compare_tours

        yield compare_tours
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


def _bench(root: Path, job: str, *seconds: float) -> None:
    path = root / "benchmarks" / f"{job}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{s}\t0:00:01\t1.0\n" for s in seconds)
    path.write_text("s\th:m:s\tmax_rss\n" + rows)


def _file(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_job_time_and_vectors_side_by_side(tmp_path, compare_tours):
    old, new = tmp_path / "old", tmp_path / "new"
    _bench(old, "corpus/tokenize/AA-wiki_00", 2.0)
    _bench(new, "corpus/tokenize/AA-wiki_00", 1.5)
    _bench(old, "train/tokenlearn/seed1", 100.0, 20.0)  # two rows (repeats): summed
    _bench(new, "train/tokenlearn/seed1", 60.0)
    _bench(old, "train/glove/seed1", 5.0)
    _bench(new, "train/tokenlearn_distill/minilm", 40.0)
    _file(old, "embeddings/glove/seed1/vectors.bin", b"abc")
    _file(new, "embeddings/glove/seed1/vectors.bin", b"abc")
    _file(old, "embeddings/tl/seed1/tokenlearn/model.safetensors", b"x")
    _file(new, "embeddings/tl/seed1/tokenlearn/model.safetensors", b"y")
    _file(old, "post/glove-retro/seed1/vectors.bin", b"r")
    _file(old, "embeddings/glove/seed1/record.json", b"{}")  # not a vector file
    _file(new, "embeddings/glove/seed1/record.json", b"{\"t\": 1}")
    c = compare_tours.compare(old, new)
    assert c["all"] == {"old_jobs": 3, "old_s": 127.0, "new_jobs": 3, "new_s": 101.5}
    assert c["common"] == {"jobs": 2, "old_s": 122.0, "new_s": 61.5}
    assert c["stages"] == {"corpus": {"jobs": 1, "old_s": 2.0, "new_s": 1.5},
                           "train": {"jobs": 1, "old_s": 120.0, "new_s": 60.0}}
    assert c["only_old"] == {"train/glove/seed1": 5.0}
    assert c["only_new"] == {"train/tokenlearn_distill/minilm": 40.0}
    assert c["vectors"] == {"files": 3, "identical": 1, "differ": ["embeddings/tl/seed1/tokenlearn/model.safetensors"],
                            "only_old": ["post/glove-retro/seed1/vectors.bin"], "only_new": []}
    assert compare_tours.main([str(old), str(new), "--out", str(tmp_path / "out")]) == 0
    assert json.loads((tmp_path / "out" / "comparison.json").read_text()) == json.loads(json.dumps(c))
    text = (tmp_path / "out" / "comparison.md").read_text()
    assert "| the 2 jobs both ran | 122.0 s | 61.5 s | 0.504 |" in text
    assert "- differs: `embeddings/tl/seed1/tokenlearn/model.safetensors`" in text


def test_a_folder_without_benchmarks_is_named(tmp_path, compare_tours):
    with pytest.raises(SystemExit, match="no benchmarks folder"):
        compare_tours.job_times(tmp_path)
    _file(tmp_path, "benchmarks/x.tsv", b"a\tb\n1\t2\n")
    with pytest.raises(SystemExit, match="x.tsv: not a Snakemake benchmark file"):
        compare_tours.job_times(tmp_path)
