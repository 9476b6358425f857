"""Paths and command-line flags of the SemGloVe co-occurrence rules (``workflow/rules/semglove.smk``).

Builders are configured in ``cooc.semglove``; training (GloVe on a variant's store) is the
embeddings sheet's ``semglove`` entries, trained by ``train_glove.smk``.

Files (``{frac}`` is empty for the whole corpus, ``.{k}of{n}`` for its first k of n equal parts —
Figure 2b's corpus sizes — which needs ``n`` to divide the number of corpus shards)::

    {R}/cooc/semglove/{v}/shards/{shard}.cooc   one corpus shard's counts (every builder variant of the
                                                shard from one job: attention → word store, MLM → piece store),
                                                or a run of shards' (``{shard}`` = ``AAAAA-BBBBB``, both
                                                included) where one job builds several (:attr:`part_size`)
    {R}/cooc/semglove/{v}/pieces{frac}.cooc     MLM variants: merged piece store
    {R}/cooc/semglove/{v}/words{frac}.cooc      attention variants on a fraction: merged, corpus vocabulary ids
    {R}/cooc/semglove/{v}{frac}.cooc            the variant's word store (GloVe's input), over the vocabulary of
                                                its corpus fraction (corpus/vocab.min{m}{frac}.tsv): a fraction's
                                                embedding holds only the fraction's words
    {R}/cooc/window{S}{frac}.cooc               GloVe's window counts (sdR values; the released code's gate)
    {R}/cooc/cooccurrence.table5.json           Table 5 pair counts (the tables sheet's cooccurrence result)
"""

from __future__ import annotations

import shlex

from staticvec.dag.common import (alternatives, corpus_vocab, device_flags, fraction_shard_ids, online_flags, temporary,
                                   vocab_args)
from staticvec.errors import StaticvecError



class SemgloveRules:
    def __init__(self, config: dict):
        from staticvec.dag.teacher import TeacherPlan, teacher_traits

        self.config = config
        self.sc = config["cooc"]["semglove"]
        self.results = config["results_dir"].rstrip("/")
        self.tp = TeacherPlan(config)
        self.teacher = self.sc.get("teacher") or config["teacher"]["default"]
        self.tp.model(self.teacher)  # a clear error for an unknown teacher id
        self.fset = self.sc["feature_set"]
        fs = self.tp.feature_set(self.fset)
        self.variants = self.sc["variants"]
        by = {"attention": [], "mlm": [], "window_counts": []}
        for name, v in self.variants.items():
            by[v["source"]].append(name)
        self.attention, self.mlm, self.restricted = by["attention"], by["mlm"], by["window_counts"]
        for name in self.restricted:
            if self.variants[name]["pairs_of"] not in self.attention:
                raise StaticvecError(f"config cooc.semglove.variants.{name}.pairs_of: "
                                     f"{self.variants[name]['pairs_of']!r} is not an attention variant")
        S = int(self.sc["window"])
        if self.attention and int(fs.get("attention_window") or 0) < S:
            raise StaticvecError(f"config teacher.feature_sets.{self.fset}.attention_window must be ≥ "
                                 f"cooc.semglove.window ({S}) for the attention variants")
        if self.mlm and not fs.get("mlm_topk"):
            raise StaticvecError(f"config teacher.feature_sets.{self.fset} has no mlm_topk: the MLM variants need it")
        if self.mlm and teacher_traits(self.tp.model(self.teacher))["causal"]:
            key = "cooc.semglove.teacher" if self.sc.get("teacher") else "teacher.default"
            raise StaticvecError(
                f"config {key} = {self.teacher!r} ({self.tp.model(self.teacher)}) is a causal LM: SemGloVe's MLM "
                f"variants ({', '.join(self.mlm)}) need masked-LM predictions, which a causal LM has none of; set "
                "cooc.semglove.teacher to an encoder teacher of teacher.models (one without an MLM head gets a fitted one)")
        self.builders = self.attention + self.mlm
        # corpus shards per builder job: 1, or where each job runs the teacher on a GPU (recompute mode)
        # enough shards for a GPU allocation that carries work (staticvec.dag.costs; set by RuleFunctions)
        self.part_size = 1

    # ------------------------------------------------------------ wildcard constraints
    @staticmethod
    def _alternatives(names) -> str:
        return alternatives(names)

    @property
    def attention_regex(self) -> str:
        return self._alternatives(self.attention)

    @property
    def mlm_regex(self) -> str:
        return self._alternatives(self.mlm)

    @property
    def restricted_regex(self) -> str:
        return self._alternatives(self.restricted)

    FRACTION_REGEX = r"(\.\d+of\d+)?"

    # ------------------------------------------------------------ paths
    @property
    def dir(self) -> str:
        return f"{self.results}/cooc/semglove"

    def shard_store(self, variant: str, shard: str) -> str:
        return f"{self.dir}/{variant}/shards/{shard}.cooc"

    @property
    def keep_shard_stores(self) -> bool:
        """``cooc.keep_shard_stores``: false marks the per-shard (per-part) stores temporary: deleted once
        every merge that reads them has run (paper.yaml: they are only the merges' inputs)."""
        return bool(self.config["cooc"].get("keep_shard_stores", True))

    def _shard_output(self, path: str):
        return temporary(path, not self.keep_shard_stores)

    def shard_outputs(self) -> dict:
        """Named outputs of the per-shard job (a ``{shard}`` wildcard left in)."""
        return {v: self._shard_output(self.shard_store(v, "{shard}")) for v in self.builders}

    def window_shard_output(self):
        """The output of a window-count shard job (temporary unless cooc.keep_shard_stores)."""
        return self._shard_output(self.window_shard_store())

    def store(self, variant: str, frac: str = "") -> str:
        return f"{self.dir}/{variant}{frac}.cooc"

    def attention_merged(self, variant: str, frac: str) -> str:
        """An attention variant's merged shard stores of a fraction, still on the corpus vocabulary."""
        return f"{self.dir}/{variant}/words{frac}.cooc"

    def pieces(self, variant: str, frac: str = "") -> str:
        return f"{self.dir}/{variant}/pieces{frac}.cooc"

    def window_store(self, frac: str = "", window: int | None = None) -> str:
        """GloVe's window counts (window S by default: SemGloVe's; GloVe entries pass their own)."""
        return f"{self.results}/cooc/window{self.sc['window'] if window is None else window}{frac}.cooc"

    def window_shard_store(self, shard: str = "{shard}", frac: str = "{frac}", window="{window}") -> str:
        """One shard's window counts, with the vocabulary of the corpus ('') or of a fraction ('.KofN')."""
        return f"{self.results}/cooc/window{window}{frac}/shards/{shard}.cooc"

    def window_shard_stores(self, frac: str, window) -> list[str]:
        return [self.window_shard_store(s, frac, window) for s in self.shard_ids(frac)]

    def table5_pairs(self) -> str:
        """The paper's Table 5 word pairs (and its counts), which the pair-count job looks up."""
        return "resources/paper_tables/semglove_table5.csv"

    def table5(self) -> str:
        return f"{self.results}/cooc/cooccurrence.table5.json"

    def shard_ids(self, frac: str = "") -> list[str]:
        """The corpus shards of a fraction suffix ('' = all; '.3of8' = the first 3/8 of them)."""
        return fraction_shard_ids(frac, self.tp.n_shards)

    # ------------------------------------------------------------ builder jobs: a shard or a run of shards
    PART_REGEX = r"\d{5}(-\d{5})?"

    def set_part_size(self, size: int, fraction_shards: list[int]) -> None:
        """Builder jobs over ``size`` shards each; ``size`` must divide the shard count of every corpus
        fraction whose stores are merged (``fraction_shards``), so that a fraction is whole parts."""
        for k in fraction_shards:
            if k % size:
                raise StaticvecError(f"{size} shards per SemGloVe builder job do not divide a fraction of {k} shards")
        self.part_size = int(size)

    def part_ids(self, frac: str = "") -> list[str]:
        """The builder jobs' ids over a fraction: its shards, or runs of part_size shards (``AAAAA-BBBBB``)."""
        shards = self.shard_ids(frac)
        if self.part_size == 1:
            return shards
        return [f"{shards[i]}-{shards[i + self.part_size - 1]}" for i in range(0, len(shards), self.part_size)]

    @staticmethod
    def part_shards(part: str) -> list[str]:
        """The corpus shards of a builder job's id."""
        first, _, last = part.partition("-")
        return [f"{i:05d}" for i in range(int(first), int(last or first) + 1)]

    def part_shard_count(self, part: str) -> int:
        return len(self.part_shards(part)) if part else self.part_size

    def shard_stores(self, variant: str, frac: str = "") -> list[str]:
        return [self.shard_store(variant, p) for p in self.part_ids(frac)]

    # ------------------------------------------------------------ inputs and flags of the shard job
    @property
    def recompute(self) -> bool:
        return self.tp.recompute

    def shard_inputs(self, part: str) -> dict:
        """A builder job's inputs: its shards' stored features, or its corpus shards (recompute mode)."""
        inputs = {"vocab": self.vocab()}
        shards = self.part_shards(part)
        if self.recompute:
            inputs["shard"] = [self.tp.corpus_shard(s) for s in shards]
            if self.mlm and self.tp.uses_fitted_head(self.teacher, self.fset):
                inputs["head"] = self.tp.mlm_head(self.teacher)
        else:
            inputs["features"] = [self.tp.features(self.teacher, self.fset, s) for s in shards]
        return inputs

    def vocab(self, frac: str = "") -> str:
        """The corpus vocabulary (the teacher features' word ids are its rows), or a fraction's own."""
        return corpus_vocab(self.results, self.config["corpus"]["min_count"], frac)

    def vocab_args(self) -> list[str]:
        return vocab_args(self.config)

    def vocab_flags(self) -> str:
        return " ".join(self.vocab_args())

    def teacher_args(self) -> list[str]:
        return ["--teacher", self.tp.model(self.teacher), *online_flags(self.config)]

    def shard_args(self, outputs: dict[str, str] | None = None) -> str:
        """Flags of ``staticvec cooc semglove`` for one shard (``outputs``: variant → path)."""
        outputs = outputs or self.shard_outputs()
        args = self.vocab_args() + ["--window", str(self.sc["window"]), "--drop-target", self.sc.get("drop_target", "auto"),
                                    "--memory-gb", str(self.sc.get("memory_gb", 2.0))]
        if self.mlm or self.recompute:
            args += self.teacher_args()
        if self.recompute:
            tc, fs = self.config["teacher"], self.tp.feature_set(self.fset)
            args += [*device_flags(self.config), "--dtype", tc.get("dtype", "auto"),
                     "--batch-tokens", str(tc["batch_tokens"]), "--part-sentences", str(tc["part_sentences"]),
                     "--mlm-topk", str(fs.get("mlm_topk") or 0), "--mlm-mode", tc.get("mlm_mode", "auto"),
                     "--mlm-masking", tc.get("mlm_masking", "whole_word")]
            if tc.get("max_length"):
                args += ["--max-length", str(tc["max_length"])]
        for name in self.builders:
            v = self.variants[name]
            args += [f"--{v['source']}", str(v["top"]), v["weight"], outputs[name]]
        return shlex.join(args)

    def shard_flags(self, wildcards, input, output) -> str:
        """All flags of one shard's job (a Snakemake params function): the source (stored features,
        or the corpus shard to recompute them from), the fitted MLM head where one is read, the builders."""
        source = f"--shard {input.shard}" if self.recompute else f"--features {input.features}"
        head = f" --mlm-head {input.head}" if "head" in input.keys() else ""
        return source + head + " " + self.shard_args({v: output[v] for v in self.builders})

    @property
    def gpu(self) -> bool:
        """The shard jobs run the teacher (recompute mode) on a GPU node."""
        return bool(self.config["teacher"].get("gpu")) and self.recompute

    @property
    def memory_gb(self) -> float:
        return self.sc.get("memory_gb", 2.0)

    def shard_memory_mb(self) -> int:
        """The shard job's memory request: the builders' budget, plus the teacher in recompute mode."""
        return int(self.memory_gb * 1024 * 1.25) + 2048 + (16000 if self.recompute else 0)

    def merge_memory_mb(self) -> int:
        return int(self.config["cooc"]["merge_memory_gb"] * 1024 * 1.25) + 1024

    def _store_args(self, memory_gb: float) -> list[str]:
        cooc = self.config["cooc"]
        tmp = ["--tmp-dir", str(cooc["tmp_dir"])] if cooc.get("tmp_dir") else []
        return ["--memory-gb", str(memory_gb), "--max-open", str(cooc["max_open_files"]), *tmp]

    def merge_args(self) -> str:
        """Flags of ``staticvec cooc merge`` (window counts and SemGloVe's shard stores alike)."""
        return shlex.join(self._store_args(self.config["cooc"]["merge_memory_gb"]))

    def window_count_args(self) -> str:
        """Flags of ``staticvec cooc window`` (one shard's counts; spills to the temporary directory)."""
        return shlex.join(self._store_args(self.config["cooc"]["memory_gb"]))

    def window_count_memory_mb(self) -> int:
        return int(self.config["cooc"]["memory_gb"] * 1024 * 1.25) + 1024

    def subset_args(self) -> str:
        """Flags of ``staticvec cooc subset`` (a fraction's store on its own vocabulary)."""
        return shlex.join(self.vocab_args() + ["--memory-gb", str(self.config["cooc"]["merge_memory_gb"])])

    def words_memory_mb(self) -> int:
        return int(self.memory_gb * 1024 * 2) + 2048

    def words_args(self, frac: str = "") -> str:
        """Flags of ``staticvec cooc semglove-words`` (pieces → words)."""
        args = self.vocab_args() + self.teacher_args()
        if self.sc.get("gate_by_window"):
            args += ["--gate", self.window_store(frac), "--gate-min", str(self.sc.get("gate_min", 1.0))]
        return shlex.join(args)

    def words_inputs(self, variant: str, frac: str = "") -> dict[str, str]:
        inputs = {"pieces": self.pieces(variant, frac), "vocab": self.vocab(frac)}
        if self.sc.get("gate_by_window"):
            inputs["gate"] = self.window_store(frac)
        return inputs
