"""Skip-gram, CBOW and fastText through gensim, on our shards and our vocabulary."""

import gzip
import json

import numpy as np
import pytest

from staticvec.cli import main
from staticvec.corpus.shards import Sentence
from staticvec.corpus.vocab import Vocabulary, count_tokens
from staticvec.embeddings import Embeddings
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
    assert main(["train", "word2vec", "--arch", "cbow", "--shards", str(path), "--vocab", str(tmp_path / "vocab.tsv"),
                 "--min-count", "2", "--dim", "8", "--epochs", "1", "--workers", "1", "--out", str(out)]) == 0
    emb = Embeddings.load(out)
    assert emb.words == vocab.words
    record = json.loads((tmp_path / "cbow" / "vectors.json").read_text())
    assert record["method"] == "cbow" and record["hyperparameters"]["window"] == 5
    assert main(["train", "word2vec", "--vocab", str(tmp_path / "vocab.tsv"), "--out", str(out)]) == 2  # no sentences


@pytest.mark.parametrize("method", ["glove", "skipgram", "cbow", "fasttext"])
def test_config_sections_become_the_trainers_flags(method):
    """Every hyper-parameter of config/config.yaml reaches the CLI unchanged."""
    import shlex

    from staticvec.cli import build_parser
    from staticvec.config import load_config
    from staticvec.train.cli import method_flags

    settings = load_config(["config/config.yaml"])["methods"][method]
    command = "glove" if method == "glove" else ("fasttext" if method == "fasttext" else "word2vec")
    required = ["--vocab", "v", "--out", "o"] + (["--cooc", "c"] if method == "glove" else [])
    args = build_parser().parse_args(["train", command, *required, *shlex.split(method_flags(method, settings))])
    renamed = {"gpu_batch_size": "batch_size"}
    for key, value in settings.items():
        if key in ("threads",) or (method == "glove" and key == "window"):
            continue
        assert getattr(args, renamed.get(key, key)) == value, key
    if method in ("skipgram", "cbow"):
        assert args.arch == method
