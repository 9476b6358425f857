"""The method registry against what reads it: the rule files, the config's method blocks and the sheet."""

import re
from pathlib import Path

from staticvec.config import load_config
from staticvec.methods import REGISTRY, methods_of_rule, student_methods
from staticvec.sheets import METHODS, EmbeddingSheet

REPO = Path(__file__).resolve().parents[1]


def rule_names() -> set[str]:
    names = set()
    for f in (REPO / "workflow" / "rules").glob("*.smk"):
        text = f.read_text()
        names |= set(re.findall(r"^rule (\w+):", text, re.M))
        names |= set(re.findall(r"^use rule \w+ as (\w+) with:", text, re.M))
    return names


def test_every_method_is_built_by_a_rule_that_exists_and_has_its_config_block():
    rules = rule_names()
    config = load_config([REPO / "config" / "config.yaml"])
    for m in REGISTRY.values():
        assert m.rule == "external" or m.rule in rules, m
        assert m.config_block is None or m.config_block in config["methods"], m
        assert not m.student or (m.uses_teacher and m.seeded and m.command), m
    assert METHODS == {name: m.config_block for name, m in REGISTRY.items()}


def test_each_sheet_entry_is_matched_by_exactly_its_methods_rule():
    config = load_config([REPO / "config" / "config.yaml"])
    sheet = EmbeddingSheet.load(REPO / "config" / "embeddings.yaml", config)
    for eid in sheet.ids():
        method = sheet[eid].method
        owners = [r for r in {m.rule for m in REGISTRY.values()} if method in methods_of_rule(r)]
        assert owners == [REGISTRY[method].rule]
    assert set(student_methods()) == {"x2static", "bert_sg", "c2v"}
    seeded = {sheet[e].method: sheet[e].seeded for e in sheet.ids()}
    assert seeded["glove"] and seeded["bert_sg"] and not seeded["ase"] and not seeded["model2vec"]


def test_every_trained_method_has_a_train_command_and_declares_its_workflow_keys(capsys):
    """The training rules pass `--params` (the row less `workflow_keys`) to `staticvec train <command>`:
    the command exists, and every workflow key is a key of the method's config block (threads in each)."""
    import pytest

    from staticvec.cli import build_parser

    config = load_config([REPO / "config" / "config.yaml"])
    for m in REGISTRY.values():
        if not m.rule.startswith("train_"):
            continue
        with pytest.raises(SystemExit) as stop:  # --help of an existing command exits 0
            build_parser().parse_args(["train", m.command, "--help"])
        assert stop.value.code == 0, m
        assert set(m.workflow_keys) <= set(config["methods"][m.config_block]), m
        assert "threads" in m.workflow_keys, m
