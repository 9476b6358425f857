"""CONTRIBUTING.md's worked example "a variant of a method", run: its two blocks (a `like` entry of the
embeddings sheet and a row of the tables sheet) are applied to a copy of the repository, which then
plans the variant's co-occurrence store, training, evaluation and table row on the tests' tiny config.

What this pins: one paper's variant of a shared embedding is one sheet edit plus the table row, the
`like` entry is planned as the spelled-out entry would be, and nothing else of the plan changes."""

from pathlib import Path

import pytest
from example_fixtures import REPO, apply_example, changed_files, example_blocks, only_gains_its_blocks, override_file, snakemake

from staticvec.config import load_config
from staticvec.dag.dryrun import planned_jobs
from staticvec.sheets import EmbeddingSheet
from staticvec.sheets.tables import load_tables_spec

SECTION = "## Worked example 1: a variant of a method"
VARIANT = "glove_w10"


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    return apply_example(tmp_path_factory.mktemp("variant") / "repo", example_blocks(SECTION))


def test_the_example_is_one_sheet_edit_plus_the_table_row(copy):
    blocks = example_blocks(SECTION)
    assert [(path, anchor) for path, anchor, _ in blocks] == [
        ("config/embeddings.yaml", "embeddings"), ("config/tables.yaml", "tables.semglove_table1.extra_rows")]
    only_gains_its_blocks(copy, blocks)
    assert changed_files(copy) == {"config/embeddings.yaml", "config/tables.yaml"}


def test_the_variant_is_the_spelled_out_entry_and_a_row_of_the_table(copy):
    config = load_config([REPO / "config/config.yaml", REPO / "tests/config/test.yaml"])
    sheet = EmbeddingSheet.load(copy / "config/embeddings.yaml", config)
    glove, variant = sheet["glove"], sheet[VARIANT]
    assert glove.params["window"] != 10
    assert (variant.method, variant.params, variant.teacher, variant.fraction, variant.base) == \
        (glove.method, {**glove.params, "window": 10}, glove.teacher, glove.fraction, glove.base)
    tables = load_tables_spec(copy / "config/tables.yaml", copy, sheet.ids() + list(sheet.disabled))["tables"]
    assert tables["semglove_table1"]["rows"][VARIANT] == VARIANT  # extra rows follow the paper's


def test_the_plan_gains_the_variants_jobs_and_nothing_else(copy, tmp_path, shared_data):
    results = tmp_path / "results"
    override = override_file(copy, results, shared_data)

    def jobs(root):
        done = snakemake(root, override, "-n", "--forceall")
        return {(j.rule, j.wildcards, j.output) for j in planned_jobs(done.stdout) if j.rule}

    before, after = jobs(REPO), jobs(copy)
    added = after - before
    assert before <= after, sorted(before - after)[:3]
    # the window-10 counts (per shard, merged), GloVe on them (one seed: no claim names the row), its evaluation
    assert any(rule == "train_glove" and f"emb={VARIANT}," in wc and out.startswith(f"{results}/embeddings/{VARIANT}/seed1/")
               for rule, wc, out in added)
    assert any(out.startswith(f"{results}/cooc/window10") for _, _, out in added)
    assert any(rule.startswith("evaluate_intrinsic") and f"emb={VARIANT}" in wc for rule, wc, _ in added)
    assert all(VARIANT in wc or VARIANT in out or "window10" in out for _, wc, out in added), sorted(added)
