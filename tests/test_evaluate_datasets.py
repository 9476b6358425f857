"""The evaluation data sets: row counts of the shared copies, strict parsers, the registry."""

from pathlib import Path

import numpy as np
import pytest

from staticvec.config import load_yaml
from staticvec.errors import InputFileError, StaticvecError
from staticvec.evaluate import datasets as ds

REPO = Path(__file__).resolve().parents[1]

DATA = Path("../shared/data/eval")
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/eval not available")

# rows as listed in ../shared/README.md (data inventory)
EXPECTED = {
    "ws353": 353, "ws353_sim": 203, "ws353_rel": 252, "simlex999": 999, "rw": 2034, "men": 3000,
    "rg65": 65, "simverb3500": 3500, "google": 19544, "msr": 8000, "semeval2012": 3218,
    "ap": 402, "battig": 5231, "esslli_v": 45, "esslli_n": 44,
}


@needs_data
@pytest.mark.parametrize("name", list(ds.DATASETS))
def test_shared_copy_has_the_documented_number_of_records(name):
    data = ds.load_dataset(name, DATA)
    n = {
        ds.SimilarityData: lambda d: len(d.pairs),
        ds.AnalogyData: lambda d: len(d.questions),
        ds.RelationalData: lambda d: sum(len(r.pairs) for r in d.relations),
        ds.CategorizationData: lambda d: len(d.words),
    }[type(data)](data)
    assert n == EXPECTED[name] == ds.DATASETS[name].records
    if ds.DATASETS[name].classes:
        assert len(set(data.labels)) == ds.DATASETS[name].classes


@needs_data
def test_shared_structure_google_semeval_ap():
    google = ds.load_dataset("google", DATA)
    assert google.groups.count("semantic") == 8869 and google.groups.count("syntactic") == 10675  # Wang et al.
    assert len(set(google.sections)) == 14
    semeval = ds.load_dataset("semeval2012", DATA)
    assert len(semeval.relations) == 79
    assert sum(r.split == "test" for r in semeval.relations) == 69
    odd = {r.id: r.prototypes for r in semeval.relations}
    assert odd["4g"] == [("popular", "shy"), ("right", "bad"), ("believe", "deny")]  # two pairs on one line
    assert odd["6a"][1] == ("bulwark", "flimsy")  # "bulwark: flimsy"
    ap = ds.load_dataset("ap", DATA)
    assert ap.blank_rows == 21  # one separator row per class
    msr = ds.load_dataset("msr", DATA)
    assert set(msr.groups) == {"adjective", "noun", "verb"}


def write(path, text, mode="w"):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_similarity_parser_reads_tabs_spaces_crlf_and_comments(tmp_path):
    f = write(tmp_path / "s.txt", "# comment\nold\tnew\t1.5\r\nbig  large 9\n\n")
    data = ds.parse_similarity(f)
    assert data.pairs == [("old", "new"), ("big", "large")]
    np.testing.assert_array_equal(data.scores, [1.5, 9.0])


@pytest.mark.parametrize("text, line, problem", [
    ("a b 1\nc d\n", 2, "found 2 fields"),
    ("a b 1\nc d e f\n", 2, "found 4"),
    ("a b x\n", 1, "not a number"),
    ("a b nan\n", 1, "not finite"),
])
def test_similarity_parser_names_file_and_line(tmp_path, text, line, problem):
    f = write(tmp_path / "bad.txt", text)
    with pytest.raises(InputFileError) as err:
        ds.parse_similarity(f)
    assert err.value.line == line and str(f) in str(err.value) and problem in str(err.value)


def test_invalid_utf8_in_a_dataset_names_the_line(tmp_path):
    f = write(tmp_path / "bad.txt", b"a b 1\nc\xff d 2\n")
    with pytest.raises(InputFileError) as err:
        ds.parse_similarity(f)
    assert err.value.line == 2 and "UTF-8" in str(err.value)


def test_google_parser_sections_groups_and_errors(tmp_path):
    body = "".join(f": s{i}\na b c d\n" for i in range(7))
    data = ds.parse_google(write(tmp_path / "q.txt", body))
    assert data.groups == ["semantic"] * 5 + ["syntactic"] * 2
    with pytest.raises(InputFileError, match="before the first") as err:
        ds.parse_google(write(tmp_path / "q1.txt", "a b c d\n"))
    assert err.value.line == 1
    with pytest.raises(InputFileError, match="4 words") as err:
        ds.parse_google(write(tmp_path / "q2.txt", ": s\na b c d\na b c\n"))
    assert err.value.line == 3


def test_msr_and_categorization_csv_errors(tmp_path):
    good = ",type,word1,word2,word3,target\n0,JJ_JJR,good,better,rough,rougher\n"
    assert ds.parse_msr(write(tmp_path / "m.csv", good)).questions == [("good", "better", "rough", "rougher")]
    with pytest.raises(InputFileError, match="header") as err:
        ds.parse_msr(write(tmp_path / "m1.csv", "type,a,b,c,d\n"))
    assert err.value.line == 1
    with pytest.raises(InputFileError, match="question type") as err:
        ds.parse_msr(write(tmp_path / "m2.csv", good + "1,XX_YY,a,b,c,d\n"))
    assert err.value.line == 3
    with pytest.raises(InputFileError, match="3 fields") as err:
        ds.parse_categorization_csv(write(tmp_path / "c.csv", ",category,word\n0,bird,eagle\n1,bird\n"))
    assert err.value.line == 3
    data = ds.parse_categorization_csv(write(tmp_path / "c2.csv", ",category,word\n0,bird,eagle\n1,bird,\n2,tool,saw\n"))
    assert data.words == ["eagle", "saw"] and data.blank_rows == 1
    nouns = ds.parse_esslli_nouns(write(tmp_path / "n.tsv", "word\tclass\tclass2\tclass3\tfreq.bnc\nduck_N\tbird\tanimal\tnatural\t2.0\n"))
    assert nouns.words == ["duck"] and nouns.labels == ["bird"]


def make_semeval(root: Path, gold_line='  74.0 "tool:hammer"'):
    pkg = root / "SemEval-2012-Complete-Data-Package"
    write(pkg / "subcategories-list.txt", "1, a, CLASS-INCLUSION, Taxonomic\n1, b, CLASS-INCLUSION, Functional\n")
    question = "Question 1(b)\n\nConsider the following word pairs:\n\nornament:brooch\nweapon:knife. vehicle:car\n\nWhat relation?\n"
    write(pkg / "Training/Phase1Questions/Phase1Questions-1a.txt", question)
    write(pkg / "Testing/Phase1Questions/Phase1Questions-1b.txt", question)
    gold = root / "SemEval-2012-Gold-Ratings"
    write(gold / "Training/GoldRatings-1a.txt", '# header\n 10.0 "flower:tulip"\n-20.5 "poem:sonnet"\n')
    write(gold / "Testing/GoldRatings-1b.txt", f"#\n{gold_line}\n 12.0 \"fruit:apple\"\n")
    return root


def test_semeval_parser_on_a_small_package(tmp_path):
    data = ds.parse_semeval2012(make_semeval(tmp_path))
    assert [r.id for r in data.relations] == ["1a", "1b"]
    r = data.relations[1]
    assert r.split == "test" and r.broad == "CLASS-INCLUSION" and r.name == "Functional"
    assert r.prototypes == [("ornament", "brooch"), ("weapon", "knife"), ("vehicle", "car")]
    assert r.pairs == [("tool", "hammer"), ("fruit", "apple")] and r.gold_text == ["74.0", "12.0"]
    with pytest.raises(InputFileError, match="rating line") as err:
        ds.parse_semeval2012(make_semeval(tmp_path / "bad", gold_line='74.0 tool:hammer'))
    assert err.value.line == 2 and "GoldRatings-1b" in str(err.value)


def test_registry_selection():
    assert ds.datasets_for(["all"]) == list(ds.DATASETS)
    assert ds.datasets_for(["analogy", "ws353"]) == ["google", "msr", "ws353"]
    with pytest.raises(StaticvecError, match="unknown evaluation task"):
        ds.datasets_for(["wordsim"])
    with pytest.raises(InputFileError, match="not found"):
        ds.load_dataset("ws353", Path("/nonexistent"))


def test_evaluation_words_are_every_asked_word_once_in_first_seen_order(tmp_path):
    (tmp_path / "similarity").mkdir()
    (tmp_path / "analogy").mkdir()
    (tmp_path / "categorization").mkdir()
    (tmp_path / "similarity/EN-WS-353-ALL.txt").write_text("King\tqueen\t8\nman\tking\t9\n")
    (tmp_path / "analogy/questions-words.txt").write_text(": family\nman king woman queen\nboy girl brother sister\n")
    (tmp_path / "categorization/ap.csv").write_text(",category,word\n0,fruit,pear\n1,male,man\n")
    words = ds.evaluation_words(["ws353", "google", "ap"], tmp_path)
    assert words == ["king", "queen", "man", "woman", "boy", "girl", "brother", "sister", "pear"]
    assert ds.evaluation_words(["ws353"], tmp_path, lowercase=False) == ["King", "queen", "man", "king"]
    with pytest.raises(InputFileError, match="msr"):
        ds.evaluation_words(["msr"], tmp_path)


def test_selected_tasks_name_data_sets_and_neighbours_apart():
    """`neighbours` is no data set: asked alone it selects none (datasets_for of an empty list would be all)."""
    from staticvec.evaluate.datasets import DATASETS, selected

    assert selected(["neighbours"]) == ([], True)
    assert selected(["all"]) == (list(DATASETS), True)
    assert selected(["ws353", "neighbours", "msr"]) == (["ws353", "msr"], True)
    assert selected(["analogy"]) == (["google", "msr"], False)


@pytest.mark.parametrize("name", list(ds.DATASETS))
def test_each_data_set_names_the_resource_group_that_holds_and_checksums_its_file(name):
    dataset = ds.DATASETS[name]
    groups = load_yaml(REPO / "config" / "resources.yaml")
    assert dataset.group in groups, f"{name}: group {dataset.group!r} is not in config/resources.yaml"
    group = groups[dataset.group]
    file = f"eval/{dataset.path}"  # the data directory is <mirror>/eval; a group's path is under the mirror
    listed = [line.split()[1] for line in (REPO / group["checksums"]).read_text().splitlines() if line.strip()]
    files = [f for f in listed if f == file or f.startswith(file + "/")]  # the file, or those of a directory
    assert files, f"{file} has no checksum in {group['checksums']}"
    assert all(f.startswith(group.get("prefix", group["path"])) and f.startswith(group["path"] + "/") for f in files)


def test_labels_summary_columns_and_evaluation_groups_derive_from_the_one_description(monkeypatch):
    from staticvec.report.figures import metric_label

    labels = [d.label for d in ds.DATASETS.values()]
    assert len(set(labels)) == len(labels)
    assert metric_label("rg65") == "RG-65" and metric_label("google.semantic") == "Google (semantic)"
    assert metric_label("pos") == "pos"  # not a data set of the registry: printed as named
    before = (ds.summary_columns(), ds.eval_groups())
    # a new data set is one entry: its label, its summary column and its resource group follow from it
    toy = ds.Dataset("toy", "similarity", "similarity/toy.txt", ds.parse_similarity, 3, "Toy-3", "eval-toy")
    monkeypatch.setitem(ds.DATASETS, "toy", toy)
    assert metric_label("toy.x") == "Toy-3 (x)"
    assert ds.summary_columns() == before[0] + ["toy"] and ds.eval_groups() == before[1] + ("eval-toy",)
    monkeypatch.setitem(ds.DATASETS, "toy", ds.Dataset(**{**toy.__dict__, "group": "eval-similarity", "in_summary": False}))
    assert ds.summary_columns() == before[0] and ds.eval_groups() == before[1]
