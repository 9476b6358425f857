"""The export stage of the plan (rule ``export``, not built by default): where an embedding's
vectors are written for gensim and Model2Vec, the scores its model card quotes and its flags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from staticvec.dag.common import alternatives

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class ExportPlan:
    """The export stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    results_dir: str
    sheet: EmbeddingSheet
    # what it calls of the other stages: spec (plan_embeddings); intrinsic_result (plan_evaluation);
    #   summary_protocols (plan_summary); teacher_model (plan_teachers)

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
