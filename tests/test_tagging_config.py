"""The tagging config section: schema, defaults equal to the code's, and the arguments rules pass."""

import dataclasses
import shlex

import pytest

from staticvec.config import ConfigError, load_config, validate_config
from staticvec.cli_args import json_or_file
from staticvec.dag.arguments import tag_data_arguments, tagger_arguments
from staticvec.evaluate.tagging.train import TaggerConfig


@pytest.fixture
def config():
    return load_config(["config/config.yaml"])


def test_default_config_is_valid_and_matches_the_tagger_defaults(config):
    validate_config(config)
    section = config["tagging"]["tagger"]
    parsed, defaults = dataclasses.asdict(TaggerConfig.from_dict(section)), dataclasses.asdict(TaggerConfig())
    assert {key: parsed[key] for key in section} == section  # every key reaches the tagger
    # the code's defaults are NCRF++'s; config.yaml departs from them only for the laptop budget
    # (each such line commented), and paper.yaml's tagger is the defaults plus the char CNN and 100 epochs
    assert {k for k in defaults if parsed[k] != defaults[k]} == {"max_epochs", "patience", "max_train_sentences",
                                                                 "optimizer", "lr", "loss_reduction", "batch_size",
                                                                 "dtype"}
    # dtype auto: mixed precision on a GPU (as the tagger always ran there), bf16 on a CPU that computes it fast
    paper = load_config(["config/config.yaml", "config/paper.yaml"])["tagging"]["tagger"]
    assert parsed_paper_differences(paper, defaults) == {"char_features", "max_epochs", "patience", "dtype"}


def parsed_paper_differences(section, defaults):
    parsed = dataclasses.asdict(TaggerConfig.from_dict(section))
    return {k for k in defaults if parsed[k] != defaults[k]}


def test_schema_rejects_unknown_and_bad_tagger_settings(config):
    config["tagging"]["tagger"]["hiden"] = 3
    with pytest.raises(ConfigError, match="tagging.tagger.hiden"):
        validate_config(config)
    del config["tagging"]["tagger"]["hiden"]
    config["tagging"]["tagger"]["char_features"] = "transformer"
    with pytest.raises(ConfigError, match="char_features"):
        validate_config(config)


def test_rule_arguments_carry_the_config(config):
    config["tagging"]["tagger"]["lr"] = 0.02
    words = shlex.split(tagger_arguments(config))
    assert json_or_file(words[words.index("--hparams") + 1], "--hparams")["lr"] == 0.02
    config["tagging"]["dev_fraction"], config["device"] = 0.25, "cpu"
    words = shlex.split(tagger_arguments(config))
    assert words[words.index("--dev-fraction") + 1] == "0.25" and words[words.index("--device") + 1] == "cpu"
    del config["tagging"]["dev_split_seed"], config["device"]  # left out: the command's own default applies
    words = shlex.split(tagger_arguments(config))
    assert "--dev-split-seed" not in words and "--device" not in words
    assert tag_data_arguments(config, "ner") == ""
    assert shlex.split(tag_data_arguments(config, "chunk"))[-2:] == ["--data-format", "conll2000"]


def test_the_claims_scale_trains_ncrf_settings_to_convergence_on_dev():
    """config/claims10m.yaml decides the tagging claims with NCRF++'s tagger (SGD lr 0.015 decayed by 0.05,
    momentum 0, batches of 10, summed loss, dropout 0.5, char CNN, 100 epochs cut by early stopping on dev,
    every training sentence): the schema accepts it, the tagger parses it, and the tour keeps its own."""
    merged = load_config(["config/config.yaml", "config/claims10m.yaml"])
    validate_config(merged)
    tagger = TaggerConfig.from_dict(merged["tagging"]["tagger"])
    assert (tagger.optimizer, tagger.lr, tagger.lr_decay, tagger.momentum, tagger.batch_size, tagger.loss_reduction,
            tagger.dropout, tagger.char_features, tagger.max_epochs, tagger.max_train_sentences) == \
        ("sgd", 0.015, 0.05, 0.0, 10, "sum", 0.5, "cnn", 100, None)
    assert 1 <= tagger.patience < tagger.max_epochs  # early stopping can end a run before the cap
    paper = TaggerConfig.from_dict(load_config(["config/config.yaml", "config/paper.yaml"])["tagging"]["tagger"])
    assert dataclasses.asdict(tagger) == dataclasses.asdict(paper)  # the claims scale's tagger is the paper run's
    tour = TaggerConfig.from_dict(load_config(["config/config.yaml"])["tagging"]["tagger"])
    assert tour.optimizer == "adam" and tour.max_epochs == 4
