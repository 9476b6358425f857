"""ASE's embeddings (a teacher layer's outputs averaged over the corpus): the ASE job's per-layer
output over a corpus fraction, the choice of the best task-independent layer, and the command that
makes an ``ase`` entry's vectors of one layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from staticvec.errors import StaticvecError

if TYPE_CHECKING:
    from staticvec.sheets import EmbeddingSheet


class AsePlan:
    """The ASE stage of :class:`~staticvec.dag.workflow.Workflow` (``W``): a mixin with no state of its own."""

    # the façade's state it reads (set in Workflow.__init__)
    config: dict
    results_dir: str
    sheet: EmbeddingSheet
    # what it calls of the other stages: n_shards (plan_corpus); emb_shard_ids, emb_vocab, frac, params, seeds,
    #   spec (plan_embeddings); intrinsic_result (plan_evaluation); teacher_depth, teacher_model (plan_teachers)

    def ase_directory(self, emb: str) -> str:
        """The ASE job's output (every layer) over the embedding's corpus fraction."""
        return self.ase_table(self.spec(emb).teacher, len(self.emb_shard_ids(emb)), self.n_shards)

    def ase_table(self, teacher: str = "{teacher}", k="{k}", n="{n}") -> str:
        """The ASE job's output over the first k of n shards (every layer in its directory)."""
        return f"{self.results_dir}/teacher/{teacher}/baselines/ase-{k}of{n}/ase.json"

    def ase_best_layer(self, teacher: str = "{teacher}") -> str:
        return f"{self.results_dir}/teacher/{teacher}/baselines/ase-best-layer.json"

    def ase_best_selection(self, emb: str) -> str:
        """The choice of ASE's best task-independent layer (`layer: best`), made on the whole corpus."""
        sweep = self.sheet.sweeps[self.config["methods"]["ase"]["best_layer"]["sweep"]]
        return self.ase_best_layer(self.spec(sweep.bases[0]).teacher)

    def ase_best_layers(self) -> list[tuple[int, str]]:
        """(layer, embedding id) of every layer of the best_layer sweep."""
        sweep = self.sheet.sweeps[self.config["methods"]["ase"]["best_layer"]["sweep"]]
        return [(int(value), sweep.variant_id(sweep.bases[0], value)) for value in sweep.values]

    def ase_best_results(self) -> list[tuple[int, str]]:
        """(layer, evaluation result) of every layer of the best_layer sweep, every seed."""
        protocol = self.config["methods"]["ase"]["best_layer"]["protocol"]
        return [(layer, self.intrinsic_result(vid, s, protocol)) for layer, vid in self.ase_best_layers()
                for s in self.seeds(vid)]

    def ase_embedding_inputs(self, emb: str) -> dict:
        inputs = {"ase": self.ase_directory(emb), "vocab": self.emb_vocab(emb)}
        if self.params(emb)["layer"] == "best":
            inputs["selection"] = self.ase_best_selection(emb)
        return inputs

    def ase_embedding_command(self, emb: str, out: str) -> str:
        """An `ase` entry's vectors: one layer of its fraction's ASE directory (a link; on a corpus
        fraction only the fraction's words), the chosen best layer for `layer: best`."""
        import shlex

        frac_vocab = self.emb_vocab(emb) if self.frac(emb) else None
        if self.params(emb)["layer"] == "best":
            args = ["staticvec", "report", "pick-layer", "--selection", self.ase_best_selection(emb),
                    "--ase-dir", self.ase_directory(emb), "--out", out] + (["--vocab", frac_vocab] if frac_vocab else [])
        elif frac_vocab:
            args = ["staticvec", "corpus", "restrict-embeddings", self.ase_layer_file(emb), "--vocab", frac_vocab,
                    "--out", out]
        else:
            args = ["ln", "-sfr", self.ase_layer_file(emb), out]
        return shlex.join(args)

    def ase_layer_file(self, emb: str) -> str:
        from staticvec.dag.teacher import teacher_traits

        layer = int(self.params(emb)["layer"])
        teacher = self.spec(emb).teacher
        depth = teacher_traits(self.teacher_model(teacher))["n_layers"]
        if layer < 0:
            layer += self.teacher_depth(teacher) + 1
        if depth is not None and layer > depth:  # a layer list written for another teacher (methods.ase.layers: MiniLM's 0-6)
            raise StaticvecError(f"embedding {emb!r}: layer {self.params(emb)['layer']}, but teacher {teacher!r} "
                                 f"({self.teacher_model(teacher)}) has layers 0-{depth}: set config methods.ase.layers "
                                 f"to its layers [0, ..., {depth}]")
        return str(Path(self.ase_directory(emb)).parent / f"layer-{layer:02d}.bin")
