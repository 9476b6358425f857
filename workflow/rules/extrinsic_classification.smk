# Downstream sentence classification (X2Static Table 4): one job per embedding scores it with the
# paper's CNN on MR, CR, SUBJ, MPQA, TREC and SST-5 over the classification seeds (the embedding of
# the first training seed). Settings: config classification (staticvec.dag.arguments.config_arguments).


rule classification:
    input:
        vectors=RF.first_seed_embedding,
        data=W.resource_marker("eval-classification"),
    output:
        W.classification_result("{emb}"),
    params:
        data=W.resource_dir("eval-classification"),
        args=RF.classification_args(),
    log:
        P.log("classification"),
    benchmark:
        P.benchmark("classification")
    threads: RF.threads("classification")
    resources:
        **RF.resources("classification"),
    conda:
        GPU_ENV
    shell:
        "staticvec evaluate classify --vectors {input.vectors} --data-dir {params.data} --out {output} --threads {threads}"
        " {params.args} > {log} 2>&1"
