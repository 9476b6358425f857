"""File names of the Snakemake DAG, computed from the validated config.

The rule files ask this class what their inputs and targets are; keeping the naming here
(not in the Snakefile) makes it testable and keeps rules thin.
"""

from __future__ import annotations

import glob
import json
import re
from dataclasses import dataclass
from pathlib import Path

from staticvec.config import resolve_path
from staticvec.dag.common import alternatives, corpus_shard, corpus_vocab, fraction_shard_ids, teacher_model, vocab_args
from staticvec.errors import StaticvecError
from staticvec.evaluate.datasets import eval_groups
from staticvec.resources import Member, Registry, check_available
from staticvec.sheets.tables import CONTEXTUAL  # tables sheet row of the teacher's own frozen tagging row
from staticvec.sheets import EmbeddingSheet, EmbeddingSpec


@dataclass(frozen=True)
class CorpusInput:
    id: str  # wildcard value, e.g. "AA-wiki_00"
    path: str  # the file the tokenize rule reads
    member: Member | None  # registry member (None for local files)
    kind: str  # "wikiextractor" or "pages-articles"
    index: Member | None = None  # multistream dump index (a dump extracted in parts)
    part: int | None = None  # which part of the dump (0-based), with ``parts`` in all
    parts: int | None = None


def _in_hub_cache(repo_id: str) -> bool:
    """Whether a hub model's config.json is in the local Hugging Face cache."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:  # noqa: BLE001 - not a valid repo id, or no hub library: not cached
        return False


class Workflow:
    def __init__(self, config: dict, root: str | Path = "."):
        self.config = config
        self.root = Path(root)
        self.results_dir = config["results_dir"].rstrip("/")
        res = config["resources"]
        self.mirror = str(resolve_path(res["mirror"], self.root)) if res.get("mirror") else None
        self.download_dir = res["download_dir"].rstrip("/")
        self.allow_download = bool(res["allow_download"])
        self.registry = Registry.load(resolve_path(res["registry"], self.root), root=self.root)
        self._corpus_inputs = None
        sheets = config.get("sheets", {})
        self.sheet = EmbeddingSheet.load(resolve_path(sheets.get("embeddings", "config/embeddings.yaml"), self.root), config)
        self.all_seeds = list(config.get("seeds") or [1])
        self.tables_sheet = sheets.get("tables", "config/tables.yaml")
        self._tables = None
        self.figures_sheet = sheets.get("figures", "config/figures.yaml")
        self._figures = None
        self.claims_sheet = sheets.get("claims", "config/claims.yaml")
        self._claims = None
        self._claimed = None
        self._extrinsic_claimed: dict[str, set[str]] = {}
        self._signatures: dict[str, str] | None = None
        self._intrinsic_sets = None
        # which seeded embeddings train every seed: those a selected claim names (claims) or all of them
        self.seeds_for = config.get("seeds_for", "claims")
        self.seed_sweeps = bool(config.get("seed_sweeps", False))
        # torch rules ask the scheduler for a GPU (SLURM: --gpus=1) when the run is on GPUs
        self.use_gpu = config.get("device") == "cuda" or bool(config.get("teacher", {}).get("gpu"))

    def gpu_resources(self, gpu: bool | None = None) -> dict:
        """Resources of a job that runs a torch model: one GPU and the GPU partition when the run
        uses GPUs (``gpu`` overrides, e.g. SemGloVe's builders only in recompute mode), nothing
        otherwise, so that the job stays in the profile's default (CPU) partition."""
        if not (self.use_gpu if gpu is None else gpu):
            return {}
        partition = (self.config.get("slurm") or {}).get("gpu_partition", "gpu")
        return {"gpu": 1, "slurm_partition": partition}

    # ------------------------------------------------------------ resources
    def resource_path(self, member: Member) -> str:
        return self.download_file(member.rel_path)

    def download_file(self, rel_path: str = "{rel_path}") -> str:
        return f"{self.download_dir}/{rel_path}"

    def resource_dir(self, group: str) -> str:
        return f"{self.download_dir}/{self.registry.group(group).path}"

    def resource_marker(self, group: str) -> str:
        """Written when every member of a group is verified; rules that read the group depend on it."""
        return f"{self.download_dir}/.verified/{group}.json"

    def fetch_flags(self) -> str:
        """Where `staticvec resources fetch` looks and puts files (shared by both fetch rules)."""
        import shlex

        flags = [f"--download-dir {shlex.quote(self.download_dir)}", f"--retries {self.config['resources'].get('retries', 3)}"]
        if self.mirror:
            flags.append(f"--mirror {shlex.quote(self.mirror)}")
        if self.allow_download:
            flags.append("--allow-download")
        return " ".join(flags)

    def member_by_path(self, rel_path: str) -> Member:
        for group in self.registry.groups.values():
            for member in group.members.values():
                if member.rel_path == rel_path:
                    return member
        raise StaticvecError(f"{rel_path} is not a file of the resource registry")

    def check_resources(self, groups: list[str] | None = None) -> None:
        """One error listing every needed input that is neither present nor downloadable: the
        corpus files and the registry groups ``groups`` (default: every group the targets read)."""
        members = list({m.rel_path: m for i in self.corpus_inputs() for m in (i.member, i.index) if m is not None}.values())
        for gid in self.input_groups() if groups is None else groups:
            members += self.registry.select(gid)
        check_available(members, self.mirror, self.download_dir, self.allow_download)

    def input_groups(self) -> list[str]:
        """Registry groups the run's targets read besides the corpus: the intrinsic evaluation
        sets (every embedding is scored), the lexicons and WordNet when the sheet post-processes,
        the tagging and classification data when a selected table needs them."""
        from staticvec.dag.arguments import TASKS, task_data_location

        groups = list(eval_groups())  # the data sets' resource groups (staticvec.evaluate.datasets)
        if self.sheet.ids("retrofit"):
            groups += ["eval-lexicons", "eval-wordnet"]
        sources = {self.tables[t]["source"] for t in self.selected("tables", list(self.tables))}
        if "classification" in sources:
            groups.append("eval-classification")
        if "tagging" in sources:
            for task in TASKS:
                location = task_data_location(self.config, task, self)
                if location is not None and location.resource_group:
                    groups.append(location.resource_group)
        return list(dict.fromkeys(groups))

    # ------------------------------------------------------------ corpus
    def corpus_inputs(self) -> list[CorpusInput]:
        """The corpus input files, in corpus order."""
        if self._corpus_inputs is not None:
            return self._corpus_inputs
        corpus = self.config["corpus"]
        inputs = []
        if corpus.get("local_files"):
            # each file or directory a pattern names (``**`` spans directories) is one input: one tokenize job
            for pattern in corpus["local_files"]:
                full = str(resolve_path(pattern, self.root))
                matches = sorted(glob.glob(full, recursive=True))
                if not matches:
                    raise StaticvecError(f"config key 'corpus.local_files': {pattern!r} matches no file")
                inputs += [CorpusInput(_safe_id(_relative_to_pattern(m, full)), m, None, corpus["format"])
                           for m in matches]
        else:
            parts = int(corpus.get("dump_parts", 1))
            for member in self.registry.select(corpus["source"], corpus.get("members")):
                if corpus["format"] == "pages-articles" and parts > 1:
                    index = self._dump_index(corpus["source"], member)
                    inputs += [CorpusInput(f"{_safe_id(member.name)}-part{k:04d}", self.resource_path(member), member,
                                           corpus["format"], index, k, parts) for k in range(parts)]
                else:
                    inputs.append(CorpusInput(_safe_id(member.name), self.resource_path(member), member, corpus["format"]))
        ids = [i.id for i in inputs]
        if len(set(ids)) != len(ids):
            clash = sorted({i for i in ids if ids.count(i) > 1})
            raise StaticvecError(f"corpus inputs have clashing names ({', '.join(clash[:5])}): two inputs of "
                                 "config corpus.local_files give the same job name; rename them, or name them by "
                                 "a pattern whose fixed part is their common directory")
        self._corpus_inputs = inputs
        return inputs

    def _dump_index(self, group: str, dump: Member) -> Member:
        """The multistream index published beside a dump (``…-multistream.xml.bz2`` ->
        ``…-multistream-index.txt.bz2``): it locates the bz2 streams that a dump part reads."""
        name = re.sub(r"\.xml\.bz2$", "-index.txt.bz2", dump.name)
        members = {m.name: m for m in self.registry.select(group)}
        if name == dump.name or name not in members:
            raise StaticvecError(
                f"config key 'corpus.dump_parts' = {self.config['corpus']['dump_parts']}: extracting {dump.name} in parts needs "
                f"its multistream index '{name}' as a member of registry entry '{group}' (or set dump_parts: 1)")
        return members[name]

    def extract_inputs(self, input_id: str) -> dict:
        """What the extract job of a dump (part) reads: the dump, and the index for a part."""
        item = self.corpus_input(input_id)
        inputs = {"dump": item.path}
        if item.index is not None:
            inputs["index"] = self.resource_path(item.index)
        return inputs

    def extract_flags(self, input_id: str) -> str:
        item = self.corpus_input(input_id)
        if item.index is None:
            return ""
        import shlex

        return f"--index {shlex.quote(self.resource_path(item.index))} --part {item.part} --parts {item.parts}"

    def corpus_input(self, input_id: str) -> CorpusInput:
        for item in self.corpus_inputs():
            if item.id == input_id:
                return item
        raise StaticvecError(f"unknown corpus input {input_id!r}")

    def tokenize_source(self, input_id: str) -> str:
        """What the tokenize job reads: the input file, or the dump's extracted directory."""
        item = self.corpus_input(input_id)
        return self.extracted_dir(input_id) if item.kind == "pages-articles" else item.path

    def extracted_dir(self, input_id: str) -> str:
        return f"{self.results_dir}/corpus/extracted/{input_id}"

    def tokenized(self, input_id: str) -> str:
        return f"{self.results_dir}/corpus/tokenized/{input_id}.tsv.gz"

    def tokenized_stats(self, input_id: str) -> str:
        return f"{self.results_dir}/corpus/tokenized/{input_id}.json"

    @property
    def corpus_dir(self) -> str:
        return f"{self.results_dir}/corpus"

    @property
    def n_shards(self) -> int:
        return int(self.config["corpus"]["shards"])

    def shard_ids(self, fraction: float = 1.0) -> list[str]:
        """The first ``fraction`` of the corpus shards (fractions k/n are exact)."""
        n = round(fraction * self.n_shards)
        if n < 1 or abs(n - fraction * self.n_shards) > 1e-9:
            raise StaticvecError(
                f"corpus fraction {fraction} is not a whole number of the {self.n_shards} shards (config corpus.shards)"
            )
        return [f"{k:05d}" for k in range(n)]

    def shard(self, shard_id: str) -> str:
        return corpus_shard(self.results_dir, shard_id)

    def shard_counts(self, shard_id: str) -> str:
        return f"{self.corpus_dir}/shards/{shard_id}.counts.tsv"

    def shards(self, fraction: float = 1.0) -> list[str]:
        return [self.shard(s) for s in self.shard_ids(fraction)]

    @property
    def manifest(self) -> str:
        return f"{self.corpus_dir}/manifest.json"

    @property
    def corpus_counts(self) -> str:
        """Word counts of the whole corpus (every shard)."""
        return f"{self.corpus_dir}/counts.tsv"

    def tokenized_all(self) -> list[str]:
        return [self.tokenized(i.id) for i in self.corpus_inputs()]

    def tokenized_stats_all(self) -> list[str]:
        return [self.tokenized_stats(i.id) for i in self.corpus_inputs()]

    def shard_counts_all(self, frac: str = "") -> list[str]:
        """The per-shard word counts of the corpus ('') or of a fraction ('.KofN')."""
        return [self.shard_counts(s) for s in self.frac_shard_ids(frac)]

    def frac_shard_ids(self, frac: str) -> list[str]:
        """Shards of a fraction suffix: '' = all, '.KofN' = the first K/N of them."""
        return fraction_shard_ids(frac, self.n_shards)

    def vocab_flags(self) -> str:
        """--min-count / --max-vocab of the corpus vocabulary, for commands that read it."""
        return " ".join(vocab_args(self.config))

    def vocab(self, min_count: int | None = None, frac: str = "") -> str:
        """The vocabulary of the whole corpus (``frac`` '') or of a fraction ('.KofN': words counted
        in its first K of N shards only, as if the fraction were the corpus)."""
        return corpus_vocab(self.results_dir, min_count or self.config["corpus"]["min_count"], frac)

    def emb_vocab(self, emb: str) -> str:
        """The vocabulary an embedding is trained on: its corpus fraction's own (Figure 2b,
        X2Static Figure 1, Wang Figures 4-5), so it holds only words of its fraction."""
        return self.vocab(self.params(emb).get("min_count"), self.frac(emb))

    def tokenize_flags(self) -> str:
        import shlex

        c = self.config["corpus"]
        # How the inputs are read: said only for a corpus of your own or another language, so that a
        # Wikipedia run's tokenize commands (and what Snakemake compares to rerun) stay as they were.
        source = []
        if c["format"] in ("text", "jsonl"):
            source += ["--format", c["format"], "--paragraphs", c.get("paragraphs", "blank_lines")]
        if c["format"] == "jsonl":
            fields = c.get("jsonl") or {}
            source += ["--text-field", shlex.quote(fields.get("text_field", "text")),
                       "--id-field", shlex.quote(fields.get("id_field", "id"))]
        if c.get("language", "en") != "en":
            source += ["--language", c["language"]]
        return " ".join(source + [
            "--lowercase" if c["lowercase"] else "--no-lowercase",
            "--keep-punctuation" if c.get("keep_punctuation", True) else "--no-keep-punctuation",
            "--split-hyphens" if c.get("split_hyphens", False) else "--no-split-hyphens",
            f"--min-sentence-tokens {c['min_sentence_tokens']}",
            f"--max-sentence-tokens {c['max_sentence_tokens']}",
            # X2Static's paragraph filter, on the raw paragraphs (null: keep every paragraph)
            f"--min-paragraph-sentences {(c.get('paragraph_filter') or {}).get('min_sentences', 0)}",
            f"--min-paragraph-chars {(c.get('paragraph_filter') or {}).get('min_chars', 0)}",
        ])

    def budget_flag(self) -> str:
        budget = self.config["corpus"]["max_tokens"]
        return "" if budget is None else f"--max-tokens {budget}"

    def max_vocab_flag(self) -> str:
        size = self.config["corpus"].get("max_vocab")
        return "" if size is None else f"--max-size {size}"

    def corpus_description(self) -> str:
        corpus = self.config["corpus"]
        description = {
            "source": corpus.get("local_files") or corpus["source"],
            "format": corpus["format"],
            "members": None if corpus.get("local_files") else corpus.get("members"),  # of the registry source
            "lowercase": corpus["lowercase"],
            "sentence_tokens": [corpus["min_sentence_tokens"], corpus["max_sentence_tokens"]],
        }
        # what a corpus of your own adds (a Wikipedia run's manifest stays as it was)
        if corpus["format"] in ("text", "jsonl"):
            description["paragraphs"] = corpus.get("paragraphs", "blank_lines")
        if corpus.get("language", "en") != "en":
            description["language"] = corpus["language"]
        return json.dumps(description)

    # ------------------------------------------------------------ embeddings
    def spec(self, emb: str) -> EmbeddingSpec:
        return self.sheet[emb]

    def seeds(self, emb: str) -> list[int]:
        """Seeds an embedding is trained with (deterministic methods: the first seed only;
        post-processing: its base's). With ``seeds_for: claims`` (default) only the embeddings a
        selected claim names (and what they are post-processed from; sweep points only with
        ``seed_sweeps``) train every seed, the others the first."""
        spec = self.spec(emb)
        if spec.base:
            return self.seeds(spec.base)
        if not spec.seeded:
            return self.all_seeds[:1]
        if self.seeds_for == "all" or emb in self.claimed_embeddings():
            return self.all_seeds
        return self.all_seeds[:1]

    def is_random(self, emb: str) -> bool:
        """Whether the embedding's vectors depend on the training seed (seeds() gives one run per seed)."""
        spec = self.spec(emb)
        return self.is_random(spec.base) if spec.base else spec.seeded

    def embedding(self, emb: str, seed="{seed}") -> str:
        return f"{self.results_dir}/embeddings/{emb}/seed{seed}/vectors.bin"

    def embedding_record(self, emb: str, seed="{seed}") -> str:
        return f"{self.results_dir}/embeddings/{emb}/seed{seed}/vectors.json"

    def rule_ids(self, rule: str) -> str:
        """Wildcard constraint of a rule that builds embeddings: the sheet ids of the methods the
        registry (staticvec.methods) assigns to it, less the sweep points that repeat their base's run
        (``same_run``: the ``same_run`` rule copies those)."""
        from staticvec.methods import methods_of_rule

        return alternatives([e for m in methods_of_rule(rule) for e in self.sheet.ids(m) if self.same_run(e) is None])

    # the rules whose job writes an embedding's vectors and training record and nothing else a reader
    # asks for, deterministically for a seed (and thread count): a sweep point repeating its base's run
    # can be a copy of that run's two files
    RULES_COPYABLE = ("train_glove", "train_student")

    def same_run(self, emb: str) -> str | None:
        """The base whose run a sweep point repeats, or None. A point is its base's run when its resolved
        entry — method, parameters (``params``), corpus fraction, teacher, what it post-processes — equals the base's
        and the base trains every seed the point needs (its first: a sweep trains one seed unless
        ``seed_sweeps``), so training it again would only spend the job's time on the same vectors
        (deterministic methods) or on another draw of the same run. The default's SemGloVe Figure 2
        sweeps hold three per base: 300-d, x_max 10 and the whole corpus (x_max 10) are the main row's
        settings; X2Static Figure 1's whole corpus is X2Static_para. Only for methods whose rule writes
        nothing else (``RULES_COPYABLE``), and where a student's development curve is the same too."""
        from staticvec.methods import REGISTRY

        spec = self.spec(emb)
        if spec.sweep is None or REGISTRY[spec.method].rule not in self.RULES_COPYABLE:
            return None
        for base in self.sheet.sweeps[spec.sweep].bases:
            if not emb.startswith(base + "~") or base not in self.sheet:
                continue
            other = self.spec(base)
            same = (spec.method, self.params(emb), spec.fraction, spec.teacher, spec.base, self.dev_curve_args(emb)) == \
                (other.method, self.params(base), other.fraction, other.teacher, other.base, self.dev_curve_args(base))
            if same and set(self.seeds(emb)) <= set(self.seeds(base)):
                return base
        return None

    def same_run_ids(self) -> str:
        """Wildcard constraint of the ``same_run`` rule: the sweep points that repeat their base's run."""
        return alternatives([e for e in self.sheet.ids() if self.same_run(e) is not None])

    def same_run_inputs(self, emb: str, seed) -> dict[str, str]:
        """The base run's vectors and training record that a sweep point ``same_run`` copies."""
        base = self.same_run(emb)
        return {"vectors": self.embedding(base, seed), "record": self.embedding_record(base, seed)}

    def emb_shard_ids(self, emb: str) -> list[str]:
        """The corpus shards an embedding is trained on (its fraction of the corpus)."""
        return self.shard_ids(self.spec(emb).fraction)

    def teacher_model(self, teacher_id: str) -> str:
        return teacher_model(self.config, teacher_id)

    def teachers_used(self) -> list[str]:
        """Teacher ids the run reads: the sheet's teacher-based entries, SemGloVe's builders, the default."""
        used = [self.config["teacher"]["default"]]
        used += [spec.teacher for spec in self.sheet.entries.values() if spec.teacher]
        if self.sheet.ids("semglove") and (self.config.get("cooc", {}).get("semglove", {}) or {}).get("teacher"):
            used.append(self.config["cooc"]["semglove"]["teacher"])
        return list(dict.fromkeys(used))

    def check_teachers(self) -> None:
        """One error naming every teacher that cannot be loaded as configured, before any job runs:
        a local path that does not exist, a local model whose tokenizer is slow (no character offsets),
        or (teacher.offline: true) a hub name not in the local cache."""
        from staticvec.teacher.load import check_tokenizer, resolve_teacher

        offline = bool(self.config["teacher"].get("offline", True))
        problems = []
        for tid in self.teachers_used():
            model = self.teacher_model(tid)
            where = f"config key 'teacher.models.{tid}' = {model!r}"
            try:
                source = resolve_teacher(model)
            except StaticvecError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if source.local:
                try:
                    check_tokenizer(model)
                except StaticvecError as exc:
                    problems.append(f"{where}: {exc}")
                continue
            if offline and not _in_hub_cache(model):
                problems.append(f"{where}: not a local directory and not in the Hugging Face cache "
                                "(HF_HOME), and teacher.offline is true: download it once (teacher.offline: false) "
                                "or set the model to a local directory")
        if problems:
            raise StaticvecError("teachers that cannot be loaded:\n  - " + "\n  - ".join(problems))

    def teacher_width(self, teacher_id: str) -> int:
        from staticvec.dag.teacher import teacher_traits

        width = teacher_traits(self.teacher_model(teacher_id))["hidden_size"]
        if width is None:
            raise StaticvecError(
                f"'dim: teacher' needs the width of teacher {teacher_id!r} ({self.teacher_model(teacher_id)}), "
                "whose config.json is not available offline: download the model or set the dimension explicitly"
            )
        return int(width)

    def params(self, emb: str) -> dict:
        """The embedding's hyper-parameters, with `teacher` dimensions resolved to the teacher's width and
        GloVe's `small_dim_iterations` applied: SemGloVe §5.3 (Figure 2a) trains vectors of fewer than
        `below_dim` dimensions for its `iterations` (paper.yaml: 50 below 300-d), the others for `iterations`."""
        spec = self.spec(emb)
        params = dict(spec.params)
        if params.get("dim") == "teacher":
            params["dim"] = self.teacher_width(spec.teacher or self.config["teacher"]["default"])
        if "small_dim_iterations" in params:
            rule = params.pop("small_dim_iterations")
            if rule and int(params["dim"]) < int(rule["below_dim"]):
                params["iterations"] = int(rule["iterations"])
        return params

    def teacher_depth(self, teacher_id: str) -> int:
        from staticvec.dag.teacher import teacher_traits

        depth = teacher_traits(self.teacher_model(teacher_id))["n_layers"]
        if depth is None:
            raise StaticvecError(f"the number of layers of teacher {teacher_id!r} is not known offline; download the model")
        return int(depth)

    def ase_directory(self, emb: str) -> str:
        """The ASE job's output (every layer) over the embedding's corpus fraction."""
        return self.ase_table(self.spec(emb).teacher, len(self.emb_shard_ids(emb)), self.n_shards)

    def ase_table(self, teacher: str = "{teacher}", k="{k}", n="{n}") -> str:
        """The ASE job's output over the first k of n shards (every layer in its directory)."""
        return f"{self.results_dir}/teacher/{teacher}/baselines/ase-{k}of{n}/ase.json"

    def ase_best_layer(self, teacher: str = "{teacher}") -> str:
        return f"{self.results_dir}/teacher/{teacher}/baselines/ase-best-layer.json"

    def ase_best_selection(self, emb: str) -> str:
        """The choice of ASE's best task-independent layer (`layer: best`), made on the whole corpus."""
        sweep = self.sheet.sweeps[self.config["methods"]["ase"]["best_layer"]["sweep"]]
        return self.ase_best_layer(self.spec(sweep.bases[0]).teacher)

    def ase_best_layers(self) -> list[tuple[int, str]]:
        """(layer, embedding id) of every layer of the best_layer sweep."""
        sweep = self.sheet.sweeps[self.config["methods"]["ase"]["best_layer"]["sweep"]]
        return [(int(value), sweep.variant_id(sweep.bases[0], value)) for value in sweep.values]

    def ase_best_results(self) -> list[tuple[int, str]]:
        """(layer, evaluation result) of every layer of the best_layer sweep, every seed."""
        protocol = self.config["methods"]["ase"]["best_layer"]["protocol"]
        return [(layer, self.intrinsic_result(vid, s, protocol)) for layer, vid in self.ase_best_layers()
                for s in self.seeds(vid)]

    def ase_embedding_inputs(self, emb: str) -> dict:
        inputs = {"ase": self.ase_directory(emb), "vocab": self.emb_vocab(emb)}
        if self.params(emb)["layer"] == "best":
            inputs["selection"] = self.ase_best_selection(emb)
        return inputs

    def ase_embedding_command(self, emb: str, out: str) -> str:
        """An `ase` entry's vectors: one layer of its fraction's ASE directory (a link; on a corpus
        fraction only the fraction's words), the chosen best layer for `layer: best`."""
        import shlex

        frac_vocab = self.emb_vocab(emb) if self.frac(emb) else None
        if self.params(emb)["layer"] == "best":
            args = ["staticvec", "report", "pick-layer", "--selection", self.ase_best_selection(emb),
                    "--ase-dir", self.ase_directory(emb), "--out", out] + (["--vocab", frac_vocab] if frac_vocab else [])
        elif frac_vocab:
            args = ["staticvec", "corpus", "restrict-embeddings", self.ase_layer_file(emb), "--vocab", frac_vocab,
                    "--out", out]
        else:
            args = ["ln", "-sfr", self.ase_layer_file(emb), out]
        return shlex.join(args)

    def ase_layer_file(self, emb: str) -> str:
        from staticvec.dag.teacher import teacher_traits

        layer = int(self.params(emb)["layer"])
        teacher = self.spec(emb).teacher
        depth = teacher_traits(self.teacher_model(teacher))["n_layers"]
        if layer < 0:
            layer += self.teacher_depth(teacher) + 1
        if depth is not None and layer > depth:  # a layer list written for another teacher (methods.ase.layers: MiniLM's 0-6)
            raise StaticvecError(f"embedding {emb!r}: layer {self.params(emb)['layer']}, but teacher {teacher!r} "
                                 f"({self.teacher_model(teacher)}) has layers 0-{depth}: set config methods.ase.layers "
                                 f"to its layers [0, ..., {depth}]")
        return str(Path(self.ase_directory(emb)).parent / f"layer-{layer:02d}.bin")

    def attention_sentence_args(self) -> str:
        """--sentence flags of the attention dump: the figures sheet's attention sentences."""
        import shlex

        figures = self.figures_sheet_entries()
        sentences = [f["sentence"] for f in figures.values() if f.get("kind") == "attention" and f.get("sentence")]
        return " ".join(f"--sentence {shlex.quote(x)}" for x in dict.fromkeys(sentences))

    def figures_sheet_entries(self) -> dict:
        from staticvec.config import load_yaml

        path = resolve_path(self.config.get("sheets", {}).get("figures", "config/figures.yaml"), self.root)
        return (load_yaml(path) or {}).get("figures", {}) if path.exists() else {}

    def frac(self, emb: str) -> str:
        """Path suffix of the embedding's corpus fraction: '' (whole corpus) or '.KofN' (first K of N shards)."""
        k = len(self.emb_shard_ids(emb))
        return "" if k == self.n_shards else f".{k}of{self.n_shards}"

    # ------------------------------------------------------------ evaluation
    def eval_markers(self, groups=None) -> list[str]:
        """The markers of the resource groups ``groups`` (default: those holding the evaluation data sets)."""
        return [self.resource_marker(g) for g in (eval_groups() if groups is None else groups)]

    def intrinsic_result(self, emb: str, seed="{seed}", protocol="{protocol}") -> str:
        return f"{self.results_dir}/eval/{emb}/seed{seed}/intrinsic.{protocol}.json"

    def seed_embeddings(self, seeds, emb: str = "{emb}") -> list[str]:
        """The vector files of ``seeds`` of an embedding, in that order (one intrinsic job reads them all)."""
        return [self.embedding(emb, s) for s in seeds]

    def intrinsic_outputs(self, protocols: tuple[str, ...], seeds: tuple[str, ...]) -> dict[str, str]:
        """The result files of one job scoring ``protocols`` of the ``seeds`` of an embedding, named
        ``PROTOCOL_seedS``."""
        return {self.intrinsic_output_name(p, s): self.intrinsic_result("{emb}", s, p) for s in seeds for p in protocols}

    @staticmethod
    def intrinsic_output_name(protocol: str, seed: str) -> str:
        return f"{protocol}_seed{seed}"

    @staticmethod
    def intrinsic_rule_name(protocols: tuple[str, ...], seeds: tuple[str, ...]) -> str:
        return "evaluate_intrinsic_" + "_".join(protocols) + "_seed" + "_".join(seeds)

    @staticmethod
    def ids_alternatives(ids) -> str:
        return alternatives(ids)

    @property
    def protocols_regex(self) -> str:
        return alternatives(self.config["evaluation"]["protocols"])

    def intrinsic_groups(self) -> dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]]:
        """Embeddings grouped by the protocols (config order) and the seeds (the embedding's order) the
        readers of intrinsic results read of them (``intrinsic_reads``): one evaluation job scores all
        those protocols of all those seeds of an embedding, importing its libraries and parsing the
        data sets once."""
        wanted: dict[str, tuple[set[str], set[str]]] = {}
        for paths, _ in self.intrinsic_reads():
            for emb, seed, protocol in map(self._intrinsic_result_parts, paths):
                protocols, seeds = wanted.setdefault(emb, (set(), set()))
                seeds.add(seed)
                protocols.add(protocol)
        order = list((self.config.get("evaluation") or {}).get("protocols", {}))
        groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
        for emb, (protocols, seeds) in wanted.items():
            seed_order = [str(s) for s in self.seeds(emb)]
            key = (tuple(sorted(protocols, key=lambda p: order.index(p) if p in order else len(order))),
                   tuple(sorted(seeds, key=lambda s: seed_order.index(s) if s in seed_order else len(seed_order))))
            groups.setdefault(key, []).append(emb)
        return groups

    def _intrinsic_result_parts(self, path: str) -> tuple[str, str, str]:
        """(embedding, seed, protocol) of an ``intrinsic_result`` path."""
        import re

        match = re.match(rf"^{re.escape(self.results_dir)}/eval/([^/]+)/seed([^/]+)/intrinsic\.([^/.]+)\.json$", path)
        if not match:
            raise ValueError(f"not an intrinsic result path: {path}")
        return match.group(1), match.group(2), match.group(3)

    def intrinsic_reads(self) -> list[tuple[list[str], set[str] | None]]:
        """What each reader of intrinsic results reads: (its intrinsic result files, the data-set keys
        it uses of them; None where it names a key this cannot place, i.e. every set). The readers:
        the chosen tables (intrinsic source), curve and bar figures, ASE's best-layer choice, the
        summary, each chosen claim (intrinsic source). The one enumeration behind ``intrinsic_groups``
        (which jobs) and ``intrinsic_sets`` (which sets)."""
        from staticvec.evaluate.datasets import DATASETS, TASKS
        from staticvec.sheets.claims import claim_metric_items, metric_items

        def data_sets(keys) -> set[str] | None:
            """Data set keys of a reader's column or metric keys (``ws353``, ``semeval2012.variants.web``);
            None: a key that is neither a data set nor a task."""
            keys = {str(key).split(".")[0] for key in keys}
            return keys if keys <= set(DATASETS) | set(TASKS) else None

        reads = []
        for table_id in self.selected("tables", list(self.tables)):
            entry = self.tables[table_id]
            if entry["source"] == "intrinsic":
                columns = entry.get("columns")  # a table without columns lists neighbours
                keys = {"neighbours"} if not columns else data_sets(v for v in columns.values() if isinstance(v, str))
                paths = [path for rid, path in self.table_results(table_id) if not rid.endswith("@record")]
                reads.append((paths, keys))
        for figure_id in self.selected("figures", list(self.figures)):
            entry = self.figures[figure_id]
            if entry["kind"] in ("curve", "bars"):
                reads.append(([path for _, path in self.figure_results(figure_id)], data_sets(entry["metrics"])))
        best_layer = (self.config.get("methods", {}).get("ase") or {}).get("best_layer")
        if best_layer:  # ASE's `layer: best` is chosen on these sets of the layer sweep
            reads.append(([path for _, path in self.ase_best_results()], data_sets(best_layer["metrics"])))
        if self.corpus_scale_targets():
            files = dict(self.corpus_scale_results())
            for panel in self.corpus_scale_panels():
                reads.append(([path for key, path in files.items() if key.startswith(panel["protocol"] + "/")],
                              data_sets(metric_items(panel["metric"]))))
        if self.summary_targets():
            from staticvec.sheets.figures import summary_columns_of

            reads.append(([path for _, path in self.summary_results()], data_sets(summary_columns_of(self.figures_spec))))
        for claim_id in self.selected_claims():
            claim = self.claims_spec["claims"][claim_id]
            if claim.get("source", "intrinsic") == "intrinsic":
                reads.append(([path for _, path in self.claim_results(claim_id)], data_sets(claim_metric_items(claim))))
        return reads

    def intrinsic_sets(self, emb: str) -> list[str] | None:
        """The data sets (and ``neighbours``) an intrinsic job scores of ``emb``: under ``evaluation.scope:
        read``, those its readers read — the summary's columns for a main embedding, each table's columns,
        each curve's or bar chart's metrics, each claim's metric, ASE's best-layer choice — within
        ``evaluation.tasks``; None (all of ``tasks``) under ``scope: all``, for an embedding no reader
        reads, or where a reader names a key this cannot place. Scores do not depend on which other sets
        a job computes."""
        if self._intrinsic_sets is None:
            self._intrinsic_sets = self._sets_read() if self.evaluation_scope == "read" else {}
        return self._intrinsic_sets.get(emb)

    @property
    def evaluation_scope(self) -> str:
        return (self.config.get("evaluation") or {}).get("scope", "all")

    def _sets_read(self) -> dict[str, list[str] | None]:
        from staticvec.evaluate.datasets import DATASETS, selected

        read: dict[str, set[str] | None] = {}
        for paths, keys in self.intrinsic_reads():
            for emb in dict.fromkeys(self._intrinsic_result_parts(path)[0] for path in paths):
                if read.get(emb, set()) is None:
                    continue
                read[emb] = None if keys is None else read.get(emb, set()) | keys

        def with_neighbours(tasks) -> set[str]:
            names, neighbours = selected(tasks)
            return set(names) | ({"neighbours"} if neighbours else set())

        allowed = with_neighbours((self.config.get("evaluation") or {}).get("tasks") or ["all"])
        order = list(DATASETS) + ["neighbours"]
        return {emb: None if keys is None else [k for k in order if k in with_neighbours(keys) & allowed]
                for emb, keys in read.items()}

    def classification_result(self, emb: str) -> str:
        return f"{self.results_dir}/eval/{emb}/classification.json"

    @property
    def contextual_id(self) -> str:
        """Result id of the default teacher's frozen contextual vectors (tables sheet: ``contextual``)."""
        return f"contextual-{(self.config.get('teacher') or {}).get('default', 'minilm')}"

    def tagging_result(self, emb: str) -> str:
        return f"{self.results_dir}/eval/{emb}/tagging.json"

    @property
    def table5_result(self) -> str:
        return f"{self.results_dir}/cooc/cooccurrence.table5.json"

    # ------------------------------------------------------------ tables
    @property
    def tables(self) -> dict:
        if self._tables is None:
            from staticvec.sheets.tables import load_tables_spec

            self._tables = load_tables_spec(resolve_path(self.tables_sheet, self.root), self.root,
                                           embedding_ids=self.sheet.ids() + list(self.sheet.disabled))["tables"]
        return self._tables

    def table_file(self, table_id: str, suffix: str = "md") -> str:
        paper, _, number = table_id.partition("_")
        return f"{self.results_dir}/tables/{paper}/{number}.{suffix}"

    def table_results(self, table_id: str) -> list[tuple[str, str]]:
        """(result id, result file) pairs a table reads: every seed of every row's embedding."""
        from staticvec.sheets.tables import table_result_ids

        entry = self.tables[table_id]
        source = entry["source"]
        if source == "cooccurrence":
            return [(rid, self.table5_result) for rid in table_result_ids(entry)]
        pairs = []
        for emb in table_result_ids(entry, self.sheet.ids()):
            if emb == CONTEXTUAL and source == "tagging":
                # the papers' BERT-base tagging row: the run's default teacher, frozen, through the same tagger
                if (self.config.get("tagging") or {}).get("contextual_baseline", False):
                    pairs.append((emb, self.tagging_result(self.contextual_id)))
                continue
            if emb not in self.sheet:
                continue  # a row the sheet does not build (e.g. a user-supplied GloVe 6B file)
            if source == "intrinsic":
                pairs += [(emb, self.intrinsic_result(emb, s, entry["protocol"])) for s in self.seeds(emb)]
                if entry.get("record_columns"):  # counts from the training record (SemGloVe Table 4's pairs)
                    pairs += [(f"{emb}@record", self.embedding_record(emb, s)) for s in self.seeds(emb)]
            elif source == "classification":
                pairs.append((emb, self.classification_result(emb)))
            elif source == "tagging":
                pairs.append((emb, self.tagging_result(emb)))
        return pairs

    def table_inputs(self, table_id: str) -> list[str]:
        return list(dict.fromkeys(path for _, path in self.table_results(table_id)))

    def table_result_args(self, table_id: str) -> str:
        import shlex

        pairs = self.table_results(table_id)
        reduced = self.reduced_args([rid for rid, _ in pairs], self.tables[table_id]["source"])
        return shlex.join(reduced + [f"{rid}={path}" for rid, path in pairs])

    def selected(self, kind: str, available: list[str]) -> list[str]:
        chosen = (self.config.get("targets") or {}).get(kind, "all")
        if chosen == "all":
            return list(available)
        unknown = [c for c in chosen if c not in available]
        if unknown:
            raise StaticvecError(f"config targets.{kind}: {unknown} are not in the {kind} sheet; known: {', '.join(available)}")
        return list(chosen)

    def table_targets(self) -> list[str]:
        return [self.table_file(t) for t in self.selected("tables", list(self.tables))]

    @property
    def run_manifest(self) -> str:
        """The run's full record (whole config and its hash, commit, corpus, teachers, seeds, training
        modes): a leaf of the DAG, remade on any config change without touching what it describes."""
        return f"{self.results_dir}/manifest.json"

    @property
    def provenance_file(self) -> str:
        """What every table's and figure's caption says of the run (corpus, teacher, seeds, code
        version): it depends on those settings only, so an unrelated config change reruns no table."""
        return f"{self.results_dir}/provenance.json"

    def provenance_args(self) -> str:
        import shlex

        teacher_cfg = self.config.get("teacher", {})
        default = teacher_cfg.get("default")
        teacher = f"{default} ({teacher_cfg.get('models', {}).get(default, default)})" if default else ""
        seeds = " ".join(str(s) for s in self.config.get("seeds") or [])
        return f"--teacher {shlex.quote(teacher)}" + (f" --seeds {seeds}" if seeds else "")

    # ------------------------------------------------------------ figures
    @property
    def figures_spec(self) -> dict:
        """The report sheet, checked against the embeddings sheet and the evaluation protocols."""
        if self._figures is None:
            from staticvec.sheets.figures import load_figures_spec

            protocols = (self.config.get("evaluation") or {}).get("protocols")
            self._figures = load_figures_spec(resolve_path(self.figures_sheet, self.root), self.sheet, protocols,
                                              self.root)
        return self._figures

    @property
    def figures(self) -> dict:
        return self.figures_spec["figures"]

    def figure_file(self, figure_id: str, suffix: str = "pdf") -> str:
        """{R}/figures/<paper>/<figure>.<suffix> (pdf, png, manifest.json)."""
        from staticvec.sheets.figures import figure_parts

        paper, name = figure_parts(figure_id)
        return f"{self.results_dir}/figures/{paper}/{name}.{suffix}"

    def figure_entry(self, figure_id: str) -> dict:
        try:
            return self.figures[figure_id]
        except KeyError:
            raise StaticvecError(f"{self.figures_sheet}: no figure {figure_id!r}; known: {', '.join(self.figures)}") from None

    def figure_results(self, figure_id: str) -> list[tuple[str, str]]:
        """(id, file) pairs a figure reads: every seed's evaluation of every point of a curve or bar
        chart; the first seed's vectors of every t-SNE panel."""
        entry = self.figure_entry(figure_id)
        if entry["kind"] in ("curve", "bars", "training"):
            sweep = self.sheet.sweeps[entry["sweep"]]
            ids = [sweep.variant_id(b, v) for b in entry.get("bases") or sweep.bases for v in sweep.values]
            if entry["kind"] == "training":  # the development curve is in each run's training record
                return [(i, self.embedding_record(i, s)) for i in ids for s in self.seeds(i)]
            return [(i, self.intrinsic_result(i, s, entry["protocol"])) for i in ids for s in self.seeds(i)]
        if entry["kind"] in ("tsne", "tsne3d"):
            return [(e, self.embedding(e, self.seeds(e)[0])) for e in entry["embeddings"]]
        return []

    def attention_dump(self, emb: str, seed="{seed}") -> str:
        """BERT + Skip-gram's attention weights a_j on the figure sentences (Wang et al. Figure 7)."""
        return f"{self.results_dir}/embeddings/{emb}/seed{seed}/attention.json"

    def figure_inputs(self, figure_id: str) -> dict:
        entry = self.figure_entry(figure_id)
        inputs = {"sheet": self.figures_sheet, "manifest": self.provenance_file,
                  "results": list(dict.fromkeys(path for _, path in self.figure_results(figure_id)))}
        if entry.get("x") == "tokens":
            inputs["corpus"] = self.manifest
        if entry.get("words") or entry.get("pairs"):
            inputs["words"] = entry.get("words") or entry.get("pairs")
        if entry["kind"] == "attention":
            inputs["attention"] = self.attention_dump(entry["embedding"], self.seeds(entry["embedding"])[0])
        return inputs

    def figure_args(self, figure_id: str) -> str:
        """What `staticvec report figure` needs beyond the rule's files: the sweep, the result pairs."""
        import dataclasses
        import shlex

        entry = self.figure_entry(figure_id)
        inputs = self.figure_inputs(figure_id)
        args = []
        if entry["kind"] in ("curve", "bars", "training"):
            args += ["--sweep", json.dumps(dataclasses.asdict(self.sheet.sweeps[entry["sweep"]]), default=str)]
        if "corpus" in inputs:
            args += ["--corpus-manifest", inputs["corpus"]]
        if "attention" in inputs:
            args += ["--attention", inputs["attention"]]
        args += self.reduced_args(rid for rid, _ in self.figure_results(figure_id))
        args += [f"{rid}={path}" for rid, path in self.figure_results(figure_id)]
        return shlex.join(args)

    def dev_curve_figure(self, emb: str) -> dict | None:
        """The `training` figure (a development curve over training) that draws this embedding, if any."""
        spec = self.spec(emb)
        for entry in self.figures.values():
            if entry["kind"] == "training" and spec.sweep == entry["sweep"]:
                sweep = self.sheet.sweeps[entry["sweep"]]
                if any(emb == sweep.variant_id(b, v) for b in entry.get("bases") or sweep.bases for v in sweep.values):
                    return entry
        return None

    def dev_curve_inputs(self, emb: str) -> dict:
        """The evaluation data a trainer scores during training (Wang Figure 5), as rule inputs."""
        return {"dev": self.resource_marker("eval-similarity")} if self.dev_curve_figure(emb) else {}

    def dev_curve_args(self, emb: str) -> str:
        """--dev-set/--dev-points/--dev-oov of a distillation trainer drawn by a `training` figure."""
        import shlex

        from staticvec.evaluate.datasets import DATASETS
        from staticvec.dag.arguments import data_dir_from_config

        entry = self.dev_curve_figure(emb)
        if entry is None:
            return ""
        protocol = (self.config.get("evaluation") or {}).get("protocols", {}).get(entry["protocol"], {})
        return shlex.join(["--dev-set", f"{data_dir_from_config(self.config)}/{DATASETS[entry['metrics'][0]].path}",
                           "--dev-points", str(entry["points"]), "--dev-oov", protocol.get("oov", "mean")])

    def figure_targets(self) -> list[str]:
        return [self.figure_file(f) for f in self.selected("figures", list(self.figures))]

    # ------------------------------------------------------------ summary
    @property
    def summary_protocols(self) -> list[str]:
        return (self.figures_spec.get("summary") or {}).get("protocols", ["web"])

    def summary_rows(self) -> list[dict]:
        """The summary's rows: every main embedding of the sheet (sweep variants left out), or those of
        ``targets.summary`` when it lists embedding ids; sheet order."""
        main = [e for e, s in self.sheet.entries.items() if s.sweep is None]
        chosen = (self.config.get("targets") or {}).get("summary", True)
        if isinstance(chosen, list):
            unknown = [e for e in chosen if e not in main]
            if unknown:
                raise StaticvecError(f"config targets.summary: {unknown} are not main embeddings of the embeddings "
                                     f"sheet (sweep points have no summary row); known: {', '.join(main)}")
            main = [e for e in main if e in chosen]
        return [{"id": e, "method": self.sheet[e].method, "description": self.sheet[e].description} for e in main]

    def summary_results(self) -> list[tuple[str, str]]:
        return [(f"{p}/{row['id']}", self.intrinsic_result(row["id"], s, p))
                for p in self.summary_protocols for row in self.summary_rows() for s in self.seeds(row["id"])]

    def summary_result_files(self) -> list[str]:
        return [path for _, path in self.summary_results()]

    def claims_result_files(self) -> list[str]:
        return [path for _, path in self.claims_results()]

    def summary_claims_args(self) -> str:
        return " ".join(f"--claims {path}" for path in self.summary_claims())

    @property
    def registry_file(self) -> str:
        return self.config["resources"]["registry"]

    @property
    def extract_processes(self) -> int:
        return self.config["corpus"]["extract_processes"]

    @property
    def min_count(self) -> int:
        return self.config["corpus"]["min_count"]

    def summary_file(self, suffix: str = "md") -> str:
        return f"{self.results_dir}/tables/summary.{suffix}"

    def summary_args(self) -> str:
        import shlex

        rows = json.dumps(self.summary_rows(), sort_keys=True)
        return shlex.join(["--rows", rows, *self.reduced_args(row["id"] for row in self.summary_rows()),
                           *(f"{rid}={path}" for rid, path in self.summary_results())])

    def summary_targets(self) -> list[str]:
        return [self.summary_file("md")] if (self.config.get("targets") or {}).get("summary", True) not in (False, []) else []

    # ------------------------------------------------------------ what a table or figure reads below the run's scale
    def reduced_inputs(self, ids, source: str = "intrinsic") -> dict:
        """For a caption: the embeddings among ``ids`` (result ids of a table or figure) that were made below
        the run's scale — trained on a fraction of the corpus that is not the value their own sweep varies
        (a development subset: the sheet's or config ``sweep_fractions``), seeded and trained with fewer seeds
        than the run's, or (``source`` tagging / classification) scored by fewer taggers or classifiers than
        the run's seeds. {"run_seeds": [...], "source": ..., "items": [{id, sweep, fraction, seeds,
        extrinsic_seeds}]}; no items when everything is at the run's scale."""
        items = []
        for rid in dict.fromkeys(ids):
            emb = rid.split("@")[0]
            item = {"id": emb}
            if source in ("tagging", "classification"):
                seeds = self.extrinsic_seeds(self.contextual_id if emb == CONTEXTUAL else emb, source)
                if len(seeds) < len(self.all_seeds):
                    item["extrinsic_seeds"] = seeds
            if emb in self.sheet:
                spec = self.spec(emb)
                sweep = self.sheet.sweeps.get(spec.sweep) if spec.sweep else None
                if spec.fraction < 1 and not (sweep is not None and sweep.param == "fraction"):
                    item["fraction"] = spec.fraction
                if source == "intrinsic" and self.is_random(emb) and len(self.seeds(emb)) < len(self.all_seeds):
                    item["seeds"] = self.seeds(emb)
                if len(item) > 1:
                    item["sweep"] = spec.sweep
            if len(item) > 1:
                items.append(item)
        return {"run_seeds": self.all_seeds, "source": source, "items": items}

    def reduced_args(self, ids, source: str = "intrinsic") -> list[str]:
        """``--reduced JSON`` of a report command (nothing when every input is at the run's scale)."""
        reduced = self.reduced_inputs(ids, source)
        return ["--reduced", json.dumps(reduced, sort_keys=True)] if reduced["items"] else []

    # ------------------------------------------------------------ corpus-size curves
    @property
    def corpus_scale_spec(self) -> dict:
        """The report sheet's ``corpus_scale`` block ({} when it has none)."""
        return self.figures_spec.get("corpus_scale") or {}

    def corpus_scale_sweep(self):
        return self.sheet.sweeps[self.corpus_scale_spec["sweep"]]

    def run_signature(self, emb: str) -> str:
        """What decides an embedding's run: method, resolved parameters, corpus fraction, teacher, what it
        post-processes and the development curve its trainer records (``same_run``'s identity)."""
        spec = self.spec(emb)
        return json.dumps([spec.method, self.params(emb), spec.fraction, spec.teacher, spec.base,
                           self.dev_curve_args(emb)], sort_keys=True, default=str)

    def equivalent(self, emb: str) -> str:
        """The first entry of the sheet (main entries first, then the sweeps' points in sheet order) whose run
        is ``emb``'s: a reader of a sweep point that repeats another entry's run reads that entry's results,
        so the corpus-size curve's whole-corpus points are the main rows and X2Static_para's fractions are
        X2Static Figure 1's."""
        if self._signatures is None:
            self._signatures = {}
            for eid in self.sheet.ids():
                self._signatures.setdefault(self.run_signature(eid), eid)
        return self._signatures.get(self.run_signature(emb), emb)

    def corpus_scale_points(self) -> dict[str, dict[str, str]]:
        """{base: {fraction (as the sweep writes it): the embedding whose first seed is that point}}."""
        sweep = self.corpus_scale_sweep()
        return {base: {f"{value:g}": self.equivalent(sweep.variant_id(base, value)) for value in sweep.values}
                for base in sweep.bases}

    def corpus_scale_panels(self) -> list[dict]:
        """The panels: the sheet's metrics, then (``claim_means``) one per distinct averaged metric of the
        selected intrinsic claims, each with its protocol, the claims that use it and the paper tables its
        numbers are read from (the claims' tables)."""
        from staticvec.sheets.claims import PAPERS

        scale = self.corpus_scale_spec
        panels = [{"metric": p["metric"], "protocol": p["protocol"], "claims": [], "tables": []} for p in scale["panels"]]
        if scale.get("claim_means"):
            claims = self.claims_spec["claims"]
            for cid in self.selected_claims():
                claim = claims[cid]
                metric = claim["metric"]
                if claim.get("source", "intrinsic") != "intrinsic" or not isinstance(metric, dict) or "mean" not in metric:
                    continue
                key = {"mean": list(metric["mean"])}
                panel = next((p for p in panels if p["metric"] == key and p["protocol"] == claim["protocol"]), None)
                if panel is None:
                    panel = {"metric": key, "protocol": claim["protocol"], "claims": [], "tables": [],
                             "paper": PAPERS.get(claim["paper"], claim["paper"])}
                    panels.append(panel)
                panel["claims"].append(cid)
                if claim.get("table") and claim["table"] not in panel["tables"]:
                    panel["tables"].append(claim["table"])
        return panels

    def corpus_scale_results(self) -> list[tuple[str, str]]:
        """(PROTOCOL/ID, file) pairs the curves read: the first seed of every point and line, per protocol
        (none when the report sheet has no corpus_scale block)."""
        scale = self.corpus_scale_spec
        if not scale:
            return []
        ids = [e for points in self.corpus_scale_points().values() for e in points.values()] + list(scale["lines"])
        protocols = list(dict.fromkeys(p["protocol"] for p in self.corpus_scale_panels()))
        return [(f"{p}/{e}", self.intrinsic_result(e, self.seeds(e)[0], p)) for p in protocols for e in dict.fromkeys(ids)]

    def corpus_scale_file(self, suffix: str) -> str:
        """{R}/tables/scale/corpus_scale.{md,csv} and {R}/figures/scale/corpus_scale.{pdf,png,manifest.json}."""
        kind = "tables" if suffix in ("md", "csv") else "figures"
        return f"{self.results_dir}/{kind}/scale/corpus_scale.{suffix}"

    def corpus_scale_targets(self) -> list[str]:
        wanted = (self.config.get("targets") or {}).get("corpus_scale", False) and self.corpus_scale_spec
        return [self.corpus_scale_file("md"), self.corpus_scale_file("pdf")] if wanted else []

    def corpus_scale_result_files(self) -> list[str]:
        return list(dict.fromkeys(path for _, path in self.corpus_scale_results()))

    def corpus_scale_args(self) -> str:
        """What `staticvec report corpus-scale` needs beyond its files: the sweep, the points, the panels."""
        import dataclasses
        import shlex

        if not self.corpus_scale_spec:
            return ""
        args = ["--sweep", json.dumps(dataclasses.asdict(self.corpus_scale_sweep()), default=str),
                "--points", json.dumps(self.corpus_scale_points()),
                "--panels", json.dumps(self.corpus_scale_panels()),
                *(f"{key}={path}" for key, path in self.corpus_scale_results())]
        return shlex.join(args)

    # ------------------------------------------------------------ claims
    @property
    def claims_spec(self) -> dict:
        """The claims sheet, checked against the embeddings sheet, the protocols and the tables sheet
        (an empty sheet when the config names none and config/claims.yaml does not exist)."""
        if self._claims is None:
            from staticvec.sheets.claims import load_claims_spec

            path = resolve_path(self.claims_sheet, self.root)
            if not path.exists() and "claims" not in self.config.get("sheets", {}):
                self._claims = {"claims": {}, "defaults": {}}
            else:
                protocols = (self.config.get("evaluation") or {}).get("protocols")
                self._claims = load_claims_spec(path, self.sheet.ids(), protocols, self.tables)
        return self._claims

    def selected_claims(self) -> list[str]:
        return self.selected("claims", list(self.claims_spec["claims"]))

    def claimed_embeddings(self) -> set[str]:
        """Embeddings the selected claims name, with what they are post-processed from; sweep points
        only with ``seed_sweeps`` (the papers' curves may stay at one seed)."""
        if self._claimed is None:
            from staticvec.sheets.claims import claimed_embeddings

            named = claimed_embeddings(self.claims_spec, self.sheet.ids(), set(self.selected_claims()))
            self._check_reduced_sweeps(named)
            named = [e for e in named if e in self.sheet and (self.seed_sweeps or self.sheet[e].sweep is None)]
            self._claimed = set(self.sheet.closure(named))
        return self._claimed

    def _check_reduced_sweeps(self, named) -> None:
        """A sweep that config ``sweep_fractions`` puts on a development subset must be read by no selected
        claim: the embeddings a claim reads train at the sheet's scale."""
        reduced = self.config.get("sweep_fractions") or {}
        hit = {e: self.sheet[e].sweep for e in named if e in self.sheet and self.sheet[e].sweep in reduced}
        if hit:
            from staticvec.sheets.claims import claimed_embeddings

            readers = [cid for cid in self.selected_claims()
                       if set(claimed_embeddings(self.claims_spec, self.sheet.ids(), {cid})) & set(hit)]
            raise StaticvecError(
                f"config key 'sweep_fractions': claim(s) {', '.join(readers)} read "
                + ", ".join(f"{e} (sweep {s})" for e, s in hit.items())
                + "; a sweep a claim reads keeps the sheet's corpus fraction")

    def extrinsic_seeds(self, emb: str, source: str) -> list[int]:
        """The seeds of the taggers (``source`` tagging) or classifiers (classification) of one row: the
        section's ``seeds`` where the config lists them; with ``seeds: null`` the run's seeds for the rows a
        selected claim of that source reads (``seeds_for: claims``; every row with ``all``), the first for
        the others. A tagging row of the teacher's frozen vectors (``contextual-<teacher>``) is the claims'
        ``contextual``."""
        from staticvec.sheets.claims import claim_refs, claimed_embeddings

        listed = (self.config.get(source) or {}).get("seeds")
        if listed:
            return list(listed)
        if self.seeds_for == "all":
            return self.all_seeds
        if source not in self._extrinsic_claimed:
            spec = self.claims_spec
            chosen = {cid for cid in self.selected_claims() if spec["claims"][cid].get("source") == source}
            named = set(claimed_embeddings(spec, self.sheet.ids(), chosen))
            named |= {CONTEXTUAL for cid in chosen if CONTEXTUAL in claim_refs(spec["claims"][cid])}
            self._extrinsic_claimed[source] = named
        key = CONTEXTUAL if emb == self.contextual_id else emb
        return self.all_seeds if key in self._extrinsic_claimed[source] else self.all_seeds[:1]

    def claims_file(self, suffix: str = "md") -> str:
        return f"{self.results_dir}/tables/claims.{suffix}"

    def claims_results(self) -> list[tuple[str, str]]:
        """(key, file) pairs the claims read: PROTOCOL/ID/SEED (every seed of every intrinsic result a
        claim can use), tagging/ID, classification/ID, record/ID/SEED (a training record: its development
        curve over the run)."""
        return list(dict.fromkeys(pair for cid in self.selected_claims() for pair in self.claim_results(cid)))

    def claim_results(self, claim_id: str) -> list[tuple[str, str]]:
        """(key, file) pairs one claim reads (see ``claims_results``)."""
        from staticvec.sheets.claims import claim_refs, expand_ref

        claim = self.claims_spec["claims"][claim_id]
        source = claim.get("source", "intrinsic")
        pairs = []
        for ref in claim_refs(claim):
            for emb in expand_ref(ref, self.sheet.ids()):
                if source == "intrinsic":
                    pairs += [(f"{claim['protocol']}/{emb}/{s}", self.intrinsic_result(emb, s, claim["protocol"]))
                              for s in self.seeds(emb)]
                elif source == "tagging":
                    rid = self.contextual_id if emb == CONTEXTUAL else emb
                    pairs.append((f"tagging/{emb}", self.tagging_result(rid)))
                elif source == "dev_curve":
                    pairs += [(f"record/{emb}/{s}", self.embedding_record(emb, s)) for s in self.seeds(emb)]
                else:
                    pairs.append((f"classification/{emb}", self.classification_result(emb)))
        return pairs

    def claims_args(self) -> str:
        import shlex

        named = {key.split("/")[1] for key, _ in self.claims_results()}
        random = sorted(e for e in named if e in self.sheet and self.is_random(e))
        return shlex.join(["--random", json.dumps(random), "--select", json.dumps(self.selected_claims()),
                           "--contextual-id", self.contextual_id,
                           *(f"{key}={path}" for key, path in self.claims_results())])

    def summary_claims(self) -> list[str]:
        """The claims' verdicts the summary's first lines count (none when no claim is selected)."""
        return [self.claims_file("json")] if self.selected_claims() else []

    def claims_groups(self) -> list[str]:
        """The groups of the selected claims, each drawn as a forest plot: the papers, in the papers'
        order, then "beyond" (the claims no paper makes)."""
        from staticvec.sheets.claims import GROUPS, group_of

        present = {group_of(self.claims_spec["claims"][cid]) for cid in self.selected_claims()}
        return [g for g in GROUPS if g in present]

    @property
    def claims_groups_regex(self) -> str:
        return alternatives(self.claims_groups())

    def claims_figure_file(self, group: str = "{group}", suffix: str = "pdf") -> str:
        return f"{self.results_dir}/figures/{group}/claims.{suffix}"

    def claims_targets(self) -> list[str]:
        if not self.selected_claims():
            return []
        return [self.claims_file("md"), *(self.claims_figure_file(g) for g in self.claims_groups())]

    # ------------------------------------------------------------ export (rule export: not built by default)
    def export_dir(self, emb: str = "{emb}", seed="{seed}") -> str:
        """Where ``staticvec export`` writes an embedding's vectors for other tools: ``vectors.kv`` (gensim) and
        ``model2vec/`` (Model2Vec, sentence-transformers), each seed its own."""
        return f"{self.results_dir}/export/{emb}/seed{seed}"

    def export_keyedvectors(self, emb: str = "{emb}", seed="{seed}") -> str:
        return f"{self.export_dir(emb, seed)}/vectors.kv"

    def export_model2vec(self, emb: str = "{emb}", seed="{seed}") -> str:
        return f"{self.export_dir(emb, seed)}/model2vec"

    def export_ids(self) -> str:
        """Wildcard constraint of the export rule: every embedding of the sheet."""
        return alternatives(self.sheet.ids())

    def export_scores(self, emb: str, seed) -> dict[str, str]:
        """The intrinsic results an export's model card quotes: the summary's protocols of that seed."""
        return {protocol: self.intrinsic_result(emb, seed, protocol) for protocol in self.summary_protocols}

    def export_args(self, emb: str) -> str:
        """The model card's flags of ``staticvec export``: the entry's id, method, description, teacher and
        corpus fraction (a post-processed embedding's teacher is its base's)."""
        import shlex

        spec = self.spec(emb)
        teacher_spec = spec
        while teacher_spec.teacher is None and teacher_spec.base:
            teacher_spec = self.spec(teacher_spec.base)
        args = ["--embedding", emb, "--method", spec.method, "--description", spec.description,
                "--fraction", f"{spec.fraction:g}"]
        if teacher_spec.teacher:
            args += ["--teacher", f"{teacher_spec.teacher} ({self.teacher_model(teacher_spec.teacher)})"]
        return shlex.join(args)

    # ------------------------------------------------------------ targets
    def final_targets(self) -> list[str]:
        return [self.manifest, self.vocab(), self.run_manifest, *self.table_targets(), *self.figure_targets(),
                *self.summary_targets(), *self.claims_targets(), *self.corpus_scale_targets()]


def _relative_to_pattern(match: str, pattern: str) -> str:
    """A match's path below the fixed directory part of its glob pattern (a plain path: its name), so that
    ``data/*/train.jsonl`` names its inputs ``a/train.jsonl``, ``b/train.jsonl``."""
    parts = Path(pattern).parts
    fixed = next((k for k, part in enumerate(parts) if glob.has_magic(part)), len(parts) - 1)
    if fixed == 0:
        return Path(match).as_posix()
    try:
        return Path(match).relative_to(Path(*parts[:fixed])).as_posix()
    except ValueError:
        return Path(match).name


def _safe_id(name: str) -> str:
    """A wildcard-safe id for an input file: path separators and dots become '-'."""
    name = re.sub(r"\.(xz|bz2|gz)$", "", name)
    return re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-")
