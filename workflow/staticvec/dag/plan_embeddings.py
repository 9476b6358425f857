"""The embeddings stage of the plan: each sheet entry's resolved parameters, seeds, corpus fraction
and vocabulary, its vector and training-record files, the wildcard constraints of the rules that
train embeddings, and which sweep points repeat their base's run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from staticvec.dag.common import alternatives
from staticvec.sheets import EmbeddingSpec

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class EmbeddingsPlan:
    """The embeddings stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    results_dir: str
    sheet: EmbeddingSheet
    all_seeds: list[int]
    seeds_for: str
    # what it calls of the other stages: claimed_embeddings (plan_claims); n_shards, shard_ids, vocab
    #   (plan_corpus); dev_curve_args (plan_figures); teacher_width (plan_teachers)

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

    # ------------------------------------------------------------ Tokenlearn's distillation, once for its seeds
    def tokenlearn_distillation(self, emb: str) -> str:
        """The Tokenlearn entry whose distillation ``emb``'s seeds train from: the first of the sheet (in sheet order)
        with the same teacher, corpus fraction and ``DISTILLATION_KEYS`` (``staticvec.train.tokenlearn``), and the
        same torch threads (the forward passes' floating point): one distillation per (teacher, width, vocabulary
        and its texts), whatever the seeds and the training's own parameters (``max_epochs``)."""
        key = self._tokenlearn_distillation_key(emb)
        return next(other for other in self.sheet.ids("tokenlearn") if self._tokenlearn_distillation_key(other) == key)

    def _tokenlearn_distillation_key(self, emb: str) -> tuple:
        from staticvec.train.tokenlearn import DISTILLATION_KEYS

        spec, params = self.spec(emb), self.params(emb)
        return (spec.teacher or self.config["teacher"]["default"], tuple(self.emb_shard_ids(emb)),
                tuple((key, params.get(key)) for key in (*DISTILLATION_KEYS, "threads")))

    def tokenlearn_distilled(self, emb: str = "{emb}") -> str:
        """The distilled model (a directory) of the Tokenlearn entry ``emb`` names (:meth:`tokenlearn_distillation`)."""
        return f"{self.results_dir}/embeddings/{emb}/distilled"

    def tokenlearn_distillation_ids(self) -> str:
        """Wildcard constraint of the distillation rule: the entries that name a distillation."""
        return alternatives(sorted({self.tokenlearn_distillation(e) for e in self.sheet.ids("tokenlearn")}))

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

    def frac(self, emb: str) -> str:
        """Path suffix of the embedding's corpus fraction: '' (whole corpus) or '.KofN' (first K of N shards)."""
        k = len(self.emb_shard_ids(emb))
        return "" if k == self.n_shards else f".{k}of{self.n_shards}"

    def emb_vocab(self, emb: str) -> str:
        """The vocabulary an embedding is trained on: its corpus fraction's own (Figure 2b,
        X2Static Figure 1, Wang Figures 4-5), so it holds only words of its fraction."""
        return self.vocab(self.params(emb).get("min_count"), self.frac(emb))
