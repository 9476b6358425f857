"""The corpus stage of the plan: the corpus inputs (registry members, the parts of a dump, or files
of one's own) and what is made of them — extracted, tokenized, sharded and counted files, the
vocabularies — with the flags of those commands.
"""

from __future__ import annotations

import glob
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from staticvec.config import resolve_path
from staticvec.dag.common import corpus_shard, corpus_vocab, fraction_shard_ids, vocab_args
from staticvec.errors import StaticvecError
from staticvec.resources import Member

if TYPE_CHECKING:
    from staticvec.resources import Registry


@dataclass(frozen=True)
class CorpusInput:
    id: str  # wildcard value, e.g. "AA-wiki_00"
    path: str  # the file the tokenize rule reads
    member: Member | None  # registry member (None for local files)
    kind: str  # "wikiextractor" or "pages-articles"
    index: Member | None = None  # multistream dump index (a dump extracted in parts)
    part: int | None = None  # which part of the dump (0-based), with ``parts`` in all
    parts: int | None = None


class CorpusPlan:
    """The corpus stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    root: Path
    results_dir: str
    registry: Registry
    _corpus_inputs: list[CorpusInput] | None
    # what it calls of the other stages: resource_path (plan_resources)

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

    def check_corpus_inputs(self) -> None:
        """Your own corpus (``corpus.local_files``), before any job: one error naming every input whose first lines
        ``corpus.format`` cannot read (JSON objects under ``text``, no ``<doc>`` under ``wikiextractor``), and
        every empty file or directory (:func:`staticvec.corpus.formats.format_problem`). The registry's inputs are
        checked by their checksums instead."""
        corpus = self.config["corpus"]
        if not corpus.get("local_files"):
            return
        from staticvec.corpus.formats import FORMATS, SourceFormat, format_problem

        if corpus["format"] not in FORMATS:
            return  # a dump of one's own (pages-articles): the extract job checks it is bz2 XML
        jsonl = corpus.get("jsonl") or {}
        fmt = SourceFormat(corpus["format"], corpus.get("paragraphs", "blank_lines"),
                           jsonl.get("text_field", "text"), jsonl.get("id_field", "id"))
        problems = [f"{item.path}: {problem}" for item in self.corpus_inputs()
                    if (problem := format_problem(item.path, fmt)) is not None]
        if problems:
            raise StaticvecError("corpus inputs (config corpus.local_files) that cannot be read as configured:\n  - "
                                 + "\n  - ".join(problems))

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

    @property
    def extract_processes(self) -> int:
        return self.config["corpus"]["extract_processes"]

    @property
    def min_count(self) -> int:
        return self.config["corpus"]["min_count"]


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
