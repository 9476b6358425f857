"""``staticvec report ...``: the run manifest (provenance of every table and figure), one paper table
of the tables sheet (``config/tables.yaml``), one figure of the report sheet (``config/figures.yaml``),
the cross-paper summary table, the claims' verdicts, the published reference run, and ASE's best layer.

The handlers parse the command line's ``ID=FILE`` lists and JSON values, and call the report
modules' ``*_from_files`` functions.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from staticvec.cli_args import add_group, add_out_arg, add_reduced_arg, add_root_arg, assignments, json_arg


def register(subparsers) -> None:
    sub = add_group(subparsers, "report", help="paper tables, figures, summaries, claims and the run manifest",
                    dest="report_command")
    p = sub.add_parser(
        "table",
        help="write one paper table with our numbers beside the paper's (CSV + Markdown)",
        description="Assemble a paper-comparison table from the tables sheet and result files.",
    )
    p.add_argument("results", nargs="*", metavar="ID=RESULT.json",
                   help="our result files by result id (repeat an id for several seeds)")
    p.add_argument("--spec", default="config/tables.yaml", help="the tables sheet")
    p.add_argument("--table", required=True, help="table id in the sheet, e.g. c2v_table1")
    add_out_arg(p, flag="--out-csv", help="table as CSV (ours, paper, difference per cell)")
    add_out_arg(p, flag="--out-md", help="table as Markdown with its provenance caption")
    p.add_argument("--meta", help="JSON or YAML with corpus, tokens, teacher (the run manifest)")
    add_reduced_arg(p)
    add_root_arg(p, help="repository root the sheet's paths are relative to")
    p.set_defaults(handler=_table)

    p = sub.add_parser("manifest", help="provenance of the run: config hash, commit, corpus, teachers, seeds, date")
    p.add_argument("--config-json", required=True, help="the workflow's merged config, as JSON")
    p.add_argument("--corpus-manifest", required=True, help="<results>/corpus/manifest.json")
    add_out_arg(p, help="run manifest JSON to write")
    p.set_defaults(handler=_manifest)

    p = sub.add_parser("provenance", help="what the tables' and figures' captions say of the run: corpus, teacher, "
                                          "seeds, code version (depends on those settings only)")
    p.add_argument("--corpus-manifest", required=True, help="<results>/corpus/manifest.json")
    p.add_argument("--teacher", default="", help="the default teacher, as 'id (model)'")
    p.add_argument("--seeds", type=int, nargs="*", default=None, help="the run's seeds")
    add_out_arg(p, help="provenance JSON to write")
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
    add_reduced_arg(p)
    add_out_arg(p, flag="--out-pdf", help="figure as PDF")
    add_out_arg(p, flag="--out-png", help="figure as PNG (for the HTML report)")
    add_out_arg(p, flag="--out-manifest", required=False, help="default: <out-pdf without .pdf>.manifest.json")
    add_root_arg(p, help="repository root the sheet's word lists are relative to")
    p.set_defaults(handler=_figure)

    p = sub.add_parser("summary", help="every main embedding on every intrinsic set: mean ± 95 %% CI over seeds")
    p.add_argument("results", nargs="*", metavar="PROTOCOL/ID=RESULT.json",
                   help="evaluation results by protocol and embedding id (repeat for several seeds)")
    p.add_argument("--spec", default="config/figures.yaml", help="the report sheet (its summary block)")
    p.add_argument("--rows", required=True, help='JSON list of {"id": ..., "method": ...}: the rows, in order')
    p.add_argument("--manifest", help="the run manifest (caption)")
    add_out_arg(p, flag="--out-csv", help="summary as CSV")
    add_out_arg(p, flag="--out-md", help="summary as Markdown")
    add_out_arg(p, flag="--out-html", required=False, help="also an HTML page (shown inline by snakemake --report)")
    p.add_argument("--claims", help="the claims' verdicts (tables/claims.json): one count line per paper on top")
    add_reduced_arg(p)
    add_root_arg(p, help="repository root the paper tables are read from (default .)")
    p.set_defaults(handler=_summary)

    p = sub.add_parser("claims", help="decide the papers' claims (config/claims.yaml) from this run's results: "
                                      "per-seed paired differences, 95 %% intervals, holds / fails (Holm) / "
                                      "undecided / not tested, on the items every row scored")
    p.add_argument("results", nargs="*", metavar="KEY=RESULT.json",
                   help="PROTOCOL/ID/SEED=FILE (intrinsic, one per seed), tagging/ID=FILE, classification/ID=FILE, "
                        "record/ID/SEED=FILE (a training record: its development curve)")
    p.add_argument("--spec", default="config/claims.yaml", help="the claims sheet")
    p.add_argument("--tables", default="config/tables.yaml", help="the tables sheet (the papers' printed numbers)")
    p.add_argument("--random", help="JSON list of the embedding ids whose intrinsic results depend on the seed "
                                    "(the others are deterministic: one value for every seed)")
    p.add_argument("--select", help="JSON list of the claim ids to decide (default: all)")
    p.add_argument("--contextual-id", help="result id of tagging claims' `contextual` (contextual-<teacher>)")
    p.add_argument("--manifest", help="the run manifest (caption)")
    add_out_arg(p, flag="--out-md", help="claims table as Markdown")
    add_out_arg(p, flag="--out-csv", help="claims table as CSV")
    add_out_arg(p, flag="--out-json", help="verdicts and numbers (the summary and the reference manifest read it)")
    add_root_arg(p, help="repository root the sheets' paths are relative to")
    p.set_defaults(handler=_claims)

    p = sub.add_parser("claims-figure", help="a forest plot of one paper's claims (or the claims beyond the "
                                             "papers) from tables/claims.json")
    p.add_argument("--claims", required=True, help="the claims' verdicts and numbers (tables/claims.json)")
    p.add_argument("--group", required=True, help="a paper (semglove, wang, c2v, x2static) or beyond")
    add_out_arg(p, flag="--out-pdf", help="the figure as PDF")
    add_out_arg(p, flag="--out-png", help="the figure as PNG")
    p.set_defaults(handler=_claims_figure)

    p = sub.add_parser("corpus-scale", help="each corpus-trained method over corpus size: a table and a figure of "
                                            "its scores, the corpus-free levels and where it reaches Model2Vec")
    p.add_argument("results", nargs="*", metavar="PROTOCOL/ID=RESULT.json",
                   help="evaluation results of the points and levels by protocol and embedding id (seed 1)")
    p.add_argument("--spec", default="config/figures.yaml", help="the report sheet (its corpus_scale block)")
    p.add_argument("--tables", default="config/tables.yaml", help="the tables sheet (the papers' printed numbers)")
    p.add_argument("--sweep", required=True, help="the sweep's definition as JSON (bases, fractions)")
    p.add_argument("--points", required=True, help='JSON {base: {fraction: embedding id}}: whose result each point is')
    p.add_argument("--panels", required=True, help='JSON list of {"metric", "protocol", "tables", "claims"}')
    p.add_argument("--corpus-manifest", required=True, help="the corpus manifest (tokens of each fraction's shards)")
    p.add_argument("--manifest", help="the run's provenance (caption)")
    add_out_arg(p, flag="--out-md", help="table as Markdown")
    add_out_arg(p, flag="--out-csv", help="table as CSV")
    add_out_arg(p, flag="--out-pdf", help="figure as PDF")
    add_out_arg(p, flag="--out-png", help="figure as PNG")
    add_out_arg(p, flag="--out-manifest", required=False, help="default: <out-pdf without .pdf>.manifest.json")
    add_root_arg(p, help="repository root the sheets' paths are relative to")
    p.set_defaults(handler=_corpus_scale)

    p = sub.add_parser("verdicts", help="each claim's verdict in two runs side by side (e.g. the tour at 1M and the "
                                        "claims scale at 10M tokens): which moved, and how far each difference moved")
    p.add_argument("--before", required=True, help="the first run: its results directory or its tables/claims.json")
    p.add_argument("--after", required=True, help="the second run: its results directory or its tables/claims.json")
    p.add_argument("--before-label", help="the first run's column name (default: its corpus tokens, e.g. 1M)")
    p.add_argument("--after-label", help="the second run's column name (default: its corpus tokens, e.g. 10M)")
    add_out_arg(p, flag="--out-md", help="the comparison as Markdown")
    add_out_arg(p, flag="--out-csv", required=False, help="the comparison as CSV")
    p.set_defaults(handler=_verdicts)

    p = sub.add_parser("docs", help="rewrite the generated passages of README.md, docs/ and the reference READMEs "
                                    "(<!-- generated: NAME -->) from the committed files they quote")
    p.add_argument("files", nargs="+", help="Markdown files holding generated passages")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale passage")
    p.add_argument("--root", help="the repository whose committed files are read (default: the one holding each file)")
    p.set_defaults(handler=_docs)

    p = sub.add_parser("same-outputs", help="two runs' results file by file: the same bytes but for logs/, benchmarks/ "
                                            "and the JSON field `timing` (staticvec.same_outputs); exit 1 if not")
    p.add_argument("run_a", help="the first run's results directory")
    p.add_argument("run_b", help="the second run's results directory")
    p.add_argument("--root-a", nargs="*", default=[], help="the directories of the first run its files may name, "
                                                            "read as the second's (default: RUN_A itself)")
    p.add_argument("--root-b", nargs="*", default=[], help="the same for the second run (default: RUN_B)")
    p.set_defaults(handler=_same_outputs)

    p = sub.add_parser("reference", help="publish a finished run's tables, figures, manifests and per-stage "
                                         "and per-rule job times (results/reference/tour-1m/, claims-10m/)")
    p.add_argument("--run", required=True, help="the run's results directory, e.g. results/default")
    add_out_arg(p, help="e.g. results/reference/tour-1m")
    p.add_argument("--metadata", default=".snakemake/metadata",
                   help="Snakemake's job records (which rule ran each job; per-rule timings)")
    p.add_argument("--projection", help="the run's projection (benchmarks/scale_projection.py --json): timings.md sets "
                                        "the measured job time per stage beside it")
    p.add_argument("--tour", help="the tour's published manifest (e.g. results/reference/tour-1m/manifest.json): "
                                  "timings.md gives the ratio of each stage's job time to the tour's")
    p.set_defaults(handler=_reference)

    p = sub.add_parser("segment", help="run a command as one sitting of a long run, its start, end, exit status and "
                                       "`uptime` appended to <run>/segments.tsv (timings.md lists them)")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", help="the run's results directory")
    where.add_argument("--configfile", nargs="+", help="config files of the run (its results_dir is the directory)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command, e.g. snakemake --cores all ...")
    p.set_defaults(handler=_segment)

    p = sub.add_parser("best-layer", help="ASE's best task-independent layer: the best mean score over tasks "
                                          "(X2Static Table 3's overall layer, Figure 1's ASE line)")
    p.add_argument("results", nargs="+", metavar="LAYER=RESULT.json", help="evaluation results by layer (per seed)")
    p.add_argument("--metrics", nargs="+", required=True, help="result paths averaged (the table's tasks)")
    add_out_arg(p, help="selection JSON ({layer, metrics, scores})")
    p.set_defaults(handler=_best_layer)

    p = sub.add_parser("pick-layer", help="an `ase` entry with layer: best: the selected layer's vectors")
    p.add_argument("--selection", required=True, help="JSON written by `staticvec report best-layer`")
    p.add_argument("--ase-dir", required=True, help="the ASE job's directory (or its ase.json)")
    p.add_argument("--vocab", default=None, help="a corpus fraction's vocabulary: keep only its words")
    add_out_arg(p, help="the entry's vectors (a link to the layer's file, or its fraction's rows)")
    p.set_defaults(handler=_pick_layer)


def _table(args) -> int:
    from staticvec.report.tables import table_from_files

    table_from_files(args.spec, args.table, assignments(args.results, "ID=RESULT.json"), args.out_csv, args.out_md,
                     args.meta, args.root, reduced=_reduced(args))
    return 0


def _reduced(args) -> dict | None:
    return json_arg(args.reduced, "--reduced") if args.reduced else None


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

    config = json_arg(args.config_json, "--config-json")
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
    from staticvec.report.figures import figure_from_files

    record = figure_from_files(args.spec, args.figure, assignments(args.results or [], "ID=FILE"), args.out_pdf,
                               args.out_png, args.out_manifest, args.manifest, args.sweep, args.corpus_manifest,
                               args.attention, args.root, reduced=_reduced(args))
    print(record["caption"])
    return 0


def _summary(args) -> int:
    from staticvec.report.summary import summary_from_files

    summary_from_files(args.spec, json_arg(args.rows, "--rows"), protocol_results(args.results), args.out_csv,
                       args.out_md, args.out_html, args.manifest, args.claims, args.root, reduced=_reduced(args))
    return 0


def _claims(args) -> int:
    from staticvec.report.claims import claims_from_files, counts, counts_lines, parse_results

    records = claims_from_files(args.spec, parse_results(args.results), args.out_md, args.out_csv, args.out_json,
                                tables=args.tables, random=json_arg(args.random or "[]", "--random"),
                                contextual_id=args.contextual_id,
                                selected=json_arg(args.select, "--select") if args.select else None,
                                manifest=args.manifest, root=args.root)
    print("\n".join(counts_lines(counts(records))))
    return 0


def _claims_figure(args) -> int:
    from staticvec.report.forest import forest_from_files

    drawn = forest_from_files(args.claims, args.group, args.out_pdf, args.out_png)
    print(f"{args.group}: {drawn} comparisons drawn")
    return 0


def _corpus_scale(args) -> int:
    from staticvec.report.corpus_scale import corpus_scale_from_files

    record = corpus_scale_from_files(args.spec, args.tables, json_arg(args.panels, "--panels"), args.sweep,
                                     json_arg(args.points, "--points"), protocol_results(args.results),
                                     args.corpus_manifest, args.out_md, args.out_csv, args.out_pdf, args.out_png,
                                     args.out_manifest, args.manifest, args.root)
    print(record["caption"])
    return 0


def _verdicts(args) -> int:
    from staticvec.report.verdicts import UNMOVED, tally_moves, verdicts_from_files

    rows = verdicts_from_files(args.before, args.after, args.out_md, args.out_csv, args.before_label, args.after_label)
    moved, tally = tally_moves(rows)
    tested = sum(tally.get(k, 0) for k in UNMOVED[1:])
    print(f"{len(moved)} of {len(rows)} verdicts moved"
          + (": " + ", ".join(f"{r['id']} ({r['moved']})" for r in moved) if moved else "")
          + (f"; {tested} tested in one run only" if tested else ""))
    return 0


def _docs(args) -> int:
    from staticvec.report.docblocks import update

    stale = update(args.files, Path(args.root) if args.root else None, check=args.check)
    for line in stale:
        print(f"{line}: {'stale' if args.check else 'rewritten'}")
    return 1 if stale and args.check else 0


def _same_outputs(args) -> int:
    from staticvec.same_outputs import compared_files, differences

    found = differences(args.run_a, args.run_b, tuple(args.root_a), tuple(args.root_b))
    for rel, why in found:
        print(f"{rel}: {why}")
    print(f"{len(found)} of {compared_files(args.run_a)} files differ (logs, benchmarks and timing fields aside)")
    return 1 if found else 0


def _reference(args) -> int:
    from staticvec.report.reference import publish, timings_markdown

    manifest = publish(args.run, args.out, args.metadata, args.projection, args.tour)
    print(timings_markdown(manifest["timings"], manifest["timings"].get("segments")), end="")
    return 0


def _segment(args) -> int:
    from staticvec.config import load_config
    from staticvec.errors import StaticvecError
    from staticvec.report.segments import run_segment

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise StaticvecError("report segment: no command given (put it after --)")
    run = args.run or load_config(args.configfile)["results_dir"]
    return run_segment(run, command)


def _best_layer(args) -> int:
    from staticvec.files import write_json
    from staticvec.report.best_layer import select_best_layer

    results = assignments(args.results, "LAYER=RESULT.json", key=_layer)
    selection = select_best_layer(results, args.metrics)
    write_json(args.out, selection)
    print(f"best layer {selection['layer']} over {', '.join(args.metrics)}")
    return 0


def _pick_layer(args) -> int:
    from staticvec.report.best_layer import pick_layer

    print(pick_layer(args.selection, args.ase_dir, args.out, args.vocab))
    return 0


def _layer(text: str) -> int:
    """A layer number of ``LAYER=RESULT.json`` (negative counts from the last)."""
    if not text.lstrip("-").isdigit():
        raise ValueError(text)
    return int(text)


def protocol_results(items) -> dict[tuple[str, str], list[str]]:
    """``PROTOCOL/ID=FILE`` arguments -> {(protocol, id): [files]} (an id repeated for several seeds)."""

    def key(text: str) -> tuple[str, str]:
        protocol, slash, emb = text.partition("/")
        if not slash or not protocol or not emb:
            raise ValueError(text)
        return protocol, emb

    return assignments(items or [], "PROTOCOL/ID=FILE", key=key)
