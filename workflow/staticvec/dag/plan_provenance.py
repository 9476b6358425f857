"""The run's record in the plan: the full run manifest (a leaf of the DAG) and the provenance every
table's and figure's caption quotes, with the flags of ``staticvec report provenance``.
"""

from __future__ import annotations


class ProvenancePlan:
    """The run's record, a part of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    results_dir: str

    @property
    def run_manifest(self) -> str:
        """The run's full record (whole config and its hash, commit, corpus, teachers, seeds, training
        modes): a leaf of the DAG, remade on any config change without touching what it describes."""
        return f"{self.results_dir}/manifest.json"

    @property
    def provenance_file(self) -> str:
        """What every table's and figure's caption says of the run (corpus, teacher, seeds, code
        version): it depends on those settings only, so an unrelated config change reruns no table."""
        return f"{self.results_dir}/provenance.json"

    def provenance_args(self) -> str:
        import shlex

        teacher_cfg = self.config.get("teacher", {})
        default = teacher_cfg.get("default")
        teacher = f"{default} ({teacher_cfg.get('models', {}).get(default, default)})" if default else ""
        seeds = " ".join(str(s) for s in self.config.get("seeds") or [])
        return f"--teacher {shlex.quote(teacher)}" + (f" --seeds {seeds}" if seeds else "")
