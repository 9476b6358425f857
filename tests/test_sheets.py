"""The embeddings sheet: every entry's parameters are checked against its method's schema when the
workflow is planned, so a typo or a wrong type is an error naming the sheet, the entry and the key."""

import pytest
import yaml

from staticvec.config import ConfigError, load_config
from staticvec.sheets import EmbeddingSheet, EmbeddingSpec


@pytest.fixture
def config(repo_root):
    return load_config([repo_root / "config/config.yaml"])


def _sheet(tmp_path, config, embeddings, sweeps=None):
    path = tmp_path / "embeddings.yaml"
    path.write_text(yaml.safe_dump({"embeddings": embeddings, **({"sweeps": sweeps} if sweeps else {})}))
    return EmbeddingSheet.load(path, config)


def test_shipped_sheets_are_valid(repo_root):
    for extra in ("config/config.yaml", "config/paper.yaml", "tests/config/test.yaml"):
        cfg = load_config([repo_root / "config/config.yaml", repo_root / extra])
        sheet = EmbeddingSheet.load(repo_root / "config/embeddings.yaml", cfg)
        assert "glove" in sheet


@pytest.mark.parametrize("embeddings, words", [
    ({"glove": {"method": "glove", "params": {"dim": "big"}}},
     ["embedding 'glove'", "params.dim = 'big'"]),
    ({"glove": {"method": "glove", "params": {"x_max": -1}}},
     ["embedding 'glove'", "params.x_max = -1"]),
    ({"glove": {"method": "glove"}, "r": {"method": "retrofit", "base": "glove", "params": {"kindd": "faruqui", "lexicon": "ppdb"}}},
     ["embedding 'r'", "unknown parameter(s) ['kindd']", "'kind' is a required property"]),
    ({"glove": {"method": "glove"}, "r": {"method": "retrofit", "base": "glove", "params": {"kind": "faruqi", "lexicon": "ppdb"}}},
     ["embedding 'r'", "params.kind = 'faruqi'"]),
    ({"glove": {"method": "glove"}, "r": {"method": "retrofit", "base": "glove", "params": {"kind": "faruqui", "lexicon": "pdpb"}}},
     ["embedding 'r'", "'pdpb' is not a lexicon of config post.lexicons"]),
    ({"glove": {"method": "glove"}, "a": {"method": "artetxe", "base": "glove", "params": {"alpah": 0.5}}},
     ["embedding 'a'", "unknown parameter(s) ['alpah']"]),
    ({"glove": {"method": "glove", "params": {"fraction": 1.5}}},
     ["embedding 'glove'", "fraction = 1.5"]),
    ({"x": {"method": "x2static", "params": {"teacher": "bertt"}}},
     ["embedding 'x'", "teacher = 'bertt'"]),
    ({"b": {"method": "teacher_token", "params": {"layer": 3}}},
     ["embedding 'b'", "unknown parameter(s) ['layer']"]),
])
def test_bad_parameters_are_plan_time_errors_naming_sheet_entry_and_key(tmp_path, config, embeddings, words):
    with pytest.raises(ConfigError) as err:
        _sheet(tmp_path, config, embeddings)
    message = str(err.value)
    assert str(tmp_path / "embeddings.yaml") in message
    for word in words:
        assert word in message, message


def test_a_sweep_value_of_the_wrong_type_names_the_sweep(tmp_path, config):
    with pytest.raises(ConfigError, match=r"embedding 'glove~dimbig' \(sweep 'dims'\).*params.dim = 'big'"):
        _sheet(tmp_path, config, {"glove": {"method": "glove"}}, {"dims": {"bases": ["glove"], "param": "dim", "values": [50, "big"]}})


def test_every_problem_is_listed_at_once_and_good_entries_pass(tmp_path, config):
    with pytest.raises(ConfigError) as err:
        _sheet(tmp_path, config, {"g1": {"method": "glove", "params": {"dim": "big"}},
                                  "g2": {"method": "glove", "params": {"iterations": 0}}})
    assert "'g1'" in str(err.value) and "'g2'" in str(err.value)
    sheet = _sheet(tmp_path, config, {"g": {"method": "glove", "params": {"dim": 50}},
                                      "s": {"method": "skipgram", "params": {"dim": "teacher"}},
                                      "r": {"method": "retrofit", "base": "g", "params": {"kind": "student-t", "lexicon": "wordnet"}}})
    assert sheet["g"].params["dim"] == 50 and sheet["r"].params["kind"] == "student-t"


def test_presets_are_chosen_not_set_as_a_parameter(tmp_path, config):
    with pytest.raises(ConfigError) as err:
        _sheet(tmp_path, config, {"x": {"method": "x2static", "params": {"variants": {}}}})
    assert "unknown parameter(s) ['variants']" in str(err.value)
    assert "variants" not in str(err.value).split("allowed:")[1]


@pytest.mark.parametrize("data, words", [
    ({"embeddings": {"glove": {"method": "glove", "paramz": {}}}}, ["embeddings/glove", "'paramz' was unexpected"]),
    ({"embeddings": {"9lives": {"method": "glove"}}}, ["'9lives' does not match"]),
    ({"embeddings": {"glove": {"params": {}}}}, ["embeddings/glove", "'method' is a required property"]),
    ({"embeddings": {"glove": {"method": "glove"}}, "sweeps": {"s": {"bases": ["glove"], "param": "dim"}}},
     ["sweeps/s", "is not valid under any of the given schemas"]),
    ({"embeddings": {"glove": {"method": "glove"}}, "sweeps": {"s": {"bases": ["glove"], "param": "dim", "values": [50],
                                                                   "values_from": "methods.ase.layers"}}},
     ["sweeps/s"]),
    ({"embeddings": {"glove": {"method": "glove"}}, "extra": 1}, ["'extra' was unexpected"]),
])
def test_the_sheets_structure_is_checked_against_its_schema_naming_the_file(tmp_path, config, data, words):
    path = tmp_path / "embeddings.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        EmbeddingSheet.load(path, config)
    for word in [str(path), "invalid embeddings sheet", *words]:
        assert word in str(err.value)


def test_two_sweeps_of_one_parameter_need_an_id_key_and_get_their_own_ids(tmp_path, config):
    """Two fraction sweeps of one base used to make the same ids, the later silently replacing the earlier's
    points (x_max 1.25 or 10 at an eighth of the corpus): now an error, and `id_key` names the points apart."""
    embeddings = {"glove": {"method": "glove"}}
    figure = {"bases": ["glove"], "param": "fraction", "values": [0.125, 1.0], "linked": {"x_max": [1.25, 10.0]}}
    plain = {"bases": ["glove"], "param": "fraction", "values": [0.125, 1.0]}
    with pytest.raises(ConfigError, match=r"sweep 'plain' makes the id 'glove~fraction0.125', which sweep 'figure' "
                                          r"makes too.*id_key"):
        _sheet(tmp_path, config, embeddings, {"figure": figure, "plain": plain})
    sheet = _sheet(tmp_path, config, embeddings, {"figure": figure, "plain": {**plain, "id_key": "scale"}})
    assert sheet["glove~fraction0.125"].params["x_max"] == 1.25 and sheet["glove~fraction0.125"].sweep == "figure"
    assert sheet["glove~scale0.125"].params["x_max"] == 10 and sheet["glove~scale0.125"].fraction == 0.125
    assert sheet.sweeps["plain"].variant_id("glove", 1.0) == "glove~scale1"


def test_config_sweep_fractions_put_a_sweep_on_a_development_subset(tmp_path, config):
    embeddings = {"glove": {"method": "glove"}}
    sweeps = {"dims": {"bases": ["glove"], "param": "dim", "values": [50, 300]},
              "corpus": {"bases": ["glove"], "param": "fraction", "values": [0.5, 1.0]}}
    sheet = _sheet(tmp_path, config, embeddings, sweeps)
    assert sheet["glove~dim50"].fraction == 1.0 and sheet.sweeps["dims"].fraction is None
    sheet = _sheet(tmp_path, {**config, "sweep_fractions": {"dims": 0.125}}, embeddings, sweeps)
    assert sheet["glove~dim50"].fraction == 0.125 == sheet["glove~dim300"].fraction == sheet.sweeps["dims"].fraction
    assert sheet["glove"].fraction == 1.0 and sheet["glove~fraction0.5"].fraction == 0.5
    with pytest.raises(ConfigError, match=r"'sweep_fractions': \['dimz'\] are not sweeps of .*\(corpus, dims\)"):
        _sheet(tmp_path, {**config, "sweep_fractions": {"dimz": 0.125}}, embeddings, sweeps)
    with pytest.raises(ConfigError, match=r"'sweep_fractions.corpus': sweep 'corpus' varies the corpus fraction"):
        _sheet(tmp_path, {**config, "sweep_fractions": {"corpus": 0.5}}, embeddings, sweeps)


def test_like_inherits_the_named_entry_and_overrides_params_key_by_key(tmp_path, config):
    sheet = _sheet(tmp_path, config, {
        "x": {"method": "x2static", "params": {"context": "paragraph", "teacher": "minilm", "fraction": 0.5},
              "preset": "released", "description": "the paragraph student"},
        "x_w": {"like": "x", "params": {"epochs": 2}},
        "x_ww": {"like": "x_w", "params": {"fraction": 0.25, "epochs": 3}, "description": "mine"},  # a chain
        "c": {"method": "c2v"},
        "post": {"method": "artetxe", "base": "c", "params": {"alpha": 0.0}},
        "post_half": {"like": "post", "params": {"alpha": 0.5}},
    })
    x, x_w, x_ww = sheet["x"], sheet["x_w"], sheet["x_ww"]
    assert x_w.method == x_ww.method == "x2static" and x_w.teacher == x_ww.teacher == "minilm"
    # the preset is inherited: every key of the released settings is the parent's, but for the one changed
    assert x.params["epochs"] != 2 and x_w.params == {**x.params, "epochs": 2} and x_w.fraction == 0.5
    assert x_ww.params == {**x.params, "epochs": 3} and x_ww.fraction == 0.25 and x_ww.description == "mine"
    assert x_w.description == "x with epochs 2"  # not the parent's: it describes another run
    assert sheet["post_half"].base == "c" and sheet["post_half"].params == {"alpha": 0.5}


def test_like_resolves_to_the_spelled_out_entry(tmp_path, config):
    """A `like` entry is, downstream, the entry one would have written out: the same resolved spec."""
    base = {"method": "bert_sg", "params": {"negatives": 3}, "preset": "released"}
    like = _sheet(tmp_path, config, {"b": base, "b_w10": {"like": "b", "params": {"window": 10}}})["b_w10"]
    written = _sheet(tmp_path, config, {"b_w10": {"method": "bert_sg", "params": {"negatives": 3, "window": 10},
                                                  "preset": "released"}})["b_w10"]
    assert like == EmbeddingSpec(**{**written.__dict__, "description": like.description})
    assert like.params["window"] == 10 and like.params["negatives"] == 3


def test_like_of_an_optional_row_is_optional(tmp_path, config):
    config = {**config, "sheets": {**config.get("sheets", {}), "optional_rows": {"costly": False}}}
    sheet = _sheet(tmp_path, config, {"g": {"method": "glove", "when": "costly"}, "g5": {"like": "g", "params": {"dim": 50}}})
    assert sheet.disabled == {"g": "costly", "g5": "costly"}


@pytest.mark.parametrize("embeddings, message", [
    ({"a": {"like": "b"}, "b": {"like": "c"}, "c": {"like": "a"}}, r"embedding '.': like '.' makes a cycle \((.) -> . -> . -> \1\)"),
    ({"a": {"like": "a"}}, r"embedding 'a': like 'a' makes a cycle \(a -> a\)"),
    ({"a": {"method": "glove"}, "b": {"like": "nope"}}, r"embedding 'b': like 'nope' is not an entry of the sheet"),
    ({"a": {"method": "glove"}, "b": {"like": "a", "params": {"windw": 3}}}, r"embedding 'b'.*unknown parameter\(s\) \['windw'\]"),
    ({"a": {"method": "glove"}, "b": {"like": "a", "method": "skipgram"}}, r"embedding 'b': like 'a' \(method glove\) cannot change"),
])
def test_like_errors_name_the_sheet_and_the_entry(tmp_path, config, embeddings, message):
    with pytest.raises(ConfigError, match=message) as err:
        _sheet(tmp_path, config, embeddings)
    assert str(tmp_path / "embeddings.yaml") in str(err.value)
