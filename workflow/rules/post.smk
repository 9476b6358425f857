# Post-processing of any embedding (sheet entries with method retrofit or artetxe, `base` the
# embedding they read): retrofitting to a lexicon (Faruqui et al.; Context-to-Vec's Student-t graph
# retrofitting) and Artetxe et al.'s transform; the WordNet synonym lexicon they may use.
# Options come from config `post` (staticvec.dag.post); the entry's params pick kind, lexicon, alpha.

from staticvec.dag import post as post_targets


rule post_wordnet_lexicon:
    input:
        W.resource_marker("eval-wordnet"),
    output:
        f"{R}/post/lexicons/wordnet-{{relations}}.txt",
    params:
        wordnet_dir=post_targets.wordnet_dir(config),
        options=post_targets.wordnet_options(config),
    log:
        f"{R}/logs/post/wordnet-{{relations}}.log",
    benchmark:
        f"{R}/benchmarks/post/wordnet-{{relations}}.tsv"
    wildcard_constraints:
        relations=r"synonyms\+?",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
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
        report=f"{R}/embeddings/{{emb}}/seed{{seed}}/retrofit.json",
    params:
        options=RF.retrofit_options,
    log:
        f"{R}/logs/post/{{emb}}/seed{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/post/{{emb}}/seed{{seed}}.tsv"
    wildcard_constraints:
        emb=W.rule_ids("post_retrofit"),
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    conda:
        CPU_ENV
    shell:
        "staticvec post retrofit --vectors {input.vectors} --lexicon {input.lexicon} {params.options}"
        " --out {output.vectors} --report {output.report} > {log} 2>&1"


rule post_artetxe:
    input:
        vectors=RF.post_base,
    output:
        W.embedding("{emb}"),
    params:
        alpha=lambda wc: W.params(wc.emb)["alpha"],
        options=post_targets.artetxe_options(config),
    log:
        f"{R}/logs/post/{{emb}}/seed{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/post/{{emb}}/seed{{seed}}.tsv"
    wildcard_constraints:
        emb=W.rule_ids("post_artetxe"),
    threads: 2
    resources:
        mem_mb=6000,
        runtime=20,
    conda:
        CPU_ENV
    shell:
        "staticvec post artetxe --vectors {input.vectors} --alpha {params.alpha} {params.options}"
        " --out {output} > {log} 2>&1"
