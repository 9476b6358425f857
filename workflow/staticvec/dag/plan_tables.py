"""The tables stage of the plan: the tables sheet (checked), each table's file, the (result id,
file) pairs it reads and its report command's flags, and the chosen tables as targets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from staticvec.config import resolve_path
from staticvec.sheets.tables import CONTEXTUAL

if TYPE_CHECKING:
    from pathlib import Path
    from staticvec.sheets import EmbeddingSheet


class TablesPlan:
    """The tables stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    root: Path
    results_dir: str
    sheet: EmbeddingSheet
    tables_sheet: str
    _tables: dict | None
    # what it calls of the other stages: embedding_record, seeds (plan_embeddings); classification_result,
    #   contextual_id, intrinsic_result, table5_result, tagging_result (plan_evaluation); reduced_args
    #   (plan_reduced); selected (the façade)

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
            head = self.fitted_head_record(emb)
            if head and source in ("intrinsic", "tagging", "classification"):  # its quality goes in the caption
                pairs.append((f"{emb}@head", head))
        return pairs

    def fitted_head_record(self, emb: str) -> str | None:
        """The record of the MLM head fitted for ``emb`` (``teacher/<t>/mlm_head.json``: held-out top-1/top-10 and
        the unigram baseline) when ``emb`` is a SemGloVe MLM variant (md, mr, md5) on a teacher that ships no head
        (as TeacherPlan.uses_fitted_head decides); None for every other row."""
        from staticvec.dag.common import teacher_model
        from staticvec.dag.teacher import teacher_traits

        if emb not in self.sheet:
            return None
        spec = self.spec(emb)
        if spec.method != "semglove":
            return None
        semglove = (self.config.get("cooc") or {}).get("semglove") or {}
        if ((semglove.get("variants") or {}).get(self.params(emb).get("variant")) or {}).get("source") != "mlm":
            return None
        teacher = semglove.get("teacher") or self.config["teacher"]["default"]  # the builders' teacher (SemGloVeRules)
        fit = (self.config["teacher"].get("mlm_head") or {}).get("fit", "auto")
        traits = teacher_traits(teacher_model(self.config, teacher))
        if fit == "never" or traits["causal"] or not (fit == "always" or traits["mlm_head"] is False):
            return None
        return f"{self.results_dir}/teacher/{teacher}/mlm_head.json"

    def table_inputs(self, table_id: str) -> list[str]:
        return list(dict.fromkeys(path for _, path in self.table_results(table_id)))

    def table_result_args(self, table_id: str) -> str:
        import shlex

        pairs = self.table_results(table_id)
        reduced = self.reduced_args([rid for rid, _ in pairs], self.tables[table_id]["source"])
        return shlex.join(reduced + [f"{rid}={path}" for rid, path in pairs])

    def table_targets(self) -> list[str]:
        return [self.table_file(t) for t in self.selected("tables", list(self.tables))]
