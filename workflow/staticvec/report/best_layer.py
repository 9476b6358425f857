"""ASE's best task-independent layer (X2Static): the teacher layer whose ASE vectors have the best
mean score over a table's tasks, and that layer's vectors for an ``ase`` entry with ``layer: best``.

X2Static Table 3 reports ASE at the best layer per task and at the "best overall layer"; its
Figure 1 follows "the ASE best task independent layer" over corpus sizes. The choice is made once,
on the whole corpus (the ``ase_layers`` sweep's evaluation, config ``methods.ase.best_layer``:
protocol and tasks), and the same layer is then used at every corpus fraction, as the figure does.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from staticvec.errors import StaticvecError


def select_best_layer(results: dict[int, list], metrics: list[str]) -> dict:
    """``results``: {layer: [evaluation result files or dicts, one per seed]}. Returns
    {"layer", "metrics", "dropped", "scores": {layer: mean over metrics and seeds}}.

    A layer missing a metric that other layers have cannot be chosen (its mean is not comparable).
    A metric that no layer has a score for (an evaluation set the corpus's vocabulary does not
    cover, as on a tiny test corpus) is left out for every layer and named under ``dropped``."""
    from statistics import mean

    from staticvec.report.tables import load_result, result_value

    if not results:
        raise StaticvecError("no ASE layer results to choose from")

    def ok(v):
        return v is not None and not math.isnan(v)

    table = {int(layer): [[result_value(load_result(item), m)[0] for m in metrics] for item in items]
             for layer, items in sorted(results.items())}
    dropped = [m for k, m in enumerate(metrics) if not any(ok(row[k]) for rows in table.values() for row in rows)]
    used = [k for k, m in enumerate(metrics) if m not in dropped]
    if not used:
        raise StaticvecError(f"no ASE layer has a score on any of {metrics}")
    scores = {}
    for layer, rows in table.items():
        values = [[row[k] for k in used] for row in rows]
        complete = bool(values) and all(ok(v) for row in values for v in row)
        scores[layer] = mean(mean(row) for row in values) if complete else None
    ranked = [layer for layer, s in scores.items() if s is not None]
    if not ranked:
        raise StaticvecError(f"no ASE layer has a score on every one of {[metrics[k] for k in used]}")
    best = max(ranked, key=lambda layer: (scores[layer], -layer))  # ties: the lower layer
    return {"layer": best, "metrics": [metrics[k] for k in used], "dropped": dropped, "scores": scores}


def layer_file(ase_dir: str | os.PathLike, layer: int) -> Path:
    """The vectors of one layer in an ASE job's directory (``layer-NN.bin`` beside ``ase.json``)."""
    ase_dir = Path(ase_dir)
    if ase_dir.name == "ase.json":
        ase_dir = ase_dir.parent
    return ase_dir / f"layer-{int(layer):02d}.bin"


def pick_layer(selection: str | os.PathLike, ase_dir: str | os.PathLike, out: str | os.PathLike,
               vocab: str | os.PathLike | None = None) -> Path:
    """Write ``out``: the selected layer's vectors (a relative link), or, given a corpus fraction's
    ``vocab``, only that vocabulary's rows."""
    from staticvec.files import read_json

    layer = int(read_json(selection)["layer"])
    source = layer_file(ase_dir, layer)
    if not source.exists():
        raise StaticvecError(f"{source}: no ASE vectors of layer {layer} (selected in {selection})")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if vocab is None:
        tmp = out.with_name(out.name + ".tmp")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(os.path.relpath(source, out.parent), tmp)
        os.replace(tmp, out)
        return out
    from staticvec.corpus.vocab import Vocabulary, restrict_embeddings
    from staticvec.embeddings import Embeddings

    kept, _ = restrict_embeddings(Embeddings.load(source), Vocabulary.load(vocab))
    kept.save(out)
    return out
