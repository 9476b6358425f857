"""``staticvec report ...``: the run manifest (provenance of every table and figure), one figure of the
report sheet (``config/figures.yaml``), and the cross-paper summary table."""

from __future__ import annotations

import json


def register(subparsers) -> None:
    parser = subparsers.add_parser("report", help="run manifest, figures and summaries")
    sub = parser.add_subparsers(dest="report_command", required=True)
    p = sub.add_parser("manifest", help="provenance of the run: config hash, commit, corpus, teachers, seeds, date")
    p.add_argument("--config-json", required=True, help="the workflow's merged config, as JSON")
    p.add_argument("--corpus-manifest", required=True, help="<results>/corpus/manifest.json")
    p.add_argument("--out", required=True, help="run manifest JSON to write")
    p.set_defaults(handler=_manifest)

    p = sub.add_parser("provenance", help="what the tables' and figures' captions say of the run: corpus, teacher, "
                                          "seeds, code version (depends on those settings only)")
    p.add_argument("--corpus-manifest", required=True, help="<results>/corpus/manifest.json")
    p.add_argument("--teacher", default="", help="the default teacher, as 'id (model)'")
    p.add_argument("--seeds", type=int, nargs="*", default=None, help="the run's seeds")
    p.add_argument("--out", required=True, help="provenance JSON to write")
    p.set_defaults(handler=_provenance)

    p = sub.add_parser("figure", help="draw one figure of the report sheet (PDF + PNG + manifest)")
    p.add_argument("results", nargs="*", metavar="ID=FILE",
                   help="curves/bars: evaluation results by variant id (repeat an id for several seeds); "
                        "t-SNE: vectors by embedding id")
    p.add_argument("--spec", default="config/figures.yaml", help="the report sheet")
    p.add_argument("--figure", required=True, help="figure id of the sheet, e.g. semglove_figure2a")
    p.add_argument("--manifest", help="the run manifest (provenance caption)")
    p.add_argument("--sweep", help="curves/bars: the sweep's definition as JSON (id, bases, param, values, linked)")
    p.add_argument("--corpus-manifest", help="the corpus manifest (x: tokens)")
    p.add_argument("--attention", help="attention figures: the attention dump (JSON)")
    p.add_argument("--out-pdf", required=True, help="figure as PDF")
    p.add_argument("--out-png", required=True, help="figure as PNG (for the HTML report)")
    p.add_argument("--out-manifest", help="default: <out-pdf without .pdf>.manifest.json")
    p.add_argument("--root", default=".", help="repository root the sheet's word lists are relative to")
    p.set_defaults(handler=_figure)

    p = sub.add_parser("summary", help="every main embedding on every intrinsic set: mean ± 95 %% CI over seeds")
    p.add_argument("results", nargs="*", metavar="PROTOCOL/ID=RESULT.json",
                   help="evaluation results by protocol and embedding id (repeat for several seeds)")
    p.add_argument("--spec", default="config/figures.yaml", help="the report sheet (its summary block)")
    p.add_argument("--rows", required=True, help='JSON list of {"id": ..., "method": ...}: the rows, in order')
    p.add_argument("--manifest", help="the run manifest (caption)")
    p.add_argument("--out-csv", required=True, help="summary as CSV")
    p.add_argument("--out-md", required=True, help="summary as Markdown")
    p.add_argument("--out-html", help="also an HTML page (shown inline by snakemake --report)")
    p.add_argument("--claims", help="the claims' verdicts (tables/claims.json): one count line per paper on top")
    p.add_argument("--root", default=".", help="repository root the paper tables are read from (default .)")
    p.set_defaults(handler=_summary)

    p = sub.add_parser("claims", help="decide the papers' claims (config/claims.yaml) from this run's results: "
                                      "per-seed paired differences, 95 %% intervals, holds / fails / undecided")
    p.add_argument("results", nargs="*", metavar="KEY=RESULT.json",
                   help="PROTOCOL/ID/SEED=FILE (intrinsic, one per seed), tagging/ID=FILE, classification/ID=FILE")
    p.add_argument("--spec", default="config/claims.yaml", help="the claims sheet")
    p.add_argument("--tables", default="config/tables.yaml", help="the tables sheet (the papers' printed numbers)")
    p.add_argument("--random", help="JSON list of the embedding ids whose intrinsic results depend on the seed "
                                    "(the others are deterministic: one value for every seed)")
    p.add_argument("--select", help="JSON list of the claim ids to decide (default: all)")
    p.add_argument("--contextual-id", help="result id of tagging claims' `contextual` (contextual-<teacher>)")
    p.add_argument("--manifest", help="the run manifest (caption)")
    p.add_argument("--out-md", required=True, help="claims table as Markdown")
    p.add_argument("--out-csv", required=True, help="claims table as CSV")
    p.add_argument("--out-json", required=True, help="verdicts and numbers (the summary and the reference manifest read it)")
    p.add_argument("--root", default=".", help="repository root the sheets' paths are relative to")
    p.set_defaults(handler=_claims)

    p = sub.add_parser("reference", help="publish a finished run's tables, figures, manifests and per-stage "
                                         "and per-rule job times (results/reference/)")
    p.add_argument("--run", required=True, help="the run's results directory, e.g. results/default")
    p.add_argument("--out", required=True, help="e.g. results/reference")
    p.add_argument("--metadata", default=".snakemake/metadata",
                   help="Snakemake's job records (which rule ran each job; per-rule timings)")
    p.set_defaults(handler=_reference)

    p = sub.add_parser("best-layer", help="ASE's best task-independent layer: the best mean score over tasks "
                                          "(X2Static Table 3's overall layer, Figure 1's ASE line)")
    p.add_argument("results", nargs="+", metavar="LAYER=RESULT.json", help="evaluation results by layer (per seed)")
    p.add_argument("--metrics", nargs="+", required=True, help="result paths averaged (the table's tasks)")
    p.add_argument("--out", required=True, help="selection JSON ({layer, metrics, scores})")
    p.set_defaults(handler=_best_layer)

    p = sub.add_parser("pick-layer", help="an `ase` entry with layer: best: the selected layer's vectors")
    p.add_argument("--selection", required=True, help="JSON written by `staticvec report best-layer`")
    p.add_argument("--ase-dir", required=True, help="the ASE job's directory (or its ase.json)")
    p.add_argument("--vocab", default=None, help="a corpus fraction's vocabulary: keep only its words")
    p.add_argument("--out", required=True, help="the entry's vectors (a link to the layer's file, or its fraction's rows)")
    p.set_defaults(handler=_pick_layer)


def _caption_fields(corpus: dict, teacher: str | None) -> dict:
    """The keys the table builder's and figures' captions read."""
    source = corpus.get("description", {}).get("source")
    return {"corpus": ", ".join(source) if isinstance(source, list) else source,
            "tokens": corpus.get("totals", {}).get("tokens"), "teacher": teacher}


def _provenance(args) -> int:
    from staticvec.files import read_json, write_json
    from staticvec.report.provenance import caption, provenance

    corpus = read_json(args.corpus_manifest)
    teacher = args.teacher or None
    record = provenance(None, corpus, teacher=teacher, seeds=args.seeds)
    record.update(_caption_fields(corpus, teacher))
    record["provenance_caption"] = caption(record)
    write_json(args.out, record)
    print(record["provenance_caption"])
    return 0


def _manifest(args) -> int:
    from staticvec.files import read_json, write_json
    from staticvec.report.provenance import caption, provenance, training_modes

    config = json.loads(args.config_json)
    corpus = read_json(args.corpus_manifest)
    teacher_cfg = config.get("teacher", {})
    default = teacher_cfg.get("default")
    teacher = f"{default} ({teacher_cfg.get('models', {}).get(default, default)})" if default else None
    record = provenance(config, corpus, teacher=teacher)
    record.update({
        **_caption_fields(corpus, teacher),
        "teachers": teacher_cfg.get("models", {}),
        "training": training_modes(config),  # threads and determinism per method (same seed, same vectors?)
    })
    record["provenance_caption"] = caption(record)
    write_json(args.out, record)
    print(record["provenance_caption"])
    return 0


def _figure(args) -> int:
    from staticvec.report.figures import write_figure_from_args

    record = write_figure_from_args(args)
    print(record["caption"])
    return 0


def _summary(args) -> int:
    from staticvec.report.summary import write_summary_from_args

    write_summary_from_args(args)
    return 0


def _claims(args) -> int:
    from staticvec.report.claims import counts, counts_lines, write_claims_from_args

    records = write_claims_from_args(args)
    print("\n".join(counts_lines(counts(records))))
    return 0


def _reference(args) -> int:
    from staticvec.report.reference import publish, timings_markdown

    manifest = publish(args.run, args.out, args.metadata)
    print(timings_markdown(manifest["timings"]), end="")
    return 0


def _best_layer(args) -> int:
    from staticvec.errors import StaticvecError
    from staticvec.files import write_json
    from staticvec.report.best_layer import select_best_layer

    results: dict[int, list[str]] = {}
    for item in args.results:
        layer, sep, path = item.partition("=")
        if not sep or not layer.lstrip("-").isdigit() or not path:
            raise StaticvecError(f"expected LAYER=RESULT.json, got {item!r}")
        results.setdefault(int(layer), []).append(path)
    selection = select_best_layer(results, args.metrics)
    write_json(args.out, selection)
    print(f"best layer {selection['layer']} over {', '.join(args.metrics)}")
    return 0


def _pick_layer(args) -> int:
    from staticvec.report.best_layer import pick_layer

    print(pick_layer(args.selection, args.ase_dir, args.out, args.vocab))
    return 0
