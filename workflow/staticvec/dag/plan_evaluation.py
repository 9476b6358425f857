"""The evaluation stage of the plan: the intrinsic, tagging and classification result files, the
intrinsic evaluation jobs (one per embedding and the protocols and seeds its readers read) and the
data sets each scores, and the seeds of the extrinsic taggers and classifiers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from staticvec.dag.common import alternatives
from staticvec.evaluate.datasets import eval_groups
from staticvec.sheets.tables import CONTEXTUAL

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class EvaluationPlan:
    """The evaluation stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    results_dir: str
    sheet: EmbeddingSheet
    all_seeds: list[int]
    _extrinsic_claimed: dict[str, set[str]]
    _intrinsic_sets: dict[str, list[str] | None] | None
    seeds_for: str
    # what it calls of the other stages: ase_best_results (plan_ase); claim_results, claims_spec,
    #   selected_claims (plan_claims); corpus_scale_panels, corpus_scale_results, corpus_scale_targets
    #   (plan_corpus_scale); embedding, seeds (plan_embeddings); figure_results, figures, figures_spec
    #   (plan_figures); resource_marker (plan_resources); summary_results, summary_targets (plan_summary);
    #   table_results, tables (plan_tables); selected (the façade)

    def eval_markers(self, groups=None) -> list[str]:
        """The markers of the resource groups ``groups`` (default: those holding the evaluation data sets)."""
        return [self.resource_marker(g) for g in (eval_groups() if groups is None else groups)]

    def intrinsic_result(self, emb: str, seed="{seed}", protocol="{protocol}") -> str:
        return f"{self.results_dir}/eval/{emb}/seed{seed}/intrinsic.{protocol}.json"

    def seed_embeddings(self, seeds, emb: str = "{emb}") -> list[str]:
        """The vector files of ``seeds`` of an embedding, in that order (one intrinsic job reads them all)."""
        return [self.embedding(emb, s) for s in seeds]

    def intrinsic_outputs(self, protocols: tuple[str, ...], seeds: tuple[str, ...]) -> dict[str, str]:
        """The result files of one job scoring ``protocols`` of the ``seeds`` of an embedding, named
        ``PROTOCOL_seedS``."""
        return {self.intrinsic_output_name(p, s): self.intrinsic_result("{emb}", s, p) for s in seeds for p in protocols}

    @staticmethod
    def intrinsic_output_name(protocol: str, seed: str) -> str:
        return f"{protocol}_seed{seed}"

    @staticmethod
    def intrinsic_rule_name(protocols: tuple[str, ...], seeds: tuple[str, ...]) -> str:
        return "evaluate_intrinsic_" + "_".join(protocols) + "_seed" + "_".join(seeds)

    @staticmethod
    def ids_alternatives(ids) -> str:
        return alternatives(ids)

    @property
    def protocols_regex(self) -> str:
        return alternatives(self.config["evaluation"]["protocols"])

    def intrinsic_groups(self) -> dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]]:
        """Embeddings grouped by the protocols (config order) and the seeds (the embedding's order) the
        readers of intrinsic results read of them (``intrinsic_reads``): one evaluation job scores all
        those protocols of all those seeds of an embedding, importing its libraries and parsing the
        data sets once."""
        wanted: dict[str, tuple[set[str], set[str]]] = {}
        for paths, _ in self.intrinsic_reads():
            for emb, seed, protocol in map(self._intrinsic_result_parts, paths):
                protocols, seeds = wanted.setdefault(emb, (set(), set()))
                seeds.add(seed)
                protocols.add(protocol)
        order = list((self.config.get("evaluation") or {}).get("protocols", {}))
        groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
        for emb, (protocols, seeds) in wanted.items():
            seed_order = [str(s) for s in self.seeds(emb)]
            key = (tuple(sorted(protocols, key=lambda p: order.index(p) if p in order else len(order))),
                   tuple(sorted(seeds, key=lambda s: seed_order.index(s) if s in seed_order else len(seed_order))))
            groups.setdefault(key, []).append(emb)
        return groups

    def _intrinsic_result_parts(self, path: str) -> tuple[str, str, str]:
        """(embedding, seed, protocol) of an ``intrinsic_result`` path."""
        import re

        match = re.match(rf"^{re.escape(self.results_dir)}/eval/([^/]+)/seed([^/]+)/intrinsic\.([^/.]+)\.json$", path)
        if not match:
            raise ValueError(f"not an intrinsic result path: {path}")
        return match.group(1), match.group(2), match.group(3)

    def intrinsic_reads(self) -> list[tuple[list[str], set[str] | None]]:
        """What each reader of intrinsic results reads: (its intrinsic result files, the data-set keys
        it uses of them; None where it names a key this cannot place, i.e. every set). The readers:
        the chosen tables (intrinsic source), curve and bar figures, ASE's best-layer choice, the
        summary, each chosen claim (intrinsic source). The one enumeration behind ``intrinsic_groups``
        (which jobs) and ``intrinsic_sets`` (which sets)."""
        from staticvec.evaluate.datasets import DATASETS, TASKS
        from staticvec.sheets.claims import claim_metric_items, metric_items

        def data_sets(keys) -> set[str] | None:
            """Data set keys of a reader's column or metric keys (``ws353``, ``semeval2012.variants.web``);
            None: a key that is neither a data set nor a task."""
            keys = {str(key).split(".")[0] for key in keys}
            return keys if keys <= set(DATASETS) | set(TASKS) else None

        reads = []
        for table_id in self.selected("tables", list(self.tables)):
            entry = self.tables[table_id]
            if entry["source"] == "intrinsic":
                columns = entry.get("columns")  # a table without columns lists neighbours
                keys = {"neighbours"} if not columns else data_sets(v for v in columns.values() if isinstance(v, str))
                paths = [path for rid, path in self.table_results(table_id) if not rid.endswith(("@record", "@head"))]
                reads.append((paths, keys))
        for figure_id in self.selected("figures", list(self.figures)):
            entry = self.figures[figure_id]
            if entry["kind"] in ("curve", "bars"):
                reads.append(([path for _, path in self.figure_results(figure_id)], data_sets(entry["metrics"])))
        best_layer = (self.config.get("methods", {}).get("ase") or {}).get("best_layer")
        if best_layer:  # ASE's `layer: best` is chosen on these sets of the layer sweep
            reads.append(([path for _, path in self.ase_best_results()], data_sets(best_layer["metrics"])))
        if self.corpus_scale_targets():
            files = dict(self.corpus_scale_results())
            for panel in self.corpus_scale_panels():
                reads.append(([path for key, path in files.items() if key.startswith(panel["protocol"] + "/")],
                              data_sets(metric_items(panel["metric"]))))
        if self.summary_targets():
            from staticvec.sheets.figures import summary_columns_of

            reads.append(([path for _, path in self.summary_results()], data_sets(summary_columns_of(self.figures_spec))))
        for claim_id in self.selected_claims():
            claim = self.claims_spec["claims"][claim_id]
            if claim.get("source", "intrinsic") == "intrinsic":
                reads.append(([path for key, path in self.claim_results(claim_id) if not key.startswith("head/")],
                              data_sets(claim_metric_items(claim))))
        return reads

    def intrinsic_sets(self, emb: str) -> list[str] | None:
        """The data sets (and ``neighbours``) an intrinsic job scores of ``emb``: under ``evaluation.scope:
        read``, those its readers read — the summary's columns for a main embedding, each table's columns,
        each curve's or bar chart's metrics, each claim's metric, ASE's best-layer choice — within
        ``evaluation.tasks``; None (all of ``tasks``) under ``scope: all``, for an embedding no reader
        reads, or where a reader names a key this cannot place. Scores do not depend on which other sets
        a job computes."""
        if self._intrinsic_sets is None:
            self._intrinsic_sets = self._sets_read() if self.evaluation_scope == "read" else {}
        return self._intrinsic_sets.get(emb)

    @property
    def evaluation_scope(self) -> str:
        return (self.config.get("evaluation") or {}).get("scope", "all")

    def _sets_read(self) -> dict[str, list[str] | None]:
        from staticvec.evaluate.datasets import DATASETS, selected

        read: dict[str, set[str] | None] = {}
        for paths, keys in self.intrinsic_reads():
            for emb in dict.fromkeys(self._intrinsic_result_parts(path)[0] for path in paths):
                if read.get(emb, set()) is None:
                    continue
                read[emb] = None if keys is None else read.get(emb, set()) | keys

        def with_neighbours(tasks) -> set[str]:
            names, neighbours = selected(tasks)
            return set(names) | ({"neighbours"} if neighbours else set())

        allowed = with_neighbours((self.config.get("evaluation") or {}).get("tasks") or ["all"])
        order = list(DATASETS) + ["neighbours"]
        return {emb: None if keys is None else [k for k in order if k in with_neighbours(keys) & allowed]
                for emb, keys in read.items()}

    def classification_result(self, emb: str) -> str:
        return f"{self.results_dir}/eval/{emb}/classification.json"

    @property
    def contextual_id(self) -> str:
        """Result id of the default teacher's frozen contextual vectors (tables sheet: ``contextual``)."""
        return f"contextual-{(self.config.get('teacher') or {}).get('default', 'minilm')}"

    def tagging_result(self, emb: str) -> str:
        return f"{self.results_dir}/eval/{emb}/tagging.json"

    def extrinsic_seeds(self, emb: str, source: str) -> list[int]:
        """The seeds of the taggers (``source`` tagging) or classifiers (classification) of one row: the
        section's ``seeds`` where the config lists them; with ``seeds: null`` the run's seeds for the rows a
        selected claim of that source reads (``seeds_for: claims``; every row with ``all``), the first for
        the others. A tagging row of the teacher's frozen vectors (``contextual-<teacher>``) is the claims'
        ``contextual``."""
        from staticvec.sheets.claims import claim_refs, claimed_embeddings

        listed = (self.config.get(source) or {}).get("seeds")
        if listed:
            return list(listed)
        if self.seeds_for == "all":
            return self.all_seeds
        if source not in self._extrinsic_claimed:
            spec = self.claims_spec
            chosen = {cid for cid in self.selected_claims() if spec["claims"][cid].get("source") == source}
            named = set(claimed_embeddings(spec, self.sheet.ids(), chosen))
            named |= {CONTEXTUAL for cid in chosen if CONTEXTUAL in claim_refs(spec["claims"][cid])}
            self._extrinsic_claimed[source] = named
        key = CONTEXTUAL if emb == self.contextual_id else emb
        return self.all_seeds if key in self._extrinsic_claimed[source] else self.all_seeds[:1]

    @property
    def table5_result(self) -> str:
        return f"{self.results_dir}/cooc/cooccurrence.table5.json"
