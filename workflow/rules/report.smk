# The run's provenance (what every table's and figure's caption says: corpus, teacher, seeds), the
# run manifest (the whole config; a leaf, so a config change reruns no table that does not read the
# changed setting), the figures of the report sheet (config/figures.yaml) and the cross-paper summary
# table. Outputs marked with report() make up `snakemake --report report.html` (captions in workflow/report/).
#
#   {R}/provenance.json
#   {R}/manifest.json
#   {R}/figures/{paper}/{figure}.pdf + .png + .manifest.json     (one target per figure)
#   {R}/tables/summary.md + .csv + .html                          (counts of the claims' verdicts on top)
#   {R}/tables/claims.md + .csv + .json                          (the papers' claims: config/claims.yaml)


rule provenance:
    input:
        corpus=W.manifest,
    output:
        W.provenance_file,
    params:
        args=W.provenance_args(),
    log:
        P.log("provenance"),
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec report provenance --corpus-manifest {input.corpus} {params.args} --out {output} > {log} 2>&1"


rule run_manifest:
    input:
        corpus=W.manifest,
    output:
        W.run_manifest,
    params:
        config=RF.config_json(),
    log:
        P.log("run_manifest"),
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec report manifest --config-json {params.config:q} --corpus-manifest {input.corpus}"
        " --out {output} > {log} 2>&1"


rule figure:
    input:
        unpack(RF.figure_inputs),
    output:
        pdf=P.figure_file("pdf"),
        png=report(
            P.figure_file("png"),
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{paper}",
            labels={"figure": "{figure}"},
        ),
        manifest=P.figure_file("manifest.json"),
    params:
        args=RF.figure_args,
        title=RF.figure_title,
        note=RF.figure_note,
    log:
        P.log("figure"),
    benchmark:
        P.benchmark("figure")
    wildcard_constraints:
        paper="[a-z0-9]+",
        figure="figure[0-9]+[a-z]?",
    threads: RF.threads("figure")
    resources:
        **RF.resources("figure"),  # memory: the whole vector files it loads (their size once they exist)
    conda:
        CPU_ENV
    shell:
        "staticvec report figure --spec {input.sheet} --figure {wildcards.paper}_{wildcards.figure}"
        " --manifest {input.manifest} --out-pdf {output.pdf} --out-png {output.png}"
        " --out-manifest {output.manifest} {params.args} > {log} 2>&1"


rule summary_table:
    input:
        results=W.summary_result_files(),
        sheet=W.figures_sheet,
        manifest=W.provenance_file,
        claims=W.summary_claims(),
    output:
        md=report(W.summary_file("md"), caption="../report/summary.rst", category="Summary", labels={"file": "md"}),
        csv=report(W.summary_file("csv"), caption="../report/summary.rst", category="Summary", labels={"file": "csv"}),
        html=report(W.summary_file("html"), caption="../report/summary.rst", category="Summary", labels={"file": "html"}),
    params:
        args=W.summary_args(),
        claims=W.summary_claims_args(),
    log:
        P.log("summary_table"),
    threads: RF.threads("summary_table")
    resources:
        **RF.resources("summary_table"),
    conda:
        CPU_ENV
    shell:
        "staticvec report summary --spec {input.sheet} --manifest {input.manifest} --out-csv {output.csv}"
        " --out-md {output.md} --out-html {output.html} {params.claims} {params.args} > {log} 2>&1"


# Every claim of the claims sheet decided from the evaluation results: per-seed paired differences,
# their 95 % t interval, holds / fails / undecided with the reason, and the paper's own numbers checked.
rule claims:
    input:
        results=W.claims_result_files(),
        sheet=W.claims_sheet,
        tables=W.tables_sheet,
        manifest=W.provenance_file,
    output:
        md=report(W.claims_file("md"), caption="../report/claims.rst", category="Claims", labels={"file": "md"}),
        csv=report(W.claims_file("csv"), caption="../report/claims.rst", category="Claims", labels={"file": "csv"}),
        json=W.claims_file("json"),
    params:
        args=W.claims_args(),
    log:
        P.log("claims"),
    threads: RF.threads("claims")
    resources:
        **RF.resources("claims"),
    conda:
        CPU_ENV
    shell:
        "staticvec report claims --spec {input.sheet} --tables {input.tables} --manifest {input.manifest}"
        " --out-md {output.md} --out-csv {output.csv} --out-json {output.json} {params.args} > {log} 2>&1"


rule ase_best_layer:
    # X2Static's best task-independent ASE layer (config methods.ase.best_layer), for `layer: best` entries
    input:
        RF.ase_best_inputs,
    output:
        W.ase_best_layer(),
    params:
        args=RF.ase_best_args,
    log:
        P.log("ase_best_layer"),
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec report best-layer {params.args} --out {output} > {log} 2>&1"
