"""End to end: the whole DAG on the tiny test config (tests/config/test.yaml), then resume checks."""

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

from staticvec.corpus.shards import iter_records
from staticvec.corpus.vocab import Vocabulary
from staticvec.embeddings import Embeddings
from staticvec.files import read_json
from workflow_fixtures import TEST_CONFIG, snakemake

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # minutes: `pytest -m "not slow"` skips them; `make test` runs them




@pytest.fixture(scope="module")
def run(tiny_run):
    """The session's tiny run (conftest.tiny_run); the resume test below rewrites its corpus."""
    return tiny_run


def test_default_config_plans_the_whole_dag():
    result = snakemake("-n", "--forceall", configfiles=[REPO / "config" / "config.yaml"])
    assert "prepare_corpus" in result.stdout and "tokenize" in result.stdout


def test_corpus_manifest_matches_a_brute_force_count(run):
    corpus = run["results"] / "corpus"
    manifest = read_json(corpus / "manifest.json")
    shards = sorted((corpus / "shards").glob("*.tsv.gz"))
    assert len(shards) == 2 == len(manifest["shards"])
    records = [r for s in shards for r in iter_records(s)]
    kept = [r for r in records if r.keep]
    totals = manifest["totals"]
    assert totals["sentences"] == len(kept)
    assert totals["tokens"] == sum(len(r.tokens) for r in kept)
    assert totals["articles"] == len({r.article for r in records})
    assert totals["paragraphs"] == len({(r.article, r.paragraph) for r in records})
    assert 60000 <= totals["tokens"] < 61000  # the budget, stopped at a paragraph boundary
    assert all(10 <= len(r.tokens) <= 40 for r in kept)
    assert all(t == t.lower() for r in kept for t in r.tokens)
    counts = Counter(t for r in kept for t in r.tokens)
    vocab = Vocabulary.load(corpus / "vocab.min3.tsv")
    assert dict(zip(vocab.words, vocab.counts)) == {w: c for w, c in counts.items() if c >= 3}
    assert totals["vocabulary"] == len(vocab)


def test_the_claims_table_and_its_forest_plots(run):
    """Every selected claim is decided (two seeds: the seeded comparisons are not tested, the deterministic
    ones exact), on the common items of its rows, with the run's scale in the caption; one forest plot per
    paper and one for the claims beyond the papers."""
    tables = run["results"] / "tables"
    data = read_json(tables / "claims.json")
    selected = yaml.safe_load(TEST_CONFIG.read_text())["targets"]["claims"]
    assert set(data["verdicts"]) == set(selected)
    assert set(data["counts"]) == {"semglove", "wang", "c2v", "x2static", "beyond"}
    records = {r["id"]: r for r in data["claims"]}
    comparisons = [c for r in data["claims"] for p in r["parts"] for c in p["alternatives"]]
    assert comparisons and all(c["n"] <= 2 for c in comparisons)
    seeded = [c for c in comparisons if c["n"] == 2]
    assert seeded and all(c["status"] == "not tested" for c in seeded)
    # X2Static's rows (min count 10 vs 3) scored different pairs under muse: compared on the common ones
    x2s = records["x2static_t3_average"]["coverage"]
    assert set(x2s) == {"rg65", "ws353", "simlex999", "simverb3500", "rw"}
    for ground in x2s.values():
        assert ground["problem"] is None and ground["common"] <= min(ground["rows"].values()) <= ground["total"]
    assert any(not g["full"] for g in x2s.values())
    intrinsic = read_json(run["results"] / "eval" / "x2static_para" / "seed1" / "intrinsic.muse.json")
    ws = intrinsic["results"]["ws353"]
    assert len(ws["items"]["cosine"]) == ws["total"] and sum(c is not None for c in ws["items"]["cosine"]) == ws["scored"]
    md = (tables / "claims.md").read_text()
    assert " tokens of " in md and ", teacher " in md and "Holm" in md  # the scale and the teacher in the caption
    assert "Sentences of the paper not decided here:" in md
    for group in data["counts"]:
        figure = run["results"] / "figures" / group / "claims.pdf"
        assert figure.read_bytes()[:4] == b"%PDF" and figure.with_suffix(".png").stat().st_size > 10_000


def test_a_setting_no_table_reads_reruns_no_table(run):
    """A config change that no table or figure reads (here: one more teacher in teacher.models that
    no embedding uses) remakes the run manifest only (before, every table and figure was redone)."""
    override = yaml.safe_load(run["override"].read_text())
    override["teacher"] = {"models": {"unused": "./not/used"}}
    changed = run["override"].with_name("unrelated-change.yaml")
    changed.write_text(yaml.safe_dump(override))
    plan = snakemake("-n", configfiles=[TEST_CONFIG, changed])
    planned = {line.split()[0] for line in plan.stdout.splitlines()
               if len(line.split()) == 2 and line.split()[1].isdigit()}
    assert planned <= {"run_manifest", "all", "total"} and "run_manifest" in planned, plan.stdout


def test_the_tokenlearn_row_trains_is_evaluated_and_reported(run):
    """Tokenlearn from the run's teacher and its stored sentence pass: every training sentence a target, one run
    per seed (a claim names it), evaluated, in the summary, the main similarity tables and the claims."""
    results = run["results"]
    sentences = read_json(results / "corpus" / "manifest.json")["totals"]["sentences"]
    vectors = {}
    for seed in (1, 2):
        record = read_json(results / "embeddings" / "tokenlearn" / f"seed{seed}" / "vectors.json")
        assert record["method"] == "tokenlearn" and record["seed"] == seed
        assert record["data"]["sentences"] == sentences and record["data"]["targets"] == "pieces"
        assert [Path(f).name for f in record["data"]["features"]] == ["00000", "00001"]  # one pass per shard
        assert all("/features/sentence/" in f for f in record["data"]["features"])  # the students' pass, reused
        assert record["training"]["epochs"] >= 1 and record["vocab"]["written"] > 0
        assert (results / "eval" / "tokenlearn" / f"seed{seed}" / "intrinsic.web.json").exists()
        vectors[seed] = Embeddings.load(results / "embeddings" / "tokenlearn" / f"seed{seed}" / "vectors.bin")
    assert vectors[1].words == vectors[2].words and not np.allclose(vectors[1].vectors, vectors[2].vectors)
    assert read_json(results / "embeddings" / "tokenlearn_teacher_dim" / "seed1" / "vectors.json")["model"]["dim"] == 384
    summary = (results / "tables" / "summary.md").read_text()
    assert re.search(r"^\| tokenlearn \| tokenlearn \| 2[ |]", summary, re.M)  # two seeds
    for table, row in (("semglove/table1", "tokenlearn"), ("wang/table2", "tokenlearn"), ("c2v/table1", "tokenlearn"),
                       ("x2static/table3", "tokenlearn_teacher_dim")):  # X2Static's rows are at the teacher's width
        text = (results / "tables" / f"{table}.md").read_text()
        assert f"{row} (ours; not in the paper)" in text, table
    claims = read_json(results / "tables" / "claims.json")
    assert claims["verdicts"]["semglove_tl"] == "not tested"  # two seeds, min_seeds 3
    assert {r["id"]: r["group"] for r in claims["claims"]}["semglove_tl"] == "beyond"  # ours, not SemGloVe's
    assert "semglove_tl" in (results / "tables" / "claims.md").read_text()


def test_export_round_trips_the_runs_vectors(run):
    """`export` of the Tokenlearn row: the gensim file and the Model2Vec directory hold the run's vectors, and a
    one-word `encode` of the exported model is the run's own library model's (both at unit length)."""
    from gensim.models import KeyedVectors
    from model2vec import StaticModel

    results = run["results"]
    target = results / "export" / "tokenlearn" / "seed1" / "model2vec"
    snakemake("--", str(target), configfiles=[TEST_CONFIG, run["override"]])
    emb = Embeddings.load(results / "embeddings" / "tokenlearn" / "seed1" / "vectors.bin")
    kv = KeyedVectors.load(str(target.parent / "vectors.kv"))
    assert list(kv.index_to_key) == emb.words
    np.testing.assert_array_equal(kv.vectors, emb.vectors)
    exported = StaticModel.from_pretrained(target)
    library = StaticModel.from_pretrained(results / "embeddings" / "tokenlearn" / "seed1" / "tokenlearn")
    words = emb.words[:3] + emb.words[-3:]
    np.testing.assert_allclose(exported.encode(words), emb.unit_vectors()[[emb.index[w] for w in words]], atol=1e-6)
    np.testing.assert_allclose(exported.encode(words), library.encode(words, normalize=True), atol=1e-5)
    card = (target / "README.md").read_text()
    web = read_json(results / "eval" / "tokenlearn" / "seed1" / "intrinsic.web.json")["results"]["ws353"]
    assert f"| WS353 | {100 * web['score']:.1f} | {web['found']}/{web['total']} |" in card
    assert "| method | `tokenlearn` |" in card and "| seed | 1 |" in card and "enwiki-sample" in card


def test_resume_redoes_only_the_missing_input(run):
    tokenized = sorted((run["results"] / "corpus" / "tokenized").glob("*.tsv.gz"))
    assert tokenized, "the dump input was tokenized"
    before = {p: p.stat().st_mtime_ns for p in tokenized}
    victim = tokenized[0]
    # as if the run had been killed while tokenizing `victim`: its file never appeared (atomic
    # writes leave only a temporary file) and nothing downstream of the corpus ran yet
    victim.unlink()
    (victim.parent / f".{victim.name}.crashed.tmp").write_text("half a file")
    for done in (run["results"] / "corpus").glob("*.*"):
        done.unlink()
    # resume to the corpus (everything downstream would follow from it, as in the first run)
    corpus = str(run["results"] / "corpus" / "manifest.json")
    plan = snakemake("-n", "--", corpus, configfiles=[TEST_CONFIG, run["override"]])
    assert "tokenize" in plan.stdout and "extract_dump" not in plan.stdout  # finished upstream work kept
    snakemake("--", corpus, configfiles=[TEST_CONFIG, run["override"]])
    assert victim.exists()
    for p, mtime in before.items():
        if p != victim:
            assert p.stat().st_mtime_ns == mtime


def test_corrupt_input_is_reported_by_name(run, tmp_path, shared_data):
    bad_mirror = tmp_path / "mirror" / "corpus"
    bad_mirror.mkdir(parents=True)
    # the evaluation sets are there (the plan-time check would stop the run before any fetch otherwise)
    (tmp_path / "mirror" / "eval").symlink_to((shared_data / "eval").resolve())
    src = Path(run["data"]) / "corpus" / "enwiki-sample-pages-articles.xml.bz2"
    (bad_mirror / src.name).write_bytes(src.resolve().read_bytes()[:100000])  # truncated download
    override = tmp_path / "bad.yaml"
    override.write_text(yaml.safe_dump({
        "results_dir": str(tmp_path / "results"),
        "resources": {"download_dir": str(tmp_path / "data"), "mirror": str(tmp_path / "mirror"), "allow_download": False},
    }))
    # the corpus target: only its fetch can fail first
    corpus = str(tmp_path / "results" / "corpus" / "manifest.json")
    result = snakemake("--", corpus, configfiles=[TEST_CONFIG, override], check=False)
    assert result.returncode != 0
    log = (tmp_path / "results" / "logs" / "resources" / "corpus" / f"{src.name}.log").read_text()
    assert "enwiki-sample-pages-articles.xml.bz2: sha256 mismatch" in log
