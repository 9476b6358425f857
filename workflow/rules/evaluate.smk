# Intrinsic evaluation of every embedding (per seed and evaluation protocol), and the paper tables:
# our numbers beside the paper's (staticvec.report.tables; sheet: config/tables.yaml).
#
#   {R}/embeddings/{emb}/seed{seed}/vectors.bin -> {R}/eval/{emb}/seed{seed}/intrinsic.{protocol}.json
#   result files of a table                       -> {R}/tables/{paper}/{table}.csv + .md (+ .manifest.json)
#
# {protocol} is an entry of config evaluation.protocols (web, muse, drop): the OOV policy, case and
# vocabulary cut a paper's authors evaluated with; the tables sheet says which table uses which.
# One job scores every protocol the tables, figures and summary read of an embedding (one rule per
# set of protocols, W.intrinsic_groups: the vectors read and the data sets parsed once); the
# per-protocol rule below makes any other result file on request.

import re
import shlex

from staticvec.evaluate.intrinsic import cli_options


for _protocols, _embeddings in W.intrinsic_groups().items():

    rule:
        name:
            "evaluate_intrinsic_" + "_".join(_protocols)
        input:
            vectors=W.embedding("{emb}"),
            data=W.eval_markers(),
        output:
            **{p: W.intrinsic_result("{emb}", protocol=p) for p in _protocols},
        log:
            f"{R}/logs/eval/{{emb}}/seed{{seed}}/intrinsic.{'+'.join(_protocols)}.log",
        benchmark:
            f"{R}/benchmarks/eval/{{emb}}/seed{{seed}}/intrinsic.{'+'.join(_protocols)}.tsv"
        params:
            options=RF.intrinsic_options(_protocols),  # a function bound to this group (the loop variable is not)
        wildcard_constraints:
            emb="|".join(re.escape(e) for e in _embeddings),
        threads: 1
        resources:
            mem_mb=8000,
            runtime=60,
        conda:
            CPU_ENV
        shell:
            "staticvec evaluate intrinsic {input.vectors} --threads {threads} {params.options} > {log} 2>&1"

    workflow.ruleorder("evaluate_intrinsic_" + "_".join(_protocols), "evaluate_intrinsic")  # one job per embedding


rule evaluate_intrinsic:
    input:
        vectors=W.embedding("{emb}"),
        data=W.eval_markers(),
    output:
        W.intrinsic_result("{emb}"),
    params:
        options=lambda wc: shlex.join(cli_options(config, wc.protocol)),
    log:
        f"{R}/logs/eval/{{emb}}/seed{{seed}}/intrinsic.{{protocol}}.log",
    benchmark:
        f"{R}/benchmarks/eval/{{emb}}/seed{{seed}}/intrinsic.{{protocol}}.tsv"
    wildcard_constraints:
        protocol="|".join(config["evaluation"]["protocols"]),
    threads: 1
    resources:
        mem_mb=8000,
        runtime=60,
    conda:
        CPU_ENV
    shell:
        "staticvec evaluate intrinsic {input.vectors} --out {output} --threads {threads} {params.options} > {log} 2>&1"


rule paper_table:
    input:
        unpack(lambda wc: W.table_inputs(f"{wc.paper}_{wc.table}")),
        sheet=W.tables_sheet,
        manifest=W.provenance_file,
    output:
        csv=report(f"{R}/tables/{{paper}}/{{table}}.csv", caption="../report/table.rst", category="Tables",
                   subcategory="{paper}", labels={"table": "{table}", "file": "csv"}),
        md=report(f"{R}/tables/{{paper}}/{{table}}.md", caption="../report/table.rst", category="Tables",
                  subcategory="{paper}", labels={"table": "{table}", "file": "md"}),
    params:
        results=lambda wc: W.table_result_args(f"{wc.paper}_{wc.table}"),
    log:
        f"{R}/logs/tables/{{paper}}/{{table}}.log",
    wildcard_constraints:
        paper="[a-z0-9]+",
        table="table[0-9]+",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CPU_ENV
    shell:
        "staticvec report table --spec {input.sheet} --table {wildcards.paper}_{wildcards.table} --meta {input.manifest}"
        " --out-csv {output.csv} --out-md {output.md} {params.results} > {log} 2>&1"
