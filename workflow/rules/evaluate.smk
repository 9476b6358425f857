# Intrinsic evaluation of every embedding (per seed and evaluation protocol), and the paper tables:
# our numbers beside the paper's (staticvec.report.tables; sheet: config/tables.yaml).
#
#   {R}/embeddings/{emb}/seed{seed}/vectors.bin -> {R}/eval/{emb}/seed{seed}/intrinsic.{protocol}.json
#   result files of a table                       -> {R}/tables/{paper}/{table}.csv + .md (+ .manifest.json)
#
# {protocol} is an entry of config evaluation.protocols (web, muse, drop): the OOV policy, case and
# vocabulary cut a paper's authors evaluated with; the tables sheet says which table uses which.
# One job scores every protocol the tables, figures and summary read of every seed of an embedding
# (one rule per set of protocols and seeds, W.intrinsic_groups: the libraries imported and the data
# sets parsed once, each seed's vectors read in turn); the per-protocol rule below makes any other
# result file on request.

for (_protocols, _seeds), _embeddings in W.intrinsic_groups().items():

    rule:
        name:
            W.intrinsic_rule_name(_protocols, _seeds)
        input:
            vectors=W.seed_embeddings(_seeds),
            data=W.eval_markers(),
        output:
            **W.intrinsic_outputs(_protocols, _seeds),
        log:
            P.log("evaluate_intrinsic_seeds", protocol=_protocols, seeds=_seeds),
        benchmark:
            P.benchmark("evaluate_intrinsic_seeds", protocol=_protocols, seeds=_seeds)
        params:
            options=RF.intrinsic_options(_protocols, _seeds),  # a function bound to this group (the loop variables are not)
        wildcard_constraints:
            emb=W.ids_alternatives(_embeddings),
        threads: RF.threads(W.intrinsic_rule_name(_protocols, _seeds), seeds=len(_seeds))
        resources:
            **RF.resources(W.intrinsic_rule_name(_protocols, _seeds), seeds=len(_seeds)),
        conda:
            CPU_ENV
        shell:
            "staticvec evaluate intrinsic {input.vectors} --threads {threads} {params.options} > {log} 2>&1"

    workflow.ruleorder(W.intrinsic_rule_name(_protocols, _seeds), "evaluate_intrinsic")  # one job per embedding


rule evaluate_intrinsic:
    input:
        vectors=W.embedding("{emb}"),
        data=W.eval_markers(),
    output:
        W.intrinsic_result("{emb}"),
    params:
        options=RF.protocol_options,
    log:
        P.log("evaluate_intrinsic"),
    benchmark:
        P.benchmark("evaluate_intrinsic")
    wildcard_constraints:
        protocol=W.protocols_regex,
    threads: RF.threads("evaluate_intrinsic")
    resources:
        **RF.resources("evaluate_intrinsic"),
    conda:
        CPU_ENV
    shell:
        "staticvec evaluate intrinsic {input.vectors} --out {output} --threads {threads} {params.options} > {log} 2>&1"


rule paper_table:
    input:
        unpack(RF.table_inputs),
        sheet=W.tables_sheet,
        manifest=W.provenance_file,
    output:
        csv=report(P.table_file("csv"), caption="../report/table.rst", category="Tables",
                   subcategory="{paper}", labels={"table": "{table}", "file": "csv"}),
        md=report(P.table_file("md"), caption="../report/table.rst", category="Tables",
                  subcategory="{paper}", labels={"table": "{table}", "file": "md"}),
    params:
        results=RF.table_result_args,
    log:
        P.log("paper_table"),
    wildcard_constraints:
        paper="[a-z0-9]+",
        table="table[0-9]+",
    threads: RF.threads("paper_table")
    resources:
        **RF.resources("paper_table"),
    conda:
        CPU_ENV
    shell:
        "staticvec report table --spec {input.sheet} --table {wildcards.paper}_{wildcards.table} --meta {input.manifest}"
        " --out-csv {output.csv} --out-md {output.md} {params.results} > {log} 2>&1"
