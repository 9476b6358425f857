"""Reference publishing: stage timings summed from benchmark files, only small outputs copied."""

import os

import pytest

from staticvec.errors import InputFileError
from staticvec.files import read_json, write_json
from staticvec.report.reference import publish, rule_timings, rules_of_benchmarks, stage_timings

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def bench(path, seconds, cpu, rss, end):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:00\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n")
    os.utime(path, (end, end))


def make_run(root):
    bench(root / "benchmarks/corpus/prepare.tsv", 10.0, 8.0, 100, end=1000)
    bench(root / "benchmarks/train/glove/seed1.tsv", 30.0, 50.0, 700, end=1050)
    bench(root / "benchmarks/train/sg/seed1.tsv", 20.0, 19.5, 300, end=1040)
    write_json(root / "manifest.json", {"config_hash": "abc"})
    (root / "tables/semglove").mkdir(parents=True)
    (root / "tables/semglove/table1.md").write_text("| a |\n")
    (root / "embeddings/glove/seed1").mkdir(parents=True)
    (root / "embeddings/glove/seed1/vectors.bin").write_bytes(b"big")


def test_stage_timings_sum_jobs_and_span_the_run(tmp_path):
    make_run(tmp_path)
    t = stage_timings(tmp_path / "benchmarks")
    assert t["stages"]["train"] == {"jobs": 2, "wall_s": 50.0, "cpu_s": 69.5, "longest_job_s": 30.0,
                                    "longest_job": "train/glove/seed1", "max_rss_mb": 700.0}
    assert t["stages"]["corpus"]["jobs"] == 1 and t["jobs"] == 3 and t["work_s"] == 60.0
    # first start: prepare 1000 - 10 = 990; last end: 1050
    assert t["run_wall_s"] == 60.0


def test_publish_copies_tables_and_manifest_but_not_vectors(tmp_path):
    run, out = tmp_path / "run", tmp_path / "reference"
    make_run(run)
    manifest = publish(run, out)
    assert (out / "tables/semglove/table1.md").read_text() == "| a |\n"
    assert not (out / "embeddings").exists()
    saved = read_json(out / "manifest.json")
    assert saved["config_hash"] == "abc" and saved["timings"]["jobs"] == 3 == manifest["timings"]["jobs"]
    assert "train | 2 | 0:00:50" in (out / "timings.md").read_text()


def test_publish_refuses_an_unfinished_run(tmp_path):
    with pytest.raises(InputFileError, match="manifest.json"):
        publish(tmp_path, tmp_path / "out")


def job_record(metadata, output, rule, log):
    import base64
    import json

    metadata.mkdir(parents=True, exist_ok=True)
    name = base64.urlsafe_b64encode(output.encode()).decode()
    (metadata / name).write_text(json.dumps({"rule": rule, "log": [log], "starttime": 0, "endtime": 1}))


def test_rule_timings_attribute_benchmarks_through_the_job_records(tmp_path):
    run = tmp_path / "results/default"
    make_run(run)
    write_json(run / "corpus/manifest.json", {"totals": {"tokens": 2_000_000}})
    meta = tmp_path / ".snakemake/metadata"
    job_record(meta, "results/default/embeddings/glove/seed1/vectors.bin", "train_glove",
               "results/default/logs/train/glove/seed1.log")
    job_record(meta, "results/default/embeddings/sg/seed1/vectors.bin", "train_gensim_baseline",
               "results/default/logs/train/sg/seed1.log")
    (meta / "garbled").write_text("{not json")
    rules = rules_of_benchmarks(meta, "results/default")
    assert rules == {"train/glove/seed1": "train_glove", "train/sg/seed1": "train_gensim_baseline"}
    t = rule_timings(run / "benchmarks", rules, 2_000_000)
    assert list(t) == ["train_glove", "train_gensim_baseline", "corpus/?"]  # by job time; unknown rule by stage
    assert t["train_glove"] == {"jobs": 1, "wall_s": 30.0, "cpu_s": 50.0, "max_rss_mb": 700.0,
                                "wall_s_per_million_tokens": 15.0}
    # per million tokens only where the work grows with the corpus: not for a rule it cannot name
    assert t["corpus/?"]["wall_s_per_million_tokens"] is None and t["train_gensim_baseline"]["wall_s_per_million_tokens"]
    assert rule_timings(run / "benchmarks", {"train/glove/seed1": "evaluate_intrinsic_web_seed1"},
                        2_000_000)["evaluate_intrinsic_web_seed1"]["wall_s_per_million_tokens"] is None
    cwd = os.getcwd()
    os.chdir(tmp_path)  # Snakemake's records name outputs relative to the working directory
    try:
        manifest = publish("results/default", "reference")
    finally:
        os.chdir(cwd)
    assert manifest["timings"]["rules"]["train_glove"]["jobs"] == 1 and manifest["timings"]["corpus_tokens"] == 2_000_000
    assert "| train_glove | 1 | 0:00:30 | 0:00:50 | 700 MB | 0:00:15 |" in (tmp_path / "reference/timings.md").read_text()


def test_timings_set_each_stage_beside_the_projection_and_the_tour(tmp_path):
    """The claims run's timings.md: per stage, its job time, the projection's, the tour's and the two ratios;
    the segments listed and their wall time summed (hand-computed from the files below)."""
    run, out = tmp_path / "run", tmp_path / "reference"
    make_run(run)  # corpus 10 s, train 30 + 20 s
    rows = [["segment", "start_utc", "end_utc", "wall_s", "exit", "uptime_start", "uptime_end", "host", "cpu", "cores",
             "command"],
            ["1", "2026-12-01 10:00:00", "2026-12-01 11:00:00", "3600.0", "130 (interrupted)", "load average: 0.1",
             "load average: 2.0", "box", "EPYC (avx2)", "2", "snakemake"],
            ["2", "2026-12-02 09:00:00", "2026-12-02 09:30:00", "1800.0", "0", "load average: 0.2", "load average: 1.9",
             "box", "EPYC (avx2)", "2", "snakemake"]]
    (run / "segments.tsv").write_text("".join("\t".join(r) + "\n" for r in rows))
    projection = tmp_path / "projection.json"
    write_json(projection, {"job_s": 80.0, "core_s": 90.0, "base_tokens": 1_000_000, "target_tokens": 10_000_000,
                            "stages": {"corpus": {"jobs": 1, "projected_s": 20.0}, "train": {"jobs": 2, "projected_s": 40.0},
                                       "teacher": {"jobs": 1, "projected_s": 20.0}}})
    tour = tmp_path / "tour.json"
    write_json(tour, {"tokens": 1_000_133, "git_commit": "fb1e677", "machine": {"cpu": "EPYC (avx2)"},
                      "timings": {"work_s": 25.0, "stages": {"corpus": {"wall_s": 5.0}, "train": {"wall_s": 20.0}}}})
    manifest = publish(run, out, projection=projection, tour=tour)
    text = (out / "timings.md").read_text()
    assert "| corpus | 1 | 0:00:10 | 0:00:20 | 0.50× | 0:00:05 | 2.00× |" in text
    assert "| train | 2 | 0:00:50 | 0:00:40 | 1.25× | 0:00:20 | 2.50× |" in text
    assert "| teacher | 0 | 0:00:00 | 0:00:20 | 0.00× | — | — |" in text  # projected but not run
    assert "| **all** | 3 | 0:01:00 | 0:01:20 | 0.75× | 0:00:25 | 2.40× |" in text
    assert "Wall time of the segments, summed: **1:30:00** (2 segments)." in text
    assert "| 1 | 2026-12-01 10:00:00 | 2026-12-01 11:00:00 | 1:00:00 | 130 (interrupted) |" in text
    assert "the same CPU" in text and (out / "segments.tsv").exists()
    assert manifest["machine"]["cpu"] == "EPYC (avx2)" and manifest["timings"]["compared"]["all"]["tour_s"] == 25.0


def _claims_json():
    """Two claims as the claims evaluation writes them: an intrinsic part with its rows' per-seed values, a part
    of a mean metric, and a part not tested (no rows)."""
    return {"claims": [
        {"id": "semglove_t1_vs_glove", "parts": [
            {"alternatives": [{"comparison": "semglove_sd > glove on ws353", "metric": "ws353", "mean": 5.0,
                               "row_values": [{"row": "semglove_sd", "weight": 1.0, "values": {"1": 45.0, "2": 46.0, "3": 47.5}},
                                        {"row": "glove", "weight": -1.0, "values": {"1": 40.0, "2": 41.0, "3": 42.5}}]}]},
            {"alternatives": [{"comparison": "semglove_sd > glove", "metric": "mean(ws353, simlex999)", "mean": 1.0,
                               "row_values": [{"row": "semglove_sd", "weight": 1.0, "values": {"2": 30.0, "10": 31.0}},
                                        {"row": "glove", "weight": -1.0, "values": {"2": 29.0, "10": 30.0}}]}]}]},
        {"id": "wang_t3_tagging", "parts": [{"alternatives": [{"comparison": "bert_sg > sg on pos", "metric": "pos.test",
                                                               "status": "not tested"}]}]}]}


def test_published_seed_values_re_derive_each_parts_paired_difference(tmp_path):
    import csv

    run, out = tmp_path / "run", tmp_path / "reference"
    make_run(run)
    write_json(run / "tables/claims.json", {**_claims_json(), "counts": {}, "verdicts": {}})
    manifest = publish(run, out)
    with open(out / "tables/claims_seeds.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert "tables/claims_seeds.csv" in manifest["published"]
    assert list(rows[0]) == ["claim", "part", "comparison", "row", "weight", "set", "metric", "seed", "value"]
    assert len(rows) == 6 + 4  # 2 rows x 3 seeds, 2 rows x 2 seeds; the untested part has none
    assert [r["seed"] for r in rows[6:8]] == ["2", "10"]  # seeds in numeric order
    assert {r["set"] for r in rows[:6]} == {"ws353"} and rows[6]["set"] == "ws353+simlex999"
    for claim, part in (("semglove_t1_vs_glove", "1"), ("semglove_t1_vs_glove", "2")):
        mine = [r for r in rows if (r["claim"], r["part"]) == (claim, part)]
        by_seed = {}
        for r in mine:
            by_seed[r["seed"]] = by_seed.get(r["seed"], 0.0) + float(r["weight"]) * float(r["value"])
        mean = sum(by_seed.values()) / len(by_seed)
        expected = next(p for c in _claims_json()["claims"] if c["id"] == claim
                        for p in [c["parts"][int(part) - 1]])["alternatives"][0]["mean"]
        assert mean == pytest.approx(expected)  # the part's paired mean difference, from the published file alone


def test_published_tagging_dev_curves_and_chosen_epochs(tmp_path):
    import csv

    run, out = tmp_path / "run", tmp_path / "reference"
    make_run(run)
    seeds = [{"seed": 1, "best_epoch": 2, "epochs_run": 4, "stopped_by": "patience", "converged": True, "patience": 2,
              "max_epochs": 100, "dev_curve": [0.80, 0.91, 0.90, 0.85]},
             {"seed": 2, "best_epoch": 3, "epochs_run": 3, "stopped_by": "max_epochs", "converged": False, "patience": 2,
              "max_epochs": 3, "dev_curve": [0.70, 0.75, 0.88]}]
    write_json(run / "eval/sg/tagging.json", {"embedding": "sg", "kind": "tagging", "results": {
        "pos": {"score": 0.9, "convergence": {"converged": False, "seeds": seeds}},
        "ner": {"score": None, "status": "not run: data not supplied"}}})
    manifest = publish(run, out)
    with open(out / "tables/tagging_dev_curves.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 7 and [r["chosen"] for r in rows] == ["0", "1", "0", "0", "0", "0", "1"]
    assert (rows[1]["row"], rows[1]["task"], rows[1]["seed"], rows[1]["epoch"], float(rows[1]["dev_score"])) == \
        ("sg", "pos", "1", "2", 0.91)
    text = (out / "tables/tagging_convergence.md").read_text()
    assert "| sg | pos | 1 | 4 | 2 | 91.00 | patience | yes |" in text
    assert "| sg | pos | 2 | 3 | 3 | 88.00 | max_epochs | no |" in text and "(1 of 2 runs)" in text
    assert {"tables/tagging_dev_curves.csv", "tables/tagging_convergence.md"} <= set(manifest["published"])


def test_published_fitted_head_record(tmp_path):
    run, out = tmp_path / "run", tmp_path / "reference"
    make_run(run)
    record = {"teacher": "minilm", "heldout_top1": 0.95, "heldout_top10": 0.99, "unigram_top1": 0.05, "unigram_top10": 0.27}
    write_json(run / "teacher/minilm/mlm_head.json", record)
    (run / "teacher/minilm/mlm_head.pt").write_bytes(b"weights")
    manifest = publish(run, out)
    assert read_json(out / "teacher/minilm/mlm_head.json") == record and not (out / "teacher/minilm/mlm_head.pt").exists()
    assert "teacher/minilm/mlm_head.json" in manifest["published"]


def test_published_per_item_records_recompute_each_rows_score_on_the_common_items(tmp_path):
    """tables/claims_items.json.gz holds, for every (row, set, seed) an intrinsic claim compares, the per-item
    record: a reader recomputes the stored score from it (and any subset's, e.g. the claim's common items)."""
    import gzip
    import json

    from staticvec.evaluate.items import recompute

    run, out = tmp_path / "run", tmp_path / "reference"
    make_run(run)
    gold = [1.0, 2.0, 3.0, 4.0, 5.0]
    cos = {"sg": [[0.1, 0.3, 0.2, 0.5, None], [0.11, 0.29, 0.2, 0.5, None]], "glove": [[0.5, 0.4, 0.3, 0.2, 0.1]]}
    for row, seeds in cos.items():
        for k, cosine in enumerate(seeds, 1):
            write_json(run / f"eval/{row}/seed{k}/intrinsic.muse.json", {"results": {
                "rg65": {"task": "similarity", "score": None, "items": {"gold": gold, "cosine": cosine}},
                "google": {"task": "analogy", "items": {"correct": "10-1"}},
                "ap": {"task": "categorization", "score": 0.5}}})
    claims = {"claims": [{"id": "c2v_x", "source": "intrinsic", "protocol": "muse", "parts": [], "coverage": {
        "rg65": {"rows": {"sg": 4, "glove": 5}}, "google": {"rows": {"sg": 3}}, "ap": {"rows": {"sg": 1}}}}]}
    write_json(run / "tables/claims.json", {**claims, "counts": {}, "verdicts": {}})
    manifest = publish(run, out)
    assert "tables/claims_items.json.gz" in manifest["published"]
    with gzip.open(out / "tables/claims_items.json.gz", "rt") as fh:
        data = json.load(fh)
    muse = data["items"]["muse"]
    assert sorted(muse) == ["glove", "sg"] and sorted(muse["sg"]) == ["1", "2"] and list(muse["glove"]) == ["1"]
    assert muse["sg"]["2"]["rg65"]["cosine"] == cos["sg"][1] and muse["sg"]["1"]["google"] == {"correct": "10-1"}
    assert "google" not in muse["glove"]["1"] and "ap" not in muse["sg"]["1"]  # only what a claim compares, with items
    assert data["gold"]["rg65"] == gold
    common = {0, 1, 2, 3}  # the pairs both rows scored
    for row, seed in (("sg", "1"), ("glove", "1")):
        entry = {"task": "similarity", "items": {"gold": data["gold"]["rg65"], **muse[row][seed]["rg65"]}}
        stored = {"task": "similarity", "items": {"gold": gold, "cosine": cos[row][int(seed) - 1]}}
        assert recompute(entry, common) == recompute(stored, common)
    again = out / "again"
    publish(run, again)
    assert (again / "tables/claims_items.json.gz").read_bytes() == (out / "tables/claims_items.json.gz").read_bytes()
