# SemGloVe (Gan et al.) co-occurrences from the teacher's attention and MLM predictions, per corpus
# shard (every builder variant of a shard in one job, reading its features once), merged, MLM pieces
# mapped to words, sdR restricted from GloVe's window counts; Table 5's pair counts. GloVe training
# on these stores: train_glove.smk. Builders: config cooc.semglove.
# Paths and flags: staticvec.dag.semglove.SemgloveRules (SG). {frac}: '' or '.KofN' (Figure 2b).



rule semglove_cooc_shard:
    input:
        unpack(RF.semglove_shard_inputs),
    output:
        **SG.shard_outputs(),
    params:
        flags=SG.shard_flags,
    log:
        P.log("semglove_cooc_shard"),
    benchmark:
        P.benchmark("semglove_cooc_shard")
    wildcard_constraints:
        shard=SG.PART_REGEX,  # a shard, or a run of shards (SG.part_size)
    threads: RF.threads("semglove_cooc_shard")
    resources:
        **RF.resources("semglove_cooc_shard"),
    conda:
        SEMGLOVE_SHARD_ENV
    shell:
        "staticvec cooc semglove {params.flags} --vocab {input.vocab} > {log} 2>&1"


rule semglove_merge_attention:
    input:
        RF.semglove_shard_stores,
    output:
        SG.store("{variant}"),
    log:
        P.log("semglove_merge_attention"),
    benchmark:
        P.benchmark("semglove_merge_attention")
    wildcard_constraints:
        variant=SG.attention_regex,
    params:
        flags=SG.merge_args(),
    threads: RF.threads("semglove_merge_attention")
    resources:
        **RF.resources("semglove_merge_attention"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc merge {input} {params.flags} --out {output} > {log} 2>&1"


use rule semglove_merge_attention as semglove_merge_attention_fraction with:
    # a corpus fraction's shard stores (still on the corpus vocabulary; subset below)
    input:
        RF.semglove_shard_stores,
    output:
        temp(SG.attention_merged("{variant}", "{frac}")),
    log:
        P.log("semglove_merge_attention_fraction"),
    benchmark:
        P.benchmark("semglove_merge_attention_fraction")
    wildcard_constraints:
        variant=SG.attention_regex,
        frac=r"\.\d+of\d+",


rule semglove_attention_fraction_vocab:
    # an attention store of a corpus fraction on the fraction's own vocabulary (its words only)
    input:
        store=SG.attention_merged("{variant}", "{frac}"),
        source_vocab=SG.vocab(),
        vocab=RF.semglove_fraction_vocab,
    output:
        SG.store("{variant}", "{frac}"),
    params:
        flags=SG.subset_args(),
    log:
        P.log("semglove_attention_fraction_vocab"),
    wildcard_constraints:
        variant=SG.attention_regex,
        frac=r"\.\d+of\d+",
    threads: RF.threads("semglove_attention_fraction_vocab")
    resources:
        **RF.resources("semglove_attention_fraction_vocab"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc subset {input.store} --source-vocab {input.source_vocab} --vocab {input.vocab} {params.flags}"
        " --out {output} > {log} 2>&1"


rule semglove_merge_pieces:
    input:
        RF.semglove_shard_stores,
    output:
        SG.pieces("{variant}", "{frac}"),
    log:
        P.log("semglove_merge_pieces"),
    benchmark:
        P.benchmark("semglove_merge_pieces")
    wildcard_constraints:
        variant=SG.mlm_regex,
        frac=SG.FRACTION_REGEX,
    params:
        flags=SG.merge_args(),
    threads: RF.threads("semglove_merge_pieces")
    resources:
        **RF.resources("semglove_merge_pieces"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc merge {input} {params.flags} --out {output} > {log} 2>&1"


rule semglove_words:
    input:
        unpack(RF.semglove_words_inputs),
    output:
        RF.output("semglove_words", SG.store("{variant}", "{frac}")),  # paper.yaml: deleted once its GloVe runs are done
    params:
        flags=RF.semglove_words_args,
        memory_gb=SG.memory_gb,
    log:
        P.log("semglove_words"),
    benchmark:
        P.benchmark("semglove_words")
    wildcard_constraints:
        variant=SG.mlm_regex,
        frac=SG.FRACTION_REGEX,
    threads: RF.threads("semglove_words")
    resources:
        **RF.resources("semglove_words"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc semglove-words {input.pieces} --vocab {input.vocab} {params.flags}"
        " --memory-gb {params.memory_gb} --out {output} > {log} 2>&1"


rule semglove_restrict:
    input:
        pairs=RF.semglove_restricted_pairs,
        values=RF.semglove_window_store,
    output:
        SG.store("{variant}", "{frac}"),
    log:
        P.log("semglove_restrict"),
    benchmark:
        P.benchmark("semglove_restrict")
    wildcard_constraints:
        variant=SG.restricted_regex,
        frac=SG.FRACTION_REGEX,
    threads: RF.threads("semglove_restrict")
    resources:
        **RF.resources("semglove_restrict"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc restrict --values {input.values} --pairs {input.pairs} --out {output} > {log} 2>&1"


rule semglove_table5_counts:
    # X_ij of the paper's pairs under GloVe's window counts, sd and md (tables sheet: semglove_table5)
    input:
        unpack(RF.table5_inputs),
    output:
        SG.table5(),
    params:
        stores=RF.table5_store_args,
        vocab=SG.vocab_flags(),
    log:
        P.log("semglove_table5_counts"),
    threads: RF.threads("semglove_table5_counts")
    resources:
        **RF.resources("semglove_table5_counts"),
    conda:
        CPU_ENV
    shell:
        "staticvec cooc pair-counts --paper-table {input.pairs} --vocab {input.vocab} {params.vocab} {params.stores}"
        " --out {output} > {log} 2>&1"
