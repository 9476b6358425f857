"""The paths the rules name that no other planning object owns: each rule's log and benchmark file, and
the outputs that are a rule's own business (checkpoints, models kept beside the vectors, per-rule
side files). The rules hold no path literal; they call these (``P`` in the rule files), the sheets'
paths (``W``), the teacher's (``TP``) or SemGloVe's (``SG``).

Every file of a run lives under ``results_dir``; a rule's log is ``logs/<stem>.log`` and its benchmark
``benchmarks/<stem>.tsv``, with the same stem, so a job's time and its log are found together.
"""

from __future__ import annotations

# rule (or family of rules) -> the stem of its log and benchmark, with the rule's wildcards
LOG_STEMS = {
    "extract_dump": "corpus/extract/{corpus_input}",
    "tokenize": "corpus/tokenize/{corpus_input}",
    "prepare_corpus": "corpus/prepare",
    "vocabulary": "corpus/vocab.min{min_count}{frac}",
    "cooc_window_shard": "cooc/window{window}{frac}/{shard}",
    "cooc_window_merge": "cooc/window{window}{frac}.merge",
    "semglove_cooc_shard": "cooc/semglove/shards/{shard}",
    "semglove_merge_attention": "cooc/semglove/{variant}.merge",
    "semglove_merge_attention_fraction": "cooc/semglove/{variant}{frac}.merge",
    "semglove_attention_fraction_vocab": "cooc/semglove/{variant}{frac}.subset",
    "semglove_merge_pieces": "cooc/semglove/{variant}/pieces{frac}.merge",
    "semglove_words": "cooc/semglove/{variant}{frac}.words",
    "semglove_restrict": "cooc/semglove/{variant}{frac}.restrict",
    "semglove_table5_counts": "cooc/semglove/table5",
    "teacher_mlm_head": "teacher/{teacher}/mlm_head",
    "teacher_features": "teacher/{teacher}/features/{fset}/{shard}",
    "teacher_ase": "teacher/{teacher}/ase-{k}of{n}",
    "ase_best_layer": "teacher/{teacher}/ase-best-layer",
    "train": "train/{emb}/seed{seed}",  # every rule that writes an embedding of the sheet
    "tokenlearn_distill": "train/{emb}/distilled",  # Tokenlearn's seed-free start, once for its seeds
    "same_run": "train/{emb}/seed{seed}.same-run",  # a sweep point that is its base's run, copied
    "bert_sg_attention": "train/{emb}/seed{seed}.attention",
    "post_wordnet_lexicon": "post/wordnet-{relations}",
    "post": "post/{emb}/seed{seed}",  # retrofitting and Artetxe's transform
    "evaluate_intrinsic": "eval/{emb}/seed{seed}/intrinsic.{protocol}",
    "evaluate_intrinsic_seeds": "eval/{emb}/intrinsic.{protocol}.seed{seeds}",  # groups joined by '+': web+muse.seed1+2+3
    "classification": "eval/{emb}/classification",
    "tag": "eval/{emb}/tagging/{task}.seed{seed}",
    "tag_contextual": "eval/contextual-{teacher}/tagging/{task}.seed{seed}",
    "tag_summary": "eval/{emb}/tagging.summary",
    "paper_table": "tables/{paper}/{table}",
    "summary_table": "tables/summary",
    "claims": "tables/claims",
    "claims_figure": "figures/{group}/claims",
    "corpus_scale": "tables/scale/corpus_scale",
    "figure": "figures/{paper}/{figure}",
    "provenance": "report/provenance",
    "run_manifest": "report/manifest",
    "export": "export/{emb}/seed{seed}",
    "fetch_file": "resources/{rel_path}",
    "fetch_group": "resources/{group}",
}


def fill(pattern: str, **values) -> str:
    """``pattern`` with the named wildcards replaced and every other ``{wildcard}`` left for Snakemake;
    a tuple of values is joined by '+' (the protocols and seeds one intrinsic job scores)."""
    for name, value in values.items():
        pattern = pattern.replace("{" + name + "}", "+".join(value) if isinstance(value, (tuple, list)) else str(value))
    return pattern


class RulePaths:
    def __init__(self, results_dir: str):
        self.R = results_dir

    # ------------------------------------------------------------ logs and benchmarks
    def log(self, rule: str, **values) -> str:
        return fill(f"{self.R}/logs/{LOG_STEMS[rule]}.log", **values)

    def benchmark(self, rule: str, **values) -> str:
        return fill(f"{self.R}/benchmarks/{LOG_STEMS[rule]}.tsv", **values)

    # ------------------------------------------------------------ a rule's own outputs
    def embedding_file(self, name: str, emb: str = "{emb}", seed="{seed}") -> str:
        """A file kept beside an embedding's vectors (checkpoint, model, attention dump, retrofit report)."""
        return f"{self.R}/embeddings/{emb}/seed{seed}/{name}"

    def checkpoint(self, suffix: str) -> str:
        """A training job's checkpoint (``npz`` GloVe, ``pt`` the students): survives a killed job, resumed."""
        return self.embedding_file(f"checkpoint.{suffix}")

    def table_file(self, suffix: str, paper: str = "{paper}", table: str = "{table}") -> str:
        return f"{self.R}/tables/{paper}/{table}.{suffix}"

    def figure_file(self, suffix: str, paper: str = "{paper}", figure: str = "{figure}") -> str:
        return f"{self.R}/figures/{paper}/{figure}.{suffix}"

    def wordnet_lexicon(self, relations: str = "{relations}") -> str:
        return f"{self.R}/post/lexicons/wordnet-{relations}.txt"

    def tagging_table(self, emb: str = "{emb}") -> str:
        """The per-task mean ± std over seeds of one embedding's taggers, as CSV (the JSON is W.tagging_result)."""
        return f"{self.R}/eval/{emb}/tagging.csv"

    def tagging_run(self, emb: str = "{emb}", task: str = "{task}", seed="{seed}") -> str:
        """One tagger run's result: an embedding (or contextual-<teacher>) on a task with a seed."""
        return f"{self.R}/eval/{emb}/tagging/{task}.seed{seed}.json"
