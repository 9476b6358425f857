"""The corpus-size curves of the plan: the figures sheet's ``corpus_scale`` block, the embedding whose
run is each point (a sweep point that repeats another entry's run reads that entry's results), the
panels (with the selected claims' averaged metrics), and the results, files and flags of
``staticvec report corpus-scale``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class CorpusScalePlan:
    """The corpus-size curves part of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    results_dir: str
    sheet: EmbeddingSheet
    _signatures: dict[str, str] | None
    # what it calls of the other stages: claims_spec, selected_claims (plan_claims); params, seeds, spec
    #   (plan_embeddings); intrinsic_result (plan_evaluation); dev_curve_args, figures_spec (plan_figures)

    @property
    def corpus_scale_spec(self) -> dict:
        """The report sheet's ``corpus_scale`` block ({} when it has none)."""
        return self.figures_spec.get("corpus_scale") or {}

    def corpus_scale_sweep(self):
        return self.sheet.sweeps[self.corpus_scale_spec["sweep"]]

    def run_signature(self, emb: str) -> str:
        """What decides an embedding's run: method, resolved parameters, corpus fraction, teacher, what it
        post-processes and the development curve its trainer records (``same_run``'s identity)."""
        spec = self.spec(emb)
        return json.dumps([spec.method, self.params(emb), spec.fraction, spec.teacher, spec.base,
                           self.dev_curve_args(emb)], sort_keys=True, default=str)

    def equivalent(self, emb: str) -> str:
        """The first entry of the sheet (main entries first, then the sweeps' points in sheet order) whose run
        is ``emb``'s: a reader of a sweep point that repeats another entry's run reads that entry's results,
        so the corpus-size curve's whole-corpus points are the main rows and X2Static_para's fractions are
        X2Static Figure 1's."""
        if self._signatures is None:
            self._signatures = {}
            for eid in self.sheet.ids():
                self._signatures.setdefault(self.run_signature(eid), eid)
        return self._signatures.get(self.run_signature(emb), emb)

    def corpus_scale_points(self) -> dict[str, dict[str, str]]:
        """{base: {fraction (as the sweep writes it): the embedding whose first seed is that point}}."""
        sweep = self.corpus_scale_sweep()
        return {base: {f"{value:g}": self.equivalent(sweep.variant_id(base, value)) for value in sweep.values}
                for base in sweep.bases}

    def corpus_scale_panels(self) -> list[dict]:
        """The panels: the sheet's metrics, then (``claim_means``) one per distinct averaged metric of the
        selected intrinsic claims, each with its protocol, the claims that use it and the paper tables its
        numbers are read from (the claims' tables)."""
        from staticvec.sheets.claims import PAPERS

        scale = self.corpus_scale_spec
        panels = [{"metric": p["metric"], "protocol": p["protocol"], "claims": [], "tables": []} for p in scale["panels"]]
        if scale.get("claim_means"):
            claims = self.claims_spec["claims"]
            for cid in self.selected_claims():
                claim = claims[cid]
                metric = claim["metric"]
                if claim.get("source", "intrinsic") != "intrinsic" or not isinstance(metric, dict) or "mean" not in metric:
                    continue
                key = {"mean": list(metric["mean"])}
                panel = next((p for p in panels if p["metric"] == key and p["protocol"] == claim["protocol"]), None)
                if panel is None:
                    panel = {"metric": key, "protocol": claim["protocol"], "claims": [], "tables": [],
                             "paper": PAPERS.get(claim["paper"], claim["paper"])}
                    panels.append(panel)
                panel["claims"].append(cid)
                if claim.get("table") and claim["table"] not in panel["tables"]:
                    panel["tables"].append(claim["table"])
        return panels

    def corpus_scale_results(self) -> list[tuple[str, str]]:
        """(PROTOCOL/ID, file) pairs the curves read: the first seed of every point and line, per protocol
        (none when the report sheet has no corpus_scale block)."""
        scale = self.corpus_scale_spec
        if not scale:
            return []
        ids = [e for points in self.corpus_scale_points().values() for e in points.values()] + list(scale["lines"])
        protocols = list(dict.fromkeys(p["protocol"] for p in self.corpus_scale_panels()))
        return [(f"{p}/{e}", self.intrinsic_result(e, self.seeds(e)[0], p)) for p in protocols for e in dict.fromkeys(ids)]

    def corpus_scale_file(self, suffix: str) -> str:
        """{R}/tables/scale/corpus_scale.{md,csv} and {R}/figures/scale/corpus_scale.{pdf,png,manifest.json}."""
        kind = "tables" if suffix in ("md", "csv") else "figures"
        return f"{self.results_dir}/{kind}/scale/corpus_scale.{suffix}"

    def corpus_scale_targets(self) -> list[str]:
        wanted = (self.config.get("targets") or {}).get("corpus_scale", False) and self.corpus_scale_spec
        return [self.corpus_scale_file("md"), self.corpus_scale_file("pdf")] if wanted else []

    def corpus_scale_result_files(self) -> list[str]:
        return list(dict.fromkeys(path for _, path in self.corpus_scale_results()))

    def corpus_scale_args(self) -> str:
        """What `staticvec report corpus-scale` needs beyond its files: the sweep, the points, the panels."""
        import dataclasses
        import shlex

        if not self.corpus_scale_spec:
            return ""
        args = ["--sweep", json.dumps(dataclasses.asdict(self.corpus_scale_sweep()), default=str),
                "--points", json.dumps(self.corpus_scale_points()),
                "--panels", json.dumps(self.corpus_scale_panels()),
                *(f"{key}={path}" for key, path in self.corpus_scale_results())]
        return shlex.join(args)
