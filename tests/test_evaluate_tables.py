"""Paper tables: the transcribed files, the tables sheet, and the ours / paper / difference builder."""

import json
import math
from pathlib import Path

import pytest

from staticvec.cli import main
from staticvec.errors import InputFileError, StaticvecError
from staticvec.evaluate.datasets import DATASETS
from staticvec.report.tables import build_comparison, build_neighbours, to_markdown
from staticvec.sheets.tables import load_paper_table, load_tables_spec, table_result_paths

ROOT = Path(__file__).resolve().parents[1]
PAPER_TABLES = sorted((ROOT / "resources/paper_tables").glob("*.csv"))


@pytest.mark.parametrize("path", PAPER_TABLES, ids=[p.stem for p in PAPER_TABLES])
def test_every_paper_table_reads(path):
    table = load_paper_table(path)
    assert table.rows and {"paper", "title", "units", "source"} <= set(table.meta)
    assert table.meta["table"] == path.stem.split("table")[1]
    if table.kind == "neighbours":
        assert all(len(words) == 6 for words in table.neighbours.values())
    else:
        numbers = [v for v in table.values.values() if not math.isnan(v)]
        assert len(numbers) >= len(table.rows)


def test_paper_table_values_and_notes():
    t3 = load_paper_table(ROOT / "resources/paper_tables/x2static_table3.csv")
    assert t3.values[("ase_bert_task", "rg65")] == 0.7449 and t3.notes[("ase_bert_task", "rg65")] == "1"
    assert t3.scale == 1 and t3.decimals("avg") == 4 and t3.info["skipgram"]["dim"] == "768"
    t5 = load_paper_table(ROOT / "resources/paper_tables/semglove_table5.csv")
    assert t5.values[("cat_cats", "semglove_md")] == 34800.0  # printed 3.48 x 10^4


def test_tables_sheet_is_valid_and_uses_known_datasets():
    spec = load_tables_spec(ROOT / "config/tables.yaml", ROOT)
    assert set(spec["tables"]) == {p.stem for p in PAPER_TABLES}
    for entry in spec["tables"].values():
        if entry["source"] == "intrinsic":
            for target in entry.get("columns", {}).values():
                if isinstance(target, str):
                    assert target.split(".")[0] in DATASETS


def test_tables_sheet_errors(tmp_path):
    bad = tmp_path / "tables.yaml"
    bad.write_text("tables:\n  c2v_table1:\n    paper_file: resources/paper_tables/c2v_table1.csv\n"
                   "    source: intrinsic\n    protocol: web\n    rows: {sg: sg, skipgram: sg}\n    columns: {ws353: ws353, wsx: ws353}\n")
    with pytest.raises(StaticvecError) as err:
        load_tables_spec(bad, ROOT)
    assert "['skipgram'] are not rows" in str(err.value) and "['wsx'] are not columns" in str(err.value)
    bad.write_text("tables:\n  c2v_table1:\n    paper_file: x.csv\n    source: nowhere\n    rows: {}\n")
    with pytest.raises(StaticvecError, match="source"):
        load_tables_spec(bad, ROOT)


def test_tables_sheet_typos_in_row_ids_and_column_keys_name_the_sheet_table_and_key(tmp_path):
    bad = tmp_path / "tables.yaml"
    bad.write_text("tables:\n  c2v_table1:\n    paper_file: resources/paper_tables/c2v_table1.csv\n"
                   "    source: intrinsic\n    protocol: web\n    rows: {sg: sg, glove: glvoe, bert_avg: null}\n"
                   "    columns: {ws353: ws353x, simlex999: simlex999}\n")
    with pytest.raises(StaticvecError) as err:
        load_tables_spec(bad, ROOT)  # column keys are checked without the embeddings sheet
    assert f"{bad}: tables.c2v_table1.columns.ws353: 'ws353x' is not a result of a intrinsic table" in str(err.value)
    bad.write_text(bad.read_text().replace("ws353x", "ws353"))
    load_tables_spec(bad, ROOT)  # row ids only when the embeddings sheet is known
    with pytest.raises(StaticvecError) as err:
        load_tables_spec(bad, ROOT, embedding_ids=["sg", "glove"])
    message = str(err.value)
    assert f"{bad}: tables.c2v_table1.rows.glove: 'glvoe' is not an embedding of the embeddings sheet" in message
    assert "rows.sg" not in message and "bert_avg" not in message  # known ids and null rows are fine
    bad.write_text(bad.read_text().replace("glvoe", "{best_of: 'ase~layer*'}"))
    with pytest.raises(StaticvecError, match="rows.glove: best_of 'ase~layer\\*' matches no embedding"):
        load_tables_spec(bad, ROOT, embedding_ids=["sg", "glove"])
    load_tables_spec(bad, ROOT, embedding_ids=["sg", "glove", "ase~layer3"])


@pytest.mark.parametrize("source, good, typo", [("tagging", "pos.test", "poss"),
                                                ("classification", "mr.f1", "mrr.f1")])
def test_extrinsic_column_keys_are_checked(tmp_path, source, good, typo):
    table = {"tagging": "semglove_table2", "classification": "x2static_table4"}[source]
    paper = load_paper_table(ROOT / f"resources/paper_tables/{table}.csv")
    bad = tmp_path / "tables.yaml"
    text = (f"tables:\n  {table}:\n    paper_file: resources/paper_tables/{table}.csv\n    source: {source}\n"
            f"    rows: {{{paper.rows[0]}: null}}\n    columns: {{{paper.columns[0]}: {{key}}}}\n")
    bad.write_text(text.replace("{key}", good))
    load_tables_spec(bad, ROOT)
    bad.write_text(text.replace("{key}", typo))
    with pytest.raises(StaticvecError, match=f"columns.{paper.columns[0]}: '{typo}' is not a result of a {source} table"):
        load_tables_spec(bad, ROOT)


def test_shipped_tables_sheet_names_only_embeddings_of_the_shipped_sheet():
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    config = load_config([ROOT / "config/config.yaml"])
    assert Workflow(config, ROOT).tables  # raises on an unknown row id


def test_malformed_paper_table_names_file_and_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# paper: P\n# table: 1\n# units: x\nrow,label,a\nr1,R1,1.0\nr2,R2,abc\n")
    with pytest.raises(InputFileError) as err:
        load_paper_table(path)
    assert err.value.line == 6 and "abc" in str(err.value)


def result(**scores):
    out = {"oov_policy": "mean", "lowercase": True, "max_vocab": None, "results": {}}
    for key, (score, found, total) in scores.items():
        out["results"][key] = {"score": score, "found": found, "total": total}
    return out


def paper_file(tmp_path):
    path = tmp_path / "demo_table1.csv"
    path.write_text("# paper: Demo\n# table: 1\n# title: demo\n# units: x100\n# scale: 100\n"
                    "row,label,ws,sl,avg\nsg,Skip-gram,60.0,30.0,45.0\ndeps,Deps,50.0,,\n")
    return path


def test_build_comparison_scales_diffs_averages_and_coverage(tmp_path):
    ours = {"sg": [result(ws353=(0.62, 350, 353), simlex999=(0.31, 990, 999)),
                   result(ws353=(0.64, 350, 353), simlex999=(0.33, 990, 999))]}
    frame = build_comparison(paper_file(tmp_path), ours, {"sg": "sg", "deps": None},
                             {"ws": "ws353", "sl": "simlex999", "avg": {"mean": ["ws", "sl"]}},
                             {"corpus": "enwiki AA", "tokens": 2_000_000, "teacher": "MiniLM"})
    cell = frame.set_index(["row", "column"])
    ws = cell.loc[("sg", "ws")]
    assert ws["ours"] == pytest.approx(63.0) and ws["diff"] == pytest.approx(3.0)
    assert ws["ours_sd"] == pytest.approx(math.sqrt(2)) and ws["runs"] == 2 and (ws["found"], ws["total"]) == (350, 353)
    avg = cell.loc[("sg", "avg")]
    assert avg["ours"] == pytest.approx((63 + 32) / 2) and avg["diff"] == pytest.approx(2.5) and avg["total"] == 1352
    deps = cell.loc[("deps", "ws")]
    assert deps["paper"] == 50.0 and math.isnan(deps["ours"]) and not isinstance(deps["embedding"], str)
    caption = frame.attrs["caption"]
    for part in ("Demo, Table 1", "enwiki AA", "2.0M tokens", "MiniLM", "mean vector", "lower-cased"):
        assert part in caption
    md = to_markdown(frame)
    assert "63.0 / 60.0 (+3.0) ±1.4 (n=2)" in md and "| Deps | — | — / 50.0 |" in md and "350/353" in md


def test_result_paths_for_sub_fields(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# paper: P\n# table: 2\n# units: %\n# scale: 100\nrow,label,sem,web\nsg,SG,50.0,20.0\n")
    res = {"results": {"google": {"score": 0.4, "semantic": 0.5, "found": 90, "total": 100,
                                  "groups": {"semantic": {"score": 0.5, "found": 40, "total": 50}}},
                       "semeval2012": {"score": 0.1, "found": 3000, "total": 3218, "variants": {"web": 0.2}}}}
    frame = build_comparison(path, {"sg": res}, {"sg": "sg"}, {"sem": "google.semantic", "web": "semeval2012.variants.web"})
    cell = frame.set_index("column")
    assert cell.loc["sem", "ours"] == pytest.approx(50.0) and cell.loc["sem", "total"] == 50
    assert cell.loc["web", "ours"] == pytest.approx(20.0) and cell.loc["web", "found"] == 3000


def test_neighbours_table_overlap(tmp_path):
    paper = ROOT / "resources/paper_tables/wang_table4.csv"
    ours = {"bert_sg": {"results": {"neighbours": {"neighbours": {"while": [
        ["whilst", 0.8], ["although", 0.7], ["when", 0.6], ["though", 0.5], ["after", 0.4], ["but", 0.3], ["x", 0.1]]}}}}}
    frame = build_neighbours(paper, ours, {"ours": "bert_sg", "sg": None})
    mine = frame[frame["row"] == "ours"]
    assert list(mine["ours"]) == ["whilst", "although", "when", "though", "after", "but"]
    assert mine["overlap"].iloc[0] == 3  # whilst, although, though
    assert "3/6" in to_markdown(frame)


def test_table_cli_and_input_paths(tmp_path):
    spec = load_tables_spec(ROOT / "config/tables.yaml", ROOT)
    paths = table_result_paths(spec["tables"]["semglove_table1"], "R/eval/{emb}/intrinsic.{protocol}.json",
                               available=["sg", "glove", "semglove_md"])
    assert paths == {"sg": "R/eval/sg/intrinsic.web.json", "glove": "R/eval/glove/intrinsic.web.json",
                     "semglove_md": "R/eval/semglove_md/intrinsic.web.json"}
    res = tmp_path / "sg.json"
    res.write_text(json.dumps(result(ws353=(0.6, 353, 353), ws353_sim=(0.7, 203, 203), ws353_rel=(0.5, 252, 252),
                                     simlex999=(0.3, 999, 999))))
    meta = tmp_path / "manifest.json"
    meta.write_text(json.dumps({"corpus": "enwiki-2015 AA", "tokens": 2e6, "teacher": "all-MiniLM-L6-v2"}))
    out_csv, out_md = tmp_path / "t/table1.csv", tmp_path / "t/table1.md"
    code = main(["report", "table", "--spec", str(ROOT / "config/tables.yaml"), "--root", str(ROOT), "--table", "semglove_table1",
                 "--out-csv", str(out_csv), "--out-md", str(out_md), "--meta", str(meta), f"sg={res}"])
    assert code == 0
    text = out_md.read_text()
    assert "60.0 / 61.6 (-1.6)" in text and "all-MiniLM-L6-v2" in text and "| GloVe6B | — | — / 56.5" in text
    assert out_csv.read_text().startswith("# ")


def test_tagging_tables_read_the_teachers_contextual_row_when_configured():
    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow

    config = load_config(["config/config.yaml"])
    w = Workflow(config)
    results = dict(w.table_results("wang_table3"))
    assert results["contextual"] == f"{w.results_dir}/eval/contextual-minilm/tagging.json"
    assert results["bert_sg"] == w.tagging_result("bert_sg")
    config["tagging"]["contextual_baseline"] = False
    assert "contextual" not in dict(Workflow(config).table_results("wang_table3"))


def test_intrinsic_groups_cover_every_result_the_readers_read_once():
    """One intrinsic job per embedding: the groups hold each embedding once, and an embedding's group
    lists exactly the protocols (config order) and the seeds (the embedding's order) that the tables,
    figures, summary, claims and ASE's best-layer choice read of it; the job's outputs are every
    (protocol, seed) result of the group, and its options give each vector file its own result files."""
    import re
    import shlex

    from staticvec.cli import build_parser
    from staticvec.config import load_config
    from staticvec.dag import arguments
    from staticvec.dag.workflow import Workflow

    w = Workflow(load_config(["config/config.yaml"]))
    groups = w.intrinsic_groups()
    member = {}
    order = list(w.config["evaluation"]["protocols"])
    for (protocols, seeds), embeddings in groups.items():
        assert list(protocols) == sorted(protocols, key=order.index)
        for emb in embeddings:
            assert emb not in member, emb
            assert list(seeds) == [str(s) for s in w.seeds(emb) if str(s) in seeds]
            member[emb] = (set(protocols), set(seeds))
    read = [p for t in w.tables for _, p in w.table_results(t)]
    read += [p for f in w.figures for _, p in w.figure_results(f)] + [p for _, p in w.summary_results()]
    read += [p for _, p in w.claims_results()] + [p for _, p in w.ase_best_results()]
    wanted = {}
    for path in read:
        match = re.search(r"/eval/([^/]+)/seed([^/]+)/intrinsic\.([^/.]+)\.json$", path)
        if match:
            protocols, seeds = wanted.setdefault(match.group(1), (set(), set()))
            protocols.add(match.group(3))
            seeds.add(match.group(2))
    assert member == wanted
    assert ({"web", "muse"}, {"1", "2", "3"}) in wanted.values() and ({"web"}, {"1"}) in wanted.values()

    (protocols, seeds), embeddings = next((key, e) for key, e in groups.items() if len(key[0]) == 2 and len(key[1]) == 3)
    outputs = {name: path.replace("{emb}", embeddings[0]) for name, path in w.intrinsic_outputs(protocols, seeds).items()}
    assert sorted(outputs.values()) == sorted(w.intrinsic_result(embeddings[0], s, p) for s in seeds for p in protocols)
    per_file = [{p: outputs[w.intrinsic_output_name(p, s)] for p in protocols} for s in seeds]
    vectors = w.seed_embeddings(seeds, embeddings[0])
    args = build_parser().parse_args(["evaluate", "intrinsic", *vectors,
                                      *shlex.split(shlex.join(arguments.multi_cli_options(w.config, per_file)))])
    assert args.vectors == vectors
    for words in args.protocol:  # NAME VIEW, then one result file per vector file, seed by seed
        assert words[2:] == [w.intrinsic_result(embeddings[0], s, words[0]) for s in seeds]


def test_each_intrinsic_job_scores_the_sets_its_readers_read():
    """evaluation.scope: read. A point of SemGloVe's Figure 2a (WS353S vs dimension) is scored on WS353S
    only; a summary row on the summary's 15 columns; an embedding nobody reads, a reader naming a key
    that is no data set, and scope: all get every set of `tasks` (None)."""
    import shlex

    from staticvec.cli import build_parser
    from staticvec.config import load_config
    from staticvec.dag import arguments
    from staticvec.dag.workflow import Workflow
    from staticvec.sheets.figures import summary_columns_of

    config = load_config(["config/config.yaml"])
    assert config["evaluation"]["scope"] == "read"
    w = Workflow(config)
    assert w.figures["semglove_figure2a"]["metrics"] == ["ws353_sim"]
    point = w.sheet.sweeps["semglove_dim"].variant_id("glove", 100)
    assert w.intrinsic_sets(point) == ["ws353_sim"]
    summary = summary_columns_of(w.figures_spec)  # the registry's, the sheet listing none
    assert set(summary) <= set(w.intrinsic_sets("glove")) and len(summary) == 15
    assert w.intrinsic_sets("no-such-embedding") is None
    # the job's command line: --tasks ws353_sim, parsed back by the CLI
    options = arguments.multi_cli_options(config, {"web": "r.json"}, w.intrinsic_sets(point))
    args = build_parser().parse_args(["evaluate", "intrinsic", "v.bin", *shlex.split(shlex.join(options))])
    assert args.tasks == ["ws353_sim"]

    odd = Workflow(load_config(["config/config.yaml"]))
    odd.figures["semglove_figure2a"]["metrics"] = ["ws353_sim.unknown_field", "not_a_data_set"]
    assert odd.intrinsic_sets(point) is None  # a key it cannot place: the whole suite, never a missing score
    config["evaluation"]["scope"] = "all"
    assert Workflow(config).intrinsic_sets(point) is None


def test_jobs_and_their_data_sets_come_from_the_same_readers():
    """intrinsic_reads is the one enumeration: an embedding has an intrinsic job exactly when some reader
    reads an intrinsic result of it, and its job scores exactly the sets those readers use (within
    evaluation.tasks); a reader whose keys cannot be placed gives the whole suite."""
    import re

    from staticvec.config import load_config
    from staticvec.dag.workflow import Workflow
    from staticvec.evaluate.datasets import selected

    w = Workflow(load_config(["config/config.yaml"]))
    reads = w.intrinsic_reads()
    assert reads and all(re.search(r"/eval/[^/]+/seed[^/]+/intrinsic\.[^/.]+\.json$", p) for paths, _ in reads for p in paths)
    named: dict[str, list] = {}
    for paths, keys in reads:
        for path in paths:
            named.setdefault(path.split("/eval/")[1].split("/")[0], []).append(keys)
    assert {e for embs in w.intrinsic_groups().values() for e in embs} == set(named)
    allowed, neighbours_allowed = selected(w.config["evaluation"]["tasks"])
    for emb, keysets in named.items():
        sets = w.intrinsic_sets(emb)
        if any(keys is None for keys in keysets):
            assert sets is None, emb
            continue
        union = set().union(*keysets)
        names, neighbours = selected(sorted(union))
        assert set(sets) == (set(names) & set(allowed)) | ({"neighbours"} if neighbours and neighbours_allowed else set()), emb
