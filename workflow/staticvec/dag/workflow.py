"""File names of the Snakemake DAG, computed from the validated config.

The rule files ask this class what their inputs and targets are; keeping the naming here
(not in the Snakefile) makes it testable and keeps rules thin.

``Workflow`` (``W`` in the rule files) is the façade of the planning stages: it holds the state they
share (the config, the sheets, the registry, the caches of what is costly to work out) and is
composed of one class per stage, each in its own module, which holds that stage's methods and says
which of this state and of the other stages' methods it reads:

    plan_resources      the registry's downloads and their check
    plan_corpus         the corpus inputs, tokenized files, shards, counts, vocabularies
    plan_teachers       which teachers the run reads, their widths and depths, their check
    plan_embeddings     each entry's parameters, seeds, fraction, files; runs a sweep point repeats
    plan_ase            ASE's per-layer outputs and best layer
    plan_evaluation     the result files and the intrinsic jobs; extrinsic seeds
    plan_tables         the tables sheet and what each table reads
    plan_provenance     the run manifest and the provenance the captions quote
    plan_figures        the figures sheet, what each figure reads, development curves
    plan_summary        the summary table
    plan_reduced        what a table or figure reads below the run's scale (``--reduced``)
    plan_corpus_scale   the corpus-size curves
    plan_claims         the claims sheet, what each claim reads, the verdicts and forest plots
    plan_export         the export of vectors for other tools

Here remain what spans the stages: the state, the GPU request of torch jobs, which entries of a
sheet the run builds (``targets``) and the run's final targets.
"""

from __future__ import annotations

from pathlib import Path

from staticvec.config import resolve_path
from staticvec.dag.plan_ase import AsePlan
from staticvec.dag.plan_claims import ClaimsPlan
from staticvec.dag.plan_corpus import CorpusPlan
from staticvec.dag.plan_corpus_scale import CorpusScalePlan
from staticvec.dag.plan_embeddings import EmbeddingsPlan
from staticvec.dag.plan_evaluation import EvaluationPlan
from staticvec.dag.plan_export import ExportPlan
from staticvec.dag.plan_figures import FiguresPlan
from staticvec.dag.plan_provenance import ProvenancePlan
from staticvec.dag.plan_reduced import ReducedPlan
from staticvec.dag.plan_resources import ResourcesPlan
from staticvec.dag.plan_summary import SummaryPlan
from staticvec.dag.plan_tables import TablesPlan
from staticvec.dag.plan_teachers import TeachersPlan
from staticvec.errors import StaticvecError
from staticvec.resources import Registry
from staticvec.sheets import EmbeddingSheet


class Workflow(ResourcesPlan, CorpusPlan, TeachersPlan, EmbeddingsPlan, AsePlan, EvaluationPlan, TablesPlan, ProvenancePlan,
               FiguresPlan, SummaryPlan, ReducedPlan, CorpusScalePlan, ClaimsPlan, ExportPlan):
    """The plan of a run (``W``): the stages' methods over one shared state; no two stages define the same name."""

    def __init__(self, config: dict, root: str | Path = "."):
        self.config = config
        self.root = Path(root)
        self.results_dir = config["results_dir"].rstrip("/")
        res = config["resources"]
        self.mirror = str(resolve_path(res["mirror"], self.root)) if res.get("mirror") else None
        self.download_dir = res["download_dir"].rstrip("/")
        self.allow_download = bool(res["allow_download"])
        self.registry = Registry.load(resolve_path(res["registry"], self.root), root=self.root)
        self._corpus_inputs = None
        sheets = config.get("sheets", {})
        self.sheet = EmbeddingSheet.load(resolve_path(sheets.get("embeddings", "config/embeddings.yaml"), self.root), config)
        self.all_seeds = list(config.get("seeds") or [1])
        self.tables_sheet = sheets.get("tables", "config/tables.yaml")
        self._tables = None
        self.figures_sheet = sheets.get("figures", "config/figures.yaml")
        self._figures = None
        self.claims_sheet = sheets.get("claims", "config/claims.yaml")
        self._claims = None
        self._claimed = None
        self._extrinsic_claimed: dict[str, set[str]] = {}
        self._signatures: dict[str, str] | None = None
        self._intrinsic_sets = None
        # which seeded embeddings train every seed: those a selected claim names (claims) or all of them
        self.seeds_for = config.get("seeds_for", "claims")
        self.seed_sweeps = bool(config.get("seed_sweeps", False))
        # torch rules ask the scheduler for a GPU (SLURM: --gpus=1) when the run is on GPUs
        self.use_gpu = config.get("device") == "cuda" or bool(config.get("teacher", {}).get("gpu"))

    def gpu_resources(self, gpu: bool | None = None) -> dict:
        """Resources of a job that runs a torch model: one GPU and the GPU partition when the run
        uses GPUs (``gpu`` overrides, e.g. SemGloVe's builders only in recompute mode), nothing
        otherwise, so that the job stays in the profile's default (CPU) partition."""
        if not (self.use_gpu if gpu is None else gpu):
            return {}
        partition = (self.config.get("slurm") or {}).get("gpu_partition", "gpu")
        return {"gpu": 1, "slurm_partition": partition}

    # ------------------------------------------------------------ targets
    def selected(self, kind: str, available: list[str]) -> list[str]:
        """The entries of a sheet (tables, figures, claims) the run builds: config ``targets.<kind>``, or all."""
        chosen = (self.config.get("targets") or {}).get(kind, "all")
        if chosen == "all":
            return list(available)
        unknown = [c for c in chosen if c not in available]
        if unknown:
            raise StaticvecError(f"config targets.{kind}: {unknown} are not in the {kind} sheet; known: {', '.join(available)}")
        return list(chosen)

    def check_sheets(self) -> None:
        """Read and check the four sheets (the embeddings sheet is read by ``__init__``), and the entries the
        config's ``targets`` select of each: what ``staticvec config`` checks besides the schema."""
        sheets = {"tables": list(self.tables), "figures": list(self.figures), "claims": list(self.claims_spec["claims"])}
        for kind, available in sheets.items():
            self.selected(kind, available)

    def final_targets(self) -> list[str]:
        return [self.manifest, self.vocab(), self.run_manifest, *self.table_targets(), *self.figure_targets(),
                *self.summary_targets(), *self.claims_targets(), *self.corpus_scale_targets()]
