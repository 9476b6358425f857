# Window co-occurrences (GloVe's definition): one counting job per corpus shard, then merges —
# of all shards, or of the first K of N for a corpus fraction. The store format is shared with
# SemGloVe's builders (staticvec.cooc.store).


rule cooc_window_shard:
    # with the vocabulary of the corpus ({frac} empty) or of the fraction the shard is counted for
    # ({frac} = .KofN): GloVe deletes out-of-vocabulary words before its window, so a fraction's
    # counts are those of glove.c run on the fraction alone
    input:
        shard=W.shard("{shard}"),
        vocab=RF.fraction_vocab,
    output:
        SG.window_shard_output(),
    params:
        vocab=W.vocab_flags(),
        flags=SG.window_count_args(),
    log:
        P.log("cooc_window_shard"),
    benchmark:
        P.benchmark("cooc_window_shard")
    wildcard_constraints:
        window=r"\d+",
        frac=r"(\.\d+of\d+)?",
    threads: RF.threads("cooc_window_shard")  # one reads and looks up ids while the other counts
    resources:
        **RF.resources("cooc_window_shard"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc window --shards {input.shard} --vocab {input.vocab} {params.vocab}"
        " --window {wildcards.window} {params.flags} --out {output} > {log} 2>&1"


rule cooc_window_merge:
    # all shards ({frac} empty) or the first K of N ({frac} = .KofN: Figure 2b, sdR on a fraction;
    # ids of the fraction's own vocabulary)
    input:
        RF.window_shard_stores,
    output:
        SG.window_store("{frac}", "{window}"),
    params:
        flags=SG.merge_args(),
    log:
        P.log("cooc_window_merge"),
    benchmark:
        P.benchmark("cooc_window_merge")
    wildcard_constraints:
        window=r"\d+",
        frac=r"(\.\d+of\d+)?",
    threads: RF.threads("cooc_window_merge")
    resources:
        **RF.resources("cooc_window_merge"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc merge {input} {params.flags} --out {output} > {log} 2>&1"
