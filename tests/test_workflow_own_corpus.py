"""End to end: the worked example (config/examples/own-corpus.yaml) runs the whole DAG on a small text that
is not Wikipedia (tests/data/own-corpus/) with a local teacher of one's own: a tiny random BERT encoder
without MLM head, saved to a temporary directory as save_pretrained writes it."""

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from teacher_fixtures import save_local_teacher
from test_workflow_e2e import snakemake

from staticvec.corpus.shards import iter_records
from staticvec.corpus.vocab import Vocabulary
from staticvec.files import read_json

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "config" / "examples" / "own-corpus.yaml"
TEXTS = sorted((REPO / "tests" / "data" / "own-corpus").glob("*.txt"))
slow = pytest.mark.slow  # minutes: `pytest -m "not slow"` skips these; `make test` runs them


@pytest.fixture(scope="module")
def run(tmp_path_factory, shared_data):
    tmp = tmp_path_factory.mktemp("own-corpus")
    example = yaml.safe_load(EXAMPLE.read_text())
    depth = max(example.get("methods", {}).get("ase", {}).get("layers") or [6])  # config.yaml's: MiniLM's 6
    teacher = save_local_teacher(tmp / "teacher", [p.read_text(encoding="utf-8") for p in TEXTS], layers=depth)
    override = tmp / "paths.yaml"
    override.write_text(yaml.safe_dump({
        "results_dir": str(tmp / "results"),
        "resources": {"download_dir": str(tmp / "data"), "mirror": str(shared_data)},
        "teacher": {"models": {"own": str(teacher)}},  # where the example expects the user's model directory
    }))
    snakemake(configfiles=[EXAMPLE, override])
    return tmp / "results"


def test_the_example_plans_every_stage_on_its_own_text_with_its_own_teacher(tmp_path):
    """Fast: the example is a valid config whose plan holds every stage (what the slow run below builds)."""
    from staticvec.config import deep_merge, load_config, validate_config
    from staticvec.dag.workflow import Workflow

    example = yaml.safe_load(EXAMPLE.read_text())
    assert example["corpus"]["format"] == "text" and example["teacher"]["default"] == "own"
    assert example["corpus"]["local_files"] == ["tests/data/own-corpus"]  # a directory: every file under it
    assert TEXTS and all(p.stat().st_size < 4096 for p in TEXTS)  # a few KB of text, committed
    teacher = save_local_teacher(tmp_path / "teacher", [TEXTS[0].read_text(encoding="utf-8")])
    config = deep_merge(load_config([REPO / "config" / "config.yaml", EXAMPLE]), {"teacher": {"models": {"own": str(teacher)}}})
    validate_config(config, sources="the example")
    plan = Workflow(config, REPO)
    plan.check_teachers()
    targets = plan.final_targets()
    assert plan.summary_file("md") in targets and plan.claims_file("md") in targets
    summary = [r["id"] for r in plan.summary_rows()]
    assert sorted(summary) == sorted(example["targets"]["summary"])  # in the sheet's order
    # one embedding of each method family (with what it is made from), so each family's rule is in the DAG
    methods = {plan.spec(e).method for e in plan.sheet.closure(summary)}
    assert methods >= {"skipgram", "glove", "semglove", "bert_sg", "c2v", "retrofit", "x2static", "ase", "model2vec",
                       "tokenlearn"}


@slow
def test_the_corpus_is_the_texts_with_the_same_filters_as_wikipedia(run):
    corpus = run / "corpus"
    manifest = read_json(corpus / "manifest.json")
    assert manifest["description"]["format"] == "text" and manifest["description"]["paragraphs"] == "blank_lines"
    records = [r for s in sorted((corpus / "shards").glob("*.tsv.gz")) for r in iter_records(s)]
    kept = [r for r in records if r.keep]
    totals = manifest["totals"]
    assert {r.article for r in records} == {p.name for p in TEXTS} and totals["articles"] == len(TEXTS)
    assert totals["sentences"] == len(kept) and totals["tokens"] == sum(len(r.tokens) for r in kept)
    assert all(10 <= len(r.tokens) <= 40 for r in kept)
    # X2Static's paragraph filter (3+ sentences, 140+ characters) removed each document's paragraph 0, its title
    # line, and railway.txt's paragraph 1 (two sentences); every other paragraph has three
    paragraphs = [len(p.read_text(encoding="utf-8").strip().split("\n\n")) for p in TEXTS]
    kept_paragraphs = {(p.name, k) for p, n in zip(TEXTS, paragraphs) for k in range(1, n)} - {("railway.txt", 1)}
    assert {(r.article, r.paragraph) for r in records} == kept_paragraphs
    # every training token is a word of the texts, lower-cased
    words = Counter(w.strip(".,;:'!?") for p in TEXTS for w in p.read_text(encoding="utf-8").lower().split())
    assert {t for r in kept for t in r.tokens if t.isalpha()} <= set(words)
    counts = Counter(t for r in kept for t in r.tokens)
    vocab = Vocabulary.load(corpus / "vocab.min3.tsv")
    assert dict(zip(vocab.words, vocab.counts)) == {w: c for w, c in counts.items() if c >= 3}


@slow
def test_the_teacher_without_mlm_head_got_a_fitted_one(run):
    report = read_json(run / "teacher" / "own" / "mlm_head.json")
    assert report["heldout_positions"] > 0
    features = [read_json(p) for p in (run / "teacher" / "own").rglob("features.json")]
    mlm = [f for f in features if f["spec"].get("mlm_topk")]
    assert mlm and all(f["mlm_head"]["kind"] == "fitted" and f["spec"]["mlm_mode"] == "unmasked" for f in mlm)
    assert all(f["teacher"]["hidden_size"] == 16 for f in features)


@slow
def test_its_tables_the_summary_and_the_claims_are_built(run):
    config = yaml.safe_load(EXAMPLE.read_text())
    targets = config["targets"]
    tables = sorted(f"{p.parent.name}_{p.stem}" for p in (run / "tables").glob("*/table*.md"))
    assert tables == sorted(targets["tables"])
    table1 = (run / "tables" / "semglove" / "table1.md").read_text()
    assert "tokenlearn" in table1 and "model2vec" in table1  # the rivals from the same teacher
    summary = (run / "tables" / "summary.md").read_text()
    for row in targets["summary"]:  # a row per listed embedding, one of each method family
        assert f"\n| {row} |" in summary, row
    assert "teacher own (" in summary  # the provenance caption names the run's own corpus and teacher
    claims = read_json(run / "tables" / "claims.json")
    assert set(claims["verdicts"]) == set(targets["claims"])
    assert set(claims["verdicts"].values()) == {"not tested"}  # one seed: fewer than a claim needs, so no verdict
    manifest = read_json(run / "manifest.json")
    assert manifest["corpus"] == "tests/data/own-corpus" and manifest["teacher"].startswith("own (")

GOOD_DOCUMENT = TEXTS[0] if TEXTS else None


@slow
@pytest.mark.parametrize("name, content, fmt, rule, message", [
    # a binary file among the texts: refused when the workflow is planned (its first lines are read in
    # corpus.format), before any job
    ("scan.txt", b"A zipped page\n\nPK\x03\x04\x14\x00\x00\x00\x08\x00\n", "text", "plan",
     r"scan\.txt, line 3: a binary file"),
    # every paragraph one short line (titles): nothing is left after the sentence and paragraph filters
    ("titles.txt", b"The Harbour\n\nThe Bakery\n\nThe Railway\n", "text", "prepare_corpus",
     r"empty corpus: the 1 input\(s\) \(.*titles\.txt\) leave no training sentence"),
])
def test_bad_input_stops_the_example_at_the_corpus_stage_before_any_teacher_pass(tmp_path, shared_data, name, content,
                                                                                  fmt, rule, message):
    """The whole example's DAG is planned (every teacher pass in it); a bad input is refused at plan time where its
    first lines show it (no job runs), else fails its corpus job with the file and line; either way no teacher pass
    over the corpus has started."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / name).write_bytes(content)
    teacher = save_local_teacher(tmp_path / "teacher", [GOOD_DOCUMENT.read_text(encoding="utf-8")])
    override = tmp_path / "paths.yaml"
    results = tmp_path / "results"
    override.write_text(yaml.safe_dump({
        "results_dir": str(results),
        "resources": {"download_dir": str(tmp_path / "data"), "mirror": str(shared_data)},
        "teacher": {"models": {"own": str(teacher)}},
        "corpus": {"format": fmt, "local_files": [str(corpus / name)]},
    }))
    result = snakemake(configfiles=[EXAMPLE, override], check=False)
    assert result.returncode != 0
    if rule == "plan":
        assert re.search(message, result.stderr), result.stderr[-2000:]
        assert not (results / "logs").exists() and not (results / "corpus").exists()  # no job ran
        return
    command = "staticvec corpus tokenize" if rule == "tokenize" else "staticvec corpus prepare"
    assert re.search(f"{command} .* returned non-zero exit status 2", result.stdout + result.stderr)  # the failed job
    (log,) = (results / "logs" / "corpus").rglob(f"{'tokenize/*' if rule == 'tokenize' else 'prepare'}.log")
    assert re.search(message, log.read_text()), log.read_text()[-2000:]
    assert not (results / "corpus" / "manifest.json").exists()
    assert not (results / "teacher").exists() and not (results / "logs" / "teacher").exists()  # no pass over the corpus
