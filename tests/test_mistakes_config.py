"""Mistakes in config files and sheets answered before any job, in one line naming the file or key and the fix
(issue 55, items 2, 4 and 5): a key given twice in any YAML file the package reads, malformed YAML, a results_dir
the repository keeps, teacher.default checked before the sheets, `staticvec config` reading the sheets."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from staticvec.config import ConfigError, deep_merge, load_config, validate_config
from staticvec.errors import StaticvecError

REPO = Path(__file__).resolve().parents[1]


def staticvec(*args, cwd=REPO) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(REPO / "workflow"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "staticvec", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, env=env)


# ---------------------------------------------------------------- duplicate keys


def test_a_duplicate_key_anywhere_names_the_key_path_and_both_lines():
    from staticvec.yaml_files import YamlFileError, parse_yaml

    text = "corpus:\n  max_tokens: 5000\nmethods:\n  glove:\n    dim: 50\n    epochs: 3\n    dim: 300\n"
    with pytest.raises(YamlFileError, match=re.escape("my.yaml, line 7: duplicate key 'methods.glove.dim' "
                                                      "(first given on line 5)")):
        parse_yaml(text, "my.yaml")
    with pytest.raises(YamlFileError, match=re.escape("line 4: duplicate key 'a[1].b' (first given on line 3)")):
        parse_yaml("a:\n- {x: 1}\n- b: 1\n  b: 2\n", "s")


def test_equal_looking_keys_of_other_types_and_merge_keys_are_not_duplicates():
    from staticvec.yaml_files import parse_yaml

    assert parse_yaml("a: 1\n'1': x\n1: y\n") == {"a": 1, "1": "x", 1: "y"}
    assert parse_yaml("base: &b {x: 1, y: 2}\nmore:\n  <<: *b\n  x: 3\n") == {"base": {"x": 1, "y": 2},
                                                                          "more": {"x": 3, "y": 2}}
    assert parse_yaml("") is None


def test_a_duplicate_top_level_block_of_a_config_overlay_is_an_error(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("corpus: {max_tokens: 5000}\ncorpus: {shards: 1}\n")
    with pytest.raises(ConfigError, match=re.escape(f"{overlay}, line 2: duplicate key 'corpus' (first given on line 1)")):
        load_config([REPO / "config/config.yaml", overlay])
    done = staticvec("config", "config/config.yaml", overlay)
    assert done.returncode == 2 and "duplicate key 'corpus'" in done.stderr and "ok" not in done.stdout


def test_snakemake_refuses_a_duplicate_key_of_its_configfile_before_any_job(tmp_path):
    """Snakemake reads --configfile itself, keeping the last of two keys; the workflow reads each again."""
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(f"results_dir: {tmp_path / 'run'}\ncorpus:\n  max_tokens: 5000\ncorpus:\n  shards: 1\n")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(overlay)],
                          cwd=REPO, capture_output=True, text=True, env={**_env(), "PYTHONPATH": str(REPO / "workflow")})
    assert done.returncode != 0
    assert f"{overlay}, line 4: duplicate key 'corpus' (first given on line 2)" in done.stdout + done.stderr
    assert not (tmp_path / "run").exists()


def _env():
    import os

    return {**os.environ, "HF_HUB_OFFLINE": "1"}


def _with_duplicate_first_entry(sheet: Path, block: str, out: Path) -> tuple[str, int, int]:
    """``sheet`` copied to ``out`` with its ``block``'s first entry given once more, first (``cbow: {...}`` on
    top of the real ``cbow:``): (entry id, its line, the real entry's line)."""
    lines = sheet.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index(f"{block}:\n") if f"{block}:\n" in lines else next(
        i for i, line in enumerate(lines) if line.startswith(f"{block}:"))
    entry_line = next(i for i in range(start + 1, len(lines)) if re.match(r"^  [\w~.-]+:", lines[i]))
    entry = re.match(r"^  ([\w~.-]+):", lines[entry_line]).group(1)
    out.write_text("".join(lines[:start + 1] + [f"  {entry}: {{}}\n"] + lines[start + 1:]), encoding="utf-8")
    return entry, start + 2, entry_line + 2


@pytest.mark.parametrize("kind, block", [("embeddings", "embeddings"), ("tables", "tables"),
                                         ("figures", "figures"), ("claims", "claims")])
def test_a_duplicate_id_in_each_sheet_is_an_error_naming_both_lines(tmp_path, kind, block):
    sheet = tmp_path / f"{kind}.yaml"
    entry, first, second = _with_duplicate_first_entry(REPO / "config" / f"{kind}.yaml", block, sheet)
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"sheets": {kind: str(sheet)}}))
    done = staticvec("config", "config/config.yaml", overlay)
    assert done.returncode == 2, done.stdout
    assert f"{sheet}, line {second}: duplicate key '{block}.{entry}' (first given on line {first})" in done.stderr


def test_unit_costs_and_the_registry_refuse_duplicate_keys(tmp_path):
    from staticvec.dag.unit_costs import UnitCosts
    from staticvec.resources import Registry

    costs = tmp_path / "unit_costs.yaml"
    costs.write_text((REPO / "config/unit_costs.yaml").read_text() + "\nlaws: {}\n")
    with pytest.raises(StaticvecError, match="duplicate key 'laws'"):
        UnitCosts.load(costs)
    registry = tmp_path / "resources.yaml"
    registry.write_text("a:\n  path: x\n  path: y\n")
    with pytest.raises(StaticvecError, match=re.escape("line 3: duplicate key 'a.path' (first given on line 2)")):
        Registry.load(registry)


def test_malformed_yaml_names_the_config_file(tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("corpus:\n  shards: [1\n")
    done = staticvec("config", "config/config.yaml", bad)
    assert done.returncode == 2
    assert f"{bad}: not valid YAML" in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- results_dir


@pytest.mark.parametrize("results_dir, reason", [
    ("results/reference/tour-1m", "is inside results/reference/, the committed reference runs"),
    ("results/reference", "is inside results/reference/"),
    (".", "is the repository;"),
    ("..", "is the repository or holds it"),
    (str(REPO), "is the repository;"),
    ("config/runs", "is inside config/, a folder of the repository's tracked files"),
    ("workflow", "is inside workflow/, a folder of the repository's tracked files"),
])
def test_a_results_dir_the_repository_keeps_is_refused(results_dir, reason):
    config = deep_merge(load_config([REPO / "config/config.yaml"]), {"results_dir": results_dir})
    with pytest.raises(ConfigError, match=re.escape(f"config key 'results_dir' = {results_dir!r}: {reason}")):
        validate_config(config)


@pytest.mark.parametrize("results_dir", ["results/mine", "results/default"])
def test_a_results_dir_of_its_own_is_accepted(results_dir, tmp_path):
    validate_config(deep_merge(load_config([REPO / "config/config.yaml"]), {"results_dir": results_dir}))
    validate_config(deep_merge(load_config([REPO / "config/config.yaml"]), {"results_dir": str(tmp_path / "r")}))


# ---------------------------------------------------------------- teacher.default, staticvec config


def test_an_unknown_teacher_default_is_one_line_naming_the_key_before_the_sheets(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("teacher: {default: bertt}\n")
    done = staticvec("config", "config/config.yaml", overlay)
    assert done.returncode == 2
    problems = [line for line in done.stderr.splitlines() if line.startswith("  - ")]
    assert problems == ["  - config key 'teacher.default' = 'bertt' is not a teacher of teacher.models (minilm, "
                        "smollm2, causal): name one of them, or add 'bertt' under teacher.models"]
    assert "embeddings sheet" not in done.stderr


def test_staticvec_config_reads_the_sheets(tmp_path):
    tables = tmp_path / "tables.yaml"
    text = (REPO / "config/tables.yaml").read_text()
    row = re.search(r"^(      \w+: )(\w+)$", text, re.M)  # a table's row: paper row id -> embedding id
    tables.write_text(text[:row.start(2)] + "no_such_embedding" + text[row.end(2):])
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"sheets": {"tables": str(tables)}}))
    done = staticvec("config", "config/config.yaml", overlay)
    assert done.returncode == 2, done.stdout
    assert str(tables) in done.stderr and "no_such_embedding" in done.stderr


def test_the_makefile_names_a_malformed_config_file_before_snakemake(tmp_path):
    """Snakemake reads --configfile before the workflow's code runs, and its message does not name the file."""
    import os

    bad = tmp_path / "mine.yaml"
    bad.write_text("corpus:\n  shards: [1\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    for k in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS"):
        env.pop(k, None)
    for words in (["dry-run", f"CONFIG={bad}"], ["dry-run", f"SNAKEMAKE_ARGS=--configfile {bad}"],
                  ["target", "T=results/default/corpus/manifest.json", f"SNAKEMAKE_ARGS=--configfile={bad}"]):
        done = subprocess.run(["make", "-o", ".venv/.installed", *words], cwd=REPO, capture_output=True, text=True,
                              env=env)
        assert done.returncode != 0
        assert f"{bad}: not valid YAML" in done.stderr and f'in "{bad}", line 2, column 11' in done.stderr
        assert "Config file is not valid JSON or YAML" not in done.stdout + done.stderr  # Snakemake never started


def test_snakemake_configfile_arguments_are_found():
    from staticvec.hub_offline import configfiles_of as snakemake_configfiles

    assert snakemake_configfiles(["--cores", "2", "--configfile", "a.yaml", "b.yaml", "-n", "--configfile=c.yaml",
                                  "--configfiles", "d.yaml", "--", "target"]) == ["a.yaml", "b.yaml", "c.yaml", "d.yaml"]
