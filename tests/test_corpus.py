"""Corpus stage: WikiExtractor/dump reading, tokenization and filters, budgeted shards, vocabulary, manifest."""

import gzip
import json
import lzma
from collections import Counter

import pytest

from staticvec.corpus.prepare import build_vocabulary, prepare_corpus, tokenize_file
from staticvec.corpus.shards import Sentence, iter_paragraphs, iter_records, iter_sentences
from staticvec.corpus.sources import Document, extract_dump, iter_documents
from staticvec.corpus.tokenize import TokenizerSettings, tokenize_documents
from staticvec.corpus.vocab import Vocabulary
from staticvec.errors import InputFileError

WIKI_TEXT = """<doc id="7" url="https://en.wikipedia.org/wiki?curid=7" title="Cats &amp; Dogs">
Cats &amp; Dogs

Cats are small carnivorous mammals that people keep at home as pets. They sleep a lot.
History.
The domestic cat was first kept in the Near East about ten thousand years ago, scholars say.
</doc>
<doc id="9" url="https://en.wikipedia.org/wiki?curid=9" title="Dogs">
Dogs

Dogs are domesticated descendants of the wolf and were bred by humans over many millennia.
</doc>
"""


def write_xz(path, text):
    with lzma.open(path, "wt", encoding="utf-8") as fh:
        fh.write(text)
    return path


# ---------------------------------------------------------------- reading sources


def test_wikiextractor_documents_drop_title_and_keep_paragraphs(tmp_path):
    docs = list(iter_documents(write_xz(tmp_path / "wiki_00", WIKI_TEXT)))
    assert [d.id for d in docs] == ["7", "9"]
    assert docs[0].title == "Cats & Dogs"
    assert docs[0].paragraphs == [
        "Cats are small carnivorous mammals that people keep at home as pets. They sleep a lot.",
        "History.",
        "The domestic cat was first kept in the Near East about ten thousand years ago, scholars say.",
    ]
    assert len(docs[1].paragraphs) == 1


def test_truncated_xz_file_is_reported_with_its_name(tmp_path):
    full = write_xz(tmp_path / "full.xz", WIKI_TEXT * 50)
    data = full.read_bytes()
    cut = tmp_path / "cut.xz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputFileError, match="cut.xz.*corrupt or truncated"):
        list(iter_documents(cut))


def test_unclosed_doc_at_end_of_file_is_truncation(tmp_path):
    path = tmp_path / "wiki_01"
    path.write_text(WIKI_TEXT.rsplit("</doc>", 1)[0], encoding="utf-8")
    with pytest.raises(InputFileError, match=r"wiki_01.*truncated.*id=\"9\""):
        list(iter_documents(path))


def test_text_outside_doc_blocks_is_rejected_with_line(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("just some text\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"plain.txt, line 1"):
        list(iter_documents(path))


def test_dump_extraction_yields_clean_articles(tmp_path, shared_data):
    files = extract_dump(shared_data / "corpus" / "enwiki-sample-pages-articles.xml.bz2", tmp_path / "extracted")
    docs = [d for f in files for d in iter_documents(f)]
    titles = {d.title for d in docs}
    assert {"Anarchism", "Autism", "Albedo", "Achilles"} <= titles
    assert "AccessibleComputing" not in titles  # a redirect page
    paragraphs = [p for d in docs for p in d.paragraphs]
    text = "\n".join(paragraphs)
    for markup in ("[[", "]]", "'''", "<ref", "</ref", "<div", "[http", "&amp;", "Category:"):
        assert markup not in text, markup
    # without template expansion a few inline templates survive inside formulas (CO2 {{eqm}} H2CO3)
    assert sum("{{" in p for p in paragraphs) <= len(paragraphs) / 1000
    anarchism = next(d for d in docs if d.title == "Anarchism")
    assert anarchism.paragraphs[0].startswith("Anarchism is a political philosophy")


# ---------------------------------------------------------------- tokenization


def sentence_of(n):
    return " ".join(f"w{i}" for i in range(n - 1)) + "."


def test_tokenizer_hand_cases():
    settings = TokenizerSettings(min_sentence_tokens=1, max_sentence_tokens=100)
    doc = Document("1", "t", ["The Self-Governed state's X-ray cost $5.5\u00a0million in 1999–2000. Next one!"])
    sentences = list(tokenize_documents([doc], settings))
    assert [s.tokens for s in sentences] == [
        ["the", "self-governed", "state", "'s", "x-ray", "cost", "$", "5.5", "million", "in", "1999–2000", "."],
        ["next", "one", "!"],
    ]
    assert all(s.article == "1" and s.paragraph == 0 for s in sentences)
    split = list(tokenize_documents([doc], TokenizerSettings(min_sentence_tokens=1, split_hyphens=True)))
    assert split[0].tokens[1:4] == ["self", "-", "governed"]
    cased = list(tokenize_documents([doc], TokenizerSettings(lowercase=False, min_sentence_tokens=1)))
    assert cased[0].tokens[0] == "The"


def test_sentence_length_filter_boundaries_and_paragraph_dropping():
    settings = TokenizerSettings(min_sentence_tokens=10, max_sentence_tokens=40)
    paragraphs = [
        " ".join([sentence_of(9), sentence_of(10), sentence_of(40), sentence_of(41)]),
        sentence_of(5),  # no training sentence: dropped whole
        sentence_of(12),
    ]
    sentences = list(tokenize_documents([Document("3", "t", paragraphs)], settings))
    assert [(s.paragraph, len(s.tokens), s.keep) for s in sentences] == [
        (0, 9, False), (0, 10, True), (0, 40, True), (0, 41, False), (2, 12, True),
    ]


def test_x2static_paragraph_filter_on_the_raw_paragraph():
    # X2Static: paragraphs with fewer than 3 sentences or 140 characters are removed before tokenizing;
    # every sentence counts (short ones too), characters are the raw paragraph's
    settings = TokenizerSettings(min_sentence_tokens=10, max_sentence_tokens=40,
                                 min_paragraph_sentences=3, min_paragraph_chars=140)
    three = " ".join([sentence_of(12), sentence_of(3), sentence_of(3)])  # 3 sentences, one training sentence
    assert len(three) < 140
    exactly = "x" * (139 - len(three)) + " " + three  # the first sentence grows: exactly 140 characters
    assert len(exactly) == 140
    paragraphs = [
        " ".join([sentence_of(30), sentence_of(30)]),  # 2 sentences, > 140 characters: removed
        three,  # 3 sentences, < 140 characters: removed
        exactly,  # 3 sentences, 140 characters: kept
        sentence_of(12) + "  " + sentence_of(35) + " " + sentence_of(2),  # 3 sentences, > 140: kept
    ]
    removed = {}
    sentences = list(tokenize_documents([Document("5", "t", paragraphs)], settings, removed=removed))
    assert sorted({s.paragraph for s in sentences}) == [2, 3]
    assert [(s.paragraph, s.keep) for s in sentences if s.paragraph == 2] == [(2, True), (2, False), (2, False)]
    assert removed == {"paragraphs": 2, "sentences": 3, "tokens": 30 + 30 + 12}
    # no filter: every paragraph with a training sentence stays
    plain = TokenizerSettings(min_sentence_tokens=10, max_sentence_tokens=40)
    assert sorted({s.paragraph for s in tokenize_documents([Document("5", "t", paragraphs)], plain)}) == [0, 1, 2, 3]


def test_tokenize_command_applies_the_configured_paragraph_filter(tmp_path):
    from staticvec.cli import main

    src = write_xz(tmp_path / "wiki_00", WIKI_TEXT)
    common = ["corpus", "tokenize", str(src), "--min-sentence-tokens", "5"]
    assert main([*common, "--out", str(tmp_path / "all.tsv.gz"), "--stats", str(tmp_path / "all.json")]) == 0
    assert main([*common, "--out", str(tmp_path / "f.tsv.gz"), "--stats", str(tmp_path / "f.json"),
                 "--min-paragraph-sentences", "2", "--min-paragraph-chars", "140"]) == 0
    kept = {r.article for r in iter_records(tmp_path / "f.tsv.gz")}
    assert {r.article for r in iter_records(tmp_path / "all.tsv.gz")} == {"7", "9"}
    assert kept == set()  # every paragraph of WIKI_TEXT has one sentence or fewer than 140 characters
    stats = json.loads((tmp_path / "f.json").read_text())
    assert stats["paragraph_filter_removed"]["paragraphs"] == 3 and stats["tokens"] == 0


def test_shard_round_trip_and_paragraph_filter(tmp_path):
    records = [
        Sentence("1", 0, True, "a b c".split()),
        Sentence("1", 0, False, "d e".split()),
        Sentence("1", 0, True, "f g h i".split()),
        Sentence("1", 1, True, "j k".split()),
        Sentence("2", 0, True, "l".split()),
    ]
    path = tmp_path / "s.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(r.to_line() for r in records)
    assert list(iter_records(path)) == records
    assert list(iter_sentences(path)) == [["a", "b", "c"], ["f", "g", "h", "i"], ["j", "k"], ["l"]]
    paragraphs = list(iter_paragraphs(path))
    assert [(p.article, p.index, len(p.sentences)) for p in paragraphs] == [("1", 0, 3), ("1", 1, 1), ("2", 0, 1)]
    assert paragraphs[0].n_chars == len("a b c d e f g h i")
    assert [p.index for p in iter_paragraphs(path, min_sentences=3)] == [0]
    assert len(list(iter_paragraphs(path, min_chars=4))) == 1


def test_malformed_shard_line_is_reported(tmp_path):
    path = tmp_path / "bad.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("1\t0\t1\ta b\n1\t0\tyes\tc d\n")
    with pytest.raises(InputFileError, match=r"bad.tsv.gz, line 2"):
        list(iter_records(path))


# ---------------------------------------------------------------- preparing the corpus


@pytest.fixture
def tokenized_inputs(tmp_path):
    """Two tokenized inputs of 30 articles, varied paragraph and sentence lengths."""
    import random

    rng = random.Random(0)
    words = [f"w{i}" for i in range(60)]
    settings = TokenizerSettings(min_sentence_tokens=3, max_sentence_tokens=12)
    paths, stats = [], []
    for f in range(2):
        docs = []
        for a in range(15):
            paras = []
            for _ in range(rng.randint(1, 4)):
                sents = [" ".join(rng.choices(words, k=rng.randint(1, 15))) + " ." for _ in range(rng.randint(1, 4))]
                paras.append(" ".join(sents))
            docs.append(f'<doc id="{f}{a}" url="u" title="T{a}">\nT{a}\n\n' + "\n".join(paras) + "\n</doc>\n")
        src = write_xz(tmp_path / f"wiki_{f:02d}", "".join(docs))
        out, st = tmp_path / f"tok{f}.tsv.gz", tmp_path / f"tok{f}.json"
        tokenize_file(src, out, st, settings)
        paths.append(out)
        stats.append(st)
    return paths, stats


def brute_force_stats(paths):
    kept = [r for p in paths for r in iter_records(p) if r.keep]
    paragraphs = {(r.article, r.paragraph) for p in paths for r in iter_records(p)}
    return {
        "articles": len({r.article for p in paths for r in iter_records(p)}),
        "paragraphs": len(paragraphs),
        "sentences": len(kept),
        "tokens": sum(len(r.tokens) for r in kept),
        "counts": Counter(t for r in kept for t in r.tokens),
    }


def test_manifest_and_counts_match_a_brute_force_count(tmp_path, tokenized_inputs):
    paths, stats = tokenized_inputs
    manifest = prepare_corpus(paths, stats, tmp_path / "corpus", n_shards=3, max_tokens=None, min_count=2)
    shards = sorted((tmp_path / "corpus" / "shards").glob("*.tsv.gz"))
    assert len(shards) == 3
    truth = brute_force_stats(shards)
    assert truth["tokens"] == brute_force_stats(paths)["tokens"]  # no budget: everything
    for key in ("articles", "paragraphs", "sentences", "tokens"):
        assert manifest["totals"][key] == truth[key], key
    for shard, entry in zip(shards, manifest["shards"]):
        one = brute_force_stats([shard])
        assert (entry["sentences"], entry["tokens"], entry["paragraphs"]) == (one["sentences"], one["tokens"], one["paragraphs"])
        shard_vocab = Vocabulary.load(str(shard).replace(".tsv.gz", ".counts.tsv"))
        assert dict(zip(shard_vocab.words, shard_vocab.counts)) == one["counts"]
    total = Vocabulary.load(tmp_path / "corpus" / "counts.tsv")
    assert dict(zip(total.words, total.counts)) == truth["counts"]
    assert manifest["totals"]["vocabulary"] == sum(1 for c in truth["counts"].values() if c >= 2)
    # shards hold nearly equal token counts (whole paragraphs of ≤ 4×12 tokens)
    sizes = [e["tokens"] for e in manifest["shards"]]
    assert max(sizes) - min(sizes) <= 2 * 4 * 12


def test_token_budget_stops_at_the_paragraph_that_reaches_it(tmp_path, tokenized_inputs):
    paths, stats = tokenized_inputs
    budget = 300
    manifest = prepare_corpus(paths, stats, tmp_path / "c", n_shards=2, max_tokens=budget, min_count=1)
    shards = sorted((tmp_path / "c" / "shards").glob("*.tsv.gz"))
    got = brute_force_stats(shards)["tokens"]
    assert manifest["totals"]["tokens"] == got
    assert budget <= got < budget + 4 * 12  # overshoot: at most one paragraph
    # the prepared corpus is a prefix of the inputs, paragraphs whole
    records = [r for p in shards for r in iter_records(p)]
    source = [r for p in paths for r in iter_records(p)]
    assert records == source[: len(records)]
    assert (source[len(records)].article, source[len(records)].paragraph) != (records[-1].article, records[-1].paragraph)


def test_vocabulary_min_count_and_order_vs_brute_force(tmp_path, tokenized_inputs):
    paths, stats = tokenized_inputs
    prepare_corpus(paths, stats, tmp_path / "c", n_shards=2, max_tokens=None, min_count=3)
    counts = sorted((tmp_path / "c" / "shards").glob("*.counts.tsv"))
    vocab = build_vocabulary(counts, tmp_path / "v.tsv", min_count=3, max_size=None)
    truth = brute_force_stats(paths)["counts"]
    expected = sorted(((w, c) for w, c in truth.items() if c >= 3), key=lambda wc: (-wc[1], wc[0]))
    assert list(zip(vocab.words, vocab.counts)) == expected
    assert Vocabulary.load(tmp_path / "v.tsv").words == vocab.words
    capped = Vocabulary.load(tmp_path / "v.tsv", max_size=5)
    assert capped.words == [w for w, _ in expected[:5]]


def test_interrupted_tokenization_leaves_no_output(tmp_path, monkeypatch):
    import staticvec.corpus.prepare as prepare

    src = write_xz(tmp_path / "wiki_00", WIKI_TEXT)

    def explode(*args, **kwargs):
        yield Sentence("7", 0, True, ["x"] * 12)
        raise KeyboardInterrupt  # as if the job were killed mid-file

    monkeypatch.setattr(prepare, "tokenize_documents", explode)
    with pytest.raises(KeyboardInterrupt):
        tokenize_file(src, tmp_path / "out.tsv.gz", tmp_path / "out.json", TokenizerSettings())
    assert not (tmp_path / "out.tsv.gz").exists()
    assert not list(tmp_path.glob(".out.tsv.gz*"))  # temporary file cleaned up


def test_restrict_embeddings_to_a_fraction_vocabulary(tmp_path):
    import numpy as np

    from staticvec.cli import main
    from staticvec.corpus.vocab import restrict_embeddings
    from staticvec.embeddings import Embeddings

    emb = Embeddings(["a", "b", "c", "d"], np.arange(8, dtype=np.float32).reshape(4, 2), [9, 8, 7, 6])
    frac = Vocabulary(["c", "a", "z"], [5, 3, 2])
    kept, missing = restrict_embeddings(emb, frac)
    assert kept.words == ["c", "a"] and missing == ["z"]
    np.testing.assert_array_equal(kept.vectors, [[4, 5], [0, 1]])
    emb.save(tmp_path / "all.bin")
    frac.save(tmp_path / "vocab.tsv")
    assert main(["corpus", "restrict-embeddings", str(tmp_path / "all.bin"), "--vocab", str(tmp_path / "vocab.tsv"),
                 "--out", str(tmp_path / "frac.bin")]) == 0
    assert Embeddings.load(tmp_path / "frac.bin").words == ["c", "a"]


def test_a_corpus_fraction_trains_on_its_own_vocabulary():
    from pathlib import Path

    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    repo = Path(__file__).resolve().parents[1]
    w = Workflow(load_config([repo / "config" / "config.yaml"]), repo)
    frac = next(e for e in w.sheet.ids("glove") if w.spec(e).fraction == 0.25)
    assert w.emb_vocab(frac).endswith("corpus/vocab.min5.2of8.tsv")
    assert w.emb_vocab("glove") == w.vocab() and w.vocab().endswith("corpus/vocab.min5.tsv")
    para = next(e for e in w.sheet.ids("x2static") if w.spec(e).fraction == 0.125)
    assert w.emb_vocab(para) == w.vocab(w.params(para).get("min_count"), ".1of8")
