# Intrinsic evaluation of every embedding, and the paper tables (ours beside the paper's numbers).
#
#   {R}/embeddings/{emb}/vectors.bin  ->  {R}/eval/{emb}/intrinsic.{protocol}.json   (staticvec evaluate)
#   result files of a table           ->  {R}/tables/{paper}/{table}.csv + .md       (staticvec table)
#
# {protocol} is an entry of config evaluation.protocols (web, muse, drop): the OOV policy, case and
# vocabulary cut a paper's authors evaluated with; config/tables.yaml says which table uses which.
# Table ids in the sheet are "<paper>_<table>" (e.g. c2v_table1 -> {R}/tables/c2v/table1.md).

import shlex

from staticvec.evaluate.intrinsic import cli_options
from staticvec.report.tables import load_tables_spec, table_result_paths

TABLES_SHEET = "config/tables.yaml"
TABLES = load_tables_spec(TABLES_SHEET)["tables"]

# Where each kind of table finds our results ({emb}: result id of a table row). The extrinsic and
# co-occurrence patterns are placeholders until those stages name their outputs.
RESULT_PATTERNS = {
    "intrinsic": f"{R}/eval/{{emb}}/intrinsic.{{protocol}}.json",
    "tagging": f"{R}/eval/{{emb}}/tagging.json",
    "classification": f"{R}/eval/{{emb}}/classification.json",
    "cooccurrence": f"{R}/cooc/{{emb}}.table5.json",
}

# Result ids the DAG produces (the embeddings sheet); None = every id a table names.
AVAILABLE_RESULTS = None


def evaluate_options(wildcards):
    return shlex.join(cli_options(config, wildcards.protocol))


def table_inputs(wildcards):
    entry = TABLES[f"{wildcards.paper}_{wildcards.table}"]
    return table_result_paths(entry, RESULT_PATTERNS[entry["source"]], AVAILABLE_RESULTS)


def table_result_args(wildcards, input):
    return shlex.join(f"{key}={path}" for key, path in input.items() if key != "sheet")


def table_targets(sources=None):
    """Markdown of every table in the sheet whose source is in ``sources`` (default all), for rule all."""
    return [
        f"{R}/tables/{t.split('_table')[0]}/table{t.split('_table')[1]}.md"
        for t, entry in TABLES.items()
        if sources is None or entry["source"] in sources
    ]


rule evaluate_intrinsic:
    input:
        vectors=f"{R}/embeddings/{{emb}}/vectors.bin",
    output:
        f"{R}/eval/{{emb}}/intrinsic.{{protocol}}.json",
    params:
        options=evaluate_options,
    log:
        f"logs/eval/{{emb}}/intrinsic.{{protocol}}.log",
    benchmark:
        f"{R}/benchmarks/eval/{{emb}}/intrinsic.{{protocol}}.tsv"
    wildcard_constraints:
        protocol="|".join(config["evaluation"]["protocols"]),
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
        gpu=1 if config.get("device") == "cuda" else 0,
    shell:
        "staticvec evaluate {input.vectors} --out {output} --threads {threads} {params.options} > {log} 2>&1"


rule paper_table:
    input:
        unpack(table_inputs),
        sheet=TABLES_SHEET,
    output:
        csv=f"{R}/tables/{{paper}}/{{table}}.csv",
        md=f"{R}/tables/{{paper}}/{{table}}.md",
    params:
        results=table_result_args,
    log:
        f"logs/tables/{{paper}}/{{table}}.log",
    benchmark:
        f"{R}/benchmarks/tables/{{paper}}/{{table}}.tsv"
    wildcard_constraints:
        paper="[a-z0-9]+",
        table="table[0-9]+",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "staticvec table --spec {input.sheet} --table {wildcards.paper}_{wildcards.table}"
        " --out-csv {output.csv} --out-md {output.md} {params.results} > {log} 2>&1"
