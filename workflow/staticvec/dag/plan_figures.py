"""The figures stage of the plan: the figures sheet (checked), each figure's file, the results,
inputs and flags of its report command, the attention dump the attention figure draws, the
development curves a ``training`` figure has trainers record, and the chosen figures as targets.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from staticvec.config import resolve_path
from staticvec.errors import StaticvecError

if TYPE_CHECKING:
    from pathlib import Path
    from staticvec.sheets import EmbeddingSheet


class FiguresPlan:
    """The figures stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    root: Path
    results_dir: str
    sheet: EmbeddingSheet
    figures_sheet: str
    _figures: dict | None
    # what it calls of the other stages: manifest (plan_corpus); embedding, embedding_record, seeds, spec
    #   (plan_embeddings); intrinsic_result (plan_evaluation); provenance_file (plan_provenance); reduced_args
    #   (plan_reduced); resource_marker (plan_resources); selected (the façade)

    @property
    def figures_spec(self) -> dict:
        """The report sheet, checked against the embeddings sheet and the evaluation protocols."""
        if self._figures is None:
            from staticvec.sheets.figures import load_figures_spec

            protocols = (self.config.get("evaluation") or {}).get("protocols")
            self._figures = load_figures_spec(resolve_path(self.figures_sheet, self.root), self.sheet, protocols,
                                              self.root)
        return self._figures

    @property
    def figures(self) -> dict:
        return self.figures_spec["figures"]

    def figures_sheet_entries(self) -> dict:
        from staticvec.config import load_yaml

        path = resolve_path(self.config.get("sheets", {}).get("figures", "config/figures.yaml"), self.root)
        return (load_yaml(path) or {}).get("figures", {}) if path.exists() else {}

    def figure_file(self, figure_id: str, suffix: str = "pdf") -> str:
        """{R}/figures/<paper>/<figure>.<suffix> (pdf, png, manifest.json)."""
        from staticvec.sheets.figures import figure_parts

        paper, name = figure_parts(figure_id)
        return f"{self.results_dir}/figures/{paper}/{name}.{suffix}"

    def figure_entry(self, figure_id: str) -> dict:
        try:
            return self.figures[figure_id]
        except KeyError:
            raise StaticvecError(f"{self.figures_sheet}: no figure {figure_id!r}; known: {', '.join(self.figures)}") from None

    def figure_results(self, figure_id: str) -> list[tuple[str, str]]:
        """(id, file) pairs a figure reads: every seed's evaluation of every point of a curve or bar
        chart; the first seed's vectors of every t-SNE panel."""
        entry = self.figure_entry(figure_id)
        if entry["kind"] in ("curve", "bars", "training"):
            sweep = self.sheet.sweeps[entry["sweep"]]
            ids = [sweep.variant_id(b, v) for b in entry.get("bases") or sweep.bases for v in sweep.values]
            if entry["kind"] == "training":  # the development curve is in each run's training record
                return [(i, self.embedding_record(i, s)) for i in ids for s in self.seeds(i)]
            return [(i, self.intrinsic_result(i, s, entry["protocol"])) for i in ids for s in self.seeds(i)]
        if entry["kind"] in ("tsne", "tsne3d"):
            return [(e, self.embedding(e, self.seeds(e)[0])) for e in entry["embeddings"]]
        return []

    def attention_dump(self, emb: str, seed="{seed}") -> str:
        """BERT + Skip-gram's attention weights a_j on the figure sentences (Wang et al. Figure 7)."""
        return f"{self.results_dir}/embeddings/{emb}/seed{seed}/attention.json"

    def attention_sentence_args(self) -> str:
        """--sentence flags of the attention dump: the figures sheet's attention sentences."""
        import shlex

        figures = self.figures_sheet_entries()
        sentences = [f["sentence"] for f in figures.values() if f.get("kind") == "attention" and f.get("sentence")]
        return " ".join(f"--sentence {shlex.quote(x)}" for x in dict.fromkeys(sentences))

    def figure_inputs(self, figure_id: str) -> dict:
        entry = self.figure_entry(figure_id)
        inputs = {"sheet": self.figures_sheet, "manifest": self.provenance_file,
                  "results": list(dict.fromkeys(path for _, path in self.figure_results(figure_id)))}
        if entry.get("x") == "tokens":
            inputs["corpus"] = self.manifest
        if entry.get("words") or entry.get("pairs"):
            inputs["words"] = entry.get("words") or entry.get("pairs")
        if entry["kind"] == "attention":
            inputs["attention"] = self.attention_dump(entry["embedding"], self.seeds(entry["embedding"])[0])
        return inputs

    def figure_args(self, figure_id: str) -> str:
        """What `staticvec report figure` needs beyond the rule's files: the sweep, the result pairs."""
        import dataclasses
        import shlex

        entry = self.figure_entry(figure_id)
        inputs = self.figure_inputs(figure_id)
        args = []
        if entry["kind"] in ("curve", "bars", "training"):
            args += ["--sweep", json.dumps(dataclasses.asdict(self.sheet.sweeps[entry["sweep"]]), default=str)]
        if "corpus" in inputs:
            args += ["--corpus-manifest", inputs["corpus"]]
        if "attention" in inputs:
            args += ["--attention", inputs["attention"]]
        args += self.reduced_args(rid for rid, _ in self.figure_results(figure_id))
        args += [f"{rid}={path}" for rid, path in self.figure_results(figure_id)]
        return shlex.join(args)

    def dev_curve_figure(self, emb: str) -> dict | None:
        """The `training` figure (a development curve over training) that draws this embedding, if any."""
        spec = self.spec(emb)
        for entry in self.figures.values():
            if entry["kind"] == "training" and spec.sweep == entry["sweep"]:
                sweep = self.sheet.sweeps[entry["sweep"]]
                if any(emb == sweep.variant_id(b, v) for b in entry.get("bases") or sweep.bases for v in sweep.values):
                    return entry
        return None

    def dev_curve_inputs(self, emb: str) -> dict:
        """The evaluation data a trainer scores during training (Wang Figure 5), as rule inputs."""
        return {"dev": self.resource_marker("eval-similarity")} if self.dev_curve_figure(emb) else {}

    def dev_curve_args(self, emb: str) -> str:
        """--dev-set/--dev-points/--dev-oov of a distillation trainer drawn by a `training` figure."""
        import shlex

        from staticvec.evaluate.datasets import DATASETS
        from staticvec.dag.arguments import data_dir_from_config

        entry = self.dev_curve_figure(emb)
        if entry is None:
            return ""
        protocol = (self.config.get("evaluation") or {}).get("protocols", {}).get(entry["protocol"], {})
        return shlex.join(["--dev-set", f"{data_dir_from_config(self.config)}/{DATASETS[entry['metrics'][0]].path}",
                           "--dev-points", str(entry["points"]), "--dev-oov", protocol.get("oov", "mean")])

    def figure_targets(self) -> list[str]:
        return [self.figure_file(f) for f in self.selected("figures", list(self.figures))]
