"""`staticvec export` (staticvec.export; formats keyedvectors and model2vec of staticvec.embeddings): each format
loads back in its own library with the same vectors, `encode` of the Model2Vec directory (and sentence-transformers'
readers of it) gives the words' vectors as Model2Vec's convention says, and the model card says what made the
vectors and their scores; the workflow plans an export per embedding and seed, outside the default targets."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.embeddings import Embeddings
from staticvec.errors import InputFileError

pytest.importorskip("model2vec")

REPO = Path(__file__).resolve().parents[1]
WORDS = ["the", ",", "cat", "sat", "n't", "u.s.", "paris", "mat"]


@pytest.fixture(scope="module")
def embedding():
    rng = np.random.default_rng(7)
    return Embeddings(WORDS, rng.standard_normal((len(WORDS), 6)).astype(np.float32), [50, 40, 9, 7, 5, 5, 4, 3])


@pytest.fixture(scope="module")
def exported(embedding, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    embedding.save(tmp / "vectors.npy")  # the project format keeps the corpus counts (word2vec binary does not)
    result = {"results": {"ws353": {"task": "similarity", "score": 0.6123, "found": 350, "total": 353},
                          "simlex999": {"task": "similarity", "score": 0.301, "found": 990, "total": 999},
                          "google": {"task": "analogy", "score": 0.25, "found": 100, "total": 19544}}}
    (tmp / "intrinsic.web.json").write_text(json.dumps(result))
    provenance = {"git_commit": "0123456789ab", "config_hash": "cafebabe1234", "staticvec": "0.1.0",
                  "date": "2026-12-01 10:00 UTC",
                  "corpus_stats": {"source": "enwiki-2015", "tokens": 1000133, "sentences": 43086, "vocabulary": 13815,
                                   "min_count": 5}}
    (tmp / "provenance.json").write_text(json.dumps(provenance))
    code = main(["export", "--vectors", str(tmp / "vectors.npy"), "--keyedvectors", str(tmp / "out" / "vectors.kv"),
                 "--model2vec", str(tmp / "out" / "model2vec"), "--embedding", "tokenlearn", "--seed", "2",
                 "--method", "tokenlearn", "--description", "Tokenlearn from the same teacher and corpus",
                 "--teacher", "minilm (minilm)", "--provenance", str(tmp / "provenance.json"),
                 "--scores", f"web={tmp / 'intrinsic.web.json'}"])
    assert code == 0
    return tmp / "out"


def test_keyedvectors_round_trip(embedding, exported):
    from gensim.models import KeyedVectors

    kv = KeyedVectors.load(str(exported / "vectors.kv"))
    assert list(kv.index_to_key) == WORDS
    np.testing.assert_array_equal(kv.vectors, embedding.vectors)
    assert [kv.get_vecattr(w, "count") for w in WORDS] == embedding.counts.tolist()
    # gensim's neighbours are the brute-force cosine neighbours of the vectors written
    unit = embedding.vectors / np.linalg.norm(embedding.vectors, axis=1, keepdims=True)
    cosines = unit @ unit[WORDS.index("cat")]
    ours = [(WORDS[i], float(cosines[i])) for i in np.argsort(-cosines) if WORDS[i] != "cat"][:3]
    theirs = kv.most_similar("cat", topn=3)
    assert [w for w, _ in theirs] == [w for w, _ in ours]
    assert [s for _, s in theirs] == pytest.approx([s for _, s in ours], abs=1e-6)
    assert [p.name for p in exported.iterdir() if p.name.startswith("vectors.kv")] == ["vectors.kv"]  # one file
    back = Embeddings.load(exported / "vectors.kv")  # the project's own reader of the format
    assert back.words == WORDS and back.counts.tolist() == embedding.counts.tolist()


def test_model2vec_round_trip_and_encode(embedding, exported):
    from model2vec import StaticModel

    model = StaticModel.from_pretrained(exported / "model2vec")
    assert model.tokens[:2] == ("[PAD]", "[UNK]") and list(model.tokens[2:]) == WORDS
    assert model.normalize  # Model2Vec's convention for its models: encode is unit length
    unit = embedding.unit_vectors()
    # a one-word text is the word's vector at unit length; the raw vector without normalisation
    for word in ("cat", "n't", "u.s.", ","):
        np.testing.assert_allclose(model.encode([word])[0], unit[embedding.index[word]], rtol=1e-6, atol=1e-6)
    raw = StaticModel.from_pretrained(exported / "model2vec", normalize=False)
    np.testing.assert_array_equal(raw.encode(["cat"])[0], embedding["cat"])
    # a text: the unit-length mean of its words; split on whitespace only, lower-cased (a lower-case vocabulary),
    # unknown words left out
    mean = (embedding["the"] + embedding["cat"] + embedding["sat"]) / 3
    for text in ("the cat sat", "The CAT  sat", "the cat sat dogs", "the cat sat [UNK]"):
        np.testing.assert_allclose(model.encode([text])[0], mean / np.linalg.norm(mean), rtol=1e-6, atol=1e-6)
    assert not model.encode(["cat,"]).any()  # 'cat,' is not a word of the vocabulary: nothing known
    back = Embeddings.load(exported / "model2vec")  # the project's reader: the words' rows, no special tokens
    assert back.words == WORDS
    np.testing.assert_array_equal(back.vectors, embedding.vectors)


def test_sentence_transformers_reads_the_directory(embedding, exported):
    st = pytest.importorskip("sentence_transformers")
    try:
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    except ImportError:  # sentence-transformers before 6
        from sentence_transformers.models import StaticEmbedding

    model = st.SentenceTransformer(str(exported / "model2vec"), device="cpu")  # modules.json: StaticEmbedding + Normalize
    unit = embedding.unit_vectors()
    np.testing.assert_allclose(model.encode(["cat", "u.s."]), unit[[2, 5]], rtol=1e-5, atol=1e-6)
    bare = st.SentenceTransformer(modules=[StaticEmbedding.from_model2vec(str(exported / "model2vec"))], device="cpu")
    np.testing.assert_allclose(bare.encode(["cat"])[0], embedding["cat"], rtol=1e-6, atol=1e-6)  # the mean, unscaled
    mean = (embedding["the"] + embedding["cat"]) / 2
    np.testing.assert_allclose(bare.encode(["the cat"])[0], mean, rtol=1e-5, atol=1e-6)


def test_model_card_says_what_made_the_vectors(exported):
    from model2vec.modelcards import get_metadata_from_readme

    card = (exported / "model2vec" / "README.md").read_text()
    assert get_metadata_from_readme(exported / "model2vec" / "README.md")["library_name"] == "model2vec"
    for fact in ("# tokenlearn (seed 2)", "Tokenlearn from the same teacher and corpus.", "| method | `tokenlearn` |",
                 "| seed | 2 |", "| teacher | minilm (minilm) |",
                 "enwiki-2015: 1,000,133 tokens, 43,086 sentences; vocabulary 13,815 words (count ≥ 5)",
                 f"| words × dimensions | {len(WORDS)} × 6 |", "commit `0123456789ab`", "config `cafebabe1234`",
                 "| WS353 | 61.2 | 350/353 |", "| SimLex-999 | 30.1 | 990/999 |", "| Google | 25.0 | 100/19544 |",
                 "Protocol `web`", "lower-cased"):
        assert fact in card, fact
    assert "WS353S" not in card  # only the sets the run scored


def test_a_cased_vocabulary_keeps_case(tmp_path):
    from model2vec import StaticModel

    emb = Embeddings(["Paris", "paris", "the"], np.eye(3, dtype=np.float32))
    emb.save(tmp_path / "m2v", "model2vec")
    model = StaticModel.from_pretrained(tmp_path / "m2v", normalize=False)
    np.testing.assert_array_equal(model.encode(["Paris", "paris"]), np.eye(3, dtype=np.float32)[:2])
    assert "lower-cased" not in (tmp_path / "m2v" / "README.md").read_text()  # the library's own card (no readme)


def test_bad_inputs(tmp_path, embedding):
    with pytest.raises(ValueError, match=r"special token\(s\) \['\[UNK\]'\]"):
        Embeddings(["a", "[UNK]"], np.ones((2, 2), np.float32)).save(tmp_path / "m", "model2vec")
    assert not (tmp_path / "m").exists()  # nothing half-written
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match="not a Model2Vec directory: no model.safetensors, tokenizer.json"):
        Embeddings.load(tmp_path / "empty")
    (tmp_path / "junk.kv").write_bytes(b"not a pickle")
    with pytest.raises(InputFileError, match="junk.kv.*not a gensim KeyedVectors file"):
        Embeddings.load(tmp_path / "junk.kv")
    embedding.save(tmp_path / "v.bin")
    assert main(["export", "--vectors", str(tmp_path / "v.bin")]) == 2  # nothing to write
    assert main(["export", "--vectors", str(tmp_path / "v.bin"), "--keyedvectors", str(tmp_path / "x.kv"),
                 "--scores", "web"]) == 2  # not PROTOCOL=RESULT
    assert not (tmp_path / "x.kv").exists()


def test_the_workflow_plans_an_export_per_embedding_and_seed(shared_data):
    """Not a default target; `snakemake -n <export dir>` plans one export job reading that seed's vectors, the
    run's provenance and its intrinsic results under the summary's protocols."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    target = "results/default/export/c2v_post/seed2/model2vec"
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", target],
                            capture_output=True, text=True, env=env, cwd=REPO)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    assert re.search(r"^export\s+1$", out, re.M)
    command = next(line for line in out.splitlines() if "staticvec export" in line)
    assert "--vectors results/default/embeddings/c2v_post/seed2/vectors.bin" in command
    assert "--provenance results/default/provenance.json" in command
    assert "--method retrofit" in command and "--teacher 'minilm (minilm)'" in command  # the base's teacher
    assert "--scores web=results/default/eval/c2v_post/seed2/intrinsic.web.json " \
           "muse=results/default/eval/c2v_post/seed2/intrinsic.muse.json" in command
    assert "--keyedvectors results/default/export/c2v_post/seed2/vectors.kv" in command
    default = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall"], capture_output=True, text=True,
                             env=env, cwd=REPO)
    assert default.returncode == 0 and not re.search(r"^export\s", default.stdout, re.M)  # not built by default


def test_the_card_shows_the_summarys_similarity_and_analogy_sets_in_registry_order(monkeypatch):
    import dataclasses

    from staticvec.evaluate import datasets
    from staticvec.export import headline_scores

    scored = {name: {"task": d.task, "score": 0.5, "found": 1, "total": 2} for name, d in datasets.DATASETS.items()}
    # a summary set scored by the run but of another kind (categorization, relational) is not a headline
    rows = headline_scores({"web": {"results": dict(reversed(scored.items()))}})["web"]
    expected = [d.label for d in datasets.DATASETS.values() if d.task in ("similarity", "analogy")]
    assert [label for label, *_ in rows] == expected and "AP" not in expected and "SemEval-2012" not in expected
    assert rows[0][1:] == (50.0, 1, 2)
    # a set left out of the summary leaves the card too
    monkeypatch.setitem(datasets.DATASETS, "rw", dataclasses.replace(datasets.DATASETS["rw"], in_summary=False))
    assert "RW" not in [label for label, *_ in headline_scores({"web": {"results": scored}})["web"]]
