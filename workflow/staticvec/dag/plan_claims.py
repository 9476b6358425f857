"""The claims stage of the plan: the claims sheet (checked), the embeddings the selected claims name
(they train every seed), the results each claim reads, the flags of ``staticvec report claims``,
and its targets: the verdict table and one forest plot per group of claims.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from staticvec.config import resolve_path
from staticvec.dag.common import alternatives
from staticvec.errors import StaticvecError
from staticvec.sheets.tables import CONTEXTUAL

if TYPE_CHECKING:
    from pathlib import Path
    from staticvec.sheets import EmbeddingSheet


class ClaimsPlan:
    """The claims stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    root: Path
    results_dir: str
    sheet: EmbeddingSheet
    claims_sheet: str
    _claims: dict | None
    _claimed: set[str] | None
    seed_sweeps: bool
    # what it calls of the other stages: embedding_record, is_random, seeds (plan_embeddings);
    #   classification_result, contextual_id, intrinsic_result, tagging_result (plan_evaluation); tables
    #   (plan_tables); selected (the façade)

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

    def claims_file(self, suffix: str = "md") -> str:
        return f"{self.results_dir}/tables/claims.{suffix}"

    def claims_results(self) -> list[tuple[str, str]]:
        """(key, file) pairs the claims read: PROTOCOL/ID/SEED (every seed of every intrinsic result a
        claim can use), tagging/ID, classification/ID, record/ID/SEED (a training record: its development
        curve over the run)."""
        return list(dict.fromkeys(pair for cid in self.selected_claims() for pair in self.claim_results(cid)))

    def claims_result_files(self) -> list[str]:
        return [path for _, path in self.claims_results()]

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
                head = self.fitted_head_record(emb)
                if head:  # the fitted MLM head's quality goes in the verdict's cell
                    pairs.append((f"head/{emb}", head))
        return pairs

    def claims_args(self) -> str:
        import shlex

        named = {key.split("/")[1] for key, _ in self.claims_results()}
        random = sorted(e for e in named if e in self.sheet and self.is_random(e))
        return shlex.join(["--random", json.dumps(random), "--select", json.dumps(self.selected_claims()),
                           "--contextual-id", self.contextual_id,
                           *(f"{key}={path}" for key, path in self.claims_results())])

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
