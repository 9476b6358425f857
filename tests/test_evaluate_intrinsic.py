"""The evaluation suite end to end: evaluate() on a small data directory, the CLI, bad input."""

import json
from pathlib import Path

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.embeddings import Embeddings
from staticvec.evaluate.intrinsic import evaluate

DATA = Path("../shared/data/eval")


def small_data_dir(root: Path) -> Path:
    (root / "similarity").mkdir(parents=True)
    (root / "analogy").mkdir()
    (root / "categorization").mkdir()
    (root / "similarity/EN-WS-353-ALL.txt").write_text("king\tqueen\t8\nman\tking\t9\nking\tapple\t1\nKing\tMissing\t5\n")
    (root / "analogy/questions-words.txt").write_text(": family\nman king woman queen\nman king woman princess\n")
    (root / "categorization/ap.csv").write_text(
        ",category,word\n0,male,king\n1,male,man\n2,male,\n3,female,queen\n4,female,woman\n5,fruit,apple\n6,fruit,pear\n")
    return root


def royal_embedding() -> Embeddings:
    e = np.eye(5, dtype=np.float32)
    words = {"man": e[0], "woman": e[1], "king": e[0] + e[2], "queen": e[1] + e[2], "apple": e[3], "pear": e[3] + 0.2 * e[4]}
    return Embeddings(list(words), np.stack(list(words.values())))


def test_evaluate_on_a_small_data_directory(tmp_path):
    data = small_data_dir(tmp_path / "eval")
    result = evaluate(royal_embedding(), ["ws353", "google", "ap", "neighbours"], data, oov="drop", neighbour_words=["king"],
                      topn=2, device="cpu")
    assert (result["oov_policy"], result["lowercase"], result["max_vocab"], result["vocab_size"], result["dim"]) == \
        ("drop", True, None, 6, 5)
    ws = result["results"]["ws353"]
    assert (ws["metric"], ws["found"], ws["total"], ws["score"]) == ("spearman", 3, 4, pytest.approx(1.0))
    assert ws["oov_policy"] == "drop" and ws["task"] == "similarity"
    google = result["results"]["google"]
    assert (google["score"], google["found"], google["total"], google["semantic"]) == (1.0, 1, 2, 1.0)
    ap = result["results"]["ap"]
    assert (ap["score"], ap["found"], ap["classes"]) == (1.0, 6, 3)
    # cos(king, man) = 1/sqrt2 > cos(king, queen) = 1/2 > 0
    assert [w for w, _ in result["results"]["neighbours"]["neighbours"]["king"]] == ["man", "queen"]


def test_cli_writes_result_json(tmp_path):
    data = small_data_dir(tmp_path / "eval")
    vectors = tmp_path / "v.bin"
    royal_embedding().save(vectors)
    out = tmp_path / "out" / "result.json"
    code = main(["evaluate", str(vectors), "--out", str(out), "--data-dir", str(data), "--oov", "mean",
                 "--tasks", "ws353", "google", "--device", "cpu", "--threads", "1"])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["vectors"] == str(vectors) and result["oov_policy"] == "mean"
    assert set(result["results"]) == {"ws353", "google"}
    assert result["results"]["ws353"]["scored"] == 4 and result["results"]["google"]["scored"] == 2


@pytest.mark.parametrize("content, problem", [
    (b"2 3\nking 1 2 3\nqueen 1 2\n", "line 3: expected 3 values"),
    (b"two 3\nking 1 2 3\n", "line 1: expected a header"),
    (b"2 2\nking 1 2\nking 3 4\n", "line 3: duplicate word 'king'"),
    (b"1 2\nking 1 x\n", "line 2: non-numeric value 'x'"),
    (b"1 2\nk\xffng 1 2\n", "line 2: invalid UTF-8"),
])
def test_cli_reports_a_bad_vector_file_by_file_and_line(tmp_path, capsys, content, problem):
    vectors = tmp_path / "v.txt"
    vectors.write_bytes(content)
    code = main(["evaluate", str(vectors), "--out", str(tmp_path / "r.json"), "--data-dir", str(tmp_path), "--tasks", "ws353"])
    assert code == 2
    err = capsys.readouterr().err
    assert str(vectors) in err and problem in err
    assert not (tmp_path / "r.json").exists()


def test_cli_reports_a_malformed_dataset_by_file_and_line(tmp_path, capsys):
    data = small_data_dir(tmp_path / "eval")
    (data / "similarity/EN-WS-353-ALL.txt").write_text("king\tqueen\t9\nman woman\n")
    vectors = tmp_path / "v.txt"
    royal_embedding().save(vectors)
    code = main(["evaluate", str(vectors), "--out", str(tmp_path / "r.json"), "--data-dir", str(data), "--tasks", "ws353"])
    assert code == 2
    assert "EN-WS-353-ALL.txt, line 2" in capsys.readouterr().err


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/eval not available")
def test_full_suite_on_the_shared_data(tmp_path):
    """Every data set but Battig (same code as AP, 5,231 items: seconds of clustering) runs end to end."""
    from staticvec.evaluate.datasets import DATASETS, load_dataset

    words = set()
    for name in ("ws353", "simlex999", "google", "ap"):
        data = load_dataset(name, DATA)
        for item in getattr(data, "pairs", []) + getattr(data, "questions", []) + getattr(data, "words", []):
            words.update(w.lower() for w in ((item,) if isinstance(item, str) else item) if " " not in w)
    words = sorted(words)
    emb = Embeddings(words, np.random.default_rng(0).standard_normal((len(words), 20)).astype(np.float32))
    names = [n for n in DATASETS if n != "battig"]
    result = evaluate(emb, names + ["neighbours"], DATA, oov="mean", device="cpu")
    assert set(result["results"]) == set(names) | {"neighbours"}
    for name, entry in result["results"].items():
        if name == "neighbours":
            continue
        assert entry["total"] == DATASETS[name].records
        assert entry["scored"] == entry["total"]  # mean policy: everything scored
        assert entry["score"] is not None
    assert result["results"]["ws353"]["found"] == 353 and result["results"]["rw"]["found"] < 2034
