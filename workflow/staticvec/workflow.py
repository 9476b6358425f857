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
        """Seeds an embedding is trained with (deterministic methods: the first seed only)."""
        return self.all_seeds if self.spec(emb).seeded else self.all_seeds[:1]

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

    def params_json(self, emb: str) -> str:
        return json.dumps(self.params(emb), sort_keys=True)

    # ------------------------------------------------------------ targets
    def final_targets(self) -> list[str]:
        return [self.manifest, self.vocab()]


def _safe_id(name: str) -> str:
    """A wildcard-safe id for an input file: path separators and dots become '-'."""
    name = re.sub(r"\.(xz|bz2|gz)$", "", name)
    return re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-")
