"""The planning model: each job's modelled work, memory, threads, device and disk, from the measured unit
costs (``config/unit_costs.yaml``, :mod:`staticvec.dag.unit_costs`) and the corpus's sizes.

One model serves two readers:

- the rules: every rule's ``threads``, ``mem_mb`` and ``runtime`` (and the GPU request of the rules routed
  to a GPU) come from :meth:`CostModel.threads` and :meth:`CostModel.resources`, so the SLURM requests
  follow the work: the vocabulary size enters GloVe's memory, a shard's words the ASE pass's, the corpus
  size the merges' runtime;
- ``staticvec plan costs`` (:mod:`staticvec.plan.report`): the same figures summed over a dry run's jobs.

Sizes (:class:`CorpusSizes`) come from the corpus manifest once the corpus stage has written it (a
resource function is evaluated again when its job is about to run, so a cluster job asks for what the
real corpus needs), before that from the config: ``corpus.max_tokens``, or ``plan.corpus_tokens`` for a
corpus without a budget, with vocabulary, per-shard words and store entries from the growth laws
measured on a part of Wikipedia (extrapolated beyond it: the plan says so).

Requests: runtime = modelled time × (1 + ``plan.runtime_margin``, or ``plan.gpu_runtime_margin`` on a
GPU) + ``plan.startup_minutes``; memory = modelled peak × (1 + ``plan.memory_margin``). A retried job
(``attempt`` 2, ...) asks for ``attempt`` times as much.

Disk: each job's outputs (``JobCost.disk_gb``), temporary where the rule's outputs are deleted once read
(config ``plan.temporary``, :data:`TEMPORARY_RULES`; ``cooc.keep_shard_stores: false``), and its scratch while it
runs; :mod:`staticvec.plan.disk` turns them into the peak over a schedule of the jobs.

Routing: on a GPU run (``device: cuda`` or ``teacher.gpu``) a job asks for a GPU only where its rule is in
config ``plan.gpu_rules`` (of :data:`GPU_CAPABLE_RULES`; the SemGloVe builders and ASE only when they run the
teacher themselves); everything else (gensim, ASE from stored sums, merges, word-alone baselines,
classification, evaluation) runs on CPU nodes. :meth:`CostModel.job_on` costs a job on either device, so the
plan shows what each routing costs, each job's start-up included (:meth:`CostModel.routing_cost`), and at which
price of a GPU-hour (``plan.gpu_hour_core_hours``) the other would be cheaper. A student on a GPU trains on
the job's cores with the fast engine where the measured rates say that is faster than the GPU's autograd
engine (:meth:`CostModel.student_trains_on_host`); the teacher stays on the GPU. GPU jobs get the cores their
host side needs (host workers reading, tokenising and indexing at the GPU's rate, :meth:`CostModel.gpu_threads`).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from staticvec.dag.common import temporary
from staticvec.dag.unit_costs import UnitCosts
from staticvec.errors import StaticvecError

MB = 2**20
GB = 1e9
# the tour measured on the machine of config/unit_costs.yaml (plan.reference_manifest's default)
REFERENCE_MANIFEST = "benchmarks/results/tour-1m-2026-11-26/manifest.json"

# rules with a CUDA path, which the model costs on either device (`staticvec plan costs` compares the two);
# on a GPU run, those of config plan.gpu_rules ask for a GPU (paper.yaml: from the measured figures)
GPU_CAPABLE_RULES = frozenset({"teacher_features", "teacher_mlm_head", "teacher_ase", "semglove_cooc_shard", "train_student",
                               "train_bert_sg", "tag", "tag_contextual", "train_glove"})
RECOMPUTE_GPU_RULES = frozenset({"semglove_cooc_shard", "teacher_ase"})  # run the teacher only in teacher.cache: recompute

# rules whose output a config may mark temporary (config plan.temporary: deleted once every job reading it has
# run): one file each (temp() deletes the declared file only), read only by other jobs of the DAG, and cheap to
# make again against what keeping it costs at paper scale. Artetxe et al.'s tables: read by their evaluation
# alone (the sweep's 41 alphas x seeds), a few minutes each to recompute; the MLM word stores of eq. 14: read
# by their GloVe runs alone, one CPU job from the merged piece store (which stays)
TEMPORARY_RULES = frozenset({"post_artetxe", "semglove_words"})

# rules whose memory follows the size of their input files once those exist (MB -> peak MB); before, the model's
INPUT_SIZED_MEMORY = {"figure": lambda mb: 2000 + 3 * mb}  # t-SNE figures load whole vector files, one at a time

# CoNLL-2000 chunking and UD EWT (POS) training sentences (../shared/README.md); NER: CoNLL-2003's 14,041
TAGGING_SENTENCES = {"chunk": 8936, "pos": 12544, "ner": 14041}


@dataclass(frozen=True)
class JobCost:
    """One job as the model sees it. ``work_s``: modelled wall seconds on ``device`` with ``threads``;
    ``peak_mb``: modelled peak host memory; ``disk_gb``: what its outputs hold (``temp``: deleted once
    read); ``scratch_gb``: what it writes and deletes itself while it runs; ``basis``: how it was modelled;
    ``flags``: the estimates and unmeasured growth it rests on."""

    rule: str
    device: str
    threads: int
    work_s: float
    peak_mb: float
    disk_gb: float = 0.0
    temp: bool = False
    scratch_gb: float = 0.0
    basis: str = ""
    flags: tuple[str, ...] = field(default=())

    @property
    def core_hours(self) -> float:
        """Cores held x hours (a GPU job's cores too)."""
        return self.work_s * self.threads / 3600

    @property
    def gpu_hours(self) -> float:
        return self.work_s / 3600 if self.device == "gpu" else 0.0


class Wildcards(dict):
    """A job's wildcards as Snakemake hands them to a function (attribute access, ``get``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class CorpusSizes:
    """The corpus's sizes the model multiplies by: tokens and shards (the manifest's once it exists, else
    the config's), vocabulary and per-shard words and store entries from the growth laws."""

    def __init__(self, config: dict, unit: UnitCosts, manifest: dict | None = None):
        corpus, plan = config["corpus"], config.get("plan", {})
        self.unit = unit
        self.shards = int(corpus["shards"])
        self.min_count = int(corpus["min_count"])
        self.max_vocab = corpus.get("max_vocab")
        self.vocab_scale = 1.0
        if manifest:
            totals = manifest["totals"]
            self.tokens = float(totals["tokens"])
            self.source = "the corpus manifest"
            law_v = self._law_vocab(self.tokens, self.min_count)
            if totals.get("vocabulary") and law_v:
                self.vocab_scale = float(totals["vocabulary"]) / law_v  # the laws through the measured point
        elif corpus.get("max_tokens"):
            self.tokens = float(corpus["max_tokens"])
            self.source = "config corpus.max_tokens"
        elif plan.get("corpus_tokens"):
            self.tokens = float(plan["corpus_tokens"])
            self.source = "config plan.corpus_tokens (expected)"
        else:
            raise StaticvecError("config corpus.max_tokens is null (the whole source) and plan.corpus_tokens is not "
                                 "set: the planning model needs the expected number of training tokens")

    # ------------------------------------------------------------ corpus
    @property
    def shard_tokens(self) -> float:
        return self.tokens / self.shards

    def fraction_tokens(self, k: int | None = None) -> float:
        return self.tokens * (self.shards if k is None else k) / self.shards

    # ------------------------------------------------------------ vocabularies
    def _law_vocab(self, tokens: float, min_count: int) -> float:
        """The measured vocabulary laws: count >= 5 and >= 10, other minimum counts interpolated in log count."""
        v5, v10 = self.unit.law("vocabulary_min5")(tokens), self.unit.law("vocabulary_min10")(tokens)
        if min_count <= 1:
            return self.types(tokens)
        # log-linear in the minimum count between the measured 5 and 10 (and beyond, extrapolated)
        slope = math.log(v10 / v5) / math.log(2)
        return v5 * math.exp(slope * math.log(min_count / 5))

    def vocabulary(self, tokens: float | None = None, min_count: int | None = None, max_vocab: int | None = None) -> float:
        tokens = self.tokens if tokens is None else tokens
        v = self._law_vocab(tokens, self.min_count if min_count is None else int(min_count)) * self.vocab_scale
        cap = max_vocab if max_vocab is not None else self.max_vocab
        return min(v, float(cap)) if cap else v

    def types(self, tokens: float | None = None) -> float:
        return self.unit.law("types")(self.tokens if tokens is None else tokens)

    def shard_words(self, shard_tokens: float | None = None) -> float:
        """Distinct vocabulary words met in a shard: the rows of its ASE sums."""
        n = self.shard_tokens if shard_tokens is None else shard_tokens
        return min(self.unit.law("shard_words")(n), self.vocabulary())

    def window_entries(self, tokens: float | None = None, window: int = 5) -> float:
        """Non-zero entries of a window store over ``tokens`` (window 5 measured; wider: in proportion)."""
        tokens = self.tokens if tokens is None else tokens
        return self.unit.law("window5_entries")(tokens) * max(1.0, window / 5)

    def extrapolated(self) -> list[str]:
        """The laws this corpus size reads beyond their measured range."""
        out = []
        for name in ("vocabulary_min5", "vocabulary_min10", "types", "window5_entries"):
            if self.unit.law(name).extrapolated(self.tokens):
                out.append(self.unit.law(name).describe())
        if self.unit.law("shard_words").extrapolated(self.shard_tokens):
            out.append(self.unit.law("shard_words").describe())
        return out


def load_manifest(path: str | os.PathLike) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


class CostModel:
    """Modelled costs of the jobs of one config (see the module text)."""

    def __init__(self, config: dict, workflow, teacher_plan, semglove, unit: UnitCosts | None = None,
                 manifest: dict | None = None, root: str | os.PathLike = "."):
        self.config = config
        self.W, self.TP, self.SG = workflow, teacher_plan, semglove
        plan = config.get("plan", {})
        self.plan = plan
        self.root = Path(root)
        self.unit = unit or UnitCosts.load(self._path(plan.get("unit_costs", "config/unit_costs.yaml")))
        self._fixed_manifest = manifest
        self._manifest_state = None
        self._sizes = None
        self.gpu_run = bool(workflow.use_gpu)
        self.recompute = teacher_plan.recompute
        gpu_rules = plan.get("gpu_rules")
        self.gpu_rules = GPU_CAPABLE_RULES - {"train_glove"} if gpu_rules is None else frozenset(gpu_rules)
        unknown = sorted(self.gpu_rules - GPU_CAPABLE_RULES)
        if unknown:
            raise StaticvecError(f"config plan.gpu_rules: {', '.join(unknown)} has no GPU path (rules with one: "
                                 f"{', '.join(sorted(GPU_CAPABLE_RULES))})")
        self.temporary = frozenset(plan.get("temporary") or ())
        unknown = sorted(self.temporary - TEMPORARY_RULES)
        if unknown:
            raise StaticvecError(f"config plan.temporary: {', '.join(unknown)} cannot be temporary (rules whose "
                                 f"outputs can: {', '.join(sorted(TEMPORARY_RULES))})")
        self._forced_device: dict[str, str] = {}
        self._reference_manifest = None
        self._work_ratio = {}

    def _path(self, path) -> Path:
        path = Path(path)
        return path if path.is_absolute() else self.root / path

    # ------------------------------------------------------------ sizes (the manifest once it exists)
    @property
    def sizes(self) -> CorpusSizes:
        if self._fixed_manifest is not None:
            if self._sizes is None:
                self._sizes = CorpusSizes(self.config, self.unit, self._fixed_manifest or None)
            return self._sizes
        path = self._path(self.W.manifest)
        try:
            state = path.stat().st_mtime_ns
        except OSError:
            state = None
        if self._sizes is None or state != self._manifest_state:
            self._manifest_state = state
            self._sizes = CorpusSizes(self.config, self.unit, load_manifest(path) if state else None)
        return self._sizes

    def output(self, rule: str, path: str):
        """A rule's output, temporary where config plan.temporary lists the rule (:data:`TEMPORARY_RULES`)."""
        return temporary(path, rule in self.temporary)

    # ------------------------------------------------------------ routing and threads
    def device(self, rule: str) -> str:
        if rule in self._forced_device:
            return self._forced_device[rule]
        if not self.gpu_run or (rule in RECOMPUTE_GPU_RULES and not self.recompute):
            return "cpu"
        return "gpu" if rule in self.gpu_rules else "cpu"

    def job_on(self, device: str, rule: str, wildcards) -> JobCost:
        """The job costed as if its rule ran on ``device`` (``gpu`` or ``cpu``), whatever the routing."""
        self._forced_device[rule] = device
        try:
            return self.job(rule, wildcards)
        finally:
            del self._forced_device[rule]

    def held_hours(self, cost: JobCost) -> float:
        """Hours a job holds its allocation: its modelled work plus ``plan.startup_minutes`` (imports, loading the
        model, file system latency), which every allocation pays whatever its work."""
        return cost.work_s / 3600 + float(self.plan.get("startup_minutes", 5)) / 60

    def routing_cost(self, cost: JobCost, price: float) -> float:
        """A job's cost in core-hours on its device, start-up included: its cores x the hours it holds them, and
        on a GPU the GPU-hours it holds x ``price`` (core-hours per GPU-hour, ``plan.gpu_hour_core_hours``)."""
        held = self.held_hours(cost)
        return held * cost.threads + (held * float(price) if cost.device == "gpu" else 0.0)

    def student_trains_on_host(self, method: str, threads: int) -> bool:
        """On a GPU job: whether the fast CPU engine on the job's ``threads`` cores trains ``method`` faster than
        the GPU's autograd engine (measured: BERT+Skip-gram 24,272 and Context-to-Vec 20,898 centres/s on the
        H200, under the fast engine's one thread; X2Static 189,066 targets/s, 2.5x it)."""
        return self.host_student_rate(method, threads) > self.student_rate("gpu_student_examples_per_s", method)

    def host_student_rate(self, method: str, threads: int) -> float:
        """The fast CPU engine's examples per s on ``threads`` cores (0.3 of a thread gained per added thread)."""
        return self.student_rate("student_examples_per_s", method) * (1 + 0.3 * (threads - 1))

    def student_rate(self, name: str, method: str) -> float:
        """A student's measured examples per s (``name``: the CPU or the GPU figure); a method added since the
        figures were measured (CONTRIBUTING's new method) gets the slowest measured student's rate until its own
        is measured, so that planning never fails for want of a figure and errs towards longer requests."""
        rates = self.unit.value(name)
        return float(rates[method]) if method in rates else float(min(rates.values()))

    def gpu_flags(self, *names: str) -> tuple[str, ...]:
        """``gpu estimate`` where a GPU figure a job rests on is still an estimate."""
        return ("gpu estimate",) if any(self.unit.status(n) == "estimate" for n in names) else ()

    def gpu_request(self, rule: str) -> dict:
        """The GPU and partition of a job routed to a GPU (W.gpu_resources), nothing otherwise."""
        return self.W.gpu_resources(self.device(rule) == "gpu")

    def gpu_threads(self, teacher: str | None = None, path: str = "students") -> int:
        """Cores of a GPU job: the host cores that keep its device busy (each core reads, tokenises and indexes
        ``teacher_host_words_per_core_s`` words a second in a host worker), capped."""
        cap = int(self.plan.get("gpu_max_threads", 16))
        if teacher is None:
            return min(cap, int(self.plan.get("gpu_min_threads", 4)))
        need = self.device_words_per_s(teacher, path) / self.host_words_per_core_s(path)
        return max(int(self.plan.get("gpu_min_threads", 4)), min(cap, math.ceil(need)))

    # the host cost of each GPU pass (benchmarks/teacher_host.py): SemGloVe's unmasked pass and the masked
    # copies' as the students' pass (their extra indices are a few numpy calls per batch)
    HOST_PASS = {"students": "students", "semglove_unmasked": "students", "masked_mlm": "students",
                 "bare": "students", "paragraph": "paragraph", "ase": "ase"}

    def host_words_per_core_s(self, path: str) -> float:
        return float(self.unit.value("teacher_host_words_per_core_s", self.HOST_PASS.get(path, "students")))

    def host_parent_words_per_s(self, path: str) -> float:
        """What one job's parent process feeds at most (taking prepared parts, the device's calls, writing
        part files), however many host workers: the bound beyond which more cores do not help."""
        return float(self.unit.value("teacher_host_parent_words_per_s", self.HOST_PASS.get(path, "students")))

    def device_words_per_s(self, teacher: str, path: str) -> float:
        """A GPU pass's own rate with its host work kept up: the bare forward (its poolings are a few gathers
        and segment sums beside it; the paragraph pass also runs its context sentences through it); the masked
        copies as measured (the GPU's work: one copy of the sentence per word)."""
        if path == "masked_mlm":
            return self.gpu_words_per_s(teacher, path)
        rate = self.gpu_words_per_s(teacher, "bare")
        return rate / float(self.unit.value("paragraph_token_share")) if path == "paragraph" else rate

    # ------------------------------------------------------------ teacher arithmetic
    def teacher_flops(self, teacher: str) -> float:
        """FLOPs per piece of a teacher's encoder matrices: 2 x 12 L d^2 (MiniLM-L6: 10.6M multiply-adds, measured)."""
        from staticvec.dag.teacher import teacher_traits

        traits = teacher_traits(self.TP.model(teacher))
        d, layers = traits.get("hidden_size") or 768, traits.get("n_layers") or 12
        return 24.0 * layers * d * d

    def teacher_layers(self, teacher: str) -> tuple[int, int]:
        from staticvec.dag.teacher import teacher_traits

        traits = teacher_traits(self.TP.model(teacher))
        return (traits.get("n_layers") or 12), (traits.get("hidden_size") or 768)

    MINILM_FLOPS = 24.0 * 6 * 384 * 384

    def cpu_pieces_per_s(self, teacher: str, path: str, threads: int) -> float:
        """A CPU pass: MiniLM's measured rate, scaled by the FLOPs per piece; threads in proportion."""
        key = {"ase": "bare", "masked_mlm": "semglove_unmasked"}.get(path, path)
        rate = float(self.unit.value("teacher_cpu_pieces_per_s", key)) * self.MINILM_FLOPS / self.teacher_flops(teacher)
        if path == "masked_mlm":  # one masked copy of the sentence per word: ~17x the unmasked pass (measured)
            rate /= 17.1
        return rate * threads

    def gpu_words_per_s(self, teacher: str, path: str) -> float:
        """A GPU pass in corpus words per s: the shape nearest the teacher (BERT-base or -large), scaled by the
        FLOPs per piece."""
        rates = self.unit.value("gpu_teacher_words_per_s")
        shapes = {"bert-base": 24.0 * 12 * 768 * 768, "bert-large": 24.0 * 24 * 1024 * 1024}
        flops = self.teacher_flops(teacher)
        shape = min(shapes, key=lambda s: abs(math.log(shapes[s] / flops)))
        key = {"semglove_unmasked": "students"}.get(path, path)
        return float(rates[shape][key]) * shapes[shape] / flops

    def pass_seconds(self, teacher: str, path: str, tokens: float, device: str, threads: int) -> float:
        """One pass of ``path`` over ``tokens`` training tokens: on a GPU at the device's rate for the pass, kept
        at or below what ``threads`` host cores prepare and the job's parent process feeds; on CPUs per piece."""
        if device == "gpu":  # the device, its host workers (one a core) or the job's parent: the slowest
            host = self.host_words_per_core_s(path) * threads
            return tokens / min(self.device_words_per_s(teacher, path), host, self.host_parent_words_per_s(path))
        pieces = tokens * float(self.unit.value("pieces_per_token"))
        if path == "paragraph":
            pieces *= float(self.unit.value("paragraph_token_share"))
        return pieces / self.cpu_pieces_per_s(teacher, path, threads)

    # ------------------------------------------------------------ requests
    def _margin(self, device: str) -> float:
        key = "gpu_runtime_margin" if device == "gpu" else "runtime_margin"
        return float(self.plan.get(key, 0.5))

    def runtime_minutes(self, cost: JobCost, attempt: int = 1) -> int:
        """A job's runtime request: modelled time with its margin, plus start-up (loading, imports)."""
        minutes = cost.work_s * (1 + self._margin(cost.device)) / 60 + float(self.plan.get("startup_minutes", 5))
        return int(math.ceil(max(minutes, 1.0) * attempt))

    def mem_mb(self, cost: JobCost, attempt: int = 1) -> int:
        peak = cost.peak_mb * (1 + float(self.plan.get("memory_margin", 0.3)))
        return int(math.ceil(max(peak, float(self.plan.get("min_mem_mb", 500))) * attempt / 100.0) * 100)

    # ------------------------------------------------------------ the Snakemake hooks
    def threads(self, rule: str, **fixed):
        """The ``threads:`` function of a rule."""

        def threads(wildcards):
            return self.job(rule, wildcards, **fixed).threads

        return threads

    def resources(self, rule: str, **fixed) -> dict:
        """The ``resources:`` of a rule: mem_mb and runtime from the model, and the GPU request of a rule
        routed to a GPU. The functions take the job's input so that Snakemake evaluates them again when
        the job is about to run (the corpus manifest then exists)."""

        def mem_mb(wildcards, input, attempt):
            cost = self.job(rule, wildcards, **fixed)
            if rule in INPUT_SIZED_MEMORY:  # the job's own input files, once they exist (read with os: Snakemake's
                try:                         # size_mb is asynchronous, unavailable while the DAG is built)
                    size_mb = sum(os.path.getsize(str(f)) for f in input) / MB
                    cost = replace(cost, peak_mb=INPUT_SIZED_MEMORY[rule](size_mb))
                except (OSError, TypeError):
                    pass
            return self.mem_mb(cost, attempt)

        def runtime(wildcards, input, attempt):
            return self.runtime_minutes(self.job(rule, wildcards, **fixed), attempt)

        return {"mem_mb": mem_mb, "runtime": runtime, **self.gpu_request(rule)}

    # ------------------------------------------------------------ the jobs
    def job(self, rule: str, wildcards, **fixed) -> JobCost:
        """The modelled cost of the job of ``rule`` with ``wildcards`` (a dict or Snakemake's object)."""
        wc = Wildcards(dict(wildcards.items()) if hasattr(wildcards, "items") else {})
        name = "evaluate_intrinsic" if rule.startswith("evaluate_intrinsic") else rule
        method = getattr(self, "_" + name, None)
        cost = self._reference_job(rule) if method is None else method(rule, wc, **fixed)
        # config plan.temporary: the rule's outputs are deleted once read (one place for every rule it may list)
        return replace(cost, temp=True) if rule in self.temporary else cost

    # reference run: per-job figures of the rules whose work does not grow with the corpus
    def reference_manifest(self) -> dict:
        """plan.reference_manifest, read once ({} where it is missing)."""
        if self._reference_manifest is None:
            self._reference_manifest = load_manifest(self._path(self.plan.get("reference_manifest",
                                                                              REFERENCE_MANIFEST))) or {}
        return self._reference_manifest

    def reference_rules(self) -> dict:
        return self.reference_manifest().get("timings", {}).get("rules", {})

    def _reference_job(self, rule: str, scale: float = 1.0, threads: int = 1, mem_scale: float = 1.0,
                       basis: str = "") -> JobCost:
        ref = self.reference_rules().get(rule)
        if ref and ref.get("jobs"):
            work = ref["wall_s"] / ref["jobs"] * scale
            peak = max(200.0, float(ref.get("max_rss_mb") or 200)) * mem_scale
            what = basis or "reference run per job"
            flags = ()
        else:
            # rules without a benchmark file (fetching from the mirror, tables, manifests): seconds, not measured
            work, peak, what, flags = 10.0 * scale, 500.0 * mem_scale, basis or "not measured: 10 s, 0.5 GB", ("unmeasured",)
        return JobCost(rule, "cpu", threads, work, peak, 0.0, basis=what, flags=flags)

    def _reference_v_scale(self, emb: str | None, dim: float | None = None) -> float:
        """Vocabulary x width of an embedding over the reference run's (evaluation, post-processing)."""
        ref_tokens = float(self.reference_meta().get("tokens") or 1e6)
        v_ref = self.unit.law("vocabulary_min5")(ref_tokens)
        v = self.sizes.vocabulary()
        if emb:
            v = self.emb_vocabulary(emb)
            dim = dim or self.emb_dim(emb)
        return max(1.0, v / v_ref) * max(1.0, (dim or 300) / 300)

    def reference_meta(self) -> dict:
        return {"tokens": (self.reference_manifest().get("corpus_stats") or {}).get("tokens")}

    # ------------------------------------------------------------ embedding helpers
    def emb_tokens(self, emb: str) -> float:
        return self.sizes.fraction_tokens(len(self.W.emb_shard_ids(emb)))

    def emb_vocabulary(self, emb: str) -> float:
        params = self.W.params(emb)
        return self.sizes.vocabulary(self.emb_tokens(emb), params.get("min_count", self.sizes.min_count),
                                     params.get("max_vocab"))

    def emb_dim(self, emb: str) -> int:
        spec = self.W.spec(emb)
        dim = self.W.params(emb).get("dim")
        if isinstance(dim, int):
            return dim
        if spec.teacher or spec.method in ("x2static", "ase", "teacher_token", "teacher_word"):
            return self.teacher_layers(spec.teacher or self.config["teacher"]["default"])[1]
        return 300

    def vectors_gb(self, words: float, dim: float) -> float:
        return words * (dim * 4 + 20) / GB

    # ------------------------------------------------------------ corpus stage
    def _fetch_file(self, rule, wc) -> JobCost:
        member = self.W.member_by_path(wc["rel_path"]) if "rel_path" in wc else None
        path = self._path(self.W.download_file(wc["rel_path"])) if member else None
        size = path.stat().st_size if path is not None and path.exists() else 0
        if member is not None and member.rel_path.endswith(".xml.bz2") and self.plan.get("source_gb"):
            size = max(size, float(self.plan["source_gb"]) * GB)
        rate = float(self.plan.get("download_mb_per_s", 50)) * 1e6
        ref = self._reference_job(rule)
        return replace(ref, work_s=ref.work_s + size / rate, disk_gb=size / GB, basis="download at plan.download_mb_per_s")

    def _part_bytes(self, input_id: str) -> float:
        """The compressed bytes one corpus input (a dump part, a WikiExtractor file) holds."""
        item = self.W.corpus_input(input_id)
        path = self._path(item.path)
        size = path.stat().st_size if path.is_file() else 0.0
        if not size and self.plan.get("source_gb"):
            size = float(self.plan["source_gb"]) * GB
        return size / (item.parts or 1)

    def _extract_dump(self, rule, wc) -> JobCost:
        processes = int(self.W.extract_processes)
        part = self._part_bytes(wc["corpus_input"])
        work = part / MB / (float(self.unit.value("extract_mb_per_s")) * processes)
        disk = part * float(self.unit.value("extracted_per_dump_byte")) / GB
        return JobCost(rule, "cpu", processes, work, 1000 + 500 * processes, disk, temp=False,
                       basis="bz2 MB / extract_mb_per_s per process")

    def _tokenize(self, rule, wc) -> JobCost:
        item = self.W.corpus_input(wc["corpus_input"])
        size = self._part_bytes(wc["corpus_input"])
        if item.kind == "pages-articles":
            size *= float(self.unit.value("extracted_per_dump_byte"))
        work = size / MB / float(self.unit.value("tokenize_mb_per_s"))
        n_inputs = max(1, len(self.W.corpus_inputs()))
        disk = self.sizes.tokens / n_inputs * float(self.unit.value("shard_bytes_per_token")) / GB
        return JobCost(rule, "cpu", 1, work, 1200, disk, basis="compressed text MB / tokenize_mb_per_s")

    def _prepare_corpus(self, rule, wc) -> JobCost:
        s = self.sizes
        work = s.tokens * float(self.unit.value("prepare_s_per_token"))
        peak = 150 + s.types() * 300 / MB  # the word counts of the whole corpus, one dict entry a type
        disk = s.tokens * float(self.unit.value("shard_bytes_per_token")) / GB + s.types() * 20 / GB * 2
        return JobCost(rule, "cpu", 1, work, peak, disk, basis="tokens x prepare_s_per_token; counts of every type")

    def _vocabulary(self, rule, wc) -> JobCost:
        k = len(self.W.frac_shard_ids(wc.get("frac", "")))
        types = self.sizes.types(self.sizes.fraction_tokens(k))
        return JobCost(rule, "cpu", 1, 5 + types * 2e-6 * k, 150 + types * 300 / MB, types * 20 / GB,
                       basis="the shards' counts read (types x shards)")

    # ------------------------------------------------------------ window co-occurrences
    def _window_frac(self, wc) -> tuple[int, float]:
        k = len(self.W.frac_shard_ids(wc.get("frac", "")))
        return k, self.sizes.vocabulary(self.sizes.fraction_tokens(k))

    def _cooc_window_shard(self, rule, wc) -> JobCost:
        s = self.sizes
        _, vocab = self._window_frac(wc)
        per_token = float(self.unit.value("window_count_s_per_token")) * \
            (vocab / 54123) ** float(self.unit.value("window_count_vocab_exponent"))
        window = int(wc.get("window", 5))
        entries = s.window_entries(s.shard_tokens, window)
        return JobCost(rule, "cpu", 2, s.shard_tokens * per_token * max(1.0, window / 5), self.SG.window_count_memory_mb() / 1.3,
                       entries * float(self.unit.value("store_bytes_per_entry")) / GB,
                       temp=not self.SG.keep_shard_stores,
                       basis="shard tokens x window_count_s_per_token x (V/54,123)^0.40")

    def _merge(self, rule, inputs: int, entries_in: float, entries_out: float, basis: str) -> JobCost:
        fan_in = int(self.config["cooc"].get("max_open_files", 64))
        passes = max(1, math.ceil(math.log(max(inputs, 2)) / math.log(fan_in)))
        work = entries_in * passes * float(self.unit.value("merge_s_per_entry"))
        disk = entries_out * float(self.unit.value("store_bytes_per_entry")) / GB
        return JobCost(rule, "cpu", 1, work, self.SG.merge_memory_mb() / 1.3, disk, basis=basis)

    def _cooc_window_merge(self, rule, wc) -> JobCost:
        s = self.sizes
        k, _ = self._window_frac(wc)
        window = int(wc.get("window", 5))
        return self._merge(rule, k, k * s.window_entries(s.shard_tokens, window),
                           s.window_entries(s.fraction_tokens(k), window), "input entries x merge passes x merge_s_per_entry")

    # ------------------------------------------------------------ SemGloVe
    # store entries of a builder per window entry of the same text (one shard of the default corpus:
    # sd 528,902, sd10 775,349 and md pieces 311,019 against 797,252 window entries; benchmarks/README.md)
    BUILDER_RATIO = {"attention": 0.66, "attention10": 0.97, "mlm": 0.39}

    def _builder_ratio(self, variant: str) -> float:
        v = self.SG.variants[variant]
        if v["source"] == "attention":
            return self.BUILDER_RATIO["attention10" if int(v.get("top", 5)) > 5 else "attention"]
        if v["source"] == "mlm":
            return self.BUILDER_RATIO["mlm"]
        return self._builder_ratio(v["pairs_of"])

    def semglove_pass(self) -> str:
        mode = self.config["teacher"].get("mlm_mode", "auto")
        if mode == "auto":
            mode = "unmasked" if self.TP.uses_fitted_head(self.SG.teacher, self.SG.fset) else "masked"
        return "masked_mlm" if mode == "masked" and self.SG.mlm else "semglove_unmasked"

    def semglove_shards_per_job(self, fraction_shards: list[int]) -> int:
        """Corpus shards per SemGloVe builder job: one, or in recompute mode on GPUs enough for
        ``plan.gpu_allocation_minutes`` of modelled teacher work: the smallest divisor of every merged
        fraction's shard count (``fraction_shards``) that reaches it, else their greatest common divisor.
        Decided from the expected sizes (the config's, never the manifest's): it names the files."""
        if not (self.recompute and self.gpu_run):
            return 1
        g = math.gcd(*fraction_shards) if fraction_shards else 1
        expected = CorpusSizes(self.config, self.unit, None)
        one = self._semglove_shard_work(1, expected)
        want = float(self.plan.get("gpu_allocation_minutes", 30)) * 60 / max(one, 1e-9)
        return next((d for d in range(1, g + 1) if g % d == 0 and d >= want), g)

    def _semglove_shard_work(self, shards: int, sizes: CorpusSizes | None = None) -> float:
        s = sizes or self.sizes
        tokens = s.shard_tokens * shards
        work = tokens * float(self.unit.value("semglove_builders_s_per_token"))
        if self.recompute:
            device = self.device("semglove_cooc_shard")
            threads = self.gpu_threads(self.SG.teacher, self.semglove_pass()) if device == "gpu" else 2
            work += self.pass_seconds(self.SG.teacher, self.semglove_pass(), tokens, device, threads)
        return work


    def _semglove_cooc_shard(self, rule, wc) -> JobCost:
        s = self.sizes
        shards = self.SG.part_shard_count(wc.get("part", wc.get("shard", "")))
        device = self.device(rule)
        threads = self.gpu_threads(self.SG.teacher, self.semglove_pass()) if device == "gpu" else 2
        entries = s.window_entries(s.shard_tokens * shards)
        disk = sum(entries * self._builder_ratio(v) for v in self.SG.builders) * \
            float(self.unit.value("store_bytes_per_entry")) / GB
        peak = self.SG.shard_memory_mb() / 1.3
        basis = "builders per token" + (f" + the teacher's {self.semglove_pass()} pass on {device}" if self.recompute else "")
        flags = self.gpu_flags("gpu_teacher_words_per_s") if device == "gpu" and self.recompute else ()
        return JobCost(rule, device, threads, self._semglove_shard_work(shards), peak, disk, temp=not self.SG.keep_shard_stores,
                       basis=basis, flags=flags)

    def _semglove_variant_entries(self, variant: str, k: int) -> float:
        return self.sizes.window_entries(self.sizes.fraction_tokens(k)) * self._builder_ratio(variant)

    def _semglove_merge_attention(self, rule, wc) -> JobCost:
        k = len(self.W.frac_shard_ids(wc.get("frac", "")))
        s = self.sizes
        per_shard = s.window_entries(s.shard_tokens) * self._builder_ratio(wc["variant"])
        parts = max(1, k // self.SG.part_size)
        return self._merge(rule, parts, per_shard * k, self._semglove_variant_entries(wc["variant"], k),
                           "the shards' builder entries x merge passes")

    _semglove_merge_attention_fraction = _semglove_merge_attention
    _semglove_merge_pieces = _semglove_merge_attention

    def _semglove_attention_fraction_vocab(self, rule, wc) -> JobCost:
        k = len(self.W.frac_shard_ids(wc.get("frac", "")))
        entries = self._semglove_variant_entries(wc["variant"], k)
        return self._merge(rule, 1, entries, entries, "one pass over the fraction's store")

    # the one measured MLM word store (benchmarks/README.md, SemGloVe builders): one 125k-token shard's md piece
    # table of MiniLM's WordPiece pieces mapped to the 21,243 words of the 1M-token corpus
    MD_MEASURED_VOCABULARY = 21243

    def md_store_vocabulary(self, frac: str = "") -> float:
        k = len(self.W.frac_shard_ids(frac))
        return self.sizes.vocabulary(self.sizes.fraction_tokens(k))

    def md_word_pairs(self, frac: str = "") -> float:
        """Word pairs (store entries) of an MLM word store over the fraction's vocabulary of V words.

        What the builder can emit (``staticvec.cooc.semantic.pieces_to_words``, eq. 14: X = A M Aᵀ): a word pair
        (i, j) for every piece pair (k, l) of the merged piece table M with k a piece of word i and l of word j,
        so at most Σ_(k,l)∈M c_k c_l (c_k: the vocabulary words holding piece k; the builder logs this bound)
        and at most V², the hard bound. Unlike a window store's (at most tokens × 2 × window entries), the
        count has no bound in tokens: one piece pair spreads over every word pair holding its pieces, and the
        measured shard gave 33 word pairs per piece pair (10,146,677 from 311,019).

        Modelled, from that single measurement: the measured share of V² (10,146,677 / 21,243² = 2.25 %) at
        the fraction's V, i.e. a density constant in V, at most V² (:meth:`md_word_pairs_bound`). Only one
        vocabulary and one piece table were measured, so this is an assumption, not a fit: a piece table
        over more text holds more piece pairs, and a larger vocabulary adds mostly rare multi-piece words
        whose pieces (``##s``, ``##ing``) pair widely, so the density may grow with the corpus. The released
        code's window gate (``cooc.semglove.gate_by_window``) keeps 2.5 % of the pairs (255,788 of 10,146,677
        on the measured shard)."""
        v = self.md_store_vocabulary(frac)
        pairs = min(self.md_measured_share() * v * v, self.md_word_pairs_bound(frac))
        if self.config["cooc"]["semglove"].get("gate_by_window"):
            pairs *= 255788 / 10146677
        return pairs

    def md_measured_share(self) -> float:
        """The measured MLM word store's entries over V² (10,146,677 / 21,243²)."""
        return float(self.unit.value("semglove_md_pairs_per_shard")) / self.MD_MEASURED_VOCABULARY ** 2

    def md_word_pairs_bound(self, frac: str = "") -> float:
        """The most word pairs an MLM word store over the fraction's vocabulary can hold: V² (eq. 14 pairs every
        word with every word at most once). Gated or not, this is the bound; the window gate's share is applied
        to the modelled pairs in :meth:`md_word_pairs`, not here (a gated store's own bound, the window store's
        entries plus single-piece pairs, is not modelled)."""
        v = self.md_store_vocabulary(frac)
        return v * v

    def _semglove_words(self, rule, wc) -> JobCost:
        pairs = self.md_word_pairs(wc.get("frac", ""))
        work = pairs * float(self.unit.value("semglove_words_s_per_pair"))
        return JobCost(rule, "cpu", 1, work, self.SG.words_memory_mb() / 1.3,
                       pairs * float(self.unit.value("store_bytes_per_entry")) / GB,
                       basis="word pairs x semglove_words_s_per_pair; pairs: the one measured store's share of V^2 "
                             "(2.25 %), at most V^2", flags=("unmeasured growth",))

    def _semglove_restrict(self, rule, wc) -> JobCost:
        variant = wc.get("variant") or next(v for v, d in self.SG.variants.items() if d["source"] == "window_counts")
        k = len(self.W.frac_shard_ids(wc.get("frac", "")))
        entries = self._semglove_variant_entries(variant, k)
        return self._merge(rule, 2, entries + self.sizes.window_entries(self.sizes.fraction_tokens(k)), entries,
                           "two stores read once")

    # ------------------------------------------------------------ teacher stage
    def _feature_pass_kind(self, teacher: str, fset: str) -> str:
        fs = self.TP.pass_spec(teacher, fset)
        if fs.get("mlm_topk") and (teacher, fset) == self.TP.semglove_pass():
            return self.semglove_pass()
        if fs.get("context") == "paragraph":
            return "paragraph"
        if fs.get("ase") and not fs.get("layers"):
            return "ase"
        return "students"

    def feature_disk_gb(self, teacher: str, fset: str, tokens: float) -> float:
        """What one pass of ``fset`` stores for ``tokens`` training tokens: float16 word vectors of its
        layers, sentence vectors, word ids, attention windows, MLM top-k, ASE sums (float32, all layers)."""
        fs = self.TP.pass_spec(teacher, fset)
        layers, width = self.teacher_layers(teacher)
        sentences = tokens / 23.2  # training tokens per sentence (the reference corpus)
        vector_bytes = 2 if fs.get("vector_dtype", "float16") == "float16" else 4
        n_layers = layers + 1 if fs.get("layers") == "all" else len(fs.get("layers") or [])
        size = tokens * 8 + tokens * n_layers * width * vector_bytes
        if fs.get("sentence_vectors"):
            size += sentences * width * vector_bytes
        if fs.get("attention_window"):
            size += tokens * 2 * int(fs["attention_window"]) * 2
        if fs.get("mlm_topk"):
            size += tokens * float(self.unit.value("pieces_per_token")) * int(fs["mlm_topk"]) * 6
        if fs.get("ase"):
            shard_tokens = min(tokens, self.sizes.shard_tokens)
            size += (tokens / shard_tokens) * self.sizes.shard_words(shard_tokens) * (layers + 1) * width * 4
        return size / GB

    def _teacher_features(self, rule, wc) -> JobCost:
        teacher, fset = wc["teacher"], wc["fset"]
        device = self.device(rule)
        kind = self._feature_pass_kind(teacher, fset)
        threads = self.gpu_threads(teacher, kind) if device == "gpu" else self.TP.feature_threads
        tokens = self.sizes.shard_tokens
        work = self.pass_seconds(teacher, kind, tokens, device, threads)
        layers, width = self.teacher_layers(teacher)
        fs = self.TP.pass_spec(teacher, fset)
        # host: weights, one part's arrays; ASE sums held three times while written (issue 41)
        peak = 1500 + self.teacher_flops(teacher) / 24 * 4 / MB
        if fs.get("ase"):
            peak += 3 * self.sizes.shard_words() * (layers + 1) * width * 4 / MB
        return JobCost(rule, device, threads, work, peak, self.feature_disk_gb(teacher, fset, tokens),
                       basis=f"{kind} pass on {device}",
                       flags=self.gpu_flags("gpu_teacher_words_per_s") if device == "gpu" else ())

    def _teacher_mlm_head(self, rule, wc) -> JobCost:
        scale = self.teacher_flops(wc["teacher"]) / self.MINILM_FLOPS
        device = self.device(rule)
        work = float(self.unit.value("mlm_head_fit_s")) * scale / (50 if device == "gpu" else 1)
        return JobCost(rule, device, 2, work, 3100 * max(1.0, scale ** 0.5), 0.1, basis="MiniLM's fit x FLOPs ratio",
                       flags=("gpu estimate",) if device == "gpu" else ())

    def _teacher_ase(self, rule, wc) -> JobCost:
        teacher, k = wc["teacher"], int(wc["k"])
        layers, width = self.teacher_layers(teacher)
        s = self.sizes
        vocab = s.vocabulary(s.fraction_tokens(k))
        table_mb = vocab * width * 4 / MB + 65536 * width * 8 / MB
        out_gb = (layers + 1) * self.vectors_gb(vocab, width)
        device = self.device(rule)
        if self.recompute:
            threads = self.gpu_threads(teacher, "ase") if device == "gpu" else 2
            work = self.pass_seconds(teacher, "ase", s.fraction_tokens(k), device, threads)
            # running sums of every word met, all layers, on the host; one layer's table while written
            peak = 2000 + vocab * (layers + 1) * width * 4 / MB + table_mb
            return JobCost(rule, device, threads, work, peak, out_gb, basis=f"ASE pass over {k} shards on {device} (recompute)",
                           flags=self.gpu_flags("gpu_teacher_words_per_s") if device == "gpu" else ())
        sums_bytes = k * s.shard_words() * (layers + 1) * width * 4
        work = sums_bytes / MB / float(self.unit.value("ase_sums_read_mb_per_s"))
        return JobCost(rule, "cpu", 2, work, 2000 + table_mb, out_gb, basis="stored sums read once per layer",
                       flags=("estimate",))

    def _teacher_word_embedding(self, rule, wc) -> JobCost:
        teacher = self.W.spec(wc["emb"]).teacher or self.config["teacher"]["default"]
        words = self.sizes.vocabulary()
        threads = 2
        work = words * 5 / self.cpu_pieces_per_s(teacher, "bare", threads)  # word + specials: ~5 pieces
        _, width = self.teacher_layers(teacher)
        return JobCost(rule, "cpu", threads, work, 2000 + self.vectors_gb(words, width) * 1000,
                       self.vectors_gb(words, width), basis="every vocabulary word alone through the teacher")

    def _teacher_token_embedding(self, rule, wc) -> JobCost:
        teacher = self.W.spec(wc["emb"]).teacher or self.config["teacher"]["default"]
        _, width = self.teacher_layers(teacher)
        words = self.sizes.vocabulary()
        ref = self._reference_job(rule, scale=self._reference_v_scale(None))
        return replace(ref, peak_mb=ref.peak_mb + self.vectors_gb(words, width) * 1000, disk_gb=self.vectors_gb(words, width))

    # ------------------------------------------------------------ training
    def _glove_entries(self, emb: str) -> float:
        params, spec = self.W.params(emb), self.W.spec(emb)
        k = len(self.W.emb_shard_ids(emb))
        if spec.method == "semglove":
            variant = params["variant"]
            if self.SG.variants[variant]["source"] == "mlm":
                return self.md_word_pairs(self.W.frac(emb))
            return self._semglove_variant_entries(variant, k)
        return self.sizes.window_entries(self.sizes.fraction_tokens(k), int(params.get("window", 5)))

    def _train_glove(self, rule, wc) -> JobCost:
        emb = wc["emb"]
        params = self.W.params(emb)
        threads = 1 if params.get("deterministic") else int(params["threads"])
        entries = self._glove_entries(emb)
        dim = int(params["dim"])
        device = self.device(rule)
        if device == "gpu":  # the CUDA engine's mini-batches (staticvec.train.glove), the host feeding them
            threads = self.gpu_threads()
            rate = float(self.unit.value("gpu_glove_entries_per_s")) * 300 / dim
        else:
            rate = float(self.unit.value("glove_entries_per_s")) * 300 / dim * threads * \
                min(1.0, float(self.unit.value("glove_thread_efficiency")))
        updates = entries * int(params["iterations"])
        work = updates / rate
        chunks = params.get("shuffle", "copy") == "chunks"
        preparing = int(params.get("prepare_threads", 1)) if chunks and device != "gpu" else 1
        if chunks:  # every iteration reads and permutes the store's chunks: beside the CPU kernel on
            # prepare_threads threads (the next chunks while this one trains; the work takes a share of the job's
            # cores, and the kernel waits where they prepare fewer entries a second than it updates), after
            # each chunk on the GPU. Preparing threads assumed linear (1.7-1.8x from a second, measured)
            prep = updates / float(self.unit.value("glove_chunk_shuffle_entries_per_s"))
            work = work + prep if device == "gpu" else max(work + prep / threads, prep / preparing)
        vocab = self.emb_vocabulary(emb)
        params_mb = 2 * vocab * (dim + 1) * 16 / MB  # float64 draw + float32 parameters + AdaGrad accumulators
        # two chunks at once (the one training, the next being prepared); each further preparing thread one more
        shuffle_mb = min(float(params.get("shuffle_memory_gb", 2.0)) * 1024,
                         2 * entries * float(self.unit.value("store_bytes_per_entry")) / MB) * (preparing + 1) / 2
        peak = 300 + params_mb + shuffle_mb
        # kept: the vectors; while it runs: its checkpoint and, with shuffle `copy`, the shuffled copy of its store
        # (both deleted at the end)
        copy_gb = 0.0 if chunks else entries * float(self.unit.value("store_bytes_per_entry")) / GB
        scratch = copy_gb + 2 * vocab * (dim + 1) * 8 / GB
        return JobCost(rule, device, threads, work, peak, self.vectors_gb(vocab, dim), scratch_gb=scratch,
                       basis="entries x iterations / " + ("gpu_glove_entries_per_s" if device == "gpu" else
                                                          "glove_entries_per_s per thread"),
                       flags=self.gpu_flags("gpu_glove_entries_per_s") if device == "gpu" else ())

    def _same_run(self, rule, wc) -> JobCost:
        vocab, dim = self.emb_vocabulary(wc["emb"]), self.emb_dim(wc["emb"])
        return JobCost(rule, "cpu", 1, 5 + self.vectors_gb(vocab, dim) * 2, 200, self.vectors_gb(vocab, dim),
                       basis="a copy of the base run's vectors")

    def _train_gensim_baseline(self, rule, wc) -> JobCost:
        emb = wc["emb"]
        spec, params = self.W.spec(emb), self.W.params(emb)
        threads = 1 if params.get("deterministic") else int(params["threads"])
        per = float(self.unit.value("gensim_s_per_token_epoch", spec.method))
        dim = int(params["dim"])
        work = self.emb_tokens(emb) * int(params["epochs"]) * per * dim / 300 / threads
        vocab = self.emb_vocabulary(emb)
        peak = 400 + vocab * dim * 4 * 3 / MB + (int(params.get("bucket", 0)) * dim * 4 / MB)
        return JobCost(rule, "cpu", threads, work, peak, self.vectors_gb(vocab, dim),
                       basis="tokens x epochs x gensim_s_per_token_epoch (linear in threads, assumed)")

    def _student(self, rule, wc) -> JobCost:
        emb = wc["emb"]
        spec, params = self.W.spec(emb), self.W.params(emb)
        teacher = spec.teacher or self.config["teacher"]["default"]
        device = self.device(rule)
        tokens = self.emb_tokens(emb)
        epochs = int(params.get("epochs", 1))
        if spec.method == "x2static":
            keep = self.unit.value("x2static_examples_per_token")
            t = float(params.get("subsample_t", 1e-4))
            nearest = min(keep, key=lambda x: abs(math.log(float(x) / t)))
            examples = tokens * epochs * float(keep[nearest])
        else:
            examples = tokens * epochs
        path = "paragraph" if params.get("context") == "paragraph" else "students"
        where = device
        if device == "gpu":
            threads = self.gpu_threads(teacher, path) if self.recompute else self.gpu_threads()
            if self.recompute and self.student_trains_on_host(spec.method, threads):
                where = "the job's cores (fast engine), the teacher on the GPU"
                work = examples / self.host_student_rate(spec.method, threads)
            else:
                work = examples / self.student_rate("gpu_student_examples_per_s", spec.method)
        else:
            threads = 1 if params.get("deterministic") else int(params["threads"])
            work = examples / self.host_student_rate(spec.method, threads)
        if self.recompute:
            work += epochs * self.pass_seconds(teacher, path, tokens, device, threads)
        _, width = self.teacher_layers(teacher)
        vocab = self.emb_vocabulary(emb)
        # tables and their optimiser state (lazy Adam: two moments), one block of features
        peak = 1500 + 4 * vocab * width * 4 / MB + 4096 * 40 * width * 4 / MB
        basis = f"examples / ex/s on {where}" + (" + the teacher's pass (recompute)" if self.recompute else "")
        if spec.method not in self.unit.value("student_examples_per_s"):
            basis += f" [unmeasured: {spec.method} at the slowest measured student's rate]"
        kept = self.vectors_gb(vocab, width) * (2 if rule == "train_bert_sg" else 1)  # BERT+SG keeps its model too
        return JobCost(rule, device, threads, work, peak, kept, scratch_gb=3 * self.vectors_gb(vocab, width), basis=basis,
                       flags=self.gpu_flags("gpu_student_examples_per_s", "gpu_teacher_words_per_s") if device == "gpu" else ())

    _train_student = _student
    _train_bert_sg = _student

    def _train_model2vec(self, rule, wc) -> JobCost:
        teacher = self.W.spec(wc["emb"]).teacher or self.config["teacher"]["default"]
        scale = self.teacher_flops(teacher) / self.MINILM_FLOPS
        params = self.W.params(wc["emb"])
        ref = self._reference_job(rule, scale=scale, threads=int(params.get("threads", 8)))
        dims = params.get("pca_dims")
        width = int(dims) if isinstance(dims, int) else self.teacher_layers(teacher)[1]
        return replace(ref, disk_gb=self.vectors_gb(self.sizes.vocabulary(), width))

    def _tokenlearn_job(self, rule: str, emb: str, work: float, basis: str, flags: tuple = ()) -> JobCost:
        """A Tokenlearn job (the distillation or a seed's), at the entry's torch threads. Memory: the targets in
        float32, three times in a seed's job (read, their PCA, the training copy), once in the distillation (it
        reads them to pick the same texts). Disk: a seed's vectors over the run's vocabulary; the distilled model's
        rows, the teacher's tokens (taken as BERT's 30,522) and the corpus's ``vocab_size`` words."""
        spec, params = self.W.spec(emb), self.W.params(emb)
        width = self.teacher_layers(spec.teacher or self.config["teacher"]["default"])[1]
        dim = params.get("dim") if isinstance(params.get("dim"), int) else width
        copies = 1 if rule == "tokenlearn_distill" else 3
        peak = 1500 + copies * float(params.get("max_sentences", 1_000_000)) * width * 4 / MB
        rows = 30522 + int(params.get("vocab_size", 56000)) if rule == "tokenlearn_distill" else self.sizes.vocabulary()
        return JobCost(rule, "cpu", int(params.get("threads", 8)), work, peak, self.vectors_gb(rows, dim),
                       basis=basis, flags=flags)

    def _tokenlearn_distill(self, rule, wc) -> JobCost:
        """Tokenlearn's distillation: the teacher's forward over the ~60k tokens (its own and the corpus's 56,000
        most frequent words) and Model2Vec's PCA, a fixed cost (unit tokenlearn_distill_s at MiniLM) scaled by
        the teacher's FLOPs; once per teacher, width and texts."""
        teacher = self.W.spec(wc["emb"]).teacher or self.config["teacher"]["default"]
        work = float(self.unit.value("tokenlearn_distill_s")) * self.teacher_flops(teacher) / self.MINILM_FLOPS
        return self._tokenlearn_job(rule, wc["emb"], work, "tokenlearn_distill_s x teacher FLOPs / MiniLM's")

    def _train_tokenlearn(self, rule, wc) -> JobCost:
        """A Tokenlearn seed: reading the targets and the library's training from the distilled model, on the
        min(max_sentences, corpus sentences) sentences with a target (law tokenlearn_seed_seconds: the early
        stopping ends larger runs after fewer epochs), the width's share (tokenlearn_width_exponent)."""
        params = self.W.params(wc["emb"])
        sentences = min(float(params.get("max_sentences", 1_000_000)),
                        self.emb_tokens(wc["emb"]) * float(self.unit.value("sentences_per_token")))
        law = self.unit.law("tokenlearn_seed_seconds")
        dims = params.get("dim")
        width = dims if isinstance(dims, int) else self.emb_dim(wc["emb"])
        work = law(sentences) * (width / 320) ** float(self.unit.value("tokenlearn_width_exponent"))
        return self._tokenlearn_job(rule, wc["emb"], work, "law tokenlearn_seed_seconds(sentences) x (dim / 320)^e",
                                    flags=("extrapolated",) if law.extrapolated(sentences) else ())

    # ------------------------------------------------------------ evaluation and post-processing
    def _evaluate_intrinsic(self, rule, wc, seeds: int | None = None) -> JobCost:
        if seeds is None:
            match = re.search(r"seed([\d_]+)$", rule)
            seeds = len(match.group(1).split("_")) if match else 1
        scale = self._reference_v_scale(wc.get("emb"))
        if rule in self.reference_rules():  # the same rule (protocols and seeds) was measured
            ref = self._reference_job(rule, scale=scale)
        else:  # one seed's job of both protocols, once per seed
            ref = self._reference_job("evaluate_intrinsic_web_muse_seed1", scale=scale * seeds)
        vocab = self.emb_vocabulary(wc["emb"]) if wc.get("emb") else self.sizes.vocabulary()
        peak = ref.peak_mb + 2 * self.vectors_gb(vocab, self.emb_dim(wc["emb"]) if wc.get("emb") else 300) * 1000
        return replace(ref, rule=rule, peak_mb=peak, basis="reference job x V x dim (analogy over the vocabulary)")

    def _post(self, rule, wc) -> JobCost:
        scale = self._reference_v_scale(wc.get("emb"))
        ref = self._reference_job(rule, scale=scale, threads=2 if rule == "post_artetxe" else 1)
        vocab = self.emb_vocabulary(wc["emb"]) if wc.get("emb") else self.sizes.vocabulary()
        dim = self.emb_dim(wc["emb"]) if wc.get("emb") else 300
        return replace(ref, peak_mb=ref.peak_mb + 3 * self.vectors_gb(vocab, dim) * 1000, disk_gb=self.vectors_gb(vocab, dim))

    _post_artetxe = _post
    _post_retrofit = _post

    def _config_work_ratio(self, section: str) -> float:
        """Work units of the extrinsic settings against the reference run's (config/config.yaml's)."""
        if section not in self._work_ratio:
            self._work_ratio[section] = self._compute_work_ratio(section)
        return self._work_ratio[section]

    def _compute_work_ratio(self, section: str) -> float:
        from staticvec.config import load_config

        ref = load_config([self._path("config/config.yaml")])

        def units(cfg):
            c = cfg[section]
            if section == "classification":  # grid cells x seeds x data sets, twice with the refit
                seeds = len(c.get("seeds") or cfg.get("seeds") or [1])
                return len(c["epochs"]) * len(c["learning_rates"]) * seeds * len(c["datasets"]) * (2 if c.get("refit") else 1)
            t = c["tagger"]  # epochs x sentences; assumed: the character CNN doubles a step, cost ~ sqrt(32 / batch)
            sentences = t.get("max_train_sentences") or max(TAGGING_SENTENCES.values())
            chars = 2.0 if t.get("char_features", "none") != "none" else 1.0
            return t["max_epochs"] * sentences * chars * math.sqrt(32 / int(t.get("batch_size", 32)))

        return units(self.config) / units(ref)

    def _classification(self, rule, wc) -> JobCost:
        ref = self._reference_job(rule, scale=self._config_work_ratio("classification"))
        return replace(ref, threads=int(self.config["classification"].get("threads", 1)),
                       basis="reference job x (grid x seeds x data sets x refit) ratio")

    def _tag(self, rule, wc) -> JobCost:
        device = self.device(rule)
        t = self.config["tagging"]["tagger"]
        if device == "gpu":
            sentences = TAGGING_SENTENCES.get(wc.get("task", "chunk"), 10000)
            if t.get("max_train_sentences"):
                sentences = min(sentences, int(t["max_train_sentences"]))
            work = sentences * int(t["max_epochs"]) * 1.3 / float(self.unit.value("gpu_tagger_sentences_per_s"))
            if rule == "tag_contextual":
                work *= 1.5
            return JobCost(rule, "gpu", self.gpu_threads(), work, 6000, 0.0, basis="sentences x epochs / GPU rate (+dev)",
                           flags=self.gpu_flags("gpu_tagger_sentences_per_s"))
        ref = self._reference_job(rule, scale=self._config_work_ratio("tagging"), threads=int(self.config["tagging"].get("threads", 1)))
        return replace(ref, basis="reference job x (epochs x data x batch) ratio")

    _tag_contextual = _tag

    def _figure(self, rule, wc) -> JobCost:
        """t-SNE figures load whole vector files, one at a time: the corpus vocabulary at 300-d, three copies."""
        ref = self._reference_job(rule)
        return replace(ref, peak_mb=INPUT_SIZED_MEMORY["figure"](self.vectors_gb(self.sizes.vocabulary(), 300) * 1000))
