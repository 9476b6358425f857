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
    code = main(["evaluate", "intrinsic", str(vectors), "--out", str(out), "--data-dir", str(data), "--oov", "mean",
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
    code = main(["evaluate", "intrinsic", str(vectors), "--out", str(tmp_path / "r.json"), "--data-dir", str(tmp_path), "--tasks", "ws353"])
    assert code == 2
    err = capsys.readouterr().err
    assert str(vectors) in err and problem in err
    assert not (tmp_path / "r.json").exists()


def test_cli_reports_a_malformed_dataset_by_file_and_line(tmp_path, capsys):
    data = small_data_dir(tmp_path / "eval")
    (data / "similarity/EN-WS-353-ALL.txt").write_text("king\tqueen\t9\nman woman\n")
    vectors = tmp_path / "v.txt"
    royal_embedding().save(vectors)
    code = main(["evaluate", "intrinsic", str(vectors), "--out", str(tmp_path / "r.json"), "--data-dir", str(data), "--tasks", "ws353"])
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


def _without_seconds(value):
    from staticvec.files import without_timing

    return without_timing(value)


def _eval_words() -> list[str]:
    from staticvec.evaluate.datasets import DATASETS, load_dataset

    words = {}
    for name in DATASETS:
        data = load_dataset(name, DATA)
        for attr in ("pairs", "questions", "words"):
            for item in getattr(data, attr, []):
                for w in (item,) if isinstance(item, str) else item:
                    words.setdefault(w.lower())
        for rel in getattr(data, "relations", []):
            for x, y in rel.prototypes + rel.pairs:
                words.setdefault(x.lower())
                words.setdefault(y.lower())
    return [w for w in words if " " not in w]


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/eval not available")
def test_one_load_all_protocols_equals_the_old_path_bit_for_bit(monkeypatch):
    """The one-job path (evaluate_protocols: one load, data parsed once, condensed distances, our Spearman)
    gives exactly the scores of the old one (one evaluate() per protocol with scipy.stats.spearmanr and
    the full-matrix distances) on a fixed embedding, every data set included."""
    from scipy import stats

    from staticvec.evaluate import categorization, relational, similarity
    from staticvec.evaluate.intrinsic import evaluate_protocols

    rng = np.random.default_rng(11)
    words = _eval_words()
    rng.shuffle(words)
    words = words[: int(len(words) * 0.8)]  # about a fifth of the words OOV: both policies matter
    words += [w.capitalize() for w in words[:300]]  # upper-case duplicates: the lower-casing keeps the first
    emb = Embeddings(words, rng.standard_normal((len(words), 24)).astype(np.float32))
    views = {"web": ("mean", True, None), "muse": ("drop", True, 5000), "drop": ("drop", True, None),
             "cased": ("drop", False, None), "same": ("drop", True, 10 ** 9)}
    new = evaluate_protocols(emb, views, ["all"], DATA, device="cpu")

    import tests.test_evaluate_categorization as reference  # the full-matrix computation, kept there

    def scipy_spearman(x, y):
        import warnings

        if len(x) < 2:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho = stats.spearmanr(x, y).statistic
        return None if np.isnan(rho) else float(rho)

    monkeypatch.setattr(similarity, "spearman", scipy_spearman)
    monkeypatch.setattr(relational, "spearman", scipy_spearman)
    monkeypatch.setattr(relational, "rankdata", stats.rankdata)
    monkeypatch.setattr(categorization, "distances", reference._full_matrix_distances)
    for name, (oov, lowercase, max_vocab) in views.items():
        old = evaluate(emb, ["all"], DATA, oov=oov, lowercase=lowercase, max_vocab=max_vocab, device="cpu")
        ours = _without_seconds(new[name])
        if name == "same":  # a cut above the vocabulary size: the drop view, scored once and copied
            assert ours.pop("same_view_as") == "drop"
        assert ours == _without_seconds(old), name
    assert new["web"]["results"]["battig"]["score"] is not None and new["web"]["results"]["men"]["scored"] == 3000


def test_cli_protocols_write_what_single_runs_write(tmp_path):
    data = small_data_dir(tmp_path / "eval")
    vectors = tmp_path / "v.bin"
    royal_embedding().save(vectors)
    common = ["--data-dir", str(data), "--tasks", "ws353", "google", "ap", "--device", "cpu", "--threads", "1"]
    assert main(["evaluate", "intrinsic", str(vectors), "--protocol", "web", "mean,lower,all", str(tmp_path / "web.json"),
                 "--protocol", "muse", "drop,lower,3", str(tmp_path / "muse.json"), *common]) == 0
    assert main(["evaluate", "intrinsic", str(vectors), "--out", str(tmp_path / "web1.json"), "--oov", "mean", *common]) == 0
    assert main(["evaluate", "intrinsic", str(vectors), "--out", str(tmp_path / "muse1.json"), "--max-vocab", "3", *common]) == 0
    for name in ("web", "muse"):
        both = _without_seconds(json.loads((tmp_path / f"{name}.json").read_text()))
        alone = _without_seconds(json.loads((tmp_path / f"{name}1.json").read_text()))
        assert both == alone
    assert json.loads((tmp_path / "muse.json").read_text())["vocab_size"] == 3


def test_cli_several_vector_files_write_what_a_job_for_each_writes(tmp_path):
    """The seeds of one embedding in one process (the workflow's intrinsic job): each file's results,
    under each protocol, equal those of a process for that file alone and name their own file; the
    files' scores differ, so a result written for the wrong file would be caught."""
    data = small_data_dir(tmp_path / "eval")
    base = royal_embedding()
    files = []
    for seed in (1, 2, 3):
        noise = np.random.default_rng(seed).normal(scale=0.4, size=base.vectors.shape).astype(np.float32)
        files.append(tmp_path / f"seed{seed}.bin")
        Embeddings(base.words, base.vectors + noise).save(files[-1])
    common = ["--data-dir", str(data), "--tasks", "ws353", "google", "ap", "neighbours", "--neighbours", "king",
              "--topn", "3", "--device", "cpu", "--threads", "1"]
    assert main(["evaluate", "intrinsic", *map(str, files),
                 "--protocol", "web", "mean,lower,all", *(str(tmp_path / f"web{i}.json") for i in (1, 2, 3)),
                 "--protocol", "muse", "drop,lower,3", *(str(tmp_path / f"muse{i}.json") for i in (1, 2, 3)),
                 *common]) == 0
    together = {}
    for i, vectors in enumerate(files, start=1):
        assert main(["evaluate", "intrinsic", str(vectors), "--protocol", "web", "mean,lower,all",
                     str(tmp_path / f"alone.web{i}.json"), "--protocol", "muse", "drop,lower,3",
                     str(tmp_path / f"alone.muse{i}.json"), *common]) == 0
        for name in ("web", "muse"):
            result = json.loads((tmp_path / f"{name}{i}.json").read_text())
            assert result["vectors"] == str(vectors)
            together[name, i] = _without_seconds(result)
            assert together[name, i] == _without_seconds(json.loads((tmp_path / f"alone.{name}{i}.json").read_text()))
    assert len({json.dumps(together["web", i]["results"]["neighbours"]) for i in (1, 2, 3)}) == 3


@pytest.mark.parametrize("extra, message", [
    (["--protocol", "web", "mean,lower,all", "x.json", "y.json"], "one OUT per vectors file (1 file), got 2 OUT"),
    (["--protocol", "web", "mean,lower,all"], "got 0 OUT"),
])
def test_cli_protocol_needs_one_out_per_vector_file(tmp_path, capsys, extra, message):
    vectors = tmp_path / "v.bin"
    royal_embedding().save(vectors)
    assert main(["evaluate", "intrinsic", str(vectors), "--tasks", "neighbours", *extra]) == 2
    assert message in capsys.readouterr().err
    assert main(["evaluate", "intrinsic", str(vectors), str(vectors), "--tasks", "neighbours",
                 "--out", str(tmp_path / "r.json")]) == 2
    assert "--out names one result file, but 2 vector files" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("extra, message", [
    (["--protocol", "web", "mean,lower", "x.json"], "expected OOV,CASE,MAX_VOCAB"),
    (["--protocol", "web", "mean,upper,all", "x.json"], "expected OOV,CASE,MAX_VOCAB"),
    (["--protocol", "web", "mean,lower,0", "x.json"], "positive"),
    (["--protocol", "web", "mean,lower,all", "x.json", "--out", "y.json"], "drop --out"),
    (["--protocol", "a", "mean,lower,all", "x.json", "--protocol", "a", "drop,lower,all", "y.json"], "repeat"),
    ([], "give --out"),
])
def test_cli_protocol_errors(tmp_path, capsys, extra, message):
    vectors = tmp_path / "v.bin"
    royal_embedding().save(vectors)
    assert main(["evaluate", "intrinsic", str(vectors), "--tasks", "neighbours", *extra]) == 2
    assert message in capsys.readouterr().err


def test_multi_protocol_options_round_trip_through_the_cli_parser():
    """The rule's options (staticvec.dag.arguments.multi_cli_options) parse back to each protocol's view of config.yaml."""
    from staticvec.cli import build_parser
    from staticvec.config import load_config
    from staticvec.dag import arguments
    from staticvec.evaluate import intrinsic

    config = load_config(["config/config.yaml"])
    outs = {"web": "a/intrinsic.web.json", "muse": "a/intrinsic.muse.json"}
    args = build_parser().parse_args(["evaluate", "intrinsic", "v.bin", *arguments.multi_cli_options(config, outs)])
    views = {name: (intrinsic.parse_view(view), out) for name, view, out in args.protocol}  # one OUT: one file
    for name, out in outs.items():
        chosen = config["evaluation"]["protocols"][name]
        assert views[name] == ((chosen["oov"], chosen["lowercase"], chosen["max_vocab"]), out)
    assert args.tasks == config["evaluation"]["tasks"] and args.out is None and args.oov is None
    with pytest.raises(Exception, match="unknown evaluation protocol"):
        arguments.multi_cli_options(config, {"nope": "x.json"})


def test_every_evaluation_setting_reaches_the_command_and_one_left_out_takes_the_commands_default():
    """Each key of config evaluation.{analogy,relational,categorization,neighbours} (and device) is passed to
    ``staticvec evaluate intrinsic``; a key the config leaves out is not passed, so the command's default
    (written once, in its parser) applies."""
    from staticvec.cli import build_parser
    from staticvec.config import load_config
    from staticvec.dag import arguments

    config = load_config(["config/config.yaml"])
    evaluation = config["evaluation"]
    evaluation["analogy"] = {"method": "3cosmul", "memory_mb": 77}
    evaluation["relational"] = {"score": "dot", "split": "test"}
    evaluation["categorization"] = {"method": "kmeans", "seed": 5}
    evaluation["neighbours"] = {"words": ["river"], "topn": 3}
    evaluation["items"] = False
    config["device"] = "cpu"
    outs = {"web": "a/intrinsic.web.json"}
    parser = build_parser()
    args = parser.parse_args(["evaluate", "intrinsic", "v.bin", *arguments.multi_cli_options(config, outs)])
    assert (args.analogy_method, args.memory_mb) == ("3cosmul", 77)
    assert (args.relational_score, args.semeval_split) == ("dot", "test")
    assert (args.categorization_method, args.seed) == ("kmeans", 5)
    assert (args.neighbours, args.topn, args.device) == (["river"], 3, "cpu")
    assert args.items is False

    defaults = parser.parse_args(["evaluate", "intrinsic", "v.bin"])
    del evaluation["analogy"]["memory_mb"], evaluation["neighbours"]["topn"], config["device"], evaluation["items"]
    options = arguments.multi_cli_options(config, outs)
    assert "--memory-mb" not in options and "--topn" not in options and "--device" not in options
    assert "--items" not in options and "--no-items" not in options
    args = parser.parse_args(["evaluate", "intrinsic", "v.bin", *options])
    assert (args.memory_mb, args.topn, args.device, args.items) == \
        (defaults.memory_mb, defaults.topn, defaults.device, defaults.items)
    assert args.analogy_method == "3cosmul"


def test_views_that_keep_the_same_words_are_scored_once():
    """A cut at or above the number of distinct (case-folded) words keeps the whole vocabulary: scored once."""
    from staticvec.evaluate.intrinsic import evaluate_protocols

    emb = Embeddings(["The", "the", "cat", "Dog"], np.eye(4, dtype=np.float32))  # 3 distinct lower-cased words
    views = {"drop": ("drop", True, None), "cut3": ("drop", True, 3), "cut2": ("drop", True, 2),
             "cased3": ("drop", False, 3), "cased": ("drop", False, None), "mean3": ("mean", True, 3)}
    results = evaluate_protocols(emb, views, ["neighbours"], neighbour_words=["cat"], topn=2, device="cpu")
    assert results["cut3"]["same_view_as"] == "drop" and results["cut3"]["max_vocab"] == 3
    assert results["cut3"]["vocab_size"] == results["drop"]["vocab_size"] == 3
    for name in ("drop", "cut2", "cased3", "cased", "mean3"):
        assert "same_view_as" not in results[name], name
    assert (results["cut2"]["vocab_size"], results["cased3"]["vocab_size"], results["cased"]["vocab_size"]) == (2, 3, 4)


def test_a_subset_of_the_data_sets_scores_them_exactly_as_the_whole_suite(tmp_path):
    """evaluation.scope: read gives a job only the sets its readers read; each score is the one the whole
    suite (here: every set of the small data directory) gives, bit for bit, and the result holds nothing else."""
    from staticvec.evaluate.intrinsic import evaluate_protocols

    data = small_data_dir(tmp_path / "eval")
    views = {"web": ("mean", True, None), "muse": ("drop", True, 5)}
    whole = evaluate_protocols(royal_embedding(), views, ["ws353", "google", "ap", "neighbours"], data, device="cpu")
    for subset in (["ws353"], ["ap", "google"], ["google", "neighbours"]):
        part = evaluate_protocols(royal_embedding(), views, subset, data, device="cpu")
        for name in views:
            assert sorted(part[name]["results"]) == sorted(subset)
            for key in subset:
                assert _without_seconds(part[name]["results"][key]) == _without_seconds(whole[name]["results"][key])


def test_a_job_without_analogy_never_imports_torch(tmp_path):
    """Only analogy scoring runs torch: a job of similarity sets (most sweep points) skips its import."""
    import subprocess
    import sys

    data = small_data_dir(tmp_path / "eval")
    vectors = tmp_path / "v.bin"
    royal_embedding().save(vectors)
    code = ("import sys; from staticvec.cli import main; "
            "rc = main(['evaluate', 'intrinsic', sys.argv[1], '--protocol', 'web', 'mean,lower,all', sys.argv[2], "
            "'--data-dir', sys.argv[3], '--tasks', *sys.argv[4:], '--threads', '1', '--device', 'auto']); "
            "print(rc, 'torch' in sys.modules)")
    workflow = str(Path(__file__).resolve().parents[1] / "workflow")

    def run(*tasks):
        done = subprocess.run([sys.executable, "-c", code, str(vectors), str(tmp_path / "r.json"), str(data), *tasks],
                              capture_output=True, text=True, env={**__import__("os").environ, "PYTHONPATH": workflow})
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    assert run("ws353", "ap") == ["0", "False"]
    assert run("ws353", "google") == ["0", "True"]


def test_every_task_kind_of_the_registry_has_a_scorer():
    from staticvec.evaluate.datasets import DATASETS, TASKS
    from staticvec.evaluate.intrinsic import SCORERS

    assert {d.task for d in DATASETS.values()} <= set(SCORERS)
    assert set(SCORERS) == set(TASKS) - {"neighbours"}  # neighbours is a listing, not a scored data set


def test_a_new_kind_of_task_is_one_scorer_entry(tmp_path, monkeypatch):
    """A data set of a kind the suite does not know is scored by the scorer registered for its kind, with the
    options evaluate() was given; no branch of evaluate() names the kind."""
    import dataclasses

    from staticvec.evaluate import datasets, intrinsic

    (tmp_path / "toy.txt").write_text("king\nqueen\nplum\n")
    toy = dataclasses.replace(datasets.DATASETS["ws353"], name="toy", task="oddoneout", path="toy.txt",
                              parser=lambda path: path.read_text().split(), records=3, label="Toy")
    seen = []

    def odd_one_out(lookup, words, options):
        seen.append((words, options.seed, options.items))
        return {"task": "oddoneout", "metric": "accuracy", "score": 0.5, "found": len(words), "total": 3}

    monkeypatch.setitem(datasets.DATASETS, "toy", toy)
    monkeypatch.setitem(intrinsic.SCORERS, "oddoneout", odd_one_out)
    result = evaluate(royal_embedding(), ["toy"], tmp_path, seed=7, items=False)
    assert seen == [(["king", "queen", "plum"], 7, False)]
    assert result["results"]["toy"]["score"] == 0.5 and result["results"]["toy"]["oov_policy"] == "drop"
