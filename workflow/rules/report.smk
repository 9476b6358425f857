# The run manifest (provenance every table and figure carries), the figures of the report sheet
# (config/figures.yaml) and the cross-paper summary table. Outputs marked with report() make up
# `snakemake --report report.html` (captions in workflow/report/).
#
#   {R}/manifest.json
#   {R}/figures/{paper}/{figure}.pdf + .png + .manifest.json     (one target per figure)
#   {R}/tables/summary.md + .csv + .html

import json


rule run_manifest:
    input:
        corpus=W.manifest,
    output:
        W.run_manifest,
    params:
        config=json.dumps(config, sort_keys=True, default=str),
    log:
        f"{R}/logs/report/manifest.log",
    localrule: True
    conda:
        CPU_ENV
    shell:
        "staticvec report manifest --config-json {params.config:q} --corpus-manifest {input.corpus}"
        " --out {output} > {log} 2>&1"


def figure_id(wildcards):
    return f"{wildcards.paper}_{wildcards.figure}"


rule figure:
    input:
        unpack(lambda wc: W.figure_inputs(figure_id(wc))),
    output:
        pdf=f"{R}/figures/{{paper}}/{{figure}}.pdf",
        png=report(
            f"{R}/figures/{{paper}}/{{figure}}.png",
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{paper}",
            labels={"figure": "{figure}"},
        ),
        manifest=f"{R}/figures/{{paper}}/{{figure}}.manifest.json",
    params:
        args=lambda wc: W.figure_args(figure_id(wc)),
        title=lambda wc: W.figure_entry(figure_id(wc))["title"],
        note=lambda wc: W.figure_entry(figure_id(wc)).get("caption", ""),
    log:
        f"{R}/logs/figures/{{paper}}/{{figure}}.log",
    benchmark:
        f"{R}/benchmarks/figures/{{paper}}/{{figure}}.tsv"
    wildcard_constraints:
        paper="[a-z0-9]+",
        figure="figure[0-9]+[a-z]?",
    threads: 1
    resources:
        # t-SNE figures load whole vector files, one at a time
        mem_mb=lambda wc, input: 2000 + 3 * int(input.size_mb),
        runtime=30,
    conda:
        CPU_ENV
    shell:
        "staticvec report figure --spec {input.sheet} --figure {wildcards.paper}_{wildcards.figure}"
        " --manifest {input.manifest} --out-pdf {output.pdf} --out-png {output.png}"
        " --out-manifest {output.manifest} {params.args} > {log} 2>&1"


rule summary_table:
    input:
        results=[path for _, path in W.summary_results()],
        sheet=W.figures_sheet,
        manifest=W.run_manifest,
    output:
        md=report(W.summary_file("md"), caption="../report/summary.rst", category="Summary", labels={"file": "md"}),
        csv=report(W.summary_file("csv"), caption="../report/summary.rst", category="Summary", labels={"file": "csv"}),
        html=report(W.summary_file("html"), caption="../report/summary.rst", category="Summary", labels={"file": "html"}),
    params:
        args=W.summary_args(),
    log:
        f"{R}/logs/tables/summary.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CPU_ENV
    shell:
        "staticvec report summary --spec {input.sheet} --manifest {input.manifest} --out-csv {output.csv}"
        " --out-md {output.md} --out-html {output.html} {params.args} > {log} 2>&1"


rule ase_best_layer:
    # X2Static's best task-independent ASE layer (config methods.ase.best_layer), for `layer: best` entries
    input:
        lambda wc: [path for _, path in W.ase_best_results()],
    output:
        f"{R}/teacher/{{teacher}}/baselines/ase-best-layer.json",
    params:
        results=lambda wc: " ".join(f"{layer}={path}" for layer, path in W.ase_best_results()),
        metrics=" ".join(config["methods"]["ase"].get("best_layer", {}).get("metrics", [])),
    log:
        f"{R}/logs/teacher/{{teacher}}/ase-best-layer.log",
    localrule: True
    shell:
        "staticvec report best-layer {params.results} --metrics {params.metrics} --out {output} > {log} 2>&1"
