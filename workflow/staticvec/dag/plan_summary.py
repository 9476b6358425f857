"""The summary stage of the plan: the summary table's rows (the sheet's main embeddings), the
intrinsic results and claim verdicts it reads, its file, flags and target.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from staticvec.errors import StaticvecError

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class SummaryPlan:
    """The summary stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    results_dir: str
    sheet: EmbeddingSheet
    # what it calls of the other stages: claims_file, selected_claims (plan_claims); seeds (plan_embeddings);
    #   intrinsic_result (plan_evaluation); figures_spec (plan_figures); reduced_args (plan_reduced)

    @property
    def summary_protocols(self) -> list[str]:
        return (self.figures_spec.get("summary") or {}).get("protocols", ["web"])

    def summary_rows(self) -> list[dict]:
        """The summary's rows: every main embedding of the sheet (sweep variants left out), or those of
        ``targets.summary`` when it lists embedding ids; sheet order."""
        main = [e for e, s in self.sheet.entries.items() if s.sweep is None]
        chosen = (self.config.get("targets") or {}).get("summary", True)
        if isinstance(chosen, list):
            unknown = [e for e in chosen if e not in main]
            if unknown:
                raise StaticvecError(f"config targets.summary: {unknown} are not main embeddings of the embeddings "
                                     f"sheet (sweep points have no summary row); known: {', '.join(main)}")
            main = [e for e in main if e in chosen]
        return [{"id": e, "method": self.sheet[e].method, "description": self.sheet[e].description} for e in main]

    def summary_results(self) -> list[tuple[str, str]]:
        return [(f"{p}/{row['id']}", self.intrinsic_result(row["id"], s, p))
                for p in self.summary_protocols for row in self.summary_rows() for s in self.seeds(row["id"])]

    def summary_result_files(self) -> list[str]:
        return [path for _, path in self.summary_results()]

    def summary_claims(self) -> list[str]:
        """The claims' verdicts the summary's first lines count (none when no claim is selected)."""
        return [self.claims_file("json")] if self.selected_claims() else []

    def summary_claims_args(self) -> str:
        return " ".join(f"--claims {path}" for path in self.summary_claims())

    def summary_file(self, suffix: str = "md") -> str:
        return f"{self.results_dir}/tables/summary.{suffix}"

    def summary_args(self) -> str:
        import shlex

        rows = json.dumps(self.summary_rows(), sort_keys=True)
        return shlex.join(["--rows", rows, *self.reduced_args(row["id"] for row in self.summary_rows()),
                           *(f"{rid}={path}" for rid, path in self.summary_results())])

    def summary_targets(self) -> list[str]:
        return [self.summary_file("md")] if (self.config.get("targets") or {}).get("summary", True) not in (False, []) else []
