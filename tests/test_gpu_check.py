"""benchmarks/gpu_check.py, the GPU run of issue 39, kept from rotting on machines without a GPU: its smoke mode
runs every section on the CPU, a section that overruns is stopped and the next one runs, the synthetic text has
the shape it claims, and every CUDA test lives in a file the GPU run selects."""

import json
import re
import sys
import time

import numpy as np
import pytest
from cuda_fixtures import CUDA_TEST_FILES

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the smoke run sets one thread; restored after the module


@pytest.fixture(scope="module")
def gpu_check(repo_root):
    sys.path.insert(0, str(repo_root / "benchmarks"))
    import gpu_check

    return gpu_check


def test_smoke_mode_runs_every_section_and_writes_its_figures(gpu_check, tmp_path):
    assert gpu_check.main(["--smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "gpu_check.json").read_text())
    assert [s["name"] for s in data["sections"]] == [name for name, *_ in gpu_check.SECTIONS]
    for section in data["sections"]:
        assert section["status"] == "ok", section
        assert section["figures"], section["name"]
        for f in section["figures"]:
            assert f["value"] > 0 and f["unit"].endswith("/s") and f["shape"], f
    names = {f["name"] for s in data["sections"] for f in s["figures"]}
    assert {"bare forward (SDPA)", "sentence pass (sentence context, layers [-1], sentence vectors)",
            "paragraph pass (paragraph context, layers [-1], sentence vectors)",
            "ase pass (sentence context, layers [], no special tokens, ASE sums)",
            "semglove pass (sentence context, layers [], attention window 10, MLM top-11 masked whole_word)"} <= names
    table = (tmp_path / "gpu_check.md").read_text()
    assert table.count("\n| ") == 2 + sum(len(s["figures"]) for s in data["sections"])  # header, rule, one row each


def test_an_overrunning_section_is_stopped_and_the_next_one_runs(gpu_check, tmp_path, monkeypatch):
    def slow(ctx, section, budget):
        section["figures"].append(gpu_check.figure("before the stop", 1.0, "things/s", "none"))
        time.sleep(30)

    def fails(ctx, section, budget):
        raise ValueError("broken")

    def quick(ctx, section, budget):
        section["figures"].append(gpu_check.figure("quick", 2.0, "things/s", "none"))

    monkeypatch.setattr(gpu_check, "LIMIT_SLACK", 0.0)
    monkeypatch.setattr(gpu_check, "SECTIONS", [("slow", 1, 0.5, slow), ("fails", 1, 1, fails), ("quick", 1, 1, quick)])
    started = time.perf_counter()
    assert gpu_check.main(["--smoke", "--out", str(tmp_path)]) == 1
    assert time.perf_counter() - started < 20
    sections = json.loads((tmp_path / "gpu_check.json").read_text())["sections"]
    assert [s["status"] for s in sections] == ["stopped after 1 s", "error", "ok"]
    assert sections[0]["figures"][0]["name"] == "before the stop"  # what was measured before the stop is kept
    assert "ValueError: broken" in sections[1]["error"]
    table = (tmp_path / "gpu_check.md").read_text()
    assert "Not complete: slow: stopped after 1 s; fails: error (ValueError: broken)." in table


def test_synthetic_words_split_into_the_pieces_drawn_for_them(gpu_check):
    text = gpu_check.SyntheticText(seed=3)
    assert len(text.vocab) == gpu_check.BERT_VOCAB == len(set(text.vocab))
    sentences = text.sentences(3000)
    lengths = np.array([len(s) for s in sentences])
    expected = np.dot(np.arange(10, 41), gpu_check.WORDS_PER_SENTENCE) / sum(gpu_check.WORDS_PER_SENTENCE)
    assert lengths.min() >= 10 and lengths.max() <= 40 and abs(lengths.mean() - expected) < 0.5
    words = [w for s in sentences[:300] for w in s]
    pieces = [len(text.tokenizer.tokenize(w)) for w in words]
    drawn = [1 + len(re.sub("[a-m]", "", w)) // 3 for w in words]  # the stem, then three-letter continuations
    assert pieces == drawn and "[UNK]" not in text.tokenizer.tokenize(" ".join(words))
    shares = np.bincount(pieces, minlength=6)[1:] / len(pieces)
    np.testing.assert_allclose(shares, list(gpu_check.PIECES_PER_WORD.values()), atol=0.02)


def test_every_cuda_test_is_in_a_file_the_gpu_run_selects(repo_root):
    marked = sorted(f"tests/{p.name}" for p in (repo_root / "tests").glob("test_*.py")
                    if re.search(r"^@(cuda_test|pytest\.mark\.cuda)\b", p.read_text(), re.M))
    assert marked == sorted(CUDA_TEST_FILES)
    script = (repo_root / "benchmarks/gpu_check.sh").read_text()
    assert "CUDA_TEST_FILES" in script and "-m cuda" in script
