"""The shared argument helpers (staticvec.cli_args) and the command tree they build."""

import json

import pytest

from staticvec import cli_args
from staticvec.cli import build_parser
from staticvec.errors import StaticvecError


def test_vector_formats_are_the_embedding_formats():
    from staticvec.embeddings import FORMATS

    assert cli_args.VECTOR_FORMATS == FORMATS


def test_assignments_group_repeated_ids_and_reject_bad_items():
    assert cli_args.assignments(["a=x.json", "b=y.json", "a=z.json"]) == {"a": ["x.json", "z.json"], "b": ["y.json"]}
    assert cli_args.assignments(["-1=x", "0=y"], "LAYER=FILE", key=int) == {-1: ["x"], 0: ["y"]}
    for bad in ("a", "=x", "a="):
        with pytest.raises(StaticvecError, match="expected ID=FILE"):
            cli_args.assignments([bad])
    with pytest.raises(StaticvecError, match="expected LAYER=FILE"):
        cli_args.assignments(["last=x"], "LAYER=FILE", key=int)


def test_json_values_and_json_or_file(tmp_path):
    assert cli_args.json_arg('[{"id": "a"}]', "--rows") == [{"id": "a"}]
    with pytest.raises(StaticvecError, match="--rows is not valid JSON"):
        cli_args.json_arg("[{", "--rows")
    assert cli_args.json_or_file(None, "--hparams") == {}
    assert cli_args.json_or_file('{"lr": 0.1}', "--hparams") == {"lr": 0.1}
    (tmp_path / "h.json").write_text(json.dumps({"lr": 0.2}))
    (tmp_path / "h.yaml").write_text("lr: 0.3\n")
    (tmp_path / "list.json").write_text("[1]")
    assert cli_args.json_or_file(str(tmp_path / "h.json"), "--hparams") == {"lr": 0.2}
    assert cli_args.json_or_file(str(tmp_path / "h.yaml"), "--hparams") == {"lr": 0.3}
    with pytest.raises(StaticvecError, match="not a valid JSON object"):
        cli_args.json_or_file("{lr", "--hparams")
    with pytest.raises(StaticvecError, match="file not found"):
        cli_args.json_or_file(str(tmp_path / "missing.json"), "--hparams")
    with pytest.raises(StaticvecError, match="must be a mapping of tagger settings"):
        cli_args.json_or_file(str(tmp_path / "list.json"), "--hparams", "tagger settings")


def test_optional_float():
    assert [cli_args.optional_float(t) for t in ("none", "NULL", "0", "", "1e-3")] == [None, None, None, None, 1e-3]


@pytest.mark.parametrize("argv", [
    ["evaluate", "intrinsic", "v.bin", "--out", "r.json"],
    ["evaluate", "classify", "--vectors", "v", "--data-dir", "d", "--out", "o"],
    ["evaluate", "tag", "--vectors", "v", "--task", "chunk", "--out", "o"],
    ["evaluate", "tag-summary", "a.json", "--out", "o"],
    ["report", "table", "--table", "t", "--out-csv", "c", "--out-md", "m"],
    ["cooc", "semglove", "--features", "f", "--vocab", "v", "--attention", "5", "divide", "o"],
    ["resources", "list"],
    ["config", "config/config.yaml"],
])
def test_commands_are_grouped_by_stage(argv):
    args = build_parser().parse_args(argv)
    assert args.command == argv[0] and callable(args.handler)


@pytest.mark.parametrize("old", [["classify"], ["tag"], ["tag-summary"], ["table"], ["evaluate", "v.bin", "--out", "r"]])
def test_the_old_flat_names_are_gone(old, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(old)
