"""The post section of the config: schema, file names and the options the rules pass to the CLI."""

import shlex

import pytest

from staticvec.cli import build_parser
from staticvec.config import ConfigError, load_config, validate_config
from staticvec.dag import post as targets


@pytest.fixture
def config():
    return load_config(["config/config.yaml"])


def test_default_post_section_is_valid_and_typos_are_rejected(config):
    validate_config(config)
    config["post"]["student_t"]["nuu"] = 10
    with pytest.raises(ConfigError, match="post.student_t.nuu"):
        validate_config(config)
    del config["post"]["student_t"]["nuu"]
    config["post"]["lexicons"]["wn"] = {"wordnet": "hypernyms"}
    with pytest.raises(ConfigError, match="post.lexicons.wn"):
        validate_config(config)


def test_lexicon_files(config):
    assert targets.lexicon_file(config, "ppdb", "results/x") == f"{config['resources']['download_dir']}/eval/lexicons/ppdb-xl.txt"
    assert targets.lexicon_file(config, "wordnet", "results/x") == "results/x/post/lexicons/wordnet-synonyms.txt"


@pytest.mark.parametrize("step", ["faruqui", "student-t"])
def test_rule_options_are_accepted_by_the_cli(config, step):
    args = build_parser().parse_args(
        ["post", "retrofit", "--vectors", "v", "--lexicon", "l", "--out", "o", *shlex.split(targets.retrofit_options(config, step))]
    )
    section = config["post"]["faruqui" if step == "faruqui" else "student_t"]
    assert args.method == step and args.alpha == section["alpha"] and args.iterations == section["iterations"]
    assert args.normalize is config["post"]["normalize"] and args.duplicate_heads == config["post"]["duplicate_heads"]
    args = build_parser().parse_args(
        ["post", "artetxe", "--vectors", "v", "--alpha", "-0.5", "--out", "o", *shlex.split(targets.artetxe_options(config))]
    )
    assert args.basis == config["post"]["artetxe"]["basis"]
