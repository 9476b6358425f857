"""The export stage of the plan (rule ``export``, not built by default): where an embedding's
vectors are written for gensim and Model2Vec, the scores its model card quotes and its flags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from staticvec.errors import StaticvecError

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class ExportPlan:
    """The export stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    results_dir: str
    sheet: EmbeddingSheet
    all_seeds: list[int]
    config: dict
    # what it calls of the other stages: spec, is_random (plan_embeddings); intrinsic_result (plan_evaluation);
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
        """Wildcard constraint of the export rule: any one path component, so that an id not in the sheet reaches
        :meth:`check_export` (which lists the sheet's ids) rather than Snakemake's "no rule to produce"."""
        return r"[^/]+"

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

    def check_export(self, emb: str, seed: str) -> None:
        """An export asked for (the export rule's input function, before any job): an embedding id of the sheet
        (else the ids it has), a seed of config ``seeds`` (an export of another would train it), and for a
        deterministic entry (Model2Vec, a teacher's own vectors) the run's first seed, its only run."""
        sheet = (self.config.get("sheets") or {}).get("embeddings", "config/embeddings.yaml")
        target = f"{self.export_dir(emb, seed)}/"
        if emb not in self.sheet.ids():
            import difflib

            entries = [e for e in self.sheet.ids() if "~" not in e]  # a sweep point is <entry>~<param><value>
            close = difflib.get_close_matches(emb, self.sheet.ids(), n=1)
            raise StaticvecError(f"{target}: {emb!r} is not an embedding of {sheet}"
                                 + (f" (did you mean {close[0]!r}?)" if close else "")
                                 + f"; an export takes one of its entries: {', '.join(entries)}, or a sweep point "
                                 f"(<entry>~<param><value>, {len(self.sheet.ids()) - len(entries)} in the sheet)")
        seed, first = int(seed), self.all_seeds[0]
        if not self.is_random(emb) and seed != first:
            raise StaticvecError(f"{target}: {emb} ({self.spec(emb).method}) is deterministic, its one run is seed "
                                 f"{first} (the first of config key 'seeds'): export {self.export_dir(emb, first)}/")
        if seed not in self.all_seeds:
            raise StaticvecError(f"{target}: seed {seed} is not one of config key 'seeds' = {self.all_seeds} (an "
                                 f"export of it would train {emb} anew): export one of those, or add {seed} to seeds")
