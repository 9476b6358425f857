"""Readers of the sequence-labelling formats, the PTB layouts, the dev hold-out, and the real data sets."""

from pathlib import Path

import pytest

from staticvec.errors import InputFileError, StaticvecError
from staticvec.dag import arguments as A
from staticvec.evaluate.tagging import data as D

SHARED = Path("../shared/data/eval/sequence")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_columns_sentences_docstart_and_last_sentence_without_blank_line(tmp_path):
    path = write(tmp_path / "eng.train", "-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP I-PER\n")
    sentences = D.read_columns(path, n_columns=4)
    assert sentences == [D.Sentence(("EU", "rejects"), ("I-ORG", "O")), D.Sentence(("Peter",), ("I-PER",))]


def test_columns_wrong_count_names_file_and_line(tmp_path):
    path = write(tmp_path / "train.txt", "a DT B-NP\nb NN\n")
    with pytest.raises(InputFileError, match=r"train.txt, line 2: expected 3 columns"):
        D.read_columns(path, n_columns=3)


def test_conllu_uses_xpos_and_skips_multiword_tokens_and_empty_nodes(tmp_path):
    text = (
        "# sent_id = 1\n"
        "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n"
        "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n"
        "2.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t_\t_\n"
        "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n\n"
    )
    assert D.read_conllu_xpos(write(tmp_path / "x-ud-train.conllu", text)) == [D.Sentence(("do", "n't", "go"), ("VBP", "RB", "VB"))]
    bad = write(tmp_path / "bad.conllu", "1\tgo\tgo\tVERB\t_\t_\t0\troot\t_\t_\n")
    with pytest.raises(InputFileError, match="line 1: token 'go' has no XPOS"):
        D.read_conllu_xpos(bad)


def test_bracketed_trees_drop_traces_and_split_top_level_trees(tmp_path):
    text = "( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (NP (-NONE- *T*-1))) (. .)) )\n((S (NP (PRP It)) (VP (VBZ purrs))))\n"
    trees = D.read_bracketed_trees(write(tmp_path / "wsj_0001.mrg", text))
    assert trees == [D.Sentence(("The", "cat", "sat", "."), ("DT", "NN", "VBD", ".")), D.Sentence(("It", "purrs"), ("PRP", "VBZ"))]
    with pytest.raises(InputFileError, match="unbalanced"):
        D.read_bracketed_trees(write(tmp_path / "bad.mrg", "((S (NN x)\n"))


def test_conll2012_named_entity_brackets_become_iob2(tmp_path):
    rows = [("Barack", "(PERSON*"), ("Obama", "*)"), ("visited", "*"), ("Paris", "(GPE)"), (".", "*")]
    text = "#begin document (x); part 000\n" + "".join(
        f"doc 0 {i} {w} NNP - - - - - {ne} -\n" for i, (w, ne) in enumerate(rows)) + "\n#end document\n"
    (sentence,) = D.read_conll2012(write(tmp_path / "a.gold_conll", text))
    assert sentence.tags == ("B-PERSON", "I-PERSON", "O", "B-GPE", "O")


def test_hold_out_dev_is_fixed_disjoint_and_sized():
    train = [D.Sentence((str(i),), ("O",)) for i in range(100)]
    rest, dev = D.hold_out_dev(train, 0.1, seed=7)
    assert len(dev) == 10 and len(rest) == 90
    assert {s.words for s in rest}.isdisjoint({s.words for s in dev})
    assert D.hold_out_dev(train, 0.1, seed=7) == (rest, dev)
    assert D.hold_out_dev(train, 0.1, seed=8)[1] != dev


def _ptb_column_section(i: int) -> str:
    return f"w{i} NN\nx{i} VBZ\n\n"


def test_ptb_per_section_files_follow_the_standard_split(tmp_path):
    for i in range(25):
        write(tmp_path / f"wsj_{i:02d}.pos", _ptb_column_section(i))
    data = D.load_task("pos", tmp_path, "ptb")
    assert data.source == "PTB WSJ" and data.metric == "accuracy"
    assert [s.words[0] for s in data.train] == [f"w{i}" for i in range(19)]
    assert [s.words[0] for s in data.dev] == ["w19", "w20", "w21"]
    assert [s.words[0] for s in data.test] == ["w22", "w23", "w24"]


def test_ptb_section_folders_of_mrg_trees(tmp_path):
    for i in range(25):
        write(tmp_path / f"{i:02d}" / f"wsj_{i:02d}01.mrg", f"( (S (NP (NN w{i})) (VP (VBZ x))) )\n")
    data = D.load_task("pos", tmp_path)  # format detected: no .conllu → PTB
    assert data.fmt == "ptb" and len(data.train) == 19 and data.test[0].words == ("w22", "x")


def test_ptb_missing_sections_is_a_clear_error(tmp_path):
    for i in range(20):
        write(tmp_path / f"{i:02d}.txt", _ptb_column_section(i))
    with pytest.raises(StaticvecError, match="sections 20, 21, 22, 23, 24 are missing"):
        D.load_task("pos", tmp_path, "ptb")


def test_ptb_presplit_files(tmp_path):
    for split in ("train", "dev", "test"):
        write(tmp_path / f"{split}.tsv", f"{split}\tNN\n\n")
    data = D.load_task("pos", tmp_path, "ptb")
    assert (data.train[0].words, data.dev[0].words, data.test[0].words) == (("train",), ("dev",), ("test",))


def test_conll2003_iob1_is_converted(tmp_path):
    for name in ("eng.train", "eng.testa", "eng.testb"):
        write(tmp_path / name, "-DOCSTART- -X- -X- O\n\nU.N. NNP I-NP I-ORG\nofficial NN I-NP O\nEkeus NNP I-NP I-PER\n\n")
    data = D.load_task("ner", tmp_path)
    assert data.fmt == "conll2003"
    assert data.train[0].tags == ("B-ORG", "O", "B-PER")


def test_task_data_location_prefers_supplied_data():
    config = {"resources": {"download_dir": "resources/data", "restricted": {"ptb_wsj": None, "conll2003": None, "ontonotes": None}}}
    assert A.task_data_location(config, "pos") == A.DataLocation("ud", "resources/data/eval/sequence/ud_english_ewt", "eval-ud-ewt")
    assert A.task_data_location(config, "ner") is None
    config["resources"]["restricted"].update(ptb_wsj="/data/wsj", ontonotes="/data/on5")
    assert A.task_data_location(config, "pos") == A.DataLocation("ptb", "/data/wsj", None)
    assert A.task_data_location(config, "ner") == A.DataLocation("ontonotes", "/data/on5", None)
    config["resources"]["restricted"]["conll2003"] = "/data/conll03"  # both: tagging.ner_source decides
    assert A.task_data_location(config, "ner").fmt == "conll2003"
    config["tagging"] = {"ner_source": "ontonotes"}
    assert A.task_data_location(config, "ner").fmt == "ontonotes"


@pytest.mark.skipif(not (SHARED / "conll2000").is_dir(), reason="CoNLL-2000 not in ../shared/data")
def test_real_conll2000():
    data = D.load_task("chunk", SHARED / "conll2000")
    assert len(data.train) + len(data.dev) == 8936 and len(data.dev) == 894 and len(data.test) == 2012
    assert sum(len(s.words) for s in data.test) == 47377
    assert "B-NP" in data.tagset() and all(t == "O" or t[:2] in ("B-", "I-") for t in data.tagset())


@pytest.mark.skipif(not (SHARED / "ud_english_ewt").is_dir(), reason="UD EWT not in ../shared/data")
def test_real_ud_ewt_gives_ptb_tags():
    data = D.load_task("pos", SHARED / "ud_english_ewt")
    assert (len(data.train), len(data.dev), len(data.test)) == (12544, 2001, 2077)
    assert data.source == "UD English EWT (PTB XPOS)"
    assert {"NNP", "VBZ", "-LRB-", "PRP$"} <= set(data.tagset())
