"""Skip-gram, CBOW and fastText through gensim, on our shards and our vocabulary."""

import gzip
import json

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.corpus.shards import Sentence
from staticvec.corpus.vocab import Vocabulary, count_tokens
from staticvec.embeddings import Embeddings
from staticvec.errors import StaticvecError
from staticvec.train.gensim_baselines import (
    FastTextConfig,
    SentenceCorpus,
    Word2VecConfig,
    train_fasttext,
    train_word2vec,
)

TOPICS = [[f"sea{k}" for k in range(8)], [f"sky{k}" for k in range(8)]]


def topic_sentences(n=1200, seed=0):
    """Each sentence draws its words from one of two disjoint topics."""
    rng = np.random.default_rng(seed)
    return [list(rng.choice(TOPICS[k % 2], size=10)) for k in range(n)]


@pytest.fixture()
def corpus(tmp_path):
    sentences = topic_sentences()
    path = tmp_path / "00000.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for k, tokens in enumerate(sentences):
            fh.write(Sentence(str(k), 0, True, tokens).to_line())
            fh.write(Sentence(str(k), 1, False, ["sea0", "sky0"] * 3).to_line())  # filtered out: never trained on
    counts = count_tokens(sentences)
    counts["rare"] = 1  # below min_count 2: must not reach gensim
    vocab = Vocabulary.from_counts(counts, min_count=2)
    vocab.save(tmp_path / "vocab.tsv")
    return path, vocab


def main_raising(argv):
    """The command's handler called directly: its StaticvecError raised (main prints it and returns 2)."""
    from staticvec.cli import build_parser

    args = build_parser().parse_args(argv)
    return args.handler(args)


def separation(emb):
    unit = emb.unit_vectors()
    groups = [[emb.index[w] for w in topic] for topic in TOPICS]
    within = np.mean([np.mean(unit[g] @ unit[g].T) for g in groups])
    across = np.mean(unit[groups[0]] @ unit[groups[1]].T)
    return within, across


def test_sentence_corpus_is_restartable_and_reads_kept_sentences_only(corpus, tmp_path):
    path, _ = corpus
    (tmp_path / "extra.txt").write_text("sea1 sky1\n\nsea2\n")
    c = SentenceCorpus([path], [tmp_path / "extra.txt"])
    first, second = list(c), list(c)
    assert first == second
    assert first[:1200] == topic_sentences() and first[1200:] == [["sea1", "sky1"], [], ["sea2"]]
    assert c.count() == (1203, 12003)


@pytest.mark.parametrize("arch", ["skipgram", "cbow"])
def test_word2vec_shares_our_vocabulary_and_learns_the_topics(corpus, arch):
    path, vocab = corpus
    cfg = Word2VecConfig(arch=arch, dim=16, window=3, negative=3, sample=0, epochs=3, seed=1, workers=1)
    emb, record = train_word2vec(SentenceCorpus([path]), vocab, cfg)
    assert emb.words == vocab.words and emb.dim == 16
    assert emb.counts.tolist() == vocab.counts
    within, across = separation(emb)
    assert within > across + 0.3
    assert record["n_sentences"] == 1200 and record["hyperparameters"]["alpha"] is None


def test_fasttext_vectors_cover_the_vocabulary(corpus):
    path, vocab = corpus
    cfg = FastTextConfig(dim=16, window=3, negative=3, sample=0, epochs=3, seed=1, workers=1, bucket=5000)
    emb, _ = train_fasttext(SentenceCorpus([path]), vocab, cfg)
    assert emb.words == vocab.words and "rare" not in emb
    within, across = separation(emb)
    assert within > across + 0.1


def test_cli_word2vec_writes_vectors_and_record(corpus, tmp_path):
    path, vocab = corpus
    out = tmp_path / "cbow" / "vectors.bin"
    assert main(["train", "cbow", "--shards", str(path), "--vocab", str(tmp_path / "vocab.tsv"),
                 "--min-count", "2", "--params", '{"dim": 8, "epochs": 1}', "--threads", "1", "--out", str(out)]) == 0
    emb = Embeddings.load(out)
    assert emb.words == vocab.words
    record = json.loads((tmp_path / "cbow" / "vectors.json").read_text())
    assert record["method"] == "cbow" and record["hyperparameters"]["window"] == 5
    assert main(["train", "cbow", "--vocab", str(tmp_path / "vocab.tsv"), "--out", str(out)]) == 2  # no sentences
    bad = ["train", "cbow", "--shards", str(path), "--vocab", str(tmp_path / "vocab.tsv"), "--out", str(out)]
    with pytest.raises(StaticvecError, match="unknown hyper-parameter.*arch"):  # the command fixes the architecture
        main_raising([*bad, "--params", '{"arch": "skipgram"}'])
    with pytest.raises(StaticvecError, match="unknown hyper-parameter.*windw"):
        main_raising([*bad, "--params", '{"windw": 3}'])


@pytest.mark.parametrize("method", ["glove", "semglove", "skipgram", "cbow", "fasttext", "model2vec"])
def test_config_sections_become_the_trainers_parameters(method):
    """Every trainer key of config/config.yaml's methods.<method> reaches the trainer's dataclass unchanged
    through --params (the rule's JSON); the workflow's keys stay out of it."""
    import dataclasses
    import shlex

    from staticvec.cli import build_parser
    from staticvec.config import load_config
    from staticvec.methods import REGISTRY, trainer_params
    from staticvec.train import cli as train_cli
    from staticvec.train.gensim_baselines import FastTextConfig
    from staticvec.train.glove import GloveParams
    from staticvec.train.model2vec import Model2VecParams

    settings = load_config(["config/config.yaml"])["methods"][method]
    settings = {k: v for k, v in settings.items() if k not in ("variants", "small_dim_iterations")}
    row = trainer_params(method, settings)
    assert not set(row) & set(REGISTRY[method].workflow_keys)
    command = REGISTRY[method].command
    required = {"glove": ["--cooc", "c"], "model2vec": ["--teacher", "t", "--model-dir", "m"]}.get(command, [])
    args = build_parser().parse_args(["train", command, "--vocab", "v", "--out", "o", *required,
                                      *shlex.split(shlex.join(["--params", json.dumps(row)]))])
    params_cls = {"glove": GloveParams, "fasttext": FastTextConfig, "model2vec": Model2VecParams}.get(command, Word2VecConfig)
    fixed = {} if params_cls in (GloveParams, Model2VecParams) else {"seed": 1, "workers": 1}
    if command in ("skipgram", "cbow"):
        fixed["arch"] = command
    params = train_cli.build_params(args, params_cls, fixed)
    for key, value in row.items():
        assert getattr(params, key) == value, key
    if command in ("skipgram", "cbow"):
        assert params.arch == method
    names = {f.name for f in dataclasses.fields(params_cls)}
    assert set(row) <= names


@pytest.mark.parametrize("command", ["skipgram", "cbow", "fasttext"])
def test_same_seed_gives_the_same_vectors_byte_for_byte(corpus, tmp_path, command):
    path, _ = corpus

    def run(name, *flags):
        out = tmp_path / name / "vectors.bin"
        extra = ["--bucket", "2000"] if command == "fasttext" else []
        assert main(["train", command, "--shards", str(path), "--vocab", str(tmp_path / "vocab.tsv"),
                     "--min-count", "2", "--params", '{"dim": 8, "epochs": 2}', "--threads", "2", "--seed", "3",
                     "--out", str(out), *extra, *flags]) == 0
        return out.read_bytes(), json.loads(out.with_name("vectors.json").read_text())

    first, record = run("a")
    second, _ = run("b")
    assert first == second
    assert record["threads"] == 1 and record["deterministic"] is True
    _, fast = run("c", "--no-deterministic")
    assert fast["threads"] == 2 and fast["deterministic"] is False


def test_run_manifest_records_threads_and_determinism_per_method(tmp_path):
    from staticvec.config import deep_merge, load_config

    config = load_config(["config/config.yaml"])
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps({"totals": {"tokens": 10}, "description": {"source": "x"}}))
    for overrides, expected in (({}, {"threads": 1, "deterministic": True}),
                                ({"methods": {"glove": {"deterministic": False, "threads": 6}}},
                                 {"threads": 6, "deterministic": False})):
        out = tmp_path / "manifest.json"
        assert main(["report", "manifest", "--config-json", json.dumps(deep_merge(config, overrides)),
                     "--corpus-manifest", str(corpus), "--out", str(out)]) == 0
        training = json.loads(out.read_text())["training"]
        assert training["glove"] == expected
        assert training["fasttext"] == {"threads": 1, "deterministic": True}


def test_context_vectors_are_the_negative_sampling_output_table(corpus, tmp_path):
    """Context-to-Vec's Skip-gram(context) row: the output vectors (gensim's syn1neg) of the same run."""
    from gensim.models import Word2Vec

    from staticvec.train.gensim_baselines import SentenceCorpus as SC
    from staticvec.train.gensim_baselines import _common_kwargs, _train

    path, vocab = corpus
    cfg = Word2VecConfig(dim=16, epochs=3, seed=5, vectors="context")
    emb, record = train_word2vec(SC([path]), vocab, cfg)
    model = Word2Vec(**_common_kwargs(cfg))
    _train(model, SC([path]), vocab, cfg.epochs)
    rows = [model.wv.key_to_index[w] for w in vocab.words]
    np.testing.assert_array_equal(emb.vectors, model.syn1neg[rows].astype(np.float32))
    assert not np.allclose(emb.vectors, model.wv.vectors[rows])  # not the input table
    within, across = separation(emb)
    assert within > across + 0.05 and record["hyperparameters"]["vectors"] == "context"
    out = tmp_path / "ctx.bin"
    assert main(["train", "skipgram", "--shards", str(path), "--vocab", str(tmp_path / "vocab.tsv"), "--min-count", "2",
                 "--params", '{"dim": 16, "epochs": 3, "vectors": "context"}', "--seed", "5", "--out", str(out)]) == 0
    np.testing.assert_array_equal(Embeddings.load(out).vectors, emb.vectors)
