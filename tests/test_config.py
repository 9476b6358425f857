"""Config files validate; mistakes give one clear message naming the key and what is allowed."""

import subprocess
import sys

import pytest

from staticvec.config import ConfigError, deep_merge, load_config, validate_config


def default_config(repo_root):
    return load_config([repo_root / "config" / "config.yaml"])


@pytest.mark.parametrize("overrides", [[], ["config/paper.yaml"], ["tests/config/test.yaml"]])
def test_shipped_configs_are_valid(repo_root, overrides):
    config = load_config([repo_root / "config" / "config.yaml", *(repo_root / o for o in overrides)])
    if "paper" in str(overrides):
        config["resources"]["mirror"] = None  # the paper config downloads
    validate_config(config)


def test_misspelt_key_names_the_key_and_the_allowed_ones(repo_root):
    config = deep_merge(default_config(repo_root), {"corpus": {"min_cont": 5}})
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    message = str(err.value)
    assert "unknown config key 'corpus.min_cont'" in message
    assert "min_count" in message and "max_tokens" in message


def test_wrong_type_and_enum_are_reported_per_key(repo_root):
    config = deep_merge(default_config(repo_root), {"corpus": {"shards": "eight", "format": "html"}})
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    message = str(err.value)
    assert "config key 'corpus.shards' must be of type integer, got 'eight'" in message
    assert "config key 'corpus.format' = 'html' is not allowed; allowed values: 'wikiextractor', 'pages-articles'" in message


def test_missing_mirror_directory_is_reported(repo_root):
    config = deep_merge(default_config(repo_root), {"resources": {"mirror": "/nonexistent/dir", "allow_download": False}})
    with pytest.raises(ConfigError, match="resources.mirror.*directory not found"):
        validate_config(config)


def test_snakemake_refuses_a_bad_config_with_the_message(repo_root, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("corpus:\n  shards: 0\n")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(bad)],
        cwd=repo_root, capture_output=True, text=True,
    )
    assert result.returncode != 0
    assert "config key 'corpus.shards' = 0" in result.stdout + result.stderr


def test_cli_config_check(repo_root):
    result = subprocess.run([sys.executable, "-m", "staticvec", "config", "config/config.yaml"],
                            cwd=repo_root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "is a valid configuration" in result.stdout


@pytest.mark.parametrize("overrides, expected", [
    ({"seeds": [1, 1]}, "config key 'seeds': [1, 1] has non-unique elements"),
    ({"seeds": [-3]}, "config key 'seeds[0]' = -3: -3 is less than the minimum of 0"),
    ({"results_dir": ""}, "config key 'results_dir' = ''"),
    ({"results_dir": "/"}, "config key 'results_dir' = '/': give a directory"),
    ({"corpus": {"min_sentence_tokens": 41}}, "'corpus.min_sentence_tokens' = 41 > 'corpus.max_sentence_tokens' = 40"),
    ({"classification": {"split": [0.6, 0.3, 0.2]}}, "must sum to 1 (they sum to 1.1)"),
    ({"evaluation": {"tasks": ["similarity", "ws353x"]}}, "unknown task or data set 'ws353x'"),
])
def test_bad_values_and_cross_field_mistakes_are_caught_at_start(repo_root, overrides, expected):
    config = deep_merge(default_config(repo_root), overrides)
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    assert expected in str(err.value)


def test_distinct_non_negative_seeds_and_known_tasks_pass(repo_root):
    config = deep_merge(default_config(repo_root), {"seeds": [0, 1, 2], "evaluation": {"tasks": ["similarity", "ws353"]}})
    validate_config(config)
