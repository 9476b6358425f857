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
from staticvec.errors import StaticvecError
from staticvec.resources import Member, Registry, check_available
from staticvec.report.tables import CONTEXTUAL  # tables sheet row of the teacher's own frozen tagging row
from staticvec.sheets import EmbeddingSheet, EmbeddingSpec


@dataclass(frozen=True)
class CorpusInput:
    id: str  # wildcard value, e.g. "AA-wiki_00"
    path: str  # the file the tokenize rule reads
    member: Member | None  # registry member (None for local files)
    kind: str  # "wikiextractor" or "pages-articles"


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
        # torch rules ask the scheduler for a GPU (SLURM: --gpus=1) when the run is on GPUs
        self.use_gpu = config.get("device") == "cuda" or bool(config.get("teacher", {}).get("gpu"))

    # ------------------------------------------------------------ resources
    def resource_path(self, member: Member) -> str:
        return f"{self.download_dir}/{member.rel_path}"

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
        """One error listing every needed input that is neither present nor downloadable."""
        members = [i.member for i in self.corpus_inputs() if i.member is not None]
        for gid in groups or []:
            members += self.registry.select(gid)
        check_available(members, self.mirror, self.download_dir, self.allow_download)

    # ------------------------------------------------------------ corpus
    def corpus_inputs(self) -> list[CorpusInput]:
        """The corpus input files, in corpus order."""
        if self._corpus_inputs is not None:
            return self._corpus_inputs
        corpus = self.config["corpus"]
        inputs = []
        if corpus.get("local_files"):
            for pattern in corpus["local_files"]:
                matches = sorted(glob.glob(str(resolve_path(pattern, self.root))))
                if not matches:
                    raise StaticvecError(f"config key 'corpus.local_files': {pattern!r} matches no file")
                inputs += [CorpusInput(_safe_id(Path(m).name), m, None, corpus["format"]) for m in matches]
        else:
            for member in self.registry.select(corpus["source"], corpus.get("members")):
                inputs.append(CorpusInput(_safe_id(member.name), self.resource_path(member), member, corpus["format"]))
        ids = [i.id for i in inputs]
        if len(set(ids)) != len(ids):
            raise StaticvecError("corpus inputs have clashing names; rename the local files")
        self._corpus_inputs = inputs
        return inputs

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
        return f"{self.corpus_dir}/shards/{shard_id}.tsv.gz"

    def shard_counts(self, shard_id: str) -> str:
        return f"{self.corpus_dir}/shards/{shard_id}.counts.tsv"

    def shards(self, fraction: float = 1.0) -> list[str]:
        return [self.shard(s) for s in self.shard_ids(fraction)]

    @property
    def manifest(self) -> str:
        return f"{self.corpus_dir}/manifest.json"

    def frac_shard_ids(self, frac: str) -> list[str]:
        """Shards of a fraction suffix: '' = all, '.KofN' = the first K/N of them."""
        if not frac:
            return self.shard_ids()
        match = re.fullmatch(r"\.(\d+)of(\d+)", frac)
        if not match:
            raise StaticvecError(f"corpus fraction {frac!r}: expected .KofN")
        k, n = int(match.group(1)), int(match.group(2))
        return self.shard_ids(k / n)

    def vocab_flags(self) -> str:
        """--min-count / --max-vocab of the corpus vocabulary, for commands that read it."""
        corpus = self.config["corpus"]
        flags = f"--min-count {corpus['min_count']}"
        return flags + (f" --max-vocab {corpus['max_vocab']}" if corpus.get("max_vocab") else "")

    def vocab(self, min_count: int | None = None) -> str:
        return f"{self.corpus_dir}/vocab.min{min_count or self.config['corpus']['min_count']}.tsv"

    def tokenize_flags(self) -> str:
        c = self.config["corpus"]
        return " ".join([
            "--lowercase" if c["lowercase"] else "--no-lowercase",
            "--keep-punctuation" if c.get("keep_punctuation", True) else "--no-keep-punctuation",
            "--split-hyphens" if c.get("split_hyphens", False) else "--no-split-hyphens",
            f"--min-sentence-tokens {c['min_sentence_tokens']}",
            f"--max-sentence-tokens {c['max_sentence_tokens']}",
        ])

    def budget_flag(self) -> str:
        budget = self.config["corpus"]["max_tokens"]
        return "" if budget is None else f"--max-tokens {budget}"

    def max_vocab_flag(self) -> str:
        size = self.config["corpus"].get("max_vocab")
        return "" if size is None else f"--max-size {size}"

    def corpus_description(self) -> str:
        corpus = self.config["corpus"]
        return json.dumps({
            "source": corpus.get("local_files") or corpus["source"],
            "format": corpus["format"],
            "members": corpus.get("members"),
            "lowercase": corpus["lowercase"],
            "sentence_tokens": [corpus["min_sentence_tokens"], corpus["max_sentence_tokens"]],
        })

    # ------------------------------------------------------------ embeddings
    def spec(self, emb: str) -> EmbeddingSpec:
        return self.sheet[emb]

    def seeds(self, emb: str) -> list[int]:
        """Seeds an embedding is trained with (deterministic methods: the first seed only;
        post-processing: its base's)."""
        spec = self.spec(emb)
        if spec.base:
            return self.seeds(spec.base)
        return self.all_seeds if spec.seeded else self.all_seeds[:1]

    def embedding(self, emb: str, seed="{seed}") -> str:
        return f"{self.results_dir}/embeddings/{emb}/seed{seed}/vectors.bin"

    def embedding_record(self, emb: str, seed="{seed}") -> str:
        return f"{self.results_dir}/embeddings/{emb}/seed{seed}/vectors.json"

    def embeddings_of(self, emb: str) -> list[str]:
        """Every seed's vectors of an embedding."""
        return [self.embedding(emb, s) for s in self.seeds(emb)]

    def ids_regex(self, *methods: str) -> str:
        """Wildcard constraint matching exactly the sheet ids of the given methods."""
        ids = [e for m in methods for e in self.sheet.ids(m)]
        return "|".join(re.escape(e) for e in sorted(ids, key=len, reverse=True)) or "(?!)"

    def emb_shard_ids(self, emb: str) -> list[str]:
        """The corpus shards an embedding is trained on (its fraction of the corpus)."""
        return self.shard_ids(self.spec(emb).fraction)

    def train_threads(self, emb: str) -> int:
        """Threads of a corpus-trained baseline's job: one when it must be deterministic (Hogwild
        updates from several threads make the vectors depend on timing), else its `threads`."""
        params = self.params(emb)
        return 1 if params.get("deterministic", True) else int(params.get("threads", 8))

    def teacher_model(self, teacher_id: str) -> str:
        try:
            return self.config["teacher"]["models"][teacher_id]
        except KeyError:
            raise StaticvecError(f"teacher {teacher_id!r} is not in config teacher.models") from None

    def teacher_width(self, teacher_id: str) -> int:
        from staticvec.teacher.plan import teacher_traits

        width = teacher_traits(self.teacher_model(teacher_id))["hidden_size"]
        if width is None:
            raise StaticvecError(
                f"'dim: teacher' needs the width of teacher {teacher_id!r} ({self.teacher_model(teacher_id)}), "
                "whose config.json is not available offline: download the model or set the dimension explicitly"
            )
        return int(width)

    def params(self, emb: str) -> dict:
        """The embedding's hyper-parameters, with `teacher` dimensions resolved to the teacher's width."""
        spec = self.spec(emb)
        params = dict(spec.params)
        if params.get("dim") == "teacher":
            params["dim"] = self.teacher_width(spec.teacher or self.config["teacher"]["default"])
        return params

    def teacher_depth(self, teacher_id: str) -> int:
        from staticvec.teacher.plan import teacher_traits

        depth = teacher_traits(self.teacher_model(teacher_id))["n_layers"]
        if depth is None:
            raise StaticvecError(f"the number of layers of teacher {teacher_id!r} is not known offline; download the model")
        return int(depth)

    def ase_directory(self, emb: str) -> str:
        """The ASE job's output (every layer) over the embedding's corpus fraction."""
        spec = self.spec(emb)
        return f"{self.results_dir}/teacher/{spec.teacher}/baselines/ase-{len(self.emb_shard_ids(emb))}of{self.n_shards}/ase.json"

    def ase_layer_file(self, emb: str) -> str:
        layer = int(self.params(emb)["layer"])
        if layer < 0:
            layer += self.teacher_depth(self.spec(emb).teacher) + 1
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

    def params_json(self, emb: str) -> str:
        return json.dumps(self.params(emb), sort_keys=True)

    def frac(self, emb: str) -> str:
        """Path suffix of the embedding's corpus fraction: '' (whole corpus) or '.KofN' (first K of N shards)."""
        k = len(self.emb_shard_ids(emb))
        return "" if k == self.n_shards else f".{k}of{self.n_shards}"

    def flags(self, settings: dict, exclude=()) -> str:
        """Command-line flags from a parameter mapping: key -> --key value, booleans -> --key / --no-key."""
        import shlex

        out = []
        for key, value in settings.items():
            if key in exclude:
                continue
            flag = "--" + key.replace("_", "-")
            if isinstance(value, bool):
                out.append(flag if value else "--no-" + flag[2:])
            elif isinstance(value, (list, tuple)):
                out += [flag, *map(str, value)]
            else:
                out += [flag, "none" if value is None else str(value)]
        return " ".join(shlex.quote(x) for x in out)

    # ------------------------------------------------------------ evaluation
    EVAL_GROUPS = ("eval-similarity", "eval-analogy-google", "eval-analogy-msr", "eval-semeval2012", "eval-categorization")

    @property
    def eval_data_dir(self) -> str:
        return f"{self.download_dir}/eval"

    def eval_markers(self, groups=EVAL_GROUPS) -> list[str]:
        return [self.resource_marker(g) for g in groups]

    def intrinsic_result(self, emb: str, seed="{seed}", protocol="{protocol}") -> str:
        return f"{self.results_dir}/eval/{emb}/seed{seed}/intrinsic.{protocol}.json"

    def intrinsic_groups(self) -> dict[tuple[str, ...], list[str]]:
        """Embeddings grouped by the protocols the chosen tables, figures and summary read of them
        (config order): one evaluation job scores all protocols of an embedding from one load."""
        import re

        wanted: dict[str, set[str]] = {}
        results = [r for t in self.selected("tables", list(self.tables)) for r in self.table_results(t)]
        results += [r for f in self.selected("figures", list(self.figures)) for r in self.figure_results(f)]
        if self.summary_targets():
            results += self.summary_results()
        pattern = re.compile(rf"^{re.escape(self.results_dir)}/eval/([^/]+)/seed[^/]+/intrinsic\.([^/.]+)\.json$")
        for _, path in results:
            match = pattern.match(path)
            if match:
                wanted.setdefault(match.group(1), set()).add(match.group(2))
        order = list((self.config.get("evaluation") or {}).get("protocols", {}))
        groups: dict[tuple[str, ...], list[str]] = {}
        for emb, protocols in wanted.items():
            key = tuple(sorted(protocols, key=lambda p: order.index(p) if p in order else len(order)))
            groups.setdefault(key, []).append(emb)
        return groups

    def extrinsic_result(self, emb: str, kind: str, seed="{seed}") -> str:
        return f"{self.results_dir}/eval/{emb}/seed{seed}/{kind}.json"

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
            from staticvec.report.tables import load_tables_spec

            self._tables = load_tables_spec(resolve_path(self.tables_sheet, self.root), self.root,
                                           embedding_ids=self.sheet.ids())["tables"]
        return self._tables

    def table_file(self, table_id: str, suffix: str = "md") -> str:
        paper, _, number = table_id.partition("_")
        return f"{self.results_dir}/tables/{paper}/{number}.{suffix}"

    def table_results(self, table_id: str) -> list[tuple[str, str]]:
        """(result id, result file) pairs a table reads: every seed of every row's embedding."""
        from staticvec.report.tables import table_result_ids

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
            elif source == "classification":
                pairs.append((emb, self.classification_result(emb)))
            elif source == "tagging":
                pairs.append((emb, self.tagging_result(emb)))
        return pairs

    def table_inputs(self, table_id: str) -> list[str]:
        return list(dict.fromkeys(path for _, path in self.table_results(table_id)))

    def table_result_args(self, table_id: str) -> str:
        import shlex

        return " ".join(shlex.quote(f"{rid}={path}") for rid, path in self.table_results(table_id))

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
        """Provenance of the run (config hash, commit, corpus, teachers, seeds): every table's caption."""
        return f"{self.results_dir}/manifest.json"

    # ------------------------------------------------------------ figures
    @property
    def figures_spec(self) -> dict:
        """The report sheet, checked against the embeddings sheet and the evaluation protocols."""
        if self._figures is None:
            from staticvec.report.figures import load_figures_spec

            protocols = (self.config.get("evaluation") or {}).get("protocols")
            self._figures = load_figures_spec(resolve_path(self.figures_sheet, self.root), self.sheet, protocols,
                                              self.root)
        return self._figures

    @property
    def figures(self) -> dict:
        return self.figures_spec["figures"]

    def figure_file(self, figure_id: str, suffix: str = "pdf") -> str:
        """{R}/figures/<paper>/<figure>.<suffix> (pdf, png, manifest.json)."""
        from staticvec.report.figures import figure_parts

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
        if entry["kind"] in ("curve", "bars"):
            sweep = self.sheet.sweeps[entry["sweep"]]
            ids = [sweep.variant_id(b, v) for b in entry.get("bases") or sweep.bases for v in sweep.values]
            return [(i, self.intrinsic_result(i, s, entry["protocol"])) for i in ids for s in self.seeds(i)]
        if entry["kind"] in ("tsne", "tsne3d"):
            return [(e, self.embedding(e, self.seeds(e)[0])) for e in entry["embeddings"]]
        return []

    def attention_dump(self, emb: str, seed="{seed}") -> str:
        """BERT + Skip-gram's attention weights a_j on the figure sentences (Wang et al. Figure 7)."""
        return f"{self.results_dir}/embeddings/{emb}/seed{seed}/attention.json"

    def figure_inputs(self, figure_id: str) -> dict:
        entry = self.figure_entry(figure_id)
        inputs = {"sheet": self.figures_sheet, "manifest": self.run_manifest,
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
        if entry["kind"] in ("curve", "bars"):
            args += ["--sweep", json.dumps(dataclasses.asdict(self.sheet.sweeps[entry["sweep"]]), default=str)]
        if "corpus" in inputs:
            args += ["--corpus-manifest", inputs["corpus"]]
        if "attention" in inputs:
            args += ["--attention", inputs["attention"]]
        args += [f"{rid}={path}" for rid, path in self.figure_results(figure_id)]
        return shlex.join(args)

    def figure_targets(self) -> list[str]:
        return [self.figure_file(f) for f in self.selected("figures", list(self.figures))]

    # ------------------------------------------------------------ summary
    @property
    def summary_protocols(self) -> list[str]:
        return (self.figures_spec.get("summary") or {}).get("protocols", ["web"])

    def summary_rows(self) -> list[dict]:
        """The summary's rows: every main embedding of the sheet (sweep variants left out), sheet order."""
        return [{"id": e, "method": s.method, "description": s.description}
                for e, s in self.sheet.entries.items() if s.sweep is None]

    def summary_results(self) -> list[tuple[str, str]]:
        return [(f"{p}/{row['id']}", self.intrinsic_result(row["id"], s, p))
                for p in self.summary_protocols for row in self.summary_rows() for s in self.seeds(row["id"])]

    def summary_file(self, suffix: str = "md") -> str:
        return f"{self.results_dir}/tables/summary.{suffix}"

    def summary_args(self) -> str:
        import shlex

        rows = json.dumps(self.summary_rows(), sort_keys=True)
        return shlex.join(["--rows", rows, *(f"{rid}={path}" for rid, path in self.summary_results())])

    def summary_targets(self) -> list[str]:
        return [self.summary_file("md")] if (self.config.get("targets") or {}).get("summary", True) else []

    # ------------------------------------------------------------ targets
    def final_targets(self) -> list[str]:
        return [self.manifest, self.vocab(), self.run_manifest, *self.table_targets(), *self.figure_targets(),
                *self.summary_targets()]


def _safe_id(name: str) -> str:
    """A wildcard-safe id for an input file: path separators and dots become '-'."""
    name = re.sub(r"\.(xz|bz2|gz)$", "", name)
    return re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-")
