"""The plan's peak disk (staticvec.plan.disk): what exists at once over a schedule of the planned jobs, with the
temporary outputs (config plan.temporary, cooc.keep_shard_stores) deleted once their last reader has run; and the
switch that marks outputs temporary (paper.yaml) while the laptop default keeps every output."""

from pathlib import Path

import pytest
import yaml
from snakemake.io import is_flagged

from staticvec.config import load_config
from staticvec.dag.costs import Wildcards
from staticvec.dag.dryrun import planned_jobs
from staticvec.dag.rules import RuleFunctions
from staticvec.dag.semglove import SemgloveRules
from staticvec.dag.teacher import TeacherPlan
from staticvec.dag.workflow import Workflow
from staticvec.errors import StaticvecError
from staticvec.plan.disk import ScheduledJob, disk_peak, schedule


def job(rule, inputs=(), outputs=(), work_s=0.0, disk_gb=0.0, temp=False, scratch_gb=0.0):
    return ScheduledJob(rule, tuple(inputs), tuple(outputs), work_s, disk_gb, temp, scratch_gb)


def test_each_job_starts_when_its_inputs_jobs_have_ended():
    jobs = [job("a", outputs=["a"], work_s=10), job("b", outputs=["b"], work_s=5),
            job("c", inputs=["a", "b", "resource"], outputs=["c"], work_s=7)]
    start, end, readers = schedule(jobs)
    assert start == [0, 0, 10] and end == [10, 5, 17]
    assert readers == [{2}, {2}, set()]
    with pytest.raises(StaticvecError, match="cycle"):
        schedule([job("x", inputs=["y"], outputs=["x"]), job("y", inputs=["x"], outputs=["y"])])


def test_a_temporary_output_exists_until_its_last_reader_has_ended():
    """Hand-computed: a 100 GB store (temp) written in [0, 10) s, read by a run in [10, 20) and one in [10, 40),
    each writing 1 GB kept; a 50 GB store written in [20, 30) by a job that waits for the first run, read in
    [30, 35). The 100 GB store is deleted at 40 s, the 50 GB one at 35 s: both exist in [20, 35)."""
    jobs = [job("store", outputs=["s"], work_s=10, disk_gb=100, temp=True),
            job("short", inputs=["s"], outputs=["v1"], work_s=10, disk_gb=1),
            job("long", inputs=["s"], outputs=["v2"], work_s=30, disk_gb=1),
            job("store2", inputs=["v1"], outputs=["s2"], work_s=10, disk_gb=50, temp=True),
            job("read2", inputs=["s2"], outputs=["v3"], work_s=5, disk_gb=1)]
    peak = disk_peak(jobs, scratch_jobs=4)
    assert peak.gb == pytest.approx(100 + 1 + 1 + 50 + 1) and peak.hours == pytest.approx(30 / 3600)
    assert peak.temp_gb == pytest.approx(150) and peak.kept_gb == pytest.approx(3)
    assert peak.parts[("store", "temp")] == 100 and peak.makespan_hours == pytest.approx(40 / 3600)
    # a 100 GB temporary store deleted (at 20 s) before a job writes 80 GB (from 25 s): never together; kept, together
    chain = [job("store", outputs=["s"], work_s=10, disk_gb=100, temp=True),
             job("read", inputs=["s"], outputs=["v"], work_s=10, disk_gb=1),
             job("between", inputs=["v"], outputs=["m"], work_s=5),
             job("big", inputs=["m"], outputs=["b"], work_s=5, disk_gb=80)]
    assert disk_peak(chain, scratch_jobs=4).gb == pytest.approx(101)
    kept = [job(j.rule, j.inputs, j.outputs, j.work_s, j.disk_gb, False) for j in chain]
    assert disk_peak(kept, scratch_jobs=4).gb == pytest.approx(181)


def test_a_temporary_output_no_job_reads_stays_and_scratch_counts_while_its_job_runs():
    jobs = [job("unread", outputs=["u"], work_s=5, disk_gb=7, temp=True),
            job("a", outputs=["a"], work_s=10, scratch_gb=30), job("b", outputs=["b"], work_s=10, scratch_gb=20),
            job("c", outputs=["c"], work_s=10, scratch_gb=10), job("d", inputs=["a"], outputs=["d"], work_s=1, scratch_gb=25)]
    assert disk_peak(jobs, scratch_jobs=2).gb == pytest.approx(7 + 30 + 20)  # the two largest running at once
    assert disk_peak(jobs, scratch_jobs=3).gb == pytest.approx(7 + 60)
    late = disk_peak(jobs, scratch_jobs=1)
    assert late.gb == pytest.approx(7 + 30) and late.parts[("unread", "kept")] == 7


def test_a_dry_run_block_names_the_jobs_files():
    output = ("rule train_glove:\n    input: r/cooc/md.cooc, r/corpus/vocab.min5.tsv\n"
              "    output: r/e/seed1/vectors.bin, r/e/seed1/vectors.json\n    jobid: 3\n    wildcards: emb=glove, seed=1\n"
              "    threads: 8\nJob 4: teacher bert-base / set sentence / shard 00000: sentence context\n"
              "localrule fetch_group:\n    output: resources/data/.verified/x.json\n")
    glove, teacher, fetch = planned_jobs(output)
    assert glove.inputs == ["r/cooc/md.cooc", "r/corpus/vocab.min5.tsv"]
    assert glove.outputs == ["r/e/seed1/vectors.bin", "r/e/seed1/vectors.json"] and glove.threads == 8
    assert teacher.rule is None and teacher.inputs == [] == teacher.outputs  # its files come from the planning layer
    assert fetch.inputs == [] and fetch.outputs == ["resources/data/.verified/x.json"]


def planning(repo_root, *files, **plan):
    config = load_config([repo_root / "config/config.yaml", *[repo_root / f for f in files]])
    config["plan"].update(plan)
    return config, RuleFunctions(config, Workflow(config, repo_root), TeacherPlan(config), SemgloveRules(config))


def test_paper_deletes_the_sweep_tables_and_mlm_word_stores_once_read_and_the_default_keeps_them(repo_root):
    config, paper = planning(repo_root, "config/paper.yaml")
    assert set(config["plan"]["temporary"]) == {"post_artetxe", "semglove_words"}
    for rule, path in (("post_artetxe", "results/paper/embeddings/c2v_artetxe~alpha0.05/seed1/vectors.bin"),
                       ("semglove_words", "results/paper/cooc/semglove/md.cooc")):
        assert is_flagged(paper.output(rule, path), "temp"), rule
    assert not is_flagged(paper.output("post_retrofit", "x.bin"), "temp")
    _, default = planning(repo_root)
    assert default.output("post_artetxe", "x.bin") == "x.bin" and not is_flagged(default.output("post_artetxe", "x.bin"), "temp")
    # the model counts them as temporary, so the plan's schedule deletes them
    assert paper.costs.job("semglove_words", Wildcards(variant="md", frac="")).temp
    assert paper.costs.job("post_artetxe", Wildcards(emb="c2v_artetxe~alpha0.05", seed="1")).temp
    assert not default.costs.job("semglove_words", Wildcards(variant="md", frac="")).temp
    with pytest.raises(StaticvecError, match="plan.temporary: train_glove cannot be temporary"):
        planning(repo_root, "config/paper.yaml", temporary=["train_glove"])


def test_mlm_word_stores_are_modelled_within_what_the_builder_can_emit(repo_root):
    """The modelled entries: the one measured store's share of V² at the store's V, at most V² (the hard bound)."""
    _, paper = planning(repo_root, "config/paper.yaml")
    m = paper.costs
    for frac in ("", ".32of256"):
        v = m.md_store_vocabulary(frac)
        assert m.md_word_pairs_bound(frac) == pytest.approx(v * v)
        assert m.md_word_pairs(frac) == pytest.approx(10146677 / 21243 ** 2 * v * v)
    assert m.md_word_pairs(".32of256") < m.md_word_pairs("")
    data = yaml.safe_load((repo_root / "config/unit_costs.yaml").read_text())
    assert data["costs"]["semglove_md_pairs_per_shard"]["value"] == 10146677


@pytest.mark.slow  # minutes: the teacher's stored pass, Context-to-Vec, the SemGloVe builders and two GloVe runs
def test_temporary_tables_and_stores_do_not_outlive_their_readers(tmp_path, repo_root, shared_data):
    """The tiny config with paper.yaml's plan.temporary: once the run is done, the Artetxe sweep's tables and the MLM
    word store are gone, and what read them (the sweep point's evaluation, GloVe's vectors on the store) is there."""
    from workflow_fixtures import TEST_CONFIG, snakemake

    results = tmp_path / "results"
    override = tmp_path / "temporary.yaml"
    override.write_text(yaml.safe_dump({
        "results_dir": str(results),
        "resources": {"download_dir": str(tmp_path / "data"), "mirror": str(shared_data)},
        "plan": {"temporary": ["post_artetxe", "semglove_words"]},
    }))
    config = load_config([repo_root / "config/config.yaml", TEST_CONFIG, override])
    w, sg = Workflow(config, repo_root), SemgloveRules(config)
    point = next(e for e in w.sheet.ids() if w.spec(e).method == "artetxe" and "~alpha" in e)
    seeds = w.seeds(point)
    tables = [w.embedding(point, s) for s in seeds]
    evaluation = w.intrinsic_result(point, seeds[0], "web")
    store, vectors = sg.store("md"), w.embedding("semglove_md", 1)
    plan = snakemake("-n", "--", evaluation, vectors, configfiles=[TEST_CONFIG, override])
    assert "post_artetxe" in plan.stdout and "semglove_words" in plan.stdout
    snakemake("--", evaluation, vectors, configfiles=[TEST_CONFIG, override])
    assert Path(evaluation).exists() and Path(vectors).exists()
    assert not [t for t in tables if Path(t).exists()], "an Artetxe table outlived its evaluation"
    assert not Path(store).exists(), "the MLM word store outlived its GloVe run"
    assert Path(sg.pieces("md")).exists()  # the merged piece store it is made from stays


# ------------------------------------------------------------ lanes (staticvec.dag.lanes)
def test_lanes_take_the_largest_items_first_each_into_the_least_filled_lane():
    from staticvec.dag.lanes import assign_lanes

    # b (5) opens lane 0, c (4) lane 1; d (3) joins lane 1 (4 < 5); e (2) lane 0 (5 < 7); a (1) ties at 7: lane 0
    assert assign_lanes({"a": 1, "b": 5, "c": 4, "d": 3, "e": 2}, 2) == {"b": None, "c": None, "d": "c", "e": "b", "a": "e"}
    assert assign_lanes({"x": 1, "y": 2, "z": 3}, 1) == {"z": None, "y": "z", "x": "y"}  # one lane: a chain, largest first
    assert set(assign_lanes({"x": 1, "y": 2}, 5).values()) == {None}  # more lanes than items: nothing waits
    with pytest.raises(StaticvecError, match="at least one"):
        assign_lanes({"x": 1}, 0)


def test_lanes_are_chains_that_cover_every_item_once_the_largest_leading():
    import random

    from staticvec.dag.lanes import assign_lanes

    rng = random.Random(7)
    for _ in range(200):
        n, items = rng.randint(1, 5), rng.randint(0, 12)
        sizes = {f"i{k}": rng.choice([1, 2, 3, 5, 8]) for k in range(items)}
        previous = assign_lanes(sizes, n)
        assert set(previous) == set(sizes)
        firsts = [k for k, p in previous.items() if p is None]
        assert len(firsts) == min(n, items)
        assert len({p for p in previous.values() if p is not None}) == items - len(firsts)  # each waited on once
        largest = sorted(sizes, key=lambda k: (-sizes[k], list(sizes).index(k)))[:n]
        assert firsts == largest  # the n largest open the lanes


def test_paper_makes_one_mlm_word_store_at_a_time_and_the_artetxe_tables_in_lanes(repo_root):
    """paper.yaml's plan.lanes: each MLM word store waits for the GloVe runs (and Table 5's counts) of the one before it,
    largest first; each Artetxe embedding's tables for the intrinsic results of the one before it in its lane."""
    config, paper = planning(repo_root, "config/paper.yaml")
    assert config["plan"]["lanes"] == {"semglove_words": 1, "post_artetxe": 8}
    (stores,) = paper.lanes.lanes_of("semglove_words")
    assert len(stores) == 7 and ("md", "") in stores
    sizes = [paper.costs.md_word_pairs(frac) for _, frac in stores]
    assert sizes == sorted(sizes, reverse=True)
    assert "after" not in paper.semglove_words_inputs(Wildcards(variant=stores[0][0], frac=stores[0][1]))
    for before, store in zip(stores, stores[1:]):
        after = paper.semglove_words_inputs(Wildcards(variant=store[0], frac=store[1]))["after"]
        vectors = [p for p in after if p.endswith("/vectors.bin")]
        assert vectors and set(after) - set(vectors) <= {paper.SG.table5()}
        for path in vectors:
            emb, seed = path.split("/embeddings/")[1].split("/")[:2]
            assert paper.glove_store(Wildcards(emb=emb, seed=seed[4:])) == paper.SG.store(*before), path
    md = stores.index(("md", ""))  # the largest store (with md5): Table 5's counts read it too
    assert md < len(stores) - 1 and paper.SG.table5() in paper.lanes.after("semglove_words", stores[md + 1])
    artetxe = paper.lanes.lanes_of("post_artetxe")
    items = [e for lane in artetxe for e in lane]
    assert len(artetxe) == 8 and len(items) == len(set(items)) == 42
    assert all(paper.W.spec(e).method == "artetxe" for e in items)
    for lane in artetxe:
        assert "after" not in paper.artetxe_inputs(Wildcards(emb=lane[0], seed="1"))
        for before, emb in zip(lane, lane[1:]):
            inputs = paper.artetxe_inputs(Wildcards(emb=emb, seed="2"))
            assert inputs["vectors"] == paper.post_base(Wildcards(emb=emb, seed="2"))
            assert inputs["after"] and all(p.startswith(f"{paper.R}/eval/{before}/seed") for p in inputs["after"])
    # the default keeps every output and lanes nothing: its jobs' inputs are those of before
    _, default = planning(repo_root)
    assert default.lanes.after("post_artetxe", "c2v_artetxe") == [] and default.lanes.lanes_of("semglove_words") == []
    assert "after" not in default.semglove_words_inputs(Wildcards(variant="md", frac=""))


def test_lanes_of_a_kept_or_unlaned_rule_are_a_clear_error(repo_root):
    with pytest.raises(StaticvecError, match="plan.lanes.post_artetxe: its outputs are kept"):
        planning(repo_root, "config/paper.yaml", temporary=["semglove_words"])
    with pytest.raises(StaticvecError, match="plan.lanes.train_glove: only post_artetxe, semglove_words"):
        planning(repo_root, "config/paper.yaml", lanes={"train_glove": 1})


def test_in_one_lane_no_two_artetxe_embeddings_tables_exist_at_once_on_the_tiny_config(tmp_path, repo_root, shared_data):
    """The tiny config's dry run with the tables temporary and one lane, scheduled (every job one second): the span
    from an Artetxe embedding's first table to the end of its last reader never overlaps another embedding's."""
    from workflow_fixtures import TEST_CONFIG

    from staticvec.dag.dryrun import dry_run

    override = tmp_path / "lanes.yaml"
    override.write_text(yaml.safe_dump({
        "results_dir": str(tmp_path / "results"),
        "resources": {"download_dir": str(tmp_path / "data"), "mirror": str(shared_data)},
        "plan": {"temporary": ["post_artetxe", "semglove_words"], "lanes": {"post_artetxe": 1, "semglove_words": 1}},
    }))
    files = [repo_root / "config/config.yaml", TEST_CONFIG, override]
    jobs = [job(p.rule or "message", p.inputs, p.outputs, work_s=1.0) for p in planned_jobs(dry_run(files, repo_root))]
    start, end, readers = schedule(jobs)
    spans: dict[str, list[float]] = {}
    for i, j in enumerate(jobs):
        if j.rule == "post_artetxe":
            emb = j.outputs[0].split("/embeddings/")[1].split("/")[0]
            span = spans.setdefault(emb, [start[i], end[i]])
            span[0] = min(span[0], start[i])
            span[1] = max([span[1], *(end[r] for r in readers[i])])
    assert len(spans) >= 2, spans
    ordered = sorted(spans.values())
    assert all(a[1] <= b[0] for a, b in zip(ordered, ordered[1:])), ordered
