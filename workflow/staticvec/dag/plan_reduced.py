"""What a table or figure reads below the run's scale (a development fraction of the corpus, fewer
seeds, fewer taggers or classifiers than the run's seeds), for its caption: the ``--reduced`` flag of
the report commands.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from staticvec.sheets.tables import CONTEXTUAL

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class ReducedPlan:
    """The reduced-inputs part of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    sheet: EmbeddingSheet
    all_seeds: list[int]
    # what it calls of the other stages: is_random, seeds, spec (plan_embeddings); contextual_id,
    #   extrinsic_seeds (plan_evaluation)

    def reduced_inputs(self, ids, source: str = "intrinsic") -> dict:
        """For a caption: the embeddings among ``ids`` (result ids of a table or figure) that were made below
        the run's scale — trained on a fraction of the corpus that is not the value their own sweep varies
        (a development subset: the sheet's or config ``sweep_fractions``), seeded and trained with fewer seeds
        than the run's, or (``source`` tagging / classification) scored by fewer taggers or classifiers than
        the run's seeds. {"run_seeds": [...], "source": ..., "items": [{id, sweep, fraction, seeds,
        extrinsic_seeds}]}; no items when everything is at the run's scale."""
        items = []
        for rid in dict.fromkeys(ids):
            emb = rid.split("@")[0]
            item = {"id": emb}
            if source in ("tagging", "classification"):
                seeds = self.extrinsic_seeds(self.contextual_id if emb == CONTEXTUAL else emb, source)
                if len(seeds) < len(self.all_seeds):
                    item["extrinsic_seeds"] = seeds
            if emb in self.sheet:
                spec = self.spec(emb)
                sweep = self.sheet.sweeps.get(spec.sweep) if spec.sweep else None
                if spec.fraction < 1 and not (sweep is not None and sweep.param == "fraction"):
                    item["fraction"] = spec.fraction
                if source == "intrinsic" and self.is_random(emb) and len(self.seeds(emb)) < len(self.all_seeds):
                    item["seeds"] = self.seeds(emb)
                if len(item) > 1:
                    item["sweep"] = spec.sweep
            if len(item) > 1:
                items.append(item)
        return {"run_seeds": self.all_seeds, "source": source, "items": items}

    def reduced_args(self, ids, source: str = "intrinsic") -> list[str]:
        """``--reduced JSON`` of a report command (nothing when every input is at the run's scale)."""
        reduced = self.reduced_inputs(ids, source)
        return ["--reduced", json.dumps(reduced, sort_keys=True)] if reduced["items"] else []
