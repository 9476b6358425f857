"""`staticvec evaluate tag` and `staticvec evaluate tag-summary` end to end on a tiny chunking set."""

import json
import math

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.embeddings import Embeddings


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def tiny_chunking(tmp_path):
    """A CoNLL-2000-shaped data set where determiners start noun chunks and verbs are VP chunks."""
    rng = np.random.default_rng(0)
    nouns, verbs = ["dog", "cat", "bird", "fish"], ["sees", "eats", "likes"]
    def sentence():
        rows = []
        for _ in range(rng.integers(1, 3)):
            rows += [("the", "DT", "B-NP"), (str(rng.choice(nouns)), "NN", "I-NP"), (str(rng.choice(verbs)), "VBZ", "B-VP")]
        rows += [("The", "DT", "B-NP"), (str(rng.choice(nouns)), "NN", "I-NP"), (".", ".", "O")]
        return "".join(f"{w} {p} {c}\n" for w, p, c in rows) + "\n"
    data = tmp_path / "conll2000"
    data.mkdir()
    (data / "train.txt").write_text("".join(sentence() for _ in range(60)))
    (data / "test.txt").write_text("".join(sentence() for _ in range(15)))
    words = ["the", ".", *nouns, *verbs]
    vectors = tmp_path / "tiny.txt"
    Embeddings(words, rng.normal(0, 1, (len(words), 6)).astype(np.float32)).save(vectors)
    return data, vectors


HPARAMS = json.dumps({"hidden": 8, "casing_dim": 2, "batch_size": 8, "max_epochs": 3, "patience": 3, "eval_batch_size": 16})


def test_tag_writes_scores_curve_and_data_source(tiny_chunking, tmp_path):
    data, vectors = tiny_chunking
    out = tmp_path / "r.json"
    assert main(["evaluate", "tag", "--vectors", str(vectors), "--task", "chunk", "--data-dir", str(data), "--seed", "3",
                 "--hparams", HPARAMS, "--device", "cpu", "--out", str(out)]) == 0
    r = json.loads(out.read_text())
    assert (r["status"], r["embedding"], r["task"], r["seed"], r["source"], r["metric"]) == ("ok", "tiny", "chunk", 3, "CoNLL-2000", "f1")
    assert 0.0 <= r["test"] <= 1.0 and r["test"] == r["test_detail"]["f1"]
    assert len(r["dev_curve"]) == r["epochs_run"] == 3 and 1 <= r["best_epoch"] <= 3
    assert r["dev"] == max(e["dev_score"] for e in r["dev_curve"])  # scored with the best dev epoch's weights
    assert r["data"]["sentences"] == {"train": 54, "dev": 6, "test": 15}
    assert r["inputs"]["coverage"]["test"]["token_coverage"] == 1.0  # 'The' found lower-cased
    assert r["hparams"]["hidden"] == 8


def test_ner_without_data_records_not_run(tiny_chunking, tmp_path):
    _, vectors = tiny_chunking
    out = tmp_path / "ner.json"
    assert main(["evaluate", "tag", "--vectors", str(vectors), "--task", "ner", "--seed", "1", "--out", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["status"] == "not run: data not supplied" and r["task"] == "ner"
    summary = tmp_path / "s.json"
    assert main(["evaluate", "tag-summary", str(out), "--out", str(summary)]) == 0
    result = json.loads(summary.read_text())["results"]["ner"]
    assert result["score"] is None and result["status"] == "not run: data not supplied"


def test_unknown_hparam_is_a_clear_error(tiny_chunking, tmp_path, capsys):
    data, vectors = tiny_chunking
    code = main(["evaluate", "tag", "--vectors", str(vectors), "--task", "chunk", "--data-dir", str(data), "--hparams", '{"hiden": 3}',
                 "--out", str(tmp_path / "x.json")])
    assert code == 2 and "unknown tagger setting(s) hiden" in capsys.readouterr().err


def test_summary_mean_and_sample_std_over_seeds(tmp_path):
    paths = []
    for seed, test in [(1, 0.90), (2, 0.92), (3, 0.97)]:
        record = {"embedding": "glove", "task": "chunk", "seed": seed, "status": "ok", "source": "CoNLL-2000", "metric": "f1",
                  "test": test, "dev": test - 0.01, "best_epoch": 4, "timing": {"train_seconds": 1.0}}
        paths.append(tmp_path / f"{seed}.json")
        paths[-1].write_text(json.dumps(record))
    out, table = tmp_path / "summary.json", tmp_path / "summary.csv"
    assert main(["evaluate", "tag-summary", *map(str, paths), "--out", str(out), "--csv", str(table)]) == 0
    s = json.loads(out.read_text())["results"]["chunking"]
    assert s["score"] == s["test"]["score"] == pytest.approx(0.93)
    assert s["test"]["sd"] == pytest.approx(math.sqrt(((0.03) ** 2 + (0.01) ** 2 + (0.04) ** 2) / 2))
    assert s["dev"]["score"] == pytest.approx(0.92)
    assert s["seeds"] == [1, 2, 3] and s["source"] == "CoNLL-2000"
    header, row = table.read_text().splitlines()
    assert row.startswith("glove,chunk,CoNLL-2000,f1,93.00,")


def test_summary_is_read_by_the_paper_table_builder(tiny_chunking, tmp_path):
    tables = pytest.importorskip("staticvec.report.tables")
    data, vectors = tiny_chunking
    runs = []
    for seed in (1, 2):
        runs.append(tmp_path / f"chunk.seed{seed}.json")
        assert main(["evaluate", "tag", "--vectors", str(vectors), "--task", "chunk", "--data-dir", str(data), "--seed", str(seed),
                     "--hparams", HPARAMS, "--device", "cpu", "--out", str(runs[-1])]) == 0
    runs.append(tmp_path / "ner.seed1.json")
    assert main(["evaluate", "tag", "--vectors", str(vectors), "--task", "ner", "--out", str(runs[-1])]) == 0
    out = tmp_path / "tagging.json"
    assert main(["evaluate", "tag-summary", *map(str, runs), "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    value, found, total = tables.result_value(summary, "chunking.test")
    expected = [json.loads(p.read_text())["test"] for p in runs[:2]]
    test_tokens = sum(1 for line in (data / "test.txt").read_text().splitlines() if line.strip())
    assert value == pytest.approx(sum(expected) / 2)
    assert (found, total) == (test_tokens, test_tokens)  # every test word has a vector
    assert tables.result_value(summary, "ner")[0] is None


def test_summary_carries_each_seeds_dev_curve_and_chosen_epoch(tiny_chunking, tmp_path):
    data, vectors = tiny_chunking
    runs = []
    for seed, hparams in ((1, HPARAMS), (2, json.dumps({**json.loads(HPARAMS), "max_epochs": 30, "patience": 1}))):
        runs.append(tmp_path / f"chunk.seed{seed}.json")
        assert main(["evaluate", "tag", "--vectors", str(vectors), "--task", "chunk", "--data-dir", str(data), "--seed",
                     str(seed), "--hparams", hparams, "--device", "cpu", "--out", str(runs[-1])]) == 0
    out = tmp_path / "tagging.json"
    assert main(["evaluate", "tag-summary", *map(str, runs), "--out", str(out)]) == 0
    node = json.loads(out.read_text())["results"]["chunking"]
    records = [json.loads(p.read_text()) for p in runs]
    seeds = node["convergence"]["seeds"]
    assert [s["seed"] for s in seeds] == [1, 2]
    for s, r in zip(seeds, records):
        assert s["dev_curve"] == [p["dev_score"] for p in r["dev_curve"]]
        assert s["best_epoch"] == r["best_epoch"] and s["dev_curve"][s["best_epoch"] - 1] == r["dev"] == max(s["dev_curve"])
    # seed 1 ran its 3-epoch cap with patience 3: not shown to have converged; seed 2 stopped on patience
    assert (seeds[0]["stopped_by"], seeds[0]["converged"]) == ("max_epochs", False)
    assert (seeds[1]["stopped_by"], seeds[1]["converged"]) == ("patience", True)
    assert node["convergence"]["converged"] is False


def _tagging_file(row, scores, converged=True):
    return {"embedding": row, "results": {task: {"score": score, "convergence": {"converged": converged}}
                                         for task, score in scores.items()}}


def test_contextual_shortfall_names_the_static_rows_above_the_contextual_row():
    from staticvec.evaluate.tagging.summary import contextual_note, contextual_shortfall

    tagging = {"contextual-minilm": _tagging_file("contextual-minilm", {"pos": 0.865, "chunking": 0.95}),
               "sg": _tagging_file("sg", {"pos": 0.901, "chunking": 0.90}),
               "glove": _tagging_file("glove", {"pos": 0.88, "chunking": 0.96}, converged=False),
               "cbow": _tagging_file("cbow", {"pos": 0.80})}
    pos = contextual_shortfall(tagging, "contextual-minilm", "pos")
    assert [e["row"] for e in pos["above"]] == ["sg", "glove"] and pos["contextual"]["score"] == 0.865
    assert [e["row"] for e in contextual_shortfall(tagging, "contextual-minilm", "pos", rows=["cbow", "glove"])["above"]] \
        == ["glove"]
    chunk = contextual_shortfall(tagging, "contextual-minilm", "chunking")
    assert [e["row"] for e in chunk["above"]] == ["glove"]
    note = contextual_note(pos)
    assert "(contextual-minilm, 86.5) is below sg 90.1, glove 88.0 on pos" in note and "not shown to have converged" in note
    assert contextual_shortfall(tagging, "contextual-minilm", "pos", rows=["cbow"]) is None  # nothing above it
    assert contextual_shortfall(tagging, "contextual-minilm", "ner") is None and contextual_note(None) is None
    tagging["glove"] = _tagging_file("glove", {"pos": 0.5})
    assert "tagger converged on dev" in contextual_note(contextual_shortfall(tagging, "contextual-minilm", "pos"))


def test_a_tagging_verdicts_cell_says_when_the_contextual_row_is_below_a_static_row(tmp_path):
    """The claims' tagging verdicts carry tagging_caveats: the frozen contextual row below a static row the claim
    reads (with both scores), and the rows whose tagger did not converge on dev."""
    import yaml

    from staticvec.report.claims import Results, evaluate_claims, to_markdown
    from staticvec.sheets.claims import load_claims_spec

    def tagging(values, converged=True):
        return {"results": {"pos": {"score": sum(values) / len(values), "seeds": [1, 2, 3], "test": {"values": values},
                                    "dev": {"values": values}, "convergence": {"converged": converged}}}}

    claim = {"paper": "wang", "where": "Table 3", "at": "l. 1", "sentence": "q", "statement": "s", "source": "tagging",
             "metric": {"each": ["pos.test"]}, "order": ["contextual", "sg"]}
    sheet = tmp_path / "claims.yaml"
    sheet.write_text(yaml.safe_dump({"defaults": {}, "claims": {"x_claim": claim}}))
    spec = load_claims_spec(sheet)
    results = Results(tagging={"contextual-minilm": tagging([0.864, 0.865, 0.866]), "sg": tagging([0.90, 0.901, 0.902])},
                      contextual_id="contextual-minilm")
    [record] = evaluate_claims(spec, results)
    assert record["verdict"] == "fails"
    [caveat] = record["caveats"]
    assert "frozen contextual row (contextual-minilm, 86.5) is below sg 90.1 on pos" in caveat
    assert caveat in to_markdown([record], "c")  # in the verdict's cell
    results.tagging["sg"] = tagging([0.80, 0.801, 0.802], converged=False)
    [record] = evaluate_claims(spec, results)
    assert record["caveats"] == ["tagger not shown to have converged on dev (epoch cap reached, or no record): sg (pos)"]
    results.tagging["sg"] = tagging([0.80, 0.801, 0.802])
    assert evaluate_claims(spec, results)[0]["caveats"] == []
