"""``staticvec evaluate classify`` end to end on small planted data sets, and its config → flags mapping."""

import json

import numpy as np
import pytest

from staticvec.cli import build_parser, main
from staticvec.embeddings import Embeddings
from staticvec.dag.arguments import config_arguments

FILLER = [f"w{i}" for i in range(30)]
CUES = {"neg": ["dull", "awful"], "pos": ["great", "superb"], "NUM": ["many"], "HUM": ["who"]}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _sentence(rng, cue_words):
    words = list(rng.choice(FILLER, rng.integers(3, 9)))
    words.insert(int(rng.integers(0, len(words) + 1)), str(rng.choice(cue_words)))
    return " ".join(words)


@pytest.fixture()
def data_dir(tmp_path):
    rng = np.random.default_rng(0)
    d = tmp_path / "data"
    d.mkdir()
    (d / "rt-polarity.neg").write_text("".join(_sentence(rng, CUES["neg"]) + " \n" for _ in range(100)))
    (d / "rt-polarity.pos").write_text("".join(_sentence(rng, CUES["pos"]) + " \n" for _ in range(100)))
    for name, n in (("TREC.train", 160), ("TREC.test", 40)):
        lines = []
        for _ in range(n):
            coarse = str(rng.choice(["NUM", "HUM"]))
            lines.append(f"{coarse}:x {_sentence(rng, CUES[coarse]).capitalize()} ?\n")
        (d / name).write_text("".join(lines))
    return d


@pytest.fixture()
def vectors(tmp_path):
    words = FILLER + [w for cue in CUES.values() for w in cue]
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(len(words), 12)).astype(np.float32)
    for i, word in enumerate(words):  # class cues share a direction per class
        for k, cue in enumerate(CUES.values()):
            if word in cue:
                vecs[i, k] += 4.0
    path = tmp_path / "emb.txt"
    Embeddings(words, vecs).save(path)
    return path


def test_classify_writes_scores_per_dataset_and_seed(data_dir, vectors, tmp_path, capsys):
    out = tmp_path / "result.json"
    code = main([
        "evaluate", "classify", "--vectors", str(vectors), "--data-dir", str(data_dir), "--datasets", "mr", "trec",
        "--seeds", "1", "2", "--out", str(out), "--device", "cpu",
        "--filters", "8", "--batch-size", "16", "--epochs", "3", "5", "--learning-rates", "0.003", "0.01",
    ])
    assert code == 0
    result = json.loads(out.read_text())
    assert set(result["datasets"]) == {"mr", "trec"}
    mr, trec = result["datasets"]["mr"], result["datasets"]["trec"]
    assert mr["sizes"] == {"train": 120, "validation": 40, "test": 40}
    assert trec["sizes"] == {"train": 144, "validation": 16, "test": 40}
    assert trec["classes"] == ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]
    for r in (mr, trec):
        assert [run["seed"] for run in r["runs"]] == [1, 2]
        for run in r["runs"]:
            assert run["epochs"] in (3, 5) and run["learning_rate"] in (0.003, 0.01)
            assert len(run["grid"]) == 4
        accuracies = [run["test"]["accuracy"] for run in r["runs"]]
        assert r["accuracy"]["mean"] == pytest.approx(np.mean(accuracies))
        assert r["accuracy"]["std"] == pytest.approx(np.std(accuracies, ddof=1))
        assert r["accuracy"]["mean"] >= 0.9
    assert mr["oov"]["oov_tokens"] == 0
    assert (trec["oov"]["oov_tokens"], trec["oov"]["oov_types"]) == (200, 1)  # "?" has no vector
    assert result["average"]["datasets"] == ["mr", "trec"]
    # the tables sheet reads <set>.f1 / <set>.accuracy from the 'results' mapping
    from staticvec.report.tables import result_value
    assert result_value(result, "trec.f1")[0] == trec["macro_f1"]["mean"]
    assert result_value(result, "mr.accuracy")[0] == mr["accuracy"]["mean"]
    assert "mr" in capsys.readouterr().out


def test_oov_words_are_counted(data_dir, vectors, tmp_path):
    (data_dir / "rt-polarity.pos").write_text("great unknownword\nsuperb\ngreat\nsuperb\n")
    (data_dir / "rt-polarity.neg").write_text("awful\ndull\nawful\ndull\n")
    out = tmp_path / "r.json"
    main([
        "evaluate", "classify", "--vectors", str(vectors), "--data-dir", str(data_dir), "--datasets", "mr", "--seeds", "1",
        "--out", str(out), "--filters", "2", "--epochs", "1", "--learning-rates", "0.01", "--split", "0.5", "0.25", "0.25",
    ])
    oov = json.loads(out.read_text())["datasets"]["mr"]["oov"]
    assert (oov["tokens"], oov["oov_tokens"], oov["types"], oov["oov_types"]) == (9, 1, 5, 1)


def test_a_split_with_an_empty_part_is_an_error(data_dir, vectors, tmp_path, capsys):
    (data_dir / "rt-polarity.pos").write_text("great\nsuperb\n")
    (data_dir / "rt-polarity.neg").write_text("awful\ndull\n")
    code = main([
        "evaluate", "classify", "--vectors", str(vectors), "--data-dir", str(data_dir), "--datasets", "mr",
        "--out", str(tmp_path / "r.json"), "--split", "0.5", "0.25", "0.25",
    ])
    assert code == 2 and "empty" in capsys.readouterr().err


def test_malformed_data_line_is_a_clean_error(data_dir, vectors, tmp_path, capsys):
    (data_dir / "TREC.test").write_text("NUM:x how many ?\nno label here\n")
    code = main(["evaluate", "classify", "--vectors", str(vectors), "--data-dir", str(data_dir), "--datasets", "trec",
                 "--out", str(tmp_path / "r.json")])
    assert code == 2
    assert "TREC.test, line 2" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_an_interrupted_job_resumes_from_its_finished_runs(data_dir, vectors, tmp_path):
    out = tmp_path / "r.json"
    good_test = (data_dir / "TREC.test").read_text()
    (data_dir / "TREC.test").write_text("broken\n")
    args = [
        "evaluate", "classify", "--vectors", str(vectors), "--data-dir", str(data_dir), "--datasets", "mr", "trec", "--seeds", "1",
        "--out", str(out), "--filters", "4", "--epochs", "2", "--learning-rates", "0.01",
    ]
    assert main(args) == 2  # MR finished, TREC failed
    partial = tmp_path / "r.json.partial.jsonl"
    records = [json.loads(line) for line in partial.read_text().splitlines()]
    assert [(r["dataset"], r["seed"]) for r in records] == [("mr", 1)]
    records[0]["run"]["test"]["accuracy"] = 0.123  # mark the saved run to see it reused
    partial.write_text(json.dumps(records[0]) + "\n")
    (data_dir / "TREC.test").write_text(good_test)
    assert main(args) == 0
    result = json.loads(out.read_text())
    assert result["datasets"]["mr"]["accuracy"]["mean"] == 0.123
    assert not partial.exists()
    # other settings: the saved run is not reused
    partial.write_text(json.dumps(records[0]) + "\n")
    assert main([*args[:-1], "0.02"]) == 0
    assert json.loads(out.read_text())["datasets"]["mr"]["accuracy"]["mean"] != 0.123


def test_config_arguments_round_trip_through_the_parser():
    config = {
        "seeds": [1, 2],
        "device": "cpu",
        "classification": {
            "datasets": ["mr", "sst5"], "seeds": [7, 8, 9], "epochs": [2, 4], "learning_rates": [0.001],
            "refit": False, "select_by": "accuracy", "split": [0.5, 0.25, 0.25], "threads": 2,
        },
    }
    args = build_parser().parse_args(["evaluate", "classify", "--vectors", "v", "--data-dir", "d", "--out", "o",
                                      *config_arguments(config).split()])
    assert args.datasets == ["mr", "sst5"] and args.seeds == [7, 8, 9] and args.device == "cpu"
    assert args.epochs == [2, 4] and args.learning_rates == [0.001] and args.refit is False
    assert args.select_by == "accuracy" and args.split == [0.5, 0.25, 0.25]
    assert args.filters == 100  # not in the section: the paper's default
    config["classification"]["seeds"] = None
    args = build_parser().parse_args(["evaluate", "classify", "--vectors", "v", "--data-dir", "d", "--out", "o",
                                      *config_arguments(config).split()])
    assert args.seeds == [1, 2]
