"""A corpus of your own: plain text and JSON Lines (plain or compressed, files or directories), any spaCy
language; bad input named by file and line before any teacher pass."""

import bz2
import gzip
import json
import lzma

import pytest

from staticvec.cli import main
from staticvec.corpus.formats import SourceFormat, input_files, iter_input_documents
from staticvec.corpus.prepare import prepare_corpus, tokenize_file
from staticvec.corpus.shards import iter_records
from staticvec.corpus.tokenize import TokenizerSettings, make_nlp
from staticvec.errors import InputFileError, StaticvecError

# documents as paragraphs; each paragraph's text as it should come back (one line, single spaces)
DOCUMENTS = [
    ["The old mill stood by the river for two hundred years, and the village grew around it slowly.",
     "Every spring the water rose. The miller watched the wheel turn faster and faster in the flood."],
    ["Bread from the mill fed the whole valley; the baker said its flour was the finest in the county."],
    ["Ça commence ici — naïve café, 東京, emoji 🙂 and a non-breaking\u00a0space.", "Last one."],
]

WRITERS = {"": open, ".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def write(path, text: str):
    with WRITERS[path.suffix if path.suffix in WRITERS else ""](path, "wt", encoding="utf-8") as fh:
        fh.write(text)
    return path


def as_blank_line_text(paragraphs, wrap=40):
    """Paragraphs wrapped at ``wrap`` characters, separated by blank lines (extra blank lines and
    indentation included: they carry no meaning)."""
    import textwrap

    blocks = ["\n".join("  " + line for line in textwrap.wrap(p, wrap)) for p in paragraphs]
    return "\n\n\n".join(blocks) + "\n\n"


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz"])
def test_text_files_round_trip_with_blank_line_paragraphs(tmp_path, suffix):
    folder = tmp_path / "docs"
    folder.mkdir()
    for k, paragraphs in enumerate(DOCUMENTS):
        write(folder / f"doc{k}.txt{suffix}", as_blank_line_text(paragraphs))
    docs = list(iter_input_documents(folder, SourceFormat("text")))
    assert [d.paragraphs for d in docs] == DOCUMENTS
    assert [d.id for d in docs] == [f"doc{k}.txt{suffix}" for k in range(3)]  # the file's path in its input


@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_text_file_round_trip_with_one_paragraph_per_line(tmp_path, suffix):
    path = write(tmp_path / f"one.txt{suffix}", "\n".join(DOCUMENTS[0] + ["", "   "] + DOCUMENTS[2]) + "\r\n")
    (doc,) = iter_input_documents(path, SourceFormat("text", "lines"))
    assert doc.paragraphs == DOCUMENTS[0] + DOCUMENTS[2] and doc.id == path.name
    # the same file read with blank-line paragraphs: its first block of lines is one wrapped paragraph
    (doc,) = iter_input_documents(path, SourceFormat("text", "blank_lines"))
    assert doc.paragraphs == [" ".join(DOCUMENTS[0]), " ".join(DOCUMENTS[2])]


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
@pytest.mark.parametrize("style", ["blank_lines", "lines"])
def test_jsonl_round_trip_with_and_without_ids(tmp_path, suffix, style):
    joiner = "\n\n" if style == "blank_lines" else "\n"
    records = [{"id": "a-1", "text": joiner.join(DOCUMENTS[0]), "meta": {"x": 1}},
               {"text": joiner.join(DOCUMENTS[1])},  # no id: FILE:LINE
               {"id": 7, "text": joiner.join(DOCUMENTS[2])}]
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    path = write(tmp_path / f"c.jsonl{suffix}", lines[0] + "\n" + lines[1] + "\n\n" + lines[2] + "\n")
    docs = list(iter_input_documents(path, SourceFormat("jsonl", style)))
    assert [d.paragraphs for d in docs] == DOCUMENTS
    assert [d.id for d in docs] == ["a-1", f"{path.name}:2", "7"]


def test_jsonl_fields_are_configurable(tmp_path):
    path = write(tmp_path / "c.jsonl", json.dumps({"doc_id": "x", "body": "One paragraph.\n\nTwo."}) + "\n")
    (doc,) = iter_input_documents(path, SourceFormat("jsonl", text_field="body", id_field="doc_id"))
    assert doc.id == "x" and doc.paragraphs == ["One paragraph.", "Two."]


def test_a_directory_input_reads_its_files_in_path_order_without_hidden_ones(tmp_path):
    root = tmp_path / "corpus"
    for rel in ["b.txt", "a/z.txt", "a/y.txt.gz", ".hidden.txt", "a/.cache/x.txt"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write(root / rel, f"text of {rel}\n")
    files = input_files(root, SourceFormat("text"))
    assert [p.relative_to(root).as_posix() for p in files] == ["a/y.txt.gz", "a/z.txt", "b.txt"]
    docs = list(iter_input_documents(root, SourceFormat("text")))
    assert [(d.id, d.paragraphs) for d in docs] == [(f, [f"text of {f}"]) for f in ("a/y.txt.gz", "a/z.txt", "b.txt")]
    (root / "empty").mkdir()
    with pytest.raises(InputFileError, match=r"empty: an input directory without a file"):
        input_files(root / "empty", SourceFormat("text"))


def test_compression_is_read_from_the_content_not_the_name(tmp_path):
    path = tmp_path / "named-plain.txt"
    path.write_bytes(gzip.compress("Paragraph one.\n\nParagraph two.\n".encode()))
    (doc,) = iter_input_documents(path, SourceFormat("text"))
    assert doc.paragraphs == ["Paragraph one.", "Paragraph two."]


def test_byte_order_mark_and_crlf_are_not_text(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffFirst line\r\nstill first.\r\n\r\nSecond.\r\n".encode())
    (doc,) = iter_input_documents(path, SourceFormat("text"))
    assert doc.paragraphs == ["First line still first.", "Second."]


def test_tokenize_and_prepare_a_jsonl_corpus_through_the_cli(tmp_path):
    """The same stage as Wikipedia's: tokenized sentences with their keep flags, shards, manifest."""
    text = "\n\n".join(["The cat sat on the mat and looked at the dog for a very long time today.",
                        "Short one. The dog ran in the park with the other dogs until it was dark outside."])
    path = write(tmp_path / "c.jsonl.gz", json.dumps({"id": "d1", "text": text}) + "\n"
                 + json.dumps({"text": "Too short."}) + "\n")
    out, stats = tmp_path / "tok.tsv.gz", tmp_path / "tok.json"
    assert main(["corpus", "tokenize", str(path), "--format", "jsonl", "--out", str(out), "--stats", str(stats),
                 "--min-sentence-tokens", "5"]) == 0
    records = list(iter_records(out))
    assert [(r.article, r.paragraph, r.keep, " ".join(r.tokens)) for r in records] == [
        ("d1", 0, True, "the cat sat on the mat and looked at the dog for a very long time today ."),
        ("d1", 1, False, "short one ."),
        ("d1", 1, True, "the dog ran in the park with the other dogs until it was dark outside ."),
    ]  # the second document has no training sentence: dropped whole, as a Wikipedia paragraph would be
    meta = json.loads(stats.read_text())
    assert meta["format"] == {"format": "jsonl", "paragraphs": "blank_lines", "text_field": "text", "id_field": "id"}
    assert meta["settings"]["language"] == "en" and meta["tokens"] == 18 + 16
    assert main(["corpus", "prepare", "--tokenized", str(out), "--stats", str(stats), "--out-dir",
                 str(tmp_path / "corpus"), "--shards", "1", "--min-count", "1"]) == 0
    manifest = json.loads((tmp_path / "corpus" / "manifest.json").read_text())
    assert manifest["totals"]["articles"] == 1 and manifest["totals"]["sentences"] == 2


# ---------------------------------------------------------------- bad input: file and line named


def read_all(path, fmt=None):
    return list(iter_input_documents(path, fmt or SourceFormat("jsonl")))


def test_binary_file_is_named_with_its_line(tmp_path):
    path = tmp_path / "image.txt"
    path.write_bytes(b"looks like text\nstill text\nPNG\x00\x00\x00\rIHDR\n")
    with pytest.raises(InputFileError, match=r"image.txt, line 3: a binary file"):
        read_all(path, SourceFormat("text"))
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes("plain words\n".encode("utf-16-le"))
    with pytest.raises(InputFileError, match=r"utf16.txt, line 1: .*UTF-16 text must be converted"):
        read_all(utf16, SourceFormat("text"))


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_invalid_utf8_is_named_with_its_line(tmp_path, fmt):
    path = tmp_path / f"latin1.{fmt}"
    good = json.dumps({"text": "fine"}) if fmt == "jsonl" else "fine"
    path.write_bytes(f"{good}\n{good}\n".encode() + '{"text": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(InputFileError, match=rf"latin1.{fmt}, line 3: invalid UTF-8"):
        read_all(path, SourceFormat(fmt))


def test_truncated_compressed_file_is_named(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps({"text": "x " * 50}) + "\n").encode() * 2000)[:-100])
    with pytest.raises(InputFileError, match=r"cut.jsonl.gz, line \d+: corrupt or truncated"):
        read_all(path)


@pytest.mark.parametrize("line, problem", [
    ('{"id": 1, "body": "no text field"}', r"no 'text' field \(its keys: 'id', 'body'"),
    ('{"text": "unterminated}', r"not valid JSON \(Unterminated string"),
    ('["a", "list"]', r"not a JSON object but an array"),
    ('{"text": ["a", "list"]}', r"field 'text' is an array, not a string"),
    ('{"text": "x", "id": {"a": 1}}', r"field 'id' is an object, not a string or an integer"),
    ('{"text": "x", "id": "a\\tb"}', r"field 'id' = 'a\\tb': an id must be non-blank, without tabs"),
])
def test_bad_jsonl_line_is_named_with_its_line(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": 0, "text": "A good line."}) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"bad.jsonl, line 3: " + problem):
        read_all(path)


def test_repeated_id_names_both_lines_across_the_files_of_an_input(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    write(root / "a.jsonl", json.dumps({"id": "x", "text": "one"}) + "\n" + json.dumps({"id": "y", "text": "two"}) + "\n")
    write(root / "b.jsonl", json.dumps({"id": "z", "text": "three"}) + "\n" + json.dumps({"id": "y", "text": "4"}) + "\n")
    with pytest.raises(InputFileError, match=r"b.jsonl, line 2: id 'y' repeats the id of .*a.jsonl, line 2"):
        read_all(root)


def test_a_paragraph_without_breaks_is_named_where_it_starts(tmp_path, monkeypatch):
    import staticvec.corpus.formats as formats

    monkeypatch.setattr(formats, "MAX_PARAGRAPH_CHARS", 100)
    path = write(tmp_path / "wall.txt", "Title\n\n" + "a line of forty characters, more or less\n" * 5)
    with pytest.raises(InputFileError, match=r"wall.txt, line 3: a paragraph of over 100 characters.*paragraphs: lines"):
        read_all(path, SourceFormat("text"))
    (doc,) = read_all(path, SourceFormat("text", "lines"))  # each line a paragraph: fine
    assert len(doc.paragraphs) == 6


@pytest.mark.parametrize("name, content, fmt, message", [
    ("bad.jsonl", b'{"text": "fine"}\n{"txt": "typo"}\n', "jsonl", "bad.jsonl, line 2: no 'text' field"),
    ("scan.txt", b"fine\n\nPNG\x00\x00IHDR\n", "text", "scan.txt, line 3: a binary file"),
    ("latin1.txt", "fine\n\ncaf\xe9\n".encode("latin-1"), "text", "latin1.txt, line 3: invalid UTF-8"),
])
def test_bad_input_fails_the_tokenize_command_with_file_and_line(tmp_path, capsys, name, content, fmt, message):
    path = tmp_path / name
    path.write_bytes(content)
    out = tmp_path / "tok.tsv.gz"
    assert main(["corpus", "tokenize", str(path), "--format", fmt, "--out", str(out),
                 "--stats", str(tmp_path / "tok.json")]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "tok.json").exists()  # nothing half-written


def test_an_empty_corpus_after_filtering_names_the_inputs_and_the_filter(tmp_path):
    one_line_paragraphs = "\n".join("This line is one sentence of enough words to train on here." for _ in range(4))
    path = write(tmp_path / "lines.txt", one_line_paragraphs + "\n")
    x2static = TokenizerSettings(min_paragraph_sentences=3, min_paragraph_chars=140)
    tokenize_file(path, tmp_path / "t.tsv.gz", tmp_path / "t.json", x2static, source_format=SourceFormat("text", "lines"))
    with pytest.raises(StaticvecError, match=r"empty corpus: the 1 input\(s\) \(.*lines.txt\) leave no training sentence.*"
                                             r"paragraph filter .*removed the 4 paragraph\(s\)"):
        prepare_corpus([tmp_path / "t.tsv.gz"], [tmp_path / "t.json"], tmp_path / "c", 1, None, 1)
    short = write(tmp_path / "short.txt", "Too short.\n")
    tokenize_file(short, tmp_path / "s.tsv.gz", tmp_path / "s.json", TokenizerSettings(), source_format=SourceFormat("text"))
    with pytest.raises(StaticvecError, match=r"empty corpus: .*short.txt.*no paragraph holds a sentence of 10-40 tokens"):
        prepare_corpus([tmp_path / "s.tsv.gz"], [tmp_path / "s.json"], tmp_path / "c", 1, None, 1)
    assert not (tmp_path / "c" / "manifest.json").exists()


# ---------------------------------------------------------------- languages


def test_english_tokenizer_drops_exactly_its_hyphen_rule():
    from spacy.lang.char_classes import ALPHA, HYPHENS
    from spacy.util import compile_infix_regex

    import spacy

    nlp = make_nlp(False, "en")
    rule = r"(?<=[{a}0-9])(?:{h})(?=[{a}])".format(a=ALPHA, h=HYPHENS)
    expected = compile_infix_regex([r for r in spacy.blank("en").Defaults.infixes if r != rule])
    assert nlp.tokenizer.infix_finditer == expected.finditer  # the same compiled pattern (re caches it)


@pytest.mark.parametrize("language", ["de", "fr", "ru", "pl"])
def test_other_languages_keep_hyphenated_words_whole_unless_asked(language):
    words = [t.text for t in make_nlp(False, language)("Ein self-governed Staat.")]
    assert "self-governed" in words
    if language != "de":  # German's own rules keep them whole anyway
        assert "self-governed" not in [t.text for t in make_nlp(True, language)("Ein self-governed Staat.")]


def test_a_language_spacy_cannot_tokenize_is_a_config_error(repo_root):
    from staticvec.config import ConfigError, deep_merge, load_config, validate_config

    config = load_config([repo_root / "config/config.yaml"])
    with pytest.raises(ConfigError, match=r"'corpus.language' = 'zz': spaCy cannot make a blank tokenizer"):
        validate_config(deep_merge(config, {"corpus": {"language": "zz"}}))
    with pytest.raises(ConfigError, match=r"'corpus.format' = 'jsonl' reads your own files: list them"):
        validate_config(deep_merge(config, {"corpus": {"format": "jsonl"}}))
    validate_config(deep_merge(config, {"corpus": {"language": "fr", "format": "text", "local_files": ["x"]}}))


def test_a_german_text_corpus_is_tokenized_with_the_german_tokenizer(tmp_path):
    path = write(tmp_path / "de.txt", "Die Katze saß auf der Matte, und der Hund lief im Park umher, bis es dunkel war.\n")
    settings = TokenizerSettings(min_sentence_tokens=5, language="de")
    tokenize_file(path, tmp_path / "t.tsv.gz", tmp_path / "t.json", settings, source_format=SourceFormat("text"))
    (record,) = iter_records(tmp_path / "t.tsv.gz")
    assert record.tokens[:4] == ["die", "katze", "saß", "auf"] and record.tokens[-1] == "."


# ---------------------------------------------------------------- the plan: inputs, flags, manifest


@pytest.fixture
def plan(repo_root, tmp_path):
    from staticvec.config import deep_merge, load_config
    from staticvec.dag.workflow import Workflow

    def make(**corpus):
        config = deep_merge(load_config([repo_root / "config/config.yaml"]), {"corpus": corpus})
        return Workflow(config, repo_root)

    return make


def test_inputs_of_files_directories_and_recursive_globs(plan, tmp_path):
    for rel in ["notes/2020/a.txt", "notes/2021/a.txt", "notes/2021/b.txt.xz", "more/c.txt"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    w = plan(format="text", local_files=[f"{tmp_path}/notes/**/*.txt*", f"{tmp_path}/more"])
    assert [(i.id, i.path) for i in w.corpus_inputs()] == [
        ("2020-a-txt", f"{tmp_path}/notes/2020/a.txt"),  # named by their path below the pattern's fixed part
        ("2021-a-txt", f"{tmp_path}/notes/2021/a.txt"),
        ("2021-b-txt", f"{tmp_path}/notes/2021/b.txt.xz"),
        ("more", f"{tmp_path}/more"),  # a directory: one input, every file under it
    ]
    assert w.tokenize_source("more") == f"{tmp_path}/more"
    clash = plan(format="text", local_files=[f"{tmp_path}/notes/2020/a.txt", f"{tmp_path}/notes/2021/a.txt"])
    with pytest.raises(StaticvecError, match=r"clashing names \(a-txt\)"):
        clash.corpus_inputs()


def test_tokenize_flags_and_manifest_say_how_an_own_corpus_is_read(plan, tmp_path):
    default = plan()
    wiki_flags = default.tokenize_flags()
    assert "--format" not in wiki_flags and "--language" not in wiki_flags  # Wikipedia's commands as before
    assert set(json.loads(default.corpus_description())) == {"source", "format", "members", "lowercase",
                                                               "sentence_tokens"}
    (tmp_path / "c.jsonl").write_text("{}\n")
    own = plan(format="jsonl", paragraphs="lines", local_files=[str(tmp_path / "c.jsonl")], language="fr",
               jsonl={"text_field": "body", "id_field": "doc id"})
    flags = own.tokenize_flags()
    assert flags.startswith("--format jsonl --paragraphs lines --text-field body --id-field 'doc id' --language fr ")
    assert flags.endswith(wiki_flags)
    description = json.loads(own.corpus_description())
    assert description["paragraphs"] == "lines" and description["language"] == "fr"
    assert description["source"] == [str(tmp_path / "c.jsonl")]
    assert description["members"] is None  # the registry source's members are not read
