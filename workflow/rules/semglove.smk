# SemGloVe (Gan et al.) co-occurrences from the teacher's attention and MLM predictions, per corpus
# shard (every builder variant of a shard in one job, reading its features once), merged, MLM pieces
# mapped to words, sdR restricted from GloVe's window counts; Table 5's pair counts. GloVe training
# on these stores: train_glove.smk. Builders: config cooc.semglove.
# Paths and flags: staticvec.dag.semglove.SemgloveRules. {frac}: '' or '.KofN' (Figure 2b).



rule semglove_cooc_shard:
    input:
        unpack(lambda wc: SG.shard_inputs(wc.shard)),
    output:
        **SG.shard_outputs(),
    params:
        flags=SG.shard_flags,
    log:
        f"{R}/logs/cooc/semglove/shards/{{shard}}.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/shards/{{shard}}.tsv"
    wildcard_constraints:
        shard=r"\d{5}",
    threads: 2
    resources:
        mem_mb=SG.shard_memory_mb(),
        runtime=720 if SG.recompute else 120,
        **W.gpu_resources(SG.gpu),
    conda:
        GPU_ENV if SG.gpu else CPU_ENV
    shell:
        "staticvec cooc semglove {params.flags} --vocab {input.vocab} > {log} 2>&1"


rule semglove_merge_attention:
    input:
        lambda wc: SG.shard_stores(wc.variant),
    output:
        f"{SG.dir}/{{variant}}.cooc",
    log:
        f"{R}/logs/cooc/semglove/{{variant}}.merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}.merge.tsv"
    wildcard_constraints:
        variant=SG.attention_regex,
    params:
        flags=SG.merge_args(),
    threads: 1
    resources:
        mem_mb=SG.merge_memory_mb(),
        runtime=240,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc merge {input} {params.flags} --out {output} > {log} 2>&1"


use rule semglove_merge_attention as semglove_merge_attention_fraction with:
    # a corpus fraction's shard stores (still on the corpus vocabulary; subset below)
    input:
        lambda wc: SG.shard_stores(wc.variant, wc.frac),
    output:
        temp(SG.attention_merged("{variant}", "{frac}")),
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}{{frac}}.merge.tsv"
    wildcard_constraints:
        variant=SG.attention_regex,
        frac=r"\.\d+of\d+",


rule semglove_attention_fraction_vocab:
    # an attention store of a corpus fraction on the fraction's own vocabulary (its words only)
    input:
        store=SG.attention_merged("{variant}", "{frac}"),
        source_vocab=SG.vocab(),
        vocab=lambda wc: SG.vocab(wc.frac),
    output:
        f"{SG.dir}/{{variant}}{{frac}}.cooc",
    params:
        flags=SG.subset_args(),
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.subset.log",
    wildcard_constraints:
        variant=SG.attention_regex,
        frac=r"\.\d+of\d+",
    threads: 1
    resources:
        mem_mb=SG.merge_memory_mb(),
        runtime=240,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc subset {input.store} --source-vocab {input.source_vocab} --vocab {input.vocab} {params.flags}"
        " --out {output} > {log} 2>&1"


rule semglove_merge_pieces:
    input:
        lambda wc: SG.shard_stores(wc.variant, wc.frac),
    output:
        f"{SG.dir}/{{variant}}/pieces{{frac}}.cooc",
    log:
        f"{R}/logs/cooc/semglove/{{variant}}/pieces{{frac}}.merge.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}/pieces{{frac}}.merge.tsv"
    wildcard_constraints:
        variant=SG.mlm_regex,
        frac=SG.FRACTION_REGEX,
    params:
        flags=SG.merge_args(),
    threads: 1
    resources:
        mem_mb=SG.merge_memory_mb(),
        runtime=240,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc merge {input} {params.flags} --out {output} > {log} 2>&1"


rule semglove_words:
    input:
        unpack(lambda wc: SG.words_inputs(wc.variant, wc.frac)),
    output:
        f"{SG.dir}/{{variant}}{{frac}}.cooc",
    params:
        flags=lambda wc: SG.words_args(wc.frac),
        memory_gb=SG.memory_gb,
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.words.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}{{frac}}.words.tsv"
    wildcard_constraints:
        variant=SG.mlm_regex,
        frac=SG.FRACTION_REGEX,
    threads: 1
    resources:
        mem_mb=SG.words_memory_mb(),
        runtime=240,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc semglove-words {input.pieces} --vocab {input.vocab} {params.flags}"
        " --memory-gb {params.memory_gb} --out {output} > {log} 2>&1"


rule semglove_restrict:
    input:
        pairs=lambda wc: SG.store(SG.variants[wc.variant]["pairs_of"], wc.frac),
        values=lambda wc: SG.window_store(wc.frac),
    output:
        f"{SG.dir}/{{variant}}{{frac}}.cooc",
    log:
        f"{R}/logs/cooc/semglove/{{variant}}{{frac}}.restrict.log",
    benchmark:
        f"{R}/benchmarks/cooc/semglove/{{variant}}{{frac}}.restrict.tsv"
    wildcard_constraints:
        variant=SG.restricted_regex,
        frac=SG.FRACTION_REGEX,
    threads: 1
    resources:
        mem_mb=4096,
        runtime=120,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc restrict --values {input.values} --pairs {input.pairs} --out {output} > {log} 2>&1"


rule semglove_table5_counts:
    # X_ij of the paper's pairs under GloVe's window counts, sd and md (tables sheet: semglove_table5)
    input:
        unpack(lambda wc: {"glove": SG.window_store(), "vocab": SG.vocab(),
                           **{f"semglove_{v}": SG.store(v) for v in ("sd", "md") if v in SG.variants}}),
        pairs="resources/paper_tables/semglove_table5.csv",
    output:
        SG.table5(),
    params:
        stores=lambda wc, input: " ".join(f"--store {k} {v}" for k, v in input.items() if k not in ("vocab", "pairs")),
        vocab=" ".join(SG.vocab_args()),
    log:
        f"{R}/logs/cooc/semglove/table5.log",
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    conda:
        CPU_ENV
    shell:
        "staticvec cooc pair-counts --paper-table {input.pairs} --vocab {input.vocab} {params.vocab} {params.stores}"
        " --out {output} > {log} 2>&1"
