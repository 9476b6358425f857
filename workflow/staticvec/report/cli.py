"""``staticvec report ...``: the run manifest (provenance of every table and figure)."""

from __future__ import annotations

import json


def register(subparsers) -> None:
    parser = subparsers.add_parser("report", help="run manifest, figures and summaries")
    sub = parser.add_subparsers(dest="report_command", required=True)
    p = sub.add_parser("manifest", help="provenance of the run: config hash, commit, corpus, teachers, seeds, date")
    p.add_argument("--config-json", required=True, help="the workflow's merged config, as JSON")
    p.add_argument("--corpus-manifest", required=True, help="<results>/corpus/manifest.json")
    p.add_argument("--out", required=True)
    p.set_defaults(handler=_manifest)


def _manifest(args) -> int:
    from staticvec.files import read_json, write_json
    from staticvec.report.provenance import caption, provenance

    config = json.loads(args.config_json)
    corpus = read_json(args.corpus_manifest)
    teacher_cfg = config.get("teacher", {})
    default = teacher_cfg.get("default")
    teacher = f"{default} ({teacher_cfg.get('models', {}).get(default, default)})" if default else None
    record = provenance(config, corpus, teacher=teacher)
    desc = corpus.get("description", {})
    source = desc.get("source")
    record.update({
        # the keys the table builder's caption reads
        "corpus": ", ".join(source) if isinstance(source, list) else source,
        "tokens": corpus.get("totals", {}).get("tokens"),
        "teacher": teacher,
        "teachers": teacher_cfg.get("models", {}),
    })
    record["provenance_caption"] = caption(record)
    write_json(args.out, record)
    print(record["provenance_caption"])
    return 0
