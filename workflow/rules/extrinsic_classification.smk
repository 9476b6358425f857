# Downstream sentence classification (X2Static Table 4): one job per embedding scores it with the
# paper's CNN on MR, CR, SUBJ, MPQA, TREC and SST-5 over the configured seeds.
# Settings come from config["classification"] (staticvec.evaluate.classification_cli.config_arguments).
# Integration points for the lead's Workflow helper (names assumed): W.embedding_file(emb) is the
# embedding file of sheet row `emb`; W.resource_dir("eval-classification") the fetched data folder.

from staticvec.evaluate.classification_cli import config_arguments as classification_arguments


rule classification:
    input:
        vectors=lambda wc: W.embedding_file(wc.emb),
        data=W.resource_dir("eval-classification"),
    output:
        f"{R}/eval/{{emb}}/classification.json",
    log:
        "logs/eval/{emb}/classification.log",
    benchmark:
        f"{R}/benchmarks/eval/{{emb}}/classification.tsv"
    params:
        args=classification_arguments(config),
    threads: config.get("classification", {}).get("threads", 1)
    resources:
        mem_mb=4000,
        runtime=240,
        gpu=1 if config.get("device") == "cuda" else 0,
    shell:
        "staticvec classify --vectors {input.vectors} --data-dir {input.data} --out {output} --threads {threads} {params.args} > {log} 2>&1"
