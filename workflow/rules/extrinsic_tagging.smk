# Extrinsic sequence labelling (SemGloVe Table 2, Wang et al. Table 3, Context-to-Vec Table 3):
#
#   {R}/embeddings/{emb}/seed{s}/vectors.bin -> {R}/eval/{emb}/tagging/{task}.seed{seed}.json (staticvec evaluate tag)
#   the teacher (contextual row)      ->  {R}/eval/contextual-{teacher}/tagging/...        (staticvec evaluate tag --teacher)
#   every task × seed of one {emb}    ->  {R}/eval/{emb}/tagging.json + .csv               (staticvec evaluate tag-summary)
#
# tagging.json (W.tagging_result) is what the tables sheet's `source: tagging` tables read. Settings: config["tagging"]; data: CoNLL-2000 and UD EWT from the resource
# registry, PTB WSJ / CoNLL-2003 / OntoNotes from resources.restricted when the user supplies them
# (staticvec.evaluate.tagging.data). Without NER data the ner result records "not run".
# Tagger seed s reads the embedding trained with seed s (a deterministic method's one run), so the
# spread over seeds holds both the embedding's and the tagger's randomness.

rule tag:
    input:
        vectors=RF.tag_vectors,
        data=RF.tag_data_inputs,
    output:
        RF.tag_result(),
    params:
        data=RF.tag_data_args,
        args=RF.tagger_args(),
    log:
        P.log("tag"),
    benchmark:
        P.benchmark("tag")
    wildcard_constraints:
        emb=r"(?!contextual-)[^/]+",  # contextual-<teacher> rows are tag_contextual's
        task="chunk|pos|ner",
    threads: RF.threads("tag")
    resources:
        **RF.resources("tag"),
    conda:
        GPU_ENV
    shell:
        "staticvec evaluate tag --vectors {input.vectors} --name {wildcards.emb} --task {wildcards.task} {params.data}"
        " --seed {wildcards.seed} --threads {threads} {params.args} --out {output} > {log} 2>&1"


# The papers' BERT-base row: the teacher's frozen per-token vectors through the same tagger.
rule tag_contextual:
    input:
        data=RF.tag_data_inputs,
    output:
        RF.tag_result("contextual-{teacher}"),
    params:
        teacher=RF.tag_teacher_spec,
        layer=RF.tag_contextual_layer,
        online=RF.tag_online_flag(),
        data=RF.tag_data_args,
        args=RF.tagger_args(),
    log:
        P.log("tag_contextual"),
    benchmark:
        P.benchmark("tag_contextual")
    wildcard_constraints:
        task="chunk|pos|ner",
    threads: RF.threads("tag_contextual")
    resources:
        **RF.resources("tag_contextual"),
    conda:
        GPU_ENV
    shell:
        "staticvec evaluate tag --teacher {params.teacher} --layer {params.layer} {params.online} --name contextual-{wildcards.teacher}"
        " --task {wildcards.task} {params.data} --seed {wildcards.seed} --threads {threads} {params.args}"
        " --out {output} > {log} 2>&1"


rule tag_summary:
    input:
        RF.tag_runs,
    output:
        json=W.tagging_result("{emb}"),
        csv=P.tagging_table(),
    log:
        P.log("tag_summary"),
    benchmark:
        P.benchmark("tag_summary")
    threads: RF.threads("tag_summary")
    resources:
        **RF.resources("tag_summary"),
    conda:
        CPU_ENV
    shell:
        "staticvec evaluate tag-summary {input} --out {output.json} --csv {output.csv} > {log} 2>&1"
