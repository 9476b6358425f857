"""The planning model (staticvec.dag.costs): requests that follow the corpus's sizes, the GPU routing, the unit-cost
file's provenance rules, and the GPU figures a gpu_check JSON replaces. Sizes are synthetic (a manifest given to
the model), so every expected figure is computed here by hand from the unit-cost file."""

import json
import math

import pytest
import yaml

from staticvec.config import load_config
from staticvec.dag.costs import GPU_CAPABLE_RULES, CostModel, CorpusSizes, Wildcards
from staticvec.dag.dryrun import PlannedJob, job_rule_and_wildcards
from staticvec.dag.rules import RuleFunctions
from staticvec.dag.semglove import SemgloveRules
from staticvec.dag.teacher import TeacherPlan
from staticvec.dag.unit_costs import Law, UnitCosts, load_gpu_check, overlay_gpu_check
from staticvec.dag.workflow import Workflow
from staticvec.errors import InputFileError, StaticvecError

MB = 2**20


def planning(repo_root, *files, manifest=None, **overrides):
    config = load_config([repo_root / "config/config.yaml", *[repo_root / f for f in files]])
    for key, value in overrides.items():
        section, _, name = key.partition("__")
        config.setdefault(section, {})[name] = value
    w, tp = Workflow(config, repo_root), TeacherPlan(config)
    rf = RuleFunctions(config, w, tp, SemgloveRules(config))
    model = CostModel(config, w, tp, rf.SG, manifest=manifest if manifest is not None else {}, root=repo_root)
    return config, w, model


def manifest(tokens, vocabulary, shards=8):
    return {"totals": {"tokens": tokens, "vocabulary": vocabulary}, "shards": [{} for _ in range(shards)]}


def test_a_law_goes_through_its_points_and_says_when_it_extrapolates():
    law = Law.fit("v", [[1e6, 1e4], [1e8, 1e6]])
    assert law.exponent == pytest.approx(1.0) and law(1e7) == pytest.approx(1e5)
    assert not law.extrapolated(1e6) and law.extrapolated(1e9)
    three = Law.fit("v", [[1, 2], [2, 4], [4, 8.5]])  # least squares in log-log, not through every point
    assert 1.0 < three.exponent < 1.1


def test_the_manifest_sets_the_sizes_and_anchors_the_vocabulary_law(repo_root):
    _, _, model = planning(repo_root, manifest=manifest(2_000_000, 30_000))
    s = model.sizes
    assert s.tokens == 2_000_000 and s.source == "the corpus manifest" and s.shard_tokens == 250_000
    assert s.vocabulary() == pytest.approx(30_000)  # the measured vocabulary, not the law's
    # other minimum counts and sizes keep the law's shape through the measured point
    law = model.unit.law("vocabulary_min5")
    assert s.vocabulary(4_000_000) == pytest.approx(30_000 * law(4e6) / law(2e6))
    _, _, expected = planning(repo_root)  # no manifest: the config's budget and the law itself
    assert expected.sizes.tokens == 1_000_000 and expected.sizes.vocabulary() == pytest.approx(law(1e6))


def test_a_corpus_without_budget_or_expected_size_is_a_plan_time_error(repo_root):
    config = load_config([repo_root / "config/config.yaml"])
    config["corpus"]["max_tokens"] = None
    config["plan"]["corpus_tokens"] = None
    with pytest.raises(StaticvecError, match="plan.corpus_tokens"):
        CorpusSizes(config, UnitCosts.load(repo_root / "config/unit_costs.yaml"))


def test_glove_memory_request_follows_the_vocabulary(repo_root):
    """float64 draw + float32 parameters + AdaGrad accumulators: 16 bytes x 2V x (d + 1), plus the shuffle buffer."""
    requests = {}
    for vocab in (100_000, 2_000_000):
        _, w, model = planning(repo_root, manifest=manifest(1_000_000_000, vocab))
        cost = model.job("train_glove", Wildcards(emb="glove", seed="1"))
        dim = w.params("glove")["dim"]
        entries = model.sizes.window_entries(model.sizes.tokens, 5)
        shuffle = min(2.0 * 1024, 2 * entries * 12 / MB)
        assert cost.peak_mb == pytest.approx(300 + 2 * vocab * (dim + 1) * 16 / MB + shuffle)
        requests[vocab] = model.mem_mb(cost)
    assert requests[2_000_000] - requests[100_000] == pytest.approx(1.3 * 2 * 1_900_000 * 301 * 16 / MB, rel=0.01)
    assert requests[2_000_000] > 8000  # the rule's former fixed 8,000 MB would break here (issue 41)


def test_glove_without_a_copy_has_no_store_sized_scratch_and_waits_on_its_chunks(repo_root):
    """shuffle copy: the store's shuffled copy is scratch while the run trains; chunks: only the checkpoint, and each
    iteration's chunk preparation (one thread) runs beside the kernel on the job's cores: work = max(kernel + prep
    / threads, prep), hand-computed from the unit costs."""
    glove = load_config([repo_root / "config/config.yaml"])["methods"]["glove"]
    costs = {}
    for shuffle in ("copy", "chunks"):
        _, w, model = planning(repo_root, manifest=manifest(1_000_000_000, 400_000),
                               methods__glove={**glove, "shuffle": shuffle, "deterministic": False, "threads": 8})
        costs[shuffle] = model.job("train_glove", Wildcards(emb="glove", seed="1"))
    entries = model.sizes.window_entries(model.sizes.tokens, 5)
    dim, iterations = w.params("glove")["dim"], w.params("glove")["iterations"]
    unit = model.unit
    kernel = entries * iterations / (unit.value("glove_entries_per_s") * 300 / dim * 8 *
                                     min(1.0, unit.value("glove_thread_efficiency")))
    prep = entries * iterations / unit.value("glove_chunk_shuffle_entries_per_s")
    checkpoint_gb = 2 * 400_000 * (dim + 1) * 8 / 1e9  # the model's disk GB are 10^9 bytes
    assert costs["copy"].work_s == pytest.approx(kernel)
    assert costs["chunks"].work_s == pytest.approx(max(kernel + prep / 8, prep))
    assert costs["copy"].scratch_gb == pytest.approx(entries * unit.value("store_bytes_per_entry") / 1e9 + checkpoint_gb)
    assert costs["chunks"].scratch_gb == pytest.approx(checkpoint_gb)

    # six preparing threads feed a 32-thread kernel: the bound is the slower of the two, each chunk in memory counted
    _, _, model = planning(repo_root, manifest=manifest(1_000_000_000, 400_000),
                           methods__glove={**glove, "shuffle": "chunks", "deterministic": False, "threads": 32,
                                           "prepare_threads": 6})
    wide = model.job("train_glove", Wildcards(emb="glove", seed="1"))
    assert wide.threads == 32
    assert wide.work_s == pytest.approx(max(kernel * 8 / 32 + prep / 32, prep / 6))
    assert wide.peak_mb - costs["chunks"].peak_mb == pytest.approx(glove["shuffle_memory_gb"] * 1024 * (7 / 2 - 1))


def test_the_ase_pass_memory_follows_the_words_a_shard_meets(repo_root):
    """Three host copies of (words met x layers x width) float32 on top of the pass itself."""
    peaks = {}
    for shard_tokens in (125_000, 5_000_000):
        _, _, model = planning(repo_root, manifest=manifest(shard_tokens * 8, 50_000))
        words = model.sizes.shard_words()
        cost = model.job("teacher_features", Wildcards(teacher="minilm", fset="sentence", shard="00000"))
        layers, width = model.teacher_layers("minilm")
        base = 1500 + model.teacher_flops("minilm") / 24 * 4 / MB
        assert cost.peak_mb == pytest.approx(base + 3 * words * (layers + 1) * width * 4 / MB)
        peaks[shard_tokens] = (words, cost.peak_mb)
    (w1, p1), (w2, p2) = peaks[125_000], peaks[5_000_000]
    assert w2 > w1 and p2 - p1 == pytest.approx(3 * (w2 - w1) * 7 * 384 * 4 / MB)


def test_runtime_and_memory_requests_are_the_model_with_its_margins(repo_root):
    config, _, model = planning(repo_root, manifest=manifest(10_000_000, 54_123))
    cost = model.job("cooc_window_merge", Wildcards(frac="", window="5"))
    plan = config["plan"]
    minutes = cost.work_s * (1 + plan["runtime_margin"]) / 60 + plan["startup_minutes"]
    assert model.runtime_minutes(cost) == math.ceil(minutes)
    assert model.runtime_minutes(cost, attempt=2) == math.ceil(2 * minutes)  # a retried job asks for more
    assert model.mem_mb(cost) == math.ceil(cost.peak_mb * (1 + plan["memory_margin"]) / 100) * 100
    # the merge: 8 shard stores' entries, one pass (fan-in 64), at the measured rate per entry
    s = model.sizes
    assert cost.work_s == pytest.approx(8 * s.window_entries(s.shard_tokens) * model.unit.value("merge_s_per_entry"))


def test_cpu_runs_keep_their_threads_and_request_no_gpu(repo_root):
    """The laptop default: the model's threads are the rules' former ones (the trained vectors depend on them)."""
    _, _, model = planning(repo_root)
    assert model.job("train_glove", Wildcards(emb="glove", seed="1")).threads == 1  # deterministic
    assert model.job("teacher_features", Wildcards(teacher="minilm", fset="sentence", shard="00000")).threads == 1
    assert model.job("cooc_window_shard", Wildcards(frac="", window="5", shard="00000")).threads == 2
    for rule in sorted(GPU_CAPABLE_RULES):
        assert model.gpu_request(rule) == {}


def test_a_gpu_run_routes_only_the_rules_of_plan_gpu_rules_to_gpus(repo_root):
    config, _, model = planning(repo_root, "config/paper.yaml", manifest=manifest(1_300_000_000, 970_000, 256))
    assert model.gpu_run and model.recompute
    gpu = {rule for rule in ("train_glove", "train_gensim_baseline", "teacher_ase", "teacher_word_embedding",
                             "semglove_cooc_shard", "cooc_window_merge", "classification", "train_student",
                             "train_bert_sg", "tag", "tag_contextual", "train_model2vec", "semglove_words")
           if model.gpu_request(rule)}
    assert gpu == {"teacher_ase", "semglove_cooc_shard", "train_student", "train_bert_sg"}
    assert gpu == set(config["plan"]["gpu_rules"]) & GPU_CAPABLE_RULES - {"teacher_features", "teacher_mlm_head"}
    assert model.gpu_request("train_student") == {"gpu": 1, "slurm_partition": "gpu"} and model.gpu_request("tag") == {}
    _, _, default_routing = planning(repo_root, "config/paper.yaml", plan__gpu_rules=None)
    assert default_routing.gpu_request("tag") and not default_routing.gpu_request("train_glove")
    with pytest.raises(StaticvecError, match="plan.gpu_rules: classification has no GPU path"):
        planning(repo_root, "config/paper.yaml", plan__gpu_rules=["classification", "tag"])
    glove = model.job("train_glove", Wildcards(emb="glove", seed="1"))
    assert glove.device == "cpu" and glove.threads == 32  # paper.yaml: Hogwild threads on a CPU node
    # a GPU job's cores keep its host side (tokenization, alignment) up with the GPU, within the cap
    student = model.job("train_student", Wildcards(emb="x2static_sent", seed="1"))
    host_words = model.unit.value("teacher_host_words_per_core_s", "students")
    need = model.unit.value("gpu_teacher_words_per_s", "bert-base", "bare") / host_words
    assert student.threads == max(4, min(16, math.ceil(need)))


# one job of each rule with a CUDA path that paper.yaml runs (the full corpus where the rule has fractions)
PAPER_GPU_CAPABLE_JOBS = {
    "train_student": [Wildcards(emb="x2static_sent", seed="1"), Wildcards(emb="x2static_para", seed="1"),
                      Wildcards(emb="c2v", seed="1")],
    "train_bert_sg": [Wildcards(emb="bert_sg", seed="1")],
    "semglove_cooc_shard": [Wildcards(part="00000-00003")],
    "teacher_ase": [Wildcards(teacher="bert-base", k="256", n="256")],
    "train_glove": [Wildcards(emb="glove", seed="1")],
    "tag": [Wildcards(emb="glove", task="chunk", seed="1")],
    "teacher_features": [Wildcards(teacher="bert-base", fset="sentence", shard="00000")],  # Tokenlearn's stored pass
}


def test_paper_routing_follows_the_measured_figures(repo_root):
    """paper.yaml's plan.gpu_rules holds exactly the rules whose jobs cost less on a GPU than on CPU nodes at its
    price of a GPU-hour (GPU-hours x price + the GPU job's core-hours against the CPU job's core-hours, each job's
    start-up included), both sides from config/unit_costs.yaml: a figure that moves a rule across fails here until
    the config follows."""
    config, _, model = planning(repo_root, "config/paper.yaml", manifest=manifest(1_300_000_000, 970_000, 256))
    price = config["plan"]["gpu_hour_core_hours"]
    for rule, jobs in PAPER_GPU_CAPABLE_JOBS.items():
        for wc in jobs:
            gpu, cpu = model.job_on("gpu", rule, wc), model.job_on("cpu", rule, wc)
            assert gpu.device == "gpu" and cpu.device == "cpu" and gpu.gpu_hours > 0 and cpu.gpu_hours == 0
            held = model.held_hours(gpu), model.held_hours(cpu)
            assert held == (gpu.work_s / 3600 + config["plan"]["startup_minutes"] / 60,
                            cpu.work_s / 3600 + config["plan"]["startup_minutes"] / 60)
            on_gpu, on_cpu = held[0] * (price + gpu.threads), held[1] * cpu.threads
            assert (model.routing_cost(gpu, price), model.routing_cost(cpu, price)) == pytest.approx((on_gpu, on_cpu))
            cheaper = "gpu" if on_gpu < on_cpu else "cpu"
            assert model.job(rule, wc).device == cheaper, (rule, dict(wc), on_gpu, on_cpu)
    # GloVe by hand: entries x iterations at the CUDA engine's measured rate against 32 EPYC threads, with the
    # chunks of paper.yaml's `shuffle: chunks` prepared after each on the GPU (one thread), beside the kernel on CPUs
    # (6 preparing threads)
    params = model.W.params("glove")
    assert params["shuffle"] == "chunks" and (params["threads"], params["prepare_threads"]) == (32, 6)
    entries = model.sizes.window_entries(model.sizes.tokens) * int(params["iterations"])
    prep = entries / model.unit.value("glove_chunk_shuffle_entries_per_s")
    gpu = model.job_on("gpu", "train_glove", Wildcards(emb="glove", seed="1"))
    assert gpu.work_s == pytest.approx(entries / model.unit.value("gpu_glove_entries_per_s") + prep)
    cpu = model.job_on("cpu", "train_glove", Wildcards(emb="glove", seed="1"))
    kernel = entries / (model.unit.value("glove_entries_per_s") * 32)
    assert cpu.work_s == pytest.approx(max(kernel + prep / 32, prep / 6))


def paper_jobs(repo_root):
    """(rule, wildcards) of every job of the paper config's DAG, from its pinned job list (tests/test_dag_golden.py
    keeps tests/golden/dag-paper.tsv equal to the dry run)."""
    jobs = []
    for line in (repo_root / "tests/golden/dag-paper.tsv").read_text().splitlines():
        rule, wildcards, rest = line.split("\t", 2)
        planned = PlannedJob(rule=None, message=rest) if rule == "(message)" else PlannedJob(rule=rule, wildcards=wildcards)
        named = job_rule_and_wildcards(planned)
        if named and named[0] != "all":
            jobs.append(named)
    return jobs


def test_every_paper_gpu_job_carries_an_allocations_worth_of_work(repo_root):
    """No GPU allocation of the paper plan under plan.gpu_allocation_minutes of modelled work: the teacher's shard
    work packed (SemGloVe's builders), Tokenlearn's 1-minute stored passes on CPU nodes. Known exceptions, each a
    whole pass of its own that no other GPU job can share an allocation with (Snakemake would ask a group of two
    independent GPU jobs for two GPUs), and far cheaper on a GPU than on CPU nodes (ASE over 1/8 of the corpus: 3 min
    on the GPU, 84 h on CPU nodes): since a GPU job's host workers keep its device busy (issue 54), ASE over the
    corpus fractions below the whole and X2Static_para's students on the 1/8 and 1/4 fractions; since the workers
    write the part files too (the parent no longer bounds the pass at 234k words/s), X2Static_para on the 1/2
    fraction too (23 min) and Wang et al.'s BERT+Skip-gram sweep rows (windows 1-8, the two aggregations: 28 min of
    modelled work each, a whole training run each)."""
    config, _, model = planning(repo_root, "config/paper.yaml")  # the expected sizes, as the dry run
    floor = config["plan"]["gpu_allocation_minutes"] * 60
    gpu = [(rule, wc) for rule, wc in paper_jobs(repo_root) if model.job(rule, Wildcards(wc)).device == "gpu"]
    assert len(gpu) > 100 and {rule for rule, _ in gpu} == {"train_student", "train_bert_sg", "semglove_cooc_shard", "teacher_ase"}
    short = [(rule, wc) for rule, wc in gpu if model.job(rule, Wildcards(wc)).work_s < floor]
    ase = [("teacher_ase", {"teacher": t, "k": k, "n": "256"}) for t in ("bert-base", "causal")
           for k in ("32", "64", "128", "256")]
    para = [("train_student", {"emb": f"x2static_para~fraction{f}", "seed": "1"}) for f in ("0.125", "0.25", "0.5")]
    sweep = [("train_bert_sg", {"emb": f"bert_sg~{row}", "seed": "1"})
             for row in [f"window{w}" for w in range(1, 9)] + ["aggregationattention", "aggregationmean"]]
    assert short and all(job in ase + para + sweep for job in short), short
    assert ("teacher_ase", {"teacher": "bert-base", "k": "32", "n": "256"}) in short
    tokenlearn = [wc for rule, wc in paper_jobs(repo_root) if rule == "teacher_features"]
    assert len(tokenlearn) == 8 and all(model.job("teacher_features", Wildcards(wc)).device == "cpu" for wc in tokenlearn)


def test_a_student_on_a_gpu_trains_where_the_measured_rates_are_faster(repo_root):
    """BERT+Skip-gram and Context-to-Vec train on the GPU job's cores with the fast engine (their autograd steps on
    the H200 run below one CPU thread), the teacher on the GPU. X2Static's GPU engine is 2.5x the fast engine's
    one thread; the job asks for ceil(880,373 / 120,475) = 8 cores (the bare forward over the measured host
    words per core-second), on which the fast engine gives 1 + 0.3 * 7 = 3.1 threads' worth, so it trains on the
    cores too. The job passes --device cpu --teacher-device to such a trainer, and the model costs it at the fast
    engine's rate."""
    config, _, model = planning(repo_root, "config/paper.yaml", manifest=manifest(1_300_000_000, 970_000, 256))
    rf = RuleFunctions(config, model.W, model.TP, model.SG)
    rf.costs = model
    assert model.gpu_threads("bert-base") == 8
    for emb, on_host in (("bert_sg", True), ("c2v", True), ("x2static_sent", True)):
        method = model.W.spec(emb).method
        job = model.job("train_bert_sg" if method == "bert_sg" else "train_student", Wildcards(emb=emb, seed="1"))
        assert job.device == "gpu" and model.student_trains_on_host(method, job.threads) == on_host, emb
        flags = rf.student_device_flags(Wildcards(emb=emb, seed="1"))
        assert flags == (["--device", "cpu", "--teacher-device", "auto"] if on_host else ["--device", "auto"]), emb
    job = model.job("train_bert_sg", Wildcards(emb="bert_sg", seed="1"))
    tokens = model.sizes.tokens
    host = model.unit.value("student_examples_per_s", "bert_sg") * (1 + 0.3 * (job.threads - 1))
    # the teacher at the slowest of the bare forward, the job's host workers (one a core) and its parent process
    teacher = tokens / min(model.unit.value("gpu_teacher_words_per_s", "bert-base", "bare"),
                           model.unit.value("teacher_host_words_per_core_s", "students") * job.threads,
                           model.unit.value("teacher_host_parent_words_per_s", "students"))
    epochs = int(model.W.params("bert_sg").get("epochs", 1))
    assert job.work_s == pytest.approx(epochs * (tokens / host + teacher))
    # a GPU engine measured faster than the cores moves the training back to the GPU
    faster = UnitCosts(yaml.safe_load((repo_root / "config/unit_costs.yaml").read_text()))
    faster.data["costs"]["gpu_student_examples_per_s"]["value"]["bert_sg"] = 2 * host
    model.unit = faster
    assert not model.student_trains_on_host("bert_sg", job.threads)
    assert rf.student_device_flags(Wildcards(emb="bert_sg", seed="1")) == ["--device", "auto"]
    # a CPU run keeps the run's device flags (the default config's commands unchanged)
    cpu_config, _, cpu_model = planning(repo_root)
    cpu_rf = RuleFunctions(cpu_config, cpu_model.W, cpu_model.TP, cpu_model.SG)
    assert cpu_rf.student_device_flags(Wildcards(emb="bert_sg", seed="1")) == ["--device", "auto"]


def test_semglove_builder_jobs_take_enough_shards_for_a_gpu_allocation(repo_root):
    config, _, model = planning(repo_root, "config/paper.yaml", manifest=manifest(1_300_000_000, 970_000, 256))
    fractions = [32, 64, 128, 192, 256]
    size = model.semglove_shards_per_job(fractions)
    one = model._semglove_shard_work(1, CorpusSizes(config, model.unit, None))
    minutes = config["plan"]["gpu_allocation_minutes"]
    assert 32 % size == 0 and size * one >= minutes * 60 and (size == 1 or (size // 2) * one < minutes * 60 or 32 % (size // 2))
    sg = SemgloveRules(config)
    with pytest.raises(StaticvecError, match="do not divide"):
        sg.set_part_size(3, fractions)
    sg.set_part_size(8, fractions)
    assert sg.part_ids(".1of8")[:2] == ["00000-00007", "00008-00015"] and len(sg.part_ids()) == 32
    assert sg.part_shards("00008-00015") == [f"{i:05d}" for i in range(8, 16)]
    _, _, cpu_model = planning(repo_root)
    assert cpu_model.semglove_shards_per_job(fractions) == 1  # stored features on CPU: one shard a job, as before


def test_the_unit_cost_file_names_the_provenance_of_every_figure(repo_root, tmp_path):
    data = yaml.safe_load((repo_root / "config/unit_costs.yaml").read_text())
    unit = UnitCosts(data)
    for name, entry in data["costs"].items():
        assert entry["status"] in ("measured", "derived", "estimate")
        if entry["status"] == "measured":
            assert entry["machine"] in data["machines"] and entry["date"] and entry["source"], name
    assert not [name for name in unit.estimates() if name.startswith("gpu_")]  # measured on one H200
    assert unit.value("glove_entries_per_s") == 1.29e6  # YAML's "1.29e6" (a string in YAML 1.1) read as a number
    broken = yaml.safe_load((repo_root / "config/unit_costs.yaml").read_text())
    del broken["costs"]["glove_entries_per_s"]["date"]
    with pytest.raises(InputFileError, match="glove_entries_per_s: a measured figure names its machine, date and source"):
        UnitCosts(broken, tmp_path / "u.yaml")


def gpu_check_json(sections, started="2026-11-27 05:29:08 UTC"):
    """A benchmarks/gpu_check.py JSON: sections of named figures."""
    return {"meta": {"started": started, "env": {"device": "NVIDIA H200"}},
            "sections": [{"name": name, "status": status, "figures": figures} for name, status, figures in sections]}


def test_the_committed_gpu_figures_are_the_gpu_checks(repo_root):
    """Overlaying the committed GPU check's JSONs onto config/unit_costs.yaml changes no measured value beyond its
    rounding: the file holds what the H200 measured."""
    unit = UnitCosts.load(repo_root / "config/unit_costs.yaml")
    results = repo_root / "benchmarks/results"
    runs = [load_gpu_check(results / "gpu_check-h200-2026-11-27.json"),
            load_gpu_check(results / "gpu_check-h200-2026-11-27.tagger.json")]
    new, replaced = overlay_gpu_check(unit, runs, "gpu_check-h200-2026-11-27")
    assert len(replaced) == 15
    for name in replaced:
        figure, *keys = name.split(".", 1)
        keys = tuple(keys[0].split(".")) if keys else ()
        measured, committed = new.value(figure, *keys), unit.value(figure, *keys)
        # peak memory: GiB measured, GB committed
        factor = 2**30 / 1e9 if figure == "gpu_peak_memory_gb" else 1.0
        assert committed == pytest.approx(measured * factor, rel=0.01, abs=0.05), name


def test_gpu_check_figures_replace_the_estimates(repo_root):
    data = yaml.safe_load((repo_root / "config/unit_costs.yaml").read_text())
    for entry in data["costs"].values():  # the GPU figures as they were before a GPU had run
        if entry.get("gpu_check"):
            entry.update(status="estimate", derivation="assumed")
    unit = UnitCosts(data)
    first = gpu_check_json([
        ("teacher_base", "ok", [{"name": "bare forward (SDPA)", "value": 1.06e6, "unit": "pieces/s", "words_per_s": 880373},
                                {"name": "sentence pass (sentence context, layers [-1])", "value": 84357.3, "unit": "words/s"}]),
        ("students", "ok", [{"name": "x2static (autograd, adam)", "value": 189065.8, "unit": "targets/s"}]),
        ("glove_cuda", "ok", [{"name": "GloVe torch engine (CUDA path)", "value": 2.37e7}]),
        ("tagger", "error", [{"name": "BiLSTM-CRF training (one epoch)", "value": 1.0}])])
    rerun = gpu_check_json([("tagger", "ok", [{"name": "BiLSTM-CRF training (one epoch)", "value": 532.0,
                                               "peak_gpu_memory_gib": 0.09}])])
    new, replaced = overlay_gpu_check(unit, [first, rerun], "a.json + b.json")
    assert set(replaced) == {"gpu_teacher_words_per_s.bert-base.bare", "gpu_teacher_words_per_s.bert-base.students",
                             "gpu_student_examples_per_s.x2static", "gpu_glove_entries_per_s", "gpu_tagger_sentences_per_s",
                             "gpu_peak_memory_gb.tagger"}
    assert new.value("gpu_teacher_words_per_s", "bert-base", "bare") == 880373  # the field named, not the pieces/s
    assert new.value("gpu_teacher_words_per_s", "bert-base", "students") == 84357.3
    assert new.value("gpu_teacher_words_per_s", "bert-base", "ase") == unit.value("gpu_teacher_words_per_s", "bert-base", "ase")
    assert new.value("gpu_student_examples_per_s", "x2static") == 189065.8 and new.value("gpu_glove_entries_per_s") == 2.37e7
    assert new.value("gpu_tagger_sentences_per_s") == 532.0  # the failed section is skipped, its rerun read
    assert new.status("gpu_glove_entries_per_s") == "measured" and unit.status("gpu_glove_entries_per_s") == "estimate"
    assert new.status("gpu_teacher_words_per_s") == "estimate"  # some of its values are still estimates
    assert "NVIDIA H200" in new.data["machines"]["gpu-check"]


def test_a_dry_run_job_is_named_by_its_rule_and_wildcards():
    assert job_rule_and_wildcards(PlannedJob(rule="train_glove", wildcards="emb=glove~dim50, seed=1")) == \
        ("train_glove", {"emb": "glove~dim50", "seed": "1"})
    assert job_rule_and_wildcards(PlannedJob(rule="cooc_window_shard", wildcards="window=5, frac=.1of8, shard=00000")) == \
        ("cooc_window_shard", {"window": "5", "frac": ".1of8", "shard": "00000"})
    message = "teacher bert-base / set sentence / shard 00012: sentence context"
    assert job_rule_and_wildcards(PlannedJob(rule=None, message=message)) == \
        ("teacher_features", {"teacher": "bert-base", "fset": "sentence", "shard": "00012"})
    assert job_rule_and_wildcards(PlannedJob(rule=None, message="something else")) is None


def test_a_figure_asks_for_the_memory_of_its_vector_files_once_they_exist(repo_root, tmp_path):
    """Before its inputs exist (a dry run) the model's estimate, so every sbatch line carries --mem; then theirs."""
    _, _, model = planning(repo_root)
    mem_mb = model.resources("figure")["mem_mb"]

    wc = Wildcards(paper="semglove", figure="figure3")
    missing = [tmp_path / "a.bin", tmp_path / "b.bin"]
    assert mem_mb(wc, missing, 1) == model.mem_mb(model.job("figure", wc)) > 0
    for path, mb in zip(missing, (200, 300)):
        path.write_bytes(b"\0" * (mb * 2**20))
    assert mem_mb(wc, missing, 1) == math.ceil((2000 + 3 * 500) * 1.3 / 100) * 100
    assert mem_mb(wc, missing, 2) == math.ceil((2000 + 3 * 500) * 1.3 * 2 / 100) * 100


def test_the_reference_manifest_the_config_names_is_committed(repo_root):
    """The model reads the per-job figures of a committed tour, the one measured on the machine of the unit costs
    (benchmarks/results/tour-1m-2026-11-26/; a missing file would silently cost every rule at the fallback): the
    default's plan.reference_manifest exists and gives train_glove its jobs and job time."""
    config, _, model = planning(repo_root)
    manifest_path = repo_root / config["plan"]["reference_manifest"]
    assert manifest_path.is_file(), manifest_path
    rules = json.loads(manifest_path.read_text())["timings"]["rules"]
    assert model.reference_rules()["train_glove"] == rules["train_glove"] and rules["train_glove"]["jobs"] > 0
