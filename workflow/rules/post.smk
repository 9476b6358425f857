# Post-processing of any embedding (sheet entries with method retrofit or artetxe, `base` the
# embedding they read): retrofitting to a lexicon (Faruqui et al.; Context-to-Vec's Student-t graph
# retrofitting) and Artetxe et al.'s transform; the WordNet synonym lexicon they may use.
# Options come from config `post` (staticvec.dag.post); the entry's params pick kind, lexicon, alpha.


rule post_wordnet_lexicon:
    input:
        W.resource_marker("eval-wordnet"),
    output:
        P.wordnet_lexicon(),
    params:
        wordnet_dir=RF.wordnet_dir(),
        options=RF.wordnet_options(),
    log:
        P.log("post_wordnet_lexicon"),
    benchmark:
        P.benchmark("post_wordnet_lexicon")
    wildcard_constraints:
        relations=r"synonyms\+?",
    threads: RF.threads("post_wordnet_lexicon")
    resources:
        **RF.resources("post_wordnet_lexicon"),
    conda:
        CPU_ENV
    shell:
        "staticvec post wordnet-lexicon --wordnet-dir {params.wordnet_dir} --relations '{wildcards.relations}'"
        " {params.options} --out {output} > {log} 2>&1"


rule post_retrofit:
    input:
        vectors=RF.post_base,
        lexicon=RF.retrofit_lexicon,
        lexicons=W.resource_marker("eval-lexicons"),
    output:
        vectors=W.embedding("{emb}"),
        report=P.embedding_file("retrofit.json"),
    params:
        options=RF.retrofit_options,
    log:
        P.log("post"),
    benchmark:
        P.benchmark("post")
    wildcard_constraints:
        emb=W.rule_ids("post_retrofit"),
    threads: RF.threads("post_retrofit")
    resources:
        **RF.resources("post_retrofit"),
    conda:
        CPU_ENV
    shell:
        "staticvec post retrofit --vectors {input.vectors} --lexicon {input.lexicon} {params.options}"
        " --out {output.vectors} --report {output.report} > {log} 2>&1"


rule post_artetxe:
    input:
        unpack(RF.artetxe_inputs),  # paper.yaml: in plan.lanes, after the tables before them are evaluated
    output:
        RF.output("post_artetxe", W.embedding("{emb}")),  # paper.yaml: deleted once evaluated (plan.temporary)
    params:
        alpha=RF.artetxe_alpha,
        options=RF.artetxe_options(),
    log:
        P.log("post"),
    benchmark:
        P.benchmark("post")
    wildcard_constraints:
        emb=W.rule_ids("post_artetxe"),
    threads: RF.threads("post_artetxe")
    resources:
        **RF.resources("post_artetxe"),
    conda:
        CPU_ENV
    shell:
        "staticvec post artetxe --vectors {input.vectors} --alpha {params.alpha} {params.options}"
        " --out {output} > {log} 2>&1"
